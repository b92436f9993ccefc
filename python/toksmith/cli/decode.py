"""``toksmith decode``: ids -> the exact bytes they encode."""

from __future__ import annotations

import io
import json
import os
import stat

from .. import _core
from ..corpus import inner_name
from ..errors import missing_extra
from ..pipeline_tokenizer import PipelineTokenizer
from ._common import add_tokenizer_arg, load_tokenizer, open_io, read_blocks, refuse_preset_file


def register(sub) -> None:
    p = sub.add_parser(
        "decode",
        help="decode token ids to text",
        description="Decode ids (whitespace-separated integers, a JSON list / JSON lines, or a .npy array) "
        "from FILE or stdin; writes the exact bytes, so `encode | decode` reproduces the input.",
    )
    add_tokenizer_arg(p)
    p.add_argument(
        "input",
        nargs="?",
        default="-",
        metavar="FILE|-",
        help="the ids to decode (default or -: stdin)",
    )
    p.add_argument(
        "--lines",
        action="store_true",
        help="each input line holds the ids of one output line (a last line without a newline gives "
        "a last output line without one, so `encode --lines | decode --lines` is exact)",
    )
    p.add_argument(
        "--format",
        choices=["auto", "text", "json", "npy"],
        default="auto",
        help="input format (auto: by file extension, else by the first bytes: a .npy header, a JSON "
        "list, or text)",
    )
    p.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    p.set_defaults(func=run)


def _parse_ints(chunk: bytes, where: str):
    ids = _core.parse_ids(chunk)  # plain digits (what `toksmith encode` writes), natively
    if ids is not None:
        return ids
    out = []
    for x in chunk.split():  # word by word, so that the message names the word that is wrong
        try:
            out.append(int(x))
        except ValueError:  # not a number ("--1", "x"), or too many digits for int()
            raise ValueError(
                f"{where}: {x[:40]!r}{'...' if len(x) > 40 else ''} is not an integer token id"
            ) from None
    return out


#: bytes.split()'s whitespace: an id never spans one of these
_WHITESPACE = b" \t\n\r\x0b\x0c"
#: a run without whitespace longer than this holds no token id (ids have at most 10 digits)
_MAX_WORD = 1 << 20


def _text_ids(fin, name):
    carry = b""
    for block in read_blocks(fin, 1 << 20):
        cut = max(block.rfind(c) for c in _WHITESPACE)  # only the new block is searched: linear
        if cut < 0:
            carry += block
            if len(carry) > _MAX_WORD:  # stop before reading (and copying) a whole binary file
                raise ValueError(
                    f"{name}: {carry[:40]!r}... is not an integer token id (over 1 MiB "
                    "without whitespace)"
                )
            continue
        data, carry = carry + block[:cut], block[cut:]
        yield _parse_ints(data, name)
    if carry.strip():
        yield _parse_ints(carry, name)


def _json_ids(data, where: str):
    """The token ids of one JSON list (``data``: bytes), checked: ValueError naming ``where``."""
    try:
        ids = json.loads(data)
    except json.JSONDecodeError as e:
        raise ValueError(f"{where}: not valid JSON: {e.msg}") from None
    except ValueError as e:  # invalid UTF-8, or a number too long for int()
        raise ValueError(f"{where}: not valid JSON: {e}") from None
    except RecursionError:
        raise ValueError(f"{where}: not a list of ids: arrays nested too deeply") from None
    if not isinstance(ids, list):
        raise ValueError(f"{where}: expected a JSON list of token ids, not {json.dumps(ids)[:40]}")
    for x in ids:
        if type(x) is not int:  # true/false are no ids (bool is an int to Python)
            raise ValueError(f"{where}: {json.dumps(x)[:40]} is not an integer token id")
    return ids


_NPY_MAGIC = b"\x93NUMPY"


