"""``toksmith eval``: bytes/token of tokenizers on corpora, ratio to the first, bar chart."""

from __future__ import annotations

import json
import os
import sys
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toksmith
from tests.conftest import DATA
from toksmith.cli import eval as tok_eval
from toksmith.cli import main

ENGLISH = DATA / "corpora" / "english_slice.txt"
PYTHON = DATA / "corpora" / "python_slice.txt"


@pytest.fixture(scope="module")
def two_tokenizers(tmp_path_factory, chat, chat_path):
    d = tmp_path_factory.mktemp("eval")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = toksmith.train(PYTHON, vocab_size=600, pattern="gpt2", threads=1)
    code.save(d / "code.json")
    return {"chat": (chat.tokenizer, chat_path), "code": (code, d / "code.json")}


def test_eval_two_tokenizers_two_corpora(capsys, tmp_path, two_tokenizers):
    chart = tmp_path / "chart.png"
    (chat, chat_file), (code, code_file) = two_tokenizers["chat"], two_tokenizers["code"]
    argv = [
        "eval",
        "-t",
        str(chat_file),
        "-t",
        f"py={code_file}",
        "--corpus",
        f"english={ENGLISH}",
        "--corpus",
        f"python={PYTHON}",
        "--chart",
        str(chart),
    ]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].split() == [
        "corpus",
        "bytes",
        "tokenizer",
        "tokens",
        "bytes/token",
        "vs",
        "chat",
    ]
    rows = [line.split() for line in lines[2:]]
    assert [(r[0], r[2]) for r in rows] == [
        ("english", "chat"),
        ("english", "py"),
        ("python", "chat"),
        ("python", "py"),
    ]
    for r in rows:
        text = (ENGLISH if r[0] == "english" else PYTHON).read_text(encoding="utf-8")
        tok = chat if r[2] == "chat" else code
        n_bytes, n_tokens = len(text.encode()), len(tok.encode_ordinary(text))
        assert (int(r[1]), int(r[3])) == (n_bytes, n_tokens)
        assert float(r[4]) == pytest.approx(n_bytes / n_tokens, abs=6e-4)
    assert rows[0][5] == rows[2][5] == "1.000"
    assert float(rows[3][5]) == pytest.approx(float(rows[3][4]) / float(rows[2][4]), abs=2e-3)
    assert float(rows[3][5]) > 1 > float(rows[1][5])  # the code tokenizer wins on code only
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and chart.stat().st_size > 5000
    assert f"wrote {chart}" in err


def test_eval_json_and_library(capsys, two_tokenizers):
    (chat, chat_file), (code, _) = two_tokenizers["chat"], two_tokenizers["code"]
    assert (
        main(
            [
                "eval",
                "-t",
                str(chat_file),
                "--corpus",
                str(ENGLISH),
                "--json",
                "--max-bytes",
                "20000",
            ]
        )
        == 0
    )
    rows = json.loads(capsys.readouterr().out)
    assert (
        rows[0]["corpus"] == "english_slice"
        and rows[0]["tokenizer"] == "chat"
        and rows[0]["ratio"] == 1.0
    )
    assert 19000 < rows[0]["bytes"] <= 20000  # cut after a line end
    text = tok_eval.read_corpus(str(ENGLISH), 20000)
    assert rows[0]["tokens"] == len(chat.encode_ordinary(text))
    res = tok_eval.evaluate({"a": chat, "b": code}, {"x": text})
    assert res[1]["ratio"] == pytest.approx(
        res[1]["bytes_per_token"] / res[0]["bytes_per_token"], rel=1e-5
    )
    assert tok_eval.bytes_per_token(chat, text) == pytest.approx(
        res[0]["bytes_per_token"], rel=1e-6
    )


def test_chunked_counts_equal_whole_text(two_tokenizers):
    text = ENGLISH.read_text(encoding="utf-8") + PYTHON.read_text(encoding="utf-8")
    for tok, _ in two_tokenizers.values():
        whole = len(tok.encode_ordinary(text))
        assert tok_eval.count_tokens(tok, text, threads=2, chunk_chars=3000) == whole
    chunks = list(tok_eval._chunks(text, 3000))
    assert "".join(chunks) == text and len(chunks) > 50


def test_eval_errors(capsys, monkeypatch, tmp_path, two_tokenizers):
    chat_file = two_tokenizers["chat"][1]
    assert main(["eval", "-t", str(chat_file), "--corpus", str(tmp_path / "missing.txt")]) == 1
    assert "missing.txt" in capsys.readouterr().err
    assert (
        main(["eval", "-t", str(chat_file), "--corpus", f"a={ENGLISH}", "--corpus", f"a={PYTHON}"])
        == 1
    )
    assert "given twice" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code = main(
        ["eval", "-t", str(chat_file), "--corpus", str(ENGLISH), "--chart", str(tmp_path / "c.png")]
    )
    assert code == 1 and "pip install toksmith[plot]" in capsys.readouterr().err
    assert not (tmp_path / "c.png").exists()
    with pytest.raises(ImportError, match=r"toksmith\[plot\]"):
        tok_eval.write_chart([], str(tmp_path / "c.png"))


def test_eval_reads_tiktoken_files(capsys):
    """Any format load_any reads: a .tiktoken file (when the interop loader supports it)."""
    from toksmith.formats import load_any

    path = DATA / "vocabs" / "gpt2.tiktoken"
    try:
        load_any(path)
    except Exception as exc:  # pragma: no cover - depends on the formats work
        pytest.skip(f"load_any does not read .tiktoken files yet: {exc}")
    assert main(["eval", "-t", str(path), "--corpus", f"en={ENGLISH}", "--max-bytes", "30000"]) == 0
    out = capsys.readouterr().out
    assert "gpt2" in out


@pytest.fixture(scope="module")
def pattern_tokenizers():
    text = ENGLISH.read_text(encoding="utf-8")[:40000]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [
            toksmith.train_from_iterator([text], vocab_size=400, pattern=p, threads=1)
            for p in ("gpt2", "cl100k", "nanochat")
        ]


@given(
    st.lists(
        st.sampled_from(list(" \n\t\r!'a1éb.") + ["'s", "the", "\n\n", "  "]), max_size=80
    ).map("".join),
    st.integers(1, 30),
)
def test_chunking_never_changes_the_count(pattern_tokenizers, text, size):
    for tok in pattern_tokenizers:
        assert tok_eval.count_tokens(tok, text, threads=1, chunk_chars=size) == len(
            tok.encode_ordinary(text)
        )


BIG = 2**70


def test_eval_huge_max_bytes_and_bad_chunks(capsys, tmp_path, byte_chat, chat_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world\n" * 10)
    assert tok_eval.read_corpus(str(corpus), BIG) == "hello world\n" * 10
    assert (
        main(
            [
                "eval",
                "-t",
                str(chat_path),
                "--corpus",
                f"c={corpus}",
                "--max-bytes",
                str(BIG),
                "--json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)[0]["bytes"] == 120
    with pytest.raises(TypeError):
        tok_eval.read_corpus(str(corpus), True)
    for bad in (0, -3):  # a non-positive chunk size looped forever on text with newlines
        with pytest.raises(ValueError, match="chunk_chars"):
            tok_eval.count_tokens(byte_chat.tokenizer, "ab\ncd\nef", chunk_chars=bad)
    assert tok_eval.count_tokens(byte_chat.tokenizer, "ab\ncd\nef", chunk_chars=1) == 8
    assert os.path.exists(corpus)
