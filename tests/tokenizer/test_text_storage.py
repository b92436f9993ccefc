"""The native layer's own conversion of CPython's one-, two- and four-byte `str` storage to
UTF-8 (chunked, with an ASCII path and branch-free writes): with a vocabulary of the 256 bytes
and no merges, the ids of a text are its UTF-8 bytes, so every character at every offset of the
chunks is checked against Python's own encoder. Texts short enough to be encoded with the GIL
held and longer ones (released; written straight into the list) alike."""

import random

import pytest

from toksmith import Tokenizer

BYTES = Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2")

# characters of each UTF-8 length and the edges of each range
EDGES = [
    "\x00", "\x7f", "a", " ", "\x80", "\xa0", "\xe9", "\xff", "\u0100", "\u07ff", "\u0800",
    "\u4e2d", "\ud7ff", "\ue000", "\uffff", "\U00010000", "\U0001f600", "\U0010ffff",
]  # fmt: skip


def _utf8_ids(text):
    return list(text.encode("utf-8"))


@pytest.mark.parametrize("width", [1, 2, 4])
def test_every_offset_of_the_chunks(width):
    rng = random.Random(width)
    pool = [c for c in EDGES if ord(c) < {1: 0x100, 2: 0x10000, 4: 0x110000}[width]]
    force = {1: "\xe9", 2: "\u4e2d", 4: "\U0001f600"}[width]  # the storage width
    for n in range(0, 40):
        for _ in range(4):
            body = "".join(rng.choice(pool) for _ in range(n))
            # an ASCII run of a chunk or more, then the other characters
            for text in (force + body, "a" * 17 + force + body, body + force):
                assert BYTES.encode_ordinary(text) == _utf8_ids(text), ascii(text)


def test_every_code_point():
    bmp = "".join(chr(c) for c in range(0x80, 0x10000) if not 0xD800 <= c < 0xE000)
    astral = "".join(chr(c) for c in range(0x10000, 0x110000, 61))
    latin1 = "".join(chr(c) for c in range(256))
    for text in (latin1, bmp, astral, bmp + astral):
        assert BYTES.encode_ordinary(text) == _utf8_ids(text)
        # pieces short enough for the GIL-held path
        for k in range(0, len(text), 997):
            part = text[k : k + 300]
            assert BYTES.encode_ordinary(part) == _utf8_ids(part)


@pytest.mark.parametrize("wide", ["\u4e2d", "\U0001f600"])
@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 15, 16, 17, 300, 1500, 20000])
def test_lone_surrogate_position(wide, n):
    """The first lone surrogate is reported at its index (a chunk of eight ASCII or other
    characters before it, or inside one), then replaced by the Python layer."""
    for at in sorted({0, n // 2, n}):
        text = ("a\xe9" * n)[:n]
        text = text[:at] + "\ud800" + text[at:] + wide + "\udfff"
        with pytest.raises(UnicodeEncodeError) as e:
            BYTES._core.encode_ordinary(text)
        assert (e.value.start, e.value.end) == (at, at + 1)
        fixed = text.replace("\ud800", "\ufffd").replace("\udfff", "\ufffd")
        assert BYTES.encode_ordinary(text) == _utf8_ids(fixed)


@pytest.mark.parametrize("n", [1000, 1024, 1100, 5000, 20000])
def test_short_and_long_paths_agree(n, cl100k):
    tok, enc = cl100k
    for text in ("é" * n, ("héllo wörld " * n)[:n], ("中文 text " * n)[:n], "a" * n):
        assert BYTES.encode_ordinary(text) == _utf8_ids(text)
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
