"""``toksmith decode``: ids -> the exact bytes they encode."""

from __future__ import annotations

import json

from .. import _core
from ._common import add_tokenizer_arg, load_tokenizer, refuse_preset_file, open_io, read_blocks


def register(sub) -> None:
    p = sub.add_parser(
        "decode",
        help="decode token ids to text",
        description="Decode ids (whitespace-separated integers, a JSON list / JSON lines, or a .npy array) "
        "from FILE or stdin; writes the exact bytes, so `encode | decode` reproduces the input.",
    )
    add_tokenizer_arg(p)
    p.add_argument("input", nargs="?", default="-", metavar="FILE|-")
    p.add_argument("--lines", action="store_true", help="each input line holds the ids of one output line")
    p.add_argument("--format", choices=["auto", "text", "json", "npy"], default="auto",
                   help="input format (auto: by file extension, else text)")
    p.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    p.set_defaults(func=run)


def _parse_ints(chunk: bytes, where: str):
    ids = _core.parse_ids(chunk)  # plain digits (what `toksmith encode` writes), natively
    if ids is not None:
        return ids
    try:
        return [int(x) for x in chunk.split()]
    except ValueError:
        bad = next(x for x in chunk.split() if not x.lstrip(b"-").isdigit())
        raise ValueError(f"{where}: {bad[:40]!r} is not an integer token id") from None


def _text_ids(fin, name):
    carry = b""
    for block in read_blocks(fin, 1 << 20):
        data = carry + block
        cut = max(data.rfind(b" "), data.rfind(b"\n"), data.rfind(b"\t"))
        if cut < 0:
            carry = data
            continue
        carry = data[cut:]
        yield _parse_ints(data[:cut], name)
    if carry.strip():
        yield _parse_ints(carry, name)


def run(args) -> int:
    tok = load_tokenizer(args.tokenizer)
    refuse_preset_file(tok, "decode")
    name = "<stdin>" if args.input == "-" else args.input
    fmt = args.format
    if fmt == "auto":
        fmt = "npy" if name.endswith(".npy") else "json" if name.endswith((".json", ".jsonl")) else "text"
    with open_io(args.input, args.output) as (fin, fout):
        if fmt == "npy":
            try:
                import numpy as np
            except ImportError:
                from ..errors import missing_extra

                raise missing_extra("numpy", "numpy") from None
            arr = np.load(fin, allow_pickle=False, mmap_mode=None)
            if arr.ndim != 1:
                raise ValueError(f"{name}: expected a 1-D array of ids, got shape {arr.shape}")
            step = 1 << 20
            for i in range(0, len(arr), step):
                fout.write(tok.decode_bytes(arr[i:i + step].tolist()))
        elif args.lines:
            for lineno, line in enumerate(fin, 1):
                where = f"{name}:{lineno}"
                if fmt == "json":
                    try:
                        ids = json.loads(line)
                    except json.JSONDecodeError as e:
                        raise ValueError(f"{where}: not valid JSON: {e.msg}") from None
                else:
                    ids = _parse_ints(line, where)
                fout.write(tok.decode_bytes(ids) + b"\n")
        elif fmt == "json":
            try:
                ids = json.load(fin)
            except json.JSONDecodeError as e:
                raise ValueError(f"{name}: not valid JSON: {e.msg}") from None
            if not isinstance(ids, list):
                raise ValueError(f"{name}: expected a JSON list of ids")
            fout.write(tok.decode_bytes(ids))
        else:
            for ids in _text_ids(fin, name):
                fout.write(tok.decode_bytes(ids))
        fout.flush()
    return 0
