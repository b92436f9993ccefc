"""One adapter per encoder library, all with the same calls (text in, ``list[int]`` out).

Every timed call returns plain Python lists of ids (for Hugging Face and fastokens that
includes reading ``Encoding.ids``), so the libraries are compared on the same work.
Libraries are imported only when an adapter is built, so a worker loads just one.
"""

from __future__ import annotations

import codecs
import functools
import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from .vocabs import read_tiktoken


def ncores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        return os.cpu_count() or 1


class Adapter:
    name = "?"
    #: how the vocabulary was loaded, when not from the spec's file as given
    note: Optional[str] = None

    def encode(self, text: str) -> List[int]:
        raise NotImplementedError

    def encode_each(self, docs: List[str]) -> List[List[int]]:
        f = self.encode
        return [f(d) for d in docs]

    def encode_batch(self, docs: List[str], threads: int) -> List[List[int]]:
        raise NotImplementedError

    def decode(self, ids: List[int]) -> str:
        raise NotImplementedError

    def stream_decode(self, ids: List[int]) -> Optional[str]:
        """Feed ids one at a time to the library's incremental decoder (None if it has none)."""
        return None


class OrdinaryAdapter(Adapter):
    """A library with tiktoken's ``encode_ordinary`` and ``decode`` on ``self.tok``."""

    tok: Any

    def encode(self, text):
        return self.tok.encode_ordinary(text)

    def encode_each(self, docs):
        f = self.tok.encode_ordinary
        return [f(d) for d in docs]

    def decode(self, ids):
        return self.tok.decode(ids)


class Toksmith(OrdinaryAdapter):
    name = "toksmith"

    def __init__(self, spec):
        import toksmith

        ranks = read_tiktoken(spec["ranks"])
        self.tok = toksmith.Tokenizer.from_ranks(ranks, spec["pattern"], spec.get("specials") or {})

    def encode_batch(self, docs, threads):
        return self.tok.encode_ordinary_batch(docs, threads=threads)

    def stream_decode(self, ids):
        d = self.tok.stream_decoder()
        push = d.push
        out = [push(i) for i in ids]
        out.append(d.flush())
        return "".join(out)


class Tiktoken(Adapter):
    name = "tiktoken"

    def __init__(self, spec):
        import tiktoken

        ranks = read_tiktoken(spec["ranks"])
        self.enc = tiktoken.Encoding(
            f"bench-{spec['name']}",
            pat_str=spec["regex"],
            mergeable_ranks=ranks,
            special_tokens=spec.get("specials") or {},
        )

    def encode(self, text):
        return self.enc.encode_ordinary(text)

    def encode_each(self, docs):
        f = self.enc.encode_ordinary
        return [f(d) for d in docs]

    def encode_batch(self, docs, threads):
        return self.enc.encode_ordinary_batch(docs, num_threads=threads)

    def decode(self, ids):
        return self.enc.decode(ids)

    def stream_decode(self, ids):
        # tiktoken has no streaming decoder: the usual recipe (token bytes + incremental UTF-8)
        tb = self.enc.decode_single_token_bytes
        dec = codecs.getincrementaldecoder("utf-8")("replace")
        out = [dec.decode(tb(i)) for i in ids]
        out.append(dec.decode(b"", final=True))
        return "".join(out)


class HF(Adapter):
    name = "hf"

    def __init__(self, spec):
        import tokenizers

        if not spec.get("hf"):
            raise RuntimeError(f"no tokenizer.json: {spec.get('hf_source')}")
        self.tok = tokenizers.Tokenizer.from_file(spec["hf"])

    def encode(self, text):
        return self.tok.encode(text, add_special_tokens=False).ids

    def encode_each(self, docs):
        f = self.tok.encode
        return [f(d, add_special_tokens=False).ids for d in docs]

    def encode_batch(self, docs, threads):
        return [e.ids for e in self.tok.encode_batch(docs, add_special_tokens=False)]

    def decode(self, ids):
        return self.tok.decode(ids, skip_special_tokens=False)

    def stream_decode(self, ids):
        from tokenizers.decoders import DecodeStream

        ds = DecodeStream(skip_special_tokens=False)
        step = ds.step
        tok = self.tok
        out = [step(tok, i) for i in ids]
        return "".join(x for x in out if x)


class Fastokens(Adapter):
    name = "fastokens"

    def __init__(self, spec):
        import fastokens

        self.tok = fastokens.Tokenizer.from_tiktoken(
            spec["ranks"], pattern=spec["regex"], special_tokens=spec.get("specials") or {}
        )

    def encode(self, text):
        return self.tok.encode_ordinary(text).ids

    def encode_each(self, docs):
        f = self.tok.encode_ordinary
        return [f(d).ids for d in docs]

    def encode_batch(self, docs, threads):
        return [
            e.ids
            for e in self.tok.encode_batch(
                docs, add_special_tokens=False, split_special_tokens=True
            )
        ]

    def decode(self, ids):
        return self.tok.decode(ids)


