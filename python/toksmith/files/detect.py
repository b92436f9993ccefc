"""Which tokenizer file format a file (or folder) is: :func:`detect_format` names it, and
:func:`toksmith.load_any` loads it (see :mod:`toksmith.registry`).

============  ==========================================================================
format        what is recognised
============  ==========================================================================
toksmith      a JSON file with ``"format": "toksmith"`` (``tok.save``)
tiktoken      a ``.tiktoken`` rank file (``base64-token rank`` lines)
huggingface   a ``tokenizer.json`` (a JSON object with a ``"model"``) or a folder holding one
js-tiktoken   a js-tiktoken rank file: JSON ``{"pat_str", "special_tokens", "bpe_ranks"}``
tekken        a Mistral Tekken file: JSON ``{"config": {"pattern", ...}, "vocab": [...]}``
gpt2          a folder with ``vocab.json`` + ``merges.txt`` or ``encoder.json`` + ``vocab.bpe``,
              or one of those two files with its partner beside it
sentencepiece a SentencePiece ``.model`` file, or a folder with ``tokenizer.model`` or
              ``spiece.model`` (and no ``tokenizer.json``)
wordpiece     a ``vocab.txt`` (WordPiece, one token a line), or a folder holding one (with
              ``tokenizer_config.json``, as BERT's)
clip          CLIP's ``vocab.json`` + ``merges.txt`` (merges with the ``</w>`` end-of-word
              suffix: a folder, or either file with its partner beside it), or OpenAI CLIP's
              ``bpe_simple_vocab_16e6.txt.gz``
============  ==========================================================================

A rank file has no pattern and no special tokens: :func:`load_any` uses those of the
encoding whose sha256 the file has (OpenAI's ``r50k_base``/``gpt2``, ``p50k_base``,
``cl100k_base``, ``o200k_base``; Llama 3's and Llama 4's ``tokenizer.model``, Qwen 1's
``qwen.tiktoken``); any other rank file needs ``pattern=`` (and ``special_tokens=``).

A ``tokenizer.json`` whose model is Unigram, WordPiece or BPE over characters is named
``huggingface`` too; :func:`toksmith.load_any` loads it as a
:class:`toksmith.pipeline_tokenizer.PipelineTokenizer` (as it does the last two formats).

See :mod:`toksmith.formats.tiktoken`, :mod:`toksmith.formats.huggingface` and :mod:`toksmith.formats.gpt2` for each format, and
:class:`ConversionError` for what cannot be converted exactly.
"""

from __future__ import annotations

import json
import os
import re
from typing import Optional, Tuple, Union

from .._fileio import open_readable, read_capped
from .._jsontables import JsonTables, split_json_tables
from .._paths import fspath
from ..errors import TokenizerFileError, TokenizerFileNotFoundError
from ._common import read_tokenizer_file, unique_keys_hook
from .clip import is_clip_merges, looks_like_clip_gz
from .pipeline_files import join, looks_like_sentencepiece, wordpiece_vocab_path
from .tekken import is_tekken

FORMATS = (
    "toksmith",
    "tiktoken",
    "huggingface",
    "gpt2",
    "calm",
    "js-tiktoken",
    "sentencepiece",
    "wordpiece",
    "tekken",
    "clip",
)

#: the SentencePiece model files of a model folder, in the order they are looked for
_SPM_NAMES = ("tokenizer.model", "spiece.model", "sentencepiece.bpe.model")

_GPT2_PAIRS = (("vocab.json", "merges.txt"), ("encoder.json", "vocab.bpe"))
_RANK_LINE = re.compile(rb"^[A-Za-z0-9+/]+={0,2}[ \t\x0b\x0c]+\d+[ \t\x0b\x0c]*$")


def _clip_or_gpt2(merges: str) -> str:
    """``"clip"`` when a GPT-2-style merges file has CLIP's end-of-word suffix, else ``"gpt2"``
    (an unreadable file stays ``"gpt2"``: its reader reports it)."""
    try:
        with open(merges, "rb") as f:
            head = f.read(1 << 16)
    except OSError:
        return "gpt2"
    return "clip" if is_clip_merges(head.decode("utf-8", "replace")) else "gpt2"


def _gpt2_pair(folder: str) -> Optional[Tuple[str, str]]:
    for vocab, merges in _GPT2_PAIRS:
        v, m = os.path.join(folder, vocab), os.path.join(folder, merges)
        if os.path.isfile(v) and os.path.isfile(m):
            return v, m
    return None


