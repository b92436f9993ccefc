"""Special and pinned (added) tokens: allowed/disallowed arguments, leftmost-longest matching,
many special tokens, counting and streaming around them."""

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

import toksmith
from tests.conftest import BYTES
from toksmith import Tokenizer

_ALPHA = st.sampled_from(list("abc<|>xé ") + ["😀"])


def _reference_with_added(tok, text, added):
    """The ids of ``text`` with ``added`` (text -> id) cut out leftmost-longest, the rest
    encoded piece by piece without added tokens."""
    plain = Tokenizer.from_ranks(tok.mergeable_ranks(), tok.pattern)
    out, start, i = [], 0, 0
    while i < len(text):
        found = [t for t in added if text.startswith(t, i)]
        if found:
            t = max(found, key=len)
            out += plain.encode_ordinary(text[start:i]) + [added[t]]
            i = start = i + len(t)
        else:
            i += 1
    return out + plain.encode_ordinary(text[start:])


def test_disallowed_non_special_string_names_it(cl100k):
    tok, _ = cl100k
    with pytest.raises(
        toksmith.DisallowedSpecialError, match=r"'<\|im_start\|>' \(at byte offset 4\)"
    ):
        tok.encode("hé <|im_start|>", disallowed_special={"<|im_start|>"})
    assert tok.encode("hé <|im_start|>", disallowed_special={"<|im_end|>"}) == tok.encode_ordinary(
        "hé <|im_start|>"
    )
    with pytest.raises(TypeError, match="disallowed_special must hold str"):
        tok.encode("x", disallowed_special={5})


def test_allowed_special_as_a_single_string_is_a_type_error(cl100k):
    # it was read as a set of characters: "names '<', which is not a special token", or, with the
    # token in the text, DisallowedSpecialError telling to pass allowed_special (which was done)
    tok, _ = cl100k
    for text in ("plain", "a<|endoftext|>"):
        with pytest.raises(TypeError, match=r"pass \{'<\|endoftext\|>'\}"):
            tok.encode(text, allowed_special="<|endoftext|>")
        with pytest.raises(TypeError, match="allowed_special"):
            tok.encode_batch([text], allowed_special="<|endoftext|>")
    with pytest.raises(TypeError, match="allowed_special must be 'all' or a set"):
        tok.encode("x", allowed_special=None)
    with pytest.raises(TypeError, match="allowed_special must be 'all' or a set"):
        tok.encode("x", allowed_special=5)


def test_unstable_end_does_not_take_in_a_whitespace_special_token(cl100k_ranks):
    # tiktoken looks tokens up among the mergeable ones when it extends the unstable end over
    # whitespace tokens: a special token whose text is whitespace ends it
    specials = {"<|endoftext|>": 100257, "\t\t": 100300, " \n": 100301}
    tok = Tokenizer.from_ranks(cl100k_ranks, "cl100k", specials)
    enc = tiktoken.Encoding(
        "audit_ws", pat_str=tok.pattern, mergeable_ranks=cl100k_ranks, special_tokens=specials
    )
    for text in ["x \n\n", "x\t\t ", "x \n \n", "\t\t\t\t  "]:
        stable, completions = enc.encode_with_unstable(text, allowed_special="all")
        assert tok.encode_with_unstable(text, allowed_special="all") == (
            stable,
            sorted(completions),
        ), text


