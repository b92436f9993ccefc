"""Chunk counts as a public, mergeable artifact: the counting step of training on its own.

``count_chunks(inputs, pattern=, pinned_tokens=)`` reads a corpus (:mod:`toksmith.documents`),
cuts it around the pinned tokens, splits it with the pattern and counts each unique chunk.
Counts of parts of a corpus add up (``a + b``) to the counts of the whole, so training from
merged per-file counts (``train_from_counts(a + b, ...)``) gives exactly the merges of training
on the files. Counting per input file is also what makes a count resumable (each input's counts
are saved as it finishes) and spreadable over Ray tasks.

File format (``ChunkCounts.save``), all integers little-endian:

==========  ==========================================================================
bytes       what
==========  ==========================================================================
8           magic ``b"TKSCNT\\x00\\x01"`` (the last byte is the format version, 1)
8           ``H``: u64, the size of the header
H           header: UTF-8 JSON object: ``pattern`` (the split regex), ``pinned`` (list of
            str), ``n_chunks`` (``n``), ``arena_bytes`` (``A``), ``bytes``, ``texts``,
            ``pieces`` (of the corpus counted) and ``sources`` (the inputs' names)
8 (n + 1)   offsets: u64, chunk ``k`` is ``arena[offsets[k]:offsets[k + 1]]``; they rise
            from 0 to ``A``
A           arena: the chunks' bytes, one after the other, sorted
8 n         counts: u64, the count of chunk ``k``
==========  ==========================================================================

Loading checks that the file's size is exactly what the header says, and (natively, when the
counts are used) that the offsets rise from 0 to the arena's end.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import sys
from array import array
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from . import _core
from ._args import threads_arg
from .corpus import batched
from .documents import (
    STDIN,
    Caps,
    DocumentSource,
    expand_inputs,
    is_data_error,
    is_remote,
    iter_documents_of,
)
from .errors import CorpusDecodeError, EmptyCorpusError, missing_extra
from .pretokenize import resolve_pattern

PathArg = Union[str, "os.PathLike[str]"]

MAGIC = b"TKSCNT\x00\x01"
#: the largest header a file may claim (it holds up to 100 source names, not the counts)
_MAX_HEADER = 64 << 20


def _u64(data: bytes) -> "array[int]":
    a = array("Q")
    a.frombytes(data)
    if sys.byteorder != "little":  # pragma: no cover - big-endian machines
        a.byteswap()
    return a


def _le(a: "array[int]") -> bytes:
    if sys.byteorder != "little":  # pragma: no cover
        a = array("Q", a)
        a.byteswap()
    return a.tobytes()


def pinned_list(pinned_tokens: Any) -> List[str]:
    """The texts of ``pinned_tokens`` (a list of str, or a dict {text: id} whose ids do not
    matter to counting), sorted for a canonical form."""
    if pinned_tokens is None:
        return []
    if isinstance(pinned_tokens, str):
        raise TypeError("pinned_tokens must be a list of str or a dict str -> id, not a single str")
    out = []
    for t in pinned_tokens:
        if not isinstance(t, str) or not t:
            raise ValueError(f"pinned_tokens: {t!r} is not a non-empty str")
        out.append(t)
    if len(set(out)) != len(out):
        raise ValueError("pinned_tokens: a token is given twice")
    return sorted(out)


class ChunkCounts:
    """Unique chunks of a corpus and their counts, for one split pattern and set of pinned
    tokens. ``a + b`` adds two counts up (same pattern and pinned tokens); ``len()`` is the
    number of unique chunks; iterating gives ``(chunk bytes, count)`` sorted by chunk."""

    def __init__(
        self,
        pattern: str,
        pinned: Sequence[str],
        arena: bytes,
        offsets: bytes,
        counts: bytes,
        stats: Optional[Mapping[str, int]] = None,
        sources: Sequence[str] = (),
    ) -> None:
        self.pattern = pattern
        self.pinned: Tuple[str, ...] = tuple(sorted(pinned))
        self.arena, self.offsets, self.counts = bytes(arena), bytes(offsets), bytes(counts)
        if len(self.offsets) != len(self.counts) + 8 or len(self.counts) % 8:
            raise ValueError(
                f"offsets ({len(self.offsets)} bytes) must hold one u64 more than counts "
                f"({len(self.counts)} bytes)"
            )
        stats = dict(stats or {})
        self.stats: Dict[str, int] = {k: int(stats.get(k, 0)) for k in ("bytes", "texts", "pieces")}
        if "chars" in stats:
            self.stats["chars"] = int(stats["chars"])
        self.sources: List[str] = list(sources)

    @classmethod
    def _from_counter(
        cls, counter: Any, pattern: str, pinned: Sequence[str], sources: Sequence[str]
    ) -> "ChunkCounts":
        arena, offsets, counts = counter.export_arena()
        return cls(pattern, pinned, arena, offsets, counts, counter.stats(), sources)

    def __len__(self) -> int:
        return len(self.counts) // 8

    def __iter__(self) -> Iterator[Tuple[bytes, int]]:
        offsets, counts = _u64(self.offsets), _u64(self.counts)
        for k in range(len(counts)):
            yield self.arena[offsets[k] : offsets[k + 1]], counts[k]

    def to_dict(self) -> Dict[bytes, int]:
        """``{chunk bytes: count}``."""
        return dict(self)

    @property
    def total(self) -> int:
        """The number of chunks counted (the counts summed)."""
        return sum(_u64(self.counts))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ChunkCounts):
            return NotImplemented
        return (
            self.pattern == other.pattern
            and self.pinned == other.pinned
            and self.arena == other.arena
            and self.offsets == other.offsets
            and self.counts == other.counts
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"<ChunkCounts: {len(self)} unique chunks, {self.total} in all, "
            f"{self.stats['bytes']} bytes, pattern {self.pattern[:30]!r}"
            f"{', pinned ' + repr(list(self.pinned)) if self.pinned else ''}>"
        )

    def add_to(self, counter: Any) -> None:
        """Add these counts to a native ChunkCounter (as counted: not cut again)."""
        counter.add_arena(self.arena, self.offsets, self.counts, False)

    def _check_same(self, other: "ChunkCounts") -> None:
        if other.pattern != self.pattern:
            raise ValueError(
                "cannot add counts made with different split patterns "
                f"({self.pattern[:40]!r} and {other.pattern[:40]!r}): count both with the same "
                "pattern"
            )
        if other.pinned != self.pinned:
            raise ValueError(
                f"cannot add counts made with different pinned tokens ({list(self.pinned)} and "
                f"{list(other.pinned)}): count both with the same pinned tokens"
            )

    def __add__(self, other: object) -> "ChunkCounts":
        if not isinstance(other, ChunkCounts):
            return NotImplemented
        self._check_same(other)
        counter = _core.ChunkCounter(self.pattern, list(self.pinned))
        self.add_to(counter)
        other.add_to(counter)
        merged = ChunkCounts._from_counter(
            counter, self.pattern, self.pinned, self.sources + other.sources
        )
        merged.stats = {k: self.stats.get(k, 0) + other.stats.get(k, 0) for k in self.stats}
        return merged

    def __radd__(self, other: object) -> "ChunkCounts":
        if isinstance(other, int) and other == 0:  # sum([a, b, c])
            return self
        return NotImplemented

    # -- the file ------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        header = json.dumps(
            {
                "pattern": self.pattern,
                "pinned": list(self.pinned),
                "n_chunks": len(self),
                "arena_bytes": len(self.arena),
                **self.stats,
                "sources": self.sources[:100],
                "n_sources": len(self.sources),
            },
            ensure_ascii=False,
        ).encode("utf-8")
        return b"".join(
            (MAGIC, struct.pack("<Q", len(header)), header, self.offsets, self.arena, self.counts)
        )

    @classmethod
    def from_bytes(cls, data: bytes, name: str = "<bytes>") -> "ChunkCounts":
        def bad(why: str) -> ValueError:
            return ValueError(f"{name} is not a valid toksmith counts file: {why}")

        if data[:6] != MAGIC[:6]:
            raise bad(
                "it does not start with the magic bytes TKSCNT (write one with "
                "`toksmith count` or ChunkCounts.save)"
            )
        if data[:8] != MAGIC:
            raise bad(f"format version {data[7]} is not the version this toksmith reads (1)")
        if len(data) < 16:
            raise bad("it ends inside its header")
        (h,) = struct.unpack_from("<Q", data, 8)
        if h > min(_MAX_HEADER, len(data) - 16):
            raise bad(f"its header claims {h} bytes, more than the file holds")
        try:
            head = json.loads(data[16 : 16 + h].decode("utf-8"))
            pattern, pinned = head["pattern"], head["pinned"]
            n, a = int(head["n_chunks"]), int(head["arena_bytes"])
        except (ValueError, KeyError, TypeError) as e:
            raise bad(f"its header is not the JSON it should be ({e})") from None
        if not isinstance(pattern, str) or not isinstance(pinned, list) or n < 0 or a < 0:
            raise bad("its header's pattern, pinned, n_chunks or arena_bytes is malformed")
        want = 16 + h + 8 * (n + 1) + a + 8 * n
        if len(data) != want:
            raise bad(
                f"it holds {len(data)} bytes, but its header ({n} chunks, {a} arena bytes) "
                f"says {want}: it was cut short or has bytes appended"
            )
        o = 16 + h
        offsets = data[o : o + 8 * (n + 1)]
        arena = data[o + 8 * (n + 1) : o + 8 * (n + 1) + a]
        counts = data[o + 8 * (n + 1) + a :]
        ends = _u64(offsets)
        if ends[0] != 0 or ends[-1] != a:
            raise bad(f"its offsets run from {ends[0]} to {ends[-1]}, not from 0 to {a}")
        stats = {k: head.get(k, 0) for k in ("bytes", "texts", "pieces")}
        if "chars" in head:
            stats["chars"] = head["chars"]
        return cls(pattern, pinned, arena, offsets, counts, stats, head.get("sources", []))

    def save(self, path: PathArg) -> None:
        """Write the counts to ``path`` (the format in this module's documentation), atomically:
        a reader never sees half a file."""
        path = os.fspath(path)
        tmp = f"{path}.tmp{os.getpid()}"
        try:
            with open(tmp, "wb") as f:
                f.write(self.to_bytes())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    @classmethod
    def load(cls, path: PathArg) -> "ChunkCounts":
        """Counts written by :meth:`save` (sizes checked: a cut or padded file is refused)."""
        path = os.fspath(path)
        with open(path, "rb") as f:
            return cls.from_bytes(f.read(), str(path))


def _input_key(path: str, settings: Dict[str, Any]) -> Optional[str]:
    """A name for the saved counts of one input, changing when the input file or the counting
    settings change; None for stdin and URLs (not resumable)."""
    if path == STDIN or is_remote(path):
        return None
    st = os.stat(path)
    h = hashlib.sha256(
        json.dumps(
            [os.path.abspath(path), st.st_size, st.st_mtime_ns, settings], sort_keys=True
        ).encode()
    ).hexdigest()[:20]
    return f"{h}.counts"


class InputCounter:
    """Counts inputs into one native ChunkCounter: plain text natively from the file (or the
    decompressed stream), JSON lines and parquet as documents; binary files refused by name."""

    def __init__(
        self,
        counter: Any,
        threads: int,
        text_field: str = "text",
        errors: str = "strict",
        doc_sep: Optional[str] = None,
        caps: Optional[Caps] = None,
        tick: Any = None,
        on_read: Any = None,
    ) -> None:
        """``tick(n)``: called with the characters or bytes counted as they are counted;
        ``on_read(n)``: with the bytes of the file as stored as they are read (a progress bar
        over the files' sizes; plain files are then read through Python, not natively)."""
        self.counter, self.threads = counter, threads
        self.text_field, self.errors, self.doc_sep = text_field, errors, doc_sep
        self.caps = caps if caps is not None else Caps()
        self.tick = tick
        self.on_read = on_read

    def _tick(self, n: int) -> None:
        if self.tick is not None:
            self.tick(n)

    def add_texts(self, texts: List[str]) -> None:
        self.counter.add_texts(texts, self.threads)
        self._tick(sum(len(t) for t in texts))

    def add(self, path: str) -> None:
        """Count one input (a local file, ``-`` or a URL)."""
        src = DocumentSource(
            path, self.text_field, self.errors, doc_sep=self.doc_sep, on_read=self.on_read
        )
        if src.kind != "text" or self.doc_sep is not None or self.caps.active:
            docs = iter_documents_of(
                path, self.text_field, self.errors, self.doc_sep, on_read=self.on_read
            )
            for batch in batched(self.caps.apply(docs)):
                self.add_texts(batch)
            return
        before = self.counter.stats()["bytes"]
        if path != STDIN and not is_remote(path) and not os.path.isfile(path):
            # a named pipe (``<(xzcat corpus.xz)``) is counted natively as it comes, where
            # Ctrl-C stops it between reads: not looked into first, since what is read is gone
            self.counter.add_file(path, self.errors == "replace", self.threads)
            self._tick(self.counter.stats()["bytes"] - before)
            return
        f = src.open()  # refuses a binary file by name
        try:
            # a regular file is counted natively from its path (a pipe is not: what the check
            # above read of it is gone)
            plain = (
                self.on_read is None
                and path != STDIN
                and not is_remote(path)
                and src.compression is None
                and os.path.isfile(path)
            )
            if plain:
                f.close()
                self.counter.add_file(path, self.errors == "replace", self.threads)
            else:
                try:
                    self.counter.add_stream(f, path, self.errors == "replace", self.threads)
                except Exception as e:
                    if not is_data_error(e):
                        raise
                    raise CorpusDecodeError(
                        f"{path} is not a valid {src.compression} file: {e}"
                    ) from None
        finally:
            f.close()
        self._tick(self.counter.stats()["bytes"] - before)


def _count_one(
    path: str,
    regex: str,
    pinned: List[str],
    text_field: str,
    errors: str,
    doc_sep: Optional[str],
    doc_cap: Optional[int],
    threads: int,
) -> bytes:
    """The counts of one input, serialized (what a Ray task returns)."""
    counter = _core.ChunkCounter(regex, pinned)
    InputCounter(counter, threads, text_field, errors, doc_sep, Caps(None, doc_cap)).add(path)
    return ChunkCounts._from_counter(counter, regex, pinned, [path]).to_bytes()


def count_chunks(
    inputs: Union[PathArg, Sequence[PathArg]],
    *,
    pattern: str = "cl100k",
    pinned_tokens: Any = (),
    text_field: str = "text",
    errors: str = "strict",
    doc_sep: Optional[str] = None,
    max_chars: Optional[int] = None,
    doc_cap: Optional[int] = None,
    threads: Optional[int] = None,
    progress: bool = False,
    resume_dir: Optional[PathArg] = None,
    engine: str = "local",
) -> ChunkCounts:
    """Count the chunks of ``inputs`` (files, folders, globs, ``-``, URLs: see
    :func:`toksmith.documents.expand_inputs`) as :func:`toksmith.train` counts them.

    ``doc_sep`` cuts text files into documents; ``doc_cap`` cuts each document to its first
    ``doc_cap`` characters and ``max_chars`` stops after the document that takes the total past
    it (nanochat's ``tok_train`` caps). ``resume_dir``: each input's counts are saved there as
    it finishes, and a rerun with the same inputs and settings reads them instead of counting
    again. ``engine="ray"`` counts each input in a Ray task (on the cluster ``ray.init()``
    connects to) and adds the counts up in input order: the same counts as the local engine.
    """
    if engine not in ("local", "ray"):
        raise ValueError(f"engine must be 'local' or 'ray', not {engine!r}")
    if errors not in ("strict", "replace"):
        raise ValueError(f"errors must be 'strict' or 'replace', not {errors!r}")
    if not isinstance(text_field, str) or not text_field:
        raise TypeError("text_field must be a non-empty str (the name of the text field)")
    regex, _ = resolve_pattern(pattern)
    pinned = pinned_list(pinned_tokens)
    caps = Caps(max_chars, doc_cap)
    n_threads = threads_arg(threads)
    files = expand_inputs(inputs)
    if not files:
        raise EmptyCorpusError(f"no input file found in {inputs!r}")
    if engine == "ray":
        if max_chars is not None:
            raise ValueError(
                "max_chars stops after a number of characters read in order, which Ray tasks do "
                "not share: count with engine='local', or use doc_cap"
            )
        try:
            import ray  # type: ignore[import-untyped]
        except ImportError:
            raise missing_extra("ray", "ray") from None
        if not ray.is_initialized():
            ray.init(address=os.environ.get("RAY_ADDRESS"), log_to_driver=False)
        task = ray.remote(_count_one)
        refs = [
            task.remote(f, regex, pinned, text_field, errors, doc_sep, caps.doc_cap, n_threads)
            for f in files
        ]
        total_counter = _core.ChunkCounter(regex, pinned)
        stats = {"bytes": 0, "texts": 0, "pieces": 0}
        for f, ref in zip(files, refs):
            part = ChunkCounts.from_bytes(ray.get(ref), f)
            part.add_to(total_counter)
            for k in stats:
                stats[k] += part.stats[k]
        out = ChunkCounts._from_counter(total_counter, regex, pinned, files)
        out.stats = stats
        return out

    settings = {
        "pattern": regex,
        "pinned": pinned,
        "text_field": text_field,
        "errors": errors,
        "doc_sep": doc_sep,
        "max_chars": caps.max_chars,
        "doc_cap": caps.doc_cap,
    }
    if resume_dir is not None:
        resume_dir = os.fspath(resume_dir)
        os.makedirs(resume_dir, exist_ok=True)
    bar = None
    if progress:
        from tqdm.auto import tqdm  # type: ignore[import-untyped]

        bar = tqdm(desc="counting", unit="B", unit_scale=True, unit_divisor=1024)
    total_counter = _core.ChunkCounter(regex, pinned)
    stats = {"bytes": 0, "texts": 0, "pieces": 0}
    try:
        for f in files:
            key = _input_key(f, settings) if resume_dir is not None else None
            saved = os.path.join(resume_dir, key) if key and resume_dir is not None else None
            if saved is not None and os.path.exists(saved):
                part = ChunkCounts.load(saved)
                caps.chars += part.stats.get("chars", 0)
            else:
                counter = _core.ChunkCounter(regex, pinned)
                before = caps.chars
                InputCounter(
                    counter,
                    n_threads,
                    text_field,
                    errors,
                    doc_sep,
                    caps,
                    tick=bar.update if bar is not None else None,
                ).add(f)
                part = ChunkCounts._from_counter(counter, regex, pinned, [f])
                if caps.active:
                    part.stats["chars"] = caps.chars - before
                if saved is not None:
                    part.save(saved)
            part.add_to(total_counter)
            for k in stats:
                stats[k] += part.stats[k]
            if caps.done:
                break
    finally:
        if bar is not None:
            bar.close()
    out = ChunkCounts._from_counter(total_counter, regex, pinned, files)
    out.stats = stats
    return out


def remove_resume_dir(resume_dir: PathArg) -> None:
    """Remove the per-input counts that :func:`count_chunks` saved (after a finished count)."""
    d = os.fspath(resume_dir)
    if not os.path.isdir(d):
        return
    for name in os.listdir(d):
        if name.endswith(".counts"):
            os.unlink(os.path.join(d, name))
    try:
        os.rmdir(d)
    except OSError:
        pass  # something else lives there


__all__ = ["ChunkCounts", "count_chunks", "MAGIC"]
