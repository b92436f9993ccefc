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
patterns run on a backtracking regex engine, Rust's ``fancy-regex`` (tiktoken's), whose syntax
differs from ``regex``'s in a few places: ``\\h`` is a hex digit, ``[[:alpha:]]`` is ASCII only,
``\\X``, ``\\R`` and ``\\N{...}`` are refused. Text that no match covers is left out, as in tiktoken.
A bare word that is no name (``"CL100K"``) is refused as a typo: as a regex it would match only
itself. OpenAI's encoding names (``cl100k_base``, ``r50k_base``...) name their patterns too.

>>> split("Hello, world! 12345", "cl100k")
['Hello', ',', ' world', '!', ' ', '123', '45']
>>> split("Hello, world! 12345", "nanochat")
['Hello', ',', ' world', '!', ' ', '12', '34', '5']
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from . import _core

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
    if pattern == "":
        from .errors import PatternError

        raise PatternError("the split pattern is empty: it matches no text, so every text would encode to "
                           "[]; pass a pattern name (gpt2, cl100k, o200k, nanochat) or a regex")
    if _BARE_WORD.fullmatch(pattern) and _core.named_pattern(pattern) is None:
        from .errors import PatternError

        raise PatternError(f"{pattern!r} is no pattern name: pass gpt2, cl100k, o200k or nanochat (or an OpenAI "
                           f"encoding name such as cl100k_base), or a regex (as a regex, a bare word would match "
                           f"only itself and drop all other text)")


def resolve_pattern(pattern: str) -> Tuple[str, Optional[str]]:
    """Return ``(regex text, name or None)`` for a pattern name or regex; raise
    :class:`toksmith.PatternError` if the regex does not compile.

    >>> resolve_pattern("gpt2")[1]
    'gpt2'
    """
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a name or a regex string, not {type(pattern).__name__}")
    _check_pattern_arg(pattern)
    regex_text, _fast = _core.compile_pattern(pattern)
    name = next((n for n, p in PATTERNS.items() if p == regex_text), None)
    return regex_text, name


def split(text: str, pattern: str = "cl100k", *, engine: str = "auto") -> List[str]:
    """Split ``text`` into pre-tokenization pieces.

    ``engine="regex"`` forces the regex engine even for named patterns (the reference the
    hand-written scanners are checked against). Empty matches of a custom pattern are dropped.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    if isinstance(pattern, str):
        _check_pattern_arg(pattern)
    return _core.split(text, pattern, engine)


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
