"""One-thread encode speed of the SentencePiece, Unigram and WordPiece models against their own
libraries, on the same documents, ids checked equal.

    python -m benches.pipeline_models               # ~2 MB per corpus, 5 runs
    python -m benches.pipeline_models --mb 0.3 --runs 1 --models llama2 --corpora english

Models (from ``../shared/data/vocabs/zoo``, or ``$TOKSMITH_BENCH_DATA/vocabs/zoo``):

* ``llama2``, ``mistral``: SentencePiece BPE with byte fallback (``tokenizer.model``); peers
  ``sentencepiece`` and ``tokenizers`` (the ``tokenizer.json`` that ``transformers`` converts
  from the same file);
* ``t5``: SentencePiece Unigram; toksmith reads ``spiece.model`` (peer ``sentencepiece``) and
  ``tokenizer.json`` (peer ``tokenizers``);
* ``bert``: WordPiece, the ``bert_base_uncased`` folder (peers ``tokenizers`` on its
  ``tokenizer.json`` and ``transformers``' ``BertTokenizerFast``, the same Rust code plus Python).

Corpora: English, Python code and multilingual text (``corpora/*.txt.xz``), cut into 1-8 KB
documents at line ends. Each library encodes the documents one by one (``encode`` per document)
on one thread (``RAYON_NUM_THREADS=1``, ``TOKENIZERS_PARALLELISM=false``); the figure is the
median over ``--runs`` of the process CPU time, as MB/s of UTF-8 input. The ratios are toksmith's
speed over each peer's. Every library's ids are compared with the reference library's (the one
whose file it is) and mismatching documents are counted. Output: a Markdown table on stdout (the
rows of BENCHMARKS.md's section) and ``benches/out/pipeline_models.json``.
"""

from __future__ import annotations

import os

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse  # noqa: E402
import json  # noqa: E402
import lzma  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable, Dict, List, Tuple  # noqa: E402

from .config import DEFAULT_OUT, shared_data_dir  # noqa: E402

CORPORA = {
    "english": "english.txt.xz",
    "code": "python.txt.xz",
    "multilingual": "multilingual_ui.txt.xz",
}
MODELS = ("llama2", "mistral", "t5", "t5-json", "bert")

Encoder = Callable[[str], List[int]]


def zoo() -> Path:
    return shared_data_dir() / "vocabs" / "zoo"


def read_docs(name: str, mb: float) -> List[str]:
    """About ``mb`` MB of a corpus as 1-8 KB documents cut at line ends."""
    budget = int(mb * 1_000_000)
    with lzma.open(shared_data_dir() / "corpora" / CORPORA[name], "rt", encoding="utf-8") as f:
        text = f.read(budget + 100_000)
    docs: List[str] = []
    cur: List[str] = []
    size = 0
    total = 0
    target = 1024
    for line in text.splitlines(keepends=True):
        cur.append(line)
        size += len(line.encode())
        if size >= target:
            docs.append("".join(cur))
            total += size
            cur, size = [], 0
            target = 1024 + (target * 7919) % 7168  # 1-8 KB, deterministic
            if total >= budget:
                break
    return docs


def hf_llama_json(model_file: Path) -> str:
    """The ``tokenizer.json`` that transformers converts from a Llama-style ``.model``."""
    from transformers import LlamaTokenizerFast

    tok = LlamaTokenizerFast(vocab_file=str(model_file), legacy=False, from_slow=True)
    out = Path(tempfile.mkdtemp()) / "tokenizer.json"
    tok.backend_tokenizer.save(str(out))
    return str(out)


def t5_json() -> str:
    out = Path(tempfile.mkdtemp()) / "tokenizer.json"
    with lzma.open(zoo() / "t5_v1_1" / "tokenizer.json.xz", "rb") as f:
        out.write_bytes(f.read())
    return str(out)


