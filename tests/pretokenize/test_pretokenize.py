"""The hand-written scanners split exactly like `regex.findall` with the named patterns."""

import pytest
import regex
from hypothesis import given

import toksmith
from tests.conftest import DATA
from tests.strategies import any_text, long_ascii_text, mixed_text, tricky_text
from toksmith.pretokenize import PATTERNS, RUSTBPE_GPT4_PATTERN, resolve_pattern, split

NAMES = ["gpt2", "cl100k", "o200k", "nanochat"]
COMPILED = {n: regex.compile(PATTERNS[n]) for n in NAMES}


def check(name, text):
    assert split(text, name) == COMPILED[name].findall(text), (name, text)


@pytest.mark.parametrize("name", NAMES)
@given(text=mixed_text)
def test_named_patterns_equal_regex_module(name, text):
    check(name, text)


@pytest.mark.parametrize("name", NAMES)
@given(text=any_text)
def test_named_patterns_equal_regex_module_all_planes(name, text):
    check(name, text)


def test_reference_has_the_tables_unicode_version():
    """The reference regex 2026.5.9 has Unicode 17, the core's tables tiktoken's Unicode 16
    (tools/gen_unicode_tables.py); the tests above leave out the code points that differ
    (tests/unicode16.py). A newer regex (2026.9.29 and later) knows more letters and would fail
    them at random code points."""
    assert not regex.match(r"\p{L}", "\U0003d000"), (
        f"regex {regex.__version__} has a newer Unicode than the core's tables: install the test "
        f"extra's regex (pip install 'regex==2026.5.9')"
    )


def test_newer_unicode_letters_split_as_tiktoken_splits_them():
    """Code points that only regex's newer Unicode calls letters give tiktoken's ids (neither
    engine treats them as letters)."""
    tiktoken = pytest.importorskip("tiktoken")

    from tiktoken.load import load_tiktoken_bpe

    path = DATA / "vocabs" / "cl100k_base.tiktoken"
    ranks = load_tiktoken_bpe(str(path))
    enc = tiktoken.Encoding(
        "cl100k_test", pat_str=PATTERNS["cl100k"], mergeable_ranks=ranks, special_tokens={}
    )
    tok = toksmith.Tokenizer.from_ranks(ranks, pattern="cl100k")
    for text in (
        "\U0003d000:",
        "a\U0003d000b",
        ":\U0003d000 x",
        "\ua7dd1",
        " \U00012550\U00012551 7",
    ):
        assert tok.encode(text) == enc.encode(text), text


@pytest.mark.parametrize("name", NAMES)
@given(text=long_ascii_text)
def test_named_patterns_equal_regex_module_long_ascii(name, text):
    """Long mostly-ASCII text goes through the 64-byte block scanners."""
    check(name, text)


@pytest.mark.parametrize("name", NAMES)
def test_named_patterns_equal_regex_module_on_corpora(name, corpus_slices):
    for text in corpus_slices.values():
        check(name, text)


@pytest.mark.parametrize("name", NAMES)
def test_edge_cases(name):
    for text in [
        "",
        " ",
        "\n",
        "a",
        "  \n\n  ",
        "x  ",
        "\r\n",
        "'",
        "''s",
        "ſ's",
        "A\u0301b",
        "\u0301\u0301",
        " \u0301x",
        "1 2  3",
        "a\u3000b",
        "\x85\n",
        "😀😀 😀",
    ]:
        check(name, text)


@given(text=tricky_text)
def test_regex_engine_fallback_matches_scanner(text):
    # The regex engine (used for custom patterns) agrees with the scanners on these characters.
    for name in NAMES:
        assert split(text, name, engine="regex") == split(text, name)


def test_rustbpe_pattern_text_is_recognised():
    assert resolve_pattern(RUSTBPE_GPT4_PATTERN)[0] == RUSTBPE_GPT4_PATTERN
    assert split("a  \n  ", RUSTBPE_GPT4_PATTERN) == regex.findall(RUSTBPE_GPT4_PATTERN, "a  \n  ")


def test_custom_regex_with_lookaround_and_possessive():
    pat = r"(?<=\s)\w++|\w+(?=,)|\s+|[^\w\s]"
    text = "ab, cd ef,g"
    assert split(text, pat) == [p for p in regex.findall(pat, text) if p]


def test_names_and_aliases():
    assert resolve_pattern("cl100k_base") == (PATTERNS["cl100k"], "cl100k")
    assert resolve_pattern("r50k")[1] == "gpt2"
    assert set(toksmith.PATTERNS) == set(NAMES)


def test_bad_regex_reports_position():
    with pytest.raises(toksmith.PatternError, match="position"):
        split("x", r"abc(def")
    with pytest.raises(ValueError):
        toksmith.train_from_iterator(["x"], vocab_size=300, pattern=r"[a-")


def test_wrong_types():
    with pytest.raises(TypeError):
        split(b"bytes", "gpt2")
    with pytest.raises(TypeError):
        resolve_pattern(123)


def test_regex_engine_limit_is_a_clear_error():
    # fancy-regex saves one backtracking position per character of `\s+` before the look-ahead
    # (1M at most): a custom pattern fails on a longer run, with an error that says what to do;
    # the named patterns' scanners have no such limit (tiktoken panics here)
    text = "a" + " " * 1_100_000 + "x"
    custom = r"\s+(?!\S)|\s+|\S+"
    with pytest.raises(
        toksmith.PatternError, match=r"backtracking stack .* at byte 1 .*use a named pattern"
    ):
        toksmith.split(text, custom)
    tok = toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, custom)
    with pytest.raises(toksmith.PatternError, match="backtracking stack"):
        tok.encode_ordinary(text)
    assert toksmith.split(text, "cl100k") == ["a", " " * 1_099_999, " x"]
    shorter = text[:200_000] + "x"
    assert (
        toksmith.split(shorter, custom)
        == regex.findall(custom, shorter)
        == ["a", " " * 199_998, " ", "x"]
    )
