"""Issue 36 (items 3-6): a save never loses the old file. Saving through a symbolic link
replaces the link's target (the link stays a link); a full disk (RLIMIT_FSIZE), an error or a
SIGKILL during a save leaves the old file or set of files, never a mix or a cut file; stale
temporaries of killed saves are removed by the next save; devices and pipes are refused as
CWGT destinations."""

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import toksmith
from toksmith._fileio import STAGING_PREFIX, atomic_write
from toksmith.files.gpt2 import read_gpt2_files, save_gpt2_files
from toksmith.files.huggingface import save_huggingface

PYTHONPATH = os.pathsep.join(p for p in sys.path if p)


def _hidden(folder):
    return sorted(e for e in os.listdir(folder) if e.startswith("."))


def test_save_through_a_symlink_replaces_the_target(two_toks, tmp_path):
    """Was: the save wrote through the link (a full disk cut the blob to 64 KiB)."""
    a, b = two_toks
    blobs = tmp_path / "blobs"
    snap = tmp_path / "snapshots" / "x"
    blobs.mkdir()
    snap.mkdir(parents=True)
    save_huggingface(a, tmp_path / "orig")
    (blobs / "h1").write_bytes((tmp_path / "orig" / "tokenizer.json").read_bytes())
    os.symlink("../../blobs/h1", snap / "tokenizer.json")
    save_huggingface(b, snap)
    assert os.path.islink(snap / "tokenizer.json")
    assert os.readlink(snap / "tokenizer.json") == "../../blobs/h1"
    got = toksmith.from_huggingface(blobs / "h1")
    assert got.encode(WORD) == b.encode(WORD)
    # a single-file save through a link, too
    link = tmp_path / "tok.json"
    os.symlink("blobs/h2", link)
    a.save(link)
    assert os.path.islink(link) and (blobs / "h2").is_file()
    assert toksmith.load(link).encode(WORD) == a.encode(WORD)
    assert _hidden(blobs) == [] and _hidden(snap) == []


WORD = "lowest newer tokens"


