"""`toksmith convert`."""

import lzma

import toksmith
from tests.cli.helpers import _err
from tests.conftest import DATA
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


def test_convert_of_a_pipeline_tokenizer_to_a_byte_level_format_is_refused_by_name(
    tmp_path, capsys
):
    """A SentencePiece model is written --to huggingface (tests/pipeline/test_export.py); the
    byte-level formats are refused with a message naming the model (was an AttributeError
    traceback)."""
    model = tmp_path / "llama2.model"
    model.write_bytes(lzma.decompress((DATA / "models" / "llama2.model.xz").read_bytes()))
    for out in ("out.json", "tokenizer.json", "out.tiktoken"):
        assert main(["convert", str(model), str(tmp_path / out)]) == 1
        err = _err(capsys)
        assert "sentencepiece tokenizer" in err and "BPE over characters" in err
        assert "--to huggingface" in err
        assert not (tmp_path / out).exists()
