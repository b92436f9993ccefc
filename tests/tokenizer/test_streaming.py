"""Streaming: encode_stream / encode_lines and the stream decoder (streaming.py, decoding.py)."""

from __future__ import annotations

import io

import pytest
import tiktoken

import toksmith
from tests.conftest import BYTES
from toksmith import Tokenizer, streaming
from toksmith.streaming import encode_lines, encode_stream, iter_line_batches, iter_text_parts


@pytest.fixture(scope="module")
def tok():
    return Tokenizer.from_ranks({**BYTES, b"ab": 256}, "gpt2", {"<|end|>": 257})


@pytest.mark.parametrize(
    "bad, exc", [(0, ValueError), (-1, ValueError), (1.5, TypeError), (True, TypeError)]
)
def test_encode_lines_batch_bytes_and_group_checked(tok, bad, exc):
    """Audit finding: was taken as given (a negative or float batch size, a group of 1.5 parts)."""
    with pytest.raises(exc, match="batch_bytes"):
        list(streaming.encode_lines(tok, ["a\n"], batch_bytes=bad))
    with pytest.raises(exc, match="group"):
        list(streaming.iter_text_parts(tok, io.BytesIO(b"ab"), group=bad))


def test_huge_read_size_is_a_value_error(tok):
    """Audit finding: was OverflowError "cannot fit 'int' into an index-sized integer" from f.read."""
    with pytest.raises(ValueError, match="block_size must be between 1 and"):
        list(streaming.encode_stream(tok, io.BytesIO(b"ab"), block_size=2**64))
    with pytest.raises(ValueError, match="batch_bytes must be between 1 and"):
        list(streaming.iter_line_batches(io.BytesIO(b"ab"), batch_bytes=2**64))


def test_streaming_helpers_check_their_arguments(tok):
    with pytest.raises(TypeError, match="wrap one token in a list"):  # was its characters
        streaming.cut_lookahead("New York")
    with pytest.raises(TypeError, match="avoid must be a list of str"):
        streaming.last_safe_cut("in New York and", avoid="New York")
    with pytest.raises(TypeError, match="text must be a str"):  # was 0
        streaming.last_safe_cut(["abc def"])
    with pytest.raises(ValueError, match="lo must be an index >= 0"):
        streaming.last_safe_cut("abc def", lo=-1)
    with pytest.raises(TypeError, match="lo must be an int"):
        streaming.last_safe_cut("abc def", lo=float("nan"))
    with pytest.raises(TypeError, match="threads must be an int"):  # was found at the first batch
        streaming.batch_encoder(tok, False, threads="2")
    with pytest.raises(TypeError, match="tok must be a tokenizer"):
        streaming.batch_encoder(None, False, threads=1)
    with pytest.raises(TypeError, match="tok must be a tokenizer"):  # was []
        streaming.spanning_tokens(None)
    with pytest.raises(ValueError, match="threads must be between"):  # was found at the first batch
        list(streaming.encode_lines(tok, [], threads=0))
    assert streaming.last_safe_cut("in New York and New Jersey", avoid=["New York"]) == 15


def test_stream_of_a_tokenizer_without_batch_methods():
    """Audit finding: The up-front check of batch_encoder must not refuse a tokenizer that has no batch
    methods: encode_stream and encode_lines encode with it one part at a time."""

    class OneAtATime:
        def encode_ordinary(self, text):
            return [len(text)]

    assert list(streaming.encode_stream(OneAtATime(), io.BytesIO(b"abc def"), threads=2)) == [[7]]
    assert list(streaming.encode_lines(OneAtATime(), ["ab", "c"], threads=2)) == [[2], [1]]


@pytest.mark.parametrize("skip", [False, True])
def test_stream_decoder_push_takes_token_by_keyword(skip):
    # was: the native push named its argument 'id', so push(token=5) was a TypeError unless
    # skip_special_tokens=True put a Python wrapper in front of it
    tok = toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2", {"<s>": 256})
    dec = tok.stream_decoder(skip_special_tokens=skip)
    assert dec.push(token=104) + dec.push(token=105) == "hi"
    with pytest.raises(ValueError, match="999"):
        dec.push(token=999)


def test_stream_keeps_added_tokens_with_a_space(gpt2_ranks):
    import io

    from toksmith.streaming import can_stream, encode_stream

    specials = {"<|endoftext|>": 50256, "<|my token|>": 50257}
    tok = Tokenizer.from_ranks(gpt2_ranks, "gpt2", specials, pinned_tokens={"New York": 50258})
    text = "I love New York and cats. " * 2000 + "<|my token|> x" * 500
    for allow in (False, True):
        whole = tok.encode(text, allowed_special="all") if allow else tok.encode_ordinary(text)
        parts = encode_stream(tok, io.BytesIO(text.encode()), block_size=1000, allow_special=allow)
        assert [i for ids in parts for i in ids] == whole
    # such tokens no longer make the stream read whole: cuts are kept clear of them
    assert can_stream(Tokenizer.from_ranks(gpt2_ranks, "gpt2", pinned_tokens={" York": 50258}))
    assert can_stream(Tokenizer.from_ranks(gpt2_ranks, "gpt2", pinned_tokens={"a\nb": 50258}))


