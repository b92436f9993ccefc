"""Tokenizer file formats: toksmith JSON, tiktoken, Hugging Face, GPT-2 (the names of the
package before the readers moved to :mod:`toksmith.files` and the loaders to
:mod:`toksmith.registry`; this package only re-exports them).

:func:`load_any` detects the format of a file (or folder) and loads it as a
:class:`toksmith.Tokenizer`; :func:`detect_format` only names the format (the formats: see
:mod:`toksmith.files.detect`).

>>> import os, tempfile, toksmith
>>> tok = toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2")
>>> d = tempfile.mkdtemp()
>>> tok.save_huggingface(d)
>>> detect_format(d), load_any(d).encode("hi")
('huggingface', [104, 105])
"""

from ..errors import ConversionError
from ..files.detect import FORMATS, Detected, _detect, _gpt2_files_for, detect_format
from ..files.gpt2 import save_gpt2_files
from ..files.huggingface import save_huggingface, to_huggingface
from ..files.tiktoken import save_tiktoken, to_tiktoken
from ..registry import (
    _load_detected,
    encoding_for_model,
    from_gpt2_files,
    from_huggingface,
    from_tiktoken,
    get_encoding,
    load_any,
    load_openai,
)
from . import _common, _regex, gpt2, huggingface, tiktoken

__all__ = [
    "FORMATS",
    "ConversionError",
    "Detected",
    "_detect",
    "_gpt2_files_for",
    "_common",
    "_regex",
    "gpt2",
    "huggingface",
    "tiktoken",
    "_load_detected",
    "detect_format",
    "load_any",
    "from_tiktoken",
    "get_encoding",
    "encoding_for_model",
    "load_openai",
    "to_tiktoken",
    "save_tiktoken",
    "from_huggingface",
    "to_huggingface",
    "save_huggingface",
    "from_gpt2_files",
    "save_gpt2_files",
]
