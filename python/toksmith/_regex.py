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
every newline, so ``$`` can only match at the end of the text in both engines.) Oniguruma's
``^`` does not match at the end of a text that ends with a newline. Under ``(?i)`` the engines
also differ: Oniguruma case-folds ``\p{..}`` only inside a class (and ``\P{..}`` differently
from fancy-regex everywhere), matches a character to its multi-character folding (``ß`` and
``ss``, ``ﬁ`` and ``fi``: in a literal, or through a class that holds such a character), and
reads ``a(?i)b|c`` as ``a(?i:b|c)``; ``\pL`` is a property to fancy-regex and the letters
``pL`` to Oniguruma. These are rewritten where an exact form exists and refused otherwise, as
is a repeated group that can match the empty string (the engines end such loops differently).
Anything this module cannot translate with certainty (other inline flags, POSIX classes,
Oniguruma-only escapes...) raises :class:`ConversionError`.

>>> to_oniguruma(r"\p{N}{1,3}+|\s++$|x$")
'(?>\\p{N}{1,3})|\\s++$|x\\z'
>>> from_oniguruma(r"\p{N}{1,3}+|x$")
'(?:\\p{N}{1,3})+|x(?:(?=\\n)|\\z)'
"""

from __future__ import annotations

import functools
import re
from typing import List

from . import _core
from .errors import ConversionError

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
                    "in the other; write them with \\p{..}"
                )
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
                    raise ConversionError(
                        f"pattern {p!r}: unsupported group syntax at {p[i : i + 6]!r}"
                    )
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
    if flags and flags not in ("i", "-i"):
        raise ConversionError(
            f"pattern {p!r}: the inline flags {text!r} mean different things in fancy-regex and in "
            "Oniguruma (only (?i) and (?-i) translate exactly)"
        )


def _flags_reach_other_branches(items: List[_Item], k: int) -> bool:
    """Whether the group holding ``items[k]`` has a ``|`` after it (at its own depth)."""
    depth = 0
    for it in items[k + 1 :]:
        if it.kind == "open":
            depth += 1
        elif it.kind == "close":
            if depth == 0:
                return False
            depth -= 1
        elif it.kind == "alt" and depth == 0:
            return True
    return False


_HEX_ESCAPE = re.compile(r"\\(?:x\{([0-9A-Fa-f]+)\}|x([0-9A-Fa-f]{2})|u([0-9A-Fa-f]{4}))\Z")


def _literal_char(text: str):
    """The character an atom (or an escape in a class) stands for, if it is one literal
    character; else None."""
    if len(text) == 1:
        return text
    if len(text) == 2 and text[0] == "\\" and not text[1].isalnum():
        return text[1]
    m = _HEX_ESCAPE.match(text)
    if m:
        n = int(next(g for g in m.groups() if g), 16)
        return chr(n) if n < 0x110000 else None
    return {"\\n": "\n", "\\t": "\t", "\\r": "\r", "\\f": "\f", "\\v": "\v"}.get(text)


@functools.lru_cache(maxsize=None)
def _multi_folds():
    """Characters whose full case folding is several characters (``ß`` -> ``ss``, ``ﬁ`` -> ``fi``),
    and those foldings: under (?i) Oniguruma matches each to the other, fancy-regex does not."""
    # (none below U+00DF nor outside the BMP)
    chars = frozenset(c for c in map(chr, range(0xDF, 0x10000)) if len(c.casefold()) > 1)
    return chars, frozenset(c.casefold() for c in chars)


def _check_multi_fold(p: str, text: str, run: str) -> None:
    chars, folds = _multi_folds()
    bad = next((c for c in text if c in chars), None)
    if bad is None:
        folded = run.casefold()
        bad = next((f for f in folds if f in folded), None)
    if bad is not None:
        raise ConversionError(
            f"pattern {p!r}: under (?i), Oniguruma matches {bad!r} to its multi-character case folding "
            f"({bad.casefold()!r} and {bad!r} are one match) and fancy-regex does not; spell the cases out "
            "without (?i)"
        )


def _class_chars(text: str) -> str:
    """The characters a class names one by one (not those of its ranges' insides or properties)."""
    out = []
    i = 1
    while i < len(text):
        if text[i] == "\\":
            j = _escape_end(text, i)
            c = _literal_char(text[i:j])
            if c is not None:
                out.append(c)
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _rewrite(p: str, items: List[_Item], on_quant, on_anchor, on_atom) -> str:
    """Rebuild the pattern; the callbacks see the output list and where the last atom starts
    (``on_atom`` also whether (?i) is in force there, ``on_anchor`` the anchor's index)."""
    out: List[str] = []
    starts: List[int] = []  # output index of each open group
    icase: List[bool] = [False]  # (?i) in force, per open group
    at_branch_start: List[bool] = [True]  # nothing yet in the group's current branch
    opens: List[str] = []  # the opening text of each open group
    run = ""  # the literal characters just before, under (?i) (Oniguruma folds "ss" to "ß")
    last_atom = -1
    prev_quant = False
    for k, it in enumerate(items):
        if (
            it.kind == "open" and it.text not in _PLAIN_OPENS and not _FLAGS.fullmatch(it.text)
        ) or (it.kind == "atom" and it.text.startswith("(?")):
            raise ConversionError(
                f"pattern {p!r}: unsupported group syntax {it.text!r} (named groups, "
                "back-references and conditionals are not translated)"
            )
        if it.kind not in ("atom", "quant") and not (
            it.kind in ("open", "close") and it.text in ("(?:", ")")
        ):
            run = ""
        if it.kind == "open":
            flags = _FLAGS.fullmatch(it.text)
            if flags:
                _check_flags(it.text, p)
            at_branch_start[-1] = False
            icase.append(flags.group(1) == "i" if flags else icase[-1])
            at_branch_start.append(True)
            opens.append(it.text)
            starts.append(len(out))
            out.append(it.text)
            last_atom = -1
            prev_quant = False
        elif it.kind == "close":
            if not starts:
                raise ConversionError(f"pattern {p!r}: unbalanced ')'")
            icase.pop()
            at_branch_start.pop()
            opens.pop()
            last_atom = starts.pop()
            out.append(")")
            prev_quant = False
        elif it.kind == "quant":
            if last_atom < 0:
                raise ConversionError(f"pattern {p!r}: quantifier {it.text!r} follows nothing")
            on_quant(out, last_atom, it.text, prev_quant)
            prev_quant = True
        elif it.kind == "anchor":
            at_branch_start[-1] = False
            out.append(on_anchor(items, k, out, it.text))
            last_atom = -1
            prev_quant = False
        elif it.kind == "flags":
            _check_flags(it.text, p)
            if opens and opens[-1] != "(?:" and not _FLAGS.fullmatch(opens[-1]):
                # fancy-regex lets flags set in a capturing, atomic or look-around group reach past
                # its end (((?i)b)a matches "bA"); Oniguruma and Python's regex do not
                raise ConversionError(
                    f"pattern {p!r}: {it.text!r} inside {opens[-1]!r}...')' reaches past the group in fancy-regex "
                    "only; write (?i:...) around what it applies to"
                )
            if not at_branch_start[-1] and _flags_reach_other_branches(items, k):
                # fancy-regex: a(?i)b|c is (?:a(?i:b))|(?i:c); Oniguruma: a(?i:b|c)
                raise ConversionError(
                    f"pattern {p!r}: {it.text!r} after the start of a branch, with more branches after it, "
                    "groups differently in fancy-regex and Oniguruma; write (?i:...) around what it applies to"
                )
            flags = _FLAGS.match(it.text)
            assert flags is not None  # the lexer made this item from a flag group
            icase[-1] = flags.group(1) == "i"
            out.append(it.text)
            last_atom = -1
            prev_quant = False
        elif it.kind == "alt":
            at_branch_start[-1] = True
            out.append("|")
            last_atom = -1
            prev_quant = False
        else:
            at_branch_start[-1] = False
            if icase[-1]:
                char = _literal_char(it.text)
                quantified = k + 1 < len(items) and items[k + 1].kind == "quant"
                if it.text.startswith("["):
                    _check_multi_fold(p, _class_chars(it.text), "")
                    run = ""
                elif char is None:
                    run = ""
                else:
                    run = "" if quantified else run + char
                    _check_multi_fold(p, char, run)
            else:
                run = ""
            last_atom = len(out)
            out.append(on_atom(it.text, icase[-1]))
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
            "between fancy-regex and Oniguruma"
        )


