"""toksmith: train byte-level BPE tokenizers and encode/decode at native speed.

>>> import toksmith
>>> tok = toksmith.train_from_iterator(["low lower lowest"] * 50, vocab_size=300, pattern="gpt2")
>>> tok.decode(tok.encode("lowest"))
'lowest'
"""

from typing import TYPE_CHECKING

from .errors import (
    CorpusDecodeError,
    DisallowedSpecialError,
    EmptyCorpusError,
    MergesError,
    PatternError,
    TokenizerFileError,
    TokenizerFileNotFoundError,
    ToksmithError,
    UnknownModelError,
    UnknownTokenError,
    VocabError,
)
from .pretokenize import PATTERNS, split
from .serialization import load
from .tokenizer import Tokenizer
from .train import train, train_from_counts, train_from_iterator

if TYPE_CHECKING:
    from . import formats as formats
    from .formats import (
        ConversionError,
        encoding_for_model,
        from_gpt2_files,
        from_huggingface,
        from_tiktoken,
        get_encoding,
        load_any,
    )

__version__ = "0.1.0"

# The file-format readers (and their imports: json, hashlib, dataclasses...) are two thirds of
# `import toksmith`; they load on first use of any of these names.
_FROM_FORMATS = (
    "ConversionError",
    "from_gpt2_files",
    "from_huggingface",
    "from_tiktoken",
    "get_encoding",
    "encoding_for_model",
    "load_any",
)


#: subpackages loaded on first use (toksmith.formats, toksmith.presets.nanochat, toksmith.calm)
_SUBPACKAGES = ("formats", "presets", "calm")


def __getattr__(name: str):
    import importlib

    if name in _SUBPACKAGES:
        return importlib.import_module(f".{name}", __name__)
    if name in _FROM_FORMATS:
        return getattr(importlib.import_module(".formats", __name__), name)
    raise AttributeError(f"module 'toksmith' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {*_FROM_FORMATS, *_SUBPACKAGES})


__all__ = [
    "Tokenizer",
    "train",
    "train_from_iterator",
    "train_from_counts",
    "load",
    "load_any",
    "from_tiktoken",
    "from_huggingface",
    "from_gpt2_files",
    "get_encoding",
    "encoding_for_model",
    "split",
    "PATTERNS",
    "ToksmithError",
    "PatternError",
    "VocabError",
    "EmptyCorpusError",
    "UnknownTokenError",
    "CorpusDecodeError",
    "MergesError",
    "DisallowedSpecialError",
    "TokenizerFileError",
    "TokenizerFileNotFoundError",
    "UnknownModelError",
    "ConversionError",
    "__version__",
]
