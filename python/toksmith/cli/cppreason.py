"""``toksmith cppreason ...``: the C++ hybrid tokenizer (seed 001).

* ``toksmith cppreason train FILES... -o TOKENIZER.json [--vocab-size N]``: learn the BPE part
  (ids from 1600) from C++ files or folders.
* ``toksmith cppreason encode -t TOKENIZER.json [TEXT...] [--tokens]``: encode the arguments (or
  stdin); ids space-separated, or the token texts with ``--tokens``.
* ``toksmith cppreason decode -t TOKENIZER.json [IDS...]``: ids (arguments or stdin) to text,
  spaced by the seed's rule.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..presets import cppreason
from ..presets.cppreason import FIRST_LEARNED
from ._common import add_command_group, add_reading_args, progress_default, read_stdin_utf8


def register(subparsers: Any) -> None:
    _, sub = add_command_group(
        subparsers,
        "cppreason",
        help="C++ hybrid tokenizer: fixed ids for C++ primitives + learned BPE; train, encode, decode",
        description="CppReason (seed 001): fixed ids 0-1599 for keywords, operators, STL names, numbers "
        "0-999, diff markers and newlines, as whole words; byte-level BPE from 1600 for other words; "
        "spaces and tabs are not tokens.",
    )
    train = sub.add_parser("train", help="learn the BPE part from C++ files or folders")
    train.add_argument("files", nargs="+", help="files, folders (recursed) or globs")
    train.add_argument(
        "-o", "--output", required=True, help="tokenizer file to write (toksmith JSON)"
    )
    train.add_argument("--vocab-size", type=int, default=32768, help="total size (default 32768)")
    train.add_argument(
        "--min-frequency",
        type=int,
        default=2,
        help="merge only pairs seen at least this often (default 2, the seed's)",
    )
    train.add_argument(
        "--single-punctuation",
        action="store_true",
        help="every punctuation character a word of its own, as the seed's checklist shows "
        "them (default: runs such as `();` are learned words, about 6%% fewer tokens)",
    )
    add_reading_args(train)
    train.set_defaults(func=_train)

    enc = sub.add_parser("encode", help="encode text (arguments or stdin)")
    enc.add_argument(
        "-t", "--tokenizer", required=True, help="a file written by `toksmith cppreason train`"
    )
    enc.add_argument("text", nargs="*", help="text to encode (default: stdin)")
    enc.add_argument("--tokens", action="store_true", help="print token texts instead of ids")
    enc.set_defaults(func=_encode)

    dec = sub.add_parser("decode", help="decode ids (arguments or stdin) to text")
    dec.add_argument(
        "-t", "--tokenizer", required=True, help="a file written by `toksmith cppreason train`"
    )
    dec.add_argument(
        "ids", nargs="*", help="token ids (default: whitespace-separated ids from stdin)"
    )
    dec.set_defaults(func=_decode)


def _train(args: argparse.Namespace) -> int:
    # as paths: a list of str that are not all existing files is read as texts by train(), so a
    # missing file or a quoted glob among several would have trained on the names themselves
    files = [Path(f) for f in args.files]
    tok = cppreason.train(
        files if len(files) > 1 else files[0],
        vocab_size=args.vocab_size,
        threads=args.threads,
        progress=not args.no_progress and progress_default(),  # bars only on a terminal
        errors=args.errors,
        min_frequency=args.min_frequency,
        punctuation_runs=not args.single_punctuation,
    )
    tok.save(args.output)
    print(f"{tok.vocab_size} tokens -> {args.output}", file=sys.stderr)
    return 0


def _encode(args: argparse.Namespace) -> int:
    tok = cppreason.load(args.tokenizer)
    text = " ".join(_utf8_arg(a) for a in args.text) if args.text else read_stdin_utf8()
    if args.tokens:
        print(" ".join(_shown(tok, i) for i in tok.encode(text)))
    else:
        print(" ".join(map(str, tok.encode(text))))
    return 0


def _decode(args: argparse.Namespace) -> int:
    tok = cppreason.load(args.tokenizer)
    words = args.ids if args.ids else read_stdin_utf8().split()
    try:
        ids = [int(w) for w in words]
    except ValueError:
        raise ValueError(
            f"ids must be integers, e.g. `toksmith cppreason decode -t T.json 20 120 335`; got {words[:5]}"
        ) from None
    sys.stdout.write(tok.decode(ids) + "\n")
    return 0


def _shown(tok: Any, id: int) -> str:
    """A token as ``--tokens`` prints it: its text escaped as Python does (``\\n``, ``\\\\``), the
    bytes of a learned token that are not whole UTF-8 characters as ``\\xNN`` (not U+FFFD)."""
    if id < FIRST_LEARNED:
        return repr(tok.id_to_token(id))[1:-1]
    text = tok.tokenizer.decode_bytes([id]).decode("utf-8", "surrogateescape")
    return "".join(
        f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else repr(c)[1:-1] for c in text
    )


def _utf8_arg(arg: str) -> str:
    """A command-line argument that was valid UTF-8 (Python hands bytes that are not over as
    lone surrogates, which encoding would turn into U+FFFD without a word)."""
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError as e:
        try:
            raw = arg.encode("utf-8", "surrogateescape")[:40]  # the bytes as given
        except UnicodeEncodeError:  # a surrogate no byte maps to (main() called with such a str)
            raw = arg.encode("utf-8", "backslashreplace")[:40]
        raise ValueError(
            f"the argument {raw!r} is not valid UTF-8 (at character {e.start}); pass UTF-8 text, "
            f"or the text on stdin"
        ) from None
    return arg
