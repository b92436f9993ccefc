"""Hugging Face interop: ``tokenizer.json`` (``tokenizers``) and ``transformers`` folders.

Export (:func:`to_huggingface`, :func:`save_huggingface`) writes a byte-level BPE
``tokenizer.json``:

* model ``BPE`` with the byte-level vocab and the merge list (recovered from the ranks when the
  tokenizer has none); a rank table that is no merge list (Llama 3's: some tokens are not the
  BPE of two lower-ranked tokens) is written as ``transformers`` converts tiktoken files, every
  split of a token into two tokens a merge, ordered by (merged id, left id, right id), with
  ``"ignore_merges": true`` (:func:`tiktoken_merges`; a token that is the join of no two
  tokens, which no such file's merges make, raises :class:`ConversionError`);
* pre-tokenizer ``Sequence[Split(Regex(pattern), "Isolated"), ByteLevel(use_regex=False)]``
  (``"Removed"`` with ``invert=True`` for a custom pattern, which may leave text unmatched:
  toksmith and tiktoken drop that text, and so does this ``Split``),
  the pattern rewritten for Hugging Face's regex engine (Oniguruma) where the two engines
  differ (see :mod:`toksmith.formats._regex`: cl100k's possessive ``\\p{N}{1,3}+`` becomes
  ``(?>\\p{N}{1,3})``);
* special tokens as special added tokens and pinned tokens as non-special added tokens (both
  also in the model vocab, or ``tokenizers`` would renumber them);
* decoder ``ByteLevel``; no normalizer; a ``ByteLevel`` post-processor that adds no token.

``save_huggingface`` also writes ``tokenizer_config.json`` (``PreTrainedTokenizerFast``,
``clean_up_tokenization_spaces=false`` so decoding is exact) and ``special_tokens_map.json``, so
``transformers.AutoTokenizer.from_pretrained(dir)`` works. Hugging Face's ``encode`` always
turns special-token text into special tokens: it matches toksmith's
``encode(text, allowed_special="all")``.

Import (:func:`from_huggingface`) reads byte-level BPE ``tokenizer.json`` files: merges as
``"a b"`` strings or as pairs, added tokens (special ones become special tokens, the others
pinned tokens), a ``ByteLevel`` pre-tokenizer (its ``use_regex=True`` is the GPT-2 pattern) or
a ``Split`` regex (``Isolated``, or ``Removed`` with ``invert=True``) followed by
``ByteLevel(use_regex=False)``, or a sequence of ``Split`` steps that one toksmith pattern
splits exactly alike (DeepSeek V3 / R1: :data:`_SPLIT_SEQUENCES`). A model with ``"ignore_merges": true`` may list several merges
per token, with parts of higher id than the result (Llama 3, and every vocabulary
``transformers`` converts from tiktoken): it loads when merging by token id gives the same
result (see :func:`_ranks_ignore_merges`). A byte-level vocabulary may lack the 13 bytes that
UTF-8 text never holds (GPT-NeoX, Pythia, OLMo 1).

Normalizers ``NFC``, ``NFD``, ``NFKC``, ``NFKD``, ``Lowercase``, ``StripAccents``, ``Strip``,
``Replace`` (``String`` patterns) and ``Prepend``, and ``Sequence`` s of them, are applied
natively (:attr:`toksmith.Tokenizer.normalizer`) to the text between special tokens, as
``tokenizers`` does. Post-processors that add tokens (``TemplateProcessing`` with the text once,
``RobertaProcessing``, ``BertProcessing``, and ``Sequence`` s with ``ByteLevel``) become
:attr:`toksmith.Tokenizer.template`, added by ``encode`` unless ``add_special_tokens=False``.

Anything toksmith cannot
reproduce exactly raises :class:`ConversionError` naming the component: WordPiece, Unigram
and WordLevel models, BPE dropout or subword prefixes, ``add_prefix_space=True``, other
sequences of ``Split`` steps, added tokens with ``lstrip``/``rstrip``/``single_word``, a non-``ByteLevel``
decoder (or added tokens that ``ByteLevel`` decodes as bytes: ``"<é>"``), other post-processors
and normalizers (``BertNormalizer``, ``Precompiled``, ``Replace`` with a ``Regex``), and, under
a normalizer, an added token matched on the other side of it than toksmith matches it
(a special token with ``normalized: true``, another with ``normalized: false``).
The file's ``truncation`` and ``padding`` are read into the spec and applied by the
tokenizer's ``encode`` and ``encode_batch`` as ``tokenizers`` applies them to single sequences
(see :mod:`toksmith._lengths`; ``tok.no_truncation()`` / ``tok.no_padding()`` turn them off)
and written back by the export; a ``truncation`` with strategy ``OnlySecond`` (the second
sequence of a pair) raises :class:`ConversionError`.

Known limit, outside toksmith's control: Oniguruma in ``tokenizers`` 0.23 knows Unicode up to
15.1, while tiktoken's and toksmith's named patterns also classify the ~4700 code points
assigned in Unicode 16 and 17 (e.g. U+323B0, CJK extension J). On text with those characters
Hugging Face's ids can differ from tiktoken's and toksmith's; on all other text they are equal.

>>> import toksmith
>>> tok = toksmith.train_from_iterator(["low lower lowest"] * 20, vocab_size=262, pattern="gpt2",
...                                    special_tokens=["<|end|>"])
>>> data = huggingface_json(tok)
>>> data["model"]["merges"][:2], data["added_tokens"][0]["content"]
(['l o', 'lo w'], '<|end|>')
>>> read_huggingface(data).special_tokens == tok.special_tokens
True
"""

from __future__ import annotations

import json
import operator
import os
import warnings
from typing import Any, Dict, List, Mapping, Optional, Tuple

from .. import _core
from .._fileio import atomic_files
from .._lengths import make_padding, make_truncation
from .._paths import fspath
from .._regex import can_match_empty, covering, from_oniguruma, to_oniguruma
from ..bytelevel import str_to_token, token_to_str
from ..errors import MergesError, TokenizerFileError, TokenizerFileNotFoundError
from ..pretokenize import PATTERNS, _from_file
from ..spec import MergeCheck, Padding, TokenizerSpec, Truncation
from ._common import (
    ConversionError,
    JsonTables,
    PathLike,
    atomic_write,
    check_added_decoding,
    check_added_spelling,
    check_tokenizer,
    decoded_as_bytes,
    make_folder,
    merge_pairs,
    ranks_from_vocab_and_merges,
    read_tokenizer_file,
    require,
    source_meta,
    split_json,
    vocab_ranks,
    write_json,
)
from .toksmith_json import VERSION as _TOKSMITH_VERSION
from .toksmith_json import check_saveable, json_bytes

