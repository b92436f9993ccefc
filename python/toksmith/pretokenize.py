"""Pre-tokenization: the split patterns applied before BPE.

Four named patterns are built in, exactly as their owners define them:

=========  =================================================================
name       pattern
=========  =================================================================
gpt2       GPT-2 / r50k_base (tiktoken's form; also p50k)
cl100k     cl100k_base (tiktoken's current form, possessive quantifiers)
o200k      o200k_base
nanochat   nanochat's GPT-4-style pattern with ``\\p{N}{1,2}``
=========  =================================================================

Everywhere toksmith takes a ``pattern``, a name or a regex string (look-around, possessive
quantifiers, ``\\p{..}``, as in Python's ``regex`` module) is accepted. Named patterns run on
hand-written scanners that split exactly like ``regex.findall`` (checked by fuzzing); other
patterns run on a backtracking regex engine, Rust's ``fancy-regex`` (tiktoken's); a construct it
reads differently from ``regex`` (``$`` before a final newline, ``\\Z``, ``\\h``, ``[[:alpha:]]``,
class set operations, (?i) with letter/case properties or ``i``, empty matches that hide longer
ones...) is refused with a PatternError that says what to write instead, and ``\\X``, ``\\R``
and ``\\N{...}`` are refused too. Text that no match covers is left out, as in tiktoken.
A bare word that is no name (``"CL100K"``) is refused as a typo: as a regex it would match only
itself. OpenAI's encoding names (``cl100k_base``, ``r50k_base``...) name their patterns too.

>>> split("Hello, world! 12345", "cl100k")
['Hello', ',', ' world', '!', ' ', '123', '45']
>>> split("Hello, world! 12345", "nanochat")
['Hello', ',', ' world', '!', ' ', '12', '34', '5']
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Dict, List, Optional, Set, Tuple

from . import _core
from ._regex import _FLAGS, _ZERO_WIDTH_ESCAPES, _lex, can_match_empty
from .errors import ConversionError, PatternError

#: name -> regex text of the named patterns
PATTERNS: Dict[str, str] = dict(_core.NAMED_PATTERNS)

GPT2_PATTERN = PATTERNS["gpt2"]
CL100K_PATTERN = PATTERNS["cl100k"]
O200K_PATTERN = PATTERNS["o200k"]
NANOCHAT_PATTERN = PATTERNS["nanochat"]
#: rustbpe's default pattern (cl100k without the ``\\s++$`` alternative)
RUSTBPE_GPT4_PATTERN: str = _core.RUSTBPE_GPT4_PATTERN


#: a pattern argument that is one bare word: meant as a name, whatever the regex engine makes of it
_BARE_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def _check_pattern_arg(pattern: str) -> None:
    """Refuse a pattern that would drop (nearly) all text: the empty one, and a bare word that is
    no pattern name (``"CL100K"``, ``"gpt-4"``), which as a regex matches only that literal."""
    if not pattern.isascii():
        try:
            pattern.encode("utf-8")
        except UnicodeEncodeError as e:
            raise PatternError(
                f"the split pattern holds a lone surrogate (U+{ord(pattern[e.start]):04X} at index "
                f"{e.start}), which UTF-8 cannot encode and no text can match; pass a valid str "
                f"(to match a character, write it itself or as an escape such as \\x{{...}})"
            ) from None
    if pattern == "":
        raise PatternError(
            "the split pattern is empty: it matches no text, so every text would encode to "
            "[]; pass a pattern name (gpt2, cl100k, o200k, nanochat) or a regex"
        )
    if _BARE_WORD.fullmatch(pattern) and _core.named_pattern(pattern) is None:
        raise PatternError(
            f"{pattern!r} is no pattern name: pass gpt2, cl100k, o200k or nanochat (or an OpenAI "
            f"encoding name such as cl100k_base), or a regex (as a regex, a bare word would match "
            f"only itself and drop all other text)"
        )


@lru_cache(maxsize=256)
def matches_only_empty(pattern: str) -> bool:
    """Whether ``pattern`` (a regex that compiles) can match nothing but the empty string: every
    atom of it is a zero-width escape (``\\b``, ``\\A``...) or inside a look-around, so it finds
    no piece in any text (``\\b``, ``(?=a)``, ``^``). False when the pattern cannot be read here."""
    try:
        items = _lex(pattern)
    except ConversionError:
        return False
    looks: List[bool] = []  # for each open group: whether it is a look-around
    inside = 0  # how many look-arounds are open
    for it in items:
        if it.kind == "open":
            look = it.text in ("(?=", "(?!", "(?<=", "(?<!")
            looks.append(look)
            inside += look
        elif it.kind == "close":
            if looks:
                inside -= looks.pop()
        elif it.kind == "atom" and not inside and it.text not in _ZERO_WIDTH_ESCAPES:
            return False
    return True


def _check_matches_text(pattern: str, what: str = "the split pattern") -> None:
    """Refuse a pattern that can match only the empty string: it drops all text (every text
    encoded to [] without a word), as the empty pattern does."""
    if pattern and matches_only_empty(pattern):
        shown = pattern if len(pattern) <= 200 else pattern[:200] + "..."
        raise PatternError(
            f"{what} {shown!r} can match only the empty string (it holds nothing but anchors, "
            f"\\b, \\B and look-arounds), so it finds no piece in any text and all text would be "
            f"dropped; pass a pattern name (gpt2, cl100k, o200k, nanochat) or a regex that "
            f"matches the text"
        )


# Escapes that mean something else (or nothing) to Python's ``regex`` module, with what to write.
_ESCAPE_HINTS = {
    "\\Z": "Python's regex matches \\Z only at the end of the text, toksmith's engine also before a final "
    "newline; write \\z (end of the text) or (?=\\n?\\z)",
    "\\h": "\\h is a hex digit to toksmith's engine and horizontal space to Python's regex; write "
    "[0-9A-Fa-f] or [^\\S\\n\\v\\f\\r\\x85\\u2028\\u2029]",
    "\\H": "\\H is a non-hex-digit to toksmith's engine and non-horizontal-space to Python's regex; write "
    "[^0-9A-Fa-f] or the class you mean",
    "\\k": "\\k<name> is no back-reference in Python's regex; write (?P=name)",
    "\\e": "\\e is no escape in Python's regex; write \\x1b",
}
_NOT_IN_CLASS_HINTS = {"\\k", "\\e"}  # (\h, \H and \Z are refused inside [...] as well)
#: properties that (?i) folds differently in the two engines: the case-related ones, and letters,
#: marks and Greek (which take U+0345 or U+00B5 under (?i) in toksmith's engine only)
_CASED_PROPERTY = re.compile(
    r"^\^?(?:(?:gc|generalcategory|sc|script|scx|scriptextensions)[=:])?(?:is)?"
    r"(?:l|letter|l&|lc|lu|ll|lt|m|mark|mn|nonspacingmark|combiningmark|grek|greek|cased"
    r"|.*(?:lower|upper|title|case).*)$"
)
#: fuzzy-matching constraints of Python's regex (``(?:abc){e<=1}``), literal text to toksmith's engine
_FUZZY = re.compile(r"\{[^}]*[eisd]\s*(?:<=?|[,:}+])")


def _refuse(pattern: str, what: str) -> None:
    raise PatternError(
        f"custom split pattern {pattern!r}: {what}. (toksmith runs custom patterns on "
        f"fancy-regex; a pattern it would split differently from Python's regex module is "
        f"refused rather than run.)"
    )


@lru_cache(maxsize=256)
def _check_custom_pattern(pattern: str) -> None:
    """Refuse a custom pattern (one that compiles) that toksmith's engine, fancy-regex, would split
    differently from ``regex.findall``: see the checks below, each with what to write instead."""
    try:
        items = _lex(pattern)
    except ConversionError as e:
        _refuse(pattern, str(e).split(": ", 1)[-1])
    state = [""]  # the flags i, m in force, per open group
    opens = [""]  # the text that opened each group ("" for the pattern itself)
    prev = None
    for k, it in enumerate(items):
        kind, text = it.kind, it.text
        flags = _FLAGS.fullmatch(text) if kind in ("open", "flags") else None
        if flags:
            on, _, off = flags.group(1).partition("-")
            bad = sorted(set(on + off) - set("imsu"))
            if bad:
                _refuse(
                    pattern,
                    f"the inline flag {bad[0]!r} in {text!r} "
                    + (
                        "(verbose mode) is not supported: write the pattern without (?x), spaces and comments"
                        if bad[0] == "x"
                        else "means 'swap greedy and lazy' to toksmith's engine and nothing to Python's regex; "
                        "write lazy quantifiers (+?, *?) instead"
                        if bad[0] == "U"
                        else "is not supported; use only the flags i, m, s"
                    ),
                )
            now = "".join(f for f in "im" if (f in on) or (f in state[-1] and f not in off))
            if kind == "flags":
                if opens[-1] not in ("", "(?:") and not _FLAGS.fullmatch(opens[-1]):
                    _refuse(
                        pattern,
                        f"the inline flags {text!r} inside the group {opens[-1]!r}...: toksmith's "
                        f"engine keeps them on after that group ends, Python's regex does not; "
                        f"scope them with (?{flags.group(1)}:...) instead",
                    )
                state[-1] = now
            else:
                state.append(now)
                opens.append(text)
        elif kind == "open":
            state.append(state[-1])
            opens.append(text)
        elif kind == "close":
            state.pop()
            opens.pop()
        elif kind == "quant" and prev is not None and prev.kind == "quant":
            _refuse(
                pattern,
                f"the quantifier {text!r} follows the quantifier {prev.text!r}: Python's regex "
                f"refuses that ('multiple repeat'); put the first in a group, (?:x{prev.text}){text}",
            )
        elif kind == "anchor" and text == "$" and "m" not in state[-1]:
            before = "".join(i.text for i in items[max(0, k - 2) : k])
            if before not in ("\\s+", "\\s*", "\\s++", "\\s*+"):
                _refuse(
                    pattern,
                    "'$' is the end of the text to toksmith's engine, but Python's regex also "
                    "matches it before a newline that ends the text; write \\z (end of the "
                    "text), (?=\\n?\\z) (Python's '$'), or use it only as \\s++$",
                )
        if kind == "atom" and "i" in state[-1]:
            if any(
                _CASED_PROPERTY.search(re.sub(r"[\s_-]", "", name).lower())
                for name in re.findall(r"\\[pP](?:\{([^}]*)\}|(\w))", text)
                for name in name
                if name
            ):
                _refuse(
                    pattern,
                    f"{text!r} under (?i): Python's regex and toksmith's engine case-fold the letter, "
                    f"mark and case properties differently ((?i)\\p{{Lu}} is every cased letter to Python's "
                    f"regex, the upper-case letters and their case pairs to toksmith's engine; U+0345 is a "
                    f"letter under (?i) to toksmith's engine only); keep such \\p{{..}} out of (?i) and "
                    f"(?i:...)",
                )
            if text.startswith("[") or len(text) == 1 or text[:2] in ("\\x", "\\u", "\\U"):
                turkic = _core.split("iI\u0130\u0131", text)
                if 0 < len(turkic) < 4:
                    _refuse(
                        pattern,
                        f"{text!r} under (?i): Python's regex also matches 'i' to '\u0130' (U+0130) and "
                        f"'I' to '\u0131' (U+0131) case-insensitively, toksmith's engine does not; spell "
                        f"the letters out without (?i) (e.g. [iI]), or add \u0130 and \u0131 to the class",
                    )
        if kind == "atom":
            if text.startswith("["):
                body = re.sub(r"\\.", "", text[1:])
                if "[" in body.lstrip("^").lstrip("]"):
                    _refuse(
                        pattern,
                        f"the class {text!r} holds a '[': toksmith's engine reads a nested "
                        f"class, Python's regex a literal '['; write \\[ for the character, or "
                        f"join the classes into one",
                    )
                for op in ("&&", "--", "~~"):
                    if op in body:
                        _refuse(
                            pattern,
                            f"the class {text!r} holds {op!r}: a set operation to toksmith's "
                            f"engine, two literal characters to Python's regex; write the "
                            f"characters you mean (escape them: \\{op[0]}\\{op[0]})",
                        )
                for esc in re.findall(r"\\.", text):
                    if esc in _ESCAPE_HINTS and esc not in _NOT_IN_CLASS_HINTS:
                        _refuse(pattern, _ESCAPE_HINTS[esc])
            elif text[:2] in _ESCAPE_HINTS:
                _refuse(pattern, _ESCAPE_HINTS[text[:2]])
            elif text == "\\{" and _FUZZY.match(
                "{" + "".join(i.text for i in items[k + 1 : k + 12])
            ):
                _refuse(
                    pattern,
                    "'{' starts a fuzzy-matching constraint ({e<=1}) in Python's regex, which "
                    "toksmith's engine does not have (it reads the braces literally); write \\{ "
                    "for a literal brace",
                )
        prev = it
    backtracks = any(
        (it.kind == "open" and it.text in ("(?=", "(?!", "(?<=", "(?<!", "(?>"))
        or (it.kind == "quant" and it.text.endswith("+") and len(it.text) > 1)
        or (it.kind == "atom" and re.fullmatch(r"\\[1-9]\d*|\(\?P=\w+\)", it.text))
        for it in items
    )
    if (
        not backtracks
        and any(it.kind == "alt" for it in items)
        and any(it.kind == "quant" and it.text.endswith("?") and len(it.text) > 1 for it in items)
    ):
        # fancy-regex hands such a pattern to the regex crate, whose lazy quantifiers do not
        # keep the first alternative that matches ('.+?A|.+?,' on 'xx,A': 'xx,' for 'xx,A')
        _refuse(
            pattern,
            "a lazy quantifier (+?, *?, ??, {m,n}?) in a pattern with alternatives can pick a "
            "later alternative over an earlier one that also matches; write greedy or "
            "possessive quantifiers, or put the lazy part in a look-ahead",
        )
    if can_match_empty(pattern) and not _empty_matches_agree(items):
        _refuse(
            pattern,
            "it can match the empty string, and Python's regex goes on after an empty match "
            "differently from toksmith's engine (regex.findall('|a', 'a') finds 'a', toksmith "
            "nothing); make every alternative match at least one character (x+ for x*, drop "
            "empty alternatives, no alternative made only of anchors or look-arounds)",
        )


def _empty_matches_agree(items) -> bool:
    """Whether a pattern that can match the empty string still gives Python's non-empty matches.

    ``regex.findall`` takes, at each position, the first non-empty match there, even after an
    empty one; toksmith's engine skips a position whose first match is empty. They agree if each
    top-level alternative cannot match empty, or matches empty only at the end of the text (ends
    with ``\\z`` or ``$``), or comes after every alternative that can consume text and is either
    zero-width or one greedy ``x*``/``x?``/``x{0,n}`` among zero-width items (longest first).
    """
    alts: list = []
    depth = 0
    cur: list = []
    for it in items:
        if it.kind == "alt" and depth == 0:
            alts.append(cur)
            cur = []
            continue
        depth += (it.kind == "open") - (it.kind == "close")
        cur.append(it)
    alts.append(cur)
    shadowing = False
    for alt in alts:
        text = "".join(i.text for i in alt)
        if not can_match_empty(text) if text else False:
            if shadowing:
                return False
            continue
        if (
            alt
            and alt[-1].kind == "anchor"
            and alt[-1].text == "$"
            and "(?m" not in "".join(i.text for i in items)
            or alt
            and alt[-1].text == "\\z"
        ):
            continue
        greedy, depth = 0, 0
        for i, it in enumerate(alt):
            zero = (
                depth > 0
                or it.kind in ("anchor", "flags")
                or it.text in _ZERO_WIDTH_ESCAPES
                or (it.kind == "open" and it.text in ("(?=", "(?!", "(?<=", "(?<!"))
            )
            if it.kind == "open" and (depth or zero):
                depth += 1
            elif it.kind == "close" and depth:
                depth -= 1
            elif (
                not zero
                and it.kind == "atom"
                and i + 1 < len(alt)
                and alt[i + 1].text in ("*", "?", "{0,1}")
                or (
                    not zero
                    and it.kind == "atom"
                    and i + 1 < len(alt)
                    and re.fullmatch(r"\{0?,\d*\}", alt[i + 1].text)
                )
            ):
                greedy += 1
            elif not zero and not (it.kind == "quant" and greedy and alt[i - 1].kind == "atom"):
                return False
        if greedy > 1:
            return False
        shadowing = True
    return True


#: split patterns read from tokenizer files and objects (toksmith's JSON, tiktoken's files and
#: Encodings, Hugging Face's tokenizer.json, pickles): they run as the engine reads them, exactly
#: as tiktoken (which runs fancy-regex too) runs them, so they are not refused for reading
#: differently from Python's regex (a file that loaded before still loads, with the same ids)
_FILE_PATTERNS: Set[str] = set()


def _from_file(pattern: Any) -> Any:
    """Mark ``pattern`` as read from a tokenizer file (see ``_FILE_PATTERNS``); return it."""
    if isinstance(pattern, str):
        _FILE_PATTERNS.add(pattern)
    return pattern


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> Tuple[str, bool]:
    return _core.compile_pattern(pattern)


def _check_regex(pattern: str) -> Tuple[str, bool]:
    """Compile ``pattern`` (a name or regex): PatternError if it does not compile or is a custom pattern
    that would not split as Python's regex module does (unless it was read from a tokenizer
    file). Returns the core's ``(regex text, hand-written scanner?)``."""
    regex_text, fast = _compiled(pattern)
    if not fast:
        _check_matches_text(
            regex_text
        )  # (after compiling: an invalid pattern gets the engine's message)
    if not fast and pattern not in _FILE_PATTERNS and regex_text not in _FILE_PATTERNS:
        _check_custom_pattern(regex_text)
    return regex_text, fast


