"""``toksmith eval``: compression of tokenizers on corpora (like nanochat's ``tok_eval``).

``toksmith eval -t A.json -t B.tiktoken ... --corpus NAME=PATH ... [--chart out.png]`` prints,
for each corpus and tokenizer, the number of tokens, the bytes per token (UTF-8 bytes of the
text / tokens; higher compresses better) and its ratio to the first tokenizer's, and optionally
draws a grouped bar chart (needs matplotlib: ``pip install toksmith[plot]``).

Tokenizers are any file :func:`toksmith.formats.load_any` reads, or an OpenAI encoding's name
(``cl100k_base``, read from tiktoken's cache), named by their file name (or ``-t NAME=PATH``). Corpora are UTF-8 text files (``.xz`` / ``.gz`` / ``.bz2`` decompressed),
encoded as plain text (special tokens' text is not special).

The library functions are :func:`bytes_per_token`, :func:`evaluate` and :func:`write_chart`:

>>> import toksmith
>>> tok = toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2")
>>> evaluate({"bytes": tok}, {"hi": "hello"})
[{'corpus': 'hi', 'tokenizer': 'bytes', 'bytes': 5, 'tokens': 5, 'bytes_per_token': 1.0, 'ratio': 1.0}]
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys
import warnings
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from ..corpus import decompression_errors, open_binary
from ..documents import iter_documents_of, kind_of, unreadable
from ..errors import missing_extra
from ..presets.cppreason import CppTokenizer
from ..streaming import can_stream
from ..tokenizer import Tokenizer
from ._common import check_output_path, check_threads_arg, load_tokenizer

CHUNK_CHARS = 1 << 20
# a cut just after a lone newline (non-space before it, non-space other than "/" after it)
# changes no piece of the named patterns: the newline ends its piece there anyway, and a single
# trailing "\n" is one piece with or without the text after it (o200k's punctuation piece
# ` ?[^\s\p{L}\p{N}]+[\r\n/]*` takes a "/" after the newline: ".\n/" is one piece); so chunked
# counts equal whole-text counts. Custom patterns (and pinned tokens with a newline) give no
# such guarantee: :func:`count_tokens` does not cut for them.
_SAFE_CUT = re.compile(r"(?<=\S)\n(?=[^\s/])")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="compare tokenizers' compression (bytes/token) on corpora",
        description="Bytes per token of each tokenizer on each corpus (higher is better), with "
        "the ratio to the first tokenizer; optionally a PNG bar chart.",
    )
    parser.add_argument(
        "-t",
        "--tokenizer",
        action="append",
        required=True,
        metavar="[NAME=]PATH",
        help="a tokenizer file (any format); repeat for more. The first is the baseline",
    )
    parser.add_argument(
        "--corpus",
        action="append",
        required=True,
        metavar="NAME=PATH",
        help="a UTF-8 text corpus (.xz/.gz/.bz2 ok); repeat for more",
    )
    parser.add_argument(
        "--chart",
        metavar="OUT.png",
        default=None,
        help="write a bar chart (needs matplotlib: pip install toksmith[plot])",
    )
    parser.add_argument(
        "--max-bytes",
        type=int,
        default=None,
        metavar="N",
        help="read at most about N bytes of each corpus (cut at a line end)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        metavar="N",
        help="encoding threads (default: all cores)",
    )
    parser.add_argument(
        "--text-field",
        default="text",
        metavar="F",
        help="field holding the text in .jsonl/.json lines and column in .parquet corpora",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.set_defaults(func=_run)


# ---------------------------------------------------------------------------- library


def _split_named(arg: str, what: str, all_ext: bool) -> Tuple[str, str]:
    if "=" in arg and not os.path.exists(arg):
        name, path = arg.split("=", 1)
        if not name or not path:
            raise ValueError(f"{what} {arg!r}: expected NAME=PATH")
        return name, path
    if all_ext:
        base = os.path.basename(arg)
        return base.split(".", 1)[0] or base, arg
    base = os.path.basename(arg.rstrip("/"))
    for ext in (".json", ".tiktoken", ".model", ".txt"):
        if base.endswith(ext):
            base = base[: -len(ext)]
    return base or arg, arg


def read_corpus(path: str, max_bytes: Optional[int] = None, text_field: str = "text") -> str:
    """The text of a corpus file (decompressed; invalid UTF-8 replaced, with a warning), optionally
    only about its first ``max_bytes`` bytes, cut after a line end (or, with none, after the
    last whole character). JSON lines and parquet files are read as documents (their
    ``text_field``, or a chat line's message contents), joined by newlines; binary files are
    refused by name."""
    if max_bytes is not None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int):
            raise TypeError(f"max_bytes must be an int or None, not {type(max_bytes).__name__}")
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be >= 1, not {max_bytes}")
        if max_bytes >= sys.maxsize - 1:
            max_bytes = None  # more than any file holds (and more than read() accepts)
    if kind_of(path) != "text":
        texts: List[str] = []
        size = 0
        for doc in iter_documents_of(path, text_field, "replace"):
            texts.append(doc)
            size += len(doc.encode("utf-8")) + 1
            if max_bytes is not None and size >= max_bytes:
                break
        return "\n".join(texts)
    why = unreadable(path)
    if why is not None:
        raise ValueError(why)

    with decompression_errors(path), open_binary(path) as fh:
        # one byte more than asked tells a file of exactly max_bytes (read whole, its last line
        # kept) from a longer one (cut)
        data = fh.read() if max_bytes is None else fh.read(max_bytes + 1)
        cut_short = max_bytes is not None and len(data) > max_bytes
        if cut_short:
            data = data[:max_bytes]
            cut = data.rfind(b"\n")
            if cut > 0:
                data = data[: cut + 1]
    # cut with no line end before it, the data may end inside a character: its first bytes are
    # left out (not counted as a U+FFFD that is not in the file)
    final = not cut_short or data.endswith(b"\n")
    try:
        return codecs.getincrementaldecoder("utf-8")("strict").decode(data, final)
    except UnicodeDecodeError as e:
        warnings.warn(
            f"{os.fspath(path)} is not valid UTF-8 (byte {e.start}): invalid bytes are counted as "
            "U+FFFD (3 bytes each)",
            stacklevel=2,
        )
    return codecs.getincrementaldecoder("utf-8")("replace").decode(data, final)


def _chunks(text: str, size: int = CHUNK_CHARS) -> Iterator[str]:
    start = 0
    n = len(text)
    while start < n:
        end = start + size
        if end >= n:
            yield text[start:]
            return
        m = _SAFE_CUT.search(text, end)
        if m is None:
            yield text[start:]
            return
        yield text[start : m.end()]
        start = m.end()


def count_tokens(
    tokenizer: Any, text: str, threads: Optional[int] = None, chunk_chars: int = CHUNK_CHARS
) -> int:
    """Number of tokens of ``text`` encoded as plain text (in parallel, in chunks of about
    ``chunk_chars`` characters cut where the split pattern would cut anyway; for a custom
    pattern, or pinned tokens that hold a newline, the whole text at once)."""
    if not isinstance(text, str):
        raise TypeError(
            f"text must be str, not {type(text).__name__}; read a file with read_corpus(path)"
        )
    if isinstance(chunk_chars, bool) or not isinstance(chunk_chars, int):
        raise TypeError(f"chunk_chars must be an int, not {type(chunk_chars).__name__}")
    if chunk_chars < 1:
        raise ValueError(f"chunk_chars must be >= 1, not {chunk_chars}")
    return _count(tokenizer, text, threads, chunk_chars)[0]


def _count(
    tokenizer: Any,
    text: str,
    threads: Optional[int],
    chunk_chars: int = CHUNK_CHARS,
    covered: bool = False,
) -> Tuple[int, Optional[int]]:
    """(tokens of ``text``, with ``covered`` the UTF-8 bytes those tokens spell, else None)."""
    if not callable(getattr(tokenizer, "encode_ordinary_batch", None)):
        raise TypeError(
            f"cannot count tokens with a {type(tokenizer).__module__}.{type(tokenizer).__name__}: pass a "
            "toksmith Tokenizer or a tiktoken Encoding (read a tokenizer.json, .tiktoken or GPT-2 "
            "files with toksmith.load_any(path))"
        )

    if not can_stream(tokenizer) or any("\n" in t for t in getattr(tokenizer, "pinned_tokens", {})):
        chunk_chars = max(chunk_chars, len(text))  # a custom pattern's pieces may span a cut: whole
    encode_batch = _batch_encoder(tokenizer, threads)
    total = 0
    spelled = 0 if covered else None

    def add(batch: List[str]) -> None:
        nonlocal total, spelled
        encoded = encode_batch(batch)
        total += sum(map(len, encoded))
        if spelled is not None:
            spelled += sum(len(tokenizer.decode_bytes(ids)) for ids in encoded)

    group: List[str] = []
    for chunk in _chunks(text, chunk_chars):
        group.append(chunk)
        if len(group) >= 16:
            add(group)
            group = []
    if group:
        add(group)
    return total, spelled


def _may_drop_text(tokenizer: Any) -> bool:
    """Whether the split pattern of ``tokenizer`` may match no piece at some text, which is then
    left out of its tokens (as tiktoken does): a custom pattern of a toksmith Tokenizer, any
    tiktoken Encoding. (The named patterns match every character.)"""
    if type(tokenizer).__module__.split(".")[0] == "tiktoken":
        return callable(getattr(tokenizer, "decode_bytes", None))

    return isinstance(tokenizer, Tokenizer) and tokenizer.pattern_name is None


def _batch_encoder(tokenizer: Any, threads: Optional[int]):
    """``tokenizer.encode_ordinary_batch`` on ``threads`` threads: a ``tiktoken.Encoding`` (as
    nanochat's ``tok_eval`` compares) names the argument ``num_threads``, and failed on ``threads=``."""
    if type(tokenizer).__module__.split(".")[0] == "tiktoken":
        kw = {} if threads is None else {"num_threads": threads}
        return lambda texts: tokenizer.encode_ordinary_batch(texts, **kw)
    return lambda texts: tokenizer.encode_ordinary_batch(texts, threads=threads)


def bytes_per_token(tokenizer: Any, text: str, threads: Optional[int] = None) -> float:
    """UTF-8 bytes of ``text`` per token (0 tokens: ``inf``; empty text: 0)."""
    n_tokens = count_tokens(tokenizer, text, threads)  # first: it checks that text is a str
    n_bytes = len(text.encode("utf-8", "surrogatepass"))
    return n_bytes / n_tokens if n_tokens else (float("inf") if n_bytes else 0.0)


def evaluate(
    tokenizers: Mapping[str, Any],
    corpora: Mapping[str, str],
    threads: Optional[int] = None,
) -> List[Dict[str, Any]]:
    """One row per (corpus, tokenizer): bytes, tokens, bytes_per_token and ratio (bytes/token
    relative to the first tokenizer's on that corpus).

    An empty corpus, and a tokenizer whose split pattern leaves text out (so that its tokens
    spell fewer bytes than the corpus holds, and its bytes/token is too high; 0 with no token
    at all), are warned about."""
    if not isinstance(tokenizers, Mapping) or not isinstance(corpora, Mapping):
        raise TypeError(
            "tokenizers and corpora must be dicts of name -> tokenizer and name -> text"
        )
    rows = []
    for cname, text in corpora.items():
        if not isinstance(text, str):
            raise TypeError(
                f"corpora[{cname!r}] must be the text (str), not {type(text).__name__}; "
                "read a file with read_corpus(path)"
            )
        n_bytes = len(text.encode("utf-8", "surrogatepass"))
        if not n_bytes:
            warnings.warn(f"corpus {cname!r} is empty: its bytes/token figures are 0", stacklevel=2)
        base: Optional[float] = None
        for tname, tok in tokenizers.items():
            n_tokens, spelled = _count(
                tok, text, threads, covered=bool(n_bytes) and _may_drop_text(tok)
            )
            if spelled is not None and spelled < n_bytes:
                warnings.warn(
                    f"tokenizer {tname!r} leaves out {n_bytes - spelled} of the {n_bytes} bytes of corpus "
                    f"{cname!r} (its split pattern matches no piece there), so its bytes/token is not "
                    f"comparable" + ("" if n_tokens else " (no token at all: reported as 0)"),
                    stacklevel=2,
                )
            bpt = n_bytes / n_tokens if n_tokens else 0.0
            if base is None:
                base = bpt
            ratio = bpt / base if base else 0.0
            rows.append(
                {
                    "corpus": cname,
                    "tokenizer": tname,
                    "bytes": n_bytes,
                    "tokens": n_tokens,
                    "bytes_per_token": round(bpt, 6),
                    "ratio": round(ratio, 6),
                }
            )
    return rows


def _matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise missing_extra("plot", "matplotlib") from None
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    return Figure, FigureCanvasAgg


def write_chart(
    rows: Sequence[Mapping[str, Any]], path: str, title: str = "bytes per token (higher is better)"
) -> None:
    """A grouped bar chart of bytes/token (corpora on the x axis, one bar per tokenizer), as
    PNG (or any format matplotlib infers from ``path``). Uses no pyplot global state."""
    Figure, FigureCanvasAgg = _matplotlib()
    corpora = list(dict.fromkeys(r["corpus"] for r in rows))
    toks = list(dict.fromkeys(r["tokenizer"] for r in rows))
    value = {(r["corpus"], r["tokenizer"]): r["bytes_per_token"] for r in rows}
    fig = Figure(figsize=(max(5.0, 1.2 + len(corpora) * (0.5 + 0.45 * len(toks))), 4.2), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / max(len(toks), 1)
    for j, t in enumerate(toks):
        xs = [i - 0.4 + width * (j + 0.5) for i in range(len(corpora))]
        ys = [value.get((c, t), 0.0) for c in corpora]
        bars = ax.bar(xs, ys, width=width * 0.95, label=t)
        for b, y in zip(bars, ys):
            ax.annotate(
                f"{y:.2f}", (b.get_x() + b.get_width() / 2, y), ha="center", va="bottom", fontsize=7
            )
    ax.set_xticks(list(range(len(corpora))))
    ax.set_xticklabels(corpora)
    ax.set_ylabel("bytes / token")
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.margins(y=0.12)
    fig.tight_layout()
    fig.savefig(path)


# ---------------------------------------------------------------------------- command


def _format_table(rows: Sequence[Mapping[str, Any]], baseline: str) -> str:
    header = ("corpus", "bytes", "tokenizer", "tokens", "bytes/token", f"vs {baseline}")
    body = [
        (
            r["corpus"],
            str(r["bytes"]),
            r["tokenizer"],
            str(r["tokens"]),
            f"{r['bytes_per_token']:.3f}",
            f"{r['ratio']:.3f}",
        )
        for r in rows
    ]
    widths = [max(len(x) for x in col) for col in zip(header, *body)]
    right = {1, 3, 4, 5}

    def fmt(row: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if k in right else c.ljust(w) for k, (c, w) in enumerate(zip(row, widths))
        ).rstrip()

    return "\n".join([fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in body])


class _CppReasonCounter:
    """A CppReason tokenizer with the ``encode_ordinary_batch(texts, threads=)`` that
    :func:`count_tokens` calls."""

    def __init__(self, tok: Any) -> None:
        self.tok = tok

    def encode_ordinary_batch(
        self, texts: Sequence[str], threads: Optional[int] = None
    ) -> List[List[int]]:
        return self.tok.encode_ordinary_batch(texts, num_threads=threads)


def _counted(tok: Any) -> Any:
    """What to count the tokens of a loaded file with: for a CppReason file the CppReason
    tokenizer (its fixed whole-word ids come before the file's BPE, which alone gives other
    counts), else the tokenizer itself."""
    if getattr(tok, "metadata", {}).get("preset") == "cppreason":
        return _CppReasonCounter(CppTokenizer(tok))
    return tok


def _check_chart_path(path: str) -> None:
    """Fail before the work when ``--chart`` cannot be written: no matplotlib, a missing folder,
    or a name without an image extension matplotlib writes (it would add ``.png`` to it)."""
    _matplotlib()
    check_output_path(path, "--chart")
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    ext = os.path.splitext(path)[1][1:].lower()
    if ext not in formats:
        raise ValueError(
            f"--chart {path!r}: give a file name ending in .png (or {', '.join('.' + f for f in sorted(formats) if f != 'png')})"
        )


def _run(args: argparse.Namespace) -> int:
    if args.chart:
        _check_chart_path(args.chart)  # fail before the work when the chart cannot be written
    if args.max_bytes is not None and args.max_bytes < 1:
        raise ValueError(f"--max-bytes must be >= 1, not {args.max_bytes}")
    check_threads_arg(args.threads)
    tokenizers: Dict[str, Any] = {}
    for arg in args.tokenizer:
        name, path = _split_named(arg, "-t", all_ext=False)
        base, k = name, 2
        while name in tokenizers:
            name, k = f"{base}#{k}", k + 1
        tokenizers[name] = _counted(load_tokenizer(path))  # a file, or an OpenAI encoding's name
    corpora: Dict[str, str] = {}
    for arg in args.corpus:
        name, path = _split_named(arg, "--corpus", all_ext=True)
        if name in corpora:
            raise ValueError(
                f"--corpus {arg!r}: the name {name!r} is given twice (name the corpora: "
                f"--corpus NAME=PATH)"
            )
        corpora[name] = read_corpus(path, args.max_bytes, args.text_field)
    rows = evaluate(tokenizers, corpora, args.threads)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(_format_table(rows, next(iter(tokenizers))))
    if args.chart:
        write_chart(rows, args.chart)
        print(f"wrote {args.chart}", file=sys.stderr)
    return 0
