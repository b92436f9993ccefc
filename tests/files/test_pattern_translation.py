"""Pattern translation between fancy-regex (toksmith, tiktoken) and Oniguruma (Hugging Face)."""

from __future__ import annotations

import random

import pytest

import toksmith
from toksmith.formats._common import ConversionError
from toksmith.formats._regex import from_oniguruma, to_oniguruma


@pytest.fixture(scope="module")
def onig():
    """Hugging Face's Split (Oniguruma) keeping the matches only, as toksmith does."""
    pytest.importorskip("tokenizers")
    from tokenizers import Regex, pre_tokenizers

    compiled = {}  # one Split per regex: the random-pattern test splits 8 texts with each

    def run(regex, text):
        split = compiled.get(regex)
        if split is None:
            split = pre_tokenizers.Split(Regex(regex), behavior="removed", invert=True)
            compiled[regex] = split
        return [s for s, _ in split.pre_tokenize_str(text)]

    return run


def _fancy(pattern, text):
    return toksmith._core.split(text, pattern, "auto")


_CASED = "aAxǅǆ\u0345µKKİıiIßẞsSſ ﬁfi Σσς K"


_ATOMS = [
    "a",
    "b",
    "s",
    " ",
    "\\n",
    "\\s",
    "\\S",
    "\\d",
    "\\w",
    "\\W",
    "\\p{L}",
    "\\p{N}",
    "\\p{Lu}",
    "\\pL",
    "[ab]",
    "[^\\s]",
    "[\\w]",
    "[^\\w]",
    ".",
    "'",
    "[\\r\\n]",
    "ß",
    "\\x{41}",
]


_QUANTS = ["", "", "", "+", "*", "?", "{1,3}", "{2}", "{1,3}+", "++", "*+", "?+", "+?", "{2,}"]


_CHARS = list("aAbsSßẞﬁ  \n\n\t.'é12_,-\u200c²½İ\r")


def _random_pattern(rng, depth=0):
    alts = []
    for _ in range(rng.randint(1, 3) if depth < 2 else 1):
        seq = []
        for _ in range(rng.randint(1, 3)):
            r = rng.random()
            if r < 0.15 and depth < 2:
                kind = rng.choice(["(?:", "(?>", "(?=", "(?!", "(?i:", "("])
                quant = "" if kind[2:3] in "=!" else rng.choice(_QUANTS)
                seq.append(kind + _random_pattern(rng, depth + 1) + ")" + quant)
            elif r < 0.2:
                seq.append(rng.choice(["^", "$", "(?i)"]))
            else:
                seq.append(rng.choice(_ATOMS) + rng.choice(_QUANTS))
        alts.append("".join(seq))
    return "|".join(alts)


def test_oniguruma_caret_does_not_match_at_the_end_after_a_final_newline(onig):
    """Audit finding: Oniguruma's ^ matches after a newline except at the end of the text: '\\n^' was
    translated to match the final newline too."""
    text = "a\n\na\n"
    for pat in [r"\n^", r"a\n^", r"\s^[ab]{0,2}", r"\n^\t?"]:
        assert _fancy(from_oniguruma(pat), text) == onig(pat, text), pat
    assert from_oniguruma(r"^a") == r"(?:\A|(?<=\n))a"  # before a character: no need to say it
    assert from_oniguruma(r"\n^") == r"\n(?:\A|(?<=\n)(?!\z))"


