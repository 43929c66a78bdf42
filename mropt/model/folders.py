"""Output folders replaced whole: built beside the target, then swapped in.

A command that writes several files into one folder (``mropt simulate --out DIR``) must not
leave ``DIR`` holding some files of a new run beside some of an old one when it is killed.
:func:`replacing_folder` yields a new, empty folder ``.NAME.new-<token>`` beside ``DIR`` (the
same parent, so the same file system); the caller writes every file into it (through
:mod:`mropt.model.files`); when the block ends without an exception the new folder is
``fsync``-ed and swapped in:

* ``DIR`` missing: one rename, ``.NAME.new-<token>`` -> ``DIR``;
* ``DIR`` a folder: two renames, ``DIR`` -> ``.NAME.old-<token>`` then ``.NAME.new-<token>``
  -> ``DIR``; then the old folder is deleted.

A reader sees the old folder whole or the new one whole, except between the two renames, when
``DIR`` is missing. A writer killed there leaves both folders, of one token. The choice for that
case is to *finish* the swap: :func:`settle`, which the next writer calls and readers may call
(``mropt report DIR`` does), renames the new folder to ``DIR`` (it is whole: the first rename
comes only once every file of it is written and synced) and deletes the old one (were the new
one gone, it would put the old one back). :func:`settle` also deletes what killed writers left
beside ``DIR``: an old folder whose deletion was cut short (``DIR`` in place), and a new folder
whose writer is gone (a kill before the swap: ``DIR`` stays as it was).

Locks (``flock``): a swap and :func:`settle` hold an exclusive lock on the parent folder, so they
never interleave; a writer locks its new folder when it makes it (under the parent's lock) and
keeps it locked until its swap, so :func:`settle` removes only the new folders of dead writers.
Writers of other folders of the same parent write at the same time; only their swaps queue.

``DIR`` a symlink: the folder it leads to is replaced, and the link stays a link. The new folder
gets the old one's permission bits (a new ``DIR``: ``0o777`` less the umask, as ``mkdir`` gives).
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import re
import shutil
import stat
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from mropt.model.errors import InputError
from mropt.model.files import make_folder

#: characters of the folder's name kept in its temporaries' names (NAME_MAX is 255 bytes)
_NAME_KEEP = 160
_LEFTOVER = re.compile(r"(new|old)-([0-9a-f]{12})")
_O_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def resolve_folder(path: str | os.PathLike[str]) -> Path:
    """The folder ``path`` names (a symlink followed to its end); InputError for an empty name or a non-folder."""
    text = os.fspath(path)
    if not text:
        raise InputError("the output folder's name is empty")
    target = Path(os.path.realpath(text))
    if target.exists() and not target.is_dir():
        raise InputError(f"{text}: exists and is not a folder")
    if not target.name:
        raise InputError(f"{text}: the root folder cannot be replaced")
    return target


def refuse_linked_entry(folder: str | os.PathLike[str], out: str | os.PathLike[str]) -> None:
    """InputError when ``out`` is ``folder``'s ``report`` entry and that entry is a symlink.

    A report goes by default into ``DIR/report``; in a folder received from someone else that
    entry may be a link to anywhere (``~/.ssh``), and writing the report would write there.
    An ``--out`` elsewhere is followed as given: it is the user's own path.
    """
    entry = Path(folder) / "report"
    if entry.is_symlink() and os.path.abspath(out) == os.path.abspath(entry):
        raise InputError(f"{entry}: is a symlink, not a report folder: remove it, or give --out")


@contextmanager
def replacing_folder(path: str | os.PathLike[str], step: Callable[[str], None] | None = None) -> Iterator[Path]:
    """Yield a new empty folder beside ``path``; swap it in whole when the block succeeds, else remove it.

    ``step(name)`` is called after each rename of the swap (``"moved aside"``: the old folder
    renamed away; ``"swapped"``: the new one in place, the old not yet deleted).
    """
    target = resolve_folder(path)
    parent = make_folder(target.parent)
    token = uuid.uuid4().hex[:12]
    new = parent / f".{_stem(target)}.new-{token}"
    with _locked(parent, path):
        try:
            _settle_locked(target)
            os.mkdir(new)
            own = os.open(new, _O_DIR)
        except OSError as exc:
            raise InputError(f"{os.fspath(path)}: cannot write in folder {parent} ({_reason(exc)})") from None
        fcntl.flock(own, fcntl.LOCK_EX)
    try:
        yield new
        _fsync(new)
        with _locked(parent, path):
            _swap(new, target, token, path, step)
    finally:
        os.close(own)
        shutil.rmtree(new, ignore_errors=True)  # still there: the block failed


def holds_working_folder(path: str | os.PathLike[str]) -> bool:
    """Whether the folder ``path`` is the working folder or holds it (a swap would pull it from under the shell)."""
    try:
        here = Path(os.path.realpath(os.getcwd()))
    except OSError:
        return False
    target = Path(os.path.realpath(os.fspath(path)))
    return here == target or target in here.parents


def settle(path: str | os.PathLike[str]) -> None:
    """Finish a swap a kill interrupted and remove dead writers' temporaries beside ``path`` (module docstring).

    Never fails: a path it cannot look at or change is left as it is (the caller reports on it).
    """
    try:
        target = Path(os.path.realpath(os.fspath(path)))
        if not target.name or not target.parent.is_dir():
            return
        with _locked(target.parent, path):
            _settle_locked(target)
    except (OSError, InputError):
        return


# -- helpers --------------------------------------------------------------------------------
def _stem(target: Path) -> str:
    """The folder's name in its temporaries' names (a long name cut, with a hash of the whole)."""
    name = target.name
    if len(name) <= _NAME_KEEP:
        return name
    return name[:100] + "~" + hashlib.sha1(os.fsencode(name)).hexdigest()[:16]


@contextmanager
def _locked(folder: Path, given: str | os.PathLike[str]) -> Iterator[None]:
    """An exclusive ``flock`` on ``folder`` for the block."""
    try:
        fd = os.open(folder, _O_DIR)
    except OSError as exc:
        raise InputError(f"{os.fspath(given)}: cannot open folder {folder} ({_reason(exc)})") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _leftovers(target: Path) -> tuple[dict[str, Path], dict[str, Path]]:
    """The new and the old folders (by token) that writers of ``target`` made beside it."""
    prefix = f".{_stem(target)}."
    new: dict[str, Path] = {}
    old: dict[str, Path] = {}
    with os.scandir(target.parent) as entries:
        for entry in entries:
            match = _LEFTOVER.fullmatch(entry.name[len(prefix) :]) if entry.name.startswith(prefix) else None
            if match and entry.is_dir(follow_symlinks=False):
                (new if match[1] == "new" else old)[match[2]] = Path(entry.path)
    return new, old


def _settle_locked(target: Path) -> None:
    """:func:`settle` under the parent's lock."""
    new, old = _leftovers(target)
    if not os.path.lexists(target) and old:
        token = next((t for t in old if t in new), None)
        if token is not None:  # killed between the two renames: the new folder is whole
            os.rename(new.pop(token), target)  # an error leaves both folders as they are
        else:  # the new folder is gone (a swap whose roll-back failed): the old one back
            token = max(old, key=lambda t: old[t].stat().st_mtime)
            os.rename(old.pop(token), target)
    for folder in old.values():
        shutil.rmtree(folder, ignore_errors=True)
    for folder in new.values():
        if _unowned(folder):
            shutil.rmtree(folder, ignore_errors=True)


