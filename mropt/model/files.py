"""The one file writer of mropt: atomic for regular files, written through for devices and pipes.

One writer instead of one copy per caller; ``-o FILE`` must not replace a device node or
a symlink, and must not give a traceback. Every file mropt writes (``-o`` outputs, instance
files, the result store's Parquet files, ``reference.solu``, reports) goes through
:func:`write_text`, :func:`write_bytes` or :func:`replacing`. What happens depends on what ``path`` is:

* **a regular file, or a name that does not exist yet**: the data goes to a temporary
  file ``.NAME.<random>.tmp`` in the same folder, which is flushed, ``fsync``-ed and
  renamed over ``path`` with :func:`os.replace`. The rename is atomic: a reader sees the
  old file or the whole new one, never half of it, and a writer killed at any moment
  (SIGKILL) leaves at most a temporary file, whose name starts with ``.`` and ends with
  ``.tmp`` (readers of the result store skip such names; :meth:`Store.compact
  <mropt.harness.store.Store.compact>` removes old ones). An existing file keeps its
  permission bits; a new one gets ``0o666`` less the umask, as ``open`` would give.
* **a symlink**: it is followed (link by link) to its final target, which is then
  written as above. The link stays a link; a dangling link's target is created.
* **an existing path that is neither a regular file nor a folder** (a character device
  such as ``/dev/null``, a FIFO), **or anything in /proc** (``/dev/stdout`` and
  ``/dev/fd/N`` are links to ``/proc/self/fd/N``): it is opened for writing (truncated
  if it is a regular file, like a shell's ``>``) and the data written through, with no
  temporary file and no rename, so the device or pipe stays what it was.
* **a folder**: refused.

Output folders are made by :func:`make_folder` (``mkdir -p`` with the same errors).

Every failure is an :class:`~mropt.model.errors.InputError` of one line naming the path
and the reason (``x.json: cannot write: folder /nonexistent does not exist``, ``/dev/full:
cannot write (No space left on device)``), and no temporary file is left behind. The
file is ``fsync``-ed before the rename, so a power loss cannot leave an empty or partial
file under the target's name; the folder is not ``fsync``-ed after it, so a power loss
may undo the rename itself (the old file stays).
"""

from __future__ import annotations

import errno
import os
import stat
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mropt.model.errors import InputError

#: characters of the target's name kept in the temporary name (NAME_MAX is 255 bytes)
_NAME_KEEP = 160


