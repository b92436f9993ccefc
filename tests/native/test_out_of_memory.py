"""Out of memory raises MemoryError, never aborts the process (issue 36 item 1).

Each case runs in a child process under an address-space limit (RLIMIT_AS) set a little above
what the child uses once its input is built, so the native work that grows with the input
cannot get its memory: the child must catch MemoryError and exit cleanly (no SIGABRT).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

resource = pytest.importorskip("resource")

if not sys.platform.startswith("linux"):
    pytest.skip("RLIMIT_AS is enforced for mmap on Linux only", allow_module_level=True)

PRELUDE = """
import resource, sys
from toksmith import _core

def vm_size():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize")

def limit(extra):
    # (threads already started: their stacks are mapped, a new one would need more room)
    resource.setrlimit(resource.RLIMIT_AS, (vm_size() + extra, resource.RLIM_INFINITY))

def words(n):
    # n distinct lowercase words
    out = []
    for i in range(n):
        x = (i * 2654435761) % (1 << 32)
        s = []
        while True:
            s.append(chr(97 + x % 26))
            x //= 26
            if x == 0:
                break
        out.append("".join(s))
    return out
"""


def run_child(body: str) -> subprocess.CompletedProcess[str]:
    code = (
        PRELUDE
        + textwrap.dedent(body)
        + textwrap.dedent(
            """
        try:
            work()
        except MemoryError as e:
            print("MemoryError", e)
            sys.exit(0)
        print("no error")
        sys.exit(3)
        """
        )
    )
    env = {
        **os.environ,
        "MALLOC_ARENA_MAX": "2",
        "RAYON_NUM_THREADS": "2",
        "TOKSMITH_NO_HUGEPAGES": "1",
    }
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env
    )


def check(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr[-2000:])
    assert proc.stdout.startswith("MemoryError"), proc.stdout
    assert "memory allocation of" not in proc.stderr


def test_counting_chunks_raises_memory_error() -> None:
    check(
        run_child(
            """
            text = " ".join(words(3_000_000))
            c = _core.ChunkCounter("gpt2")
            c.add_texts(["warm the pool up"])
            limit(48 << 20)
            def work():
                c.add_texts([text])
            """
        )
    )


def test_counting_a_file_raises_memory_error(tmp_path) -> None:
    path = tmp_path / "corpus.txt"
    code = f"""
            with open({str(path)!r}, "w") as f:
                ws = words(3_000_000)
                for k in range(0, len(ws), 1000):
                    f.write(" ".join(ws[k:k + 1000]) + "\\n")
                del ws
            c = _core.ChunkCounter("gpt2")
            c.add_texts(["warm the pool up"])
            limit(48 << 20)
            def work():
                c.add_file({str(path)!r}, block_size=1 << 20)
            """
    check(run_child(code))


def test_split_raises_memory_error() -> None:
    check(
        run_child(
            """
            text = "a " * 30_000_000
            _core.split("warm up", "gpt2")
            limit(64 << 20)
            def work():
                _core.split(text, "gpt2")
            """
        )
    )


def test_decode_bytes_batch_raises_memory_error() -> None:
    check(
        run_child(
            """
            enc = _core.Bpe([(bytes([b]), b) for b in range(256)], [], "gpt2")
            batch = [[97] * 20_000_000]
            enc.decode_bytes_batch([[97]])
            limit(16 << 20)
            def work():
                enc.decode_bytes_batch(batch)
            """
        )
    )