#: the regex of ``tokenizers``' ``ByteLevel(use_regex=True)`` pre-tokenizer (GPT-2's original
#: pattern, equivalent to tiktoken's r50k form toksmith calls ``"gpt2"``)
HF_BYTELEVEL_REGEX = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"

VERY_LARGE_INTEGER = int(1e30)  # transformers' "no maximum length"


def _known_hf_regexes() -> Dict[str, str]:
    known = {HF_BYTELEVEL_REGEX: "gpt2"}
    for name, pat in PATTERNS.items():
        hf = to_oniguruma(pat)
        known[hf] = name
        known[hf.replace("(?>\\p{N}{1,3})", "\\p{N}{1,3}")] = name  # the usual HF form of cl100k
        if from_oniguruma(pat) == pat:  # the same text means the same in both engines
            known[pat] = name
    return known


_KNOWN_HF_REGEXES = _known_hf_regexes()


def _split_step(tok) -> Dict[str, Any]:
    """The ``Split`` pre-tokenizer with the pattern as an Oniguruma regex, or ConversionError.

    toksmith and tiktoken drop the text a pattern does not match; ``Split`` with ``Isolated``
    keeps it as pieces. The named patterns match all text, so they are written ``Isolated`` (the
    usual form); a custom pattern is written ``Removed`` with ``invert=True``, which keeps the
    matches and drops the rest, as toksmith does (whether a pattern matches all text cannot be
    told from trying a few texts: ``\\D{2}|\\d+`` leaves the ``-`` of ``ab-12``)."""
    where = "Hugging Face export"
    try:
        hf = to_oniguruma(tok.pattern)
    except ConversionError as e:
        raise ConversionError(
            f"{where}: the split pattern cannot be written for Hugging Face's regex engine: {e}"
        ) from None
    if tok.pattern_name is None:
        if can_match_empty(tok.pattern):
            raise ConversionError(
                f"{where}: the split pattern {tok.pattern!r} can match the empty string; the engines treat "
                "empty matches differently, so the ids could differ"
            )
        return {"type": "Split", "pattern": {"Regex": hf}, "behavior": "Removed", "invert": True}
    return {"type": "Split", "pattern": {"Regex": hf}, "behavior": "Isolated", "invert": False}


def _post_processor_json(tok) -> Dict[str, Any]:
    """A ``ByteLevel`` post-processor that adds no token, or a ``TemplateProcessing`` adding the
    tokenizer's :attr:`~toksmith.Tokenizer.template` around the text."""
    byte_level = {
        "type": "ByteLevel",
        "add_prefix_space": False,
        "trim_offsets": False,
        "use_regex": False,
    }
    template = getattr(tok, "template", None)
    if template is None:
        return byte_level
    names = {i: t for t, i in {**tok.pinned_tokens, **tok.special_tokens}.items()}
    prefix, suffix = template

    def piece(i: int) -> Dict[str, Any]:
        return {"SpecialToken": {"id": names.get(i, f"<id {i}>"), "type_id": 0}}

    def seq(which: str, type_id: int) -> Dict[str, Any]:
        return {"Sequence": {"id": which, "type_id": type_id}}

    single = [*map(piece, prefix), seq("A", 0), *map(piece, suffix)]
    pair = single + [*map(piece, prefix), seq("B", 1), *map(piece, suffix)]
    special_tokens = {}
    for i in {*prefix, *suffix}:
        name = names.get(i, f"<id {i}>")
        token = names.get(i) or token_to_str(tok.decode_single_token_bytes(i))
        special_tokens[name] = {"id": name, "ids": [i], "tokens": [token]}
    template_json = {
        "type": "TemplateProcessing",
        "single": single,
        "pair": pair,
        "special_tokens": special_tokens,
    }
    return {"type": "Sequence", "processors": [byte_level, template_json]}


def _added_entry(content: str, i: int, special: bool, normalized: bool = False) -> Dict[str, Any]:
    return {
        "id": i,
        "content": content,
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": normalized,
        "special": special,
    }


def tiktoken_merges(ranks: Mapping[bytes, int]) -> List[Tuple[str, str]]:
    """The merge list ``transformers``' ``TikTokenConverter`` writes for a rank table (with
    ``ignore_merges``): every split of a token into two tokens, ordered by the merged token's
    id, then the left and right parts' ids. With ``ignore_merges``, ``tokenizers`` then merges
    as tiktoken does (a whole-token piece is taken as it is; otherwise the pair that makes the
    lowest id), and toksmith's reader accepts exactly such lists.

    Found natively in time linear in the table's bytes (times a sort), however long the tokens
    (``vocab_files::token_splits``); :func:`_tiktoken_merges_reference` is the definition."""
    plain = ranks if type(ranks) is dict else dict(ranks)
    got = _core.tiktoken_merges(plain)
    if got is None:
        raise TypeError("tiktoken_merges needs a rank table {bytes: id} with ids in 0..2**32")
    return got


def _tiktoken_merges_reference(ranks: Mapping[bytes, int]) -> List[Tuple[str, str]]:
    """:func:`tiktoken_merges` by its definition: each cut of each token, both halves looked up
    (quadratic in a token's length; the tests compare the two)."""
    found = []
    for token, i in ranks.items():
        for k in range(1, len(token)):
            left = ranks.get(token[:k])
            if left is not None:
                right = ranks.get(token[k:])
                if right is not None:
                    found.append((i, left, right, k, token))
    found.sort()  # (the left part's id fixes the split: no two entries tie before k)
    return [(token_to_str(t[:k]), token_to_str(t[k:])) for _, _, _, k, t in found]