def _child(code, *args, limit_fsize=None):
    pre = ""
    if limit_fsize is not None:
        pre = (
            "import resource, signal\n"
            "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
            f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit_fsize}, {limit_fsize}))\n"
        )
    env = dict(os.environ, PYTHONPATH=PYTHONPATH)
    return subprocess.run(
        [sys.executable, "-c", pre + textwrap.dedent(code), *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("how", ["save", "save_gpt2_files", "save_huggingface", "wordbpe"])
def test_a_full_disk_leaves_the_old_file(two_toks, tmp_path, how):
    """Disk full (RLIMIT_FSIZE: EFBIG, as ENOSPC) during a save: the old file stays whole and
    no temporary is left. Was: the file was cut where the write failed."""
    a, _ = two_toks
    dest = tmp_path / "t"
    if how == "save":
        a.save(dest)
    elif how == "save_gpt2_files":
        save_gpt2_files(a, dest)
    elif how == "save_huggingface":
        save_huggingface(a, dest)
    before = {p: p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()}
    code = f"""
        import sys, warnings
        import toksmith
        from toksmith.files.gpt2 import save_gpt2_files
        from toksmith.files.huggingface import save_huggingface
        from toksmith.presets import wordbpe
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tok = toksmith.train_from_iterator(["x" * 3000 + " abc " * 9000], vocab_size=2000,
                                               pattern="gpt2")
        how, dest = {how!r}, sys.argv[1]
        try:
            if how == "save":
                tok.save(dest)
            elif how == "save_gpt2_files":
                save_gpt2_files(tok, dest)
            elif how == "save_huggingface":
                save_huggingface(tok, dest)
            else:
                w = wordbpe.train([" ".join(map(str, range(3000)))], num_merges=500)
                w.save(dest)
        except OSError as e:
            print("refused", e.errno)
    """
    if how == "wordbpe":
        dest.write_text("old")
        before = {dest: b"old"}
    r = _child(code, dest, limit_fsize=2048)
    assert "refused" in r.stdout, r.stdout + r.stderr
    after = {p: p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()}
    assert after == before
    folder = dest if dest.is_dir() else tmp_path
    assert _hidden(folder) == []


def test_dev_full_as_output_of_the_cli(two_toks, tmp_path):
    """`toksmith decode -o /dev/full`: one line on stderr, no traceback; a device is written in
    place (not replaced)."""
    if not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full")
    a, _ = two_toks
    tok = tmp_path / "t.json"
    a.save(tok)
    ids = tmp_path / "ids.txt"
    ids.write_text(" ".join(map(str, a.encode(WORD * 2000))))
    r = _child(
        "import sys; from toksmith.cli import main; sys.exit(main(sys.argv[1:]))",
        "decode",
        "-t",
        tok,
        ids,
        "-o",
        "/dev/full",
    )
    assert r.returncode == 1
    assert "Traceback" not in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_atomic_write_error_keeps_the_old_file(tmp_path):
    dest = tmp_path / "f"
    dest.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_write(dest, "w") as f:
            f.write("new")
            raise RuntimeError("boom")
    assert dest.read_text() == "old" and _hidden(tmp_path) == []


def test_stale_temporaries_are_removed_by_the_next_save(tmp_path):
    dest = tmp_path / "f"
    stale = tmp_path / ".f.0123abcd.tmp"
    stale.write_text("left by a killed save")
    other = tmp_path / ".f.tmp"  # not one of ours
    other.write_text("keep")
    with atomic_write(dest, "w") as f:
        f.write("x")
    assert not stale.exists() and other.exists()


def test_a_killed_set_save_is_finished_on_load(two_toks, tmp_path):
    """A save killed while moving its files: the complete staged set is moved into place by
    the next load of the folder (never the vocab of one tokenizer with the merges of another)."""
    a, b = two_toks
    save_gpt2_files(a, tmp_path)
    staged = tmp_path / "other"
    save_gpt2_files(b, staged)
    stage = tmp_path / (STAGING_PREFIX + "deadbeef")
    stage.mkdir()
    # as if killed after vocab.json was moved: only merges.txt is left in the staging folder
    os.replace(staged / "vocab.json", tmp_path / "vocab.json")
    os.replace(staged / "merges.txt", stage / "merges.txt")
    (stage / "COMPLETE.json").write_text(json.dumps({"files": ["vocab.json", "merges.txt"]}))
    spec = read_gpt2_files(tmp_path / "vocab.json", tmp_path / "merges.txt")
    got = toksmith.Tokenizer.from_spec(spec) if hasattr(toksmith.Tokenizer, "from_spec") else None
    assert not stage.exists()
    assert (tmp_path / "merges.txt").read_bytes() == (
        _gpt2_bytes(b, tmp_path / "ref")["merges.txt"]
    )
    del got
    # an incomplete staging folder is removed, the old set kept
    stage.mkdir()
    (stage / "vocab.json").write_text("{}")
    save_gpt2_files(a, tmp_path)
    assert _hidden(tmp_path) == []


@pytest.mark.parametrize("marker", [b"", b'{"files": ', b"[]", b'{"files": 5}'])
def test_a_set_save_killed_while_marking_it_complete_leaves_the_old_set(two_toks, tmp_path, marker):
    """A kill while the completion marker was written left it empty: the next load failed on
    it (a JSONDecodeError). An unreadable marker is a set that was not complete: removed, and
    the old files are kept."""
    a, b = two_toks
    save_gpt2_files(a, tmp_path)
    before = _gpt2_bytes(a, tmp_path / "ref")
    stage = tmp_path / (STAGING_PREFIX + "cafef00d")
    stage.mkdir()
    _gpt2_bytes(b, stage)
    (stage / "COMPLETE.json").write_bytes(marker)
    spec = read_gpt2_files(tmp_path / "vocab.json", tmp_path / "merges.txt")
    assert toksmith.Tokenizer.from_spec(spec).encode(WORD) == a.encode(WORD)
    assert not stage.exists()
    for name, data in before.items():
        assert (tmp_path / name).read_bytes() == data


def _gpt2_bytes(tok, folder):
    save_gpt2_files(tok, folder)
    return {n: (folder / n).read_bytes() for n in ("vocab.json", "merges.txt")}


def _save(how, tok, dest):
    if how == "gpt2":
        save_gpt2_files(tok, dest)
    elif how == "huggingface":
        save_huggingface(tok, dest)
    else:
        tok.save(dest)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.parametrize("how", ["gpt2", "huggingface", "json"])
def test_sigkill_during_saves_never_mixes_files(two_toks, tmp_path, how):
    """SIGKILL a process that saves two tokenizers in turn, at random moments (8 kills each):
    the files are always one tokenizer's, whole, and the next save removes what the kills
    left. Was: vocab.json of one tokenizer beside merges.txt of the other in 6 of 60 kills."""
    a, b = two_toks
    dest = tmp_path / ("t.json" if how == "json" else "d")
    _save(how, a, dest)
    want = [a.encode(WORD), b.encode(WORD)]
    assert want[0] != want[1]
    rng = random.Random(36)
    for _ in range(8):
        pid = os.fork()
        if pid == 0:  # the child saves until it is killed
            try:
                n = 0
                while True:
                    _save(how, (b, a)[n % 2], dest)
                    n += 1
            finally:
                os._exit(1)
        time.sleep(rng.uniform(0.005, 0.05))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        if how == "json":
            tok = toksmith.load(dest)
        elif how == "gpt2":
            tok = toksmith.load_any(dest)
        else:
            tok = toksmith.from_huggingface(dest)
        assert tok.encode(WORD) in want
        if how == "gpt2":  # both files of the same tokenizer
            vocab = json.loads((dest / "vocab.json").read_text(encoding="utf-8"))
            assert len(vocab) == tok.n_vocab
    _save(how, a, dest)
    # what the kills left is removed, but for a temporary killed before its first byte (a
    # writer's own for a moment: removed by a save 10 s later)
    folder = tmp_path if how == "json" else dest
    assert [e for e in _hidden(folder) if _size(folder / e)] == []


def _size(p):
    return p.stat().st_size if p.is_file() else len(os.listdir(p))


def test_write_cwgt_refuses_devices_and_pipes(tmp_path):
    np = pytest.importorskip("numpy")
    from toksmith.presets.calm import cwgt

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for dest in (fifo, "/dev/null"):
        with pytest.raises(OSError, match="not a regular file"):
            cwgt.write_cwgt(
                dest,
                cwgt.CWGTHeader(d_model=16, n_layers=1, dt_rank=1),
                cwgt.CWGTMetadata("shell", "BOS;ATN;CMD:input", "| ;"),
                np.arange(4, dtype=np.float32),
            )
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
    assert _hidden(tmp_path) == []


def test_byte_tokenizer_and_shard_writer_save_atomically(tmp_path, monkeypatch):
    """calm ByteTokenizer.save and ShardWriter wrote in place: a failing write cut the file."""
    pytest.importorskip("numpy")
    from toksmith.presets.calm import ByteTokenizer

    dest = tmp_path / "calm.json"
    ByteTokenizer().save(dest)
    good = dest.read_bytes()
    import json as json_mod

    def broken(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(json_mod, "dumps", broken)
    with pytest.raises(OSError):
        ByteTokenizer().save(dest)
    monkeypatch.undo()
    assert dest.read_bytes() == good and _hidden(tmp_path) == []


@pytest.mark.parametrize("command", ["encode", "decode"])
def test_a_full_disk_keeps_the_old_cli_output(two_toks, tmp_path, command):
    """`toksmith encode/decode -o FILE` on a full disk (RLIMIT_FSIZE): one line on stderr, the
    old FILE whole and no temporary left. Was: a partial file under the final name."""
    a, _ = two_toks
    tok = tmp_path / "t.json"
    a.save(tok)
    text = tmp_path / "in.txt"
    text.write_text(WORD * 3000, encoding="utf-8")
    ids = tmp_path / "ids.txt"
    ids.write_text(" ".join(map(str, a.encode(WORD * 3000))), encoding="utf-8")
    out = tmp_path / "out"
    out.write_text("old")
    source = text if command == "encode" else ids
    r = _child(
        "import sys; from toksmith.cli import main; sys.exit(main(sys.argv[1:]))",
        command,
        "-t",
        tok,
        source,
        "-o",
        out,
        limit_fsize=20000,
    )
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    assert out.read_text() == "old" and _hidden(tmp_path) == []