def _npy_ids(fin, name: str, step: int = 1 << 20):
    """The ids of a 1-D integer .npy stream, ``step`` at a time as lists: a file is
    memory-mapped and a pipe read block by block, so memory stays bounded; the header's size
    is checked against the file's before anything is mapped or allocated."""
    try:
        import numpy as np
    except ImportError:
        raise missing_extra("numpy", "numpy") from None
    fmt = np.lib.format
    head = fin.peek(len(_NPY_MAGIC)) if hasattr(fin, "peek") else b""
    if (
        head[: len(_NPY_MAGIC)] != _NPY_MAGIC
    ):  # np.load would try to unpickle it, or read it as .npz
        raise ValueError(
            f"{name}: not a .npy file (no NumPy header); ids written as text or JSON "
            "are read with --format text or --format json"
        )
    try:
        version = fmt.read_magic(fin)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(fin)
        else:
            shape, fortran, dtype = fmt.read_array_header_2_0(fin)
    except EOFError:
        raise ValueError(f"{name}: the .npy file is truncated") from None
    except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError) as e:
        raise ValueError(f"{name}: not a valid .npy header: {e}") from None
    if len(shape) != 1:
        raise ValueError(f"{name}: expected a 1-D array of ids, got shape {shape}")
    if dtype.kind not in "iu" or dtype.hasobject:
        raise ValueError(f"{name}: expected an array of integer ids, got dtype {dtype}")
    count = shape[0]
    need = count * dtype.itemsize
    regular = False
    # a plain file (not a decompressing stream, whose descriptor is the compressed file's)
    if isinstance(fin, io.BufferedReader) and isinstance(fin.raw, io.FileIO):
        try:
            info = os.fstat(fin.fileno())
            regular = stat.S_ISREG(info.st_mode) and fin.seekable()
        except (OSError, io.UnsupportedOperation):
            pass
    if regular:
        offset = fin.tell()
        if need > info.st_size - offset:  # before mapping: a header may claim 2**40 ids
            raise ValueError(
                f"{name}: the .npy file is truncated: its header declares {count} ids "
                f"({need} bytes) but only {info.st_size - offset} bytes follow it"
            )
        if count == 0:
            return
        arr = np.memmap(fin, dtype=dtype, mode="r", offset=offset, shape=(count,))
        for i in range(0, count, step):
            yield arr[i : i + step].tolist()
        return
    left = count
    while left:
        want = min(step, left)
        data = fin.read(want * dtype.itemsize)
        if len(data) < want * dtype.itemsize:
            raise ValueError(
                f"{name}: the .npy file is truncated: its header declares {count} ids but "
                f"the data ends after {count - left + len(data) // dtype.itemsize}"
            )
        yield np.frombuffer(data, dtype=dtype).tolist()
        left -= want


def _sniff_format(fin, allow_npy: bool) -> str:
    """The format of an input whose name does not tell it, from its first bytes (without
    consuming them): a .npy header, a JSON list, or else text."""
    peek = getattr(fin, "peek", None)
    if peek is None:
        return "text"
    head = peek(64)[:64].lstrip()
    if allow_npy and head.startswith(b"\x93NUMPY"):
        return "npy"
    return "json" if head.startswith(b"[") else "text"


def _decode_parts(parts, tok, stream, fout) -> None:
    """Write the bytes of ids read in parts; a stream decoder (when given) keeps what joins the
    parts, which decoding each part alone would lose."""
    if stream is None:
        for ids in parts:
            fout.write(tok.decode_bytes(ids))
        return
    for ids in parts:
        fout.write(stream.push_many(ids).encode("utf-8"))
    fout.write(stream.flush().encode("utf-8"))


def run(args) -> int:
    tok = load_tokenizer(args.tokenizer, args.pattern)
    refuse_preset_file(tok, "decode")
    name = "<stdin>" if args.input == "-" else args.input
    fmt = args.format
    if fmt == "auto":
        inner = inner_name(name)  # ids.npy.gz: by the extension of the file inside
        fmt = (
            "npy"
            if inner.endswith(".npy")
            else "json"
            if inner.endswith((".json", ".jsonl"))
            else "text"
        )
    if args.lines and fmt == "npy":
        raise ValueError(
            "--lines does not go with a .npy input (one array: the ids of one text); leave "
            "--lines out, or pass --format text or json for a file of lines"
        )
    # a SentencePiece / WordPiece... decoder joins tokens (drops the first one's space, glues
    # "##" pieces): ids read in parts go through one stream decoder
    stream = tok.stream_decoder() if isinstance(tok, PipelineTokenizer) else None
    sniff = args.format == "auto" and fmt == "text"  # no telling extension (stdin, a pipe, ids.txt)
    with open_io(args.input, args.output) as (fin, fout):
        if sniff:
            fmt = _sniff_format(fin, allow_npy=not args.lines)
        if fmt == "npy":
            _decode_parts(_npy_ids(fin, name), tok, stream, fout)
        elif args.lines:
            for lineno, line in enumerate(fin, 1):
                where = f"{name}:{lineno}"
                if fmt == "json":
                    ids = _json_ids(line, where)
                else:
                    ids = _parse_ints(line, where)
                # a last line of ids without a newline (as `encode --lines` writes for a text
                # without one) gives a last line without one
                fout.write(tok.decode_bytes(ids) + (b"\n" if line.endswith(b"\n") else b""))
        elif fmt == "json":
            fout.write(tok.decode_bytes(_json_ids(fin.read(), name)))
        else:
            _decode_parts(_text_ids(fin, name), tok, stream, fout)
        fout.flush()
    return 0
