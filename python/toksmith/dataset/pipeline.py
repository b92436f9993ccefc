"""``tokenize_dataset``: input files -> token shards, resumable, on this machine or on Ray.

Per input file (in input order, each on its own: a Ray task with ``engine="ray"``) the documents
are read in batches, encoded with ``encode_ordinary_batch_to_numpy``'s native path (straight into
one array, BOS before and EOS after each document; other tokenizers' ``encode_ordinary_batch``),
optionally shuffled, and cut into shards of about ``shard_tokens`` tokens:

* ``bin`` shards hold exactly ``shard_tokens`` tokens (documents run on into the next shard);
* the other formats close a shard at the first document end that brings it to ``shard_tokens``.

``shuffle=SEED`` shuffles the documents within consecutive windows of one shard's worth of tokens
(the window closes at the first document end at or past ``shard_tokens``), each window permuted
with ``numpy.random.default_rng([SEED, window])``: reproducible, and with memory bounded by one
window's document count (its tokens wait on disk).

After each shard the input's progress is written (``.toksmith-progress/NAME.json``): where the
shard ended, as (input documents before the current window, the window, documents of the window
already written, tokens of the next document already written). A rerun skips those documents
without encoding them (the window being written is encoded again) and goes on with the next
shard; a finished input (same size and mtime) is not redone. ``manifest.json`` lists everything
once an input is done.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from itertools import chain
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from .. import registry
from .._args import thread_count, threads_arg
from .._fileio import atomic_write, finish_interrupted_saves
from .._optional import lazy_module
from .._version import __version__
from ..documents import STDIN, DocumentSource, expand_inputs, is_remote, output_stem
from ..errors import missing_extra
from ..tokenizer import Tokenizer
from . import datatrove, llmc, megatron, npy
from ._base import TEMP_SUFFIX

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy", extra="numpy")

FORMATS: Dict[str, Any] = {"bin": llmc, "megatron": megatron, "datatrove": datatrove, "npy": npy}

MANIFEST = "manifest.json"
PROGRESS_DIR = ".toksmith-progress"
MANIFEST_VERSION = 1

#: the default shard size, llm.c's (fineweb.py: 10**8 tokens)
DEFAULT_SHARD_TOKENS = 100_000_000
#: text per encoding batch (characters) and pieces per batch
BATCH_CHARS = 8 << 20
BATCH_PIECES = 8192
#: documents per shuffle window at most (besides its tokens): bounds the permutation's memory
WINDOW_MAX_DOCS = 1 << 24
#: tokens gathered per chunk when a shuffled window is written out
EMIT_TOKENS = 1 << 22

Batch = Tuple["np.ndarray", "np.ndarray"]  # tokens, ends of the documents that finish in them


def tokenizer_identity(tok: Any) -> str:
    """sha256 of what fixes the ids: the split pattern and the byte-level ranks (a pipeline
    tokenizer: its `tokenizer.json`), the special and pinned tokens."""
    h = hashlib.sha256()
    if hasattr(tok, "mergeable_ranks"):
        h.update(tok.pattern.encode("utf-8", "surrogatepass") + b"\0")
        for b, r in sorted(tok.mergeable_ranks().items(), key=lambda kv: kv[1]):
            h.update(b"%d:%d:" % (r, len(b)) + b)
    else:
        # a PipelineTokenizer (SentencePiece, Unigram, WordPiece): its whole pipeline
        pipeline = json.dumps(tok.to_huggingface_json(), sort_keys=True)
        h.update(b"pipeline\0" + pipeline.encode("utf-8", "surrogatepass"))
    extra = {
        "special": dict(sorted(tok.special_tokens.items())),
        "pinned": dict(sorted(getattr(tok, "pinned_tokens", {}).items())),
    }
    h.update(json.dumps(extra, sort_keys=True).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _resolve_token(tok: Any, token: Union[None, str, int], what: str) -> Optional[int]:
    if token is None:
        return None
    specials = tok.special_tokens
    if isinstance(token, bool) or not isinstance(token, (str, int)):
        raise TypeError(f"{what} must be a special token's text or id, not {type(token).__name__}")
    if isinstance(token, int):
        if token not in specials.values():
            raise ValueError(
                f"{what}={token} is not the id of a special token of this tokenizer "
                f"(special tokens: {_list(specials)})"
            )
        return token
    if token not in specials:
        raise ValueError(
            f"{what} {token!r} is not a special token of this tokenizer (special tokens: "
            f"{_list(specials)}); add it to the tokenizer's special tokens, or pass one of those"
        )
    return int(specials[token])


def _list(specials: Dict[str, int]) -> str:
    return ", ".join(f"{k!r}={v}" for k, v in sorted(specials.items(), key=lambda kv: kv[1])) or (
        "none"
    )


def _dtype_for(tok: Any) -> np.dtype:
    top = max([tok.n_vocab - 1, *tok.special_tokens.values()])
    return np.dtype(np.uint16) if top < 65536 else np.dtype(np.uint32)


def _positive(value: Any, what: str, most: Optional[int] = None) -> int:
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    value = int(value)
    if value < 1 or (most is not None and value > most):
        bound = f" and at most {most}" if most is not None else ""
        raise ValueError(f"{what} must be at least 1{bound}, not {value}")
    return value


# --------------------------------------------------------------------------------------------
# the document stream of one input


def _pieces_after(source: Iterable[Tuple[str, bool]], skip_docs: int) -> Iterator[Tuple[str, bool]]:
    """The pieces after the first ``skip_docs`` documents (read, not encoded)."""
    it = iter(source)
    while skip_docs:
        for _text, last in it:
            if last:
                skip_docs -= 1
                break
        else:
            return
    yield from it


def _encode_batches(
    pieces: Iterator[Tuple[str, bool]],
    tok: Any,
    dtype: np.dtype,
    bos: Optional[int],
    eos: Optional[int],
    threads: Optional[int],
    tick: Callable[[], None],
) -> Iterator[Batch]:
    """The token stream of the pieces, BOS before and EOS after each document, in batches."""
    b, e = int(bos is not None), int(eos is not None)
    at_start = True
    texts: List[str] = []
    lasts: List[bool] = []
    chars = 0

    # a toksmith Tokenizer encodes the batch straight into one array, BOS/EOS included
    arrays = tok._encode_batch_arrays if isinstance(tok, Tokenizer) else None

    def flush() -> Batch:
        nonlocal at_start
        if arrays is not None:
            last = np.array(lasts, dtype=bool)
            first = np.empty(len(last), dtype=bool)
            first[0] = at_start
            first[1:] = last[:-1]
            at_start = bool(last[-1])
            marks = (first * b + last * (2 * e)).astype(np.uint8).tobytes()
            ids, offsets = arrays(texts, threads_arg(threads), dtype.name, bos, eos, marks)
            return ids, offsets[1:][last]
        lists = tok.encode_ordinary_batch(texts, threads=threads)
        n = len(lists)
        lens = np.fromiter(map(len, lists), dtype=np.int64, count=n)
        total = int(lens.sum())
        flat = np.fromiter(chain.from_iterable(lists), dtype=dtype, count=total)
        last = np.array(lasts, dtype=bool)
        first = np.empty(n, dtype=bool)
        first[0] = at_start
        first[1:] = last[:-1]
        at_start = bool(last[-1])
        sizes = lens + b * first + e * last
        ends = np.cumsum(sizes)
        starts = ends - sizes
        out = np.empty(int(ends[-1]), dtype=dtype)
        ids_start = starts + b * first
        pos = np.repeat(ids_start - (np.cumsum(lens) - lens), lens) + np.arange(total)
        out[pos] = flat
        if b:
            out[starts[first]] = bos
        if e:
            out[ends[last] - 1] = eos
        return out, ends[last]

    for text, last in pieces:
        texts.append(text)
        lasts.append(last)
        chars += len(text)
        if chars >= BATCH_CHARS or len(texts) >= BATCH_PIECES:
            batch = flush()
            texts, lasts, chars = [], [], 0
            tick()
            yield batch
    if texts:
        batch = flush()
        tick()
        yield batch


class _Position:
    """Where the output stream is, for the resume record: the input documents before the window
    being written and the window's number (unshuffled: each document is its own window)."""

    def __init__(self, window_start: int, window: int) -> None:
        self.window_start = window_start
        self.window = window


