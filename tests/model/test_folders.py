"""``mropt.model.folders``: a folder replaced whole, and what :func:`settle` does with each state a kill can leave."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from mropt.model.errors import InputError
from mropt.model.folders import replacing_folder, settle


def folder(path: Path, **files: str) -> Path:
    path.mkdir()
    for name, text in files.items():
        (path / name).write_text(text)
    return path


def state(parent: Path) -> dict[str, dict[str, str]]:
    """Each entry of ``parent`` and its files' text."""
    return {p.name: {f.name: f.read_text() for f in p.iterdir()} for p in sorted(parent.iterdir())}


def test_a_folder_is_replaced_whole_and_keeps_its_permissions(tmp_path: Path) -> None:
    d = folder(tmp_path / "D", a="old", b="old")
    d.chmod(0o750)
    steps = []
    with replacing_folder(d, step=steps.append) as new:
        assert new.parent == tmp_path and new.name.startswith(".D.new-")
        (new / "a").write_text("new")
        assert state(tmp_path)["D"] == {"a": "old", "b": "old"}  # untouched until the block ends
    assert state(tmp_path) == {"D": {"a": "new"}} and steps == ["moved aside", "swapped"]
    assert d.stat().st_mode & 0o777 == 0o750


def test_a_failed_block_leaves_the_folder_and_no_temporary(tmp_path: Path) -> None:
    folder(tmp_path / "D", a="old")
    with pytest.raises(RuntimeError), replacing_folder(tmp_path / "D") as new:
        (new / "a").write_text("new")
        raise RuntimeError("killed")
    assert state(tmp_path) == {"D": {"a": "old"}}


def test_names_it_refuses(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    for path, words in (("", "name is empty"), (tmp_path / "file", "exists and is not a folder"), ("/", "root")):
        with pytest.raises(InputError, match=words), replacing_folder(path):
            pass


@pytest.mark.parametrize(
    "left, after",
    [
        # killed between the two renames: no D, the old and the whole new folder of one token
        ({".D.old-0123456789ab": "old", ".D.new-0123456789ab": "new"}, {"D": "new"}),
        # killed while deleting the old folder after the swap
        ({"D": "new", ".D.old-0123456789ab": "old"}, {"D": "new"}),
        # killed while writing the new folder (its writer is gone: its lock is free)
        ({"D": "old", ".D.new-0123456789ab": "half"}, {"D": "old"}),
        ({".D.new-0123456789ab": "half"}, {}),  # a D that never existed stays so
        # a swap whose roll-back failed: the new folder removed, the old one is put back
        ({".D.old-0123456789ab": "old"}, {"D": "old"}),
        # not the names of D's writers: left alone
        (
            {"D": "old", ".DD.new-0123456789ab": "x", ".D.new-xyz": "y"},
            {"D": "old", ".DD.new-0123456789ab": "x", ".D.new-xyz": "y"},
        ),
    ],
)
def test_settle_finishes_or_cleans_what_a_kill_left(tmp_path: Path, left: dict, after: dict) -> None:
    for name, text in left.items():
        folder(tmp_path / name, f=text)
    settle(tmp_path / "D")
    assert {name: files["f"] for name, files in state(tmp_path).items()} == after


def test_settle_leaves_a_live_writers_folder(tmp_path: Path) -> None:
    folder(tmp_path / "D", f="old")
    live = folder(tmp_path / ".D.new-0123456789ab", f="being written")
    fd = os.open(live, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as replacing_folder holds it until its swap
        settle(tmp_path / "D")
        assert live.is_dir()
    finally:
        os.close(fd)
    settle(tmp_path / "D")  # its writer gone
    assert not live.exists()
