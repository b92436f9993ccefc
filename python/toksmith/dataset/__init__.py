"""Training shards: :func:`tokenize_dataset` turns text corpora into token shards in the layouts
training code reads (llm.c / nanoGPT ``bin``, Megatron-LM ``.bin``/``.idx``, datatrove ``.ds``,
numpy ``.npy``), and :func:`read_shard` / :func:`iter_documents` read them back.

>>> from toksmith.dataset import tokenize_dataset, iter_documents  # doctest: +SKIP
>>> tokenize_dataset(["a.jsonl"], "tok.json", "shards", format="npy", eos="<|endoftext|>")
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Dict, Iterator, Optional, Union

from .._fileio import finish_interrupted_saves, has_interrupted_save
from .._optional import lazy_module
from ..documents import DocumentSource, iter_documents_of
from . import datatrove, llmc, megatron, npy
from ._base import Shard
from .pipeline import DEFAULT_SHARD_TOKENS, FORMATS, MANIFEST, tokenize_dataset

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy", extra="numpy")

PathLike = Union[str, "os.PathLike[str]"]


def read_manifest(out_dir: PathLike) -> Dict[str, Any]:
    """The ``manifest.json`` of a folder of shards."""
    path = os.path.join(os.fspath(out_dir), MANIFEST)
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def read_shard(path: PathLike, format: Optional[str] = None) -> Shard:
    """One shard (any of its files, or a Megatron prefix), its format told by ``format`` or by
    its name and content: ``.ds`` datatrove, ``.idx`` Megatron, ``.npy`` numpy, ``.bin`` llm.c
    if it starts with llm.c's magic, else Megatron. A shard set whose writer was killed while
    moving it into place is moved into place first."""
    p = os.fspath(path)
    folder = os.path.dirname(p) or "."
    if has_interrupted_save(folder):
        try:
            finish_interrupted_saves(folder)
        except OSError as e:
            raise ValueError(
                f"{p}: a shard written into {folder!r} was interrupted while being moved into "
                f"place and could not be finished ({e}); run tokenize_dataset again"
            ) from None
    if format is None:
        if p.endswith((".ds", ".ds.index", ".ds.loss")):
            format = "datatrove"
        elif p.endswith(".npy"):
            format = "npy"
        elif p.endswith(".idx"):
            format = "megatron"
        elif p.endswith(".bin"):
            with open(p, "rb") as f:
                head = f.read(4)
            is_llmc = len(head) == 4 and int.from_bytes(head, "little") == llmc.MAGIC
            format = "bin" if is_llmc else "megatron"
        elif os.path.exists(p + ".idx"):
            format = "megatron"
        else:
            raise ValueError(f"cannot tell the shard format of {p!r}; pass format=")
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    return FORMATS[format].read(p)


def iter_documents(out_dir: PathLike) -> Iterator[np.ndarray]:
    """Every document's ids, in the order of the manifest's inputs and shards (the ``bin``
    format stores no boundaries: its documents are split at the BOS or EOS token, and a folder
    made with neither is refused)."""
    out = os.fspath(out_dir)
    m = read_manifest(out)
    fmt = m["format"]
    for entry in m["inputs"]:
        files = [os.path.join(out, s["files"][0]) for s in entry["shards"]]
        if fmt != "bin":
            for f in files:
                yield from read_shard(f, fmt).documents()
        else:
            yield from _split_bin(files, m.get("bos"), m.get("eos"))


def _split_bin(files: Any, bos: Optional[int], eos: Optional[int]) -> Iterator[np.ndarray]:
    if bos is None and eos is None:
        raise ValueError(
            "bin shards store no document boundaries, and these were made with no BOS or EOS "
            "token to split them at"
        )
    carry: list = []
    for f in files:
        ids = np.asarray(read_shard(f, "bin").ids)
        if eos is not None:  # a document ends after each EOS
            cuts = np.flatnonzero(ids == eos) + 1
        else:  # a document starts at each BOS
            cuts = np.flatnonzero(ids == bos)
        prev = 0
        for c in cuts:
            carry.append(ids[prev:c])
            doc = np.concatenate(carry)
            if len(doc):  # nothing before the first BOS
                yield doc
            carry = []
            prev = int(c)
        carry.append(ids[prev:])
    if carry and sum(len(c) for c in carry):
        yield np.concatenate(carry)


__all__ = [
    "tokenize_dataset",
    "read_shard",
    "read_manifest",
    "iter_documents",
    "iter_documents_of",
    "DocumentSource",
    "Shard",
    "FORMATS",
    "DEFAULT_SHARD_TOKENS",
    "llmc",
    "megatron",
    "datatrove",
    "npy",
]
