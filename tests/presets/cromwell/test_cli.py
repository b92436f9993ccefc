"""`toksmith train --preset cromwell` trains what cromwell.train trains."""

from __future__ import annotations

import toksmith
from tests.conftest import DATA
from toksmith.cli import main
from toksmith.presets import cromwell


def test_cli_preset_trains_what_the_api_trains(tmp_path):
    src = tmp_path / "code.py"
    src.write_text(
        (DATA / "corpora" / "python_slice.txt").read_text(encoding="utf-8")[:40000],
        encoding="utf-8",
    )
    out = tmp_path / "c.json"
    argv = ["train", str(src), "--preset", "cromwell", "--vocab-size", "700", "-o", str(out)]
    assert main([*argv, "--no-progress"]) == 0
    tok = toksmith.load(out)
    api = cromwell.train([src], vocab_size=700).tokenizer
    assert tok.pattern == cromwell.LINE_PATTERN and tok.n_vocab == 700
    assert tok.mergeable_ranks() == api.mergeable_ranks()
    assert tok.metadata["preset"] == "cromwell"
    # one stage on the line-start split: no superword merges (cromwell.train's default)
    assert "superword_merges" not in tok.metadata and cromwell.superword_merges(700) == 0
    assert cromwell.superword_merges(700, 0.2) == 87
    # with a pattern of one's own
    assert main([*argv, "--no-progress", "--pattern", "o200k"]) == 0
    assert toksmith.load(out).pattern_name == "o200k"


def test_cli_counts_for_the_preset(tmp_path, capsys):
    """`toksmith count --pattern cromwell` counts with the preset's split, and `train --preset
    cromwell --from-counts` trains on them what cromwell.train trains; counts made with
    another split are refused with the command that makes the right ones."""
    src = tmp_path / "code.py"
    src.write_text(
        (DATA / "corpora" / "python_slice.txt").read_text(encoding="utf-8")[:40000],
        encoding="utf-8",
    )
    counts, other, out = tmp_path / "c.counts", tmp_path / "o.counts", tmp_path / "t.json"
    assert main(["count", str(src), "--pattern", "cromwell", "-o", str(counts), "-q"]) == 0
    argv = ["train", "--preset", "cromwell", "--vocab-size", "600", "-o", str(out)]
    assert main([*argv, "--from-counts", str(counts), "--no-progress"]) == 0
    tok = toksmith.load(out)
    assert tok.pattern == cromwell.LINE_PATTERN
    assert (
        tok.mergeable_ranks() == cromwell.train([src], vocab_size=600).tokenizer.mergeable_ranks()
    )
    assert main(["count", str(src), "--pattern", "o200k", "-o", str(other), "-q"]) == 0
    capsys.readouterr()
    assert main([*argv, "--from-counts", str(other), "--no-progress"]) != 0
    err = capsys.readouterr().err
    assert "--pattern cromwell" in err and "Traceback" not in err
