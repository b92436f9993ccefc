"""toksmith: train byte-level BPE tokenizers and encode/decode at native speed.

>>> import toksmith
>>> tok = toksmith.train_from_iterator(["low lower lowest"] * 50, vocab_size=300, pattern="gpt2")
>>> tok.decode(tok.encode("lowest"))
'lowest'
"""

# the subpackages above the core layers, last: they import the names above. `toksmith.formats`
# (the old names of the file readers), `toksmith.calm` and `toksmith.presets` are attributes
# of the package as soon as it is imported.
from . import calm as calm  # noqa: E402
from . import formats as formats  # noqa: E402
from . import presets as presets  # noqa: E402
from ._fileio import MAX_TOKENIZER_FILE_BYTES
from ._version import __version__
from .counts import ChunkCounts, count_chunks
from .dataset import tokenize_dataset
from .errors import (
    ConversionError,
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
from .registry import (
    encoding_for_model,
    from_gpt2_files,
    from_huggingface,
    from_tiktoken,
    get_encoding,
    load,
    load_any,
)
from .tokenizer import Tokenizer
from .train import train, train_from_counts, train_from_iterator

__all__ = [
    "Tokenizer",
    "MAX_TOKENIZER_FILE_BYTES",
    "train",
    "train_from_iterator",
    "train_from_counts",
    "tokenize_dataset",
    "count_chunks",
    "ChunkCounts",
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
