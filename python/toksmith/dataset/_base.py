"""What the shard writers share: a shard's files written as a set into a staging folder and
moved into place together when complete (:func:`toksmith._fileio.atomic_files`), its token and
document-end streams kept on disk (memory stays bounded whatever the shard's size), and the
reader's result type."""

from __future__ import annotations

import contextlib
import os
import struct
from typing import TYPE_CHECKING, Any, ContextManager, List, NamedTuple, Optional, Tuple

from .._fileio import Staging, atomic_files
from .._optional import lazy_module

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy", extra="numpy")


#: the suffix of a scratch file (a shuffle window's tokens); a rerun removes the ones a killed
#: run left behind (older versions also wrote shards under such names)
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


def npy_header(dtype: np.dtype, n: int) -> bytes:
    """A 128-byte ``.npy`` (version 1.0) header for a 1-D little-endian array of ``n`` items:
    written last over the space left for it, once ``n`` is known."""
    descr = np.dtype(dtype).newbyteorder("<").str
    body = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, n)
    size = 128 - 10
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", size) + (body.ljust(size - 1) + "\n").encode()


class _Aborted(Exception):
    """Thrown into a shard's staging context to discard what it holds."""


class ShardWriter:
    """A shard being written: ``write(tokens, ends)`` appends tokens and the ends (positions in
    ``tokens``, exclusive) of the documents that finish in them; ``finish()`` writes the
    format's files and moves them into place as a set (a kill or an error leaves none of them
    under its final name, or all); ``abort()`` removes what was written. The files are written
    into a staging folder of ``folder`` (:func:`toksmith._fileio.atomic_files`): one killed
    while moving its complete set is finished by the next writer or reader of the folder.
    Subclasses give ``files`` (the final names, index last), ``HEADER`` (bytes reserved before
    the ids) and ``_finish``, which writes into :meth:`part`."""

    HEADER = 0
    fmt = ""

    def __init__(self, folder: str, name: str, dtype: np.dtype) -> None:
        self.folder = folder
        self.name = name
        self.dtype = np.dtype(dtype)
        self.tokens = 0
        self.documents = 0
        self._files: List[Any] = []
        self._saving: Optional[ContextManager[Staging]] = atomic_files(folder)
        self._stage = self._saving.__enter__()
        try:
            self._ids = self._open(self.part(self.files()[0]), "w+b")
            if self.HEADER:
                self._ids.write(b"\x00" * self.HEADER)
            # scratch: in the staging folder (removed with it) but not one of the set's files
            self._ends = self._open(os.path.join(self._stage.folder, ".ends"), "w+b")
        except BaseException:
            self.abort()
            raise

    def _open(self, path: str, mode: str) -> Any:
        f = open(path, mode)
        self._files.append(f)
        return f

    def part(self, name: str) -> str:
        """Where the file ``name`` of the set is written before it is moved into place."""
        return self._stage.path(name)

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
        """Write the remaining files and move the set into place; returns the final names."""
        if self._saving is None:
            raise ValueError("this shard was already finished or aborted")
        try:
            self._finish()
            self._close_files()
        except BaseException:
            self.abort()
            raise
        saving, self._saving = self._saving, None
        saving.__exit__(None, None, None)  # flush, mark complete, move into place
        return self.files()

    def _finish(self) -> None:
        raise NotImplementedError

    def _close_files(self) -> None:
        for f in self._files:
            if not f.closed:
                f.close()

    def abort(self) -> None:
        """Discard the shard: nothing of it appears under a final name."""
        with contextlib.suppress(OSError):
            self._close_files()
        saving, self._saving = self._saving, None
        if saving is not None:
            e = _Aborted()
            saving.__exit__(_Aborted, e, None)

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
