"""``toksmith encode``: text -> ids (streams: memory stays bounded on huge files)."""

from __future__ import annotations

import contextlib
import os
import struct
from typing import Any

from .. import _core
from ..corpus import batched, compression
from ..documents import iter_documents_of, kind_of
from ..streaming import batch_encoder, encode_stream, iter_line_batches, iter_text_parts
from ._common import (
    add_tokenizer_arg,
    check_output_path,
    check_threads_arg,
    load_tokenizer,
    open_io,
    progress_default,
    refuse_preset_file,
)

#: the largest --block-size: each read allocates a buffer of the block size up front
MAX_BLOCK_SIZE = 1 << 30


def register(sub) -> None:
    p = sub.add_parser(
        "encode",
        help="encode text to token ids",
        description="Encode FILE (or stdin) to ids: by default the ids of the whole input, newlines "
        "included, as space-separated integers on one line; `toksmith decode` is the exact inverse.",
    )
    add_tokenizer_arg(p)
    p.add_argument(
        "input",
        nargs="?",
        default="-",
        metavar="FILE|-",
        help="the text to encode (default or -: stdin; .xz/.lzma/.gz/.bz2 decompressed)",
    )
    p.add_argument(
        "--lines",
        action="store_true",
        help="one line of ids per input line (the newline itself is not encoded; a last line "
        "without a newline gives a last line of ids without one)",
    )
    p.add_argument(
        "--format",
        choices=["text", "json", "npy"],
        default="text",
        help="output format (npy: one uint16/uint32 array; json: a list, or JSON lines with --lines)",
    )
    p.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    p.add_argument(
        "--allow-special",
        action="store_true",
        help="encode special-token text as special tokens (default: as plain text)",
    )
    p.add_argument(
        "--errors",
        choices=["strict", "replace"],
        default="strict",
        help="invalid UTF-8: raise (strict) or replace with U+FFFD",
    )
    p.add_argument(
        "--text-field",
        default="text",
        metavar="F",
        help="a .jsonl/.json or .parquet FILE is read as documents (this field; chat lines: "
        "their message contents), one line of ids per document",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        metavar="N",
        help="encoding threads (default: all cores); blocks of the input (or batches of "
        "lines) are encoded together, the output is the same",
    )
    p.add_argument(
        "--block-size",
        type=int,
        default=256 << 10,
        metavar="BYTES",
        help="bytes of input read at a time (default 256 KiB); up to 4 blocks per thread are "
        "encoded together, so that every thread has work until the last",
    )
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress bar (there is one on stderr when it is a terminal)",
    )
    p.set_defaults(func=run)


class _Progress:
    """A binary reader that moves a progress bar by the bytes read (of the file as stored: a
    compressed file's bar has no total, as its decompressed size is not known up front)."""

    def __init__(self, f, bar):
        self.f, self.bar = f, bar

    def read(self, n: int = -1) -> bytes:
        data = self.f.read(n)
        self.bar.update(len(data))
        return data


def _progress_bar(args):
    """The bar of this run: on when stderr is a terminal and not --quiet, else None."""
    if args.quiet or not progress_default():
        return None
    from tqdm.auto import tqdm  # type: ignore[import-untyped]

    total = None
    if args.input != "-" and not compression(args.input):
        try:
            total = os.path.getsize(args.input)
        except OSError:
            pass
    return tqdm(
        total=total or None,
        desc="encoding",
        unit="B",
        unit_scale=True,
        unit_divisor=1000,
        leave=False,
    )


def _appending(f) -> bool:
    """Whether the file behind ``f`` was opened with O_APPEND (``>>`` in a shell)."""
    try:
        import fcntl

        return bool(fcntl.fcntl(f.fileno(), fcntl.F_GETFL) & os.O_APPEND)
    except (ImportError, AttributeError, OSError, ValueError):  # no fcntl (Windows); no descriptor
        return False


class _LastByte:
    """A binary reader that remembers the last byte it read."""

    def __init__(self, f):
        self.f, self.last = f, b""

    def read(self, n: int = -1) -> bytes:
        data = self.f.read(n)
        if data:
            self.last = bytes(data[-1:])
        return data


class _NpyWriter:
    """Writes a 1-D .npy array of unknown length: a fixed-size header is rewritten at the end."""

    HEADER = 128

    def __init__(self, f, narrow: bool):
        if not f.seekable():
            raise ValueError("--format npy needs a seekable output: pass -o FILE.npy")
        # the header is written last, at the start of the file: in a file opened for appending
        # (`>> out.npy`) it lands at the end, and after other data no reader finds it
        if _appending(f):
            raise ValueError(
                "--format npy: the output is opened for appending (>>), which would give a corrupt "
                ".npy file (its header, written last at the start, would land at the end; an array "
                "cannot be appended to another); pass -o FILE.npy"
            )
        if f.tell():
            raise ValueError(
                f"--format npy: the output already holds {f.tell()} bytes before the array, which "
                "would give a corrupt .npy file; pass -o FILE.npy"
            )
        self.f, self.narrow, self.n = f, narrow, 0
        f.write(b"\0" * self.HEADER)

    def write(self, ids) -> None:
        self.write_packed(_core.pack_ids(ids, 2 if self.narrow else 4), len(ids))

    def write_packed(self, data: bytes, n: int) -> None:
        """``n`` ids already packed as little-endian integers of this array's width."""
        self.f.write(data)
        self.n += n

    def close(self) -> None:
        descr = "<u2" if self.narrow else "<u4"
        d = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': ({self.n},), }}"
        body = d.encode("latin1").ljust(self.HEADER - 10 - 1) + b"\n"
        header = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(body)) + body
        assert len(header) == self.HEADER
        self.f.seek(0)
        self.f.write(header)


