"""Showing rendered conversations: coloured terminal text and HTML pages.

Each token is shown on a coloured background: green where the mask is 1 (trained on), red
where it is 0, and two alternating shades of each so that token boundaries are visible.
Special tokens are bold; a newline inside a token is shown as ``↵`` (then a real line break);
bytes that are not complete UTF-8 in one token are shown escaped (``\\xe2``).

>>> import toksmith
>>> tok = toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2", {"<s>": 256})
>>> to_ansi(tok, [256, 104, 105], [0, 1, 1], color=False)
'<s>|h|i'
>>> print(to_ansi(tok, [256, 104], [0, 1], color=False, with_token_id=True))
<s>(256)|h(104)
>>> html_section(tok, "demo", [104, 60], [1, 0])
'<section><h2>demo</h2><div class="toks"><span class="m1 a" title="id 104, mask 1">h</span><span class="m0 b" title="id 60, mask 0">&lt;</span></div></section>\\n'
"""

from __future__ import annotations

import html
import operator
from collections import abc
from typing import Any, Iterable, List, Optional, Sequence, Tuple

RESET = "\033[0m"
BOLD = "\033[1m"
GRAY = "\033[90m"
#: backgrounds (256-colour) for (mask, shade): mask 1 greens, mask 0 reds, no mask greys
_BG = {
    (1, 0): "\033[97;48;5;22m",
    (1, 1): "\033[97;48;5;28m",
    (0, 0): "\033[97;48;5;52m",
    (0, 1): "\033[97;48;5;88m",
    (None, 0): "\033[97;48;5;236m",
    (None, 1): "\033[97;48;5;240m",
}


def _int_items(values: Any, what: str, allow_bool: bool = False) -> List[int]:
    """A list, tuple or numpy array of ints as a list of Python ints. A str or bytes is a
    TypeError (never split into characters), and so is any item that is not an integer (a
    float is not cut to an int; a bool only where ``allow_bool``)."""
    if (
        isinstance(values, (str, bytes, bytearray, abc.Mapping, abc.Set))
        or values is None
        or not hasattr(values, "__iter__")
    ):  # a dict or a set would give its keys, in no useful order
        raise TypeError(f"{what} must be a list of ints, not {type(values).__name__}")
    if hasattr(values, "tolist") and not isinstance(values, list):
        values = values.tolist()
        if not isinstance(values, list):  # a 0-d array
            raise TypeError(f"{what} must be a list of ints, not a single value")
    out = []
    for k, v in enumerate(values):
        if isinstance(v, bool) and not allow_bool:
            raise TypeError(f"{what}[{k}] must be an int, not bool")
        try:
            out.append(operator.index(v))
        except TypeError:
            raise TypeError(f"{what}[{k}] must be an int, not {type(v).__name__}") from None
    return out


def _ids_list(ids: Any) -> List[int]:
    return _int_items(ids, "ids")


def _check_mask(ids: Sequence[int], mask: Optional[Any]) -> Optional[List[int]]:
    if mask is None:
        return None
    mask = _int_items(mask, "mask", allow_bool=True)
    if len(mask) != len(ids):
        raise ValueError(f"ids and mask differ in length ({len(ids)} != {len(mask)})")
    for k, m in enumerate(mask):
        if m != 0 and m != 1:
            raise ValueError(
                f"mask[{k}] is {m}: a training mask holds only 0 (not trained on) and 1 (trained on)"
            )
    return mask


def token_pieces(tokenizer: Any, ids: Iterable[int]) -> List[Tuple[str, bool]]:
    """``(readable text, is_special)`` for each id of a toksmith Tokenizer.

    >>> import toksmith
    >>> tok = toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2")
    >>> token_pieces(tok, [104, 0xe2])
    [('h', False), ('\\\\xe2', False)]
    """
    if not isinstance(getattr(tokenizer, "special_tokens", None), abc.Mapping) or not callable(
        getattr(tokenizer, "decode_single_token_bytes", None)
    ):
        hint = "; pass its .tokenizer" if hasattr(tokenizer, "tokenizer") else ""
        raise TypeError(
            f"tokenizer must be a toksmith Tokenizer (with special_tokens and "
            f"decode_single_token_bytes), not {type(tokenizer).__name__}{hint}"
        )
    specials = set(tokenizer.special_tokens.values())
    out = []
    for i in _ids_list(ids):
        text = tokenizer.decode_single_token_bytes(i).decode("utf-8", "backslashreplace")
        out.append((text, i in specials))
    return out


