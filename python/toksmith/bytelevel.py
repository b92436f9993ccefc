"""GPT-2's reversible mapping between bytes and printable unicode characters.

Byte-level BPE vocabularies in JSON (GPT-2's ``encoder.json``, Hugging Face ``tokenizer.json``,
toksmith's own files) spell each token's bytes with one printable character per byte, so the
file stays readable: printable Latin-1 bytes stand for themselves and the others are shifted
above U+0100 (the space 0x20 becomes ``Ġ``).

>>> token_to_str(b" hello")
'Ġhello'
>>> str_to_token('Ġhello')
b' hello'
"""

from __future__ import annotations

from typing import Dict


def _byte_to_char() -> Dict[int, str]:
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    table = {b: chr(b) for b in keep}
    shift = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + shift)
            shift += 1
    return table


BYTE_TO_CHAR: Dict[int, str] = _byte_to_char()
CHAR_TO_BYTE: Dict[str, int] = {c: b for b, c in BYTE_TO_CHAR.items()}


# str.translate tables (C loops, about 10x faster than a generator per character): bytes read
# as Latin-1 -> the alphabet (BYTE_TO_CHAR itself), and back; characters below U+0100 that are
# not in the alphabet map to U+FFFF, which Latin-1 cannot encode, so they fail like the
# characters above it.
_FROM_ALPHABET = {ord(c): chr(b) for b, c in BYTE_TO_CHAR.items()}
_FROM_ALPHABET.update({b: "\uffff" for b in range(256) if chr(b) not in CHAR_TO_BYTE})


def token_to_str(token: bytes) -> str:
    """Spell token bytes with the byte-level alphabet."""
    if not isinstance(
        token, (bytes, bytearray)
    ):  # was an AttributeError ('str' object has no attribute 'decode')
        if not isinstance(token, memoryview):
            raise TypeError(
                f"token_to_str needs bytes, not {type(token).__name__}"
                + (
                    "; str_to_token goes from the alphabet to bytes"
                    if isinstance(token, str)
                    else ""
                )
            )
        token = bytes(token)
    return token.decode("latin-1").translate(BYTE_TO_CHAR)


def str_to_token(s: str) -> bytes:
    """Inverse of :func:`token_to_str`; raises ValueError on a character outside the alphabet."""
    if not isinstance(
        s, str
    ):  # was an AttributeError, or for bytes "a bytes-like object is required"
        hint = (
            "; token_to_str goes from bytes to the alphabet"
            if isinstance(s, (bytes, bytearray))
            else ""
        )
        raise TypeError(
            f"str_to_token needs a str spelled in the byte-level alphabet, not {type(s).__name__}{hint}"
        )
    try:
        return s.translate(_FROM_ALPHABET).encode("latin-1")
    except UnicodeEncodeError as e:
        bad = s[e.start]
        raise ValueError(
            f"{s!r} contains {bad!r}, which is not a character of the byte-level alphabet"
        ) from None
