"""Tokenizer files that are not byte-level BPE, read as plain data for
:class:`toksmith.pipeline_tokenizer.PipelineTokenizer`: a SentencePiece ``.model`` file, a
Hugging Face ``tokenizer.json`` whose model is Unigram, WordPiece or BPE over characters, and a
WordPiece folder (``vocab.txt`` + ``tokenizer_config.json``, as BERT's).

The readers only read and check the files; the native core parses them when the tokenizer is
built (:mod:`toksmith.registry`). The writer (:func:`pipeline_tokenizer_json`,
:func:`save_pipeline_huggingface`) gives any of them back as a Hugging Face ``tokenizer.json``.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from .._fileio import atomic_files
from .._paths import fspath
from ..errors import ConversionError, TokenizerFileError, TokenizerFileNotFoundError
from ..spec import Padding, Truncation
from ._common import make_folder, write_json
from .huggingface import _BOS, _EOS, VERY_LARGE_INTEGER, _added_entry, _role

#: the kinds of :class:`PipelineSource`
KINDS = ("sentencepiece", "hf_json", "wordpiece", "clip")


@dataclass(frozen=True)
class PipelineSource:
    """A non-byte-level tokenizer file as plain data.

    ``kind``: ``"sentencepiece"`` (``data`` is the ``.model`` file's bytes), ``"hf_json"``
    (``data`` is the ``tokenizer.json`` text), ``"wordpiece"`` (``data`` is ``vocab.txt``'s
    text; ``options`` holds what ``tokenizer_config.json`` says) or ``"clip"`` (``data`` is
    CLIP's ``vocab.json`` bytes, ``options`` holds ``merges.txt``'s bytes: see
    :mod:`toksmith.files.clip`). ``where`` names the file in
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
        ("cls_token", _token_text(config.get("cls_token", "[CLS]"), cfg_path, "cls_token")),
        ("sep_token", _token_text(config.get("sep_token", "[SEP]"), cfg_path, "sep_token")),
        ("special", tuple(special)),
        ("lowercase", lowercase),
        ("strip_accents", strip_accents),
        ("handle_chinese_chars", chinese),
    )
    return PipelineSource("wordpiece", text, os.fsdecode(vocab), options)


# ------------------------------------------------------------------------------ writing

#: sentencepiece's whitespace symbol
_SPACE = "\u2581"


def _template_json(
    template: Tuple[List[int], List[int]], names: Mapping[int, str]
) -> Dict[str, Any]:
    """A ``TemplateProcessing`` putting ``template``'s ids around the text (and around each
    text of a pair)."""
    prefix, suffix = template

    def piece(i: int) -> Dict[str, Any]:
        return {"SpecialToken": {"id": names[i], "type_id": 0}}

    def seq(which: str, type_id: int) -> Dict[str, Any]:
        return {"Sequence": {"id": which, "type_id": type_id}}

    single = [*map(piece, prefix), seq("A", 0), *map(piece, suffix)]
    pair = single + [seq("B", 1), *map(piece, suffix)]
    return {
        "type": "TemplateProcessing",
        "single": single,
        "pair": pair,
        "special_tokens": {
            names[i]: {"id": names[i], "ids": [i], "tokens": [names[i]]} for i in {*prefix, *suffix}
        },
    }


def _spm_merges(pieces: List[Tuple[str, float, str]]) -> List[List[str]]:
    """The merges of a SentencePiece BPE model: each split of a normal piece into two pieces,
    in the order sentencepiece merges them, by the merged piece's score (highest first; Llama
    gives its runs of spaces the lowest score, though their ids are low), then its id, then
    the two pieces' ids."""
    vocab: Dict[str, int] = {}
    for i, (p, _, _) in enumerate(pieces):
        vocab.setdefault(p, i)
    merges = []
    for i, (p, score, kind) in enumerate(pieces):
        if kind not in ("normal", "user_defined", "unused") or len(p) < 2:
            continue
        for k in range(1, len(p)):
            a, b = p[:k], p[k:]
            if a in vocab and b in vocab:
                merges.append((-score, i, vocab[a], vocab[b], a, b))
    merges.sort()
    return [[a, b] for *_, a, b in merges]


