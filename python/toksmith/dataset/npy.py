"""The ``npy`` format: ``NAME.ids.npy`` (the ids, uint16 or uint32) and ``NAME.offsets.npy``
(int64, documents + 1 entries: document ``i`` is ``ids[offsets[i]:offsets[i+1]]``), both plain
``.npy`` files that ``numpy.load(..., mmap_mode="r")`` maps without reading."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, List

from .._optional import lazy_module
from ._base import Shard, ShardWriter, npy_header

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy", extra="numpy")


class Writer(ShardWriter):
    fmt = "npy"
    HEADER = 128

    def files(self) -> List[str]:
        return [self.name + ".ids.npy", self.name + ".offsets.npy"]

    def _finish(self) -> None:
        self._ids.seek(0)
        self._ids.write(npy_header(self.dtype, self.tokens))
        with open(self.part(self.files()[1]), "wb") as f:
            f.write(npy_header(np.dtype(np.int64), self.documents + 1))
            f.write(np.zeros(1, "<i8").data)
            for ends in self.iter_ends():
                f.write(ends.data)


def read(path: str) -> Shard:
    path = os.fspath(path)
    for s in (".ids.npy", ".offsets.npy"):
        if path.endswith(s):
            path = path[: -len(s)]
    ids = np.load(path + ".ids.npy", mmap_mode="r")
    offsets = np.load(path + ".offsets.npy")
    if offsets[0] != 0 or offsets[-1] != len(ids) or np.any(np.diff(offsets) < 0):
        raise ValueError(f"{path}.offsets.npy does not match {path}.ids.npy")
    return Shard(ids, offsets.astype(np.int64), "npy")
