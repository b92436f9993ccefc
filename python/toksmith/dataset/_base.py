"""What the shard writers share: files written under a temporary name and moved into place, a
shard's token and document-end streams kept on disk (memory stays bounded whatever the shard's
size), and the reader's result type."""

from __future__ import annotations

import os
import struct
from typing import TYPE_CHECKING, Any, List, NamedTuple, Optional, Tuple

from .._optional import lazy_module

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy", extra="numpy")


#: the suffix of a file being written; a rerun removes the ones a killed run left behind
TEMP_SUFFIX = ".toksmith-tmp"

#: bytes copied at a time when a shard's index is assembled from its on-disk parts
COPY_CHUNK = 1 << 22


class Shard(NamedTuple):
    """One shard as read back: its ids (a read-only memory map), and where its documents end
    (``offsets``: int64, ``offsets[0] == 0``, document ``i`` is ``ids[offsets[i]:offsets[i+1]]``;
    None for the ``bin`` format, which stores no document boundaries); ``loss`` is datatrove's
    per-token loss mask when the shard has one."""

    ids: np.ndarray
    offsets: Optional[np.ndarray]
    format: str
    loss: Optional[np.ndarray] = None

    def documents(self) -> List[np.ndarray]:
        if self.offsets is None:
            raise ValueError("this shard stores no document boundaries (the bin format)")
        o = self.offsets
        return [self.ids[o[i] : o[i + 1]] for i in range(len(o) - 1)]


def temp_path(final: str) -> str:
    folder, name = os.path.split(final)
    return os.path.join(folder, f".{name}{TEMP_SUFFIX}")


def commit(tmp: str, final: str, f: Any = None) -> None:
    """Flush ``f`` (if given) to disk and move ``tmp`` onto ``final``."""
    if f is not None:
        f.flush()
        os.fsync(f.fileno())
        f.close()
    os.replace(tmp, final)


def npy_header(dtype: np.dtype, n: int) -> bytes:
    """A 128-byte ``.npy`` (version 1.0) header for a 1-D little-endian array of ``n`` items:
    written last over the space left for it, once ``n`` is known."""
    descr = np.dtype(dtype).newbyteorder("<").str
    body = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, n)
    size = 128 - 10
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", size) + (body.ljust(size - 1) + "\n").encode()


class ShardWriter:
    """A shard being written: ``write(tokens, ends)`` appends tokens and the ends (positions in
    ``tokens``, exclusive) of the documents that finish in them; ``finish()`` writes the
    format's files and moves them into place, the index file last (a set whose index exists is
    complete); ``abort()`` removes what was written. Subclasses give ``files`` (the final names,
    index last), ``HEADER`` (bytes reserved before the ids) and ``_finish``."""

    HEADER = 0
    fmt = ""

    def __init__(self, folder: str, name: str, dtype: np.dtype) -> None:
        self.folder = folder
        self.name = name
        self.dtype = np.dtype(dtype)
        self.tokens = 0
        self.documents = 0
        self._ids_tmp = temp_path(os.path.join(folder, self.files()[0]))
        self._ends_tmp = temp_path(os.path.join(folder, name + ".ends"))
        self._ids = open(self._ids_tmp, "w+b")
        if self.HEADER:
            self._ids.write(b"\x00" * self.HEADER)
        self._ends = open(self._ends_tmp, "w+b")

    def files(self) -> List[str]:
        raise NotImplementedError

    def write(self, tokens: np.ndarray, ends: np.ndarray) -> None:
        if len(tokens):
            self._ids.write(np.ascontiguousarray(tokens, dtype=self.dtype.newbyteorder("<")).data)
        if len(ends):
            self._ends.write((np.asarray(ends, dtype=np.int64) + self.tokens).astype("<i8").data)
            self.documents += len(ends)
        self.tokens += len(tokens)

    def iter_ends(self) -> Any:
        """The shard's document ends (int64), read back in chunks."""
        self._ends.flush()
        self._ends.seek(0)
        while True:
            chunk = self._ends.read(COPY_CHUNK)
            if not chunk:
                return
            yield np.frombuffer(chunk, dtype="<i8")

    def finish(self) -> List[str]:
        try:
            self._finish()
        except BaseException:
            self.abort()
            raise
        self._close_ends()
        return self.files()

    def _finish(self) -> None:
        raise NotImplementedError

    def _close_ends(self) -> None:
        if not self._ends.closed:
            self._ends.close()
        if os.path.exists(self._ends_tmp):
            os.remove(self._ends_tmp)

    def abort(self) -> None:
        for f, p in ((self._ids, self._ids_tmp), (self._ends, self._ends_tmp)):
            if not f.closed:
                f.close()
            if os.path.exists(p):
                os.remove(p)

    def final(self, name: str) -> str:
        return os.path.join(self.folder, name)


def check_length(path: str, size: int, expected: int, what: str) -> None:
    if size != expected:
        raise ValueError(f"{path}: {what} (the file is {size} bytes, expected {expected})")


def read_exact(f: Any, n: int, path: str) -> bytes:
    data = f.read(n)
    if len(data) != n:
        raise ValueError(f"{path}: truncated (ends after {len(data)} of {n} header bytes)")
    return data


def unpack(fmt: str, data: bytes) -> Tuple[Any, ...]:
    return struct.unpack(fmt, data)
