"""What the preset tokenizer classes share: wrapping a toksmith Tokenizer that has the preset's
special tokens, and reading and writing it as one file (or a folder holding it)."""

from __future__ import annotations

import os
from typing import Dict, Mapping, Sequence, Tuple, Type, TypeVar, Union

from .._paths import fspath
from ..tokenizer import Tokenizer

PathLike = Union[str, "os.PathLike[str]"]
T = TypeVar("T", bound="PresetTokenizer")


class PresetTokenizer:
    """Base of the preset interfaces (:class:`~toksmith.presets.nanochat.ChatTokenizer`,
    :class:`~toksmith.presets.cromwell.CodeTokenizer`).

    A subclass names its preset (``PRESET_NAME``), the special tokens it needs
    (``REQUIRED_SPECIALS``) and how to give them to the trainer (``SPECIALS_SPEC``, shown in the
    error when they are missing). The wrapped tokenizer is :attr:`tokenizer`.
    """

    PRESET_NAME: str = ""
    REQUIRED_SPECIALS: Tuple[str, ...] = ()
    SPECIALS_SPEC: Union[Sequence[str], Mapping[str, int]] = ()
    #: the file name used when :meth:`save` / :meth:`load` are given a folder
    FILE_NAME = "tokenizer.json"

    def __init__(self, tokenizer: Tokenizer) -> None:
        if isinstance(tokenizer, PresetTokenizer):
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
        self.tokenizer: Tokenizer = tokenizer
        self._all_specials: Dict[str, int] = specials

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.tokenizer!r})"

    @classmethod
    def load(cls: Type[T], path: PathLike) -> T:
        """Load a tokenizer file of any format :func:`toksmith.load_any` reads; given a folder
        holding a ``tokenizer.json`` written by :meth:`save`, load that file."""
        from ..formats import load_any

        inner = os.path.join(fspath(path), cls.FILE_NAME)
        if os.path.isdir(path) and os.path.isfile(inner):
            path = inner
        return cls(load_any(path))

    def save(self, path: PathLike) -> None:
        """Write the underlying tokenizer as a toksmith JSON file; given an existing folder, write
        ``tokenizer.json`` inside it."""
        path = fspath(path)  # not an int: os.path.isdir takes that as a file descriptor
        if os.path.isdir(path):
            path = os.path.join(os.fspath(path), self.FILE_NAME)
        self.tokenizer.save(path)
