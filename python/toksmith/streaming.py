"""Encode a byte stream of any size in bounded memory, with exactly the ids of encoding it whole.

The stream is decoded as UTF-8 block by block and cut just after a lone ``\\n`` (preceded by a
visible ASCII character) that is followed by an ASCII letter: no piece of the named split patterns
spans such a place (the same rule the native
trainer uses, tested against whole-text encoding). A tokenizer whose pattern has no hand-written
scanner (a custom regex), or whose pinned/allowed special tokens contain a newline, gives no
such guarantee, so its input is read whole.
"""

from __future__ import annotations

import codecs
from typing import BinaryIO, Iterator, List

from .errors import CorpusDecodeError


def _ascii_letter(c: str) -> bool:
    return c.isascii() and c.isalpha()


def last_safe_cut(text: str) -> int:
    """The last safe place to cut ``text``, or 0: just after a lone ``\\n`` (preceded by a
    visible ASCII character) followed by an ASCII letter, else (for text without such line
    breaks) between an ASCII letter and a space followed by an ASCII letter. No piece of the
    named patterns spans either place. (After several whitespace characters a cut is not
    safe: GPT-2's ``\\s+(?!\\S)`` splits "]\\n\\nB" into "]", "\\n", "\\n", "B", but a part that
    ends in "]\\n\\n" keeps "\\n\\n" together.)"""
    i = len(text) - 1
    while True:
        i = text.rfind("\n", 0, i)
        if i < 0:
            break
        if i >= 1 and "!" <= text[i - 1] <= "~" and _ascii_letter(text[i + 1]):
            return i + 1
    i = len(text) - 1
    while True:
        i = text.rfind(" ", 1, i)
        if i < 1:
            return 0
        if i + 1 < len(text) and _ascii_letter(text[i - 1]) and _ascii_letter(text[i + 1]):
            return i


def _decoder(errors: str, name: str):
    dec = codecs.getincrementaldecoder("utf-8")(errors)
    offset = [0]

    def decode(block: bytes, final: bool = False) -> str:
        try:
            text = dec.decode(block, final)
        except UnicodeDecodeError as e:
            raise CorpusDecodeError(
                f"{name} is not valid UTF-8 at byte offset {offset[0] + e.start}; "
                "pass errors='replace' (CLI: --errors replace) to replace bad bytes with U+FFFD"
            ) from None
        offset[0] += len(block)
        return text

    return decode


def can_stream(tok, allow_special: bool = False) -> bool:
    """Whether ``tok`` can encode a stream in blocks (see the module docstring)."""
    added = list(getattr(tok, "pinned_tokens", {})) + (list(tok.special_tokens) if allow_special else [])
    core = getattr(tok, "_core", None)  # other tokenizer kinds (e.g. calm.ByteTokenizer): read whole
    return bool(getattr(core, "fast_pretokenizer", False)) and not any("\n" in t for t in added)


def encode_stream(tok, f: BinaryIO, *, allow_special: bool = False, errors: str = "strict",
                  name: str = "<stdin>", block_size: int = 4 << 20) -> Iterator[List[int]]:
    """Yield lists of ids whose concatenation is the encoding of the whole stream."""
    decode = _decoder(errors, name)
    encode = (lambda t: tok.encode(t, allowed_special="all")) if allow_special else tok.encode_ordinary
    streaming = can_stream(tok, allow_special)
    pending = ""
    while True:
        block = f.read(block_size)
        final = not block
        pending += decode(block, final) if block else decode(b"", True)
        if final:
            break
        if streaming:
            cut = last_safe_cut(pending)
            if cut:
                yield encode(pending[:cut])
                pending = pending[cut:]
    if pending:
        yield encode(pending)


def iter_lines(f: BinaryIO, *, errors: str = "strict", name: str = "<stdin>") -> Iterator[str]:
    """Lines of a byte stream without their trailing ``\\n``."""
    lineno = 0
    for raw in f:
        lineno += 1
        if raw.endswith(b"\n"):
            raw = raw[:-1]
        try:
            yield raw.decode("utf-8", errors)
        except UnicodeDecodeError as e:
            raise CorpusDecodeError(f"{name}: line {lineno} is not valid UTF-8 (byte {e.start} of the line); "
                                    "pass --errors replace") from None
