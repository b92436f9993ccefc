"""``toksmith count``: count the chunks of a corpus into a file that ``train --from-counts``
reads (see :func:`toksmith.count_chunks`)."""

from __future__ import annotations

import os
import sys
import time

from ..counts import count_chunks, remove_resume_dir
from ..presets import PRESETS
from ._common import check_output_path, check_threads_arg, progress_default


def add_reader_args(p) -> None:
    """The corpus reader's options, shared by ``train`` and ``count``."""
    p.add_argument(
        "--text-field",
        default="text",
        metavar="F",
        help="field holding the text in .jsonl/.json lines and column in .parquet files "
        '(chat lines {"messages": [...]} give their message contents)',
    )
    p.add_argument(
        "--errors",
        choices=["strict", "replace"],
        default="strict",
        help="what to do with invalid UTF-8 in the corpus (binary files are refused either way)",
    )
    p.add_argument(
        "--doc-sep",
        default=None,
        metavar="SEP",
        help="cut text files into documents at SEP (escapes such as \\n\\n are read as such; "
        "default: a text file is one document)",
    )
    p.add_argument(
        "--max-chars",
        type=int,
        default=None,
        metavar="N",
        help="stop after the document that takes the characters read past N (as nanochat's "
        "tok_train --max_chars)",
    )
    p.add_argument(
        "--doc-cap",
        type=int,
        default=None,
        metavar="N",
        help="use only the first N characters of each document (as nanochat's tok_train --doc_cap)",
    )


def doc_sep_arg(value):
    """``--doc-sep`` with backslash escapes read (``\\n\\n`` is a blank line)."""
    if value is None:
        return None
    return value.encode("utf-8").decode("unicode_escape") if "\\" in value else value


def register(sub) -> None:
    p = sub.add_parser(
        "count",
        help="count the chunks of a corpus (mergeable; train with train --from-counts)",
        description="Count the chunks of INPUT files (folders, globs, - for stdin; .txt, "
        ".jsonl/.json, .parquet; .gz/.bz2/.xz/.zst) as `toksmith train` counts them, into FILE. "
        "Counts of parts of a corpus add up: `toksmith train --from-counts a.counts b.counts` "
        "gives the merges of training on both. An interrupted count resumes: each input's "
        "counts are kept in FILE.parts/ until the count finishes.",
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="files, folders, globs or -")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the counts file")
    p.add_argument(
        "--pattern",
        default="cl100k",
        help="split pattern: gpt2, cl100k, o200k, nanochat, cromwell (the preset's split, for "
        "`train --preset cromwell --from-counts`) or a regex (default cl100k)",
    )
    p.add_argument(
        "--pinned",
        action="append",
        default=[],
        metavar="TOKEN",
        help="a pinned token: never split, never merged across (repeatable)",
    )
    add_reader_args(p)
    p.add_argument("--threads", type=int, default=None, help="threads (default: all cores)")
    p.add_argument(
        "--engine",
        choices=["local", "ray"],
        default="local",
        help="ray: count each input in a Ray task (pip install toksmith[ray]); same counts",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no summary")
    p.set_defaults(func=run)


def preset_pattern(pattern: str) -> str:
    """A preset's name (``cromwell``) as its split pattern; any other pattern as it is."""
    return PRESETS[pattern].pattern if pattern in PRESETS else pattern


def run(args) -> int:
    check_output_path(args.output)
    check_threads_arg(args.threads)
    parts = args.output + ".parts"
    t0 = time.perf_counter()
    counts = count_chunks(
        args.inputs,
        pattern=preset_pattern(args.pattern),
        pinned_tokens=args.pinned,
        text_field=args.text_field,
        errors=args.errors,
        doc_sep=doc_sep_arg(args.doc_sep),
        max_chars=args.max_chars,
        doc_cap=args.doc_cap,
        threads=args.threads,
        progress=False if args.quiet else progress_default(),
        resume_dir=parts if args.engine == "local" else None,
        engine=args.engine,
    )
    counts.save(args.output)
    remove_resume_dir(parts)
    if not args.quiet:
        print(
            f"counted {counts.total} chunks ({len(counts)} unique) in "
            f"{counts.stats['bytes'] / 2**20:.1f} MiB of {len(counts.sources)} input(s) in "
            f"{time.perf_counter() - t0:.2f} s -> {os.fspath(args.output)}",
            file=sys.stderr,
        )
    return 0
