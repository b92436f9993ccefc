"""Issue 36 item 4: the dataset shard writers (bin, megatron, datatrove, npy), the manifest and
the wordbpe outputs save atomically. A failing write leaves no partial file under a final name
(and the files written before it whole); a shard set appears only when complete; SIGKILL at
random moments of a dataset run never leaves a cut or mixed shard, and the rerun resumes to the
same bytes as an uninterrupted run."""

import errno
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from types import SimpleNamespace

import pytest

from toksmith._fileio import STAGING_PREFIX
from toksmith.dataset import FORMATS, iter_documents, pipeline, read_shard, tokenize_dataset

np = pytest.importorskip("numpy")

PYTHONPATH = os.pathsep.join(p for p in sys.path if p)
DOCS = [
    f"document {i}: " + " ".join(f"w{(i * 7 + k) % 97}" for k in range(i % 40 + 5))
    for i in range(600)
]


@pytest.fixture
def inputs(tmp_path):
    path = tmp_path / "in" / "docs.jsonl"
    path.parent.mkdir()
    with open(path, "w", encoding="utf-8") as f:
        for d in DOCS:
            f.write(json.dumps({"text": d}) + "\n")
    return [str(path)]


def _listing(folder):
    return {
        os.path.relpath(os.path.join(d, n), folder): open(os.path.join(d, n), "rb").read()
        for d, _, names in os.walk(folder)
        for n in names
    }


def _final_files(m_or_progress):
    return [n for e in m_or_progress for s in e["shards"] for n in s["files"]]


class DiskFull(OSError):
    def __init__(self):
        super().__init__(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_failing_shard_write_leaves_no_partial_set(two_toks, inputs, tmp_path, monkeypatch, fmt):
    """The second shard's files fail after they were written in part: the first shard stays
    whole, nothing of the second appears under a final name and no staging is left; the rerun
    gives the bytes of an uninterrupted run. Was: the ids file was moved into place before its
    index was written (a shard set without its index)."""
    tok = two_toks[0]
    kw = dict(format=fmt, eos=None, shard_tokens=800, progress=False)
    full = str(tmp_path / "full")
    tokenize_dataset(inputs, tok, full, **kw)
    module = FORMATS[fmt]
    real = module.Writer._finish
    calls = {"n": 0}

    def failing(self):
        calls["n"] += 1
        real(self)  # every file of the set written ...
        if calls["n"] == 2:
            raise DiskFull  # ... and the disk full before the set is complete

    monkeypatch.setattr(module.Writer, "_finish", failing)
    out = str(tmp_path / "out")
    with pytest.raises(OSError, match="No space"):
        tokenize_dataset(inputs, tok, out, **kw)
    monkeypatch.undo()
    names = sorted(os.listdir(out))
    first = sorted(module.Writer.files(SimpleNamespace(name="x")))  # the names a set has
    assert [n for n in names if n.startswith(".") and n != pipeline.PROGRESS_DIR] == []
    shards = [n for n in names if not n.startswith(".")]
    assert len(shards) == len(first), shards  # the first shard only, all of its files
    read_shard(os.path.join(out, shards[0]), fmt)
    m = tokenize_dataset(inputs, tok, out, **kw)
    want = _listing(full)
    got = _listing(out)
    assert got.keys() == want.keys()
    for name in want:
        if name != pipeline.MANIFEST:
            assert got[name] == want[name], name
    assert m["tokens"] == json.loads(want[pipeline.MANIFEST])["tokens"]


def test_a_failing_manifest_write_keeps_the_old_manifest(two_toks, inputs, tmp_path, monkeypatch):
    """Was: the manifest's temporary file (manifest.json.toksmith-tmp) was left beside it."""
    tok = two_toks[0]
    out = str(tmp_path / "out")
    tokenize_dataset(inputs, tok, out, format="npy", shard_tokens=10**6, progress=False)
    before = _listing(out)
    more = tmp_path / "in" / "more.jsonl"
    more.write_text(json.dumps({"text": "one more"}) + "\n", encoding="utf-8")
    real = os.replace

    def replace(src, dst, *a, **k):
        if os.fspath(dst).endswith(pipeline.MANIFEST):
            raise DiskFull
        return real(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="No space"):
        tokenize_dataset(
            inputs + [str(more)], tok, out, format="npy", shard_tokens=10**6, progress=False
        )
    monkeypatch.undo()
    after = _listing(out)
    assert after[pipeline.MANIFEST] == before[pipeline.MANIFEST]
    assert [n for n in os.listdir(out) if n.startswith(".manifest") or "tmp" in n] == []


def test_a_full_disk_during_a_dataset_run(two_toks, inputs, tmp_path):
    """RLIMIT_FSIZE (EFBIG, as a full disk) in the middle of a shard: an OSError, no file cut
    under a final name, no staging folder left."""
    tok_path = tmp_path / "tok.json"
    two_toks[0].save(tok_path)
    out = tmp_path / "out"
    code = """
        import resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (6000, 6000))
        from toksmith.dataset import tokenize_dataset
        try:
            tokenize_dataset([sys.argv[1]], sys.argv[2], sys.argv[3], format="megatron",
                             shard_tokens=2500, progress=False)
        except OSError as e:
            print("refused", e.errno)
    """
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), inputs[0], str(tok_path), str(out)],
        env=dict(os.environ, PYTHONPATH=PYTHONPATH),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "refused" in r.stdout, r.stdout + r.stderr
    names = os.listdir(out)
    assert [n for n in names if n.startswith(STAGING_PREFIX)] == []
    bins = sorted(n for n in names if n.endswith(".bin"))
    idxs = sorted(n for n in names if n.endswith(".idx"))
    assert [n[:-4] for n in bins] == [n[:-4] for n in idxs]
    for n in bins:  # every set under its final name is whole
        read_shard(out / n, "megatron")


