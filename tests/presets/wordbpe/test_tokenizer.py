"""The word-level ``</w>`` preset (seed 004): counting, training, greedy longest match, token
statistics, embeddings and the CSV pipeline, each checked against the pure-Python reference
(``reference.py``), the ``regex`` module and numpy."""

from __future__ import annotations

import csv
import doctest
import importlib
import json
import sys
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

import toksmith
from tests.conftest import DATA
from tests.reference import wordbpe as reference
from tests.unicode16 import characters_16
from toksmith import _core
from toksmith.presets import embeddings as emb
from toksmith.presets import wordbpe
from toksmith.presets.wordbpe import END_OF_WORD, UNK, WORD_PATTERN, WordTokenizer

CORPORA = DATA / "corpora"
ENGLISH = CORPORA / "english_slice.txt"
MERGES = 300
CPP = CORPORA / "cpp_slice.txt"


@pytest.fixture(scope="module")
def english_counts():
    return wordbpe.count_words(ENGLISH)


@pytest.fixture(scope="module")
def english(english_counts):
    return wordbpe.train_from_counts(english_counts, MERGES)


# ---- words -------------------------------------------------------------------------------------


def test_pattern_is_the_cores_and_uses_the_scanner():
    assert WORD_PATTERN == _core.WORDS_PATTERN
    assert _core.compile_pattern(WORD_PATTERN) == (WORD_PATTERN, True)


def test_camel_case_acronyms_digits_and_symbols():
    assert toksmith.split("XMLHttpRequest, iPhone2024 snake_case", WORD_PATTERN) == [
        "XML",
        "Http",
        "Request",
        ",",
        "i",
        "Phone",
        "2024",
        "snake",
        "_",
        "case",
    ]


# letters of every case class, marks, digits, whitespace (incl. \x1c and NBSP), symbols
WORD_TEXT = st.text(
    alphabet=st.sampled_from(
        list(
            "aZbYXé\u00c9\u01c5\u02b0\u4e2d\u0436\u0416\u0301\u0308019\u0663\u00b2 \t\n\r\x0b\x1c\x85\xa0\u3000"
            ".,_-!'\"/\u20ac\U0001f600"
        )
    ),
    max_size=40,
)


@given(WORD_TEXT)
def test_scanner_equals_the_regex_module(text):
    assert toksmith.split(text, WORD_PATTERN) == regex.findall(WORD_PATTERN, text)


@given(st.text(alphabet=characters_16, max_size=60))
def test_scanner_equals_the_regex_module_on_any_text(text):
    """Any text whose characters have the same classes in the scanner's Unicode 16 and the
    reference `regex` module's Unicode 17 (tests/unicode16.py)."""
    assert toksmith.split(text, WORD_PATTERN) == regex.findall(WORD_PATTERN, text)


def test_count_words_equals_the_reference_on_real_text(english_counts):
    text = ENGLISH.read_text(encoding="utf-8")
    assert english_counts == reference.count_words([text], WORD_PATTERN)
    # cased counts when asked
    cased = wordbpe.count_words([text], lowercase=False)
    assert cased == reference.count_words([text], WORD_PATTERN, lowercase=False)
    assert sum(cased.values()) == sum(english_counts.values())


def test_counting_a_file_in_blocks_equals_counting_it_whole(tmp_path, monkeypatch):
    text = ENGLISH.read_text(encoding="utf-8")
    big = tmp_path / "big.txt"
    big.write_text(text * 3, encoding="utf-8")
    monkeypatch.setattr(wordbpe, "_BLOCK", 4096)  # many blocks, cut after newlines
    got = wordbpe.count_words(big, threads=2)
    assert got == {w: 3 * n for w, n in reference.count_words([text], WORD_PATTERN).items()}


