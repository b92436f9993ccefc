"""The corpus reader: one for ``train``, ``count``, ``tokenize``, ``encode`` and ``eval``.

Inputs (:func:`expand_inputs`): files, folders (recursed), globs, ``-`` for stdin, and remote
paths (``s3://``, ``hf://``, ...) through fsspec when it and the backend are installed. Inside a
folder or glob, files that cannot be text (binary by magic bytes or NUL bytes, parquet without
pyarrow, zstd without zstandard) are skipped with one warning line; a file named on its own is
refused by name, whatever ``errors`` says.

A document source yields ``(text, last)`` pieces: ``last`` is True on a document's final piece.
Most documents are one piece; a ``.txt`` file is one document read in blocks cut where encoding
the blocks one by one gives the ids of the whole (:func:`toksmith.streaming.iter_text_parts`), so
a huge file never sits in memory whole.

Kinds, by the name inside any compression suffix: ``.jsonl``/``.ndjson``/``.json`` (one document
per line: the ``text_field``, or for ``{"messages": [...]}`` lines the message contents joined by
newlines), ``.parquet`` (the ``text_field`` column, streamed by row group; needs pyarrow), anything
else is text. Compression by suffix or magic bytes: gzip, bzip2, xz, zstd (zstd needs zstandard).
Binary files (images, archives, executables, or bytes with NULs) are refused by name.
"""

from __future__ import annotations

import io
import json
import os
import sys
import warnings
from pathlib import Path
from typing import (
    Any,
    BinaryIO,
    Callable,
    Iterable,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from . import corpus
from ._args import index_arg
from .errors import CorpusDecodeError, missing_extra
from .streaming import iter_text_parts

#: the name standing for standard input
STDIN = "-"

#: (magic bytes, what it is) of binary files that are never text
_BINARY_MAGIC: Tuple[Tuple[bytes, str], ...] = (
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"),
    (b"PK\x03\x04", "a zip archive"),
    (b"\x7fELF", "an executable (ELF)"),
    (b"\x93NUMPY", "a numpy array"),
    (b"7z\xbc\xaf\x27\x1c", "a 7z archive"),
    (b"Rar!", "a rar archive"),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"\x1a\x45\xdf\xa3", "a Matroska/WebM video"),
    (b"MMIDIDX", "a Megatron index"),
)

_COMPRESSION_MAGIC = (
    (b"\x1f\x8b", ".gz"),
    (b"BZh", ".bz2"),
    (b"\xfd7zXZ\x00", ".xz"),
    (b"\x28\xb5\x2f\xfd", ".zst"),
)

_SUFFIXES = (".gz", ".bz2", ".xz", ".lzma", ".zst", ".zstd")

#: the bytes looked at for NULs (text has none; UTF-16 and binary files do)
_SNIFF = 8192


def _suffix_compression(name: str) -> Optional[str]:
    low = name.lower()
    for s in _SUFFIXES:
        if low.endswith(s):
            return {".lzma": ".xz", ".zstd": ".zst"}.get(s, s)
    return None


def _inner(name: str) -> str:
    low = name.lower()
    for s in _SUFFIXES:
        if low.endswith(s):
            return name[: len(name) - len(s)]
    return name


def is_remote(path: str) -> bool:
    """Whether ``path`` is a URL for fsspec (``s3://bucket/x``, ``hf://datasets/...``)."""
    head, sep, _ = path.partition("://")
    return bool(sep) and head.isascii() and head.replace("+", "").replace("-", "").isalnum()


def _fsspec() -> Any:
    try:
        import fsspec  # type: ignore[import-untyped]
    except ImportError:
        raise missing_extra("fsspec", "fsspec") from None
    return fsspec


def _open_raw(path: str) -> BinaryIO:
    """``path`` opened for reading bytes: stdin for ``-``, fsspec for a URL, else the file."""
    if path == STDIN:
        return io.BufferedReader(io.FileIO(os.dup(sys.stdin.fileno()), "rb"), 1 << 20)
    if is_remote(path):
        return _fsspec().open(path, "rb").open()  # type: ignore[no-any-return]
    return open(path, "rb")


