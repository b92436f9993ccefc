"""Rendered conversations on disk: numpy shards written by ``toksmith chat render``.

Layout of an output folder::

    out/
      manifest.json        what was rendered: tokenizer, counts, dtype, shard list, skipped lines
      shard_00000.npz      conversations 0 .. shard_size-1
      shard_00001.npz      ...

Each ``shard_NNNNN.npz`` (``numpy.load``) holds four arrays:

* ``ids``: the token ids of all its conversations, concatenated (uint16 when the vocabulary
  has at most 65536 ids, else uint32);
* ``mask``: the training mask, same length (uint8: 1 = train on this token);
* ``offsets``: int64, one more than the number of conversations: conversation ``k`` is
  ``ids[offsets[k]:offsets[k + 1]]``;
* ``lines``: int64, the input line number (1-based) of each conversation.

:func:`iter_rendered` reads them back conversation by conversation. numpy is an optional
dependency (``pip install toksmith[numpy]``).
"""

from __future__ import annotations

import io
import json
import operator
import os
from array import array
from collections import abc
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from ..._fileio import atomic_write, open_readable, read_file_capped
from ..._paths import fspath
from ...errors import missing_extra

FORMAT = "toksmith-chat-shards"
VERSION = 1
MANIFEST = "manifest.json"


def _numpy():
    try:
        import numpy as np
    except ImportError:
        raise missing_extra("numpy", "numpy") from None
    return np


def _int_arg(value: Any, what: str) -> int:
    if isinstance(value, bool) or type(value).__name__ == "bool":
        raise TypeError(f"{what} must be an int, not bool")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an int, not {type(value).__name__}") from None


def _as_list(values: Any, what: str) -> List[Any]:
    if (
        isinstance(values, (str, bytes, bytearray, abc.Mapping, abc.Set))
        or values is None
        or not hasattr(values, "__iter__")
    ):  # a dict or a set would give its keys, in no useful order
        raise TypeError(f"{what} must be a list of ints, not {type(values).__name__}")
    if hasattr(values, "tolist") and not isinstance(values, list):
        values = values.tolist()  # numpy arrays: Python ints (bools for a bool mask)
        if not isinstance(values, list):
            raise TypeError(f"{what} must be a list of ints, not a single value")
        return values
    return list(values) if not isinstance(values, list) else values


def shard_name(index: int) -> str:
    """The file name of shard ``index`` (0, 1, ...)."""
    index = _int_arg(index, "index")
    if index < 0:
        raise ValueError(f"index must be a shard number >= 0, not {index}")
    return f"shard_{index:05d}.npz"


def _dict_arg(value: Any, what: str) -> Dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, abc.Mapping):
        raise TypeError(f"{what} must be a dict (or None), not {type(value).__name__}")
    return dict(value)


