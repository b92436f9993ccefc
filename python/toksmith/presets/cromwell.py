"""The Cromwell preset: a code-aware byte-level BPE for mixed English + code (seed 000).

What the design asks for, and how it is met on toksmith's core:

* **50,000 byte-level tokens** with byte fallback: any text, any language, encodes and decodes
  exactly.
* **Code-aware merges** (indentation, keywords, operators, brackets, number prefixes): BPE on
  :data:`LINE_PATTERN`, o200k's split with line starts as pieces. A line break takes the next
  line's indentation and first word with the space after it, so line break + indentation +
  keyword + space (``"\\n        return "``) and keyword + space (``"def "``, ``"return "``)
  become tokens where the corpus has them; operator runs (``"!=="``), bracket runs
  (``"))"``), ``0x``/``0b`` numbers and camelCase parts (``My`` + ``Class``) as in o200k.
  It encodes piece by piece like any byte-level BPE (a hand-written scanner, the per-thread
  piece cache). The seed's training loop (which rescans the corpus for every merge) becomes
  toksmith's incremental trainer; benches/cromwell_compression.py measures the gain on
  held-out text. An optional second stage (``superword_share``; SuperBPE, Liu et al. 2025)
  learns merges across o200k's pieces inside whitespace-free runs (:data:`CODE_PATTERN`):
  more compression, slower encoding of new text.
* **Special tokens at ids 0-7**: ``<PAD> <EOS> <BOS> <FILE> </FILE> <EDIT_START> <EDIT_END>
  <DELETE>``; bytes take ids 8-263 and merges the ids after them.
* **File and edit framing**: :meth:`CodeTokenizer.tokenize_file_with_edit` lays out
  ``<FILE> path </FILE> content <EDIT_START> new content <EDIT_END>`` (the seed's
  ``<FILE=path>`` header is the ``<FILE> path </FILE>`` ids) and
  :meth:`CodeTokenizer.parse_edit_output` reads a model's output back, on the ids: a file that
  contains the text ``<EDIT_START>`` is still content, never a marker.
* **Cache and parallel batches**: the core's per-thread piece cache, the seed's whole-text LRU
  :class:`TokenCache` (``encode_cached``) and :meth:`CodeTokenizer.encode_batch` on all cores.

>>> code = train(["def add(a, b):\\n    return a + b\\n"] * 30, vocab_size=300)
>>> code.special_ids["<FILE>"], code.tokenizer.decode_single_token_bytes(8)
(3, b'\\x00')
>>> ids = code.tokenize_file_with_edit("add.py", "x = 1\\n", "x = 2\\n")
>>> code.tokenizer.decode(ids)
'<FILE>add.py</FILE>x = 1\\n<EDIT_START>x = 2\\n<EDIT_END>'
>>> out = code.parse_edit_output(ids)
>>> out["file_path"], out["old_content"], out["new_content"], out["edit_type"]
('add.py', 'x = 1\\n', 'x = 2\\n', 'replace')
"""

from __future__ import annotations

import os
import threading
import warnings
from collections import OrderedDict, abc
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from .. import _core
from .._paths import fspath
from ..corpus import expand_paths, inner_name, iter_jsonl, read_text
from ..documents import iter_documents
from ..tokenizer import Tokenizer
from ._base import WrapperTokenizer
from ._checks import as_int as _as_int
from ._checks import check_flag as _flag
from ._checks import check_train_options, optional_int
from ._registry import CROMWELL_LINE_PATTERN, CROMWELL_SPECIAL_TOKENS, PRESETS
from ._sources import train_preset

PRESET = PRESETS["cromwell"]
#: the eight special tokens, in id order (ids 0-7 in a tokenizer trained by :func:`train`)
SPECIAL_TOKENS: Tuple[str, ...] = CROMWELL_SPECIAL_TOKENS
#: the seed's vocabulary size
DEFAULT_VOCAB_SIZE = PRESET.vocab_size
#: the file extensions :func:`collect_code_corpus` takes by default (the seed's list)
DEFAULT_EXTENSIONS: Tuple[str, ...] = (".py", ".js", ".cpp", ".h", ".ts")
#: Cromwell's split: o200k's pattern with line starts (a line break with the next line's
#: indentation and its first word and the space after it, or its first punctuation run),
#: ``0x``/``0b`` numbers as pieces, and punctuation runs that stop at a line break. A token can
#: so hold ``"\\n        return "``, ``"def "``, ``"!=="``, ``"0x"``; it runs on a hand-written
#: scanner.
LINE_PATTERN = CROMWELL_LINE_PATTERN
#: the split of the optional second (superword) stage: a run of non-space characters with the
#: spaces or tabs before it, or line breaks with the next line's indentation and first run (a
#: trailing run of spaces is a piece of its own); never text on both sides of a space
CODE_PATTERN = r"[\r\n]+[^\S\r\n]*\S*|[^\S\r\n]*\S+|[^\S\r\n]+"
#: the share of the learned merges that the optional second (superword) stage learns: 0, one
#: stage on :data:`LINE_PATTERN` (benches/cromwell_compression.py measures shares)
DEFAULT_SUPERWORD_SHARE = 0.0

