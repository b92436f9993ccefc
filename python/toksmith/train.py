"""Training byte-level BPE.

Two steps, both native and parallel with the GIL released:

1. *Counting*: text is cut around pinned tokens, split with the pattern, and unique chunks are
   counted (64-bit counts). Files are read in bounded blocks; texts from an iterator are
   streamed in bounded batches, never held whole.
2. *Merging*: the incremental merge loop over unique chunks (pair counts, per-pair positions,
   max-heap with lazy refresh). Tie-break: highest count, then the smallest
   ``(left id, right id)`` pair, as in nanochat's rustbpe, so the merges equal rustbpe's for the
   same texts, pattern and vocabulary size, for any thread count.

Token ids (the default layout): bytes 0-255, then merges in order, then special tokens, then
pinned tokens. Special or pinned tokens given as a dict ``{text: id}`` keep those fixed ids;
the bytes and merges then fill the free ids in ascending order.
"""

from __future__ import annotations

import collections
import datetime
import itertools
import operator
import os
import re
import sys
import warnings
from array import array
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _core
from ._args import threads_arg as _threads
from .corpus import PathLike, batched, surrogates_checked
from .counts import ChunkCounts, InputCounter, pinned_list
from .documents import Caps, expand_inputs
from .errors import EmptyCorpusError, VocabError
from .pretokenize import resolve_pattern
from .tokenizer import Tokenizer, _CheckedMerges

TokenSpec = Union[Sequence[str], Mapping[str, int]]


def _as_int(value: Any) -> Any:
    """``value`` as an int if it is a numpy integer (as ``threads`` and token ids take them);
    anything else is returned as it is, for the caller's checks."""
    if not isinstance(value, (bool, int)) and hasattr(value, "__index__"):
        try:
            return operator.index(value)
        except TypeError:  # numpy.bool_
            return value
    return value


def _check_token(t: Any, what: str) -> None:
    if not isinstance(t, str) or not t:
        raise ValueError(f"{what}: {t!r} is not a non-empty str")
    try:
        t.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(
            f"{what}: {t!r} holds a lone surrogate (U+{ord(t[e.start]):04X} at index {e.start}) "
            f"that UTF-8 cannot encode; pass a valid str"
        ) from None


def _normalize_added(tokens: Optional[TokenSpec], what: str) -> Tuple[List[str], Dict[str, int]]:
    """Split into (tokens without id, tokens with a fixed id)."""
    if tokens is None:
        return [], {}
    if isinstance(tokens, str):
        raise TypeError(f"{what} must be a list of str or a dict str -> id, not a single str")
    if isinstance(tokens, (set, frozenset)) and all(isinstance(t, str) for t in tokens):
        tokens = sorted(tokens)  # a set's own order (so the ids) would change from run to run
    if isinstance(tokens, Mapping):
        fixed = {}
        for t, i in tokens.items():
            _check_token(t, what)
            i = _as_int(i)
            if not isinstance(i, int) or isinstance(i, bool) or i < 0:
                raise ValueError(f"{what}[{t!r}] = {i!r} is not a valid id")
            fixed[t] = i
        return [], fixed
    if not isinstance(tokens, Iterable):
        raise TypeError(
            f"{what} must be a list of str or a dict str -> id, not {type(tokens).__name__}"
        )
    free = []
    seen = set()
    for t in tokens:
        _check_token(t, what)
        if t in seen:
            raise ValueError(f"{what}: {t!r} is given twice")
        seen.add(t)
        free.append(t)
    return free, {}


#: token ids are 32-bit in the core
MAX_VOCAB_SIZE = 2**32
#: counts are signed 64-bit in the merge loop: a chunk's count, and a pair's count summed over
#: the chunks, must stay at most this
MAX_COUNT = 2**63 - 1