def _exported_normalizer(norm: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """The normalizer written to a ``tokenizer.json``: toksmith's whole-text normalizer (Qwen
    1's NFC, :func:`toksmith.files.tiktoken.whole_text_normalizer`) becomes its inner one, and
    :func:`huggingface_json` then marks every added token ``normalized``, so ``tokenizers``
    normalizes the whole text before it looks for them, as the whole-text normalizer does."""
    if not norm or norm.get("type") != "toksmith.WholeText":
        return norm
    inner: Optional[Dict[str, Any]] = norm.get("normalizer")
    return inner


def _whole_text(norm: Optional[Dict[str, Any]]) -> bool:
    return bool(norm) and norm.get("type") == "toksmith.WholeText"  # type: ignore[union-attr]


def huggingface_json(tok) -> Dict[str, Any]:
    """The ``tokenizer.json`` document (a dict) for ``tok``; needs no optional dependency."""
    where = "Hugging Face export"
    check_tokenizer(tok, where)
    ranks = tok.mergeable_ranks()
    ignore_merges = False
    try:
        merges = [(token_to_str(a), token_to_str(b)) for a, b in tok.merges()]
    except MergesError as e:
        # a rank table that is no merge list (Llama 3's): as transformers converts tiktoken's
        merges, ignore_merges = tiktoken_merges(ranks), True
        made = {a + b for a, b in merges}
        lone = next((b for b in ranks if len(b) > 1 and token_to_str(b) not in made), None)
        if lone is not None:
            raise ConversionError(
                f"{where} needs a merge list, and this tokenizer has none ({e}); written with "
                f"ignore_merges as transformers converts tiktoken files, the token {lone!r} "
                f"(id {ranks[lone]}) would be the join of no two tokens, which toksmith's reader "
                "does not read back: such a rank table can only be saved as toksmith JSON or a "
                ".tiktoken file"
            ) from None
    added = sorted(
        [(i, t, True) for t, i in tok.special_tokens.items()]
        + [(i, t, False) for t, i in tok.pinned_tokens.items()]
    )
    check_added_spelling([t for _, t, _ in added], ranks, where)
    check_added_decoding([t for _, t, _ in added], where)
    vocab = {token_to_str(b): i for b, i in sorted(ranks.items(), key=lambda kv: kv[1])}
    for i, t, _ in added:
        vocab[t] = i
    vocab = dict(sorted(vocab.items(), key=lambda kv: kv[1]))
    truncation: Optional[Truncation] = getattr(tok, "_truncation", None)
    padding: Optional[Padding] = getattr(tok, "_padding", None)
    return {
        "version": "1.0",
        "truncation": None if truncation is None else truncation.to_huggingface(),
        "padding": None if padding is None else padding.to_huggingface(),
        # with a normalizer, toksmith finds pinned tokens in the normalized text; with a
        # whole-text one, every added token (then tokenizers normalizes all the text first)
        "added_tokens": [
            _added_entry(
                t,
                i,
                sp,
                _whole_text(tok.normalizer) or (not sp and tok.normalizer is not None),
            )
            for i, t, sp in added
        ],
        "normalizer": _exported_normalizer(tok.normalizer),
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                _split_step(tok),
                {
                    "type": "ByteLevel",
                    "add_prefix_space": False,
                    "trim_offsets": True,
                    "use_regex": False,
                },
            ],
        },
        "post_processor": _post_processor_json(tok),
        "decoder": {
            "type": "ByteLevel",
            "add_prefix_space": True,
            "trim_offsets": True,
            "use_regex": True,
        },
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": ignore_merges,
            "vocab": vocab,
            "merges": [f"{a} {b}" for a, b in merges],
        },
    }


#: the key of the ``model`` object of a ``tokenizer.json`` that holds what Hugging Face's format
#: has no place for (the name, the pattern as written, the metadata): ``tokenizers`` refuses an
#: unknown key at the top level of the file, but ignores one in the BPE model (checked with
#: tokenizers 0.23 and transformers 5 in tests/files/test_tokenizer_json.py)
EXTRA_KEY = "toksmith"

#: a file of this name is written in Hugging Face's format by ``tok.save``
HF_FILE_NAME = "tokenizer.json"


def tokenizer_json(tok) -> Dict[str, Any]:
    """The document ``tok.save(".../tokenizer.json")`` writes: :func:`huggingface_json` with
    the tokenizer's name, pattern text and metadata in ``model["toksmith"]``, so that
    :func:`toksmith.load` reads back the same tokenizer. A tokenizer that Hugging Face's format
    cannot express exactly raises :class:`ConversionError` (never a silent approximation)."""
    try:
        data = huggingface_json(tok)
    except ConversionError as e:
        raise ConversionError(
            f"cannot save as {HF_FILE_NAME}: a file of that name is written in Hugging Face's "
            f"format, which cannot hold this tokenizer exactly ({e}); save it under another name "
            "(e.g. tok.json) for toksmith's own format, which holds any toksmith tokenizer"
        ) from None
    data["model"][EXTRA_KEY] = {
        "format": "toksmith",
        "version": _TOKSMITH_VERSION,
        "name": tok.name,
        "pattern": tok.pattern,
        "metadata": tok.metadata,
    }
    return data


def save_tokenizer_json(tok, path: PathLike) -> None:
    """Write :func:`tokenizer_json` to ``path`` (atomically; what ``tok.save`` does for a file
    named ``tokenizer.json``)."""
    check_tokenizer(tok, "save")
    check_saveable(tok)
    raw = json_bytes(tokenizer_json(tok), indent=2)
    with atomic_write(path, "wb") as f:
        f.write(raw)
        f.write(b"\n")


def _toksmith_extras(
    data: Dict[str, Any], model: Dict[str, Any], where: str, pattern: str
) -> Optional[Dict[str, Any]]:
    """The name, pattern and metadata that :func:`tokenizer_json` stored in the model, or None
    when the file has none. The stored pattern text is used only if it is what the file's
    ``Split`` step says (a file edited since is read by its Hugging Face parts)."""
    extra = model.get(EXTRA_KEY)
    if extra is None:
        return None
    if not isinstance(extra, dict) or extra.get("format") != "toksmith":
        raise TokenizerFileError(
            f"{where}: model.{EXTRA_KEY} must be the object toksmith writes "
            '({"format": "toksmith", ...})'
        )
    version = extra.get("version")
    if type(version) is not int or version != _TOKSMITH_VERSION:
        raise TokenizerFileError(
            f"{where}: model.{EXTRA_KEY} has version {version!r}: this toksmith reads version "
            f"{_TOKSMITH_VERSION}"
        )
    for key, typ in (("name", str), ("metadata", dict), ("pattern", str)):
        if extra.get(key) is not None and not isinstance(extra[key], typ):
            raise TokenizerFileError(
                f"{where}: model.{EXTRA_KEY}.{key} must be a {typ.__name__} or null, "
                f"not {type(extra[key]).__name__}"
            )
    out = {"name": extra.get("name"), "metadata": extra.get("metadata") or {}, "pattern": pattern}
    stored = extra.get("pattern")
    if isinstance(stored, str) and stored != pattern:
        steps = (data.get("pre_tokenizer") or {}).get("pretokenizers") or []
        regex = (steps[0].get("pattern") or {}).get("Regex") if steps else None
        try:
            same = regex is not None and to_oniguruma(stored) == regex
        except ConversionError:
            same = False
        if same:
            out["pattern"] = stored
    return out