@pytest.mark.parametrize("block_size", [7, 100, 1000])
def test_stream_cuts_clear_of_pinned_tokens_with_spaces_and_newlines(gpt2_ranks, block_size):
    import io
    import random

    from toksmith.streaming import encode_stream, iter_text_parts, last_safe_cut, spanning_tokens

    specials = {"<|endoftext|>": 50256, "<|a b|>": 50257}
    pinned = {"New York": 50258, "York\nNew": 50259, "k N": 50260, "a\nb": 50261, " Yo": 50262}
    tok = Tokenizer.from_ranks(gpt2_ranks, "gpt2", specials, pinned_tokens=pinned)
    rng = random.Random(block_size)
    units = [
        "New York",
        "New",
        " York",
        "\n",
        "a\nb",
        "x.\nb",
        "k Nx",
        " w Yz",
        ". ",
        "York\nNew York\n",
        "<|a b|>",
        "<|a",
        " b|>",
        "café ",
    ]
    text = "".join(rng.choice(units) for _ in range(4000))
    assert spanning_tokens(tok) == sorted(spanning_tokens(tok), key=list(pinned).index)
    assert set(spanning_tokens(tok, True)) == {"New York", "York\nNew", "k N", "a\nb", "<|a b|>"}
    for allow in (False, True):
        whole = tok.encode(text, allowed_special="all") if allow else tok.encode_ordinary(text)
        parts = list(
            iter_text_parts(
                tok, io.BytesIO(text.encode()), allow_special=allow, block_size=block_size
            )
        )
        assert len(parts) >= 10  # it was cut, not read whole
        assert "".join(p for group in parts for p in group) == text
        ids = encode_stream(
            tok, io.BytesIO(text.encode()), block_size=block_size, allow_special=allow
        )
        assert [i for chunk in ids for i in chunk] == whole
    # a place is not taken until the text reaches far enough past it to tell
    assert last_safe_cut("so New Yo", avoid=["New York"]) == 0
    assert (
        last_safe_cut("so New York is big", avoid=["New York"]) == 0
    )  # " is big": too near the end
    assert last_safe_cut("so New York is big and tall", avoid=["New York"]) == 14


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


def test_stream_decoder_of_something_else_is_a_type_error():
    # was: AttributeError "'NoneType' object has no attribute '_core'"
    from toksmith.decoding import StreamDecoder

    with pytest.raises(TypeError, match="StreamDecoder needs a toksmith.Tokenizer"):
        StreamDecoder(None)


@pytest.fixture(scope="module")
def ab_tok():
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"ab"] = 256
    return toksmith.Tokenizer.from_ranks(
        ranks, "cl100k", special_tokens={"<s>": 257, "<|endoftext|>": 258}
    )


@pytest.mark.parametrize("f", [io.StringIO("ab ab"), ["ab"], b"ab", "ab"])
def test_stream_of_text_or_non_file_is_a_type_error(ab_tok, f):
    # was: TypeError "can't concat str to bytes" or AttributeError "'list' object has no attribute 'read'"
    with pytest.raises(TypeError, match="binary"):
        list(encode_stream(ab_tok, f))
    with pytest.raises(TypeError, match="binary"):
        list(iter_line_batches(f))


def test_stream_of_memoryview_blocks(ab_tok):
    # (the check above must still take any bytes-like read())
    class Raw(io.RawIOBase):
        def __init__(self, data):
            self.data = data

        def read(self, n=-1):
            block, self.data = self.data[:n], self.data[n:]
            return memoryview(block)

    text = "ab\nab é\n" * 50
    ids = [i for part in encode_stream(ab_tok, Raw(text.encode()), block_size=7) for i in part]
    assert ids == ab_tok.encode_ordinary(text)
    assert [ln for b in iter_line_batches(Raw(b"ab\ncd"), batch_bytes=2) for ln in b] == [
        "ab",
        "cd",
    ]


@pytest.mark.parametrize("threads, error", [(0, ValueError), (-1, ValueError), (True, TypeError)])
def test_stream_thread_count_is_checked(ab_tok, threads, error):
    # was: threads=-1 or True silently encoded on one thread (and 0 failed only once two blocks were read)
    with pytest.raises(error, match="threads"):
        list(encode_stream(ab_tok, io.BytesIO(b"ab"), threads=threads))
    assert list(encode_stream(ab_tok, io.BytesIO(b"ab\ncd"), threads=2, block_size=3)) == [
        [256, 10],
        [99, 100],
    ]


@pytest.fixture(scope="module")
def byte_tok():
    return Tokenizer.from_ranks({**BYTES, b"ab": 256, b" c": 257}, "gpt2", {"<|end|>": 258})