class _Layout:
    """Assigns final ids: fixed ids first, then free ids ascending for bytes, merges, specials,
    pinned tokens."""

    def __init__(self, vocab_size: int, specials: Optional[TokenSpec], pinned: Optional[TokenSpec]):
        vocab_size = _as_int(vocab_size)
        if not isinstance(vocab_size, int) or isinstance(vocab_size, bool):
            raise TypeError(f"vocab_size must be an int, not {type(vocab_size).__name__}")
        self.special_free, self.special_fixed = _normalize_added(specials, "special_tokens")
        self.pinned_free, self.pinned_fixed = _normalize_added(pinned, "pinned_tokens")
        names = (
            self.special_free
            + list(self.special_fixed)
            + self.pinned_free
            + list(self.pinned_fixed)
        )
        dup = {n for n, k in collections.Counter(names).items() if k > 1}
        if dup:
            raise ValueError(
                f"token(s) {sorted(dup)} given twice (as special and pinned, or repeated)"
            )
        fixed_ids = list(self.special_fixed.values()) + list(self.pinned_fixed.values())
        if len(set(fixed_ids)) != len(fixed_ids):
            raise ValueError(f"two special/pinned tokens share a fixed id: {sorted(fixed_ids)}")
        self.fixed = set(fixed_ids)
        self.n_added = len(names)
        minimum = 256 + self.n_added
        if vocab_size < minimum:
            raise VocabError(
                f"vocab_size={vocab_size} is too small: it must be at least {minimum} "
                f"(256 byte tokens + {self.n_added} special/pinned tokens)"
            )
        if vocab_size > MAX_VOCAB_SIZE:
            raise VocabError(
                f"vocab_size={vocab_size} is too large: token ids are 32-bit, so it can be at most "
                f"{MAX_VOCAB_SIZE}"
            )
        if self.fixed and max(self.fixed) >= vocab_size:
            raise VocabError(f"fixed id {max(self.fixed)} does not fit in vocab_size={vocab_size}")
        self.vocab_size = vocab_size
        self.num_merges = vocab_size - minimum

    def assign(self, n_merges_learned: int):
        free = (i for i in range(2**32) if i not in self.fixed)
        byte_ids = [next(free) for _ in range(256)]
        merge_ids = [next(free) for _ in range(n_merges_learned)]
        specials = {t: next(free) for t in self.special_free}
        specials.update(self.special_fixed)
        pinned = {t: next(free) for t in self.pinned_free}
        pinned.update(self.pinned_fixed)
        return byte_ids, merge_ids, specials, pinned


def _size(path: Any) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _progress_bar(progress: bool, **kw):
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(**kw)


class _CountingReader:
    """A binary file that reports the bytes read from it (``tick(n)``): the counting bar moves
    within a file, and for a compressed file (the decompressing reader wraps this one) it counts
    the compressed bytes, which are what the bar's total adds up."""

    mode = "rb"

    def __init__(self, raw: Any, tick: Callable[[int], None]) -> None:
        self.raw, self.tick = raw, tick
        self.name = getattr(raw, "name", "")

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(n)
        self.tick(len(data))
        return data

    def readinto(self, b: Any) -> int:
        n = self.raw.readinto(b)
        self.tick(n or 0)
        return n

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self.raw.close()

    @property
    def closed(self) -> bool:
        return bool(self.raw.closed)

    def __enter__(self) -> "_CountingReader":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class _MergeProgress:
    """The ``progress(done, total)`` callback of the native merge loop, over a progress bar, used
    as a context manager: the bar gets its last report when the loop ends (where the corpus ran
    out, too) and is closed however the loop ends. What the callback raises (a Ctrl-C that landed
    in the bar's update) stops the native loop, which raises it; a Ctrl-C anywhere else during
    the loop stops it at its next report too."""

    def __init__(self, bar: Any) -> None:
        self.bar, self.done = bar, 0

    def __call__(self, done: int, total: int) -> None:
        self.bar.update(done - self.done)
        self.done = done

    def __enter__(self) -> "_MergeProgress":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.bar.close()

    def finish(self, done: int) -> None:
        """The last report: the last merges, or where the corpus ran out."""
        self(done, 0)