def to_huggingface(tok):
    """A ``tokenizers.Tokenizer`` giving the same ids (``pip install toksmith[tokenizers]``)."""
    tokenizers = require("tokenizers", "tokenizers")
    return tokenizers.Tokenizer.from_str(json.dumps(huggingface_json(tok), ensure_ascii=False))


_BOS = ("<|bos|>", "<|startoftext|>", "<|begin_of_text|>", "<s>")
_EOS = ("<|endoftext|>", "<|eos|>", "<|end_of_text|>", "</s>")


def _role(specials: Mapping[str, int], names: Tuple[str, ...]) -> Optional[str]:
    return next((n for n in names if n in specials), None)


def save_huggingface(tok, directory: PathLike, *, model_max_length: Optional[int] = None) -> None:
    """Write ``tokenizer.json``, ``tokenizer_config.json`` and ``special_tokens_map.json`` into
    ``directory`` (created if needed) for ``transformers.PreTrainedTokenizerFast.from_pretrained``.

    ``bos_token``/``eos_token`` are set when a special token has a usual name
    (``<|endoftext|>``, ``<|bos|>``, ``<s>``...); every special token is listed in
    ``additional_special_tokens``. The post-processor adds no token, so ids are the same with
    and without ``add_special_tokens``. Writing needs no optional dependency.
    """
    check_tokenizer(tok, "save_huggingface")
    d = fspath(directory)
    if model_max_length is not None:
        if isinstance(model_max_length, bool) or not hasattr(type(model_max_length), "__index__"):
            raise TypeError(
                f"model_max_length must be an int or None, not {type(model_max_length).__name__}"
            )
        model_max_length = operator.index(model_max_length)  # a numpy integer (JSON cannot hold it)
        if model_max_length <= 0:
            raise ValueError(
                f"model_max_length must be positive (or None for no maximum), not {model_max_length}"
            )
    data = huggingface_json(tok)
    make_folder(d, "the Hugging Face tokenizer files")
    specials = tok.special_tokens
    smap: Dict[str, Any] = {}
    bos, eos = _role(specials, _BOS), _role(specials, _EOS)
    if bos:
        smap["bos_token"] = bos
    if eos:
        smap["eos_token"] = eos
    if specials:
        smap["additional_special_tokens"] = [
            t for t, _ in sorted(specials.items(), key=lambda kv: kv[1])
        ]
    config: Dict[str, Any] = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "clean_up_tokenization_spaces": False,
        "add_prefix_space": False,
        "model_max_length": model_max_length or VERY_LARGE_INTEGER,
        "added_tokens_decoder": {
            str(e["id"]): {k: v for k, v in e.items() if k != "id"} for e in data["added_tokens"]
        },
        **smap,
    }
    with atomic_files(d) as stage:  # as a set (a kill leaves the old set or the new one)
        write_json(stage.path("tokenizer.json"), data, indent=None)
        write_json(stage.path("tokenizer_config.json"), config)
        write_json(stage.path("special_tokens_map.json"), smap)


# ------------------------------------------------------------------------------ import


def _load_document(
    path_or_obj: Any,
) -> Tuple[Dict[str, Any], str, Optional[str], Optional[JsonTables]]:
    """(tokenizer.json dict, where, path, its natively decoded tables if any: see
    :func:`split_json`) from a path, folder, dict or tokenizers object."""
    if isinstance(path_or_obj, dict):
        return path_or_obj, "tokenizer.json (dict)", None, None
    if isinstance(path_or_obj, (str, os.PathLike)):
        p = fspath(path_or_obj)
        if os.path.isdir(p):
            p = os.path.join(p, "tokenizer.json")
            if not os.path.exists(p):
                raise TokenizerFileNotFoundError(
                    f"{os.fspath(path_or_obj)}: the folder has no tokenizer.json"
                )
        raw = read_tokenizer_file(p, "tokenizer.json")
        data, tables = split_json(raw, p, "tokenizer.json")
        if not isinstance(data, dict):
            raise TokenizerFileError(f"{p}: expected a JSON object, found {type(data).__name__}")
        return data, p, p, tables
    backend = getattr(path_or_obj, "backend_tokenizer", None)  # a transformers fast tokenizer
    obj = backend if backend is not None else path_or_obj
    if hasattr(obj, "to_str"):
        where = f"<{type(path_or_obj).__name__}>"
        data, tables = split_json(obj.to_str().encode("utf-8"), where, "tokenizer.json")
        return data, where, None, tables
    raise TypeError(
        f"expected a tokenizer.json path or folder, a dict, or a tokenizers/transformers tokenizer, "
        f"not {type(path_or_obj).__name__}"
    )


def read_truncation(value: Any, where: str) -> Optional[Truncation]:
    """The file's ``truncation`` (an object as ``tokenizers`` writes it, or null)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise TokenizerFileError(f"{where}: truncation must be an object or null, not {value!r}")
    strategy = value.get("strategy")
    if strategy == "OnlySecond":
        raise _fail(
            where,
            "truncation with strategy OnlySecond (it truncates the second sequence of a pair; "
            "toksmith encodes single sequences)",
        )
    names = {"LongestFirst": "longest_first", "OnlyFirst": "only_first"}
    directions = {"Right": "right", "Left": "left"}
    try:
        # the keys tokenizers requires (direction came later: Right when missing)
        missing = [k for k in ("max_length", "strategy", "stride") if k not in value]
        if missing:
            raise ValueError(f"no {', '.join(missing)}")
        if strategy not in names or value.get("direction", "Right") not in directions:
            raise ValueError("strategy or direction unknown")
        return make_truncation(
            value["max_length"],
            value["stride"],
            names[strategy],
            directions[value.get("direction", "Right")],
        )
    except (TypeError, ValueError) as e:
        raise TokenizerFileError(f"{where}: truncation {value!r} is not valid ({e})") from None


def read_padding(value: Any, where: str) -> Optional[Padding]:
    """The file's ``padding`` (an object as ``tokenizers`` writes it, or null)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise TokenizerFileError(f"{where}: padding must be an object or null, not {value!r}")
    strategy = value.get("strategy")
    directions = {"Right": "right", "Left": "left"}
    try:
        required = ("strategy", "direction", "pad_id", "pad_type_id", "pad_token")
        missing = [k for k in required if k not in value]
        if missing:  # as tokenizers requires them
            raise ValueError(f"no {', '.join(missing)}")
        if strategy == "BatchLongest":
            length = None
        elif isinstance(strategy, dict) and list(strategy) == ["Fixed"]:
            length = strategy["Fixed"]
            if length is None:
                raise ValueError("Fixed needs a length")
        else:
            raise ValueError(f"unknown strategy {strategy!r}")
        if value["direction"] not in directions:
            raise ValueError(f"unknown direction {value['direction']!r}")
        return make_padding(
            directions[value["direction"]],
            value["pad_id"],
            value["pad_type_id"],
            value["pad_token"],
            length,
            value.get("pad_to_multiple_of"),
        )
    except (TypeError, ValueError) as e:
        raise TokenizerFileError(f"{where}: padding {value!r} is not valid ({e})") from None


