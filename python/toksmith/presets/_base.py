"""The base classes of the preset tokenizers.

Every preset tokenizer derives from :class:`PresetTokenizer`:

==================================================  ================================  =========
class                                               what it is                        layer
==================================================  ================================  =========
:class:`~toksmith.presets.nanochat.ChatTokenizer`   nanochat's interface              wrapper
:class:`~toksmith.presets.cromwell.CodeTokenizer`   Cromwell's code tokenizer         wrapper
:class:`~toksmith.presets.cppreason.CppTokenizer`   fixed C++ word ids + learned BPE  wrapper
:class:`~toksmith.presets.wordbpe.WordTokenizer`    word-level ``</w>`` BPE           own
:class:`~toksmith.presets.calm.ByteTokenizer`       CALM's fixed 320-id byte table    own
==================================================  ================================  =========

What they all share is small, and is all that :class:`PresetTokenizer` holds: the preset's
name (:attr:`~PresetTokenizer.preset`), the number of ids (:attr:`~PresetTokenizer.n_vocab`),
``encode(text) -> ids`` and ``decode(ids) -> text`` (each preset adds options of its own, so
only the first argument is common), and one file per tokenizer (``save(path)`` and the class
method ``load(path)``). Their argument checks are the one set in :mod:`._checks`.

The three "wrapper" presets are a byte-level :class:`toksmith.Tokenizer` (:attr:`tokenizer`)
that has the preset's special tokens, with the preset's interface on top: they also share how
that tokenizer is checked, read and written (:class:`WrapperTokenizer`). The word-level and
CALM tokenizers have tables of their own (and files of their own format), so they implement
the common interface directly.
"""

from __future__ import annotations

import abc
import os
from typing import Any, ClassVar, Dict, Mapping, Optional, Sequence, Tuple, Type, TypeVar, Union

from .. import registry
from .._paths import fspath
from ..errors import ConversionError
from ..tokenizer import Tokenizer

PathLike = Union[str, "os.PathLike[str]"]
T = TypeVar("T", bound="PresetTokenizer")
W = TypeVar("W", bound="WrapperTokenizer")


class PresetTokenizer(abc.ABC):
    """What every preset tokenizer has (see the module's documentation for what it leaves to
    the presets)."""

    #: the preset's name, the name of its module in :mod:`toksmith.presets`
    preset: ClassVar[str] = ""

    @property
    @abc.abstractmethod
    def n_vocab(self) -> int:
        """The number of token ids (ids are 0 .. n_vocab - 1)."""

    @abc.abstractmethod
    def encode(self, text: Any, *args: Any, **kwargs: Any) -> Any:
        """The token ids of the str ``text``, a list of int (nanochat's also takes a list of
        texts, and gives a list of lists)."""

    @abc.abstractmethod
    def decode(self, ids: Sequence[int], *args: Any, **kwargs: Any) -> str:
        """The text of ``ids``."""

    @abc.abstractmethod
    def save(self, path: PathLike) -> None:
        """Write the tokenizer to the file ``path``, for :meth:`load`."""

    @classmethod
    @abc.abstractmethod
    def load(cls: Type[T], path: PathLike) -> T:
        """Read a tokenizer written by :meth:`save`."""

    # ---- exports to other libraries: exact, or refused with ConversionError naming why.
    # A preset with a table of its own (word-level, CALM's bytes) has no byte-level BPE that
    # tiktoken or Hugging Face could run with the same ids.

    #: why this preset cannot be exported (None: its byte-level tokenizer exports exactly)
    EXPORT_REFUSAL: ClassVar[str] = ""

    def _refuse_export(self, where: str) -> ConversionError:
        return ConversionError(
            f"{where}: a {self.preset} tokenizer cannot be exported exactly: {self.EXPORT_REFUSAL}"
        )

    def to_tiktoken(self, name: Optional[str] = None) -> Any:
        """A ``tiktoken.Encoding`` with the same ids, or ConversionError naming what cannot
        be exported."""
        raise self._refuse_export("to_tiktoken")

    def save_tiktoken(self, path: PathLike) -> None:
        """Write a ``.tiktoken`` rank file, or ConversionError naming what cannot be exported."""
        raise self._refuse_export("save_tiktoken")

    def to_huggingface(self) -> Any:
        """A ``tokenizers.Tokenizer`` with the same ids, or ConversionError."""
        raise self._refuse_export("to_huggingface")

    def save_huggingface(self, directory: PathLike) -> None:
        """Write a Hugging Face tokenizer folder, or ConversionError."""
        raise self._refuse_export("save_huggingface")

    def save_gpt2_files(self, directory: PathLike) -> None:
        """Write GPT-2 ``vocab.json`` + ``merges.txt``, or ConversionError."""
        raise self._refuse_export("save_gpt2_files")


