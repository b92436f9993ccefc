"""Template-driven sequences: ``build_sequence`` and its inverse ``parse_sequence``.

A template spec is a ``;``-separated list of elements (seed 003):

* a bare token: ``BOS`` or ``ATN`` (``<ATN>`` exactly once);
* ``FRAME:key``: emit the frame(s) for ``context[key]``, e.g. ``CWD:cwd``.

Frames before ``<ATN>`` are context; frames after it are the prediction
target. The last element must be a frame after ``<ATN>``: it is left *open*
(no ``<END>``) so the model continues it, and in training mode ``<EOS>``
follows it::

    <BOS> <CWD> /home/user/lilush <END> ... <ATN> <CMD> git com
    <BOS> [context frames] <ATN> <CMD> [full command bytes] <EOS>

Context values by frame (``None``, ``""``, empty lists and dicts whose entries
are all empty mean "absent": the frame is omitted; an absent target is an empty
open frame):

* ``HIST``: a list of ``{"cmd": str, "exit": int | str | None}`` (or plain
  command strings), oldest first: one ``<HIST>`` frame per item, ``<EXIT>``
  omitted when ``exit`` is None.
* ``COMP``: a list of candidate strings: one ``<COMP>`` frame, ``<NEXT>``
  between candidates.
* ``WORD`` / ``QUOTE`` / ``REF``: a string, or a dict with ``"text"`` and the
  frame's sub-tokens (``pos``/``note``/``ipa``, ``by``, ``note``).
* ``ENV``: a string, a list of strings, or a dict rendered as ``key:value``
  items (``{"venv": "myproject"}`` -> ``<ENV> venv:myproject <END>``).
* any other frame: a string (bytes accepted everywhere text is).

A list for a frame other than ``COMP`` gives repeated frames. Lists are capped
at 15 items (``MAX_FRAME_ITEMS``): the newest 15 history items (the end of
the list), the first 15 of anything else. The result must fit ``l_max``; when
it does not, whole history items are dropped oldest first, then completion
candidates from the end of the list, then (a toksmith extension of the seed)
the remaining context frames nearest ``<ATN>`` first. If the frames after
``<ATN>`` (the input) do not fit on their own, ValueError is raised.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Mapping, NamedTuple, Optional, Tuple, Union

from .._checks import check_bool, check_int, require_numpy, to_bytes
from .frames import SUBTOKEN_KEYWORDS, frame_body, split_body
from .vocab import (
    ATN,
    BOS,
    BYTE_TOKENS,
    CMD,
    COMP,
    CWD,
    DEF,
    DEFAULT_L_MAX,
    END_TOKEN,
    ENV,
    EOS,
    FRAME_TOKENS,
    GIT,
    HIST,
    MAX_FRAME_ITEMS,
    NEXT,
    PAD,
    QUERY,
    QUOTE,
    REF,
    SUBTOKENS,
    VOCAB_SIZE,
    WORD,
    check_id,
    format_tokens,
    resolve_token,
    token_name,
)

__all__ = [
    "TEMPLATES",
    "DEFAULT_KEYS",
    "Template",
    "TemplateItem",
    "parse_template",
    "TokenSequence",
    "Dropped",
    "ParsedContext",
    "build_sequence",
    "parse_sequence",
]

#: Named template specs. ``"shell"`` is the seed's shell context window; the
#: others are toksmith conventions for the seed's other frame families.
TEMPLATES: Dict[str, str] = {
    "shell": "BOS;CWD:cwd;GIT:git;HIST:history;COMP:completions;ENV:env;ATN;CMD:input",
    "dictionary": "BOS;WORD:word;ATN;DEF:definition",
    "quote": "BOS;QUERY:query;ATN;QUOTE:quote",
    "reference": "BOS;QUERY:query;ATN;REF:ref",
}

#: Context key of each frame when no template says otherwise (used by
#: :func:`parse_sequence`); these are the keys of the seed's Lua example.
DEFAULT_KEYS: Dict[int, str] = {
    CWD: "cwd",
    GIT: "git",
    HIST: "history",
    COMP: "completions",
    ENV: "env",
    CMD: "input",
    QUERY: "query",
    WORD: "word",
    DEF: "definition",
    QUOTE: "quote",
    REF: "ref",
}

_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_BARE_ALLOWED = (BOS, ATN)
_SUBTOKEN_IDS = frozenset(sub for subs in SUBTOKENS.values() for sub in subs)


class TemplateItem(NamedTuple):
    """One template element: a token id and, for frames, the context key."""

    token: int
    key: Optional[str]

    def __str__(self) -> str:
        name = token_name(self.token).strip("<>")
        return name if self.key is None else f"{name}:{self.key}"


class Template:
    """A parsed template spec (immutable). ``str(template)`` is the canonical spec.

    >>> t = Template.parse("BOS; CWD:cwd ;ATN;CMD:input")
    >>> str(t), t.target
    ('BOS;CWD:cwd;ATN;CMD:input', TemplateItem(token=264, key='input'))
    """

    __slots__ = ("items", "atn_index")

    def __init__(self, items: Iterable[TemplateItem]) -> None:
        if isinstance(items, (str, bytes, bytearray)):
            raise TypeError(
                "Template() takes (token, key) items; use Template.parse() or parse_template() for a spec string"
            )
        items = tuple(_template_item(item) for item in items)
        _validate_items(items)
        object.__setattr__(self, "items", items)
        object.__setattr__(self, "atn_index", [t.token for t in items].index(ATN))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Template is immutable")

    @classmethod
    def parse(cls, spec: str) -> "Template":
        """Parse ``"BOS;CWD:cwd;...;ATN;CMD:input"`` (names are case-insensitive)."""
        if not isinstance(spec, str):
            raise TypeError(f"template spec must be a str, not {type(spec).__name__}")
        items = []
        for index, raw in enumerate(spec.split(";")):
            element = raw.strip()
            if not element:
                raise ValueError(f"template {spec!r}: element {index} is empty")
            name, sep, key = element.partition(":")
            name, key = name.strip(), key.strip()
            try:
                token = resolve_token(name)
            except ValueError:
                hint = (
                    f"; named templates: {', '.join(TEMPLATES)}" if index == 0 and not sep else ""
                )
                raise ValueError(
                    f"template {spec!r}: unknown token {name!r} in element {index}{hint}"
                ) from None
            if sep and not key:
                raise ValueError(
                    f"template {spec!r}: element {index} ({element!r}) has an empty key"
                )
            items.append(TemplateItem(token, key if sep else None))
        try:
            return cls(items)
        except ValueError as exc:
            raise ValueError(f"template {spec!r}: {exc}") from None

    @property
    def spec(self) -> str:
        """The canonical spec string."""
        return ";".join(str(item) for item in self.items)  # type: ignore[attr-defined]

    @property
    def target(self) -> TemplateItem:
        """The last element: the open frame the model continues."""
        return self.items[-1]  # type: ignore[attr-defined]

    @property
    def keys(self) -> Tuple[str, ...]:
        """The context keys, in template order."""
        return tuple(item.key for item in self.items if item.key is not None)  # type: ignore[attr-defined]

    def frame_keys(self) -> Dict[int, str]:
        """Frame token -> context key."""
        return {item.token: item.key for item in self.items if item.key is not None}  # type: ignore[attr-defined]

    def __str__(self) -> str:
        return self.spec

    def __repr__(self) -> str:
        return f"Template({self.spec!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Template) and other.items == self.items  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self.items)  # type: ignore[attr-defined]


def _template_item(item: Any) -> TemplateItem:
    """A (token, key) pair with the token checked (numpy ints become ints) and the key a str or None."""
    if isinstance(item, (str, bytes, bytearray)):
        raise TypeError(f"template items are (token, key) pairs, not {type(item).__name__}")
    try:
        token, key = item
    except (TypeError, ValueError):
        raise TypeError(f"template items are (token, key) pairs, got {item!r}") from None
    if key is not None and not isinstance(key, str):
        raise TypeError(f"a template key must be a str or None, not {type(key).__name__}")
    return TemplateItem(check_id(token, "template token"), key)


def _validate_items(items: Tuple[TemplateItem, ...]) -> None:
    atn = [i for i, item in enumerate(items) if item.token == ATN]
    if len(atn) != 1:
        raise ValueError(f"<ATN> must appear exactly once, found {len(atn)}")
    seen_frames: Dict[int, int] = {}
    seen_keys: Dict[str, int] = {}
    for index, (token, key) in enumerate(items):
        name = token_name(token)
        if token in FRAME_TOKENS:
            if key is None:
                raise ValueError(
                    f"frame {name} (element {index}) needs a context key, e.g. {name.strip('<>')}:key"
                )
            if not isinstance(key, str) or not _KEY_RE.match(key):
                raise ValueError(f"element {index}: context key {key!r} is not an identifier")
            if token in seen_frames:
                raise ValueError(
                    f"frame {name} appears twice (elements {seen_frames[token]} and {index})"
                )
            if key in seen_keys:
                raise ValueError(
                    f"context key {key!r} is used twice (elements {seen_keys[key]} and {index})"
                )
            seen_frames[token] = index
            seen_keys[key] = index
        elif token in _BARE_ALLOWED:
            if key is not None:
                raise ValueError(f"{name} (element {index}) takes no context key")
            if token == BOS and index != 0:
                raise ValueError(f"<BOS> may only be the first element (found at element {index})")
        elif token == EOS:
            raise ValueError(
                "<EOS> is not part of a template: build_sequence(..., training=True) appends it"
            )
        elif token in (PAD,):
            raise ValueError("<PAD> is not part of a template")
        else:
            what = "a sub-token" if token in _SUBTOKEN_IDS else "a reserved id"
            raise ValueError(f"{name} (element {index}) is {what}, not a frame or BOS/ATN")
    if items[-1].token not in FRAME_TOKENS or len(items) - 1 == atn[0]:
        raise ValueError(
            "the last element must be a frame after <ATN> (the prediction target, e.g. CMD:input)"
        )


def parse_template(spec: Union[str, Template]) -> Template:
    """Parse a template spec or a name from :data:`TEMPLATES`.

    >>> parse_template("shell").keys
    ('cwd', 'git', 'history', 'completions', 'env', 'input')
    """
    if isinstance(spec, Template):
        return spec
    if isinstance(spec, str) and spec in TEMPLATES:
        return Template.parse(TEMPLATES[spec])
    return Template.parse(spec)


class Dropped:
    """What :func:`build_sequence` left out.

    * ``history``: history items dropped to fit ``l_max`` (oldest first);
    * ``completions``: completion candidates dropped to fit (in list order);
    * ``frames``: context keys whose frames were dropped whole to fit;
    * ``capped``: ``{key: [items]}`` cut by the 15-item cap (the seed drops
      these silently; they are listed here for information).

    It is truthy when anything was dropped to fit ``l_max`` (the cap alone does
    not make it truthy), and supports ``dropped["history"]``.
    """

    __slots__ = ("history", "completions", "frames", "capped")

    def __init__(self) -> None:
        self.history: List[Any] = []
        self.completions: List[Any] = []
        self.frames: List[str] = []
        self.capped: Dict[str, List[Any]] = {}

    def __bool__(self) -> bool:
        return bool(self.history or self.completions or self.frames)

    def __getitem__(self, name: str) -> Any:
        if name not in self.__slots__:
            raise KeyError(name)
        return getattr(self, name)

    def as_dict(self) -> Dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Dropped):
            return self.as_dict() == other.as_dict()
        if isinstance(other, Mapping):
            return self.as_dict() == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.as_dict().items() if v)
        return f"Dropped({fields})"


class TokenSequence(list):
    """The ids built by :func:`build_sequence`: a ``list`` of ints plus details.

    Compares equal to a plain list of the same ids. Extra attributes:
    ``dropped`` (:class:`Dropped`), ``template`` (:class:`Template`),
    ``l_max`` and ``training``.
    """

    def __init__(
        self,
        ids: Iterable[int] = (),
        *,
        dropped: Optional[Dropped] = None,
        template: Optional[Template] = None,
        l_max: int = DEFAULT_L_MAX,
        training: bool = False,
    ) -> None:
        if isinstance(ids, str) or ids is None:  # a str was taken as a list of characters
            raise TypeError(f"ids must be an iterable of token ids, not {type(ids).__name__}")
        super().__init__(ids)
        if set(map(type, self)) - {int}:  # numpy integers made ints; anything else named
            self[:] = [check_id(t, f"ids[{k}]") for k, t in enumerate(self)]
        elif self and (min(self) < 0 or max(self) >= VOCAB_SIZE):
            bad = next(t for t in self if not 0 <= t < VOCAB_SIZE)
            check_id(bad, f"ids[{self.index(bad)}]")
        if dropped is not None and not isinstance(dropped, Dropped):
            raise TypeError(f"dropped must be a calm.Dropped or None, not {type(dropped).__name__}")
        if template is not None and not isinstance(template, Template):
            raise TypeError(
                f"template must be a calm.Template or None, not {type(template).__name__}"
            )
        self.dropped = dropped if dropped is not None else Dropped()
        self.template = template
        self.l_max = check_int(l_max, "l_max", minimum=1)
        self.training = check_bool(training, "training")

    @property
    def ids(self) -> List[int]:
        """The ids as a plain list."""
        return list(self)

    def to_numpy(self) -> Any:
        """The ids as a numpy ``uint16`` array."""
        np = require_numpy("TokenSequence.to_numpy")
        return np.asarray(self, dtype=np.uint16)

    def format(self) -> str:
        """Readable form, e.g. ``'<BOS> <CWD> /tmp <END> <ATN> <CMD> ls'``."""
        return format_tokens(self)

    def __repr__(self) -> str:
        return f"TokenSequence({list.__repr__(self)}, dropped={self.dropped!r})"


class ParsedContext(dict):
    """The context dict returned by :func:`parse_sequence`; ``.training`` is
    True when the sequence ended with ``<EOS>``."""

    training: bool = False


# --------------------------------------------------------------------------- building


def _is_absent(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, (str, bytes, bytearray, memoryview, list, tuple, dict)):
        return len(value) == 0
    if isinstance(value, Mapping):
        return len(value) == 0
    return False


def _unit_body(frame: int, value: object, where: str) -> List[int]:
    """Body tokens (between frame token and <END>) of one frame for one value."""
    subs: Dict[int, object] = {}
    if isinstance(value, Mapping):
        if frame == HIST:
            allowed = {"cmd", "exit"}
            main = "cmd"
        else:
            allowed = {"text"} | {
                SUBTOKEN_KEYWORDS[s] for s in SUBTOKENS.get(frame, ()) if s in SUBTOKEN_KEYWORDS
            }
            main = "text"
        unknown = sorted(str(k) for k in value if k not in allowed)
        if unknown:
            raise ValueError(
                f"{where} has unknown key(s) {', '.join(map(repr, unknown))} for a {token_name(frame)} frame "
                f"(allowed: {', '.join(sorted(allowed))})"
            )
        if frame == HIST and "cmd" not in value:
            raise ValueError(f"{where} needs a 'cmd' entry")
        content = value.get(main, "")
        if content is None:
            content = ""
        for sub in SUBTOKENS.get(frame, ()):
            if sub in SUBTOKEN_KEYWORDS:
                subs[sub] = value.get(SUBTOKEN_KEYWORDS[sub])
    elif isinstance(value, (str, bytes, bytearray, memoryview)):
        content = value
    else:
        what = "a dict {'cmd': ..., 'exit': ...} or a str" if frame == HIST else "str or bytes"
        raise TypeError(f"{where} must be {what}, not {type(value).__name__}")
    try:
        return frame_body(frame, content, subs)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{where}: {exc}") from None


class _Part:
    """One template element's contribution. ``units`` are droppable pieces."""

    __slots__ = ("key", "frame", "tokens", "units", "items", "close", "droppable")

    def __init__(self, key: Optional[str], frame: int, droppable: bool, close: bool) -> None:
        self.key = key
        self.frame = frame
        self.tokens: List[int] = []  # fixed tokens (bare BOS/ATN)
        self.units: List[List[int]] = []  # bodies: one per frame, or per candidate for COMP
        self.items: List[Any] = []  # the original context items behind ``units``
        self.close = close
        self.droppable = droppable

    def length(self) -> int:
        if self.tokens:
            return len(self.tokens)
        if self.frame == COMP:
            if not self.units and self.close:
                return 0
            # COMP + bodies + NEXT separators + END
            return (
                1
                + sum(len(u) for u in self.units)
                + max(len(self.units) - 1, 0)
                + (1 if self.close else 0)
            )
        return sum(len(u) + 1 + (1 if self.close else 0) for u in self.units)

    def emit(self, out: List[int]) -> None:
        if self.tokens:
            out.extend(self.tokens)
            return
        if self.frame == COMP:
            if not self.units and self.close:
                return
            out.append(COMP)
            for i, unit in enumerate(self.units):
                if i:
                    out.append(NEXT)
                out.extend(unit)
            if self.close:
                out.append(END_TOKEN)
            return
        for unit in self.units:
            out.append(self.frame)
            out.extend(unit)
            if self.close:
                out.append(END_TOKEN)


