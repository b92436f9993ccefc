"""What a preset's ``train(paths_or_texts, ...)`` was given: files or texts.

Shared by the preset modules so that they read their first argument the same way: the
byte-level presets hand it to toksmith's trainer (:func:`train_on_source`); the word-level
ones (wordbpe, cppreason) read it themselves (:func:`check_source`, :func:`is_path_source`,
:func:`source_files`, :func:`iter_source_texts`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Iterator, List, Optional, Sequence, Tuple

from ..corpus import expand_paths, inner_name
from ..tokenizer import Tokenizer
from ..train import train as train_files
from ..train import train_from_iterator
from ._registry import Preset


def _is_paths(source: Any) -> bool:
    if isinstance(source, os.PathLike):
        return True
    if (
        isinstance(source, (list, tuple))
        and source
        and all(isinstance(p, os.PathLike) for p in source)
    ):
        return True
    return False


def _all_paths(source: Any) -> bool:
    # a list of str names files when every item is an existing path or a glob pattern
    if not isinstance(source, (list, tuple)) or not source:
        return False
    if not all(isinstance(p, (str, os.PathLike)) for p in source):
        return False
    return all(
        os.path.exists(p) or (isinstance(p, str) and any(c in p for c in "*?[") and "\n" not in p)
        for p in source
    )


def train_on_source(source: Any, *, text_field: str, errors: str, **common: Any) -> Tokenizer:
    """Train on ``source``: a path (str or os.PathLike: file, folder or glob) or a list of paths
    goes to :func:`toksmith.train`; any other iterable of str to
    :func:`toksmith.train_from_iterator`. A single str is a path; a list of str is a list of
    paths when every item names an existing file or folder (or is a glob), texts otherwise."""
    if isinstance(source, (bytes, bytearray)):
        raise TypeError(
            "paths_or_texts must be a path, a list of paths or an iterable of str, not bytes"
        )
    if isinstance(source, str) or _is_paths(source):
        return train_files(source, text_field=text_field, errors=errors, **common)
    if _all_paths(source):
        return train_files(list(source), text_field=text_field, errors=errors, **common)
    return train_from_iterator(source, **common)


def train_preset(
    preset: "Preset",
    source: Any,
    vocab_size: int,
    *,
    threads: Optional[int],
    progress: bool,
    text_field: str,
    errors: str,
    name: Optional[str],
    pattern: Optional[str] = None,
) -> Tokenizer:
    """Train with a preset's pattern (or ``pattern``) and special tokens
    (:func:`train_on_source`), the preset's name recorded in the metadata."""
    tok = train_on_source(
        source,
        text_field=text_field,
        errors=errors,
        vocab_size=vocab_size,
        pattern=preset.pattern if pattern is None else pattern,
        special_tokens=preset.special_token_spec(),
        threads=threads,
        progress=progress,
        name=name,
    )
    tok.metadata["preset"] = preset.name
    return tok


def check_source(source: Any, errors: Any) -> None:
    """Reject bytes for ``paths_or_texts`` and an ``errors`` other than strict / replace."""
    if isinstance(source, (bytes, bytearray)):
        raise TypeError(
            "paths_or_texts must be a path, a list of paths or an iterable of str, not bytes"
        )
    if errors not in ("strict", "replace"):
        raise ValueError(
            f'errors must be "strict" (raise on invalid UTF-8) or "replace", not {errors!r}'
        )


def is_path_source(source: Any) -> bool:
    """A str or os.PathLike, or a list of paths (os.PathLike, or str naming existing files or
    folders): anything else is an iterable of texts."""
    if isinstance(source, (str, os.PathLike)):
        return True
    return (
        isinstance(source, (list, tuple))
        and bool(source)
        and all(
            isinstance(p, os.PathLike) or (isinstance(p, str) and os.path.exists(p)) for p in source
        )
    )


def check_extensions(extensions: Any) -> Optional[Tuple[str, ...]]:
    """``extensions`` as a tuple of lower-case endings, or None for "every file": a single str
    is one extension (``".txt"`` means ``(".txt",)``, as with :meth:`str.endswith`); None or an
    empty sequence mean every file. Each extension must be a non-empty str."""
    if extensions is None:
        return None
    if isinstance(extensions, str):
        extensions = (extensions,)
    elif isinstance(extensions, (bytes, bytearray)) or not isinstance(extensions, Iterable):
        raise TypeError(
            f"extensions must be a str such as '.txt', a list of str, or None (every file), "
            f"not {type(extensions).__name__}"
        )
    exts = tuple(extensions)
    for e in exts:
        if not isinstance(e, str):
            raise TypeError(
                f"extensions must be str such as '.txt', not {type(e).__name__} ({e!r})"
            )
        if not e:
            raise ValueError(
                "an extension is empty: pass endings such as '.txt', or extensions=None for every file"
            )
    return tuple(e.lower() for e in exts) or None


def source_files(source: Any, extensions: Optional[Sequence[str]] = None) -> List[Path]:
    """The files a path source names (:func:`toksmith.corpus.expand_paths`); from folders only
    those whose name ends in one of ``extensions`` (any case) when it is given (a single str
    is one extension: :func:`check_extensions`), before any compressed-file suffix
    (``notes.txt.gz`` is a ``.txt`` file)."""
    exts = check_extensions(extensions)
    items = [source] if isinstance(source, (str, os.PathLike)) else list(source)
    out: List[Path] = []
    for p in items:
        if exts and os.path.isdir(p):
            out.extend(
                f
                for f in expand_paths(p)
                if f.name.lower().endswith(exts) or inner_name(f.name).lower().endswith(exts)
            )
        else:
            out.extend(expand_paths(p))
    return out


def iter_source_texts(texts: Any) -> Iterator[str]:
    """The texts of a text source, each checked to be a str."""
    for t in texts:
        if not isinstance(t, str):
            raise TypeError(f"text must be str, not {type(t).__name__}")
        yield t
