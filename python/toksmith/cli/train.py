"""``toksmith train``: train a tokenizer on files (or the built-in default corpus)."""

from __future__ import annotations

import functools
import operator
import os
import sys
import time

import toksmith

from ..corpus import default_corpus
from ..counts import ChunkCounts
from ..presets import PRESETS, get_preset
from ..presets.nanochat import TOKEN_BYTES_NAME, ChatTokenizer
from ..pretokenize import resolve_pattern
from ._common import check_output_path, check_threads_arg, progress_default
from .count import add_reader_args, doc_sep_arg, preset_pattern


def register(sub) -> None:
    p = sub.add_parser(
        "train",
        help="train a byte-level BPE tokenizer",
        description="Train a byte-level BPE tokenizer on files, folders or globs of UTF-8 text "
        "(.jsonl: the --text-field of each line; .xz/.lzma/.gz/.bz2 files are decompressed as they are "
        "read, and a pipe such as <(zstdcat corpus.zst) is read as a stream). With no PATH, trains on a built-in default corpus "
        "(the Python standard library sources of this interpreter).",
    )
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="corpus files, folders (recursed), globs, .jsonl/.parquet files or - (stdin) "
        "(default: the built-in default corpus)",
    )
    p.add_argument(
        "--from-counts",
        nargs="+",
        default=None,
        metavar="FILE",
        help="train from counts files written by `toksmith count` (added up) instead of PATHs",
    )
    p.add_argument(
        "--vocab-size",
        type=int,
        default=None,
        help="total vocabulary size: 256 bytes + merges + specials + pinned (default 8192, or the preset's)",
    )
    p.add_argument(
        "--pattern",
        default=None,
        help="split pattern: gpt2, cl100k, o200k, nanochat, cromwell (the preset's split) or "
        "a regex (default cl100k)",
    )
    p.add_argument(
        "--special",
        action="append",
        default=[],
        metavar="TOKEN",
        help="add a special token (repeatable)",
    )
    p.add_argument(
        "--pinned",
        action="append",
        default=[],
        metavar="TOKEN",
        help="add a pinned token: always one token where its text occurs (repeatable)",
    )
    p.add_argument(
        "--preset",
        default=None,
        metavar="{" + ",".join(sorted(PRESETS)) + "}",
        help=f"training defaults of a preset: {' or '.join(sorted(PRESETS))} (cppreason and "
        "wordbpe have commands of their own: toksmith cppreason train, toksmith wordbpe run)",
    )
    p.add_argument("--threads", type=int, default=None, help="threads (default: all cores)")
    add_reader_args(p)
    p.add_argument(
        "--min-frequency",
        type=int,
        default=0,
        metavar="N",
        help="stop when the most frequent pair left occurs fewer than N times (default 0: no minimum)",
    )
    p.add_argument(
        "--max-token-length",
        type=int,
        default=None,
        metavar="BYTES",
        help="never make a token longer than BYTES bytes (default: no limit)",
    )
    p.add_argument("--name", default=None, help="name stored in the file")
    p.add_argument(
        "-o", "--output", default="tokenizer.json", help="output file (default tokenizer.json)"
    )
    bar = p.add_mutually_exclusive_group()
    bar.add_argument(
        "--progress", dest="progress", action="store_true", default=None, help="show progress bars"
    )
    bar.add_argument(
        "--no-progress", dest="progress", action="store_false", help="no progress bars"
    )
    bar.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress bars and no messages on stderr (errors and warnings still show)",
    )
    p.set_defaults(func=run)


