"""toksmith's exceptions.

Bad input or data raises a subclass of :class:`ToksmithError` (itself a ``ValueError``); a wrong
argument type raises ``TypeError``; a file-system problem raises ``OSError``. The native core
maps its errors to these classes in one place (``crates/toksmith-py/src/errors.rs``).
"""

from ._core import (
    CorpusDecodeError,
    EmptyCorpusError,
    MergesError,
    PatternError,
    ToksmithError,
    UnknownTokenError,
    VocabError,
)


class ConversionError(VocabError):
    """A tokenizer cannot be converted exactly between toksmith and another library's format.

    Raised when a file uses a component toksmith cannot reproduce (a WordPiece or Unigram
    model, a normalizer, a pre-tokenizer sequence, ...) or when a toksmith tokenizer has a
    feature the target format cannot express (pinned tokens in tiktoken, a rank table without a
    merge list in Hugging Face BPE, ...). The message names the component. toksmith never
    converts approximately.
    """


class DisallowedSpecialError(ToksmithError):
    """The text contains a special token that the call did not allow."""


class TokenizerFileError(ToksmithError):
    """A tokenizer file is truncated, corrupted, of an unknown version or inconsistent."""


class TokenizerFileNotFoundError(TokenizerFileError, FileNotFoundError):
    """A folder holds none of the tokenizer files looked for (also a ``FileNotFoundError``: a
    file-system problem, so ``except OSError`` catches it as it catches a missing path)."""


class UnknownModelError(ToksmithError, KeyError):
    """No encoding is known for a model name (also a ``KeyError``, as tiktoken raises)."""

    __str__ = ValueError.__str__  # the message as given (KeyError's would quote it)


def missing_extra(extra: str, module: str) -> ImportError:
    """The ImportError raised when an optional dependency is not installed."""
    return ImportError(
        f"this feature needs the optional dependency {module!r}: "
        f"install it with `pip install toksmith[{extra}]`"
    )


__all__ = [
    "ToksmithError",
    "PatternError",
    "VocabError",
    "EmptyCorpusError",
    "UnknownTokenError",
    "CorpusDecodeError",
    "MergesError",
    "DisallowedSpecialError",
    "ConversionError",
    "TokenizerFileError",
    "TokenizerFileNotFoundError",
    "UnknownModelError",
    "missing_extra",
]
