"""Streaming decoding: ids in, text out, never a broken UTF-8 sequence."""

from __future__ import annotations

import codecs
from typing import Any

from . import _core

#: the native tokenizer class (taken at import: a test may replace ``_core.Bpe`` by a subclass)
_NATIVE_BPE = _core.Bpe


class UnknownErrorHandlerError(ValueError, LookupError):
    """An ``errors=`` value that names no codecs error handler: a ValueError (bad input), and a
    LookupError, as ``bytes.decode`` raises for it."""


def _check_errors(errors: Any) -> None:
    """``errors`` must name a codecs error handler ('replace', 'strict', 'ignore'...): checked up
    front, not only when the first invalid byte calls for the handler."""
    if errors == "replace" or errors == "strict":
        return
    if not isinstance(errors, str):
        raise TypeError(
            f"errors must be a str such as 'replace' or 'strict', not {type(errors).__name__}"
        )
    if "\0" in errors:
        raise ValueError(
            "errors must not contain NUL characters: pass an error handler name such as 'replace'"
        )
    try:
        codecs.lookup_error(errors)
    except (LookupError, UnicodeError):  # a lone surrogate in the name: no handler has one
        raise UnknownErrorHandlerError(
            f"unknown error handler {errors!r}: pass 'replace', 'strict', 'ignore', 'backslashreplace' or "
            f"another name registered with codecs.register_error"
        ) from None


def _is_index(v: Any) -> bool:
    """Whether ``v`` is an integer to the core (an int, bools included, or a numpy integer), not
    a float or another number that merely compares equal to one."""
    return isinstance(v, int) or hasattr(type(v), "__index__")


class StreamDecoder:
    """Decode ids one at a time. ``push(id)`` returns the text that is complete so far
    (possibly ``""`` while a multi-byte character is split across tokens); ``flush()``
    returns what is left (invalid bytes become U+FFFD with ``errors="replace"``).

    The concatenation of all pushes and the final flush equals ``tok.decode(ids, errors)``
    (``tok.decode(ids, errors, skip_special_tokens=True)`` with ``skip_special_tokens``: a
    special token then adds nothing).
    """

    def __init__(
        self, tokenizer: Any, errors: str = "replace", *, skip_special_tokens: bool = False
    ) -> None:
        # this module is below toksmith.tokenizer (which imports it), so a Tokenizer is known
        # here by its native core
        if not isinstance(getattr(tokenizer, "_core", None), _NATIVE_BPE):
            raise TypeError(
                f"StreamDecoder needs a toksmith.Tokenizer (or use tok.stream_decoder()), "
                f"not {type(tokenizer).__name__}"
            )
        _check_errors(errors)
        # The native state decodes with CPython's stateful UTF-8 decoder (the one behind
        # codecs.getincrementaldecoder("utf-8")), so output and errors= behave exactly as there.
        self._bind(
            _core.StreamState(tokenizer._core, errors, tokenizer._bad_id),
            tokenizer._special_ids if skip_special_tokens else frozenset(),
        )
        self._fresh = self._state.copy()  # never pushed to: what reset() starts again from

    def _bind(self, state, skipped) -> None:
        # The state's methods are bound on the instance: one native call per pushed id.
        self._state = state
        self._skipped = skipped
        self.push = state.push  # type: ignore[method-assign]
        self.flush = state.flush  # type: ignore[method-assign]
        if skipped:
            native_push = state.push

            def push(token: int) -> str:
                try:
                    if token in skipped and _is_index(
                        token
                    ):  # not 100257.0: the native push reports it
                        return ""
                except TypeError:  # unhashable: the native push reports the bad id
                    pass
                return native_push(token)

            self.push = push  # type: ignore[method-assign]

    def __copy__(self) -> "StreamDecoder":
        """An independent decoder in the same state (the bytes of a split character included):
        pushes to one do not show in the other."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)  # then the state and its bound methods replaced
        new._bind(self._state.copy(), self._skipped)
        return new

    def __deepcopy__(self, memo) -> "StreamDecoder":
        return self.__copy__()

    def __reduce__(self):
        raise TypeError(
            "a StreamDecoder cannot be pickled (it holds a live decoding state); "
            "pickle the Tokenizer and the ids pushed so far instead"
        )

    @property
    def pending(self) -> bytes:
        """The bytes pushed that do not yet make a complete character."""
        return self._state.pending

    def push(self, token: int) -> str:  # replaced per instance by the native state's push
        """The text completed by ``token`` (``""`` while a character is still split)."""
        raise NotImplementedError  # pragma: no cover

    def push_many(self, tokens) -> str:
        """The text completed by ``tokens``, pushed one after the other. A bad id pushes none
        of them: the decoder is left as it was (the text of the ids before it is not lost)."""
        if isinstance(tokens, (str, bytes, bytearray)):  # bytes were taken as a list of ids
            raise TypeError(
                f"push_many needs a sequence of ids (a list of int, a numpy array), not "
                f"{type(tokens).__name__}"
            )
        push, state = self.push, self._state.copy()
        try:
            return "".join([push(t) for t in tokens])
        except BaseException:  # was: the text of the ids before the bad one was lost
            self._bind(state, self._skipped)
            raise

    def flush(self) -> str:  # replaced per instance by the native state's flush
        """What is left (invalid bytes through ``errors``); the decoder is then empty. With
        ``errors="strict"`` an incomplete character raises ``UnicodeDecodeError`` and stays
        pending (as in ``codecs``): :meth:`reset` drops it."""
        raise NotImplementedError  # pragma: no cover

    def reset(self) -> None:
        """Drop the pending bytes (``codecs``' ``IncrementalDecoder.reset``): after a
        ``UnicodeDecodeError`` with ``errors="strict"`` the bad bytes stay pending, and every
        later push would raise again."""
        self._bind(self._fresh.copy(), self._skipped)
