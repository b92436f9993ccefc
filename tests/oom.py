"""Out-of-memory checks: run code in a child process under an address-space limit
(RLIMIT_AS) set a little above what the child uses once its input is built, so the native work
that grows with the input cannot get its memory; the child must catch MemoryError and exit
normally (a Rust allocation failure would abort it with SIGABRT)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

#: what every child runs first: ``limit(extra)`` caps the address space at its size + ``extra``
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
"""

#: helpers for children whose input is many words or the word model's tokens: ``words(n)``
#: (n distinct lowercase words), ``tight(extra)`` (the heap's free memory given back first, then
#: ``limit(extra)``: what building the input freed would otherwise be room the limit cannot take
#: away), ``LETTERS`` (each letter alone and before the end-of-word marker, byte 0xFF) and ``UNK``
WORDS_SETUP = """
import ctypes

def words(n):
    # n distinct lowercase words: i in base 26, least significant letter first
    out = []
    for i in range(n):
        s = ""
        while True:
            s += chr(97 + i % 26)
            i //= 26
            if i == 0:
                break
        out.append(s)
    return out

def tight(extra):
    ctypes.CDLL(None).malloc_trim(0)
    limit(extra)

LETTERS = [(bytes([97 + k]), k) for k in range(26)] + [(bytes([97 + k, 0xFF]), 26 + k) for k in range(26)]
UNK = 52
"""

_EPILOGUE = """
try:
    work()
except MemoryError as e:
    print("MemoryError", e)
    sys.exit(0)
print("no error")
sys.exit(3)
"""


def run_child(
    body: str, setup: str = "", timeout: float = 120, arenas: int = 2
) -> subprocess.CompletedProcess:
    """Run ``setup`` then ``body`` (which defines ``work()``) after :data:`PRELUDE`, with at
    most ``arenas`` malloc arenas (1: the pool threads allocate where the limit applies too;
    each further arena reserves 64 MiB up front, inside which the limit does not bite)."""
    code = PRELUDE + textwrap.dedent(setup) + textwrap.dedent(body) + _EPILOGUE
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
        "MALLOC_ARENA_MAX": str(arenas),
        "RAYON_NUM_THREADS": "2",
        "TOKSMITH_NO_HUGEPAGES": "1",
    }
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env
    )


def check(proc: subprocess.CompletedProcess) -> None:
    """The child raised MemoryError and exited normally (-6 would be Rust's abort)."""
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr[-2000:])
    assert proc.stdout.startswith("MemoryError"), proc.stdout
    assert "memory allocation of" not in proc.stderr