def _fail(where: str, msg: str) -> ConversionError:
    return ConversionError(f"{where}: {msg}; toksmith only represents byte-level BPE exactly")


def _regex_escape(s: str) -> str:
    return "".join("\\" + c if c in "\\.^$|?*+()[]{}-#&~" else c for c in s)


def _split_pattern(step: Dict[str, Any], where: str) -> str:
    behavior = step.get("behavior", "Isolated")
    # Removed with invert=True keeps the matches only, as toksmith and tiktoken do
    matches_only = behavior == "Removed" and step.get("invert") is True
    if behavior != "Isolated" and not matches_only:
        raise _fail(
            where,
            f"pre_tokenizer Split with behavior {behavior!r} (only 'Isolated', or 'Removed' with "
            "invert=True, keeps the pieces as toksmith does)",
        )
    pat = step.get("pattern") or {}
    if "Regex" in pat:
        regex = pat["Regex"]
        if regex in _KNOWN_HF_REGEXES:
            return _KNOWN_HF_REGEXES[regex]
        try:
            body = from_oniguruma(regex)
        except ConversionError as e:
            raise _fail(where, f"pre_tokenizer Split regex: {e}") from None
    elif "String" in pat:
        body = _regex_escape(pat["String"])
    else:
        raise _fail(where, f"pre_tokenizer Split with pattern {pat!r}")
    if not body or can_match_empty(body):
        raise _fail(
            where,
            f"pre_tokenizer Split regex {pat!r} can match the empty string (Hugging Face then "
            "cuts the text at places a toksmith pattern cannot)",
        )
    if matches_only:
        return body
    # Isolated keeps the text between matches as pieces; toksmith's pattern must match it too.
    return covering(body)


# ---- sequences of Split pre-tokenizers that one toksmith pattern splits exactly alike
#
# Hugging Face applies each Split to the pieces of the one before. DeepSeek V3's three
# Isolated splits cut the text into runs of digits (in threes), runs of CJK characters (_DS_K)
# and runs of everything else; its last regex then splits each run on its own. One pattern does
# the same when that last regex is confined to the run it starts in: every character it takes,
# and every character its look-aheads see, belongs to the run's class (a look-ahead at the end
# of a run sees the end of the text). No character is both a digit and in _DS_K.

_DS_K = "\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff"
_DS_LAST = (
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?"
    "[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"
)
_K = "\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff"
#: the last regex confined to a CJK run: only its letter and punctuation branches can match there
_DS_IN_K = (
    f"(?:(?=[{_K}])[^\\p{{L}}\\p{{P}}\\p{{S}}])?(?:(?=[{_K}])[\\p{{L}}\\p{{M}}])+"
    f"|(?:(?=[{_K}])[\\p{{P}}\\p{{S}}])+"
)
#: ... and confined to a run of the other characters (no digit, nothing of _DS_K)
_DS_IN_OTHER = (
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+"
    f"|[^\r\n\\p{{L}}\\p{{P}}\\p{{S}}\\p{{N}}{_K}]?(?:(?![{_K}])[\\p{{L}}\\p{{M}}])+"
    f"| ?(?:(?![{_K}])[\\p{{P}}\\p{{S}}])+[\r\n]*|\\s*[\r\n]+|\\s+(?![^\\s\\p{{N}}{_K}])|\\s+"
)
#: (regex, behavior, invert) of each Split -> the one pattern that splits alike
_SPLIT_SEQUENCES: Dict[Tuple[Tuple[str, str, bool], ...], str] = {
    (
        ("\\p{N}{1,3}", "Isolated", False),
        (f"[{_DS_K}]+", "Isolated", False),
        (_DS_LAST, "Isolated", False),
    ): (
        f"\\p{{N}}{{1,3}}|{_DS_IN_K}|(?:(?!{_DS_IN_K})[{_K}])+"
        f"|{_DS_IN_OTHER}|(?:(?!{_DS_IN_OTHER})[^\\p{{N}}{_K}])+"
    ),
}


def _split_sequence_pattern(steps: Any, where: str) -> Optional[str]:
    """The one pattern for a sequence of Split steps (:data:`_SPLIT_SEQUENCES`), or None."""
    key = []
    for st in steps:
        pat = st.get("pattern") or {}
        if "Regex" not in pat:
            return None
        key.append((pat["Regex"], st.get("behavior", "Isolated"), st.get("invert") is True))
    return _SPLIT_SEQUENCES.get(tuple(key))


def _byte_level_step(step: Dict[str, Any], where: str) -> bool:
    """Check a ByteLevel pre-tokenizer; return its use_regex."""
    if step.get("add_prefix_space", False):
        raise _fail(
            where,
            "pre_tokenizer ByteLevel with add_prefix_space=True (a space is added before the text)",
        )
    return bool(step.get("use_regex", True))


def _pattern_from_pretokenizer(pt: Any, where: str) -> str:
    if pt is None:
        raise _fail(where, "no pre_tokenizer: without ByteLevel the model does not see bytes")
    typ = pt.get("type")
    if typ == "ByteLevel":
        return "gpt2" if _byte_level_step(pt, where) else r"[\s\S]+"
    if typ != "Sequence":
        raise _fail(where, f"pre_tokenizer {typ}")
    steps = pt.get("pretokenizers") or []
    types = [s.get("type") for s in steps]
    if types == ["ByteLevel"]:
        return _pattern_from_pretokenizer(steps[0], where)
    if types == ["Split", "ByteLevel"]:
        if _byte_level_step(steps[1], where):
            raise _fail(
                where,
                "pre_tokenizer Split followed by ByteLevel(use_regex=True) (two successive splits)",
            )
        return _split_pattern(steps[0], where)
    if len(types) > 2 and types[-1] == "ByteLevel" and set(types[:-1]) == {"Split"}:
        if _byte_level_step(steps[-1], where):
            raise _fail(
                where,
                "pre_tokenizer Split steps followed by ByteLevel(use_regex=True) (one more split)",
            )
        known = _split_sequence_pattern(steps[:-1], where)
        if known is not None:
            return known
    raise _fail(
        where,
        f"pre_tokenizer Sequence{types} (toksmith supports [ByteLevel], [Split, ByteLevel], and "
        "the sequences of Split steps that one pattern splits alike, such as DeepSeek V3's)",
    )


