"""Small shared helpers: the lazy numpy import and argument checks."""

from __future__ import annotations

import operator
from typing import Any, Optional

from ...tokenizer import MAX_THREADS  # the most threads a call may ask for

NUMPY_HINT = "pip install toksmith[numpy]"


def require_numpy(feature: str) -> Any:
    """Import numpy on first use; numpy is an optional extra of toksmith."""
    try:
        import numpy
    except ImportError as exc:  # pragma: no cover - numpy is installed in the test env
        raise ImportError(f"{feature} needs numpy: {NUMPY_HINT}") from exc
    return numpy


def check_int(value: object, name: str, *, minimum: Optional[int] = None) -> int:
    """An int argument (numpy integers accepted, bool rejected)."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not bool")
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an int, not {type(value).__name__}") from None
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
    number = check_int(threads, name)
    if not 1 <= number <= MAX_THREADS:
        raise ValueError(
            f"{name} must be between 1 and {MAX_THREADS} (or None for all cores), not {number}"
        )
    return number


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
    if isinstance(value, bool):
        return value
    if type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool"):
        return bool(value)
    raise TypeError(f"{name} must be a bool, not {type(value).__name__}")


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