def test_properties_under_icase(onig):
    """Audit finding: Under (?i) fancy-regex case-folds \\p{..} everywhere, Oniguruma only inside a class:
    (?i:\\p{Lu}) matched 'a' in one engine only."""
    assert to_oniguruma(r"(?i:\p{N}+)") == r"(?i:[\p{N}]+)"
    assert from_oniguruma(r"(?i:\p{Lu}+)") == r"(?i:(?-i:\p{Lu})+)"
    for pat in [r"(?i:\p{Lu})", r"(?i:\P{Ll})", r"(?i:\p{Greek})", r"(?i)\p{L}"]:
        assert _fancy(from_oniguruma(pat), _CASED) == onig(pat, _CASED), pat
    for pat in [r"(?i:\P{Lu})", r"(?i:[\P{L}])", r"(?i:[^\P{Ll}x])"]:
        with pytest.raises(ConversionError, match=r"\\P"):
            to_oniguruma(pat)
        if pat.startswith(
            "(?i:["
        ):  # (outside a class, Oniguruma's \P{..} is not folded: (?-i:\P{..}))
            with pytest.raises(ConversionError, match=r"\\P"):
                from_oniguruma(pat)


@pytest.mark.parametrize(
    "pat",
    [
        r"(?i)ss",
        r"(?i:sS)",
        r"(?i)s(?:s)",
        r"(?i:ß)",
        r"(?i)[a\x{DF}]",
        r"(?i:fi)",
        r"(?i: [\s\S]b)",
        r"(?i: [\p{Ll}]b)",
    ],
)
def test_multi_character_case_folds_under_icase_are_refused(pat, onig):
    """Audit finding: Oniguruma matches 'ß' to 'ss' and 'ﬁ' to 'fi' under (?i), also through a class that holds
    such a character (' [\\p{Ll}]b' matches ' ssb'); fancy-regex never does."""
    text = "ß ss ﬁ fi SS ssb"
    assert _fancy(pat, text) != onig(pat, text)
    with pytest.raises(ConversionError, match="multi-character case fold"):
        from_oniguruma(pat)
    if (
        pat == r"(?i: [\s\S]b)"
    ):  # the same with and without (?i) in fancy-regex: (?-i:[\s\S]) for Oniguruma
        assert onig(to_oniguruma(pat), text) == _fancy(pat, text)
    else:
        with pytest.raises(ConversionError, match="multi-character case fold"):
            to_oniguruma(pat)


def test_case_closed_classes_under_icase_keep_their_meaning(onig):
    text = "ß ss ﬁ fi SS ab_1 \u200c²"
    for pat in [
        r"(?i:\w)",
        r"(?i:[\w'])",
        r"(?i:[a-z]+)",
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)",
        r"(?i:[sdmt]|ll|ve|re)",
    ]:
        assert onig(to_oniguruma(pat), text) == _fancy(pat, text), pat
    assert to_oniguruma(r"(?i:\w)").startswith("(?i:(?-i:[")


@pytest.mark.parametrize("pat", [r"a(?i)b|c", r"x(?i)|c", r"(?:a(?i)b|c)"])
def test_flags_within_a_branch_with_more_branches_are_refused(pat, onig):
    """Audit finding: fancy-regex reads a(?i)b|c as (?:a(?i:b))|(?i:c), Oniguruma as a(?i:b|c)."""
    assert _fancy(pat, "c aB aC C") != onig(pat, "c aB aC C")
    with pytest.raises(ConversionError, match="groups differently"):
        to_oniguruma(pat)
    with pytest.raises(ConversionError, match="groups differently"):
        from_oniguruma(pat)


def test_flags_that_agree_are_kept(onig):
    text = "c aB aC C ab A b"
    for pat in [r"(?i)a|b", r"a|(?i)b|c", r"a(?i)b", r"(?:x|(?i)b)|c"]:
        assert to_oniguruma(pat) == pat
        assert _fancy(pat, text) == onig(pat, text), pat
        assert _fancy(from_oniguruma(pat), text) == onig(pat, text), pat


@pytest.mark.parametrize("pat", [r"((?i)b)a", r"(?=(?i)b)ba", r"(?>(?i)b)a"])
def test_flags_inside_capturing_atomic_or_lookaround_groups_are_refused(pat, onig):
    """Audit finding: fancy-regex lets such flags reach past the group: ((?i)b)a matches 'bA'."""
    assert _fancy(pat, "bA ba") != onig(pat, "bA ba")
    for convert in (to_oniguruma, from_oniguruma):
        with pytest.raises(ConversionError, match="reaches past the group"):
            convert(pat)


