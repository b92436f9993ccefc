"""Helpers shared by the format converters (no optional dependency is imported here)."""

from __future__ import annotations

import errno
import hashlib
import importlib
import json
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from .. import _core
from .._fileio import atomic_write as atomic_write
from .._fileio import (
    finish_interrupted_saves,
    has_interrupted_save,
    read_file_capped,
)
from .._fileio import write_text_atomic as write_text_atomic
from .._jsontables import JsonTables, duplicate_keys_hook, split_json_tables
from .._paths import fspath
from ..bytelevel import str_to_token, token_to_str
from ..errors import ConversionError, MergesError, TokenizerFileError, missing_extra
from ..spec import MergeCheck

#: the native tokenizer class (taken at import: a test may replace ``_core.Bpe`` by a subclass)
_NATIVE_BPE = _core.Bpe

PathLike = Union[str, "os.PathLike[str]"]


def require(module: str, extra: str):
    """Import an optional dependency or raise the ImportError naming ``toksmith[extra]``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise missing_extra(extra, module) from None


def sha256_file(path: PathLike) -> str:
    h = hashlib.sha256()
    with open(fspath(path), "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_tokenizer_file(path: PathLike, what: str = "the file") -> bytes:
    """The bytes of a tokenizer file: a regular file of at most
    ``toksmith.MAX_TOKENIZER_FILE_BYTES`` (TokenizerFileError naming it otherwise; a device or
    FIFO is an OSError). A set of files whose save was killed while moving them into this
    file's folder is moved into place first (see ``toksmith._fileio.atomic_files``)."""
    p = fspath(path)
    folder = os.path.dirname(os.fsdecode(p)) or "."
    if has_interrupted_save(folder):
        try:
            finish_interrupted_saves(folder)
        except OSError as e:
            raise TokenizerFileError(
                f"{os.fsdecode(p)}: a save into {folder!r} was interrupted and its files could "
                f"not be moved into place ({e}); save the tokenizer again"
            ) from None
    return read_file_capped(p, what, error=TokenizerFileError)


def make_folder(path: PathLike, what: str) -> str:
    """Create the folder ``path`` (and its parents) for a format saved as several files; a
    file already there is a NotADirectoryError that says so (not \"File exists\")."""
    d = fspath(path)
    if os.path.exists(d) and not os.path.isdir(d):
        raise NotADirectoryError(
            errno.ENOTDIR,
            f"cannot save {what} into {d!r}: it is a file, not a folder "
            "(give the name of a folder to write them in)",
            d,
        )
    os.makedirs(d, exist_ok=True)
    return d


def write_json(path: PathLike, data: Any, indent: Optional[int] = 2) -> None:
    write_text_atomic(path, json.dumps(data, ensure_ascii=False, indent=indent) + "\n")


def unique_keys_hook(where: str, what: str):
    """An ``object_pairs_hook`` for :func:`json.loads` that refuses a key twice in one object
    (json alone keeps the last value silently: a vocab entry given twice lost its first id)."""

    def refuse(key: str) -> None:
        raise TokenizerFileError(
            f"{where}: {what} has the key {key!r} twice in one JSON object "
            "(which of its values is meant?)"
        )

    return duplicate_keys_hook(refuse)


def loads_json(raw: bytes, where: str, what: str) -> Any:
    """Parse a JSON file's bytes (``where`` and ``what`` name it in errors); a key twice in one
    object is a TokenizerFileError."""
    try:
        return json.loads(raw.decode("utf-8"), object_pairs_hook=unique_keys_hook(where, what))
    except UnicodeDecodeError as e:
        raise TokenizerFileError(
            f"{where}: {what} is not UTF-8 text (byte offset {e.start})"
        ) from None
    except json.JSONDecodeError as e:
        raise TokenizerFileError(
            f"{where}: {what} is not valid JSON (truncated or corrupted?): {e.msg} at line {e.lineno} column {e.colno}"
        ) from None
    except RecursionError:
        raise TokenizerFileError(
            f"{where}: {what} nests arrays or objects too deeply to be read"
        ) from None


def split_json(raw: bytes, where: str, what: str) -> Tuple[Any, Optional[JsonTables]]:
    """A ``tokenizer.json``'s bytes parsed: ``(the document without model.vocab and model.merges,
    those tables decoded natively)``, or where that declines ``(the whole document, None)``."""
    got = split_json_tables(raw, "huggingface", object_pairs_hook=unique_keys_hook(where, what))
    return got if got is not None else (loads_json(raw, where, what), None)


def source_meta(fmt: str, path: Optional[PathLike] = None, **extra: Any) -> Dict[str, Any]:
    meta: Dict[str, Any] = {"format": fmt}
    if path is not None:
        meta["file"] = os.path.basename(os.fspath(path).rstrip("/\\")) or os.fspath(path)
    meta.update({k: v for k, v in extra.items() if v is not None})
    return meta