_UNICODE_FORMS = ("NFC", "NFD", "NFKC", "NFKD")
#: the normalizers toksmith applies natively, as ``tokenizers`` does (``Replace`` with a
#: ``String`` pattern only: a ``Regex`` one is Oniguruma syntax)
_NATIVE_NORMALIZERS = (*_UNICODE_FORMS, "Lowercase", "StripAccents", "Strip", "Replace", "Prepend")


def _normalizer_spec(norm: Any, where: str) -> Optional[Dict[str, Any]]:
    """The normalizer object for the spec (None when there is none or it changes nothing), or
    ConversionError naming the part toksmith does not apply."""
    if norm is None:
        return None
    typ = norm.get("type")
    if typ == "Sequence":
        inner = [n for n in (norm.get("normalizers") or []) if n is not None]
        kept = []
        for n in inner:  # a loop: one stack frame per nested Sequence
            one = _normalizer_spec(n, where)
            if one is not None:
                kept.append(one)
        if not kept:
            return None
        return kept[0] if len(kept) == 1 else {"type": "Sequence", "normalizers": kept}
    if typ not in _NATIVE_NORMALIZERS:
        raise _fail(
            where,
            f"normalizer {typ}: toksmith applies {', '.join(_NATIVE_NORMALIZERS)} and Sequences of "
            "them, so the ids would differ on text it changes",
        )
    if typ == "Replace" and "String" not in (norm.get("pattern") or {}):
        raise _fail(
            where,
            f"normalizer Replace with pattern {norm.get('pattern')!r}: toksmith replaces String "
            "patterns only (a Regex one is Oniguruma syntax)",
        )
    return dict(norm)


def _template_ids(pp: Dict[str, Any], name: Any, where: str) -> List[int]:
    """The ids a TemplateProcessing's special token ``name`` stands for."""
    entry = (pp.get("special_tokens") or {}).get(name) if isinstance(name, str) else None
    ids = entry.get("ids") if isinstance(entry, dict) else None
    if not isinstance(ids, list) or not all(type(i) is int and i >= 0 for i in ids):
        raise TokenizerFileError(
            f"{where}: post_processor TemplateProcessing names the special token {name!r}, "
            "which its special_tokens do not give as a list of ids"
        )
    return ids


def _post_template(pp: Any, where: str) -> Optional[Tuple[List[int], List[int]]]:
    """``(prefix ids, suffix ids)`` that a post-processor puts around the ids of one text
    (``TemplateProcessing``'s ``single``, ``RobertaProcessing``/``BertProcessing``'s
    ``cls``/``sep``, ``ByteLevel`` none, a ``Sequence`` each in turn), or None when it adds
    nothing. ConversionError for a post-processor toksmith cannot apply."""
    if pp is None:
        return None
    typ = pp.get("type")
    prefix: List[int] = []
    suffix: List[int] = []
    if typ == "ByteLevel":
        return None
    if typ == "Sequence":
        for p in pp.get("processors") or []:  # each wraps what the ones before made
            got = _post_template(p, where)
            if got is not None:
                prefix[:0] = got[0]
                suffix.extend(got[1])
    elif typ == "TemplateProcessing":
        seen = False
        for piece in pp.get("single") or []:
            if "Sequence" in piece:
                if seen or (piece["Sequence"] or {}).get("id", "A") != "A":
                    raise _fail(
                        where,
                        f"post_processor TemplateProcessing with the single template {pp.get('single')!r} "
                        "(toksmith applies templates with the text once, as $A)",
                    )
                seen = True
            elif "SpecialToken" in piece:
                ids = _template_ids(pp, (piece["SpecialToken"] or {}).get("id"), where)
                (suffix if seen else prefix).extend(ids)
            else:
                raise TokenizerFileError(
                    f"{where}: post_processor TemplateProcessing piece {piece!r} is neither a "
                    "Sequence nor a SpecialToken"
                )
        if not seen:
            raise _fail(where, "post_processor TemplateProcessing whose single template has no $A")
    elif typ in ("RobertaProcessing", "BertProcessing"):
        for key, out in (("cls", prefix), ("sep", suffix)):
            val = pp.get(key)
            if not (
                isinstance(val, list) and len(val) == 2 and type(val[1]) is int and val[1] >= 0
            ):
                raise TokenizerFileError(
                    f"{where}: post_processor {typ}.{key} must be [token, id], not {val!r}"
                )
            out.append(val[1])
    else:
        raise _fail(
            where,
            f"post_processor {typ} (toksmith applies TemplateProcessing, RobertaProcessing, "
            "BertProcessing, ByteLevel and Sequences of them; pass strict=False, or --no-strict "
            "to toksmith convert, to drop it: ids are then those of "
            "encode(text, add_special_tokens=False))",
        )
    return (prefix, suffix) if prefix or suffix else None


def _check_decoder(dec: Any, where: str, strict: bool, dropped: Dict[str, Any]) -> None:
    typ = dec.get("type") if dec else None
    if typ == "Sequence":
        inner = dec.get("decoders") or []
        if [d.get("type") for d in inner] == ["ByteLevel"]:
            return
    if typ == "ByteLevel":
        return
    if not strict:
        dropped["decoder"] = typ
        return
    raise _fail(
        where,
        f"decoder {typ}: Hugging Face would decode ids to different text than toksmith "
        "(pass strict=False, or --no-strict to toksmith convert, to accept it; the ids are still "
        "the same)",
    )


_SEQUENCE_ITEMS = {
    "normalizer": "normalizers",
    "pre_tokenizer": "pretokenizers",
    "post_processor": "processors",
    "decoder": "decoders",
}


