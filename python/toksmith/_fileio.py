"""Writing files so that a reader never sees half of one, and reading untrusted ones with bounds.

Every saver of the package goes through :func:`atomic_write` (one file) or :func:`atomic_files`
(a set of files saved together, such as ``vocab.json`` + ``merges.txt``): the new content is
written to a temporary file in the destination's folder, flushed to disk, and renamed onto the
destination, so that a full disk, an exception or a SIGKILL leaves the old file (or nothing)
under the final name. A symbolic link at the destination (the Hugging Face cache links
``snapshots/<rev>/tokenizer.json`` to ``blobs/<hash>``) is resolved: its target is replaced and
the link stays a link.

Loaders read tokenizer files with :func:`read_file_capped`: a FIFO or a device (``/dev/zero``)
would be read without end, and a file larger than :data:`MAX_TOKENIZER_FILE_BYTES` is refused
before it is read.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import shutil
import stat
import time
from typing import IO, Any, Callable, Iterator, List, Optional, Tuple, Union

from ._paths import fspath

try:  # flock marks a temporary file or folder as in use by a live writer (POSIX only)
    import fcntl
except ImportError:  # pragma: no cover - Windows: stale temporaries are left alone
    fcntl = None  # type: ignore[assignment]

PathLike = Union[str, "os.PathLike[str]"]

#: the largest tokenizer file a loader reads (1 GiB): the largest published vocabularies take
#: tens of MB; a bigger file is taken for a mistake (a dataset, ``/dev/zero``, a sparse file)
MAX_TOKENIZER_FILE_BYTES = 1 << 30

#: the prefix of the folder a set of files is staged in before it is moved into place
STAGING_PREFIX = ".toksmith-save."
_COMPLETE = "COMPLETE.json"


def _lock(fd: int, block: bool = True) -> bool:
    """Take an exclusive flock on ``fd`` (released when the process ends, killed or not);
    False when ``block`` is False and another process holds it."""
    if fcntl is None:  # pragma: no cover
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if block else fcntl.LOCK_NB))
        return True
    except BlockingIOError:
        return False
    except OSError:  # a file system without locks: a writer goes on, a cleaner keeps the file
        return block


def _fsync_dir(folder: str) -> None:
    """Make a rename in ``folder`` durable (best effort: some file systems refuse it)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _check_text_path(path: PathLike) -> str:
    p = fspath(path)
    if isinstance(p, bytes):  # the messages and the name checks below take str
        raise TypeError(
            "path must be str or os.PathLike of str, not bytes (decode it with os.fsdecode)"
        )
    if not p:
        raise FileNotFoundError(
            errno.ENOENT, "cannot write '': the file name is empty (give a file name)", p
        )
    return p


def destination(path: PathLike) -> str:
    """The file a save to ``path`` replaces: ``path`` itself, or for a symbolic link the file it
    points to (followed to the end of a chain; a dangling link names the file to create)."""
    p = _check_text_path(path)
    if os.path.islink(p):
        return os.path.realpath(p)
    return p


def _is_special(p: str) -> bool:
    """Whether ``p`` exists and is neither a regular file nor a folder (a device, a FIFO, a
    socket, ``/dev/stdout``)."""
    try:
        mode = os.stat(p).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _check_folder(p: str, target: str) -> str:
    if os.path.isdir(target):
        raise IsADirectoryError(
            errno.EISDIR, f"cannot write {p!r}: it is a folder (give a file name)", p
        )
    parent = os.path.dirname(target) or "."
    if os.path.exists(parent) and not os.path.isdir(parent):
        raise NotADirectoryError(
            errno.ENOTDIR, f"cannot write {p!r}: {parent!r} is a file, not a folder", p
        )
    if not os.path.isdir(parent):
        raise FileNotFoundError(
            errno.ENOENT,
            f"cannot write {p!r}: the folder {parent!r} does not exist (create it first)",
            p,
        )
    return parent


#: an unlocked, empty temporary file or staging folder younger than this may be one a writer
#: has just made and not yet locked: it is left for a later save
_GRACE_SECONDS = 10.0