def write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` (see the module docstring for regular files, links, devices)."""
    write_bytes(path, text.encode(encoding))


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path``: atomically for a regular file or new name, through for a device or pipe."""
    given = Path(path)
    target, mode, through = _resolve(given)
    if through:
        _write_through(given, data)
        return
    with _temporary(given, target, mode, sync=False) as tmp:
        fd = os.open(tmp, os.O_WRONLY | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0))
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)


@contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``'s (resolved) target; rename it into place on success.

    For writers that need a file name (``pyarrow.parquet.write_table``): write the yielded
    path, and when the block ends without an exception it is ``fsync``-ed and renamed over
    the target atomically; on an exception it is removed (an ``OSError`` becomes an
    InputError naming ``path``). ``path`` must be a regular file or a new name (or a link
    to one); a device, pipe or folder is an InputError.
    """
    given = Path(path)
    target, mode, through = _resolve(given)
    if through:
        raise InputError(f"{given}: cannot write: not a regular file (a device, a pipe or in /proc)")
    with _temporary(given, target, mode, sync=True) as tmp:
        yield tmp


def make_folder(path: str | os.PathLike[str]) -> Path:
    """Create the folder ``path`` and its parents if missing (``mkdir -p``); one-line InputError otherwise.

    For output folders (``mropt gap --out``, ``mropt report --out``): a parent that is a
    file, a read-only place or an existing file of that name is refused in one line.
    """
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise InputError(f"{folder}: cannot create the folder: a file of that name exists") from None
    except OSError as exc:
        if exc.errno == errno.ENOTDIR:
            raise InputError(f"{folder}: cannot create the folder: {_not_a_folder(folder)} is not a folder") from None
        raise InputError(f"{folder}: cannot create the folder ({_reason(exc)})") from None
    return folder


# -- helpers --------------------------------------------------------------------------------
def _resolve(path: Path) -> tuple[Path, int | None, bool]:
    """The path to write, its ``st_mode`` (None: it does not exist) and whether to write through.

    Symlinks are followed link by link (``os.readlink``, each parent folder resolved), so
    that a link into ``/proc`` is noticed: ``/dev/stdout`` and ``/dev/fd/N`` lead to
    ``/proc/<pid>/fd/N``, whose "target" names the file or pipe the descriptor is open on,
    not a file to replace. Anything in ``/proc`` is written through, like a device.
    """
    p = os.path.abspath(path)
    in_proc = False
    try:
        for _ in range(40):
            parent = os.path.realpath(os.path.dirname(p))
            p = os.path.join(parent, os.path.basename(p))
            in_proc = in_proc or parent == "/proc" or parent.startswith("/proc/")
            try:
                if not stat.S_ISLNK(os.lstat(p).st_mode):
                    break
            except FileNotFoundError:
                break
            p = os.path.join(parent, os.readlink(p))
        else:
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
        mode: int | None = os.stat(p).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:  # ENOTDIR (a parent is a file), ELOOP, EACCES, ENAMETOOLONG
        raise _error(path, exc) from None
    if mode is not None and stat.S_ISDIR(mode):
        raise InputError(f"{path}: is a directory, not a file")
    through = in_proc or (mode is not None and not stat.S_ISREG(mode))
    return Path(p), mode, through


@contextmanager
def _temporary(given: Path, target: Path, mode: int | None, sync: bool) -> Iterator[Path]:
    """A new temporary file beside ``target``, renamed over it when the block succeeds, else removed."""
    tmp = _create_temporary(given, target, mode)
    try:
        yield tmp
        if sync:
            _fsync(tmp)
        os.replace(tmp, target)
    except OSError as exc:
        raise _error(given, exc) from None
    finally:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass  # renamed into place
        except OSError:  # pragma: no cover - the folder vanished or turned read-only meanwhile
            pass


def _create_temporary(given: Path, target: Path, mode: int | None) -> Path:
    """Create ``.NAME.<random>.tmp`` beside ``target`` (permissions: the target's, or 0o666 less umask)."""
    folder = target.parent
    if not folder.exists():
        raise InputError(f"{given}: cannot write: folder {folder} does not exist")
    if not folder.is_dir():
        raise InputError(f"{given}: cannot write: {folder} is not a folder")
    tmp = folder / f".{target.name[:_NAME_KEEP]}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as exc:
        raise InputError(f"{given}: cannot create a file in folder {folder} ({_reason(exc)})") from None
    try:
        if mode is not None:
            os.fchmod(fd, stat.S_IMODE(mode))
    except OSError:
        pass  # not our file (another owner): the new one gets the default permissions
    finally:
        os.close(fd)
    return tmp


def _write_through(given: Path, data: bytes) -> None:
    """Open an existing device, FIFO or /proc file and write ``data`` into it (no temporary file, no rename).

    ``given`` is opened, not ``target``: the kernel follows ``/dev/stdout``'s magic link
    to the open file or pipe, which a path cannot name.
    """
    flags = os.O_WRONLY | getattr(os, "O_CLOEXEC", 0)
    try:
        if stat.S_ISREG(os.stat(given).st_mode):
            flags |= os.O_TRUNC
        fd = os.open(given, flags)
    except OSError as exc:
        raise _error(given, exc) from None
    try:
        _write_all(fd, data)
    except OSError as exc:
        raise _error(given, exc) from None
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _reason(exc: OSError) -> str:
    return exc.strerror or errno.errorcode.get(exc.errno or 0, "") or type(exc).__name__


def _not_a_folder(path: Path) -> Path | None:
    """The first parent of ``path`` that exists and is not a folder (ENOTDIR's culprit)."""
    for parent in reversed(Path(os.path.abspath(path)).parents):
        if parent.exists() and not parent.is_dir():
            return parent
    return None


def _error(path: Path, exc: OSError) -> InputError:
    """One line naming the path and the reason."""
    if exc.errno == errno.ENOTDIR:
        culprit = _not_a_folder(path)
        return InputError(f"{path}: cannot write: {culprit or 'a parent'} is not a folder")
    if exc.errno == errno.EISDIR:
        return InputError(f"{path}: is a directory, not a file")
    return InputError(f"{path}: cannot write ({_reason(exc)})")
