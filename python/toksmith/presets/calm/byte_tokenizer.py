"""``ByteTokenizer``: the CALM vocabulary behind toksmith's tokenizer interface.

It has the methods of :class:`toksmith.Tokenizer` (encode / decode / special
tokens / save / load) so code written for one runs with the other. Encoding is
the identity on UTF-8 bytes; special tokens follow tiktoken's rules: their
text in the input is an error unless allowed, and allowed ones become ids.

Decoding differs from :func:`~toksmith.calm.detokenize` on purpose:
``detokenize`` follows the seed and *skips* special ids (model output to
text), while ``ByteTokenizer.decode`` renders them as their names, like
tiktoken does (``[258] -> "<EOS>"``), so decode(encode(s, allowed_special="all"))
gives ``s`` back. Reserved ids (278-319) render as ``"<RESERVED_278>"``.

Errors match toksmith's Tokenizer: a disallowed special raises a
``toksmith.DisallowedSpecialError``; an unknown token or an id outside 0..319
raises :class:`TokenNotFoundError`, a ``toksmith.UnknownTokenError`` that is
also a KeyError (tiktoken's exception for unknown tokens). Both are
ValueErrors.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from typing import (
    AbstractSet,
    Any,
    Collection,
    Dict,
    FrozenSet,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Set,
    Union,
)

from ..._fileio import write_text_atomic
from ..._paths import fspath
from ...decoding import _check_errors as _decoding_check_errors
from ...errors import DisallowedSpecialError, UnknownTokenError
from .._base import PresetTokenizer
from .._checks import check_bool, check_thread_args, require_numpy
from .vocab import (
    BYTE_TOKENS,
    EOS,
    RESERVED_BASE,
    SPECIAL_BASE,
    SPECIAL_NAMES,
    SPECIAL_TOKENS,
    VOCAB_SIZE,
    check_id,
)

__all__ = [
    "ByteTokenizer",
    "StreamDecoder",
    "TokenNotFoundError",
    "CalmDisallowedSpecialError",
    "FORMAT_NAME",
    "FORMAT_VERSION",
]

FORMAT_NAME = "toksmith.calm"
FORMAT_VERSION = 1

_SPECIAL_RE: Dict[
    FrozenSet[str], "re.Pattern[str]"
] = {}  # cache: frozenset of names -> compiled regex
_SPECIAL_RE_MAX = 64  # the names come from callers: keep the cache bounded


# toksmith's own error classes, so that code catching ``toksmith.UnknownTokenError`` /
# ``toksmith.DisallowedSpecialError`` works with both tokenizers


class TokenNotFoundError(UnknownTokenError, KeyError):
    """An unknown token: text that is not one token, or an id outside 0..319.

    A ``toksmith.UnknownTokenError`` (so a ValueError) and a KeyError, like tiktoken's.
    """

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class CalmDisallowedSpecialError(DisallowedSpecialError):
    """The text contains a special token the call did not allow (a ``toksmith.DisallowedSpecialError``)."""


def _id(token: object) -> int:
    if type(token) is int and 0 <= token < VOCAB_SIZE:  # type: ignore[operator]
        return token  # type: ignore[return-value]
    try:
        return check_id(token)
    except ValueError as exc:
        raise TokenNotFoundError(str(exc)) from None


def _special_regex(names: FrozenSet[str]) -> "re.Pattern[str]":
    pattern = _SPECIAL_RE.get(names)
    if pattern is None:
        alternatives = sorted(names, key=lambda s: (-len(s), s))
        pattern = re.compile("|".join(re.escape(n) for n in alternatives))
        if len(_SPECIAL_RE) < _SPECIAL_RE_MAX:
            _SPECIAL_RE[names] = pattern
    return pattern


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # lone surrogates: replaced by U+FFFD, as tiktoken does
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


def _token_bytes(tok: int) -> bytes:
    if tok < BYTE_TOKENS:
        return bytes((tok,))
    if tok < RESERVED_BASE:
        return SPECIAL_NAMES[tok - SPECIAL_BASE].encode("ascii")
    return f"<RESERVED_{tok}>".encode("ascii")


_TOKEN_BYTES = tuple(_token_bytes(t) for t in range(VOCAB_SIZE))


def _check_ids(ids: Iterable[int]) -> List[int]:
    if isinstance(ids, (str, bytes, bytearray, memoryview, AbstractSet, Mapping)):
        raise TypeError(f"expected a sequence of token ids, not {type(ids).__name__}")
    if hasattr(ids, "tolist") and hasattr(ids, "dtype"):
        if ids.dtype.kind not in "iu":  # type: ignore[attr-defined]
            raise TypeError(f"token ids must be integers, got an array of dtype {ids.dtype}")  # type: ignore[attr-defined]
        ids = ids.tolist()  # type: ignore[attr-defined]
    return [_id(token) for token in ids]


class StreamDecoder:
    """Incremental decoding: feed ids one by one, get text without broken UTF-8.

    Bytes of an incomplete UTF-8 sequence are held back until it completes. A
    special id first flushes held bytes (as U+FFFD with ``errors="replace"``)
    and then yields its name (nothing with ``skip_special_tokens=True``).

    >>> dec = ByteTokenizer().stream_decoder()
    >>> [dec.push(b) for b in "é!".encode()] + [dec.flush()]
    ['', 'é', '!', '']
    """

    def __init__(self, errors: str = "replace", skip_special_tokens: bool = False) -> None:
        _check_errors(errors)
        skip_special_tokens = check_bool(skip_special_tokens, "skip_special_tokens")
        self._errors = errors
        self._skip = skip_special_tokens
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors)

    def push(self, token: int) -> str:
        """Add one id; return the text it completes (possibly empty)."""
        tok = _id(token)
        if tok < BYTE_TOKENS:
            return self._decoder.decode(bytes((tok,)))
        text = self.flush()
        if self._skip:
            return text
        return text + _TOKEN_BYTES[tok].decode("ascii")

    def push_many(self, tokens: Iterable[int]) -> str:
        """:meth:`push` each id; the joined text."""
        if isinstance(tokens, str):
            raise TypeError("tokens must be an iterable of token ids, not str")
        return "".join(self.push(t) for t in tokens)

    def flush(self) -> str:
        """End of stream: return what is held back (U+FFFD for an incomplete sequence)."""
        text = self._decoder.decode(b"", final=True)
        self._decoder.reset()
        return text


def _check_errors(errors: object) -> None:
    # TypeError for a non-str; an unknown handler is a ValueError that is also a LookupError
    _decoding_check_errors(errors)


def _names(value: Any, argument: str) -> FrozenSet[str]:
    if isinstance(value, str):
        message = (
            f"{argument} must be 'all' or a set of special token strings, not the string {value!r}"
        )
        if argument == "disallowed_special":  # as toksmith's Tokenizer
            raise TypeError(message)
        raise ValueError(message)
    if not isinstance(value, Collection):
        raise TypeError(f"{argument} must be 'all' or a set of strings, not {type(value).__name__}")
    for item in value:
        if not isinstance(item, str):
            raise TypeError(f"{argument} must contain strings, found {type(item).__name__}")
    return frozenset(value)


class ByteTokenizer(PresetTokenizer):
    """The CALM byte tokenizer: 256 byte ids, 22 special tokens, 42 reserved ids.

    >>> tok = ByteTokenizer()
    >>> tok.encode("hi")
    [104, 105]
    >>> tok.encode("hi<EOS>", allowed_special={"<EOS>"})
    [104, 105, 258]
    >>> try:
    ...     tok.encode("hi<EOS>")
    ... except ValueError as exc:
    ...     print(exc)
    Encountered text corresponding to disallowed special token '<EOS>'. Pass allowed_special={'<EOS>'} (or allowed_special='all') to encode it as a special token, or disallowed_special=() to encode it as plain text.
    >>> tok.decode([104, 105, 258])
    'hi<EOS>'
    >>> tok.n_vocab, tok.special_tokens["<CWD>"]
    (320, 260)
    """

    name = "calm"
    preset = "calm"
    EXPORT_REFUSAL = (
        "CALM's fixed 320-id byte table (256 bytes, 22 special and 42 reserved ids, "
        "allowed_special semantics of its own) has no exporter that reproduces it exactly; "
        "keep its JSON file (save/load)"
    )

    # ------------------------------------------------------------------ vocabulary

    @property
    def n_vocab(self) -> int:
        """Vocabulary size: 320 (ids 0..319)."""
        return VOCAB_SIZE

    vocab_size = n_vocab

    @property
    def max_token_value(self) -> int:
        return VOCAB_SIZE - 1

    @property
    def eot_token(self) -> int:
        """``<EOS>`` (258), the end-of-text token."""
        return EOS

    @property
    def pattern(self) -> None:
        """No pre-tokenization pattern: every byte is a token."""
        return None

    @property
    def special_tokens(self) -> Dict[str, int]:
        """Name -> id of the 22 special tokens (a new dict each time)."""
        return dict(SPECIAL_TOKENS)

    @property
    def special_tokens_set(self) -> Set[str]:
        """The special token names (a new set each time)."""
        return set(SPECIAL_TOKENS)

    def mergeable_ranks(self) -> Dict[bytes, int]:
        """The 256 single-byte tokens (there are no merges)."""
        return {bytes((i,)): i for i in range(BYTE_TOKENS)}

    def merges(self) -> List[Any]:
        """No merges: the byte encoding is the identity."""
        return []

    def _lookup(self, token: Union[str, bytes]) -> Optional[int]:
        if isinstance(token, str):
            if token in SPECIAL_TOKENS:
                return SPECIAL_TOKENS[token]
            data = _utf8(token)
        elif isinstance(token, (bytes, bytearray, memoryview)):
            data = bytes(token)
            special = SPECIAL_TOKENS.get(data.decode("latin-1"))
            if special is not None:
                return special
        else:
            raise TypeError(f"expected str or bytes, not {type(token).__name__}")
        return data[0] if len(data) == 1 else None

    def token_to_id(self, token: Union[str, bytes]) -> int:
        """Same as :meth:`encode_single_token` (as in toksmith's Tokenizer).

        >>> ByteTokenizer().token_to_id("<EOS>"), ByteTokenizer().token_to_id(b"A")
        (258, 65)
        """
        return self.encode_single_token(token)

    def id_to_bytes(self, token: int) -> bytes:
        """The bytes of one id (a special's name for special ids)."""
        return _TOKEN_BYTES[_id(token)]

    # ------------------------------------------------------------------ encoding

    def encode_ordinary(self, text: str) -> List[int]:
        """UTF-8 bytes as ids; special token text is plain text here."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        return list(_utf8(text))

    def encode(
        self,
        text: str,
        *,
        allowed_special: Union[str, AbstractSet[str]] = frozenset(),
        disallowed_special: Union[str, Collection[str]] = "all",
    ) -> List[int]:
        """Encode text with tiktoken's special-token rules.

        Allowed special token strings (``allowed_special``, or ``"all"``) are
        encoded as their ids. Disallowed ones (``"all"`` by default: every
        special not allowed) found in the text raise ValueError; pass
        ``disallowed_special=()`` to encode them as plain bytes. Names that
        are not CALM specials in ``allowed_special`` raise ValueError, as in toksmith's
        Tokenizer. The error for a disallowed special is a ``toksmith.DisallowedSpecialError``.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        if allowed_special == "all":
            allowed = frozenset(SPECIAL_TOKENS)
        else:
            allowed = _names(allowed_special, "allowed_special")
            unknown = sorted(allowed - frozenset(SPECIAL_TOKENS))
            if unknown:
                raise ValueError(
                    f"allowed_special names {unknown[0]!r}, which is not a CALM special token "
                    f"(they are {', '.join(SPECIAL_NAMES)})"
                )
        if disallowed_special == "all":
            disallowed = frozenset(SPECIAL_TOKENS) - allowed
        else:
            # an empty name would "occur" in every text
            disallowed = _names(disallowed_special, "disallowed_special") - {""}
        if disallowed:
            match = _special_regex(disallowed).search(text)
            if match:
                found = match.group()
                raise CalmDisallowedSpecialError(
                    f"Encountered text corresponding to disallowed special token {found!r}. "
                    f"Pass allowed_special={{{found!r}}} (or allowed_special='all') to encode it as a "
                    "special token, or disallowed_special=() to encode it as plain text."
                )
        if not allowed:
            return list(_utf8(text))
        out: List[int] = []
        pos = 0
        for match in _special_regex(allowed).finditer(text):
            out.extend(_utf8(text[pos : match.start()]))
            out.append(SPECIAL_TOKENS[match.group()])
            pos = match.end()
        out.extend(_utf8(text[pos:]))
        return out

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        threads: Optional[int] = None,
        num_threads: Optional[int] = None,
        allowed_special: Union[str, AbstractSet[str]] = frozenset(),
        disallowed_special: Union[str, Collection[str]] = "all",
    ) -> List[List[int]]:
        """:meth:`encode` for each text. ``threads``/``num_threads`` are checked as
        toksmith's Tokenizer checks them (None or 1..4096; pass only one of the two names, or
        both with the same value); the work runs on the calling thread."""
        check_thread_args(threads, num_threads)
        return [
            self.encode(t, allowed_special=allowed_special, disallowed_special=disallowed_special)
            for t in _texts(texts)
        ]

    def encode_ordinary_batch(
        self,
        texts: Sequence[str],
        *,
        threads: Optional[int] = None,
        num_threads: Optional[int] = None,
    ) -> List[List[int]]:
        """:meth:`encode_ordinary` for each text (``threads`` as in :meth:`encode_batch`)."""
        check_thread_args(threads, num_threads)
        return [self.encode_ordinary(t) for t in _texts(texts)]

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: Union[str, AbstractSet[str]] = frozenset(),
        disallowed_special: Union[str, Collection[str]] = "all",
        dtype: Optional[str] = None,
    ) -> Any:
        """:meth:`encode` as a numpy array: ``uint16`` (or ``dtype="uint32"``)."""
        np = require_numpy("ByteTokenizer.encode_to_numpy")
        if dtype is None:
            dtype = "uint16"
        else:
            try:
                ok = str(np.dtype(dtype)) in ("uint16", "uint32")
            except (
                TypeError,
                ValueError,
                UnicodeError,
            ):  # not a dtype at all: a dict, "a\ud800"...
                ok = False
            if not ok:
                raise ValueError(f"dtype must be 'uint16' or 'uint32', not {dtype!r}")
        return np.asarray(
            self.encode(
                text, allowed_special=allowed_special, disallowed_special=disallowed_special
            ),
            dtype=dtype,
        )

    def encode_single_token(self, text_or_bytes: Union[str, bytes]) -> int:
        """The id of a single token: one byte or a special name; TokenNotFoundError otherwise.

        >>> ByteTokenizer().encode_single_token("<ATN>"), ByteTokenizer().encode_single_token(b" ")
        (259, 32)
        """
        token = self._lookup(text_or_bytes)
        if token is None:
            raise TokenNotFoundError(
                f"{text_or_bytes!r} is not a single CALM token (one byte or a special name)"
            )
        return token

    # ------------------------------------------------------------------ decoding

    def decode_bytes(self, ids: Iterable[int], *, skip_special_tokens: bool = False) -> bytes:
        """Bytes of the ids, specials as their names (left out with ``skip_special_tokens=True``,
        which gives the same bytes as :func:`~toksmith.calm.detokenize`)."""
        skip = check_bool(skip_special_tokens, "skip_special_tokens")
        checked = _check_ids(ids)
        if skip:
            return bytes(t for t in checked if t < BYTE_TOKENS)
        return b"".join([_TOKEN_BYTES[t] for t in checked])

    def decode(
        self, ids: Iterable[int], errors: str = "replace", *, skip_special_tokens: bool = False
    ) -> str:
        """Text of the ids (``errors`` as in ``bytes.decode``), specials as their names
        (left out with ``skip_special_tokens=True``, as toksmith's Tokenizer)."""
        _check_errors(errors)
        return self.decode_bytes(ids, skip_special_tokens=skip_special_tokens).decode(
            "utf-8", errors
        )

    def decode_batch(
        self,
        batch: Iterable[Iterable[int]],
        *,
        errors: str = "replace",
        threads: Optional[int] = None,
        num_threads: Optional[int] = None,
        skip_special_tokens: bool = False,
    ) -> List[str]:
        """:meth:`decode` for each id sequence (``threads`` as in :meth:`encode_batch`)."""
        if isinstance(batch, (str, bytes)) or not isinstance(batch, Iterable):
            raise TypeError(f"expected a list of id sequences, not {type(batch).__name__}")
        check_thread_args(threads, num_threads)
        return [self.decode(ids, errors, skip_special_tokens=skip_special_tokens) for ids in batch]

    def decode_single_token_bytes(self, token: int) -> bytes:
        """Bytes of one id: the byte, or a special's name (``b"<EOS>"``)."""
        return _TOKEN_BYTES[_id(token)]

    def decode_tokens_bytes(self, ids: Iterable[int]) -> List[bytes]:
        """Bytes of each id."""
        return [_TOKEN_BYTES[t] for t in _check_ids(ids)]

    def stream_decoder(
        self, errors: str = "replace", *, skip_special_tokens: bool = False
    ) -> StreamDecoder:
        """A :class:`StreamDecoder` (``.push(id) -> str``, ``.flush() -> str``)."""
        return StreamDecoder(errors, skip_special_tokens)

    # ------------------------------------------------------------------ persistence

    def to_dict(self) -> Dict[str, Any]:
        """The JSON document written by :meth:`save`."""
        return {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "kind": "byte",
            "vocab_size": VOCAB_SIZE,
            "byte_tokens": {"first": 0, "last": BYTE_TOKENS - 1, "encoding": "identity"},
            "special_tokens": dict(SPECIAL_TOKENS),
            "reserved": {"first": RESERVED_BASE, "last": VOCAB_SIZE - 1},
        }

    @classmethod
    def from_dict(cls, doc: Any) -> "ByteTokenizer":
        """Check a document made by :meth:`to_dict` and return the tokenizer."""
        if not isinstance(doc, dict):
            raise ValueError(
                f"not a {FORMAT_NAME} document: expected a JSON object, got {type(doc).__name__}"
            )
        if doc.get("format") != FORMAT_NAME:
            raise ValueError(f"not a {FORMAT_NAME} document: format is {doc.get('format')!r}")
        version = doc.get("version")
        if type(version) is not int or version < 1:
            raise ValueError(f"{FORMAT_NAME}: invalid version {version!r}")
        if version > FORMAT_VERSION:
            raise ValueError(
                f"{FORMAT_NAME} version {version} is newer than this toksmith supports ({FORMAT_VERSION}); upgrade toksmith"
            )
        if doc.get("kind", "byte") != "byte":
            raise ValueError(f"{FORMAT_NAME}: unknown kind {doc.get('kind')!r}")
        vocab_size = doc.get("vocab_size")
        if type(vocab_size) is not int or vocab_size != VOCAB_SIZE:
            raise ValueError(
                f"{FORMAT_NAME}: vocab_size must be {VOCAB_SIZE} (an integer), got {vocab_size!r}"
            )
        specials = doc.get("special_tokens")
        if (
            not isinstance(specials, dict)
            or specials != SPECIAL_TOKENS
            or any(
                type(v) is not int for v in specials.values()
            )  # 256.0 == 256: ids must be integers
        ):
            raise ValueError(
                f"{FORMAT_NAME}: special_tokens differ from the CALM contract (ids 256-277 are fixed)"
            )
        return cls()

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Write a human-readable, versioned JSON file (``{"format": "toksmith.calm", "version": 1, ...}``)."""
        text = json.dumps(self.to_dict(), indent=2) + "\n"
        write_text_atomic(path, text)  # a failed write leaves the old file

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> "ByteTokenizer":
        """Read a file written by :meth:`save`; ValueError if it is not valid."""
        with open(fspath(path), "rb") as fh:  # not an int: that is a file descriptor
            raw = fh.read()
        try:
            doc = json.loads(raw.decode("utf-8"))
        except RecursionError:
            raise ValueError(
                f"{os.fspath(path)}: not a valid {FORMAT_NAME} JSON file: nested too deeply"
            ) from None
        except ValueError as exc:  # UnicodeDecodeError, JSONDecodeError, too many digits
            raise ValueError(
                f"{os.fspath(path)}: not a valid {FORMAT_NAME} JSON file: {exc}"
            ) from None
        try:
            return cls.from_dict(doc)
        except ValueError as exc:
            raise ValueError(f"{os.fspath(path)}: {exc}") from None

    # ------------------------------------------------------------------ misc

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ByteTokenizer)

    def __hash__(self) -> int:
        return hash(ByteTokenizer)

    def __repr__(self) -> str:
        return f"ByteTokenizer(n_vocab={VOCAB_SIZE})"


def _texts(texts: Any) -> List[str]:
    if isinstance(texts, (str, bytes)):
        raise TypeError("expected a list of str, not a single str (use encode for one text)")
    try:
        return list(texts)
    except TypeError:
        raise TypeError(f"expected a list of str, not {type(texts).__name__}") from None
