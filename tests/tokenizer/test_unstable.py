"""``encode_with_unstable``, ``encode_bytes`` and ``_encode_single_piece`` against tiktoken's on the
real GPT-2 and cl100k vocabularies."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toksmith
from tests.strategies_interop import tiktoken_mixed_text
from toksmith import Tokenizer
from toksmith.unstable import _split_unstable, _tables, byte_pair_encode

tiktoken = pytest.importorskip("tiktoken")

PROMPTS = [
    "hello fanta",
    "hello fan",
    "hello ",
    "hello \n",
    "hello\n\n  ",
    "def f(x):\n    return",
    "x = 1",
    "The quick brown fox jumps over the lazy d",
    "naïve café",
    "中文字",
    "🌍",
    "  ",
    "",
    "a",
    "1234",
    "don't",
    "I'l",
    "<|endoftext|>",
    "a<|endoftext|>",
    "a<|endoftext|>b",
    "https://example.co",
    "\r\n",
    "x\u3000",
    "end.\u00a0",
    "ab\u2028",
]


@pytest.fixture(scope="module")
def pairs(real_toks, reference_encodings):
    return {name: (real_toks[name], reference_encodings[name]) for name in ("gpt2", "cl100k")}


def _same(tok, enc, text, **kw):
    ours = tok.encode_with_unstable(text, **kw)
    theirs = enc.encode_with_unstable(text, **kw)
    assert ours[0] == theirs[0], text
    assert ours[1] == sorted(theirs[1]), text
    return ours


@pytest.mark.parametrize("name", ["gpt2", "cl100k"])
def test_prompts_equal_tiktoken(name, pairs):
    tok, enc = pairs[name]
    for text in PROMPTS:
        stable, completions = _same(tok, enc, text, allowed_special="all")
        # the contract: stable tokens are a prefix of the text, every completion extends it
        raw = text.encode("utf-8")
        assert raw.startswith(tok.decode_bytes(stable))
        assert all(tok.decode_bytes(stable + c).startswith(raw) for c in completions)
    stable, completions = tok.encode_with_unstable("hello fanta")
    assert stable == tok.encode("hello") and len(completions) > 100


@settings(max_examples=40, deadline=None)
@given(text=tiktoken_mixed_text.map(lambda s: s[:30]))
def test_any_text_equals_tiktoken(pairs, text):
    for tok, enc in pairs.values():
        _same(tok, enc, text)


def test_specials_follow_encode(pairs):
    tok, enc = pairs["cl100k"]
    with pytest.raises(toksmith.DisallowedSpecialError):
        tok.encode_with_unstable("a<|endoftext|>")
    assert tok.encode_with_unstable("a<|endoftext|>", disallowed_special=()) == _same(
        tok, enc, "a<|endoftext|>", disallowed_special=()
    )
    assert tok.encode_with_unstable("x<|endoftext|>", allowed_special={"<|endoftext|>"}) == (
        tok.encode("x<|endoftext|>", allowed_special="all"),
        [],
    )
    with pytest.raises(TypeError):
        tok.encode_with_unstable(b"hello")


_PIECES = st.one_of(
    st.binary(max_size=40),
    st.lists(
        st.sampled_from(
            [
                b"hello",
                b" world",
                b"\xe2\x82",
                b"\xac",
                b"\xff",
                b"\n\n",
                b"  ",
                b"123",
                "é中😀".encode(),
                b"<|endoftext|>",
            ]
        ),
        max_size=8,
    ).map(b"".join),
)


@settings(max_examples=80, deadline=None)
@given(data=_PIECES)
def test_encode_bytes_and_single_piece_equal_tiktoken(pairs, data):
    for tok, enc in pairs.values():
        ids = tok.encode_bytes(data)
        assert ids == enc._encode_bytes(data)
        assert tok._encode_bytes(data) == ids and tok.decode_bytes(ids) == data
        if data:
            assert tok._encode_single_piece(data) == enc._encode_single_piece(data)


def test_encode_bytes_long_invalid_tail(pairs):
    # everything after the first invalid byte is merged as one piece: O(n log n), not quadratic
    tok, enc = pairs["cl100k"]
    data = b"caf\xe9 " + "naïve café, ".encode() * 20000
    ids = tok.encode_bytes(data)
    assert tok.decode_bytes(ids) == data and len(ids) < len(data) / 2
    assert ids == enc._encode_bytes(data)
    assert tok.encode_bytes(bytearray(b"abc")) == tok.encode_ordinary("abc")
    with pytest.raises(TypeError, match="needs bytes"):
        tok.encode_bytes("abc")
    with pytest.raises(TypeError):
        tok._encode_single_piece(123)
    assert (
        tok._encode_single_piece("hello") == tok.encode_ordinary("hello")
        and tok._encode_single_piece(b"") == []
    )


def test_byte_pair_encode_has_no_whole_token_lookup():
    # a token that merging cannot reach: tiktoken's byte_pair_encode splits it, encode() does not
    ranks = {**{bytes([b]): b for b in range(256)}, b"abc": 256}
    assert byte_pair_encode(b"abc", ranks) == [97, 98, 99]
    assert byte_pair_encode(b"a", ranks) == [97]
    tok = toksmith.Tokenizer.from_ranks(ranks, "gpt2")
    assert tok.encode_ordinary("abc") == [256]


def test_pinned_tokens_end_the_segment():
    tok = toksmith.train_from_iterator(
        ["int x = print(y) int"] * 20, vocab_size=262, pattern="cl100k", pinned_tokens=["int"]
    )
    stable, completions = tok.encode_with_unstable("y = int")
    assert stable == tok.encode("y = int") and completions == []


@pytest.mark.parametrize("text", [" " * 120, "x =" + " " * 60, "a\n" + "\n" * 80, "hi \t" * 20])
def test_encode_with_unstable_long_whitespace_end_equals_tiktoken(gpt2, text):
    """Audit finding: was each completion was cut with a Python loop over all its tokens, and the completions
    sorted by comparing long tuples: 14 s for 1,000 spaces (tiktoken 3.7 s). Now only the tokens
    past the unstable bytes are looked at; the result must stay tiktoken's."""
    tok, enc = gpt2
    stable, completions = tok.encode_with_unstable(text)
    want_stable, want = enc.encode_with_unstable(text)
    assert stable == want_stable and completions == sorted(want)
    raw = text.encode()
    assert all(tok.decode_bytes(stable + c).startswith(raw) for c in completions)


