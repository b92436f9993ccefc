"""The ``megatron`` format: Megatron-LM's indexed dataset (``PREFIX.bin`` + ``PREFIX.idx``), as
megatron-core's ``IndexedDataset`` reads it, one sequence per document.

``.bin``: the ids, nothing else. ``.idx``: the magic ``MMIDIDX\\x00\\x00``, the version (uint64 1),
the dtype code (uint8: 8 for uint16, 4 for int32; megatron has no uint32 code, so vocabularies
over 65536 ids are stored as int32), the sequence count and the document count (uint64 each; the
document count is sequences + 1), then the sequence lengths (int32), the sequence byte offsets
into ``.bin`` (int64) and the document indices (int64, ``0, 1, ..., sequences``).
"""

from __future__ import annotations

import os
import struct
from typing import TYPE_CHECKING, List

from .._optional import lazy_module
from ._base import COPY_CHUNK, Shard, ShardWriter, read_exact

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy", extra="numpy")

MAGIC = b"MMIDIDX\x00\x00"
DTYPE_CODES = {"uint16": 8, "int32": 4}  # by numpy dtype name
CODE_DTYPES = {1: "u1", 2: "i1", 3: "<i2", 4: "<i4", 5: "<i8", 6: "<f8", 7: "<f4", 8: "<u2"}
HEADER = len(MAGIC) + 8 + 1 + 8 + 8


def storage_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype megatron stores ids of ``dtype`` as (it has no uint32)."""
    return np.dtype("uint16") if np.dtype(dtype).itemsize == 2 else np.dtype("int32")


class Writer(ShardWriter):
    fmt = "megatron"

    def __init__(self, folder: str, name: str, dtype: np.dtype) -> None:
        super().__init__(folder, name, storage_dtype(dtype))

    def files(self) -> List[str]:
        return [self.name + ".bin", self.name + ".idx"]

    def _finish(self) -> None:
        n = self.documents
        itemsize = self.dtype.itemsize
        with open(self.part(self.files()[1]), "wb") as idx:
            idx.write(MAGIC)
            idx.write(struct.pack("<QBQQ", 1, DTYPE_CODES[np.dtype(self.dtype).name], n, n + 1))
            prev = 0
            for ends in self.iter_ends():  # lengths
                lengths = np.diff(ends, prepend=prev)
                if len(lengths) and lengths.max() > 2**31 - 1:
                    raise ValueError("a document of 2**31 tokens or more: megatron cannot hold it")
                idx.write(lengths.astype("<i4").data)
                prev = int(ends[-1])
            prev = 0
            for ends in self.iter_ends():  # byte offsets of the sequences
                starts = np.concatenate(([prev], ends[:-1])).astype("<i8")
                idx.write((starts * itemsize).astype("<i8").data)
                prev = int(ends[-1])
            step = COPY_CHUNK // 8
            for lo in range(0, n + 1, step):  # document indices
                idx.write(np.arange(lo, min(n + 1, lo + step), dtype="<i8").data)


def read(path: str) -> Shard:
    """A megatron dataset from its prefix or either of its files."""
    prefix = os.fspath(path)
    if prefix.endswith((".bin", ".idx")):
        prefix = prefix[:-4]
    idx_path, bin_path = prefix + ".idx", prefix + ".bin"
    with open(idx_path, "rb") as f:
        head = read_exact(f, HEADER, idx_path)
    if head[: len(MAGIC)] != MAGIC:
        raise ValueError(f"{idx_path} is not a Megatron index (no MMIDIDX magic)")
    version, code, n_seq, n_doc = struct.unpack("<QBQQ", head[len(MAGIC) :])
    if version != 1:
        raise ValueError(f"{idx_path}: unknown Megatron index version {version}")
    if code not in CODE_DTYPES:
        raise ValueError(f"{idx_path}: unknown dtype code {code}")
    expected = HEADER + n_seq * 4 + n_seq * 8 + n_doc * 8
    if os.path.getsize(idx_path) < expected:
        raise ValueError(f"{idx_path}: truncated ({os.path.getsize(idx_path)} < {expected} bytes)")
    mm = np.memmap(idx_path, dtype=np.uint8, mode="r")
    lengths = np.frombuffer(mm, "<i4", n_seq, HEADER)
    pointers = np.frombuffer(mm, "<i8", n_seq, HEADER + 4 * n_seq)
    dtype = np.dtype(CODE_DTYPES[code])
    size = os.path.getsize(bin_path)
    total = int(lengths.sum(dtype=np.int64))
    if size != total * dtype.itemsize:
        raise ValueError(f"{bin_path}: {size} bytes, but the index says {total} tokens")
    offsets = np.zeros(n_seq + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if not np.array_equal(pointers, offsets[:-1] * dtype.itemsize):
        raise ValueError(f"{idx_path}: the sequences are not stored one after the other")
    ids = np.memmap(bin_path, dtype=dtype, mode="r") if total else np.zeros(0, dtype)
    return Shard(ids, offsets, "megatron")
