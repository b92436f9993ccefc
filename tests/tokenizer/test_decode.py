"""Decoding: round trips, byte splits, the streaming decoder, bad ids."""

import codecs

import numpy as np
import pytest
import tiktoken
from hypothesis import given
from hypothesis import strategies as st

import toksmith
from tests.conftest import BYTES
from tests.strategies import any_text, mixed_text
from toksmith import Tokenizer


@pytest.fixture(scope="module")
def tok(cl100k_ranks, cl100k_specials):
    return Tokenizer.from_ranks(cl100k_ranks, "cl100k", cl100k_specials)


@given(text=st.one_of(any_text, mixed_text))
def test_round_trip(tok, text):
    assert tok.decode(tok.encode_ordinary(text)) == text
    assert tok.decode_bytes(tok.encode_ordinary(text)) == text.encode("utf-8")


@given(text=any_text, data=st.data())
def test_decode_bytes_of_any_split_concatenates(tok, text, data):
    ids = tok.encode_ordinary(text)
    cut = data.draw(st.integers(0, len(ids)))
    assert tok.decode_bytes(ids[:cut]) + tok.decode_bytes(ids[cut:]) == text.encode()
    assert b"".join(tok.decode_tokens_bytes(ids)) == text.encode()


@given(ids=st.lists(st.integers(0, 100255), max_size=40))
def test_streaming_decoder_equals_decode(tok, ids):
    d = tok.stream_decoder()
    out = "".join(d.push(i) for i in ids) + d.flush()
    assert out == tok.decode(ids)
    # never a broken sequence: every push is valid text by itself (U+FFFD only for real garbage)
    d = tok.stream_decoder(errors="strict")
    try:
        pieces = [d.push(i) for i in ids] + [d.flush()]
    except UnicodeDecodeError:
        with pytest.raises(UnicodeDecodeError):
            tok.decode(ids, errors="strict")
    else:
        assert "".join(pieces) == tok.decode(ids, errors="strict")


_BYTE_TOK = Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2", {"<|end|>": 256})


@given(
    ids=st.lists(st.integers(0, 256), max_size=30),
    errors=st.sampled_from(["replace", "strict", "ignore", "backslashreplace", "surrogateescape"]),
)
def test_streaming_decoder_matches_codecs_incremental_decoder(ids, errors):
    """Every push and flush returns (or raises) exactly what codecs' incremental UTF-8 decoder
    does when fed the same token bytes, for every error handler; after an error the state is
    unchanged in both, so the two stay in step."""
    import codecs

    ours = _BYTE_TOK.stream_decoder(errors)
    ref = codecs.getincrementaldecoder("utf-8")(errors)

    def same(f, g):
        try:
            want = f()
        except UnicodeDecodeError as e:
            with pytest.raises(UnicodeDecodeError) as got:
                g()
            assert (got.value.start, got.value.end, got.value.reason) == (e.start, e.end, e.reason)
        else:
            assert g() == want

    for i in ids:
        same(lambda: ref.decode(_BYTE_TOK.decode_single_token_bytes(i)), lambda: ours.push(i))
    same(lambda: ref.decode(b"", final=True), ours.flush)


def test_streaming_decoder_bad_ids_and_arguments():
    d = _BYTE_TOK.stream_decoder()
    with pytest.raises(toksmith.UnknownTokenError, match="out of range"):
        d.push(257)
    with pytest.raises(toksmith.UnknownTokenError, match="out of range"):
        d.push(-1)
    with pytest.raises(TypeError, match="ids must be ints"):
        d.push(1.0)
    assert d.push(0xC3) == "" and d.push(0xA9) == "\u00e9"  # still usable after the errors
    assert d.push_many([0x68, 0x69, 256]) == "hi<|end|>"
    with pytest.raises(TypeError, match="errors must be a str"):
        _BYTE_TOK.stream_decoder(errors=None)
    with pytest.raises(ValueError, match="NUL"):
        _BYTE_TOK.stream_decoder(errors="re\0place")


def test_streaming_multibyte_split_across_tokens(tok):
    text = "日本語😀"
    byte_ids = [tok.encode_single_token(bytes([b])) for b in text.encode()]
    d = tok.stream_decoder()
    outs = [d.push(i) for i in byte_ids]
    assert "".join(outs) == text and all(o in ("", "日", "本", "語", "😀") for o in outs)


