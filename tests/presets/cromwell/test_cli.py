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