@settings(max_examples=200)
@given(
    texts=st.lists(st.text(alphabet=_ALPHA, min_size=1, max_size=5), max_size=6, unique=True),
    n_pinned=st.integers(0, 6),
    text=st.text(alphabet=_ALPHA, max_size=40),
    data=st.data(),
)
def test_added_tokens_leftmost_then_longest(texts, n_pinned, text, data):
    # overlapping special and pinned tokens, one a prefix of another: at the leftmost place where
    # one that the call accepts starts, the longest of those
    specials = {t: 300 + i for i, t in enumerate(texts[n_pinned:])}
    pinned = {t: 400 + i for i, t in enumerate(texts[:n_pinned])}
    tok = Tokenizer.from_ranks(
        {**BYTES, b"ab": 256, b"<|": 257}, "gpt2", specials, pinned_tokens=pinned
    )
    allowed = data.draw(
        st.one_of(st.just("all"), st.sets(st.sampled_from(sorted(specials))))
        if specials
        else st.just(set())
    )
    accepted = {**pinned, **(specials if allowed == "all" else {t: specials[t] for t in allowed})}
    want = _reference_with_added(tok, text, accepted)
    assert tok.encode(text, allowed_special=allowed, disallowed_special=()) == want
    assert tok.encode_batch(
        [text, text], allowed_special=allowed, disallowed_special=(), threads=2
    ) == [want, want]


def test_long_text_in_parts_keeps_added_tokens_with_a_space(gpt2_ranks):
    # a long non-ASCII text is encoded in parts cut at safe places, one of which is a space
    # between letters: a pinned "New York" (or an allowed special with a space) there was cut in
    # two (2 of 20,000 occurrences lost)
    specials = {"<|endoftext|>": 50256, "<|my token|>": 50257}
    pinned = {"New York": 50258}
    tok = Tokenizer.from_ranks(gpt2_ranks, "gpt2", specials, pinned_tokens=pinned)
    for unit in ["café in New York and cats. ", "café in New York and cats.\nNew York\n"]:
        text = unit * 20000
        assert tok.encode_ordinary(text) == _reference_with_added(tok, text, pinned)
    text = "café <|my token|> x" * 20000
    assert tok.encode(text, allowed_special="all") == _reference_with_added(
        tok, text, {**pinned, **specials}
    )


def test_counting_keeps_pinned_tokens_with_a_space(tmp_path):
    # the trainer cuts texts over 1 MB (and files, block by block) at the same safe places:
    # a pinned "New York" was counted as "New" and " York" where a cut fell at its space
    # (a fix in train.rs, which now asks encode.rs whether a pinned token may span a cut)
    from collections import Counter

    from toksmith import _core
    from toksmith.pretokenize import split

    def reference(text):
        counts = Counter()
        for segment in text.split("New York"):
            counts.update(p.encode() for p in split(segment, "gpt2"))
        return dict(counts)

    big = "." * (1 << 19) + "New York " + "1. " * 300000
    counter = _core.ChunkCounter("gpt2", ["New York"])
    counter.add_texts([big], 2)
    assert {bytes(k): v for k, v in counter.counts()} == reference(big)
    text = "We met in New York, then New York again. " * 2000
    path = tmp_path / "corpus.txt"
    path.write_text(text, encoding="utf-8")
    counter = _core.ChunkCounter("gpt2", ["New York"])
    counter.add_file(str(path), block_size=1000)
    assert {bytes(k): v for k, v in counter.counts()} == reference(text)


@settings(max_examples=200)
@given(
    pinned=st.lists(
        st.text(alphabet=_ALPHA, min_size=1, max_size=5), min_size=1, max_size=8, unique=True
    ),
    text=st.text(alphabet=_ALPHA, max_size=60),
)
def test_counting_cuts_pinned_tokens_leftmost_longest(pinned, text):
    # the trainer cuts pinned tokens out with the encoder's trie (it tried every pinned token at
    # every byte: 1000 pinned words made 25 MB take 30 s); overlapping tokens, one a prefix of
    # another: at the leftmost place where one starts, the longest
    from collections import Counter

    from toksmith import _core
    from toksmith.pretokenize import split

    want, start, i = Counter(), 0, 0
    while i < len(text):
        found = [t for t in pinned if text.startswith(t, i)]
        if found:
            want.update(p.encode() for p in split(text[start:i], "gpt2"))
            i = start = i + len(max(found, key=len))
        else:
            i += 1
    want.update(p.encode() for p in split(text[start:], "gpt2"))
    counter = _core.ChunkCounter("gpt2", pinned)
    counter.add_texts([text])
    assert {bytes(k): v for k, v in counter.counts()} == dict(want)