def encoders(model: str) -> Tuple[str, Dict[str, Encoder]]:
    """(the reference library's name, library -> encode function) of a model."""
    import sentencepiece as spm
    import tokenizers

    import toksmith

    def hf(path: str) -> Encoder:
        tok = tokenizers.Tokenizer.from_file(path)
        return lambda t: tok.encode(t, add_special_tokens=False).ids

    def ts(path: str) -> Encoder:
        tok: Any = toksmith.load_any(path)
        # no template tokens (T5's tokenizer.json appends `</s>`), as the peers are called
        return lambda t: tok.encode(t, special=False, add_special_tokens=False)

    if model in ("llama2", "mistral"):
        f = zoo() / (
            "llama2_tokenizer.model" if model == "llama2" else "mistral_v1_tokenizer.model"
        )
        sp = spm.SentencePieceProcessor(model_file=str(f))
        return "sentencepiece", {
            "toksmith": ts(str(f)),
            "sentencepiece": lambda t: sp.encode(t),
            "tokenizers": hf(hf_llama_json(f)),
        }
    if model == "t5":
        f = zoo() / "t5_v1_1" / "spiece.model"
        sp = spm.SentencePieceProcessor(model_file=str(f))
        return "sentencepiece", {"toksmith": ts(str(f)), "sentencepiece": lambda t: sp.encode(t)}
    if model == "t5-json":
        j = t5_json()
        return "tokenizers", {"toksmith": ts(j), "tokenizers": hf(j)}
    if model == "bert":
        folder = zoo() / "bert_base_uncased"
        from transformers import BertTokenizerFast

        bt = BertTokenizerFast.from_pretrained(str(folder))
        return "tokenizers", {
            "toksmith": ts(str(folder / "vocab.txt")),
            "tokenizers": hf(str(folder / "tokenizer.json")),
            "transformers": lambda t: bt(t, add_special_tokens=False)["input_ids"],
        }
    raise ValueError(model)


def cpu_time(enc: Encoder, docs: List[str]) -> Tuple[float, List[List[int]]]:
    t0 = time.process_time()
    out = [enc(d) for d in docs]
    return time.process_time() - t0, out


def main(argv: List[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=2.0, help="MB of each corpus")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--models", nargs="*", default=list(MODELS), choices=MODELS)
    ap.add_argument("--corpora", nargs="*", default=list(CORPORA), choices=list(CORPORA))
    ap.add_argument("--out", default=str(DEFAULT_OUT / "pipeline_models.json"))
    args = ap.parse_args(argv)

    corpora = {c: read_docs(c, args.mb) for c in args.corpora}
    results: List[Dict[str, Any]] = []
    bad = 0
    for model in args.models:
        ref, encs = encoders(model)
        for cname, docs in corpora.items():
            mb = sum(len(d.encode()) for d in docs) / 1e6
            for enc in encs.values():  # warm-up (first-call costs, caches of the allocator)
                for d in docs[:20]:
                    enc(d)
            times: Dict[str, List[float]] = {lib: [] for lib in encs}
            ids: Dict[str, List[List[int]]] = {}
            for _ in range(args.runs):
                for lib, enc in encs.items():
                    t, out = cpu_time(enc, docs)
                    times[lib].append(t)
                    ids[lib] = out
            # the first run meets every document for the first time (toksmith's word cache,
            # like tokenizers' own, is warm from the second run on)
            row: Dict[str, Any] = {"model": model, "corpus": cname, "mb": mb, "reference": ref}
            row["toksmith_first_run_mb_s"] = mb / times["toksmith"][0]
            for lib in encs:
                med = statistics.median(times[lib])
                row[lib] = {
                    "mb_s": mb / med,
                    "mismatched_docs": sum(a != b for a, b in zip(ids[lib], ids[ref])),
                }
            bad += row["toksmith"]["mismatched_docs"]
            results.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)

    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1))
    print()
    print(
        "| model | corpus | toksmith MB/s (first run) | peer | peer MB/s | toksmith / peer | ids |"
    )
    print("|---|---|---:|---|---:|---:|---|")
    for row in results:
        ts = row["toksmith"]["mb_s"]
        for lib, v in row.items():
            if not isinstance(v, dict) or lib == "toksmith":
                continue
            same = "equal" if row["toksmith"]["mismatched_docs"] == 0 else "DIFFER"
            if lib != row["reference"] and v["mismatched_docs"]:
                same += f" ({lib}: {v['mismatched_docs']} docs differ from {row['reference']})"
            print(
                f"| {row['model']} | {row['corpus']} | {ts:.2f} ({row['toksmith_first_run_mb_s']:.2f}) "
                f"| {lib} | {v['mb_s']:.2f} "
                f"| {ts / v['mb_s']:.2f}x | {same} |"
            )
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
