"""What ``tok.save(path)`` writes and ``toksmith.load(path)`` reads.

A file named ``tokenizer.json`` is the name Hugging Face's libraries look for, so it is written
in their format (:func:`toksmith.files.huggingface.save_tokenizer_json`: ``tokenizers`` and
``transformers`` load it with the same ids, and toksmith's name, pattern text and metadata ride
along in its model); a tokenizer that format cannot express exactly raises
:class:`toksmith.ConversionError` suggesting another name. Any other name gets toksmith's own
JSON format (:mod:`toksmith.files.toksmith_json`). Loading reads either.
"""

from __future__ import annotations

import os
from typing import Union

from .._paths import fspath
from ..spec import TokenizerSpec
from . import huggingface as _huggingface
from . import toksmith_json as _toksmith_json
from .detect import _detect


def is_huggingface_name(path: Union[str, os.PathLike]) -> bool:
    """Whether ``tok.save(path)`` writes Hugging Face's format (the file is named tokenizer.json)."""
    return os.path.basename(os.fsdecode(fspath(path))) == _huggingface.HF_FILE_NAME


def save(tok, path: Union[str, os.PathLike]) -> None:
    """``tok.save(path)``: Hugging Face's format for a ``tokenizer.json``, else toksmith's."""
    if is_huggingface_name(path):
        _huggingface.save_tokenizer_json(tok, path)
    else:
        _toksmith_json.save(tok, path)


def read(path: Union[str, os.PathLike]) -> TokenizerSpec:
    """The spec of a file written by ``tok.save(path)``: toksmith's JSON format or a Hugging Face
    ``tokenizer.json`` (any byte-level BPE one, not only toksmith's)."""
    p = fspath(path)
    if isinstance(p, str) and os.path.isfile(p):  # not a pipe, which can be read only once
        try:
            fmt, file, doc, tables, _raw = _detect(p)
        except (OSError, ValueError):  # toksmith's reader says what is wrong with the file
            fmt = None
        if fmt == "huggingface":
            if doc is None:
                return _huggingface.read_huggingface(file)
            return _huggingface._spec_from_document(
                doc, file, file, strict=True, name=None, tables=tables
            )
    return _toksmith_json.read(path)


__all__ = ["is_huggingface_name", "read", "save"]