def _unowned(folder: Path) -> bool:
    """Whether no live writer holds ``folder``'s lock."""
    try:
        fd = os.open(folder, _O_DIR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _swap(
    new: Path, target: Path, token: str, given: str | os.PathLike[str], step: Callable[[str], None] | None
) -> None:
    """Rename ``new`` to ``target``, the old ``target`` first moved aside and then deleted."""
    try:
        if not os.path.lexists(target):
            os.rename(new, target)
            return
        if target.is_symlink() or not target.is_dir():
            raise InputError(f"{os.fspath(given)}: exists and is not a folder")
        old = target.parent / f".{_stem(target)}.old-{token}"
        os.chmod(new, stat.S_IMODE(os.stat(target).st_mode))  # the folder keeps its permissions
        os.rename(target, old)
        if step:
            step("moved aside")
        try:
            os.rename(new, target)
        except OSError:
            os.rename(old, target)
            raise
        if step:
            step("swapped")
        shutil.rmtree(old, ignore_errors=True)
    except OSError as exc:
        raise InputError(f"{os.fspath(given)}: cannot replace the folder ({_reason(exc)})") from None


def _fsync(folder: Path) -> None:
    """Sync ``folder``'s entries (its files are synced by :mod:`mropt.model.files`)."""
    fd = os.open(folder, _O_DIR)
    try:
        os.fsync(fd)
    except OSError as exc:  # pragma: no cover - file systems that cannot sync a folder
        if exc.errno not in (errno.EINVAL, errno.EBADF):
            raise
    finally:
        os.close(fd)


def _reason(exc: OSError) -> str:
    return exc.strerror or errno.errorcode.get(exc.errno or 0, "") or type(exc).__name__