def _ends_with_possessive_space(out: List[str]) -> bool:
    return "".join(out[-2:]) == "\\s++"


_FANCY_ESCAPES = set("sSdDwWbBAzntrfvpPxu0")


_SHORT_PROPERTY = re.compile(r"\\([pP])([A-Za-z])\Z")


def _check_class_under_icase(text: str, p: str) -> None:
    """Under (?i) the engines agree on a class with ``\\p{..}`` but not with ``\\P{..}``."""
    if re.search(r"\\P", re.sub(r"\\\\", "", text)):
        raise ConversionError(
            f"pattern {p!r}: under (?i), fancy-regex and Oniguruma case-fold \\P{{..}} in {text!r} differently; "
            "keep it out of (?i) and (?i:...), or write the class without \\P{..}"
        )


def _split_with(text: str, pattern: str) -> List[str]:
    try:
        return _core.split(text, pattern, "auto")
    except ValueError:  # pragma: no cover - a class that does not compile: the pattern fails anyway
        return []


@functools.lru_cache(maxsize=None)
def _cased_text() -> str:
    """Every character that some case mapping changes."""
    return "".join(
        c
        for c in map(chr, range(0x110000))
        if not 0xD800 <= ord(c) < 0xE000
        and (c.lower() != c or c.upper() != c or c.casefold() != c or c.title() != c)
    )


