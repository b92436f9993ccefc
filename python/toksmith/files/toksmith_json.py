"""toksmith's tokenizer file: one versioned, human-readable JSON document.

::

    {
      "format": "toksmith",
      "version": 1,
      "name": "...",
      "pattern": "<regex text>",
      "pattern_name": "cl100k" | null,
      "vocab": {"<token in the byte-level alphabet>": id, ...},   # mergeable tokens
      "merges": ["Ġ t", ...] | null,     # in order; null if the ranks have no merge list
      "special_tokens": {"<|bos|>": 65527, ...},
      "pinned_tokens": {...},
      "metadata": {...}                  # e.g. the training corpus summary
    }

Token bytes are spelled with GPT-2's byte-level alphabet (see :mod:`toksmith.bytelevel`), so
the file is plain JSON text. Loading never executes anything; every inconsistency (truncated
JSON, wrong version, duplicate ids, merges whose result is not in the vocab...) raises
:class:`toksmith.TokenizerFileError` naming what is wrong.
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from .. import _core
from .._jsontables import JsonTables, duplicate_keys_hook, split_json_tables
from .._paths import fspath
from ..bytelevel import str_to_token, token_to_str
from ..errors import MergesError, TokenizerFileError
from ..pretokenize import _from_file
from ..spec import TokenizerSpec
from ._common import atomic_write, read_tokenizer_file

FORMAT = "toksmith"
VERSION = 1


def to_dict(tok) -> Dict[str, Any]:
    """The JSON document of a tokenizer (anything with a Tokenizer's accessors)."""
    ranks = tok.mergeable_ranks()
    try:
        merges: Optional[List[str]] = [
            f"{token_to_str(a)} {token_to_str(b)}" for a, b in tok.merges()
        ]
    except MergesError:
        merges = None
    out = {
        "format": FORMAT,
        "version": VERSION,
        "name": tok.name,
        "pattern": tok.pattern,
        "pattern_name": tok.pattern_name,
        "vocab": {token_to_str(b): i for b, i in sorted(ranks.items(), key=lambda kv: kv[1])},
        "merges": merges,
        "special_tokens": tok.special_tokens,
        "pinned_tokens": tok.pinned_tokens,
        "metadata": tok.metadata,
    }
    # written only when there is one, so files without stay as they were
    normalizer = getattr(tok, "normalizer", None)
    if normalizer is not None:
        out["normalizer"] = normalizer
    template = getattr(tok, "template", None)
    if template is not None:
        out["template"] = {"prefix": template[0], "suffix": template[1]}
    return out


def _check_json_keys(value: Any, where: str) -> None:
    """Refuse dict keys that JSON would turn into other strings (``1`` -> ``"1"``, ``True`` ->
    ``"true"``): they load back changed, and ``{1: .., "1": ..}`` even as one key twice, of which
    a reader keeps one."""
    stack = [(value, where)]
    while stack:
        v, at = stack.pop()
        if isinstance(v, dict):
            for k, x in v.items():
                if not isinstance(k, str):
                    try:
                        as_json = f"it would load back as the str {next(iter(json.loads(json.dumps({k: 0}))))!r}"
                    except (TypeError, ValueError):
                        as_json = "JSON has no such keys"
                    raise TypeError(
                        f"cannot save the tokenizer as JSON: the key {k!r} in {at} is a "
                        f"{type(k).__name__}, not a str ({as_json}); use str keys in the metadata"
                    )
                stack.append((x, f"{at}[{k!r}]"))
        elif isinstance(v, (list, tuple)):
            stack.extend((x, f"{at}[{n}]") for n, x in enumerate(v))


def check_saveable(tok) -> None:
    """What load() accepts of a tokenizer's name and metadata, checked before writing: a file
    that cannot be loaded back is refused (also for the Hugging Face ``tokenizer.json``, which
    carries them)."""
    if tok.name is not None and not isinstance(tok.name, str):
        raise TypeError(
            f"cannot save the tokenizer: its name must be a str (or None), not {type(tok.name).__name__}"
        )
    if tok.metadata is not None and not isinstance(tok.metadata, dict):
        raise TypeError(
            f"cannot save the tokenizer: its metadata must be a dict (or None), "
            f"not {type(tok.metadata).__name__}"
        )
    _check_json_keys(tok.metadata, "metadata")


def json_bytes(data: Any, indent: Optional[int] = 1) -> bytes:
    """``data`` as strict UTF-8 JSON (no NaN/Infinity, which other readers refuse; no lone
    surrogate), or an error that says where the offending value is."""
    try:
        text = json.dumps(data, ensure_ascii=False, indent=indent, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise type(e)(
            f"cannot save the tokenizer as JSON: {e} (in its metadata? keep str, int, finite "
            f"float, bool, None, list and dict values there)"
        ) from None
    try:  # a lone surrogate (from a str made of surrogateescape'd bytes) is no UTF-8: say where it is
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        bad = text[e.start]
        line = text.count("\n", 0, e.start) + 1
        raise ValueError(
            f"cannot save the tokenizer as JSON: it holds the lone surrogate {bad!r} (line {line} of "
            f"the file, in: {text[text.rfind(chr(10), 0, e.start) + 1 : e.start + 1].strip()!r}), which is "
            f"not UTF-8 text; give its name, metadata and tokens real characters"
        ) from None


def save(tok, path: Union[str, os.PathLike]) -> None:
    check_saveable(tok)
    raw = json_bytes(to_dict(tok))
    with atomic_write(path, "wb") as f:
        f.write(raw)
        f.write(b"\n")


def _fail(path: str, msg: str) -> TokenizerFileError:
    return TokenizerFileError(f"{path}: {msg}")


def _template(value: Any, path: str) -> Optional[Tuple[List[int], List[int]]]:
    if value is None:
        return None
    if not (
        isinstance(value, dict)
        and all(
            isinstance(value.get(k), list) and all(type(i) is int and i >= 0 for i in value[k])
            for k in ("prefix", "suffix")
        )
    ):
        raise _fail(path, 'field "template" must be {"prefix": [ids], "suffix": [ids]} or null')
    return list(value["prefix"]), list(value["suffix"])


def spec_from_dict(
    data: Any,
    path: str = "<dict>",
    *,
    tables: Optional[JsonTables] = None,
    _duplicate: Optional[str] = None,
):
    """The spec of a tokenizer from a parsed toksmith file. With ``tables``, ``data`` has no ``vocab`` and
    ``merges``: they were decoded natively, and the whole file is parsed only if the native
    checks decline. ``_duplicate``: a key the file has twice in one object (an error, reported
    after the checks of the fields, as when the native split finds it in the tables)."""
    if not isinstance(data, dict):
        raise _fail(path, f"expected a JSON object at the top level, found {type(data).__name__}")
    if data.get("format") != FORMAT:
        raise _fail(
            path,
            f"not a toksmith tokenizer file (format={data.get('format')!r}, expected {FORMAT!r}); "
            "for tiktoken, Hugging Face or GPT-2 files use toksmith.load_any()",
        )
    version = data.get("version")
    if type(version) is not int or version != VERSION:  # not true or 1.0
        raise _fail(
            path, f"unsupported file version {version!r}: this toksmith reads version {VERSION}"
        )
    for key, typ in (
        ("pattern", str),
        ("vocab", dict),
        ("special_tokens", dict),
        ("pinned_tokens", dict),
    ):
        if not isinstance(data.get(key), typ) and not (key == "vocab" and tables is not None):
            raise _fail(path, f"field {key!r} is missing or not a {typ.__name__}")
    for key, typ in (("name", str), ("metadata", dict), ("normalizer", dict)):
        if data.get(key) is not None and not isinstance(data[key], typ):
            raise _fail(
                path,
                f"field {key!r} must be a {typ.__name__} or null, not {type(data[key]).__name__}",
            )
    if _duplicate is not None:
        raise _duplicate_error(path, _duplicate)
    if tables is not None:
        fast = tables.native.toksmith_tables()
        if fast is None:  # declined: the reference below says what is wrong
            data, dup = _parse(tables.raw, path)
            if dup is not None:
                raise _duplicate_error(path, dup)
    else:
        fast = _core.toksmith_tables(data["vocab"], data.get("merges"))
    if fast is not None:
        # the checks of _tables_reference, in one native pass over a well-formed file
        ranks, merges = fast
    else:
        ranks, merges = _tables_reference(data, path)
    return TokenizerSpec(
        ranks,
        pattern=_from_file(data["pattern"]),
        special_tokens=data["special_tokens"],
        pinned_tokens=data["pinned_tokens"],
        merges=merges,
        merges_checked=merges is not None,  # checked against the ranks above
        metadata=data.get("metadata") or {},
        # as saved, "" included (the constructor reads "" as no name)
        name=data.get("name"),
        exact_name=isinstance(data.get("name"), str),
        where=path,
        build_error="file",
        normalizer=data.get("normalizer"),
        template=_template(data.get("template"), path),
    )


def _tables_reference(
    data: Dict[str, Any], path: str
) -> Tuple[Dict[bytes, int], Optional[List[Tuple[int, int]]]]:
    """The vocab and merges of a toksmith file, checked entry by entry (the readable reference
    of ``_core.toksmith_tables``, and the path that reports what is wrong)."""
    ranks: Dict[bytes, int] = {}
    seen_ids: Dict[int, str] = {}
    for s, i in data["vocab"].items():
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise _fail(path, f"vocab[{s!r}] = {i!r} is not a valid id")
        try:
            b = str_to_token(s)
        except ValueError as e:
            raise _fail(path, f"vocab entry {s!r}: {e}") from None
        if i in seen_ids:
            raise _fail(path, f"id {i} is given to both {seen_ids[i]!r} and {s!r}")
        seen_ids[i] = s
        ranks[b] = i
    merges: Optional[List[Tuple[int, int]]] = None
    if data.get("merges") is not None:
        if not isinstance(data["merges"], list):
            raise _fail(path, "field 'merges' must be a list of 'left right' strings or null")
        merges = []
        last = -1
        for n, m in enumerate(data["merges"]):
            if not isinstance(m, str) or m.count(" ") != 1:
                raise _fail(path, f"merges[{n}] = {m!r} is not of the form 'left right'")
            a_s, b_s = m.split(" ")
            try:
                a, b = str_to_token(a_s), str_to_token(b_s)
            except ValueError as e:
                raise _fail(path, f"merges[{n}]: {e}") from None
            for part in (a, b):
                if part not in ranks:
                    raise _fail(
                        path,
                        f"merges[{n}] = {m!r} names {token_to_str(part)!r}, which is not in the vocab",
                    )
            merged = a + b
            if merged not in ranks:
                raise _fail(
                    path,
                    f"merges[{n}] = {m!r}: the merged token {token_to_str(merged)!r} is not in the vocab",
                )
            mid = ranks[merged]
            if mid <= last or mid <= ranks[a] or mid <= ranks[b]:
                raise _fail(path, f"merges[{n}] = {m!r}: merged id {mid} is out of order")
            last = mid
            merges.append((ranks[a], ranks[b]))
        n_multi = sum(1 for b in ranks if len(b) > 1)
        if len(merges) != n_multi:
            raise _fail(
                path,
                f"{len(merges)} merges for {n_multi} multi-byte tokens: the file is inconsistent",
            )
    return ranks, merges


def read(path: Union[str, os.PathLike]) -> TokenizerSpec:
    """The spec of a tokenizer saved with ``tok.save(path)`` (:func:`toksmith.load` builds it)."""
    p = fspath(path)
    try:
        raw = read_tokenizer_file(p)
    except IsADirectoryError as e:
        raise IsADirectoryError(
            e.errno,
            "is a folder: toksmith.load reads a file written by tok.save(); for a "
            "folder of Hugging Face or GPT-2 files use toksmith.load_any(path)",
            e.filename,
        ) from None
    return read_bytes(raw, os.fsdecode(p))


def _duplicates_hook() -> Tuple[Callable[[List[Tuple[str, Any]]], Dict[str, Any]], List[str]]:
    """An ``object_pairs_hook`` for :func:`json.loads` and the list where it records the first key
    found twice in one object (json alone keeps the last value silently: a second
    ``"special_tokens"`` or vocab entry dropped the first)."""
    dups: List[str] = []
    return duplicate_keys_hook(lambda k: None if dups else dups.append(k)), dups


def _duplicate_error(p: str, key: str) -> TokenizerFileError:
    return _fail(
        p, f"the key {key!r} appears twice in one JSON object (which of its values is meant?)"
    )


def _parse(raw: bytes, p: str) -> Tuple[Any, Optional[str]]:
    """The JSON document of a toksmith file (UTF-8, valid JSON), and the first key found twice
    in one of its objects, if any (json.loads alone keeps the last value silently)."""
    hook, dups = _duplicates_hook()
    try:
        return json.loads(raw.decode("utf-8"), object_pairs_hook=hook), (dups[0] if dups else None)
    except UnicodeDecodeError as e:
        raise _fail(p, f"not UTF-8 text (byte offset {e.start})") from None
    except json.JSONDecodeError as e:
        hint = (
            (
                "; not a toksmith file at all? for .tiktoken, tokenizer.json, GPT-2 or other formats use "
                "toksmith.load_any(path)"
            )
            if e.pos == 0
            else ""
        )
        raise _fail(
            p,
            f"not valid JSON (truncated or corrupted?): {e.msg} at line {e.lineno} column {e.colno}"
            f"{hint}",
        ) from None
    except RecursionError:
        raise _fail(p, "the JSON nests arrays or objects too deeply to be read") from None


def read_bytes(raw: bytes, p: str = "<bytes>") -> TokenizerSpec:
    """:func:`read` on the bytes of a file (``p`` names it in messages)."""
    # (the native split declines a key twice at the top level and in the tables; the rest,
    # special_tokens or metadata, is parsed here, where the hook notes one)
    hook, dups = _duplicates_hook()
    got = split_json_tables(raw, "toksmith", object_pairs_hook=hook)
    if got is not None:  # the vocab and merges decoded natively, the rest parsed here
        return spec_from_dict(got[0], p, tables=got[1], _duplicate=dups[0] if dups else None)
    data, dup = _parse(raw, p)
    return spec_from_dict(data, p, _duplicate=dup)
