"""Vocabularies measured by the encode sections, and the files each library loads them from.

A *vocab spec* (a JSON-able dict) names everything a worker needs:
``{"name", "pattern" (toksmith name), "regex" (regex text), "ranks" (a .tiktoken file),
"specials", "hf" (a tokenizer.json or None), "hf_source", "source"}``.

Rank files use tiktoken's format (base64 token, space, rank per line), which tiktoken, toksmith
and fastokens all load. The Hugging Face tokenizer.json comes from toksmith's exporter
(``toksmith.formats.huggingface.huggingface_json``) and is measured only when it gives
tiktoken's ids on a sample.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Optional, Tuple

from toksmith.formats.tiktoken import dump_tiktoken_ranks, load_tiktoken_ranks

GPT2_SPECIALS = {"<|endoftext|>": 50256}
CL100K_SPECIALS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


# toksmith's own checked reader/writer of .tiktoken files (tiktoken and fastokens read the same files).
read_tiktoken = load_tiktoken_ranks
write_tiktoken = dump_tiktoken_ranks


# ---------------------------------------------------------------------------- Hugging Face


def _exporter_json(ranks, pattern: str, specials) -> str:
    """tokenizer.json text from toksmith's Hugging Face exporter."""
    import toksmith
    from toksmith.formats.huggingface import huggingface_json

    return json.dumps(huggingface_json(toksmith.Tokenizer.from_ranks(ranks, pattern, specials)))


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


def build_hf(
    ranks, pattern: str, regex: str, specials, dest: Path, sample: str
) -> Tuple[Optional[str], str]:
    """Write a tokenizer.json for Hugging Face tokenizers; return (path, how it was made)."""
    if dest.exists():
        meta = dest.with_suffix(".source")
        return str(dest), meta.read_text() if meta.exists() else "cached"
    text = _exporter_json(ranks, pattern, specials)
    if not _hf_ids_match(text, ranks, regex, sample):
        return None, "not measured: toksmith's tokenizer.json export gives different ids"
    how = "toksmith huggingface_json()"
    dest.write_text(text, encoding="utf-8")
    dest.with_suffix(".source").write_text(how)
    return str(dest), how


# ---------------------------------------------------------------------------- specs


def prepare_vocabs(
    mode, cache: Path, data: dict, want_hf: bool = True, log=print
) -> Dict[str, dict]:
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
    real = {
        "gpt2": ("gpt2.tiktoken", GPT2_SPECIALS),
        "cl100k": ("cl100k_base.tiktoken", CL100K_SPECIALS),
    }
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
                tok = toksmith.train_from_iterator(
                    iter_docs(data["files"]["train"]), vocab_size=mode.trained_vocab, pattern=name
                )
                write_tiktoken(tok.mergeable_ranks(), path)
                log(f"[vocab]   done in {time.perf_counter() - t0:.1f} s")
        spec = {
            "name": name,
            "pattern": name,
            "regex": regex,
            "ranks": str(path),
            "specials": specials,
            "source": source,
            "hf": None,
            "hf_source": None,
        }
        if want_hf:
            ranks = read_tiktoken(path)
            try:
                tag = "real" if (mode.real_vocabs and name in real) else f"t{mode.trained_vocab}"
                # no added tokens: every measured call encodes ordinary text
                spec["hf"], spec["hf_source"] = build_hf(
                    ranks, name, regex, {}, vdir / f"{name}_{tag}.hf.json", sample
                )
            except Exception as e:  # noqa: BLE001
                spec["hf_source"] = f"could not build: {e}"
        specs[name] = spec
    return specs
