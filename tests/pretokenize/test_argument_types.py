"""split() and patterns given arguments of the wrong type or lone surrogates."""

from __future__ import annotations

import pytest

import toksmith
from tests.conftest import BYTES
from toksmith import Tokenizer


@pytest.mark.parametrize(
    "call",
    [
        lambda p: toksmith.pretokenize.resolve_pattern(p),
        lambda p: Tokenizer(BYTES, pattern=p),
        lambda p: toksmith.split("ab", p),
        lambda p: toksmith.train_from_iterator(["a b"], vocab_size=257, pattern=p),
    ],
)
def test_pattern_with_lone_surrogate_is_a_pattern_error(call):
    """Audit finding: was a UnicodeEncodeError from compiling the pattern."""
    with pytest.raises(toksmith.PatternError, match=r"lone surrogate \(U\+D800 at index 1\)"):
        call("a\ud800|b")


def test_split_reads_lone_surrogates_as_encode_does():
    """Audit finding: was a UnicodeEncodeError; now split as U+FFFD, as encode() reads the text."""
    assert (
        toksmith.split("a\ud800b c", "gpt2")
        == toksmith.split("a\ufffdb c", "gpt2")
        == ["a", "\ufffd", "b", " c"]
    )
    assert toksmith.split("a\ud800b c") == ["a", "\ufffdb", " c"]
    assert toksmith.split("\ud83d\ude00 x", "gpt2") == ["\U0001f600", " x"]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(pattern=None), "pattern must be a name or a regex string, not NoneType"),
        (dict(pattern=5), "pattern must be a name or a regex string, not int"),
        (dict(engine=None), "engine must be 'auto' or 'regex', not NoneType"),
    ],
)
def test_split_argument_types(kwargs, match):
    """Audit finding: was pyo3's "argument 'pattern': 'NoneType' object cannot be cast as 'str'"."""
    with pytest.raises(TypeError, match=match):
        toksmith.split("ab", **kwargs)
