"""Hypothesis strategies for tokenizer text."""

from hypothesis import strategies as st

# Characters that hit every branch of the split patterns.
TRICKY = list(
    "abelmrstvdABELMRSTVDſéÉǅʰあ中ßΩжЖ\u0301\u0308\u093f0123456789٣५²Ⅻ½"
    " \t\n\r\x0b\x0c\x85\xa0\u2028\u3000\u1680\x1c\x1f'\"’.,!/-_(){}#😀🌍\u200d\ufe0f€$"
)

tricky_text = st.text(alphabet=st.sampled_from(TRICKY), max_size=60)
any_text = st.text(max_size=60)  # every plane, combining marks, unassigned code points
mixed_text = st.lists(st.one_of(tricky_text, any_text, st.sampled_from([
    "don't", "I'LL", "we've", " 12345", "\r\n\r\n", "   \n", "  x", "'s", "'S",
])), max_size=6).map("".join)

# Long, mostly-ASCII text (64+ characters, now and then a tricky one): what the scanners split
# 64 bytes at a time; every rule of the block scanners (prefixes, case steps, contractions,
# symbol tails, whitespace with CR/LF, digit groups) and runs that cross a block's end.
ASCII_BITS = [
    "a", "s", "t", "m", "d", "re", "ve", "ll", "x", "THE", "the", "Camel", "S", "T", "LL", "VE",
    "'", "'s", "'T", "'re", "'LL", "'ve", " '", "0", "12", "4567", "1234567890", " ", " ", "  ",
    "\t", "\n", "\n\n", "\r\n", " \n", "\n  ", "/", "//", "\n/", "!", ".", "...", "=", "{", "}",
    "\x0b", "\x0c", "\x1c", " " * 40, "a" * 40, "!" * 40,
]
long_ascii_text = st.lists(
    st.one_of(st.sampled_from(ASCII_BITS), st.sampled_from(ASCII_BITS), st.sampled_from(ASCII_BITS),
              st.sampled_from(TRICKY)),
    min_size=40, max_size=160,
).map("".join)