def _check_sets(out, fmt):
    """Every shard set under its final names is complete and readable (a set killed while
    being moved into place is finished by the reader)."""
    module = FORMATS[fmt]
    for n in sorted(os.listdir(out)):
        if n.startswith(".") or n == pipeline.MANIFEST or not n.endswith(".bin"):
            continue
        shard = read_shard(os.path.join(out, n), fmt)
        assert shard.offsets is not None and shard.offsets[-1] == len(shard.ids)
    stems = {n[: -len(".bin")] for n in os.listdir(out) if n.endswith(".bin")}
    for stem in stems:
        for name in module.Writer.files(SimpleNamespace(name=stem)):
            assert os.path.exists(os.path.join(out, name)), name


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_during_a_dataset_run(two_toks, inputs, tmp_path):
    """Kill a megatron run at random moments (5 kills), resume each time: the shard sets under
    their final names are always whole, and the finished run has the bytes of an uninterrupted
    one with nothing left over."""
    tok = two_toks[0]
    tok_path = tmp_path / "tok.json"
    tok.save(tok_path)
    kw = dict(format="megatron", shard_tokens=1000, progress=False)
    full = tmp_path / "full"
    tokenize_dataset(inputs, tok, str(full), **kw)
    out = tmp_path / "out"
    code = """
        import sys
        from toksmith.dataset import tokenize_dataset
        print("go", flush=True)
        tokenize_dataset([sys.argv[1]], sys.argv[2], sys.argv[3], format="megatron",
                         shard_tokens=1000, progress=False)
        print("done", flush=True)
    """
    rng = random.Random(36)
    kills = 0
    for _ in range(5):
        p = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(code), inputs[0], str(tok_path), str(out)],
            env=dict(os.environ, PYTHONPATH=PYTHONPATH),
            stdout=subprocess.PIPE,
            text=True,
        )
        assert p.stdout.readline() == "go\n"
        time.sleep(rng.uniform(0.05, 0.4))
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=60)
        p.stdout.close()
        kills += p.returncode == -signal.SIGKILL
        if out.exists():
            _check_sets(out, "megatron")
    assert kills  # at least one run was cut short
    m = tokenize_dataset(inputs, tok, str(out), **kw)
    want, got = _listing(full), _listing(out)
    assert got.keys() == want.keys()
    for name in want:
        if name != pipeline.MANIFEST:
            assert got[name] == want[name], name
    docs = [d.tolist() for d in iter_documents(out)]
    assert docs == [d.tolist() for d in iter_documents(full)]
    assert m["documents"] == len(DOCS)
