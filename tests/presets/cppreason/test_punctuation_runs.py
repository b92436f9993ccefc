"""CppReason's punctuation runs and whole-word learned part (issue 33): a run of punctuation
such as `();` is one learned word (the fixed operators and a line-initial diff marker stay
apart), the learned part encodes each word whole, and tokenizers trained before either
(no `cppreason_words` in their metadata, o200k's split) keep their ids."""

from __future__ import annotations

import pickle
import warnings

import pytest
import regex

from tests.conftest import DATA
from toksmith.presets import cppreason
from toksmith.presets.cppreason import (
    DIFF_ADD,
    DIFF_DEL,
    FIRST_LEARNED,
    FIXED_IDS,
    LEGACY_PATTERN,
    PATTERN,
    WORD_MARK,
    WORDS_KEY,
    CppTokenizer,
)

CPP = DATA / "corpora" / "cpp_slice.txt"
TEXT = CPP.read_text(encoding="utf-8")


def _train(**kw) -> CppTokenizer:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cppreason.train([TEXT[:60000]], vocab_size=2600, **kw)


@pytest.fixture(scope="module")
def runs() -> CppTokenizer:
    return _train()


@pytest.fixture(scope="module")
def single() -> CppTokenizer:
    return _train(punctuation_runs=False)


@pytest.mark.parametrize(
    "text, words",
    [
        ("f();", ["f", "();"]),
        ("if (x){", ["if", "(", "x", "){"]),
        ("if (x) {", ["if", "(", "x", ")", "{"]),  # a space ends a run
        ("a)->b", ["a", ")", "->", "b"]),  # the fixed operators cut a run
        ("x = (*p)[0];", ["x", "=", "(*", "p", ")[", "0", "];"]),
        ("#define F(x) (#x)", ["#define", "F", "(", "x", ")", "(", "#x", ")"]),
        ("});\n", ["});", "\n"]),
        ("@@ -1 +1 @@", ["@@", "-", "1", "+", "1", "@@"]),
        ("(\"a\", 'b')", ["(", '"a"', ",", "'b'", ")"]),  # quotes start literals, not runs
        ("a::b();", ["a", "::", "b", "();"]),
        ("x;;\n+(void)y;\n-{", ["x", ";;", "\n", "+", "(", "void", ")", "y", ";", "\n", "-", "{"]),
    ],
)
def test_runs_are_words(runs, text, words):
    assert runs.words(text) == words
    assert regex.findall(PATTERN, text) == words


def test_line_initial_diff_markers_stay_fixed_before_punctuation(runs):
    ids = runs.encode("+(void)x;\n-{}\n x-(y);")
    assert ids[:2] == [DIFF_ADD, FIXED_IDS["("]]
    at = ids.index(DIFF_DEL)
    assert ids[at - 1] == 1536 and ids[at + 1] >= FIRST_LEARNED  # `{}` is a learned run
    assert ids.count(DIFF_ADD) == 1 and ids.count(DIFF_DEL) == 1  # `x-(y)`: no marker


def test_fixed_words_keep_their_ids(runs):
    # a run that is a fixed word is that fixed id: single punctuation, operators
    for w in ("(", ")", ";", "{", "::", "->", "...", "<<=", "@@"):
        assert runs.encode("x " + w + " y")[len(runs.encode("x"))] == FIXED_IDS[w]
    assert runs.encode("std::vector<int>") == [320, 120, 335, 226, 38, 227]


def test_runs_and_whole_words_cost_fewer_tokens(runs, single):
    held = TEXT[60000:120000]
    n_runs, n_single = len(runs.encode(held)), len(single.encode(held))
    assert n_runs < 0.99 * n_single  # (at 744 merges; 6% fewer at 32768, benches/perf_notes.md)
    punct = sum(1 for i in runs.encode(held) if 220 <= i < 320)
    assert punct < sum(1 for i in single.encode(held) if 220 <= i < 320)
    # whole words: merges cross `_` (an o200k split would cut `▁__first` after `▁__`)
    assert any(
        b"_" in t[1:-1] and t[:1].isalpha()
        for t in (runs.tokenizer.decode_bytes([i]) for i in range(FIRST_LEARNED, runs.vocab_size))
    )
    assert runs.tokenizer.pattern == cppreason.INNER_PATTERN


def test_both_splits_round_trip_ids(runs, single):
    for tok in (runs, single):
        for i in range(0, 60000, 6000):
            part = TEXT[i : i + 6000]
            ids = tok.encode(part)
            assert tok.encode(tok.decode(ids)) == ids
            assert tok.encode_ordinary_batch([part, part[:100]]) == [ids, tok.encode(part[:100])]


def test_the_split_is_kept_in_files_and_pickles(runs, single, tmp_path):
    assert runs.tokenizer.metadata[WORDS_KEY] == "runs"
    assert WORDS_KEY not in single.tokenizer.metadata
    for tok, name in ((runs, "r.json"), (single, "s.json")):
        tok.save(tmp_path / name)
        for again in (cppreason.load(tmp_path / name), pickle.loads(pickle.dumps(tok))):
            assert again.words("f();") == tok.words("f();")
            assert again.encode(TEXT[:5000]) == tok.encode(TEXT[:5000])
    assert single.words("f();") == ["f", "(", ")", ";"]


def test_a_tokenizer_trained_before_keeps_its_ids(monkeypatch):
    """As before issue 33: single punctuation words and o200k's split of the learned words (a
    file without the metadata key)."""
    monkeypatch.setattr(cppreason, "INNER_PATTERN", "o200k")
    old = _train(punctuation_runs=False)
    assert old.tokenizer.pattern != cppreason._core.WHOLE_PATTERN
    text = TEXT[60000:70000]
    expected = []
    for m in regex.finditer(LEGACY_PATTERN, text):
        w = m.group()
        directive = "#" + w[1:].lstrip(" \t")
        if w[0] in "\r\n":
            expected.append(1537 if w.count("\n") == 2 else 1536)
        elif w in ("+", "-") and (m.start() == 0 or text[m.start() - 1] == "\n"):
            expected.append(DIFF_ADD if w == "+" else DIFF_DEL)
        elif w in FIXED_IDS:
            expected.append(FIXED_IDS[w])
        elif w[0] == "#" and directive in FIXED_IDS:
            expected.append(FIXED_IDS[directive])
        else:
            for p in w.split():
                expected.extend(
                    [FIXED_IDS[p]]
                    if p in FIXED_IDS
                    else old.tokenizer.encode_ordinary(WORD_MARK + p)
                )
    assert old.encode(text) == expected


def test_punctuation_runs_must_be_a_bool():
    with pytest.raises(TypeError, match="punctuation_runs must be True or False"):
        cppreason.train(["int x;"], vocab_size=1900, punctuation_runs=1)