def _windows(
    batches: Iterator[Batch],
    seed: int,
    window_tokens: int,
    dtype: np.dtype,
    spill: str,
    pos: _Position,
) -> Iterator[Batch]:
    """The documents of each window of ``window_tokens`` tokens in a seeded random order."""
    f = open(spill, "w+b")
    try:
        tokens = 0
        ends: List[np.ndarray] = []
        ndocs = 0

        def emit() -> Iterator[Batch]:
            nonlocal tokens, ends, ndocs
            f.flush()
            all_ends = np.concatenate(ends) if ends else np.zeros(0, np.int64)
            starts = np.concatenate(([0], all_ends[:-1])).astype(np.int64)
            lengths = all_ends - starts
            order = np.random.default_rng([seed, pos.window]).permutation(len(all_ends))
            data = np.memmap(spill, dtype=dtype, mode="r", shape=(tokens,)) if tokens else None
            i = 0
            while i < len(order):
                j, n = i, 0
                while j < len(order) and (n < EMIT_TOKENS or j == i):
                    n += int(lengths[order[j]])
                    j += 1
                idx = order[i:j]
                if data is not None and n:
                    chunk = np.concatenate([data[starts[k] : all_ends[k]] for k in idx])
                else:
                    chunk = np.zeros(0, dtype)
                yield chunk, np.cumsum(lengths[idx])
                i = j
            del data
            pos.window_start += len(all_ends)
            pos.window += 1
            f.seek(0)
            f.truncate()
            tokens, ends, ndocs = 0, [], 0

        for toks, batch_ends in batches:
            while True:
                # the window closes at the first document end at or past window_tokens
                need = window_tokens - tokens
                i = int(np.searchsorted(batch_ends, need))
                room = WINDOW_MAX_DOCS - ndocs
                if i >= room:
                    i = room - 1
                if i < len(batch_ends):
                    cut = int(batch_ends[i])
                    f.write(np.ascontiguousarray(toks[:cut]).data)
                    ends.append(batch_ends[: i + 1] + tokens)
                    tokens += cut
                    ndocs += i + 1
                    yield from emit()
                    toks, batch_ends = toks[cut:], batch_ends[i + 1 :] - cut
                    continue
                f.write(np.ascontiguousarray(toks).data)
                ends.append(batch_ends + tokens)
                tokens += len(toks)
                ndocs += len(batch_ends)
                break
        if ndocs:
            yield from emit()
    finally:
        f.close()
        if os.path.exists(spill):
            os.remove(spill)


