"""Truncation and padding of encoded ids, as Hugging Face ``tokenizers`` applies a
``tokenizer.json``'s ``truncation`` and ``padding`` to single sequences
(``tokenizers/src/utils/truncation.rs``, ``padding.rs``; checked against ``tokenizers`` 0.23).

Truncation keeps ``max_length`` ids from the ``direction`` side's other end (``right``: the
first ``max_length``); ``max_length=0`` keeps none. ``longest_first`` and ``only_first`` act
alike on one sequence. ``stride`` shapes only the overflowing windows ``tokenizers`` also
returns, which toksmith does not: the ids are the same. ``tokenizers`` fails (a panic) when it
truncates with ``stride >= max_length``: toksmith raises ValueError there.

Padding pads to ``length`` (``Fixed``) or, without one (``BatchLongest``), to the longest
sequence of the batch (a single ``encode`` is a batch of one), in both cases rounded up to a
multiple of ``pad_to_multiple_of`` (0 or None: not rounded); longer sequences are left as they
are. ``encode_batch`` truncates each sequence first, then pads them all.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, TypeVar

from .spec import DIRECTIONS, TRUNCATION_STRATEGIES, Padding, Truncation

#: ids are unsigned 32-bit in ``tokenizers``, lengths are usize (64-bit)
_U32 = 2**32
_USIZE = 2**64

_T = TypeVar("_T", bound="LengthSettings")


def _count(value: Any, what: str, most: int = _U32 - 1) -> int:
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    v = int(value)
    if not 0 <= v <= most:
        raise ValueError(f"{what} must be between 0 and {most}, not {v}")
    return v


def _choice(value: Any, what: str, choices: tuple) -> str:
    if not isinstance(value, str) or value.lower() not in choices:
        raise ValueError(f"{what} must be one of {', '.join(map(repr, choices))}, not {value!r}")
    return value.lower()


def make_truncation(
    max_length: Any, stride: Any = 0, strategy: Any = "longest_first", direction: Any = "right"
) -> Truncation:
    """A checked :class:`Truncation` (TypeError / ValueError naming the bad argument).
    ``only_second`` is refused: it truncates the second sequence of a pair, and toksmith
    encodes single sequences (``tokenizers`` fails on one that needs truncating)."""
    t = Truncation(
        _count(max_length, "max_length", _USIZE - 1),
        _count(stride, "stride", _USIZE - 1),
        _choice(strategy, "strategy", TRUNCATION_STRATEGIES),
        _choice(direction, "direction", DIRECTIONS),
    )
    if t.strategy == "only_second":
        raise ValueError(
            "truncation strategy only_second truncates the second sequence of a pair; toksmith "
            "encodes single sequences (use longest_first or only_first)"
        )
    return t


def make_padding(
    direction: Any = "right",
    pad_id: Any = 0,
    pad_type_id: Any = 0,
    pad_token: Any = "[PAD]",
    length: Any = None,
    pad_to_multiple_of: Any = None,
) -> Padding:
    """A checked :class:`Padding` (TypeError / ValueError naming the bad argument)."""
    if not isinstance(pad_token, str):
        raise TypeError(f"pad_token must be a str, not {type(pad_token).__name__}")
    return Padding(
        length=None if length is None else _count(length, "length", _USIZE - 1),
        direction=_choice(direction, "direction", DIRECTIONS),
        pad_id=_count(pad_id, "pad_id"),
        pad_type_id=_count(pad_type_id, "pad_type_id"),
        pad_token=pad_token,
        pad_to_multiple_of=None
        if pad_to_multiple_of is None
        else _count(pad_to_multiple_of, "pad_to_multiple_of", _USIZE - 1),
    )


def truncate(ids: List[int], t: Truncation) -> List[int]:
    """``ids`` cut to ``t.max_length`` (the same list when it is not longer)."""
    n = len(ids)
    if n <= t.max_length:
        return ids
    if t.max_length and t.stride >= t.max_length:
        raise ValueError(
            f"truncation stride {t.stride} must be less than max_length {t.max_length} "
            "(Hugging Face tokenizers fails on it too); set a smaller stride"
        )
    return ids[n - t.max_length :] if t.direction == "left" else ids[: t.max_length]


def pad_target(longest: int, p: Padding) -> int:
    """The length ``p`` pads to, for a batch whose longest sequence has ``longest`` ids."""
    target = longest if p.length is None else p.length
    m = p.pad_to_multiple_of
    if m and target % m:
        target += m - target % m
    return target


def pad(ids: List[int], target: int, p: Padding) -> List[int]:
    short = target - len(ids)
    if short <= 0:
        return ids
    fill = [p.pad_id] * short
    return fill + ids if p.direction == "left" else ids + fill


def apply(
    batch: List[List[int]], truncation: Optional[Truncation], padding: Optional[Padding]
) -> List[List[int]]:
    """The ids of a batch after ``truncation`` (each sequence) and ``padding`` (all together)."""
    if truncation is not None:
        batch = [truncate(ids, truncation) for ids in batch]
    if padding is not None and batch:
        target = pad_target(max(map(len, batch)), padding)
        batch = [pad(ids, target, padding) for ids in batch]
    return batch


class LengthSettings:
    """The truncation and padding switches of a tokenizer, named as ``tokenizers.Tokenizer``
    names them; the tokenizer's ``encode`` and ``encode_batch`` apply them with :func:`apply`.
    Class defaults: a tokenizer without them pickles as before."""

    _truncation: Optional[Truncation] = None
    _padding: Optional[Padding] = None

    @property
    def truncation(self) -> Optional[Dict[str, Any]]:
        """The truncation ``encode`` and ``encode_batch`` apply, as ``tokenizers``'
        ``Tokenizer.truncation`` gives it (``max_length``, ``stride``, ``strategy``,
        ``direction``), or None."""
        return None if self._truncation is None else self._truncation.as_dict()

    @property
    def padding(self) -> Optional[Dict[str, Any]]:
        """The padding ``encode`` and ``encode_batch`` apply, as ``tokenizers``'
        ``Tokenizer.padding`` gives it (``length``, ``pad_to_multiple_of``, ``pad_id``,
        ``pad_token``, ``pad_type_id``, ``direction``), or None."""
        return None if self._padding is None else self._padding.as_dict()

    def enable_truncation(
        self,
        max_length: int,
        stride: int = 0,
        strategy: str = "longest_first",
        direction: str = "right",
    ) -> None:
        """Make ``encode`` and ``encode_batch`` keep at most ``max_length`` ids of each text
        (``direction="right"``: the first ones; ``"left"``: the last ones), as
        ``tokenizers.Tokenizer.enable_truncation`` does. ``stride`` only shapes the overflowing
        windows ``tokenizers`` also returns (toksmith returns the ids only); truncating with
        ``stride >= max_length`` raises ValueError, as ``tokenizers`` fails on it.
        ``strategy="only_second"`` (for pairs) is refused. The other encoders
        (``encode_ordinary``, ``encode_to_numpy``...) give all ids. Saved in a
        ``tokenizer.json``."""
        self._truncation = make_truncation(max_length, stride, strategy, direction)

    def no_truncation(self) -> None:
        """Turn truncation off (``tokenizers.Tokenizer.no_truncation``)."""
        self._truncation = None

    def enable_padding(
        self,
        direction: str = "right",
        pad_id: int = 0,
        pad_type_id: int = 0,
        pad_token: str = "[PAD]",
        length: Optional[int] = None,
        pad_to_multiple_of: Optional[int] = None,
    ) -> None:
        """Make ``encode`` and ``encode_batch`` pad their ids with ``pad_id`` on the
        ``direction`` side to ``length`` (None: the longest of the batch; one text is a batch
        of one), rounded up to a multiple of ``pad_to_multiple_of``, as
        ``tokenizers.Tokenizer.enable_padding`` does; longer ids stay as they are.
        ``pad_token`` and ``pad_type_id`` are only kept for the saved ``tokenizer.json``."""
        self._padding = make_padding(
            direction, pad_id, pad_type_id, pad_token, length, pad_to_multiple_of
        )

    def no_padding(self) -> None:
        """Turn padding off (``tokenizers.Tokenizer.no_padding``)."""
        self._padding = None

    def _untruncated(self: _T) -> _T:
        """This tokenizer without truncation and padding (itself when it has neither; else a
        shallow copy sharing the core), for encoders that work on parts of a text (a stream
        encoded in blocks, the stable tokens of encode_with_unstable)."""
        if self._truncation is None and self._padding is None:
            return self
        other = object.__new__(type(self))  # not copy.copy: a Tokenizer would pickle its tables
        other.__dict__.update(self.__dict__)
        other._truncation = other._padding = None
        return other

    def _apply_lengths(self, batch: List[List[int]]) -> List[List[int]]:
        if self._truncation is None and self._padding is None:
            return batch
        return apply(batch, self._truncation, self._padding)


__all__ = [
    "LengthSettings",
    "apply",
    "make_padding",
    "make_truncation",
    "pad",
    "pad_target",
    "truncate",
]
