"""Load time and one-thread encode speed of open models' tokenizer files (issue 30), toksmith
next to Hugging Face ``tokenizers`` and (for rank files) tiktoken.

    python -m benches.families [--mb 1] [--runs 3] [--out benches/out/families]

Reads ``../shared/data`` (or ``$TOKSMITH_BENCH_DATA``): the zoo's real files
(``vocabs/zoo/*.xz``, decompressed once into ``--out``) and the English, Python and multilingual
corpora (the first ``--mb`` MB of each, encoded as one string). Files the zoo has no
``tokenizer.json`` for are made the way ``transformers`` makes them (``TikTokenConverter``, the
converter of every tiktoken-based model: Llama 3, Qwen 2) or, for cl100k, by toksmith's export.
Writes ``benches/families.md`` (included in BENCHMARKS.md by ``benches.report``) and prints it.
Every toksmith encode is checked against the peer's ids ("ids differ" instead of a speed).
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import statistics
import sys
import time
import unicodedata
from pathlib import Path

# one thread for every library, set before any of them is imported
os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("RAYON_RS_NUM_CPUS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from .config import REPO, shared_data_dir  # noqa: E402

DATA = shared_data_dir()
ZOO = DATA / "vocabs" / "zoo"
CORPORA = {
    "English": "english.txt.xz",
    "code": "python.txt.xz",
    "multilingual": "multilingual_ui.txt.xz",
}


def unxz(path: Path, out: Path) -> Path:
    dest = out / path.name.removesuffix(".xz")
    if not dest.exists():
        dest.write_bytes(lzma.open(path).read() if path.suffix == ".xz" else path.read_bytes())
    return dest


def converted_json(ranks_path: Path, pattern: str, specials, out: Path, name: str) -> Path:
    """tokenizer.json as transformers' TikTokenConverter writes it for a tiktoken rank file."""
    dest = out / f"{name}_tokenizer.json"
    if not dest.exists():
        from transformers.convert_slow_tokenizer import TikTokenConverter

        conv = TikTokenConverter(
            vocab_file=str(ranks_path), pattern=pattern, extra_special_tokens=list(specials)
        )
        conv.converted().save(str(dest))
    return dest


def clip_json(out: Path) -> Path:
    """CLIP ViT-L/14's tokenizer.json as transformers' CLIPTokenizer builds it from the zoo's
    vocab.json + merges.txt."""
    dest = out / "clip_tokenizer.json"
    if not dest.exists():
        from transformers import CLIPTokenizer

        CLIPTokenizer.from_pretrained(str(ZOO / "clip_vit_l14")).backend_tokenizer.save(str(dest))
    return dest


def best(f, runs):
    """(best, median, result) of ``runs`` calls, in CPU seconds of this process (one thread for
    every library: on a shared machine the wall clock counts the other jobs too)."""
    times = []
    for _ in range(runs):
        t = time.process_time()
        got = f()
        times.append(time.process_time() - t)
    return min(times), statistics.median(times), got


