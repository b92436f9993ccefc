r"""Translate split patterns between toksmith/tiktoken regex syntax and Hugging Face's.

toksmith and tiktoken run patterns with Rust's fancy-regex; Hugging Face ``tokenizers`` runs
them with Oniguruma in its Ruby syntax. The two agree on nearly everything the split patterns
use (``\p{..}`` classes, ``\s``/``\d``/``\w``, look-around, ``*+``/``++``/``?+`` possessive
quantifiers, ``(?i:..)``) but not on three constructs, which are rewritten here exactly:

==================  ==========================  ======================================
construct           fancy-regex (toksmith)      Oniguruma (Hugging Face)
==================  ==========================  ======================================
``X{1,3}+``         possessive ``{1,3}``        ``(X{1,3})+``: a repeat of the interval
``$``               end of text                 end of *line* (before any ``\n``)
``^``               start of text               start of line
``\w``, ``\W``       + Join_Control               no Join_Control; + ``²³¹¼½¾`` outside ``[..]``
==================  ==========================  ======================================

(``\b``/``\B`` depend on ``\w`` and are refused.) So cl100k's ``\p{N}{1,3}+`` must be written ``(?>\p{N}{1,3})`` for Hugging Face, or digits are
no longer cut in groups of three. (``\s++$`` is left alone: the possessive ``\s++`` has eaten
every newline, so ``$`` can only match at the end of the text in both engines.) Anything this
module cannot translate with certainty (other inline flags, POSIX classes, Oniguruma-only
escapes...) raises :class:`ConversionError`.

>>> to_oniguruma(r"\p{N}{1,3}+|\s++$|x$")
'(?>\\p{N}{1,3})|\\s++$|x\\z'
>>> from_oniguruma(r"\p{N}{1,3}+|x$")
'(?:\\p{N}{1,3})+|x(?:(?=\\n)|\\z)'
"""

from __future__ import annotations

import re
from typing import List

from ._common import ConversionError

_INTERVAL = re.compile(r"\{(\d+(?:,\d*)?|,\d+)\}")
_FLAGS = re.compile(r"\(\?([a-zA-Z-]+)([:)])")
_ESC_WITH_BRACES = "pPxN"
_PLAIN_OPENS = ("(", "(?:", "(?>", "(?=", "(?!", "(?<=", "(?<!")
_NAMED_GROUP = re.compile(r"\(\?(?:P?<(?![=!])\w+>|P=\w+\)|\((?:\w+|<\w+>|'\w+')\)|#[^)]*\))")


class _Item:
    __slots__ = ("kind", "text")

    def __init__(self, kind: str, text: str) -> None:
        self.kind = kind  # atom | open | close | quant | alt | anchor
        self.text = text

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"{self.kind}:{self.text}"


def _escape_end(p: str, i: int) -> int:
    """Index just past the escape starting at ``p[i] == '\\\\'``."""
    if i + 1 >= len(p):
        raise ConversionError(f"pattern {p!r} ends with a lone backslash")
    c = p[i + 1]
    if c in _ESC_WITH_BRACES and i + 2 < len(p) and p[i + 2] == "{":
        j = p.find("}", i + 2)
        if j < 0:
            raise ConversionError(f"pattern {p!r}: unterminated \\{c}{{...}}")
        return j + 1
    if c in "gk" and i + 2 < len(p) and p[i + 2] in "<{":  # a named back-reference \k<name>
        j = p.find(">" if p[i + 2] == "<" else "}", i + 2)
        if j < 0:
            raise ConversionError(f"pattern {p!r}: unterminated \\{c}{p[i + 2]}...")
        return j + 1
    if c in "pP":
        return i + 3
    if c == "x":
        return i + 4
    if c == "u":
        return i + 6
    return i + 2


