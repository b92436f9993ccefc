"""The argument checks of every preset (nanochat, cromwell, cppreason, wordbpe, calm): the
wordings the presets' messages use, over the package's one set of checks in
:mod:`toksmith._args` (:func:`~toksmith._args.index_arg` for integers,
:func:`~toksmith._args.bool_arg` for bools, :func:`~toksmith._args.thread_count` for thread
counts). A wrong type is a TypeError, a bad value a ValueError.
"""

from __future__ import annotations

from typing import Any, Optional

from .._args import bool_arg, index_arg
from .._args import thread_count as _thread_count
from ._sources import check_source

NUMPY_HINT = "pip install toksmith[numpy]"

#: the wording of :func:`as_int` (the byte-level presets and calm)
INT_TYPE_ERROR = "{name} must be an int, not {type}"


# ---- the wordings of the presets ---------------------------------------------------------------


def as_int(value: Any, what: str) -> int:
    """``value`` as a Python int: an int or a numpy integer (anything with ``__index__``);
    a bool, a float or a str is a TypeError."""
    return index_arg(value, INT_TYPE_ERROR, name=what)


def optional_int(value: Any, what: str) -> Optional[int]:
    """None, or :func:`as_int` of ``value`` (a thread count: the core checks the range)."""
    if value is None:
        return None
    return index_arg(value, "{name} must be an int or None, not {type}", name=what)


def check_int(value: object, name: str, *, minimum: Optional[int] = None) -> int:
    """An int argument (numpy integers accepted, bool rejected) of at least ``minimum``."""
    number = index_arg(value, INT_TYPE_ERROR, name=name)
    if minimum is not None and number < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {number}")
    return number


def check_threads(threads: object, name: str = "threads") -> Optional[int]:
    """A thread count as toksmith's Tokenizer takes it: None or an int in 1..MAX_THREADS.

    The CALM tokenizer is pure Python and runs on the calling thread; the
    argument is still checked so that a wrong value fails the same way with
    both tokenizers instead of being ignored.
    """
    if threads is None:
        return None
    return _thread_count(threads, name, type_error=INT_TYPE_ERROR)


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