def _make_part(
    item: TemplateItem, value: object, *, target: bool, context_frame: bool, dropped: Dropped
) -> _Part:
    frame, key = item.token, item.key
    assert key is not None
    part = _Part(key, frame, droppable=context_frame, close=not target)
    where = f"context[{key!r}]"
    if _is_absent(value):
        if target:
            part.units.append([])  # an empty open frame: the model starts the input
            part.items.append("")
        return part
    if frame == COMP:
        if isinstance(value, (str, bytes, bytearray, memoryview)):
            values: List[Any] = [value]
        elif isinstance(value, (list, tuple)):
            values = list(value)
        else:
            raise TypeError(
                f"{where} must be a list of completion candidates, not {type(value).__name__}"
            )
        if len(values) > MAX_FRAME_ITEMS:
            dropped.capped[key] = values[MAX_FRAME_ITEMS:]
            values = values[:MAX_FRAME_ITEMS]
        for i, candidate in enumerate(values):
            part.units.append(list(to_bytes(candidate, f"{where}[{i}]")))
            part.items.append(candidate)
        return part
    if isinstance(value, (list, tuple)):
        if target:
            raise ValueError(
                f"{where} is the target frame {token_name(frame)} and takes one value, not a list"
            )
        values = list(value)
        indexed = True
    elif frame == ENV and isinstance(value, Mapping):
        values = []
        for k, v in value.items():
            if not isinstance(k, str) or not isinstance(v, (str, int)) or isinstance(v, bool):
                raise TypeError(f"{where} as a dict must map str to str, got {k!r}: {v!r}")
            values.append(f"{k}:{v}")
        indexed = True
    else:
        values = [value]
        indexed = False
    if len(values) > MAX_FRAME_ITEMS:
        if frame == HIST:  # the newest (last) history items are kept
            dropped.capped[key] = values[:-MAX_FRAME_ITEMS]
            values = values[-MAX_FRAME_ITEMS:]
        else:
            dropped.capped[key] = values[MAX_FRAME_ITEMS:]
            values = values[:MAX_FRAME_ITEMS]
    for i, one in enumerate(values):
        if one is None:
            raise TypeError(f"{where}[{i}] is None")
        part.units.append(_unit_body(frame, one, f"{where}[{i}]" if indexed else where))
        part.items.append(one)
    if not indexed and not target and frame != HIST and part.units == [[]]:
        # a dict whose text and sub-tokens are all absent is absent, like "": an
        # empty frame here would parse back as "" and vanish when rebuilt
        part.units.clear()
        part.items.clear()
    return part


