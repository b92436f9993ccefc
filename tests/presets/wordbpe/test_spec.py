"""Spec compliance of the word-level ``</w>`` preset (seed 004, "Tokeniser"): each test names
the section of the seed it checks; defect tests say what the code did before ("was: ...")."""

from __future__ import annotations

import csv
import sys
import types

import numpy as np
import pytest

import toksmith
from tests.reference import wordbpe as reference
from toksmith.presets import embeddings as emb
from toksmith.presets import wordbpe
from toksmith.presets.wordbpe import END_OF_WORD, UNK


def _read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


# ---- words: pre-splitting and lower-casing -------------------------------------------------------


@pytest.mark.parametrize(
    "text, words",
    [
        ("camelCase", ["camel", "case"]),  # the seed's own example
        ("parseHTTPResponse", ["parse", "http", "response"]),
        ("XMLHttpRequest", ["xml", "http", "request"]),
        ("getID3Tag", ["get", "id", "3", "tag"]),
        ("abc123def 2024", ["abc", "123", "def", "2024"]),
        ("snake_case_name", ["snake", "_", "case", "_", "name"]),
        ("ÉcoleNormale straße naïve", ["école", "normale", "straße", "naïve"]),
        ("ΟΔΟΣ Привет", ["οδος", "привет"]),
        ("don't stop!", ["don", "'", "t", "stop", "!"]),
        ("a\u0301b\tX\r\nY", ["a\u0301b", "x", "y"]),
    ],
)
def test_words_are_pre_split_at_camel_case_steps_and_lower_cased(text, words):
    # seed, Features "Advanced Pre-processing" and Multi-threaded Corpus Processing step 2
    # ("splitting words (camelCase -> camel, Case), converting to lowercase")
    tok = wordbpe.train_from_counts({"ab": 1}, 0)
    assert tok.words(text) == words
    assert wordbpe.count_words([text]) == dict(__import__("collections").Counter(words))
    # lower-casing is the default and can be turned off
    assert wordbpe.count_words(["parseHTTPResponse"], lowercase=False) == {
        "parse": 1,
        "HTTP": 1,
        "Response": 1,
    }


# ---- counting over a folder ----------------------------------------------------------------------


def test_counting_reads_the_text_files_of_a_folder_in_parallel(tmp_path):
    # seed, buildCorpusWordCounts: "Scans the input directory for all text files", producers and
    # consumers with local maps merged pairwise: the counts do not depend on the thread count
    (tmp_path / "a.txt").write_text("Hello world\r\nhello\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.TXT").write_text("world WORLD", encoding="utf-8")
    (tmp_path / "notes.md").write_text("markdown", encoding="utf-8")
    assert wordbpe.count_words(tmp_path) == {"hello": 2, "world": 3}
    assert wordbpe.count_words(tmp_path, threads=1) == wordbpe.count_words(tmp_path, threads=4)
    assert wordbpe.count_words(tmp_path, extensions=None)["markdown"] == 1
    lines = [f"w{i % 97} Word{i % 13}" for i in range(5000)]
    (tmp_path / "big.txt").write_text("\n".join(lines), encoding="utf-8")
    assert wordbpe.count_words(tmp_path, threads=3) == reference.count_words(
        ["Hello world\nhello", "world WORLD", "\n".join(lines)], wordbpe.WORD_PATTERN
    )


def test_a_byte_order_mark_is_not_counted_as_a_word(tmp_path):
    # was: a file saved with a UTF-8 BOM counted the word '\ufeff'
    (tmp_path / "bom.txt").write_bytes("\ufeffHello world\n".encode("utf-8"))
    assert wordbpe.count_words(tmp_path) == {"hello": 1, "world": 1}
    tok = wordbpe.train(tmp_path, 10)
    assert "\ufeff" not in "".join(tok.tokens)


def test_files_must_be_utf8_or_read_with_replacement(tmp_path):
    # seed, Data Aggregation: text files; toksmith reads them as UTF-8 (module docstring)
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 ok\n".encode("latin-1"))
    with pytest.raises(toksmith.CorpusDecodeError, match="latin1.txt"):
        wordbpe.count_words(tmp_path)
    # U+FFFD is a symbol: a word of its own
    assert wordbpe.count_words(tmp_path, errors="replace") == {"caf": 1, "\ufffd": 1, "ok": 1}


