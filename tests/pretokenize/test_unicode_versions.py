"""The named scanners classify every code point as tiktoken's regex engine does (Unicode 16).

Every code point (assigned or not, surrogates aside) is encoded in several contexts (letters,
digits, marks, spaces, newlines, apostrophes, punctuation on either side, and next to its
neighbours in code point order) with real rank files, and the ids must equal tiktoken's. A
seeded fuzz test then strings random code points of every plane together with those contexts
(runs of non-ASCII letters, marks and spaces that the fixed contexts do not build).
"""

import random

import pytest

import toksmith
from toksmith.pretokenize import PATTERNS

tiktoken = pytest.importorskip("tiktoken")

# Contexts on either side of each code point; the two lists have coprime lengths so that every
# code point block meets many (before, after) pairs. Apostrophes next to s/t/m/d/l/v/e/r case
# folds (U+017F) exercise the contraction alternatives; "\u0301" is a mark, "\u00e9" a
# non-ASCII letter, "\u3000" a non-ASCII space.
BEFORE = ["a", "7", " ", "'", "\n", "!", "  ", "\u0301", "Z", "\u00e9", "\u3000"]
AFTER = ["", "b", "1", " ", "'s", "\r\n", "?", "'ll", "\u0301"]
CHUNK = 0x2000
SURROGATES = range(0xD800, 0xE000)


def chunk_text(lo: int) -> tuple[list[int], str]:
    cps = [c for c in range(lo, min(lo + CHUNK, 0x110000)) if c not in SURROGATES]
    parts = []
    for i, cp in enumerate(cps):
        # Every third code point runs straight into the next one (no context between them).
        if i % 3:
            parts.append(BEFORE[i % len(BEFORE)])
        parts.append(chr(cp))
        if i % 3:
            parts.append(AFTER[i % len(AFTER)])
    return cps, "".join(parts)


@pytest.fixture(scope="module")
def chunks():
    return [chunk_text(lo) for lo in range(0, 0x110000, CHUNK)]


def first_difference(ours, theirs, cps):
    """The first code point whose context alone gives different ids (for the failure message)."""
    for cp in cps:
        for before in BEFORE:
            for after in AFTER:
                text = before + chr(cp) + after
                if ours.encode_ordinary(text) != theirs.encode_ordinary(text):
                    return f"U+{cp:04X} in {text!r}"
    return "no single code point (the difference needs a longer context)"


@pytest.mark.parametrize(
    "pattern, vocab",
    [("gpt2", "gpt2"), ("cl100k", "cl100k"), ("o200k", "cl100k"), ("nanochat", "cl100k")],
)
def test_every_code_point_gives_tiktokens_ids(pattern, vocab, chunks, gpt2_ranks, cl100k_ranks):
    ranks = gpt2_ranks if vocab == "gpt2" else cl100k_ranks
    theirs = tiktoken.Encoding(
        f"{pattern}_probe", pat_str=PATTERNS[pattern], mergeable_ranks=ranks, special_tokens={}
    )
    ours = toksmith.Tokenizer.from_ranks(ranks, pattern=pattern)
    texts = [text for _, text in chunks]
    mine = ours.encode_ordinary_batch(texts)
    ref = theirs.encode_ordinary_batch(texts)
    for (cps, _text), a, b in zip(chunks, mine, ref):
        assert a == b, (
            f"{pattern}: ids differ from tiktoken's in the chunk from U+{cps[0]:04X}: "
            + first_difference(ours, theirs, cps)
        )


def test_tiktoken_has_unicode_16():
    """The reference: tiktoken's engine knows Unicode 16 letters (Garay, U+10D4A) and not
    Unicode 17 ones (CJK Extension J, U+323B0). Another tiktoken release with another Unicode
    would make the test above fail on those code points, not on toksmith."""
    ranks = {bytes([i]): i for i in range(256)}
    enc = tiktoken.Encoding("letters", pat_str=r"\p{L}+", mergeable_ranks=ranks, special_tokens={})
    assert enc.encode_ordinary("\U00010d4a") == list("\U00010d4a".encode())
    assert enc.encode_ordinary("\U000323b0") == []


def test_issue_37_example(cl100k_ranks):
    """The example of issue 37: a private-use character, a CJK Extension J character (Unicode
    17, unassigned in Unicode 16) and a Thai letter, with the o200k pattern. Unicode 17 makes
    U+33440 a letter and the three characters one piece."""
    from toksmith.pretokenize import split

    text = "\U000f1690\U00033440\u0e33"
    assert split(text, "o200k") == ["\U000f1690\U00033440", "\u0e33"]
    enc = tiktoken.Encoding(
        "o200k_probe", pat_str=PATTERNS["o200k"], mergeable_ranks=cl100k_ranks, special_tokens={}
    )
    ours = toksmith.Tokenizer.from_ranks(cl100k_ranks, pattern="o200k")
    assert ours.encode_ordinary(text) == enc.encode_ordinary(text)


# Pieces for the fuzz test: ASCII contexts that start, end or join pieces.
FUZZ_CONTEXTS = [
    "a",
    "Z",
    "7",
    "123",
    " ",
    "  ",
    "\n",
    "\r\n",
    "\t",
    "'",
    "'s",
    "'LL",
    "!",
    "?!",
    "_",
]


def fuzz_texts(seed: int, n: int) -> list[str]:
    """``n`` random texts of 1-24 parts: a code point of any plane (surrogates aside), a
    non-ASCII code point of the first plane, or an ASCII context."""
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(1, 24)):
            r = rng.random()
            if r < 0.45:
                cp = rng.randrange(0x110000 - 0x800)
                parts.append(chr(cp + 0x800 if cp >= 0xD800 else cp))
            elif r < 0.7:
                cp = rng.randrange(0x80, 0xF800)
                parts.append(chr(cp + 0x800 if cp >= 0xD800 else cp))
            else:
                parts.append(rng.choice(FUZZ_CONTEXTS))
        texts.append("".join(parts))
    return texts


@pytest.mark.parametrize("pattern", ["cl100k", "o200k"])
def test_fuzzed_code_points_give_tiktokens_ids(pattern, cl100k_ranks):
    """Issue 37: random strings over all code points, ids compared with tiktoken itself (the
    cl100k ranks for both patterns: the pattern decides the pieces)."""
    theirs = tiktoken.Encoding(
        f"{pattern}_fuzz",
        pat_str=PATTERNS[pattern],
        mergeable_ranks=cl100k_ranks,
        special_tokens={},
    )
    ours = toksmith.Tokenizer.from_ranks(cl100k_ranks, pattern=pattern)
    texts = fuzz_texts(37, 3000)
    mine = ours.encode_ordinary_batch(texts)
    ref = [theirs.encode_ordinary(t) for t in texts]
    bad = [t for t, a, b in zip(texts, mine, ref) if a != b]
    assert not bad, f"{pattern}: {len(bad)} texts differ from tiktoken's ids, first {bad[0]!r}"