def _case_closed(cls: str) -> bool:
    """Whether the fancy-regex class ``cls`` matches the same characters with and without (?i)."""
    return _split_with(_cased_text(), f"(?i:{cls})") == _split_with(_cased_text(), cls)


def _folds_to_several(cls: str) -> bool:
    """Whether the fancy-regex class ``cls`` under (?i) holds a character whose case folding is
    several characters (as ``[\\p{L}]`` holds ``ß``): Oniguruma's would also match those
    characters (``(?i)[\\p{L}]`` matches ``ss``), fancy-regex's never does."""
    return bool(_split_with("".join(sorted(_multi_folds()[0])), f"(?i:{cls})"))


def _icase_class(p: str, fancy: str, onig: str, to_onig: bool) -> str:
    """The Oniguruma class (``to_onig``) or fancy-regex class for a class under (?i) (``fancy``
    and ``onig``: its spellings), or ConversionError when Oniguruma's would match a character's
    multi-character case folding."""
    if fancy.startswith("[^") or not _folds_to_several(fancy):
        return onig if to_onig else fancy
    if to_onig and _case_closed(fancy):
        return f"(?-i:{onig})"  # the same characters, with no case folding in Oniguruma
    raise ConversionError(
        f"pattern {p!r}: under (?i), Oniguruma's class {onig!r} also matches the multi-character case foldings "
        "of characters in it ('ss' for 'ß', 'fi' for 'ﬁ'), fancy-regex's does not; keep the class out of (?i) "
        "and (?i:...)"
    )


_ZERO_WIDTH_ALONE = re.compile(r"\\[AzZbBG]\Z")


def _onig_refuses_repeat(group: str) -> bool:
    """Whether Oniguruma refuses a quantifier on the group ``group`` (already translated): it
    reads a non-capturing group as its contents, and a branch there that is only an anchor or
    a look-around is no "target of repeat operator" (``(?:a|(?=b))+``)."""
    try:
        items = _lex(group)
    except ConversionError:  # pragma: no cover - it was lexed before
        return False
    if not items or items[0].text != "(?:" or items[-1].kind != "close":
        return False
    inner = items[1:-1]
    branches: List[List[_Item]] = [[]]
    depth = 0
    for it in inner:
        if it.kind == "alt" and depth == 0:
            branches.append([])
            continue
        depth += (it.kind == "open") - (it.kind == "close")
        branches[-1].append(it)
    for b in branches:
        core = list(b)
        while core and core[-1].kind == "quant":
            core.pop()
        if len(core) == 1 and (
            core[0].kind in ("anchor", "flags") or _ZERO_WIDTH_ALONE.match(core[0].text)
        ):
            return True
        if core and core[0].kind == "open" and core[-1].kind == "close":
            # one group alone in the branch
            depth, whole = 0, True
            for n, it in enumerate(core):
                depth += (it.kind == "open") - (it.kind == "close")
                if depth == 0 and n < len(core) - 1:
                    whole = False
                    break
            if whole:
                text = "".join(i.text for i in core)
                if core[0].text in ("(?=", "(?!", "(?<=", "(?<!") or _onig_refuses_repeat(text):
                    return True
    return False


