"""Streaming decoding: ids in, text out, never a broken UTF-8 sequence."""

from __future__ import annotations

import codecs
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .tokenizer import Tokenizer


class StreamDecoder:
    """Decode ids one at a time. ``push(id)`` returns the text that is complete so far
    (possibly ``""`` while a multi-byte character is split across tokens); ``flush()``
    returns what is left (invalid bytes become U+FFFD with ``errors="replace"``).

    The concatenation of all pushes and the final flush equals ``tok.decode(ids, errors)``.
    """

    def __init__(self, tokenizer: "Tokenizer", errors: str = "replace") -> None:
        self._token_bytes = tokenizer.decode_single_token_bytes
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors)

    def push(self, token: int) -> str:
        return self._decoder.decode(self._token_bytes(token))

    def push_many(self, tokens) -> str:
        return "".join(self.push(t) for t in tokens)

    def flush(self) -> str:
        out = self._decoder.decode(b"", final=True)
        self._decoder.reset()
        return out
