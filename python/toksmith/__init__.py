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
    "__version__",
]
