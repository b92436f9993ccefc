"""Context frames: ``[frame token] [byte content] [sub-tokens...] [<END>]``.

Simple frames (CWD, GIT, CMD, ENV, QUERY, DEF) carry bytes only. Frames with
sub-tokens embed them inline before ``<END>``, in this order, and omit the
absent ones entirely:

============  ==========================================================
frame         sub-tokens (keyword argument of :func:`tokenize_frame`)
============  ==========================================================
``<HIST>``    ``<EXIT>`` (``exit=``: int or str, written in decimal)
``<COMP>``    ``<NEXT>`` between candidates (``content`` is a list)
``<WORD>``    ``<POS>`` (``pos=``), ``<NOTE>`` (``note=``), ``<IPA>`` (``ipa=``)
``<QUOTE>``   ``<BY>`` (``by=``)
``<REF>``     ``<NOTE>`` (``note=``)
============  ==========================================================
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple, Union

from .._checks import check_int, to_bytes
from .vocab import (
    BY,
    BYTE_TOKENS,
    COMP,
    END_TOKEN,
    EXIT,
    FRAME_TOKENS,
    IPA,
    NEXT,
    NOTE,
    POS,
    RESERVED_BASE,
    SUBTOKENS,
    VOCAB_SIZE,
    check_id,
    resolve_token,
    token_name,
)

__all__ = ["tokenize_frame", "parse_frame", "SUBTOKEN_KEYWORDS"]

Content = Union[str, bytes, bytearray, memoryview]

#: Keyword argument name of each sub-token.
SUBTOKEN_KEYWORDS: Dict[int, str] = {EXIT: "exit", POS: "pos", NOTE: "note", IPA: "ipa", BY: "by"}
_KEYWORD_SUBTOKENS = {name: tok for tok, name in SUBTOKEN_KEYWORDS.items()}


def resolve_frame(frame: Union[int, str]) -> int:
    """A frame token id from an id or a name; rejects non-frame specials."""
    if isinstance(frame, bool) or not isinstance(frame, str) and not hasattr(frame, "__index__"):
        raise TypeError(
            f"frame must be a token id or a name like 'CWD', not {type(frame).__name__}"
        )
    tok = resolve_token(frame)
    if tok in FRAME_TOKENS or RESERVED_BASE <= tok < VOCAB_SIZE:
        return tok
    if tok < BYTE_TOKENS:
        raise ValueError(f"frame must be a frame token, got byte token {tok}")
    frames = ", ".join(token_name(t) for t in sorted(FRAME_TOKENS))
    raise ValueError(f"{token_name(tok)} is not a frame token; frames are {frames}")


def exit_text(value: object) -> bytes:
    """An exit code as the bytes written after ``<EXIT>``: ints in decimal, str as is."""
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        return to_bytes(value, "exit")
    number = check_int(value, "exit")
    try:
        return str(number).encode("ascii")
    except ValueError:  # more digits than int -> str converts (sys.get_int_max_str_digits)
        raise ValueError(
            f"exit code has too many digits ({number.bit_length()} bits); pass a shell exit status"
        ) from None


def _present(value: object) -> bool:
    return value is not None and not (
        isinstance(value, (str, bytes, bytearray, memoryview)) and len(value) == 0
    )


def frame_body(frame: int, content: object, subs: Dict[int, object]) -> List[int]:
    """The tokens between the frame token and ``<END>`` (no validation of ``frame``)."""
    out: List[int] = []
    if frame == COMP:
        if isinstance(content, (str, bytes, bytearray, memoryview)):
            items: Sequence[object] = [content]
        elif isinstance(content, (list, tuple)):
            items = content
        else:
            raise TypeError(
                f"<COMP> content must be a list of candidates (str or bytes), not {type(content).__name__}"
            )
        for i, item in enumerate(items):
            if i:
                out.append(NEXT)
            out.extend(to_bytes(item, f"completion candidate {i}"))
    else:
        out.extend(to_bytes(content, f"{token_name(frame)} content"))
    for sub in SUBTOKENS.get(frame, ()):
        if sub == NEXT:
            continue
        value = subs.get(sub)
        if not _present(value):
            continue
        out.append(sub)
        out.extend(exit_text(value) if sub == EXIT else to_bytes(value, SUBTOKEN_KEYWORDS[sub]))
    return out


def tokenize_frame(
    frame: Union[int, str],
    content: Union[Content, Sequence[Content]] = b"",
    *,
    exit: Union[int, str, None] = None,
    pos: Optional[Content] = None,
    note: Optional[Content] = None,
    ipa: Optional[Content] = None,
    by: Optional[Content] = None,
    max_tokens: Optional[int] = None,
) -> List[int]:
    """Encode one frame: ``[frame, content bytes..., sub-tokens..., <END>]``.

    ``frame`` is a frame id (e.g. ``calm.CWD``) or a name (``"CWD"``, ``"<CWD>"``);
    reserved ids 278-319 are accepted as simple frames for future domains.
    ``content`` is str (UTF-8) or bytes; for ``<COMP>`` it is a list of
    candidates joined by ``<NEXT>`` (no 15-item cap here: that is
    :func:`build_sequence`'s job). Sub-token keywords (``exit``, ``pos``,
    ``note``, ``ipa``, ``by``) are only accepted by the frames that own them;
    ``None`` or an empty string means absent, and absent sub-tokens are
    omitted. With ``max_tokens`` a longer frame raises ValueError.

    >>> from toksmith import calm
    >>> tokenize_frame("CWD", "/home/user")
    [260, 47, 104, 111, 109, 101, 47, 117, 115, 101, 114, 269]
    >>> tokenize_frame("HIST", "ls", exit=0)
    [262, 108, 115, 263, 48, 269]
    >>> tokenize_frame(calm.COMP, ["a", "b"])
    [266, 97, 268, 98, 269]
    >>> tokenize_frame("WORD", "cat", pos="n.")
    [270, 99, 97, 116, 271, 110, 46, 269]
    """
    tok = resolve_frame(frame)
    given = {EXIT: exit, POS: pos, NOTE: note, IPA: ipa, BY: by}
    allowed = SUBTOKENS.get(tok, ())
    for sub, value in given.items():
        if value is not None and sub not in allowed:
            owners = [token_name(f) for f, s in SUBTOKENS.items() if sub in s]
            raise TypeError(
                f"tokenize_frame(): {token_name(tok)} frames take no {SUBTOKEN_KEYWORDS[sub]}= "
                f"sub-token ({token_name(sub)} belongs to {' and '.join(owners)})"
            )
    out = [tok]
    out.extend(frame_body(tok, content, given))  # type: ignore[arg-type]
    out.append(END_TOKEN)
    if max_tokens is not None:
        limit = check_int(max_tokens, "max_tokens", minimum=0)
        if len(out) > limit:
            raise ValueError(f"frame needs {len(out)} tokens but max_tokens is {limit}")
    return out


def bytes_value(data: bytes) -> Union[str, bytes]:
    """Decoded content: str when it is valid UTF-8, else the raw bytes."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data