def kind_of(path: str) -> str:
    """``"jsonl"``, ``"parquet"`` or ``"text"``, from the file's name (inside any compression
    suffix) and, for a parquet file under another name, its ``PAR1`` magic."""
    inner = _inner(os.path.basename(path)).lower()
    if inner.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    if inner.endswith(".parquet"):
        return "parquet"
    if path == STDIN or is_remote(path) or not os.path.isfile(path):
        return "text"  # (a pipe is not looked into: what is read of it is gone)
    try:
        with open(path, "rb") as f:
            if f.read(4) == b"PAR1":
                return "parquet"
    except OSError:
        pass
    return "text"


def output_stem(path: str) -> str:
    """The name of an input without folders and format/compression suffixes
    (``data/a.jsonl.zst`` -> ``a``)."""
    name = _inner(os.path.basename(path))
    low = name.lower()
    for s in (".jsonl", ".ndjson", ".json", ".parquet", ".txt", ".text"):
        if low.endswith(s):
            name = name[: len(name) - len(s)]
            break
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name).strip(".")
    return safe or "input"


def _refuse_binary(path: str, head: bytes, compressed: bool) -> None:
    for magic, what in _BINARY_MAGIC:
        if head.startswith(magic):
            raise ValueError(f"{path} is {what}, not text: pass text, JSON lines or parquet files")
    if b"\x00" in head[:_SNIFF]:
        inside = " (after decompression)" if compressed else ""
        raise ValueError(
            f"{path} is a binary file{inside}: it holds NUL bytes, which text does not; pass "
            "UTF-8 text, JSON lines or parquet files"
        )


class _Counting(io.RawIOBase):
    """A raw file that counts the bytes read from it (the progress of a compressed file)."""

    def __init__(self, f: BinaryIO, on_read: Optional[Callable[[int], None]] = None) -> None:
        self._f = f
        self.count = 0
        self.on_read = on_read

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        n = self._f.readinto(b)  # type: ignore[attr-defined]
        self.count += n or 0
        if self.on_read is not None and n:
            self.on_read(n)
        return n or 0

    def close(self) -> None:
        self._f.close()
        super().close()


def _open_zstd(raw: BinaryIO) -> BinaryIO:
    try:
        import zstandard
    except ImportError:
        raise missing_extra("zstd", "zstandard") from None
    reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
    return io.BufferedReader(reader, 1 << 20)  # type: ignore[arg-type]