def test_encode_with_unstable_when_the_pattern_drops_text(gpt2_ranks):
    """Audit finding: The completion cut counts the bytes the tokens hold, not those of the text encoded: a
    pattern can leave text out (here the digits), as in tiktoken."""
    tiktoken = pytest.importorskip("tiktoken")
    pat = r"[a-z]+| [a-z]+"
    tok = Tokenizer.from_ranks(gpt2_ranks, pat)
    enc = tiktoken.Encoding("drops", pat_str=pat, mergeable_ranks=gpt2_ranks, special_tokens={})
    for text in ["hello fan", "ab 1c", "x 12", "a b", "fan1"]:
        stable, completions = tok.encode_with_unstable(text)
        want_stable, want = enc.encode_with_unstable(text)
        assert stable == want_stable and completions == sorted(want), text


def _reference_encode_bytes(tok, data: bytes) -> list:
    """The pure-Python encode_bytes that the native one replaced (tiktoken's algorithm step by
    step: the valid prefix, its unstable end cut off, that end and the rest merged as one
    piece): the reference where tiktoken has no counterpart (pinned tokens)."""
    try:
        return tok.encode_ordinary(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        valid = e.start
    text = data[:valid].decode("utf-8")
    tokens, unstable = _split_unstable(tok, text, tok.encode_ordinary(text), set())
    rest = unstable + data[valid:]
    ranks = _tables(tok).ids
    whole = ranks.get(rest)
    return tokens + ([whole] if whole is not None else byte_pair_encode(rest, ranks))


# text with invalid bytes: valid UTF-8 (words, whitespace runs, CJK, emoji) cut anywhere and
# joined with stray bytes, including the first bytes of multi-byte characters
_MIXED_BYTES = st.lists(
    st.one_of(
        tiktoken_mixed_text.map(lambda s: s.encode("utf-8")),
        st.binary(min_size=1, max_size=6),
        st.sampled_from([b"\xe2\x82", b"\xf0\x9f", b"\xc3", b"\x80", b"\xff", b"\n \n", b"   "]),
    ),
    max_size=6,
).map(b"".join)


@settings(max_examples=150, deadline=None)
@given(data=_MIXED_BYTES)
def test_native_encode_bytes_equals_tiktoken(pairs, data):
    """Issue 36 item 10: encode_bytes is native (Rust), with tiktoken's semantics exactly."""
    for tok, enc in pairs.values():
        ids = tok.encode_bytes(data)
        assert ids == enc._encode_bytes(data), data
        assert tok.decode_bytes(ids) == data


@settings(max_examples=60, deadline=None)
@given(data=_MIXED_BYTES, pinned=st.sampled_from([b"<think>", b"</think>", b""]))
def test_native_encode_bytes_with_pinned_tokens(trained, data, pinned):
    """Pinned tokens are produced in the valid prefix and end the unstable part (as tiktoken's
    special tokens end a piece); checked against the former Python implementation."""
    for tok in trained.values():
        for d in (data + pinned + b"\xff", pinned + b"\xfe" + data, data):
            ids = tok.encode_bytes(d)
            assert ids == _reference_encode_bytes(tok, d), d
            assert tok.decode_bytes(ids) == d


def test_native_encode_bytes_long_inputs(pairs):
    """80 KB of text with an invalid byte in the middle and at the end; 200 KB of random bytes
    (a piece merged in chunks)."""
    rng = random.Random(36)
    text = ("The quick brown fox, naïve café 中文 😀\n\n  x = 1\t" * 2000).encode()
    noise = bytes(rng.randrange(256) for _ in range(200_000))
    for tok, enc in pairs.values():
        for data in (text[:40_001] + b"\xff" + text[40_001:], text + b"\xc3", noise):
            ids = tok.encode_bytes(data)
            assert ids == enc._encode_bytes(data)
            assert tok.decode_bytes(ids) == data
