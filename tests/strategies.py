"""Hypothesis strategies for tokenizer text."""

import unicodedata

from hypothesis import strategies as st

from tests.unicode16 import characters_16

# Characters that hit every branch of the split patterns.
TRICKY = list(
    "abelmrstvdABELMRSTVDſéÉǅʰあ中ßΩжЖ\u0301\u0308\u093f0123456789٣५²Ⅻ½"
    " \t\n\r\x0b\x0c\x85\xa0\u2028\u3000\u1680\x1c\x1f'\"’.,!/-_(){}#😀🌍\u200d\ufe0f€$"
)

tricky_text = st.text(alphabet=st.sampled_from(TRICKY), max_size=60)
# every plane, combining marks, unassigned code points; not the code points Unicode 17 changed
# (the reference `regex` has 17, the scanners 16: see tests/unicode16.py)
any_text = st.text(alphabet=characters_16, max_size=60)
mixed_text = st.lists(
    st.one_of(
        tricky_text,
        any_text,
        st.sampled_from(
            [
                "don't",
                "I'LL",
                "we've",
                " 12345",
                "\r\n\r\n",
                "   \n",
                "  x",
                "'s",
                "'S",
            ]
        ),
    ),
    max_size=6,
).map("".join)

# Long, mostly-ASCII text (64+ characters, now and then a tricky one): what the scanners split
# 64 bytes at a time; every rule of the block scanners (prefixes, case steps, contractions,
# symbol tails, whitespace with CR/LF, digit groups) and runs that cross a block's end.
ASCII_BITS = [
    "a",
    "s",
    "t",
    "m",
    "d",
    "re",
    "ve",
    "ll",
    "x",
    "THE",
    "the",
    "Camel",
    "S",
    "T",
    "LL",
    "VE",
    "'",
    "'s",
    "'T",
    "'re",
    "'LL",
    "'ve",
    " '",
    "0",
    "12",
    "4567",
    "1234567890",
    " ",
    " ",
    "  ",
    "\t",
    "\n",
    "\n\n",
    "\r\n",
    " \n",
    "\n  ",
    "/",
    "//",
    "\n/",
    "!",
    ".",
    "...",
    "=",
    "{",
    "}",
    "\x0b",
    "\x0c",
    "\x1c",
    " " * 40,
    "a" * 40,
    "!" * 40,
]
long_ascii_text = st.lists(
    st.one_of(
        st.sampled_from(ASCII_BITS),
        st.sampled_from(ASCII_BITS),
        st.sampled_from(ASCII_BITS),
        st.sampled_from(TRICKY),
    ),
    min_size=40,
    max_size=160,
).map("".join)


def assigned_everywhere(text: str) -> str:
    """`text` without the code points that Python's Unicode database (14.0 on 3.11) leaves
    unassigned. toksmith's scanners use the `regex` module's tables, which know later Unicode
    versions than tiktoken's regex engine: a newly assigned letter (U+323B0, CJK Extension J,
    Unicode 17) is a letter to one and unassigned to the other, so the pieces differ."""
    return "".join(c for c in text if unicodedata.category(c) != "Cn")


# text for comparisons with tiktoken's ids
tiktoken_text = st.one_of(mixed_text, any_text).map(assigned_everywhere)
tiktoken_mixed_text = mixed_text.map(assigned_everywhere)