class DocumentSource:
    """The documents of one input file, as ``(text, last)`` pieces; ``bytes_read`` is how far
    the file (as stored, compressed or not) has been read, for progress bars."""

    def __init__(
        self,
        path: str,
        text_field: str = "text",
        errors: str = "strict",
        tokenizer: Any = None,
        block_size: int = 4 << 20,
        doc_sep: Optional[str] = None,
        on_read: Optional[Callable[[int], None]] = None,
    ) -> None:
        """``on_read(n)`` is called as each ``n`` bytes of the file as stored are read (a
        progress bar whose total is the files' sizes)."""
        if doc_sep is not None and (not isinstance(doc_sep, str) or not doc_sep):
            raise ValueError("doc_sep must be a non-empty str (such as '\\n\\n') or None")
        if not isinstance(text_field, str) or not text_field:
            raise TypeError("text_field must be a non-empty str (the name of the text field)")
        if errors not in ("strict", "replace"):
            raise ValueError(f"errors must be 'strict' or 'replace', not {errors!r}")
        self.path = os.fspath(path)
        self.doc_sep = doc_sep
        self.text_field = text_field
        self.errors = errors
        self.tokenizer = tokenizer
        self.block_size = block_size
        self.kind = kind_of(self.path)
        self.bytes_read = 0
        #: the compression found by :meth:`open` (``".gz"``, ``".zst"``...), None for none
        self.compression: Optional[str] = None
        self._counter: Optional[_Counting] = None
        self.on_read = on_read

    def open(self) -> BinaryIO:
        """The file decompressed (by suffix or magic bytes), after refusing a binary one by
        name. The caller closes it."""
        raw_file = _open_raw(self.path)
        try:
            counter = _Counting(raw_file, self.on_read)
            self._counter = counter
            # raw reads of 64 KiB: a progress bar over the stored bytes moves within a file
            buffered = io.BufferedReader(counter, 1 << 16)
            head = buffered.peek(8)[:8]
            comp = _suffix_compression(self.path)
            for magic, suffix in _COMPRESSION_MAGIC:
                if head.startswith(magic):
                    comp = suffix
            if comp == ".zst":
                f: BinaryIO = _open_zstd(buffered)  # type: ignore[arg-type]
            elif comp is not None:
                f = corpus.open_binary("x" + comp, raw=buffered)  # type: ignore[arg-type]
            else:
                f = buffered  # type: ignore[assignment]
            f = io.BufferedReader(f, 1 << 20) if not hasattr(f, "peek") else f  # type: ignore[arg-type,type-var]
            try:
                sniff = f.peek(_SNIFF)[:_SNIFF]  # type: ignore[attr-defined]
            except Exception as e:
                raise CorpusDecodeError(f"{self.path} is not a valid {comp} file: {e}") from None
            _refuse_binary(self.path, sniff, comp is not None)
            self.compression = comp
            return f
        except BaseException:
            raw_file.close()
            raise

    def _progress(self) -> None:
        if self._counter is not None:
            self.bytes_read = self._counter.count

    def __iter__(self) -> Iterator[Tuple[str, bool]]:
        if self.kind == "parquet":
            yield from self._parquet()
            return
        f = self.open()
        try:
            if self.kind == "jsonl":
                yield from self._jsonl(f)
            else:
                yield from self._text(f)
        except Exception as e:
            if not is_data_error(e):
                raise
            raise CorpusDecodeError(f"{self.path} is not a valid compressed file: {e}") from None
        finally:
            f.close()
        if self._counter is not None:
            self.bytes_read = self._counter.count

    def _separated(self, f: BinaryIO) -> Iterator[Tuple[str, bool]]:
        """The documents of a text file cut at ``doc_sep`` (read in blocks; empty documents,
        such as those between runs of separators, are left out)."""
        import codecs

        sep = self.doc_sep
        assert sep is not None
        decoder = codecs.getincrementaldecoder("utf-8")(self.errors)
        pending = ""
        first = True
        while True:
            block = f.read(self.block_size)
            try:
                pending += decoder.decode(block, final=not block)
            except UnicodeDecodeError as e:
                raise CorpusDecodeError(
                    f"{self.path} is not valid UTF-8 ({e.reason} in a block); "
                    f'pass errors="replace" to replace bad bytes with U+FFFD'
                ) from None
            if first:
                pending = pending.lstrip("\ufeff")
                first = False
            docs = pending.split(sep)
            pending = docs.pop() if block else ""
            for d in docs if block else docs + [pending]:
                if d:
                    self._progress()
                    yield d, True
            if not block:
                return

    def _text(self, f: BinaryIO) -> Iterator[Tuple[str, bool]]:
        if self.doc_sep is not None:
            yield from self._separated(f)
            return
        prev: Optional[str] = None
        if self.tokenizer is not None:
            groups: Iterator[List[str]] = iter_text_parts(
                self.tokenizer, f, errors=self.errors, name=self.path, block_size=self.block_size
            )
        else:
            data = f.read()
            try:
                whole = data.decode("utf-8", self.errors)
            except UnicodeDecodeError as e:
                raise CorpusDecodeError(
                    f"{self.path} is not valid UTF-8 ({e.reason} at byte {e.start}); pass "
                    'errors="replace" to replace bad bytes with U+FFFD'
                ) from None
            groups = iter([[whole]])
        for parts in groups:
            for part in parts:
                if prev is not None:
                    self._progress()
                    yield prev, False
                prev = part
        self._progress()
        yield (prev if prev is not None else ""), True

    def _jsonl(self, f: BinaryIO) -> Iterator[Tuple[str, bool]]:
        field = self.text_field
        for lineno, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8", self.errors)
            except UnicodeDecodeError as e:
                raise CorpusDecodeError(
                    f"{self.path}:{lineno}: not valid UTF-8 ({e.reason} at byte {e.start} of the "
                    f'line); pass errors="replace" to replace bad bytes with U+FFFD'
                ) from None
            if lineno == 1:
                line = line.lstrip("\ufeff")
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{self.path}:{lineno}: not valid JSON: {e.msg}") from None
            where = f"{self.path}:{lineno}"
            text = _document_text(obj, field, where)
            if "\\u" in line:
                if isinstance(obj, dict) and field in obj:
                    where += f": field {field!r}"
                text = corpus.surrogates_checked(text, self.errors, where)
            self._progress()
            yield text, True

    def _parquet(self) -> Iterator[Tuple[str, bool]]:
        try:
            import pyarrow.parquet as pq  # type: ignore[import-untyped]
        except ImportError:
            raise missing_extra("parquet", "pyarrow") from None
        if self.path == STDIN:
            raise ValueError("a parquet file cannot be read from stdin: pass its path")
        try:
            source: Any = (
                _fsspec().open(self.path, "rb").open() if is_remote(self.path) else self.path
            )
            pf = pq.ParquetFile(source)
        except ImportError:
            raise
        except Exception as e:  # pyarrow's ArrowInvalid: not a parquet file
            raise ValueError(f"{self.path} is not a valid parquet file: {e}") from None
        names = pf.schema_arrow.names
        if self.text_field not in names:
            raise ValueError(
                f"{self.path}: no column {self.text_field!r} (columns: {', '.join(names)}); pass "
                "text_field= with the name of the column that holds the text"
            )
        size = 0 if is_remote(self.path) else os.path.getsize(self.path)
        groups = pf.num_row_groups or 1
        row = 0
        for g in range(pf.num_row_groups):
            table = pf.read_row_group(g, columns=[self.text_field])
            for value in table.column(0).to_pylist():
                row += 1
                if not isinstance(value, str):
                    raise ValueError(
                        f"{self.path}: row {row}: column {self.text_field!r} is "
                        f"{type(value).__name__}, not a string"
                    )
                yield value, True
            self.bytes_read = size * (g + 1) // groups
        self.bytes_read = size


