"""CLIP's tokenizer files: ``vocab.json`` + ``merges.txt`` whose merges carry the ``</w>``
end-of-word suffix (Hugging Face ``openai/clip-*``, Stable Diffusion's text encoder), and the
original ``bpe_simple_vocab_16e6.txt.gz`` of OpenAI's ``clip`` package (merges only; the
vocabulary is derived from them as ``clip.simple_tokenizer.SimpleTokenizer`` does).

CLIP's BPE is byte-level BPE over words with an end-of-word marker: the text is NFC-normalized,
whitespace runs become one space and it is lower-cased; words are split by CLIP's pattern,
spelled in GPT-2's byte alphabet, and the last symbol of each word carries ``</w>``. These files
are the ``tokenizer.json`` document ``transformers``' ``CLIPTokenizer`` builds from them (ids
equal to ``CLIPTokenizer(...)(text, add_special_tokens=False)``), run by
:class:`toksmith.pipeline_tokenizer.PipelineTokenizer`; decoding drops the suffixes and strips
the text as that tokenizer's ``decode`` does. ``vocab.json`` + ``merges.txt`` are read natively
straight into the model's tables (:func:`clip_pipeline`); the document is only written for
files the native reader declines (it then reports what is wrong) and for export.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import zlib
from typing import Any, Dict, List, Optional, Tuple, Union

from .. import _core
from .._paths import fspath
from ..bytelevel import BYTE_TO_CHAR
from ..errors import TokenizerFileError
from .pipeline_files import PipelineSource

#: CLIP's end-of-word suffix
SUFFIX = "</w>"
#: CLIP's start and end tokens (the end token is also its unknown token)
START, END = "<|startoftext|>", "<|endoftext|>"
#: CLIP's split pattern (transformers' CLIPTokenizer; the special tokens are found before it)
PATTERN = (
    r"<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]"
    r"|[^\s\p{L}\p{N}]+"
)
#: the merges CLIP reads from its files (``merges[1 : 49152 - 256 - 2 + 1]``)
N_MERGES = 49152 - 256 - 2


#: a line of whitespace only (as ``str.strip`` sees it) between two lines
_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")


def is_clip_merges(merges_text: str) -> bool:
    """Whether a merges file is CLIP's: at least one in ten of its first merges ends with
    ``</w>`` (a GPT-2 merges file has none)."""
    lines = [line for line in merges_text.splitlines()[:2000] if not line.startswith("#version")]
    marked = sum(1 for line in lines if line.endswith(SUFFIX))
    return bool(lines) and marked * 10 >= len(lines)


def _merge_pairs(lines: List[str], where: str) -> List[Tuple[str, str]]:
    return [(a, b) for a, b in (line.split(" ") for line in _merge_lines(lines, where))]


def _merge_lines(lines: List[str], where: str) -> List[str]:
    """The merge lines (``left right``) as they are, checked: one space between two symbols."""
    joined = "\n".join(lines)
    if joined.count(" ") == len(lines) and " \n" not in joined and "\n " not in joined:
        if not lines or (joined[0] != " " and joined[-1] != " "):
            return lines  # the usual case, checked at C speed
    bad = next(
        (n for n, m in enumerate(lines) if m.count(" ") != 1 or m[0] == " " or m[-1] == " "),
        None,
    )
    if bad is not None:
        raise TokenizerFileError(
            f"{where}: line {bad + 2}: expected 'left right', found {lines[bad][:60]!r}"
        )
    return lines


def clip_document(
    vocab: Optional[Dict[str, int]],
    merges: Union[List[Tuple[str, str]], List[str]],
    cleanup_decode: bool = True,
    start_normalized: bool = False,
) -> Dict[str, Any]:
    """The ``tokenizer.json`` document of CLIP's tokenizer over ``vocab`` and ``merges``
    (``cleanup_decode``: decode as ``transformers``' CLIPTokenizer does, suffixes to spaces and
    the text stripped, rather than as its ``tokenizers`` backend does; ``start_normalized``:
    the start token is found in the normalized (lower-cased) text, as transformers does when
    ``tokenizer_config.json`` says so). ``vocab=None``: the document without the model's vocab
    and merges, its start and end tokens without ids (``_core.Pipeline.from_clip_files`` takes
    them from the vocabulary it reads)."""
    added = [
        {
            **({} if vocab is None else {"id": vocab[t]}),
            "content": t,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": t == START and start_normalized,
            "special": True,
        }
        for t in (START, END)
        if vocab is None or t in vocab
    ]
    decoder: Dict[str, Any] = {"type": "ByteLevel"}
    if cleanup_decode:
        decoder = {
            "type": "Sequence",
            "decoders": [decoder, {"type": "toksmith.EndOfWordCleanup", "suffix": SUFFIX}],
        }
    return {
        "version": "1.0",
        "added_tokens": added,
        "normalizer": {
            "type": "Sequence",
            "normalizers": [
                {"type": "NFC"},
                {"type": "Replace", "pattern": {"Regex": r"\s+"}, "content": " "},
                {"type": "Lowercase"},
            ],
        },
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {
                    "type": "Split",
                    "pattern": {"Regex": PATTERN},
                    "behavior": "Removed",
                    "invert": True,
                },
                {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
            ],
        },
        "decoder": decoder,
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": END if vocab is None or END in vocab else None,
            "continuing_subword_prefix": "",
            "end_of_word_suffix": SUFFIX,
            "fuse_unk": False,
            "byte_fallback": False,
            **(
                {}
                if vocab is None
                else {
                    "vocab": vocab,
                    "merges": (
                        list(merges)  # lines already (checked at C speed: no loop per merge)
                        if set(map(type, merges)) <= {str}
                        else [m if isinstance(m, str) else " ".join(m) for m in merges]
                    ),
                }
            ),
        },
    }


def _source(doc: Dict[str, Any], where: str, vocab_text: Optional[str] = None) -> PipelineSource:
    """The document as JSON text; ``vocab_text``: the vocab.json text the document's vocab was
    parsed from, put in as it is (not written again)."""
    if vocab_text is None:
        return PipelineSource("hf_json", json.dumps(doc, ensure_ascii=False), where)
    model = dict(doc["model"], vocab=None)
    text = json.dumps({**doc, "model": model}, ensure_ascii=False)
    at = text.rindex('"vocab": null')
    text = text[:at] + '"vocab": ' + vocab_text + text[at + len('"vocab": null') :]
    return PipelineSource("hf_json", text, where)


def read_clip_files(
    vocab_json: Union[str, os.PathLike], merges_txt: Union[str, os.PathLike]
) -> PipelineSource:
    """CLIP's ``vocab.json`` + ``merges.txt``: their bytes, read as ``transformers``'
    CLIPTokenizer reads them when the tokenizer is built (:func:`clip_pipeline`)."""
    vp, mp = fspath(vocab_json), fspath(merges_txt)
    where = f"{os.fsdecode(vp)} + {os.fsdecode(mp)}"
    with open(vp, "rb") as f:
        vocab_raw = f.read()
    with open(mp, "rb") as f:
        merges_raw = f.read()
    options = (
        ("merges", merges_raw),
        ("start_normalized", _start_normalized(vp)),
        ("vocab_file", os.fsdecode(vp)),
    )
    return PipelineSource("clip", vocab_raw, where, options)


def _text(raw: bytes) -> str:
    """A file's text as ``open(path, encoding="utf-8").read()`` gives it (universal newlines:
    CR LF and a lone CR become LF)."""
    return raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def clip_pipeline(source: PipelineSource) -> "_core.Pipeline":
    """The native tokenizer of a :func:`read_clip_files` source: the files straight into the
    model's tables, or (where the native reader declines them: odd or bad files) the document
    of :func:`clip_json_source`, which reports what is wrong. Errors of the vocabulary itself
    come as :class:`toksmith.errors.VocabError`."""
    assert source.kind == "clip" and isinstance(source.data, bytes)
    shell = clip_document(None, [], start_normalized=source.option("start_normalized", False))
    core = _core.Pipeline.from_clip_files(
        json.dumps(shell, ensure_ascii=False), source.data, source.option("merges")
    )
    if core is None:
        core = _core.Pipeline.from_hf_json(str(clip_json_source(source).data))
    return core


def clip_json_source(source: PipelineSource) -> PipelineSource:
    """A :func:`read_clip_files` source as the ``tokenizer.json`` document of its tokenizer
    (for export, and for files the native reader declines: the checks and messages are
    here)."""
    assert source.kind == "clip" and isinstance(source.data, bytes)
    where = source.where
    try:
        vocab_text = _text(source.data)
        vocab = json.loads(vocab_text)
        text = _text(source.option("merges"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise TokenizerFileError(f"{where}: does not parse: {e}") from None
    if not isinstance(vocab, dict):  # its ids are checked when the tokenizer is built
        raise TokenizerFileError(
            f"{source.option('vocab_file')}: expected a JSON object of token -> id"
        )
    body = text.strip()
    lines = body.split("\n") if body else []
    if lines and lines[0].startswith("#version"):
        lines = lines[1:]
    if "\r" in body or _BLANK_LINE.search(body):  # else each line is kept as it is
        lines = [line.rstrip("\r") for line in lines if line.strip()]
    merges = _merge_lines(lines, where)
    doc = clip_document(vocab, merges, start_normalized=source.option("start_normalized", False))
    return _source(doc, where, vocab_text)


def _start_normalized(vocab_path: Any) -> bool:
    """Whether the ``tokenizer_config.json`` beside CLIP's files marks its start token
    ``normalized`` (transformers then finds ``<|startoftext|>`` in the lower-cased text; its
    end token, also the unknown token, it always finds in the text as it is)."""
    cfg = os.path.join(os.path.dirname(os.fsdecode(vocab_path)), "tokenizer_config.json")
    try:
        with open(cfg, encoding="utf-8") as f:
            config = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    bos = config.get("bos_token") if isinstance(config, dict) else None
    return isinstance(bos, dict) and bos.get("content") == START and bos.get("normalized") is True


def clip_vocab(merges: List[Tuple[str, str]]) -> Dict[str, int]:
    """The vocabulary OpenAI's ``SimpleTokenizer`` builds from its merges: the 256 byte
    characters (in the order of CLIP's ``bytes_to_unicode``), the same with ``</w>``, one token per merge,
    then the start and end tokens."""
    chars = list(BYTE_TO_CHAR.values())  # printable bytes first, as CLIP orders them
    tokens = chars + [c + SUFFIX for c in chars] + [a + b for a, b in merges] + [START, END]
    vocab: Dict[str, int] = {}
    for t in tokens:
        vocab.setdefault(t, len(vocab))
    if len(vocab) != len(tokens):
        raise TokenizerFileError("two of CLIP's merges make the same token")
    return vocab


def read_clip_bpe_gz(path: Union[str, os.PathLike], raw: Optional[bytes] = None) -> PipelineSource:
    """OpenAI CLIP's ``bpe_simple_vocab_16e6.txt.gz``: its first line is a header, the next
    48894 lines are the merges CLIP uses (the rest of the file is ignored, as CLIP does)."""
    p = fspath(path)
    where = os.fsdecode(p)
    try:
        if raw is None:
            with open(p, "rb") as f:
                raw = f.read()
        text = gzip.decompress(raw).decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError) as e:
        raise TokenizerFileError(f"{where}: not a gzip-compressed UTF-8 merges file: {e}") from None
    lines = text.split("\n")[1 : N_MERGES + 1]
    if len(lines) < N_MERGES:
        raise TokenizerFileError(
            f"{where}: {len(lines)} merges, but CLIP's bpe_simple_vocab file has {N_MERGES} "
            "(truncated?)"
        )
    merges = _merge_pairs(lines, where)
    return _source(clip_document(clip_vocab(merges), merges), where)


def looks_like_clip_gz(head: bytes) -> bool:
    """A gzip file whose text starts with CLIP's header (``...#version: 0.2``); ``head``: its
    first bytes."""
    if head[:2] != b"\x1f\x8b":
        return False
    try:
        first = zlib.decompressobj(wbits=31).decompress(head, 4096)
    except zlib.error:
        return False
    return b"#version" in first.split(b"\n", 1)[0]


__all__ = [
    "END",
    "N_MERGES",
    "PATTERN",
    "START",
    "SUFFIX",
    "clip_document",
    "clip_json_source",
    "clip_pipeline",
    "clip_vocab",
    "is_clip_merges",
    "looks_like_clip_gz",
    "read_clip_bpe_gz",
    "read_clip_files",
]