def _limits(min_frequency: Any, max_token_length: Any) -> Tuple[int, Optional[int]]:
    min_frequency, max_token_length = _as_int(min_frequency), _as_int(max_token_length)
    if not isinstance(min_frequency, int) or isinstance(min_frequency, bool):
        raise TypeError(f"min_frequency must be an int, not {type(min_frequency).__name__}")
    if not 0 <= min_frequency <= MAX_COUNT:
        raise ValueError(
            f"min_frequency must be between 0 (no minimum) and {MAX_COUNT}, not {min_frequency}"
        )
    if max_token_length is not None:
        if not isinstance(max_token_length, int) or isinstance(max_token_length, bool):
            raise TypeError(
                f"max_token_length must be an int or None, not {type(max_token_length).__name__}"
            )
        if not 1 <= max_token_length <= 2**32:
            raise ValueError(
                f"max_token_length must be between 1 and 2**32 bytes (or None for no limit), "
                f"not {max_token_length}"
            )
    return min_frequency, max_token_length


class _Trainer:
    def __init__(
        self,
        vocab_size,
        pattern,
        special_tokens,
        pinned_tokens,
        threads,
        progress,
        min_frequency=0,
        max_token_length=None,
    ):
        self.regex, self.pattern_name = resolve_pattern(pattern)
        self.layout = _Layout(vocab_size, special_tokens, pinned_tokens)
        self.min_frequency, self.max_token_length = _limits(min_frequency, max_token_length)
        self.threads = _threads(threads)
        if not isinstance(progress, bool):
            if type(progress).__name__ not in (
                "bool_",
                "bool",
            ):  # numpy.bool_ is fine; "no" was taken as True
                raise TypeError(
                    f"progress must be True or False, not {type(progress).__name__} ({progress!r})"
                )
            progress = bool(progress)
        self.progress = progress
        pinned_all = self.layout.pinned_free + list(self.layout.pinned_fixed)
        self.counter = _core.ChunkCounter(self.regex, pinned_all)
        self.sources: List[str] = []
        self.texts_seen = 0  # texts given to add_texts so far (for error messages)
        # decimal units (MB = 10**6 bytes), as the summary line of `toksmith train`
        self.bar = _progress_bar(
            progress, desc="counting", unit="B", unit_scale=True, unit_divisor=1000
        )

    def set_total(self, files: Sequence[Any]) -> None:
        """Give the counting bar its total: the bytes of the files (compressed ones as stored),
        known before any is read, so the bar shows a rate and an ETA."""
        if self.bar is None:
            return
        total = 0
        for f in files:
            try:
                total += os.path.getsize(f)
            except OSError:  # a pipe, or gone: its bytes are counted as read
                pass
        self.bar.total = total
        self.bar.refresh()

    def _tick(self, n: int) -> None:
        if self.bar is not None:
            self.bar.set_postfix(unique_chunks=self.counter.stats()["unique"], refresh=False)
            self.bar.update(n)

    def add_texts(self, texts: List[str], errors: str = "strict") -> None:
        try:
            self.counter.add_texts(texts, self.threads)
        except UnicodeEncodeError:  # a lone surrogate: named, or read as U+FFFD if errors="replace"
            self.counter.add_texts(
                [
                    surrogates_checked(t, errors, f"text {self.texts_seen + i} of the iterable")
                    for i, t in enumerate(texts)
                ],
                self.threads,
            )
        self.texts_seen += len(texts)
        self._tick(sum(len(t) for t in texts))

    def add_file(
        self,
        path,
        text_field: str,
        errors: str,
        doc_sep: Optional[str] = None,
        caps: Optional[Caps] = None,
    ) -> None:
        """Count one input with the corpus reader (:mod:`toksmith.documents`): plain text
        natively, JSON lines (chat ``messages`` too) and parquet as documents, binary files
        refused by name."""
        if errors not in ("strict", "replace"):
            raise ValueError(f"errors must be 'strict' or 'replace', not {errors!r}")
        name = os.fspath(path)
        self.sources.append(name)
        if self.bar is None:
            InputCounter(
                self.counter, self.threads, text_field, errors, doc_sep, caps, tick=self._tick
            ).add(name)
            return
        # the bar's total is the files' sizes as stored: it moves by the bytes read of each
        # file (compressed ones too), within the file; the native counter is busy meanwhile,
        # so the unique-chunk count is shown when the file is done
        bar = self.bar
        read = [0]

        def on_read(n: int) -> None:
            read[0] += n
            bar.update(n)

        InputCounter(
            self.counter, self.threads, text_field, errors, doc_sep, caps, on_read=on_read
        ).add(name)
        try:
            size = os.path.getsize(name)
        except OSError:  # a pipe, stdin or a URL: counted as read
            size = read[0]
        self._tick(max(0, size - read[0]))  # what was not read through a file (parquet)

    def finish(
        self,
        name: Optional[str],
        extra_meta: Optional[Dict[str, Any]] = None,
        counted: Optional[Dict[str, int]] = None,
    ) -> Tokenizer:
        stats = self.counter.stats()
        if counted:  # counts made elsewhere: the corpus they were counted on
            stats.update({k: counted[k] for k in ("bytes", "texts") if k in counted})
        if self.bar is not None:
            self.bar.close()
        if stats["pieces"] == 0:
            pinned = self.layout.pinned_free + list(self.layout.pinned_fixed)
            if (
                stats["bytes"] and pinned and self.pattern_name is not None
            ):  # a named pattern covers all text
                raise EmptyCorpusError(
                    f"the {stats['bytes']} bytes of the corpus are all pinned tokens, so there is nothing "
                    f"left to train on; pass text besides the pinned tokens"
                )
            if stats["bytes"]:
                raise EmptyCorpusError(
                    f"the split pattern {self.regex!r} found no non-empty piece in the {stats['bytes']} "
                    f"bytes of the corpus, so there is nothing to train on; pass a pattern whose "
                    f'matches cover the text (e.g. pattern="cl100k")'
                )
            raise EmptyCorpusError(
                "the training corpus is empty: pass at least one non-empty text or file"
            )
        num_merges = self.layout.num_merges
        bar = _progress_bar(self.progress, desc="merging", total=num_merges, unit="merge")
        if bar is None:
            pairs = self.counter.train(
                num_merges, None, self.threads, self.min_frequency, self.max_token_length
            )
        else:
            with _MergeProgress(bar) as on_progress:
                pairs = self.counter.train(
                    num_merges, on_progress, self.threads, self.min_frequency, self.max_token_length
                )
                on_progress.finish(len(pairs))
        if len(pairs) < num_merges:
            limits = []
            if self.min_frequency:
                limits.append(f"occurs at least min_frequency={self.min_frequency} times")
            if self.max_token_length is not None:
                limits.append(
                    f"makes a token of at most max_token_length={self.max_token_length} bytes"
                )
            why = (
                ("no pair left that " + " and ".join(limits))
                if limits
                else "the corpus ran out of pairs"
            )
            warnings.warn(
                f"{why} after {len(pairs)} merges ({num_merges} requested): "
                f"the vocabulary has {self.layout.vocab_size - num_merges + len(pairs)} tokens, not "
                f"{self.layout.vocab_size}; train on more text or ask for a smaller vocab_size",
                stacklevel=3,
            )
        byte_ids, merge_ids, specials, pinned = self.layout.assign(len(pairs))
        internal: List[bytes] = [bytes([b]) for b in range(256)]
        ranks: Dict[bytes, int] = {bytes([b]): byte_ids[b] for b in range(256)}
        final_of = byte_ids + merge_ids
        merges_final: List[Tuple[int, int]] = []
        for k, (a, b) in enumerate(pairs):
            tok = internal[a] + internal[b]
            internal.append(tok)
            ranks[tok] = merge_ids[k]
            merges_final.append((final_of[a], final_of[b]))
        meta: Dict[str, Any] = {
            "trained_by": "toksmith",
            "trained_at": datetime.datetime.now(datetime.timezone.utc).isoformat(
                timespec="seconds"
            ),
            "corpus": {
                "bytes": stats["bytes"],
                "texts": stats["texts"],
                "pieces": stats["pieces"],
                "unique_chunks": stats["unique"],
                "sources": self.sources[:100],
                "n_sources": len(self.sources),
            },
            "vocab_size_requested": self.layout.vocab_size,
            "merges_requested": num_merges,
            "merges_learned": len(pairs),
        }
        if self.min_frequency:
            meta["min_frequency"] = self.min_frequency
        if self.max_token_length is not None:
            meta["max_token_length"] = self.max_token_length
        if extra_meta:
            meta.update(extra_meta)
        return Tokenizer(
            ranks,
            pattern=self.regex,
            special_tokens=specials,
            pinned_tokens=pinned,
            merges=_CheckedMerges(merges_final),
            metadata=meta,
            name=name,
        )