@given(ids=st.lists(st.integers(0, 100255), max_size=30), data=st.data())
def test_streaming_decoder_copy_is_independent(tok, ids, data):
    import copy
    import pickle

    cut = data.draw(st.integers(0, len(ids)))
    copier = data.draw(st.sampled_from([copy.copy, copy.deepcopy]))
    d = tok.stream_decoder(skip_special_tokens=data.draw(st.booleans()))
    head = d.push_many(ids[:cut])
    pending = d.pending
    e = copier(d)
    assert e.pending == pending
    # each copy goes on from the same state: pushes to one never show in the other
    assert head + d.push_many(ids[cut:]) + d.flush() == tok.decode(ids)
    assert e.pending == pending
    assert head + e.push_many(ids[cut:]) + e.flush() == tok.decode(ids)
    assert d.pending == e.pending == b""
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(d)


def test_streaming_decoder_copy_keeps_skip_special_tokens(tok, cl100k_specials):
    import copy

    eot = cl100k_specials["<|endoftext|>"]
    d = copy.copy(tok.stream_decoder(skip_special_tokens=True))
    assert d.push(eot) == "" and d.push_many(tok.encode("hi")) == "hi"
    d = copy.copy(tok.stream_decoder())
    assert d.push(eot) == "<|endoftext|>"


def test_special_tokens_decode(tok):
    ids = tok.encode("a<|endoftext|>", allowed_special="all")
    assert tok.decode(ids) == "a<|endoftext|>"
    assert tok.decode_single_token_bytes(100257) == b"<|endoftext|>"


def test_skip_special_tokens(tok, cl100k_specials):
    ids = tok.encode("<|endoftext|>a<|fim_prefix|> b<|endofprompt|>", allowed_special="all")
    assert tok.decode(ids, skip_special_tokens=True) == "a b"
    assert tok.decode_bytes(ids, skip_special_tokens=True) == b"a b"
    assert tok.decode_batch([ids, ids[:1]], skip_special_tokens=True) == ["a b", ""]
    assert tok.decode_bytes_batch([ids], skip_special_tokens=True) == [b"a b"]
    assert tok.decode(ids) == "<|endoftext|>a<|fim_prefix|> b<|endofprompt|>"  # off by default
    # a character whose bytes a special token splits comes back whole (bytes are joined first)
    euro = tok.encode_ordinary("\u20ac")
    split = [b for i in tok.encode_ordinary("\u20ac") for b in tok.decode_single_token_bytes(i)]
    byte_ids = [tok.encode_single_token(bytes([b])) for b in split]
    assert tok.decode(byte_ids[:1] + [100257] + byte_ids[1:], skip_special_tokens=True) == "\u20ac"
    assert tok.decode(euro, skip_special_tokens=True) == "\u20ac"
    # bad ids are still reported
    with pytest.raises(ValueError, match="100300"):
        tok.decode([1, 100300], skip_special_tokens=True)
    with pytest.raises(ValueError, match="100300"):
        tok.stream_decoder(skip_special_tokens=True).push(100300)
    with pytest.raises(TypeError):
        tok.stream_decoder(skip_special_tokens=True).push([1])
    with pytest.raises(TypeError):
        tok.decode([1, [2]], skip_special_tokens=True)


@given(
    st.lists(
        st.one_of(st.integers(0, 2000), st.sampled_from([100257, 100258, 100259, 100260, 100276])),
        max_size=40,
    )
)
def test_skip_special_tokens_equals_huggingface(tok, ids):
    tokenizers = pytest.importorskip("tokenizers")
    hf = _hf(tok, tokenizers)
    assert tok.decode(ids, skip_special_tokens=True) == hf.decode(ids, skip_special_tokens=True)
    assert tok.decode(ids) == hf.decode(ids, skip_special_tokens=False)
    d = tok.stream_decoder(skip_special_tokens=True)
    assert "".join(d.push(i) for i in ids) + d.flush() == hf.decode(ids, skip_special_tokens=True)


_HF = {}


def _hf(tok, tokenizers):  # tokenizers imported: to_huggingface needs it
    if "cl100k" not in _HF:
        _HF["cl100k"] = tok.to_huggingface()
    return _HF["cl100k"]


def test_bad_ids(tok):
    with pytest.raises(ValueError, match="100300"):
        tok.decode([1, 100300])
    with pytest.raises(toksmith.UnknownTokenError, match="-1"):
        tok.decode([-1])
    with pytest.raises(ValueError, match="100261"):  # an unused id inside the range
        tok.decode_single_token_bytes(100261)
    with pytest.raises(TypeError):
        tok.decode(["a"])
    with pytest.raises(ValueError, match="2"):
        tok.stream_decoder().push(2**40)


