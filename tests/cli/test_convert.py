"""`toksmith convert`."""

import warnings

import pytest

import toksmith
from tests.cli.helpers import _err
from toksmith.cli import main


@pytest.fixture(scope="module")
def tok_path(tmp_path_factory, corpus_slices):
    """A small nanochat-pattern tokenizer with a special and a pinned token that holds a space."""
    d = tmp_path_factory.mktemp("cli_audit")
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
    path = d / "tok.json"
    tok.save(path)
    return path


def test_convert_to_gpt2_says_the_pinned_tokens_are_not_stored(tok_path, tmp_path, capsys):
    """Audit finding: GPT-2 files list pinned tokens among the others: loaded back they were special tokens
    (other ids for "New York"), and convert said nothing about it."""
    out = tmp_path / "gpt2"
    assert main(["convert", str(tok_path), str(out), "--to", "gpt2"]) == 0
    err = _err(capsys)
    assert 'pinned_tokens={"New York": ' in err
    tok = toksmith.load(tok_path)
    back = toksmith.from_gpt2_files(
        out / "vocab.json",
        out / "merges.txt",
        pattern="nanochat",
        special_tokens=tok.special_tokens,
        pinned_tokens=tok.pinned_tokens,
    )
    assert back.encode_ordinary("in New York") == tok.encode_ordinary("in New York")