def train(
    paths: Union[PathLike, Sequence[PathLike]],
    *,
    vocab_size: int,
    pattern: str = "cl100k",
    special_tokens: Optional[TokenSpec] = (),
    pinned_tokens: Optional[TokenSpec] = (),
    threads: Optional[int] = None,
    progress: bool = False,
    text_field: str = "text",
    errors: str = "strict",
    name: Optional[str] = None,
    min_frequency: int = 0,
    max_token_length: Optional[int] = None,
    doc_sep: Optional[str] = None,
    max_chars: Optional[int] = None,
    doc_cap: Optional[int] = None,
) -> Tokenizer:
    """Train a byte-level BPE tokenizer on files.

    ``paths``: files, folders (recursed) or glob patterns of UTF-8 text; ``.jsonl`` files
    contribute the ``text_field`` of each line; ``.xz``, ``.lzma``, ``.gz`` and ``.bz2`` files
    (``corpus.txt.xz``, ``chats.jsonl.gz``) are decompressed as they are read, giving the
    merges of the plain file. ``vocab_size`` is the total size: 256 bytes +
    merges + special tokens + pinned tokens. ``errors="replace"`` replaces invalid UTF-8 instead
    of raising :class:`toksmith.CorpusDecodeError` (which names the file and byte offset).

    Each file is one text (with a named pattern it is read in bounded blocks cut where no piece
    can span; a custom regex reads each file whole).

    ``min_frequency`` stops training when the most frequent pair left occurs fewer times;
    ``max_token_length`` (bytes) passes over pairs that would make a longer token (both as in
    Hugging Face's ``BpeTrainer``; the vocabulary is then smaller than ``vocab_size`` if the
    corpus runs out of pairs within the limits, with a warning). Neither is set by default,
    which gives rustbpe's merges.

    The corpus reader is :mod:`toksmith.documents`: ``-`` reads stdin, ``.json`` lines of the
    chat form ``{"messages": [...]}`` give their message contents, ``.parquet`` files give their
    ``text_field`` column (with pyarrow), ``.zst`` files are read with zstandard, binary files
    are refused by name (and skipped with a warning inside a folder). ``doc_sep`` cuts text
    files into documents; ``doc_cap`` and ``max_chars`` are nanochat's caps (each document cut
    to ``doc_cap`` characters; reading stops after the document that takes the total past
    ``max_chars``).
    """
    if not isinstance(text_field, str):  # was checked only when a .jsonl file came up
        raise TypeError(
            f"text_field must be a str (the JSON field that holds the text), not {type(text_field).__name__}"
        )
    if errors not in ("strict", "replace"):
        raise ValueError(f"errors must be 'strict' or 'replace', not {errors!r}")
    trainer = _Trainer(
        vocab_size,
        pattern,
        special_tokens,
        pinned_tokens,
        threads,
        progress,
        min_frequency,
        max_token_length,
    )
    caps = Caps(max_chars, doc_cap)
    try:
        files = expand_inputs(paths)
    except FileNotFoundError as e:
        items = (
            [paths] if isinstance(paths, str) else paths if isinstance(paths, (list, tuple)) else []
        )
        if any(
            isinstance(p, str) and any(c.isspace() for c in p) and not os.path.lexists(p)
            for p in items
        ):
            # texts given for paths (the README's next example takes texts)
            raise FileNotFoundError(
                f"{e}; train() reads files, folders and globs: to train on texts in memory, "
                "use toksmith.train_from_iterator(texts, ...)"
            ) from None
        raise
    trainer.set_total(files)
    for f in files:
        trainer.add_file(f, text_field, errors, doc_sep, caps)
        if caps.done:
            break
    return trainer.finish(name)