def _class_end(p: str, i: int) -> int:
    """Index just past the character class starting at ``p[i] == '['`` (nested classes allowed)."""
    depth = 0
    j = i
    while j < len(p):
        c = p[j]
        if c == "\\":
            j = _escape_end(p, j)
            continue
        if c == "[":
            if p.startswith("[:", j):
                raise ConversionError(
                    f"pattern {p!r}: POSIX classes like [:alpha:] mean ASCII in one engine and Unicode "
                    "in the other; write them with \\p{..}")
            depth += 1
            j += 1
            if p.startswith("^", j):
                j += 1
            if p.startswith("]", j):  # a leading ']' is literal
                j += 1
            continue
        if c == "]":
            depth -= 1
            j += 1
            if depth == 0:
                return j
            continue
        j += 1
    raise ConversionError(f"pattern {p!r}: unterminated character class")


def _lex(p: str) -> List[_Item]:
    items: List[_Item] = []
    i = 0
    while i < len(p):
        c = p[i]
        if c == "\\":
            j = _escape_end(p, i)
            items.append(_Item("atom", p[i:j]))
            i = j
        elif c == "[":
            j = _class_end(p, i)
            items.append(_Item("atom", p[i:j]))
            i = j
        elif c == "(":
            if p.startswith("(?", i):
                m = _FLAGS.match(p, i)
                if m and m.group(2) == ")":
                    items.append(_Item("flags", m.group(0)))
                    i = m.end()
                    continue
                if m:
                    items.append(_Item("open", m.group(0)))
                    i = m.end()
                    continue
                m = _NAMED_GROUP.match(p, i)
                if m:
                    # ``(?P<name>..)``, ``(?<name>..)``, a conditional ``(?(1)..|..)``: opens; a
                    # named back-reference ``(?P=name)``: an atom; a comment ``(?#..)``: nothing
                    if m.group(0).startswith("(?#"):
                        pass
                    elif m.group(0).startswith("(?P="):
                        items.append(_Item("atom", m.group(0)))
                    else:
                        items.append(_Item("open", m.group(0)))
                    i = m.end()
                    continue
                for pre in _PLAIN_OPENS[1:]:
                    if p.startswith(pre, i):
                        items.append(_Item("open", pre))
                        i += len(pre)
                        break
                else:
                    raise ConversionError(f"pattern {p!r}: unsupported group syntax at {p[i:i + 6]!r}")
            else:
                items.append(_Item("open", "("))
                i += 1
        elif c == ")":
            items.append(_Item("close", ")"))
            i += 1
        elif c in "*+?":
            j = i + 1
            if j < len(p) and p[j] in "?+":
                j += 1
            items.append(_Item("quant", p[i:j]))
            i = j
        elif c == "{":
            m = _INTERVAL.match(p, i)
            if m:
                j = m.end()
                if j < len(p) and p[j] in "?+":
                    j += 1
                items.append(_Item("quant", p[i:j]))
                i = j
            else:
                items.append(_Item("atom", "\\{"))
                i += 1
        elif c == "|":
            items.append(_Item("alt", c))
            i += 1
        elif c in "^$":
            items.append(_Item("anchor", c))
            i += 1
        else:
            items.append(_Item("atom", c))
            i += 1
    return items


def _check_flags(text: str, p: str) -> None:
    m = _FLAGS.match(text)
    flags = m.group(1) if m else ""
    if flags and flags != "i":
        raise ConversionError(
            f"pattern {p!r}: the inline flags {text!r} mean different things in fancy-regex and in "
            "Oniguruma (only (?i) translates exactly)")