def _resolve_model_or_template(model_or_template: Any) -> Tuple[Template, Optional[int]]:
    if isinstance(model_or_template, (str, Template)):
        return parse_template(model_or_template), None
    metadata = getattr(model_or_template, "metadata", None)
    header = getattr(model_or_template, "header", None)
    if metadata is not None and hasattr(metadata, "template"):
        spec = metadata.template
        if not spec:
            raise ValueError(
                "the model has no template in its metadata; pass a template spec instead"
            )
        l_max = getattr(header, "l_max", None)
        if l_max is not None:
            l_max = check_int(l_max, "the model's header l_max", minimum=0) or None
        try:
            return parse_template(spec), l_max
        except ValueError as exc:
            raise ValueError(f"the model's metadata template is invalid: {exc}") from None
    raise TypeError(
        "build_sequence expects a template spec, a name in calm.TEMPLATES, a calm.Template or a "
        f"model from calm.read_cwgt, not {type(model_or_template).__name__}"
    )


def build_sequence(
    model_or_template: Any,
    context: Mapping[str, Any],
    *,
    training: bool = False,
    l_max: Optional[int] = None,
    reserve: int = 0,
) -> TokenSequence:
    """Build a model input from a template and a context dict.

    ``model_or_template`` is a spec string (``"BOS;CWD:cwd;ATN;CMD:input"``),
    a name in :data:`TEMPLATES` (``"shell"``), a :class:`Template`, or a model
    from :func:`read_cwgt` (its metadata template, and its header ``l_max``
    unless ``l_max`` is given; 768 otherwise). ``training=True`` appends
    ``<EOS>``. ``reserve`` keeps that many positions free (e.g. for
    generation). Every context key must be one the template names (absent
    keys are fine): an unknown key (a typo such as ``"cdw"``) raises
    ValueError naming it and the template's keys, instead of its value
    being lost.

    Returns a :class:`TokenSequence`: a list of ids whose ``.dropped``
    (:class:`Dropped`) tells what was cut to fit ``l_max``. Raises ValueError
    when even the frames after ``<ATN>`` do not fit.

    >>> seq = build_sequence("shell", {"cwd": "/tmp", "input": "ls"})
    >>> seq
    TokenSequence([257, 260, 47, 116, 109, 112, 269, 259, 264, 108, 115], dropped=Dropped())
    >>> seq.format()
    '<BOS> <CWD> /tmp <END> <ATN> <CMD> ls'
    >>> build_sequence("shell", {"input": "ls"}, training=True)[-3:]
    [108, 115, 258]
    >>> ctx = {"history": [{"cmd": "x" * 20, "exit": 0}] * 3, "input": "ls"}
    >>> seq = build_sequence("shell", ctx, l_max=40)
    >>> len(seq) <= 40, len(seq.dropped.history)
    (True, 2)
    """
    template, model_l_max = _resolve_model_or_template(model_or_template)
    if not isinstance(context, Mapping):
        raise TypeError(f"context must be a dict (mapping), not {type(context).__name__}")
    valid = template.keys
    unknown = [k for k in context if k not in valid]
    if unknown:
        raise ValueError(
            f"context has unknown key(s) {', '.join(map(repr, unknown))}: template {template.spec!r} uses only "
            f"{', '.join(map(repr, valid))}; fix or remove the other keys"
        )
    training = check_bool(training, "training")
    if l_max is not None:
        limit = check_int(l_max, "l_max", minimum=1)
    else:
        limit = model_l_max or DEFAULT_L_MAX
    reserve = check_int(reserve, "reserve", minimum=0)
    budget = limit - reserve
    if budget < 1:
        raise ValueError(f"reserve={reserve} leaves no room in l_max={limit}")

    dropped = Dropped()
    parts: List[_Part] = []
    last = len(template.items) - 1  # type: ignore[attr-defined]
    for index, item in enumerate(template.items):  # type: ignore[attr-defined]
        if item.key is None:
            fixed = _Part(None, item.token, droppable=False, close=True)
            fixed.tokens = [item.token]
            parts.append(fixed)
            continue
        parts.append(
            _make_part(
                item,
                context.get(item.key),
                target=index == last,
                context_frame=index < template.atn_index,  # type: ignore[attr-defined]
                dropped=dropped,
            )
        )
    if training:
        eos = _Part(None, EOS, droppable=False, close=True)
        eos.tokens = [EOS]
        parts.append(eos)

    minimum = sum(p.length() for p in parts if not p.droppable)
    if minimum > budget:
        room = f"l_max={limit}" + (f" minus reserve={reserve}" if reserve else "")
        raise ValueError(
            f"the input alone needs {minimum} tokens (with <BOS>, <ATN>"
            f"{' and <EOS>' if training else ''}) but only {budget} fit ({room})"
        )
    total = sum(p.length() for p in parts)
    if total > budget:
        # 1. the oldest history items
        for part in parts:
            if part.droppable and part.frame == HIST:
                while total > budget and part.units:
                    before = part.length()
                    part.units.pop(0)
                    dropped.history.append(part.items.pop(0))
                    total -= before - part.length()
        # 2. completion candidates, from the end of the list
        for part in parts:
            if part.droppable and part.frame == COMP:
                removed: List[Any] = []
                while total > budget and part.units:
                    before = part.length()
                    part.units.pop()
                    removed.append(part.items.pop())
                    total -= before - part.length()
                dropped.completions.extend(reversed(removed))
        # 3. whole context frames, nearest <ATN> first
        for part in reversed(parts):
            if total <= budget:
                break
            if part.droppable and part.units:
                total -= part.length()
                part.units.clear()
                part.items.clear()
                assert part.key is not None
                dropped.frames.append(part.key)
    assert total <= budget
    out: List[int] = []
    for part in parts:
        part.emit(out)
    assert len(out) == total, (len(out), total)
    return TokenSequence(out, dropped=dropped, template=template, l_max=limit, training=training)