# ---------------------------------------------------------------------------------------------
# vocab + merge list  ->  rank table (GPT-2 files and Hugging Face BPE)


def ranks_from_vocab_and_merges(
    vocab: Mapping[str, int],
    merges: Sequence[Tuple[str, str]],
    added: Mapping[str, int],
    where: str,
) -> Tuple[Dict[bytes, int], Dict[str, int]]:
    """Turn a byte-level ``vocab`` (``str -> id``) and merge list into a rank table.

    ``added`` are the tokens declared as added/special (``content -> id``): a vocab entry with
    the same id is theirs and left out of the rank table. Returns ``(ranks, leftovers)`` where
    ``leftovers`` are the multi-character vocab entries produced by no merge and not declared as
    added (the caller decides whether they are special tokens or an error).

    Checks (each raising :class:`TokenizerFileError`): keys spelled in the byte-level alphabet,
    no duplicate ids, merges naming tokens of the vocab whose result is in the vocab.
    toksmith (like tiktoken) merges by the *id* of the merged token, so the ids of the merge
    results must increase along the merge list; otherwise :class:`ConversionError`.

    ``merges`` may also hold ``"left right"`` strings: such a list is normalized by
    :func:`merge_pairs` first (with its checks).
    """
    fast = _core.ranks_from_vocab_and_merges(vocab, merges, added)
    if fast is not None:
        # the checks of the reference, in one native pass over well-formed tables
        return fast
    return _ranks_from_vocab_and_merges_reference(vocab, merge_pairs(merges, where), added, where)


def vocab_ranks(
    vocab: Mapping[str, int], added: Mapping[str, int], where: str
) -> Tuple[Dict[bytes, int], Dict[str, bytes], Dict[str, int]]:
    """A byte-level vocab's ranks (token bytes -> id), its spellings (str -> bytes) and the
    entries that spell no bytes (str -> id), with every entry checked: ids valid and unique,
    added tokens where the vocab puts them, no bytes spelled twice."""
    added_ids = {i: t for t, i in added.items()}
    ranks: Dict[bytes, int] = {}
    spelled: Dict[str, bytes] = {}
    seen: Dict[int, str] = {}
    skipped: Dict[str, int] = {}
    for s, i in vocab.items():
        if not isinstance(s, str) or not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise TokenizerFileError(f"{where}: vocab entry {s!r}: {i!r} is not a valid id")
        if i in seen:
            raise TokenizerFileError(
                f"{where}: id {i} is given to both {seen[i]!r} and {s!r} in the vocab"
            )
        seen[i] = s
        if i in added_ids:
            if added_ids[i] != s:
                raise TokenizerFileError(
                    f"{where}: id {i} is the added token {added_ids[i]!r} but the vocab gives it to {s!r}"
                )
            continue
        try:
            b = str_to_token(s)
        except ValueError:
            skipped[s] = i
            continue
        if b in ranks:
            raise TokenizerFileError(f"{where}: the vocab spells the bytes {b!r} twice")
        ranks[b] = i
        spelled[s] = b
    return ranks, spelled, skipped


def _ranks_from_vocab_and_merges_reference(
    vocab: Mapping[str, int],
    merges: Sequence[Tuple[str, str]],
    added: Mapping[str, int],
    where: str,
) -> Tuple[Dict[bytes, int], Dict[str, int]]:
    """The readable reference of :func:`ranks_from_vocab_and_merges` (and of its native
    version, ``_core.ranks_from_vocab_and_merges``), which also reports what is wrong."""
    ranks, spelled, skipped = vocab_ranks(vocab, added, where)
    produced = set()
    last = -1
    for n, (a_s, b_s) in enumerate(merges):
        parts = []
        for s in (a_s, b_s):
            got = spelled.get(s)
            if got is None:
                _check_not_added(s, n, a_s, b_s, vocab, added, where)
                raise TokenizerFileError(
                    f"{where}: merge {n} ({a_s!r} {b_s!r}) names {s!r}, which is not a token of the vocab"
                )
            parts.append(got)
        merged = parts[0] + parts[1]
        mid = ranks.get(merged)
        if mid is None:
            _check_not_added(token_to_str(merged), n, a_s, b_s, vocab, added, where)
            raise TokenizerFileError(
                f"{where}: merge {n} ({a_s!r} {b_s!r}) makes {token_to_str(merged)!r}, which is not in the vocab"
            )
        if mid < last or mid <= ranks[parts[0]] or mid <= ranks[parts[1]]:
            raise ConversionError(
                f"{where}: merge {n} ({a_s!r} {b_s!r}) makes token id {mid}, out of order (after a merge "
                f"that made id {last}, or from parts with higher ids): toksmith and tiktoken merge by "
                "token id, so the merged tokens' ids must follow the merge order"
            )
        last = mid
        produced.add(merged)
    leftovers: Dict[str, int] = dict(skipped)
    for b, i in list(ranks.items()):
        if len(b) > 1 and b not in produced:
            leftovers[token_to_str(b)] = i
            del ranks[b]
    return ranks, leftovers