def _stale(info: os.stat_result, empty: bool) -> bool:
    """Whether an unlocked temporary (``info``) can be a killed save's: a writer locks it before
    it writes anything, so only an empty one may be a live writer's, for a moment."""
    return not empty or time.time() - info.st_mtime > _GRACE_SECONDS


def _temp_name(folder: str, name: str) -> str:
    return os.path.join(folder, f".{name}.{secrets.token_hex(4)}.tmp")


def _is_temp_of(entry: str, name: str) -> bool:
    prefix = f".{name}."
    middle = entry[len(prefix) : -len(".tmp")]
    return (
        entry.startswith(prefix)
        and entry.endswith(".tmp")
        and len(middle) == 8
        and all(c in "0123456789abcdef" for c in middle)
    )


def remove_stale_temporaries(folder: str, name: str) -> None:
    """Remove the ``.NAME.XXXXXXXX.tmp`` files an earlier, killed save of ``NAME`` left in
    ``folder`` (a file a live writer holds locked is kept)."""
    if fcntl is None:  # pragma: no cover
        return
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    for entry in entries:
        if not _is_temp_of(entry, name):
            continue
        full = os.path.join(folder, entry)
        try:
            fd = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            info = os.fstat(fd)
            if stat.S_ISREG(info.st_mode) and _stale(info, info.st_size == 0) and _lock(fd, False):
                with contextlib.suppress(OSError):
                    os.remove(full)
        finally:
            os.close(fd)


def _open_temp(folder: str, name: str) -> Tuple[int, str]:
    """A locked descriptor of a new file ``.NAME.XXXXXXXX.tmp`` in ``folder`` with a plain new
    file's permissions (``0o666`` less the umask) and its name. The lock tells
    :func:`remove_stale_temporaries` of another save that the file is in use."""
    while True:
        tmp = _temp_name(folder, name)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        _lock(fd)
        return fd, tmp


@contextlib.contextmanager
def atomic_write(path: PathLike, mode: str = "w", **kwargs: Any) -> Iterator[Any]:
    """Open a new temporary file in the folder of ``path`` and move it onto ``path`` when the
    block ends without error, after flushing it to disk: a reader never sees half a file, and
    an error, a full disk or a kill leaves the old file (the temporary file is removed; what a
    killed save left is removed by the next save of the same file).

    A symbolic link at ``path`` stays a link: the file it points to is replaced. The file gets
    the permissions a plain ``open(path, "w")`` of a new file gives (``0o666`` less the umask);
    ``mode`` is a writing mode ("w" or "wb"). A missing folder is a FileNotFoundError that
    names it and the file asked for; a folder at ``path`` is an IsADirectoryError. A device or
    a FIFO at ``path`` (``/dev/stdout``) is written in place: moving a file onto it would
    replace it."""
    p = _check_text_path(path)
    if _is_special(p):
        with open(p, mode, **kwargs) as f:
            yield f
        return
    target = destination(p)
    parent = _check_folder(p, target)
    name = os.path.basename(target)
    remove_stale_temporaries(parent, name)
    # the mode and encoding are checked before any file is made: a bad one leaves nothing behind
    open(os.devnull, mode, **kwargs).close()
    fd, tmp = _open_temp(parent, name)
    try:
        with os.fdopen(fd, mode, **kwargs) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
            os.replace(tmp, target)  # still holding the lock: no other save removes it first
        _fsync_dir(parent)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def write_bytes_atomic(path: PathLike, data: bytes) -> None:
    with atomic_write(path, "wb") as f:
        f.write(data)


