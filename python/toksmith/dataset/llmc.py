"""The ``bin`` format: llm.c / nanoGPT token shards.

A shard is a header of 256 little-endian int32 (``[0]`` the magic 20240520, ``[1]`` the version:
1 for uint16 ids, 2 for uint32 ids, ``[2]`` the number of tokens, the rest 0) followed by the ids.
Shards hold exactly ``shard_tokens`` tokens (the last of an input fewer): documents run on from
one shard into the next, as llm.c's fineweb.py writes them. The format stores no document
boundaries; a BOS or EOS token (a special token, which no ordinary text encodes to) marks them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, List

from .._optional import lazy_module
from ._base import Shard, ShardWriter, read_exact

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy", extra="numpy")

MAGIC = 20240520
HEADER_INTS = 256
HEADER_BYTES = HEADER_INTS * 4
#: the most tokens a shard can have: the header's count is an int32
MAX_TOKENS = 2**31 - 1
SUFFIX = ".bin"


def header(n_tokens: int, dtype: np.dtype) -> bytes:
    h = np.zeros(HEADER_INTS, dtype="<i4")
    h[0] = MAGIC
    h[1] = 1 if np.dtype(dtype).itemsize == 2 else 2
    h[2] = n_tokens
    return h.tobytes()


class Writer(ShardWriter):
    fmt = "bin"
    HEADER = HEADER_BYTES

    def files(self) -> List[str]:
        return [self.name + SUFFIX]

    def _finish(self) -> None:
        if self.tokens > MAX_TOKENS:
            raise ValueError(f"a bin shard holds at most {MAX_TOKENS} tokens, not {self.tokens}")
        self._ids.seek(0)
        self._ids.write(header(self.tokens, self.dtype))


def read(path: str) -> Shard:
    path = os.fspath(path)
    with open(path, "rb") as f:
        h = np.frombuffer(read_exact(f, HEADER_BYTES, path), dtype="<i4")
    if h[0] != MAGIC:
        raise ValueError(f"{path} is not an llm.c token shard (magic {h[0]}, not {MAGIC})")
    if h[1] not in (1, 2):
        raise ValueError(f"{path}: unknown llm.c shard version {h[1]} (known: 1, 2)")
    dtype = np.dtype("<u2" if h[1] == 1 else "<u4")
    n = int(h[2])
    size = os.path.getsize(path)
    if size != HEADER_BYTES + n * dtype.itemsize:
        raise ValueError(
            f"{path}: the header says {n} tokens but the file holds "
            f"{(size - HEADER_BYTES) / dtype.itemsize:g}"
        )
    ids = (
        np.memmap(path, dtype=dtype, mode="r", offset=HEADER_BYTES, shape=(n,))
        if n
        else (np.zeros(0, dtype))
    )
    return Shard(ids, None, "bin")