def _native(tok, args):
    """``encode_batch_bytes`` of a toksmith tokenizer with the arguments of this run, or None
    for other tokenizer kinds (which go through lists of ids)."""
    core = getattr(tok, "_core", None)
    if not hasattr(core, "encode_batch_bytes") or getattr(tok, "normalizer", None) is not None:
        return None
    allowed, allow_all = tok._allowed("all" if args.allow_special else frozenset())
    threads = 0 if args.threads is None else args.threads

    def encode(texts, **fmt):
        return core.encode_batch_bytes(texts, allowed, allow_all, threads, **fmt)

    return encode


def run(args) -> int:
    check_output_path(args.output)
    tok = load_tokenizer(args.tokenizer, args.pattern)
    refuse_preset_file(tok, "encode")
    name = "<stdin>" if args.input == "-" else args.input
    if args.lines and args.format == "npy":
        raise ValueError(
            "--lines with --format npy is not supported (lines have different lengths); "
            "use --format json (JSON lines) or text"
        )
    check_threads_arg(args.threads)
    if args.block_size < 1:
        raise ValueError(f"--block-size must be >= 1, not {args.block_size}")
    if args.block_size > MAX_BLOCK_SIZE:  # a bigger read was a MemoryError or OverflowError
        raise ValueError(
            f"--block-size must be at most {MAX_BLOCK_SIZE} (1 GiB), not {args.block_size}"
        )
    stream = dict(
        allow_special=args.allow_special, errors=args.errors, name=name, block_size=args.block_size
    )
    documents = args.input != "-" and kind_of(args.input) != "text"
    if documents:
        if args.format == "npy":
            raise ValueError(
                f"{args.input} holds documents: --format npy would run them together; use "
                "--format text or json (one line per document), or `toksmith tokenize --format npy`"
            )
        return _encode_documents(tok, args)
    native = _native(tok, args)
    group = 4 * (args.threads or os.cpu_count() or 1)
    bar = _progress_bar(args)
    with contextlib.ExitStack() as stack:
        opened = stack.enter_context(open_io(args.input, args.output))
        fin: Any = opened[0]  # wrapped below: a reader, not a file
        fout = opened[1]
        if bar is not None:
            stack.callback(bar.close)
            fin = _Progress(fin, bar)
        if args.lines:
            # each line as the bytes of json.dumps(ids) / " ".join(map(str, ids))
            sep, opening, closing = (
                (b", ", b"[", b"]") if args.format == "json" else (b" ", b"", b"")
            )
            encode_batch = None if native else batch_encoder(tok, args.allow_special, args.threads)
            tail = _LastByte(fin)
            newline = (
                b""  # the newline that ends the output so far: written once more input follows
            )
            for lines in iter_line_batches(
                tail,  # type: ignore[arg-type]
                errors=args.errors,
                name=name,
                batch_bytes=args.block_size,
            ):
                if encode_batch is None:
                    data = native(lines, sep=sep, lines=True, open=opening, close=closing)[0]
                else:
                    data = _core.format_id_lines(encode_batch(lines), sep, opening, closing)
                fout.write(newline)
                fout.write(memoryview(data)[:-1])
                newline = data[-1:]
            if tail.last == b"\n":  # the output ends with a newline where the input does
                fout.write(newline)
        elif args.format == "npy":
            w = _NpyWriter(fout, tok.n_vocab <= 65536)
            if native:
                for parts in iter_text_parts(tok, fin, group=group, **stream):
                    data, n = native(parts, width=2 if w.narrow else 4)
                    w.write_packed(data, n)
            else:
                for ids in encode_stream(tok, fin, threads=args.threads, **stream):
                    w.write(ids)
            w.close()
        else:
            json_mode = args.format == "json"
            fout.write(b"[" if json_mode else b"")
            sep = b"," if json_mode else b" "
            first = True
            if native:
                chunks = (
                    native(parts, sep=sep)
                    for parts in iter_text_parts(tok, fin, group=group, **stream)
                )
            else:
                chunks = (
                    (_core.format_ids(ids, sep), len(ids))
                    for ids in encode_stream(tok, fin, threads=args.threads, **stream)
                )
            for data, n in chunks:
                if not n:
                    continue
                if not first:
                    fout.write(sep)
                fout.write(data)
                first = False
            fout.write(b"]\n" if json_mode else b"\n")
        fout.flush()
    return 0


def _encode_documents(tok, args) -> int:
    """A JSON lines or parquet input: one line of ids per document (as ``--lines`` writes)."""
    sep, opening, closing = (b", ", b"[", b"]") if args.format == "json" else (b" ", b"", b"")
    encode_batch = batch_encoder(tok, args.allow_special, args.threads)
    docs = iter_documents_of(args.input, args.text_field, args.errors)
    with open_io(args.input, args.output) as (_, fout):
        for batch in batched(docs, max_bytes=args.block_size):
            fout.write(_core.format_id_lines(encode_batch(batch), sep, opening, closing))
        fout.flush()
    return 0
