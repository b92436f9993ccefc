"""GPT-2's original files: ``encoder.json`` + ``vocab.bpe`` (Hugging Face: ``vocab.json`` +
``merges.txt``, the same formats).

``encoder.json`` maps each token, spelled in the byte-level alphabet (see
:mod:`toksmith.bytelevel`), to its id; ``vocab.bpe`` lists the merges in order, one ``"left
right"`` pair a line after a ``#version`` line. Neither file stores the split pattern (GPT-2's
is toksmith's ``"gpt2"``, the default) nor says which tokens are special: tokens that are
neither single bytes nor made by a merge (GPT-2's ``<|endoftext|>``) are taken as special
tokens unless ``special_tokens``/``pinned_tokens`` say otherwise.

No optional dependency is needed.

>>> import os, tempfile, toksmith
>>> tok = toksmith.train_from_iterator(["low lower lowest"] * 20, vocab_size=262, pattern="gpt2",
...                                    special_tokens=["<|endoftext|>"])
>>> d = tempfile.mkdtemp()
>>> save_gpt2_files(tok, d)
>>> sorted(os.listdir(d))
['merges.txt', 'vocab.json']
>>> spec = read_gpt2_files(os.path.join(d, "vocab.json"), os.path.join(d, "merges.txt"))
>>> spec.mergeable_ranks == tok.mergeable_ranks(), spec.special_tokens
(True, {'<|endoftext|>': 261})
"""

from __future__ import annotations

import os
from typing import Dict, List, Mapping, Optional, Tuple

from .. import _core
from .._fileio import atomic_files, write_text_atomic
from .._paths import fspath
from ..bytelevel import str_to_token, token_to_str
from ..errors import TokenizerFileError
from ..pretokenize import _from_file
from ..spec import MergeCheck, TokenizerSpec
from ._common import (
    ConversionError,
    PathLike,
    check_added_decoding,
    check_added_spelling,
    check_no_normalizer,
    check_tokenizer,
    decoded_as_bytes,
    loads_json,
    make_folder,
    merge_strings,
    ranks_from_vocab_and_merges,
    read_tokenizer_file,
    source_meta,
    write_json,
)


def read_merges_file(path: PathLike) -> List[Tuple[str, str]]:
    """Read ``vocab.bpe``/``merges.txt``: an optional ``#version`` line, then one pair a line."""
    p = fspath(path)
    return _parse_merges(_read_merges_text(p), p)


def _read_merges_text(p: str) -> str:
    raw = read_tokenizer_file(p, "merges.txt")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TokenizerFileError(f"{p}: not UTF-8 text (byte offset {e.start})") from None


def _parse_merges(text: str, p: str) -> List[Tuple[str, str]]:
    fast = _core.parse_merges_text(text)  # None: a malformed line (the reference names it)
    if fast is not None:
        return fast
    return _merges_text_reference(text, p)


def _merges_text_reference(text: str, p: str) -> List[Tuple[str, str]]:
    """The readable reference of :func:`read_merges_file` after decoding."""
    out: List[Tuple[str, str]] = []
    for n, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line or (n == 1 and line.startswith("#version")):
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise TokenizerFileError(f"{p}: line {n}: expected 'left right', found {line[:60]!r}")
        out.append((parts[0], parts[1]))
    return out


def _refuse_end_of_word(merges_text: str, where: str) -> None:
    """CLIP's files (``vocab.json`` + ``merges.txt``) look like GPT-2's but run another BPE:
    words are lower-cased and cleaned, and each word's last symbol carries a ``</w>`` suffix
    (merges such as ``"e r</w>"``). toksmith's byte-level BPE has no end-of-word marker, so
    such files are refused here by name rather than misread (:func:`toksmith.load_any` reads
    them, see :mod:`toksmith.files.clip`)."""
    lines = merges_text.splitlines()[:2000]
    marked = sum(1 for line in lines if line.endswith("</w>"))
    if lines and marked * 10 >= len(lines):
        raise ConversionError(
            f"{where}: an end-of-word BPE (CLIP's: {marked} of the first {len(lines)} merges end "
            "with '</w>'), with lower-casing and whitespace clean-up, which toksmith.Tokenizer "
            "does not run: load CLIP's files with toksmith.load_any(path), which gives a "
            "PipelineTokenizer with CLIP's ids"
        )


