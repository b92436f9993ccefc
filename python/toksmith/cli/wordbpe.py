"""``toksmith wordbpe ...``: the word-level ``</w>`` tokenizer with embeddings (seed 004).

* ``toksmith wordbpe run CORPUS... -o DIR [--merges N] [--dim D] [--backend cpu|numpy|cupy|torch]
  [--seed S] [--prefix NAME] [--sample TEXT]``: count the words of the text files, learn the
  vocabulary, write the word counts, token statistics and embeddings as CSV plus the tokenizer
  as JSON, and show how the tokenizer splits a sample sentence (on stderr; the seed's whole
  pipeline, :func:`toksmith.presets.wordbpe.run`). The output paths go to stdout.
* ``toksmith wordbpe encode TOKENIZER.json [TEXT...] [--tokens]`` (or ``-t TOKENIZER.json``;
  options anywhere): encode the arguments (or stdin) with a trained tokenizer; ids
  space-separated, or the token texts with ``--tokens`` (the seed's inference demo).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..presets import wordbpe
from ._common import add_command_group, add_reading_args, progress_default, read_stdin_utf8


def register(subparsers: Any) -> None:
    parser, sub = add_command_group(
        subparsers,
        "wordbpe",
        help="word-level </w> BPE with token embeddings: train on text files, encode",
        description="Word-level BPE (seed 004): lower-cased words split at camelCase steps, "
        "</w> end-of-word merges, greedy longest-match encoding, token statistics and embeddings as CSV.",
    )

    run = sub.add_parser(
        "run", help="count words, learn the vocabulary, write CSV outputs and the tokenizer"
    )
    run.add_argument("corpus", nargs="+", help="text files, folders (their .txt files) or globs")
    run.add_argument(
        "-o",
        "--output",
        "--out",
        dest="out",
        required=True,
        metavar="DIR",
        help="output folder (created if missing; --out is the old spelling)",
    )
    run.add_argument(
        "--merges", type=int, default=8000, help="number of merges to learn (default 8000)"
    )
    run.add_argument("--dim", type=int, default=128, help="embedding dimension (default 128)")
    run.add_argument(
        "--backend",
        default="cpu",
        choices=["cpu", "numpy", "cupy", "torch"],
        help="embedding backend (cupy / torch run on the GPU)",
    )
    run.add_argument("--device", default=None, help="torch device (default: cuda if available)")
    run.add_argument("--seed", type=int, default=0, help="embedding seed (default 0)")
    run.add_argument("--prefix", default="corpus", help="file name prefix (default: corpus)")
    run.add_argument(
        "--min-frequency", type=int, default=0, help="stop when the best pair is rarer"
    )
    run.add_argument("--keep-case", action="store_true", help="do not lower-case words")
    run.add_argument(
        "--all-files", action="store_true", help="read every file of a folder, not only .txt"
    )
    run.add_argument(
        "--sample",
        default=None,
        metavar="TEXT",
        help="a sentence to tokenize with the trained tokenizer, shown on stderr "
        "(default: a fixed English sentence; --sample '' for none)",
    )
    add_reading_args(run)
    run.set_defaults(func=_run)

    enc = sub.add_parser("encode", help="encode text with a trained tokenizer")
    # options may come between the positionals (`encode TOK.json --tokens TEXT`): argparse
    # alone would take TEXT as an unrecognized argument there
    enc.__class__ = _IntermixedParser
    enc.add_argument(
        "-t",
        "--tokenizer",
        metavar="FILE",
        default=None,
        help="a file written by `toksmith wordbpe run` (PREFIX_tokenizer.json)",
    )
    enc.add_argument(
        "text",
        nargs="*",
        help="text to encode (default: stdin); without -t, a first argument that names an "
        "existing .json file is read as the tokenizer (the old form)",
    )
    enc.add_argument("--tokens", action="store_true", help="print token texts instead of ids")
    enc.set_defaults(func=_encode)


class _IntermixedParser(argparse.ArgumentParser):
    """Parses its arguments with ``parse_known_intermixed_args`` (which itself calls
    ``parse_known_args``, hence the guard)."""

    _intermixed = False

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def,override]
        if self._intermixed:
            return super().parse_known_args(args, namespace)
        self._intermixed = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixed = False


def _run(args: argparse.Namespace) -> int:
    sample = wordbpe.DEFAULT_SAMPLE if args.sample is None else (args.sample or None)
    out = wordbpe.run(
        args.corpus if len(args.corpus) > 1 else args.corpus[0],
        args.out,
        num_merges=args.merges,
        dim=args.dim,
        backend=args.backend,
        device=args.device,
        seed=args.seed,
        prefix=args.prefix,
        min_frequency=args.min_frequency,
        lowercase=not args.keep_case,
        extensions=None if args.all_files else wordbpe.TEXT_EXTENSIONS,
        threads=args.threads,
        progress=not args.no_progress and progress_default(),  # bars only on a terminal
        errors=args.errors,
        sample=sample,
    )
    tok = out["tokenizer"]
    print(
        f"{len(out['word_counts'])} unique words, {tok.n_vocab} tokens ({len(tok.merges)} merges)",
        file=sys.stderr,
    )
    demo = out.get("sample")
    if demo is not None:
        print(f"sample: {demo['text']!r}", file=sys.stderr)
        print(f"tokens: {' '.join(demo['tokens'])}", file=sys.stderr)
    for path in out["files"].values():
        print(path)
    return 0


def _encode(args: argparse.Namespace) -> int:
    words = list(args.text)
    path = args.tokenizer
    if path is None:
        # the old form `wordbpe encode TOK.json [TEXT...]`, accepted only where it cannot be
        # text: the first argument names an existing .json file
        if words and words[0].endswith(".json") and os.path.isfile(words[0]):
            path = words.pop(0)
        else:
            raise ValueError(
                "-t/--tokenizer is required: the file written by `toksmith wordbpe run`"
            )
    tok = wordbpe.load(path)
    text = _join_args(words) if words else read_stdin_utf8()
    ids = tok.encode(text)
    if args.tokens:
        print(" ".join(tok.tokens[i] for i in ids))
    else:
        print(" ".join(map(str, ids)))
    return 0


def _join_args(words: Any) -> str:
    """The TEXT arguments joined by spaces; bytes that are not UTF-8 (which Python hands on as
    lone surrogates) are an error."""
    text = " ".join(words)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(
            "the TEXT arguments are not valid UTF-8: pass UTF-8 text, or pipe it to stdin"
        ) from None
    return text
