"""``toksmith tokenize``: corpora -> training shards (see :func:`toksmith.dataset.tokenize_dataset`)."""

from __future__ import annotations

import sys

from ..dataset import tokenize_dataset
from ._common import add_tokenizer_arg, check_threads_arg, load_tokenizer


def register(sub) -> None:
    p = sub.add_parser(
        "tokenize",
        help="tokenize corpora into training shards (llm.c bin, megatron, datatrove, npy)",
        description="Tokenize INPUT files (folders and globs too: .txt, .jsonl/.json, .parquet, "
        "compressed .gz/.bz2/.xz/.zst) into shards in OUT_DIR, one shard set per input plus "
        "manifest.json. A rerun resumes an interrupted run and skips finished inputs.",
    )
    p.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="text files, folders, globs or .jsonl files to tokenize",
    )
    add_tokenizer_arg(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT_DIR", help="folder for the shards")
    p.add_argument(
        "--format",
        choices=["bin", "megatron", "datatrove", "npy"],
        default="bin",
        help="bin: llm.c/nanoGPT shards; megatron: .bin+.idx; datatrove: .ds+.ds.index; "
        "npy: .ids.npy+.offsets.npy (default bin)",
    )
    p.add_argument("--text-field", default="text", metavar="F", help="JSON/parquet text field")
    p.add_argument(
        "--bos", default=None, metavar="TOKEN", help="special token before each document"
    )
    p.add_argument("--eos", default=None, metavar="TOKEN", help="special token after each document")
    p.add_argument(
        "--shard-tokens", type=int, default=100_000_000, metavar="N", help="tokens per shard"
    )
    p.add_argument(
        "--shuffle",
        type=int,
        default=None,
        metavar="SEED",
        help="shuffle documents (within windows of one shard's tokens) with this seed",
    )
    p.add_argument("--threads", type=int, default=None, metavar="N", help="encoding threads")
    p.add_argument(
        "--engine",
        choices=["local", "ray"],
        default="local",
        help="run on this machine (local, the default) or on a Ray cluster (ray)",
    )
    p.add_argument(
        "--errors",
        choices=["strict", "replace"],
        default="strict",
        help="invalid UTF-8: raise (strict) or replace with U+FFFD",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no summary")
    p.set_defaults(func=run)


def run(args) -> int:
    check_threads_arg(args.threads)
    tok = load_tokenizer(args.tokenizer, args.pattern)
    m = tokenize_dataset(
        args.inputs,
        tok,
        args.output,
        format=args.format,
        text_field=args.text_field,
        bos=args.bos,
        eos=args.eos,
        shard_tokens=args.shard_tokens,
        shuffle=args.shuffle,
        threads=args.threads,
        engine=args.engine,
        errors=args.errors,
        progress=False if args.quiet else None,
    )
    if not args.quiet:
        shards = sum(len(e["shards"]) for e in m["inputs"])
        print(
            f"{m['tokens']} tokens, {m['documents']} documents, {shards} shards "
            f"({m['format']}, {m['dtype']}) in {args.output}",
            file=sys.stderr,
        )
    return 0
