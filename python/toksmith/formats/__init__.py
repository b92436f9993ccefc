"""Tokenizer file formats: toksmith JSON, tiktoken, Hugging Face, GPT-2.

:func:`load_any` detects the format of a file (or folder) and loads it as a
:class:`toksmith.Tokenizer`.
"""

from __future__ import annotations

import os
from typing import Union


def detect_format(path: Union[str, os.PathLike]) -> str:
    """Return the format name of a tokenizer file: currently ``"toksmith"``."""
    return "toksmith"


def load_any(path: Union[str, os.PathLike]):
    """Load a tokenizer file of any supported format."""
    from ..serialization import load

    return load(path)


__all__ = ["detect_format", "load_any"]
