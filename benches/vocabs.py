"""Vocabularies measured by the encode sections, and the files each library loads them from.

A *vocab spec* (a JSON-able dict) names everything a worker needs:
``{"name", "pattern" (toksmith name), "regex" (regex text), "ranks" (a .tiktoken file),
"specials", "hf" (a tokenizer.json or None), "hf_source", "source"}``.

Rank files use tiktoken's format (base64 token, space, rank per line), which tiktoken, toksmith
and fastokens all load. The Hugging Face tokenizer.json is a ByteLevel BPE with a ``Split``
pre-tokenizer, built here from the ranks (merges recovered by running BPE on each token with
the lower ranks only), unless toksmith's own exporter exists and gives the same ids.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Dict, List, Optional, Tuple

GPT2_SPECIALS = {"<|endoftext|>": 50256}
CL100K_SPECIALS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}

#: Split patterns for Hugging Face tokenizers (Oniguruma). tiktoken's current forms use
#: possessive quantifiers and ``\s++$``, which Oniguruma reads differently (``$`` is end of
#: line, ``{1,3}+`` is not possessive), so the classic, equivalent forms are used, as in the
#: tokenizer.json files published for these encodings. The o200k pattern is used as it is.
HF_PATTERNS = {
    "gpt2": r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    "cl100k": r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
}


def read_tiktoken(path) -> Dict[bytes, int]:
    ranks: Dict[bytes, int] = {}
    with open(path, "rb") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            tok, rank = line.split()
            ranks[base64.b64decode(tok)] = int(rank)
    return ranks


def write_tiktoken(ranks: Dict[bytes, int], path) -> None:
    lines = [base64.b64encode(t) + b" " + str(r).encode() for t, r in sorted(ranks.items(), key=lambda kv: kv[1])]
    tmp = Path(str(path) + ".tmp")
    tmp.write_bytes(b"\n".join(lines) + b"\n")
    tmp.replace(path)


# ---------------------------------------------------------------------------- Hugging Face


def _bytes_to_unicode() -> Dict[int, str]:
    """GPT-2's byte -> printable character table."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def _split_by_lower_ranks(ranks: Dict[bytes, int], token: bytes, max_rank: int) -> List[bytes]:
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 1:
        best_i, best_r = -1, max_rank
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and r < best_r:
                best_i, best_r = i, r
        if best_i < 0:
            break
        parts[best_i : best_i + 2] = [parts[best_i] + parts[best_i + 1]]
    return parts


def recover_merges(ranks: Dict[bytes, int]) -> List[Tuple[bytes, bytes]]:
    """The merge list of a tiktoken rank table (each token = BPE of lower-ranked tokens)."""
    merges = []
    for tok, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(tok) == 1:
            continue
        parts = _split_by_lower_ranks(ranks, tok, rank)
        if len(parts) != 2:
            raise ValueError(f"token {tok!r} (rank {rank}) is not the merge of two lower-ranked tokens")
        merges.append((parts[0], parts[1]))
    return merges


def hf_tokenizer_json(ranks: Dict[bytes, int], split_regex: str, specials: Dict[str, int]) -> dict:
    b2u = _bytes_to_unicode()

    def s(b: bytes) -> str:
        return "".join(b2u[x] for x in b)

    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True}
            for t, i in sorted(specials.items(), key=lambda kv: kv[1])
        ],
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": split_regex}, "behavior": "Isolated", "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
            ],
        },
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": {s(t): r for t, r in sorted(ranks.items(), key=lambda kv: kv[1])},
            "merges": [[s(a), s(b)] for a, b in recover_merges(ranks)],
        },
    }


def _exporter_json(ranks, pattern: str, specials) -> Optional[str]:
    """toksmith's own Hugging Face exporter, if this version has one."""
    try:
        import toksmith
    except ImportError:
        return None
    tok = toksmith.Tokenizer.from_ranks(ranks, pattern, specials)
    fn = getattr(tok, "to_huggingface", None)
    if fn is None:
        return None
    out = fn()
    if isinstance(out, str):
        return out
    if isinstance(out, dict):
        return json.dumps(out)
    if hasattr(out, "to_str"):
        return out.to_str()
    return None