def interleaved(f, g, runs):
    """:func:`best` of ``f`` and of ``g``, their calls alternated (a load spike then hits both)."""
    fs, gs = [], []
    for _ in range(runs):
        fs.append(best(f, 1))
        gs.append(best(g, 1))
    return (min(x[0] for x in fs), fs[-1][2]), (min(x[0] for x in gs), gs[-1][2])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=1.0, help="MB of each corpus (one string)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=str(REPO / "benches" / "out" / "families"))
    ap.add_argument("--only", nargs="*", help="only the families whose name has one of these")
    ap.add_argument("--md", default=str(REPO / "benches" / "families.md"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    import tiktoken
    import tokenizers

    import toksmith
    from toksmith.files import tiktoken as tt

    texts = {}
    for label, name in CORPORA.items():
        raw = lzma.open(DATA / "corpora" / name).read(int(args.mb * 1_000_000) + 4)
        texts[label] = raw.decode("utf-8", "ignore")

    llama3_ranks = unxz(ZOO / "llama3_tokenizer.model.xz", out)
    qwen_ranks = unxz(ZOO / "qwen1_qwen.tiktoken.xz", out)
    cl100k_ranks = DATA / "vocabs" / "cl100k_base.tiktoken"
    cl100k_json = out / "cl100k_tokenizer.json"
    if not cl100k_json.exists():
        tok = toksmith.from_tiktoken(cl100k_ranks)
        cl100k_json.write_text(json.dumps(toksmith.files.huggingface.huggingface_json(tok)))
    qwen = tt.MODEL_RANK_FILES["qwen1"]
    llama3 = tt.MODEL_RANK_FILES["llama3"]
    families = [
        # (family, file kind, toksmith loader, peer name, peer loader)
        (
            "Llama 3",
            "HF tokenizer.json (ignore_merges, 280k merges)",
            converted_json(llama3_ranks, tt.LLAMA3_PATTERN, llama3.special_tokens, out, "llama3"),
        ),
        (
            "Qwen 2-style",
            "HF tokenizer.json (Qwen's vocab and pattern, no NFC)",
            converted_json(qwen_ranks, tt.QWEN1_PATTERN, qwen.special_tokens, out, "qwen2"),
        ),
        (
            "DeepSeek V3",
            "HF tokenizer.json (3 Split steps)",
            unxz(ZOO / "deepseek_v3_tokenizer.json.xz", out),
        ),
        ("OLMo 2", "HF tokenizer.json", unxz(ZOO / "olmo2_dolma2_tokenizer.json.xz", out)),
        ("cl100k", "HF tokenizer.json (toksmith's export)", cl100k_json),
        ("Llama 3", "tiktoken tokenizer.model", llama3_ranks),
        ("Qwen 1", "qwen.tiktoken (NFC of the whole text, as Qwen's code)", qwen_ranks),
        ("cl100k", "cl100k_base.tiktoken", cl100k_ranks),
        ("CLIP", "HF tokenizer.json (end-of-word BPE)", clip_json(out)),
        ("CLIP", "vocab.json + merges.txt", ZOO / "clip_vit_l14"),
    ]
    if args.only:
        families = [f for f in families if any(w.lower() in f[0].lower() for w in args.only)]
    rows = []
    for family, kind, path in families:
        is_json = path.suffix == ".json"
        if path.is_dir():  # CLIP's folder, next to transformers' CLIPTokenizer
            from transformers import CLIPTokenizer

            (t_load, tok), (p_load, ct) = interleaved(
                lambda: toksmith.load_any(path),
                lambda: CLIPTokenizer.from_pretrained(str(path)),
                args.runs,
            )
            peer = "transformers"

            def peer_encode(s, ct=ct):
                return ct(s, add_special_tokens=False)["input_ids"]
        elif is_json:
            (t_load, tok), (p_load, hf) = interleaved(
                lambda: toksmith.load_any(path),
                lambda: tokenizers.Tokenizer.from_file(str(path)),
                args.runs,
            )
            peer = "tokenizers"

            def peer_encode(s, hf=hf):
                return hf.encode(s, add_special_tokens=False).ids
        else:
            from tiktoken.load import load_tiktoken_bpe

            first = toksmith.from_tiktoken(path)  # its pattern and special tokens for tiktoken

            def tk_load(tok=first, path=path):
                return tiktoken.Encoding(
                    tok.name,
                    pat_str=tok.pattern,
                    mergeable_ranks=load_tiktoken_bpe(str(path)),
                    special_tokens=tok.special_tokens,
                )

            (t_load, tok), (p_load, enc) = interleaved(
                lambda: toksmith.from_tiktoken(path), tk_load, args.runs
            )
            peer = "tiktoken"

            if tok.normalizer is not None:  # Qwen 1: NFC first, as tokenization_qwen.py

                def peer_encode(s, enc=enc):
                    return enc.encode_ordinary(unicodedata.normalize("NFC", s))
            else:

                def peer_encode(s, enc=enc):
                    return enc.encode_ordinary(s)

        cells = {}
        for label, s in texts.items():
            mb = len(s.encode("utf-8")) / 1e6
            if isinstance(tok, toksmith.Tokenizer):
                t, _, ids = best(lambda: tok.encode(s, disallowed_special=()), args.runs)
            else:  # a PipelineTokenizer (CLIP): no template tokens, as the peer is called
                t, _, ids = best(lambda: tok.encode(s, add_special_tokens=False), args.runs)
            p, _, pids = best(lambda: peer_encode(s), args.runs)
            cells[label] = (mb / t, mb / p, ids == pids)
        rows.append((family, kind, peer, t_load, p_load, cells))
        print(
            family,
            kind,
            f"load {t_load:.2f}s vs {p_load:.2f}s",
            {k: f"{a:.1f}/{b:.1f} {'ok' if e else 'DIFF'}" for k, (a, b, e) in cells.items()},
            file=sys.stderr,
        )

    if args.only:  # a partial run prints its rows only
        for family, kind, peer, t_load, p_load, cells in rows:
            print(render_row(family, kind, peer, t_load, p_load, cells))
        return 0 if all(e for r in rows for (_, _, e) in r[5].values()) else 1
    # Llama 3's pattern before it ran on the cl100k scanner: the same regex in a group, which
    # the scanner does not recognise (the regex engine splits it the same)
    llama = toksmith.from_tiktoken(llama3_ranks)
    slow = toksmith.Tokenizer.from_ranks(
        llama.mergeable_ranks(), f"(?:{tt.LLAMA3_PATTERN})", special_tokens=llama.special_tokens
    )
    before = {}
    for label, s in texts.items():
        mb = len(s.encode("utf-8")) / 1e6
        t, _, ids = best(lambda: slow.encode(s, disallowed_special=()), args.runs)
        before[label] = mb / t

    md = render(rows, before, args)
    Path(args.md).write_text(md, encoding="utf-8")
    print(md)
    return 0 if all(e for r in rows for (_, _, e) in r[5].values()) else 1


def render_row(family, kind, peer, t_load, p_load, cells) -> str:
    parts = []
    for c in CORPORA:
        a, b, eq = cells[c]
        parts += [f"{a:.1f}" if eq else "ids differ", f"{b:.1f}"]
    return (
        f"| {family} | {kind} (vs {peer}) | {t_load:.2f} s | {p_load:.2f} s | "
        + " | ".join(parts)
        + " |"
    )


def render(rows, before, args) -> str:
    import platform

    import tiktoken
    import tokenizers

    cols = list(CORPORA)
    L = [
        "## Open models' tokenizer files (issue 30)",
        "",
        f"`python -m benches.families --mb {args.mb:g} --runs {args.runs}`: load time (CPU "
        f"seconds, best of {args.runs}, toksmith's and the peer's loads alternated in one "
        f"process) and one-thread encode speed in MB/s (CPU time, best of {args.runs}; "
        f"the first {args.mb:g} MB of each corpus as one string) of toksmith next to the peer "
        f"(tokenizers {tokenizers.__version__} for tokenizer.json, tiktoken {tiktoken.__version__} "
        f"for rank files). Every toksmith encode gave the peer's ids. {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, shared with other jobs (load average "
        f"{os.getloadavg()[0]:.0f} at the end of the run): compare within a row.",
        "",
        "| family | file | load toksmith | load peer | "
        + " | ".join(f"{c} toksmith | {c} peer" for c in cols)
        + " |",
        "|---|---|---|---|" + "---|---|" * len(cols),
    ]
    for row in rows:
        L.append(render_row(*row))
    L += [
        "",
        "Llama 3's pattern (and OLMo 2's: the same text) on the regex engine, as before it ran on "
        "the cl100k scanner (`(?:...)` around it): "
        + ", ".join(f"{c} {before[c]:.1f} MB/s" for c in cols)
        + ".",
        "",
    ]
    return "\n".join(L)


if __name__ == "__main__":
    sys.exit(main())