def write_text_atomic(path: PathLike, text: str) -> None:
    with atomic_write(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def refuse_special_destination(path: PathLike, what: str) -> None:
    """OSError(EINVAL) when ``path`` is a device, a FIFO or a socket (for formats that must not
    be streamed: a save would otherwise write into it or, as root, replace it)."""
    p = _check_text_path(path)
    if _is_special(p):
        raise OSError(
            errno.EINVAL,
            f"cannot write {what} to {p!r}: it is not a regular file (a device, pipe or socket); "
            "give the name of a file",
            p,
        )


# ---------------------------------------------------------------------------------------------
# a set of files saved together


class Staging:
    """The folder a set of files is written into before :func:`atomic_files` moves them into
    place; :meth:`path` names a file of the set."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.names: List[str] = []

    def path(self, name: str) -> str:
        if os.sep in name or name in ("", ".", "..") or name in (_COMPLETE, _COMPLETE + ".part"):
            raise ValueError(f"not a plain file name: {name!r}")
        if name not in self.names:
            self.names.append(name)
        return os.path.join(self.folder, name)


def _move_into_place(src: str, directory: str, name: str) -> None:
    final = destination(os.path.join(directory, name))
    try:
        os.replace(src, final)
    except OSError as e:
        if e.errno != errno.EXDEV:  # a link into another file system: copy there atomically
            raise
        with open(src, "rb") as fin, atomic_write(final, "wb") as fout:
            shutil.copyfileobj(fin, fout)
        os.remove(src)


def _roll_forward(staging: str, directory: str) -> None:
    """Finish moving the files of a complete staged set (a save killed while moving them)."""
    try:
        with open(os.path.join(staging, _COMPLETE), "rb") as f:
            names = json.loads(f.read().decode("utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return  # no readable marker: the set was not complete, and is removed
    if not isinstance(names, list) or not all(
        isinstance(n, str) and n and os.sep not in n and n not in (".", "..") for n in names
    ):
        return  # not a marker this module wrote
    for name in names:
        src = os.path.join(staging, name)
        if os.path.isfile(src):
            _move_into_place(src, directory, name)
    _fsync_dir(directory)


def finish_interrupted_saves(directory: str) -> None:
    """Deal with what a killed :func:`atomic_files` left in ``directory``: a set written in full
    is moved into place (the save had begun to move it), a partial one is removed. A staging
    folder a live save holds is left alone."""
    try:
        entries = [e for e in os.listdir(directory) if e.startswith(STAGING_PREFIX)]
    except OSError:
        return
    for entry in entries:
        staging = os.path.join(directory, entry)
        if os.path.islink(staging) or not os.path.isdir(staging):
            continue
        try:
            fd = os.open(staging, os.O_RDONLY)
        except OSError:
            continue
        try:
            if not _stale(os.fstat(fd), not os.listdir(staging)) or not _lock(fd, False):
                continue  # a save in progress
            if os.path.isfile(os.path.join(staging, _COMPLETE)):
                _roll_forward(staging, directory)
            shutil.rmtree(staging, ignore_errors=True)
        finally:
            os.close(fd)


def has_interrupted_save(directory: str) -> bool:
    try:
        return any(e.startswith(STAGING_PREFIX) for e in os.listdir(directory))
    except OSError:
        return False


@contextlib.contextmanager
def atomic_files(directory: str) -> Iterator[Staging]:
    """Save several files into ``directory`` (an existing folder) as a set: the block writes
    them into ``Staging.path(name)`` (a hidden folder in ``directory``); when it ends without
    error they are flushed, marked complete and moved into place. A kill before the mark leaves
    the old set; a kill while moving leaves a complete new set that the next save or load of
    the folder finishes moving (:func:`finish_interrupted_saves`). Symbolic links in
    ``directory`` stay links: the files they point to are replaced."""
    finish_interrupted_saves(directory)
    while True:
        staging = os.path.join(directory, STAGING_PREFIX + secrets.token_hex(4))
        try:
            os.mkdir(staging)
            break
        except FileExistsError:
            continue
    fd = os.open(staging, os.O_RDONLY)
    try:
        _lock(fd)
        stage = Staging(staging)
        yield stage
        for name in stage.names:
            src = os.path.join(staging, name)
            with open(src, "rb+") as f:
                os.fsync(f.fileno())
        # the marker appears whole or not at all: written beside, then renamed (a kill while
        # writing it in place left an empty marker that the next load could not read)
        marker = os.path.join(staging, _COMPLETE)
        with open(marker + ".part", "wb") as f:
            f.write(json.dumps({"files": stage.names}).encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(marker + ".part", marker)
        _fsync_dir(staging)
        _roll_forward(staging, directory)
    finally:
        os.close(fd)
        shutil.rmtree(staging, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# reading untrusted files


def check_regular(path: str, what: str) -> int:
    """The size of the regular file ``path``; OSError(EINVAL) naming it for a device, a FIFO
    or a socket (whose reading would not end or block)."""
    info = os.stat(path)
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, f"{what} is a folder, not a file", path)
    if not stat.S_ISREG(info.st_mode):
        raise OSError(
            errno.EINVAL,
            f"{what} is not a regular file (a device, pipe or socket): give a file",
            path,
        )
    return info.st_size


def too_large_message(where: str, size: Union[int, str], limit: int) -> str:
    return (
        f"{where}: the file has {size} bytes, more than the {limit}-byte ({limit >> 20} MiB) "
        "maximum size of a tokenizer file (toksmith.MAX_TOKENIZER_FILE_BYTES): is it the "
        "right file?"
    )


def _refuse_device(mode: int, what: str, where: str) -> None:
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):  # /dev/zero, /dev/urandom, a disk: no end
        raise OSError(
            errno.EINVAL,
            f"{what} is a device, not a regular file: give a file (or a pipe)",
            where,
        )


def _read_blocks(f: IO[bytes], most: int) -> bytes:
    """At most ``most`` bytes of ``f``, read block by block."""
    parts = []
    while most > 0:
        block = f.read(min(most, 1 << 20))
        if not block:
            break
        parts.append(block)
        most -= len(block)
    return b"".join(parts)


def read_capped(
    f: IO[bytes],
    where: str,
    what: str = "the file",
    limit: Optional[int] = None,
    error: Callable[[str], Exception] = ValueError,
) -> bytes:
    """The rest of the open file ``f`` (named ``where`` in errors), at most ``limit`` bytes
    (default :data:`MAX_TOKENIZER_FILE_BYTES`): ``error(message)`` for a regular file larger
    than that before anything is read, and for a pipe as soon as it has given more; a device
    is an OSError (EINVAL): its reading would not end."""
    cap = MAX_TOKENIZER_FILE_BYTES if limit is None else limit
    info = os.fstat(f.fileno())
    _refuse_device(info.st_mode, what, where)
    if stat.S_ISREG(info.st_mode) and info.st_size > cap:
        raise error(too_large_message(where, info.st_size, cap))
    # read(n) allocates n bytes up front: ask for what the file holds (a pipe: blocks)
    if stat.S_ISREG(info.st_mode):
        data = f.read(info.st_size + 1)
        if len(data) > info.st_size:  # it grew: read the rest as a stream
            data += _read_blocks(f, cap + 1 - len(data))
    else:
        data = _read_blocks(f, cap + 1)
    if len(data) > cap:
        raise error(too_large_message(where, f"more than {cap}", cap))
    return data


def read_file_capped(
    path: PathLike,
    what: str = "the file",
    limit: Optional[int] = None,
    error: Callable[[str], Exception] = ValueError,
) -> bytes:
    """The bytes of the file ``path``, bounded as :func:`read_capped` reads them."""
    p = fspath(path)
    with open(p, "rb") as f:  # IsADirectoryError for a folder, as before
        return read_capped(f, os.fsdecode(p), what, limit, error)


def open_readable(path: PathLike, what: str = "the file") -> IO[bytes]:
    """``open(path, "rb")`` for a regular file or a pipe (OSError EINVAL for a device, whose
    reading would not end)."""
    p = fspath(path)
    f = open(p, "rb")
    try:
        _refuse_device(os.fstat(f.fileno()).st_mode, what, os.fsdecode(p))
    except BaseException:
        f.close()
        raise
    return f


__all__: List[str] = [
    "MAX_TOKENIZER_FILE_BYTES",
    "atomic_files",
    "atomic_write",
    "check_regular",
    "finish_interrupted_saves",
    "open_readable",
    "read_capped",
    "read_file_capped",
    "refuse_special_destination",
    "write_bytes_atomic",
    "write_text_atomic",
]
