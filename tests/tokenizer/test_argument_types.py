"""Tokenizer arguments of the wrong type or with bad values (None, floats, bools, negative and
huge ints, numpy values, str where a list is meant, lone surrogates) raise TypeError /
ValueError saying what to pass."""

from __future__ import annotations

import io

import pytest

from tests.conftest import BYTES
from toksmith import Tokenizer, calm, streaming
from toksmith.bytelevel import str_to_token, token_to_str
from toksmith.presets import (
    get_preset,
)

np = pytest.importorskip("numpy")


@pytest.fixture(scope="module")
def tok():
    return Tokenizer.from_ranks({**BYTES, b"ab": 256}, "gpt2", {"<|end|>": 257})


@pytest.mark.parametrize(
    "merges, exc, match",
    [
        ("abc", TypeError, "merges must be a list of"),  # was stored as [('a',), ('b',), ('c',)]
        (b"ab", TypeError, "merges must be a list of"),
        ({"a": 1}, TypeError, "merges must be a list of"),
        (5, TypeError, "not int"),
        ([5], TypeError, "merges must be a list of"),
        ([("a", "b")], TypeError, r"merges\[0\] is \('a', 'b'\)"),
        ([(97, 98, 99)], TypeError, r"merges\[0\] is"),
        ([(97, 300)], ValueError, "names the id 300, which is not a token"),
        ([(-1, 98)], ValueError, r"merges\[0\] = \(-1, 98\) is not a pair of token ids"),
        ([(1.0, 98)], ValueError, "is not a pair of token ids"),
    ],
)
def test_constructor_checks_merges(merges, exc, match):
    with pytest.raises(exc, match=match):
        Tokenizer({**BYTES, b"ab": 256}, pattern="gpt2", merges=merges)


def test_constructor_takes_good_merges():
    ranks = {**BYTES, b"ab": 256}
    assert Tokenizer(ranks, pattern="gpt2", merges=[(97, 98)]).merge_ids() == [(97, 98)]
    assert Tokenizer(ranks, pattern="gpt2", merges=np.array([[97, 98]])).merge_ids() == [(97, 98)]
    assert Tokenizer(ranks, pattern="gpt2", merges=iter([[np.int64(97), 98]])).merge_ids() == [
        (97, 98)
    ]
    assert (
        type(Tokenizer(ranks, pattern="gpt2", merges=[(np.int32(97), 98)]).merge_ids()[0][0]) is int
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(metadata=[b"ab"]), "metadata must be a dict"),  # was dict([b"ab"]) == {97: 98}
        (dict(metadata="x"), "metadata must be a dict"),
        (dict(name=1.5), "name must be a str"),
        (dict(name=b"x"), "name must be a str"),
    ],
)
def test_constructor_checks_metadata_and_name(kwargs, match):
    with pytest.raises(TypeError, match=match):
        Tokenizer(BYTES, pattern="gpt2", **kwargs)
    if "name" in kwargs:
        with pytest.raises(TypeError, match=match):
            Tokenizer.from_ranks(BYTES, "gpt2", name=kwargs["name"])


def test_added_token_with_lone_surrogate_is_a_value_error():
    """Audit finding: was a UnicodeEncodeError from the native core."""
    with pytest.raises(ValueError, match=r"special_tokens: '\\ud800' holds a lone surrogate"):
        Tokenizer(BYTES, pattern="gpt2", special_tokens={"\ud800": 256})
    with pytest.raises(ValueError, match="pinned_tokens: .* lone surrogate"):
        Tokenizer(BYTES, pattern="gpt2", pinned_tokens={"a\udfffb": 256})


@pytest.mark.parametrize("ids", [bytearray(b"ab"), b"ab", "ab"])
def test_decode_refuses_byte_buffers(tok, ids):
    """Audit finding: was bytearray(b"ab") decoded as the ids [97, 98] ("ab"), while bytes were refused."""
    for call in (tok.decode, tok.decode_bytes, tok.decode_tokens_bytes, tok.decode_with_offsets):
        with pytest.raises(TypeError, match="ids must be a sequence of int"):
            call(ids)


