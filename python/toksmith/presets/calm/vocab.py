"""The CALM vocabulary: 256 byte tokens, 22 special tokens, 42 reserved ids.

The ids and names are a contract with models already trained on them
(seed 003, "CALM Tokenizer"); never renumber them.

>>> PAD, BOS, EOS, END_TOKEN, REF
(256, 257, 258, 269, 277)
>>> VOCAB_SIZE
320
>>> SPECIAL_TOKENS["<CWD>"]
260
>>> token_name(263), token_name(65), token_name(300)
('<EXIT>', "b'A'", '<RESERVED_300>')
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Tuple, Union

from .._checks import as_int

__all__ = [
    "VOCAB_SIZE",
    "BYTE_TOKENS",
    "SPECIAL_BASE",
    "NUM_SPECIAL",
    "RESERVED_BASE",
    "MAX_TOKENS",
    "DEFAULT_L_MAX",
    "MAX_FRAME_ITEMS",
    "SPECIAL_NAMES",
    "SPECIAL_TOKENS",
    "FRAME_TOKENS",
    "SUBTOKENS",
    "PAD",
    "BOS",
    "EOS",
    "ATN",
    "CWD",
    "GIT",
    "HIST",
    "EXIT",
    "CMD",
    "ENV",
    "COMP",
    "QUERY",
    "NEXT",
    "END_TOKEN",
    "END",
    "WORD",
    "POS",
    "NOTE",
    "IPA",
    "DEF",
    "QUOTE",
    "BY",
    "REF",
    "token_name",
    "resolve_token",
    "is_special",
    "is_reserved",
    "format_tokens",
]

#: Total vocabulary size (``CALM_VOCAB_SIZE``).
VOCAB_SIZE = 320
#: Number of byte tokens; ids ``0..255`` are the byte values themselves.
BYTE_TOKENS = 256
#: First special id (``CALM_SPECIAL_BASE``).
SPECIAL_BASE = 256
#: Number of defined special tokens (ids 256-277).
NUM_SPECIAL = 22
#: First reserved id; ids 278-319 are headroom for future domain tokens.
RESERVED_BASE = SPECIAL_BASE + NUM_SPECIAL
#: ``CALM_MAX_TOKENS`` of the C implementation (token buffer size).
MAX_TOKENS = 1024
#: Default maximum sequence length of a model (``l_max``).
DEFAULT_L_MAX = 768
#: List frames (``<COMP>``) and repeated frames (``<HIST>``) keep at most this many items.
MAX_FRAME_ITEMS = 15

#: Special token names in id order: ``SPECIAL_NAMES[i]`` has id ``256 + i``.
SPECIAL_NAMES: Tuple[str, ...] = (
    "<PAD>",  # 256 padding
    "<BOS>",  # 257 beginning of sequence
    "<EOS>",  # 258 end of sequence
    "<ATN>",  # 259 attention boundary
    "<CWD>",  # 260 current working directory frame
    "<GIT>",  # 261 git branch/status frame
    "<HIST>",  # 262 historical command frame
    "<EXIT>",  # 263 exit code subtoken (within HIST)
    "<CMD>",  # 264 current partial input / prediction target
    "<ENV>",  # 265 environment hint frame
    "<COMP>",  # 266 command completion candidates frame
    "<QUERY>",  # 267 input query frame
    "<NEXT>",  # 268 within-frame item separator
    "<END>",  # 269 end of frame
    "<WORD>",  # 270 headword frame (dictionary domain)
    "<POS>",  # 271 part-of-speech subtoken (within WORD)
    "<NOTE>",  # 272 etymology/grammar notes (within WORD, REF)
    "<IPA>",  # 273 pronunciation (within WORD)
    "<DEF>",  # 274 definition frame
    "<QUOTE>",  # 275 quotation frame
    "<BY>",  # 276 attribution subtoken (within QUOTE)
    "<REF>",  # 277 reference frame
)
assert len(SPECIAL_NAMES) == NUM_SPECIAL

#: Special token name -> id, e.g. ``{"<PAD>": 256, ..., "<REF>": 277}``.
SPECIAL_TOKENS: Dict[str, int] = {name: SPECIAL_BASE + i for i, name in enumerate(SPECIAL_NAMES)}

PAD = 256
BOS = 257
EOS = 258
ATN = 259
CWD = 260
GIT = 261
HIST = 262
EXIT = 263
CMD = 264
ENV = 265
COMP = 266
QUERY = 267
NEXT = 268
#: ``<END>`` (named ``END_TOKEN`` as in the seed's Lua API; ``END`` is an alias).
END_TOKEN = 269
END = END_TOKEN
WORD = 270
POS = 271
NOTE = 272
IPA = 273
DEF = 274
QUOTE = 275
BY = 276
REF = 277

for _name, _id in SPECIAL_TOKENS.items():  # the constants above must match the table
    assert globals()[_name.strip("<>") if _name != "<END>" else "END_TOKEN"] == _id, _name

#: Tokens that open a frame: ``[frame] [bytes...] [<END>]``.
FRAME_TOKENS = frozenset({CWD, GIT, HIST, CMD, ENV, COMP, QUERY, WORD, DEF, QUOTE, REF})

#: Sub-tokens allowed inside each frame, in the order they are emitted.
SUBTOKENS: Dict[int, Tuple[int, ...]] = {
    HIST: (EXIT,),
    COMP: (NEXT,),
    WORD: (POS, NOTE, IPA),
    QUOTE: (BY,),
    REF: (NOTE,),
}

_BARE_NAMES = {name.strip("<>"): tok for name, tok in SPECIAL_TOKENS.items()}
_BARE_NAMES["END_TOKEN"] = END_TOKEN

TokenLike = Union[int, str]


def token_name(token: int) -> str:
    """A readable name for one id: ``'<CWD>'``, ``"b'A'"`` for bytes, ``'<RESERVED_300>'``.

    >>> token_name(260), token_name(10), token_name(278)
    ('<CWD>', "b'\\\\n'", '<RESERVED_278>')
    """
    tok = check_id(token)
    if tok < BYTE_TOKENS:
        return repr(bytes([tok]))
    if tok < RESERVED_BASE:
        return SPECIAL_NAMES[tok - SPECIAL_BASE]
    return f"<RESERVED_{tok}>"


def check_id(token: object, what: str = "token id") -> int:
    """Validate one id: an integer in ``0..319`` (TypeError / ValueError otherwise)."""
    tok = as_int(token, what)  # accepts numpy integers
    if not 0 <= tok < VOCAB_SIZE:
        raise ValueError(f"{what} {tok} is out of range: CALM ids are 0..{VOCAB_SIZE - 1}")
    return tok


def resolve_token(token: TokenLike) -> int:
    """Turn an id or a special token name into an id.

    Names may be written with or without angle brackets and in any case:
    ``"CWD"``, ``"<CWD>"``, ``"cwd"``; ``"END"``/``"END_TOKEN"`` both mean ``<END>``.

    >>> resolve_token("CWD"), resolve_token("<hist>"), resolve_token(262)
    (260, 262, 262)
    """
    if isinstance(token, str):
        key = token.strip()
        if key.startswith("<") and key.endswith(">"):
            key = key[1:-1]
        tok = _BARE_NAMES.get(key.upper())
        if tok is None:
            raise ValueError(
                f"unknown CALM special token {token!r}; known: {', '.join(SPECIAL_NAMES)}"
            )
        return tok
    return check_id(token)


def _as_int(token: object) -> int:
    return as_int(token, "token id")  # accepts numpy integers


def is_special(token: int) -> bool:
    """True for the 22 defined special ids (256-277); False for any other int."""
    return SPECIAL_BASE <= _as_int(token) < RESERVED_BASE


def is_reserved(token: int) -> bool:
    """True for the reserved ids 278-319; False for any other int."""
    return RESERVED_BASE <= _as_int(token) < VOCAB_SIZE


def _render_bytes(run: bytes) -> str:
    text = run.decode("utf-8", errors="backslashreplace")
    out = []
    for ch in text:
        if ch in "\n\t\r":
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}[ch])
        elif ch.isprintable() or ch == " ":
            out.append(ch)
        else:
            out.append(ch.encode("unicode_escape").decode("ascii"))
    return "".join(out)


def format_tokens(ids: Iterable[int]) -> str:
    """Render ids the way the seed writes sequences: special names and byte text.

    Byte runs are decoded as UTF-8 (invalid bytes and control characters
    escaped as ``\\xNN``/``\\n``); parts are separated by one space.

    >>> format_tokens([257, 260, 47, 116, 109, 112, 269, 259, 264, 108, 115])
    '<BOS> <CWD> /tmp <END> <ATN> <CMD> ls'
    """
    if isinstance(ids, str):  # "" gave "" (bytes are byte ids, as tokenize gives them)
        raise TypeError(
            "ids must be an iterable of token ids, not str; use calm.tokenize(text) for text"
        )
    parts: List[str] = []
    run = bytearray()
    for token in ids:
        tok = check_id(token)
        if tok < BYTE_TOKENS:
            run.append(tok)
            continue
        if run:
            parts.append(_render_bytes(bytes(run)))
            run.clear()
        parts.append(token_name(tok))
    if run:
        parts.append(_render_bytes(bytes(run)))
    return " ".join(parts)
