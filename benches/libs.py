"""One adapter per encoder library, all with the same calls (text in, ``list[int]`` out).

Every timed call returns plain Python lists of ids (for Hugging Face and fastokens that
includes reading ``Encoding.ids``), so the libraries are compared on the same work.
Libraries are imported only when an adapter is built, so a worker loads just one.
"""

from __future__ import annotations

import codecs
import os
from typing import Callable, List, Optional, Tuple

from .vocabs import read_tiktoken


def ncores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        return os.cpu_count() or 1


class Adapter:
    name = "?"

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


class Toksmith(Adapter):
    name = "toksmith"

    def __init__(self, spec):
        import toksmith

        ranks = read_tiktoken(spec["ranks"])
        self.tok = toksmith.Tokenizer.from_ranks(ranks, spec["pattern"], spec.get("specials") or {})

    def encode(self, text):
        return self.tok.encode_ordinary(text)

    def encode_each(self, docs):
        f = self.tok.encode_ordinary
        return [f(d) for d in docs]

    def encode_batch(self, docs, threads):
        return self.tok.encode_ordinary_batch(docs, threads=threads)

    def decode(self, ids):
        return self.tok.decode(ids)

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


ADAPTERS: dict = {"toksmith": Toksmith, "tiktoken": Tiktoken, "hf": HF, "fastokens": Fastokens}


def make(lib: str, spec) -> Adapter:
    return ADAPTERS[lib](spec)


def lib_version(lib: str) -> str:
    from importlib import metadata

    dist = {"hf": "tokenizers"}.get(lib, lib)
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


TimedFn = Callable[[], object]