def _rewrite(p: str, items: List[_Item], on_quant, on_anchor, on_atom) -> str:
    """Rebuild the pattern; the callbacks see the output list and where the last atom starts."""
    out: List[str] = []
    starts: List[int] = []  # output index of each open group
    last_atom = -1
    prev_quant = False
    for it in items:
        if (it.kind == "open" and it.text not in _PLAIN_OPENS and not _FLAGS.fullmatch(it.text)) or (
                it.kind == "atom" and it.text.startswith("(?")):
            raise ConversionError(f"pattern {p!r}: unsupported group syntax {it.text!r} (named groups, "
                                  "back-references and conditionals are not translated)")
        if it.kind == "open":
            if it.text.startswith("(?") and it.text[2:3].isalpha():
                _check_flags(it.text, p)
            starts.append(len(out))
            out.append(it.text)
            last_atom = -1
            prev_quant = False
        elif it.kind == "close":
            if not starts:
                raise ConversionError(f"pattern {p!r}: unbalanced ')'")
            last_atom = starts.pop()
            out.append(")")
            prev_quant = False
        elif it.kind == "quant":
            if last_atom < 0:
                raise ConversionError(f"pattern {p!r}: quantifier {it.text!r} follows nothing")
            on_quant(out, last_atom, it.text, prev_quant)
            prev_quant = True
        elif it.kind == "anchor":
            out.append(on_anchor(items, out, it.text))
            last_atom = -1
            prev_quant = False
        elif it.kind == "flags":
            _check_flags(it.text, p)
            out.append(it.text)
            last_atom = -1
            prev_quant = False
        elif it.kind == "alt":
            out.append("|")
            last_atom = -1
            prev_quant = False
        else:
            last_atom = len(out)
            out.append(on_atom(it.text))
            prev_quant = False
    if starts:
        raise ConversionError(f"pattern {p!r}: unbalanced '('")
    return "".join(out)


# ``\w`` differs: fancy-regex's is Alphabetic + M + Nd + Pc + Join_Control; Oniguruma's (in
# ``tokenizers``) has no Join_Control and, outside a character class only, also counts the
# Latin-1 digits and fractions ²³¹¼½¾. Each is spelled out with properties the two engines agree
# on (checked over all of Unicode by the tests).
_FANCY_WORD = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{200C}\\x{200D}"
_ONIG_WORD_IN_CLASS = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}"
_ONIG_WORD = _ONIG_WORD_IN_CLASS + "\\x{B2}\\x{B3}\\x{B9}\\x{BC}-\\x{BE}"


def _word_escape(text: str, word: str, in_class: bool) -> str:
    if text == "\\w":
        return word if in_class else f"[{word}]"
    if text == "\\W":
        return f"[^{word}]"
    return text


def _map_class(text: str, fn) -> str:
    """Apply ``fn`` to every escape inside a character class."""
    out = []
    i = 0
    while i < len(text):
        if text[i] == "\\":
            j = _escape_end(text, i)
            out.append(fn(text[i:j]))
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _no_word_boundary(text: str, p: str) -> None:
    if text in ("\\b", "\\B"):
        raise ConversionError(
            f"pattern {p!r}: {text} (word boundary) depends on what a word character is, which differs "
            "between fancy-regex and Oniguruma")


def _ends_with_possessive_space(out: List[str]) -> bool:
    return "".join(out[-2:]) == "\\s++"


_FANCY_ESCAPES = set("sSdDwWbBAzntrfvpPxu0")


def to_oniguruma(pattern: str) -> str:
    """Rewrite a toksmith (fancy-regex) pattern so that Oniguruma splits text identically."""

    def quant(out, start, q, prev_quant):
        if q.startswith("{") and q.endswith("+"):
            atom = "".join(out[start:])
            del out[start:]
            out.append(f"(?>{atom}{q[:-1]})")
        else:
            out.append(q)

    def anchor(items, out, a):
        if a == "$":
            return "$" if _ends_with_possessive_space(out) else "\\z"
        return "\\A"

    def atom(text):
        if text.startswith("\\") and len(text) >= 2 and text[1].isalnum() and text[1] not in _FANCY_ESCAPES:
            raise ConversionError(f"pattern {pattern!r}: the escape {text!r} has no certain Oniguruma equivalent")
        _no_word_boundary(text, pattern)
        if text.startswith("["):
            if "--" in text or "~~" in text:
                raise ConversionError(
                    f"pattern {pattern!r}: class set operations in {text!r} are not supported by Oniguruma")
            return _map_class(text, lambda e: _word_escape(e, _FANCY_WORD, True))
        return _word_escape(text, _FANCY_WORD, False)

    return _rewrite(pattern, _lex(pattern), quant, anchor, atom)


