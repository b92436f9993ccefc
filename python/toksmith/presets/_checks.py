"""Argument checks the presets share: ints that may come from numpy, and the options of the
presets' ``train`` functions (a wrong type is a TypeError, a bad value a ValueError)."""

from __future__ import annotations

import operator
from typing import Any, Optional

from ._sources import check_source


def is_numpy_bool(value: Any) -> bool:
    return type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool")


def as_int(value: Any, what: str) -> int:
    """``value`` as a Python int: an int or a numpy integer (anything with ``__index__``);
    a bool, a float or a str is a TypeError."""
    if isinstance(value, bool) or is_numpy_bool(value):
        raise TypeError(f"{what} must be an int, not bool")
    if isinstance(value, int):
        return int(value)
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an int, not {type(value).__name__}") from None


def optional_int(value: Any, what: str) -> Optional[int]:
    """None, or :func:`as_int` of ``value`` (a thread count: the core checks the range)."""
    if value is None:
        return None
    try:
        return as_int(value, what)
    except TypeError:
        raise TypeError(f"{what} must be an int or None, not {type(value).__name__}") from None


def check_train_options(paths_or_texts: Any, *, name: Any, text_field: Any, errors: Any) -> None:
    """The options every byte-level preset's ``train`` takes besides sizes and threads."""
    if paths_or_texts is None:
        raise TypeError(
            "paths_or_texts must be a path, a list of paths or an iterable of str texts, not None"
        )
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a str or None, not {type(name).__name__}")
    if not isinstance(text_field, str):
        raise TypeError(f"text_field must be a str, not {type(text_field).__name__}")
    if not isinstance(errors, str):
        raise TypeError(
            f'errors must be a str ("strict" or "replace"), not {type(errors).__name__}'
        )
    check_source(paths_or_texts, errors)