# ---------------------------------------------------------------------------- exact peers of issue 37
#
# Four of them load a .tiktoken file (splintr, riptoken, and fastokens/tiktoken above); the others
# have only their built-in OpenAI encodings. Those are measured only when the spec's rank file is
# OpenAI's own cl100k_base / o200k_base (SHA-256 checked) with its pattern, and where a library
# exposes its token table, the built-in copy is checked token by token against the file. Every
# library's ids are then compared with tiktoken's on every measured slice by the harness.

OPENAI_SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}
OPENAI_PATTERN = {"cl100k_base": "cl100k", "o200k_base": "o200k"}


@functools.lru_cache(maxsize=None)
def _file_sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def openai_encoding(spec) -> Optional[str]:
    """``"cl100k_base"`` / ``"o200k_base"`` when the spec is that OpenAI encoding (its rank file
    by SHA-256 and its pattern), else None."""
    try:
        digest = _file_sha256(str(spec["ranks"]))
    except OSError:
        return None
    for name, sha in OPENAI_SHA256.items():
        if digest == sha and spec.get("pattern") == OPENAI_PATTERN[name]:
            return name
    return None


def builtin_encoding(spec, lib: str) -> str:
    name = openai_encoding(spec)
    if name is None:
        raise RuntimeError(
            f"{lib} has only its built-in OpenAI encodings and {Path(spec['ranks']).name} "
            f"(pattern {spec.get('pattern')}) is not OpenAI's cl100k_base or o200k_base"
        )
    return name


@functools.lru_cache(maxsize=4)
def _ranks(path: str) -> Dict[bytes, int]:
    return read_tiktoken(path)


def check_token_table(lib: str, spec, token_bytes: Callable[[int], Optional[bytes]]) -> None:
    """Raise unless ``token_bytes(rank)`` is the file's token at every rank of the file."""
    for tok, rank in _ranks(str(spec["ranks"])).items():
        got = token_bytes(rank)
        if got != tok:
            raise RuntimeError(
                f"{lib}'s built-in {spec['name']} differs from {spec['ranks']} at rank {rank}: "
                f"{got!r} != {tok!r}"
            )


def _split_flat(flat: List[int], offsets: List[int]) -> List[List[int]]:
    """Per-document lists from a flat id buffer and ``len(docs) + 1`` offsets."""
    return [flat[a:b] for a, b in zip(offsets, offsets[1:])]


class Splintr(OrdinaryAdapter):
    """splintr-rs (module ``splintr``), from the same .tiktoken file. Its batch runs on rayon's
    global pool: the thread count comes from ``RAYON_NUM_THREADS`` (all cores by default)."""

    name = "splintr"

    def __init__(self, spec):
        import splintr

        # no special tokens: every measured call is ordinary text
        try:
            self.tok = splintr.Tokenizer(str(spec["ranks"]), spec["regex"], {})
        except OSError as e:
            # its regex engine rejects cl100k's possessive quantifiers (o200k's pattern has
            # none): take its built-in copy, whose pattern it rewrote, checked against the file
            name = openai_encoding(spec)
            if name is None:
                raise
            self.tok = splintr.Tokenizer.from_pretrained(name)
            check_token_table(self.name, spec, self._token_bytes)
            self.note = f"built-in {name} (the file's pattern: {str(e).splitlines()[0]})"

    def encode_batch(self, docs, threads):
        return self.tok.encode_batch(docs)

    def _token_bytes(self, rank: int) -> Optional[bytes]:
        try:
            return self.tok.decode_token_bytes(rank)
        except Exception:  # noqa: BLE001
            return None


class Riptoken(OrdinaryAdapter):
    """riptoken's CoreBPE from the same .tiktoken file (batch: rayon's global pool)."""

    name = "riptoken"

    def __init__(self, spec):
        import riptoken

        self.tok = riptoken.CoreBPE(dict(_ranks(str(spec["ranks"]))), {}, spec["regex"])

    def encode_batch(self, docs, threads):
        return self.tok.encode_ordinary_batch(docs)


