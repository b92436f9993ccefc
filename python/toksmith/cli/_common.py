"""Helpers shared by the CLI commands."""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import stat
import sys
from typing import Any, BinaryIO, Iterator, Optional, Tuple

from .._args import THREADS_OPTION_RANGE_ERROR, thread_count
from .._fileio import atomic_write
from .._paths import fspath
from ..corpus import decompression_errors, open_binary
from ..errors import UnknownModelError
from ..files.tiktoken import OPENAI_ENCODINGS, encoding_name_for_model, openai_encoding
from ..registry import get_encoding, load_any


def add_command_group(subparsers: Any, name: str, help: str, description: str) -> Tuple[Any, Any]:
    """A command with sub-commands (``toksmith NAME SUBCOMMAND ...``): returns (its parser, the
    sub-parsers to add to). Given no sub-command it prints its help and exits with status 2."""
    parser = subparsers.add_parser(name, help=help, description=description)
    sub = parser.add_subparsers(dest=f"{name}_command", metavar="SUBCOMMAND")

    def show_help(args: Any) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(func=show_help)
    return parser, sub


def add_reading_args(p: Any) -> None:
    """``--threads``, ``--errors`` and ``--no-progress``, for the commands that read a corpus."""
    p.add_argument("--threads", type=int, default=None, help="threads (default: all cores)")
    p.add_argument(
        "--errors",
        default="strict",
        choices=["strict", "replace"],
        help="invalid UTF-8: raise (strict) or replace with U+FFFD",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def add_tokenizer_arg(p) -> None:
    p.add_argument(
        "-t",
        "--tokenizer",
        required=True,
        metavar="FILE",
        help="tokenizer file (toksmith JSON, .tiktoken, tokenizer.json, GPT-2 files), or the name of "
        "an OpenAI encoding (cl100k_base, o200k_base...) whose file tiktoken has cached",
    )
    p.add_argument(
        "--pattern",
        default=None,
        metavar="NAME|REGEX",
        help="split pattern for a file that stores none (a .tiktoken rank file that is not "
        "OpenAI's, GPT-2 files): gpt2, cl100k, o200k, nanochat or a regex",
    )


def check_threads_arg(threads: Optional[int]) -> None:
    """The ``--threads`` option: None (all cores) or 1 to MAX_THREADS."""
    thread_count(threads, "--threads", range_error=THREADS_OPTION_RANGE_ERROR)


def special_tokens_arg(value: Optional[str]) -> Optional[dict]:
    """The ``--special-tokens`` option: a JSON object ``{"<|bos|>": 0}``, or None if not given."""
    if value is None:
        return None
    try:
        specials = json.loads(value)
    except json.JSONDecodeError as e:
        raise ValueError(f"--special-tokens is not valid JSON: {e}") from None
    if not isinstance(specials, dict):
        raise ValueError("--special-tokens must be a JSON object mapping token text to id")
    return specials


def load_tokenizer(path: str, pattern: Optional[str] = None):
    """A tokenizer file; a name that is no file but an OpenAI encoding's comes from tiktoken's
    cache (:func:`toksmith.get_encoding`). ``pattern`` (``--pattern``) is the split pattern of a
    file format that stores none."""
    if pattern == "":
        raise ValueError(
            "--pattern is empty: pass a pattern name (gpt2, cl100k, o200k, nanochat) or a regex"
        )
    if not os.path.exists(path):
        try:
            openai_encoding(path)
        except ValueError:
            try:  # a model name (gpt-4o), as tiktoken.encoding_for_model takes it
                encoding = encoding_name_for_model(path)
            except (UnknownModelError, TypeError):
                encoding = None
            if encoding is not None and not os.path.lexists(path):
                if pattern is not None:
                    raise ValueError(
                        f"{path} is an OpenAI model, whose encoding ({encoding}) has its own split "
                        "pattern: --pattern only applies to .tiktoken and GPT-2 files that store none"
                    ) from None
                return get_encoding(encoding)
            if not os.path.lexists(path) and os.path.basename(path) == path and "." not in path:
                # a bare name, as an encoding's: say both readings

                raise FileNotFoundError(
                    errno.ENOENT,
                    f"no tokenizer file of that name, nor an OpenAI encoding or model of that name "
                    f"(OpenAI encodings: {', '.join(sorted(OPENAI_ENCODINGS))}; models as "
                    "tiktoken.encoding_for_model takes them: gpt-4o, gpt-4...); pass a tokenizer "
                    "file or one of those names",
                    path,
                ) from None
        else:
            if pattern is not None:
                raise ValueError(
                    f"{path} is OpenAI's encoding, which has its own split pattern: --pattern "
                    "only applies to .tiktoken and GPT-2 files that store none"
                )
            return get_encoding(path)
    try:
        return load_any(path, pattern=pattern)
    except ValueError as e:
        if pattern is not None and "pattern=/special_tokens=" in str(e):
            raise ValueError(
                f"{path} stores its own split pattern: --pattern only applies to .tiktoken "
                "and GPT-2 files that store none"
            ) from None
        raise


def refuse_preset_file(tok: Any, command: str) -> None:
    """Stop ``toksmith encode``/``decode`` on a CppReason file: its fixed whole-word ids are not
    in the byte-level table the file holds, so the plain tokenizer would give other ids."""
    if getattr(tok, "metadata", {}).get("preset") == "cppreason":
        raise ValueError(
            f"this is a CppReason tokenizer (fixed whole-word ids in front of BPE): use "
            f"`toksmith cppreason {command}`, or toksmith.presets.cppreason.load(...)"
        )


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # replaced by an object, or closed
        return False


def open_input(path: Optional[str]) -> BinaryIO:
    """stdin for None or ``-``, else the file (``.xz``/``.lzma``/``.gz``/``.bz2`` decompressed)."""
    if path is None or path == "-":
        if _isatty(sys.stdin):
            # typed input: read it whole, so the first Ctrl-D ends it (reading blocks of a fixed
            # size asks the terminal again after a Ctrl-D that ended a partial block)
            return io.BytesIO(sys.stdin.buffer.read())
        return sys.stdin.buffer

    return open_binary(path)


def open_output(path: Optional[str]) -> BinaryIO:
    if path is None or path == "-":
        return sys.stdout.buffer

    return open(fspath(path), "wb")  # not atomic: open_io writes files through atomic_write


def _regular_file_id(path: Optional[str], std: Any) -> Optional[Tuple[int, int]]:
    """(device, inode) of the regular file at ``path`` (for None or ``-``: behind the standard
    stream ``std``), or None when it is no regular file or cannot be told."""
    try:
        st = os.fstat(std.fileno()) if path is None or path == "-" else os.stat(path)
    except (OSError, ValueError, AttributeError):  # no such file; a stream without a descriptor
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def refuse_same_file(input_path: Optional[str], output_path: Optional[str]) -> None:
    """ValueError when the output is the input file (``-o`` naming it, or stdout redirected onto
    it): opening the output truncates the input before it is read (or, appending, the command
    reads what it writes)."""
    out = _regular_file_id(output_path, sys.stdout)
    if out is not None and out == _regular_file_id(input_path, sys.stdin):
        shown = "stdout" if output_path in (None, "-") else repr(output_path)
        raise ValueError(
            f"the output ({shown}) is the input file: writing it would destroy the input; "
            "pass another output file with -o"
        )


def check_output_path(path: Optional[str], flag: str = "-o") -> None:
    """Fail before any work when ``path`` (a file to be written; None or ``-``: stdout) cannot be
    written: an empty name, a folder, or a file in a folder that does not exist."""
    if path is None or path == "-":
        return
    if not path:
        raise FileNotFoundError(f"{flag}: the output file name is empty; give a file name")

    fspath(path)  # os.path.isdir would answer False for a name no file system can hold
    if os.path.isdir(path):
        raise IsADirectoryError(f"{flag} {path!r} is a folder: give a file name")
    parent = os.path.dirname(path) or "."
    if not os.path.isdir(parent):
        raise FileNotFoundError(
            f"{flag} {path!r}: the folder {parent!r} does not exist (create it first)"
        )


@contextlib.contextmanager
def open_io(
    input_path: Optional[str], output_path: Optional[str]
) -> Iterator[Tuple[BinaryIO, BinaryIO]]:
    """(input, output) binary streams for FILE or ``-``; files opened here are closed on exit. A
    corrupt compressed input is a CorpusDecodeError naming it; an output that is the input file
    is refused (ValueError) before anything is truncated."""
    refuse_same_file(input_path, output_path)
    with contextlib.ExitStack() as stack:
        if input_path not in (None, "-"):
            stack.enter_context(decompression_errors(input_path))
        fin = open_input(input_path)
        if fin is not sys.stdin.buffer:
            stack.enter_context(fin)
        if output_path in (None, "-"):
            fout = sys.stdout.buffer
        else:  # appears under its name only when complete: a failed run leaves the old file
            fout = stack.enter_context(atomic_write(output_path, "wb"))
        yield fin, fout


def read_blocks(f: BinaryIO, size: int = 4 << 20) -> Iterator[bytes]:
    while True:
        b = f.read(size)
        if not b:
            return
        yield b


def progress_default() -> bool:
    return sys.stderr.isatty()


def read_stdin_utf8() -> str:
    """stdin as UTF-8 text: bytes that are not UTF-8 are an error naming where they are (the text
    stream would pass them on as lone surrogates, or fail with a bare codec message)."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:
        return sys.stdin.read()
    data = buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(
            f"stdin is not valid UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start}: {e.reason}); "
            f"pass UTF-8 text"
        ) from None
