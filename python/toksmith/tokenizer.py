"""The :class:`Tokenizer`: one typed Python class over the native BPE core.

The class owns policy (special tokens, argument checking, file formats); the native core
(``toksmith._core.Bpe``) does the work with the GIL released, so many Python threads can encode
at once (a text of at most 1 KB of UTF-8, microseconds of work, is encoded with it held: taking
it back would cost a good part of such a call).
"""

from __future__ import annotations

import gc
import hashlib
import itertools
import json
import marshal
import operator
import os
import sys
import threading
from collections import OrderedDict
from typing import (
    AbstractSet,
    Any,
    Collection,
    Dict,
    FrozenSet,
    Iterable,
    List,
    Literal,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from . import _core, _lengths

# (MAX_THREADS, _as_id, _fix_surrogates and _threads stay importable from here, where they were)
from ._args import MAX_THREADS as MAX_THREADS
from ._args import array_dtype as _array_dtype
from ._args import as_id as _as_id
from ._args import fix_surrogates as _fix_surrogates
from ._args import mark_id as _mark_id
from ._args import threads_arg as _threads
from .decoding import StreamDecoder, _check_errors, _is_index
from .errors import (
    ConversionError,
    DisallowedSpecialError,
    MergesError,
    TokenizerFileError,
    UnknownTokenError,
    missing_extra,
)
from .files import gpt2 as _gpt2
from .files import huggingface as _huggingface
from .files import saved as _saved
from .files import tiktoken as _tiktoken
from .files._common import check_core_merges
from .pretokenize import _from_file, resolve_pattern
from .spec import TokenizerSpec
from .unstable import encode_bytes, encode_single_piece, encode_with_unstable

SpecialSet = Union[Literal["all"], AbstractSet[str]]
DisallowedSet = Union[Literal["all"], Collection[str]]


def _clean_text(text: Any, what: str = "text") -> str:
    if not isinstance(text, str):
        raise TypeError(
            f"{what} must be str, not {type(text).__name__}"
            + ("; decode bytes to str first" if isinstance(text, (bytes, bytearray)) else "")
        )
    return text


def _fixed_char_starts(text: str) -> List[int]:
    """For each character of ``_fix_surrogates(text)`` (and its end), its index in ``text``: a
    surrogate pair became one character there, a lone surrogate one U+FFFD."""
    starts = []
    i, n = 0, len(text)
    while i < n:
        starts.append(i)
        pair = "\ud800" <= text[i] <= "\udbff" and i + 1 < n and "\udc00" <= text[i + 1] <= "\udfff"
        i += 2 if pair else 1
    starts.append(n)
    return starts


def _normalizer_of(normalizer: Any) -> Tuple[Optional[str], Any]:
    """(its JSON text, the native normalizer) of a Hugging Face normalizer object; (None, None)
    for None or an empty ``Sequence`` (which changes nothing)."""
    if normalizer is None:
        return None, None
    if not isinstance(normalizer, Mapping):
        raise TypeError(
            f"normalizer must be a Hugging Face normalizer object (a dict such as "
            f'{{"type": "NFC"}}) or None, not {type(normalizer).__name__}'
        )
    if normalizer.get("type") == "Sequence" and not normalizer.get("normalizers"):
        return None, None
    text = json.dumps(normalizer, ensure_ascii=False, sort_keys=True)
    try:
        return text, _core.Normalizer.from_hf_json(text)
    except ValueError as e:
        raise ValueError(f"normalizer {text[:80]}: {e}") from None


def _template_of(template: Any, core: Any) -> Optional[Tuple[List[int], List[int]]]:
    """``(prefix ids, suffix ids)`` checked (each a token of ``core``), or None."""
    if template is None:
        return None
    try:
        prefix, suffix = template
        parts = (list(prefix), list(suffix))
    except (TypeError, ValueError):
        raise TypeError(
            "template must be a pair (prefix ids, suffix ids), e.g. ([128000], []), or None"
        ) from None
    for part in parts:
        for i in part:
            j = _as_id(i)
            try:
                if j is None:
                    raise UnknownTokenError(str(i))
                core.token_bytes(j)
            except (OverflowError, TypeError, UnknownTokenError):
                raise ValueError(f"template id {i!r} is not a token of this tokenizer") from None
    if not parts[0] and not parts[1]:
        return None
    return [int(i) for i in parts[0]], [int(i) for i in parts[1]]


class _CheckedMerges(list):
    """Merges that toksmith's own trainer or file readers made from the same ranks (their ids
    checked there): the constructor takes them without checking each pair again (about 15 ms
    for cl100k's 100,000 merges, a tenth of loading the file)."""


def _check_merges(merges: Any, core: Any) -> Optional[List[Tuple[int, int]]]:
    """``merges`` as a list of ``(left id, right id)`` tuples, each id a token of ``core``'s
    vocabulary; None stays None. A list of int pairs (what training and the file readers give)
    is checked with one comprehension, C loops and one native call (about 8 ms for 100,000
    merges); the entries are looked at one by one only to convert or name a bad one."""
    if merges is None:
        return None
    if type(merges) is _CheckedMerges:
        return [tuple(m) for m in merges]  # type: ignore[misc]
    what = "merges must be a list of (left id, right id) pairs of token ids, or None"
    if isinstance(merges, (str, bytes, bytearray, Mapping)) or not isinstance(merges, Iterable):
        raise TypeError(f"{what}, not {type(merges).__name__}")
    items = merges if type(merges) is list else list(merges)
    pairs = [m if type(m) is tuple and len(m) == 2 else None for m in items]
    if None not in pairs:
        try:
            # every id a token
            core.decode_bytes(list(itertools.chain.from_iterable(pairs)))  # type: ignore[arg-type]
            return pairs  # type: ignore[return-value]
        except (TypeError, OverflowError, ValueError):
            pass
    fixed = []
    for k, m in enumerate(items):
        if isinstance(m, (str, bytes, bytearray, Mapping)) or not isinstance(m, Iterable):
            raise TypeError(f"{what}; merges[{k}] is {m!r}")
        m = tuple(m.tolist() if hasattr(m, "tolist") else m)  # a numpy row
        if len(m) != 2 or any(isinstance(x, (str, bytes, bytearray)) for x in m):
            raise TypeError(f"{what}; merges[{k}] is {m!r}")
        ids = tuple(_as_id(x) for x in m)
        if None in ids:
            raise ValueError(
                f"merges[{k}] = {m!r} is not a pair of token ids (ints, 0 <= id < {core.n_vocab})"
            )
        for i in ids:
            try:
                core.token_bytes(i)
            except (ValueError, OverflowError):
                raise ValueError(
                    f"merges[{k}] = {m!r} names the id {i}, which is not a token of this vocabulary "
                    f"(it has {core.n_vocab} ids)"
                ) from None
        fixed.append(ids)
    return fixed  # type: ignore[return-value]


class _NoGC:
    """Pause the cyclic garbage collector while a batch of result lists is built: the lists hold
    only ints (no cycles), but allocating thousands of them would trigger collections that walk
    every id of the batch (a 2x slowdown on big batches)."""

    def __enter__(self):
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        if self.was_enabled:
            gc.enable()


class Tokenizer(_lengths.LengthSettings):
    """A byte-level BPE tokenizer with tiktoken-compatible ids.

    Build one with :func:`toksmith.train`, :meth:`Tokenizer.from_ranks` or :func:`toksmith.load`.

    >>> ranks = {bytes([b]): b for b in range(256)}
    >>> ranks[b"ab"] = 256
    >>> tok = Tokenizer.from_ranks(ranks, pattern="gpt2", special_tokens={"<|end|>": 257})
    >>> tok.encode("abc ab")
    [256, 99, 32, 256]
    >>> tok.encode("ab<|end|>", allowed_special="all")
    [256, 257]
    >>> tok.decode([256, 99])
    'abc'
    """

    def __init__(
        self,
        mergeable_ranks: Mapping[bytes, int],
        *,
        pattern: str = "cl100k",
        special_tokens: Optional[Mapping[str, int]] = None,
        pinned_tokens: Optional[Mapping[str, int]] = None,
        merges: Optional[Sequence[Tuple[int, int]]] = None,
        metadata: Optional[Dict[str, Any]] = None,
        name: Optional[str] = None,
        normalizer: Optional[Mapping[str, Any]] = None,
        template: Optional[Tuple[Sequence[int], Sequence[int]]] = None,
    ) -> None:
        if not isinstance(mergeable_ranks, Mapping):
            raise TypeError(
                f"mergeable_ranks must be a dict of bytes -> int, not {type(mergeable_ranks).__name__}"
            )
        regex_text, pattern_name = resolve_pattern(pattern)
        specials = self._check_added(special_tokens, "special_tokens")
        pinned = self._check_added(pinned_tokens, "pinned_tokens")
        added = [(t, i, False) for t, i in specials.items()] + [
            (t, i, True) for t, i in pinned.items()
        ]
        # a plain dict of bytes -> int goes to the core in one call; anything else is checked
        # (and converted) entry by entry here, which also names a bad entry
        core = _core.Bpe.from_ranks(mergeable_ranks, added, regex_text)
        if core is None:
            items: List[Tuple[bytes, int]] = []
            for k, v in mergeable_ranks.items():
                if not isinstance(k, (bytes, bytearray)):
                    raise TypeError(
                        f"mergeable_ranks keys must be bytes, not {type(k).__name__} ({k!r})"
                    )
                i = _as_id(v)
                if i is None:
                    raise ValueError(
                        f"mergeable_ranks[{bytes(k)!r}] = {v!r} is not a valid id (0 <= id < 2**32)"
                    )
                items.append((bytes(k), i))
            core = _core.Bpe(items, added, regex_text)
        self._core = core
        self._normalizer_json, self._normalizer = _normalizer_of(normalizer)
        self._missing_bytes: bytes = core.missing_bytes
        self._template = _template_of(template, core)
        self._pattern = regex_text
        self._pattern_name = pattern_name
        self._special_tokens = dict(specials)
        self._pinned_tokens = dict(pinned)
        self._merges: Optional[List[Tuple[int, int]]] = _check_merges(merges, core)
        if metadata is not None and not isinstance(metadata, Mapping):
            raise TypeError(f"metadata must be a dict (or None), not {type(metadata).__name__}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a str (or None), not {type(name).__name__}")
        self.metadata: Dict[str, Any] = dict(metadata or {})
        self.name = name or "toksmith"
        self._allowed_cache: Dict[Any, Tuple[Optional[List[int]], bool]] = {}
        self._disallowed_cache: Dict[Any, Optional[Tuple[Optional[List[int]], List[str]]]] = {}
        self._special_ids: FrozenSet[int] = frozenset(self._special_tokens.values())
        self._pickled_tables: Optional[bytes] = None  # set by the first pickle (see __reduce__)
        self._unstable_tables: Any = None  # built by the first encode_with_unstable

    @staticmethod
    def _check_added(tokens: Optional[Mapping[str, int]], what: str) -> Dict[str, int]:
        if tokens is None:
            return {}
        if not isinstance(tokens, Mapping):
            raise TypeError(f"{what} must be a dict of str -> id, not {type(tokens).__name__}")
        out = {}
        for t, i in tokens.items():
            if not isinstance(t, str):
                raise TypeError(f"{what} keys must be str, not {type(t).__name__} ({t!r})")
            if not t.isascii():
                try:
                    t.encode("utf-8")
                except UnicodeEncodeError as e:
                    raise ValueError(
                        f"{what}: {t!r} holds a lone surrogate (U+{ord(t[e.start]):04X} at index "
                        f"{e.start}) that UTF-8 cannot encode; pass a valid str"
                    ) from None
            j = _as_id(i)
            if j is None:
                raise ValueError(f"{what}[{t!r}] = {i!r} is not a valid id (0 <= id < 2**32)")
            out[t] = j
        return out

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_ranks(
        cls,
        mergeable_ranks: Mapping[bytes, int],
        pattern: str = "cl100k",
        special_tokens: Optional[Mapping[str, int]] = None,
        *,
        pinned_tokens: Optional[Mapping[str, int]] = None,
        name: Optional[str] = None,
    ) -> "Tokenizer":
        """Build from a tiktoken-style rank table (``bytes -> id``; the id is the merge rank),
        a split pattern (name or regex) and special tokens (``str -> id``)."""
        return cls(
            mergeable_ranks,
            pattern=pattern,
            special_tokens=special_tokens,
            pinned_tokens=pinned_tokens,
            name=name,
        )

    @classmethod
    def from_spec(cls, spec: TokenizerSpec) -> "Tokenizer":
        """Build from a :class:`toksmith.spec.TokenizerSpec` (what the file readers of
        :mod:`toksmith.files` return). A reader's spec says how a constructor error is reported
        (as a TokenizerFileError or ConversionError naming the file) and which merge list of
        the file must agree with the merges recovered from the ranks."""
        if not isinstance(spec, TokenizerSpec):
            raise TypeError(
                f"spec must be a toksmith.spec.TokenizerSpec, not {type(spec).__name__}"
            )
        merges = spec.merges
        if merges is not None and spec.merges_checked:
            merges = _CheckedMerges(merges)
        try:
            tok = cls(
                spec.mergeable_ranks,
                pattern=spec.pattern,
                special_tokens=spec.special_tokens,
                pinned_tokens=spec.pinned_tokens,
                merges=merges,
                metadata=spec.metadata,
                name=spec.name,
                normalizer=spec.normalizer,
                template=spec.template,
            )
        except (TypeError, ValueError) as e:
            if spec.build_error == "file" and not isinstance(e, TokenizerFileError):
                raise TokenizerFileError(f"{spec.where}: inconsistent tokenizer: {e}") from None
            if (
                spec.build_error == "conversion"
                and isinstance(e, ValueError)
                and not isinstance(e, (ConversionError, TokenizerFileError))
            ):
                raise ConversionError(
                    f"{spec.where}: toksmith cannot build this tokenizer: {e}"
                ) from None
            raise
        if spec.exact_name and isinstance(spec.name, str):
            tok.name = spec.name
        if spec.truncation is not None:
            tok._truncation = spec.truncation
        if spec.padding is not None:
            tok._padding = spec.padding
        if spec.merge_check is not None:
            check_core_merges(tok._core, spec.merge_check)
        return tok

    def to_spec(self, *, merges: bool = True) -> TokenizerSpec:
        """This tokenizer as a :class:`toksmith.spec.TokenizerSpec` (plain data: copies of its
        tables). ``merges=False`` leaves the merge list out (recovering it from ranks alone
        takes time); a rank table that has none gives ``merges=None`` and the reason in
        ``merges_error``."""
        spec = TokenizerSpec(
            self.mergeable_ranks(),
            pattern=self._pattern_name or self._pattern,
            special_tokens=dict(self._special_tokens),
            pinned_tokens=dict(self._pinned_tokens),
            metadata=self.metadata,
            name=self.name,
            truncation=self._truncation,
            padding=self._padding,
            normalizer=self.normalizer,
            template=self.template,
        )
        if merges:
            try:
                spec.merges = self.merge_ids()
                spec.merges_checked = True
            except MergesError as e:
                spec.merges_error = str(e)
        return spec

    # ------------------------------------------------------------------ properties

    @property
    def n_vocab(self) -> int:
        """Largest token id + 1 (tiktoken's ``n_vocab``)."""
        return self._core.n_vocab

    @property
    def vocab_size(self) -> int:
        """Same as :attr:`n_vocab`."""
        return self._core.n_vocab

    @property
    def max_token_value(self) -> int:
        return self._core.n_vocab - 1

    @property
    def pattern(self) -> str:
        """The split pattern's regex text."""
        return self._pattern

    @property
    def normalizer(self) -> Optional[Dict[str, Any]]:
        """The Hugging Face normalizer applied to text before it is split (a copy of its
        ``tokenizer.json`` object, e.g. ``{"type": "NFC"}``), or None. Special tokens are found
        in the text as it is; the text between them is normalized."""
        return None if self._normalizer_json is None else json.loads(self._normalizer_json)

    @property
    def template(self) -> Optional[Tuple[List[int], List[int]]]:
        """The ids a Hugging Face post-processor (``TemplateProcessing``, ``RobertaProcessing``...)
        puts before and after the ids of a text, as ``(prefix, suffix)`` (Llama 3:
        ``([128000], [])``, its ``<|begin_of_text|>``), or None. :meth:`encode` adds them
        unless ``add_special_tokens=False``."""
        if self._template is None:
            return None
        return list(self._template[0]), list(self._template[1])

    def _plain_output(self, add_special_tokens: Optional[bool]) -> bool:
        """Whether encode's ids are returned as they are: no template, truncation or padding."""
        return (
            add_special_tokens is None
            and self._template is None
            and self._truncation is None
            and self._padding is None
        )

    def _finished(
        self, batch: List[List[int]], add_special_tokens: Optional[bool]
    ) -> List[List[int]]:
        """The ids of a batch as ``tokenizers`` post-processes them: truncated to leave room
        for the template's tokens (when they are added), framed by them, then padded."""
        self._framed([], add_special_tokens)  # the type check, also without a template
        if self._template is None or add_special_tokens is False:
            return self._apply_lengths(batch)
        prefix, suffix = self._template
        return _lengths.apply(
            batch,
            self._truncation,
            self._padding,
            added=len(prefix) + len(suffix),
            frame=lambda ids: self._framed(ids, add_special_tokens),
        )

    def _framed(self, ids: List[int], add_special_tokens: Optional[bool]) -> List[int]:
        """``ids`` with the template's tokens around them, when it applies."""
        if add_special_tokens is not None and not isinstance(add_special_tokens, bool):
            raise TypeError(
                f"add_special_tokens must be True, False or None, not {type(add_special_tokens).__name__}"
            )
        if self._template is None or add_special_tokens is False:
            return ids
        prefix, suffix = self._template
        if prefix:
            ids[:0] = prefix
        if suffix:
            ids.extend(suffix)
        return ids

    @property
    def pattern_name(self) -> Optional[str]:
        """The name of the split pattern if it is a named one (``"cl100k"``...), else None."""
        return self._pattern_name

    @property
    def special_tokens(self) -> Dict[str, int]:
        """Special tokens, ``str -> id`` (a copy)."""
        return dict(self._special_tokens)

    @property
    def special_tokens_set(self) -> set:
        return set(self._special_tokens)

    @property
    def pinned_tokens(self) -> Dict[str, int]:
        """Pinned tokens (always one token where their text occurs), ``str -> id``."""
        return dict(self._pinned_tokens)

    def is_special_token(self, token: int) -> bool:
        """Whether ``token`` is the id of a special token (pinned tokens are not special)."""
        return token in self._special_ids

    def token_byte_values(self) -> List[bytes]:
        """The bytes of every mergeable token (special tokens excluded), sorted (tiktoken's
        ``token_byte_values``)."""
        return sorted(self._core.mergeable_ranks())

    @property
    def eot_token(self) -> Optional[int]:
        """Id of ``<|endoftext|>`` if present."""
        return self._special_tokens.get("<|endoftext|>")

    def mergeable_ranks(self) -> Dict[bytes, int]:
        """The rank table (``bytes -> id``) of all mergeable tokens, bytes included."""
        return self._core.mergeable_ranks()

    def merges(self) -> List[Tuple[bytes, bytes]]:
        """The merge list, in order, as ``(left bytes, right bytes)`` pairs.

        For a tokenizer loaded from ranks only, the merges are recovered from the ranks (each
        token is the BPE of two lower-ranked tokens); a rank table where that is impossible
        raises :class:`toksmith.MergesError`.
        """
        return [(self.id_to_bytes(a), self.id_to_bytes(b)) for a, b in self.merge_ids()]

    def merge_ids(self) -> List[Tuple[int, int]]:
        """The merge list as ``(left id, right id)`` pairs (the merged token's id is the rank
        order of the list)."""
        if self._merges is None:
            self._merges = [(a, b) for a, b, _ in self._core.recover_merges()]
        return list(self._merges)

    # ------------------------------------------------------------------ encoding

    def _allowed(self, allowed_special: SpecialSet) -> Tuple[Optional[List[int]], bool]:
        if allowed_special == "all":
            return None, True
        if isinstance(allowed_special, str) or allowed_special is None:
            hint = f"; for one token pass {{{allowed_special!r}}}" if allowed_special else ""
            raise TypeError(
                f"allowed_special must be 'all' or a set of special token strings (frozenset() for "
                f"none), not {allowed_special!r}{hint}"
            )
        try:
            one_shot = iter(allowed_special) is allowed_special
            key = frozenset(allowed_special)
        except TypeError as e:
            raise TypeError(
                f"allowed_special must be 'all' or a set of special token strings ({e})"
            ) from None
        if one_shot:  # read up here, it was empty when the disallowed tokens were worked out
            raise TypeError(
                "allowed_special must be 'all' or a set of special token strings, not a one-shot "
                f"{type(allowed_special).__name__}; pass set(...) of it"
            )
        hit = self._allowed_cache.get(key)
        if hit is not None:
            return hit
        ids = []
        for name in key:
            if not isinstance(name, str):
                raise TypeError(f"allowed_special must hold str, not {type(name).__name__}")
            if name not in self._special_tokens:
                raise ValueError(
                    f"allowed_special names {name!r}, which is not a special token of this tokenizer "
                    f"(its special tokens: {sorted(self._special_tokens)})"
                )
            ids.append(self._special_tokens[name])
        res = (ids or None, False)
        if len(self._allowed_cache) < 64:
            self._allowed_cache[key] = res
        return res

    def _disallowed_plan(
        self, allowed_special: SpecialSet, disallowed_special: DisallowedSet
    ) -> Optional[Tuple[Optional[List[int]], List[str]]]:
        """What :meth:`_find_disallowed` looks for: the ids of the disallowed special tokens
        (None: all of them) and the disallowed strings that are not special tokens; None when
        nothing is disallowed. Call after :meth:`_allowed`, which checks ``allowed_special``.
        Cached: with thousands of special tokens, the sets took a millisecond per text."""
        if disallowed_special == "all":
            if allowed_special == "all" or not self._special_tokens:
                return None
            key: Any = ("all", frozenset(allowed_special))
        elif disallowed_special is None:  # tiktoken checks nothing then (it tests truthiness)
            return None
        else:
            if isinstance(disallowed_special, str):
                raise TypeError(
                    "disallowed_special must be 'all' or a collection of special token strings"
                )
            try:
                key = ("given", frozenset(disallowed_special))
            except TypeError as e:
                raise TypeError(
                    f"disallowed_special must be 'all' or a collection of special token strings ({e})"
                ) from None
        if key in self._disallowed_cache:
            return self._disallowed_cache[key]
        specials = self._special_tokens
        others: List[str] = []
        if key[0] == "all":
            names = [t for t in specials if t not in key[1]]
        else:
            names = [t for t in key[1] if t in specials]
            # like tiktoken, a string that is not a special token is disallowed too: the text
            # must not contain it
            others = [t for t in key[1] if t not in specials]
            for t in others:
                if not isinstance(t, str):
                    raise TypeError(f"disallowed_special must hold str, not {type(t).__name__}")
                if not t:
                    raise ValueError(
                        "disallowed_special holds the empty string, which every text contains (so "
                        "every text would be refused); leave it out"
                    )
        plan: Optional[Tuple[Optional[List[int]], List[str]]] = None
        if names or others:
            plan = (None if len(names) == len(specials) else [specials[t] for t in names], others)
        if len(self._disallowed_cache) < 64:
            self._disallowed_cache[key] = plan
        return plan

    def _check_disallowed(
        self, text: str, allowed_special: SpecialSet, disallowed_special: DisallowedSet
    ) -> None:
        """Raise :class:`DisallowedSpecialError` if ``text`` contains a disallowed string (call
        after :meth:`_allowed`, which checks ``allowed_special``)."""
        plan = self._disallowed_plan(allowed_special, disallowed_special)
        if plan is not None:
            self._find_disallowed(text, plan)

    def _find_special(self, text: str, ids: Optional[List[int]]) -> Optional[Tuple[str, int]]:
        try:
            return self._core.find_special(text, ids)
        except UnicodeEncodeError:
            return self._core.find_special(_fix_surrogates(text), ids)

    def _may_hold_disallowed(
        self, texts: List[str], plan: Tuple[Optional[List[int]], List[str]], threads: int
    ) -> Sequence[int]:
        """The indices of the texts that :meth:`_find_disallowed` must check, in order: from the
        first text that holds a disallowed special token (searched natively on ``threads``
        threads: one text after the other, this was the serial part of a batch), or every text
        when strings other than special tokens are disallowed (``str.find`` looks for those)."""
        ids, others = plan
        if others or len(texts) < 2:
            return range(len(texts))
        try:
            first = self._core.first_special(texts, ids, threads)
        except UnicodeEncodeError:  # lone surrogates: _find_special replaces them text by text
            return range(len(texts))
        return range(len(texts) if first is None else first, len(texts))

    def _find_disallowed(self, text: str, plan: Tuple[Optional[List[int]], List[str]]) -> None:
        ids, others = plan
        hit = None
        if ids is not None and len(ids) > 16 and self._find_special(text, None) is None:
            ids = []  # no special token at all (passing thousands of ids costs more than looking)
        if ids is None or ids:
            hit = self._find_special(text, ids)
        for t in others:
            at = text.find(t)
            if at >= 0:
                offset = len(
                    _fix_surrogates(text[:at]).encode("utf-8")
                )  # as the special tokens' offsets
                if hit is None or offset < hit[1] or (offset == hit[1] and len(t) > len(hit[0])):
                    hit = (t, offset)
        if hit is not None:
            token, offset = hit
            if token not in self._special_tokens:
                raise DisallowedSpecialError(
                    f"the text contains {token!r} (at byte offset {offset}), which disallowed_special names. "
                    f"To encode it as plain text, leave it out of disallowed_special."
                )
            raise DisallowedSpecialError(
                f"the text contains the special token {token!r} (at byte offset {offset}), which this "
                f"call does not allow. To encode it as the special token, pass "
                f"allowed_special={{{token!r}}} (or allowed_special='all'); to encode it as plain text, "
                f"pass disallowed_special=() (or leave {token!r} out of disallowed_special)."
            )

    def encode(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: DisallowedSet = "all",
        add_special_tokens: Optional[bool] = None,
    ) -> List[int]:
        """Encode text to ids, with tiktoken's special-token semantics.

        Special tokens in ``allowed_special`` become their ids; a special token's text that is
        in ``disallowed_special`` (by default every special not allowed) raises
        :class:`toksmith.DisallowedSpecialError` (a ValueError); others are encoded as plain
        text. Pinned tokens are always produced. A tokenizer read from a ``tokenizer.json``
        whose post-processor adds tokens (:attr:`template`: Llama 3's ``<|begin_of_text|>``)
        adds them, as ``tokenizers`` does, unless ``add_special_tokens=False``. A truncation or
        padding (from a ``tokenizer.json``, or :meth:`enable_truncation` /
        :meth:`enable_padding`) is applied, as ``tokenizers`` applies it: the truncation leaves
        room for the template's tokens, the padding comes last.
        """
        ids = self._encode_checked(text, allowed_special, disallowed_special)[0]
        if self._plain_output(add_special_tokens):  # the usual case, kept short
            return ids
        return self._finished([ids], add_special_tokens)[0]

    def _encode_checked(
        self, text: str, allowed_special: SpecialSet, disallowed_special: DisallowedSet
    ) -> Tuple[List[int], bool]:
        """The ids of :meth:`encode`, and whether lone surrogates had to be replaced first."""
        text = _clean_text(text)
        allowed, allow_all = self._allowed(allowed_special)
        self._check_disallowed(text, allowed_special, disallowed_special)
        norm = self._normalizer
        try:
            if norm is not None:
                return self._core.encode_normalized(text, norm, allowed, allow_all), False
            return self._core.encode(text, allowed, allow_all), False
        except UnicodeEncodeError:
            text = _fix_surrogates(text)
            if norm is not None:
                return self._core.encode_normalized(text, norm, allowed, allow_all), True
            return self._core.encode(text, allowed, allow_all), True

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: DisallowedSet = "all",
    ) -> Tuple[List[int], List[List[int]]]:
        """tiktoken's ``encode_with_unstable``: the tokens of ``text`` that appending text
        cannot change, and every token sequence the rest can continue as (sorted). Each
        completion decodes to bytes that start with the text's remaining bytes. Special tokens
        as in :meth:`encode`. Built for prompting a completion model; the completions of a
        short unstable end can number in the thousands. A :attr:`template`'s tokens are not
        added (these are the ids of the text).

        >>> tok = Tokenizer.from_ranks({**{bytes([b]): b for b in range(256)}, b"ab": 256}, "gpt2")
        >>> tok.encode_with_unstable("xa")
        ([], [[120, 97], [120, 256]])
        """
        self._no_normalizer("encode_with_unstable")
        return encode_with_unstable(self, text, allowed_special, disallowed_special)

    def _no_normalizer(self, what: str) -> None:
        if self._normalizer is not None:
            raise ValueError(
                f"{what} is not available for a tokenizer with a normalizer "
                f"({self.normalizer}): it works on the text as it is, which the normalizer changes"
            )

    def _check_bytes(self, data: Any) -> None:
        """ValueError if ``data`` holds a byte that is not a token (GPT-NeoX's vocabulary lacks
        the 13 bytes UTF-8 never uses; text never needs them)."""
        if self._missing_bytes and isinstance(data, (bytes, bytearray, memoryview)):
            raw = bytes(data)
            for b in self._missing_bytes:
                at = raw.find(bytes([b]))
                if at >= 0:
                    raise ValueError(
                        f"the byte 0x{b:02x} (at offset {at}) is not a token of this vocabulary, "
                        "which lacks the bytes that UTF-8 text never holds; it cannot be encoded"
                    )

    def encode_bytes(self, data: bytes) -> List[int]:
        """Encode bytes that need not be valid UTF-8 (tiktoken's ``_encode_bytes``, natively):
        valid UTF-8 is encoded as :meth:`encode_ordinary` encodes its text; from the first
        invalid byte on, the rest, together with the unstable end of the valid part before it,
        is one piece: its id if it is a token, else its byte-pair merge (near-linear in its
        length). Decoding gives the bytes back.

        >>> tok = Tokenizer.from_ranks({**{bytes([b]): b for b in range(256)}, b"ab": 256}, "gpt2")
        >>> tok.encode_bytes(b"ab\\xffab")
        [256, 255, 256]
        """
        self._check_bytes(data)
        if self._normalizer is not None and isinstance(data, (bytes, bytearray, memoryview)):
            try:
                text = bytes(data).decode("utf-8")
            except UnicodeDecodeError as e:
                raise ValueError(
                    f"encode_bytes: this tokenizer normalizes text ({self.normalizer}), so it "
                    f"encodes valid UTF-8 only (invalid byte at offset {e.start})"
                ) from None
            return self.encode_ordinary(text)
        return encode_bytes(self, data)

    def _encode_bytes(self, data: bytes) -> List[int]:
        """tiktoken's name for :meth:`encode_bytes`."""
        return self.encode_bytes(data)

    def _encode_single_piece(self, text_or_bytes: Union[str, bytes]) -> List[int]:
        """tiktoken's ``_encode_single_piece``: the ids of one piece, not split by the pattern
        (the piece itself if it is a token, else plain byte-pair merging; special tokens are
        never produced; a normalizer is not applied)."""
        self._check_bytes(text_or_bytes)
        return encode_single_piece(self, text_or_bytes)  # type: ignore[arg-type]

    def encode_ordinary(self, text: str) -> List[int]:
        """Encode text, treating special tokens' text as plain text.

        >>> tok = Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2", {"<s>": 256})
        >>> tok.encode_ordinary("<s>")
        [60, 115, 62]
        """
        text = _clean_text(text)
        if self._normalizer is not None:
            return self._encode_checked(text, frozenset(), ())[0]
        try:
            return self._core.encode_ordinary(text)
        except UnicodeEncodeError:
            return self._core.encode_ordinary(_fix_surrogates(text))

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        threads: Optional[int] = None,
        num_threads: Optional[int] = None,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: DisallowedSet = "all",
        add_special_tokens: Optional[bool] = None,
    ) -> List[List[int]]:
        """Encode many texts in parallel: ``threads`` native threads, the calling one included
        (``None``: one per core; ``num_threads`` is tiktoken's name for it: pass one of the two,
        ValueError when both are given with different values). The GIL is released except while the calling thread
        allocates the result lists, which it does as the other threads finish ranges of texts.
        ``add_special_tokens`` as in :meth:`encode`; a truncation applies to each text, a
        padding to the batch (see :meth:`enable_padding`)."""
        out = self._encode_batch(texts, threads, num_threads, allowed_special, disallowed_special)
        if self._plain_output(add_special_tokens):
            return out
        return self._finished(out, add_special_tokens)

    def _encode_batch(
        self,
        texts: Sequence[str],
        threads: Optional[int],
        num_threads: Optional[int],
        allowed_special: SpecialSet,
        disallowed_special: DisallowedSet,
    ) -> List[List[int]]:
        texts = self._check_texts(texts)
        allowed, allow_all = self._allowed(allowed_special)
        plan = self._disallowed_plan(allowed_special, disallowed_special)
        n = _threads(threads, num_threads)
        if plan is not None:
            for i in self._may_hold_disallowed(texts, plan, n):
                try:
                    self._find_disallowed(texts[i], plan)
                except DisallowedSpecialError as e:
                    raise DisallowedSpecialError(f"texts[{i}]: {e}") from None
        if self._normalizer is not None:
            return self._normalized_batch(texts, allowed, allow_all, n)
        with _NoGC():
            try:
                return self._core.encode_batch(texts, allowed, allow_all, n)
            except UnicodeEncodeError:
                return self._core.encode_batch(
                    [_fix_surrogates(t) for t in texts], allowed, allow_all, n
                )

    def encode_ordinary_batch(
        self,
        texts: Sequence[str],
        *,
        threads: Optional[int] = None,
        num_threads: Optional[int] = None,
    ) -> List[List[int]]:
        """Encode many texts in parallel, special tokens as plain text."""
        texts = self._check_texts(texts)
        n = _threads(threads, num_threads)
        if self._normalizer is not None:
            return self._normalized_batch(texts, None, False, n)
        with _NoGC():
            try:
                return self._core.encode_batch(texts, None, False, n)
            except UnicodeEncodeError:
                return self._core.encode_batch([_fix_surrogates(t) for t in texts], None, False, n)

    def _normalized_batch(
        self, texts: List[str], allowed: Optional[List[int]], allow_all: bool, n: int
    ) -> List[List[int]]:
        try:
            return self._core.encode_normalized_batch(
                texts, self._normalizer, allowed, allow_all, n
            )
        except UnicodeEncodeError:
            return self._core.encode_normalized_batch(
                [_fix_surrogates(t) for t in texts], self._normalizer, allowed, allow_all, n
            )

    def encode_ordinary_batch_to_numpy(
        self,
        texts: Sequence[str],
        *,
        threads: Optional[int] = None,
        num_threads: Optional[int] = None,
        dtype: Optional[str] = None,
        bos: Optional[int] = None,
        eos: Optional[int] = None,
    ):
        """Encode many texts in parallel (special tokens as plain text) into one numpy array:
        returns ``(ids, offsets)``, text ``i``'s ids being ``ids[offsets[i]:offsets[i+1]]``
        (``offsets``: int64, ``len(texts) + 1`` items, ``offsets[0] == 0``). No Python int is
        made: the ids go from the native encoder (GIL released) straight into the array.

        ``dtype``: ``None`` for the smallest that holds every id (uint16 when they are all below
        65536, else uint32), or ``"uint16"``, ``"uint32"``, ``"int32"``, ``"int64"``.
        ``bos``/``eos``: an id put before/after every text's ids (counted in its offsets).
        ``threads``/``num_threads`` as in :meth:`encode_batch`.

        >>> tok = Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2", {"<s>": 256})
        >>> ids, offsets = tok.encode_ordinary_batch_to_numpy(["hi", "", "<s>"], eos=256)
        >>> ids.tolist(), offsets.tolist(), ids.dtype.name
        ([104, 105, 256, 256, 60, 115, 62, 256], [0, 3, 4, 8], 'uint16')
        """
        texts = self._check_texts(texts)
        n = _threads(threads, num_threads)
        return self._encode_batch_arrays(texts, n, dtype, bos, eos, None)

    def _encode_batch_arrays(
        self,
        texts: List[str],
        threads: int,
        dtype: Optional[str],
        bos: Optional[int],
        eos: Optional[int],
        marks: Optional[bytes],
    ):
        """``encode_ordinary_batch_to_numpy`` with ``marks`` (one byte per text: bit 0 puts
        ``bos`` before it, bit 1 ``eos`` after it; None: both on every text), for
        ``toksmith.tokenize_dataset``, which reads a long document in several pieces."""
        try:
            import numpy as np
        except ImportError:
            raise missing_extra("numpy", "numpy") from None
        bos = _mark_id("bos", bos, self.n_vocab)
        eos = _mark_id("eos", eos, self.n_vocab)
        top = max([self.n_vocab - 1, *(m for m in (bos, eos) if m is not None)])
        name = _array_dtype(dtype, top)
        width = np.dtype(name).itemsize
        if self._normalizer is not None:
            # the native array path does not normalize: the ids of the normalizing batch
            # encoder, with the marks' bos/eos, packed into the arrays
            rows = self._normalized_batch(texts, None, False, threads)
            flat: List[int] = []
            ends = [0]
            for i, row in enumerate(rows):
                mark = 3 if marks is None else marks[i]
                if bos is not None and mark & 1:
                    flat.append(bos)
                flat.extend(row)
                if eos is not None and mark & 2:
                    flat.append(eos)
                ends.append(len(flat))
            return np.array(flat, dtype=name), np.array(ends, dtype=np.int64)
        with _NoGC():
            try:
                buf, offs = self._core.encode_batch_arrays(
                    texts, None, False, threads, width, bos, eos, marks
                )
            except UnicodeEncodeError:
                buf, offs = self._core.encode_batch_arrays(
                    [_fix_surrogates(t) for t in texts],
                    None,
                    False,
                    threads,
                    width,
                    bos,
                    eos,
                    marks,
                )
        # the bytearrays are the arrays' memory (writable, no copy)
        ids = np.frombuffer(buf, dtype=np.dtype(name).newbyteorder("<"))
        offsets = np.frombuffer(offs, dtype="<i8")
        if sys.byteorder != "little":  # pragma: no cover - every platform toksmith ships on
            ids, offsets = ids.astype(name), offsets.astype(np.int64)
        return ids.view(name), offsets.view(np.int64)

    @staticmethod
    def _check_texts(texts: Any) -> List[str]:
        if isinstance(texts, (str, bytes)):
            raise TypeError(
                "texts must be a list of str, not a single str; use encode() for one text"
            )
        texts = list(texts)
        if set(map(type, texts)) - {str}:  # one C loop; the Python one only to name the culprit
            for i, t in enumerate(texts):
                if not isinstance(t, str):
                    raise TypeError(f"texts[{i}] must be str, not {type(t).__name__}")
        return texts

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: DisallowedSet = "all",
        dtype: Optional[str] = None,
        add_special_tokens: Optional[bool] = None,
    ):
        """Encode to a numpy array: uint16 when every id fits (``n_vocab <= 65536``), else
        uint32 (or the ``dtype`` given: "uint16" or "uint32"). ``add_special_tokens`` as in
        :meth:`encode`."""
        try:
            import numpy as np
        except ImportError:
            raise missing_extra("numpy", "numpy") from None
        text = _clean_text(text)
        allowed, allow_all = self._allowed(allowed_special)
        self._check_disallowed(text, allowed_special, disallowed_special)
        try:
            name = None if dtype is None else str(np.dtype(dtype))
        except (TypeError, ValueError, UnicodeError):  # not a dtype at all: a dict, "a\ud800"...
            name = ""
        if dtype is None:
            narrow = self.n_vocab <= 65536
        elif name in ("uint16", "uint32"):
            narrow = name == "uint16"
            if narrow and self.n_vocab > 65536:
                raise ValueError(
                    f"dtype uint16 cannot hold ids up to {self.n_vocab - 1}; use uint32"
                )
        else:
            raise ValueError(f"dtype must be 'uint16' or 'uint32', not {dtype!r}")
        if self._normalizer is not None or (
            self._template is not None and add_special_tokens is not False
        ):
            ids = self._framed(
                self._encode_checked(text, allowed_special, ())[0], add_special_tokens
            )
            return np.array(ids, dtype=np.uint16 if narrow else np.uint32)
        try:
            buf = self._core.encode_to_buffer(text, allowed, allow_all, narrow)
        except UnicodeEncodeError:
            buf = self._core.encode_to_buffer(_fix_surrogates(text), allowed, allow_all, narrow)
        return np.frombuffer(buf, dtype="<u2" if narrow else "<u4").astype(
            np.uint16 if narrow else np.uint32, copy=False
        )

    def encode_single_token(self, text_or_bytes: Union[str, bytes]) -> int:
        """The id of a text or bytes that is exactly one token (special and pinned included)."""
        if isinstance(text_or_bytes, str):
            b = text_or_bytes.encode("utf-8", "surrogatepass")
        elif isinstance(text_or_bytes, (bytes, bytearray)):
            b = bytes(text_or_bytes)
        else:
            raise TypeError(f"expected str or bytes, not {type(text_or_bytes).__name__}")
        if isinstance(text_or_bytes, str) and text_or_bytes in self._special_tokens:
            return self._special_tokens[text_or_bytes]
        try:
            return self._core.encode_single_token(b)
        except UnknownTokenError:  # the core names the bytes as a list of ints
            raise UnknownTokenError(
                f"{text_or_bytes!r} is not a single token of this vocabulary "
                f"(encode() gives the ids of any text)"
            ) from None

    def token_to_id(self, token: Union[str, bytes]) -> int:
        """Same as :meth:`encode_single_token`."""
        return self.encode_single_token(token)

    # ------------------------------------------------------------------ decoding

    def _ids(self, ids: Any) -> List[int]:
        if hasattr(ids, "tolist") and not isinstance(ids, list):
            ids = ids.tolist()
        if isinstance(ids, (str, bytes, bytearray)):
            raise TypeError(
                f"ids must be a sequence of int (a list, a numpy array), not {type(ids).__name__}"
                + (
                    "; to take each byte as an id, pass list(data)"
                    if not isinstance(ids, str)
                    else ""
                )
            )
        return ids

    @staticmethod
    def _plain_ids(ids: Any) -> Optional[List[int]]:
        """A list of ``ids`` with its numpy (or other ``__index__``) integers made ints, to retry
        a call whose core refused it: the core reads a list's items as ints only, and
        ``list(array)`` holds numpy integers. None if that changes nothing or an item is no
        integer (the caller then reports the bad id)."""
        if not isinstance(ids, list) or all(isinstance(i, int) for i in ids):
            return None
        try:
            return [operator.index(i) for i in ids]
        except TypeError:
            return None

    def _bad_id(self, ids: Iterable[Any], error: Optional[Exception] = None) -> Exception:
        """The exception for the first id of ``ids`` that is not a token; when every id is one,
        ``error`` (what the call raised for another reason, e.g. an ``errors=`` handler that
        cannot decode) if given and ``ids`` is a sequence, else a TypeError about ``ids``."""
        for i in ids:
            if not isinstance(i, int) or isinstance(i, bool):
                try:
                    i = operator.index(i)  # bools and numpy integers are ids to the core too
                except TypeError:
                    return TypeError(f"ids must be ints, got {type(i).__name__} ({i!r})")
            if i < 0 or i >= self.n_vocab:
                return UnknownTokenError(
                    f"token id {i} is out of range: valid ids are 0..{self.n_vocab - 1}"
                )
            try:
                self._core.token_bytes(i)
            except UnknownTokenError:
                return UnknownTokenError(f"token id {i} is not used by this vocabulary")
        if error is not None and isinstance(ids, (list, tuple, range)):
            return error
        return TypeError("ids must be a sequence of int")

    def _drop_specials(self, ids: List[int]) -> List[int]:
        """``ids`` without the special tokens' ids (pinned tokens stay: they are text)."""
        specials = self._special_ids
        try:
            if not specials or specials.isdisjoint(ids):  # a C loop: most outputs hold none
                return ids
            # only ids are dropped: 100257.0 equals a special id but is no id (the core reports it)
            return [i for i in ids if i not in specials or not _is_index(i)]
        except TypeError:  # an unhashable item
            raise self._bad_id(ids) from None

    def decode_bytes(self, ids: Sequence[int], *, skip_special_tokens: bool = False) -> bytes:
        """The bytes of a sequence of ids (``skip_special_tokens``: as :meth:`decode`)."""
        ids = self._ids(ids)
        if skip_special_tokens:
            ids = self._drop_specials(ids)
        try:
            return self._core.decode_bytes(ids)
        except (OverflowError, TypeError, UnknownTokenError):
            plain = self._plain_ids(ids)
            if plain is None:
                raise self._bad_id(ids) from None
        return self.decode_bytes(plain)

    def decode(
        self, ids: Sequence[int], errors: str = "replace", *, skip_special_tokens: bool = False
    ) -> str:
        """Decode ids to text; invalid UTF-8 is handled by ``errors`` (as in ``bytes.decode``).
        ``skip_special_tokens=True`` leaves the special tokens out (as Hugging Face's
        ``decode(..., skip_special_tokens=True)``; the bytes around them are joined first, so a
        character split by a special token comes back whole).

        >>> tok = Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2",
        ...                            special_tokens={"<|endoftext|>": 256})
        >>> tok.decode([104, 105, 256])
        'hi<|endoftext|>'
        >>> tok.decode([104, 105, 256], skip_special_tokens=True)
        'hi'
        """
        ids = self._ids(ids)
        if skip_special_tokens:
            ids = self._drop_specials(ids)
        _check_errors(errors)
        try:
            return self._core.decode_str(ids, errors)
        except (OverflowError, TypeError, UnknownTokenError) as e:
            plain = self._plain_ids(ids)
            if plain is None:
                raise self._bad_id(ids, e) from None
        return self.decode(plain, errors)

    def decode_batch(
        self,
        batch: Sequence[Sequence[int]],
        *,
        errors: str = "replace",
        threads: Optional[int] = None,
        num_threads: Optional[int] = None,
        skip_special_tokens: bool = False,
    ) -> List[str]:
        """Decode many id sequences (in parallel); ``skip_special_tokens`` as :meth:`decode`."""
        _check_errors(errors)
        outs = self.decode_bytes_batch(
            batch, threads=threads, num_threads=num_threads, skip_special_tokens=skip_special_tokens
        )
        return [b.decode("utf-8", errors) for b in outs]

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token id."""
        try:
            return self._core.token_bytes(token)
        except (OverflowError, TypeError, UnknownTokenError):
            raise self._bad_id([token]) from None

    def id_to_bytes(self, token: int) -> bytes:
        """Same as :meth:`decode_single_token_bytes`."""
        return self.decode_single_token_bytes(token)

    def decode_tokens_bytes(self, ids: Sequence[int]) -> List[bytes]:
        """The bytes of each id."""
        return [self.decode_single_token_bytes(i) for i in self._ids(ids)]

    def decode_bytes_batch(
        self,
        batch: Sequence[Sequence[int]],
        *,
        threads: Optional[int] = None,
        num_threads: Optional[int] = None,
        skip_special_tokens: bool = False,
    ) -> List[bytes]:
        """The bytes of many id sequences (decoded in parallel, like tiktoken's);
        ``skip_special_tokens`` as :meth:`decode`."""
        if isinstance(batch, (str, bytes, bytearray, memoryview)) or not isinstance(
            batch, Iterable
        ):
            # (None or an int was "'NoneType' object is not iterable", naming no argument)
            raise TypeError(f"batch must be a list of id sequences, not {type(batch).__name__}")
        batch = [self._ids(b) for b in batch]
        for k, ids in enumerate(batch):
            if isinstance(ids, Mapping) or not isinstance(ids, Iterable):
                # (an int in the batch was "'int' object is not iterable", naming no item)
                raise TypeError(
                    f"batch[{k}] must be a sequence of ids (a list of int, a numpy array), "
                    f"not {type(ids).__name__}"
                )
        if skip_special_tokens:
            batch = [self._drop_specials(b) for b in batch]  # type: ignore[arg-type]
        n = _threads(threads, num_threads)
        try:
            return self._core.decode_bytes_batch(batch, n)  # type: ignore[arg-type]
        except (OverflowError, TypeError, UnknownTokenError):
            raise self._bad_id(i for ids in batch for i in ids) from None

    def decode_with_offsets(self, ids: Sequence[int]) -> Tuple[str, List[int]]:
        """Decode ids and give, for each id, the index in the text of the character where its
        bytes begin (tiktoken's ``decode_with_offsets``). A token that begins inside a
        multi-byte character gets that character's index. The bytes must be valid UTF-8
        (``UnicodeDecodeError`` otherwise).

        >>> tok = Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2")
        >>> tok.decode_with_offsets(list("aé".encode()))
        ('aé', [0, 1, 1])
        """
        ids = self._ids(ids)
        if not isinstance(ids, (list, tuple)):  # any iterable of ids, as tiktoken takes
            ids = list(ids)
        text = self.decode_bytes(ids).decode("utf-8")
        try:
            return text, self._core.char_spans(ids, True)
        except TypeError:  # numpy integers in a list: decode_bytes took them, so they are ids
            return text, self._core.char_spans(self._plain_ids(ids), True)  # type: ignore[call-overload]

    def encode_with_offsets(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: DisallowedSet = "all",
        add_special_tokens: Optional[bool] = None,
    ) -> Tuple[List[int], List[Tuple[int, int]]]:
        """Encode like :meth:`encode` and give each id's ``(start, end)`` character span in
        ``text`` (``text[start:end]``), as Hugging Face's ``Encoding.offsets`` does for a
        byte-level BPE (the tokens a :attr:`template` adds span ``(0, 0)``, as there). A token made of part of a multi-byte character spans the whole
        character, so the spans of the tokens of one character overlap.

        >>> tok = Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2")
        >>> tok.encode_with_offsets("hé")
        ([104, 195, 169], [(0, 1), (1, 2), (1, 2)])
        """
        self._no_normalizer("encode_with_offsets")
        ids, fixed = self._encode_checked(text, allowed_special, disallowed_special)
        spans = self._core.char_spans(ids)
        if fixed:
            # these are the ids of the text with its surrogates replaced (a pair by the one
            # character it stands for): map the spans back to the indices of ``text``
            starts = _fixed_char_starts(text)
            spans = [(starts[a], starts[b]) for a, b in spans]
        if self._template is not None and add_special_tokens is not False:
            prefix, suffix = self._template
            ids = self._framed(ids, add_special_tokens)
            spans = [(0, 0)] * len(prefix) + list(spans) + [(0, 0)] * len(suffix)
        return ids, spans

    def stream_decoder(
        self, errors: str = "replace", *, skip_special_tokens: bool = False
    ) -> StreamDecoder:
        """A decoder fed one id at a time that never emits a broken UTF-8 sequence
        (``skip_special_tokens``: special tokens add nothing, as in :meth:`decode`).

        >>> tok = Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2")
        >>> d = tok.stream_decoder()
        >>> [d.push(i) for i in "é!".encode()]
        ['', 'é', '!']
        """
        return StreamDecoder(self, errors=errors, skip_special_tokens=skip_special_tokens)

    # ------------------------------------------------------------------ persistence

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Write the tokenizer as one versioned, human-readable JSON file; a file named
        ``tokenizer.json`` is written in Hugging Face's format (``tokenizers`` and
        ``transformers`` load it with the same ids), or ConversionError if that format cannot
        hold the tokenizer exactly (then save it as e.g. ``tok.json``). A truncation or
        padding is kept only in a ``tokenizer.json``: toksmith's format has no place for it, and
        saving one there raises ValueError (call :meth:`no_truncation` / :meth:`no_padding`
        first, or save as ``tokenizer.json``)."""
        if (
            self._truncation is not None or self._padding is not None
        ) and not _saved.is_huggingface_name(path):
            raise ValueError(
                f"cannot save to {os.fspath(path)!r}: toksmith's format cannot hold this "
                "tokenizer's truncation / padding (from a tokenizer.json); save it as "
                "tokenizer.json, or call tok.no_truncation() / tok.no_padding() first"
            )
        _saved.save(self, path)

    @classmethod
    def load(cls, path: Union[str, os.PathLike]) -> "Tokenizer":
        """Read a file written by :meth:`save` (or any byte-level BPE ``tokenizer.json``)."""
        return Tokenizer.from_spec(_saved.read(path))

    # ---- interop (files/) ----  (thin wrappers; the code lives in toksmith.files)

    def to_tiktoken(self, name: Optional[str] = None):
        """A ``tiktoken.Encoding`` with the same ids (``pip install toksmith[tiktoken]``)."""
        return _tiktoken.to_tiktoken(self, name=name)

    def save_tiktoken(self, path: Union[str, os.PathLike]) -> None:
        """Write the ranks as a ``.tiktoken`` file (no pattern, no special tokens in it)."""
        _tiktoken.save_tiktoken(self, path)

    def to_huggingface(self):
        """A ``tokenizers.Tokenizer`` with the same ids (``pip install toksmith[tokenizers]``)."""
        return _huggingface.to_huggingface(self)

    def save_huggingface(self, directory: Union[str, os.PathLike]) -> None:
        """Write tokenizer.json, tokenizer_config.json and special_tokens_map.json into a folder
        that ``transformers.PreTrainedTokenizerFast.from_pretrained`` loads."""
        _huggingface.save_huggingface(self, directory)

    def save_gpt2_files(self, directory: Union[str, os.PathLike]) -> None:
        """Write GPT-2 style vocab.json + merges.txt into a folder."""
        _gpt2.save_gpt2_files(self, directory)

    # ---- end interop

    # ------------------------------------------------------------------ misc

    def __repr__(self) -> str:
        pat = self._pattern_name or "custom"
        return (
            f"<toksmith.Tokenizer {self.name!r} n_vocab={self.n_vocab} pattern={pat} "
            f"specials={len(self._special_tokens)} pinned={len(self._pinned_tokens)}"
            + (
                f" normalizer={json.loads(self._normalizer_json)['type']}"
                if self._normalizer_json
                else ""
            )
            + ">"
        )

    def __reduce__(self):
        """Pickle support, for handing a tokenizer to worker processes (``multiprocessing``,
        ``concurrent.futures``, ``datasets.map(num_proc=...)``, data-loader workers).

        The pickle holds the tables (ranks, merges, pattern, special and pinned tokens) and the
        name and metadata, not the native core: unpickling runs the constructor, which checks
        them and builds a core. The tables are serialized once per tokenizer, and a process
        that unpickles the same tables again (``executor.map(tok.encode, docs)`` sends the
        tokenizer with every item) reuses the core it built the first time. As with any
        pickle, load only pickles you made yourself; to store or share a tokenizer, write a
        file with :meth:`save` (parsed, never executed).

        >>> import pickle
        >>> tok = Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2", {"<|end|>": 256})
        >>> copy = pickle.loads(pickle.dumps(tok))
        >>> copy.encode("hi<|end|>", allowed_special="all") == tok.encode("hi<|end|>", allowed_special="all")
        True
        """
        tables = self._pickled_tables
        if tables is None:
            tables = marshal.dumps(
                (
                    self.mergeable_ranks(),
                    self._pattern_name or self._pattern,
                    dict(self._special_tokens),
                    dict(self._pinned_tokens),
                    self._merges,
                )
            )
            self._pickled_tables = tables
        state = {"tables": tables, "metadata": self.metadata, "name": self.name}
        if self._normalizer_json is not None:
            state["normalizer"] = self._normalizer_json
        if self._template is not None:
            state["template"] = self.template
        # attributes of a subclass (or set on the instance) go along, as with any pickled object
        extra = {k: v for k, v in self.__dict__.items() if k not in _OWN_ATTRIBUTES}
        if extra:
            state["extra"] = extra
        return (_unpickle, (type(self), state))


#: the attributes a Tokenizer sets itself (the pickle rebuilds them from the tables)
_OWN_ATTRIBUTES = frozenset(
    [
        "_core",
        "_pattern",
        "_pattern_name",
        "_special_tokens",
        "_pinned_tokens",
        "_merges",
        "metadata",
        "name",
        "_allowed_cache",
        "_disallowed_cache",
        "_special_ids",
        "_pickled_tables",
        "_unstable_tables",
        "_normalizer",
        "_normalizer_json",
        "_missing_bytes",
        "_template",
    ]
)


#: tables digest -> a tokenizer built from them, for repeated unpickling in one process
_UNPICKLED: "OrderedDict[bytes, Tokenizer]" = OrderedDict()
_UNPICKLED_MAX = 4
_UNPICKLED_LOCK = threading.Lock()


def _unpickle(cls: type, state: Dict[str, Any]) -> "Tokenizer":
    """Rebuild a pickled :class:`Tokenizer` (or subclass): through the constructor's checks the
    first time its tables are seen in this process, then sharing the core built that time."""
    if (
        not (isinstance(cls, type) and issubclass(cls, Tokenizer))
        or not isinstance(state, dict)
        or not isinstance(state.get("tables"), bytes)
    ):
        raise TypeError("not a pickled toksmith.Tokenizer")
    tables = state["tables"]
    key = hashlib.blake2b(tables, digest_size=20).digest()
    with _UNPICKLED_LOCK:
        proto = _UNPICKLED.get(key)
        if proto is not None:
            _UNPICKLED.move_to_end(key)
    if proto is None:
        try:
            ranks, pattern, specials, pinned, merges = marshal.loads(tables)
        except (EOFError, ValueError, TypeError) as e:
            raise ValueError(
                f"not a pickled toksmith.Tokenizer: its tables do not read back ({e})"
            ) from None
        proto = Tokenizer(
            ranks,
            pattern=_from_file(pattern),
            special_tokens=specials,
            pinned_tokens=pinned,
            merges=merges,
        )
        proto._pickled_tables = tables
        with _UNPICKLED_LOCK:
            _UNPICKLED[key] = proto
            while len(_UNPICKLED) > _UNPICKLED_MAX:
                _UNPICKLED.popitem(last=False)
    tok = cls.__new__(cls)
    # the core and the tables are shared (nothing changes them, and the accessors hand out
    # copies); the name and metadata are this pickle's own
    tok.__dict__.update(proto.__dict__)
    tok.metadata = dict(state.get("metadata") or {})
    tok.name = state.get("name") or "toksmith"
    norm = state.get("normalizer")
    tok._normalizer_json, tok._normalizer = _normalizer_of(
        json.loads(norm) if isinstance(norm, str) else None
    )
    tok._template = _template_of(state.get("template"), tok._core)
    extra = state.get("extra")
    if isinstance(extra, dict):
        tok.__dict__.update({k: v for k, v in extra.items() if k not in _OWN_ATTRIBUTES})
    return tok


__all__ = ["Tokenizer"]