def _skip(batches: Iterator[Batch], docs: int, toks: int) -> Iterator[Batch]:
    """The stream without its first ``docs`` documents and then ``toks`` tokens."""
    for tokens, ends in batches:
        if docs:
            k = min(docs, len(ends))
            docs -= k
            if docs:  # this batch ends inside a document still to skip
                continue
            cut = int(ends[k - 1]) if k else 0
            tokens, ends = tokens[cut:], ends[k:] - cut
        if toks:
            n = min(toks, len(tokens))
            toks -= n
            tokens, ends = tokens[n:], ends - n
        if len(tokens) or len(ends):
            yield tokens, ends


# --------------------------------------------------------------------------------------------
# shards


class _Sharder:
    """Cuts the stream into shards and records each one as it is completed."""

    def __init__(
        self,
        module: Any,
        folder: str,
        base: str,
        dtype: np.dtype,
        shard_tokens: int,
        entry: Dict[str, Any],
        position: _Position,
        shuffled: bool,
        save: Callable[[Dict[str, Any]], None],
    ) -> None:
        self.module = module
        self.folder = folder
        self.base = base
        self.dtype = dtype
        self.shard_tokens = shard_tokens
        self.split_docs = module is llmc
        self.entry = entry
        self.pos = position
        self.shuffled = shuffled
        self.save = save
        self.writer: Any = None
        shards = entry["shards"]
        last = shards[-1]["resume"] if shards else None
        self.docs = last["documents"] if last else 0  # documents of the output finished
        self.doc_tokens = last["tokens"] if last else 0  # tokens of the next one written
        self.shard_docs = 0

    def _open(self) -> Any:
        if self.writer is None:
            name = f"{self.base}_{len(self.entry['shards']):06d}"
            self.writer = self.module.Writer(self.folder, name, self.dtype)
            self.shard_docs = 0
        return self.writer

    def _write(self, tokens: np.ndarray, ends: np.ndarray) -> None:
        self.writer.write(tokens, ends)
        if len(ends):
            self.docs += len(ends)
            self.doc_tokens = len(tokens) - int(ends[-1])
        else:
            self.doc_tokens += len(tokens)

    def add(self, tokens: np.ndarray, ends: np.ndarray) -> None:
        while len(tokens) or len(ends):
            w = self._open()
            room = self.shard_tokens - w.tokens
            if self.split_docs:
                n = min(room, len(tokens))
                k = int(np.searchsorted(ends, n, side="right"))
                self._write(tokens[:n], ends[:k])
                tokens, ends = tokens[n:], ends[k:] - n
                if w.tokens >= self.shard_tokens:
                    self._finish()
            else:
                i = int(np.searchsorted(ends, room))
                if i < len(ends):
                    cut = int(ends[i])
                    self._write(tokens[:cut], ends[: i + 1])
                    tokens, ends = tokens[cut:], ends[i + 1 :] - cut
                    self._finish()
                else:
                    self._write(tokens, ends)
                    return

    def _finish(self) -> None:
        w, self.writer = self.writer, None
        files = w.finish()
        if self.shuffled:
            resume = {
                "input_documents": self.pos.window_start,
                "window": self.pos.window,
                "window_documents": self.docs - self.pos.window_start,
            }
        else:
            resume = {"input_documents": self.docs, "window": 0, "window_documents": 0}
        resume.update(documents=self.docs, tokens=self.doc_tokens)
        self.entry["shards"].append(
            {"files": files, "tokens": w.tokens, "documents": w.documents, "resume": resume}
        )
        self.entry["tokens"] += w.tokens
        self.save(self.entry)

    def close(self) -> None:
        if self.writer is not None:
            if self.writer.tokens or self.writer.documents:
                self._finish()
            else:
                self.writer.abort()
                self.writer = None
        self.entry["documents"] = self.docs

    def abort(self) -> None:
        if self.writer is not None:
            self.writer.abort()
            self.writer = None


