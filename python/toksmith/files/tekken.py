"""Mistral's Tekken tokenizer files (``tekken_*.json``: Mistral NeMo, Pixtral, Mistral Small 3...),
read as mistral-common's ``Tekkenizer`` reads them (``mistral_common/tokens/tokenizers/tekken.py``):

* ``config.default_num_special_tokens`` control tokens take the first ids; the file's
  ``special_tokens`` (``{"rank", "token_str", "is_control"}``) name them, or, for files of
  version v7 and before that have none, mistral-common's 20 historical ones (``<unk>``,
  ``<s>``, ``</s>``, ``[INST]``...); the rest are fillers ``<SPECIAL_{id}>``;
* the byte-level ranks follow, shifted past them: the token of rank ``r`` has id
  ``r + default_num_special_tokens``; only the first ``default_vocab_size -
  default_num_special_tokens`` entries of ``vocab`` are used;
* ``config.pattern`` is the split pattern (a tiktoken ``pat_str``).

mistral-common encodes text with no special token at all (tiktoken with ``special_tokens={}``):
control tokens are never read from text. The control tokens are toksmith special tokens, so
``encode_ordinary(text)`` gives mistral-common's ``encode(text, bos=False, eos=False)``, and
``decode(ids, skip_special_tokens=True)`` its ``decode(ids)`` (which ignores control tokens).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from typing import Any, Dict, Optional

from .. import _core
from .._paths import fspath
from ..errors import TokenizerFileError
from ..pretokenize import _from_file
from ..spec import TokenizerSpec
from ._common import read_tokenizer_file, source_meta

#: mistral-common's ``Tekkenizer.DEPRECATED_SPECIAL_TOKENS``: the control tokens of files of
#: version v7 and before that list none (ids 0-19, in this order)
DEPRECATED_SPECIAL_TOKENS = (
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
)

#: mistral-common's ``TokenizerVersion`` values (1.13.1), in order
VERSIONS = ("v1", "v2", "v3", "v7", "v11", "v13", "v15")

#: the filler control tokens' names (mistral-common's ``SPECIAL_TOKEN_TEMPLATE``)
FILLER = "<SPECIAL_{id}>"


def is_tekken(data: Any) -> bool:
    """Whether a parsed JSON document is a Tekken file (``{"config": {...}, "vocab": [...]}``)."""
    return (
        isinstance(data, dict)
        and isinstance(data.get("config"), dict)
        and isinstance(data.get("vocab"), list)
        and "pattern" in data["config"]
    )


def _int(config: Dict[str, Any], key: str, where: str) -> int:
    v = config.get(key)
    if type(v) is not int or v < 0:
        raise TokenizerFileError(f"{where}: config.{key} must be a non-negative integer, not {v!r}")
    return v


def _control_tokens(data: Dict[str, Any], version: str, n: int, where: str) -> Dict[str, int]:
    listed = data.get("special_tokens")
    if listed is None:
        if VERSIONS.index(version) > VERSIONS.index("v7"):
            raise TokenizerFileError(
                f"{where}: a Tekken file of version {version} must list its special_tokens "
                "(mistral-common refuses it too)"
            )
        names = list(DEPRECATED_SPECIAL_TOKENS)
    else:
        if not isinstance(listed, list):
            raise TokenizerFileError(f"{where}: special_tokens must be a list")
        names = []
        for k, t in enumerate(listed):
            if not (
                isinstance(t, dict)
                and isinstance(t.get("token_str"), str)
                and t["token_str"]
                and t.get("rank") == k
                and type(t.get("rank")) is int
            ):
                raise TokenizerFileError(
                    f"{where}: special_tokens[{k}] = {str(t)[:80]} is not "
                    f'{{"rank": {k}, "token_str": ..., "is_control": ...}}'
                )
            names.append(t["token_str"])
    if len(names) > n:
        raise TokenizerFileError(
            f"{where}: {len(names)} special tokens, more than config.default_num_special_tokens={n}"
        )
    specials = {name: i for i, name in enumerate(names)}
    for i in range(len(names), n):
        specials.setdefault(FILLER.format(id=i), i)
    if len(specials) != n:
        raise TokenizerFileError(f"{where}: the special tokens' names are not unique")
    return specials


def _ranks(vocab: list, inner: int, shift: int, where: str) -> Dict[bytes, int]:
    if len(vocab) < inner:
        raise TokenizerFileError(
            f"{where}: {len(vocab)} vocab entries, fewer than the {inner} that "
            "config.default_vocab_size - default_num_special_tokens asks for"
        )
    try:  # the usual, well-formed file: one native pass (the loop below says what is wrong)
        lines = [f"{x['token_bytes']} {x['rank'] + shift}" for x in vocab[:inner]]
        if all(x["rank"] == i for i, x in enumerate(vocab[:inner])):
            fast = _core.parse_tiktoken_ranks("\n".join(lines).encode("ascii"))
            if (
                fast is not None
                and len(fast) == inner
                and all(fast.get(bytes([i])) == i + shift for i in range(256))
            ):
                return fast
    except (TypeError, KeyError, UnicodeEncodeError):
        pass
    ranks: Dict[bytes, int] = {}
    for i in range(inner):
        x = vocab[i]
        if (
            not isinstance(x, dict)
            or x.get("rank") != i
            or not isinstance(x.get("token_bytes"), str)
        ):
            raise TokenizerFileError(
                f"{where}: vocab[{i}] = {str(x)[:80]} is not "
                f'{{"rank": {i}, "token_bytes": base64, "token_str": ...}}'
            )
        try:
            b = base64.b64decode(x["token_bytes"], validate=True)
        except (binascii.Error, ValueError):
            raise TokenizerFileError(
                f"{where}: vocab[{i}].token_bytes {x['token_bytes'][:40]!r} is not valid base64"
            ) from None
        if i < 256 and b != bytes([i]):
            raise TokenizerFileError(
                f"{where}: vocab[{i}] must be the single byte 0x{i:02x}, not {b!r} (the first 256 "
                "ranks are the bytes)"
            )
        if b in ranks:
            raise TokenizerFileError(
                f"{where}: the token {b!r} is listed twice (ranks {ranks[b] - shift} and {i})"
            )
        ranks[b] = i + shift
    return ranks


def read_tekken(path_or_doc: Any, path: Optional[str] = None) -> TokenizerSpec:
    """The spec of a Tekken file: a path, or its parsed document (``path``: the file it was
    read from, if any)."""
    if isinstance(path_or_doc, dict):
        data = path_or_doc
        where = path or "tekken.json (dict)"
    else:
        path = fspath(path_or_doc)
        where = path
        try:
            data = json.loads(read_tokenizer_file(path, "the Tekken file").decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise TokenizerFileError(f"{where}: not a JSON file ({e})") from None
    if not is_tekken(data):
        raise TokenizerFileError(
            f'{where}: not a Tekken file (expected {{"config": {{"pattern": ...}}, "vocab": [...]}})'
        )
    config = data["config"]
    pattern = config.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise TokenizerFileError(f"{where}: config.pattern must be the split pattern (a string)")
    version = config.get("version")
    if version not in VERSIONS:
        raise TokenizerFileError(
            f"{where}: config.version {version!r} is not a Tekken version mistral-common knows "
            f"({', '.join(VERSIONS)})"
        )
    n_special = _int(config, "default_num_special_tokens", where)
    vocab_size = _int(config, "default_vocab_size", where)
    if vocab_size < n_special + 256:
        raise TokenizerFileError(
            f"{where}: config.default_vocab_size={vocab_size} leaves fewer than 256 byte-level "
            f"tokens after {n_special} special tokens"
        )
    specials = _control_tokens(data, version, n_special, where)
    ranks = _ranks(data["vocab"], vocab_size - n_special, n_special, where)
    name = os.path.basename(path)[: -len(".json")] if path and path.endswith(".json") else "tekken"
    meta: Dict[str, Any] = {
        "source": source_meta("tekken", path, version=version),
        "tekken": {
            "num_special_tokens": n_special,
            "bos": "<s>" if "<s>" in specials else None,
            "eos": "</s>" if "</s>" in specials else None,
            "note": "control tokens are never read from text by mistral-common: use "
            "encode_ordinary (and decode with skip_special_tokens=True) for its ids",
        },
    }
    return TokenizerSpec(
        ranks,
        pattern=_from_file(pattern),
        special_tokens=specials,
        name=name,
        metadata=meta,
        where=where,
        build_error="file",
    )


__all__ = ["DEPRECATED_SPECIAL_TOKENS", "is_tekken", "read_tekken"]
