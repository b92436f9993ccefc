"""Text of every script family merges as tiktoken merges it (the merge starts non-ASCII pieces
from whole characters where that is exact: crates/toksmith-core/src/bpe/atoms.rs)."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

# Small alphabets of each family (inclusive ranges), so that random text of one of them
# meets the vocabulary's multi-character tokens, and the whole code space.
SCRIPTS = {
    "latin": (0xC0, 0xFF),
    "latin_ext": (0x100, 0x17F),
    "greek": (0x3B1, 0x3C9),
    "cyrillic": (0x430, 0x44F),
    "hebrew": (0x5D0, 0x5EA),
    "arabic": (0x627, 0x64A),
    "devanagari": (0x915, 0x94D),
    "tamil": (0xB95, 0xBCD),
    "thai": (0xE01, 0xE4E),
    "hangul": (0xAC00, 0xAC40),
    "hiragana": (0x3041, 0x3096),
    "katakana": (0x30A1, 0x30FA),
    "cjk": (0x4E00, 0x4EFF),
    "emoji": (0x1F600, 0x1F64F),
    "combining": (0x300, 0x36F),
    "any": (0x80, 0x10FFFF),
}


def _text(rng: random.Random, family: str, n: int) -> str:
    lo, hi = SCRIPTS[family]
    other = SCRIPTS[rng.choice(sorted(SCRIPTS))]
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.08:
            out.append(rng.choice(" a1.,'"))
            continue
        a, b = other if r < 0.15 else (lo, hi)
        cp = rng.randint(a, b)
        if not 0xD800 <= cp < 0xE000:
            out.append(chr(cp))
    return "".join(out)


def test_every_script_family_equals_tiktoken(cl100k):
    tok, enc = cl100k
    rng = random.Random(37)
    for family in SCRIPTS:
        for k in range(40):
            # runs up to 400 characters: the short merge and, past 128 bytes, the long one
            text = _text(rng, family, 1 + (k * 37) % 400 if k % 8 == 0 else 1 + k % 40)
            assert tok.encode_ordinary(text) == enc.encode_ordinary(text), (family, text)


@settings(max_examples=60, deadline=None)
@given(
    family=st.sampled_from(sorted(SCRIPTS)),
    seed=st.integers(0, 2**32),
    n=st.integers(1, 200),
)
def test_random_script_runs_equal_tiktoken(cl100k, family, seed, n):
    tok, enc = cl100k
    text = _text(random.Random(seed), family, n)
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
