"""Tokenizers that are not byte-level BPE: SentencePiece (BPE with byte fallback, Unigram),
Hugging Face Unigram / WordPiece / character-BPE ``tokenizer.json`` files and WordPiece
folders, run by the native core (normalizer, added tokens, pre-tokenizer, model, decoder).

Ids and decoded text are those of the file's own library: ``sentencepiece``'s
``encode``/``decode``, ``tokenizers``' ``encode``/``decode(skip_special_tokens=False)``,
``transformers``' BERT tokenizer for a WordPiece folder. Build one with
:func:`toksmith.load_any`. The API is :class:`toksmith.Tokenizer`'s where it applies: a
post-processor's tokens (:attr:`PipelineTokenizer.template`: a ``tokenizer.json``'s
``TemplateProcessing``/``BertProcessing``, BERT's ``[CLS]``/``[SEP]`` for a WordPiece folder)
are added unless ``add_special_tokens=False``, and a ``tokenizer.json``'s ``truncation`` and
``padding`` are applied by :meth:`PipelineTokenizer.encode` and
:meth:`PipelineTokenizer.encode_batch` as ``tokenizers`` applies them (see
:mod:`toksmith._lengths`; ``no_truncation()`` / ``no_padding()`` turn them off).
:meth:`PipelineTokenizer.save_huggingface` writes a ``tokenizer.json`` that ``tokenizers``
loads with the same ids.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Tuple, Union

from . import _core, _lengths
from ._args import array_dtype, as_id, fix_surrogates, mark_id, threads_arg
from ._jsontables import split_json_tables
from ._lengths import LengthSettings
from .errors import (
    ConversionError,
    DisallowedSpecialError,
    TokenizerFileError,
    UnknownTokenError,
    VocabError,
    missing_extra,
)
from .files import clip as _clip
from .files import pipeline_files as _pipeline_files
from .files.huggingface import _post_template, read_padding, read_truncation
from .files.pipeline_files import PipelineSource
from .spec import Padding, Truncation

#: a truncation, padding or post-processor that is not null (a vocab entry named so also
#: matches: then the document is parsed to tell)
_DOC_KEYS = re.compile(r'"(?:truncation|padding|post_processor)"\s*:\s*(?!null)')

#: what ``allowed_special``/``disallowed_special`` take: ``"all"`` or a collection of strings
SpecialSet = Union[str, FrozenSet[str], Sequence[str], set]


def _fixed_char_starts(text: str) -> List[int]:
    """For each character of ``fix_surrogates(text)`` (and its end), its index in ``text``: a
    surrogate pair is one character there."""
    starts = []
    i, n = 0, len(text)
    while i < n:
        starts.append(i)
        pair = "\ud800" <= text[i] <= "\udbff" and i + 1 < n and "\udc00" <= text[i + 1] <= "\udfff"
        i += 2 if pair else 1
    starts.append(n)
    return starts


class PipelineTokenizer(LengthSettings):
    """A SentencePiece, Unigram, WordPiece or character-BPE tokenizer.

    Special tokens in the text: ``special`` in :meth:`encode` (``True``: all become their ids,
    ``False``: all are plain text, ``None``: what the file's library does, ``sentencepiece``
    never, ``tokenizers`` and ``transformers`` always), or tiktoken's ``allowed_special`` /
    ``disallowed_special`` as :meth:`toksmith.Tokenizer.encode` takes them (a disallowed special
    token in the text raises :class:`toksmith.DisallowedSpecialError`). Non-special added tokens
    are always matched.
    """

    _template: Optional[Tuple[List[int], List[int]]] = None
    _source: Optional[PipelineSource] = None

    def __init__(self, core: _core.Pipeline, name: str = "") -> None:
        self._core = core
        self.name = name

    @classmethod
    def from_source(cls, source: PipelineSource) -> "PipelineTokenizer":
        """Build the tokenizer of a file read by :mod:`toksmith.files.pipeline_files`; a file the
        core cannot read raises :class:`toksmith.TokenizerFileError` naming it (for a bad
        ``.model`` file, with the byte offset)."""
        try:
            if source.kind == "sentencepiece":
                assert isinstance(source.data, bytes)
                core = _core.Pipeline.from_spm_model(source.data)
            elif source.kind == "hf_json":
                assert isinstance(source.data, str)
                core = _core.Pipeline.from_hf_json(source.data)
            elif source.kind == "clip":
                core = _clip.clip_pipeline(source)
            elif source.kind == "wordpiece":
                assert isinstance(source.data, str)
                core = _core.Pipeline.from_wordpiece_vocab(
                    source.data,
                    source.option("unk_token", "[UNK]"),
                    list(source.option("special", ())),
                    source.option("lowercase", True),
                    source.option("strip_accents"),
                    source.option("handle_chinese_chars", True),
                )
            else:
                raise ValueError(f"unknown pipeline source kind {source.kind!r}")
        except VocabError as e:
            raise TokenizerFileError(f"{source.where}: {e}") from None
        tok = cls(core, source.where)
        tok._source = source
        if source.kind == "hf_json" and _DOC_KEYS.search(str(source.data)):
            # the core has read it: valid JSON; without the model's tables where the native
            # split takes it (a CLIP file's vocab and merges are most of its text)
            got = split_json_tables(str(source.data).encode("utf-8"), "huggingface")
            doc = got[0] if got is not None else json.loads(source.data)
            if isinstance(doc, dict):
                tok._truncation = read_truncation(doc.get("truncation"), source.where)
                tok._padding = read_padding(doc.get("padding"), source.where)
                try:
                    tok._template = _post_template(doc.get("post_processor"), source.where)
                except ConversionError as e:
                    raise TokenizerFileError(str(e)) from None
        elif source.kind == "wordpiece":
            # transformers' BertTokenizer puts [CLS] before and [SEP] after the text
            added = tok.added_tokens
            cls_t, sep_t = source.option("cls_token"), source.option("sep_token")
            if cls_t in added and sep_t in added:
                tok._template = ([added[cls_t]], [added[sep_t]])
        if tok._template is not None:
            for i in tok._template[0] + tok._template[1]:
                if i >= tok.n_vocab:
                    raise TokenizerFileError(
                        f"{source.where}: the post-processor adds id {i}, which is not in the "
                        f"vocabulary (n_vocab {tok.n_vocab})"
                    )
        return tok

    # ------------------------------------------------------------------ description

    @property
    def model_kind(self) -> str:
        """``"bpe"``, ``"unigram"`` or ``"wordpiece"``."""
        return self._core.model_kind

    @property
    def source_kind(self) -> Optional[str]:
        """The kind of file it was read from: ``"sentencepiece"``, ``"hf_json"``,
        ``"wordpiece"`` or ``"clip"`` (CLIP's ``vocab.json`` + ``merges.txt``; None when built
        otherwise)."""
        return None if self._source is None else self._source.kind

    @property
    def n_vocab(self) -> int:
        """One more than the largest id."""
        return self._core.n_vocab

    @property
    def vocab_size(self) -> int:
        """Same as :attr:`n_vocab` (``transformers``' name)."""
        return self.n_vocab

    @property
    def special_tokens(self) -> Dict[str, int]:
        """The special tokens (text -> id): SentencePiece control pieces, the ``special`` added
        tokens of a ``tokenizer.json``, BERT's ``[CLS]``, ``[SEP]``...."""
        return {t: i for t, i, special in self._core.added_tokens() if special}

    @property
    def special_tokens_set(self) -> set:
        return set(self.special_tokens)

    @property
    def added_tokens(self) -> Dict[str, int]:
        """Every added token (text -> id), special or not."""
        return {t: i for t, i, _ in self._core.added_tokens()}

    @property
    def pinned_tokens(self) -> Dict[str, int]:
        """The added tokens that are not special (always matched in the text), as
        :attr:`toksmith.Tokenizer.pinned_tokens`."""
        return {t: i for t, i, special in self._core.added_tokens() if not special}

    @property
    def template(self) -> Optional[Tuple[List[int], List[int]]]:
        """The ids a post-processor puts before and after the ids of a text, as ``(prefix,
        suffix)`` (T5's ``tokenizer.json``: ``([], [1])``, its ``</s>``; BERT: ``([101],
        [102])``), or None. :meth:`encode` adds them unless ``add_special_tokens=False``."""
        if self._template is None:
            return None
        return list(self._template[0]), list(self._template[1])

    def id_to_token(self, id: int) -> Optional[str]:
        """The token string of an id (a piece, ``##ing``, ``<0x0A>``), or None."""
        i = as_id(id)
        if i is None:
            raise TypeError(f"id must be a token id (an int), not {id!r}")
        return self._core.id_to_token(i)

    def token_to_id(self, token: str) -> Optional[int]:
        """The id of a token string (an added token or a vocabulary entry), or None."""
        if not isinstance(token, str):
            raise TypeError(f"token must be a str, not {type(token).__name__}")
        return self._vocab().get(token)

    def _vocab(self) -> Dict[str, int]:
        vocab = self.__dict__.get("_vocab_cache")
        if vocab is None:
            vocab = {}
            for i in range(self.n_vocab):
                t = self._core.id_to_token(i)
                if t is not None:
                    vocab.setdefault(t, i)
            self.__dict__["_vocab_cache"] = vocab
        return vocab

    def get_vocab(self) -> Dict[str, int]:
        """Every token string -> its id (``tokenizers``' ``get_vocab``)."""
        return dict(self._vocab())

    def is_special_token(self, token: int) -> bool:
        return token in self._special_ids()

    def _special_ids(self) -> FrozenSet[int]:
        ids = self.__dict__.get("_special_id_cache")
        if ids is None:
            ids = frozenset(self.special_tokens.values())
            self.__dict__["_special_id_cache"] = ids
        return ids

    # ------------------------------------------------------------------ special tokens

    def _allowed_ids(
        self,
        special: Optional[bool],
        allowed_special: Optional[SpecialSet],
        disallowed_special: Optional[SpecialSet],
    ) -> Tuple[Optional[List[int]], Optional["re.Pattern[str]"]]:
        """(the special token ids matched in the text, None for all of them; a regex finding
        the disallowed special tokens, or None) for the arguments of :meth:`encode`."""
        tiktoken_style = allowed_special is not None or disallowed_special is not None
        if special is not None:
            if not isinstance(special, bool):
                raise TypeError(
                    f"special must be True, False or None, not {type(special).__name__}"
                )
            if tiktoken_style:
                raise TypeError("pass special= or allowed_special=/disallowed_special=, not both")
            return (None if special else []), None
        if not tiktoken_style:
            return (None if self._core.matches_special_by_default else []), None
        specials = self.special_tokens
        if allowed_special is None:
            allowed_special = frozenset()
        if disallowed_special is None:
            disallowed_special = "all"
        if allowed_special == "all":
            allowed: Optional[List[int]] = None
            allowed_names = set(specials)
        else:
            if isinstance(allowed_special, str):
                raise TypeError(
                    f"allowed_special must be 'all' or a set of special token strings, not "
                    f"{allowed_special!r}; for one token pass {{{allowed_special!r}}}"
                )
            allowed_names = set(allowed_special)
            for name in allowed_names:
                if name not in specials:
                    raise ValueError(
                        f"allowed_special names {name!r}, which is not a special token of this "
                        f"tokenizer (its special tokens: {sorted(specials)})"
                    )
            allowed = [specials[n] for n in allowed_names]
        if disallowed_special == "all":
            banned = [t for t in specials if t not in allowed_names]
        elif isinstance(disallowed_special, str):
            raise TypeError(
                "disallowed_special must be 'all' or a collection of special token strings"
            )
        else:
            banned = list(disallowed_special)
            for t in banned:
                if not isinstance(t, str) or not t:
                    raise ValueError(f"disallowed_special must hold non-empty strings, not {t!r}")
        rx = None
        if banned:
            rx = re.compile("|".join(map(re.escape, sorted(banned, key=len, reverse=True))))
        return allowed, rx

    @staticmethod
    def _check_disallowed(text: str, rx: Optional["re.Pattern[str]"]) -> None:
        if rx is None:
            return
        m = rx.search(text)
        if m is not None:
            token = m.group()
            raise DisallowedSpecialError(
                f"the text contains the special token {token!r} (at character {m.start()}), "
                f"which this call does not allow. To encode it as the special token, pass "
                f"allowed_special={{{token!r}}} (or allowed_special='all', or special=True); "
                f"to encode it as plain text, pass disallowed_special=() (or special=False)."
            )

    # ------------------------------------------------------------------ encoding

    @staticmethod
    def _check_text(text: Any) -> str:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        return text

    @staticmethod
    def _check_texts(texts: Any) -> List[str]:
        if isinstance(texts, (str, bytes)):
            raise TypeError(
                "texts must be a list of str, not a single str; use encode() for one text"
            )
        texts = list(texts)
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise TypeError(f"texts[{i}] must be str, not {type(t).__name__}")
        return texts

    def _encode_ids(self, text: str, allowed: Optional[List[int]]) -> List[int]:
        try:
            return self._core.encode_allowing(text, allowed)
        except UnicodeEncodeError:  # lone surrogates: U+FFFD, as tiktoken and Tokenizer do
            return self._core.encode_allowing(fix_surrogates(text), allowed)

    def _encode_many(self, texts: List[str], allowed: Optional[List[int]], n: int):
        try:
            return self._core.encode_batch_allowing(texts, allowed, n)
        except UnicodeEncodeError:
            return self._core.encode_batch_allowing([fix_surrogates(t) for t in texts], allowed, n)

    def _check_add(self, add_special_tokens: Optional[bool]) -> bool:
        """Whether the template's tokens go around the ids."""
        if add_special_tokens is not None and not isinstance(add_special_tokens, bool):
            raise TypeError(
                "add_special_tokens must be True, False or None, not "
                f"{type(add_special_tokens).__name__}"
            )
        return self._template is not None and add_special_tokens is not False

    def _framed(self, ids: List[int]) -> List[int]:
        assert self._template is not None
        prefix, suffix = self._template
        return [*prefix, *ids, *suffix]

    def _finished(self, batch: List[List[int]], add: bool) -> List[List[int]]:
        """The ids of a batch as ``tokenizers`` post-processes them: truncated to leave room
        for the template's tokens (when they are added), framed by them, then padded."""
        if not add:
            return self._apply_lengths(batch)
        assert self._template is not None
        prefix, suffix = self._template
        return _lengths.apply(
            batch,
            self._truncation,
            self._padding,
            added=len(prefix) + len(suffix),
            frame=self._framed,
        )

    def encode(
        self,
        text: str,
        *,
        special: Optional[bool] = None,
        allowed_special: Optional[SpecialSet] = None,
        disallowed_special: Optional[SpecialSet] = None,
        add_special_tokens: Optional[bool] = None,
    ) -> List[int]:
        """Text -> ids. Special tokens in the text: see the class docstring. The
        :attr:`template`'s tokens are added unless ``add_special_tokens=False`` (as
        ``tokenizers`` and ``transformers`` do); truncation and padding as
        :meth:`toksmith.Tokenizer.encode`."""
        text = self._check_text(text)
        allowed, rx = self._allowed_ids(special, allowed_special, disallowed_special)
        self._check_disallowed(text, rx)
        ids = self._encode_ids(text, allowed)
        add = self._check_add(add_special_tokens)
        if not add and self._truncation is None and self._padding is None:
            return ids
        return self._finished([ids], add)[0]

    def encode_with_offsets(
        self,
        text: str,
        *,
        special: Optional[bool] = None,
        allowed_special: Optional[SpecialSet] = None,
        disallowed_special: Optional[SpecialSet] = None,
        add_special_tokens: Optional[bool] = None,
    ) -> Tuple[List[int], List[Tuple[int, int]]]:
        """Encode like :meth:`encode` (without truncation and padding) and give each id's
        ``(start, end)`` character span in ``text``, as ``tokenizers``' ``Encoding.offsets``:
        the normalized text is aligned to ``text`` (a ``Metaspace`` ``▁`` or a BERT
        ``[UNK]`` spans the characters it stands for; the tokens a :attr:`template` adds span
        ``(0, 0)``). Tokens made of part of a character (byte fallback) span the whole
        character. A run of text that a normalizer does not change piecewise (rare: characters
        that compose with their neighbours) is aligned as a whole: its tokens span all of it.

        >>> import toksmith  # doctest: +SKIP
        >>> bert.encode_with_offsets("Hello, world")  # doctest: +SKIP
        ([101, 7592, 1010, 2088, 102], [(0, 0), (0, 5), (5, 6), (7, 12), (0, 0)])
        """
        text = self._check_text(text)
        allowed, rx = self._allowed_ids(special, allowed_special, disallowed_special)
        self._check_disallowed(text, rx)
        try:
            ids, spans = self._core.encode_with_offsets(text, allowed)
        except UnicodeEncodeError:
            ids, spans = self._core.encode_with_offsets(fix_surrogates(text), allowed)
            starts = _fixed_char_starts(text)
            spans = [(starts[a], starts[b]) for a, b in spans]
        if self._check_add(add_special_tokens):
            assert self._template is not None
            prefix, suffix = self._template
            ids = [*prefix, *ids, *suffix]
            spans = [(0, 0)] * len(prefix) + spans + [(0, 0)] * len(suffix)
        return ids, spans

    def encode_ordinary(self, text: str) -> List[int]:
        """The ids of the text alone, special tokens as plain text (tiktoken's
        ``encode_ordinary``): no template, truncation or padding."""
        return self._encode_ids(self._check_text(text), [])

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        special: Optional[bool] = None,
        threads: Optional[int] = None,
        num_threads: Optional[int] = None,
        allowed_special: Optional[SpecialSet] = None,
        disallowed_special: Optional[SpecialSet] = None,
        add_special_tokens: Optional[bool] = None,
    ) -> List[List[int]]:
        """:meth:`encode` of each text, in parallel (``threads``: as
        :meth:`toksmith.Tokenizer.encode_batch`); a padding applies to the batch."""
        texts = self._check_texts(texts)
        allowed, rx = self._allowed_ids(special, allowed_special, disallowed_special)
        if rx is not None:
            for i, t in enumerate(texts):
                try:
                    self._check_disallowed(t, rx)
                except DisallowedSpecialError as e:
                    raise DisallowedSpecialError(f"texts[{i}]: {e}") from None
        n = threads_arg(threads, num_threads)
        batch = self._encode_many(texts, allowed, n)
        return self._finished(batch, self._check_add(add_special_tokens))

    def encode_ordinary_batch(
        self,
        texts: Sequence[str],
        *,
        threads: Optional[int] = None,
        num_threads: Optional[int] = None,
    ) -> List[List[int]]:
        """:meth:`encode_ordinary` of each text, in parallel."""
        texts = self._check_texts(texts)
        return self._encode_many(texts, [], threads_arg(threads, num_threads))

    def _dtype(self, dtype: Any, top: int) -> str:
        try:
            import numpy  # noqa: F401
        except ImportError:
            raise missing_extra("numpy", "numpy") from None
        return array_dtype(dtype, top)

    def encode_to_numpy(
        self,
        text: str,
        *,
        special: Optional[bool] = None,
        allowed_special: Optional[SpecialSet] = None,
        disallowed_special: Optional[SpecialSet] = None,
        dtype: Optional[str] = None,
        add_special_tokens: Optional[bool] = None,
    ):
        """:meth:`encode` into a numpy array (uint16 when every id fits, else uint32, or the
        ``dtype`` given)."""
        import numpy as np

        name = self._dtype(dtype, self.n_vocab - 1)
        ids = self.encode(
            text,
            special=special,
            allowed_special=allowed_special,
            disallowed_special=disallowed_special,
            add_special_tokens=add_special_tokens,
        )
        return np.array(ids, dtype=name)

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
        """:meth:`toksmith.Tokenizer.encode_ordinary_batch_to_numpy`: ``(ids, offsets)``, text
        ``i``'s ids being ``ids[offsets[i]:offsets[i+1]]``; ``bos``/``eos`` put before/after
        every text's ids."""
        import numpy as np

        marks = [mark_id("bos", bos, self.n_vocab), mark_id("eos", eos, self.n_vocab)]
        name = self._dtype(dtype, self.n_vocab - 1)
        rows = self.encode_ordinary_batch(texts, threads=threads, num_threads=num_threads)
        head = [] if marks[0] is None else [marks[0]]
        tail = [] if marks[1] is None else [marks[1]]
        ends = np.zeros(len(rows) + 1, dtype=np.int64)
        if rows:
            ends[1:] = np.cumsum([len(r) + len(head) + len(tail) for r in rows])
        flat: List[int] = []
        for r in rows:
            flat += head
            flat += r
            flat += tail
        return np.array(flat, dtype=name), ends

    # ------------------------------------------------------------------ decoding

    def _ids(self, ids: Any) -> List[int]:
        if isinstance(ids, (str, bytes, bytearray)):
            raise TypeError(f"ids must be a sequence of token ids, not {type(ids).__name__}")
        out = []
        for v in ids:
            i = as_id(v)
            if i is None:
                raise (
                    UnknownTokenError(
                        f"{v!r} is not a token id of this tokenizer (ids are ints in "
                        f"0..{self.n_vocab - 1})"
                    )
                    if isinstance(v, int)
                    else TypeError(f"ids must be ints, not {v!r}")
                )
            out.append(i)
        return out

    def _kept(self, ids: List[int], skip_special_tokens: bool) -> List[int]:
        if not isinstance(skip_special_tokens, bool):
            raise TypeError(
                f"skip_special_tokens must be True or False, not {type(skip_special_tokens).__name__}"
            )
        if not skip_special_tokens:
            return ids
        special = self._special_ids()
        return [i for i in ids if i not in special]

    def _plain(self, ids: Any) -> List[int]:
        """``ids`` as a list for the core: checked one by one only when the core refuses them
        (a clear message naming the bad id)."""
        if isinstance(ids, (str, bytes, bytearray)):
            raise TypeError(f"ids must be a sequence of token ids, not {type(ids).__name__}")
        out = list(ids)
        if all(type(i) is int for i in out):
            return out
        return self._ids(out)

    def decode(self, ids: Sequence[int], *, skip_special_tokens: bool = False) -> str:
        """Ids -> text as the file's library decodes them (``skip_special_tokens``: special
        tokens left out first, as ``tokenizers``' ``decode(skip_special_tokens=True)``)."""
        ids = self._kept(self._plain(ids), skip_special_tokens)
        try:
            return self._core.decode(ids)
        except OverflowError:  # a negative id or one past 2**32
            self._ids(ids)
            raise

    def decode_bytes(self, ids: Sequence[int], *, skip_special_tokens: bool = False) -> bytes:
        """:meth:`decode` as UTF-8 bytes."""
        return self.decode(ids, skip_special_tokens=skip_special_tokens).encode("utf-8")

    def decode_batch(
        self,
        batch: Sequence[Sequence[int]],
        *,
        threads: Optional[int] = None,
        num_threads: Optional[int] = None,
        skip_special_tokens: bool = False,
    ) -> List[str]:
        """:meth:`decode` of each id sequence, in parallel."""
        if isinstance(batch, (str, bytes, bytearray)):
            raise TypeError(f"batch must be a list of id sequences, not {type(batch).__name__}")
        n = threads_arg(threads, num_threads)
        rows = [self._kept(self._plain(ids), skip_special_tokens) for ids in batch]
        return self._core.decode_batch(rows, n)

    def stream_decoder(self, *, skip_special_tokens: bool = False) -> "PipelineStreamDecoder":
        """A decoder fed one id at a time (see :class:`PipelineStreamDecoder`)."""
        return PipelineStreamDecoder(self, skip_special_tokens=skip_special_tokens)

    # ------------------------------------------------------------------ export

    def to_huggingface_json(self) -> Dict[str, Any]:
        """The ``tokenizer.json`` document of this tokenizer (see
        :func:`toksmith.files.pipeline_files.pipeline_tokenizer_json`)."""
        if self._source is None:
            raise ConversionError("this tokenizer was not read from a file: nothing to export")
        source = self._source
        if source.kind == "clip":  # CLIP's vocab.json + merges.txt: their tokenizer.json
            source = _clip.clip_json_source(source)
        return _pipeline_files.pipeline_tokenizer_json(
            source,
            self.special_tokens,
            self._template,
            self._truncation,
            self._padding,
            self._spm_info() if self._source.kind == "sentencepiece" else None,
        )

    def _spm_info(self):
        assert self._source is not None and isinstance(self._source.data, bytes)
        try:
            return _core.Pipeline.spm_model_info(self._source.data)
        except VocabError as e:  # the core read it once already
            raise TokenizerFileError(f"{self._source.where}: {e}") from None

    def to_huggingface(self):
        """A ``tokenizers.Tokenizer`` giving the same ids (``pip install tokenizers``)."""
        try:
            import tokenizers
        except ImportError:
            raise missing_extra("tokenizers", "tokenizers") from None
        return tokenizers.Tokenizer.from_str(
            json.dumps(self.to_huggingface_json(), ensure_ascii=False)
        )

    def save_huggingface(self, directory: Union[str, "os.PathLike[str]"]) -> None:
        """Write ``tokenizer.json``, ``tokenizer_config.json`` and ``special_tokens_map.json``
        into ``directory`` (created if needed), for ``tokenizers.Tokenizer.from_file`` and
        ``transformers.PreTrainedTokenizerFast.from_pretrained``: the same ids as :meth:`encode`
        with ``special=True`` (``tokenizers`` always matches special tokens in the text), and
        for a ``tokenizer.json`` or WordPiece folder the same template. A SentencePiece model
        is written as ``transformers`` converts it, its normalizer spelled out with
        ``tokenizers``' parts and its BPE merges in score order; no template (sentencepiece
        adds no ``<s>``). One thing the format cannot say: a Hugging Face Unigram model
        matches the text of its unknown piece (``<unk>`` written in the text) as that piece,
        which sentencepiece never does. A model that the format cannot hold at all
        (user-defined pieces, whitespace as a suffix) raises :class:`ConversionError`."""
        _pipeline_files.save_pipeline_huggingface(self.to_huggingface_json(), directory)

    def __reduce__(self):
        """Pickled as the file it was read from (and its name, truncation and padding), so
        that it goes to worker processes (``multiprocessing``, ``datasets.map``)."""
        if self._source is None:
            raise TypeError("a PipelineTokenizer not read from a file cannot be pickled")
        return (_rebuild, (self._source, self.name, self._truncation, self._padding))

    def __repr__(self) -> str:
        return (
            f"<PipelineTokenizer {self.model_kind} n_vocab={self.n_vocab}"
            f"{' ' + repr(self.name) if self.name else ''}>"
        )