def test_folders_give_their_text_files(tmp_path):
    (tmp_path / "a.txt").write_text("Alpha beta", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.TXT").write_text("beta gamma", encoding="utf-8")
    (tmp_path / "c.py").write_text("delta", encoding="utf-8")
    (tmp_path / ".hidden.txt").write_text("hidden", encoding="utf-8")
    assert wordbpe.count_words(tmp_path) == {"alpha": 1, "beta": 2, "gamma": 1}
    assert wordbpe.count_words(tmp_path, extensions=None) == {
        "alpha": 1,
        "beta": 2,
        "gamma": 1,
        "delta": 1,
    }
    assert wordbpe.count_words([tmp_path / "c.py", str(tmp_path / "a.txt")]) == {
        "delta": 1,
        "alpha": 1,
        "beta": 1,
    }


def test_bad_utf8_names_the_file_or_is_replaced(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"good words \xff\xfe more")
    with pytest.raises(toksmith.CorpusDecodeError, match='bad.txt.*errors="replace"'):
        wordbpe.count_words(bad)
    assert wordbpe.count_words(bad, errors="replace") == {
        "good": 1,
        "words": 1,
        "\ufffd": 2,
        "more": 1,
    }


def test_counting_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        wordbpe.count_words(tmp_path / "missing.txt")
    with pytest.raises(TypeError, match="not bytes"):
        wordbpe.count_words(b"text")
    with pytest.raises(TypeError, match="text must be str"):
        wordbpe.count_words(["ok", 3])
    with pytest.raises(ValueError, match="threads"):
        wordbpe.count_words(["ok"], threads=0)


# ---- training ----------------------------------------------------------------------------------


def test_merges_and_vocabulary_equal_the_reference(english_counts, english):
    tokens, merges = reference.train(english_counts, MERGES)
    assert english.merges == merges
    assert english.tokens == [UNK] + tokens
    assert english.special_tokens == {UNK: 0}
    assert len(english.merges) == MERGES


def test_merges_equal_the_reference_on_non_ascii_words():
    counts = reference.count_words(
        [
            "Привет мир, привет всем! Grüße, Größe, grüßen. 中文字 中文 ΟΔΟΣ όδος " * 3,
            "naïve café CAFÉ résumé",
        ],
        WORD_PATTERN,
    )
    tok = wordbpe.train_from_counts(counts, 40)
    tokens, merges = reference.train(counts, 40)
    assert tok.merges == merges and tok.tokens == [UNK] + tokens


def test_atomic_words_are_tokens_of_their_own(english, english_counts):
    # one-character words (punctuation, "a", digits) are `x</w>` tokens right after the specials
    atomic = sorted(w + END_OF_WORD for w in english_counts if len(w) == 1)
    assert ".</w>" in atomic and "a</w>" in atomic
    assert english.tokens[1 : 1 + len(atomic)] == atomic
    assert english.tokenize("a . !") == ["a</w>", ".</w>", "!</w>"]


def test_min_frequency_stops_early(english_counts, english):
    # the same merges up to where the most frequent pair left is rarer than the limit
    # (the limit itself is the merge loop's, tested on the byte level in the core)
    sizes = []
    for limit in (60, 100, 200):
        tok = wordbpe.train_from_counts(english_counts, MERGES, min_frequency=limit)
        assert tok.merges == english.merges[: len(tok.merges)]
        sizes.append(len(tok.merges))
    assert MERGES > sizes[0] > sizes[1] > sizes[2] > 0


def test_train_reads_files_and_texts_alike():
    text = ENGLISH.read_text(encoding="utf-8")
    a = wordbpe.train(ENGLISH, 200)
    b = wordbpe.train([text], 200)
    assert a.tokens == b.tokens and a.merges == b.merges


def test_training_errors():
    with pytest.raises(toksmith.EmptyCorpusError):
        wordbpe.train_from_counts({}, 10)
    with pytest.raises(toksmith.EmptyCorpusError):
        wordbpe.train(["   \n\t "], 10)
    with pytest.raises(ValueError, match="num_merges"):
        wordbpe.train_from_counts({"ab": 1}, -1)
    with pytest.raises(ValueError, match="count of 'ab'"):
        wordbpe.train_from_counts({"ab": -1}, 5)
    with pytest.raises(TypeError, match="words must be str"):
        wordbpe.train_from_counts({b"ab": 1}, 5)
    # only one-character words: no merges, the atomic tokens and </w> (which every word ends in)
    tok = wordbpe.train_from_counts({"a": 3, ".": 2}, 5)
    assert tok.tokens == [UNK, ".</w>", "a</w>", END_OF_WORD]


# ---- encoding ----------------------------------------------------------------------------------


def test_encode_equals_the_seeds_split_word_on_real_text(english):
    text = CPP.read_text(encoding="utf-8")[:12000]  # unseen text: unknown characters included
    ids = english.encode(text)
    matcher = reference.GreedyMatcher(english.tokens[1:])
    expected = [t for w in regex.findall(WORD_PATTERN, text) for t in matcher.split_word(w.lower())]
    assert [english.tokens[i] for i in ids] == expected


@given(WORD_TEXT)
def test_encode_equals_the_reference_on_random_text(text):
    tok = _small()
    matcher = reference.GreedyMatcher(tok.tokens[1:])
    expected = [t for w in regex.findall(WORD_PATTERN, text) for t in matcher.split_word(w.lower())]
    assert tok.tokenize(text) == expected


_SMALL = []


def _small() -> WordTokenizer:
    if not _SMALL:
        counts = reference.count_words(
            [
                "Zebra zebras ZZ yak x\u00e9\u00e9 \u0436\u0436\u0436 \u4e2d\u4e2d 1901 2019 "
                "a\u0301a\u0301 " * 4 + "bay aye yay!"
            ],
            WORD_PATTERN,
        )
        _SMALL.append(wordbpe.train_from_counts(counts, 25))
    return _SMALL[0]


@given(
    st.lists(
        st.sampled_from(
            ["zebra", "Zebras", "yak", "XÉé", "жж", "中", "1901", "!", "aye", "a\u0301"]
        ),
        max_size=12,
    ),
    st.sampled_from([" ", "\n", "  \t"]),
)
def test_decode_of_encode_is_the_normalized_text(words, sep):
    tok = _small()
    text = sep.join(words)
    assert (
        tok.decode(tok.encode(text))
        == tok.normalize(text)
        == " ".join(w.lower() for w in regex.findall(WORD_PATTERN, text))
    )


def test_unknown_characters_become_unk(english):
    ids = english.encode("caf\u00e9 \U0001f600")
    assert english.unk_id in ids
    assert english.decode(ids).split(" ")[-1] == UNK


def test_batch_and_word_apis(english):
    texts = [ENGLISH.read_text(encoding="utf-8")[i : i + 3000] for i in range(0, 30000, 3000)]
    assert english.encode_batch(texts) == [english.encode(t) for t in texts]
    assert english.encode_batch(texts, threads=1) == [english.encode(t) for t in texts]
    assert english.encode_word("The") == english.encode("the")
    assert english.encode_word("") == []
    assert english.words("HelloWorld, 42") == ["hello", "world", ",", "42"]
    with pytest.raises(TypeError, match="wrap it in a list"):
        english.encode_batch("one text")
    with pytest.raises(TypeError, match="text must be str"):
        english.encode(b"bytes")


def test_a_megabyte_word_is_encoded(english):
    ids = english.encode("ab" * 500_000)
    assert english.decode(ids) == "ab" * 500_000


def test_lowercase_false_keeps_case():
    counts = wordbpe.count_words(["Hello hello HELLO"], lowercase=False)
    assert counts == {"Hello": 1, "hello": 1, "HELLO": 1}
    tok = wordbpe.train_from_counts(counts, 30, lowercase=False)
    assert tok.decode(tok.encode("Hello HELLO")) == "Hello HELLO"


def test_vocabulary_accessors(english):
    v = english.get_vocab()
    assert len(v) == english.n_vocab == english.vocab_size == len(english.tokens)
    assert english.token_to_id("the</w>") == v["the</w>"]
    assert english.id_to_token(v["the</w>"]) == "the</w>"
    by_len = english.vocab_by_length()
    lengths = [len(t) - 3 if t.endswith(END_OF_WORD) else len(t) for t in by_len]
    assert lengths == sorted(lengths, reverse=True) and UNK not in by_len
    with pytest.raises(ValueError, match="out of range"):
        english.decode([english.n_vocab])
    with pytest.raises(ValueError, match="out of range"):
        english.decode([-1])
    with pytest.raises(TypeError, match="must be int"):
        english.decode(["x"])


# ---- statistics, embeddings, files ---------------------------------------------------------------


def test_token_stats_equal_encoding_every_word(english, english_counts):
    expected = Counter()
    for w, n in english_counts.items():
        for i in english.encode_word(w):
            expected[english.tokens[i]] += n
    stats = english.token_stats(english_counts)
    assert dict(stats) == dict(expected)
    assert [c for _, c in stats] == sorted((c for _, c in stats), reverse=True)
    # the corpus encoded has as many tokens as the statistics count
    assert sum(c for _, c in stats) == len(english.encode(ENGLISH.read_text(encoding="utf-8")))


def test_embeddings_every_backend_equals_the_formula(english):
    toks = english.tokens
    ref = np.array(emb.embed_reference(toks[:300], 24, seed=7), dtype=np.float32)
    cpu = english.embeddings(24, seed=7)
    assert cpu.shape == (english.n_vocab, 24) and cpu.dtype == np.float32
    assert np.array_equal(cpu[:300], ref)
    assert np.array_equal(english.embeddings(24, seed=7, backend="numpy"), cpu)
    assert np.allclose((cpu.astype(np.float64) ** 2).sum(axis=1), 1.0, atol=1e-5)
    assert not np.array_equal(english.embeddings(24, seed=8), cpu)
    assert len({row.tobytes() for row in cpu}) == english.n_vocab
    for t in toks[:50]:
        assert emb.token_seed(t, 7) == _core.word_token_seed(t.encode(), 7)
    # SplitMix64's published first outputs from state 0
    assert emb.splitmix64(0) == 0xE220A8397B1DCDAF
    assert emb.splitmix64(emb.GOLDEN) == 0x6E789E6AA1B965F4


def test_embedding_argument_errors(english, monkeypatch):
    with pytest.raises(ValueError, match="dim must be >= 1"):
        english.embeddings(0)
    with pytest.raises(ValueError, match="backend must be one of"):
        english.embeddings(8, backend="opencl")
    with pytest.raises(ValueError, match="seed"):
        english.embeddings(8, seed=-1)
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(ImportError, match="pip install torch"):
        english.embeddings(8, backend="torch")
    with pytest.raises(ImportError, match="pip install cupy"):
        english.embeddings(8, backend="cupy")


def test_save_and_load(tmp_path, english):
    p = tmp_path / "tok.json"
    english.save(p)
    back = WordTokenizer.load(p)
    assert back.tokens == english.tokens and back.merges == english.merges
    text = ENGLISH.read_text(encoding="utf-8")[:5000]
    assert back.encode(text) == english.encode(text)
    (tmp_path / "other.json").write_text(json.dumps({"format": "x"}))
    with pytest.raises(ValueError, match="not a toksmith-wordbpe file"):
        wordbpe.load(tmp_path / "other.json")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(ValueError, match="not a JSON file"):
        wordbpe.load(tmp_path / "broken.json")
    d = english.to_dict()
    d["tokens"] = d["tokens"] + [d["tokens"][5]]
    (tmp_path / "dup.json").write_text(json.dumps(d))
    with pytest.raises(ValueError, match="twice"):
        wordbpe.load(tmp_path / "dup.json")


def test_run_writes_the_seeds_outputs(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    text = ENGLISH.read_text(encoding="utf-8")
    (corpus / "one.txt").write_text(text[:60000], encoding="utf-8")
    (corpus / "two.txt").write_text(text[60000:], encoding="utf-8")
    out = wordbpe.run(corpus, tmp_path / "out", num_merges=300, dim=16, seed=3, prefix="eng")
    files = out["files"]
    assert sorted(Path(p).name for p in files.values()) == [
        "eng_final_embeddings.csv",
        "eng_final_token_stats.csv",
        "eng_tokenizer.json",
        "eng_unique_initial_tokens.csv",
    ]
    tok = out["tokenizer"]
    with open(files["unique_initial_tokens"], newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["word", "count"]
    assert {w: int(n) for w, n in rows[1:]} == reference.count_words([text], WORD_PATTERN)
    with open(files["final_token_stats"], newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["token", "count"] and [(t, int(n)) for t, n in rows[1:]] == tok.token_stats(
        out["word_counts"]
    )
    with open(files["final_embeddings"], newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["token"] + [f"e{i}" for i in range(16)]
    assert [r[0] for r in rows[1:]] == tok.tokens
    got = np.array([[float(x) for x in r[1:]] for r in rows[1:]], dtype=np.float32)
    assert np.array_equal(got, tok.embeddings(16, seed=3))  # 9 digits read back the same float32
    assert wordbpe.load(files["tokenizer"]).tokens == tok.tokens
    # the numpy backend writes the same file
    out2 = wordbpe.run(
        corpus, tmp_path / "out2", num_merges=300, dim=16, seed=3, prefix="eng", backend="numpy"
    )
    assert (
        Path(out2["files"]["final_embeddings"]).read_bytes()
        == Path(files["final_embeddings"]).read_bytes()
    )


def test_doctests():
    for name in ("toksmith.presets.wordbpe", "toksmith.presets.embeddings"):
        module = importlib.import_module(name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, name


def test_command_line_run_and_encode(tmp_path, capsys):
    from toksmith.cli import main

    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.txt").write_text(ENGLISH.read_text(encoding="utf-8"), encoding="utf-8")
    assert (
        main(
            [
                "wordbpe",
                "run",
                str(corpus),
                "--out",
                str(tmp_path / "o"),
                "--merges",
                "200",
                "--dim",
                "8",
                "--no-progress",
                "--prefix",
                "x",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out.split()
    assert sorted(Path(p).name for p in printed) == [
        "x_final_embeddings.csv",
        "x_final_token_stats.csv",
        "x_tokenizer.json",
        "x_unique_initial_tokens.csv",
    ]
    tok_file = str(tmp_path / "o" / "x_tokenizer.json")
    tok = wordbpe.load(tok_file)
    assert main(["wordbpe", "encode", "--tokens", tok_file, "The", "quickBrown fox."]) == 0
    assert capsys.readouterr().out.split() == tok.tokenize("The quickBrown fox.")
    assert main(["wordbpe", "encode", tok_file, "the end"]) == 0
    assert [int(x) for x in capsys.readouterr().out.split()] == tok.encode("the end")
    assert main(["wordbpe", "run", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 1
    assert "no such file or folder" in capsys.readouterr().err


def test_pickles_for_multiprocessing(english):
    import pickle

    back = pickle.loads(pickle.dumps(english))
    text = ENGLISH.read_text(encoding="utf-8")[:3000]
    assert back.tokens == english.tokens and back.merges == english.merges
    assert back.encode(text) == english.encode(text)


def test_byte_level_loaders_name_the_preset(tmp_path, english):
    p = tmp_path / "w.json"
    english.save(p)
    with pytest.raises(ValueError, match="toksmith.presets.wordbpe.load"):
        toksmith.load_any(p)


def test_bad_files_and_options_are_value_errors(tmp_path, english):
    d = english.to_dict()
    d["tokens"] = 5
    (tmp_path / "bad.json").write_text(json.dumps(d))
    with pytest.raises(ValueError, match="not a valid toksmith-wordbpe file"):
        wordbpe.load(tmp_path / "bad.json")
    with pytest.raises(ValueError, match="errors must be"):
        wordbpe.count_words(ENGLISH, errors="ignore")
