"""Chunk counts as a mergeable artifact: count_chunks, ChunkCounts (file, +), train from them."""

import gzip
import json
import os
import sys
from pathlib import Path

import pytest

import toksmith
from toksmith import ChunkCounts, count_chunks
from toksmith.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "corpora"
FILES = [DATA / f"{n}_slice.txt" for n in ("english", "python", "cpp")]
PINNED = ["def ", "the", "#include"]


def _reference_counts(texts, pattern, pinned):
    """Counts by the reference splitter (regex), cut around pinned tokens leftmost-longest."""
    import re as stdre

    regex = pytest.importorskip("regex")
    pat = toksmith.PATTERNS.get(pattern, pattern)
    cut = stdre.compile("|".join(stdre.escape(p) for p in sorted(pinned, key=len, reverse=True)))
    out = {}
    for t in texts:
        for seg in cut.split(t) if pinned else [t]:
            for m in regex.finditer(pat, seg):
                if m.group():
                    k = m.group().encode()
                    out[k] = out.get(k, 0) + 1
    return out


def test_counts_equal_the_reference():
    texts = [p.read_text(encoding="utf-8") for p in FILES]
    c = count_chunks(FILES, pattern="gpt2", pinned_tokens=PINNED)
    assert c.to_dict() == _reference_counts(texts, "gpt2", PINNED)
    assert c.stats["bytes"] == sum(len(t.encode()) for t in texts)
    assert c.sources == [str(p) for p in FILES]


def test_merged_per_file_counts_train_the_merges_of_the_files(tmp_path):
    parts = []
    for p in FILES:
        f = tmp_path / (p.name + ".counts")
        count_chunks(p, pattern="cl100k", pinned_tokens=PINNED).save(f)
        parts.append(ChunkCounts.load(f))
    merged = parts[0] + parts[1] + parts[2]
    assert merged == sum(parts) == count_chunks(FILES, pattern="cl100k", pinned_tokens=PINNED)
    got = toksmith.train_from_counts(
        merged, vocab_size=1200, special_tokens=["<|eot|>"], pinned_tokens=PINNED
    )
    want = toksmith.train(
        FILES, vocab_size=1200, pattern="cl100k", pinned_tokens=PINNED, special_tokens=["<|eot|>"]
    )
    assert got.merges() == want.merges()
    assert got.pinned_tokens == want.pinned_tokens
    assert [got.decode([i]) for i in range(got.n_vocab)] == [
        want.decode([i]) for i in range(want.n_vocab)
    ]


def test_adding_counts_of_other_patterns_or_pinned_tokens_is_refused():
    a = count_chunks(FILES[0], pattern="gpt2")
    with pytest.raises(ValueError, match="different split patterns"):
        a + count_chunks(FILES[0], pattern="cl100k")
    with pytest.raises(ValueError, match="different pinned tokens"):
        a + count_chunks(FILES[0], pattern="gpt2", pinned_tokens=["the"])
    with pytest.raises(ValueError, match="not the pattern these counts"):
        toksmith.train_from_counts(a, vocab_size=300, pattern="cl100k")


def test_the_file_format_is_as_documented(tmp_path):
    c = count_chunks(FILES[0], pattern="gpt2", pinned_tokens=["the"])
    f = tmp_path / "a.counts"
    c.save(f)
    data = f.read_bytes()
    assert data[:8] == b"TKSCNT\x00\x01"
    h = int.from_bytes(data[8:16], "little")
    head = json.loads(data[16 : 16 + h])
    n, a = head["n_chunks"], head["arena_bytes"]
    assert head["pinned"] == ["the"] and n == len(c)
    assert len(data) == 16 + h + 8 * (n + 1) + a + 8 * n
    o = 16 + h
    offs = [int.from_bytes(data[o + 8 * k : o + 8 * k + 8], "little") for k in range(n + 1)]
    arena = data[o + 8 * (n + 1) : o + 8 * (n + 1) + a]
    cs = data[o + 8 * (n + 1) + a :]
    got = {
        arena[offs[k] : offs[k + 1]]: int.from_bytes(cs[8 * k : 8 * k + 8], "little")
        for k in range(n)
    }
    assert got == c.to_dict()
    assert ChunkCounts.load(f) == c


@pytest.mark.parametrize(
    "damage,match",
    [
        (lambda d: d[:-1], "cut short"),
        (lambda d: d + b"\x00", "cut short or has bytes appended"),
        (lambda d: b"NOTCOUNT" + d[8:], "magic"),
        (lambda d: d[:7] + b"\x09" + d[8:], "format version 9"),
        (lambda d: d[:8] + (1 << 40).to_bytes(8, "little") + d[16:], "header claims"),
    ],
)
def test_a_damaged_file_is_refused(tmp_path, damage, match):
    f = tmp_path / "a.counts"
    count_chunks(FILES[0], pattern="gpt2").save(f)
    f.write_bytes(damage(f.read_bytes()))
    with pytest.raises(ValueError, match=match):
        ChunkCounts.load(f)


