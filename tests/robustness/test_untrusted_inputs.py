"""Issue 36 (items 7-9, 12): untrusted files get a documented exception naming the file and
the problem, early and with bounded memory: endless streams and huge files are refused before
they are read, headers are checked against the file's size before anything is allocated, a
chat shard is checked before it is inflated, and the CLI never prints a traceback."""

import io
import json
import os
import subprocess
import sys
import zipfile

import pytest

import toksmith
from toksmith import MAX_TOKENIZER_FILE_BYTES, TokenizerFileError
from toksmith.cli import main

PYTHONPATH = os.pathsep.join(p for p in sys.path if p)


def _err(capsys):
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(
    "loader",
    [
        toksmith.load,
        toksmith.load_any,
        toksmith.from_huggingface,
        lambda p: toksmith.from_tiktoken(p, pattern="gpt2"),
    ],
)
def test_endless_and_huge_files_are_refused_before_reading(tmp_path, loader):
    """Was: /dev/zero and a sparse 8 GiB file were read whole (3.7 GB RSS, then MemoryError)."""
    if os.path.exists("/dev/zero"):
        with pytest.raises(OSError, match="device"):
            loader("/dev/zero")
    sparse = tmp_path / "tokenizer.json"
    with open(sparse, "wb") as f:
        f.write(b'{"x": 1}')
        f.truncate(MAX_TOKENIZER_FILE_BYTES + 1)
    with pytest.raises(
        TokenizerFileError,
        match=r"maximum size of a tokenizer file.*1024 MiB|tokenizer.json.*maximum",
    ):
        loader(sparse)


def test_a_huge_rank_names_the_file(tmp_path):
    """Was: "Exceeds the limit (4300 digits)", naming no file."""
    p = tmp_path / "r.tiktoken"
    p.write_text("YQ== " + "9" * 5000 + "\n")
    with pytest.raises(
        TokenizerFileError, match=r"r\.tiktoken: line 1: rank 9+\.\.\. is too large"
    ):
        toksmith.from_tiktoken(p, pattern="gpt2")


@pytest.fixture(scope="module")
def tok_file(tmp_path_factory, two_toks):
    p = tmp_path_factory.mktemp("untrusted") / "tok.json"
    two_toks[0].save(p)
    return p


def test_decode_deeply_nested_json(tok_file, tmp_path, capsys):
    """Was: a RecursionError traceback."""
    p = tmp_path / "ids.json"
    p.write_text("[" * 100000 + "]" * 100000)
    assert main(["decode", "-t", str(tok_file), str(p)]) == 1
    assert "ids.json" in _err(capsys)


def _npy_header(count, dtype="<u2"):
    np = pytest.importorskip("numpy")
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": dtype, "fortran_order": False, "shape": (count,)}
    )
    return buf.getvalue()


@pytest.mark.parametrize("count", [1 << 40, 10**20])
def test_decode_npy_claiming_more_ids_than_it_holds(tok_file, tmp_path, capsys, count):
    """Was: a MemoryError traceback (2**40 ids) before the size was checked."""
    p = tmp_path / "ids.npy"
    p.write_bytes(_npy_header(count) + b"\x00" * 64)
    out = tmp_path / "out.txt"
    assert main(["decode", "-t", str(tok_file), str(p), "-o", str(out)]) == 1
    err = _err(capsys)
    assert "ids.npy" in err and "truncated" in err, err
    assert not out.exists()