# ---- BPE training ---------------------------------------------------------------------------------


def test_training_follows_the_seeds_merge_loop():
    # seed, "How BPE Works" and groupCommonTokens stages 1-4: atomic one-character words, each
    # other word spelled as characters + </w>, the most frequent pair merged num_merges times
    counts = {"test": 5, "less": 4, "address": 3, "a": 2, ",": 7}
    tok = wordbpe.train_from_counts(counts, 3)
    tokens, merges = reference.train(counts, 3)
    # (e, s) occurs 5 + 4 + 3 times; then (s, </w>) and (es, s) both 7 times: s was made first
    assert tok.merges == merges == [("e", "s"), ("s", END_OF_WORD), ("es", "s</w>")]
    assert tok.tokens == [UNK] + tokens
    # the vocabulary: specials, atomic tokens, characters, </w>, then the merged tokens
    assert tok.tokens == [
        UNK,
        ",</w>",
        "a</w>",
        "a",
        "d",
        "e",
        "l",
        "r",
        "s",
        "t",
        END_OF_WORD,
        "es",
        "s</w>",
        "ess</w>",
    ]
    # a merged pair is never chosen again; training stops when no pair is left
    full = wordbpe.train_from_counts(counts, 1000)
    assert len(set(full.merges)) == len(full.merges)
    assert {"test</w>", "less</w>", "address</w>"} <= set(full.tokens)
    assert full.merges == reference.train(counts, 1000)[1]


def test_equal_pair_counts_are_broken_by_symbol_order():
    # the seed does not say how ties are broken; toksmith merges the pair whose symbols come
    # first (characters by code point, then </w>, then merged tokens): deterministic
    tok = wordbpe.train_from_counts({"cd": 1, "ab": 1}, 1)
    assert tok.merges == [("a", "b")]
    # four pairs twice each: (a, b) < (a, </w>) < (b, a) < (b, </w>); then b comes before ab
    assert wordbpe.train_from_counts({"ba": 2, "ab": 2}, 3).merges == [
        ("a", "b"),
        ("a", END_OF_WORD),
        ("b", "a</w>"),
    ]


def test_a_corpus_of_one_character_words_has_the_end_of_word_token():
    # was: no </w> token, so every other word ended in an <unk> standing for no character and
    # decode ran the words together ('<unk><unk><unk><unk>a' for "b c a")
    tok = wordbpe.train_from_counts({"a": 5, "i": 3, ".": 2}, 10)
    assert tok.tokens == [UNK, ".</w>", "a</w>", "i</w>", END_OF_WORD]
    assert tok.tokenize("b c a") == [UNK, END_OF_WORD, UNK, END_OF_WORD, "a</w>"]
    assert tok.decode(tok.encode("b c a")) == "<unk> <unk> a"
    assert tok.tokenize("a i .") == ["a</w>", "i</w>", ".</w>"]


# ---- greedy longest-match inference ----------------------------------------------------------------


def test_greedy_longest_match_takes_the_longest_token_first():
    # seed, "Inference on New Text": the vocabulary sorted longest first, "test" matched before "t"
    tok = wordbpe.WordTokenizer([UNK, "t", "e", "s", "tes", "test", "ing</w>", END_OF_WORD])
    by_length = tok.vocab_by_length()
    assert by_length[:3] == ["test", "ing</w>", "tes"]  # </w> counts as one character; ties by id
    assert tok.tokenize("testing") == ["test", "ing</w>"]
    assert tok.tokenize("tests") == ["test", "s", END_OF_WORD]
    assert tok.tokenize("testx") == ["test", UNK, END_OF_WORD]
    matcher = reference.GreedyMatcher(tok.tokens[1:])
    for word in ("testing", "tester", "test", "set", "t", "zz", "ing", "sing"):
        assert tok.tokenize(word) == matcher.split_word(word)


