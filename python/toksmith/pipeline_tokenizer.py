"""Tokenizers that are not byte-level BPE: SentencePiece (BPE with byte fallback, Unigram),
Hugging Face Unigram / WordPiece / character-BPE ``tokenizer.json`` files and WordPiece
folders, run by the native core (normalizer, added tokens, pre-tokenizer, model, decoder).

Ids and decoded text are those of the file's own library: ``sentencepiece``'s
``encode``/``decode``, ``tokenizers``' ``encode(add_special_tokens=False)``/
``decode(skip_special_tokens=False)``. Build one with :func:`toksmith.load_any`. A
``tokenizer.json``'s ``truncation`` and ``padding`` are applied by :meth:`PipelineTokenizer.encode`
and :meth:`PipelineTokenizer.encode_batch` as ``tokenizers`` applies them with
``add_special_tokens=False`` (see :mod:`toksmith._lengths`; ``no_truncation()`` /
``no_padding()`` turn them off).
"""

from __future__ import annotations

import json
import re
from typing import Dict, List, Optional, Sequence

from . import _core
from ._args import fix_surrogates, threads_arg
from ._lengths import LengthSettings
from .errors import TokenizerFileError, VocabError
from .files.huggingface import read_padding, read_truncation
from .files.pipeline_files import PipelineSource

#: a truncation or padding that is not null (a vocab entry named so also matches: then the
#: document is parsed to tell)
_LENGTH_KEYS = re.compile(r'"(?:truncation|padding)"\s*:\s*(?!null)')


class PipelineTokenizer(LengthSettings):
    """A SentencePiece, Unigram, WordPiece or character-BPE tokenizer.

    ``special`` in :meth:`encode`: whether special tokens written in the text become their ids;
    ``None`` does what the file's library does (``sentencepiece``: never, ``tokenizers``:
    always). Non-special added tokens are always matched.
    """

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
        if source.kind == "hf_json" and _LENGTH_KEYS.search(str(source.data)):
            doc = json.loads(source.data)  # the core has read it: valid JSON
            if isinstance(doc, dict):
                tok._truncation = read_truncation(doc.get("truncation"), source.where)
                tok._padding = read_padding(doc.get("padding"), source.where)
        return tok

    @property
    def model_kind(self) -> str:
        """``"bpe"``, ``"unigram"`` or ``"wordpiece"``."""
        return self._core.model_kind

    @property
    def n_vocab(self) -> int:
        """One more than the largest id."""
        return self._core.n_vocab

    @property
    def special_tokens(self) -> Dict[str, int]:
        """The special tokens (text -> id): SentencePiece control pieces, the ``special`` added
        tokens of a ``tokenizer.json``, BERT's ``[CLS]``, ``[SEP]``...."""
        return {t: i for t, i, special in self._core.added_tokens() if special}

    @property
    def added_tokens(self) -> Dict[str, int]:
        """Every added token (text -> id), special or not."""
        return {t: i for t, i, _ in self._core.added_tokens()}

    def id_to_token(self, id: int) -> Optional[str]:
        """The token string of an id (a piece, ``##ing``, ``<0x0A>``), or None."""
        return self._core.id_to_token(id)

    def _special(self, special: Optional[bool]) -> bool:
        if special is None:
            return self._core.matches_special_by_default
        if not isinstance(special, bool):
            raise TypeError(f"special must be True, False or None, not {type(special).__name__}")
        return special

    def encode(self, text: str, *, special: Optional[bool] = None) -> List[int]:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        try:
            ids = self._core.encode(text, self._special(special))
        except UnicodeEncodeError:  # lone surrogates: U+FFFD, as tiktoken and Tokenizer do
            ids = self._core.encode(fix_surrogates(text), self._special(special))
        if self._truncation is None and self._padding is None:
            return ids
        return self._apply_lengths([ids])[0]

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        special: Optional[bool] = None,
        threads: Optional[int] = None,
        num_threads: Optional[int] = None,
    ) -> List[List[int]]:
        """:meth:`encode` of each text, in parallel (``threads``: as
        :meth:`toksmith.Tokenizer.encode_batch`)."""
        if isinstance(texts, str):
            raise TypeError("encode_batch takes a list of texts, not one str")
        texts = list(texts)
        for t in texts:
            if not isinstance(t, str):
                raise TypeError(f"texts must be str, not {type(t).__name__}")
        n = threads_arg(threads, num_threads)
        sp = self._special(special)
        try:
            batch = self._core.encode_batch(texts, sp, n)
        except UnicodeEncodeError:
            batch = self._core.encode_batch([fix_surrogates(t) for t in texts], sp, n)
        return self._apply_lengths(batch)

    def decode(self, ids: Sequence[int]) -> str:
        return self._core.decode(list(ids))

    def decode_batch(
        self,
        batch: Sequence[Sequence[int]],
        *,
        threads: Optional[int] = None,
        num_threads: Optional[int] = None,
    ) -> List[str]:
        n = threads_arg(threads, num_threads)
        return self._core.decode_batch([list(ids) for ids in batch], n)

    def __repr__(self) -> str:
        return (
            f"<PipelineTokenizer {self.model_kind} n_vocab={self.n_vocab}"
            f"{' ' + repr(self.name) if self.name else ''}>"
        )


__all__ = ["PipelineTokenizer"]