@pytest.mark.parametrize("batch", ["", "ab", b"ab"])
def test_decode_batch_refuses_a_string(tok, batch):
    """Audit finding: was decode_batch("") returned [] (the empty string iterated as no sequences)."""
    with pytest.raises(TypeError, match="batch must be a list of id sequences"):
        tok.decode_batch(batch)
    with pytest.raises(TypeError, match="batch must be a list of id sequences"):
        tok.decode_bytes_batch(batch)


@pytest.mark.parametrize(
    "call",
    [
        lambda t, e: t.decode([104, 105], errors=e),  # valid UTF-8: the handler was never looked up
        lambda t, e: t.decode([0xFF], errors=e),  # was a bare LookupError
        lambda t, e: t.decode_batch([[104]], errors=e),
        lambda t, e: t.stream_decoder(errors=e),
        lambda t, e: calm.ByteTokenizer().decode([104], errors=e),
        lambda t, e: calm.ByteTokenizer().decode_batch([[104]], errors=e),
        lambda t, e: calm.StreamDecoder(errors=e),
        lambda t, e: list(streaming.iter_line_batches(io.BytesIO(b"a\n"), errors=e)),
        lambda t, e: list(streaming.encode_stream(t, io.BytesIO(b"a"), errors=e)),
    ],
)
@pytest.mark.parametrize("errors", ["bogus", "", "a\ud800"])
def test_unknown_error_handler_is_a_value_error(tok, call, errors):
    """Audit finding: An unknown ``errors=`` handler is a ValueError (and still a LookupError, as codecs
    raise it), found up front; a lone surrogate in the name was a UnicodeEncodeError."""
    with pytest.raises(ValueError, match="unknown error handler") as info:
        call(tok, errors)
    assert isinstance(info.value, LookupError)


def test_known_error_handlers_still_work(tok):
    assert tok.decode([0xFF, 104], errors="ignore") == "h"
    assert tok.decode([0xFF], errors="backslashreplace") == "\\xff"
    assert tok.decode_batch([[0xFF]], errors="surrogateescape") == ["\udcff"]


def test_disallowed_empty_string(tok):
    """Audit finding: was every text was refused with "the text contains ''"."""
    with pytest.raises(ValueError, match="disallowed_special holds the empty string"):
        tok.encode("x", disallowed_special=[""])


@pytest.mark.parametrize("dtype", [{"a": 1}, "a\ud800", 5, "float32"])
def test_encode_to_numpy_bad_dtype(tok, dtype):
    """Audit finding: was TypeError "object of type 'int' has no len()" (a dict) or a UnicodeEncodeError."""
    with pytest.raises(ValueError, match="dtype must be 'uint16' or 'uint32'"):
        tok.encode_to_numpy("hi", dtype=dtype)
    with pytest.raises(ValueError, match="dtype must be 'uint16' or 'uint32'"):
        calm.ByteTokenizer().encode_to_numpy("hi", dtype=dtype)


def test_encode_single_piece_lone_surrogate(tok):
    with pytest.raises(ValueError, match="lone surrogate"):
        tok._encode_single_piece("a\ud800")


def test_get_preset_name_type():
    with pytest.raises(TypeError, match="preset name must be a str"):
        get_preset(["nanochat"])


def test_bytelevel_wrong_types_are_type_errors():
    """Audit finding: was AttributeError ("'str' object has no attribute 'decode'", "'NoneType' object has no
    attribute 'translate'") and, for bytes given to str_to_token, "a bytes-like object is
    required, not 'dict'"."""
    for bad in ("Ġa", None, 5):
        with pytest.raises(TypeError, match="token_to_str needs bytes"):
            token_to_str(bad)
    for bad in (b" a", None, 5):
        with pytest.raises(TypeError, match="str_to_token needs a str"):
            str_to_token(bad)
    assert token_to_str(memoryview(b" a")) == token_to_str(bytearray(b" a")) == "Ġa"
    assert str_to_token(token_to_str(bytes(range(256)))) == bytes(range(256))