def test_decode_numpy_and_batch(tok):
    np = pytest.importorskip("numpy")
    ids = tok.encode_ordinary("hello numpy world")
    assert tok.decode(np.array(ids, dtype=np.uint32)) == "hello numpy world"
    assert tok.decode_batch([ids, ids[:1]]) == ["hello numpy world", "hello"]


def test_errors_argument(tok):
    partial = [tok.encode_single_token(b"\xe6")]
    assert tok.decode(partial) == "\ufffd"
    with pytest.raises(UnicodeDecodeError):
        tok.decode(partial, errors="strict")


# Outputs of 256 bytes and more are built straight into the str's storage (toksmith_core::utf8);
# they must equal CPython's own decoding, canonical width included (a str stored wider than its
# largest character compares unequal to the same text built by Python).
WIDTH_CLASSES = ["a", "\u00e9", "\u00ff", "\u0100", "\u2019", "\uffff", "\U0001f600", "\U0010ffff"]


@given(
    parts=st.lists(
        st.tuples(st.sampled_from(WIDTH_CLASSES + ["plain ascii words "]), st.integers(1, 40)),
        min_size=1,
        max_size=12,
    ),
    pad=st.integers(0, 300),
)
def test_long_decode_equals_python_decoding(tok, parts, pad):
    text = "x" * pad + "".join(c * k for c, k in parts)
    ids = tok.encode_ordinary(text)
    out = tok.decode(ids)
    assert out == text and len(out) == len(text) and hash(out) == hash(text)
    assert tok.decode_bytes(ids) == text.encode("utf-8")


@given(
    ids=st.lists(st.integers(0, 100255), min_size=60, max_size=400),
    errors=st.sampled_from(["replace", "strict", "ignore", "backslashreplace"]),
)
def test_long_decode_of_any_ids_equals_bytes_decode(tok, ids, errors):
    raw = tok.decode_bytes(ids)
    try:
        expected = raw.decode("utf-8", errors)
    except UnicodeDecodeError:
        with pytest.raises(UnicodeDecodeError):
            tok.decode(ids, errors=errors)
    else:
        assert tok.decode(ids, errors=errors) == expected


def test_long_decode_each_width_class():
    tok = Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2")
    for c in WIDTH_CLASSES:
        for pre in range(0, 40, 7):
            text = "y" * pre + c * 300 + "tail text"
            assert tok.decode(list(text.encode())) == text


SPECIALS = {"<|end|>": 256}


@pytest.fixture(scope="module")
def pair():
    """A byte-level tokenizer (with ``b"he"``/``b"hel"``) and the tiktoken Encoding of the same
    ranks."""
    ranks = {**BYTES, b"he": 257, b"hel": 258}
    tok = Tokenizer.from_ranks(ranks, "gpt2", SPECIALS)
    enc = tiktoken.Encoding(
        "audit_decode", pat_str=tok.pattern, mergeable_ranks=ranks, special_tokens=SPECIALS
    )
    return tok, enc


@pytest.mark.parametrize("errors", ["xmlcharrefreplace", "audit_bad_handler"])
def test_error_handler_failure_is_not_reported_as_bad_ids(pair, errors):
    # was: TypeError "ids must be a sequence of int" (the handler's own TypeError was replaced)
    tok, _ = pair
    codecs.register_error("audit_bad_handler", lambda exc: 5)
    with pytest.raises(TypeError) as got:
        b"\xe6".decode("utf-8", errors)
    with pytest.raises(TypeError) as ours:
        tok.decode([0xE6], errors=errors)
    assert str(ours.value) == str(got.value)
    assert tok.decode([104], errors=errors) == "h"  # valid text never calls the handler


def test_skip_special_tokens_does_not_take_floats_for_ids(pair):
    # was: 256.0 (a float equal to a special id) silently dropped; without skipping a TypeError
    tok, _ = pair
    for bad in (256.0, 256 + 0j):
        with pytest.raises(TypeError, match="ids must be ints"):
            tok.decode([104, bad], skip_special_tokens=True)
        with pytest.raises(TypeError, match="ids must be ints"):
            tok.decode_bytes_batch([[bad]], skip_special_tokens=True)
        with pytest.raises(TypeError, match="ids must be ints"):
            tok.stream_decoder(skip_special_tokens=True).push(bad)
    assert tok.decode([104, np.int64(256)], skip_special_tokens=True) == "h"
    assert tok.stream_decoder(skip_special_tokens=True).push(np.int64(256)) == ""