def test_bad_offsets_are_refused_natively():
    c = count_chunks(FILES[0], pattern="gpt2")
    offs = bytearray(c.offsets)
    offs[8:16] = (len(c.arena) + 5).to_bytes(8, "little")  # past its neighbour
    bad = ChunkCounts(c.pattern, c.pinned, c.arena, bytes(offs), c.counts)
    with pytest.raises(ValueError, match="offsets must not decrease"):
        bad + c


def test_train_from_counts_dicts_check_natively_with_the_same_merges():
    texts = [p.read_text(encoding="utf-8") for p in FILES]
    ref = _reference_counts(texts, "gpt2", [])
    as_str = {k.decode(): v for k, v in ref.items()}

    class Count(int):  # not a plain int: takes the item-by-item path
        pass

    slow = {k: Count(v) for k, v in ref.items()}
    kw = dict(vocab_size=700, pattern="gpt2", pinned_tokens=PINNED)
    a = toksmith.train_from_counts(ref, **kw)
    b = toksmith.train_from_counts(as_str, **kw)
    c = toksmith.train_from_counts(slow, **kw)
    assert a.merges() == b.merges() == c.merges()
    d = toksmith.train_from_counts(as_str, vocab_size=700, pattern="gpt2")
    assert d.merges() == toksmith.train(FILES, vocab_size=700, pattern="gpt2").merges()
    with pytest.raises(ValueError, match="pairs add up to"):
        toksmith.train_from_counts({"ab": 2**62, "cd": 2**62}, vocab_size=300)
    with pytest.raises(TypeError, match="must be an int"):
        toksmith.train_from_counts({"ab": True}, vocab_size=300)
    with pytest.raises(ValueError, match="between 0 and"):
        toksmith.train_from_counts({"ab": -1}, vocab_size=300)


def test_a_count_resumes_from_the_inputs_it_finished(tmp_path, monkeypatch):
    parts = tmp_path / "parts"
    whole = count_chunks(FILES, pattern="gpt2", resume_dir=parts)
    assert len(os.listdir(parts)) == len(FILES)
    # a rerun reads the saved counts (counting again would fail here)
    import toksmith.counts as counts_mod

    def no_counting(*a, **k):
        raise AssertionError("counted again")

    monkeypatch.setattr(counts_mod.InputCounter, "add", no_counting)
    assert count_chunks(FILES, pattern="gpt2", resume_dir=parts) == whole
    # other settings are counted anew
    with pytest.raises(AssertionError, match="counted again"):
        count_chunks(FILES, pattern="cl100k", resume_dir=parts)


def test_an_interrupted_cli_count_resumes(tmp_path, monkeypatch):
    import toksmith.counts as counts_mod

    out = tmp_path / "all.counts"
    real_add = counts_mod.InputCounter.add
    calls = []

    def fail_on_third(self, path):
        calls.append(path)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real_add(self, path)

    monkeypatch.setattr(counts_mod.InputCounter, "add", fail_on_third)
    args = ["count", *map(str, FILES), "-o", str(out), "--pattern", "gpt2", "-q"]
    assert main(args) == 130
    assert not out.exists() and len(os.listdir(str(out) + ".parts")) == 2
    calls.clear()
    monkeypatch.setattr(counts_mod.InputCounter, "add", real_add)
    assert main(args) == 0
    assert not os.path.exists(str(out) + ".parts")
    assert ChunkCounts.load(out) == count_chunks(FILES, pattern="gpt2")


def test_cli_count_then_train_from_counts(tmp_path):
    outs = []
    for i, p in enumerate(FILES):
        gz = tmp_path / f"{i}.txt.gz"
        gz.write_bytes(gzip.compress(p.read_bytes()))
        outs.append(str(tmp_path / f"{i}.counts"))
        assert main(["count", str(gz), "-o", outs[-1], "--pinned", "the", "-q"]) == 0
    tok_file = tmp_path / "tok.json"
    assert (
        main(
            [
                "train",
                "--from-counts",
                *outs,
                "--vocab-size",
                "800",
                "-o",
                str(tok_file),
                "--no-progress",
            ]
        )
        == 0
    )
    want = toksmith.train(FILES, vocab_size=800, pinned_tokens=["the"])
    assert toksmith.load(tok_file).merges() == want.merges()


def test_ray_engine_counts_as_the_local_one(tmp_path):
    ray = pytest.importorskip("ray")
    local = count_chunks(FILES, pattern="gpt2", pinned_tokens=["the"])
    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        got = count_chunks(FILES, pattern="gpt2", pinned_tokens=["the"], engine="ray")
    finally:
        ray.shutdown()
    assert got == local


def test_ray_engine_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r"toksmith\[ray\]"):
        count_chunks(FILES, engine="ray")