def run(args) -> int:
    # before the training, which may take long: an output that cannot be written, or a corpus file
    # that it would overwrite
    check_output_path(args.output)
    for path in args.paths:
        if (
            os.path.isfile(path)
            and os.path.isfile(args.output)
            and os.path.samefile(path, args.output)
        ):
            raise ValueError(
                f"-o {args.output!r} is the corpus file {path!r}: writing the tokenizer would "
                "replace it; pass another output file"
            )
    check_threads_arg(args.threads)
    pattern, vocab_size, specials = "cl100k", 8192, list(args.special)
    if (
        args.preset is not None
    ):  # not `if args.preset`: an empty --preset/--pattern is an error, not the default
        own = {"cppreason": "toksmith cppreason train", "wordbpe": "toksmith wordbpe run"}.get(
            args.preset
        )
        if own:
            raise ValueError(
                f"--preset {args.preset}: this tokenizer is trained with a command of its own: "
                f"`{own} PATH... -o ...` (--preset takes nanochat or cromwell)"
            )
        preset = get_preset(args.preset)
        pattern, vocab_size = preset.pattern, preset.vocab_size
        specials = preset.special_token_spec(specials)  # type: ignore[assignment]
    if args.pattern is not None:
        pattern = preset_pattern(args.pattern)
    if args.vocab_size is not None:
        vocab_size = args.vocab_size
    if args.from_counts:
        if args.paths:
            raise ValueError(
                "--from-counts trains on counts files: pass PATHs to `toksmith count` instead"
            )
        counts = functools.reduce(operator.add, (ChunkCounts.load(f) for f in args.from_counts))
        if args.preset is not None and args.pattern is None:
            if resolve_pattern(pattern)[0] != counts.pattern:
                raise ValueError(
                    f"--preset {args.preset} trains on its own split, and these counts were made "
                    f"with another ({counts.pattern[:60]!r}): count with `toksmith count "
                    f"PATH... --pattern {args.preset} -o FILE`"
                )
        progress = progress_default() if args.progress is None else args.progress
        t0 = time.perf_counter()
        tok = toksmith.train_from_counts(
            counts,
            vocab_size=vocab_size,
            pattern=pattern if args.pattern is not None or args.preset is not None else None,
            special_tokens=specials,
            pinned_tokens=list(args.pinned),
            threads=args.threads,
            progress=progress,
            name=args.name or args.preset,
            min_frequency=args.min_frequency,
            max_token_length=args.max_token_length,
        )
        return _save(args, tok, time.perf_counter() - t0)
    paths = args.paths
    if not paths:
        paths = default_corpus()
        if not args.quiet:
            print(
                f"toksmith train: no PATH given, using the built-in default corpus: {len(paths)} "
                f"Python standard library files from {paths[0].parent}",
                file=sys.stderr,
            )
    progress = progress_default() if args.progress is None else args.progress
    if args.quiet:
        progress = False
    t0 = time.perf_counter()
    # looked up on the package at each call (not bound at import), as a caller of toksmith.train
    tok = toksmith.train(
        paths,
        vocab_size=vocab_size,
        pattern=pattern,
        special_tokens=specials,
        pinned_tokens=list(args.pinned),
        threads=args.threads,
        progress=progress,
        text_field=args.text_field,
        errors=args.errors,
        name=args.name or args.preset,
        min_frequency=args.min_frequency,
        max_token_length=args.max_token_length,
        doc_sep=doc_sep_arg(args.doc_sep),
        max_chars=args.max_chars,
        doc_cap=args.doc_cap,
    )
    return _save(args, tok, time.perf_counter() - t0)


def _save(args, tok, dt: float) -> int:
    tok.metadata["preset"] = args.preset
    tok.save(args.output)
    if args.preset == "nanochat":
        # nanochat's tok_train also writes the bytes of each token id, for bits-per-byte
        folder = os.path.dirname(os.path.abspath(args.output))
        try:
            path = ChatTokenizer(tok).save_token_bytes(folder)
            print(f"token bytes -> {path}", file=sys.stderr)
        except ImportError:
            print(
                f"toksmith train: {TOKEN_BYTES_NAME} not written: it needs numpy "
                "(pip install toksmith[numpy])",
                file=sys.stderr,
            )
    corpus = tok.metadata.get("corpus", {})
    if args.quiet:
        return 0
    print(
        f"trained {tok.n_vocab} tokens ({tok.metadata.get('merges_learned')} merges, "
        f"{len(tok.special_tokens)} specials) on {corpus.get('bytes', 0) / 1e6:.1f} MB in {dt:.2f} s "
        f"-> {args.output}",
        file=sys.stderr,
    )
    return 0