def is_data_error(e: BaseException) -> bool:
    """Whether ``e`` is a codec's report of a corrupt or truncated compressed stream."""
    import zlib

    return (
        type(e).__name__ in ("LZMAError", "ZstdError")
        or isinstance(e, (EOFError, zlib.error))
        or (isinstance(e, OSError) and e.errno is None)
    )


def _document_text(obj: Any, field: str, where: str) -> str:
    """A JSON line's document: its ``field``, or the contents of its ``messages`` joined by
    newlines."""
    if isinstance(obj, dict) and field in obj:
        value = obj[field]
        if not isinstance(value, str):
            raise ValueError(f"{where}: field {field!r} is {type(value).__name__}, not a string")
        return value
    if isinstance(obj, dict) and isinstance(obj.get("messages"), list):
        texts: List[str] = []
        for n, m in enumerate(obj["messages"]):
            content = m.get("content") if isinstance(m, dict) else None
            if isinstance(content, list):  # parts: [{"type": "text", "text": ...}, ...]
                content = "".join(p.get("text", "") if isinstance(p, dict) else "" for p in content)
            if content is None:
                content = ""
            if not isinstance(content, str):
                raise ValueError(
                    f"{where}: messages[{n}]'s content is {type(content).__name__}, not a string"
                )
            texts.append(content)
        return "\n".join(texts)
    raise ValueError(
        f"{where}: no field {field!r} in this JSON line; pass text_field= with the name of the "
        "field that holds the text"
    )


def iter_documents_of(
    path: str,
    text_field: str = "text",
    errors: str = "strict",
    doc_sep: Optional[str] = None,
    on_read: Optional[Callable[[int], None]] = None,
) -> Iterator[str]:
    """The documents of one input file, each whole, as tokenize_dataset reads them."""
    buf: List[str] = []
    for text, last in DocumentSource(path, text_field, errors, doc_sep=doc_sep, on_read=on_read):
        buf.append(text)
        if last:
            yield "".join(buf)
            buf = []


def unreadable(path: str) -> Optional[str]:
    """Why ``path`` (a local file) cannot be read as a corpus: the refusal's message (a binary
    file, or a format whose optional dependency is missing), or None when it can be read."""
    try:
        source = DocumentSource(path)
        if source.kind == "parquet":
            try:
                import pyarrow.parquet  # type: ignore[import-untyped]  # noqa: F401
            except ImportError:
                return str(missing_extra("parquet", "pyarrow"))
            return None
        source.open().close()
    except ImportError as e:
        return str(e)
    except ValueError as e:  # a binary file (CorpusDecodeError: a broken compressed one)
        if isinstance(e, CorpusDecodeError):
            return None  # read, and refused by name, when its turn comes
        return str(e)
    return None


