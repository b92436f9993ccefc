"""Byte-level encoding and decoding: the identity on bytes.

Encoding is type widening (uint8 -> uint16): token id == byte value.
Decoding keeps ids below 256 and skips special and reserved ids.
"""

from __future__ import annotations

from typing import AbstractSet, Any, Iterable, Mapping, Optional, Union

from .._checks import check_int, require_numpy, to_bytes
from .vocab import BYTE_TOKENS, VOCAB_SIZE, check_id

__all__ = ["tokenize", "detokenize"]


def tokenize(
    text: Union[str, bytes, bytearray, memoryview], max_tokens: Optional[int] = None
) -> Any:
    """Encode text (as UTF-8) or bytes into byte tokens: a numpy ``uint16`` array.

    Special tokens are never produced: ``"<EOS>"`` in the text is five byte
    tokens. With ``max_tokens`` (the C API's output bound) a longer result
    raises ValueError stating the length needed. Needs numpy
    (``pip install toksmith[numpy]``).

    >>> tokenize("git commit -m fix").tolist()[:6]
    [103, 105, 116, 32, 99, 111]
    >>> tokenize("é").tolist()
    [195, 169]
    >>> tokenize(b"\\x00\\xff").dtype
    dtype('uint16')
    >>> tokenize("hello", max_tokens=3)
    Traceback (most recent call last):
    ...
    ValueError: input needs 5 tokens but max_tokens is 3
    """
    np = require_numpy("calm.tokenize")
    data = to_bytes(text, "text")
    if max_tokens is not None:
        limit = check_int(max_tokens, "max_tokens", minimum=0)
        if len(data) > limit:
            raise ValueError(f"input needs {len(data)} tokens but max_tokens is {limit}")
    return np.frombuffer(data, dtype=np.uint8).astype(np.uint16)


def _first_bad(values: Iterable[int]) -> "tuple[int, int]":
    for pos, tok in enumerate(values):
        if not 0 <= tok < VOCAB_SIZE:
            return pos, tok
    raise AssertionError("no bad id")  # pragma: no cover


def detokenize(ids: Iterable[int]) -> bytes:
    """Decode token ids to bytes: byte ids are emitted, special and reserved ids skipped.

    Accepts any iterable of ints (lists, tuples, numpy integer arrays).
    Ids outside ``0..319`` raise ValueError naming the id and its position.

    >>> detokenize([257, 260, 47, 104, 269, 259, 264, 108, 115])
    b'/hls'
    >>> detokenize([104, 105, 300])
    b'hi'
    >>> detokenize([104, 320])
    Traceback (most recent call last):
    ...
    ValueError: token id 320 at position 1 is out of range: CALM ids are 0..319
    """
    if isinstance(ids, (str, bytes, bytearray, memoryview)):
        raise TypeError(
            f"detokenize expects a sequence of token ids, not {type(ids).__name__}"
            " (use tokenize() to encode text)"
        )
    if isinstance(ids, (AbstractSet, Mapping)):
        raise TypeError(
            f"detokenize expects a sequence of token ids, not {type(ids).__name__} (it has no order)"
        )
    if hasattr(ids, "dtype") and hasattr(ids, "ndim"):  # numpy array fast path
        np = require_numpy("calm.detokenize on arrays")
        arr = np.asarray(ids)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"token ids must be integers, got an array of dtype {arr.dtype}")
        if arr.ndim != 1:
            raise ValueError(f"token ids must be a 1-D array, got shape {arr.shape}")
        if arr.size and (int(arr.min()) < 0 or int(arr.max()) >= VOCAB_SIZE):
            pos, tok = _first_bad(int(t) for t in arr)
            raise ValueError(
                f"token id {tok} at position {pos} is out of range: CALM ids are 0..{VOCAB_SIZE - 1}"
            )
        return arr[arr < BYTE_TOKENS].astype(np.uint8).tobytes()
    try:
        iterator = iter(ids)
    except TypeError:
        raise TypeError(
            f"detokenize expects an iterable of token ids, not {type(ids).__name__}"
        ) from None
    out = bytearray()
    for pos, token in enumerate(iterator):
        if type(token) is int and 0 <= token < BYTE_TOKENS:
            out.append(token)
            continue
        try:
            tok = check_id(token)
        except ValueError:
            raise ValueError(
                f"token id {token} at position {pos} is out of range: CALM ids are 0..{VOCAB_SIZE - 1}"
            ) from None
        except TypeError as exc:
            raise TypeError(f"{exc} (at position {pos})") from None
        if tok < BYTE_TOKENS:
            out.append(tok)
    return bytes(out)