def _spm_json(info: Any, where: str) -> Dict[str, Any]:
    """The normalizer, model and decoder of a SentencePiece model
    (``_core.Pipeline.spm_model_info``), written with ``tokenizers``' parts so that they give
    sentencepiece's ids: the charsmap, ``remove_extra_whitespaces`` as three regex
    replacements of spaces, ``add_dummy_prefix`` as a ``Prepend``, ``escape_whitespaces`` as a
    ``Replace``, and no pre-tokenizer (sentencepiece encodes the whole text at once)."""
    pieces, model_type, byte_fallback, suffix, norm, denormalizer = info
    charsmap, dummy_prefix, remove_extra, escape = norm
    if model_type not in ("bpe", "unigram"):
        raise ConversionError(
            f"{where}: a SentencePiece {model_type} model has no tokenizer.json form"
        )
    if suffix:
        raise ConversionError(
            f"{where}: treat_whitespace_as_suffix has no tokenizer.json form (a Prepend normalizer "
            "puts the whitespace first)"
        )
    if denormalizer:
        raise ConversionError(f"{where}: a denormalizer has no tokenizer.json form")
    kinds = {k for _, _, k in pieces}
    if "user_defined" in kinds:
        raise ConversionError(
            f"{where}: user-defined pieces (matched in the normalized text by sentencepiece) have "
            "no exact tokenizer.json form"
        )
    normalizers: List[Dict[str, Any]] = []
    if charsmap:
        normalizers.append(
            {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode()}
        )
    if remove_extra:
        for pattern, content in (("\\A +", ""), (" +\\z", ""), (" {2,}", " ")):
            normalizers.append(
                {"type": "Replace", "pattern": {"Regex": pattern}, "content": content}
            )
    if dummy_prefix:
        normalizers.append({"type": "Prepend", "prepend": _SPACE if escape else " "})
    if escape:
        normalizers.append({"type": "Replace", "pattern": {"String": " "}, "content": _SPACE})
    unk = next((i for i, (_, _, k) in enumerate(pieces) if k == "unknown"), 0)
    model: Dict[str, Any]
    if model_type == "unigram":
        model = {
            "type": "Unigram",
            "unk_id": unk,
            "vocab": [[p, float(score)] for p, score, _ in pieces],
            "byte_fallback": byte_fallback,
        }
    else:
        vocab: Dict[str, int] = {}
        for i, (p, _, _) in enumerate(pieces):
            vocab.setdefault(p, i)
        if len(vocab) != len(pieces):
            raise ConversionError(f"{where}: two pieces have the same text")
        model = {
            "type": "BPE",
            "dropout": None,
            "unk_token": pieces[unk][0],
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": True,
            "byte_fallback": byte_fallback,
            "ignore_merges": False,
            "vocab": vocab,
            "merges": _spm_merges(pieces),
        }
    decoders: List[Dict[str, Any]] = []
    if escape:
        decoders.append({"type": "Replace", "pattern": {"String": _SPACE}, "content": " "})
    decoders += [{"type": "ByteFallback"}, {"type": "Fuse"}]
    if dummy_prefix:
        decoders.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
    return {
        "normalizer": {"type": "Sequence", "normalizers": normalizers} if normalizers else None,
        "pre_tokenizer": None,
        "model": model,
        "decoder": {"type": "Sequence", "decoders": decoders},
    }


