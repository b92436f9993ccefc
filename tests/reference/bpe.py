"""A small, readable pure-Python reference for byte-level BPE.

This is the yardstick the native code is checked against. It favours clarity over speed:
a newcomer should understand BPE from these ~80 lines.
"""

from __future__ import annotations

from collections import Counter
from typing import Dict, Iterable, List, Optional, Tuple

import regex

Pair = Tuple[int, int]


def train(
    texts: Iterable[str],
    pattern: str,
    num_merges: int,
    min_frequency: int = 0,
    max_token_length: Optional[int] = None,
) -> List[Pair]:
    """Learn merges: split each text with `pattern`, count unique chunks, then repeatedly merge
    the most frequent adjacent pair (ties: the smallest (left, right) pair). Token ids: bytes are
    0..255, the k-th merge creates id 256 + k.

    Limits: pairs whose token would be longer than `max_token_length` bytes are never merged;
    training stops when the best pair occurs fewer than `min_frequency` times."""
    chunk_counts: Counter = Counter()
    for text in texts:
        chunk_counts.update(regex.findall(pattern, text))
    words = [(list(chunk.encode("utf-8")), n) for chunk, n in chunk_counts.items()]
    length = [1] * 256  # bytes per token id
    merges: List[Pair] = []
    for k in range(num_merges):
        pair_counts: Counter = Counter()
        for ids, n in words:
            for pair in zip(ids, ids[1:]):
                if (
                    max_token_length is None
                    or length[pair[0]] + length[pair[1]] <= max_token_length
                ):
                    pair_counts[pair] += n
        if not pair_counts:
            break
        best = max(pair_counts, key=lambda p: (pair_counts[p], (-p[0], -p[1])))
        if pair_counts[best] < min_frequency:
            break
        new_id = 256 + k
        merges.append(best)
        length.append(length[best[0]] + length[best[1]])
        words = [(merge_pair(ids, best, new_id), n) for ids, n in words]
    return merges


def merge_pair(ids: List[int], pair: Pair, new_id: int) -> List[int]:
    """Replace every non-overlapping occurrence of `pair` (left to right) by `new_id`."""
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def ranks_from_merges(merges: List[Pair]) -> Dict[bytes, int]:
    """The tiktoken-style rank table (token bytes -> id) of a merge list."""
    vocab = {i: bytes([i]) for i in range(256)}
    for k, (a, b) in enumerate(merges):
        vocab[256 + k] = vocab[a] + vocab[b]
    return {tok: i for i, tok in vocab.items()}


def encode_piece(piece: bytes, ranks: Dict[bytes, int]) -> List[int]:
    """tiktoken's rule: while some adjacent pair concatenates to a token, merge the pair whose
    concatenation has the lowest rank (the leftmost one on ties)."""
    parts = [bytes([b]) for b in piece]
    while len(parts) > 1:
        candidates = [(ranks.get(parts[i] + parts[i + 1]), i) for i in range(len(parts) - 1)]
        candidates = [(r, i) for r, i in candidates if r is not None]
        if not candidates:
            break
        _, i = min(candidates)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return [ranks[p] for p in parts]


def encode(text: str, pattern: str, ranks: Dict[bytes, int]) -> List[int]:
    out: List[int] = []
    for piece in regex.findall(pattern, text):
        out.extend(encode_piece(piece.encode("utf-8"), ranks))
    return out
