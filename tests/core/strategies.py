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
