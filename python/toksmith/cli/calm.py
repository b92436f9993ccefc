"""``toksmith calm ...``: CALM weight files and sequences (seed 003).

* ``toksmith calm inspect MODEL.cwgt [--json]``: header fields and metadata.
* ``toksmith calm encode [--template NAME|SPEC | --model MODEL.cwgt]
  (--context JSON | --context-file FILE) [--training] [--l-max N] [--names]``:
  build a sequence and print its ids space-separated (``--names``: readable).
* ``toksmith calm decode [IDS...]``: ids (arguments or stdin) to bytes.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import warnings
from typing import Any

from .._paths import fspath
from ..presets.calm import ByteTokenizer, build_sequence, detokenize, format_tokens, read_cwgt
from ._common import add_command_group


def register(subparsers: Any) -> None:
    parser, sub = add_command_group(
        subparsers,
        "calm",
        help="CALM byte tokenizer: inspect CWGT files, build and decode sequences",
        description="CALM byte-level tokenizer (320 ids): CWGT v5 weight files and template sequences.",
    )

    inspect = sub.add_parser("inspect", help="print a CWGT file's header and metadata")
    inspect.add_argument("model", metavar="MODEL.cwgt", help="CWGT v5 weight file")
    inspect.add_argument("--json", action="store_true", help="print one JSON object")
    inspect.set_defaults(func=_inspect)

    encode = sub.add_parser(
        "encode",
        help="build a sequence from a JSON context",
        description="Build a CALM sequence from a JSON context, e.g. "
        '--context \'{"cwd": "/home/u", "input": "git com"}\'. Prints ids space-separated; '
        "what had to be dropped to fit l_max is reported on stderr.",
    )
    source = encode.add_mutually_exclusive_group()
    source.add_argument(
        "--template", "-T", help="template name (calm.TEMPLATES) or spec; default: shell"
    )
    source.add_argument(
        "-t",
        dest="template_t",
        metavar="TEMPLATE",
        help="deprecated spelling of -T/--template (-t names a tokenizer file in the other "
        "commands)",
    )
    source.add_argument(
        "--model", "-m", metavar="MODEL.cwgt", help="use the template and l_max of a CWGT file"
    )
    context = encode.add_mutually_exclusive_group(required=True)
    context.add_argument("--context", "-c", metavar="JSON", help="the context as a JSON object")
    context.add_argument(
        "--context-file", "-f", metavar="FILE", help="a JSON file with the context ('-' for stdin)"
    )
    encode.add_argument("--training", action="store_true", help="append <EOS> (training sequence)")
    encode.add_argument(
        "--l-max", type=int, default=None, help="maximum sequence length (default: model's or 768)"
    )
    encode.add_argument(
        "--reserve", type=int, default=0, help="positions to keep free for generation"
    )
    encode.add_argument(
        "--names", action="store_true", help="print tokens readably (<BOS> <CWD> /home <END> ...)"
    )
    encode.add_argument("--json", action="store_true", help="print {ids, dropped} as JSON")
    encode.set_defaults(func=_encode)

    decode = sub.add_parser(
        "decode", help="decode ids (arguments or stdin) to bytes; specials are skipped"
    )
    decode.add_argument(
        "ids", nargs="*", help="token ids (default: read whitespace-separated ids from stdin)"
    )
    decode.add_argument(
        "--names", action="store_true", help="show special tokens by name instead of skipping them"
    )
    decode.set_defaults(func=_decode)


def _inspect(args: argparse.Namespace) -> int:
    model = read_cwgt(args.model)
    header = model.header
    fields = header.as_dict()
    if args.json:
        doc = {
            "path": model.path,
            "header": {
                k: (v.decode("latin-1") if k == "magic" else v.hex() if k == "reserved" else v)
                for k, v in fields.items()
            },
            "metadata": {
                "domain": model.metadata.domain,
                "template": model.metadata.template,
                "stop_conditions": model.metadata.stop_conditions,
            },
            "ewc": model.ewc is not None,
        }
        print(json.dumps(doc, indent=2))
        return 0
    out = [f"file: {model.path}", "header:"]
    for name, value in fields.items():
        if name in ("tied", "has_ewc"):
            continue
        if name == "magic":
            shown = value.decode("latin-1")
        elif name == "reserved":
            shown = value.hex()
        elif name == "flags":
            names = [n for n, on in (("tied", header.tied), ("has_ewc", header.has_ewc)) if on]
            shown = f"0x{value:04x}" + (f" ({', '.join(names)})" if names else "")
        elif name in ("def_temperature", "def_top_p", "def_min_p"):
            shown = f"{value}" + (f" ({value / 1000:g})" if value else " (unset)")
        elif name in ("def_top_k",) and not value:
            shown = "0 (unset)"
        else:
            shown = str(value)
        out.append(f"  {name:<16} {shown}")
    out.append("metadata:")
    out.append(f"  {'domain':<16} {model.metadata.domain}")
    out.append(f"  {'template':<16} {model.metadata.template}")
    out.append(f"  {'stop_conditions':<16} {model.metadata.stop_conditions}")
    size_mib = header.param_count * 4 / (1 << 20)
    out.append(f"weights: {header.param_count} float32 ({size_mib:.2f} MiB)")
    out.append(f"ewc: {'fisher_diagonal + anchor_weights' if model.ewc is not None else 'none'}")
    print("\n".join(out))
    return 0


def _read_context(args: argparse.Namespace) -> Any:
    if args.context is not None:
        text, where = args.context, "--context"
    else:
        if args.context_file == "-":
            stdin = getattr(sys.stdin, "buffer", None)
            raw = stdin.read() if stdin is not None else sys.stdin.read()
            where = "stdin"
            if isinstance(raw, str):
                raw = raw.encode("utf-8", "surrogateescape")
        else:
            with open(fspath(args.context_file), "rb") as fh:
                raw, where = fh.read(), args.context_file
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{where} is not UTF-8: invalid byte at offset {exc.start}") from None
    try:
        context = json.loads(text)
    except RecursionError:
        raise ValueError(f"{where} is not a usable JSON context: nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, or a number with too many digits
        raise ValueError(f"{where} is not valid JSON: {exc}") from None
    if not isinstance(context, dict):
        raise ValueError(f"{where} must be a JSON object, got {type(context).__name__}")
    return context


def _encode(args: argparse.Namespace) -> int:
    source: Any
    if args.template_t is not None:
        warnings.warn(
            "-t is deprecated for the template: use -T or --template", FutureWarning, stacklevel=2
        )
        args.template = args.template_t
    if args.model:
        source = read_cwgt(args.model)
    else:
        source = (
            "shell" if args.template is None else args.template
        )  # "" is an error, not the default
    context = _read_context(args)
    seq = build_sequence(
        source, context, training=args.training, l_max=args.l_max, reserve=args.reserve
    )
    dropped = seq.dropped
    if args.json:
        print(json.dumps({"ids": seq.ids, "dropped": _jsonable(dropped.as_dict())}))
        return 0
    if dropped:
        parts = []
        if dropped.history:
            parts.append(f"{len(dropped.history)} history item(s)")
        if dropped.completions:
            parts.append(f"{len(dropped.completions)} completion(s)")
        if dropped.frames:
            parts.append(f"frame(s) {', '.join(dropped.frames)}")
        print(
            f"toksmith calm encode: dropped {', '.join(parts)} to fit l_max={seq.l_max}",
            file=sys.stderr,
        )
    print(format_tokens(seq) if args.names else " ".join(map(str, seq)))
    return 0


def _jsonable(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return value.decode("utf-8", "replace")
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


_ID_RE = re.compile(r"[+-]?[0-9]+\Z")


def _decode(args: argparse.Namespace) -> int:
    words = args.ids if args.ids else sys.stdin.read().split()
    ids = []
    for word in words:
        # ASCII decimal only: int() would also take "1_0" and non-ASCII digits
        if not _ID_RE.match(word):
            raise ValueError(f"not a token id: {word!r}")
        try:
            ids.append(int(word))
        except ValueError:  # more digits than int() converts
            raise ValueError(
                f"token id {word[:20]}... is out of range: CALM ids are 0..319"
            ) from None
    data = ByteTokenizer().decode_bytes(ids) if args.names else detokenize(ids)
    sys.stdout.buffer.write(data)
    sys.stdout.flush()
    return 0