def _check_not_added(
    s: str,
    n: int,
    a_s: str,
    b_s: str,
    vocab: Mapping[str, int],
    added: Mapping[str, int],
    where: str,
) -> None:
    """A merge that names or makes a vocab token declared as an added token (Hugging Face's
    ``add_tokens`` of a token already in the vocab keeps its id) raises ConversionError."""
    if s in added and vocab.get(s) == added[s]:
        raise ConversionError(
            f"{where}: merge {n} ({a_s!r} {b_s!r}) uses the vocab token {s!r} (id {added[s]}), which is also an added "
            "token: toksmith cannot have one token both matched as text before splitting and made by BPE merges"
        )


def merge_pairs(merges: Any, where: str) -> List[Tuple[str, str]]:
    """A file's merge list as ``(left, right)`` pairs: items are ``"left right"`` strings (one
    space) or two-item lists; anything else raises :class:`TokenizerFileError`."""
    if not isinstance(merges, list):
        raise TokenizerFileError(f"{where}: model.merges must be a list")
    out = []
    for n, m in enumerate(merges):
        if isinstance(m, str):
            parts = m.split(" ")
        elif isinstance(m, (list, tuple)):
            parts = list(m)
        else:
            parts = []
        if len(parts) != 2 or not all(isinstance(x, str) and x for x in parts):
            raise TokenizerFileError(f"{where}: merge {n} ({m!r}) is not a pair of tokens")
        out.append((parts[0], parts[1]))
    return out


def check_merges_agree(tok, file_merges: Sequence[Any], where: str) -> None:
    """Check that a file's merge list (pairs or ``"left right"`` strings) gives the same BPE as
    toksmith's merge-by-rank.

    toksmith recovers, for each merged token, the pair its lower-ranked BPE produces. That
    pair must be one of the file's merges for the token; otherwise the file's library and
    toksmith would split some words differently.
    """
    if tok._core.merges_listed(file_merges):  # None or False: the reference says what is wrong
        return
    _check_merges_agree_reference(tok, merge_pairs(file_merges, where), where)


def check_core_merges(core: Any, check: MergeCheck) -> None:
    """:func:`check_merges_agree` for a tokenizer just built from a reader's spec: ``core`` is
    its native core, ``check`` the file's merge list (compared natively first when the file's
    tables were decoded natively)."""
    if check.native is not None and core.merges_listed_in(check.native):
        return
    merges = check.merges() if callable(check.merges) else check.merges
    if core.merges_listed(merges):  # None or False: the reference says what is wrong
        return
    _check_merges_agree_reference(_CoreMerges(core), merge_pairs(merges, check.where), check.where)


class _CoreMerges:
    """A native core seen as what :func:`_check_merges_agree_reference` reads: its merges."""

    def __init__(self, core: Any) -> None:
        self._core = core

    def merges(self) -> List[Tuple[bytes, bytes]]:
        token = self._core.token_bytes
        return [(token(a), token(b)) for a, b, _ in self._core.recover_merges()]


def _check_merges_agree_reference(tok, file_merges: Sequence[Tuple[str, str]], where: str) -> None:
    """The readable reference of :func:`check_merges_agree` (``Bpe.merges_listed`` natively)."""
    try:
        recovered = tok.merges()
    except MergesError as e:
        raise ConversionError(f"{where}: the vocabulary is not a consistent BPE: {e}") from None
    listed: Dict[bytes, set] = {}
    for a_s, b_s in file_merges:
        a, b = str_to_token(a_s), str_to_token(b_s)
        listed.setdefault(a + b, set()).add((a, b))
    for a, b in recovered:
        if (a, b) not in listed.get(a + b, ()):
            pairs = sorted(f"{token_to_str(x)} {token_to_str(y)}" for x, y in listed.get(a + b, ()))
            raise ConversionError(
                f"{where}: the token {token_to_str(a + b)!r} is made by the merges {pairs}, but "
                f"merging by rank (toksmith, tiktoken) makes it from {token_to_str(a)!r} + {token_to_str(b)!r}: "
                "the two would tokenize some text differently"
            )


def decoded_as_bytes(content: str) -> bool:
    """Whether a byte-level decoder (Hugging Face's ``ByteLevel``, GPT-2's) turns the text of an
    added token into other text: it maps a token whose every character is in the byte-level
    alphabet back to bytes (``"<é>"`` becomes ``b"<\\xe9>"``, ``"Ġx"`` becomes ``" x"``) and
    keeps the others as they are."""
    try:
        return str_to_token(content) != content.encode("utf-8")
    except ValueError:  # a character outside the alphabet: the text is kept
        return False


