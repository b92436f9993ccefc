"""Issue 36 item 4: the wordbpe preset's CSV and JSON outputs are saved atomically: a write that
fails part-way keeps the old file (no cut file, no temporary left), and ``run``'s four files
appear together or not at all."""

import csv
import errno
import os

import pytest

from toksmith.presets import wordbpe

TEXTS = ["the lower lowest newer newest wider widest " * 30, "a quick brown fox jumps " * 20]


def _hidden(folder):
    return sorted(e for e in os.listdir(folder) if e.startswith("."))


class DiskFull(OSError):
    def __init__(self):
        super().__init__(errno.ENOSPC, "No space left on device")


def _fail_after(monkeypatch, rows):
    """csv writers whose writerow fails after ``rows`` rows (a full disk part-way)."""
    real = csv.writer

    class Writer:
        def __init__(self, f, *a, **k):
            self.w = real(f, *a, **k)
            self.n = 0

        def writerow(self, row):
            self.n += 1
            if self.n > rows:
                raise DiskFull
            return self.w.writerow(row)

        def writerows(self, rs):
            for r in rs:
                self.writerow(r)

    monkeypatch.setattr(csv, "writer", Writer)


def test_a_failing_counts_csv_keeps_the_old_file(tmp_path, monkeypatch):
    dest = tmp_path / "counts.csv"
    wordbpe.write_counts_csv(dest, [("old", 1)], ("word", "count"))
    old = dest.read_bytes()
    _fail_after(monkeypatch, 3)
    with pytest.raises(OSError, match="No space"):
        wordbpe.write_counts_csv(dest, [(f"w{i}", i) for i in range(100)], ("word", "count"))
    assert dest.read_bytes() == old and _hidden(tmp_path) == []
    monkeypatch.undo()
    wordbpe.write_counts_csv(dest, [("new", 2)], ("word", "count"))
    assert dest.read_text(encoding="utf-8").splitlines() == ["word,count", "new,2"]


def test_a_failing_embeddings_csv_keeps_the_old_file(tmp_path, monkeypatch):
    np = pytest.importorskip("numpy")
    dest = tmp_path / "emb.csv"
    wordbpe.write_embeddings_csv(dest, ["a"], np.ones((1, 2), np.float32), 2)
    old = dest.read_bytes()
    _fail_after(monkeypatch, 2)
    with pytest.raises(OSError, match="No space"):
        wordbpe.write_embeddings_csv(
            dest, [f"t{i}" for i in range(50)], np.zeros((50, 2), np.float32), 2
        )
    assert dest.read_bytes() == old and _hidden(tmp_path) == []


def test_run_writes_its_four_files_as_a_set(tmp_path, monkeypatch):
    """A failure while writing the third file: the folder keeps the earlier run's four files,
    byte for byte, and no staging folder. Was: the first two files of the new run were already
    in place beside the old embeddings and tokenizer."""
    out = tmp_path / "out"
    first = wordbpe.run(TEXTS, out, num_merges=20, dim=3, seed=1, sample=None)
    before = {n: (out / n).read_bytes() for n in os.listdir(out)}
    assert len(before) == 4 and set(first["files"].values()) == {str(out / n) for n in before}
    real = wordbpe.write_embeddings_csv

    def failing(*a, **k):
        raise DiskFull

    monkeypatch.setattr(wordbpe, "write_embeddings_csv", failing)
    with pytest.raises(OSError, match="No space"):
        wordbpe.run(TEXTS[::-1], out, num_merges=40, dim=3, seed=2, sample=None)
    assert {n: (out / n).read_bytes() for n in os.listdir(out)} == before
    monkeypatch.setattr(wordbpe, "write_embeddings_csv", real)
    second = wordbpe.run(TEXTS[::-1], out, num_merges=40, dim=3, seed=2, sample=None)
    assert sorted(os.listdir(out)) == sorted(before)
    assert wordbpe.load(second["files"]["tokenizer"]).tokens == second["tokenizer"].tokens
    assert (out / "corpus_final_token_stats.csv").read_bytes() != before[
        "corpus_final_token_stats.csv"
    ]


def test_word_tokenizer_save_keeps_the_old_file(tmp_path, monkeypatch):
    """WordTokenizer.save (checked here again, with the other outputs of the preset)."""
    tok = wordbpe.train(TEXTS, num_merges=10)
    dest = tmp_path / "t.json"
    tok.save(dest)
    old = dest.read_bytes()
    real = os.replace

    def replace(src, dst, *a, **k):
        raise DiskFull

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="No space"):
        wordbpe.train(TEXTS[::-1], num_merges=20).save(dest)
    monkeypatch.setattr(os, "replace", real)
    assert dest.read_bytes() == old and _hidden(tmp_path) == []