PAD, EOS, BOS, FILE, FILE_END, EDIT_START, EDIT_END, DELETE = SPECIAL_TOKENS

PathLike = Union[str, "os.PathLike[str]"]


def _check_extensions(extensions: Any) -> Tuple[str, ...]:
    """``extensions`` as a tuple of non-empty str; a single str is one extension."""
    if isinstance(extensions, str):
        extensions = (extensions,)
    elif isinstance(extensions, (bytes, bytearray, abc.Mapping)) or not isinstance(
        extensions, abc.Iterable
    ):
        raise TypeError(
            f"extensions must be a str such as '.py' or a list of them, not {type(extensions).__name__}"
        )
    exts = tuple(extensions)
    for e in exts:
        if not isinstance(e, str):
            raise TypeError(f"extensions must be str such as '.py', not {type(e).__name__} ({e!r})")
    if not exts or not all(exts):
        raise ValueError(f"extensions must be non-empty strings such as '.py', not {list(exts)!r}")
    return exts


def _check_text(value: Any, what: str) -> str:
    """``value`` if it is a str UTF-8 can encode: a lone surrogate (from ``errors="surrogateescape"``)
    would come back as U+FFFD, so a frame that must round-trip refuses it."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValueError(
                f"{what} holds a lone surrogate (U+{ord(value[e.start]):04X} at index {e.start}) that UTF-8 "
                "cannot encode, so it would not come back from the ids; pass text decoded with "
                "errors='replace' (not 'surrogateescape')"
            ) from None
    return value


def collect_code_corpus(
    directories: Union[PathLike, Sequence[PathLike]], extensions: Sequence[str] = DEFAULT_EXTENSIONS
) -> List[Path]:
    """The files under ``directories`` (recursively) whose names end with one of
    ``extensions`` (a str is one extension), sorted, ready for :func:`train`. Hidden folders
    (``.git``...) are skipped. A missing directory raises FileNotFoundError; finding no file
    raises ValueError.

    Files are returned, not read: training streams them. (The seed returns the texts; a list
    mixing these paths with texts, as the seed's ``code_corpus + text_corpus``, trains too.)
    """
    if isinstance(directories, (str, os.PathLike)):
        directories = [directories]
    elif isinstance(directories, (bytes, bytearray)) or not isinstance(directories, abc.Iterable):
        raise TypeError(
            f"directories must be a path (str or os.PathLike) or a list of paths, "
            f"not {type(directories).__name__}"
        )
    directories = list(directories)
    for d in directories:
        if not isinstance(d, (str, os.PathLike)):
            raise TypeError(
                f"directories must hold paths (str or os.PathLike), not {type(d).__name__} ({d!r})"
            )
    exts = _check_extensions(extensions)
    found: List[Path] = []
    for directory in directories:
        root = Path(fspath(directory))  # a name no file system can hold: ValueError naming it
        if not root.is_dir():
            raise FileNotFoundError(f"collect_code_corpus: {str(root)!r} is not a directory")
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            found.extend(Path(dirpath) / f for f in sorted(filenames) if f.endswith(exts))
    if not found:
        raise ValueError(
            f"collect_code_corpus: no file ending with {list(exts)} under {[str(d) for d in directories]}"
        )
    return found


def train(
    paths_or_texts: Union[PathLike, Sequence[PathLike], Iterable[str]],
    vocab_size: int = DEFAULT_VOCAB_SIZE,
    *,
    extensions: Optional[Sequence[str]] = None,
    name: Optional[str] = "cromwell",
    threads: Optional[int] = None,
    progress: bool = False,
    text_field: str = "text",
    errors: str = "strict",
    superword_share: float = DEFAULT_SUPERWORD_SHARE,
) -> "CodeTokenizer":
    """Train a Cromwell code tokenizer and return it as a :class:`CodeTokenizer`.

    By default one stage: byte-level BPE on :data:`LINE_PATTERN` (o200k's split with line
    starts, so ``"\\n    return "``, ``"def "`` and ``"0x"`` can be learned). With
    ``superword_share`` above 0 (SuperBPE, Liu et al. 2025), two stages: the first learns
    o200k-pattern BPE, the second, that share of the merges, encodes each piece of the coarser
    :data:`CODE_PATTERN` (a whitespace-free run with the spaces before it; line breaks +
    indentation + the line's first run) with those merges and learns merges across o200k's
    pieces inside it (``"(self,"``, ``"->_M"``); the tokenizer then encodes with
    :data:`CODE_PATTERN`: more compression, slower on new text. Either way byte-level BPE with
    all merges in order, so exact on any text. A one-shot iterator of texts is read into a
    list first when there are two stages (the second reads the corpus again).

    ``paths_or_texts``: a path (file, folder or glob) or a list of paths (for example
    :func:`collect_code_corpus`'s), or any other iterable of str texts, read as
    :func:`toksmith.presets.nanochat.train` reads it. ``vocab_size`` is the total: the eight
    special tokens (ids 0-7), 256 bytes (ids 8-263) and ``vocab_size - 264`` merges.

    ``extensions`` (for example ``(".py", ".cpp")``): folders among the paths are read for
    files with those endings only (:func:`collect_code_corpus`); without it a folder gives all
    its files, as :func:`toksmith.train`.

    A list mixing ``pathlib.Path`` files with str texts (the seed's ``code_corpus +
    text_corpus``) trains on the files' contents and the texts. A list of str that names
    existing files and also holds an item naming nothing (a typo) raises FileNotFoundError
    instead of training on the path strings; pass ``iter(texts)`` to train on such strings.
    ``vocab_size`` and ``threads`` are ints (numpy integers accepted), ``progress`` a bool.
    """
    check_train_options(paths_or_texts, name=name, text_field=text_field, errors=errors)
    vocab_size = _as_int(vocab_size, "vocab_size")
    threads = optional_int(threads, "threads")
    progress = _flag(progress, "progress")
    share = _check_share(superword_share)
    if extensions is not None:
        paths_or_texts = _with_extensions(paths_or_texts, _check_extensions(extensions))
    else:
        paths_or_texts = _plain_source(paths_or_texts, text_field, errors)
    n_super = superword_merges(vocab_size, share)
    if n_super and not isinstance(paths_or_texts, (str, os.PathLike, list, tuple)):
        paths_or_texts = list(paths_or_texts)  # read twice: once per stage
    tok = train_preset(
        PRESET,
        paths_or_texts,
        vocab_size - n_super,
        threads=threads,
        progress=progress,
        text_field=text_field,
        errors=errors,
        name=name,
        # (the second stage merges across o200k's pieces)
        pattern="o200k" if n_super else None,
    )
    if n_super:
        texts = _source_texts(paths_or_texts, text_field, errors)
        tok = _superword_stage(tok, texts, n_super, vocab_size, threads)
    return CodeTokenizer(tok)


def superword_merges(vocab_size: int, share: float = DEFAULT_SUPERWORD_SHARE) -> int:
    """How many of a ``vocab_size`` Cromwell vocabulary's merges the second stage learns."""
    n_learned = _as_int(vocab_size, "vocab_size") - len(SPECIAL_TOKENS) - 256
    return int(n_learned * _check_share(share)) if n_learned > 0 else 0


def add_superwords(
    tok: Tokenizer,
    texts: Iterable[str],
    n_super: int,
    *,
    threads: Optional[int] = None,
) -> Tokenizer:
    """The second training stage on a first stage ``tok`` (o200k-pattern BPE with Cromwell's
    special tokens) trained on ``texts``: ``n_super`` more tokens, encoding with
    :data:`CODE_PATTERN` (what :func:`train` does with ``superword_share`` above 0)."""
    vocab_size = tok.n_vocab + _as_int(n_super, "n_super")
    return _superword_stage(tok, texts, n_super, vocab_size, optional_int(threads, "threads"))


def _check_share(share: Any) -> float:
    if isinstance(share, bool) or not isinstance(share, (int, float)):
        raise TypeError(f"superword_share must be a float in [0, 1), not {type(share).__name__}")
    if not 0 <= share < 1:
        raise ValueError(f"superword_share must be in [0, 1) (0: one stage), not {share!r}")
    return float(share)


def _source_texts(source: Any, text_field: str, errors: str) -> Iterator[str]:
    """The texts of a training source as the first stage read them: files through the one
    corpus reader, texts as they are."""
    if isinstance(source, (str, os.PathLike)):
        yield from iter_documents(source, text_field, errors)
        return
    items = list(source)

    def names_input(p: Any) -> bool:
        if isinstance(p, os.PathLike):
            return True
        return (
            isinstance(p, str)
            and len(p) < 4096
            and "\n" not in p
            and "\0" not in p
            and (os.path.exists(p) or any(c in p for c in "*?["))
        )

    if items and all(names_input(p) for p in items):
        yield from iter_documents(items, text_field, errors)
    else:
        yield from items


def _superword_stage(
    tok: Tokenizer,
    texts: Iterable[str],
    n_super: int,
    vocab_size: int,
    threads: Optional[int],
) -> Tokenizer:
    """The second training stage: count the pieces of ``texts`` (:data:`CODE_PATTERN`), encode
    each distinct one with the first stage's merges, learn ``n_super`` merges across its
    tokens, and return the tokenizer with all merges on :data:`CODE_PATTERN`."""
    counter = _core.ChunkCounter(CODE_PATTERN)
    batch: List[str] = []
    n_threads = threads or 0
    for t in texts:
        batch.append(t)
        if len(batch) >= 256:
            counter.add_texts(batch, n_threads)
            batch = []
    if batch:
        counter.add_texts(batch, n_threads)
    counts = counter.counts()
    ranks = tok.mergeable_ranks()
    specials = tok.special_tokens
    by_line = Tokenizer(ranks, pattern=CODE_PATTERN, special_tokens=specials)
    words = by_line.encode_ordinary_batch([c.decode("utf-8") for c, _ in counts], threads=threads)
    n = tok.n_vocab
    spelled: List[bytes] = [b""] * n  # special tokens spell nothing a merge could make
    for token, i in ranks.items():
        spelled[i] = token
    pairs = [(w, c) for w, (_, c) in zip(words, counts) if len(w) > 1]
    merges = (
        _core.train_token_merges(pairs, spelled, n_super, 0, None, None, n_threads) if pairs else []
    )
    new_ranks = dict(ranks)
    for a, b, made in merges:
        if made >= n:
            spelled.append(spelled[a] + spelled[b])
            new_ranks[spelled[made]] = made
    made_count = len(new_ranks) - len(ranks)
    if made_count < n_super:
        warnings.warn(
            f"the superword stage ran out of pairs after {made_count} new tokens ({n_super} "
            f"requested): the vocabulary has {vocab_size - n_super + made_count} tokens, not "
            f"{vocab_size}; train on more text or ask for a smaller vocab_size",
            stacklevel=3,
        )
    metadata = dict(tok.metadata)
    metadata["superword_merges"] = made_count
    out = Tokenizer(
        new_ranks, pattern=CODE_PATTERN, special_tokens=specials, metadata=metadata, name=tok.name
    )
    return out


def _with_extensions(source: Any, extensions: Sequence[str]) -> Any:
    items = [source] if isinstance(source, (str, os.PathLike)) else source
    if not isinstance(items, (list, tuple)) or not all(
        isinstance(p, (str, os.PathLike)) for p in items
    ):
        raise TypeError("extensions= needs paths_or_texts to be a path or a list of paths")
    out: List[Any] = []
    for p in items:
        if not os.path.exists(p):
            raise FileNotFoundError(
                f"extensions= applies to files and folders: {str(p)[:80]!r} is neither "
                "(to train on texts, leave extensions out)"
            )
        out.extend(collect_code_corpus(p, extensions) if os.path.isdir(p) else [Path(p)])
    return out


def _plain_source(source: Any, text_field: str, errors: str) -> Any:
    """The training source as :func:`~toksmith.presets._sources.train_on_source` reads it, with
    two lists made unambiguous: paths mixed with texts (the seed's ``code_corpus +
    text_corpus``) become one stream of texts, the files read whole; a list of str naming
    existing files next to items that do not exist (a typo in a path) is a FileNotFoundError,
    where it would have trained on the path strings as texts."""
    if not isinstance(source, (list, tuple)) or not source:
        return source
    is_path = [isinstance(p, os.PathLike) for p in source]
    if any(is_path) and not all(is_path) and all(isinstance(p, (str, os.PathLike)) for p in source):
        named = next(
            (
                p
                for p, path in zip(source, is_path)
                if not path and "\n" not in p and _pathish(p) and os.path.exists(p)
            ),
            None,
        )
        if named is not None:
            raise ValueError(
                f"paths_or_texts mixes os.PathLike paths with str texts, and the text {named[:80]!r} "
                "names a file: pass it as pathlib.Path(...) to read the file, or give texts only"
            )
        return _mixed_texts(list(source), text_field, errors)
    if all(isinstance(p, str) for p in source) and not any("\n" in p for p in source):
        missing = _missing_path(source)
        if missing is not None:
            raise FileNotFoundError(
                f"paths_or_texts names existing files, but {missing[:80]!r} does not exist; fix the path, or "
                "pass texts as iter(texts) to train on the strings themselves"
            )
    return source


def _pathish(p: str) -> bool:
    return len(p) < 4096 and ("/" in p or os.sep in p or (bool(Path(p).suffix) and " " not in p))


def _missing_path(items: Sequence[str]) -> Optional[str]:
    """In a list of str whose first item names a file (or the first looks like a path and one of
    the next thousand names a file), the first item that names nothing; globs are left to the
    trainer. Lists of texts cost one stat (or a bounded number of them)."""

    def missing(p: str) -> bool:
        return not os.path.exists(p) and not any(c in p for c in "*?[")

    head = items[0]
    if os.path.exists(head) and _pathish(head):
        return next((p for p in items if missing(p)), None)
    if missing(head) and _pathish(head):
        if any(os.path.exists(p) and _pathish(p) for p in items[1:1001]):
            return head
    return None


def _mixed_texts(items: List[Any], text_field: str, errors: str) -> Iterator[str]:
    for item in items:
        if not isinstance(item, os.PathLike):
            yield item
            continue
        for path in expand_paths(item):
            if inner_name(path).lower().endswith(".jsonl"):
                yield from iter_jsonl(path, text_field, errors)
            else:
                yield read_text(path, errors)


def _array_list(ids: Any, what: str) -> Any:
    """A numpy array (or anything with ``tolist``) as a list; arrays of floats or bools and 0-d
    arrays are TypeErrors."""
    kind = getattr(getattr(ids, "dtype", None), "kind", "i")
    if kind not in "iu":
        raise TypeError(f"{what} must be integers, not an array of dtype {ids.dtype}")
    out = ids.tolist()
    if not isinstance(out, list):
        raise TypeError(
            f"{what} must be a sequence of int token ids, not a single {type(out).__name__}"
        )
    return out


def _token_id(value: Any, k: int, what: str) -> int:
    try:
        return _as_int(value, what)
    except TypeError:
        raise TypeError(
            f"{what} must hold int token ids, not {type(value).__name__} ({value!r}) at index {k}"
        ) from None


def _ids_list(ids: Any, what: str, n_vocab: int) -> List[int]:
    """Token ids as a list of Python ints in ``range(n_vocab)``: a list, tuple, iterator or
    numpy array of ints (numpy integers accepted). A str, bytes, a set or a mapping (no
    order), a single int, a bool or a float is a TypeError; an id out of range a ValueError."""
    if isinstance(ids, (str, bytes, bytearray, abc.Set, abc.Mapping)) or not isinstance(
        ids, abc.Iterable
    ):
        raise TypeError(f"{what} must be a sequence of int token ids, not {type(ids).__name__}")
    out = (
        _array_list(ids, what)
        if hasattr(ids, "tolist") and not isinstance(ids, list)
        else list(ids)
    )
    if set(map(type, out)) - {
        int
    }:  # one C loop; the slow path converts numpy ints, names the culprit
        out = [_token_id(i, k, what) for k, i in enumerate(out)]
    if out and (min(out) < 0 or max(out) >= n_vocab):
        bad = next(i for i in out if not 0 <= i < n_vocab)
        raise ValueError(
            f"{what}: token id {bad} is out of range for a vocabulary of {n_vocab} ids "
            f"(valid: 0..{n_vocab - 1})"
        )
    return out


class CodeTokenizer(WrapperTokenizer):
    """The Cromwell interface over a toksmith :class:`~toksmith.Tokenizer`.

    ``CodeTokenizer(tok)`` needs ``tok`` to have the eight special tokens of
    :data:`SPECIAL_TOKENS` (at any ids; ValueError naming the missing ones otherwise). The
    underlying tokenizer is :attr:`tokenizer`; :attr:`special_ids` maps each name to its id.
    :meth:`load` and :meth:`save` take a file, or a folder holding ``tokenizer.json``.
    """

    preset = "cromwell"
    PRESET_NAME = "Cromwell"
    REQUIRED_SPECIALS = SPECIAL_TOKENS
    SPECIALS_SPEC = dict(PRESET.special_token_spec())  # type: ignore[arg-type]

    def __init__(self, tokenizer: Tokenizer) -> None:
        super().__init__(tokenizer)
        self.special_ids: Dict[str, int] = {s: self._all_specials[s] for s in SPECIAL_TOKENS}
        self.pad_id, self.eos_id, self.bos_id = (self.special_ids[s] for s in (PAD, EOS, BOS))
        self.file_id, self.file_end_id = self.special_ids[FILE], self.special_ids[FILE_END]
        self.edit_start_id, self.edit_end_id = (
            self.special_ids[EDIT_START],
            self.special_ids[EDIT_END],
        )
        self.delete_id = self.special_ids[DELETE]

    def get_vocab_size(self) -> int:
        return self.tokenizer.n_vocab

    # ------------------------------------------------------------------ encode / decode

    def encode(self, text: str, *, bos: bool = False, eos: bool = False) -> List[int]:
        """Token ids of ``text``, all of it as text: a source file that contains ``<EOS>`` or
        ``<FILE>`` gets the ids of those characters, never the special tokens (those come only
        from the framing methods, or from ``bos``/``eos``)."""
        bos, eos = _flag(bos, "bos"), _flag(eos, "eos")
        ids = self.tokenizer.encode_ordinary(text)
        if bos:
            ids.insert(0, self.bos_id)
        if eos:
            ids.append(self.eos_id)
        return ids

    def encode_batch(
        self, texts: Sequence[str], *, threads: Optional[int] = None
    ) -> List[List[int]]:
        """:meth:`encode` of each text, on ``threads`` threads (default: all cores)."""
        return self.tokenizer.encode_ordinary_batch(texts, threads=optional_int(threads, "threads"))

    def _decode_ids(self, ids: Any) -> Any:
        if hasattr(ids, "tolist") and not isinstance(ids, list):
            return _array_list(ids, "ids")
        return ids

    def decode(self, ids: Sequence[int], *, skip_special_tokens: bool = False) -> str:
        """The text of ``ids`` (special tokens by name unless ``skip_special_tokens``, invalid
        UTF-8 as U+FFFD). ``ids``: a list, tuple or numpy array of ints (numpy integers accepted)."""
        skip = _flag(skip_special_tokens, "skip_special_tokens")
        ids = self._decode_ids(ids)
        try:
            return self.tokenizer.decode(ids, skip_special_tokens=skip)
        except TypeError:  # numpy integer items (the core takes Python ints), or a real type error
            return self.tokenizer.decode(
                _ids_list(ids, "ids", self.tokenizer.n_vocab), skip_special_tokens=skip
            )

    def decode_batch(
        self,
        batch: Sequence[Sequence[int]],
        *,
        threads: Optional[int] = None,
        skip_special_tokens: bool = False,
    ) -> List[str]:
        """:meth:`decode` of each id sequence, in parallel on ``threads`` threads (default: all cores)."""
        skip = _flag(skip_special_tokens, "skip_special_tokens")
        threads = optional_int(threads, "threads")
        if isinstance(batch, (str, bytes, bytearray)) or not isinstance(batch, abc.Iterable):
            raise TypeError(f"batch must be a list of id sequences, not {type(batch).__name__}")
        batch = [self._decode_ids(ids) for ids in batch]
        try:
            return self.tokenizer.decode_batch(batch, threads=threads, skip_special_tokens=skip)
        except TypeError:
            n = self.tokenizer.n_vocab
            batch = [_ids_list(ids, f"batch[{k}]", n) for k, ids in enumerate(batch)]
            return self.tokenizer.decode_batch(batch, threads=threads, skip_special_tokens=skip)

    # ------------------------------------------------------------------ framing

    def encode_file(self, file_path: str, file_content: str) -> List[int]:
        """``<FILE> path </FILE> content``: one file with its path header (the seed's
        ``<FILE=path>``)."""
        _check_text(file_path, "file_path")
        _check_text(file_content, "file_content")
        if not file_path:
            raise ValueError("file_path must not be empty")
        enc = self.tokenizer.encode_ordinary
        return [self.file_id, *enc(file_path), self.file_end_id, *enc(file_content)]

    def tokenize_file_with_edit(
        self, file_path: str, file_content: str, edit_instruction: str
    ) -> List[int]:
        """``<FILE> path </FILE> content <EDIT_START> edit <EDIT_END>`` (seed 000, 5.1).

        ``edit_instruction`` is what goes in the edit region: an instruction when building a
        prompt, the new content (or ``<DELETE>``'s text, see :meth:`encode_delete`) when
        building a training target. Texts are encoded as text: markers inside them stay text.
        """
        _check_text(edit_instruction, "edit_instruction")
        ids = self.encode_file(file_path, file_content)
        ids.append(self.edit_start_id)
        ids.extend(self.tokenizer.encode_ordinary(edit_instruction))
        ids.append(self.edit_end_id)
        return ids

    def encode_delete(self, file_path: str, file_content: str) -> List[int]:
        """The frame of deleting ``file_content``: ``... <EDIT_START> <DELETE> <EDIT_END>``."""
        ids = self.encode_file(file_path, file_content)
        ids.extend((self.edit_start_id, self.delete_id, self.edit_end_id))
        return ids

    def parse_edit_output(self, tokens: Sequence[int]) -> Dict[str, Any]:
        """Read an edit frame back from ids (seed 000, 5.2), for example a model's output.

        Returns ``{"file_path", "old_content", "new_content", "edit_type", "complete"}``:

        * ``file_path``: the text between ``<FILE>`` and ``</FILE>``, or None when the ids have
          no ``<FILE>`` before ``<EDIT_START>`` (ids before ``<FILE>`` are not part of the frame);
        * ``old_content``: the text between the header (or the start) and ``<EDIT_START>``;
        * ``new_content``: the text between ``<EDIT_START>`` and ``<EDIT_END>``, without
          ``<DELETE>`` markers;
        * ``edit_type``: ``"delete"`` when the edit region holds ``<DELETE>``, else
          ``"insert"`` when the old content is blank, else ``"replace"``;
        * ``complete``: False when the ids end before ``<EDIT_END>`` (a truncated output:
          ``new_content`` is what there is).

        The ids end at the first ``<EOS>``; ``<PAD>`` and ``<BOS>`` are dropped. A frame
        without ``<EDIT_START>``, or with ``<FILE>`` not closed by ``</FILE>``, raises
        ValueError.

        The seed's text header ``<FILE=path>`` is read too: when no ``<FILE>`` id comes
        before ``<EDIT_START>`` and the decoded content starts with ``<FILE=path>`` (written as
        text, as a model trained on the seed's text form writes it), ``path`` is the file path
        and the content is what follows the ``>``. For a frame that is all text (markers
        included), use :meth:`parse_edit_text`.
        """
        if isinstance(tokens, str):
            raise TypeError(
                "tokens must be a sequence of int token ids, not str; to parse a decoded frame "
                "(markers written as text) use parse_edit_text"
            )
        ids = _ids_list(tokens, "tokens", self.tokenizer.n_vocab)
        if self.eos_id in ids:
            ids = ids[: ids.index(self.eos_id)]
        ids = [i for i in ids if i != self.pad_id and i != self.bos_id]
        if self.edit_start_id not in ids:
            raise ValueError(
                "parse_edit_output: the ids hold no <EDIT_START> token: not an edit frame "
                "(build one with tokenize_file_with_edit)"
            )
        edit_at = ids.index(self.edit_start_id)
        file_path: Optional[str] = None
        body_at = 0
        if self.file_id in ids[:edit_at]:
            file_at = ids.index(self.file_id)
            try:
                end_at = ids.index(self.file_end_id, file_at + 1, edit_at)
            except ValueError:
                raise ValueError(
                    "parse_edit_output: the <FILE> header is not closed by </FILE> before "
                    "<EDIT_START>"
                ) from None
            file_path = self.tokenizer.decode(ids[file_at + 1 : end_at])
            body_at = end_at + 1
        region = ids[edit_at + 1 :]
        complete = self.edit_end_id in region
        if complete:
            region = region[: region.index(self.edit_end_id)]
        deleted = self.delete_id in region
        old_content = self.tokenizer.decode(ids[body_at:edit_at])
        if file_path is None:
            file_path, old_content = _text_header(old_content)
        new_content = self.tokenizer.decode([i for i in region if i != self.delete_id])
        return _edit_result(file_path, old_content, new_content, deleted, complete)

    def parse_edit_text(self, text: str) -> Dict[str, Any]:
        """:meth:`parse_edit_output` of a frame given as text, markers included: the seed's
        ``<FILE=path>content<EDIT_START>new<EDIT_END>`` or the decoded ids
        ``<FILE>path</FILE>content<EDIT_START>new<EDIT_END>`` (see :func:`parse_edit_text`)."""
        return parse_edit_text(text)


def _edit_result(
    file_path: Optional[str], old_content: str, new_content: str, deleted: bool, complete: bool
) -> Dict[str, Any]:
    if deleted:
        edit_type = "delete"
    elif not old_content.strip():
        edit_type = "insert"
    else:
        edit_type = "replace"
    return {
        "file_path": file_path,
        "old_content": old_content,
        "new_content": new_content,
        "edit_type": edit_type,
        "complete": complete,
    }


_TEXT_FILE_HEADER = "<FILE="


def _text_header(content: str) -> Tuple[Optional[str], str]:
    """``(path, rest)`` when ``content`` starts with the seed's text header ``<FILE=path>``
    (a path of one line, not empty), else ``(None, content)``."""
    if not content.startswith(_TEXT_FILE_HEADER):
        return None, content
    end = content.find(">", len(_TEXT_FILE_HEADER))
    path = content[len(_TEXT_FILE_HEADER) : end]
    if end < 0 or not path or "\n" in path or "\r" in path:
        return None, content
    return path, content[end + 1 :]


def parse_edit_text(text: str) -> Dict[str, Any]:
    """Read an edit frame from text in which the markers are written out, as the seed's
    ``parse_edit_output`` reads ``tokenizer.decode(tokens)`` (seed 000, 5.2).

    The header is the seed's ``<FILE=path>`` or the decoded ids' ``<FILE>path</FILE>``; the
    result is :meth:`CodeTokenizer.parse_edit_output`'s. The text ends at the first ``<EOS>``,
    and ``<PAD>`` and ``<BOS>`` are dropped. Here a marker is found by its spelling, so
    content that holds the text ``<EDIT_START>`` cannot be told from a marker: parse ids
    with :meth:`CodeTokenizer.parse_edit_output` where you have them.

    >>> parse_edit_text("<FILE=src/a.py>x = 1\\n<EDIT_START>x = 2\\n<EDIT_END>")["file_path"]
    'src/a.py'
    >>> out = parse_edit_text("<FILE>a.py</FILE>x\\n<EDIT_START><DELETE><EDIT_END>")
    >>> out["old_content"], out["edit_type"]
    ('x\\n', 'delete')
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    text = text.split(EOS, 1)[0].replace(PAD, "").replace(BOS, "")
    edit_at = text.find(EDIT_START)
    if edit_at < 0:
        raise ValueError(
            "parse_edit_text: the text holds no <EDIT_START> marker: not an edit frame"
        )
    head, region = text[:edit_at], text[edit_at + len(EDIT_START) :]
    file_path: Optional[str] = None
    file_at = head.find(FILE)
    if file_at >= 0:
        end_at = head.find(FILE_END, file_at + len(FILE))
        if end_at < 0:
            raise ValueError(
                "parse_edit_text: the <FILE> header is not closed by </FILE> before <EDIT_START>"
            )
        file_path, body = head[file_at + len(FILE) : end_at], head[end_at + len(FILE_END) :]
    else:
        file_at = head.find(_TEXT_FILE_HEADER)
        file_path, body = _text_header(head[file_at:]) if file_at >= 0 else (None, head)
        if file_path is None:
            body = head
    complete = EDIT_END in region
    if complete:
        region = region[: region.index(EDIT_END)]
    deleted = DELETE in region
    return _edit_result(file_path, body, region.replace(DELETE, ""), deleted, complete)


class TokenCache:
    """The seed's ``TokenCache`` (section 7.1): :meth:`encode_cached` remembers the ids of the
    last ``cache_size`` distinct texts (least recently used first out), for inputs that repeat
    (prompts, file headers). ``cache_size=0`` caches nothing. Safe to share between threads.

    >>> code = train(["def f(x):\\n    return x\\n"] * 20, vocab_size=280)
    >>> cache = TokenCache(code, cache_size=2)
    >>> cache.encode_cached("return x") == code.encode("return x"), cache.hits, cache.misses
    (True, 0, 1)
    >>> _ = cache.encode_cached("return x"); cache.hits, len(cache)
    (1, 1)
    """

    def __init__(
        self, tokenizer: Union[Tokenizer, "CodeTokenizer"], cache_size: int = 10000
    ) -> None:
        cache_size = _as_int(cache_size, "cache_size")
        if cache_size < 0:
            raise ValueError(f"cache_size must be >= 0 (0: no caching), not {cache_size}")
        self.tokenizer: CodeTokenizer = _code_tokenizer(tokenizer)
        self.cache_size = cache_size
        self.hits = 0
        self.misses = 0
        self._cache: "OrderedDict[str, Tuple[int, ...]]" = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._cache)

    def encode_cached(self, text: str) -> List[int]:
        """:meth:`CodeTokenizer.encode` of ``text``, from the cache when it holds it (a new list
        each call: changing it does not change the cache)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be str, not {type(text).__name__}")
        with self._lock:
            hit = self._cache.get(text)
            if hit is not None:
                self._cache.move_to_end(text)
                self.hits += 1
                return list(hit)
        ids = self.tokenizer.encode(text)
        with self._lock:
            self.misses += 1
            if self.cache_size:
                self._cache[text] = tuple(ids)
                self._cache.move_to_end(text)
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return ids

    def clear(self) -> None:
        """Empty the cache (and reset :attr:`hits` and :attr:`misses`)."""
        with self._lock:
            self._cache.clear()
            self.hits = self.misses = 0


def _code_tokenizer(tokenizer: Union[Tokenizer, CodeTokenizer]) -> CodeTokenizer:
    return tokenizer if isinstance(tokenizer, CodeTokenizer) else CodeTokenizer(tokenizer)


def tokenize_file_with_edit(
    file_path: str,
    file_content: str,
    edit_instruction: str,
    tokenizer: Union[Tokenizer, CodeTokenizer],
) -> List[int]:
    """The seed's function: :meth:`CodeTokenizer.tokenize_file_with_edit` with ``tokenizer``
    (a :class:`CodeTokenizer` or a :class:`~toksmith.Tokenizer` with the eight special tokens)."""
    return _code_tokenizer(tokenizer).tokenize_file_with_edit(
        file_path, file_content, edit_instruction
    )


def parse_edit_output(
    tokens: Sequence[int], tokenizer: Union[Tokenizer, CodeTokenizer]
) -> Dict[str, Any]:
    """The seed's function: :meth:`CodeTokenizer.parse_edit_output` with ``tokenizer``."""
    return _code_tokenizer(tokenizer).parse_edit_output(tokens)


__all__ = [
    "SPECIAL_TOKENS",
    "DEFAULT_VOCAB_SIZE",
    "DEFAULT_EXTENSIONS",
    "CODE_PATTERN",
    "LINE_PATTERN",
    "DEFAULT_SUPERWORD_SHARE",
    "superword_merges",
    "add_superwords",
    "CodeTokenizer",
    "TokenCache",
    "train",
    "collect_code_corpus",
    "tokenize_file_with_edit",
    "parse_edit_output",
    "parse_edit_text",
]
