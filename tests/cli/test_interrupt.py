"""Ctrl-C in the command line: status 130, one line, the output left alone."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time

import pytest

import toksmith
from tests.conftest import child_takes_ctrl_c
from toksmith import _core

# Every test here presses Ctrl-C: see tests/conftest.py ctrl_c_raises.
pytestmark = pytest.mark.usefixtures("ctrl_c_raises")

BIG_MERGES = 200_000  # the big corpus gives them all: ~1.5 s of merging on a 2-core machine


_TABLE = bytes((b"abcdefghijklmnopqrstuvwxyz"[i % 26] if i % 9 else 32) for i in range(256))


def _random_text(n_bytes: int, seed: int) -> str:
    """Random lower-case words (a space about every 9th byte): every pair is about as frequent
    as the next, so the merge loop has a long way to go."""
    return random.Random(seed).randbytes(n_bytes).translate(_TABLE).decode("ascii")


def _counter(text: str):
    k = _core.ChunkCounter(toksmith.PATTERNS["gpt2"])
    k.add_texts([text])
    return k


def _timed(f, *args, **kwargs):
    t0 = time.perf_counter()
    out = f(*args, **kwargs)
    return out, time.perf_counter() - t0


@pytest.fixture(scope="module")
def big_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "big.txt"
    path.write_text(_random_text(3_000_000, 0), encoding="ascii")
    return path


@pytest.fixture(scope="module")
def big_text(big_file):
    return big_file.read_text(encoding="ascii")


@pytest.fixture(scope="module")
def big_ref(big_text):
    """(merges, seconds of the merge loop) of an uninterrupted run on the big corpus."""
    k = _counter(big_text)
    merges, seconds = _timed(k.train, BIG_MERGES)
    assert len(merges) == BIG_MERGES
    return merges, seconds


def test_cli_ctrl_c_exits_130_with_one_line_and_leaves_the_output_alone(
    big_file, big_ref, tmp_path
):
    _, whole_s = big_ref
    helped = subprocess.run(
        [sys.executable, "-m", "toksmith", "train", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert helped.returncode == 0
    assert (
        "--vocab-size" in helped.stdout
        and "--output" in helped.stdout
        and "--progress" in helped.stdout
    )
    out = tmp_path / "tok.json"
    out.write_text("an earlier tokenizer\n")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toksmith",
            "train",
            str(big_file),
            "--vocab-size",
            str(256 + BIG_MERGES),
            "--pattern",
            "gpt2",
            "--progress",
            "-o",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        preexec_fn=child_takes_ctrl_c,
    )
    err = bytearray()
    merging = threading.Event()

    def read_stderr():
        while True:
            chunk = os.read(proc.stderr.fileno(), 65536)
            if not chunk:
                return
            err.extend(chunk)
            if b"merging" in err:
                merging.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        assert merging.wait(60), bytes(err)
        time.sleep(0.2)
        assert proc.poll() is None, ("the CLI ended before it was interrupted", bytes(err))
        signalled = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(60)
        stdout = proc.stdout.read()
        stopped_s = time.perf_counter() - signalled
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.join(10)
        proc.stdout.close()
        proc.stderr.close()
    text = err.decode("utf-8", "replace")
    assert rc == 130, (rc, text[-2000:])
    assert "Traceback" not in text and "panicked" not in text, text[-2000:]
    lines = [ln.strip() for ln in text.replace("\r", "\n").split("\n") if ln.strip()]
    assert lines[-1] == "toksmith train: interrupted"
    assert stdout == b""
    assert stopped_s < 0.7 * whole_s, (stopped_s, whole_s)
    assert out.read_text() == "an earlier tokenizer\n"  # not replaced, not half-written
    assert sorted(os.listdir(tmp_path)) == ["tok.json"]  # no temporary file left behind


def test_cli_main_turns_ctrl_c_into_status_130(monkeypatch, capsys, tmp_path):
    # in process: the CLI's main() catches KeyboardInterrupt from any command
    import toksmith.cli.train as cli_train
    from toksmith.cli import main

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_train, "run", interrupted)
    assert main(["train", "-o", str(tmp_path / "t.json")]) == 130
    assert capsys.readouterr().err == "toksmith train: interrupted\n"