def resolve_pattern(pattern: str) -> Tuple[str, Optional[str]]:
    """Return ``(regex text, name or None)`` for a pattern name or regex; raise
    :class:`toksmith.PatternError` if the regex does not compile.

    >>> resolve_pattern("gpt2")[1]
    'gpt2'
    """
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a name or a regex string, not {type(pattern).__name__}")
    _check_pattern_arg(pattern)
    regex_text, _ = _check_regex(pattern)
    name = next((n for n, p in PATTERNS.items() if p == regex_text), None)
    return regex_text, name


def split(text: str, pattern: str = "cl100k", *, engine: str = "auto") -> List[str]:
    """Split ``text`` into pre-tokenization pieces.

    ``engine="regex"`` forces the regex engine even for named patterns (the reference the
    hand-written scanners are checked against). Empty matches of a custom pattern are dropped.
    Lone surrogates (which UTF-8 cannot encode) are split as U+FFFD, as ``encode`` reads them.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a name or a regex string, not {type(pattern).__name__}")
    if not isinstance(engine, str):
        raise TypeError(f"engine must be 'auto' or 'regex', not {type(engine).__name__}")
    _check_pattern_arg(pattern)
    _check_regex(pattern)
    try:
        return _core.split(text, pattern, engine)
    except UnicodeEncodeError:  # lone surrogates: read as U+FFFD, as encode() does
        if not engine.isascii():
            raise ValueError(f"engine must be 'auto' or 'regex', not {engine!r}") from None
        fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return _core.split(fixed, pattern, engine)


__all__ = [
    "PATTERNS",
    "GPT2_PATTERN",
    "CL100K_PATTERN",
    "O200K_PATTERN",
    "NANOCHAT_PATTERN",
    "RUSTBPE_GPT4_PATTERN",
    "resolve_pattern",
    "split",
]
