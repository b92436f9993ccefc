"""Readable pure-Python reference of the word-level ``</w>`` model (seed 004), the slow side of
the checks in test_wordbpe.py: word counting with the ``regex`` module, the merge loop over a
table of every pair's count (each word's pairs times its count), and the seed's greedy
longest-match ``splitWord``."""

from __future__ import annotations

from collections import Counter
from typing import Dict, Iterable, List, Sequence, Tuple

import regex

END = "</w>"


def count_words(texts: Iterable[str], pattern: str, lowercase: bool = True) -> Dict[str, int]:
    counts: Counter = Counter()
    for t in texts:
        for w in regex.findall(pattern, t):
            counts[w.lower() if lowercase else w] += 1
    return dict(counts)


def train(word_counts: Dict[str, int], num_merges: int) -> Tuple[List[str], List[Tuple[str, str]]]:
    """Returns (tokens in id order without specials, merges). Atomic one-character words are
    their own tokens; the others are spelled as characters + ``</w>``; each step merges the
    most frequent pair, ties to the pair whose symbols come first (characters by code point,
    then ``</w>``, then merged tokens in the order they were made). The pair counts are the sum
    over the words of each word's own pairs times its count: a merge recounts the pairs of the
    words it changed (subtracting their old pairs, adding their new ones)."""
    atomic = sorted(w for w in word_counts if len(w) == 1)
    words = {w: n for w, n in word_counts.items() if len(w) > 1}
    symbols = sorted({c for w in words for c in w}) + [END]
    order = {s: i for i, s in enumerate(symbols)}
    spelled = {w: list(w) + [END] for w in words}

    def pairs_of(seq: List[str]) -> Counter:
        return Counter(zip(seq, seq[1:]))

    pairs: Counter = Counter()
    for w, seq in spelled.items():
        for p, k in pairs_of(seq).items():
            pairs[p] += k * words[w]
    merges: List[Tuple[str, str]] = []
    for _ in range(num_merges):
        if not pairs:
            break
        best = max(pairs, key=lambda p: (pairs[p], -order[p[0]], -order[p[1]]))
        new = best[0] + best[1]
        for w, seq in spelled.items():
            if best[0] not in seq:
                continue
            out, i = [], 0
            while i < len(seq):
                if i + 1 < len(seq) and (seq[i], seq[i + 1]) == best:
                    out.append(new)
                    i += 2
                else:
                    out.append(seq[i])
                    i += 1
            if len(out) == len(seq):
                continue  # the word does not have the pair
            for p, k in pairs_of(seq).items():
                pairs[p] -= k * words[w]
                if not pairs[p]:
                    del pairs[p]  # no word has this pair any more
            for p, k in pairs_of(out).items():
                pairs[p] += k * words[w]
            spelled[w] = out
        merges.append(best)
        if new not in order:
            order[new] = len(order)
        symbols.append(new)
    tokens: List[str] = []
    for t in [w + END for w in atomic] + (symbols if words else []):
        if t not in tokens:
            tokens.append(t)
    return tokens, merges


class GreedyMatcher:
    """The seed's ``splitWord``: the vocabulary sorted longest first; at each place of a word
    (with its ``</w>``) take the first token the rest starts with; a character no token starts
    with is ``unk``."""

    def __init__(self, vocab: Sequence[str], unk: str = "<unk>") -> None:
        def units(t: str) -> Tuple[str, ...]:
            return tuple(t[: -len(END)]) + (END,) if t.endswith(END) else tuple(t)

        self.by_length = sorted(((units(t), t) for t in vocab), key=lambda p: -len(p[0]))
        self.unk = unk

    def split_word(self, word: str) -> List[str]:
        rest = tuple(word) + (END,)
        out: List[str] = []
        while rest:
            for units, t in self.by_length:
                if rest[: len(units)] == units:
                    out.append(t)
                    rest = rest[len(units) :]
                    break
            else:
                out.append(self.unk)
                rest = rest[1:]
        return out