def read_gpt2_files(
    encoder_json: PathLike,
    vocab_bpe: PathLike,
    *,
    pattern: str = "gpt2",
    special_tokens: Optional[Mapping[str, int]] = None,
    pinned_tokens: Optional[Mapping[str, int]] = None,
    name: Optional[str] = None,
) -> TokenizerSpec:
    """The spec of ``encoder.json`` + ``vocab.bpe`` (or ``vocab.json`` + ``merges.txt``), which
    :func:`toksmith.from_gpt2_files` builds a :class:`toksmith.Tokenizer` from.

    The vocab's extra tokens (neither a byte nor a merge result) become special tokens; when
    ``special_tokens`` or ``pinned_tokens`` are given, every extra token must be in one of them
    (with the same id), and tokens given there that are not in the vocab are added.
    Malformed files (truncated JSON, merges naming tokens not in the vocab, ids out of merge
    order...) raise :class:`toksmith.TokenizerFileError` or :class:`ConversionError`.
    """
    enc_p, bpe_p = fspath(encoder_json), fspath(vocab_bpe)
    where = f"{enc_p} + {bpe_p}"
    raw = read_tokenizer_file(enc_p, "encoder.json")

    def parsed_vocab() -> Dict[str, int]:
        vocab = loads_json(raw, enc_p, "encoder.json")
        if not isinstance(vocab, dict):
            raise TokenizerFileError(
                f"{enc_p}: expected a JSON object (token -> id), found {type(vocab).__name__}"
            )
        return vocab

    try:
        text = _read_merges_text(bpe_p)
    except (OSError, TokenizerFileError):
        parsed_vocab()  # a bad encoder.json is reported first, as when the files are read in turn
        raise
    _refuse_end_of_word(text, where)
    # both tables decoded natively; None: the Python objects and the references below
    tables = _core.split_gpt2_files(raw, text)
    got = tables.ranks_from_vocab_and_merges({}) if tables is not None else None
    merges = None
    if got is None:
        tables = None
        vocab = parsed_vocab()
        merges = _parse_merges(text, bpe_p)
        got = ranks_from_vocab_and_merges(vocab, merges, {}, where)
    ranks, extras = got
    given = {**dict(special_tokens or {}), **dict(pinned_tokens or {})}
    if special_tokens is None and pinned_tokens is None:
        spelled = sorted((i, t) for t, i in extras.items() if decoded_as_bytes(t))
        if spelled:
            i, t = spelled[0]
            raise ConversionError(
                f"{where}: {len(spelled)} vocab token(s) spelled in the byte-level alphabet (e.g. {t!r}, id {i}) "
                f"are made by no merge (is the merges file truncated?): as special tokens their text would "
                f"be {t!r} where GPT-2 decodes {str_to_token(t).decode('utf-8', 'replace')!r}; pass "
                "special_tokens= (and pinned_tokens=) to say which tokens are special"
            )
        specials, pinned = dict(extras), {}
    else:
        specials, pinned = dict(special_tokens or {}), dict(pinned_tokens or {})
        for t, i in extras.items():
            if given.get(t) != i:
                raise ConversionError(
                    f"{enc_p}: the token {t!r} (id {i}) is neither a byte nor made by a merge, and is not among "
                    "the special_tokens/pinned_tokens given (with that id)"
                )
    if tables is not None:
        check = MergeCheck(lambda: _parse_merges(text, bpe_p), where, tables)
    else:
        check = MergeCheck(merges, where)
    return TokenizerSpec(
        ranks,
        pattern=_from_file(pattern),
        special_tokens=specials,
        pinned_tokens=pinned,
        name=name or os.path.basename(os.path.dirname(os.path.abspath(enc_p))) or "gpt2",
        metadata={"source": source_meta("gpt2", enc_p)},
        where=enc_p,
        build_error="conversion",
        merge_check=check,
    )


def gpt2_vocab(tok) -> Dict[str, int]:
    """The ``vocab.json`` mapping: mergeable tokens spelled byte-level, then special and pinned
    tokens by their text."""
    check_tokenizer(tok, "gpt2_vocab")
    check_no_normalizer(tok, "gpt2_vocab")
    ranks = tok.mergeable_ranks()
    added = {**tok.special_tokens, **tok.pinned_tokens}
    check_added_spelling(added, ranks, "GPT-2 vocab.json")
    check_added_decoding(added, "GPT-2 vocab.json")
    vocab = {token_to_str(b): i for b, i in ranks.items()}
    vocab.update(added)
    return dict(sorted(vocab.items(), key=lambda kv: kv[1]))


def save_gpt2_files(tok, directory: PathLike) -> None:
    """Write ``vocab.json`` and ``merges.txt`` (Hugging Face's names) into ``directory``.

    The files keep neither the split pattern nor the special/pinned distinction: load them back
    with ``from_gpt2_files(vocab, merges, pattern=tok.pattern, special_tokens=...,
    pinned_tokens=...)``. A rank table without a merge list raises :class:`ConversionError`.
    """
    check_tokenizer(tok, "save_gpt2_files")
    check_no_normalizer(tok, "save_gpt2_files")
    d = fspath(directory)
    merges = merge_strings(tok, "GPT-2 merges.txt")
    vocab = gpt2_vocab(tok)
    make_folder(d, "GPT-2 files")
    # as a set: a kill never leaves the vocab of one tokenizer beside the merges of another
    with atomic_files(d) as stage:
        write_json(stage.path("vocab.json"), vocab, indent=None)
        write_text_atomic(
            stage.path("merges.txt"),
            "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges),
        )


__all__ = ["read_gpt2_files", "save_gpt2_files", "read_merges_file", "gpt2_vocab"]
