"""Issue 36 item 2: training memory per unique chunk.

The counter used to keep a `HashMap<Box<[u8]>, u64>`: about 160 bytes per unique chunk at its
peak. Its compact table (one arena of chunk bytes, 32-bit ends, 64-bit counts, an index of
32-bit ids) reports what it holds on the heap (`stats()["table_bytes"]`, room not used yet
included); on 200,000 distinct words that must stay at most 80 bytes per chunk, half the old
figure (BENCHMARKS.md, "Training memory per unique chunk", measures whole runs by RSS).
"""

from __future__ import annotations

from toksmith import _core

N = 200_000


def _word(i: int) -> str:
    # distinct for distinct i: base-26 digits of a scrambled i (bijective on 0..2**32)
    x = (i * 2654435761) % (1 << 32)
    s = []
    while True:
        s.append(chr(97 + x % 26))
        x //= 26
        if x == 0:
            return "".join(s)


def test_counter_takes_at_most_80_bytes_per_unique_chunk() -> None:
    words = [_word(i) for i in range(N)]
    texts = [" ".join(words[: N // 2]), " ".join(words[N // 2 :])]
    c = _core.ChunkCounter("gpt2")
    c.add_texts(texts, threads=2)
    stats = c.stats()
    assert stats["unique"] == N
    # the chunks' own bytes: each word with the space before it (none before a text's first)
    chunk_bytes = sum(len(t) for t in texts)
    assert stats["table_bytes"] >= chunk_bytes + 12 * N  # the bytes, ends and counts at least
    per_chunk = stats["table_bytes"] / stats["unique"]
    assert per_chunk <= 80, per_chunk


def test_table_bytes_grow_with_the_unique_chunks_only() -> None:
    c = _core.ChunkCounter("gpt2")
    words = " ".join(_word(i) for i in range(10_000))
    c.add_texts([words])
    once = c.stats()["table_bytes"]
    # the same chunks again only add to their counts
    c.add_texts([words] * 5)
    assert c.stats()["table_bytes"] == once
    assert c.stats()["unique"] == 10_000