def test_decode_npy_streams_with_bounded_memory(tok_file, tmp_path):
    """Was: the .npy was loaded whole (1.4 GB RSS for 1 GB). A 96 MB file decodes in a child
    whose private memory (RLIMIT_DATA) may grow by 64 MB only: loading it whole takes 96 MB."""
    np = pytest.importorskip("numpy")
    p = tmp_path / "ids.npy"
    n = 48 << 20
    with open(p, "wb") as f:
        f.write(_npy_header(n))
        f.truncate(f.tell() + 2 * n)  # id 0, sparse: nothing to write
    code = (
        "import resource, sys\n"
        "from toksmith.cli import main\n"
        "import numpy\n"
        "soft = int(open('/proc/self/statm').read().split()[5]) * 4096\n"
        "resource.setrlimit(resource.RLIMIT_DATA, (soft + (64 << 20), resource.RLIM_INFINITY))\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, "decode", "-t", str(tok_file), str(p), "-o", os.devnull],
        env=dict(os.environ, PYTHONPATH=PYTHONPATH),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    del np


# ------------------------------------------------------------------ chat shards


@pytest.fixture
def rendered(tmp_path):
    np = pytest.importorskip("numpy")
    from toksmith.presets.nanochat.chat_shards import ShardWriter

    d = tmp_path / "r"
    w = ShardWriter(str(d), n_vocab=300, shard_size=10)
    w.add([1, 2, 3], [0, 1, 1], line=1)
    w.add([4, 5], [1, 0], line=2)
    w.close()
    del np
    return d


def _iter(d):
    from toksmith.presets.nanochat.chat_shards import iter_rendered

    return list(iter_rendered(str(d)))


def _rewrite(d, **arrays):
    np = pytest.importorskip("numpy")
    base = dict(
        ids=np.array([1, 2, 3, 4, 5], np.uint16),
        mask=np.array([0, 1, 1, 1, 0], np.uint8),
        offsets=np.array([0, 3, 5], np.int64),
    )
    base.update(arrays)
    with open(d / "shard_00000.npz", "wb") as f:
        np.savez(f, **base)


def test_shard_reader_accepts_the_writer(rendered):
    got = [(i.tolist(), m.tolist()) for i, m in _iter(rendered)]
    assert got == [([1, 2, 3], [0, 1, 1]), ([4, 5], [1, 0])]
    _rewrite(rendered)  # the same arrays, rewritten: still valid
    assert len(_iter(rendered)) == 2


@pytest.mark.parametrize(
    "bad",
    [
        dict(ids=["1", "2", "3", "4", "5"]),
        dict(ids=[1.0, 2.0, 3.0, 4.0, 5.0], dtype="float16"),
        dict(ids=[True] * 5),
        dict(mask=[0.0, 1.0, 1.0, 1.0, 0.0]),
        dict(mask=[0, 2, 1, 1, 0]),
        dict(ids=[1, 2, 3, 4, 300]),
        dict(ids=[1, 2, 3, 4, 5], dtype="uint32"),
    ],
)
def test_shard_arrays_of_wrong_types_are_refused(rendered, bad):
    """Was: ids as strings, float16 or bool and masks as floats were returned as valid."""
    np = pytest.importorskip("numpy")
    key = "ids" if "ids" in bad else "mask"
    dtype = bad.get("dtype")
    arr = np.array(bad[key], dtype=dtype) if dtype else np.array(bad[key])
    if key == "ids" and arr.dtype.kind in "iu" and dtype is None:
        arr = arr.astype(np.uint16)
    _rewrite(rendered, **{key: arr})
    with pytest.raises(ValueError, match="shard_00000.npz"):
        _iter(rendered)


def test_shard_that_inflates_beyond_the_manifest_is_refused_early(rendered):
    """Was: a 2 MB shard inflating to 2 GiB was inflated fully (14-57 s) before rejection."""
    np = pytest.importorskip("numpy")
    with zipfile.ZipFile(rendered / "shard_00000.npz", "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("ids.npy", "w", force_zip64=True) as f:
            f.write(_npy_header(64 << 20, "<u2"))
            block = bytes(1 << 20)
            for _ in range(128):
                f.write(block)
        for name, arr in (("mask", np.zeros(5, np.uint8)), ("offsets", np.array([0, 3, 5]))):
            buf = io.BytesIO()
            np.save(buf, arr)
            zf.writestr(name + ".npy", buf.getvalue())
    with pytest.raises(ValueError, match="declares .* bytes, more than"):
        _iter(rendered)


def test_shard_header_claiming_huge_counts(rendered):
    """Was: OverflowError for a header claiming 10**20 elements."""
    with zipfile.ZipFile(rendered / "shard_00000.npz", "w") as zf:
        for name in ("ids", "mask", "offsets"):
            zf.writestr(name + ".npy", _npy_header(10**20) + b"\x00" * 10)
    with pytest.raises(ValueError, match="shard_00000.npz is not a rendered shard"):
        _iter(rendered)


@pytest.mark.parametrize(
    "change",
    [
        {"dtype": "float16"},
        {"dtype": "uint16", "n_vocab": 70000},
        {"n_vocab": "300"},
        {"n_vocab": 0},
        {"shards": [{"file": "shard_00000.npz"}]},
    ],
)
def test_manifest_fields_are_checked(rendered, change):
    m = json.loads((rendered / "manifest.json").read_text())
    m.update(change)
    (rendered / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(ValueError, match="manifest.json"):
        _iter(rendered)


def test_deeply_nested_manifest(rendered):
    """Was: RecursionError."""
    (rendered / "manifest.json").write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(ValueError, match="manifest.json.*nested too deeply"):
        _iter(rendered)
