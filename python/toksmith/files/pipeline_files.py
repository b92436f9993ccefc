"""Tokenizer files that are not byte-level BPE, read as plain data for
:class:`toksmith.pipeline_tokenizer.PipelineTokenizer`: a SentencePiece ``.model`` file, a
Hugging Face ``tokenizer.json`` whose model is Unigram, WordPiece or BPE over characters, and a
WordPiece folder (``vocab.txt`` + ``tokenizer_config.json``, as BERT's).

The readers only read and check the files; the native core parses them when the tokenizer is
built (:mod:`toksmith.registry`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, List, Optional, Tuple, Union

from .._paths import fspath
from ..errors import TokenizerFileError, TokenizerFileNotFoundError

#: the kinds of :class:`PipelineSource`
KINDS = ("sentencepiece", "hf_json", "wordpiece")


@dataclass(frozen=True)
class PipelineSource:
    """A non-byte-level tokenizer file as plain data.

    ``kind``: ``"sentencepiece"`` (``data`` is the ``.model`` file's bytes), ``"hf_json"``
    (``data`` is the ``tokenizer.json`` text) or ``"wordpiece"`` (``data`` is ``vocab.txt``'s
    text; ``options`` holds what ``tokenizer_config.json`` says). ``where`` names the file in
    messages.
    """

    kind: str
    data: Union[bytes, str]
    where: str
    options: Tuple[Tuple[str, Any], ...] = field(default=())

    def option(self, name: str, default: Any = None) -> Any:
        return dict(self.options).get(name, default)


def _name(p: Any) -> str:
    """The file name of a str or bytes path, as str."""
    return os.fsdecode(os.path.basename(p))


def join(folder: Any, name: str) -> Any:
    """``os.path.join`` for a str or bytes folder (paths may be bytes: see :mod:`toksmith._paths`)."""
    return os.path.join(folder, os.fsencode(name) if isinstance(folder, bytes) else name)


def looks_like_sentencepiece(p: str, head: bytes) -> bool:
    """A SentencePiece ``ModelProto``: named ``*.model``, or a protobuf whose first field is a
    piece (tag 0x0a) with binary bytes in its head."""
    if _name(p).endswith(".model"):
        return True
    return head[:1] == b"\x0a" and b"\x00" in head[:4096]


def read_sentencepiece(
    path: Union[str, os.PathLike], raw: Optional[bytes] = None
) -> PipelineSource:
    """A SentencePiece ``.model`` file (``raw``: its bytes when already read)."""
    p = fspath(path)
    if raw is None:
        with open(p, "rb") as f:
            raw = f.read()
    if not raw:
        raise TokenizerFileError(f"{p}: an empty file is no SentencePiece model")
    return PipelineSource("sentencepiece", raw, os.fsdecode(p))


def _walk_types(node: Any) -> List[str]:
    """Every ``"type"`` in a pipeline component and its sequences."""
    out: List[str] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            t = n.get("type")
            if isinstance(t, str):
                out.append(t)
            stack.extend(v for v in n.values() if isinstance(v, (dict, list)))
        elif isinstance(n, list):
            stack.extend(n)
    return out


def is_pipeline_json(doc: Any) -> bool:
    """Whether a parsed ``tokenizer.json`` belongs to the pipeline tokenizer: a Unigram or
    WordPiece model, BPE with no ``ByteLevel`` stage (BPE over characters, usually with
    ``byte_fallback``) or BPE with an end-of-word suffix (CLIP's, byte-level or not).
    Byte-level BPE stays with :class:`toksmith.Tokenizer`."""
    if not isinstance(doc, dict) or not isinstance(doc.get("model"), dict):
        return False
    kind = doc["model"].get("type")
    if kind in ("Unigram", "WordPiece"):
        return True
    if kind != "BPE":
        return False
    if doc["model"].get("end_of_word_suffix"):
        # byte-level or not, an end-of-word BPE (CLIP's) is a BPE over symbols
        return True
    stages = [doc.get(k) for k in ("pre_tokenizer", "decoder", "normalizer", "post_processor")]
    return "ByteLevel" not in _walk_types(stages)


def read_hf_pipeline_json(
    path: Union[str, os.PathLike], raw: Optional[bytes] = None
) -> PipelineSource:
    """A ``tokenizer.json`` for the pipeline tokenizer (:func:`is_pipeline_json`)."""
    p = fspath(path)
    if raw is None:
        with open(p, "rb") as f:
            raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TokenizerFileError(f"{p}: not valid UTF-8: {e}") from None
    return PipelineSource("hf_json", text, os.fsdecode(p))


def wordpiece_vocab_path(p: str) -> Optional[str]:
    """The ``vocab.txt`` of a WordPiece folder (or the file itself), if there is one."""
    if os.path.isdir(p):
        v = join(p, "vocab.txt")
        return v if os.path.isfile(v) else None
    return p if _name(p).endswith("vocab.txt") else None


def _token_text(v: Any, where: str, key: str) -> Optional[str]:
    if v is None:
        return None
    if isinstance(v, dict):
        v = v.get("content")
    if not isinstance(v, str):
        raise TokenizerFileError(f"{where}: {key} is not a token string")
    return v


def read_wordpiece_folder(path: Union[str, os.PathLike]) -> PipelineSource:
    """A WordPiece folder: ``vocab.txt`` (one token a line) and, if present,
    ``tokenizer_config.json`` (``do_lower_case``, ``strip_accents``, ``tokenize_chinese_chars``
    and the special tokens, with ``transformers``' BERT defaults)."""
    p = fspath(path)
    vocab = wordpiece_vocab_path(p)
    if vocab is None:
        raise TokenizerFileNotFoundError(f"{p}: no vocab.txt")
    folder = os.path.dirname(vocab)
    with open(vocab, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TokenizerFileError(f"{vocab}: not valid UTF-8: {e}") from None
    config: dict = {}
    cfg_path = join(folder, "tokenizer_config.json")
    if os.path.isfile(cfg_path):
        try:
            with open(cfg_path, encoding="utf-8") as f:
                config = json.load(f)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise TokenizerFileError(f"{cfg_path}: does not parse: {e}") from None
        if not isinstance(config, dict):
            raise TokenizerFileError(f"{cfg_path}: not a JSON object")
    defaults = {
        "unk_token": "[UNK]",
        "sep_token": "[SEP]",
        "pad_token": "[PAD]",
        "cls_token": "[CLS]",
        "mask_token": "[MASK]",
    }
    special: List[str] = []
    for key, default in defaults.items():
        t = _token_text(config.get(key, default), cfg_path, key)
        if t is not None and t not in special:
            special.append(t)
    decoder = config.get("added_tokens_decoder")
    if isinstance(decoder, dict):
        for entry in decoder.values():
            t = _token_text(entry, cfg_path, "added_tokens_decoder")
            if t is not None and t not in special:
                special.append(t)
    lowercase = config.get("do_lower_case", True)
    strip_accents = config.get("strip_accents")
    chinese = config.get("tokenize_chinese_chars", True)
    for name, value in (("do_lower_case", lowercase), ("tokenize_chinese_chars", chinese)):
        if not isinstance(value, bool):
            raise TokenizerFileError(f"{cfg_path}: {name} is not true or false")
    if strip_accents is not None and not isinstance(strip_accents, bool):
        raise TokenizerFileError(f"{cfg_path}: strip_accents is not true, false or null")
    options = (
        ("unk_token", _token_text(config.get("unk_token"), cfg_path, "unk_token") or "[UNK]"),
        ("special", tuple(special)),
        ("lowercase", lowercase),
        ("strip_accents", strip_accents),
        ("handle_chinese_chars", chinese),
    )
    return PipelineSource("wordpiece", text, os.fsdecode(vocab), options)


__all__ = [
    "KINDS",
    "PipelineSource",
    "is_pipeline_json",
    "join",
    "looks_like_sentencepiece",
    "read_hf_pipeline_json",
    "read_sentencepiece",
    "read_wordpiece_folder",
    "wordpiece_vocab_path",
]