def _sniff_json(
    p: str, head: bytes, raw: Optional[bytes] = None
) -> Tuple[str, Optional[dict], Optional[JsonTables]]:
    """The format of a JSON file, and its parsed document when it had to be parsed (with a
    tokenizer.json's natively decoded tables, see :mod:`toksmith._jsontables`); a toksmith file
    is always read again by :func:`toksmith.load`'s own parser (its duplicate-key check included),
    so no document is returned for it. ``raw``: the whole file, when it was read already (a pipe
    cannot be read twice)."""
    text = head.decode("utf-8", "replace")
    # anchored at the file's first key, where tok.save writes it: the same text further on may be
    # the toksmith data a tokenizer.json carries in its model (or a metadata value); a toksmith
    # file with its "format" elsewhere is found by the full parse below
    if re.match(r'\s*(?:\xef\xbb\xbf|\ufeff)?\s*\{\s*"format"\s*:\s*"toksmith"', text):
        return "toksmith", None, None
    if re.search(r'"format"\s*:\s*"toksmith\.calm"', text):
        return "calm", None, None
    if raw is None:
        raw = read_tokenizer_file(p)
    got = split_json_tables(
        raw, "huggingface", object_pairs_hook=unique_keys_hook(p, "the JSON file")
    )
    if got is not None and got[0].get("format") != "toksmith":
        return "huggingface", got[0], got[1]
    try:
        data = json.loads(
            raw.decode("utf-8"), object_pairs_hook=unique_keys_hook(p, "the JSON file")
        )
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise TokenizerFileError(
            f"{p}: looks like JSON but does not parse (truncated or corrupted?): {e}"
        ) from None
    except RecursionError:
        raise TokenizerFileError(
            f"{p}: a JSON file that nests arrays or objects too deeply to be read"
        ) from None
    if isinstance(data, dict):
        if data.get("format") == "toksmith":
            # its "format" was not in the head: toksmith.load reads it again (its native table split
            # is faster than building the document from this parse)
            return "toksmith", None, None
        if data.get("format") == "toksmith.calm":
            return "calm", None, None
        if isinstance(data.get("model"), dict):
            return "huggingface", data, None
        if isinstance(data.get("bpe_ranks"), str) and isinstance(data.get("pat_str"), str):
            return "js-tiktoken", data, None
        if is_tekken(data):
            return "tekken", data, None
        ids = list(data.values())
        if ids and all(isinstance(v, int) and not isinstance(v, bool) for v in ids):
            if min(ids) >= 0 and len(set(ids)) == len(ids):  # token -> id: each id once
                return "gpt2", None, None
            raise TokenizerFileError(
                f"{p}: a JSON object of integers, but no GPT-2 vocab.json (token -> id): its values "
                f"{'are negative' if min(ids) < 0 else 'repeat'} (token counts?); pass a toksmith JSON file, a "
                f"Hugging Face tokenizer.json, a .tiktoken rank file or GPT-2 vocab.json + merges.txt"
            )
        if data.get("format") == "toksmith-wordbpe":
            raise TokenizerFileError(
                f"{p}: a word-level tokenizer of toksmith.presets.wordbpe (greedy longest match, not byte-level "
                f"BPE): load it with toksmith.presets.wordbpe.load(path), or use `toksmith wordbpe encode`"
            )
    raise TokenizerFileError(
        f"{p}: a JSON file of no known tokenizer format (toksmith, tokenizer.json, vocab.json)"
    )


def detect_format(path: Union[str, os.PathLike]) -> str:
    """Name the format of a tokenizer file or folder: ``"toksmith"``, ``"tiktoken"``,
    ``"huggingface"`` or ``"gpt2"``; raise :class:`toksmith.TokenizerFileError` if unknown."""
    return _detect(fspath(path))[0]


Detected = Tuple[str, str, Optional[dict], Optional[JsonTables], Optional[bytes]]


def _is_rank_file(head: bytes) -> bool:
    """Whether a file's first bytes are a tiktoken rank line (``base64 rank``). A SentencePiece
    model starts with the byte 0x0a (its first field), which no rank file does."""
    if head[:1] in (b"\x0a", b""):
        return False
    first = head.split(b"\n", 1)[0].split(b"\r", 1)[0]
    return _RANK_LINE.match(first) is not None


