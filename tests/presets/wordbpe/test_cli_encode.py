"""`toksmith wordbpe encode`: the tokenizer first, options anywhere (issue 33)."""

from __future__ import annotations

import pytest

from toksmith.cli import main
from toksmith.presets import wordbpe


@pytest.fixture(scope="module")
def word_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("w") / "word.json"
    wordbpe.train(["hello world, hello there. the world says hello"] * 20, 30).save(path)
    return path


def test_options_anywhere(word_path, capsys):
    want = None
    for argv in (
        [str(word_path), "hello world", "--tokens"],
        [str(word_path), "--tokens", "hello world"],
        ["--tokens", str(word_path), "hello", "world"],
        ["-t", str(word_path), "--tokens", "hello world"],
        ["--tokens", "-t", str(word_path), "hello", "world"],
    ):
        assert main(["wordbpe", "encode", *argv]) == 0, argv
        out = capsys.readouterr().out
        assert want is None or out == want, argv
        want = out
    tok = wordbpe.load(word_path)
    assert want.strip() == " ".join(tok.tokens[i] for i in tok.encode("hello world"))


def test_no_tokenizer_is_an_error(capsys):
    assert main(["wordbpe", "encode", "--tokens"]) == 1
    assert "-t/--tokenizer is required" in capsys.readouterr().err
