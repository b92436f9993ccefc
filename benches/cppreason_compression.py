"""CppReason's tokens per byte on held-out C++ (issue 33) against plain BPE of its size.

Trains CppReason (seed 001: 1600 fixed ids, spaces as delimiters, learned BPE up to
``--vocab``) and plain byte-level BPE of the same size (o200k's pattern) on the first part of
``corpora/cpp.txt.xz`` (libstdc++, files joined in order) and measures the last ``--heldout``
share (whole files at the end of the list, never trained on). The seed promises 0.12 tokens
per byte. cl100k_base is measured on the same text.

    python -m benches.cppreason_compression [--vocab 32768] [--heldout 0.15]
        [--variants runs single legacy]
"""

from __future__ import annotations

import argparse
import lzma
import time
import warnings

from benches.cromwell_compression import blocks, data_dir, split_corpus
from toksmith import Tokenizer, train_from_iterator
from toksmith.formats.tiktoken import load_tiktoken_ranks
from toksmith.presets import cppreason

#: the variants measured: (label, punctuation_runs, inner pattern of the learned part)
VARIANTS = {
    "runs": ("CppReason (punctuation runs, whole words)", True, cppreason.INNER_PATTERN),
    "single": ("CppReason (single punctuation, whole words)", False, cppreason.INNER_PATTERN),
    "legacy": ("CppReason before (single punctuation, o200k split)", False, "o200k"),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vocab", type=int, default=32768)
    ap.add_argument("--heldout", type=float, default=0.15)
    ap.add_argument("--held-mb", type=float, default=1.5)
    ap.add_argument("--variants", nargs="+", choices=sorted(VARIANTS), default=["runs"])
    args = ap.parse_args()
    data = data_dir()
    with lzma.open(data / "corpora" / "cpp.txt.xz", "rt", encoding="utf-8") as fh:
        text = fh.read()
    train, held = split_corpus(text, args.heldout, len(text), int(args.held_mb * 1e6))
    n_bytes = len(held.encode())
    print(f"train {len(train.encode()) / 1e6:.1f} MB, held out {n_bytes / 1e6:.2f} MB")

    rows = []
    sizes = set()
    inner = cppreason.INNER_PATTERN
    for key in args.variants:
        label, runs, cppreason.INNER_PATTERN = VARIANTS[key]  # (read by train())
        t = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cpp = cppreason.train(iter(blocks(train)), vocab_size=args.vocab, punctuation_runs=runs)
        print(f"{label}: {time.perf_counter() - t:.1f} s, {cpp.vocab_size} tokens")
        for w in caught:
            print("  warning:", w.message)
        ids = cpp.encode(held)
        assert cpp.encode(cpp.decode(ids)) == ids, "decoding is lossy in ids"
        punct = sum(1 for i in ids if 220 <= i < 320)
        print(f"  {punct / len(ids):.1%} of its tokens are fixed punctuation (ids 220-319)")
        rows.append((f"{label} {cpp.vocab_size}", len(ids)))
        sizes.add(cpp.vocab_size)
    cppreason.INNER_PATTERN = inner
    for size in sorted(sizes):
        plain = train_from_iterator(blocks(train), vocab_size=size, pattern="o200k")
        rows.append((f"plain o200k BPE {plain.n_vocab}", len(plain.encode_ordinary(held))))
    cl100k = Tokenizer.from_ranks(
        load_tiktoken_ranks(data / "vocabs" / "cl100k_base.tiktoken"), "cl100k"
    )
    rows.append(("cl100k_base", len(cl100k.encode_ordinary(held))))
    print()
    print("| tokenizer | tokens/byte | bytes/token |")
    print("|---|---:|---:|")
    for label, n in rows:
        print(f"| {label} | {n / n_bytes:.4f} | {n_bytes / n:.3f} |")


if __name__ == "__main__":
    main()