class Toktok(OrdinaryAdapter):
    """toktok-rs (module ``toktok``): built-in encodings only (compiled into the module). Its
    public API only counts; the full encoder is ``toktok._encoding(name)``, which its docs name
    for "anyone who knowingly wants the full encode/decode surface"."""

    name = "toktok"

    def __init__(self, spec):
        import toktok

        self.tok = toktok._encoding(builtin_encoding(spec, self.name))
        self.note = f"built-in {spec['name']}, its token table checked against the file"
        table = self.tok.token_byte_values()
        check_token_table(self.name, spec, lambda r: table[r] if r < len(table) else None)

    def encode_batch(self, docs, threads):
        flat, offsets = self.tok.encode_batch(docs, threads, False)
        return _split_flat(
            memoryview(flat).cast("I").tolist(), memoryview(offsets).cast("q").tolist()
        )


class Quicktok(OrdinaryAdapter):
    """quicktok-v1 (module ``quicktok``): built-in encodings only."""

    name = "quicktok"

    def __init__(self, spec):
        import quicktok

        self.tok = quicktok.get_encoding(builtin_encoding(spec, self.name))
        self.note = f"built-in {spec['name']}, its token table checked against the file"
        # (its token_byte_values() is not in rank order)
        check_token_table(self.name, spec, self._token_bytes)

    def _token_bytes(self, rank: int) -> Optional[bytes]:
        try:
            return self.tok.decode_single_token_bytes(rank)
        except KeyError:
            return None

    def encode_batch(self, docs, threads):
        flat, offsets = self.tok.encode_batch(docs, threads, False)
        return _split_flat(flat.tolist(), offsets.tolist())


class RsBpe(Adapter):
    """rs-bpe (module ``rs_bpe``): built-in encodings only, no access to its token table (its
    ids are checked against tiktoken's on every slice like everyone's). Its parallel batch
    shares state between encodings: with cl100k_base loaded first, o200k_base's
    ``encode_batch_parallel`` gives wrong ids (rs_bpe 0.1.0), which the harness reports."""

    name = "rs-bpe"

    def __init__(self, spec):
        from rs_bpe.bpe import openai

        self.openai = openai
        self.tok = getattr(openai, builtin_encoding(spec, self.name))()
        self.note = f"built-in {spec['name']} (no token table to check: ids checked only)"

    def encode(self, text):
        return self.tok.encode(text)

    def encode_each(self, docs):
        f = self.tok.encode
        return [f(d) for d in docs]

    def encode_batch(self, docs, threads):
        # (min_batch_size, chunk_size, max_threads): parallel from 2 documents, chunks of 8
        opts = self.openai.ParallelOptions(2, 8, threads)
        return self.tok.encode_batch_parallel(docs, opts)[0]

    def decode(self, ids):
        return self.tok.decode(ids)


class BpeOpenai(OrdinaryAdapter):
    """bpe-openai (module ``bpe_openai``, over the ``bpe-openai`` Rust crate): built-in
    encodings only; its batch is a Python thread pool."""

    name = "bpe-openai"

    def __init__(self, spec):
        import bpe_openai

        self.tok = bpe_openai.get_encoding(builtin_encoding(spec, self.name))
        self.note = f"built-in {spec['name']}, its token table checked against the file"
        table = self.tok.token_byte_values()
        check_token_table(self.name, spec, lambda r: table[r] if r < len(table) else None)

    def encode_batch(self, docs, threads):
        return self.tok.encode_ordinary_batch(docs, num_threads=threads)


class Wordchipper(Adapter):
    """wordchipper: ``from_pretrained`` downloads OpenAI's file into its cache folder (offline it
    silently leaves an empty file and a 256-token vocabulary), so the spec's own file is put into
    a private cache folder first and the loaded vocabulary is checked against it."""

    name = "wordchipper"

    def __init__(self, spec):
        import wordchipper

        name = builtin_encoding(spec, self.name)
        root = Path(tempfile.mkdtemp(prefix="tsbench-wordchipper-"))
        try:
            d = root / "io.crates.wordchipper" / "openai" / name
            d.mkdir(parents=True)
            shutil.copyfile(spec["ranks"], d / f"{name}.tiktoken")
            old = os.environ.get("XDG_CACHE_HOME")
            os.environ["XDG_CACHE_HOME"] = str(root)
            try:
                self.tok = wordchipper.Tokenizer.from_pretrained(f"openai:{name}")
            finally:
                if old is None:
                    os.environ.pop("XDG_CACHE_HOME", None)
                else:
                    os.environ["XDG_CACHE_HOME"] = old
        finally:
            shutil.rmtree(root, ignore_errors=True)
        check_token_table(self.name, spec, self.tok.vocab.id_to_token_bytes)
        self.none = wordchipper.SpecialFilter.include_none()
        self.note = "the file put into its download cache (it loads only by name)"

    def encode(self, text):
        return self.tok.encode(text, self.none)

    def encode_each(self, docs):
        f, none = self.tok.encode, self.none
        return [f(d, none) for d in docs]

    def encode_batch(self, docs, threads):
        return self.tok.encode_batch(docs, self.none)

    def decode(self, ids):
        return self.tok.decode(ids)


