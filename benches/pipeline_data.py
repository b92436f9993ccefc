"""Inputs of the pipeline benchmark (benches/pipeline.py): about 1 GB of real text as JSON-lines
documents, written as zstd-compressed ``.jsonl.zst`` files and as ``.parquet`` files (the same
documents), in a folder outside the repository (default ``/tmp/toksmith-pipeline``).

The documents are the paragraphs (blank-line separated) of ``../shared/data/corpora/*.txt.xz``
and the chats of ``chat.jsonl.xz`` (their messages joined by newlines), repeated in a new seeded
order each round until the total reaches the target size (the corpora hold about 75 MB, so each
document occurs about 13 times; every library sees the same input).

    python -m benches.pipeline_data [--out DIR] [--size-mb 1024] [--files 4]
"""

from __future__ import annotations

import argparse
import json
import lzma
import random
from pathlib import Path
from typing import List

from .config import shared_data_dir


def documents() -> List[str]:
    corpora = shared_data_dir() / "corpora"
    docs: List[str] = []
    for p in sorted(corpora.glob("*.txt.xz")):
        with lzma.open(p, "rt", encoding="utf-8") as f:
            docs.extend(d for d in f.read().split("\n\n") if d.strip())
    chat = corpora / "chat.jsonl.xz"
    if chat.exists():
        with lzma.open(chat, "rt", encoding="utf-8") as f:
            for line in f:
                msgs = json.loads(line).get("messages", [])
                text = "\n".join(m.get("content", "") for m in msgs)
                if text.strip():
                    docs.append(text)
    return docs


def build(out: Path, size_mb: int, files: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    import zstandard

    out.mkdir(parents=True, exist_ok=True)
    base = documents()
    if not base:
        raise SystemExit(f"no corpora in {shared_data_dir() / 'corpora'}: set TOKSMITH_BENCH_DATA")
    target = size_mb << 20
    per_file = target // files
    rng = random.Random(1234)
    order: List[int] = []
    for k in range(files):
        name = f"part-{k:02d}"
        texts: List[str] = []
        size = 0
        while size < per_file:
            if not order:
                order = list(range(len(base)))
                rng.shuffle(order)
            d = base[order.pop()]
            texts.append(d)
            size += len(d.encode("utf-8"))
        cctx = zstandard.ZstdCompressor(level=3)
        with open(out / f"{name}.jsonl.zst", "wb") as raw, cctx.stream_writer(raw) as f:
            for i, t in enumerate(texts):
                f.write((json.dumps({"id": f"{k}-{i}", "text": t}) + "\n").encode("utf-8"))
        table = pa.table({"id": [f"{k}-{i}" for i in range(len(texts))], "text": texts})
        pq.write_table(table, out / f"{name}.parquet", row_group_size=8192, compression="zstd")
        print(f"{name}: {len(texts)} documents, {size / 1e6:.0f} MB of text", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="/tmp/toksmith-pipeline")
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--files", type=int, default=4)
    a = ap.parse_args()
    build(Path(a.out), a.size_mb, a.files)


if __name__ == "__main__":
    main()