def _detect(p: str) -> Detected:
    """(format, the file read, its parsed JSON document if detection had to parse it: a
    tokenizer.json's format is only known from its ``"model"``, which comes last; the
    document's natively decoded tables, if any; the file's bytes when it is not a regular file:
    a pipe such as ``/dev/stdin`` or ``<(...)`` can only be read once)."""
    if os.path.isdir(p):
        tj = os.path.join(p, "tokenizer.json")
        if os.path.isfile(tj):
            return _detect(tj)
        pair = _gpt2_pair(p)
        if pair:
            return _clip_or_gpt2(pair[1]), p, None, None, None
        for name in _SPM_NAMES:
            spm = join(p, name)
            if os.path.isfile(spm):
                with open_readable(spm, "the tokenizer file") as f:
                    if _is_rank_file(f.read(4096)):  # Meta's Llama 3 / 4 folders
                        return "tiktoken", spm, None, None, None
                return "sentencepiece", spm, None, None, None
        if wordpiece_vocab_path(p):
            return "wordpiece", p, None, None, None
        raise TokenizerFileNotFoundError(
            f"{p}: the folder has no tokenizer.json, vocab.json + merges.txt, encoder.json + vocab.bpe, "
            "tokenizer.model / spiece.model or vocab.txt"
        )
    raw = None
    with open_readable(p, "the tokenizer file") as f:
        if os.path.isfile(p):
            head = f.read(1 << 16)
        else:  # a pipe is read once, whole (bounded)
            head = raw = read_capped(f, p, "the tokenizer file", error=TokenizerFileError)
    # Meta's Llama 3 / 4 tokenizer.model is a tiktoken rank file despite its name
    if looks_like_sentencepiece(p, head) and not _is_rank_file(head):
        return "sentencepiece", p, None, None, raw
    if looks_like_clip_gz(head):
        return "clip", p, None, None, raw
    stripped = head.lstrip()
    if stripped.startswith(b"{"):
        fmt, doc, tables = _sniff_json(p, head, raw)
        if fmt == "gpt2" and raw is None:
            fmt = _clip_pair_or(fmt, p)
        return fmt, p, doc, tables, raw
    first = (stripped[3:] if stripped.startswith(b"\xef\xbb\xbf") else stripped).split(b"\n", 1)[0]
    first = first.split(b"\r", 1)[0]  # \r\n or \r line ends
    if _RANK_LINE.match(first):
        return "tiktoken", p, None, None, raw
    # a merges file without its "#version" line: named as _gpt2_files_for pairs it (gpt2_vocab.bpe)
    if first.startswith(b"#version") or os.path.basename(p).endswith(("merges.txt", "vocab.bpe")):
        fmt = "clip" if raw is None and is_clip_merges(head.decode("utf-8", "replace")) else "gpt2"
        return fmt, p, None, None, raw
    if wordpiece_vocab_path(p):
        return "wordpiece", p, None, None, raw
    raise TokenizerFileError(
        f"{p}: unknown tokenizer file format (expected toksmith JSON, a .tiktoken rank file, a Hugging Face "
        "tokenizer.json, GPT-2 vocab.json/merges.txt, a SentencePiece .model or a WordPiece vocab.txt)"
    )


def _clip_pair_or(fmt: str, p: str) -> str:
    """``"clip"`` for a vocab.json whose partner merges file is CLIP's, else ``fmt``."""
    try:
        return _clip_or_gpt2(_gpt2_files_for(p)[1])
    except (OSError, TokenizerFileError):
        return fmt  # no partner: reported when the GPT-2 files are read


def _gpt2_files_for(p: str) -> Tuple[str, str]:
    """(vocab, merges) for a GPT-2 folder or for either file of the pair (partner beside it,
    with the same prefix: ``gpt2_encoder.json`` goes with ``gpt2_vocab.bpe``)."""
    if os.path.isdir(p):
        pair = _gpt2_pair(p)
        if pair:
            return pair
    folder, base = os.path.split(os.path.abspath(p))
    for vocab, merges in _GPT2_PAIRS:
        for mine, other, mine_is_vocab in ((vocab, merges, True), (merges, vocab, False)):
            if base.endswith(mine):
                q = os.path.join(folder, base[: len(base) - len(mine)] + other)
                if os.path.isfile(q):
                    return (p, q) if mine_is_vocab else (q, p)
    wanted = ("merges.txt", ".bpe") if base.endswith(".json") else (".json",)
    cands = sorted(f for f in os.listdir(folder) if f.endswith(wanted) and f != base)
    if len(cands) == 1:
        q = os.path.join(folder, cands[0])
        return (p, q) if base.endswith(".json") else (q, p)
    if base.endswith(".json"):
        where = (
            f"several files beside it could be its merges file ({', '.join(cands)})"
            if cands
            else "no merges.txt/vocab.bpe is beside it"
        )
        raise TokenizerFileError(
            f"{p}: a JSON object of token -> integer, so read as a GPT-2 vocab.json/encoder.json, but {where}: "
            "put its merges file beside it (vocab.json + merges.txt, NAME-vocab.json + NAME-merges.txt) or name "
            "both with toksmith.from_gpt2_files(vocab, merges). If it is something else (a word-level or "
            "WordPiece vocabulary, a token -> id table without merges), it is no tokenizer toksmith can load: "
            "pass a toksmith JSON file, a Hugging Face tokenizer.json or a .tiktoken rank file"
        )
    where = (
        f"several files beside it could be its vocab ({', '.join(cands)})"
        if cands
        else "no vocab.json/encoder.json is beside it"
    )
    raise TokenizerFileError(
        f"{p}: a GPT-2 merges.txt/vocab.bpe, but {where}; use toksmith.from_gpt2_files(vocab, merges) to name both"
    )


__all__ = ["FORMATS", "detect_format"]