def loader(
    lib: str, fmt: str, spec, paths
) -> Tuple[Callable[[], object], Callable[[object, str], List[int]]]:
    """``(load, encode)`` for reading one tokenizer file the way a user of ``lib`` would:
    ``load()`` reads the file (the library is imported before, untimed) and ``encode(tok,
    text)`` gives the ordinary ids, to check that every library loaded the same tokenizer."""
    specials = spec.get("specials") or {}
    if lib == "toksmith":
        import toksmith
        import toksmith.formats.huggingface  # noqa: F401
        import toksmith.formats.tiktoken  # noqa: F401

        load = {
            "tiktoken": lambda: toksmith.from_tiktoken(
                paths["tiktoken"], pattern=spec["pattern"], special_tokens=specials
            ),
            "tokenizer.json": lambda: toksmith.from_huggingface(paths["tokenizer.json"]),
            "toksmith": lambda: toksmith.load(paths["toksmith"]),
        }[fmt]
        return load, lambda tok, text: tok.encode_ordinary(text)
    if lib == "tiktoken":
        import tiktoken
        import tiktoken.load

        def load_tiktoken():
            ranks = tiktoken.load.load_tiktoken_bpe(paths["tiktoken"])
            return tiktoken.Encoding(
                f"bench-{spec['name']}",
                pat_str=spec["regex"],
                mergeable_ranks=ranks,
                special_tokens=specials,
            )

        return load_tiktoken, lambda enc, text: enc.encode_ordinary(text)
    if lib == "fastokens":
        import fastokens

        load = {
            "tiktoken": lambda: fastokens.Tokenizer.from_tiktoken(
                paths["tiktoken"], pattern=spec["regex"], special_tokens=specials
            ),
            "tokenizer.json": lambda: fastokens.Tokenizer.from_file(paths["tokenizer.json"]),
        }[fmt]
        return load, lambda tok, text: tok.encode_ordinary(text).ids
    if lib == "hf":
        import tokenizers

        return (
            lambda: tokenizers.Tokenizer.from_file(paths["tokenizer.json"]),
            lambda tok, text: tok.encode(text, add_special_tokens=False).ids,
        )
    raise ValueError(f"no loader for {lib}")


ADAPTERS: dict = {
    "toksmith": Toksmith,
    "tiktoken": Tiktoken,
    "hf": HF,
    "fastokens": Fastokens,
    "splintr": Splintr,
    "riptoken": Riptoken,
    "toktok": Toktok,
    "quicktok": Quicktok,
    "rs-bpe": RsBpe,
    "bpe-openai": BpeOpenai,
    "wordchipper": Wordchipper,
}
#: the exact encoders of issue 37 besides toksmith: (adapter name, module, distribution)
PEERS = (
    ("tiktoken", "tiktoken", "tiktoken"),
    ("fastokens", "fastokens", "fastokens"),
    ("toktok", "toktok", "toktok-rs"),
    ("quicktok", "quicktok", "quicktok-v1"),
    ("splintr", "splintr", "splintr-rs"),
    ("rs-bpe", "rs_bpe", "rs_bpe"),
    ("bpe-openai", "bpe_openai", "bpe-openai"),
    ("wordchipper", "wordchipper", "wordchipper"),
    ("riptoken", "riptoken", "riptoken"),
)
MODULES = {"hf": "tokenizers", **{lib: mod for lib, mod, _ in PEERS}}
DISTRIBUTIONS = {"hf": "tokenizers", **{lib: dist for lib, _, dist in PEERS}}


def make(lib: str, spec) -> Adapter:
    return ADAPTERS[lib](spec)


def lib_version(lib: str) -> str:
    from importlib import metadata

    dist = DISTRIBUTIONS.get(lib, lib)
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def missing_reason(lib: str) -> Optional[str]:
    """Why ``lib`` cannot be measured here (None when its module imports and is the encoder
    meant: a few names on PyPI belong to unrelated projects, e.g. ``splintr`` 0.0.5 is a
    multi-GPU training helper and ``toktok`` 0.0.2 a word splitter)."""
    import importlib.util
    from importlib import metadata

    mod = MODULES.get(lib, lib)
    if importlib.util.find_spec(mod) is None:
        return f"not installed (pip install {DISTRIBUTIONS.get(lib, lib)})"
    dist = DISTRIBUTIONS.get(lib)
    if dist and dist != mod:
        try:
            metadata.version(dist)
        except metadata.PackageNotFoundError:
            return f"module {mod} is not from {dist} (pip install {dist})"
    return None


TimedFn = Callable[[], object]
