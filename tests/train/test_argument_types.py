"""Training and corpus functions refuse arguments of the wrong type with a clear message."""

from __future__ import annotations

import pytest

import toksmith
from toksmith import corpus

np = pytest.importorskip("numpy")


def test_train_name_must_be_str():
    with pytest.raises(TypeError, match="name must be a str"):
        toksmith.train_from_iterator(["a b"], vocab_size=257, pattern="gpt2", name=5)


def test_corpus_helpers_check_their_arguments(tmp_path):
    with pytest.raises(TypeError, match="wrap it in a list"):  # was [['a', 'b', 'c']]
        list(corpus.batched("abc"))
    for kw in ("max_items", "max_bytes"):
        with pytest.raises(ValueError, match=f"{kw} must be at least 1"):
            list(corpus.batched(["a"], **{kw: 0}))
        with pytest.raises(TypeError, match=f"{kw} must be an int"):
            list(corpus.batched(["a"], **{kw: 1.5}))
    with pytest.raises(ValueError, match="max_bytes must be at least 1"):
        corpus.default_corpus(max_bytes=-1)
    with pytest.raises(TypeError, match="must be a str, not NoneType"):  # was AttributeError
        corpus.surrogates_checked(None, "strict", "the text")
    path = tmp_path / "a.txt"
    path.write_text("x")
    with pytest.raises(
        TypeError, match="raw must be an open binary file"
    ):  # was 1.5 returned as the file
        corpus.open_binary(path, raw=1.5)
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_text('{"text": "x"}\n')
    with pytest.raises(TypeError, match="text_field must be a str"):  # was "unhashable type"
        list(corpus.iter_jsonl(jsonl, ["text"]))
    with pytest.raises(ValueError, match="errors must be 'strict' or 'replace'"):
        list(corpus.iter_jsonl(jsonl, "text", "bogus"))
    assert list(corpus.iter_jsonl(jsonl, "text")) == ["x"]


def test_train_checks_progress_and_text_field(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("hello world " * 10)
    with pytest.raises(TypeError, match="text_field must be a str"):  # was ignored for a .txt file
        toksmith.train(path, vocab_size=257, pattern="gpt2", text_field=5)
    with pytest.raises(ValueError, match="errors must be 'strict' or 'replace'"):
        toksmith.train(path, vocab_size=257, pattern="gpt2", errors="ignore")
    with pytest.raises(
        TypeError, match="progress must be True or False, not str"
    ):  # was a progress bar
        toksmith.train_from_iterator(["a b"], vocab_size=257, pattern="gpt2", progress="no")
    assert (
        toksmith.train_from_iterator(
            ["a b"], vocab_size=257, pattern="gpt2", progress=np.bool_(False)
        ).n_vocab
        == 257
    )
