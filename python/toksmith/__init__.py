"""toksmith: train byte-level BPE tokenizers and encode/decode at native speed.

>>> import toksmith
>>> tok = toksmith.train_from_iterator(["low lower lowest"] * 50, vocab_size=300, pattern="gpt2")
>>> tok.decode(tok.encode("lowest"))
'lowest'
"""


from .errors import (
    CorpusDecodeError,
    DisallowedSpecialError,
    EmptyCorpusError,
    MergesError,
    PatternError,
    TokenizerFileError,
    ToksmithError,
    UnknownTokenError,
    VocabError,
)
from .formats import ConversionError, from_gpt2_files, from_huggingface, from_tiktoken, load_any
from .pretokenize import PATTERNS, split
from .serialization import load
from .tokenizer import Tokenizer
from .train import train, train_from_counts, train_from_iterator

__version__ = "0.1.0"

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
    "ConversionError",
    "__version__",
]