PathArg = Union[str, "os.PathLike[str]"]


def expand_inputs(paths: Union[PathArg, Sequence[PathArg]], warn: bool = True) -> List[str]:
    """The input files ``paths`` name (see :func:`toksmith.corpus.expand_paths`), plus ``-``
    (stdin) and URLs (expanded with fsspec when they hold a glob). Files found inside a folder
    or glob that cannot be read as text (:func:`unreadable`) are left out, with one warning line
    naming them; a file named on its own stays, to be refused by name when read."""
    if isinstance(paths, (bytes, bytearray, memoryview)) or not isinstance(
        paths, (str, os.PathLike, Iterable)
    ):
        corpus.expand_paths(paths)  # raises its TypeError naming the type
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out: List[str] = []
    skipped: List[Tuple[str, str]] = []
    for p in paths:
        s = os.fspath(p) if isinstance(p, os.PathLike) else p
        if isinstance(s, str) and s == STDIN:
            out.append(STDIN)
            continue
        if isinstance(s, str) and is_remote(s):
            if any(c in s for c in "*?["):
                fs = _fsspec()
                found = sorted(fs.open_files(s), key=lambda f: f.path)
                if not found:
                    raise FileNotFoundError(f"the glob {s!r} matches no file")
                out.extend(f.full_name if hasattr(f, "full_name") else f.path for f in found)
            else:
                out.append(s)
            continue
        files = corpus.expand_paths([p])
        named = len(files) == 1 and isinstance(s, str) and Path(s) == files[0]
        for f in files:
            name = str(f)
            if not named:
                why = unreadable(name)
                if why is not None:
                    skipped.append((name, why))
                    continue
            out.append(name)
    if skipped and warn:
        first = skipped[0][1].split(":")[0].split(" is ")[-1]
        names = ", ".join(n for n, _ in skipped[:5]) + (", ..." if len(skipped) > 5 else "")
        warnings.warn(
            f"skipped {len(skipped)} file(s) that are not text ({names}; the first is {first})",
            stacklevel=2,
        )
    return out


def caps_checked(max_chars: Any, doc_cap: Any) -> Tuple[Optional[int], Optional[int]]:
    """``max_chars`` and ``doc_cap`` checked: each None or an int of at least 1."""
    out = []
    for v, what in ((max_chars, "max_chars"), (doc_cap, "doc_cap")):
        if v is not None:
            v = index_arg(v, f"{what} must be an int or None, not {{type}}")
            if v < 1:
                raise ValueError(f"{what} must be at least 1 (or None for no cap), not {v}")
        out.append(v)
    return out[0], out[1]


class Caps:
    """nanochat's ``tok_train`` caps: each document cut to its first ``doc_cap`` characters, and
    reading stops after the document that takes the total past ``max_chars``."""

    def __init__(self, max_chars: Any = None, doc_cap: Any = None) -> None:
        self.max_chars, self.doc_cap = caps_checked(max_chars, doc_cap)
        self.chars = 0

    @property
    def active(self) -> bool:
        return self.max_chars is not None or self.doc_cap is not None

    @property
    def done(self) -> bool:
        return self.max_chars is not None and self.chars > self.max_chars

    def apply(self, docs: Iterable[str]) -> Iterator[str]:
        for doc in docs:
            if self.done:
                return
            if self.doc_cap is not None and len(doc) > self.doc_cap:
                doc = doc[: self.doc_cap]
            self.chars += len(doc)
            yield doc


def iter_documents(
    paths: Union[PathArg, Sequence[PathArg]],
    text_field: str = "text",
    errors: str = "strict",
    doc_sep: Optional[str] = None,
    max_chars: Optional[int] = None,
    doc_cap: Optional[int] = None,
) -> Iterator[str]:
    """The documents of every input of ``paths`` (see :func:`expand_inputs`), in order, with
    the caps of :class:`Caps`."""
    caps = Caps(max_chars, doc_cap)
    for path in expand_inputs(paths):
        yield from caps.apply(iter_documents_of(path, text_field, errors, doc_sep))
        if caps.done:
            return


__all__ = [
    "Caps",
    "DocumentSource",
    "STDIN",
    "expand_inputs",
    "is_remote",
    "iter_documents",
    "iter_documents_of",
    "kind_of",
    "output_stem",
    "unreadable",
]
