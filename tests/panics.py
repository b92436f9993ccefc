"""Calls that must end in a Python exception of a documented class, never in a native panic
(pyo3's PanicException is a BaseException, which ``except Exception`` and ``pytest.raises(
Exception)`` let through): the helpers of the malformed-input and fuzz tests."""

import re

import pytest

CORPUS = (
    "The quick brown fox jumps over the lazy dog in New York. " * 20
    + "naïve café, 東京, emoji 😀 and numbers 12345 67890.\n" * 10
)


def _is_panic(e: BaseException) -> bool:
    return type(e).__name__ == "PanicException" or not isinstance(e, Exception)


def call(f, *args, **kwargs):
    """``f(*args, **kwargs)``; a pyo3 PanicException (or any BaseException that is no Exception)
    fails the test with a clear message instead of passing through ``except Exception``."""
    try:
        return f(*args, **kwargs)
    except BaseException as e:
        if _is_panic(e):
            pytest.fail(
                f"native panic / BaseException escaped: {type(e).__module__}.{type(e).__qualname__}: {e}"
            )
        raise


def expect(exc, f, *args, match=None, **kwargs):
    """Call ``f`` and require an exception of class ``exc`` (a class or tuple of classes),
    whose message matches ``match`` if given; a panic or another class fails the test."""
    try:
        got = f(*args, **kwargs)
    except BaseException as e:
        if _is_panic(e):
            pytest.fail(
                f"native panic / BaseException escaped: {type(e).__module__}.{type(e).__qualname__}: {e}"
            )
        if not isinstance(e, exc):
            pytest.fail(f"expected {exc}, got {type(e).__module__}.{type(e).__qualname__}: {e}")
        if match is not None and not re.search(match, str(e)):
            pytest.fail(f"{type(e).__name__} message {str(e)[:300]!r} does not match {match!r}")
        return e
    pytest.fail(f"expected {exc}, but the call returned {got!r:.200}")