def _wordpiece_json(source: PipelineSource) -> Dict[str, Any]:
    """BERT's ``tokenizer.json`` parts for a WordPiece folder (as ``transformers`` converts
    ``BertTokenizer``)."""
    lines = str(source.data).split("\n")
    if lines and lines[-1] == "":  # the text's last newline ends a line, as Rust's lines()
        lines.pop()
    # a repeated token takes its last line's id, as transformers' load_vocab and the core
    vocab = {line.rstrip("\r"): i for i, line in enumerate(lines)}
    return {
        "normalizer": {
            "type": "BertNormalizer",
            "clean_text": True,
            "handle_chinese_chars": source.option("handle_chinese_chars", True),
            "strip_accents": source.option("strip_accents"),
            "lowercase": source.option("lowercase", True),
        },
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "model": {
            "type": "WordPiece",
            "unk_token": source.option("unk_token", "[UNK]"),
            "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100,
            "vocab": vocab,
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
    }


def pipeline_tokenizer_json(
    source: PipelineSource,
    special_tokens: Mapping[str, int],
    template: Optional[Tuple[List[int], List[int]]],
    truncation: Optional[Truncation],
    padding: Optional[Padding],
    spm_info: Any = None,
) -> Dict[str, Any]:
    """The ``tokenizer.json`` document of a pipeline tokenizer: a ``tokenizer.json`` source as
    it was read (its truncation and padding as set now), a SentencePiece model or WordPiece
    folder converted (``spm_info``: ``_core.Pipeline.spm_model_info`` of the model). Special
    tokens are added tokens with ``normalized: false``; ``template`` becomes a
    ``TemplateProcessing``. :class:`ConversionError` for what the format cannot hold exactly."""
    lengths = {
        "truncation": None if truncation is None else truncation.to_huggingface(),
        "padding": None if padding is None else padding.to_huggingface(),
    }
    if source.kind == "hf_json":
        doc = json.loads(source.data)
        doc.update(lengths)
        return doc
    if source.kind == "sentencepiece":
        parts = _spm_json(spm_info, source.where)
    elif source.kind == "wordpiece":
        parts = _wordpiece_json(source)
    else:
        raise ConversionError(f"{source.where}: unknown pipeline source kind {source.kind!r}")
    names = {i: t for t, i in special_tokens.items()}
    post = None
    if template is not None:
        missing = [i for i in template[0] + template[1] if i not in names]
        if missing:
            raise ConversionError(
                f"{source.where}: the post-processor adds ids {missing}, which are no special tokens"
            )
        post = _template_json(template, names)
    return {
        "version": "1.0",
        **lengths,
        "added_tokens": [
            _added_entry(t, i, True)
            for t, i in sorted(special_tokens.items(), key=lambda kv: kv[1])
        ],
        "normalizer": parts["normalizer"],
        "pre_tokenizer": parts["pre_tokenizer"],
        "post_processor": post,
        "decoder": parts["decoder"],
        "model": parts["model"],
    }


def save_pipeline_huggingface(doc: Dict[str, Any], directory: Any) -> None:
    """Write ``doc`` (:func:`pipeline_tokenizer_json`) as ``tokenizer.json`` with a
    ``tokenizer_config.json`` and ``special_tokens_map.json`` into ``directory`` (created if
    needed), as a set (a kill leaves the old files or the new ones)."""
    d = fspath(directory)
    make_folder(d, "the Hugging Face tokenizer files")
    specials = {e["content"]: e["id"] for e in doc.get("added_tokens") or [] if e.get("special")}
    smap: Dict[str, Any] = {}
    bos, eos = _role(specials, _BOS), _role(specials, _EOS)
    for key, name in (("bos_token", bos), ("eos_token", eos)):
        if name:
            smap[key] = name
    for key, names in (
        ("unk_token", ("<unk>", "[UNK]")),
        ("pad_token", ("<pad>", "[PAD]")),
        ("cls_token", ("[CLS]",)),
        ("sep_token", ("[SEP]",)),
        ("mask_token", ("[MASK]",)),
    ):
        name = _role(specials, names)
        if name:
            smap[key] = name
    config: Dict[str, Any] = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "clean_up_tokenization_spaces": False,
        "model_max_length": VERY_LARGE_INTEGER,
        "added_tokens_decoder": {
            str(e["id"]): {k: v for k, v in e.items() if k != "id"}
            for e in doc.get("added_tokens") or []
        },
        **smap,
    }
    with atomic_files(d) as stage:
        write_json(stage.path("tokenizer.json"), doc, indent=None)
        write_json(stage.path("tokenizer_config.json"), config)
        write_json(stage.path("special_tokens_map.json"), smap)


__all__ = [
    "KINDS",
    "PipelineSource",
    "is_pipeline_json",
    "join",
    "looks_like_sentencepiece",
    "pipeline_tokenizer_json",
    "read_hf_pipeline_json",
    "read_sentencepiece",
    "read_wordpiece_folder",
    "save_pipeline_huggingface",
    "wordpiece_vocab_path",
]