def _check_shape(data: Dict[str, Any], where: str) -> None:
    """The parts of a tokenizer.json that the checks below read have the JSON types Hugging
    Face requires (it refuses the file otherwise): a wrong one is a TokenizerFileError naming
    it, not an AttributeError from deep inside the reader."""

    def bad(what: str, value: Any, expected: str) -> TokenizerFileError:
        return TokenizerFileError(
            f"{where}: {what} must be {expected}, not {type(value).__name__} "
            f"{json.dumps(value, ensure_ascii=False)[:60]}"
        )

    def component(value: Any, what: str, key: str) -> None:
        if value is None:
            return
        if not isinstance(value, dict):
            raise bad(what, value, "an object or null")
        if value.get("type") == "Sequence":
            items = value.get(_SEQUENCE_ITEMS[key])
            if items is not None and not isinstance(items, list):
                raise bad(f"{what}.{_SEQUENCE_ITEMS[key]}", items, "a list")
            for n, item in enumerate(items or []):
                if not isinstance(item, dict):
                    raise bad(f"{what}.{_SEQUENCE_ITEMS[key]}[{n}]", item, "an object")
                component(item, f"{what}.{_SEQUENCE_ITEMS[key]}[{n}]", key)
        elif value.get("type") == "Split":
            pat = value.get("pattern")
            if not (
                isinstance(pat, dict)
                and len(pat) == 1
                and isinstance(next(iter(pat.values())), str)
            ):
                raise bad(f"{what}.pattern", pat, 'an object {"Regex": text} or {"String": text}')
        elif value.get("type") == "TemplateProcessing":
            for part in ("single", "pair"):
                if not isinstance(value.get(part, []), list):
                    raise bad(f"{what}.{part}", value[part], "a list")
                for n, piece in enumerate(value.get(part, [])):
                    if not isinstance(piece, dict):
                        raise bad(
                            f"{what}.{part}[{n}]",
                            piece,
                            'an object {"Sequence": ...} or {"SpecialToken": ...}',
                        )

    try:
        for key in _SEQUENCE_ITEMS:
            component(data.get(key), key, key)
    except RecursionError:
        raise TokenizerFileError(
            f"{where}: Sequence components nested too deeply to be read"
        ) from None
    added = data.get("added_tokens")
    if added is not None and not isinstance(added, list):
        raise bad("added_tokens", added, "a list")
    for n, a in enumerate(added or []):
        if not isinstance(a, dict):
            raise bad(f"added_tokens[{n}]", a, "an object")
        for flag in ("special", "lstrip", "rstrip", "single_word", "normalized"):
            if not isinstance(a.get(flag, False), bool):
                raise bad(f"added_tokens[{n}].{flag}", a[flag], "true or false")
    for flag in ("byte_fallback", "ignore_merges", "fuse_unk"):
        if data["model"].get(flag) is not None and not isinstance(data["model"][flag], bool):
            raise bad(f"model.{flag}", data["model"][flag], "true, false or null")


def _ranks_ignore_merges(
    vocab: Mapping[str, int], merges: Any, added: Mapping[str, int], where: str
) -> Tuple[Dict[bytes, int], Dict[str, int]]:
    """``(ranks, leftovers)`` of a BPE model with ``"ignore_merges": true`` (Llama 3's
    tokenizer.json, and every vocabulary ``transformers`` converts from tiktoken).

    With ``ignore_merges`` a piece that is a whole token is taken as it is, as tiktoken and
    toksmith do; otherwise the pair of lowest merge index merges first. toksmith merges the
    pair whose merged token has the lowest id, and merges *every* pair of tokens that makes a
    token. The two agree when (checked here, ConversionError otherwise):

    * along the merge list, the ids of the merged tokens never decrease (several merges may make
      one token, and a part may have a higher id than the result: that merge only applies once
      the part exists, at the merged token's rank in both);
    * every split of a token into two tokens is a merge of the file (else Hugging Face never
      makes the token from those parts, while toksmith does).
    Tokens that no split makes are reached only as whole pieces, in both.
    """
    ranks, spelling, skipped = vocab_ranks(vocab, added, where)
    spelled = {text: ranks[b] for text, b in spelling.items()}  # str -> id
    listed = set()
    last = -1
    for n, (ma, mb) in enumerate(merge_pairs(merges, where)):
        for part in (ma, mb):
            if part not in spelled:
                raise TokenizerFileError(
                    f"{where}: merge {n} ({ma!r} {mb!r}) names {part!r}, which is not a token of the vocab"
                )
        made = spelled.get(ma + mb)
        if made is None:
            raise TokenizerFileError(
                f"{where}: merge {n} ({ma!r} {mb!r}) makes {ma + mb!r}, which is not in the vocab"
            )
        if made < last:
            raise ConversionError(
                f"{where}: model BPE (ignore_merges): merge {n} ({ma!r} {mb!r}) makes token id {made} "
                f"after a merge that made id {last}: toksmith merges by token id, so the merged "
                "tokens' ids must not decrease along the merge list"
            )
        last = made
        listed.add((ma, mb))
    for s in spelled:
        for k in range(1, len(s)):
            left = s[:k]
            if left not in spelled:
                continue
            right = s[k:]
            if right in spelled and (left, right) not in listed:
                raise ConversionError(
                    f"{where}: model BPE (ignore_merges): the tokens {left!r} and {right!r} make the "
                    f"token {s!r} but the file has no merge '{left} {right}': Hugging Face never "
                    "merges them, toksmith does"
                )
    return ranks, skipped


def read_huggingface(
    path_or_obj: Any, *, strict: bool = True, name: Optional[str] = None
) -> TokenizerSpec:
    """The spec of a byte-level BPE ``tokenizer.json`` (:func:`toksmith.from_huggingface` builds
    a :class:`toksmith.Tokenizer` with the same ids from it).

    ``path_or_obj``: the file, a folder holding it, its parsed JSON (dict), a
    ``tokenizers.Tokenizer`` or a ``transformers`` fast tokenizer. ``strict=False`` accepts a
    post-processor toksmith cannot apply or a non-``ByteLevel`` decoder by dropping them with a
    warning and recording them in ``tok.metadata["huggingface"]``; everything else that
    toksmith cannot reproduce raises :class:`ConversionError`.
    """
    if not isinstance(strict, bool):  # "no" was taken as True
        raise TypeError(f"strict must be True or False, not {type(strict).__name__}")
    data, where, path, tables = _load_document(path_or_obj)
    return _spec_from_document(data, where, path, strict=strict, name=name, tables=tables)


