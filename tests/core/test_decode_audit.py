"""Audit of the decode side: decode / decode_bytes / decode_with_offsets with hostile ids and
error handlers, the streaming decoder after an error, encode_single_token's message, and save()
refusing what load() would refuse."""

import codecs
import json

import numpy as np
import pytest
import tiktoken

import toksmith
from toksmith import Tokenizer

BYTES = {bytes([b]): b for b in range(256)}
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


def test_list_of_numpy_integers_decodes_as_tiktoken(pair):
    # was: TypeError "ids must be a sequence of int" for list(np.array(ids)) (tiktoken decodes it)
    tok, enc = pair
    ids = list(np.array(tok.encode("hello <|end|>é", allowed_special="all"), dtype=np.int64))
    assert all(type(i) is np.int64 for i in ids)
    assert tok.decode(ids) == enc.decode(ids) == "hello <|end|>é"
    assert tok.decode_bytes(ids) == enc.decode_bytes(ids)
    assert tok.decode_with_offsets(ids) == enc.decode_with_offsets(ids)
    assert tok.decode(ids, skip_special_tokens=True) == "hello é"
    assert tok.decode([np.uint16(104), 105]) == "hi"
    with pytest.raises(toksmith.UnknownTokenError, match="token id 1000 is out of range"):
        tok.decode([np.int64(5), np.int64(1000)])
    with pytest.raises(TypeError, match=r"ids must be ints, got float \(1.5\)"):
        tok.decode_bytes([np.int64(5), 1.5])


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


def test_stream_decoder_reset_after_a_strict_error(pair):
    # was: no reset(); after a strict flush error the bytes stayed pending and every push raised
    tok, _ = pair
    d = tok.stream_decoder("strict")
    assert d.push(0xE6) == ""
    with pytest.raises(UnicodeDecodeError, match="unexpected end of data"):
        d.flush()
    with pytest.raises(UnicodeDecodeError, match="invalid continuation byte"):
        d.push(104)
    assert d.pending == b"\xe6"
    d.reset()
    assert d.pending == b"" and d.push(104) == "h" and d.push_many([0xE6, 0x97, 0xA5]) == "日"
    # reset keeps skip_special_tokens and the error handler, and leaves a copy alone
    import copy

    d = tok.stream_decoder("replace", skip_special_tokens=True)
    d.push(0xE6)
    e = copy.copy(d)
    d.reset()
    assert d.push(256) == "" and d.push(0xFF) == "\ufffd" and e.pending == b"\xe6"


def test_encode_single_token_names_the_text(pair):
    # was: "[104, 101, 108, 108, 111, 32] is not a single token" (the bytes as a list of ints)
    tok, _ = pair
    with pytest.raises(
        toksmith.UnknownTokenError, match=r"^'hello ' is not a single token of this vocabulary"
    ):
        tok.encode_single_token("hello ")
    with pytest.raises(toksmith.UnknownTokenError, match=r"^b'\\xff\\xfe' is not a single token"):
        tok.encode_single_token(b"\xff\xfe")
    assert tok.encode_single_token("hel") == 258 and tok.encode_single_token(b"<|end|>") == 256


@pytest.mark.parametrize(
    "attr, value, msg",
    [("name", 5, "its name must be a str"), ("metadata", [1], "its metadata must be a dict")],
)
def test_save_refuses_what_load_refuses(tmp_path, attr, value, msg):
    # was: the file was written, then load() refused it ("field 'name' must be a str or null")
    tok = Tokenizer.from_ranks(BYTES, "gpt2")
    setattr(tok, attr, value)
    with pytest.raises(TypeError, match=msg):
        tok.save(tmp_path / "t.json")
    assert not list(tmp_path.iterdir())
    tok.name, tok.metadata = None, None  # null is what load() reads back as the defaults
    tok.save(tmp_path / "t.json")
    back = toksmith.load(tmp_path / "t.json")
    assert (back.name, back.metadata) == ("toksmith", {})
    assert json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))["name"] is None


def test_stream_decoder_of_something_else_is_a_type_error():
    # was: AttributeError "'NoneType' object has no attribute '_core'"
    from toksmith.decoding import StreamDecoder

    with pytest.raises(TypeError, match="StreamDecoder needs a toksmith.Tokenizer"):
        StreamDecoder(None)
