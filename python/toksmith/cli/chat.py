"""``toksmith chat ...``: nanochat-style conversations (seed 002).

* ``toksmith chat show CONV.jsonl -t TOK [--index N] [--limit N] [--ids] [--html OUT.html]``:
  render conversations and show their tokens coloured by training mask (terminal, or an HTML
  page with ``--html``).
* ``toksmith chat render CONV.jsonl -t TOK -o OUT/ [--max-tokens N] [--shard-size N]
  [--skip-bad]``: render a JSONL file of conversations into numpy shards (layout:
  :mod:`toksmith.presets.chat_shards`), streaming the input.

Input: one JSON conversation per line (``{"messages": [...]}``), blank lines ignored; ``-``
reads stdin; ``.xz`` / ``.gz`` / ``.bz2`` files are decompressed on the fly. The tokenizer
(``-t``) may be any file :func:`toksmith.formats.load_any` reads, with the nine nanochat special
tokens.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import IO, Any, Callable, Iterator, List, Optional, Tuple

from .._paths import fspath
from ..corpus import decompression_errors, open_binary
from ..files._common import atomic_write
from ..presets.nanochat import ChatTokenizer, chat_render
from ..presets.nanochat.chat_shards import MANIFEST, ShardWriter
from ..presets.nanochat.conversation import plan_conversation
from ._common import add_command_group, check_output_path, check_threads_arg, refuse_same_file

BAD_LINES_SHOWN = 20


def register(subparsers: Any) -> None:
    parser, sub = add_command_group(
        subparsers,
        "chat",
        help="render chat conversations (nanochat): show tokens and masks, write numpy shards",
        description="Chat conversations rendered with the nanochat layout: <|bos|>, user and "
        "assistant turns between special tokens, and a training mask (1 = assistant tokens).",
    )

    show = sub.add_parser(
        "show",
        help="show conversations' tokens coloured by training mask",
        description="Show rendered conversations: tokens on a green background are trained on "
        "(mask 1), red ones are not (mask 0); shades alternate at token boundaries.",
    )
    show.add_argument("input", metavar="CONV.jsonl", help="JSONL conversations ('-' for stdin)")
    show.add_argument(
        "-t", "--tokenizer", required=True, metavar="TOK", help="tokenizer file (any format)"
    )
    show.add_argument(
        "--index",
        type=int,
        default=None,
        metavar="N",
        help="show only the N-th conversation (0-based, blank lines not counted)",
    )
    show.add_argument(
        "--limit", type=int, default=None, metavar="N", help="show at most N conversations"
    )
    show.add_argument("--ids", action="store_true", help="show each token's id")
    show.add_argument(
        "--html",
        metavar="OUT.html",
        default=None,
        help="write an HTML page instead of terminal output",
    )
    show.add_argument(
        "--max-tokens",
        type=int,
        default=2048,
        metavar="N",
        help="cut each conversation to N tokens (default 2048; 0 = no limit)",
    )
    show.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="terminal colours (default: auto, when stdout is a terminal)",
    )
    show.set_defaults(func=_reading(_show))

    render = sub.add_parser(
        "render",
        help="render a JSONL file of conversations into numpy shards (ids + mask)",
        description="Render conversations into OUT/shard_NNNNN.npz files, each with arrays ids "
        "(concatenated token ids, uint16 or uint32), mask (uint8), offsets (int64, conversation k "
        "is ids[offsets[k]:offsets[k+1]]) and lines (input line numbers), plus OUT/manifest.json. "
        "A malformed line stops the command (exit 1) unless --skip-bad is given.",
    )
    render.add_argument("input", metavar="CONV.jsonl", help="JSONL conversations ('-' for stdin)")
    render.add_argument(
        "-t", "--tokenizer", required=True, metavar="TOK", help="tokenizer file (any format)"
    )
    render.add_argument("-o", "--output", required=True, metavar="OUT", help="output folder")
    render.add_argument(
        "--max-tokens",
        type=int,
        default=2048,
        metavar="N",
        help="cut each conversation to N tokens (default 2048; 0 = no limit)",
    )
    render.add_argument(
        "--shard-size",
        type=int,
        default=10000,
        metavar="N",
        help="conversations per shard (default 10000)",
    )
    render.add_argument(
        "--skip-bad",
        action="store_true",
        help="skip malformed lines (reported with their line number) instead of stopping",
    )
    render.add_argument(
        "--threads",
        type=int,
        default=None,
        metavar="N",
        help="encoding threads (default: all cores)",
    )
    render.add_argument("--compress", action="store_true", help="write compressed .npz files")
    render.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the shards and manifest of an earlier render in OUT",
    )
    render.add_argument("--no-progress", action="store_true", help="no progress bar")
    render.set_defaults(func=_reading(_render))


# ---------------------------------------------------------------------------- input


def _reading(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``command`` with a corrupt compressed input reported as a CorpusDecodeError naming the
    file (the codecs raise EOFError or LZMAError, which the CLI would show as a traceback)."""

    def run(args: argparse.Namespace) -> int:
        if args.input == "-":
            return command(args)
        with decompression_errors(args.input):
            return command(args)

    return run