def test_single_character_words_and_unknown_pieces():
    # seed, Stage 1: single-character words are atomic tokens; a character of a word that no
    # token starts with becomes <unk> (module docstring), the word still ends with </w>
    tok = wordbpe.train_from_counts({"ab": 4, "b": 1}, 2)
    assert tok.tokenize("b") == ["b</w>"]  # the atomic token
    assert tok.tokenize("a") == ["a", END_OF_WORD]  # a character of a longer word
    assert tok.tokenize("q") == [UNK, END_OF_WORD]
    assert tok.tokenize("aqb") == ["a", UNK, "b</w>"]
    assert tok.decode(tok.encode("aqb ab")) == "a<unk>b ab"


# ---- statistics and embeddings CSV -----------------------------------------------------------------


def test_run_writes_the_three_csv_files_in_order(tmp_path):
    # seed, main.cpp steps 2, 4, 5: _unique_initial_tokens.csv, _final_token_stats.csv (sorted),
    # _final_embeddings.csv (one row of d numbers per token)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.txt").write_text(
        'He said "hi, there", then: hi hi.\nparseHTTP\n', encoding="utf-8"
    )
    out = wordbpe.run(tmp_path / "c", tmp_path / "o", num_merges=30, dim=5, seed=7, sample=None)
    files, tok = out["files"], out["tokenizer"]
    rows = _read_csv(files["unique_initial_tokens"])
    assert rows[0] == ["word", "count"]
    got = [(w, int(n)) for w, n in rows[1:]]
    assert got == sorted(out["word_counts"].items(), key=lambda p: (-p[1], p[0]))
    assert (
        got[0] == ("hi", 3) and ('"', 2) in got and (",", 2) in got
    )  # quotes and commas read back
    rows = _read_csv(files["final_token_stats"])
    assert rows[0] == ["token", "count"]
    stats = [(t, int(n)) for t, n in rows[1:]]
    assert stats == tok.token_stats(out["word_counts"])
    assert [n for _, n in stats] == sorted((n for _, n in stats), reverse=True)
    rows = _read_csv(files["final_embeddings"])
    assert rows[0] == ["token", "e0", "e1", "e2", "e3", "e4"]
    assert [r[0] for r in rows[1:]] == tok.tokens  # id order
    assert all(len(r) == 6 for r in rows)
    got = np.array([[float(x) for x in r[1:]] for r in rows[1:]], dtype=np.float32)
    assert np.array_equal(
        got, tok.embeddings(5, seed=7)
    )  # 9 significant digits give the float32 back


def test_csv_files_give_back_tokens_with_commas_quotes_and_newlines(tmp_path):
    # CSV files are read back exactly by a CSV reader (tokens from a custom pattern can hold anything)
    tokens = ["a,b", '"q"', "x\ny", "\r", "\x00z", "\u2028", " s ", "=1+1"]
    wordbpe.write_counts_csv(
        tmp_path / "c.csv", [(t, i) for i, t in enumerate(tokens)], ("token", "count")
    )
    assert _read_csv(tmp_path / "c.csv")[1:] == [[t, str(i)] for i, t in enumerate(tokens)]
    rows = np.full((len(tokens), 2), 0.1, dtype=np.float32)
    wordbpe.write_embeddings_csv(tmp_path / "e.csv", tokens, rows, 2)
    back = _read_csv(tmp_path / "e.csv")
    assert [r[0] for r in back[1:]] == tokens and back[1][1:] == ["0.100000001", "0.100000001"]


def test_embeddings_of_the_wrong_shape_are_refused(tmp_path):
    # was: rows of another width were written under a header of dim columns, missing rows gave an
    # IndexError after a truncated file, extra rows were dropped silently
    for rows in (
        np.zeros((2, 3), np.float32),
        np.zeros((3, 2), np.float32),
        np.zeros((1, 2), np.float32),
    ):
        with pytest.raises(ValueError, match=r"shape \(len\(tokens\), dim\) = \(2, 2\)"):
            wordbpe.write_embeddings_csv(tmp_path / "e.csv", ["a", "b"], rows, 2)
    assert not (tmp_path / "e.csv").exists()


