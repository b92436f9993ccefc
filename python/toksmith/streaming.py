"""Encode a byte stream of any size in bounded memory, with exactly the ids of encoding it whole.

The stream is decoded as UTF-8 block by block and cut just after a lone ``\\n`` (preceded by a
visible ASCII character) that is followed by an ASCII letter: no piece of the named split patterns
spans such a place (the same rule the native trainer uses, tested against whole-text encoding).
Pinned (and allowed special) tokens that could span such a place (one with a newline, or a
space after its first character, such as "New York") are kept clear of every cut. A tokenizer
whose pattern has no hand-written scanner (a custom regex) gives no such guarantee, so its input
is read whole.
"""

from __future__ import annotations

import codecs
import os
import re
from typing import BinaryIO, Iterable, Iterator, List, Optional, Sequence

from ._args import index_arg
from ._args import threads_arg as _threads
from .decoding import (
    _check_errors,
)  # an unknown handler is refused up front, not hours into a corpus
from .errors import CorpusDecodeError


def last_safe_cut(text: str, lo: int = 0, avoid: Sequence[str] = ()) -> int:
    """The last safe place to cut ``text`` after ``lo``, or 0: just after a lone ``\\n`` (preceded by a
    visible ASCII character) followed by an ASCII letter, else (for text without such line
    breaks) between an ASCII letter and a space followed by an ASCII letter. No piece of the
    named patterns spans either place. (After several whitespace characters a cut is not
    safe: GPT-2's ``\\s+(?!\\S)`` splits "]\\n\\n" + "B" into "]", "\\n", "\\n", "B", but a part that
    ends in "]\\n\\n" keeps "\\n\\n" together.) A caller that found no cut in ``text[:k]`` passes
    ``lo=k - 1`` (less :func:`cut_lookahead` with ``avoid``): only places whose next character
    is new are looked at, so repeated searches of a growing text stay linear in what was added.

    ``avoid``: added tokens that could span such a place (:func:`spanning_tokens`, such as a
    pinned "New York"); a place is then taken only where no occurrence of them touches the two
    characters on either side of it, and only once ``text`` reaches far enough past it to tell.

    >>> last_safe_cut("in New York and New Jersey")
    19
    >>> last_safe_cut("in New York and New Jersey", avoid=["New York"])
    15
    >>> last_safe_cut("in New York and", avoid=["New York"])
    0
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    lo = index_arg(lo, "lo must be an int (an index into text), not {type}")
    if lo < 0:
        raise ValueError(f"lo must be an index >= 0 into text, not {lo}")
    need = cut_lookahead(avoid)

    def clear(i: int) -> bool:
        if not avoid:
            return True
        if i + need > len(text):
            return False
        return all(text.find(t, max(0, i - 1 - len(t)), i + 1 + len(t)) < 0 for t in avoid)

    i = _last_place(_CUT_AFTER_NEWLINE, text, lo, lambda i: clear(i + 1))
    if i >= 0:
        return i + 1
    return max(_last_place(_CUT_AT_SPACE, text, lo, clear), 0)


# the places of last_safe_cut (the newline / space there), found by the regex engine: a long run
# of newlines or spaces was looked at one character at a time in Python (0.6 s per MB)
_CUT_AFTER_NEWLINE = re.compile(r"(?<=[!-~])\n(?=[A-Za-z])")
_CUT_AT_SPACE = re.compile(r"(?<=[A-Za-z]) (?=[A-Za-z])")


def _last_place(rx: "re.Pattern[str]", text: str, lo: int, ok) -> int:
    """The start of the last match of ``rx`` in ``text[lo:-1]`` (its lookahead sees the last
    character) where ``ok(start)`` holds, or -1. Windows growing back from the end are searched,
    so a place near the end is found without looking at the rest, and the whole costs linear time."""
    hi, span = len(text) - 1, 4096
    while hi > lo:
        start = max(lo, hi - span)
        best = -1
        for m in rx.finditer(text, start, hi + 1):  # matches start before hi
            if ok(m.start()):
                best = m.start()
        if best >= 0:
            return best
        hi, span = start, span * 2
    return -1


def _check_avoid(avoid: Sequence[str]) -> None:
    """``avoid`` must be a collection of str: a str was taken as its characters."""
    if isinstance(avoid, (str, bytes, bytearray)) or not isinstance(
        avoid, (list, tuple, set, frozenset)
    ):
        raise TypeError(
            f"avoid must be a list of str (the tokens to keep whole), not {type(avoid).__name__}"
            + ("; wrap one token in a list" if isinstance(avoid, str) else "")
        )
    for t in avoid:
        if not isinstance(t, str) or not t:
            raise TypeError(f"avoid must hold non-empty str, not {t!r}")


def cut_lookahead(avoid: Sequence[str]) -> int:
    """How far past a place :func:`last_safe_cut` must see to clear it of ``avoid``."""
    _check_avoid(avoid)
    return max((len(t) + 2 for t in avoid), default=0)


def _decoder(errors: str, name: str):
    _check_errors(errors)
    dec = codecs.getincrementaldecoder("utf-8")(errors)
    offset = [0]

    def decode(block: bytes, final: bool = False) -> str:
        held = len(
            dec.getstate()[0]
        )  # the end of a character cut by the last block, decoded with this one:
        try:  # e.start counts from its first byte
            text = dec.decode(block, final)
        except UnicodeDecodeError as e:
            raise CorpusDecodeError(
                f"{name} is not valid UTF-8 at byte offset {offset[0] - held + e.start}; "
                "pass errors='replace' (CLI: --errors replace) to replace bad bytes with U+FFFD"
            ) from None
        offset[0] += len(block)
        return text

    return decode


def _binary_reader(f):
    """``f.read``, checked to give bytes: a text file (or a list of str) failed deep inside with
    "can't concat str to bytes" or an AttributeError."""
    if not callable(getattr(f, "read", None)):
        raise TypeError(
            f"f must be a binary file object (open(path, 'rb'), io.BytesIO), not {type(f).__name__}"
        )

    def read(n: int) -> bytes:
        block = f.read(n)
        if not isinstance(block, (bytes, bytearray, memoryview)):
            raise TypeError(
                f"f must be opened in binary mode (open(path, 'rb'), io.BytesIO): its read() gave "
                f"{type(block).__name__}, not bytes"
            )
        return block if isinstance(block, bytes) else bytes(block)

    return read


#: the largest read size: ``f.read(n)`` allocates n bytes first (2**64 was an OverflowError)
MAX_READ_SIZE = 1 << 32


def _check_size(
    value, what: str, unit: str = "bytes to read at a time", most: int = MAX_READ_SIZE
) -> int:
    """``value`` as a read size (an int >= 1): 0 read nothing and gave no ids at all (the whole
    input silently lost), a negative one read the whole input at once."""
    value = index_arg(value, f"{what} must be an int (a number of {unit.split()[0]}), not {{type}}")
    if not 1 <= value <= most:
        raise ValueError(f"{what} must be between 1 and {most} (a number of {unit}), not {value}")
    return value


def _check_tokenizer(tok, allow_special: bool) -> None:
    """A clear TypeError for something that is no tokenizer (None was an AttributeError)."""
    method = "encode" if allow_special else "encode_ordinary"
    if isinstance(tok, (str, bytes)) or not callable(
        getattr(tok, method, None)
    ):  # str.encode is no tokenizer
        raise TypeError(
            f"tok must be a tokenizer with an {method} method (a toksmith.Tokenizer), "
            f"not {type(tok).__name__}"
        )


def _may_span_a_cut(token: str) -> bool:
    """Whether an occurrence of ``token`` could span a place :func:`last_safe_cut` cuts at (just
    after a ``\\n``, or at a space): a pinned "New York" was cut in two at its space."""
    return "\n" in token or " " in token[1:]


def spanning_tokens(tok, allow_special: bool = False) -> List[str]:
    """The pinned tokens (and, with ``allow_special``, special tokens) of ``tok`` that could
    span a safe cut: cuts are kept clear of them."""
    _check_tokenizer(tok, False)
    added = list(getattr(tok, "pinned_tokens", {})) + (
        list(tok.special_tokens) if allow_special else []
    )
    return [t for t in added if _may_span_a_cut(t)]


def can_stream(tok, allow_special: bool = False) -> bool:
    """Whether ``tok`` can encode a stream in blocks (see the module docstring)."""
    core = getattr(
        tok, "_core", None
    )  # other tokenizer kinds (e.g. calm.ByteTokenizer): read whole
    return bool(getattr(core, "fast_pretokenizer", False))


def _whole(tok):
    """``tok`` without a tokenizer.json's truncation and padding: a stream is encoded in parts,
    which must not be cut or padded each."""
    untruncated = getattr(tok, "_untruncated", None)
    return untruncated() if callable(untruncated) else tok


def _encoder(tok, allow_special: bool):
    """Encode one text with ``tok``, special-token text as special tokens if ``allow_special``."""
    tok = _whole(tok)
    return (
        (lambda t: tok.encode(t, allowed_special="all")) if allow_special else tok.encode_ordinary
    )


def batch_encoder(tok, allow_special: bool, threads: Optional[int]):
    """Encode a list of texts with ``tok`` on ``threads`` threads (``None``: every core)."""
    _threads(threads)
    method = "encode_batch" if allow_special else "encode_ordinary_batch"
    if isinstance(tok, (str, bytes)) or not callable(getattr(tok, method, None)):
        raise TypeError(
            f"tok must be a tokenizer with an {method} method (a toksmith.Tokenizer), "
            f"not {type(tok).__name__}"
        )
    if allow_special:
        tok = _whole(tok)
        return lambda texts: tok.encode_batch(texts, allowed_special="all", threads=threads)
    return lambda texts: tok.encode_ordinary_batch(texts, threads=threads)


def iter_text_parts(
    tok,
    f: BinaryIO,
    *,
    allow_special: bool = False,
    errors: str = "strict",
    name: str = "<stdin>",
    block_size: int = 4 << 20,
    group: int = 1,
) -> Iterator[List[str]]:
    """The stream's text in lists of up to ``group`` parts, each part a block of about
    ``block_size`` bytes cut at a safe place: encoding the parts one by one and concatenating
    the ids gives the ids of the whole text. For a tokenizer that cannot stream (see
    :func:`can_stream`) the whole text is one part."""
    _check_tokenizer(tok, allow_special)
    block_size = _check_size(block_size, "block_size")
    group = _check_size(group, "group", "parts per list", most=1 << 32)
    read = _binary_reader(f)
    decode = _decoder(errors, name)
    streaming = can_stream(tok, allow_special)
    avoid = spanning_tokens(tok, allow_special) if streaming else []
    back = 1 + cut_lookahead(avoid)  # places near the end may be decided only by what follows
    parts: List[str] = []
    pending = ""
    while True:
        block = read(block_size)
        final = not block
        searched = len(pending)  # already searched: any safe cut will do, so only new places are
        pending += decode(block, final) if block else decode(b"", True)
        if final:
            break
        if streaming:
            cut = last_safe_cut(
                pending, max(0, searched - back), avoid
            )  # looked at (linear overall)
            if cut:
                parts.append(pending[:cut])
                pending = pending[cut:]
                if len(parts) >= group:
                    yield parts
                    parts = []
    if pending:
        parts.append(pending)
    if parts:
        yield parts


def encode_stream(
    tok,
    f: BinaryIO,
    *,
    allow_special: bool = False,
    errors: str = "strict",
    name: str = "<stdin>",
    block_size: int = 4 << 20,
    threads: Optional[int] = 1,
) -> Iterator[List[int]]:
    """Yield lists of ids whose concatenation is the encoding of the whole stream.

    With ``threads`` other than 1 (``None``: every core), 4 blocks per thread are read and cut
    before they are encoded together with ``encode_batch`` (several per thread, so that no
    thread waits long for the others): the same ids, in the same order.
    """
    _threads(threads)  # 0, a negative count or a bool was taken as one thread
    _check_tokenizer(tok, allow_special)
    encode = _encoder(tok, allow_special)
    parallel = threads != 1 and hasattr(
        tok, "encode_batch" if allow_special else "encode_ordinary_batch"
    )
    group = 4 * (threads or os.cpu_count() or 1) if parallel else 1
    batch = batch_encoder(tok, allow_special, threads) if parallel else None
    for parts in iter_text_parts(
        tok,
        f,
        allow_special=allow_special,
        errors=errors,
        name=name,
        block_size=block_size,
        group=group,
    ):
        if batch is not None and len(parts) > 1:
            yield from batch(parts)
        else:
            for part in parts:
                yield encode(part)


def encode_lines(
    tok,
    lines: Iterable[str],
    *,
    allow_special: bool = False,
    threads: Optional[int] = 1,
    batch_bytes: int = 1 << 20,
) -> Iterator[List[int]]:
    """The ids of each line, in order: lines are gathered into batches of about ``batch_bytes``
    of text and encoded with ``encode_batch`` on ``threads`` threads (``None``: every core)."""
    _threads(threads)
    _check_tokenizer(tok, allow_special)
    batch_bytes = _check_size(batch_bytes, "batch_bytes", "bytes of text per batch")
    if isinstance(lines, (str, bytes, bytearray)):  # was encoded one character (or byte) a line
        raise TypeError(
            f"lines must be an iterable of str (a list, a file's lines), not a single "
            f"{type(lines).__name__}; wrap one text in a list"
        )
    if not hasattr(tok, "encode_ordinary_batch"):  # other tokenizer kinds: one line at a time
        encode = _encoder(tok, allow_special)
        for line in lines:
            yield encode(line)
        return
    batch = batch_encoder(tok, allow_special, threads)
    group: List[str] = []
    size = 0
    for n, line in enumerate(lines):
        if not isinstance(
            line, str
        ):  # an int was "object of type 'int' has no len()", naming no line
            raise TypeError(
                f"lines must hold str; line {n} is {type(line).__name__} ({line!r:.60})"
            )
        group.append(line)
        size += len(line) + 16
        if size >= batch_bytes:
            yield from batch(group)
            group, size = [], 0
    if group:
        yield from batch(group)


def iter_line_batches(
    f: BinaryIO, *, errors: str = "strict", name: str = "<stdin>", batch_bytes: int = 1 << 20
) -> Iterator[List[str]]:
    """Lines of a byte stream without their trailing ``\\n``, in lists of about ``batch_bytes``
    of text: each block is decoded and split in one call (no Python work per line)."""
    batch_bytes = _check_size(batch_bytes, "batch_bytes")
    _check_errors(errors)
    read = _binary_reader(f)
    lineno = 0
    rest: List[bytes] = []  # the start of a line that goes on in the next block (in pieces: a
    # long line is joined once, not copied again with each block)
    while True:
        block = read(batch_bytes)
        if not block:
            break
        cut = block.rfind(b"\n")
        if cut < 0:
            rest.append(block)
            continue
        data = b"".join(rest + [block[:cut]]) if rest else block[:cut]
        rest = [block[cut + 1 :]]
        yield _decode_lines(data, lineno, errors, name)
        lineno += data.count(b"\n") + 1
    tail = b"".join(rest)
    if tail:
        yield _decode_lines(tail, lineno, errors, name)


def _decode_lines(data: bytes, lineno: int, errors: str, name: str) -> List[str]:
    """``data`` (lines joined by ``\\n``, the first being line ``lineno + 1``) decoded and split."""
    try:
        return data.decode("utf-8", errors).split("\n")
    except UnicodeDecodeError as e:
        line_start = data.rfind(b"\n", 0, e.start) + 1
        bad_line = lineno + 1 + data.count(b"\n", 0, line_start)
        raise CorpusDecodeError(
            f"{name}: line {bad_line} is not valid UTF-8 (byte {e.start - line_start} of the "
            "line); pass --errors replace"
        ) from None