class _Input:
    """A JSONL input: stdin, a file, or a compressed file (.xz / .lzma / .gz / .bz2, decompressed on
    the fly). ``size`` and ``position()`` count the bytes read from disk (compressed bytes for
    a compressed file), for the progress bar; ``size`` is None for stdin."""

    def __init__(self, path: str) -> None:
        self.raw: Optional[IO[bytes]] = None
        self.size: Optional[int] = None
        if path == "-":
            self.fh: IO[bytes] = sys.stdin.buffer
            return

        self.raw = open(fspath(path), "rb")
        self.size = os.path.getsize(path)

        self.fh = open_binary(path, self.raw)

    def position(self) -> int:
        return self.raw.tell() if self.raw is not None else 0

    def close(self) -> None:
        if self.raw is not None:
            if self.fh is not self.raw:
                self.fh.close()
            self.raw.close()


def _iter_lines(fh: IO[bytes]) -> Iterator[Tuple[int, bytes]]:
    for lineno, raw in enumerate(fh, 1):
        yield lineno, raw


def _parse_line(raw: bytes) -> Any:
    """A JSON value from one line; ValueError with a short reason otherwise."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not valid UTF-8 (byte {exc.start})") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise ValueError("JSON nested too deeply to be a conversation") from None
    if "\\u" in text:  # only a \uD800-style escape can give a lone surrogate
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(
                f"a string holds a lone surrogate (U+{ord(exc.object[exc.start]):04X}, from a \\u escape) "
                "that UTF-8 cannot encode"
            ) from None
    return value


def _load_chat(path: str):
    return ChatTokenizer.load(path)


def _max_tokens(n: int) -> Optional[int]:
    if n < 0:
        raise ValueError(f"--max-tokens must be >= 0, not {n}")
    return n or None


# ---------------------------------------------------------------------------- show


def _check_html_output(args: argparse.Namespace) -> None:
    """Fail before any work when ``--html`` cannot be written or names the input or the
    tokenizer file (writing the page would destroy it)."""
    check_output_path(args.html, "--html")
    try:
        refuse_same_file(args.input, args.html)
    except ValueError:
        raise ValueError(
            f"--html {args.html!r} is the input file: writing the page would destroy it; "
            "give another file name"
        ) from None
    if (
        os.path.isfile(args.tokenizer)
        and os.path.isfile(args.html)
        and os.path.samefile(args.tokenizer, args.html)
    ):
        raise ValueError(
            f"--html {args.html!r} is the tokenizer file: writing the page would destroy it; "
            "give another file name"
        )


def _show(args: argparse.Namespace) -> int:
    chat = _load_chat(args.tokenizer)
    max_tokens = _max_tokens(args.max_tokens)
    if args.index is not None and args.index < 0:
        raise ValueError(f"--index must be >= 0, not {args.index}")
    if args.limit is not None and args.limit < 1:
        raise ValueError(f"--limit must be >= 1, not {args.limit}")

    def selected() -> Iterator[Tuple[int, int, List[int], List[int]]]:
        source = _Input(args.input)
        fh = source.fh
        try:
            index = -1
            shown = 0
            for lineno, raw in _iter_lines(fh):
                if not raw.strip():
                    continue
                index += 1
                if args.index is not None and index != args.index:
                    continue
                try:
                    ids, mask = chat.render_conversation(_parse_line(raw), max_tokens=max_tokens)
                except (ValueError, TypeError) as exc:
                    raise ValueError(f"{args.input}:{lineno}: {exc}") from None
                yield index, lineno, ids, mask
                shown += 1
                if args.index is not None or (args.limit is not None and shown >= args.limit):
                    return
            if args.index is not None:
                raise ValueError(
                    f"--index {args.index}: {args.input} has only {index + 1} conversation(s)"
                )
        finally:
            source.close()

    def heading(index: int, lineno: int, ids: List[int], mask: List[int]) -> str:
        return f"conversation {index} (line {lineno}): {len(ids)} tokens, {sum(mask)} trained"

    if args.html is not None:
        _check_html_output(args)

        count = 0
        # written to a temporary file moved into place at the end: a malformed line leaves no
        # half page (and an earlier page stays as it was)
        with atomic_write(args.html, "w", encoding="utf-8") as out:
            out.write(
                chat_render.html_header(
                    f"{os.path.basename(args.input)} rendered with "
                    f"{os.path.basename(args.tokenizer)}"
                )
            )
            for index, lineno, ids, mask in selected():
                out.write(
                    chat_render.html_section(
                        chat.tokenizer,
                        heading(index, lineno, ids, mask),
                        ids,
                        mask,
                        with_token_id=args.ids,
                    )
                )
                count += 1
            out.write(chat_render.html_footer())
        print(f"wrote {count} conversation(s) to {args.html}", file=sys.stderr)
        return 0

    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    first = True
    for index, lineno, ids, mask in selected():
        if not first:
            sys.stdout.write("\n")
        first = False
        sys.stdout.write(f"== {heading(index, lineno, ids, mask)}\n")
        sys.stdout.write(
            chat.visualize_tokenization(ids, mask, with_token_id=args.ids, color=color)
        )
        sys.stdout.write("\n")
    sys.stdout.flush()
    return 0


# ---------------------------------------------------------------------------- render


def _check_output_dir(out: str, overwrite: bool) -> None:
    if os.path.exists(out) and not os.path.isdir(out):
        raise ValueError(f"-o {out}: exists and is not a folder")
    if not os.path.isdir(out):
        return
    old = [
        n
        for n in os.listdir(out)
        if n == MANIFEST or (n.startswith("shard_") and n.endswith(".npz"))
    ]
    if not old:
        return
    if not overwrite:
        raise ValueError(
            f"-o {out} already holds rendered shards ({sorted(old)[0]}, ...); pass --overwrite "
            "to replace them or choose another folder"
        )
    for n in old:
        os.remove(os.path.join(out, n))


def _render(args: argparse.Namespace) -> int:
    if args.shard_size < 1:
        raise ValueError(f"--shard-size must be >= 1, not {args.shard_size}")
    check_threads_arg(args.threads)
    max_tokens = _max_tokens(args.max_tokens)
    chat = _load_chat(args.tokenizer)
    source = _Input(args.input)  # opened first: a missing input does not cost an earlier render
    try:
        writer = ShardWriter(
            args.output,
            n_vocab=chat.get_vocab_size(),
            shard_size=args.shard_size,
            compress=args.compress,
            meta={
                "source": args.input,
                "tokenizer": args.tokenizer,
                "max_tokens": max_tokens,
                "special_tokens": {
                    s: chat.encode_special(s) for s in sorted(chat.get_special_tokens())
                },
            },
        )
        _check_output_dir(args.output, args.overwrite)  # removes an earlier render: last
    except BaseException:
        source.close()
        raise
    from tqdm.auto import tqdm

    bar = tqdm(
        total=source.size,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        desc="rendering",
        disable=args.no_progress,
        file=sys.stderr,
    )
    bad: List[int] = []
    pending: List[Tuple[int, Any]] = []  # (line number, plan)
    batch = min(256, args.shard_size)  # conversations encoded together

    def drain() -> None:
        rendered = chat._render_plans([p for _, p in pending], max_tokens, args.threads)
        for (lineno, _), (ids, mask) in zip(pending, rendered):
            writer.add(ids, mask, line=lineno)
        pending.clear()

    try:
        done = 0
        for lineno, raw in _iter_lines(source.fh):
            if source.size is None:
                bar.update(len(raw))
            elif lineno % 64 == 0:
                pos = source.position()
                bar.update(pos - done)
                done = pos
            if not raw.strip():
                continue
            try:
                plan = plan_conversation(_parse_line(raw))
            except (ValueError, TypeError) as exc:
                where = f"{args.input}:{lineno}"
                if not args.skip_bad:
                    raise ValueError(
                        f"{where}: {exc} (pass --skip-bad to skip malformed lines)"
                    ) from None
                bad.append(lineno)
                if len(bad) <= BAD_LINES_SHOWN:
                    bar.write(f"toksmith chat render: skipping {where}: {exc}", file=sys.stderr)
                elif len(bad) == BAD_LINES_SHOWN + 1:
                    bar.write(
                        "toksmith chat render: (further malformed lines are only counted)",
                        file=sys.stderr,
                    )
                continue
            pending.append((lineno, plan))
            if len(pending) >= batch:
                drain()
        drain()
        if source.size is not None:
            bar.update(source.size - done)
        manifest = writer.close({"skipped_lines": len(bad), "skipped_line_numbers": bad[:1000]})
    except BaseException:
        writer.abort()
        raise
    finally:
        bar.close()
        source.close()
    skipped = f"; skipped {len(bad)} malformed line(s)" if args.skip_bad else ""
    print(
        f"rendered {manifest['conversations']} conversation(s), {manifest['tokens']} tokens "
        f"({manifest['trained_tokens']} trained) into {len(manifest['shards'])} shard(s) in "
        f"{args.output}{skipped}",
        file=sys.stderr,
    )
    return 0
