"""The counting bar of training (issue 34): its total is the bytes of the input files (compressed
ones as stored), known up front, so it shows a rate and an ETA; it moves within a file (a .xz
file too, by the compressed bytes read); its units are decimal, as `toksmith train`'s summary
line; and training with the bar gives the same merges as without."""

import lzma
import random
import subprocess
import sys
import warnings

import pytest

import toksmith

tqdm_auto = pytest.importorskip("tqdm.auto")


class _Recorder:
    bars: list = []

    def __init__(self, *args, **kw):
        self.kw, self.total, self.n, self.steps = kw, kw.get("total"), 0, []
        self.desc = kw.get("desc")
        _Recorder.bars.append(self)

    def update(self, n=1):
        self.n += n
        self.steps.append(self.n)

    def set_postfix(self, **kw):
        pass

    def refresh(self):
        pass

    def close(self):
        pass


@pytest.fixture
def recorded(monkeypatch):
    _Recorder.bars = []
    monkeypatch.setattr(tqdm_auto, "tqdm", _Recorder)
    return _Recorder.bars


def _text(n_lines):
    return "".join(
        f"line {i}: the quick brown fox {i * 7919 % 1000} jumps\n" for i in range(n_lines)
    )


def test_counting_bar_has_a_total_and_moves_within_files(tmp_path, recorded):
    plain = tmp_path / "a.txt"
    plain.write_text(_text(3000), encoding="utf-8")
    packed = tmp_path / "b.txt.xz"
    # hex noise on each line: the compressed file is several raw reads long
    noise = random.Random(0)
    big = "".join(f"{line} {noise.getrandbits(64):x}\n" for line in _text(40000).splitlines())
    packed.write_bytes(lzma.compress(big.encode()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with_bar = toksmith.train([plain, packed], vocab_size=400, progress=True, threads=1)
        without = toksmith.train([plain, packed], vocab_size=400, progress=False, threads=1)
    assert with_bar.mergeable_ranks() == without.mergeable_ranks()
    counting = next(b for b in recorded if b.desc == "counting")
    size = plain.stat().st_size + packed.stat().st_size
    assert counting.total == size and counting.n == size
    assert counting.kw["unit"] == "B" and counting.kw["unit_divisor"] == 1000
    # the compressed file's bytes arrive in several steps, not at its end
    inside = [s for s in counting.steps if plain.stat().st_size < s < size]
    assert len(inside) >= 2


def test_jsonl_counts_its_file_bytes(tmp_path, recorded):
    p = tmp_path / "a.jsonl"
    p.write_text("".join(f'{{"text": "doc {i} hello world"}}\n' for i in range(500)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        toksmith.train([p], vocab_size=300, progress=True, threads=1)
    counting = next(b for b in recorded if b.desc == "counting")
    assert counting.total == counting.n == p.stat().st_size


def test_cli_quiet_prints_nothing(tmp_path):
    src = tmp_path / "a.txt"
    src.write_text(_text(500), encoding="utf-8")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "toksmith",
            "train",
            str(src),
            "--vocab-size",
            "300",
            "-q",
            "-o",
            str(tmp_path / "t.json"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert all("warning" in line for line in r.stderr.splitlines()), r.stderr  # no bar, no summary
    assert toksmith.load(tmp_path / "t.json").n_vocab <= 300
