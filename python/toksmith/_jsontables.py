"""The big tables of a JSON tokenizer file (a Hugging Face ``tokenizer.json``'s
``model.vocab`` / ``model.merges``, a toksmith file's ``vocab`` / ``merges``), decoded natively.

Parsing a 100k-token file with :mod:`json` builds 300k Python strings that the reader decodes
again right after (byte-level spelling, merge lookups): ``toksmith_core::bpe_json`` does both in
one pass and hands back the rest of the document (a few kilobytes) as JSON text for
:func:`json.loads`. It declines on anything unusual (a key twice, a float id, a malformed
merge...); the reader then parses the whole file with :mod:`json`, exactly as without the split.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import _core

#: a byte string every file of the layout contains (files without it are not split)
_MARK = {"huggingface": b'"model"', "toksmith": b'"vocab"'}


def duplicate_keys_hook(on_duplicate: Callable[[str], None]) -> Callable[[Any], Any]:
    """An ``object_pairs_hook`` for :func:`json.loads` that calls ``on_duplicate(key)`` for a key
    found twice in one object (json alone keeps the last value silently), then builds the dict."""

    def hook(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
        out = dict(pairs)
        if len(out) != len(pairs):
            seen: set = set()
            for k, _ in pairs:
                if k in seen:
                    on_duplicate(k)
                    break
                seen.add(k)
        return out

    return hook


class JsonTables:
    """A file's natively decoded tables (``native``: ``_core.JsonTables``); :meth:`document`
    parses the whole file for the reference path, which needs the Python objects."""

    def __init__(
        self, native: Any, raw: bytes, object_pairs_hook: Optional[Callable[[Any], Any]] = None
    ):
        self.native, self.raw, self.object_pairs_hook = native, raw, object_pairs_hook

    def document(self) -> Any:
        # the native split parsed this text already: it is valid UTF-8 and valid JSON (the hook,
        # that of the split, refuses a key twice where the reader asked it to)
        return json.loads(self.raw.decode("utf-8"), object_pairs_hook=self.object_pairs_hook)


def split_json_tables(
    raw: bytes, layout: str, object_pairs_hook: Optional[Callable[[Any], Any]] = None
) -> Optional[Tuple[Any, JsonTables]]:
    """``(the document without its tables, the tables)`` for the raw bytes of a JSON tokenizer
    file of ``layout`` (``"huggingface"`` or ``"toksmith"``); None if the split declines.
    ``object_pairs_hook`` is passed to :func:`json.loads` for the rest of the document."""
    if _MARK[layout] not in raw:
        return None
    got = _core.split_json_tables(raw, layout)
    if got is None:
        return None
    rest, native = got
    try:
        doc = json.loads(rest, object_pairs_hook=object_pairs_hook)
    except RecursionError:  # nested too deeply for json: the reader's own parse reports it
        return None
    return doc, JsonTables(native, raw, object_pairs_hook)
