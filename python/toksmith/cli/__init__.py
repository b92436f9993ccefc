"""Command-line interface: ``toksmith <command> ...``.

Each sub-command lives in its own module of this package and exposes
``register(subparsers)``; the module adds its parser and sets ``func`` (a
callable taking the parsed ``argparse.Namespace`` and returning an exit code).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from types import ModuleType
from typing import Dict, Optional, Sequence

from .._version import __version__
from . import (
    calm,
    chat,
    convert,
    count,
    cppreason,
    decode,
    encode,
    info,
    tokenize,
    train,
    wordbpe,
)
from . import eval as eval_

_COMMANDS: Dict[str, ModuleType] = {
    "train": train,
    "count": count,
    "encode": encode,
    "decode": decode,
    "info": info,
    "convert": convert,
    "calm": calm,
    "chat": chat,
    "eval": eval_,
    "wordbpe": wordbpe,
    "cppreason": cppreason,
    "tokenize": tokenize,
}
# Order is the order shown in ``toksmith --help``.
SUBCOMMAND_MODULES = list(_COMMANDS)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toksmith",
        description="Train, run and convert byte-level BPE tokenizers.",
    )
    parser.add_argument("--version", action="version", version=f"toksmith {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        _COMMANDS[name].register(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2

    def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
        # a user-facing line, not Python's "file:line: UserWarning" with a source line
        print(f"toksmith {args.command}: warning: {message}", file=sys.stderr)

    try:
        with warnings.catch_warnings():
            warnings.showwarning = show_warning
            return int(args.func(args) or 0)
    except BrokenPipeError:  # e.g. `toksmith encode ... | head`
        return 0
    except KeyboardInterrupt:  # Ctrl-C: one line and the shell's status for SIGINT, no traceback
        print(f"toksmith {args.command}: interrupted", file=sys.stderr)
        return 130
    except (ValueError, OSError, ImportError, TypeError) as exc:
        msg = _missing_file_message(exc, parser, args) or _cli_message(exc, args)
        print(f"toksmith {args.command}: error: {msg}", file=sys.stderr)
        return 1
    except MemoryError:  # one line, never a traceback (issue 36)
        print(f"toksmith {args.command}: error: out of memory", file=sys.stderr)
        return 1
    except (RecursionError, OverflowError) as exc:
        print(f"toksmith {args.command}: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


def _command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace):
    """The parser of the (sub-)command that ``args`` ran."""
    names = [args.command]
    while True:
        sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        if sub is None or not names or names[0] not in sub.choices:
            return parser
        parser = sub.choices[names[0]]
        names = [getattr(args, f"{names[0]}_command", None)]


def _missing_file_message(
    exc: BaseException, parser: argparse.ArgumentParser, args: argparse.Namespace
) -> Optional[str]:
    """For a file that does not exist, the message naming the argument that gave it
    (``-t/--tokenizer 'tok.json': No such file or directory``), or None."""
    filename = getattr(exc, "filename", None)
    if not isinstance(exc, FileNotFoundError) or not isinstance(filename, str):
        return None
    for action in _command_parser(parser, args)._actions:
        value = getattr(args, action.dest, None)
        if value == filename or (isinstance(value, list) and filename in value):
            label = (
                "/".join(action.option_strings) or str(action.metavar or action.dest).split("|")[0]
            )
            return f"{label} {filename!r}: {exc.strerror or 'no such file'}"
    return None


def _cli_message(exc: BaseException, args: argparse.Namespace) -> str:
    """``exc``'s message, with the Python arguments it tells to pass named as this command's
    options (the corpus readers say ``errors="replace"`` and ``text_field=``)."""
    msg = str(exc)
    if hasattr(args, "errors"):
        msg = msg.replace('pass errors="replace"', "pass --errors replace")
    if hasattr(args, "text_field"):
        msg = msg.replace("pass text_field= with", "pass --text-field with")
    return msg


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
