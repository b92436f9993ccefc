"""The scanners' non-ASCII paths split text of every script family exactly like `regex.findall`.

Words are drawn from per-script alphabets (each with its letters of every case class, its marks
and its digits) and joined by the separators the patterns care about, so that runs of one
script meet runs of another, ASCII words, contractions and whitespace of every kind. o200k's
word alternatives (`U* L+`, else `U+ L*`) read `Lm`/`Lo`/`M` as both upper and lower: the
`CASE_MIX` alphabet puts them next to `Lu`, `Lt` and `Ll`.
"""

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from toksmith.pretokenize import PATTERNS, split

NAMES = ["cl100k", "o200k", "gpt2", "nanochat"]
COMPILED = {n: regex.compile(PATTERNS[n]) for n in NAMES}

# All assigned in Unicode 16 with the same classes in 17 (tests/unicode16.py).
SCRIPTS = {
    "latin": "aeiouzßéèçñøåœÀÉÎÕÜŁŽǅǈ\u0301\u0327ʰʲ",
    "cyrillic": "абвгдежзийклмнопрстуфхцчшщъыьэюяАБВГДЖЗЯЁё\u0483\u0486",
    "greek": "αβγδεζηθικλμνξοπρστυφχψωΑΒΓΔΩάέήίόύώϊΐᾼᾳͅ\u0342",
    "cjk": "中文字的是不了人我在有他这为之大来以个国们到说时要就出会可也你对生能而子那得于着下自之㐀",
    "kana": "あいうえおかきくけこさしすせそんアイウエオカキクケコサシスセソンーゝゞ々ｱｲｳ\u3099\u309a",
    "korean": "가나다라마바사아자차카타파하한국어입니다습ㄱㄴㄷㅏㅓ\u1100\u1161\u11a8",
    "arabic_hebrew": "ابتثجحخدذرزسشصضطظعغفقكلمنهويءآأ\u064b\u064e\u0650\u0651ـאבגדהוזחטיכלמנסעפצקרשת\u05b4\u05bc",
    "indic": "कखगघचछजझटडतथदधनपबभमयरलवशसह\u093e\u093f\u0940\u0941\u094d\u0902অআকখগ\u09be\u09bfதமிழ\u0bcd",
    "thai": "กขคงจฉชซญดตถทนบปผพฟมยรลวสหอฮ\u0e31\u0e34\u0e35\u0e47\u0e48\u0e49ะาำเแโใไๆ",
    "emoji": "😀🌍👍🏽👨\u200d👩\u200d👧🇫🇷\ufe0f\u20e3❤✨",
    # Lu, Lt, Lm, Lo and M next to Ll: o200k's case classes
    "case_mix": "AZÀΩЖaæжωǅᾈʰˀ々ー中あ\u0301\u0903\u093fﬁ",
    "digits": "0123456789٠١٢٣۴۵०१२३৪๓໔༥²½Ⅻ〇",
}
SEPARATORS = [
    " ", "  ", "\t", "\n", "\r\n", " \n ", "\u3000", "\xa0", "\u2028", "\x85", ".", ",", "、",
    "。", "！", "«", "»", "'", "'s", "'LL", "'ve", "’", "/", "/\n", "-", "(", ")", "\u200d",
]  # fmt: skip

word = st.sampled_from(sorted(SCRIPTS)).flatmap(
    lambda s: st.text(alphabet=st.sampled_from(SCRIPTS[s]), min_size=1, max_size=8)
)
ascii_word = st.sampled_from(["the", "It", "DON'T", "we're", "x", "ABC", "Hello", "42", "1234567"])
script_text = st.lists(
    st.one_of(word, word, ascii_word, st.sampled_from(SEPARATORS)), max_size=14
).map("".join)
# long runs of one script (the scanners' run loops, and the block scanners' back-off on text
# with little ASCII)
long_script_text = st.lists(
    st.tuples(st.sampled_from(sorted(SCRIPTS)), st.sampled_from([" ", "\n", ", ", ""])),
    min_size=1,
    max_size=30,
).map(lambda parts: "".join(SCRIPTS[s][::-1] + sep + SCRIPTS[s] for s, sep in parts))


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=80)
@given(text=script_text)
def test_mixed_scripts_equal_regex_module(name, text):
    assert split(text, name) == COMPILED[name].findall(text), text


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=15)
@given(text=long_script_text)
def test_long_script_runs_equal_regex_module(name, text):
    assert split(text, name) == COMPILED[name].findall(text), text


@pytest.mark.parametrize(
    "text",
    [
        "中A",  # Lo then Lu: `U* L+` gives `A` back, then `中` alone is `L+`
        "中AB",
        "中Ab",
        "ABc",
        "ǅa",  # Lt
        "ʰA",  # Lm then Lu
        "A\u0301",  # Lu then a mark: the mark is in both classes
        "A\u0301B",
        "\u0301A",  # a mark first: with the prefix, then as a letter of its own class
        "\u0301\u0301a",
        " \u0301A",
        ".中A",
        "ЖЖж",
        "ЖЖ'S",
        "中文's",
    ],
)
@pytest.mark.parametrize("name", NAMES)
def test_case_class_edges(name, text):
    assert split(text, name) == COMPILED[name].findall(text)


# o200k's ASCII word path hands a word whose ASCII letters stop at a non-ASCII character to the
# general code, which goes on from there: every case class after upper-case only and after
# lower-case ASCII letters, with and without the prefix and a contraction.
ASCII_THEN_WIDE = [
    "ABCé", "ABCÉ", "ABCǅ", "ABCʰ", "ABC中", "ABC\u0301", "ABC\u0301d", "ABCʰD", "ABC中De",
    "ABCʰDe", "AB中CD", "abcé", "abcÉ", "abc\u0301", "abcʰA", "abc中A", "Abcé'S", "AÉ's",
    " ABCé", ".ABC中A", "'ABCʰ's", "héllo wörld", "HÉLLO", "HÉllo", "AÀBé", "ABCDEFGHIJKLMNOPQRé",
    "abcdefghijklmnopqrsÉ", "\nABé", "ABCＡ", "ABC\u0903a",
]  # fmt: skip


@pytest.mark.parametrize("text", ASCII_THEN_WIDE)
@pytest.mark.parametrize("name", NAMES)
def test_ascii_words_continued_by_other_letters(name, text):
    assert split(text, name) == COMPILED[name].findall(text)


ascii_then_wide = st.lists(
    st.tuples(
        st.sampled_from(["", " ", ".", "'", "\n"]),
        st.text(alphabet="aBzZ", min_size=1, max_size=20),
        st.text(alphabet=st.sampled_from(SCRIPTS["case_mix"] + "éÉ"), min_size=1, max_size=3),
        st.text(alphabet="aBz's", max_size=4),
    ),
    max_size=6,
).map(lambda parts: "".join("".join(p) for p in parts))


@settings(max_examples=60)
@given(text=ascii_then_wide)
def test_ascii_words_continued_fuzz(text):
    assert split(text, "o200k") == COMPILED["o200k"].findall(text), text
