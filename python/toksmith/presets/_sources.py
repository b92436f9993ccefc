"""What a preset's ``train(paths_or_texts, ...)`` was given: files or texts.

Shared by the preset modules so that they read their first argument the same way.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Optional

from ..tokenizer import Tokenizer

if TYPE_CHECKING:
    from . import Preset


def _is_paths(source: Any) -> bool:
    if isinstance(source, os.PathLike):
        return True
    if isinstance(source, (list, tuple)) and source and all(isinstance(p, os.PathLike) for p in source):
        return True
    return False


def _all_paths(source: Any) -> bool:
    # a list of str names files when every item is an existing path or a glob pattern
    if not isinstance(source, (list, tuple)) or not source:
        return False
    if not all(isinstance(p, (str, os.PathLike)) for p in source):
        return False
    return all(os.path.exists(p) or (isinstance(p, str) and any(c in p for c in "*?[") and "\n" not in p)
               for p in source)


def train_on_source(source: Any, *, text_field: str, errors: str, **common: Any) -> Tokenizer:
    """Train on ``source``: a path (str or os.PathLike: file, folder or glob) or a list of paths
    goes to :func:`toksmith.train`; any other iterable of str to
    :func:`toksmith.train_from_iterator`. A single str is a path; a list of str is a list of
    paths when every item names an existing file or folder (or is a glob), texts otherwise."""
    from ..train import train as train_files, train_from_iterator

    if isinstance(source, (bytes, bytearray)):
        raise TypeError("paths_or_texts must be a path, a list of paths or an iterable of str, not bytes")
    if isinstance(source, str) or _is_paths(source):
        return train_files(source, text_field=text_field, errors=errors, **common)
    if _all_paths(source):
        return train_files(list(source), text_field=text_field, errors=errors, **common)
    return train_from_iterator(source, **common)


def train_preset(preset: "Preset", source: Any, vocab_size: int, *, threads: Optional[int], progress: bool,
                 text_field: str, errors: str, name: Optional[str]) -> Tokenizer:
    """Train with a preset's pattern and special tokens (:func:`train_on_source`), the preset's
    name recorded in the metadata."""
    tok = train_on_source(source, text_field=text_field, errors=errors, vocab_size=vocab_size,
                          pattern=preset.pattern, special_tokens=preset.special_token_spec(),
                          threads=threads, progress=progress, name=name)
    tok.metadata["preset"] = preset.name
    return tok