def train_from_iterator(
    texts: Iterable[str],
    *,
    vocab_size: int,
    pattern: str = "cl100k",
    special_tokens: Optional[TokenSpec] = (),
    pinned_tokens: Optional[TokenSpec] = (),
    threads: Optional[int] = None,
    progress: bool = False,
    name: Optional[str] = None,
    min_frequency: int = 0,
    max_token_length: Optional[int] = None,
    errors: str = "strict",
) -> Tokenizer:
    """Train on any iterable of str (streamed in bounded batches, never held whole). The
    options are those of :func:`train`. A text with a lone surrogate (which has no UTF-8
    form) raises :class:`toksmith.CorpusDecodeError` naming the text, unless
    ``errors="replace"``, which trains on it as U+FFFD (as ``encode()`` reads it).

    >>> tok = train_from_iterator(["hello hello hello world world"] * 10, vocab_size=260,
    ...                           pattern="gpt2")
    >>> [tok.decode([i]) for i in range(256, 260)]
    ['el', 'hel', 'lo', 'hello']
    """
    if isinstance(texts, (str, bytes)):
        raise TypeError("texts must be an iterable of str, not a single str; wrap it in a list")
    if not isinstance(texts, Iterable):
        raise TypeError(f"texts must be an iterable of str, not {type(texts).__name__}")
    if errors not in ("strict", "replace"):
        raise ValueError(f"errors must be 'strict' or 'replace', not {errors!r}")
    trainer = _Trainer(
        vocab_size,
        pattern,
        special_tokens,
        pinned_tokens,
        threads,
        progress,
        min_frequency,
        max_token_length,
    )
    for batch in batched(texts):
        trainer.add_texts(batch, errors)
    return trainer.finish(name)


