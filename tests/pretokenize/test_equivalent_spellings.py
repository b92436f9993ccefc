"""Open models' spellings of named patterns run on the named scanners, and split exactly as
``regex.findall`` does with the model's own spelling (issue 30).

Llama 3 (Meta's ``tokenizer.py``, Hugging Face's ``tokenizer.json``), OLMo 2 and every
vocabulary ``transformers`` converts from tiktoken spell cl100k's pattern as tiktoken first did:
it is rustbpe's default (cl100k without ``\\s++$``). Qwen 1 / 2 / 2.5 / 3 take the same with
one digit per piece. A spelling that differs in anything stays on the regex engine."""

import json

import pytest
import regex
from hypothesis import given

import toksmith
from tests.conftest import DATA
from tests.strategies import any_text, long_ascii_text, mixed_text, tricky_text
from toksmith import _core
from toksmith._regex import covering
from toksmith.files import tiktoken as tt
from toksmith.pretokenize import PATTERNS, RUSTBPE_GPT4_PATTERN, split

#: the spellings, and the pattern of the scanner each runs on
SPELLINGS = {
    "llama3": (tt.LLAMA3_PATTERN, RUSTBPE_GPT4_PATTERN),
    "qwen": (tt.QWEN1_PATTERN, None),
}
COMPILED = {k: regex.compile(p) for k, (p, _) in SPELLINGS.items()}
CORPORA = sorted((DATA / "corpora").glob("*_slice.txt")) + [
    DATA / "bench" / "multilingual_sample.txt"
]


def check(key, text):
    pattern = SPELLINGS[key][0]
    want = COMPILED[key].findall(text)
    assert split(text, pattern) == want, (key, text)
    # the regex engine the spelling ran on before reads it alike: no file's ids change
    assert split(text, pattern, engine="regex") == want, (key, text)


@pytest.mark.parametrize("key", SPELLINGS)
def test_the_spellings_run_on_a_scanner(key):
    pattern, _ = SPELLINGS[key]
    regex_text, fast = _core.compile_pattern(pattern)
    assert fast and regex_text == pattern  # the text is kept as the file spells it
    assert toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, pattern).pattern == (
        pattern
    )


def test_hugging_face_files_spell_them_alike():
    """What transformers' tiktoken converter writes by default is Llama 3's spelling."""
    transformers = pytest.importorskip("transformers.convert_slow_tokenizer")
    default = transformers.TikTokenConverter.__init__.__defaults__[1]
    assert default == tt.LLAMA3_PATTERN


@pytest.mark.parametrize("path", CORPORA, ids=lambda p: p.name)
@pytest.mark.parametrize("key", SPELLINGS)
def test_real_text_splits_as_regex(key, path):
    text = path.read_text(encoding="utf-8")
    check(key, text)
    for line in text.splitlines(keepends=True)[:300]:  # whole text above; lines: the ends
        check(key, line)


@pytest.mark.parametrize("key", SPELLINGS)
@given(text=mixed_text)
def test_mixed_text_splits_as_regex(key, text):
    check(key, text)


@pytest.mark.parametrize("key", SPELLINGS)
@given(text=any_text)
def test_any_text_splits_as_regex(key, text):
    check(key, text)


@pytest.mark.parametrize("key", SPELLINGS)
@given(text=long_ascii_text)
def test_long_ascii_text_splits_as_regex(key, text):
    """Long mostly-ASCII text goes through the 64-byte block scanners."""
    check(key, text)


@pytest.mark.parametrize("key", SPELLINGS)
@given(text=tricky_text)
def test_tricky_text_splits_as_regex(key, text):
    check(key, text)


def test_llama3_is_cl100k_without_the_end_anchor():
    """Llama 3's spelling is rustbpe's default, not tiktoken's current cl100k: at the end of a
    text a whitespace run holding a newline is one piece to cl100k and two to Llama 3."""
    text = "a\n  "
    assert regex.findall(tt.LLAMA3_PATTERN, text) == ["a", "\n", "  "]
    assert split(text, tt.LLAMA3_PATTERN) == split(text, RUSTBPE_GPT4_PATTERN)
    assert split(text, "cl100k") == ["a", "\n  "]
    assert split("x 2024", tt.QWEN1_PATTERN) == ["x", " ", "2", "0", "2", "4"]


@pytest.mark.parametrize(
    "pattern",
    [
        tt.LLAMA3_PATTERN.replace("{1,3}", "{1,2}"),
        tt.LLAMA3_PATTERN.replace("|\\s+(?!\\S)", ""),
        tt.LLAMA3_PATTERN.replace("(?i:", "(?:"),
        tt.LLAMA3_PATTERN + "|x",
        tt.QWEN1_PATTERN.replace("\\p{N}|", "\\p{N}+|"),
        tt.LLAMA3_PATTERN.replace("[\\r\\n]*", "[\\r\\n/]*"),
    ],
)
def test_a_spelling_that_differs_stays_on_the_regex_engine(pattern):
    assert not _core.compile_pattern(pattern)[1]
    for text in ("I'LL 12345 x/\n\n a\n  ", "Hello, world!  \r\n  "):
        assert split(text, pattern) == regex.findall(pattern, text)


def test_the_named_patterns_are_unchanged():
    for name, pattern in PATTERNS.items():
        assert _core.compile_pattern(pattern) == (pattern, True)
        assert _core.compile_pattern(name) == (pattern, True)


@pytest.mark.parametrize("key", SPELLINGS)
def test_an_isolated_split_of_a_spelling_keeps_its_scanner(key):
    """Hugging Face's Split(pattern, "Isolated") also keeps the text between matches; these
    patterns match at every character, so the file's pattern is the spelling itself (and runs
    on its scanner), as transformers' converted files (Llama 3, Qwen 2) write it."""
    pattern = SPELLINGS[key][0]
    assert covering(pattern) == pattern
    for name, named in PATTERNS.items():
        assert covering(named) == named
        assert covering(name) != name  # a bare word is a regex there, not a name
    words = _core.WORDS_PATTERN  # drops whitespace: the gaps must be matched too
    assert covering(words) != words
    ranks = {bytes([b]): b for b in range(256)}
    doc = json.loads(
        json.dumps(
            toksmith.files.huggingface.huggingface_json(
                toksmith.Tokenizer.from_ranks(ranks, pattern)
            )
        )
    )
    doc["pre_tokenizer"]["pretokenizers"][0].update(
        {"pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}
    )
    tok = toksmith.from_huggingface(doc)
    assert tok.pattern == pattern
    assert _core.compile_pattern(tok.pattern)[1]
