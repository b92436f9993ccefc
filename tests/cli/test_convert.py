"""`toksmith convert`."""

import toksmith
from tests.cli.helpers import _err
from toksmith.cli import main


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