def split_body(
    frame: int, body: Sequence[int], offset: int = 0
) -> Tuple[object, Dict[str, object]]:
    """Split a frame body into its content and its sub-token values.

    Returns ``(content, subs)`` where content is str/bytes (a list of them for
    ``<COMP>``) and ``subs`` maps keyword names (``"exit"``, ``"pos"``...) to
    values; a canonical decimal exit code becomes an int. ``offset`` is the
    position of ``body[0]`` in the whole sequence, for error messages.
    """
    allowed = SUBTOKENS.get(frame, ())
    if frame == COMP:
        items: List[object] = []
        current = bytearray()
        for i, tok in enumerate(body):
            if tok == NEXT:
                items.append(bytes_value(bytes(current)))
                current.clear()
            elif tok < BYTE_TOKENS:
                current.append(tok)
            else:
                raise ValueError(
                    f"unexpected {token_name(tok)} at position {offset + i} inside a <COMP> frame"
                )
        items.append(bytes_value(bytes(current)))
        return items, {}
    content = bytearray()
    subs: Dict[str, object] = {}
    current = content
    for i, tok in enumerate(body):
        if tok < BYTE_TOKENS:
            current.append(tok)
            continue
        if tok not in allowed or tok == NEXT:
            raise ValueError(
                f"unexpected {token_name(tok)} at position {offset + i} inside a {token_name(frame)} frame"
            )
        name = SUBTOKEN_KEYWORDS[tok]
        if name in subs:
            raise ValueError(
                f"{token_name(tok)} appears twice in a {token_name(frame)} frame (position {offset + i})"
            )
        current = bytearray()
        subs[name] = current
    result: Dict[str, object] = {}
    for name, raw in subs.items():
        value = bytes_value(bytes(raw))  # type: ignore[arg-type, call-overload]
        if name == "exit" and isinstance(value, str):
            try:
                number = int(value)
            except ValueError:
                pass
            else:
                if str(number) == value:
                    value = number  # type: ignore[assignment]
        result[name] = value
    return bytes_value(bytes(content)), result


def parse_frame(ids: Sequence[int]) -> Dict[str, object]:
    """Parse one closed frame (as made by :func:`tokenize_frame`) into a dict.

    The dict has ``"frame"`` (the name, e.g. ``"<HIST>"``), ``"content"``
    (str, bytes for invalid UTF-8, or a list for ``<COMP>``) and one key per
    present sub-token.

    >>> parse_frame([262, 108, 115, 263, 48, 269])
    {'frame': '<HIST>', 'content': 'ls', 'exit': 0}
    """
    if isinstance(ids, (str, bytes, bytearray, memoryview)):
        raise TypeError(f"parse_frame expects a sequence of token ids, not {type(ids).__name__}")
    toks = [check_id(t) for t in ids]
    if len(toks) < 2:
        raise ValueError("a frame needs at least a frame token and <END>")
    frame = resolve_frame(toks[0])
    if toks[-1] != END_TOKEN:
        raise ValueError(f"frame does not end with <END> (last token is {token_name(toks[-1])})")
    content, subs = split_body(frame, toks[1:-1], offset=1)
    out: Dict[str, object] = {"frame": token_name(frame), "content": content}
    out.update(subs)
    return out
