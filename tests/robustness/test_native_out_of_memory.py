"""Issue 36 item 1: native encoding under a memory limit raises MemoryError, never aborts.

Each case runs in a child process under an address-space limit (RLIMIT_AS) set a little above
what the child uses once its input is built (the pattern of tests/native/test_out_of_memory.py),
so the native buffers that grow with the input cannot get their memory: the child must catch
MemoryError and exit normally. Before, `encode_to_numpy` (the merge of a long piece in
`merge_chunked`, the id vector, the bytes), `encode_batch`, `encode_batch_bytes` and
`encode_bytes` died of SIGABRT ("memory allocation of N bytes failed").
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests import oom

resource = pytest.importorskip("resource")

if not sys.platform.startswith("linux") or not hasattr(resource, "RLIMIT_AS"):
    pytest.skip("RLIMIT_AS is enforced for mmap on Linux only", allow_module_level=True)

SETUP = """
BYTES = [(bytes([b]), b) for b in range(256)]
# the bytes, and merges that make every run of "a" a long piece to merge
MERGING = BYTES + [(b"aa", 256), (b"aaaa", 257), (b"ab", 258)]
"""

# pieces of this many bytes are merged in chunks (`CHUNKED_MIN` in bpe/chunked.rs): 20 MB is far
# past it
LONG = 20_000_000


def run_child(body: str) -> subprocess.CompletedProcess[str]:
    return oom.run_child(body, SETUP, timeout=120)


check = oom.check


def test_encode_to_buffer_of_a_long_piece() -> None:
    """One 20 MB piece: its merge (`merge_chunked`, `bpe_long_with`) needs 80 MB of ids."""
    check(
        run_child(
            f"""
            enc = _core.Bpe(MERGING, [], "gpt2")
            text = "a" * {LONG}
            enc.encode_to_buffer("a" * 300_000)
            limit(24 << 20)
            def work():
                enc.encode_to_buffer(text)
            """
        )
    )


def test_encode_to_buffer_of_many_pieces() -> None:
    """Short pieces: the bytes of the result grow with the text (80 MB here)."""
    check(
        run_child(
            f"""
            enc = _core.Bpe(BYTES, [], "gpt2")
            text = "a" * {LONG}
            enc.encode_to_buffer("warm up")
            limit(24 << 20)
            def work():
                enc.encode_to_buffer(text, narrow=False)
            """
        )
    )


def test_encode_to_numpy() -> None:
    """The public path (Tokenizer.encode_to_numpy) of the cases above."""
    pytest.importorskip("numpy")
    check(
        run_child(
            f"""
            import numpy, toksmith
            tok = toksmith.Tokenizer.from_ranks(dict(MERGING), "gpt2")
            text = "x " + "a" * {LONG}
            tok.encode_to_numpy("a" * 300_000)
            limit(24 << 20)
            def work():
                tok.encode_to_numpy(text)
            """
        )
    )


def test_encode_to_buffer_of_a_wide_str() -> None:
    """A str that CPython stores two bytes per character: its UTF-8 copy (40 MB) does not fit."""
    check(
        run_child(
            f"""
            enc = _core.Bpe(MERGING, [], "gpt2")
            text = "\u0101" * {LONG}
            enc.encode_to_buffer("\u0101" * 300_000)
            limit(24 << 20)
            def work():
                enc.encode_to_buffer(text)
            """
        )
    )


@pytest.mark.parametrize("how", ["encode_batch", "encode_batch_bytes"])
def test_encode_batch(how: str) -> None:
    """A batch's id buffer and output bytes grow with its texts."""
    check(
        run_child(
            f"""
            enc = _core.Bpe(MERGING, [], "gpt2")
            texts = ["a b " * ({LONG} // 4), "a" * {LONG}]
            enc.{how}(["warm up the pool"] * 8, threads=2)
            limit(32 << 20)
            def work():
                enc.{how}(texts, threads=2)
            """
        )
    )


# Inputs are built without large temporaries (a freed temporary may stay mapped and give the
# native code that much more room under the limit).
ENCODE_BYTES = {
    # the tail after the invalid byte (one 20 MB piece) cannot even be copied
    "copy": ("MERGING", "(b'x\\xff' + b'a' * 998) * ({n} // 1000)", 4 << 20),
    # the copy may fit, the ids of the tail (80 MB: a vocabulary without merges) do not
    "ids": ("BYTES", "(b'x\\xff' + b'a' * 998) * ({n} // 1000)", 24 << 20),
    # the invalid byte at the end: the ids of the valid prefix (many short pieces) do not fit
    "prefix": ("MERGING", "bytearray(b'a b ') * ({n} // 4)", 24 << 20),
}


@pytest.mark.parametrize("case", sorted(ENCODE_BYTES))
def test_encode_bytes(case: str) -> None:
    vocab, make, extra = ENCODE_BYTES[case]
    check(
        run_child(
            f"""
            enc = _core.Bpe({vocab}, [], "gpt2")
            data = {make.format(n=LONG)}
            if isinstance(data, bytearray):
                data[-1] = 0xFF
                data = bytes(data)
            enc.encode_bytes(b"x\\xff" + b"a" * 300_000)
            limit({extra})
            def work():
                enc.encode_bytes(data)
            """
        )
    )