def check_added_decoding(tokens: Iterable[str], where: str) -> None:
    """Added tokens written into a byte-level vocab must decode as their text (see
    :func:`decoded_as_bytes`), or ConversionError."""
    bad = [t for t in tokens if decoded_as_bytes(t)]
    if bad:
        raise ConversionError(
            f"{where}: the special/pinned token(s) {bad[:3]} are written only with characters of the byte-level "
            f"alphabet, which a byte-level decoder (Hugging Face's ByteLevel, GPT-2's) maps back to bytes: it "
            f"would decode {bad[0]!r} as {str_to_token(bad[0]).decode('utf-8', 'replace')!r}, toksmith as "
            f"{bad[0]!r}; rename it with ASCII characters only (they decode as themselves)"
        )


def check_added_spelling(tokens: Iterable[str], ranks: Mapping[bytes, int], where: str) -> None:
    """Added tokens stored in a byte-level vocab by their text must not collide with the
    byte-level spelling of a mergeable token."""
    spelled = {token_to_str(b) for b in ranks}
    for t in tokens:
        if t in spelled:
            raise ConversionError(
                f"{where}: the special/pinned token {t!r} is spelled like the mergeable token "
                f"{str_to_token(t)!r} in the byte-level alphabet; the file could not tell them apart: rename the "
                f"special/pinned token (e.g. <|{t}|>), or save as toksmith JSON, which keeps both"
            )


def _is_tokenizer(obj: Any) -> bool:
    # this layer is below toksmith.tokenizer: a Tokenizer is known by its native core
    return isinstance(getattr(obj, "_core", None), _NATIVE_BPE)


#: presets whose ids the byte-level tokenizer alone does not give (a layer above it encodes),
#: so an export of that tokenizer to another library's format would give other ids: refused
INEXACT_PRESETS: Dict[str, str] = {
    "cppreason": "CppReason's whole-word fixed ids (C++ keywords, operators, punctuation, "
    "library names and the numbers 0-999 at ids 0-1599, each matched only as a whole word by "
    "CppReason's own word scanner, with whitespace as a delimiter) are not part of the learned "
    "BPE this file holds, so the other library would give other ids on almost every line. Keep "
    "the toksmith JSON file and load it with toksmith.presets.cppreason.load()",
}


def check_tokenizer(tok: Any, where: str) -> None:
    """TypeError unless ``tok`` is a toksmith Tokenizer (was: an AttributeError from deep inside);
    ConversionError for a preset tokenizer that the target format cannot reproduce
    (:data:`INEXACT_PRESETS`: exports are exact or refused)."""
    if not _is_tokenizer(tok):
        hint = "; pass its .tokenizer" if _is_tokenizer(getattr(tok, "tokenizer", None)) else ""
        raise TypeError(f"{where} needs a toksmith.Tokenizer, not {type(tok).__name__}{hint}")
    preset = getattr(tok, "metadata", {}).get("preset")
    if isinstance(preset, str) and preset in INEXACT_PRESETS:
        raise ConversionError(
            f"{where}: cannot export a {preset} tokenizer exactly: {INEXACT_PRESETS[preset]}"
        )


def check_no_normalizer(tok: Any, where: str) -> None:
    """ConversionError for a tokenizer with a normalizer: formats with no place for one
    (tiktoken, GPT-2 files) would give other ids on text it changes."""
    norm = getattr(tok, "normalizer", None)
    if norm is not None:
        raise ConversionError(
            f"{where}: this tokenizer normalizes text first ({norm}), which the format cannot "
            "hold (the ids would differ on text the normalizer changes); save it as toksmith "
            "JSON or tokenizer.json"
        )
    template = getattr(tok, "template", None)
    if template is not None:
        raise ConversionError(
            f"{where}: this tokenizer adds the ids {template[0]} before and {template[1]} after "
            "every encoding (its post-processor), which the format cannot hold; save it as "
            "toksmith JSON or tokenizer.json"
        )


def merge_strings(tok, where: str) -> List[Tuple[str, str]]:
    """The merges of ``tok`` spelled in the byte-level alphabet, or ConversionError."""
    try:
        return [(token_to_str(a), token_to_str(b)) for a, b in tok.merges()]
    except MergesError as e:
        raise ConversionError(
            f"{where} needs a merge list, and this tokenizer has none: {e}. A rank table whose tokens "
            "are not each the BPE merge of two lower-ranked tokens can only be saved as toksmith JSON "
            "or a .tiktoken file"
        ) from None


__all__ = ["ConversionError", "require", "sha256_file"]
