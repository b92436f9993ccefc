"""Cromwell's compression on held-out code and English (issue 33), and its encoding speed.

Trains plain o200k-pattern BPE (the preset as it was), Cromwell (one stage on its line-start
split, ``superword_share=0``, the default) and, for each ``--shares`` value above 0, Cromwell
with a superword stage (o200k-pattern BPE, then merges across o200k's pieces inside
whitespace-free runs), all of the same size on the same text, and measures bytes per token on
held-out text against tiktoken's cl100k_base (loaded from ``vocabs/cl100k_base.tiktoken``).

Data: ``corpora/{python,cpp,javascript,english}.txt.xz`` of ``$TOKSMITH_BENCH_DATA`` (default
``../shared/data``). Each corpus is a list of files joined in order, so the held-out part is
its last ``--heldout`` share (whole files at the end of the file list, cut at a blank line):
no training text comes from there. Training takes the first ``--train-mb`` MB of each corpus.

    python -m benches.cromwell_compression                       # 50k, shares 0 and 0.2
    python -m benches.cromwell_compression --vocab 8000 --train-mb 2 --shares 0 0.1 0.2 0.3

Prints a markdown table and writes ``benches/out/cromwell_compression.json``.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import time
from pathlib import Path
from typing import Dict, List, Tuple

import toksmith
from toksmith import Tokenizer
from toksmith.formats.tiktoken import load_tiktoken_ranks
from toksmith.presets import cromwell

REPO = Path(__file__).resolve().parent.parent
CORPORA = ("python", "cpp", "javascript", "english")
#: second-stage splits compared by ``--pattern``: Cromwell's (a whitespace-free run with the
#: spaces before it, or line breaks + indentation + the first run of the line) and whole lines
SPLITS = {
    "runs": cromwell.CODE_PATTERN,
    "lines": r"[\r\n]*[^\r\n]+|[\r\n]+",
}


def data_dir() -> Path:
    env = os.environ.get("TOKSMITH_BENCH_DATA")
    if env:
        return Path(env)
    for d in (REPO.parent / "shared" / "data", Path("/work/shared/data")):
        if d.is_dir():
            return d
    raise SystemExit("no data: set TOKSMITH_BENCH_DATA to the folder holding corpora/ and vocabs/")


def blocks(text: str, size: int = 1 << 20) -> List[str]:
    """``text`` in blocks of about ``size`` characters, cut after a blank line."""
    out, at = [], 0
    while at < len(text):
        end = text.find("\n\n", at + size)
        end = len(text) if end < 0 else end + 2
        out.append(text[at:end])
        at = end
    return out


def split_corpus(text: str, heldout: float, train_chars: int, held_chars: int) -> Tuple[str, str]:
    cut = text.rfind("\n\n", 0, int(len(text) * (1 - heldout))) + 2
    train = text[:cut]
    if len(train) > train_chars:
        train = train[: train.rfind("\n\n", 0, train_chars) + 2]
    return train, text[cut : cut + held_chars]


def train_plain(texts: List[str], vocab: int, threads=None) -> Tokenizer:
    """Plain o200k-pattern BPE with Cromwell's special tokens (the preset before issue 33)."""
    return toksmith.train_from_iterator(
        texts,
        vocab_size=vocab,
        pattern="o200k",
        special_tokens=cromwell.PRESET.special_token_spec(),
        threads=threads,
    )


def bytes_per_token(tok: Tokenizer, text: str) -> Tuple[float, int]:
    ids = tok.encode_ordinary(text)
    assert tok.decode(ids) == text, "decode(encode(x)) != x"
    return len(text.encode()) / len(ids), len(ids)