class WrapperTokenizer(PresetTokenizer):
    """A preset over a toksmith :class:`~toksmith.Tokenizer` (:attr:`tokenizer`) that has the
    preset's special tokens: nanochat's ChatTokenizer, Cromwell's CodeTokenizer, CppReason's
    CppTokenizer.

    A subclass names the special tokens it needs (``REQUIRED_SPECIALS``), how to give them to
    the trainer (``SPECIALS_SPEC``, shown in the error when they are missing) and the preset's
    name in that message (``PRESET_NAME``); a preset whose needs are not a list of special
    tokens overrides :meth:`_check_tokenizer`.
    """

    PRESET_NAME: ClassVar[str] = ""
    REQUIRED_SPECIALS: ClassVar[Tuple[str, ...]] = ()
    SPECIALS_SPEC: ClassVar[Union[Sequence[str], Mapping[str, int]]] = ()
    #: the file name used when :meth:`save` / :meth:`load` are given a folder
    FILE_NAME = "tokenizer.json"

    def __init__(self, tokenizer: Tokenizer) -> None:
        tokenizer = self._check_tokenizer(tokenizer)
        self.tokenizer: Tokenizer = tokenizer
        self._all_specials: Dict[str, int] = tokenizer.special_tokens

    def _check_tokenizer(self, tokenizer: Any) -> Tokenizer:
        """``tokenizer`` (or the one another wrapper wraps) if it has the preset's special
        tokens: TypeError for what is no toksmith Tokenizer, ValueError naming the missing
        ones."""
        if isinstance(tokenizer, WrapperTokenizer):
            tokenizer = tokenizer.tokenizer
        name = type(self).__name__
        if not isinstance(tokenizer, Tokenizer):
            raise TypeError(f"{name} needs a toksmith.Tokenizer, not {type(tokenizer).__name__}")
        specials = tokenizer.special_tokens
        missing = [s for s in self.REQUIRED_SPECIALS if s not in specials]
        if missing:
            raise ValueError(
                f"the tokenizer lacks the {self.PRESET_NAME} special token(s) {missing}; train it with "
                f"toksmith.presets.{self.PRESET_NAME.lower()}.train() or pass special_tokens={self.SPECIALS_SPEC}"
            )
        return tokenizer

    @property
    def n_vocab(self) -> int:
        """Largest token id + 1."""
        return self.tokenizer.n_vocab

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.tokenizer!r})"

    # exports: those of the byte-level tokenizer, whose ids are the preset's (refused there,
    # with the reason, for a preset whose ids come from more than that tokenizer)

    def to_tiktoken(self, name: Optional[str] = None) -> Any:
        return self.tokenizer.to_tiktoken(name)

    def save_tiktoken(self, path: PathLike) -> None:
        self.tokenizer.save_tiktoken(path)

    def to_huggingface(self) -> Any:
        return self.tokenizer.to_huggingface()

    def save_huggingface(self, directory: PathLike) -> None:
        self.tokenizer.save_huggingface(directory)

    def save_gpt2_files(self, directory: PathLike) -> None:
        self.tokenizer.save_gpt2_files(directory)

    def __reduce__(self) -> Tuple[Any, ...]:
        # pickled as the wrapped tokenizer: the preset's tables are rebuilt from it
        return (type(self), (self.tokenizer,))

    @classmethod
    def load(cls: Type[W], path: PathLike) -> W:
        """Load a tokenizer file of any format :func:`toksmith.load_any` reads; given a folder
        holding the file :meth:`save` writes there (:attr:`FILE_NAME`, or a ``tokenizer.json``),
        load that file."""
        if os.path.isdir(path):
            for name in dict.fromkeys((cls.FILE_NAME, "tokenizer.json")):
                inner = os.path.join(fspath(path), name)
                if os.path.isfile(inner):
                    path = inner
                    break
        return cls(registry.load_any(path))

    def save(self, path: PathLike) -> None:
        """Write the underlying tokenizer (a file named ``tokenizer.json`` in Hugging Face's format,
        any other name as toksmith JSON); given an existing folder, write :attr:`FILE_NAME`
        inside it."""
        path = fspath(path)  # not an int: os.path.isdir takes that as a file descriptor
        if os.path.isdir(path):
            path = os.path.join(os.fspath(path), self.FILE_NAME)
        self.tokenizer.save(path)
