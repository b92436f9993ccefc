"""The argument checks of every preset (nanochat, cromwell, cppreason, wordbpe, calm).

Three helpers do the work, each keeping its caller's message (the messages are part of the
presets' interface; ``{type}``, ``{name}``, ``{max}`` and ``{value}`` in a message template
stand for the argument's type name, its name, :data:`MAX_THREADS` and its value):

* :func:`index_arg`: an integer argument, numpy integers accepted unless ``numpy=False``,
  bools (numpy bools too) refused;
* :func:`thread_count`: a thread count, None or an int in 1..MAX_THREADS;
* :func:`bool_arg`: a bool argument, numpy bools accepted unless ``numpy=False``.

A wrong type is a TypeError, a bad value a ValueError. The named checks below them
(:func:`as_int`, :func:`check_int`, :func:`check_threads`, :func:`check_bool`...) are these
helpers with the wording one group of presets uses.
"""

from __future__ import annotations

import operator
from typing import Any, Optional

from ..tokenizer import MAX_THREADS  # the most threads a call may ask for
from ._sources import check_source

NUMPY_HINT = "pip install toksmith[numpy]"

#: the wording of :func:`as_int` (the byte-level presets and calm)
INT_TYPE_ERROR = "{name} must be an int, not {type}"


def is_numpy_bool(value: Any) -> bool:
    return type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool")


def index_arg(
    value: Any, name: str, type_error: str = INT_TYPE_ERROR, *, numpy: bool = True
) -> int:
    """``value`` as a Python int: an int, or (unless ``numpy`` is false) any integer with
    ``__index__`` such as a numpy integer. A bool or a numpy bool (``True`` is no count), a
    float or a str is a TypeError with ``type_error``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    numpy_bool = is_numpy_bool(value)
    if (
        numpy
        and not numpy_bool
        and not isinstance(value, bool)
        and hasattr(type(value), "__index__")
    ):
        return operator.index(value)
    kind = "bool" if numpy_bool else type(value).__name__  # numpy 1 names it bool_
    raise TypeError(type_error.format(name=name, type=kind, value=value))


def thread_count(
    threads: Any,
    name: str = "threads",
    *,
    type_error: str = INT_TYPE_ERROR,
    range_error: str = "{name} must be between 1 and {max} (or None for all cores), not {value}",
    numpy: bool = True,
) -> Optional[int]:
    """A thread count: None (all cores), or :func:`index_arg` of ``threads`` in
    1..:data:`MAX_THREADS` (ValueError with ``range_error`` otherwise)."""
    if threads is None:
        return None
    number = index_arg(threads, name, type_error, numpy=numpy)
    if not 1 <= number <= MAX_THREADS:
        raise ValueError(range_error.format(name=name, max=MAX_THREADS, value=number))
    return number


def bool_arg(value: Any, name: str, type_error: str, *, numpy: bool = True) -> bool:
    """``value`` as a bool: True or False, or (unless ``numpy`` is false) a numpy bool. An int
    or another truthy value is a TypeError with ``type_error``."""
    if isinstance(value, bool):
        return value
    if numpy and is_numpy_bool(value):
        return bool(value)
    raise TypeError(type_error.format(name=name, type=type(value).__name__, value=value))


# ---- the wordings of the presets ---------------------------------------------------------------


def as_int(value: Any, what: str) -> int:
    """``value`` as a Python int: an int or a numpy integer (anything with ``__index__``);
    a bool, a float or a str is a TypeError."""
    return index_arg(value, what)


def optional_int(value: Any, what: str) -> Optional[int]:
    """None, or :func:`as_int` of ``value`` (a thread count: the core checks the range)."""
    if value is None:
        return None
    return index_arg(value, what, "{name} must be an int or None, not {type}")


def check_int(value: object, name: str, *, minimum: Optional[int] = None) -> int:
    """An int argument (numpy integers accepted, bool rejected) of at least ``minimum``."""
    number = index_arg(value, name)
    if minimum is not None and number < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {number}")
    return number


def check_threads(threads: object, name: str = "threads") -> Optional[int]:
    """A thread count as toksmith's Tokenizer takes it: None or an int in 1..MAX_THREADS.

    The CALM tokenizer is pure Python and runs on the calling thread; the
    argument is still checked so that a wrong value fails the same way with
    both tokenizers instead of being ignored.
    """
    return thread_count(threads, name)


def check_thread_args(threads: object, num_threads: object) -> Optional[int]:
    """``threads`` and its tiktoken name ``num_threads``, each checked as :func:`check_threads`:
    pass one or the other (both only with the same value; ValueError when they disagree)."""
    n = check_threads(threads)
    m = check_threads(num_threads, "num_threads")
    if n is not None and m is not None and n != m:
        raise ValueError(
            f"threads={n} and num_threads={m} disagree: num_threads is another name for threads, "
            "pass only one of them"
        )
    return n if n is not None else m


def check_bool(value: object, name: str) -> bool:
    """A bool argument (numpy bools accepted; ints and other truthy values rejected)."""
    return bool_arg(value, name, "{name} must be a bool, not {type}")


def check_flag(value: Any, name: str, *, numpy: bool = True) -> bool:
    """A bool option, named True or False in the message: ``bos=1`` or
    ``skip_special_tokens="no"`` is a TypeError."""
    return bool_arg(
        value, name, "{name} must be True or False, not {type} ({value!r})", numpy=numpy
    )


def require_numpy(feature: str) -> Any:
    """Import numpy on first use; numpy is an optional extra of toksmith."""
    try:
        import numpy
    except ImportError as exc:  # pragma: no cover - numpy is installed in the test env
        raise ImportError(f"{feature} needs numpy: {NUMPY_HINT}") from exc
    return numpy


def to_bytes(value: object, name: str) -> bytes:
    """``str`` (encoded as UTF-8) or a bytes-like object, as bytes."""
    if isinstance(value, str):
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(
                f"{name} contains a lone surrogate {value[exc.start]!r} at index {exc.start}, "
                "which has no UTF-8 encoding"
            ) from None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{name} must be str or bytes, not {type(value).__name__}")


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
