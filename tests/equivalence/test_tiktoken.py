"""toksmith equals tiktoken on the same ranks, pattern and special tokens (differential tests)."""

import numpy as np
import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

import toksmith
from tests.conftest import BYTES
from tests.strategies import tiktoken_mixed_text
from toksmith import Tokenizer

CL100K_SPECIALS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


def _outcome(f):
    """The result of ``f()``, or "ValueError" if it raised one (tiktoken and toksmith word their
    messages differently)."""
    try:
        return f()
    except ValueError:
        return "ValueError"


_NAMES = sorted(CL100K_SPECIALS)


_FRAGMENTS = st.one_of(
    tiktoken_mixed_text,
    st.sampled_from(_NAMES),
    st.sampled_from(
        ["<|", "|>", "<|endoftext", "<|foo|>", "ab", "é", "<<|endoftext|>|>", "\ud800"]
    ),
)


_NOT_SPECIAL = ["<|foo|>", "ab", "<|", "é"]


_LOOKAROUND_PATTERNS = [r"(?<= )\w+|\w|\s", r"(?<=a)b+|[a-z]+|\s+(?!\S)|\s+|."]


@settings(max_examples=300)
@given(
    text=st.lists(_FRAGMENTS, max_size=6).map("".join),
    allowed=st.one_of(st.just("all"), st.sets(st.sampled_from(_NAMES))),
    disallowed=st.one_of(
        st.just("all"),
        st.just(()),
        st.just(None),
        st.sets(st.sampled_from(_NAMES + _NOT_SPECIAL)),
        st.lists(st.sampled_from(_NAMES + _NOT_SPECIAL), max_size=3),
    ),
)
def test_special_arguments_equal_tiktoken(cl100k, text, allowed, disallowed):
    # disallowed_special may name strings that are not special tokens: like tiktoken, the text
    # must not contain them (they were ignored); None disallows nothing, as in tiktoken's encode
    tok, enc = cl100k
    want = _outcome(
        lambda: enc.encode(text, allowed_special=allowed, disallowed_special=disallowed)
    )
    assert (
        _outcome(lambda: tok.encode(text, allowed_special=allowed, disallowed_special=disallowed))
        == want
    )
    got = _outcome(
        lambda: tok.encode_to_numpy(text, allowed_special=allowed, disallowed_special=disallowed)
    )
    assert (got if isinstance(got, str) else got.tolist()) == want
    if disallowed is not None:  # tiktoken's encode_batch refuses None
        want_batch = _outcome(
            lambda: enc.encode_batch(
                [text, "x"], allowed_special=allowed, disallowed_special=disallowed
            )
        )
        assert (
            _outcome(
                lambda: tok.encode_batch(
                    [text, "x"], allowed_special=allowed, threads=2, disallowed_special=disallowed
                )
            )
            == want_batch
        )


@pytest.mark.parametrize("pattern", _LOOKAROUND_PATTERNS)
def test_unstable_and_bytes_with_lookaround_patterns_equal_tiktoken(cl100k_ranks, pattern):
    # the last piece's tokens were counted by encoding the piece alone, which such a pattern
    # splits otherwise: "x hello" raised IndexError, "x ab" lost its stable tokens
    tok = Tokenizer.from_ranks(cl100k_ranks, pattern)
    enc = tiktoken.Encoding(
        "audit_look", pat_str=pattern, mergeable_ranks=cl100k_ranks, special_tokens={}
    )
    for text in ["x hello", "x ab", "abbb", "xabbb", "x abbb", "hello wor", "a b", "a  "]:
        stable, completions = enc.encode_with_unstable(text)
        assert tok.encode_with_unstable(text) == (stable, sorted(completions)), text
        for tail in (b"\xff", b"ab\x80"):
            data = text.encode() + tail
            assert tok.encode_bytes(data) == enc._encode_bytes(data), data


