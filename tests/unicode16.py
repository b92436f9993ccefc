"""Code points on which the tests' `regex` reference and the scanners' tables disagree.

The scanners (and tiktoken, and fancy-regex for custom patterns) have Unicode 16 tables; the
`regex` release pinned as the tests' reference (2026.5.9) has Unicode 17, which assigned or
re-categorised these 4,700 code points (U+0295 Lo -> Ll, CJK Extension J, ...). A regex release
with Unicode 16 (2025.9.18) cannot be the reference: transformers (test extra) requires
regex >= 2025.10.22. So the comparisons with `regex` run on text without these code points, and
tests/test_unicode_versions.py checks every code point, these included, against tiktoken.
Computed by comparing every class (\\p{Lu}, ..., \\p{N}, \\s, case folds) of regex 2026.5.9 with
tiktoken 0.14's engine, code point by code point.
"""

from hypothesis import strategies as st

UNICODE_17_CHANGES = [
    (0x295, 0x295), (0x88F, 0x88F), (0xC5C, 0xC5C), (0xCDC, 0xCDC), (0x1ACF, 0x1ADD),
    (0x1AE0, 0x1AEB), (0xA7CE, 0xA7CF), (0xA7D2, 0xA7D2), (0xA7D4, 0xA7D4), (0xA7F1, 0xA7F1),
    (0x10940, 0x10959), (0x10EC5, 0x10EC7), (0x10EFA, 0x10EFB), (0x11B60, 0x11B67),
    (0x11DB0, 0x11DDB), (0x11DE0, 0x11DE9), (0x16EA0, 0x16EB8), (0x16EBB, 0x16ED3),
    (0x16FF2, 0x16FF6), (0x187F8, 0x187FF), (0x18D09, 0x18D1E), (0x18D80, 0x18DF2),
    (0x1E6C0, 0x1E6DE), (0x1E6E0, 0x1E6F5), (0x1E6FE, 0x1E6FF), (0x2B73A, 0x2B73F),
    (0x2CEA2, 0x2CEAD), (0x323B0, 0x33479),
]  # fmt: skip


def same_in_unicode_16(c: str) -> bool:
    o = ord(c)
    return not any(a <= o <= b for a, b in UNICODE_17_CHANGES)


#: any character (surrogates aside) whose classes are the same in Unicode 16 and 17
characters_16 = st.characters(exclude_categories=("Cs",)).filter(same_in_unicode_16)
