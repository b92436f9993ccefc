"""Hypothesis text for the interop tests."""

from hypothesis import strategies as st

SPECIAL_TEXTS = [
    "<|endoftext|>",
    "<|fim_prefix|>",
    "<|endofprompt|>",
    "<|user_start|>",
    "<think>",
    "</think>",
]

_TRICKY = list(
    "aetsoinrlATSOILſßéÉǅあ中Ωж\u0301\u0308\u093f0123456789٣५²Ⅻ½"
    " \t\n\r\x0b\x0c\x85\xa0\u2028\u3000'\"’.,!/-_(){}<>|#😀\u200d\ufe0f€$"
)
_FRAGMENTS = [
    "don't",
    "I'LL",
    "we've",
    "'s",
    "'S",
    " 12345",
    "1234567",
    "\r\n\r\n",
    "   \n",
    "  x",
    " the",
    "ing",
    "def f(x):\n    return x\n",
    "https://example.com/a?b=c",
    "  ",
]

# Code points assigned in Unicode 16.0 and later (all unassigned for Python <= 3.13's unicodedata):
# toksmith's split patterns know them (the `regex` module's tables), Hugging Face's Oniguruma
# (tokenizers 0.23) does not, and tiktoken's regex engine does not know the Unicode 17 ones (CJK
# Extension J at U+323B0 is not a letter there), so texts with them tokenize differently.
# Excluded from the Hugging Face and tiktoken comparisons on arbitrary text.
UNICODE_16_PLUS = [
    (0x88F, 0x88F),
    (0xC5C, 0xC5C),
    (0xCDC, 0xCDC),
    (0x1ACF, 0x1ADD),
    (0x1AE0, 0x1AEB),
    (0xA7CE, 0xA7CF),
    (0xA7D2, 0xA7D2),
    (0xA7D4, 0xA7D4),
    (0xA7F1, 0xA7F1),
    (0x10940, 0x10959),
    (0x10EC5, 0x10EC7),
    (0x10EFA, 0x10EFB),
    (0x11B60, 0x11B67),
    (0x11DB0, 0x11DDB),
    (0x11DE0, 0x11DE9),
    (0x16EA0, 0x16EB8),
    (0x16EBB, 0x16ED3),
    (0x16FF2, 0x16FF6),
    (0x187F8, 0x187FF),
    (0x18D09, 0x18D1E),
    (0x18D80, 0x18DF2),
    (0x1E6C0, 0x1E6DE),
    (0x1E6E0, 0x1E6F5),
    (0x1E6FE, 0x1E6FF),
    (0x2B73A, 0x2B73F),
    (0x2CEA2, 0x2CEAD),
    (0x323B0, 0x33479),
]


def _old_enough(c: str) -> bool:
    o = ord(c)
    return not any(a <= o <= b for a, b in UNICODE_16_PLUS)


tricky_text = st.text(alphabet=st.sampled_from(_TRICKY), max_size=50)
any_text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=40)
mixed_text = st.lists(
    st.one_of(tricky_text, any_text, st.sampled_from(_FRAGMENTS)), max_size=6
).map("".join)
text_with_specials = st.lists(
    st.one_of(tricky_text, st.sampled_from(_FRAGMENTS), st.sampled_from(SPECIAL_TEXTS)), max_size=8
).map("".join)

# for comparisons with Hugging Face: assigned characters of Unicode <= 15.1 only
assigned_text = st.text(
    alphabet=st.characters(exclude_categories=("Cs", "Cn")).filter(_old_enough), max_size=40
)
hf_mixed_text = st.lists(
    st.one_of(tricky_text, assigned_text, st.sampled_from(_FRAGMENTS)), max_size=6
).map("".join)
# for comparisons with tiktoken: any text, without those code points
tiktoken_mixed_text = mixed_text.map(lambda t: "".join(c for c in t if _old_enough(c)))
