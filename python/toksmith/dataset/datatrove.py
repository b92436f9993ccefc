"""The ``datatrove`` format: ``NAME.ds`` + ``NAME.ds.index``, as datatrove's ``TokenizedFile``
(``DocumentTokenizer``) writes them and its ``DatatroveFolderDataset`` reads them.

``.ds``: the ids, little-endian uint16 (token size 2) or uint32 (4), nothing else.
``.ds.index``: the end of each document, in tokens, as little-endian uint64.
``.ds.loss`` (one byte per token, 1 = train on it) exists only when a loss mask does; documents
read from text have none, so this writer never makes one, but the reader reads it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, List

from .._optional import lazy_module
from ._base import Shard, ShardWriter

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy", extra="numpy")


class Writer(ShardWriter):
    fmt = "datatrove"

    def files(self) -> List[str]:
        return [self.name + ".ds", self.name + ".ds.index"]

    def _finish(self) -> None:
        # the index holds the same int64 ends, which as uint64 are the same bytes
        with open(self.part(self.files()[1]), "wb") as idx:
            for ends in self.iter_ends():
                idx.write(ends.data)


def read(path: str, token_size: int = 0) -> Shard:
    """A ``.ds`` file and its index; ``token_size`` (2 or 4) is read from the manifest next to
    the file when not given (the ``.ds`` file does not record it), else 2."""
    path = os.fspath(path)
    if path.endswith((".index", ".loss")):
        path = path.rsplit(".", 1)[0]
    if not token_size:
        token_size = _manifest_token_size(path) or 2
    dtype = np.dtype("<u2" if token_size == 2 else "<u4")
    size = os.path.getsize(path)
    if size % token_size:
        raise ValueError(f"{path}: {size} bytes is not a whole number of {token_size}-byte tokens")
    ids = np.memmap(path, dtype=dtype, mode="r") if size else np.zeros(0, dtype)
    offsets = None
    if os.path.exists(path + ".index"):
        ends = np.fromfile(path + ".index", dtype="<u8").astype(np.int64)
        offsets = np.concatenate(([0], ends)).astype(np.int64)
        if len(ends) and (ends[-1] != len(ids) or np.any(np.diff(offsets) < 0)):
            raise ValueError(f"{path}.index does not match {path}")
    loss = None
    if os.path.exists(path + ".loss"):
        loss = np.fromfile(path + ".loss", dtype=np.uint8)
    return Shard(ids, offsets, "datatrove", loss)


def _manifest_token_size(path: str) -> int:
    import json

    m = os.path.join(os.path.dirname(path) or ".", "manifest.json")
    try:
        with open(m, encoding="utf-8") as f:
            dtype = json.load(f).get("dtype")
    except (OSError, ValueError):
        return 0
    return {"uint16": 2, "uint32": 4}.get(dtype, 0)