def _hf_ids_match(json_text: str, ranks, regex: str, sample: str) -> bool:
    try:
        import tiktoken
        import tokenizers
    except ImportError:
        return False
    try:
        hf = tokenizers.Tokenizer.from_str(json_text)
        enc = tiktoken.Encoding("ref", pat_str=regex, mergeable_ranks=ranks, special_tokens={})
        return hf.encode(sample, add_special_tokens=False).ids == enc.encode_ordinary(sample)
    except Exception:
        return False


def build_hf(ranks, name: str, pattern: str, regex: str, specials, dest: Path, sample: str) -> Tuple[Optional[str], str]:
    """Write a tokenizer.json for Hugging Face tokenizers; return (path, how it was made)."""
    if dest.exists():
        meta = dest.with_suffix(".source")
        return str(dest), meta.read_text() if meta.exists() else "cached"
    candidates = []
    try:
        exported = _exporter_json(ranks, pattern, specials)
    except Exception:
        exported = None
    if exported is not None:
        candidates.append(("toksmith to_huggingface()", exported))
    split = HF_PATTERNS.get(name, regex)
    candidates.append((f"built by benches (ByteLevel BPE, Split on {'classic ' if name in HF_PATTERNS else ''}{name} regex)",
                       json.dumps(hf_tokenizer_json(ranks, split, specials))))
    chosen = candidates[-1]
    for how, text in candidates:
        if _hf_ids_match(text, ranks, regex, sample):
            chosen = (how, text)
            break
    dest.write_text(chosen[1], encoding="utf-8")
    dest.with_suffix(".source").write_text(chosen[0])
    return str(dest), chosen[0]


# ---------------------------------------------------------------------------- specs


def prepare_vocabs(mode, cache: Path, data: dict, want_hf: bool = True, log=print) -> Dict[str, dict]:
    """Vocab specs for gpt2, cl100k (real rank files unless smoke) and o200k (trained by
    toksmith with the o200k pattern on the training corpus)."""
    from toksmith.pretokenize import PATTERNS

    from .config import ENCODE_PATTERNS, shared_data_dir
    from .data import iter_docs, read_docs

    vdir = cache / "vocabs"
    vdir.mkdir(parents=True, exist_ok=True)
    sample_docs = read_docs(data["files"]["warm"])[:20]
    sample = "".join(sample_docs)[:200_000]
    specs: Dict[str, dict] = {}
    real = {"gpt2": ("gpt2.tiktoken", GPT2_SPECIALS), "cl100k": ("cl100k_base.tiktoken", CL100K_SPECIALS)}
    for name in ENCODE_PATTERNS:
        regex = PATTERNS[name]
        if mode.real_vocabs and name in real:
            fname, specials = real[name]
            path = shared_data_dir() / "vocabs" / fname
            if not path.exists():
                raise FileNotFoundError(f"rank file {path} not found (set TOKSMITH_BENCH_DATA)")
            source = f"real rank file {fname}"
        else:
            specials = {}
            path = vdir / f"{name}_trained_{mode.trained_vocab}.tiktoken"
            source = f"trained by toksmith on the training corpus ({name} pattern, vocab {mode.trained_vocab})"
            if not path.exists():
                import time

                import toksmith

                log(f"[vocab] training a {mode.trained_vocab} vocab with the {name} pattern")
                t0 = time.perf_counter()
                tok = toksmith.train_from_iterator(iter_docs(data["files"]["train"]), vocab_size=mode.trained_vocab,
                                                   pattern=name)
                write_tiktoken(tok.mergeable_ranks(), path)
                log(f"[vocab]   done in {time.perf_counter() - t0:.1f} s")
        spec = {"name": name, "pattern": name, "regex": regex, "ranks": str(path), "specials": specials,
                "source": source, "hf": None, "hf_source": None}
        if want_hf:
            ranks = read_tiktoken(path)
            try:
                tag = "real" if (mode.real_vocabs and name in real) else f"t{mode.trained_vocab}"
                # no added tokens: every measured call encodes ordinary text
                spec["hf"], spec["hf_source"] = build_hf(ranks, name, name, regex, {},
                                                         vdir / f"{name}_{tag}.hf.json", sample)
            except Exception as e:  # noqa: BLE001
                spec["hf_source"] = f"could not build: {e}"
        specs[name] = spec
    return specs
