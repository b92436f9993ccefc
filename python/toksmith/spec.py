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
    #: a Hugging Face normalizer object (``{"type": "NFC"}``...) applied to the text between
    #: special tokens before it is split, or None
    normalizer: Optional[Dict[str, Any]] = None
    #: the ids a Hugging Face post-processor adds around every encoding, ``(prefix, suffix)``
    #: (``encode(..., add_special_tokens=False)`` leaves them out), or None
    template: Optional[Tuple[List[int], List[int]]] = None
    #: ``merges`` were made by toksmith from these same ranks and checked there (the
    #: constructor takes them without checking each pair again)
    merges_checked: bool = False
    #: why the merges could not be recovered (:meth:`Tokenizer.to_spec` sets it with merges None)
    merges_error: Optional[str] = None
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

__all__ = ["BUILD_ERRORS", "Builder", "MergeCheck", "TokenizerSpec"]
