"""Issue 36 item 1: the bindings' arguments, results and word-level models under a memory limit.

PyO3's `Vec<T>` and `String` arguments, and its list, tuple, str and bytes results, allocate
with Rust's global allocator, which aborts the process (SIGABRT, "memory allocation of N bytes
failed") when memory runs out. The bindings now read their sequence arguments and build their
results through convert.rs, and the word-level model (training, batches, counts, the fixed-word
decoder) grows its buffers fallibly: each case below runs in a child process under an
address-space limit (tests/oom.py) and must raise MemoryError.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests import oom

resource = pytest.importorskip("resource")

if not sys.platform.startswith("linux") or not hasattr(resource, "RLIMIT_AS"):
    pytest.skip("RLIMIT_AS is enforced for mmap on Linux only", allow_module_level=True)

SETUP = (
    oom.WORDS_SETUP
    + """
BYTES = [(bytes([b]), b) for b in range(256)]
"""
)


def run_child(body: str) -> subprocess.CompletedProcess[str]:
    # (one malloc arena, and the heap's free memory given back before the limit is set: what
    # building the input freed would otherwise be room the limit cannot take away)
    return oom.run_child(body, SETUP, timeout=120, arenas=1)


check = oom.check


def test_train_words() -> None:
    """The word-level trainer: the words (an argument of 200,000 str) and their spellings."""
    check(
        run_child(
            """
            counts = [(w, 1) for w in words(200_000)]
            _core.train_words([("ab", 2), ("abc", 1)], 2)
            tight(4 << 20)
            def work():
                _core.train_words(counts, 100)
            """
        )
    )


def test_word_encoder_encode_batch() -> None:
    """A batch of the word model: the text is copied (30 MB), its ids need 40 MB more."""
    check(
        run_child(
            """
            enc = _core.WordEncoder("gpt2", True, LETTERS, UNK)
            text = "ab " * 10_000_000
            enc.encode_batch(["warm up"])
            tight(40 << 20)
            def work():
                enc.encode_batch([text])
            """
        )
    )


def test_word_encoder_token_counts() -> None:
    """The token statistics of counted words: 300,000 (str, count) pairs read fallibly."""
    check(
        run_child(
            """
            enc = _core.WordEncoder("gpt2", True, LETTERS, UNK)
            counts = [(w, 1) for w in words(300_000)]
            enc.token_counts([("ab", 1)], 53)
            tight(4 << 20)
            def work():
                enc.token_counts(counts, 53)
            """
        )
    )


def test_fold_word_counts() -> None:
    """Folding 300,000 counted words: the (bytes, count) pairs, the table and the result."""
    check(
        run_child(
            """
            counts = [(w.upper().encode(), 1) for w in words(300_000)]
            _core.fold_word_counts([(b"AB", 1)], True)
            tight(4 << 20)
            def work():
                _core.fold_word_counts(counts, True)
            """
        )
    )


def test_chunk_counter_counts() -> None:
    """`counts()` of 300,000 unique chunks: a list of (bytes, int) tuples, about 40 MB."""
    check(
        run_child(
            """
            c = _core.ChunkCounter("gpt2")
            c.add_texts([" ".join(words(300_000))])
            tight(4 << 20)
            def work():
                c.counts()
            """
        )
    )


def test_chunk_counter_word_counts_and_export() -> None:
    """`word_counts()` and `export_arena()` of 300,000 unique chunks."""
    check(
        run_child(
            """
            c = _core.ChunkCounter("gpt2")
            c.add_texts([" ".join(words(300_000))])
            tight(2 << 20)
            def work():
                # (export_arena() runs out of memory in almost every run; in a few, free chunks
                # that the parallel counting left inside the heap hold its result, and then
                # word_counts() meets the limit with that result still alive)
                try:
                    kept = c.export_arena()
                except MemoryError:
                    kept = None
                c.word_counts(False)
                return kept
            """
        )
    )


def test_fixed_word_decoder_decode() -> None:
    """The fixed-word decoder of 5,000,000 learned ids: the ids fit (20 MB), the text not."""
    check(
        run_child(
            """
            bpe = _core.Bpe(BYTES, [], "gpt2")
            dec = _core.FixedWordDecoder([None] * 4, "~", [], [])
            ids = [97] * 5_000_000
            dec.decode(bpe, [97, 98])
            tight(24 << 20)
            def work():
                dec.decode(bpe, ids)
            """
        )
    )


def test_fixed_word_encoder_batch_and_counts() -> None:
    """A fixed-word batch (its text copied, then its ids) and the counts of learned words."""
    check(
        run_child(
            """
            bpe = _core.Bpe(BYTES, [], "gpt2")
            fw = _core.FixedWordEncoder(r"\\S+", [("int", [5])], [], (10, 11), "")
            text = " ".join(words(1_000_000))
            fw.encode_batch(bpe, ["int x"])
            fw.count_learned(["int x"], "gpt2")
            tight(8 << 20)
            def work():
                try:
                    fw.count_learned([text], "gpt2")
                except MemoryError:
                    pass
                else:
                    raise AssertionError("count_learned did not run out of memory")
                fw.encode_batch(bpe, [text])
            """
        )
    )


def test_id_text_formats() -> None:
    """`parse_ids` of 40 MB of digits (room for 20,000,000 ids) and `format_ids` of 4,000,000."""
    check(
        run_child(
            """
            data = b"7 " * 20_000_000
            ids = [7] * 4_000_000
            _core.parse_ids(b"1 2")
            tight(32 << 20)
            def work():
                try:
                    _core.format_ids(ids, b" ")
                except MemoryError:
                    pass
                else:
                    raise AssertionError("format_ids did not run out of memory")
                _core.parse_ids(data)
            """
        )
    )


def test_sequence_arguments() -> None:
    """A tuple of 3,000,000 ids (not a list: read through the sequence path) as `allowed`."""
    check(
        run_child(
            """
            enc = _core.Bpe(BYTES, [], "gpt2")
            allowed = tuple(range(3_000_000))
            enc.encode("warm up", [1])
            tight(4 << 20)
            def work():
                enc.encode("hello", allowed)
            """
        )
    )
