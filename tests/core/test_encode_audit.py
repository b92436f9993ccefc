"""Regression tests from an audit of the encode side (Tokenizer.encode*, streaming, eval)."""

import io

import pytest
import tiktoken

import toksmith
from toksmith.cli.eval import count_tokens, evaluate
from toksmith.streaming import encode_stream, iter_line_batches


@pytest.fixture(scope="module")
def tok():
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"ab"] = 256
    return toksmith.Tokenizer.from_ranks(
        ranks, "cl100k", special_tokens={"<s>": 257, "<|endoftext|>": 258}
    )


@pytest.mark.parametrize("make", [lambda: iter(["<s>"]), lambda: (t for t in ["<s>"])])
def test_allowed_special_as_a_one_shot_iterator_is_a_type_error(tok, make):
    # was: the iterator was read up by one check, so the token it allowed was then refused as
    # disallowed (DisallowedSpecialError telling to pass allowed_special={'<s>'}, which was passed)
    with pytest.raises(TypeError, match="one-shot"):
        tok.encode("ab<s>", allowed_special=make())
    with pytest.raises(TypeError, match="one-shot"):
        tok.encode_batch(["ab<s>"], allowed_special=make())
    assert tok.encode("ab<s>", allowed_special=["<s>"]) == [
        256,
        257,
    ]  # re-iterable collections still work


def test_disallowed_offset_after_a_surrogate_pair_counts_utf8_bytes(tok):
    # was: a disallowed non-special string after a surrogate pair was placed at byte 7, not 5
    # (the pair counted as two 3-byte surrogates, not the 4-byte character it encodes as)
    with pytest.raises(toksmith.DisallowedSpecialError, match="byte offset 5"):
        tok.encode("\ud83d\ude00 xyz", disallowed_special={"xyz"})
    # ... and so came after a special token that it precedes
    with pytest.raises(toksmith.DisallowedSpecialError, match="'xy'"):
        tok.encode("\ud83d\ude00xy<s>", disallowed_special={"xy", "<s>"})


def test_batch_disallowed_error_names_the_text(tok):
    # was: the error did not say which text of the batch held the special token
    with pytest.raises(toksmith.DisallowedSpecialError, match=r"texts\[2\]: .*'<s>'"):
        tok.encode_batch(["a", "b", "c<s>", "d<s>"])
    assert isinstance(toksmith.DisallowedSpecialError("x"), ValueError)


@pytest.mark.parametrize("f", [io.StringIO("ab ab"), ["ab"], b"ab", "ab"])
def test_stream_of_text_or_non_file_is_a_type_error(tok, f):
    # was: TypeError "can't concat str to bytes" or AttributeError "'list' object has no attribute 'read'"
    with pytest.raises(TypeError, match="binary"):
        list(encode_stream(tok, f))
    with pytest.raises(TypeError, match="binary"):
        list(iter_line_batches(f))


def test_stream_of_memoryview_blocks(tok):
    # (the check above must still take any bytes-like read())
    class Raw(io.RawIOBase):
        def __init__(self, data):
            self.data = data

        def read(self, n=-1):
            block, self.data = self.data[:n], self.data[n:]
            return memoryview(block)

    text = "ab\nab é\n" * 50
    ids = [i for part in encode_stream(tok, Raw(text.encode()), block_size=7) for i in part]
    assert ids == tok.encode_ordinary(text)
    assert [ln for b in iter_line_batches(Raw(b"ab\ncd"), batch_bytes=2) for ln in b] == [
        "ab",
        "cd",
    ]


def test_eval_counts_a_tiktoken_encoding(tok):
    # was: TypeError "encode_ordinary_batch() got an unexpected keyword argument 'threads'"
    enc = tiktoken.Encoding(
        "x", pat_str=tok.pattern, mergeable_ranks=tok.mergeable_ranks(), special_tokens={}
    )
    text = "hello ab world\n" * 100
    assert (
        count_tokens(enc, text, threads=2)
        == len(enc.encode_ordinary(text))
        == count_tokens(tok, text)
    )
    rows = evaluate({"tiktoken": enc, "toksmith": tok}, {"c": text})
    assert rows[0]["tokens"] == rows[1]["tokens"] and rows[1]["ratio"] == 1.0


def test_eval_corpus_that_is_not_text_is_a_type_error(tok):
    # was: AttributeError "'bytes' object has no attribute 'encode'" / "'list' object has no attribute 'items'"
    with pytest.raises(TypeError, match=r"corpora\['c'\] must be the text"):
        evaluate({"t": tok}, {"c": b"hello"})
    with pytest.raises(TypeError, match="dicts"):
        evaluate({"t": tok}, ["hello"])


def test_counting_bytes_is_a_type_error(tok):
    # was: AttributeError "'bytes' object has no attribute 'encode'" from bytes_per_token
    from toksmith.cli.eval import bytes_per_token

    with pytest.raises(TypeError, match="text must be str, not bytes"):
        bytes_per_token(tok, b"hello")
    with pytest.raises(TypeError, match="text must be str, not bytes"):
        count_tokens(tok, b"hello " * 10, chunk_chars=2)


@pytest.mark.parametrize("threads, error", [(0, ValueError), (-1, ValueError), (True, TypeError)])
def test_stream_thread_count_is_checked(tok, threads, error):
    # was: threads=-1 or True silently encoded on one thread (and 0 failed only once two blocks were read)
    with pytest.raises(error, match="threads"):
        list(encode_stream(tok, io.BytesIO(b"ab"), threads=threads))
    assert list(encode_stream(tok, io.BytesIO(b"ab\ncd"), threads=2, block_size=3)) == [
        [256, 10],
        [99, 100],
    ]
