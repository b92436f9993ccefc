"""CWGT v5 weight files: a 48-byte header, a metadata blob, optional EWC data, weights.

Layout (all little-endian, packed)::

    offset  size  field
         0     4  magic            b"CWGT"
         4     2  arch_version     >= 5
         6     2  flags            bit 0: tied, bit 1: has_ewc
         8     2  vocab_size       320
        10     2  d_model
        12     1  n_layers
        13     1  ffn_expand
        14     1  expand
        15     1  d_state
        16     2  l_max            768
        18     4  param_count
        22     2  def_temperature  x 1000 (0 = unset)
        24     2  def_top_k        (0 = unset)
        26     2  def_top_p        x 1000 (0 = unset)
        28     2  def_min_p        x 1000 (0 = unset)
        30     2  def_max_tokens
        32     1  def_candidates
        33     1  d_conv
        34     4  meta_size        bytes of metadata (0 = none)
        38     1  dt_rank
        39     9  reserved         zero

    48                   metadata: "<domain>\\n<template spec>\\n<stop conditions>\\n"
    48 + meta_size       fisher_diagonal, anchor_weights: param_count float32 each (if has_ewc)
    ...                  weights: param_count float32

Files are parsed field by field (never unpickled); weights and EWC arrays are
read-only ``numpy.memmap`` views of the file. Every inconsistency raises
:class:`CWGTError` (a ValueError) naming the field and its byte offset.
"""

from __future__ import annotations

import dataclasses
import errno
import math
import operator
import os
import stat
import struct
from typing import Any, Dict, Mapping, NamedTuple, Optional, Tuple, Union

from ..._fileio import atomic_write, refuse_special_destination
from ..._paths import check_encodable
from .._checks import require_numpy
from .sequence import parse_template
from .stops import StopConditions, parse_stop_patterns
from .vocab import DEFAULT_L_MAX, VOCAB_SIZE

__all__ = [
    "CWGTError",
    "CWGTHeader",
    "CWGTMetadata",
    "CWGTModel",
    "EWCData",
    "HEADER_SIZE",
    "HEADER_FIELDS",
    "MAGIC",
    "MIN_ARCH_VERSION",
    "MAX_META_SIZE",
    "FLAG_TIED",
    "FLAG_HAS_EWC",
    "read_cwgt",
    "write_cwgt",
    "default_dt_rank",
    "load_model",
]

MAGIC = b"CWGT"
HEADER_SIZE = 48
MIN_ARCH_VERSION = 5
ARCH_VERSION = 5
FLAG_TIED = 1 << 0
FLAG_HAS_EWC = 1 << 1
_KNOWN_FLAGS = FLAG_TIED | FLAG_HAS_EWC
#: The largest metadata blob read or written (16 MiB). The blob is three short
#: lines; the cap keeps a header that claims gigabytes (the 32-bit meta_size of a
#: sparse or hostile file) from being read into memory.
MAX_META_SIZE = 1 << 24

#: (name, struct code) in file order; offsets follow from the packed layout.
_LAYOUT: Tuple[Tuple[str, str], ...] = (
    ("magic", "4s"),
    ("arch_version", "H"),
    ("flags", "H"),
    ("vocab_size", "H"),
    ("d_model", "H"),
    ("n_layers", "B"),
    ("ffn_expand", "B"),
    ("expand", "B"),
    ("d_state", "B"),
    ("l_max", "H"),
    ("param_count", "I"),
    ("def_temperature", "H"),
    ("def_top_k", "H"),
    ("def_top_p", "H"),
    ("def_min_p", "H"),
    ("def_max_tokens", "H"),
    ("def_candidates", "B"),
    ("d_conv", "B"),
    ("meta_size", "I"),
    ("dt_rank", "B"),
    ("reserved", "9s"),
)
_STRUCT = struct.Struct("<" + "".join(code for _, code in _LAYOUT))
assert _STRUCT.size == HEADER_SIZE


def _offsets() -> Dict[str, Tuple[int, int]]:
    out: Dict[str, Tuple[int, int]] = {}
    pos = 0
    for name, code in _LAYOUT:
        size = struct.calcsize("<" + code)
        out[name] = (pos, size)
        pos += size
    return out


#: field name -> (byte offset, size in bytes).
HEADER_FIELDS: Dict[str, Tuple[int, int]] = _offsets()
assert HEADER_FIELDS["expand"][0] == 14 and HEADER_FIELDS["d_state"][0] == 15
assert HEADER_FIELDS["d_conv"][0] == 33 and HEADER_FIELDS["dt_rank"][0] == 38
assert HEADER_FIELDS["reserved"] == (39, 9)
_METADATA_OFFSET = HEADER_SIZE


