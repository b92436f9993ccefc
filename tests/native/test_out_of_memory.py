"""Out of memory raises MemoryError, never aborts the process (issue 36 item 1).

Each case runs in a child process under an address-space limit (RLIMIT_AS) set a little above
what the child uses once its input is built, so the native work that grows with the input
cannot get its memory: the child must catch MemoryError and exit cleanly (no SIGABRT).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests import oom

resource = pytest.importorskip("resource")

if not sys.platform.startswith("linux"):
    pytest.skip("RLIMIT_AS is enforced for mmap on Linux only", allow_module_level=True)

SETUP = """
def spell(x):
    # x's base-26 digits as letters, least significant first
    s = ""
    while True:
        s += chr(97 + x % 26)
        x //= 26
        if x == 0:
            return s

def words(n):
    # n distinct lowercase words: spell(i * 2654435761 mod 2**32), three digits at a time
    # through tables (spelling 3,000,000 numbers a digit at a time took 4 s)
    b = 26**3
    top = [spell(v) for v in range(b)]
    low = [(t + "aa")[:3] for t in top]  # all three digits
    xs = ((i * 2654435761) % (1 << 32) for i in range(n))  # (no list: no big temporary)
    return [
        top[x] if x < b
        else low[x % b] + top[x // b] if x < b * b
        else low[x % b] + low[x // b % b] + top[x // (b * b)]
        for x in xs
    ]
"""


def run_child(body: str) -> subprocess.CompletedProcess[str]:
    return oom.run_child(body, SETUP, timeout=300)


check = oom.check


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
