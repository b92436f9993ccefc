"""Fixtures of the command-line tests: small tokenizers saved once per module."""

import warnings

import pytest

import toksmith

#: the text the control-character tokenizer is trained on
TEXTS = ["hello world, hello there\nthe world is wide\n", "lorem ipsum dolor sit amet\n"] * 5


def _saved(folder, tok):
    path = folder / "tok.json"
    tok.save(path)
    return path


@pytest.fixture(scope="module")
def tok_path(tmp_path_factory, corpus_slices):
    """A small nanochat-pattern tokenizer with a special and a pinned token that holds a space."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = toksmith.train_from_iterator(
            list(corpus_slices.values()),
            vocab_size=500,
            pattern="nanochat",
            special_tokens=["<|bos|>"],
            pinned_tokens=["New York"],
            threads=1,
        )
    return _saved(tmp_path_factory.mktemp("cli"), tok)


@pytest.fixture(scope="module")
def control_tok_path(tmp_path_factory):
    """A small tokenizer whose special tokens hold a newline, a tab and an escape character."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = toksmith.train_from_iterator(
            TEXTS,
            vocab_size=300,
            pattern="gpt2",
            threads=1,
            special_tokens=["<|bos|>", "<|a\nb|>", "<|t\tx|>", "<|\x1b|>"],
        )
    return _saved(tmp_path_factory.mktemp("cli_control"), tok)