# --------------------------------------------------------------------------------------------
# one input


def _input_stat(path: str) -> Dict[str, Any]:
    st = os.stat(path)
    return {"path": os.path.abspath(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _progress_path(out_dir: str, name: str) -> str:
    return os.path.join(out_dir, PROGRESS_DIR, name + ".json")


def _write_json(path: str, data: Any) -> None:
    # the whole text first: a value JSON cannot hold fails before the file is touched
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    with atomic_write(path, "w", encoding="utf-8", newline="\n") as f:  # failed: the old file
        f.write(text)


def process_input(
    entry: Dict[str, Any],
    config: Dict[str, Any],
    tok: Any,
    out_dir: str,
    tick: Optional[Callable[[int], None]] = None,
) -> Dict[str, Any]:
    """Tokenize one input into its shards, from where ``entry`` (its progress) says it stopped;
    returns the entry, done. The same for both engines (a Ray task calls it)."""
    module = FORMATS[config["format"]]
    dtype = np.dtype(config["dtype"])
    name = entry["output"]
    shuffled = config["shuffle"] is not None
    shards = entry["shards"]
    last = shards[-1]["resume"] if shards else None
    start_docs = last["input_documents"] if last else 0
    pos = _Position(start_docs, last["window"] if last else 0)

    def save(e: Dict[str, Any]) -> None:
        _write_json(_progress_path(out_dir, name), e)

    source = DocumentSource(entry["path"], config["text_field"], config["errors"], tok)
    reported = 0

    def on_batch() -> None:
        nonlocal reported
        if tick is not None and source.bytes_read > reported:
            tick(source.bytes_read - reported)
            reported = source.bytes_read

    batches = _encode_batches(
        _pieces_after(source, start_docs),
        tok,
        dtype,
        config["bos"],
        config["eos"],
        config["threads"],
        on_batch,
    )
    if shuffled:
        spill = os.path.join(out_dir, f".{name}.window{TEMP_SUFFIX}")
        batches = _windows(batches, config["shuffle"], config["shard_tokens"], dtype, spill, pos)
    if last:
        skip_docs = last["window_documents"]
        batches = _skip(batches, skip_docs, last["tokens"])
    sharder = _Sharder(
        module, out_dir, name, dtype, config["shard_tokens"], entry, pos, shuffled, save
    )
    try:
        for tokens, ends in batches:
            sharder.add(tokens, ends)
        sharder.close()
    except BaseException:
        sharder.abort()
        raise
    if tick is not None:
        size = entry["size"]
        if size > reported:
            tick(size - reported)
    entry["done"] = True
    save(entry)
    return entry


def _ray_process(entry, config, tok, out_dir):  # pragma: no cover - runs in a Ray worker
    return process_input(entry, config, tok, out_dir)


# --------------------------------------------------------------------------------------------
# the whole run


def tokenize_dataset(
    inputs: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
    tokenizer: Any,
    out_dir: Union[str, "os.PathLike[str]"],
    format: str = "bin",
    text_field: str = "text",
    bos: Union[None, str, int] = None,
    eos: Union[None, str, int] = None,
    shard_tokens: int = DEFAULT_SHARD_TOKENS,
    shuffle: Optional[int] = None,
    threads: Optional[int] = None,
    engine: str = "local",
    *,
    errors: str = "strict",
    progress: Optional[bool] = None,
) -> Dict[str, Any]:
    """Tokenize ``inputs`` (files, folders, globs: .txt, .jsonl/.json, .parquet, compressed
    .gz/.bz2/.xz/.zst) into training shards in ``out_dir``; returns the manifest.

    ``tokenizer``: a Tokenizer, or a tokenizer file / OpenAI encoding name. ``format``: ``"bin"``
    (llm.c / nanoGPT), ``"megatron"`` (``.bin`` + ``.idx``), ``"datatrove"`` (``.ds`` +
    ``.ds.index``) or ``"npy"`` (``.ids.npy`` + ``.offsets.npy``). ``bos``/``eos``: a special
    token (text or id) put before/after every document. ``shard_tokens``: tokens per shard.
    ``shuffle``: a seed to shuffle documents (within windows of one shard's worth of tokens),
    None to keep input order. ``threads``: encoding threads (None: all cores). ``engine``:
    ``"local"`` or ``"ray"`` (each input a Ray task on the cluster ``ray.init()`` connects to;
    ``out_dir`` must then be a folder every worker sees). ``progress``: a progress bar (None: when
    stderr is a terminal). One output set per input (``NNNNN-NAME_SSSSSS.*``) and ``manifest.json``;
    an interrupted run resumes where it stopped, a finished input is not redone."""
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    if engine not in ("local", "ray"):
        raise ValueError(f"engine must be 'local' or 'ray', not {engine!r}")
    if errors not in ("strict", "replace"):
        raise ValueError(f"errors must be 'strict' or 'replace', not {errors!r}")
    if not isinstance(text_field, str) or not text_field:
        raise TypeError("text_field must be a non-empty str")
    shard_tokens = _positive(
        shard_tokens, "shard_tokens", llmc.MAX_TOKENS if format == "bin" else None
    )
    if shuffle is not None:
        if isinstance(shuffle, bool) or not hasattr(type(shuffle), "__index__"):
            raise TypeError(f"shuffle must be an int seed or None, not {type(shuffle).__name__}")
        shuffle = int(shuffle)
        if shuffle < 0:
            raise ValueError(f"shuffle must be a seed >= 0, not {shuffle}")
    if threads is not None:
        threads = thread_count(threads, "threads")
    tok = _load_tokenizer(tokenizer)
    bos_id = _resolve_token(tok, bos, "bos")
    eos_id = _resolve_token(tok, eos, "eos")
    dtype = _dtype_for(tok)
    paths = expand_inputs(inputs)
    for p in paths:
        if p == STDIN or is_remote(p):
            raise ValueError(
                f"tokenize_dataset reads local files (it resumes by their size and time): "
                f"{p!r} is not one; copy it to a file first"
            )
    if not paths:
        raise FileNotFoundError("no input files")
    out = os.fspath(out_dir)
    if os.path.exists(out) and not os.path.isdir(out):
        raise NotADirectoryError(f"{out!r} is a file, not a folder: pass a folder for the shards")
    os.makedirs(os.path.join(out, PROGRESS_DIR), exist_ok=True)

    config = {
        "format": format,
        "dtype": dtype.name,
        "n_vocab": int(tok.n_vocab),
        "tokenizer": {"sha256": tokenizer_identity(tok), "name": getattr(tok, "name", None)},
        "text_field": text_field,
        "errors": errors,
        "bos": bos_id,
        "eos": eos_id,
        "shard_tokens": shard_tokens,
        "shuffle": shuffle,
    }
    if format == "megatron":
        config["storage_dtype"] = megatron.storage_dtype(dtype).name
    entries = _plan(out, paths, config)
    run_config = dict(config, threads=threads)

    todo = [i for i, e in enumerate(entries) if not e["done"]]
    total = sum(e["size"] for e in entries)
    bar = _progress_bar(progress, total, sum(e["size"] for e in entries if e["done"]))
    try:
        if engine == "local":
            for i in todo:
                tick = bar.update if bar is not None else None
                entries[i] = process_input(entries[i], run_config, tok, out, tick)
                _write_manifest(out, config, entries)
        else:
            _run_ray(entries, todo, run_config, tok, out, bar, config)
    finally:
        if bar is not None:
            bar.close()
    manifest = _write_manifest(out, config, entries)
    shutil.rmtree(os.path.join(out, PROGRESS_DIR), ignore_errors=True)
    return manifest


def _run_ray(entries, todo, run_config, tok, out, bar, config) -> None:
    try:
        import ray
    except ImportError:
        raise missing_extra("ray", "ray") from None
    if not ray.is_initialized():
        ray.init(address=os.environ.get("RAY_ADDRESS"), log_to_driver=False)
    remote = ray.remote(_ray_process)
    tok_ref = ray.put(tok)
    pending = {remote.remote(entries[i], run_config, tok_ref, out): i for i in todo}
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                i = pending.pop(ref)
                entries[i] = ray.get(ref)
                if bar is not None:
                    bar.update(entries[i]["size"])
                _write_manifest(out, config, entries)
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise


def _load_tokenizer(tokenizer: Any) -> Any:
    if isinstance(tokenizer, (str, os.PathLike)):
        path = os.fspath(tokenizer)
        if not os.path.exists(path) and os.path.basename(path) == path and "." not in path:
            return registry.get_encoding(path)  # an OpenAI encoding's name
        return registry.load_any(path)
    if not callable(getattr(tokenizer, "encode_ordinary_batch", None)) or not hasattr(
        tokenizer, "special_tokens"
    ):
        raise TypeError(
            "tokenizer must be a toksmith Tokenizer or the path of a tokenizer file, not "
            f"{type(tokenizer).__name__}"
        )
    return tokenizer


def _plan(out: str, paths: List[str], config: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The entries of the inputs: done ones from the manifest, partial ones from their progress
    file, the rest new. A folder made with other settings is refused."""
    old: Dict[str, Any] = {}
    mpath = os.path.join(out, MANIFEST)
    if os.path.exists(mpath):
        with open(mpath, encoding="utf-8") as f:
            old = json.load(f)
        mine = {k: old.get(k) for k in config}
        if mine != config:
            diff = ", ".join(
                f"{k}: {old.get(k)!r} there, {config[k]!r} now"
                for k in config
                if mine[k] != config[k]
            )
            raise ValueError(
                f"{out} holds shards made with other settings ({diff}); pass another out_dir or "
                "remove that one"
            )
    # a killed run's partial files: a shard set killed while being moved into place is
    # finished (it is complete), a partial one removed, as are scratch files
    finish_interrupted_saves(out)
    for n in os.listdir(out):
        if n.endswith(TEMP_SUFFIX):
            os.remove(os.path.join(out, n))
    old_entries = {e["path"]: e for e in old.get("inputs", [])}
    entries = []
    for i, p in enumerate(paths):
        stat = _input_stat(p)
        stem = output_stem(p)
        name = f"{i:05d}-{stem}"
        fresh = dict(stat, output=name, done=False, tokens=0, documents=0, shards=[])
        prev = old_entries.get(stat["path"])
        progress = _progress_path(out, name)
        prog = None
        if os.path.exists(progress):
            with open(progress, encoding="utf-8") as f:
                prog = json.load(f)
        if prev and prev.get("output") == name and _same_file(prev, stat) and prev.get("done"):
            entries.append(prev)
        elif prog and _same_file(prog, stat) and prog.get("output") == name:
            entries.append(prog)
        else:  # new, or changed since: the shards made from it before are stale
            for stale in (prev, prog):
                for shard in (stale or {}).get("shards", []):
                    for n in shard["files"]:
                        if os.path.exists(os.path.join(out, n)):
                            os.remove(os.path.join(out, n))
            entries.append(fresh)
    return entries


def _same_file(a: Dict[str, Any], b: Dict[str, Any]) -> bool:
    return (
        a.get("path") == b["path"]
        and a.get("size") == b["size"]
        and (a.get("mtime_ns") == b["mtime_ns"])
    )


def _write_manifest(out: str, config: Dict[str, Any], entries: List[Dict[str, Any]]) -> Dict:
    manifest = dict(
        manifest_version=MANIFEST_VERSION,
        toksmith_version=__version__,
        **config,
        done=all(e["done"] for e in entries),
        tokens=sum(e["tokens"] for e in entries),
        documents=sum(e["documents"] for e in entries),
        inputs=entries,
    )
    _write_json(os.path.join(out, MANIFEST), manifest)
    return manifest


def _progress_bar(progress: Optional[bool], total: int, done: int) -> Any:
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return None
    try:
        from tqdm import tqdm  # type: ignore[import-untyped]
    except ImportError:
        return None
    return tqdm(
        total=total,
        initial=done,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        desc="tokenize",
        dynamic_ncols=True,
    )