def to_ansi(
    tokenizer: Any,
    ids: Any,
    mask: Optional[Any] = None,
    *,
    with_token_id: bool = False,
    color: bool = True,
    sep: Optional[str] = None,
) -> str:
    """Terminal text of ``ids`` (a toksmith Tokenizer's), coloured by ``mask`` (1 green, 0 red;
    None: grey). ``sep`` goes between tokens: by default nothing with colour (the alternating
    shades show the boundaries) and ``|`` without. ``with_token_id`` adds ``(id)`` after each
    token."""
    ids = _ids_list(ids)
    mask = _check_mask(ids, mask)
    if sep is None:
        sep = "" if color else "|"
    elif not isinstance(sep, str):
        raise TypeError(f"sep must be a str or None, not {type(sep).__name__}")
    parts = []
    for k, (text, special) in enumerate(token_pieces(tokenizer, ids)):
        text = text.replace("\n", "↵\n")
        # the id goes before the token's trailing line break, if any
        trail = "\n" if text.endswith("\n") else ""
        text = text[: len(text) - len(trail)]
        tid = f"({ids[k]})" if with_token_id else ""
        if not color:
            parts.append(text + tid + trail)
            continue
        bg = _BG[(mask[k] if mask is not None else None, k % 2)]
        # colour each line separately, so a line break does not carry the background along
        shown = "\n".join(
            f"{bg}{BOLD if special else ''}{line}{RESET}" if line else ""
            for line in text.split("\n")
        )
        parts.append(shown + (f"{GRAY}{tid}{RESET}" if tid else "") + trail)
    return sep.join(parts)


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
.legend span { padding: 0 .4em; margin-right: .6em; }
.toks { font-family: ui-monospace, monospace; white-space: pre-wrap; word-break: break-all;
        line-height: 1.7; border: 1px solid #ddd; padding: .6em; }
.toks span { border-radius: 2px; }
.m1.a { background: #c6efc6; } .m1.b { background: #9ddb9d; }
.m0.a { background: #f7d4d4; } .m0.b { background: #eab0b0; }
.nm.a { background: #e8e8e8; } .nm.b { background: #d0d0d0; }
.sp { font-weight: bold; }
.id { color: #777; font-size: 70%; vertical-align: sub; }
h2 { font-size: 1em; margin-top: 1.5em; }
"""


def html_header(title: str = "toksmith: rendered conversations") -> str:
    """The start of an HTML page (title escaped), with the styles and a legend."""
    if not isinstance(title, str):
        raise TypeError(f"title must be a str, not {type(title).__name__}")
    t = html.escape(title)
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f"<title>{t}</title><style>{_CSS}</style></head><body>\n<h1>{t}</h1>\n"
        '<p class="legend"><span class="m1 a">trained on (mask 1)</span>'
        '<span class="m0 a">not trained on (mask 0)</span>'
        '<span class="sp">bold: special token</span></p>\n'
    )


def html_footer() -> str:
    return "</body></html>\n"


def html_section(
    tokenizer: Any,
    heading: Optional[str],
    ids: Any,
    mask: Optional[Any] = None,
    *,
    with_token_id: bool = False,
) -> str:
    """One ``<section>``: an optional heading and the tokens as coloured spans (each with its
    id and mask in a tooltip). Every text is HTML-escaped."""
    if heading is not None and not isinstance(heading, str):
        raise TypeError(f"heading must be a str or None, not {type(heading).__name__}")
    ids = _ids_list(ids)
    mask = _check_mask(ids, mask)
    out = ["<section>"]
    if heading:
        out.append(f"<h2>{html.escape(heading)}</h2>")
    out.append('<div class="toks">')
    for k, (text, special) in enumerate(token_pieces(tokenizer, ids)):
        m = mask[k] if mask is not None else None
        cls = (
            ("nm" if m is None else f"m{m}")
            + (" a" if k % 2 == 0 else " b")
            + (" sp" if special else "")
        )
        tip = f"id {ids[k]}" + (f", mask {m}" if m is not None else "")
        body = html.escape(text).replace("\n", "↵\n")
        if with_token_id:
            body += f'<span class="id">{ids[k]}</span>'
        out.append(f'<span class="{cls}" title="{tip}">{body}</span>')
    out.append("</div></section>\n")
    return "".join(out)


def to_html(
    tokenizer: Any,
    sections: Iterable[Tuple[Optional[str], Any, Optional[Any]]],
    *,
    title: str = "toksmith: rendered conversations",
    with_token_id: bool = False,
) -> str:
    """A whole HTML page from ``(heading, ids, mask)`` sections."""
    if isinstance(sections, (str, bytes, abc.Mapping)) or not isinstance(sections, abc.Iterable):
        raise TypeError(
            f"sections must be a list of (heading, ids, mask) tuples, not {type(sections).__name__}"
        )
    body = "".join(
        html_section(tokenizer, h, i, m, with_token_id=with_token_id) for h, i, m in sections
    )
    return html_header(title) + body + html_footer()


__all__ = ["token_pieces", "to_ansi", "to_html", "html_header", "html_section", "html_footer"]