class CWGTError(ValueError):
    """A malformed or inconsistent CWGT file; ``field`` and ``offset`` locate it."""

    def __init__(self, field: str, offset: int, problem: str, path: Optional[str] = None) -> None:
        self.field = field
        self.offset = offset
        self.problem = problem
        self.path = path
        where = f"{path}: " if path else ""
        super().__init__(
            f"{where}invalid CWGT file: field '{field}' at byte offset {offset}: {problem}"
        )

    def __reduce__(
        self,
    ) -> Any:  # picklable (e.g. across multiprocessing) despite the 4-argument __init__
        return (type(self), (self.field, self.offset, self.problem, self.path))


class CWGTFieldTypeError(CWGTError, TypeError):
    """A header field of the wrong Python type (a CWGTError and a TypeError)."""


def _field_error(field: str, problem: str, path: Optional[str] = None) -> CWGTError:
    return CWGTError(field, HEADER_FIELDS[field][0], problem, path)


@dataclasses.dataclass(frozen=True)
class CWGTHeader:
    """The 48-byte header; attributes carry the seed's field names.

    ``magic``, ``arch_version``, ``vocab_size``, ``l_max``, ``expand``,
    ``d_state`` and ``d_conv`` default to the seed's values (Mamba's usual 2,
    16 and 4 for the last three); ``dt_rank`` has no default a file can hold:
    :func:`write_cwgt` refuses 0 (Mamba's usual choice is ``ceil(d_model / 16)``,
    :func:`default_dt_rank`). :func:`write_cwgt` fills in ``param_count``, ``meta_size``
    and the has_ewc flag from what it writes.

    >>> h = CWGTHeader(d_model=64, n_layers=2, dt_rank=4, flags=FLAG_TIED)
    >>> h.tied, h.has_ewc, len(h.to_bytes())
    (True, False, 48)
    >>> CWGTHeader.from_bytes(h.to_bytes()) == h
    True
    """

    magic: bytes = MAGIC
    arch_version: int = ARCH_VERSION
    flags: int = 0
    vocab_size: int = VOCAB_SIZE
    d_model: int = 0
    n_layers: int = 0
    ffn_expand: int = 0
    expand: int = 2
    d_state: int = 16
    l_max: int = DEFAULT_L_MAX
    param_count: int = 0
    def_temperature: int = 0
    def_top_k: int = 0
    def_top_p: int = 0
    def_min_p: int = 0
    def_max_tokens: int = 0
    def_candidates: int = 0
    d_conv: int = 4
    meta_size: int = 0
    dt_rank: int = 0
    reserved: bytes = bytes(9)

    def __post_init__(self) -> None:
        # numpy integers (e.g. from an array's shape) become plain ints; other
        # types are left for validate() to reject with a TypeError
        for name, code in _LAYOUT:
            value = getattr(self, name)
            if code.endswith("s"):
                if isinstance(value, (bytearray, memoryview)):
                    object.__setattr__(self, name, bytes(value))
            elif not isinstance(value, (int, bool)) and hasattr(value, "__index__"):
                try:
                    object.__setattr__(self, name, operator.index(value))
                except TypeError:
                    pass

    @property
    def tied(self) -> bool:
        """Flag bit 0: input embedding and output projection share weights."""
        return bool(self.flags & FLAG_TIED)

    @property
    def has_ewc(self) -> bool:
        """Flag bit 1: EWC arrays (fisher diagonal, anchor weights) precede the weights."""
        return bool(self.flags & FLAG_HAS_EWC)

    @property
    def sampling_defaults(self) -> Dict[str, Optional[float]]:
        """The def_* fields decoded (x1000 fields as floats; unset as None)."""

        def scaled(v: int) -> Optional[float]:
            return v / 1000 if v else None

        return {
            "temperature": scaled(self.def_temperature),
            "top_k": self.def_top_k or None,
            "top_p": scaled(self.def_top_p),
            "min_p": scaled(self.def_min_p),
            "max_tokens": self.def_max_tokens or None,
            "candidates": self.def_candidates or None,
        }

    def as_dict(self) -> Dict[str, Any]:
        """All fields in file order (plus ``tied`` and ``has_ewc``)."""
        out = {name: getattr(self, name) for name, _ in _LAYOUT}
        out["tied"] = self.tied
        out["has_ewc"] = self.has_ewc
        return out

    def validate(self, path: Optional[str] = None) -> None:
        """Raise :class:`CWGTError` on any field a v5 reader must reject."""
        for name, code in _LAYOUT:
            value = getattr(self, name)
            if code.endswith("s"):
                if not isinstance(value, (bytes, bytearray)):
                    raise CWGTFieldTypeError(
                        name,
                        HEADER_FIELDS[name][0],
                        f"must be {HEADER_FIELDS[name][1]} bytes, got {value!r}",
                        path,
                    )
                if len(value) != HEADER_FIELDS[name][1]:
                    raise _field_error(
                        name, f"must be {HEADER_FIELDS[name][1]} bytes, got {value!r}", path
                    )
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise CWGTFieldTypeError(
                    name,
                    HEADER_FIELDS[name][0],
                    f"must be an int, got {type(value).__name__}",
                    path,
                )
            bits = 8 * HEADER_FIELDS[name][1]
            if not 0 <= value < (1 << bits):
                raise _field_error(name, f"{value} does not fit an unsigned {bits}-bit field", path)
        if self.magic != MAGIC:
            raise _field_error("magic", f"expected {MAGIC!r}, got {bytes(self.magic)!r}", path)
        if self.arch_version < MIN_ARCH_VERSION:
            raise _field_error(
                "arch_version",
                f"version {self.arch_version} is not supported (need >= {MIN_ARCH_VERSION})",
                path,
            )
        if self.flags & ~_KNOWN_FLAGS:
            raise _field_error(
                "flags", f"unknown flag bits 0x{self.flags & ~_KNOWN_FLAGS:04x} set", path
            )
        if self.vocab_size != VOCAB_SIZE:
            raise _field_error("vocab_size", f"must be {VOCAB_SIZE}, got {self.vocab_size}", path)
        for name in ("d_model", "n_layers", "expand", "d_state", "l_max", "d_conv", "dt_rank"):
            if getattr(self, name) == 0:
                raise _field_error(name, "must be > 0", path)
        for name in ("def_top_p", "def_min_p"):
            if getattr(self, name) > 1000:
                raise _field_error(
                    name, f"{getattr(self, name)} is above 1000 (x1000 of 1.0)", path
                )
        if self.arch_version == ARCH_VERSION and any(self.reserved):
            raise _field_error(
                "reserved", f"must be zero-filled, got {bytes(self.reserved).hex()}", path
            )

    def to_bytes(self) -> bytes:
        """The packed 48 bytes (validated first)."""
        self.validate()
        return _STRUCT.pack(*(getattr(self, name) for name, _ in _LAYOUT))

    @classmethod
    def from_bytes(cls, data: bytes, path: Optional[str] = None) -> "CWGTHeader":
        """Unpack and validate 48 header bytes (shorter input names the cut field)."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"header data must be bytes, not {type(data).__name__}")
        data = bytes(data)
        if len(data) < HEADER_SIZE:
            for name, (offset, size) in HEADER_FIELDS.items():
                if offset + size > len(data):
                    raise CWGTError(
                        name,
                        offset,
                        f"file truncated: {len(data)} bytes, the {HEADER_SIZE}-byte header ends inside this field",
                        path,
                    )
        values = dict(zip((name for name, _ in _LAYOUT), _STRUCT.unpack_from(data)))
        if values["magic"] != MAGIC:  # check before anything else: maybe not a CWGT file at all
            raise _field_error("magic", f"expected {MAGIC!r}, got {values['magic']!r}", path)
        header = cls(**values)
        header.validate(path)
        return header


@dataclasses.dataclass(frozen=True)
class CWGTMetadata:
    """The metadata blob: domain name, template spec and stop conditions (one line each)."""

    domain: str = ""
    template: str = ""
    stop_conditions: str = ""

    def to_bytes(self) -> bytes:
        """``"<domain>\\n<template>\\n<stop_conditions>\\n"`` in UTF-8 (empty if all are empty)."""
        for name in ("domain", "template", "stop_conditions"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise TypeError(f"metadata {name} must be a str, not {type(value).__name__}")
            if "\n" in value or "\r" in value:
                raise ValueError(f"metadata {name} must be one line, got {value!r}")
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError(
                    f"metadata {name} contains a lone surrogate {value[exc.start]!r} at index {exc.start}, "
                    "which has no UTF-8 encoding"
                ) from None
        if not (self.domain or self.template or self.stop_conditions):
            return b""
        return f"{self.domain}\n{self.template}\n{self.stop_conditions}\n".encode("utf-8")

    @classmethod
    def from_bytes(cls, blob: bytes, path: Optional[str] = None) -> "CWGTMetadata":
        """Parse a blob; missing trailing lines are empty, more than 3 lines are an error."""
        if not isinstance(blob, (bytes, bytearray, memoryview)):
            # bytes(int) would allocate that many zero bytes
            raise TypeError(f"metadata blob must be bytes, not {type(blob).__name__}")
        if len(blob) > MAX_META_SIZE:
            raise CWGTError(
                "meta_size",
                HEADER_FIELDS["meta_size"][0],
                f"metadata of {len(blob)} bytes is larger than the {MAX_META_SIZE}-byte limit",
                path,
            )
        try:
            text = bytes(blob).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CWGTError(
                "metadata", _METADATA_OFFSET + exc.start, "metadata is not valid UTF-8", path
            ) from None
        if text.endswith("\n"):
            text = text[:-1]
        lines = text.split("\n") if text else []
        if len(lines) > 3:
            raise CWGTError(
                "metadata",
                _METADATA_OFFSET,
                f"expected 3 lines (domain, template, stop conditions), got {len(lines)}",
                path,
            )
        lines += [""] * (3 - len(lines))
        return cls(*(line.rstrip("\r") for line in lines))

    def stops(self, *, raw: bool = False) -> Any:
        """The parsed :class:`~toksmith.calm.StopConditions`."""
        return StopConditions(self.stop_conditions, raw=raw)


class EWCData(NamedTuple):
    """Elastic weight consolidation arrays, ``param_count`` float32 each."""

    fisher_diagonal: Any
    anchor_weights: Any


class CWGTModel:
    """A CWGT file opened by :func:`read_cwgt`.

    ``header`` (:class:`CWGTHeader`), ``metadata`` (:class:`CWGTMetadata`),
    ``weights`` (read-only float32 ``numpy.memmap``), ``ewc`` (None or
    :class:`EWCData` of two memmaps) and ``path``. Pass it to
    :func:`build_sequence` to use its template and ``l_max``.
    """

    def __init__(
        self,
        path: str,
        header: CWGTHeader,
        metadata: CWGTMetadata,
        weights: Any,
        ewc: Optional[EWCData],
    ):
        self.path = path
        self.header = header
        self.metadata = metadata
        self.weights = weights
        self.ewc = ewc

    @property
    def template(self) -> str:
        return self.metadata.template

    @property
    def domain(self) -> str:
        return self.metadata.domain

    def stop_conditions(self, *, raw: bool = False) -> Any:
        """A fresh :class:`~toksmith.calm.StopConditions` from the metadata."""
        return self.metadata.stops(raw=raw)

    def __repr__(self) -> str:
        h = self.header
        return (
            f"CWGTModel({self.path!r}, domain={self.metadata.domain!r}, d_model={h.d_model}, "
            f"n_layers={h.n_layers}, params={h.param_count}, ewc={self.ewc is not None})"
        )


def _fspath(path: Any) -> str:
    if isinstance(path, bool) or not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
    return check_encodable(
        os.fsdecode(path)
    )  # bytes paths need not be UTF-8 (they decode to encodable str)


def read_cwgt(path: Union[str, "os.PathLike[str]"]) -> CWGTModel:
    """Open a CWGT v5 file: parse the header and metadata, memory-map the arrays.

    Raises :class:`CWGTError` (a ValueError) naming the field and byte offset
    for a bad magic, ``arch_version < 5``, bad field values, truncation, or a
    ``meta_size`` / ``param_count`` that does not match the file size.

    >>> import numpy as np, os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "tiny.cwgt")
    ...     _ = write_cwgt(path, CWGTHeader(d_model=16, n_layers=1, dt_rank=1),
    ...                    CWGTMetadata("shell", "BOS;ATN;CMD:input", "| ;"), np.arange(4, dtype=np.float32))
    ...     model = read_cwgt(path)
    ...     print(model.header.param_count, model.metadata.domain, model.weights.tolist())
    4 shell [0.0, 1.0, 2.0, 3.0]
    """
    np = require_numpy("calm.read_cwgt")
    # a leading ~ is the home folder, as the seed's loader reads it
    path = os.path.expanduser(_fspath(path))
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode) and not stat.S_ISDIR(info.st_mode):
        # a FIFO would block, a device would be read or mapped without end
        raise OSError(errno.EINVAL, "not a regular file (CWGT weights are memory-mapped)", path)
    with open(path, "rb") as fh:  # IsADirectoryError for a directory
        size = os.fstat(fh.fileno()).st_size
        head = fh.read(HEADER_SIZE)
        header = CWGTHeader.from_bytes(head, path)
        meta_end = HEADER_SIZE + header.meta_size
        if meta_end > size:
            raise _field_error(
                "meta_size",
                f"metadata of {header.meta_size} bytes does not fit: the file has {size - HEADER_SIZE} bytes after the header",
                path,
            )
        if header.meta_size > MAX_META_SIZE:
            raise _field_error(
                "meta_size",
                f"metadata of {header.meta_size} bytes is larger than the {MAX_META_SIZE}-byte limit",
                path,
            )
        blob = fh.read(header.meta_size)
        if len(blob) != header.meta_size:  # the file shrank while being read
            raise _field_error(
                "meta_size", f"file truncated inside the {header.meta_size}-byte metadata", path
            )
    metadata = CWGTMetadata.from_bytes(blob, path)
    n_arrays = 3 if header.has_ewc else 1
    need = header.param_count * 4 * n_arrays
    have = size - meta_end
    if have != need:
        what = "weights" + (" and 2 EWC arrays" if header.has_ewc else "")
        if have < need:
            problem = f"{header.param_count} params need {need} bytes of {what} but the file has {have} (truncated?)"
        else:
            problem = f"{header.param_count} params need {need} bytes of {what} but the file has {have} ({have - need} trailing bytes)"
        raise _field_error("param_count", problem, path)

    def array(index: int) -> Any:
        if header.param_count == 0:
            return np.zeros(0, dtype="<f4")
        offset = meta_end + index * header.param_count * 4
        return np.memmap(path, dtype="<f4", mode="r", offset=offset, shape=(header.param_count,))

    ewc = EWCData(array(0), array(1)) if header.has_ewc else None
    weights = array(n_arrays - 1)
    return CWGTModel(path, header, metadata, weights, ewc)


#: The seed's Lua name for :func:`read_cwgt`.
load_model = read_cwgt


def _as_header(header: Any) -> CWGTHeader:
    if isinstance(header, CWGTHeader):
        return header
    if isinstance(header, Mapping):
        names = {f.name for f in dataclasses.fields(CWGTHeader)}
        extra = {"tied", "has_ewc"}
        unknown = sorted(str(k) for k in header if k not in names and k not in extra)
        if unknown:
            raise ValueError(f"unknown CWGT header field(s): {', '.join(unknown)}")
        values = {k: v for k, v in header.items() if k in names}
        if "tied" in header:
            tied = header["tied"]
            if not isinstance(tied, bool):
                raise TypeError(f"header 'tied' must be a bool, not {type(tied).__name__}")
            flags = values.get("flags", 0)
            if isinstance(flags, int) and not isinstance(flags, bool):
                values["flags"] = (flags | FLAG_TIED) if tied else (flags & ~FLAG_TIED)
        return CWGTHeader(**values)
    raise TypeError(f"header must be a CWGTHeader or a dict of fields, not {type(header).__name__}")


def _as_metadata(metadata: Any) -> CWGTMetadata:
    if metadata is None:
        return CWGTMetadata()
    if isinstance(metadata, CWGTMetadata):
        return metadata
    if isinstance(metadata, Mapping):
        unknown = sorted(
            str(k) for k in metadata if k not in ("domain", "template", "stop_conditions")
        )
        if unknown:
            raise ValueError(f"unknown metadata field(s): {', '.join(unknown)}")
        return CWGTMetadata(**metadata)
    if isinstance(metadata, (tuple, list)) and len(metadata) == 3:
        return CWGTMetadata(*metadata)
    raise TypeError(
        "metadata must be a CWGTMetadata, a dict with domain/template/stop_conditions, "
        f"or a 3-tuple, not {type(metadata).__name__}"
    )


def _as_float32(np: Any, values: Any, name: str) -> Any:
    arr = np.asarray(values)
    if arr.dtype.kind not in "fiu" or arr.dtype == np.bool_:
        raise TypeError(f"{name} must be a numeric array, got dtype {arr.dtype}")
    with np.errstate(over="ignore"):  # reported below, with the position
        flat = np.ascontiguousarray(arr, dtype="<f4").reshape(-1)
    if arr.dtype.kind == "f" and arr.dtype.itemsize > 4:  # only wider floats can overflow float32
        overflow = np.flatnonzero(np.isinf(flat) & np.isfinite(arr.reshape(-1)))
        if overflow.size:
            at = int(overflow[0])
            raise ValueError(
                f"{name}[{at}] = {float(arr.reshape(-1)[at])!r} does not fit float32 (largest: 3.4e38); "
                "it would be stored as inf"
            )
    return flat


def default_dt_rank(d_model: int) -> int:
    """Mamba's usual ``dt_rank`` for ``d_model``: ``ceil(d_model / 16)``, at most 255 (one byte).

    >>> default_dt_rank(40), default_dt_rank(4096)
    (3, 255)
    """
    d_model = operator.index(d_model)
    if d_model <= 0:
        raise ValueError(f"d_model must be > 0, not {d_model}")
    return min(255, math.ceil(d_model / 16))


def write_cwgt(
    path: Union[str, "os.PathLike[str]"],
    header: Union[CWGTHeader, Mapping[str, Any]],
    metadata: Union[CWGTMetadata, Mapping[str, str], Tuple[str, str, str], None],
    weights: Any,
    ewc: Any = None,
) -> CWGTHeader:
    """Write a CWGT v5 file atomically; returns the header as written.

    ``header`` is a :class:`CWGTHeader` or a dict of its fields (``tied=True``
    sets flag bit 0). ``param_count``, ``meta_size`` and the has_ewc flag are
    always set from ``weights``, ``metadata`` and ``ewc`` (so the header of a
    model read with :func:`read_cwgt` can be reused with new metadata, or
    without its EWC arrays). ``dt_rank`` must be set (1-255): a zero ``dt_rank``
    is a ValueError, never rewritten, since the rank is part of the model's shape and
    a guessed value would describe other weights (``default_dt_rank(d_model)`` gives
    Mamba's usual ``ceil(d_model / 16)``). ``weights`` is any numeric array
    (flattened in C order, stored as float32); ``ewc`` is None or a pair
    ``(fisher_diagonal, anchor_weights)`` of the same size. The metadata
    template, when set, must be a valid template spec.
    """
    np = require_numpy("calm.write_cwgt")
    path = _fspath(path)
    head = _as_header(header)
    if head.dt_rank == 0 and type(head.d_model) is int and head.d_model > 0:
        # (a bad d_model is named first, by the header's own validation below)
        raise ValueError(
            "write_cwgt: dt_rank is 0; set the model's dt_rank (1-255) in the header "
            f"(Mamba's usual value for d_model={head.d_model} is {default_dt_rank(head.d_model)})"
        )
    meta = _as_metadata(metadata)
    if meta.template:
        parse_template(meta.template)
    if meta.stop_conditions:
        parse_stop_patterns(meta.stop_conditions)
    blob = meta.to_bytes()
    if len(blob) > MAX_META_SIZE:
        raise ValueError(
            f"metadata of {len(blob)} bytes is larger than the {MAX_META_SIZE}-byte limit"
        )
    flat = _as_float32(np, weights, "weights")
    arrays = []
    if ewc is not None:
        if isinstance(ewc, Mapping):
            pair = (ewc.get("fisher_diagonal"), ewc.get("anchor_weights"))
        elif isinstance(ewc, (tuple, list)) and len(ewc) == 2:
            pair = tuple(ewc)
        else:
            raise TypeError("ewc must be None or a pair (fisher_diagonal, anchor_weights)")
        for name, values in zip(EWCData._fields, pair):
            if values is None:
                raise ValueError(f"ewc is missing {name}")
            arr = _as_float32(np, values, f"ewc {name}")
            if arr.size != flat.size:
                raise ValueError(
                    f"ewc {name} has {arr.size} values but there are {flat.size} weights"
                )
            arrays.append(arr)
    flags = (head.flags & ~FLAG_HAS_EWC) | (FLAG_HAS_EWC if arrays else 0)
    final = dataclasses.replace(head, param_count=flat.size, meta_size=len(blob), flags=flags)
    packed = final.to_bytes()
    arrays.append(flat)
    if os.path.isdir(path):  # was found only after the whole file was written next to it
        raise IsADirectoryError(
            errno.EISDIR, "cannot write a CWGT file over a folder (give a file name)", path
        )
    # a device or pipe would be replaced by a regular file (as root, /dev/null itself)
    refuse_special_destination(path, "a CWGT file")
    with atomic_write(path, "wb") as fh:  # a kill leaves the old file; its temporary is removed
        fh.write(packed)  # by the next write
        fh.write(blob)
        for arr in arrays:
            fh.write(arr.tobytes())
    return final