def _check_empty_repeat(p: str, group: str, q: str) -> None:
    """Refuse repeating a group that can match the empty string: the engines end such loops
    differently (``((\\w*){0,2}|x)++`` splits other pieces)."""
    if not group.startswith("("):
        return
    m = _INTERVAL.match(q)
    if m:
        lo, comma, hi = m.group(1).partition(",")
        most = int(lo) if not comma else (int(hi) if hi else None)
        if most is not None and most <= 1:
            return  # {0}, {1}, {0,1}: one pass at most
    elif q[0] == "?":
        return
    if can_match_empty(group):
        raise ConversionError(
            f"pattern {p!r}: the repeated group {group!r} can match the empty string, and fancy-regex and "
            "Oniguruma end such repetitions differently; make each branch of it match at least one character"
        )


def to_oniguruma(pattern: str) -> str:
    """Rewrite a toksmith (fancy-regex) pattern so that Oniguruma splits text identically."""

    def quant(out, start, q, prev_quant):
        group = "".join(out[start:])
        _check_empty_repeat(pattern, group, q)
        if _onig_refuses_repeat(group):
            raise ConversionError(
                f"pattern {pattern!r}: Oniguruma refuses the quantifier {q!r} on {group!r} (a branch of it is "
                "only an anchor or a look-around)"
            )
        if q.startswith("{") and q.endswith("+"):
            del out[start:]
            out.append(f"(?>{group}{q[:-1]})")
        else:
            out.append(q)

    def anchor(items, k, out, a):
        if a == "$":
            return "$" if _ends_with_possessive_space(out) else "\\z"
        return "\\A"

    def short_property(text):
        # \pL is a property to fancy-regex, the letters "pL" to Oniguruma
        m = _SHORT_PROPERTY.match(text)
        return f"\\{m.group(1)}{{{m.group(2)}}}" if m else text

    def atom(text, icase):
        if (
            text.startswith("\\")
            and len(text) >= 2
            and text[1].isalnum()
            and text[1] not in _FANCY_ESCAPES
        ):
            raise ConversionError(
                f"pattern {pattern!r}: the escape {text!r} has no certain Oniguruma equivalent"
            )
        _no_word_boundary(text, pattern)
        if text.startswith("["):
            if "--" in text or "~~" in text:
                raise ConversionError(
                    f"pattern {pattern!r}: class set operations in {text!r} are not supported by Oniguruma"
                )
            onig = _map_class(text, lambda e: _word_escape(short_property(e), _FANCY_WORD, True))
            if icase:
                _check_class_under_icase(text, pattern)
                return _icase_class(pattern, text, onig, True)
            return onig
        text = short_property(text)
        if icase and text.startswith("\\P"):
            raise ConversionError(
                f"pattern {pattern!r}: under (?i), fancy-regex and Oniguruma case-fold {text!r} differently; "
                "keep it out of (?i) and (?i:...)"
            )
        if icase and text.startswith("\\p"):
            # Oniguruma folds a property under (?i) only in a class, as fancy-regex does everywhere
            return _icase_class(pattern, f"[{text}]", f"[{text}]", True)
        if icase and text == "\\w":
            return _icase_class(pattern, "[\\w]", _word_escape(text, _FANCY_WORD, False), True)
        return _word_escape(text, _FANCY_WORD, False)

    return _rewrite(pattern, _lex(pattern), quant, anchor, atom)


def _zero_width_next(items: List[_Item], k: int) -> bool:
    """Whether what follows ``items[k]`` may match without taking a character (so that it can
    stand at the end of the text)."""
    if k + 1 >= len(items):
        return True
    nxt = items[k + 1]
    if nxt.kind != "atom" or nxt.text in _ZERO_WIDTH_ESCAPES:
        return True
    if k + 2 < len(items) and items[k + 2].kind == "quant":
        q = items[k + 2].text
        return q[0] in "*?" or _MIN_ZERO.match(q) is not None
    return False