def _arena_of(items: Sequence[Any]) -> Optional[Tuple[bytes, bytes, bytes]]:
    """``items`` ((chunk, count) pairs) as the arena the native counter checks and cuts, with
    the checks done by C loops (``array``, ``str.encode``); None where an item is anything but
    a plain str/bytes chunk with a plain int count in range, for the item-by-item loop of
    :func:`train_from_counts` to name it."""
    try:
        chunks = [c for c, _ in items]
        ns = [n for _, n in items]
    except (TypeError, ValueError):
        return None
    if not all(type(n) is int for n in ns):
        return None
    if all(type(c) is str for c in chunks):
        try:
            data = [c.encode("utf-8") for c in chunks]
        except UnicodeEncodeError:
            return None
    elif all(type(c) is bytes for c in chunks):
        data = chunks
    else:
        return None
    try:
        counts = array("Q", ns)
    except OverflowError:  # a negative count or one past 2**64
        return None
    if ns and max(ns) > MAX_COUNT:
        return None
    offsets = array("Q", itertools.accumulate(map(len, data), initial=0))
    return b"".join(data), _le_bytes(offsets), _le_bytes(counts)


def _le_bytes(a: "array[int]") -> bytes:
    if sys.byteorder != "little":  # pragma: no cover - big-endian machines
        a = array("Q", a)
        a.byteswap()
    return a.tobytes()


