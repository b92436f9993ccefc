"""A tokenizer as plain data: what :class:`toksmith.Tokenizer` is built from and saved as.

The file readers of :mod:`toksmith.files` return a :class:`TokenizerSpec` (they never build a
Tokenizer: the tokenizer module is above them); :meth:`toksmith.Tokenizer.from_spec` builds
one, :meth:`toksmith.Tokenizer.to_spec` gives one back, and :mod:`toksmith.registry` joins the
two (``toksmith.load``, ``load_any``, ``get_encoding``...).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

#: how a reader wants a constructor error (a ValueError: ids that collide, a bad pattern...)
#: reported: as it is (None), as a TokenizerFileError ("file": the file is inconsistent) or as
#: a ConversionError ("conversion": the other library's tokenizer has no toksmith equivalent)
BUILD_ERRORS = (None, "file", "conversion")


@dataclass
class MergeCheck:
    """A file's own merge list, to compare with the merges toksmith recovers from its ranks once
    the native core is built (:func:`toksmith.files._common.check_core_merges`): the two must
    give the same BPE."""

    #: the file's merges ("left right" strings or pairs), or a callable that reads them (they
    #: are read only when the native comparison ``native`` declines)
    merges: Any
    #: where (the file) for messages
    where: str
    #: the file's natively decoded tables, compared in one native call first (None: none)
    native: Any = None


#: the truncation strategies and directions, as ``tokenizers``' Python API names them (the
#: file says ``LongestFirst``, ``OnlyFirst``, ``OnlySecond``, ``Left``, ``Right``)
TRUNCATION_STRATEGIES = ("longest_first", "only_first", "only_second")
DIRECTIONS = ("right", "left")


def _camel(name: str) -> str:
    return "".join(w.capitalize() for w in name.split("_"))


@dataclass(frozen=True)
class Truncation:
    """A ``tokenizer.json``'s ``truncation``: encode keeps at most ``max_length`` ids, dropping
    the rest from the ``direction`` side. ``stride`` only shapes ``tokenizers``' overflowing
    windows (toksmith returns no overflow); ``strategy`` only matters for pairs of sequences
    (``only_second`` is not kept: a single sequence has no second part)."""

    max_length: int
    stride: int = 0
    strategy: str = "longest_first"
    direction: str = "right"

    def to_huggingface(self) -> Dict[str, Any]:
        """The object of a ``tokenizer.json``'s ``truncation`` key."""
        return {
            "direction": self.direction.capitalize(),
            "max_length": self.max_length,
            "strategy": _camel(self.strategy),
            "stride": self.stride,
        }

    def as_dict(self) -> Dict[str, Any]:
        """As ``tokenizers.Tokenizer.truncation`` gives it."""
        return {
            "max_length": self.max_length,
            "stride": self.stride,
            "strategy": self.strategy,
            "direction": self.direction,
        }


@dataclass(frozen=True)
class Padding:
    """A ``tokenizer.json``'s ``padding``: ids shorter than ``length`` (None: the longest of the
    batch), rounded up to a multiple of ``pad_to_multiple_of``, get ``pad_id`` added on the
    ``direction`` side. ``pad_token`` and ``pad_type_id`` are kept for the file."""

    length: Optional[int] = None
    direction: str = "right"
    pad_id: int = 0
    pad_type_id: int = 0
    pad_token: str = "[PAD]"
    pad_to_multiple_of: Optional[int] = None

    def to_huggingface(self) -> Dict[str, Any]:
        """The object of a ``tokenizer.json``'s ``padding`` key."""
        return {
            "strategy": "BatchLongest" if self.length is None else {"Fixed": self.length},
            "direction": self.direction.capitalize(),
            "pad_to_multiple_of": self.pad_to_multiple_of,
            "pad_id": self.pad_id,
            "pad_type_id": self.pad_type_id,
            "pad_token": self.pad_token,
        }

    def as_dict(self) -> Dict[str, Any]:
        """As ``tokenizers.Tokenizer.padding`` gives it."""
        return {
            "length": self.length,
            "pad_to_multiple_of": self.pad_to_multiple_of,
            "pad_id": self.pad_id,
            "pad_token": self.pad_token,
            "pad_type_id": self.pad_type_id,
            "direction": self.direction,
        }


@dataclass
class TokenizerSpec:
    """Everything a :class:`toksmith.Tokenizer` is made of, as plain data.

    ``mergeable_ranks``: ``bytes -> id`` (the id is the merge rank); ``pattern``: a pattern
    name or regex text; ``special_tokens`` and ``pinned_tokens``: ``str -> id``; ``merges``: the
    merge list as ``(left id, right id)`` pairs, or None to recover it from the ranks when
    needed; ``metadata`` and ``name`` as on the Tokenizer.
    """

    mergeable_ranks: Mapping[bytes, int]
    pattern: str = "cl100k"
    special_tokens: Mapping[str, int] = field(default_factory=dict)
    pinned_tokens: Mapping[str, int] = field(default_factory=dict)
    merges: Optional[Sequence[Tuple[int, int]]] = None
    metadata: Dict[str, Any] = field(default_factory=dict)
    name: Optional[str] = None
    #: ``merges`` were made by toksmith from these same ranks and checked there (the
    #: constructor takes them without checking each pair again)
    merges_checked: bool = False
    #: why the merges could not be recovered (:meth:`Tokenizer.to_spec` sets it with merges None)
    merges_error: Optional[str] = None
    #: the ``truncation`` and ``padding`` of a ``tokenizer.json`` (None: none), applied by
    #: :meth:`Tokenizer.encode` and :meth:`Tokenizer.encode_batch`
    truncation: Optional[Truncation] = None
    padding: Optional[Padding] = None
    # ---- for readers: how the spec is built into a Tokenizer (toksmith.registry.build)
    #: the file, in messages
    where: Optional[str] = None
    #: one of :data:`BUILD_ERRORS`
    build_error: Optional[str] = None
    #: keep ``name`` exactly, "" included (the constructor reads "" as no name)
    exact_name: bool = False
    #: the file's merge list, compared with the recovered one once built
    merge_check: Optional[MergeCheck] = None

    def token_bytes(self) -> Dict[int, bytes]:
        """``id -> bytes`` of the mergeable tokens."""
        return {i: b for b, i in self.mergeable_ranks.items()}

    def merge_bytes(self) -> Optional[List[Tuple[bytes, bytes]]]:
        """The merges as ``(left bytes, right bytes)`` pairs (None when there are none)."""
        if self.merges is None:
            return None
        by_id = self.token_bytes()
        return [(by_id[a], by_id[b]) for a, b in self.merges]


#: what builds a spec into a tokenizer (toksmith.Tokenizer.from_spec, given by the layer above)
Builder = Callable[[TokenizerSpec], Any]

__all__ = [
    "BUILD_ERRORS",
    "DIRECTIONS",
    "TRUNCATION_STRATEGIES",
    "Builder",
    "MergeCheck",
    "Padding",
    "TokenizerSpec",
    "Truncation",
]