def from_oniguruma(pattern: str) -> str:
    """Rewrite an Oniguruma (Hugging Face) split regex into toksmith's syntax, exactly."""

    def quant(out, start, q, prev_quant):
        if q.startswith("{") and q.endswith("+"):
            # Ruby: '+' after an interval repeats it (``X{1,3}+`` is ``(?:X{1,3})+``).
            atom = "".join(out[start:])
            del out[start:]
            out.append(f"(?:{atom}{q[:-1]})+")
        elif prev_quant:
            atom = "".join(out[start:])
            del out[start:]
            out.append(f"(?:{atom}){q}")
        else:
            out.append(q)

    def anchor(items, out, a):
        if a == "$":
            return "$" if _ends_with_possessive_space(out) else "(?:(?=\\n)|\\z)"
        return "(?:\\A|(?<=\\n))"

    def atom(text):
        if text.startswith("\\p{^") or text.startswith("\\P{^"):
            return ("\\P{" if text[1] == "p" else "\\p{") + text[4:]
        if text == "\\h":
            return "[0-9a-fA-F]"
        if text == "\\H":
            return "[^0-9a-fA-F]"
        if text == "\\Z":
            return "(?=\\n?\\z)"
        if text.startswith("\\") and len(text) >= 2 and text[1].isalnum() and text[1] not in _FANCY_ESCAPES:
            raise ConversionError(
                f"split regex {pattern!r}: the Oniguruma escape {text!r} has no certain toksmith equivalent")
        _no_word_boundary(text, pattern)
        if text.startswith("["):
            return _map_class(text, lambda e: _word_escape(e, _ONIG_WORD_IN_CLASS, True))
        return _word_escape(text, _ONIG_WORD, False)

    return _rewrite(pattern, _lex(pattern), quant, anchor, atom)


def covering(pattern: str) -> str:
    """A pattern that splits like Hugging Face's ``Split(pattern, "isolated")``: the matches and
    the runs of text between them are all pieces (toksmith, like tiktoken, drops unmatched text).
    """
    return f"(?:{pattern})|(?:(?!(?:{pattern}))[\\s\\S])+"



_ZERO_WIDTH_ESCAPES = {"\\b", "\\B", "\\A", "\\z", "\\Z", "\\G", "\\K"}
_BACKREF = re.compile(r"\\[1-9gk]|\(\?P=")
_MIN_ZERO = re.compile(r"\{(0*,|0+\}|,)")


def can_match_empty(pattern: str) -> bool:
    """Whether some alternative of ``pattern`` can match the empty string (look-around and
    anchors count as empty). Splitting with such a pattern differs between engines (and between
    toksmith and Hugging Face's Split), so the converters refuse it.

    >>> can_match_empty(r"\\s*$|\\w+"), can_match_empty(r"\\s+(?!\\S)|\\p{L}{1,3}")
    (True, False)
    """
    items = _lex(pattern)
    pos = 0

    def alternation() -> bool:
        nonlocal pos
        any_empty, seq_empty = False, True
        while pos < len(items):
            it = items[pos]
            if it.kind == "alt":
                any_empty, seq_empty = any_empty or seq_empty, True
                pos += 1
                continue
            if it.kind == "close":
                break
            pos += 1
            if it.kind == "open":
                inner = alternation()
                pos += 1  # the ')'
                # a look-around is empty; so is a conditional (``(?(1)x)`` has no 'no' branch)
                elem = True if it.text in ("(?=", "(?!", "(?<=", "(?<!") or it.text.startswith("(?(") else inner
            elif it.kind in ("anchor", "flags"):
                elem = True
            elif it.kind == "atom":
                # a back-reference is empty when its group matched the empty string
                elem = it.text in _ZERO_WIDTH_ESCAPES or _BACKREF.match(it.text) is not None
            else:  # a quantifier with nothing before it
                elem = True
            while pos < len(items) and items[pos].kind == "quant":
                q = items[pos].text
                if q[0] in "*?" or _MIN_ZERO.match(q):
                    elem = True
                pos += 1
            seq_empty = seq_empty and elem
        return any_empty or seq_empty

    return alternation()