class ShardWriter:
    """Collects rendered conversations and writes a shard every ``shard_size`` conversations.

    :meth:`close` writes the last shard and the manifest; after it (or :meth:`abort`) the writer
    is closed, and :meth:`add` or :meth:`flush` raise ValueError, as a closed file does. As a
    context manager (``with ShardWriter(...) as w:``) it closes at the end of the block, or
    aborts (removes what it wrote) when the block raises.

    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> w = ShardWriter(d, n_vocab=300, shard_size=2)
    >>> w.add([1, 2, 3], [0, 1, 1], line=1); w.add([4], [1], line=2); w.add([5, 6], [0, 0], line=4)
    >>> manifest = w.close()
    >>> manifest["conversations"], manifest["tokens"], [s["file"] for s in manifest["shards"]]
    (3, 6, ['shard_00000.npz', 'shard_00001.npz'])
    >>> [(i.tolist(), m.tolist()) for i, m in iter_rendered(d)]
    [([1, 2, 3], [0, 1, 1]), ([4], [1]), ([5, 6], [0, 0])]
    """

    def __init__(
        self,
        out_dir: str,
        *,
        n_vocab: int,
        shard_size: int = 10000,
        compress: bool = False,
        meta: Optional[Dict[str, Any]] = None,
    ) -> None:
        self.np = _numpy()
        shard_size = _int_arg(shard_size, "shard_size")
        if shard_size < 1:
            raise ValueError(f"shard_size must be a positive int, not {shard_size!r}")
        n_vocab = _int_arg(n_vocab, "n_vocab")
        if not 1 <= n_vocab <= 1 << 32:
            raise ValueError(
                f"n_vocab must be between 1 and 2**32 (token ids are stored as uint16 or uint32), "
                f"not {n_vocab}"
            )
        self.out_dir = fspath(out_dir)
        self.shard_size = shard_size
        self.n_vocab = n_vocab
        self.compress = compress
        self.narrow = n_vocab <= 65536
        self.meta = _dict_arg(meta, "meta")
        self.meta["n_vocab"] = n_vocab
        self.written: List[str] = []
        self.shards: List[Dict[str, Any]] = []
        self.conversations = 0
        self.tokens = 0
        self.trained = 0
        self.closed = False
        self._manifest: Optional[Dict[str, Any]] = None
        self._reset()

    def __enter__(self) -> "ShardWriter":
        self._check_open("with")
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if (
            self.closed
        ):  # closed in the block: what it wrote is finished, an error after that is not its
            return
        if exc_type is not None:
            self.abort()
        else:
            self.close()

    def _check_open(self, what: str) -> None:
        if self.closed:
            raise ValueError(
                f"{what}: this ShardWriter is closed (its manifest is written, or it was aborted); "
                f"make a new ShardWriter to write more"
            )

    def _reset(self) -> None:
        self._ids = array("H" if self.narrow else "I")
        self._mask = array("B")
        self._offsets = array("q", [0])
        self._lines = array("q")

    def add(self, ids: Sequence[int], mask: Sequence[int], line: int = 0) -> None:
        """Add one conversation: its ids (each in ``0 .. n_vocab - 1``) and its mask (0 / 1,
        the same length); lists, tuples or numpy arrays. Bad input raises before anything is
        added, so the shard stays consistent. ValueError once the writer is closed."""
        self._check_open("add")
        line = _int_arg(line, "line")
        if not 0 <= line < 1 << 63:
            raise ValueError(f"line must be a line number >= 0 (0: none), not {line}")
        ids_l = _as_list(ids, "ids")
        mask_l = _as_list(mask, "mask")
        if len(ids_l) != len(mask_l):
            raise ValueError(f"ids and mask differ in length ({len(ids_l)} != {len(mask_l)})")
        new_ids = self._checked(
            ids_l,
            self._ids.typecode,
            "ids",
            self.n_vocab - 1,
            "token id {} is out of range: ids must be 0..{}",
        )
        new_mask = self._checked(
            mask_l,
            "B",
            "mask",
            1,
            "mask value {} is not 0 or 1: a training mask holds only 0 and 1",
        )
        self._ids.extend(new_ids)
        self._mask.extend(new_mask)
        self._offsets.append(len(self._ids))
        self._lines.append(line)
        self.conversations += 1
        self.tokens += len(new_ids)
        self.trained += sum(new_mask)
        if len(self._lines) >= self.shard_size:
            self.flush()

    @staticmethod
    def _checked(
        values: List[Any], typecode: str, what: str, hi: int, message: str
    ) -> "array[int]":
        # array(typecode, ...) converts at C speed (numpy integers through __index__) and refuses
        # floats and str; then one min/max pass checks the range 0..hi
        try:
            arr = array(typecode, values)
        except OverflowError:
            bad = next(v for v in values if not 0 <= v <= hi)
            raise ValueError(message.format(bad, hi)) from None
        except TypeError:
            bad = next(v for v in values if not hasattr(v, "__index__"))
            raise TypeError(f"{what} must be ints, not {type(bad).__name__} ({bad!r})") from None
        if arr and max(arr) > hi:
            raise ValueError(message.format(next(v for v in arr if v > hi), hi))
        return arr

    def flush(self) -> None:
        """Write the conversations added since the last shard as a shard of their own (nothing
        when there are none). ValueError once the writer is closed."""
        self._check_open("flush")
        if not len(self._lines):
            return
        np = self.np
        os.makedirs(self.out_dir, exist_ok=True)
        name = shard_name(len(self.shards))
        path = os.path.join(self.out_dir, name)
        arrays = dict(
            ids=np.frombuffer(self._ids, dtype=np.uint16 if self.narrow else np.uint32),
            mask=np.frombuffer(self._mask, dtype=np.uint8),
            offsets=np.frombuffer(self._offsets, dtype=np.int64),
            lines=np.frombuffer(self._lines, dtype=np.int64),
        )
        self.written.append(path)
        with atomic_write(path, "wb") as f:  # a shard appears under its name only when complete
            (np.savez_compressed if self.compress else np.savez)(f, **arrays)
        self.shards.append(
            {"file": name, "conversations": len(self._lines), "tokens": len(self._ids)}
        )
        self._reset()

    def close(self, extra: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """Write the last shard and ``manifest.json``; return the manifest. Closing a closed
        writer again returns the same manifest and writes nothing (an ``extra`` then raises
        ValueError: it could not be written)."""
        extra = _dict_arg(extra, "extra")
        if self.closed:
            if extra:
                raise ValueError(
                    "close: this ShardWriter is already closed, extra cannot be written into its "
                    "manifest any more; pass extra to the first close()"
                )
            if self._manifest is None:  # aborted: there is no manifest
                raise ValueError(
                    "close: this ShardWriter was aborted, so there is no manifest; make a new "
                    "ShardWriter to write the conversations again"
                )
            return self._manifest
        self.flush()
        manifest: Dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            **self.meta,
            "dtype": "uint16" if self.narrow else "uint32",
            "conversations": self.conversations,
            "tokens": self.tokens,
            "trained_tokens": self.trained,
            "shard_size": self.shard_size,
            "shards": self.shards,
        }
        if extra:
            manifest.update(extra)
        os.makedirs(self.out_dir, exist_ok=True)
        path = os.path.join(self.out_dir, MANIFEST)
        with atomic_write(path, "w", encoding="utf-8") as f:
            json.dump(manifest, f, indent=2)
            f.write("\n")
        self.written.append(path)
        self.closed = True
        self._manifest = manifest
        return manifest

    def abort(self) -> None:
        """Remove the files this writer wrote; the writer is closed afterwards."""
        self.closed = True
        self._manifest = None
        for path in self.written:
            try:
                os.remove(path)
            except OSError:
                pass
        self.written = []


