"""Argument checks shared by the whole package (the lowest layer: imports nothing of toksmith).

One helper for "an integer argument, numpy integers accepted, bools refused", one for a bool
argument, one for a token id and one thread-count parser, so that every function (the core
layers and the presets, whose wordings are in :mod:`toksmith.presets._checks`) checks these the
same way; each caller keeps its own message.
"""

from __future__ import annotations

import operator
from typing import Any, Optional

#: the most threads a call may ask for
MAX_THREADS = 4096


def is_numpy_bool(value: Any) -> bool:
    """Whether ``value`` is a numpy bool (which has ``__index__`` but is no count)."""
    return type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool")


def index_arg(value: Any, type_error: str, *, name: str = "", numpy: bool = True) -> int:
    """``value`` as a Python int: an int, or (unless ``numpy`` is false) any integer with
    ``__index__`` such as a numpy integer; never a bool or a numpy bool (``True`` is no count).
    Otherwise TypeError with ``type_error``, in which ``{type}``, ``{name}`` and ``{value}``
    stand for the name of ``value``'s type, ``name`` and ``value``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    numpy_bool = is_numpy_bool(value)
    if numpy and not numpy_bool and not isinstance(value, bool):
        if hasattr(type(value), "__index__"):
            return operator.index(value)
    kind = "bool" if numpy_bool else type(value).__name__  # numpy 1 names it bool_
    raise TypeError(type_error.format(type=kind, name=name, value=value))


def bool_arg(value: Any, name: str, type_error: str, *, numpy: bool = True) -> bool:
    """``value`` as a bool: True or False, or (unless ``numpy`` is false) a numpy bool. An int
    or another truthy value is a TypeError with ``type_error`` (``{name}``, ``{type}``,
    ``{value}`` as in :func:`index_arg`)."""
    if isinstance(value, bool):
        return value
    if numpy and is_numpy_bool(value):
        return bool(value)
    raise TypeError(type_error.format(name=name, type=type(value).__name__, value=value))


def as_id(v: Any) -> Optional[int]:
    """``v`` as an id (an int in 0..2**32, numpy integers included, as tiktoken takes them;
    not a bool), else None."""
    if isinstance(v, bool):
        return None
    if not isinstance(v, int):
        try:
            v = operator.index(v)
        except TypeError:
            return None
    return v if 0 <= v < 2**32 else None


#: the messages of :func:`thread_count`, by caller (``{name}``, ``{type}``, ``{max}``, ``{value}``)
THREADS_TYPE_ERROR = "{name} must be an int or None, not {type}"
THREADS_RANGE_ERROR = "{name} must be between 1 and {max} (or None for all cores), not {value}"
#: the ``--threads`` option of the command line
THREADS_OPTION_RANGE_ERROR = (
    "--threads must be between 1 and {max}, not {value} (leave it out for all cores)"
)


def thread_count(
    threads: Any,
    name: str = "threads",
    *,
    type_error: str = THREADS_TYPE_ERROR,
    range_error: str = THREADS_RANGE_ERROR,
    numpy: bool = True,
) -> int:
    """One thread-count argument checked: 0 (one thread per core) for None, else an int in
    1..MAX_THREADS (:func:`index_arg`: a numpy integer too unless ``numpy`` is false; never a
    bool). ``name`` names it in the messages, which ``type_error`` and ``range_error`` give
    (each caller keeps its own wording)."""
    if threads is None:
        return 0
    number = index_arg(threads, type_error, name=name, numpy=numpy)
    if not 1 <= number <= MAX_THREADS:
        raise ValueError(range_error.format(name=name, max=MAX_THREADS, value=number))
    return number


def threads_arg(threads: Optional[int], num_threads: Optional[int] = None) -> int:
    """A thread count for the core (0: one per core); ``num_threads`` is tiktoken's name for
    ``threads``: pass one or the other (both only with the same value, ValueError otherwise).
    The core starts no more threads than the machine has cores (at least 8): more would only
    contend."""
    if num_threads is None:
        return thread_count(threads, "threads")
    if threads is None:
        return thread_count(num_threads, "num_threads")
    n, m = thread_count(threads, "threads"), thread_count(num_threads, "num_threads")
    if n != m:
        raise ValueError(
            f"threads={n} and num_threads={m} disagree: num_threads is another name for threads, "
            "pass only one of them"
        )
    return n


def fix_surrogates(text: str) -> str:
    """``text`` with its lone surrogates (which UTF-8 cannot encode) replaced by U+FFFD, as
    tiktoken does; a surrogate pair becomes the one character it stands for."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


__all__ = [
    "MAX_THREADS",
    "THREADS_OPTION_RANGE_ERROR",
    "THREADS_RANGE_ERROR",
    "THREADS_TYPE_ERROR",
    "as_id",
    "bool_arg",
    "fix_surrogates",
    "index_arg",
    "is_numpy_bool",
    "thread_count",
    "threads_arg",
]


#: the numpy dtypes the array encoders write, each with the first id it cannot hold
ARRAY_DTYPES = {"uint16": 1 << 16, "uint32": 1 << 32, "int32": 1 << 31, "int64": 1 << 63}


def array_dtype(dtype: Any, top: int) -> str:
    """The name of the numpy dtype for ids up to ``top``: ``dtype`` (one of
    :data:`ARRAY_DTYPES`), or for None the smallest of uint16 and uint32 that holds them.
    Needs numpy (the callers check for it first: the message names their extra)."""
    if dtype is None:
        return "uint16" if top < 65536 else "uint32"
    import numpy as np

    try:
        name = str(np.dtype(dtype))
    except (TypeError, ValueError, UnicodeError):  # not a dtype at all
        name = ""
    if name not in ARRAY_DTYPES:
        raise ValueError(
            f"dtype must be one of {', '.join(map(repr, ARRAY_DTYPES))} (or None), not {dtype!r}"
        )
    if top >= ARRAY_DTYPES[name]:
        wider = "uint32 or int64" if name == "int32" else "uint32"
        raise ValueError(f"dtype {name} cannot hold ids up to {top}; use {wider}")
    return name


def mark_id(name: str, value: Any, n_vocab: int) -> Optional[int]:
    """A ``bos``/``eos`` argument: None, or a token id below ``n_vocab``."""
    if value is None:
        return None
    i = as_id(value)
    if i is None or i >= n_vocab:
        raise ValueError(f"{name} must be a token id (an int in 0..{n_vocab - 1}), not {value!r}")
    return i