def test_properties_without_braces(onig):
    """Audit finding: \\pL is the letters property to fancy-regex and the two letters 'pL' to Oniguruma."""
    assert onig(r"\pL", "pL a") == ["pL"]
    assert to_oniguruma(r"\pL+|[\PN]") == r"\p{L}+|[\P{N}]"
    text = "pL a1 Ä"
    assert onig(to_oniguruma(r"\pL+|[\pN]"), text) == _fancy(r"\pL+|[\pN]", text)
    for pat in [r"\pL", r"[\pN ]"]:
        with pytest.raises(ConversionError, match="is the letters"):
            from_oniguruma(pat)


def test_negated_property_inside_a_class(onig):
    """Audit finding: Oniguruma's \\p{^L} was rewritten outside classes only: [\\p{^L}] gave a pattern that
    does not compile."""
    assert from_oniguruma(r"[\p{^L}\d]+") == r"[\P{L}\d]+"
    assert _fancy(from_oniguruma(r"[\p{^L}]+"), "ab 12,c") == onig(r"[\p{^L}]+", "ab 12,c")


@pytest.mark.parametrize(
    "pat", [r"(?:a|(?=b))+", r"(?:a|\z)*", r"x(?:a|(?:(?<=b)))+", r"(?:a|$){2}"]
)
def test_a_repeat_oniguruma_refuses_is_a_conversion_error(pat, onig):
    """Audit finding: Oniguruma refuses a quantifier on a non-capturing group with a branch that is only an
    anchor or a look-around ("target of repeat operator is invalid"): the export wrote a
    tokenizer.json that Hugging Face cannot load."""
    with pytest.raises(ConversionError):
        to_oniguruma(pat)


@pytest.mark.parametrize("pat", [r"((\w*){0,2}|[^\w])++x", r"(?:a*b?)+c", r"(a|b*){2,}"])
def test_a_repeated_group_that_can_match_empty_is_refused(pat):
    """Audit finding: The engines end a loop over an empty-matching group differently (different pieces)."""
    for convert in (to_oniguruma, from_oniguruma):
        with pytest.raises(ConversionError, match="can match the empty string"):
            convert(pat)
    assert from_oniguruma(r"(?:a*b)+") == r"(?:a*b)+" and to_oniguruma(r"(?:a*)?x") == r"(?:a*)?x"


@pytest.mark.parametrize("pat", [r"\p{Alnum}+", r"a{2,1}", r"\0"])
def test_oniguruma_regexes_fancy_regex_cannot_run_are_conversion_errors(pat):
    """Audit finding: These went through and failed later, as a PatternError from the Tokenizer."""
    with pytest.raises(ConversionError):
        from_oniguruma(pat)


def test_translations_split_like_the_other_engine(onig):
    """Audit finding: Random patterns: whatever is translated (either way) splits random texts as the source
    pattern does in its own engine (the test that found the defects above)."""
    from toksmith.formats._regex import can_match_empty

    rng = random.Random(20240611)
    checked = [0, 0]
    for _ in range(400):
        pat = _random_pattern(rng)
        try:
            if can_match_empty(pat):
                continue
        except ConversionError:
            continue
        texts = ["".join(rng.choice(_CHARS) for _ in range(rng.randint(0, 12))) for _ in range(8)]
        for k, (convert, src, dst) in enumerate(
            [
                (to_oniguruma, _fancy, lambda p, t: onig(p, t)),
                (from_oniguruma, lambda p, t: onig(p, t), _fancy),
            ]
        ):
            try:
                src(pat, "")
                out = convert(pat)
            except Exception:  # noqa: BLE001 - refused, or the source engine does not compile it
                continue
            checked[k] += 1
            for text in texts:
                try:
                    expected = src(pat, text)
                except BaseException:  # noqa: BLE001 - a backtracking limit of either engine
                    break
                assert dst(out, text) == expected, (pat, out, text)
    assert min(checked) > 100