#: the largest manifest.json read (it lists shard files: a few KB per thousand shards)
MAX_MANIFEST_BYTES = 64 << 20
#: room for a .npy header in a shard member beyond its data
_NPY_HEADER_ROOM = 1 << 16


def _count(value: Any) -> bool:
    return type(value) is int and value >= 0


def read_manifest(out_dir: str) -> Dict[str, Any]:
    """The manifest of a rendered folder. A manifest that is not one (not UTF-8 JSON, nested
    too deeply, larger than :data:`MAX_MANIFEST_BYTES`, another format, no list of shard files
    with their counts, a dtype other than uint16/uint32 or one that cannot hold ``n_vocab``
    ids) raises ValueError naming it."""
    path = os.path.join(fspath(out_dir), MANIFEST)
    data = read_file_capped(path, MANIFEST, MAX_MANIFEST_BYTES)
    try:
        manifest = json.loads(data.decode("utf-8"))
    except RecursionError:
        raise ValueError(f"{path} is not a {FORMAT} manifest: nested too deeply") from None
    except ValueError as exc:  # not UTF-8, not JSON, a number of over 4300 digits
        raise ValueError(f"{path} is not a {FORMAT} manifest: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ValueError(f"{path} is not a {FORMAT} manifest")
    shards = manifest.get("shards")
    if not isinstance(shards, list) or not all(
        isinstance(s, dict)
        and isinstance(s.get("file"), str)
        and os.path.basename(s["file"]) == s["file"]
        and _count(s.get("conversations"))
        and _count(s.get("tokens"))
        for s in shards
    ):
        raise ValueError(
            f'{path}: \'shards\' must be a list of {{"file": "shard_NNNNN.npz", '
            '"conversations": N, "tokens": N}} naming files of the folder'
        )
    n_vocab, dtype = manifest.get("n_vocab"), manifest.get("dtype")
    if type(n_vocab) is not int or not 1 <= n_vocab <= 1 << 32:
        raise ValueError(f"{path}: n_vocab must be an int from 1 to 2**32, not {n_vocab!r}")
    if dtype not in ("uint16", "uint32") or (dtype == "uint16" and n_vocab > 1 << 16):
        raise ValueError(
            f"{path}: dtype must be 'uint16' (n_vocab <= 65536) or 'uint32', not {dtype!r} "
            f"(n_vocab {n_vocab})"
        )
    return manifest


def _member(np: Any, zf: Any, name: str, expect: int, kinds: str, path: str) -> Any:
    """The 1-D array ``name`` of the open shard ``zf``, of at most ``expect`` items of a dtype
    kind in ``kinds``: its declared size is checked before it is inflated, and the inflating
    is capped at that size (a member cannot inflate beyond what the manifest allows)."""
    import zipfile

    try:
        info = zf.getinfo(name + ".npy")
    except KeyError:
        raise ValueError(f"{path} is not a rendered shard: it has no array {name!r}") from None
    cap = expect * 8 + _NPY_HEADER_ROOM
    if info.file_size > cap:
        raise ValueError(
            f"{path} is not a rendered shard: the array {name!r} declares {info.file_size} bytes, more than its "
            f"{expect} values can take: the shard does not match the manifest"
        )
    with zf.open(info) as f:
        raw = f.read(cap + 1)  # the inflater stops at the declared size
    if len(raw) > cap:  # pragma: no cover - zipfile stops at the declared size
        raise ValueError(
            f"{path} is not a rendered shard: the array {name!r} inflates beyond its declared size"
        )
    buf = io.BytesIO(raw)
    fmt = np.lib.format
    try:
        version = fmt.read_magic(buf)
        if version == (1, 0):
            shape, _, dtype = fmt.read_array_header_1_0(buf)
        else:
            shape, _, dtype = fmt.read_array_header_2_0(buf)
    except (ValueError, EOFError, SyntaxError, TypeError, RecursionError, zipfile.BadZipFile) as e:
        raise ValueError(
            f"{path} is not a rendered shard: the array {name!r} is not a valid .npy: {e}"
        ) from None
    if len(shape) != 1:
        raise ValueError(
            f"{path} is not a rendered shard: the array {name!r} must be 1-D, not of shape {shape}"
        )
    if dtype.hasobject or dtype.kind not in kinds:
        raise ValueError(
            f"{path} is not a rendered shard: the array {name!r} has the dtype {dtype}, not {kinds!r}"
        )
    body = raw[buf.tell() :]
    if shape[0] > expect or shape[0] * dtype.itemsize != len(body):
        raise ValueError(
            f"{path} is not a rendered shard: the array {name!r} declares {shape[0]} values ({expect} expected) but "
            f"holds {len(body)} bytes of {dtype}"
        )
    return np.frombuffer(body, dtype=dtype)


def _read_shard(
    path: str, tokens: int, conversations: int, dtype: str, n_vocab: int
) -> Tuple[Any, Any, Any]:
    """``ids``, ``mask`` and ``offsets`` of one shard, checked to agree with each other and
    with the manifest (``tokens`` ids of ``dtype`` below ``n_vocab``, a 0/1 mask, offsets of
    ``conversations``); a shard that is not one (corrupt, cut short, a member inflating beyond
    its size, arrays missing, of other types or inconsistent) raises ValueError naming it."""
    import zipfile
    import zlib

    np = _numpy()
    try:
        with open_readable(path, "a shard") as fh:
            if not os.path.isfile(path):
                raise ValueError(f"{path} is not a rendered shard: not a regular file")
            with zipfile.ZipFile(fh) as zf:
                ids = _member(np, zf, "ids", tokens, "iu", path)
                mask = _member(np, zf, "mask", tokens, "iub", path)
                offsets = _member(np, zf, "offsets", conversations + 1, "iu", path)
    except (EOFError, zipfile.BadZipFile, zlib.error, NotImplementedError, OverflowError) as exc:
        raise ValueError(
            f"{path} is not a rendered shard (arrays ids, mask, offsets): {exc}"
        ) from None
    except OSError as exc:  # a corrupt member ("[Errno 22] Invalid argument"), named
        raise ValueError(
            f"{path} is not a rendered shard: cannot read it: {exc.strerror or exc}"
        ) from None
    ok = (
        len(ids) == len(mask) == tokens
        and len(offsets) == conversations + 1
        and offsets[0] == 0
        and offsets[-1] == len(ids)
        and bool(np.all(np.diff(offsets.astype(np.int64)) >= 0))
    )
    if not ok:
        raise ValueError(
            f"{path} is not a consistent rendered shard: ids, mask and offsets disagree "
            f"({len(ids)} ids, {len(mask)} mask values, offsets ending at "
            f"{offsets[-1] if offsets.size else None}; the manifest says {tokens} tokens in "
            f"{conversations} conversations)"
        )
    if ids.dtype != np.dtype(dtype):
        raise ValueError(
            f"{path} is not a rendered shard: ids are {ids.dtype}, the manifest says {dtype}"
        )
    if len(ids) and int(ids.max()) >= n_vocab:
        raise ValueError(
            f"{path} is not a rendered shard: id {int(ids.max())} is out of range (n_vocab {n_vocab})"
        )
    if mask.dtype.kind != "b" and len(mask) and (int(mask.min()) < 0 or int(mask.max()) > 1):
        raise ValueError(f"{path} is not a rendered shard: the mask must hold 0 and 1 only")
    return ids, mask.astype(np.uint8, copy=False), offsets


def iter_rendered(out_dir: str) -> Iterator[Tuple[Any, Any]]:
    """``(ids, mask)`` numpy arrays of each conversation of a rendered folder, in order."""
    manifest = read_manifest(out_dir)
    for shard in manifest["shards"]:
        ids, mask, offsets = _read_shard(
            os.path.join(os.fspath(out_dir), shard["file"]),
            shard["tokens"],
            shard["conversations"],
            manifest["dtype"],
            manifest["n_vocab"],
        )
        for k in range(len(offsets) - 1):
            a, b = int(offsets[k]), int(offsets[k + 1])
            yield ids[a:b], mask[a:b]


__all__ = [
    "ShardWriter",
    "iter_rendered",
    "read_manifest",
    "shard_name",
    "FORMAT",
    "VERSION",
    "MANIFEST",
]
