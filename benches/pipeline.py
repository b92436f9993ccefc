"""The pipeline benchmark: tokenizing ~1 GB of JSON lines (.jsonl.zst) and parquet into training
shards, GPT-2 vocabulary, EOS after each document, on all cores:

* ``toksmith``: ``toksmith tokenize INPUTS -t tok.json -o OUT --format bin --eos '<|endoftext|>'``;
* ``tiktoken``: the same job written around tiktoken (:func:`tiktoken_job`: the same reading,
  ``encode_ordinary_batch`` on all cores, the same llm.c ``bin`` shards, checked equal to
  toksmith's byte for byte);
* ``datatrove``: datatrove's ``JsonlReader``/``ParquetReader`` + ``DocumentTokenizer`` (Hugging
  Face ``tokenizers``, whose ``encode_batch`` uses every core), one task per input file, unshuffled
  (datatrove's ``.ds`` layout, the token count checked equal);

each in a fresh process under ``/usr/bin/time -v`` (wall time, peak RSS of the largest process).
Also ``toksmith count`` of the jsonl.zst inputs with the local engine and with ``--engine ray`` on
2 local workers, the two count files compared.

    python -m benches.pipeline_data                 # the inputs, into /tmp/toksmith-pipeline
    python -m benches.pipeline [--data DIR] [--only toksmith tiktoken datatrove count] [--kinds jsonl.zst parquet]

Results: ``<data>/results.json`` and a Markdown table on stdout (the rows of BENCHMARKS.md's
pipeline section).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Iterator, List

import numpy as np

from .config import shared_data_dir

SHARD_TOKENS = 100_000_000
EOT = "<|endoftext|>"
BATCH_DOCS = 4096


# ---------------------------------------------------------------------------- the peers' jobs


def read_documents(path: str) -> Iterator[List[str]]:
    """Batches of documents of a .jsonl.zst or .parquet file (the plain way: zstandard + json,
    pyarrow's row groups)."""
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        f = pq.ParquetFile(path)
        for batch in f.iter_batches(batch_size=BATCH_DOCS, columns=["text"]):
            yield batch.column(0).to_pylist()
        return
    import io

    import zstandard

    with open(path, "rb") as raw:
        text = io.TextIOWrapper(zstandard.ZstdDecompressor().stream_reader(raw), encoding="utf-8")
        docs: List[str] = []
        for line in text:
            docs.append(json.loads(line)["text"])
            if len(docs) == BATCH_DOCS:
                yield docs
                docs = []
        if docs:
            yield docs


class BinShards:
    """llm.c shards (fineweb.py's layout) of exactly SHARD_TOKENS tokens, as toksmith's bin."""

    def __init__(self, out: str, name: str) -> None:
        self.out, self.name, self.n = out, name, 0
        self.buf = np.empty(SHARD_TOKENS, dtype=np.uint16)
        self.fill = 0

    def add(self, ids: np.ndarray) -> None:
        while len(ids):
            k = min(len(ids), SHARD_TOKENS - self.fill)
            self.buf[self.fill : self.fill + k] = ids[:k]
            self.fill += k
            ids = ids[k:]
            if self.fill == SHARD_TOKENS:
                self.flush()

    def flush(self) -> None:
        if not self.fill:
            return
        header = np.zeros(256, dtype=np.int32)
        header[:3] = (20240520, 1, self.fill)
        with open(os.path.join(self.out, f"{self.name}_{self.n:06d}.bin"), "wb") as f:
            f.write(header.tobytes())
            f.write(self.buf[: self.fill].tobytes())
        self.n += 1
        self.fill = 0


def tiktoken_job(inputs: List[str], tok_file: str, out: str) -> None:
    import tiktoken
    from tiktoken_ext.openai_public import r50k_pat_str

    from toksmith.files.tiktoken import load_tiktoken_ranks

    ranks = load_tiktoken_ranks(tok_file)
    enc = tiktoken.Encoding("gpt2", pat_str=r50k_pat_str, mergeable_ranks=ranks,
                            special_tokens={EOT: 50256})  # fmt: skip
    eot = enc.eot_token
    os.makedirs(out, exist_ok=True)
    threads = os.cpu_count() or 1
    for i, path in enumerate(inputs):
        stem = os.path.basename(path).split(".")[0]
        shards = BinShards(out, f"{i:05d}-{stem}")
        for docs in read_documents(path):
            lists = enc.encode_ordinary_batch(docs, num_threads=threads)
            for ids in lists:
                ids.append(eot)
            shards.add(np.fromiter((t for ids in lists for t in ids), dtype=np.uint16))
        shards.flush()


def datatrove_job(inputs: List[str], hf_file: str, out: str) -> None:
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import JsonlReader, ParquetReader
    from datatrove.pipeline.tokens.tokenizer import DocumentTokenizer

    folder = os.path.dirname(inputs[0])
    names = [os.path.basename(p) for p in inputs]
    suffix = ".parquet" if names[0].endswith(".parquet") else ".jsonl.zst"
    reader = (
        ParquetReader(folder, glob_pattern=f"*{suffix}")
        if suffix == ".parquet"
        else JsonlReader(folder, glob_pattern=f"*{suffix}", compression="zstd")
    )
    LocalPipelineExecutor(
        pipeline=[
            reader,
            DocumentTokenizer(
                out,
                tokenizer_name_or_path=hf_file,
                eos_token=EOT,
                shuffle_documents=False,
                batch_size=BATCH_DOCS,
                save_final_metadata=False,
            ),
        ],
        tasks=len(inputs),
        # one worker: the tasks run in this process (so /usr/bin/time counts their CPU time), and
        # tokenizers' encode_batch uses every core itself
        workers=1,
        logging_dir=out + "-logs",
    ).run()


# ---------------------------------------------------------------------------- measuring


def timed(cmd: List[str], log: Path) -> Dict[str, float]:
    """Run ``cmd`` under /usr/bin/time -v: wall seconds, peak RSS (MiB), CPU seconds."""
    with open(log, "w") as f:
        t = time.perf_counter()
        rc = subprocess.run(
            ["/usr/bin/time", "-v", *cmd], stdout=f, stderr=subprocess.STDOUT
        ).returncode
        wall = time.perf_counter() - t
    text = log.read_text(errors="replace")
    if rc:
        raise SystemExit(f"{' '.join(cmd)} failed ({rc}): see {log}")

    def field(name: str) -> float:
        m = re.search(rf"{re.escape(name)}: ([\d.]+)", text)
        return float(m.group(1)) if m else float("nan")

    return {
        "wall_s": round(wall, 2),
        "peak_rss_mib": round(field("Maximum resident set size (kbytes)") / 1024, 1),
        "cpu_s": round(field("User time (seconds)") + field("System time (seconds)"), 2),
    }


def bin_tokens(folder: str) -> int:
    return sum(int(np.fromfile(p, dtype="<i4", count=3)[2]) for p in glob.glob(f"{folder}/*.bin"))


def same_bin_shards(a: str, b: str) -> bool:
    na = sorted(os.path.basename(p) for p in glob.glob(f"{a}/*.bin"))
    nb = sorted(os.path.basename(p) for p in glob.glob(f"{b}/*.bin"))
    if na != nb or not na:
        return False
    for n in na:
        if subprocess.run(["cmp", "-s", f"{a}/{n}", f"{b}/{n}"]).returncode:
            return False
    return True


def ds_tokens(folder: str) -> int:
    return sum(os.path.getsize(p) // 2 for p in glob.glob(f"{folder}/**/*.ds", recursive=True))


def prepare_tokenizers(data: Path) -> Dict[str, str]:
    import toksmith
    from toksmith.formats.huggingface import huggingface_json

    ranks_file = str(shared_data_dir() / "vocabs" / "gpt2.tiktoken")
    tok = toksmith.from_tiktoken(ranks_file, preset="gpt2")
    tok_json = data / "gpt2.toksmith.json"
    tok.save(str(tok_json))
    hf_json = data / "gpt2.hf.json"
    hf_json.write_text(json.dumps(huggingface_json(tok)), encoding="utf-8")
    return {"ranks": ranks_file, "toksmith": str(tok_json), "hf": str(hf_json)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="/tmp/toksmith-pipeline")
    ap.add_argument("--only", nargs="*", default=["toksmith", "tiktoken", "datatrove", "count"])
    ap.add_argument("--kinds", nargs="*", default=["jsonl.zst", "parquet"])
    ap.add_argument("job", nargs="*", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.job:  # a peer's job, in its own process: JOB TOKENIZER OUT INPUTS...
        kind, tok_file, out, *inputs = a.job
        {"tiktoken": tiktoken_job, "datatrove": datatrove_job}[kind](inputs, tok_file, out)
        return
    data = Path(a.data)
    toks = prepare_tokenizers(data)
    results_path = data / "results.json"
    results = json.loads(results_path.read_text()) if results_path.exists() else {}
    me = [sys.executable, "-m", "benches.pipeline"]
    for kind in a.kinds:
        inputs = sorted(glob.glob(str(data / f"*.{kind}")))
        size = sum(os.path.getsize(p) for p in inputs)
        for lib in [x for x in ("toksmith", "tiktoken", "datatrove") if x in a.only]:
            out = str(data / f"out-{lib}-{kind}")
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(out + "-logs", ignore_errors=True)
            if lib == "toksmith":
                cmd = ["toksmith", "tokenize", *inputs, "-t", toks["toksmith"], "-o", out,
                       "--format", "bin", "--eos", EOT, "--quiet"]  # fmt: skip
            elif lib == "tiktoken":
                cmd = [*me, "--", "tiktoken", toks["ranks"], out, *inputs]
            else:
                cmd = [*me, "--", "datatrove", toks["hf"], out, *inputs]
            print(f"{kind} {lib}...", file=sys.stderr, flush=True)
            r = timed(cmd, data / f"log-{lib}-{kind}.txt")
            r["tokens"] = ds_tokens(out) if lib == "datatrove" else bin_tokens(out)
            r["input_bytes"] = size
            if lib == "tiktoken" and os.path.isdir(str(data / f"out-toksmith-{kind}")):
                r["same_shards_as_toksmith"] = same_bin_shards(
                    out, str(data / f"out-toksmith-{kind}")
                )
            results[f"{kind}/{lib}"] = r
            results_path.write_text(json.dumps(results, indent=1))
            print(f"  {r}", file=sys.stderr, flush=True)
    if "count" in a.only:
        inputs = sorted(glob.glob(str(data / "*.jsonl.zst")))
        files = {}
        for engine in ("local", "ray"):
            out = str(data / f"counts-{engine}.bin")
            cmd = ["toksmith", "count", *inputs, "-o", out, "--pattern", "gpt2", "--engine", engine]
            print(f"count {engine}...", file=sys.stderr, flush=True)
            r = timed(cmd, data / f"log-count-{engine}.txt")
            files[engine] = out
            results[f"count/{engine}"] = r
            print(f"  {r}", file=sys.stderr, flush=True)
        same = subprocess.run(["cmp", "-s", files["local"], files["ray"]]).returncode == 0
        results["count/identical"] = same
        results_path.write_text(json.dumps(results, indent=1))
        print(f"  identical count files: {same}", file=sys.stderr)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