def from_oniguruma(pattern: str) -> str:
    """Rewrite an Oniguruma (Hugging Face) split regex into toksmith's syntax, exactly."""

    def quant(out, start, q, prev_quant):
        _check_empty_repeat(pattern, "".join(out[start:]), q)
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

    def anchor(items, k, out, a):
        if a == "$":
            return "$" if _ends_with_possessive_space(out) else "(?:(?=\\n)|\\z)"
        # Oniguruma's ^ is the start of the text or of a line, but not the end of a text that
        # ends with a newline (no line starts there)
        return "(?:\\A|(?<=\\n)(?!\\z))" if _zero_width_next(items, k) else "(?:\\A|(?<=\\n))"

    def escape(text):
        if text.startswith("\\p{^") or text.startswith("\\P{^"):
            return ("\\P{" if text[1] == "p" else "\\p{") + text[4:]
        if _SHORT_PROPERTY.match(text):
            raise ConversionError(
                f"split regex {pattern!r}: {text!r} is the letters {text[1:]!r} to Oniguruma (a property only "
                f"with braces, \\{text[1]}{{{text[2]}}}); write {text[1:]!r} if that is meant"
            )
        if text == "\\0":
            raise ConversionError(
                f"split regex {pattern!r}: the octal escape {text!r} (NUL, or an octal code with "
                "the digits after it) is not translated; write \\x{..} instead"
            )
        return text

    def atom(text, icase):
        if text.startswith("["):
            text = _map_class(text, escape)
            fancy = _map_class(text, lambda e: _word_escape(e, _ONIG_WORD_IN_CLASS, True))
            if icase:
                _check_class_under_icase(text, pattern)
                return _icase_class(pattern, fancy, text, False)
            return fancy
        text = escape(text)
        if text == "\\h":
            return "[0-9a-fA-F]"
        if text == "\\H":
            return "[^0-9a-fA-F]"
        if text == "\\Z":
            return "(?=\\n?\\z)"
        if (
            text.startswith("\\")
            and len(text) >= 2
            and text[1].isalnum()
            and text[1] not in _FANCY_ESCAPES
        ):
            raise ConversionError(
                f"split regex {pattern!r}: the Oniguruma escape {text!r} has no certain toksmith equivalent"
            )
        _no_word_boundary(text, pattern)
        if icase and text[:2] in ("\\p", "\\P"):
            return f"(?-i:{text})"  # Oniguruma does not case-fold a property outside a class
        return _word_escape(text, _ONIG_WORD, False)

    out = _rewrite(pattern, _lex(pattern), quant, anchor, atom)
    try:  # what Oniguruma allows and fancy-regex does not ((?=a)* and the like): said here
        _core.compile_pattern(out)
    except ValueError as e:
        raise ConversionError(f"split regex {pattern!r} has no toksmith equivalent: {e}") from None
    return out


def covering(pattern: str) -> str:
    """A pattern that splits like Hugging Face's ``Split(pattern, "isolated")``: the matches and
    the runs of text between them are all pieces (toksmith, like tiktoken, drops unmatched text).

    A pattern that runs on one of the core's GPT-2 / cl100k / o200k scanners (a named pattern,
    or a spelling of one: Llama 3's, Qwen's) matches at every character, so nothing lies between
    its matches: it is returned as it is, and keeps its scanner.
    """
    if _matches_everywhere(pattern):
        return pattern
    return f"(?:{pattern})|(?:(?!(?:{pattern}))[\\s\\S])+"


def _matches_everywhere(pattern: str) -> bool:
    """Whether ``pattern`` runs on a scanner whose pieces cover all text: every hand-written
    scanner but the two word splits, which drop whitespace."""
    try:
        regex_text, fast = _core.compile_pattern(pattern)
    except ValueError:
        return False
    # (a bare name such as "cl100k" is a regex matching that word here, not the named pattern)
    return (
        fast
        and regex_text == pattern
        and pattern not in (_core.WORDS_PATTERN, _core.CPP_WORDS_PATTERN)
    )


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
                elem = (
                    True
                    if it.text in ("(?=", "(?!", "(?<=", "(?<!") or it.text.startswith("(?(")
                    else inner
                )
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