def _ids(parts):
    return [i for ids in parts for i in ids]


@pytest.mark.parametrize(
    "bad, exc",
    [(0, ValueError), (-1, ValueError), (None, TypeError), (1.5, TypeError), (True, TypeError)],
)
def test_stream_block_size_is_checked(byte_tok, bad, exc):
    """Audit finding: was block_size=0 read nothing and gave no ids at all (the whole input silently lost),
    -1 and None read the whole input at once, True read a byte at a time."""
    with pytest.raises(exc, match="block_size"):
        list(encode_stream(byte_tok, io.BytesIO(b"ab cd"), block_size=bad))
    with pytest.raises(exc, match="block_size"):
        list(iter_text_parts(byte_tok, io.BytesIO(b"ab cd"), block_size=bad))
    with pytest.raises(exc, match="batch_bytes"):
        list(iter_line_batches(io.BytesIO(b"ab\ncd"), batch_bytes=bad))
    np = pytest.importorskip("numpy")  # a numpy integer is an int
    assert _ids(
        encode_stream(byte_tok, io.BytesIO(b"ab cd"), block_size=np.int64(2))
    ) == byte_tok.encode("ab cd")
    assert [
        x for b in iter_line_batches(io.BytesIO(b"ab\ncd"), batch_bytes=np.int32(1)) for x in b
    ] == ["ab", "cd"]


def test_stream_unknown_error_handler_fails_before_reading(byte_tok):
    """Audit finding: was errors="bogus" was taken silently, and a LookupError came only at the first bad byte
    (possibly hours into a corpus)."""
    with pytest.raises(LookupError, match="bogus"):
        list(encode_stream(byte_tok, io.BytesIO(b"ab cd"), errors="bogus"))
    with pytest.raises(LookupError, match="bogus"):
        list(iter_line_batches(io.BytesIO(b"ab\ncd"), errors="bogus"))
    assert _ids(
        encode_stream(byte_tok, io.BytesIO(b"ab\xff"), errors="replace")
    ) == byte_tok.encode("ab\ufffd")


def test_stream_of_something_else_than_a_tokenizer_is_a_type_error(byte_tok):
    """Audit finding: was AttributeError "'NoneType' object has no attribute 'encode_ordinary'"."""
    for allow in (False, True):
        with pytest.raises(TypeError, match="tok must be a tokenizer"):
            list(encode_stream(None, io.BytesIO(b"ab"), allow_special=allow))
        with pytest.raises(TypeError, match="tok must be a tokenizer"):
            list(iter_text_parts("gpt2", io.BytesIO(b"ab"), allow_special=allow))
        with pytest.raises(TypeError, match="tok must be a tokenizer"):
            list(encode_lines(None, ["ab"], allow_special=allow))


def test_encode_lines_refuses_a_single_text(byte_tok):
    """Audit finding: was a str passed as the lines was encoded one character per line ([[97], [98]] for "ab")."""
    for bad in ("ab\ncd", b"ab\ncd"):
        with pytest.raises(TypeError, match="lines must be an iterable of str"):
            list(encode_lines(byte_tok, bad))
    assert list(encode_lines(byte_tok, iter(["ab", "x c"]))) == [[256], [120, 257]]


def test_push_many_with_a_bad_id_loses_no_text(byte_tok):
    """Audit finding: was push_many([104, 105, 999]) raised with "hi" already taken from the decoder, so the
    text of the ids before the bad one was lost; now a failing push_many changes nothing."""
    for skip in (False, True):
        d = byte_tok.stream_decoder(skip_special_tokens=skip)
        assert d.push(0xC3) == ""
        with pytest.raises(toksmith.UnknownTokenError, match="999"):
            d.push_many([0xA9, 104, 258, 105, 999])
        assert d.pending == b"\xc3"  # as before the call
        assert d.push_many([0xA9, 104, 258, 105]) + d.flush() == ("éhi" if skip else "éh<|end|>i")
        with pytest.raises(TypeError, match="ids must be ints"):
            d.push_many([104, 1.0])
        assert d.push_many([104]) == "h"
    d = byte_tok.stream_decoder("strict")
    with pytest.raises(UnicodeDecodeError):
        d.push_many([104, 0xC3, 105])
    assert d.pending == b"" and d.push_many([104, 0xC3, 0xA9]) == "hé"


def test_push_many_refuses_bytes_and_str(byte_tok):
    """Audit finding: was push_many(b"hi") took the bytes as ids (tok.decode(b"hi") is a TypeError)."""
    d = byte_tok.stream_decoder()
    for bad in (b"hi", bytearray(b"hi"), "hi"):
        with pytest.raises(TypeError, match="sequence of ids"):
            d.push_many(bad)
    np = pytest.importorskip("numpy")
    assert d.push_many(np.array([104, 105], dtype=np.uint32)) == "hi"
    assert d.push_many(i for i in [104, 105]) == "hi"