@pytest.fixture(scope="module")
def ab_tok():
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"ab"] = 256
    return toksmith.Tokenizer.from_ranks(
        ranks, "cl100k", special_tokens={"<s>": 257, "<|endoftext|>": 258}
    )


@pytest.mark.parametrize("make", [lambda: iter(["<s>"]), lambda: (t for t in ["<s>"])])
def test_allowed_special_as_a_one_shot_iterator_is_a_type_error(ab_tok, make):
    # was: the iterator was read up by one check, so the token it allowed was then refused as
    # disallowed (DisallowedSpecialError telling to pass allowed_special={'<s>'}, which was passed)
    with pytest.raises(TypeError, match="one-shot"):
        ab_tok.encode("ab<s>", allowed_special=make())
    with pytest.raises(TypeError, match="one-shot"):
        ab_tok.encode_batch(["ab<s>"], allowed_special=make())
    assert ab_tok.encode("ab<s>", allowed_special=["<s>"]) == [
        256,
        257,
    ]  # re-iterable collections still work


def test_disallowed_offset_after_a_surrogate_pair_counts_utf8_bytes(ab_tok):
    # was: a disallowed non-special string after a surrogate pair was placed at byte 7, not 5
    # (the pair counted as two 3-byte surrogates, not the 4-byte character it encodes as)
    with pytest.raises(toksmith.DisallowedSpecialError, match="byte offset 5"):
        ab_tok.encode("\ud83d\ude00 xyz", disallowed_special={"xyz"})
    # ... and so came after a special token that it precedes
    with pytest.raises(toksmith.DisallowedSpecialError, match="'xy'"):
        ab_tok.encode("\ud83d\ude00xy<s>", disallowed_special={"xy", "<s>"})


def test_batch_disallowed_error_names_the_text(ab_tok):
    # was: the error did not say which text of the batch held the special token
    with pytest.raises(toksmith.DisallowedSpecialError, match=r"texts\[2\]: .*'<s>'"):
        ab_tok.encode_batch(["a", "b", "c<s>", "d<s>"])
    assert isinstance(toksmith.DisallowedSpecialError("x"), ValueError)


@pytest.mark.parametrize("threads", [1, 2])
def test_batch_disallowed_check_in_parallel_names_the_first_text(ab_tok, threads):
    # The check runs natively on the batch's threads over ranges of texts (it was a serial
    # Python loop); the error must still name the first text that holds a disallowed token.
    texts = [("\u00e9t\u00e9 \u4e2d\u6587 " if k % 3 else "ab ") * (k % 50 + 1) for k in range(400)]
    for k in (390, 250, 399):
        texts[k] += "<s>"
    with pytest.raises(toksmith.DisallowedSpecialError, match=r"texts\[250\]: .*'<s>'"):
        ab_tok.encode_batch(texts, threads=threads)
    # only the disallowed ones count: <|endoftext|> earlier is allowed here, <s> is not
    texts[10] += "<|endoftext|>"
    with pytest.raises(toksmith.DisallowedSpecialError, match=r"texts\[250\]: .*'<s>'"):
        ab_tok.encode_batch(texts, threads=threads, allowed_special={"<|endoftext|>"})
    # a lone surrogate (the native search refuses the text): the same answer, text by text
    texts[5] += "\ud800"
    with pytest.raises(toksmith.DisallowedSpecialError, match=r"texts\[10\]: .*endoftext"):
        ab_tok.encode_batch(texts, threads=threads)
    clean = [t.replace("<s>", "").replace("<|endoftext|>", "") for t in texts]
    assert ab_tok.encode_batch(clean, threads=threads) == [ab_tok.encode(t) for t in clean]