def train_from_counts(
    counts: Union[
        ChunkCounts, Mapping[Union[str, bytes], int], Iterable[Tuple[Union[str, bytes], int]]
    ],
    *,
    vocab_size: int,
    pattern: Optional[str] = None,
    special_tokens: Optional[TokenSpec] = (),
    pinned_tokens: Optional[TokenSpec] = (),
    threads: Optional[int] = None,
    progress: bool = False,
    name: Optional[str] = None,
    min_frequency: int = 0,
    max_token_length: Optional[int] = None,
) -> Tokenizer:
    """Train from pre-counted chunks: a :class:`toksmith.ChunkCounts` (from
    :func:`toksmith.count_chunks`, merged with ``+`` or loaded with ``ChunkCounts.load``), or
    ``{chunk: count}`` from any other front end (word counts, external pipelines): the merge
    loop of :func:`train` without the counting step. ``pattern`` is the split pattern the
    resulting tokenizer encodes with (default: a ChunkCounts' own, else cl100k). Chunks are cut
    around pinned tokens, as texts are (a ChunkCounts' pinned tokens are used when none are
    given, and must match when some are)."""
    if isinstance(counts, ChunkCounts):
        return _train_from_chunk_counts(
            counts,
            vocab_size=vocab_size,
            pattern=pattern,
            special_tokens=special_tokens,
            pinned_tokens=pinned_tokens,
            threads=threads,
            progress=progress,
            name=name,
            min_frequency=min_frequency,
            max_token_length=max_token_length,
        )
    if isinstance(counts, (str, bytes, bytearray)) or not isinstance(counts, Iterable):
        raise TypeError(
            f"counts must be a dict {{chunk: count}} or an iterable of (chunk, count) pairs, "
            f"not {type(counts).__name__}"
        )
    trainer = _Trainer(
        vocab_size,
        "cl100k" if pattern is None else pattern,
        special_tokens,
        pinned_tokens,
        threads,
        progress,
        min_frequency,
        max_token_length,
    )
    items = list(counts.items()) if isinstance(counts, Mapping) else list(counts)
    arena = _arena_of(items)
    if arena is not None:
        # checked and cut around the pinned tokens natively
        trainer.counter.add_arena(*arena, True)
        return trainer.finish(name)
    # chunks are cut around pinned tokens (leftmost, then longest), as texts are when counted
    pinned = sorted(
        (t.encode() for t in trainer.layout.pinned_free + list(trainer.layout.pinned_fixed)),
        key=len,
        reverse=True,
    )
    cut = re.compile(b"|".join(re.escape(t) for t in pinned)) if pinned else None
    batch: List[Tuple[bytes, int]] = []
    pairs = 0  # how many pairs the counts stand for: a bound on every pair's count
    for item in items:
        if (
            isinstance(item, (str, bytes, bytearray))
            or not isinstance(item, Sequence)
            or len(item) != 2
        ):
            raise TypeError(
                f"counts must be a dict {{chunk: count}} or an iterable of (chunk, count) pairs; "
                f"an item is {item!r}"
            )
        chunk, n = item
        if isinstance(chunk, str):
            try:
                chunk = chunk.encode("utf-8")
            except UnicodeEncodeError as e:
                raise ValueError(
                    f"the chunk {chunk!r} holds a lone surrogate (U+{ord(chunk[e.start]):04X} at "  # type: ignore[arg-type]
                    f"index {e.start}) that UTF-8 cannot encode; pass bytes or a valid str"
                ) from None
        if not isinstance(chunk, (bytes, bytearray)):
            raise TypeError(f"chunks must be str or bytes, not {type(chunk).__name__}")
        n = _as_int(n)
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError(f"count of {chunk!r} must be an int, not {type(n).__name__}")
        if not 0 <= n <= MAX_COUNT:
            raise ValueError(f"count of {chunk!r} must be between 0 and {MAX_COUNT}, not {n}")
        for part in cut.split(bytes(chunk)) if cut is not None else [chunk]:
            if part and n:
                batch.append((bytes(part), n))
                pairs += n * max(len(part) - 1, 1)
    if pairs > MAX_COUNT:
        raise ValueError(
            f"the counts are too large: their pairs add up to {pairs}, more than {MAX_COUNT} "
            f"(2**63-1, the merge loop's 64-bit counts); pass smaller counts (scale them down)"
        )
    trainer.counter.add_counts(batch)
    return trainer.finish(name)


def _train_from_chunk_counts(counts: ChunkCounts, *, pattern, pinned_tokens, **kw) -> Tokenizer:
    if pattern is not None and resolve_pattern(pattern)[0] != counts.pattern:
        raise ValueError(
            f"pattern={pattern!r} is not the pattern these counts were made with "
            f"({counts.pattern[:60]!r}): leave pattern out, or count again with it"
        )
    if pinned_tokens:
        if pinned_list(pinned_tokens) != list(counts.pinned):
            raise ValueError(
                f"pinned_tokens {sorted(pinned_tokens)} are not those the counts were made with "
                f"({list(counts.pinned)}): leave pinned_tokens out, or count again with them"
            )
    else:
        pinned_tokens = list(counts.pinned)
    trainer = _Trainer(
        kw.pop("vocab_size"),
        counts.pattern,
        kw.pop("special_tokens"),
        pinned_tokens,
        kw.pop("threads"),
        kw.pop("progress"),
        kw.pop("min_frequency"),
        kw.pop("max_token_length"),
    )
    counts.add_to(trainer.counter)
    trainer.sources.extend(counts.sources)
    return trainer.finish(kw.pop("name"), None, counts.stats)


__all__ = ["train", "train_from_iterator", "train_from_counts"]
