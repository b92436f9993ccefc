"""Tokenizers by name and from files: OpenAI's encodings (:func:`get_encoding`,
:func:`encoding_for_model`, read from tiktoken's cache), and every file reader of
:mod:`toksmith.files` as a function that returns a :class:`toksmith.Tokenizer`
(:func:`load`, :func:`load_any`, :func:`from_tiktoken`, :func:`from_huggingface`,
:func:`from_gpt2_files`).

The readers return plain specs (:class:`toksmith.spec.TokenizerSpec`); this layer, above the
tokenizer, builds them (:meth:`toksmith.Tokenizer.from_spec`).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, Mapping, Optional, Union

from ._paths import fspath
from .files import clip as _clip
from .files import gpt2 as _gpt2
from .files import huggingface as _huggingface
from .files import pipeline_files as _pipeline_files
from .files import saved as _saved
from .files import tekken as _tekken
from .files import tiktoken as _tiktoken
from .files import toksmith_json as _toksmith_json
from .files.detect import Detected, _detect, _gpt2_files_for, detect_format
from .files.tiktoken import PathLike, encoding_name_for_model, find_cached_encoding, openai_encoding
from .pipeline_tokenizer import PipelineTokenizer
from .tokenizer import Tokenizer


def load(path: Union[str, os.PathLike]) -> Tokenizer:
    """Load a tokenizer saved with ``tok.save(path)`` (toksmith's JSON format, or a Hugging Face
    ``tokenizer.json``)."""
    return Tokenizer.from_spec(_saved.read(path))


def load_bytes(raw: bytes, p: str = "<bytes>") -> Tokenizer:
    """:func:`load` on the bytes of a file (``p`` names it in messages)."""
    return Tokenizer.from_spec(_toksmith_json.read_bytes(raw, p))


def from_tiktoken(
    obj_or_path: Union[PathLike, Any],
    *,
    pattern: Optional[str] = None,
    special_tokens: Optional[Mapping[str, int]] = None,
    preset: Optional[str] = None,
    check_hash: bool = True,
    name: Optional[str] = None,
) -> Tokenizer:
    """Load a ``tiktoken.Encoding`` or a ``.tiktoken`` rank file as a :class:`toksmith.Tokenizer`
    (the arguments: :func:`toksmith.files.tiktoken.read_tiktoken`)."""
    return Tokenizer.from_spec(
        _tiktoken.read_tiktoken(
            obj_or_path,
            pattern=pattern,
            special_tokens=special_tokens,
            preset=preset,
            check_hash=check_hash,
            name=name,
        )
    )


def from_huggingface(
    path_or_obj: Any, *, strict: bool = True, name: Optional[str] = None
) -> Tokenizer:
    """Load a byte-level BPE ``tokenizer.json`` as a :class:`toksmith.Tokenizer` with the same ids
    (the arguments: :func:`toksmith.files.huggingface.read_huggingface`)."""
    return Tokenizer.from_spec(_huggingface.read_huggingface(path_or_obj, strict=strict, name=name))


def from_gpt2_files(
    encoder_json: PathLike,
    vocab_bpe: PathLike,
    *,
    pattern: str = "gpt2",
    special_tokens: Optional[Mapping[str, int]] = None,
    pinned_tokens: Optional[Mapping[str, int]] = None,
    name: Optional[str] = None,
) -> Tokenizer:
    """Load ``encoder.json`` + ``vocab.bpe`` (or ``vocab.json`` + ``merges.txt``) as a
    :class:`toksmith.Tokenizer` (the arguments: :func:`toksmith.files.gpt2.read_gpt2_files`)."""
    return Tokenizer.from_spec(
        _gpt2.read_gpt2_files(
            encoder_json,
            vocab_bpe,
            pattern=pattern,
            special_tokens=special_tokens,
            pinned_tokens=pinned_tokens,
            name=name,
        )
    )


def load_openai(name: str, path: PathLike, *, check_hash: bool = True):
    """Load one of OpenAI's encodings from its rank file, which you supply.

    ``name`` is a tiktoken name or alias (``"gpt2"``, ``"r50k"``, ``"p50k"``, ``"p50k_edit"``,
    ``"cl100k"``, ``"o200k"``, ``"o200k_harmony"``); the file's sha256 must be the one
    tiktoken pins. Same as ``from_tiktoken(path, preset=name)``.
    """
    return from_tiktoken(path, preset=name, check_hash=check_hash)


def get_encoding(name: str, *, cache_dir: Optional[PathLike] = None):
    """One of OpenAI's encodings by tiktoken name (``"cl100k_base"``, ``"o200k_base"``,
    ``"gpt2"``...; the aliases of :func:`from_tiktoken`'s ``preset`` work too), read from the
    rank file that tiktoken has already downloaded: toksmith itself never downloads anything.

    The file is looked up in ``cache_dir``, else in tiktoken's own cache
    (:func:`tiktoken_cache_dir`), under the name tiktoken gives it, and checked against the
    sha256 tiktoken pins. If it is not there, an ``OSError`` says how to get it: run
    ``tiktoken.get_encoding(name)`` once where there is a network, or download the file and
    load it with ``toksmith.from_tiktoken(path, preset=name)``.
    """
    enc = openai_encoding(name)
    found = find_cached_encoding(enc, cache_dir)
    if found[0] == "tiktoken":
        return from_tiktoken(found[1], preset=enc.name)
    return from_gpt2_files(found[1], found[2], special_tokens=enc.special_tokens, name=enc.name)


def encoding_for_model(model: str, *, cache_dir: Optional[PathLike] = None):
    """The encoding of an OpenAI model (:func:`encoding_name_for_model`), loaded with
    :func:`get_encoding` from the file tiktoken cached."""
    return get_encoding(encoding_name_for_model(model), cache_dir=cache_dir)


def load_any(
    path: Union[str, os.PathLike],
    *,
    pattern: Optional[str] = None,
    special_tokens: Optional[Mapping[str, int]] = None,
    strict: bool = True,
):
    """Load a tokenizer file of any supported format (see :mod:`toksmith.files.detect`): a
    :class:`toksmith.Tokenizer` for byte-level BPE, a
    :class:`toksmith.pipeline_tokenizer.PipelineTokenizer` for a SentencePiece ``.model``, a
    WordPiece folder, CLIP's files or a Unigram / WordPiece / character-BPE ``tokenizer.json``.

    ``pattern`` and ``special_tokens`` apply to the formats that do not store them (``.tiktoken``
    rank files and GPT-2 files); giving them for a toksmith or Hugging Face file is an error.
    ``strict=False`` is :func:`from_huggingface`'s (a Hugging Face file's Unicode normalizer or
    decoder differences dropped with a warning); the other formats have nothing to relax.

    >>> import os, tempfile, toksmith
    >>> tok = toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2")
    >>> d = tempfile.mkdtemp()
    >>> tok.save_huggingface(d)
    >>> detect_format(d), load_any(d).encode("hi")
    ('huggingface', [104, 105])
    """
    if not isinstance(strict, bool):
        raise TypeError(f"strict must be True or False, not {type(strict).__name__}")
    p = fspath(path)
    return _load_detected(p, _detect(p), pattern, special_tokens, strict)


def _head(file: str, raw: Optional[bytes]) -> bytes:
    if raw is not None:
        return raw[:4096]
    with open(file, "rb") as f:
        return f.read(4096)


#: loaders of the file formats whose tokenizers live above this layer (the presets): each preset
#: registers its own when it is imported (toksmith's package __init__ imports them all)
_FILE_LOADERS: Dict[str, Callable[[str], Any]] = {}


def register_file_loader(fmt: str, loader: Callable[[str], Any]) -> None:
    """Make :func:`load_any` build files that :func:`detect_format` names ``fmt`` with
    ``loader(path)`` (for preset tokenizers, which are built above this layer)."""
    _FILE_LOADERS[fmt] = loader


def _load_detected(
    p: str,
    detected: Detected,
    pattern: Optional[str],
    special_tokens: Optional[Mapping[str, int]],
    strict: bool = True,
):
    """:func:`load_any` once ``_detect(p)`` has named the format (callers that also report the
    format detect once)."""
    fmt, file, doc, tables, raw = detected
    names = {"js-tiktoken": "js-tiktoken", "tekken": "Tekken"}
    self_describing = ("toksmith", "huggingface", "sentencepiece", "wordpiece", "clip", *names)
    if fmt in self_describing and (pattern is not None or special_tokens is not None):
        raise ValueError(
            f"{p} is a {names.get(fmt, fmt)} file, which stores its own pattern and special "
            "tokens: pattern=/special_tokens= only apply to .tiktoken and GPT-2 files"
        )
    if fmt == "sentencepiece":
        return PipelineTokenizer.from_source(_pipeline_files.read_sentencepiece(file, raw))
    if fmt == "wordpiece":
        return PipelineTokenizer.from_source(_pipeline_files.read_wordpiece_folder(file))
    if fmt == "clip":
        if os.path.isdir(file) or not _clip.looks_like_clip_gz(_head(file, raw)):
            return PipelineTokenizer.from_source(_clip.read_clip_files(*_gpt2_files_for(file)))
        return PipelineTokenizer.from_source(_clip.read_clip_bpe_gz(file, raw))
    if fmt == "huggingface" and _pipeline_files.is_pipeline_json(doc):
        return PipelineTokenizer.from_source(_pipeline_files.read_hf_pipeline_json(file, raw))
    if fmt == "calm":
        if pattern is not None or special_tokens is not None:
            raise ValueError(
                f"{p} is a CALM byte tokenizer: its vocabulary is fixed (no pattern/special_tokens)"
            )
        return _FILE_LOADERS["calm"](p)
    if fmt == "toksmith":
        return load_bytes(raw, file) if raw is not None else load(file)
    if fmt == "huggingface":
        if doc is None:
            return from_huggingface(p, strict=strict)
        return Tokenizer.from_spec(
            _huggingface._spec_from_document(
                doc, file, file, strict=strict, name=None, tables=tables
            )
        )
    if fmt == "js-tiktoken":
        assert doc is not None
        return Tokenizer.from_spec(_tiktoken.read_js_tiktoken(doc, file))
    if fmt == "tekken":
        assert doc is not None
        return Tokenizer.from_spec(_tekken.read_tekken(doc, file))
    if fmt == "tiktoken":
        if raw is not None:
            return Tokenizer.from_spec(
                _tiktoken._spec_from_rank_file(
                    raw, file, pattern=pattern, special_tokens=special_tokens
                )
            )
        return from_tiktoken(file, pattern=pattern, special_tokens=special_tokens)
    vocab, merges = _gpt2_files_for(p)
    return from_gpt2_files(vocab, merges, pattern=pattern or "gpt2", special_tokens=special_tokens)


__all__ = [
    "load",
    "load_bytes",
    "load_any",
    "detect_format",
    "from_tiktoken",
    "from_huggingface",
    "from_gpt2_files",
    "load_openai",
    "get_encoding",
    "encoding_for_model",
]