def test_cpu_embeddings_are_the_documented_formula():
    # seed, generateAndSaveEmbeddings: a fixed d-dimensional vector per token from a per-token
    # seed; toksmith's formula (embeddings module docstring): unit vectors, deterministic
    tok = wordbpe.train_from_counts({"hello": 3, "world": 2, ",": 1}, 5)
    e = tok.embeddings(12, seed=5)
    assert e.shape == (tok.n_vocab, 12) and e.dtype == np.float32
    assert np.allclose(
        e, np.array(emb.embed_reference(tok.tokens, 12, 5), dtype=np.float32), atol=1e-6
    )
    assert np.allclose(np.linalg.norm(e.astype(np.float64), axis=1), 1.0, atol=1e-6)
    assert np.array_equal(e, tok.embeddings(12, seed=5, threads=1))
    assert not np.array_equal(e, tok.embeddings(12, seed=6))
    assert len({r.tobytes() for r in e}) == tok.n_vocab  # unique per token
    assert np.array_equal(tok.embeddings(1, seed=5), np.sign(e[:, :1]))  # dim 1: +-1


def test_gpu_backends_without_a_gpu_stop_before_any_file(tmp_path, monkeypatch):
    # seed, GPU Acceleration: no GPU -> a clear error naming the CPU backends, and no output
    def no_device():
        raise RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")

    fake = types.SimpleNamespace(
        cuda=types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=no_device))
    )
    monkeypatch.setitem(sys.modules, "cupy", fake)
    with pytest.raises(ValueError, match="no CUDA GPU.*backend='cpu' or 'numpy'"):
        wordbpe.run(["hello world"], tmp_path / "o", num_merges=3, dim=4, backend="cupy")
    assert not (tmp_path / "o").exists()


# ---- progress reporting ------------------------------------------------------------------------------


def test_progress_reports_files_and_merges(tmp_path, capsys):
    # seed, Robust Progress Reporting: percentage completion and files processed
    for i in range(3):
        (tmp_path / f"{i}.txt").write_text(f"hello world number{i}\n", encoding="utf-8")
    wordbpe.train(tmp_path, 5, progress=True)
    err = capsys.readouterr().err
    assert "counting words" in err and "100%" in err and "3/3" in err and "file" in err
    assert "merging" in err
    wordbpe.train(tmp_path, 5, progress=False)
    assert capsys.readouterr().err == ""


# ---- command line --------------------------------------------------------------------------------------


def test_command_line_run_options(tmp_path, capsys):
    from toksmith.cli import main

    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.txt").write_text("camelCase Camel\n", encoding="utf-8")
    (tmp_path / "c" / "b.md").write_text("markdown\n", encoding="utf-8")
    assert (
        main(
            [
                "wordbpe",
                "run",
                str(tmp_path / "c"),
                "-o",
                str(tmp_path / "o"),
                "--merges",
                "5",
                "--dim",
                "3",
                "--no-progress",
                "--sample",
                "",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert len(captured.out.split()) == 4 and "sample:" not in captured.err
    counts = dict(_read_csv(tmp_path / "o" / "corpus_unique_initial_tokens.csv")[1:])
    assert counts == {"camel": "2", "case": "1"}
    assert (
        main(
            [
                "wordbpe",
                "run",
                str(tmp_path / "c"),
                "-o",
                str(tmp_path / "o2"),
                "--merges",
                "5",
                "--dim",
                "3",
                "--no-progress",
                "--all-files",
                "--keep-case",
                "--sample",
                "camelCase",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    counts = dict(_read_csv(tmp_path / "o2" / "corpus_unique_initial_tokens.csv")[1:])
    assert counts == {"camel": "1", "Camel": "1", "Case": "1", "markdown": "1"}
    assert "sample: 'camelCase'" in captured.err
    assert (
        main(
            [
                "wordbpe",
                "run",
                str(tmp_path / "c"),
                "-o",
                str(tmp_path / "o3"),
                "--dim",
                "0",
                "--no-progress",
            ]
        )
        == 1
    )
    assert "dim must be >= 1" in capsys.readouterr().err and not (tmp_path / "o3").exists()
