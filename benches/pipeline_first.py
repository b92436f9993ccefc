"""First and warm passes of the SentencePiece models against sentencepiece, one process per
build and round (builds compared interleaved, ratios per process so the machine's load cancels).

    python -m benches.pipeline_first --rounds 3 --build main=/tmp/main_python --build new=python
    python -m benches.pipeline_first --rounds 2 --models t5 --corpora multilingual --build new=python

``--build NAME=DIR``: a directory holding a ``toksmith`` package with its ``_core`` extension
(a copy of a checkout's ``python/`` after ``/work/devbuild.sh``). Each worker process, pinned to
one CPU, reads ``--mb`` MB of a corpus as ``benches.pipeline_models`` does, encodes 20 documents
with each library (as that harness warms up), times toksmith's first pass over all documents
(its word caches meet most words for the first time), then three sentencepiece / toksmith pass
pairs. Printed per model, corpus and build: median over rounds of sentencepiece time / toksmith
time for the first pass and for the warm passes (median of three), each round's value in
brackets, and whether the ids equalled sentencepiece's in every process.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

MODEL_FILES = {
    "t5": ("t5_v1_1", "spiece.model"),
    "llama2": ("llama2_tokenizer.model",),
    "mistral": ("mistral_v1_tokenizer.model",),
}
ROOT = Path(__file__).resolve().parent.parent


def worker(model: str, corpus: str, mb: float, cpu: int) -> None:
    os.environ["RAYON_NUM_THREADS"] = "1"
    os.sched_setaffinity(0, {cpu})
    import sentencepiece as spm

    import toksmith

    from .pipeline_models import read_docs, zoo

    docs = read_docs(corpus, mb)
    f = str(zoo().joinpath(*MODEL_FILES[model]))
    tok: Any = toksmith.load_any(f)
    sp = spm.SentencePieceProcessor(model_file=f)

    def ts(t: str) -> List[int]:
        return tok.encode(t, special=False, add_special_tokens=False)

    for d in docs[:20]:
        ts(d)
        sp.encode(d)

    def run(enc: Any) -> Tuple[float, List[List[int]]]:
        t0 = time.process_time()
        out = [enc(d) for d in docs]
        return time.process_time() - t0, out

    first, ids = run(ts)
    warm, peer = [], []
    sp_ids: List[List[int]] = []
    for _ in range(3):
        t, sp_ids = run(sp.encode)
        peer.append(t)
        warm.append(run(ts)[0])
    row = {"first": first, "warm": statistics.median(warm), "sp": statistics.median(peer)}
    print(json.dumps({**row, "equal": ids == sp_ids}))


def main(argv: List[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--build", action="append", required=True, help="NAME=DIR (repeatable)")
    ap.add_argument("--models", nargs="*", default=list(MODEL_FILES), choices=list(MODEL_FILES))
    ap.add_argument("--corpora", nargs="*", default=["english", "code", "multilingual"])
    ap.add_argument("--mb", type=float, default=2.0)
    ap.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        model, corpus, mb, cpu = args.worker
        worker(model, corpus, float(mb), int(cpu))
        return 0
    builds = dict(b.split("=", 1) for b in args.build)
    res: Dict[Tuple[str, str, str], List[Dict[str, Any]]] = {}
    print("load average", os.getloadavg())
    for r in range(args.rounds):
        for m in args.models:
            for c in args.corpora:
                for name, path in builds.items():
                    env = dict(os.environ, PYTHONPATH=f"{Path(path).resolve()}:{ROOT}")
                    cmd = [sys.executable, "-m", "benches.pipeline_first", "--build", "x=y"]
                    cmd += ["--worker", m, c, str(args.mb), str(r % (os.cpu_count() or 1))]
                    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
                    if out.returncode:
                        print(out.stderr, file=sys.stderr)
                        return 1
                    res.setdefault((m, c, name), []).append(json.loads(out.stdout.splitlines()[-1]))
    print("load average", os.getloadavg())
    for (m, c, name), rows in sorted(res.items()):
        first = [d["sp"] / d["first"] for d in rows]
        warm = [d["sp"] / d["warm"] for d in rows]
        print(
            f"{m:8} {c:13} {name:8} first {statistics.median(first):.2f}x "
            f"({' '.join(f'{x:.2f}' for x in first)})  warm {statistics.median(warm):.2f}x "
            f"({' '.join(f'{x:.2f}' for x in warm)})  ids equal {all(d['equal'] for d in rows)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
