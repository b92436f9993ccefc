"""Cromwell's encoding speed against plain o200k-pattern BPE of the same size (issue 33).

Trains (or loads from ``--cache``) Cromwell 50k (``--superword-share``, default 0: one stage
on its line-start split, the preset's default) and plain o200k-pattern BPE 50k on the
training part of the corpora, as ``benches/cromwell_compression.py`` does, and measures one
thread's ``encode_ordinary`` on each held-out corpus, in CPU seconds (the machine is shared):

* warm: best (or median) of ``--runs`` on the same tokenizer after a warm-up encode of the
  same text (its per-thread piece cache then holds every piece of the text);
* cold: the first encode of the tokenizer loaded afresh from its file (a new native core,
  so the per-thread piece caches start empty; their memory stays allocated), best (or
  ``--stat median``) of ``--runs`` loads, plain and Cromwell alternating: what a stream of
  new text costs. (Not a pickled copy: unpickling the same tables again in one process
  shares the core built the first time, with its warm caches.)

    python -m benches.cromwell_speed --cache /tmp/cromwell_speed

Prints a markdown table; the ids of both are checked to decode to the text.
"""

from __future__ import annotations

import argparse
import lzma
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Dict, List

from benches.cromwell_compression import CORPORA, blocks, data_dir, split_corpus, train_plain
from toksmith import Tokenizer
from toksmith.presets import cromwell


def cpu_seconds(tok: Tokenizer, path: Path, text: str, cold: bool) -> float:
    """CPU seconds of one encode of `text` (`cold`: by `tok` loaded afresh from `path`)."""
    t = Tokenizer.load(path) if cold else tok
    t.encode_ordinary("x")  # (loads what the first call loads)
    start = time.process_time()
    t.encode_ordinary(text)
    return time.process_time() - start


def summary(times: List[float], stat: str) -> float:
    return min(times) if stat == "best" else statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vocab", type=int, default=50000)
    ap.add_argument("--train-mb", type=float, default=8.0)
    ap.add_argument("--heldout", type=float, default=0.15)
    ap.add_argument("--held-mb", type=float, default=1.5)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--stat",
        choices=("best", "median"),
        default="best",
        help="summary of the runs (median: steadier on a loaded machine)",
    )
    ap.add_argument("--cache", type=Path, default=None, help="folder to keep the tokenizers in")
    ap.add_argument(
        "--superword-share",
        type=float,
        default=cromwell.DEFAULT_SUPERWORD_SHARE,
        help="Cromwell's superword share (0: one stage, the default)",
    )
    args = ap.parse_args()

    data = data_dir()
    train_texts: List[str] = []
    held: Dict[str, str] = {}
    for name in CORPORA:
        with lzma.open(data / "corpora" / f"{name}.txt.xz", "rt", encoding="utf-8") as fh:
            text = fh.read()
        tr, he = split_corpus(text, args.heldout, int(args.train_mb * 1e6), int(args.held_mb * 1e6))
        train_texts.extend(blocks(tr))
        held[name] = he
    toks: Dict[str, Tokenizer] = {}
    paths: Dict[str, Path] = {}
    folder = args.cache or Path(tempfile.mkdtemp(prefix="cromwell_speed_"))
    share = args.superword_share
    for label in ("plain", "cromwell"):
        name = label if label == "plain" or share == 0 else f"{label}_sw{share:g}"
        path = paths[label] = folder / f"{name}_{args.vocab}.json"
        if path.exists():
            toks[label] = Tokenizer.load(path)
            continue
        if label == "plain":
            toks[label] = train_plain(train_texts, args.vocab)
        else:
            toks[label] = cromwell.train(
                train_texts, vocab_size=args.vocab, superword_share=share
            ).tokenizer
        path.parent.mkdir(parents=True, exist_ok=True)
        toks[label].save(path)

    print("| corpus | plain warm | Cromwell warm | ratio | plain cold | Cromwell cold | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, text in held.items():
        for tok in toks.values():
            assert tok.decode(tok.encode_ordinary(text)) == text
        mb = len(text.encode()) / 1e6
        # warm: the runs of one tokenizer in a row (the per-thread piece cache holds one
        # encoder's pieces); cold: the two alternate, so that a change of load hits both
        warm: Dict[str, List[float]] = {}
        for k in toks:
            toks[k].encode_ordinary(text)  # (the warm-up)
            warm[k] = [cpu_seconds(toks[k], paths[k], text, False) for _ in range(args.runs)]
        cold: Dict[str, List[float]] = {k: [] for k in toks}
        for _ in range(args.runs):
            for k in toks:
                cold[k].append(cpu_seconds(toks[k], paths[k], text, True))
        w = [mb / summary(warm[k], args.stat) for k in toks]
        c = [mb / summary(cold[k], args.stat) for k in toks]
        print(
            f"| {name} | {w[0]:.1f} | {w[1]:.1f} | {w[0] / w[1]:.2f}x "
            f"| {c[0]:.1f} | {c[1]:.1f} | {c[0] / c[1]:.2f}x |",
            flush=True,
        )
    print(f"({args.stat} of {args.runs} runs; load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
