"""Vocabulary helpers, tokenize / detokenize: round trips and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toksmith import calm


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_detokenize_tokenize_roundtrip_bytes(data):
    ids = calm.tokenize(data)
    assert ids.dtype == np.uint16
    assert ids.tolist() == list(data)
    assert calm.detokenize(ids) == data
    assert calm.detokenize(ids.tolist()) == data


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=100))
def test_tokenize_text_is_utf8_bytes(text):
    data = text.encode("utf-8", "surrogatepass")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        with pytest.raises(ValueError, match="surrogate"):
            calm.tokenize(text)
        return
    assert calm.detokenize(calm.tokenize(text)) == data


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, calm.VOCAB_SIZE - 1), max_size=200))
def test_detokenize_skips_special_and_reserved(ids):
    expected = bytes(t for t in ids if t < 256)
    assert calm.detokenize(ids) == expected
    assert calm.detokenize(np.array(ids, dtype=np.int64)) == expected
    assert calm.detokenize(np.array(ids, dtype=np.uint16)) == expected


def test_tokenize_never_produces_specials():
    assert calm.tokenize("<EOS><END>").max() < 256
    assert calm.tokenize(bytes(range(256))).tolist() == list(range(256))


def test_tokenize_accepts_bytes_like():
    assert calm.tokenize(bytearray(b"ab")).tolist() == [97, 98]
    assert calm.tokenize(memoryview(b"ab")).tolist() == [97, 98]
    assert calm.tokenize("").tolist() == []


def test_tokenize_max_tokens():
    assert calm.tokenize("abc", max_tokens=3).tolist() == [97, 98, 99]
    with pytest.raises(ValueError, match="needs 4 tokens but max_tokens is 3"):
        calm.tokenize("abcd", max_tokens=3)
    with pytest.raises(ValueError, match="needs 2 tokens"):
        calm.tokenize("é", max_tokens=1)  # bytes, not characters
    with pytest.raises(ValueError, match="max_tokens must be >= 0"):
        calm.tokenize("a", max_tokens=-1)
    with pytest.raises(TypeError, match="max_tokens"):
        calm.tokenize("a", max_tokens="3")
    with pytest.raises(TypeError, match="max_tokens"):
        calm.tokenize("a", max_tokens=True)


@pytest.mark.parametrize("bad", [None, 3, 3.5, ["a"], [97], object()])
def test_tokenize_wrong_type(bad):
    with pytest.raises(TypeError, match="str or bytes"):
        calm.tokenize(bad)


def test_tokenize_lone_surrogate_is_a_value_error():
    with pytest.raises(ValueError, match="lone surrogate"):
        calm.tokenize("a\ud800b")


@pytest.mark.parametrize("bad_id", [320, 1000, 65535, -1])
def test_detokenize_out_of_range_names_the_id(bad_id):
    with pytest.raises(ValueError, match=rf"token id {bad_id} at position 1"):
        calm.detokenize([97, bad_id])
    with pytest.raises(ValueError, match=rf"token id {bad_id} at position 1"):
        calm.detokenize(np.array([97, bad_id], dtype=np.int64))


def test_detokenize_wrong_types():
    with pytest.raises(TypeError, match="not str"):
        calm.detokenize("abc")
    with pytest.raises(TypeError, match="not bytes"):
        calm.detokenize(b"abc")
    with pytest.raises(TypeError):
        calm.detokenize(5)
    with pytest.raises(TypeError, match="position 1"):
        calm.detokenize([97, 98.0])
    with pytest.raises(TypeError, match="position 0"):
        calm.detokenize([True])
    with pytest.raises(TypeError, match="dtype"):
        calm.detokenize(np.array([97.0]))
    with pytest.raises(ValueError, match="1-D"):
        calm.detokenize(np.array([[97]]))


def test_detokenize_accepts_numpy_scalars_and_tuples():
    assert calm.detokenize((np.uint16(104), np.int32(105), 258)) == b"hi"
    assert calm.detokenize(iter([104, 105])) == b"hi"
    assert calm.detokenize([]) == b""


def test_token_names_and_resolution():
    assert calm.token_name(256) == "<PAD>"
    assert calm.token_name(277) == "<REF>"
    assert calm.token_name(278) == "<RESERVED_278>"
    assert calm.token_name(65) == "b'A'"
    for name, tok in calm.SPECIAL_TOKENS.items():
        assert calm.resolve_token(name) == tok
        assert calm.resolve_token(name.strip("<>")) == tok
        assert calm.resolve_token(name.lower()) == tok
    assert calm.resolve_token("END_TOKEN") == calm.END_TOKEN == calm.END
    with pytest.raises(ValueError, match="unknown CALM special token 'FOO'"):
        calm.resolve_token("FOO")
    with pytest.raises(ValueError, match="out of range"):
        calm.resolve_token(320)
    with pytest.raises(TypeError):
        calm.resolve_token(2.0)
    assert calm.is_special(256) and calm.is_special(277) and not calm.is_special(278)
    assert calm.is_reserved(278) and calm.is_reserved(319) and not calm.is_reserved(277)


def test_format_tokens():
    assert calm.format_tokens([257, 104, 105, 10, 0xFF, 259]) == "<BOS> hi\\n\\xff <ATN>"
    assert calm.format_tokens([300]) == "<RESERVED_300>"
    assert calm.format_tokens([]) == ""


def test_numpy_is_optional(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "numpy", None)  # `import numpy` now raises ImportError
    with pytest.raises(ImportError, match=r"pip install toksmith\[numpy\]"):
        calm.tokenize("a")
    with pytest.raises(ImportError, match=r"pip install toksmith\[numpy\]"):
        calm.read_cwgt("missing.cwgt")
    # everything else is pure Python
    assert calm.detokenize([104, 105]) == b"hi"
    assert calm.tokenize_frame("CWD", "/") == [260, 47, 269]
    assert calm.build_sequence("shell", {"input": "ls"}) == [257, 259, 264, 108, 115]
    assert calm.ByteTokenizer().encode("hi") == [104, 105]
    assert calm.StopConditions("&&").scan(b"a&&")[0] == [97]