def speed(tok: Tokenizer, text: str, runs: int = 3) -> float:
    """MB/s of one thread's encode_ordinary (best of ``runs``)."""
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        tok.encode_ordinary(text)
        best = min(best, time.perf_counter() - t)
    return len(text.encode()) / best / 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vocab", type=int, default=50000)
    ap.add_argument("--train-mb", type=float, default=8.0, help="training MB per corpus")
    ap.add_argument("--heldout", type=float, default=0.15, help="held-out share of each corpus")
    ap.add_argument("--held-mb", type=float, default=1.5, help="held-out MB measured per corpus")
    ap.add_argument("--shares", type=float, nargs="+", default=[0.0, 0.2])
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--pattern", choices=sorted(SPLITS), default="runs", help="second-stage split")
    ap.add_argument("--out", type=Path, default=REPO / "benches" / "out")
    args = ap.parse_args()

    cromwell.CODE_PATTERN = SPLITS[args.pattern]  # (read by the second stage when it runs)
    data = data_dir()
    train_texts: List[str] = []
    held: Dict[str, str] = {}
    for name in CORPORA:
        with lzma.open(data / "corpora" / f"{name}.txt.xz", "rt", encoding="utf-8") as fh:
            text = fh.read()
        tr, he = split_corpus(text, args.heldout, int(args.train_mb * 1e6), int(args.held_mb * 1e6))
        train_texts.extend(blocks(tr))
        held[name] = he
        print(
            f"{name}: train {len(tr.encode()) / 1e6:.1f} MB, held out {len(he.encode()) / 1e6:.2f} MB"
        )

    tokenizers: Dict[str, Tokenizer] = {}
    train_s: Dict[str, float] = {}
    t = time.perf_counter()
    tokenizers["plain o200k BPE"] = train_plain(train_texts, args.vocab, args.threads)
    train_s["plain o200k BPE"] = time.perf_counter() - t
    print(f"trained plain o200k BPE: {train_s['plain o200k BPE']:.1f} s")
    for share in args.shares:
        label = (
            "Cromwell (one stage, line starts)"
            if share == 0
            else f"Cromwell ({args.pattern}, superword share {share:g})"
        )
        t = time.perf_counter()
        tokenizers[label] = cromwell.train(
            train_texts, vocab_size=args.vocab, superword_share=share, threads=args.threads
        ).tokenizer
        train_s[label] = time.perf_counter() - t
        print(f"trained {label}: {train_s[label]:.1f} s, {tokenizers[label].n_vocab} tokens")
    tokenizers["cl100k_base"] = Tokenizer.from_ranks(
        load_tiktoken_ranks(data / "vocabs" / "cl100k_base.tiktoken"), "cl100k"
    )

    all_held = "".join(held.values())
    rows = []
    results = {
        "vocab": args.vocab,
        "train_mb": args.train_mb,
        "heldout": args.heldout,
        "pattern": SPLITS[args.pattern],
        "rows": {},
    }
    for label, tok in tokenizers.items():
        bpt = {name: bytes_per_token(tok, text)[0] for name, text in held.items()}
        total = len(all_held.encode()) / len(tok.encode_ordinary(all_held))
        mbs = speed(tok, all_held)
        results["rows"][label] = {
            "n_vocab": tok.n_vocab,
            "bytes_per_token": bpt,
            "all": total,
            "encode_mb_s": mbs,
            "train_s": train_s.get(label),
        }
        rows.append((label, tok.n_vocab, bpt, total, mbs))

    plain = results["rows"].get("plain o200k BPE")
    print()
    print("| tokenizer | tokens | " + " | ".join(CORPORA) + " | all | vs plain | encode MB/s |")
    print("|---|---:|" + "---:|" * len(CORPORA) + "---:|---:|---:|")
    for label, n, bpt, total, mbs in rows:
        gain = f"{(total / plain['all'] - 1) * 100:+.1f}%" if plain else ""
        cells = " | ".join(f"{bpt[c]:.3f}" for c in CORPORA)
        print(f"| {label} | {n} | {cells} | {total:.3f} | {gain} | {mbs:.1f} |")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "cromwell_compression.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