# --------------------------------------------------------------------------- parsing


def _value(content: object, subs: Dict[str, object], frame: int) -> object:
    if frame == HIST:
        item: Dict[str, object] = {"cmd": content}
        item.update(subs)
        return item
    if subs:
        out: Dict[str, object] = {"text": content}
        out.update(subs)
        return out
    return content


def parse_sequence(
    ids: Iterable[int], template: Union[str, Template, None] = None
) -> ParsedContext:
    """Parse a sequence back into a context dict (the inverse of :func:`build_sequence`).

    Frames map to keys through ``template`` (a spec, a name in
    :data:`TEMPLATES`, or a :class:`Template`) or :data:`DEFAULT_KEYS`.
    Values come back in canonical form: text as str (bytes when not valid
    UTF-8), history as a list of ``{"cmd", "exit"}`` dicts (``exit`` an int
    when it is a decimal integer, absent when there was no ``<EXIT>``),
    completions as a list, a frame with sub-tokens as a dict with ``"text"``,
    a repeated frame as a list, any other frame as one value (a lone empty
    context frame as ``[""]``, since ``""`` would mean absent). Leading and
    trailing ``<PAD>`` are ignored; the result's ``.training`` is True when
    the sequence ends with ``<EOS>``. Malformed sequences raise ValueError
    naming the position.

    >>> parse_sequence([257, 260, 47, 116, 109, 112, 269, 259, 264, 108, 115])
    {'cwd': '/tmp', 'input': 'ls'}
    """
    if isinstance(ids, (str, bytes, bytearray, memoryview)):
        raise TypeError(f"parse_sequence expects a sequence of token ids, not {type(ids).__name__}")
    toks = [check_id(t) for t in ids]
    keys = dict(DEFAULT_KEYS) if template is None else parse_template(template).frame_keys()
    start, stop = 0, len(toks)
    while start < stop and toks[start] == PAD:
        start += 1
    while stop > start and toks[stop - 1] == PAD:
        stop -= 1
    result = ParsedContext()
    training = False
    if stop > start and toks[stop - 1] == EOS:
        training = True
        stop -= 1
    if start < stop and toks[start] == BOS:
        start += 1
    collected: Dict[str, List[Tuple[int, object, bool]]] = {}
    seen_atn = False
    pos = start
    while pos < stop:
        tok = toks[pos]
        if tok == ATN:
            if seen_atn:
                raise ValueError(f"second <ATN> at position {pos}: it must appear exactly once")
            seen_atn = True
            pos += 1
            continue
        if tok not in FRAME_TOKENS:
            what = f"byte {tok}" if tok < BYTE_TOKENS else token_name(tok)
            raise ValueError(f"expected a frame token or <ATN> at position {pos}, found {what}")
        if tok not in keys:
            raise ValueError(f"frame {token_name(tok)} at position {pos} is not in the template")
        end = pos + 1
        while (
            end < stop
            and toks[end] != END_TOKEN
            and (toks[end] < BYTE_TOKENS or toks[end] in SUBTOKENS.get(tok, ()))
        ):
            end += 1
        if end < stop and toks[end] != END_TOKEN:
            raise ValueError(
                f"unexpected {token_name(toks[end])} at position {end} inside a {token_name(tok)} frame"
            )
        if end >= stop and not seen_atn:
            raise ValueError(
                f"{token_name(tok)} frame at position {pos} has no <END> and no <ATN> precedes it"
            )
        content, subs = split_body(tok, toks[pos + 1 : end], offset=pos + 1)
        collected.setdefault(keys[tok], []).append((tok, _value(content, subs, tok), seen_atn))
        pos = end + 1
    if not seen_atn:
        raise ValueError("the sequence has no <ATN>")
    for key, values in collected.items():
        frame = values[0][0]
        if frame == COMP:
            items: List[object] = []
            for _, v, _ in values:
                items.extend(v)  # type: ignore[arg-type]
            result[key] = items
        elif frame == HIST:
            result[key] = [v for _, v, _ in values]
        elif len(values) == 1 and not (values[0][1] == "" and not values[0][2]):
            result[key] = values[0][1]
        else:
            # several frames, or one empty context frame: as a single value ""
            # would mean "absent" and the frame would be lost when rebuilt
            result[key] = [v for _, v, _ in values]
    result.training = training
    return result
