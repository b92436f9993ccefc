"""Small shared helpers: the lazy numpy import and argument checks."""

from __future__ import annotations

import operator
from typing import Any, Optional

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