def test_thousands_of_special_tokens_equal_tiktoken(cl100k_ranks):
    # each place where a special token could start was tried against every token with that first
    # byte: 20,000 specials made 800 KB of HTML take 7.7 s (tiktoken: 0.1 s); now one walk down a
    # trie per place (5,000 here keep tiktoken's own set-up short)
    specials = {f"<|reserved_special_token_{i}|>": 100300 + i for i in range(5000)}
    tok = Tokenizer.from_ranks(cl100k_ranks, "cl100k", specials)
    enc = tiktoken.Encoding(
        "audit_many", pat_str=tok.pattern, mergeable_ranks=cl100k_ranks, special_tokens=specials
    )
    text = (
        "<div><p>hello <|reserved_special_token_17|> <|reserved_special_token_1|x "
        "<|reserved_special_token_4999|></p></div>\n"
    ) * 5000
    assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    assert tok.encode(text, disallowed_special=()) == enc.encode(text, disallowed_special=())
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
    with pytest.raises(toksmith.DisallowedSpecialError, match="reserved_special_token_17"):
        tok.encode(text)
    # the disallowed check built sets of all the names for every text (1-2 ms each with 20,000
    # specials): an encode_batch of 10,000 short texts took 18 s
    one = {"<|reserved_special_token_17|>"}
    with pytest.raises(toksmith.DisallowedSpecialError, match="reserved_special_token_4999"):
        tok.encode(text, allowed_special=one)
    short = ["hello <|reserved_special_token_17|>", "plain text", "<|reserved_special_token_1|x"]
    want = [enc.encode(t, allowed_special=one) for t in short]
    assert tok.encode_batch(short * 5000, allowed_special=one) == want * 5000
    assert tok.encode_batch(short[1:] * 5000) == [enc.encode(t) for t in short[1:]] * 5000
    with pytest.raises(toksmith.DisallowedSpecialError, match="reserved_special_token_17"):
        tok.encode_batch(short * 5000)
    # encode_with_unstable looked for the last special token with a regex of all of them (1.5 s
    # to build with 20,000); now of those the encoding holds
    prompt = text[:2000] + "hello fan"
    stable, completions = enc.encode_with_unstable(prompt, allowed_special="all")
    assert tok.encode_with_unstable(prompt, allowed_special="all") == (stable, sorted(completions))


def test_numpy_integer_ids_are_taken_as_tiktoken_takes_them():
    ranks = {k: np.int64(v) for k, v in BYTES.items()}
    tok = Tokenizer.from_ranks(
        ranks, "gpt2", {"<s>": np.uint32(256)}, pinned_tokens={"hi": np.int16(257)}
    )
    enc = tiktoken.Encoding(
        "audit_np",
        pat_str=tok.pattern,
        mergeable_ranks=ranks,
        special_tokens={"<s>": np.int64(256)},
    )
    assert tok.encode("hi<s>", allowed_special="all") == [257, 256]
    assert tok.encode("ho<s>", allowed_special="all") == enc.encode("ho<s>", allowed_special="all")
    assert tok.special_tokens == {"<s>": 256} and type(tok.special_tokens["<s>"]) is int
    for bad in (np.int64(-1), np.True_, 1.0):
        with pytest.raises(ValueError, match="is not a valid id"):
            Tokenizer.from_ranks(BYTES, "gpt2", {"<s>": bad})
    assert tok.encode_batch(["hi", "a"], threads=np.int64(2)) == [[257], [97]]


def test_decode_with_offsets_takes_any_iterable_as_tiktoken(cl100k):
    tok, enc = cl100k
    ids = tok.encode("hello <|endoftext|> wörld 😀", allowed_special="all")
    want = enc.decode_with_offsets(ids)
    assert tok.decode_with_offsets(iter(ids)) == want
    assert tok.decode_with_offsets(i for i in ids) == want
    assert tok.decode_with_offsets(np.array(ids)) == want


def test_unknown_tokens_are_key_errors_as_in_tiktoken():
    # was: UnknownTokenError was only a ValueError, so ported `except KeyError:` code missed it
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"hi"] = 256
    tok = toksmith.Tokenizer.from_ranks(ranks, "gpt2", special_tokens={"<|end|>": 257})
    enc = tiktoken.Encoding(
        "t", pat_str=tok.pattern, mergeable_ranks=ranks, special_tokens={"<|end|>": 257}
    )
    calls = {
        "encode_single_token": lambda e: e.encode_single_token("hello"),
        "decode_single_token_bytes": lambda e: e.decode_single_token_bytes(10**6),
        "decode": lambda e: e.decode([104, 10**6]),
        "decode_bytes": lambda e: e.decode_bytes([10**6]),
    }
    for name, call in calls.items():
        with pytest.raises(KeyError):
            call(enc)  # what tiktoken raises
        with pytest.raises(KeyError) as caught:
            call(tok)
        err = caught.value
        assert isinstance(err, toksmith.UnknownTokenError) and isinstance(err, ValueError), name
        assert str(err) == err.args[0], str(
            err
        )  # the message as written, not KeyError's repr of it
    assert "below 258" in str(pytest.raises(KeyError, tok._core.decode_bytes, [10**6]).value)
    assert toksmith.UnknownTokenError.__module__ == "toksmith"


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
