"""The benchmark harness (``python -m benches.run``) end to end on tiny inputs, so it cannot rot.

``--smoke`` reads only tests/data (corpus slices) and trains its small vocabularies, so this
test never touches ../shared; it takes a few seconds.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

pytest.importorskip("tiktoken")
pytest.importorskip("rustbpe")

SECTION_HEADINGS = [
    "## Targets (issue 4)",
    "## Machine",
    "## Training",
    "## Encoding, one thread",
    "## Batch encoding",
    "## Decoding",
    "## Loading a tokenizer",
    "## Worst cases",
    "## Memory: encoding a file from disk",
    "## Equality checks",
]


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    env = dict(os.environ)
    env["TOKSMITH_BENCH_DATA"] = str(out / "no-shared-data-here")  # smoke mode must not need it
    env["PYTHONPATH"] = str(REPO) + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "benches.run", "--smoke", "--no-publish", "--out", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return out, proc, time.monotonic() - t0


def test_smoke_run_succeeds(smoke_run):
    _, proc, _ = smoke_run
    assert proc.returncode == 0, proc.stderr[-4000:]  # within the run's 180 s timeout


def test_report_has_every_section(smoke_run):
    out, proc, _ = smoke_run
    report = (out / "BENCHMARKS.md").read_text()
    for heading in SECTION_HEADINGS:
        assert heading in report, f"{heading!r} missing from the report"
    for pattern in ("gpt2", "cl100k", "o200k"):
        assert f"### {pattern}" in report  # worst-case table per pattern
    assert "**FAILED**" not in report


def test_results_and_equality_checks(smoke_run):
    out, proc, _ = smoke_run
    res = json.loads((out / "results.json").read_text())
    assert set(res["sections"]) == {"train", "encode", "batch", "decode", "load", "worst", "memory"}
    for key in ("train", "encode", "batch", "load", "worst", "memory"):
        assert key in res
    names = [c["name"] for c in res["checks"]]
    assert sum("merges == rustbpe merges" in n for n in names) == 4
    assert sum(n.startswith("encode ") for n in names) == 3
    assert sum(n.startswith("batch ") for n in names) >= 6
    assert sum(n.startswith("load ") for n in names) == 3
    failed = [c for c in res["checks"] if not c["ok"]]
    assert not failed, failed
    # toksmith produced a number for every encode pattern, and the targets table was filled
    for pattern in ("gpt2", "cl100k", "o200k"):
        mine = res["encode"][pattern]["toksmith"]
        assert mine["text_mbps"] > 0
        # decode: the steady rate, the first call on its own, and the round trip
        assert mine["decode_mbps"] > 0 and mine["decode_first_mbps"] > 0
        assert mine["decode_roundtrip"] is True
        # loading: toksmith read every file kind, and each load gave tiktoken's ids
        for fmt in ("tiktoken", "tokenizer.json", "toksmith"):
            assert res["load"][pattern][fmt]["toksmith"]["s"] > 0
    assert res["targets"], "empty targets table"


def test_chart_written(smoke_run):
    pytest.importorskip("matplotlib")
    out, _, _ = smoke_run
    png = out / "benchmarks.png"
    assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_worst_case_ratio_shows_each_run():
    """The 10 MB / 1 MB target names the worst input and, when there were several runs, the
    ratio of each run (both sizes are timed in one process per run), so an outlier shows."""
    import sys

    sys.path.insert(0, str(REPO))
    from benches.report import worst_ratios

    def case(s, runs, size):
        return {"s": s, "bytes": size, "runs_s": runs}

    cases = {
        "normal_1000000": case(0.010, [0.010, 0.011, 0.010], 1_000_000),
        "normal_10000000": case(0.100, [0.100, 0.100, 0.100], 10_000_000),
        "letter_1000000": case(0.030, [0.030, 0.020, 0.030], 1_000_000),
        "letter_10000000": case(0.330, [0.300, 0.330, 0.390], 10_000_000),
    }
    res = {"worst": {"gpt2": {"toksmith": {"cases": cases}}}}
    lin, per = worst_ratios(res)
    assert len(lin) == 1
    q, where = lin[0]
    assert abs(q - 11.0) < 1e-9
    assert where.startswith("gpt2, ") and where.endswith("(each run: 10.0x, 16.5x, 13.0x)")
    assert abs(max(per)[0] - 3.3) < 1e-9  # per byte: the 10 MB letter case vs 10 MB of normal text


def test_batch_ratio_pairs_each_runs_timings():
    """The batch target is the median of each run's 2-thread / 1-thread ratio (the two are timed
    back to back), so a slow stretch of the machine that spans one run does not decide it; runs
    with a missing timing fall back to the ratio of the medians."""
    import sys

    sys.path.insert(0, str(REPO))
    from benches.report import paired_ratios

    def runs(*secs):
        return [{"docs_bytes": 10_000_000, "batch_s": s} for s in secs]

    one, two = runs(0.100, 0.100, 0.200), runs(0.050, 0.060, 0.100)
    assert [round(x, 3) for x in paired_ratios(one, two)] == [2.0, 1.667, 2.0]
    assert paired_ratios(one, two[:2]) == []  # not one pair per run
    assert paired_ratios(runs(0.1), runs(0.05)) == []  # a single run: nothing to pair
    assert paired_ratios(one, two[:2] + [{"error": "boom"}]) == []


def test_speedup_over_a_peer_pairs_each_runs_timings():
    """toksmith's speed over a peer (encode and decode targets) is the median of each run's ratio;
    with a run missing a timing it falls back to the ratio of the median speeds."""
    import sys

    sys.path.insert(0, str(REPO))
    from benches.report import _runs_note, speedup

    def lib(*secs):
        return {"runs": [{"docs_bytes": 1_000_000, "docs_s": s} for s in secs]}

    ours, peer = lib(0.10, 0.10, 0.30), lib(0.11, 0.09, 0.33)
    assert abs(speedup(ours, peer, "docs_bytes", "docs_s") - 1.1) < 1e-9  # runs: 1.1, 0.9, 1.1
    peer["runs"][1] = {"error": "boom"}
    # the ratio of the median speeds: 10 MB/s over the mean of the peer's two runs
    assert (
        abs(speedup(ours, peer, "docs_bytes", "docs_s") - 1e7 / ((1e6 / 0.11 + 1e6 / 0.33) / 2))
        < 1e-9
    )
    assert speedup(ours, {"runs": []}, "docs_bytes", "docs_s") is None
    res = {
        "runs": 3,
        "encode": {"o200k": {"toksmith": lib(1, 1, 1, 1, 1)}},
        "batch": {"o200k": {"toksmith 1 thread": lib(1, 1, 1, 1, 1)}},
    }
    assert _runs_note(res) == " (5 in the encode and batch sections)"
    res["batch"] = {}
    assert _runs_note(res) == " (5 in the encode section)"