def _spec_from_document(
    data: Dict[str, Any],
    where: str,
    path: Optional[str],
    *,
    strict: bool,
    name: Optional[str],
    tables: Optional[JsonTables] = None,
) -> TokenizerSpec:
    """:func:`read_huggingface` on a parsed document (``where`` names it in messages; ``path``
    is its file, if any). With ``tables``, the document's model has no vocab and merges: they
    were decoded natively, and the whole file is parsed only if the native checks decline."""
    model = data.get("model")
    if not isinstance(model, dict):
        raise TokenizerFileError(f"{where}: no 'model' object: not a Hugging Face tokenizer.json")
    _check_shape(data, where)
    has_merges = "merges" in model or (tables is not None and tables.native.has_merges)
    mtype = model.get("type", "BPE" if has_merges else None)
    if mtype != "BPE":
        raise _fail(where, f"model {mtype}")
    if model.get("dropout") not in (None, 0, 0.0):
        raise _fail(where, f"model BPE with dropout={model['dropout']} (random segmentation)")
    for opt in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(opt):
            raise _fail(where, f"model BPE with {opt}={model[opt]!r}")
    if model.get("byte_fallback"):
        raise _fail(
            where, "model BPE with byte_fallback=True (a character-level BPE with byte tokens)"
        )
    dropped: Dict[str, Any] = {}
    normalizer = _normalizer_spec(data.get("normalizer"), where)
    pattern = _pattern_from_pretokenizer(data.get("pre_tokenizer"), where)
    try:
        template = _post_template(data.get("post_processor"), where)
    except ConversionError:
        if strict:
            raise
        template = None
        dropped["post_processor"] = data["post_processor"].get("type")
    _check_decoder(data.get("decoder"), where, strict, dropped)

    specials: Dict[str, int] = {}
    pinned: Dict[str, int] = {}
    for n, a in enumerate(data.get("added_tokens") or []):
        content, i = a.get("content"), a.get("id")
        if (
            not isinstance(content, str)
            or not content
            or not isinstance(i, int)
            or isinstance(i, bool)
            or i < 0
        ):
            raise TokenizerFileError(
                f"{where}: added_tokens[{n}] = {a!r} is not a valid added token"
            )
        for opt in ("lstrip", "rstrip", "single_word"):
            if a.get(opt):
                raise _fail(where, f"added token {content!r} with {opt}=True")
        if content in specials or content in pinned:
            raise TokenizerFileError(f"{where}: the added token {content!r} is listed twice")
        if normalizer is not None and a.get("normalized", not a.get("special")) == bool(
            a.get("special")
        ):
            # toksmith finds special tokens in the text as it is and pinned ones in the
            # normalized text; tokenizers does so by each token's "normalized" flag
            raise _fail(
                where,
                f"added token {content!r} with special={bool(a.get('special'))} and "
                f"normalized={a.get('normalized', not a.get('special'))} under normalizer "
                f"{normalizer['type']} (toksmith matches special tokens before normalizing and "
                "the others after)",
            )
        (specials if a.get("special") else pinned)[content] = i
    if "decoder" not in dropped:  # a ByteLevel decoder, which maps some added tokens to bytes
        as_bytes = [t for t in (*specials, *pinned) if decoded_as_bytes(t)]
        if as_bytes and strict:
            raise _fail(
                where,
                f"decoder ByteLevel decodes the added token {as_bytes[0]!r} as "
                f"{str_to_token(as_bytes[0]).decode('utf-8', 'replace')!r} (its characters are all "
                "in the byte-level alphabet) where toksmith decodes its text (pass strict=False, or "
                "--no-strict to toksmith convert, to accept it; the ids are still the same)",
            )
        if as_bytes:
            dropped["decoded_as_bytes"] = as_bytes
    merges = None
    ignore_merges = model.get("ignore_merges") is True
    several_merges = False  # the merge list was checked by _ranks_ignore_merges
    got = None
    if ignore_merges and tables is not None:
        # merges out of order, several per token (Llama 3): _ranks_ignore_merges, natively; it
        # declines a list the strict reading accepts, which then reads it (tried first, the
        # strict reading would refuse Llama 3's 280k merges after a second of work)
        got = tables.native.ranks_ignore_merges({**specials, **pinned})
        several_merges = got is not None
    if got is None and tables is not None:
        got = tables.native.ranks_from_vocab_and_merges({**specials, **pinned})
    if got is None:
        if tables is not None:  # declined: the reference below says what is wrong
            model, tables = tables.document()["model"], None
        vocab = model.get("vocab")
        if not isinstance(vocab, dict):
            raise TokenizerFileError(f"{where}: model.vocab must be an object (token -> id)")
        # "left right" strings or pairs, checked (and normalized if need be) by the calls below
        merges = model.get("merges", [])
        try:
            got = ranks_from_vocab_and_merges(vocab, merges, {**specials, **pinned}, where)
        except ConversionError:
            if not ignore_merges:
                raise
            # several merges per token, parts with higher ids than the result (Llama 3)
            got = _ranks_ignore_merges(vocab, merges, {**specials, **pinned}, where)
            several_merges = True
    ranks, leftovers = got
    if leftovers:
        shown = sorted(leftovers.items(), key=lambda kv: kv[1])[:5]
        raise _fail(
            where,
            f"{len(leftovers)} vocab token(s) are made by no merge and are not added tokens "
            f"(e.g. {shown})",
        )
    extras = _toksmith_extras(data, model, where, pattern)
    meta: Dict[str, Any] = {"source": source_meta("huggingface", path)}
    if dropped:
        meta["huggingface"] = dropped
        warnings.warn(
            f"{where}: dropped {dropped} (strict=False): Hugging Face's output differs where they act",
            UserWarning,
            stacklevel=2,
        )
    check: Optional[MergeCheck]
    if several_merges:
        check = None  # _ranks_ignore_merges checked that the merges are exactly toksmith's
    elif tables is not None:
        split = tables

        def file_merges() -> Any:
            return split.document()["model"].get("merges", [])

        check = MergeCheck(file_merges, where, split.native)
    else:
        check = MergeCheck(merges, where)
    truncation = read_truncation(data.get("truncation"), where)
    padding = read_padding(data.get("padding"), where)
    if extras is not None:  # written by tok.save("tokenizer.json"): read back as saved
        return TokenizerSpec(
            ranks,
            pattern=_from_file(extras["pattern"]),
            special_tokens=specials,
            pinned_tokens=pinned,
            name=name if name is not None else extras["name"],
            exact_name=name is None and isinstance(extras["name"], str),
            metadata={**extras["metadata"], **({"huggingface": dropped} if dropped else {})},
            where=where,
            build_error="conversion",
            merge_check=check,
            truncation=truncation,
            padding=padding,
            normalizer=normalizer,
            template=template,
        )
    return TokenizerSpec(
        ranks,
        pattern=_from_file(pattern),
        special_tokens=specials,
        pinned_tokens=pinned,
        name=name
        or (os.path.basename(os.path.dirname(os.path.abspath(path))) if path else "huggingface"),
        metadata=meta,
        where=where,
        build_error="conversion",
        merge_check=check,
        truncation=truncation,
        padding=padding,
        normalizer=normalizer,
        template=template,
    )


__all__ = [
    "HF_BYTELEVEL_REGEX",
    "huggingface_json",
    "to_huggingface",
    "save_huggingface",
    "save_tokenizer_json",
    "tokenizer_json",
    "read_huggingface",
    "read_padding",
    "read_truncation",
]
