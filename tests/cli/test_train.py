"""`toksmith train`: options, outputs and corpus checks."""

import pytest

import toksmith
from tests.cli.helpers import _err
from toksmith.cli import main


@pytest.mark.parametrize("flag", ["--pattern", "--preset"])
def test_train_empty_pattern_or_preset_is_not_the_default(tmp_path, capsys, flag):
    """Audit finding: ``--pattern ''`` trained with cl100k (and ``--preset ''`` with no preset) without a word."""
    src = tmp_path / "c.txt"
    src.write_text("hello world\n" * 20, encoding="utf-8")
    out = tmp_path / "t.json"
    assert (
        main(["train", str(src), flag, "", "--vocab-size", "260", "--no-progress", "-o", str(out)])
        == 1
    )
    assert "error" in _err(capsys)
    assert not out.exists()


@pytest.mark.parametrize("output", ["missing/t.json", "folder", ""])
def test_train_checks_the_output_before_training(tmp_path, capsys, monkeypatch, output):
    """Audit finding: An output in a missing folder (or a folder) failed only after the whole training."""
    src = tmp_path / "c.txt"
    src.write_text("hello world\n", encoding="utf-8")
    (tmp_path / "folder").mkdir()

    def no_training(*args, **kwargs):
        raise AssertionError("trained before checking the output")

    monkeypatch.setattr(toksmith, "train", no_training)
    out = str(tmp_path / output) if output else ""
    assert main(["train", str(src), "--no-progress", "-o", out]) == 1
    err = _err(capsys)
    assert "-o" in err and ("does not exist" in err or "folder" in err or "empty" in err), err


def test_train_refuses_to_overwrite_its_corpus(tmp_path, capsys):
    """Audit finding: ``toksmith train corpus.txt -o corpus.txt`` replaced the corpus with the tokenizer."""
    src = tmp_path / "c.txt"
    src.write_text("hello world\n" * 20, encoding="utf-8")
    assert (
        main(
            [
                "train",
                str(src),
                "--vocab-size",
                "260",
                "--no-progress",
                "-o",
                str(tmp_path / "." / "c.txt"),
            ]
        )
        == 1
    )
    assert "is the corpus file" in _err(capsys)
    assert src.read_text(encoding="utf-8") == "hello world\n" * 20