def _rebuild(
    source: PipelineSource,
    name: str,
    truncation: Optional[Truncation],
    padding: Optional[Padding],
) -> PipelineTokenizer:
    tok = PipelineTokenizer.from_source(source)
    tok.name = name
    tok._truncation, tok._padding = truncation, padding
    return tok


class PipelineStreamDecoder:
    """Decode ids one at a time: ``push(id)`` returns the text the id completes (``""`` while
    a character is split across byte-fallback tokens, or a decoder still waits);
    ``flush()`` returns what is left. The concatenation of the pushes and the flush equals
    ``tok.decode(ids)`` for the ids pushed.

    It decodes a short window of the last ids and emits what the newest id adds to the text
    of the window before it (``tokenizers``' ``DecodeStream`` does the same), so that a
    decoder's handling of the first token (the space a ``Metaspace`` or SentencePiece decoder
    drops) applies once.
    """

    def __init__(self, tok: PipelineTokenizer, *, skip_special_tokens: bool = False) -> None:
        if not isinstance(tok, PipelineTokenizer):
            raise TypeError(f"tok must be a PipelineTokenizer, not {type(tok).__name__}")
        if not isinstance(skip_special_tokens, bool):
            raise TypeError("skip_special_tokens must be True or False")
        self._tok = tok
        self._skip = tok._special_ids() if skip_special_tokens else frozenset()
        self.reset()

    def reset(self) -> None:
        """Start again, as a new decoder."""
        self._window: List[int] = []  # the ids of the window
        self._prefix = ""  # the text of the window's ids before the pending ones
        self._read = 0  # the ids of the window that _prefix covers
        self._started = False

    def push(self, token: int) -> str:
        """The text completed by ``token``."""
        i = self._tok._ids([token])[0]
        if i in self._skip:
            return ""
        if i >= self._tok.n_vocab:
            raise UnknownTokenError(
                f"{token!r} is not a token id of this tokenizer (ids are ints in "
                f"0..{self._tok.n_vocab - 1})"
            )
        self._window.append(i)
        text = self._tok._core.decode(self._window)
        if (
            len(text) <= len(self._prefix)
            or text.endswith("\ufffd")
            or not text.startswith(self._prefix)
        ):
            return ""
        new = text[len(self._prefix) :]
        # the next window starts at the ids the text so far ends with
        self._window = self._window[self._read :]
        self._prefix = self._tok._core.decode(self._window)
        self._read = len(self._window)
        return new

    def push_many(self, tokens: Sequence[int]) -> str:
        """The text completed by ``tokens``, pushed one after the other."""
        if isinstance(tokens, (str, bytes, bytearray)):
            raise TypeError(f"push_many needs a sequence of ids, not {type(tokens).__name__}")
        return "".join([self.push(t) for t in tokens])

    def flush(self) -> str:
        """What is left; the decoder is then empty."""
        text = self._tok._core.decode(self._window) if self._window else ""
        out = text[len(self._prefix) :] if text.startswith(self._prefix) else ""
        self.reset()
        return out


__all__ = ["PipelineStreamDecoder", "PipelineTokenizer"]
