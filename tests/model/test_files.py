"""The one file writer (mropt.model.files).

Regular files are replaced atomically; devices, FIFOs and symlink targets are written
through and keep what they are; every failure is one line and leaves no temporary file.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from mropt.model.errors import InputError
from mropt.model.files import replacing, write_bytes, write_text


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def one_line(exc: pytest.ExceptionInfo, *words: str) -> str:
    message = str(exc.value)
    assert "\n" not in message
    for word in words:
        assert word in message, message
    return message


def test_regular_file_is_replaced_and_keeps_its_permissions(tmp_path):
    path = tmp_path / "out.json"
    write_text(path, "first\n")
    assert path.read_text() == "first\n"
    os.chmod(path, 0o640)
    write_text(path, "second\n")
    assert path.read_text() == "second\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    write_bytes(path, b"\x00\x01")
    assert path.read_bytes() == b"\x00\x01"
    assert leftovers(tmp_path) == []


def test_new_file_gets_the_umask_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        write_text(tmp_path / "new.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "new.txt").st_mode) == 0o644


def test_dev_null_stays_a_character_device():
    write_text("/dev/null", "anything\n")
    write_bytes("/dev/null", b"more")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_symlink_stays_a_link_and_its_target_gets_the_content(tmp_path):
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to("real.json")
    chain = tmp_path / "chain.json"
    chain.symlink_to(link)
    write_text(link, "via link")
    assert link.is_symlink() and target.read_text() == "via link"
    write_text(chain, "via chain")
    assert chain.is_symlink() and link.is_symlink() and target.read_text() == "via chain"
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to("made.json")
    write_text(dangling, "created")
    assert dangling.is_symlink() and (tmp_path / "made.json").read_text() == "created"
    assert leftovers(tmp_path) == []


def test_fifo_is_written_through(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_text(fifo, "through the pipe\n")
    reader.join(10)
    assert got == [b"through the pipe\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    "where, words",
    [
        ("missing/x.json", ["does not exist", "missing"]),
        ("afile/x.json", ["afile is not a folder"]),
        ("afile/deeper/x.json", ["afile is not a folder"]),
        ("adir", ["is a directory"]),
    ],
)
def test_bad_paths_are_one_line_errors(tmp_path, where, words):
    (tmp_path / "afile").write_text("a file, not a folder")
    (tmp_path / "adir").mkdir()
    with pytest.raises(InputError) as exc:
        write_text(tmp_path / where, "data")
    one_line(exc, str(tmp_path / where), *words)
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("path", ["/proc/version", "/proc/mropt-no-such-file.json"])
def test_proc_is_a_one_line_error(path):
    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc here")
    with pytest.raises(InputError) as exc:
        write_text(path, "data")
    one_line(exc, path, "cannot write")


def test_full_device_is_a_one_line_error():
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    with pytest.raises(InputError) as exc:
        write_text("/dev/full", "data")
    one_line(exc, "/dev/full", "No space left on device")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_read_only_folder_is_a_one_line_error(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root ignores folder permissions (see the /proc and /dev/full tests)")
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "x.json").write_text("kept")
    folder.chmod(0o555)
    try:
        with pytest.raises(InputError) as exc:
            write_text(folder / "x.json", "new")
        one_line(exc, str(folder / "x.json"), "Permission denied")
        assert (folder / "x.json").read_text() == "kept" and leftovers(folder) == []
    finally:
        folder.chmod(0o755)


def test_replacing_renames_on_success_and_cleans_up_on_failure(tmp_path):
    path = tmp_path / "t.parquet"
    with replacing(path) as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".") and tmp.name.endswith(".tmp")
        tmp.write_bytes(b"whole")
    assert path.read_bytes() == b"whole"
    with pytest.raises(RuntimeError), replacing(path) as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("killed mid-write")
    assert path.read_bytes() == b"whole" and leftovers(tmp_path) == []
    with pytest.raises(InputError) as exc, replacing("/dev/null"):
        pass
    one_line(exc, "/dev/null", "not a regular file")


def test_a_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "keep.json"
    path.write_text("old")

    def full(fd, data):  # noqa: ANN001, ANN202
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(InputError) as exc:
        write_text(path, "new")
    one_line(exc, str(path), "No space left on device")
    assert path.read_text() == "old" and leftovers(tmp_path) == []


def test_make_folder(tmp_path):
    from mropt.model.files import make_folder

    assert make_folder(tmp_path / "a" / "b").is_dir()
    assert make_folder(tmp_path / "a").is_dir()  # exists already: fine
    (tmp_path / "afile").write_text("x")
    with pytest.raises(InputError) as exc:
        make_folder(tmp_path / "afile" / "sub")
    one_line(exc, "afile is not a folder")
    with pytest.raises(InputError) as exc:
        make_folder(tmp_path / "afile")
    one_line(exc, "a file of that name exists")
