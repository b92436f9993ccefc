"""`toksmith eval` and the counting API behind it (cli/eval.py)."""

from __future__ import annotations

import json
import warnings

import pytest
import tiktoken

import toksmith
from tests.cli.helpers import _err
from tests.conftest import BYTES
from toksmith import Tokenizer
from toksmith.cli import eval as tok_eval
from toksmith.cli import main
from toksmith.cli.eval import count_tokens, evaluate


def test_eval_chunked_counts_equal_whole_text_counts(corpus_slices):
    """Audit finding: Chunks were cut after any lone newline: o200k's ".\\n/" is one piece (so the counts
    differed), as is a custom pattern's piece across a newline, and a pinned "a\\nb"."""
    from toksmith.cli.eval import count_tokens

    cases = [
        ("x.\n/abc " * 60, "o200k", ()),
        ("ab\ncd ef\ngh " * 60, r"[^ ]+| ", ()),
        ("xa\nby " * 60, "cl100k", ("a\nb",)),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for text, pattern, pinned in cases:
            tok = toksmith.train_from_iterator(
                [text] * 5 + [corpus_slices["english"][:5000]],
                vocab_size=300,
                pattern=pattern,
                pinned_tokens=list(pinned),
                threads=1,
            )
            assert count_tokens(tok, text, threads=1, chunk_chars=3) == len(
                tok.encode_ordinary(text)
            ), pattern


def test_eval_counts_a_cppreason_file_with_cppreason(tmp_path, capsys):
    """Audit finding: A CppReason file was counted with the plain BPE it holds (no fixed whole-word ids): other
    numbers than the CppReason tokenizer's (15928 tokens instead of 10791 on 20 KB)."""
    from toksmith.presets import cppreason

    code = (
        "int main() { return x->y + 42; }\nstd::vector<int> v;\n  if (a == b) { v.push_back(7); }\n"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tiny corpus runs out of pairs
        tok = cppreason.train([code] * 5, vocab_size=1900)
    path = tmp_path / "cpp.json"
    tok.save(path)
    corpus = tmp_path / "c.cpp"
    corpus.write_text(code * 40, encoding="utf-8")
    assert main(["eval", "-t", str(path), "--corpus", f"c={corpus}", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["tokens"] == len(cppreason.load(path).encode(code * 40))


@pytest.mark.parametrize(
    "chart,message",
    [
        ("chart", "ending in .png"),
        ("chart.xyz", "ending in .png"),
        ("missing/c.png", "does not exist"),
        ("folder", "is a folder"),
    ],
)
def test_eval_chart_path_is_checked_first(tok_path, tmp_path, capsys, monkeypatch, chart, message):
    """Audit finding: --chart without an extension wrote CHART.png but said "wrote CHART"; an unknown extension
    or a missing folder failed after all the counting."""
    pytest.importorskip("matplotlib")
    from toksmith.cli import eval as cli_eval

    (tmp_path / "folder").mkdir()
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello\n", encoding="utf-8")
    monkeypatch.setattr(
        cli_eval, "evaluate", lambda *a, **k: pytest.fail("counted before checking --chart")
    )
    assert (
        main(
            ["eval", "-t", str(tok_path), "--corpus", str(corpus), "--chart", str(tmp_path / chart)]
        )
        == 1
    )
    assert message in _err(capsys)
    assert not (tmp_path / "chart.png").exists()


def test_eval_invalid_utf8_is_said(tok_path, tmp_path, capsys):
    """Audit finding: Invalid bytes were counted as U+FFFD (3 bytes each) without a word."""
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"ok\xffno\n")
    assert main(["eval", "-t", str(tok_path), "--corpus", str(corpus), "--json"]) == 0
    captured = capsys.readouterr()
    assert "toksmith eval: warning:" in captured.err and "not valid UTF-8 (byte 2)" in captured.err
    assert json.loads(captured.out)[0]["bytes"] == 8


def test_eval_max_bytes_cut_inside_a_character(tok_path, tmp_path, capsys):
    """Audit finding: --max-bytes with no line end before it cut a character in two and counted a U+FFFD (3
    bytes that are not in the file)."""
    corpus = tmp_path / "c.txt"
    corpus.write_bytes("abcé€😀 more text".encode())
    for n, expected in [(4, "abc"), (5, "abcé"), (7, "abcé"), (8, "abcé€"), (11, "abcé€")]:
        assert (
            main(
                [
                    "eval",
                    "-t",
                    str(tok_path),
                    "--corpus",
                    str(corpus),
                    "--max-bytes",
                    str(n),
                    "--json",
                ]
            )
            == 0
        )
        captured = capsys.readouterr()
        assert "warning" not in captured.err
        assert json.loads(captured.out)[0]["bytes"] == len(expected.encode()), n


@pytest.fixture(scope="module")
def ab_tok():
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"ab"] = 256
    return toksmith.Tokenizer.from_ranks(
        ranks, "cl100k", special_tokens={"<s>": 257, "<|endoftext|>": 258}
    )


def test_eval_counts_a_tiktoken_encoding(ab_tok):
    # was: TypeError "encode_ordinary_batch() got an unexpected keyword argument 'threads'"
    enc = tiktoken.Encoding(
        "x", pat_str=ab_tok.pattern, mergeable_ranks=ab_tok.mergeable_ranks(), special_tokens={}
    )
    text = "hello ab world\n" * 100
    assert (
        count_tokens(enc, text, threads=2)
        == len(enc.encode_ordinary(text))
        == count_tokens(ab_tok, text)
    )
    rows = evaluate({"tiktoken": enc, "toksmith": ab_tok}, {"c": text})
    assert rows[0]["tokens"] == rows[1]["tokens"] and rows[1]["ratio"] == 1.0


def test_eval_corpus_that_is_not_text_is_a_type_error(ab_tok):
    # was: AttributeError "'bytes' object has no attribute 'encode'" / "'list' object has no attribute 'items'"
    with pytest.raises(TypeError, match=r"corpora\['c'\] must be the text"):
        evaluate({"t": ab_tok}, {"c": b"hello"})
    with pytest.raises(TypeError, match="dicts"):
        evaluate({"t": ab_tok}, ["hello"])


def test_counting_bytes_is_a_type_error(ab_tok):
    # was: AttributeError "'bytes' object has no attribute 'encode'" from bytes_per_token
    from toksmith.cli.eval import bytes_per_token

    with pytest.raises(TypeError, match="text must be str, not bytes"):
        bytes_per_token(ab_tok, b"hello")
    with pytest.raises(TypeError, match="text must be str, not bytes"):
        count_tokens(ab_tok, b"hello " * 10, chunk_chars=2)


def test_max_bytes_equal_to_the_file_size_keeps_its_last_line(tmp_path):
    """Audit finding: A file of exactly --max-bytes bytes was taken as cut short: its last line (without a
    final newline) was dropped."""
    p = tmp_path / "c.txt"
    p.write_bytes(b"one\ntwo")
    assert tok_eval.read_corpus(str(p), 7) == "one\ntwo"
    assert tok_eval.read_corpus(str(p), 8) == "one\ntwo"
    assert tok_eval.read_corpus(str(p), 6) == "one\n"
    import gzip

    gz = tmp_path / "c.txt.gz"
    gz.write_bytes(gzip.compress(b"x\n" * 10 + b"end"))
    assert tok_eval.read_corpus(str(gz), 23) == "x\n" * 10 + "end"
    assert tok_eval.read_corpus(str(gz), 22) == "x\n" * 10


def test_a_tokenizer_that_drops_text_is_warned_about(tmp_path, capsys):
    """Audit finding: A custom split pattern that matches no piece somewhere leaves that text out of the
    tokens (as tiktoken does): its bytes/token counted bytes it never encoded, without a word."""
    letters = Tokenizer.from_ranks(BYTES, r"\p{L}+")
    whole = Tokenizer.from_ranks(
        BYTES, r"\p{L}+|[^\p{L}]"
    )  # a custom pattern that covers everything
    with pytest.warns(
        UserWarning, match=r"tokenizer 'letters' leaves out 4 of the 10 bytes of corpus 'x'"
    ):
        rows = tok_eval.evaluate({"whole": whole, "letters": letters}, {"x": "ab cd, ef\n"})
    assert [r["tokens"] for r in rows] == [10, 6]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tok_eval.evaluate(
            {"whole": whole}, {"x": "ab cd, ef\n"}
        )  # no warning when nothing is dropped
    with pytest.warns(UserWarning, match="no token at all"):
        tok_eval.evaluate({"digits": Tokenizer.from_ranks(BYTES, r"\d+")}, {"x": "hello"})
    letters.save(tmp_path / "letters.json")
    corpus = tmp_path / "x.txt"
    corpus.write_text("ab cd, ef\n", encoding="utf-8")
    assert (
        main(["eval", "-t", str(tmp_path / "letters.json"), "--corpus", str(corpus), "--json"]) == 0
    )
    captured = capsys.readouterr()
    assert "warning: tokenizer 'letters' leaves out 4 of the 10 bytes" in captured.err
    assert json.loads(captured.out)[0]["tokens"] == 6


def test_a_tiktoken_encoding_that_drops_text_is_warned_about():
    tiktoken = pytest.importorskip("tiktoken")
    enc = tiktoken.Encoding("letters", pat_str=r"\p{L}+", mergeable_ranks=BYTES, special_tokens={})
    with pytest.warns(UserWarning, match="leaves out 1 of the 5 bytes"):
        rows = tok_eval.evaluate({"enc": enc}, {"x": "ab cd"})
    assert rows[0]["tokens"] == 4


def test_an_empty_corpus_is_warned_about(tmp_path, capsys):
    tok = Tokenizer.from_ranks(BYTES, "gpt2")
    with pytest.warns(UserWarning, match="corpus 'e' is empty"):
        assert tok_eval.evaluate({"t": tok}, {"e": ""})[0]["bytes_per_token"] == 0.0
    tok.save(tmp_path / "t.json")
    (tmp_path / "e.txt").write_bytes(b"")
    assert main(["eval", "-t", str(tmp_path / "t.json"), "--corpus", str(tmp_path / "e.txt")]) == 0
    assert "warning: corpus 'e' is empty" in capsys.readouterr().err


def test_counting_with_an_object_that_is_no_tokenizer_says_what_to_pass():
    class NotATokenizer:
        def encode(self, text):
            return [1]

    with pytest.raises(TypeError, match="pass a toksmith Tokenizer or a tiktoken Encoding"):
        tok_eval.count_tokens(NotATokenizer(), "hello")
    with pytest.raises(TypeError, match="load_any"):
        tok_eval.evaluate({"x": NotATokenizer()}, {"c": "hello"})


def test_two_corpora_with_the_same_stem_suggest_naming_them(tmp_path, capsys):
    tok = Tokenizer.from_ranks(BYTES, "gpt2")
    tok.save(tmp_path / "t.json")
    for lang in ("en", "de"):
        (tmp_path / f"wiki.{lang}.txt").write_text("hello\n", encoding="utf-8")
    assert (
        main(
            [
                "eval",
                "-t",
                str(tmp_path / "t.json"),
                "--corpus",
                str(tmp_path / "wiki.en.txt"),
                "--corpus",
                str(tmp_path / "wiki.de.txt"),
            ]
        )
        == 1
    )
    assert "--corpus NAME=PATH" in capsys.readouterr().err
