"""Training corpora: files, folders, globs, JSONL, and the built-in default corpus."""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import glob
import json
import os
import re
import stat
import sysconfig
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Iterator, List, Optional, Sequence, Union, cast

from ._args import fix_surrogates as _fix_surrogates
from ._args import index_arg
from ._paths import fspath
from .errors import CorpusDecodeError

PathLike = Union[str, "os.PathLike[str]"]


def _is_stream(path: Path) -> bool:
    """A named pipe or character device (``/dev/stdin``, bash's ``<(xzcat corpus.xz)``)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


def _walk_once(top: str, onerror=None, revisit: bool = False) -> Iterator[tuple]:
    """``os.walk(top)`` following symbolic links to folders without looping: a link back to a
    folder above it is not followed, and (unless ``revisit``) neither is one to a folder already
    walked by another path."""
    seen = set()
    chains: dict = {}  # folder -> the (device, inode) of it and of the folders above it
    for root, dirs, files in os.walk(top, onerror=onerror, followlinks=True):
        try:
            st = os.stat(root)
        except OSError:  # gone since it was listed
            dirs[:] = []
            continue
        key = (st.st_dev, st.st_ino)
        above = (
            chains.get(os.path.normpath(os.path.dirname(root)), frozenset())
            if root != top
            else frozenset()
        )
        if key in above or (key in seen and not revisit):
            dirs[:] = []
            continue
        seen.add(key)
        chains[os.path.normpath(root)] = above | {key}
        yield root, dirs, files


def _walk(folder: Path) -> List[Path]:
    """The regular files under ``folder`` (sorted, hidden entries skipped), each real file once:
    symbolic links are followed, but a file (or folder) reached again through a link, or a
    link loop, is not read again. Pipes, sockets and devices inside a folder are skipped
    (reading a pipe nobody writes to would wait forever); a broken symbolic link raises
    FileNotFoundError."""
    found: List[Path] = []
    seen = set()

    def unreadable(e: OSError) -> None:  # os.walk skips a folder it cannot list, unless told
        raise type(e)(
            e.errno,
            f"cannot read the folder {e.filename!r} in {str(folder)!r} ({e.strerror}); "
            f"fix its permissions or pass the files to read",
        ) from None

    for root, dirs, files in _walk_once(str(folder), onerror=unreadable):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            f = Path(root) / name
            try:
                st = f.stat()
            except FileNotFoundError:
                raise FileNotFoundError(
                    f"{str(f)!r} in the folder {str(folder)!r} is a broken symbolic link; "
                    f"remove it or pass the files to read"
                ) from None
            except OSError as e:
                if e.errno != errno.ELOOP:
                    raise
                raise FileNotFoundError(
                    f"{str(f)!r} in the folder {str(folder)!r} is a symbolic link loop; "
                    f"remove it or pass the files to read"
                ) from None
            if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                found.append(f)
    return found


def _glob_files(pattern: str) -> List[Path]:
    """The regular files a glob pattern matches (sorted), each real file once. ``**`` (any
    folders) is matched by walking the tree with :func:`_walk_once`: ``glob.glob`` follows
    symbolic links to folders without end in a link loop."""
    sep = re.escape(os.sep) + (re.escape(os.altsep) if os.altsep else "")
    parts = re.split(f"[{sep}]", pattern)
    if "**" not in parts:  # no recursion: glob cannot loop
        matches = sorted(glob.glob(pattern))
    else:
        n = next(i for i, c in enumerate(parts) if glob.has_magic(c))
        top = os.sep.join(parts[:n]) if n else ""
        if parts[:n] == [""]:  # "/**/x": the root folder
            top = os.sep
        matches = []
        for root, dirs, files in _walk_once(top or os.curdir, revisit=True):
            rel = os.path.relpath(root, top or os.curdir)
            here = [] if rel == os.curdir else rel.split(os.sep)
            dirs[:] = [d for d in dirs if _glob_match(here + [d], parts[n:], prefix=True)]
            matches.extend(
                os.path.join(root, f) if top else os.path.join(*here, f)
                for f in files
                if _glob_match(here + [f], parts[n:])
            )
        matches.sort()
    found: List[Path] = []
    seen = set()
    for m in matches:
        try:
            st = os.stat(m)
        except OSError:  # a broken link: glob.glob gives it, but there is nothing to read
            continue
        if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            found.append(Path(m))
    return found


def _glob_match(names: List[str], pats: List[str], prefix: bool = False) -> bool:
    """Whether the path ``names`` matches the glob components ``pats`` as ``glob.glob(...,
    recursive=True)`` matches them (``**``: zero or more folders; wildcards do not match names
    that start with a dot); with ``prefix``, whether a path under ``names`` could match."""
    if not names:
        return bool(pats) if prefix else all(p == "**" for p in pats)
    if not pats:
        return False
    p = pats[0]
    if p == "**":
        if _glob_match(names, pats[1:], prefix):  # ** matching no folder
            return True
        return not names[0].startswith(".") and _glob_match(names[1:], pats, prefix)
    if glob.has_magic(p):
        if names[0].startswith(".") and not p.startswith("."):
            return False
        if not fnmatch.fnmatch(names[0], p):
            return False
    elif os.path.normcase(names[0]) != os.path.normcase(p):
        return False
    return _glob_match(names[1:], pats[1:], prefix)


def expand_paths(paths: Union[PathLike, Sequence[PathLike]]) -> List[Path]:
    """Files named by ``paths``: files as they are, folders recursed (regular files only, hidden
    entries skipped, sorted), glob patterns expanded; a named pipe given by name is read as a
    stream (``toksmith train <(xzcat corpus.xz)``). A path that matches nothing raises
    FileNotFoundError."""
    if isinstance(paths, (bytes, bytearray, memoryview)):
        raise TypeError(
            f"paths must be str or os.PathLike (or a list of them), not {type(paths).__name__}"
        )
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    elif not isinstance(paths, Iterable):
        raise TypeError(
            f"paths must be str or os.PathLike (or a list of them), not {type(paths).__name__}"
        )
    out: List[Path] = []
    for p in paths:
        if not isinstance(p, (str, os.PathLike)):
            raise TypeError(f"paths must be str or os.PathLike, not {type(p).__name__}")
        s = fspath(p)
        if isinstance(s, bytes):
            raise TypeError("paths must be str or os.PathLike of str, not bytes")
        if not s:  # Path("") is the current folder: reading all of it is never what was meant
            raise ValueError(
                "a path is empty (''); pass a file, folder or glob ('.' for the current folder)"
            )
        path = Path(s)
        if path.is_file() or _is_stream(path):
            out.append(path)
        elif path.is_dir():
            out.extend(_walk(path))
        elif any(c in s for c in "*?["):
            files = _glob_files(s)
            if not files:
                raise FileNotFoundError(f"the glob {s!r} matches no file")
            out.extend(files)
        elif path.is_symlink():
            raise FileNotFoundError(f"{s!r} is a broken symbolic link")
        elif path.exists():
            raise FileNotFoundError(
                f"{s!r} is not a file, folder or pipe (a socket or block device?); "
                f"pass a text file or a folder of them"
            )
        else:
            raise FileNotFoundError(f"no such file or folder: {s!r}")
    return out


#: suffixes of compressed corpora, decompressed on the fly (standard library codecs)
COMPRESSED_SUFFIXES = (".xz", ".lzma", ".gz", ".bz2")


def compression(path: PathLike) -> Optional[str]:
    """The compressed-file suffix of ``path`` (``".xz"``, ``".lzma"``, ``".gz"``, ``".bz2"``, any
    case), or None for a plain file."""
    name = os.fspath(path).lower()
    for suffix in COMPRESSED_SUFFIXES:
        if name.endswith(suffix):
            return suffix
    return None


def inner_name(path: PathLike) -> str:
    """The name of the file inside a compressed one (``a.jsonl.xz`` -> ``a.jsonl``)."""
    name = os.fspath(path)
    suffix = compression(name)
    return name[: len(name) - len(suffix)] if suffix else name


def open_binary(path: PathLike, raw: Optional[BinaryIO] = None) -> BinaryIO:
    """``path`` opened for reading bytes, decompressed if its suffix says it is compressed. With
    ``raw`` (``path`` already opened, e.g. to follow the compressed position for progress), the
    decompressing reader wraps it, or ``raw`` itself is returned for a plain file."""
    suffix = compression(path)
    source = raw if raw is not None else fspath(path)
    if suffix in (".xz", ".lzma"):
        import lzma

        return cast(BinaryIO, lzma.open(source, "rb"))
    if suffix == ".gz":
        import gzip

        return cast(BinaryIO, gzip.open(source, "rb"))
    if suffix == ".bz2":
        import bz2

        return cast(BinaryIO, bz2.open(source, "rb"))
    if raw is not None and not callable(getattr(raw, "read", None)):
        raise TypeError(f"raw must be an open binary file (or None), not {type(raw).__name__}")
    return raw if raw is not None else open(fspath(path), "rb")


@contextlib.contextmanager
def decompression_errors(path: PathLike) -> Iterator[None]:
    """Turn a compressed file's corruption (which the codecs raise as LZMAError, EOFError,
    BadGzipFile, zlib.error or an OSError without errno) into a CorpusDecodeError naming it."""
    import zlib

    suffix = compression(path)
    try:
        yield
    except Exception as e:
        data_error = suffix is not None and (
            type(e).__name__ == "LZMAError"
            or isinstance(e, (EOFError, zlib.error))
            or (isinstance(e, OSError) and e.errno is None)
        )
        if not data_error:
            raise
        raise CorpusDecodeError(f"{os.fspath(path)} is not a valid {suffix} file: {e}") from None


def iter_jsonl(path: Path, text_field: str, errors: str = "strict") -> Iterator[str]:
    """The ``text_field`` of each JSON line of ``path``. Invalid UTF-8 raises
    :class:`toksmith.CorpusDecodeError` naming the file and line, unless ``errors="replace"``."""
    if not isinstance(text_field, str):
        raise TypeError(
            f"text_field must be a str (the name of the JSON field that holds the text), "
            f"not {type(text_field).__name__}"
        )
    if errors not in ("strict", "replace"):
        raise ValueError(f"errors must be 'strict' or 'replace', not {errors!r}")
    with decompression_errors(path), open_binary(path) as f:
        for lineno, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8", errors)
            except UnicodeDecodeError as e:
                raise CorpusDecodeError(
                    f"{path}:{lineno}: not valid UTF-8 ({e.reason} at byte {e.start} of the line); "
                    f'pass errors="replace" to replace bad bytes with U+FFFD'
                ) from None
            if lineno == 1:
                line = line.lstrip("\ufeff")  # a byte order mark, as Windows tools write it
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{lineno}: not valid JSON: {e.msg}") from None
            if not isinstance(obj, dict) or text_field not in obj:
                raise ValueError(
                    f"{path}:{lineno}: no field {text_field!r} in this JSON line; pass text_field= "
                    "with the name of the field that holds the text"
                )
            value = obj[text_field]
            if not isinstance(value, str):
                raise ValueError(
                    f"{path}:{lineno}: field {text_field!r} is {type(value).__name__}, not a string"
                )
            if "\\u" in line:  # only a \uD800-style escape can give a lone surrogate
                value = surrogates_checked(value, errors, f"{path}:{lineno}: field {text_field!r}")
            yield value


def surrogates_checked(value: str, errors: str, where: str) -> str:
    """``value`` if UTF-8 can encode it. A lone surrogate (from a JSON ``\\uD800`` escape or a
    ``surrogateescape`` decode) raises :class:`toksmith.CorpusDecodeError` naming ``where``, or
    is replaced with U+FFFD (as ``encode()`` reads it) if ``errors="replace"``."""
    if not isinstance(value, str):
        raise TypeError(f"{where} must be a str, not {type(value).__name__}")
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError as e:
        if errors == "replace":
            return _fix_surrogates(value)
        raise CorpusDecodeError(
            f"{where} holds a lone surrogate (U+{ord(value[e.start]):04X} at index {e.start}) that UTF-8 "
            f'cannot encode; pass errors="replace" to read it as U+FFFD (as encode() does)'
        ) from None


def iter_line_blocks(path: Path, errors: str = "strict", block: int = 1 << 20) -> Iterator[str]:
    """A text file as texts of about ``block`` characters, each ending after a newline (for
    split patterns whose pieces never span a line break, the pieces of the blocks are those of
    the whole file). Compressed files (:data:`COMPRESSED_SUFFIXES`) are decompressed as they are
    read. Invalid UTF-8 raises :class:`toksmith.CorpusDecodeError` naming the file, unless
    ``errors="replace"``."""
    import io

    try:
        with (
            decompression_errors(path),
            open_binary(path) as raw,
            io.TextIOWrapper(raw, encoding="utf-8", errors=errors, newline="") as f,
        ):
            while True:
                lines = f.readlines(block)
                if not lines:
                    return
                yield "".join(lines)
    except UnicodeDecodeError as e:
        raise CorpusDecodeError(
            f"{path} is not valid UTF-8 ({e.reason} at byte {e.start} of a block); "
            f'pass errors="replace" to replace bad bytes with U+FFFD'
        ) from None


def read_text(path: PathLike, errors: str = "strict") -> str:
    """The whole of a UTF-8 text file (decompressed if its suffix says it is compressed).
    Invalid UTF-8 raises :class:`toksmith.CorpusDecodeError` naming the file, unless
    ``errors="replace"``."""
    with decompression_errors(path), open_binary(path) as f:
        data = f.read()
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as e:
        raise CorpusDecodeError(
            f"{os.fspath(path)} is not valid UTF-8 ({e.reason} at byte {e.start}); pass "
            'errors="replace" to replace bad bytes with U+FFFD'
        ) from None


def _positive_int(value: Any, what: str) -> int:
    value = index_arg(value, f"{what} must be an int, not {{type}}")
    if value < 1:
        raise ValueError(f"{what} must be at least 1, not {value}")
    return value


def default_corpus(max_bytes: int = 8 << 20) -> List[Path]:
    """The built-in default corpus: Python source files of the running interpreter's standard
    library (sorted, up to ``max_bytes``), so ``toksmith train`` works with no corpus."""
    max_bytes = _positive_int(max_bytes, "max_bytes")
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files: List[Path] = []
    total = 0
    for f in sorted(stdlib.glob("*.py")) + sorted(stdlib.glob("*/*.py")):
        if "site-packages" in f.parts or "test" in f.parts:
            continue
        try:
            size = f.stat().st_size
        except OSError:
            continue
        files.append(f)
        total += size
        if total >= max_bytes:
            break
    if not files:  # pragma: no cover - a Python without sources
        raise FileNotFoundError(
            f"no Python sources found under {stdlib} for the default corpus; pass PATH"
        )
    return files


def batched(
    texts: Iterable[str], max_items: int = 16384, max_bytes: int = 16 << 20
) -> Iterator[List[str]]:
    """Group an iterable of str into lists bounded in count and size."""
    if isinstance(texts, (str, bytes, bytearray)):
        raise TypeError("texts must be an iterable of str, not a single str; wrap it in a list")
    max_items = _positive_int(max_items, "max_items")
    max_bytes = _positive_int(max_bytes, "max_bytes")
    batch: List[str] = []
    size = 0
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"item {i} of the training texts is {type(t).__name__}, not str")
        batch.append(t)
        size += len(t)
        if len(batch) >= max_items or size >= max_bytes:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


__all__ = [
    "expand_paths",
    "iter_jsonl",
    "default_corpus",
    "batched",
    "compression",
    "open_binary",
    "COMPRESSED_SUFFIXES",
    "surrogates_checked",
]
