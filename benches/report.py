"""BENCHMARKS.md: the targets of issue 4 as ratios, then every table of the run."""

from __future__ import annotations

from statistics import median
from typing import List, Optional

from .config import ENCODE_LIBS, ENCODE_PATTERNS, LOAD_FORMATS, REPO, TRAIN_LIBS, WORST_KINDS

LIB_NAMES = {
    "toksmith": "toksmith",
    "tiktoken": "tiktoken",
    "hf": "HF tokenizers",
    "fastokens": "fastokens",
    "rustbpe": "rustbpe",
}
KIND_NAMES = {
    "normal": "normal text",
    "letter": "one repeated letter",
    "unicode": "random Unicode",
    "digits": "one line of digits",
    "spaces": "whitespace (spaces)",
}

HOW_TO_RUN = """\
```sh
pip install -e '.[bench]'          # tiktoken, tokenizers, rustbpe, numpy, matplotlib, psutil (+ fastokens if available)
python -m benches.run              # full run (~20 min on 2 cores): writes BENCHMARKS.md + docs/benchmarks.png
python -m benches.run --quick      # small inputs, 1 run each: writes benches/out/BENCHMARKS.md
python -m benches.run --only encode decode --quick
python -m benches.run --report-only  # re-render BENCHMARKS.md from benches/out/results.json
cargo bench -p toksmith-core       # Rust micro-benchmarks (criterion)
```
Inputs come from `../shared/data` (or `$TOKSMITH_BENCH_DATA`); `--smoke` uses `tests/data` only."""


def fmt(x: Optional[float], digits: int = 1) -> str:
    if x is None:
        return "—"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.{digits}f}"


def ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
    if a is None or b is None or b == 0:
        return None
    return a / b


def fx(x: Optional[float], digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}x"


def mb(n: int) -> str:
    return f"{n / 1e6:.{0 if n >= 10e6 else 1}f} MB" if n >= 1e6 else f"{n / 1e3:.0f} KB"


def status(met: Optional[bool]) -> str:
    return "not measured" if met is None else ("**met**" if met else "**not met**")


# ---------------------------------------------------------------------------- targets


def _encode_ok(s: dict) -> bool:
    return bool(s) and not s.get("error")


def targets(res: dict) -> List[dict]:
    rows: List[dict] = []
    tr = res.get("train")
    if tr and tr["rows"]:
        top = max(r["vocab"] for r in tr["rows"])
        for row in [r for r in tr["rows"] if r["vocab"] == top]:
            t, b = row["libs"]["toksmith"], row["libs"]["rustbpe"]
            q = ratio(t["wall_s"], b["wall_s"])
            rows.append(
                {
                    "target": f"training {row['pattern']}, {mb(tr['corpus_bytes'])} -> {top}: wall <= 1/3 of rustbpe's",
                    "measured": f"{fmt(t['wall_s'], 2)} s vs rustbpe {fmt(b['wall_s'], 2)} s",
                    "ratio": f"{fx(q)} (rustbpe / toksmith = {fx(ratio(b['wall_s'], t['wall_s']))})",
                    "met": None if q is None else q <= 1 / 3,
                }
            )
            qr = ratio(t["rss_mb"], b["rss_mb"])
            rows.append(
                {
                    "target": f"training {row['pattern']} -> {top}: peak RSS <= rustbpe's",
                    "measured": f"{fmt(t['rss_mb'], 0)} MB vs rustbpe {fmt(b['rss_mb'], 0)} MB",
                    "ratio": fx(qr),
                    "met": None if qr is None else qr <= 1.0,
                }
            )
        eq = [r["merges_equal"] for r in tr["rows"]]
        rows.append(
            {
                "target": "training: merges identical to rustbpe's (every pattern and size)",
                "measured": f"{sum(1 for e in eq if e)}/{len(eq)} identical",
                "ratio": "",
                "met": None if any(e is None for e in eq) else all(eq),
            }
        )
    enc = res.get("encode")
    if enc:
        for p in ENCODE_PATTERNS:
            e = enc.get(p, {})
            t, k, f = e.get("toksmith", {}), e.get("tiktoken", {}), e.get("fastokens", {})
            if not (_encode_ok(t) and _encode_ok(k)):
                rows.append(
                    {
                        "target": f"encode {p}, 1 thread: >= 7x tiktoken",
                        "measured": "error",
                        "ratio": "",
                        "met": None,
                    }
                )
                continue
            qt, qd = speedup(t, k, "text_bytes", "text_s"), speedup(t, k, "docs_bytes", "docs_s")
            rows.append(
                {
                    "target": f"encode {p}, 1 thread: >= 7x tiktoken, identical ids",
                    "measured": f"large string {fmt(t['text_mbps'])} vs {fmt(k['text_mbps'])} MB/s; "
                    f"documents {fmt(t['docs_mbps'])} vs {fmt(k['docs_mbps'])} MB/s; ids "
                    + ("identical" if t.get("ids_equal") else "DIFFER"),
                    "ratio": f"{fx(qt)} / {fx(qd)}",
                    "met": qt >= 7 and qd >= 7 and bool(t.get("ids_equal")),
                }
            )
            if _encode_ok(f) and f.get("ids_equal"):
                ft, fd = (
                    speedup(t, f, "text_bytes", "text_s"),
                    speedup(t, f, "docs_bytes", "docs_s"),
                )
                each = [
                    paired_ratios(f.get("runs", []), t.get("runs", []), size, time)
                    for size, time in (("text_bytes", "text_s"), ("docs_bytes", "docs_s"))
                ]
                rows.append(
                    {
                        "target": f"encode {p}, 1 thread: ahead of fastokens",
                        "measured": f"large string {fmt(f['text_mbps'])} MB/s, documents {fmt(f['docs_mbps'])} MB/s"
                        + (
                            f"; each run: large string {_each(each[0])}, documents {_each(each[1])}"
                            if all(each)
                            else ""
                        ),
                        "ratio": f"{fx(ft)} / {fx(fd)}",
                        "met": ft > 1 and fd > 1,
                    }
                )
    bt = res.get("batch")
    if bt:
        for p in ENCODE_PATTERNS:
            b = bt.get(p, {})
            one, two = b.get("toksmith 1 thread", {}), b.get("toksmith 2 threads", {})
            # 1 and 2 threads are timed back to back in each run: the median of each run's ratio
            # is not thrown off by the machine's speed drifting between runs
            q = speedup(two, one, "docs_bytes", "batch_s")
            each = paired_ratios(one.get("runs", []), two.get("runs", []))
            ctl = res.get("machine", {}).get("control_start")
            rows.append(
                {
                    "target": f"batch {p}: 2 threads >= 1.8x toksmith's single thread",
                    "measured": f"{fmt(two.get('mbps'))} vs {fmt(one.get('mbps'))} MB/s (encode_ordinary_batch, threads=2 vs 1)"
                    + (f"; each run: {_each(each)}" if each else "")
                    + (f"; control workload: {ctl['speedup']:.2f}x" if ctl else ""),
                    "ratio": fx(q),
                    "met": None if q is None else q >= 1.8,
                }
            )
    if enc and any("decode_mbps" in enc.get(p, {}).get("toksmith", {}) for p in ENCODE_PATTERNS):
        for p in ENCODE_PATTERNS:
            t, k = enc.get(p, {}).get("toksmith", {}), enc.get(p, {}).get("tiktoken", {})
            q = speedup(t, k, "text_bytes", "decode_s") if "decode_mbps" in k else None
            rows.append(
                {
                    "target": f"decode {p}: >= 3x tiktoken",
                    "measured": f"{fmt(t.get('decode_mbps'))} vs {fmt(k.get('decode_mbps'))} MB/s",
                    "ratio": fx(q),
                    "met": None if q is None else q >= 3,
                }
            )
    w = res.get("worst")
    if w:
        lin, per = worst_ratios(res)
        if lin:
            (q, where) = max(lin)
            rows.append(
                {
                    "target": "worst cases: 10 MB costs <= 11x 1 MB (largest ratio over inputs and patterns)",
                    "measured": where,
                    "ratio": fx(q, 1),
                    "met": q <= 11,
                }
            )
        if per:
            (q, where) = max(per)
            rows.append(
                {
                    "target": "worst cases: per-byte time <= 10x normal text's (largest over inputs, sizes, patterns)",
                    "measured": where,
                    "ratio": fx(q, 1),
                    "met": q <= 10,
                }
            )
    return rows


def worst_ratios(res: dict):
    """[(10MB/1MB ratio, where)], [(per-byte vs normal ratio, where)] for toksmith."""
    small, large = res["worst_sizes"] if "worst_sizes" in res else (None, None)
    lin, per = [], []
    for p, libs in res.get("worst", {}).items():
        cases = libs.get("toksmith", {}).get("cases", {})
        sizes = sorted({int(k.rsplit("_", 1)[1]) for k in cases})
        if len(sizes) < 2:
            continue
        small, large = sizes[0], sizes[-1]
        for kind in WORST_KINDS:
            a, b = cases.get(f"{kind}_{small}", {}), cases.get(f"{kind}_{large}", {})
            if "s" in a and "s" in b and kind != "normal":
                where = f"{p}, {KIND_NAMES[kind]}: {mb(b['bytes'])} {b['s']:.3f} s / {mb(a['bytes'])} {a['s']:.4f} s"
                ra, rb = a.get("runs_s", []), b.get("runs_s", [])
                if len(ra) == len(rb) > 1:  # both sizes were timed in the same process in each run
                    where += (
                        " (each run: " + ", ".join(f"{y / x:.1f}x" for x, y in zip(ra, rb)) + ")"
                    )
                lin.append((b["s"] / a["s"], where))
            for size in (small, large):
                c, n = cases.get(f"{kind}_{size}", {}), cases.get(f"normal_{size}", {})
                if kind != "normal" and "s" in c and "s" in n:
                    q = (c["s"] / c["bytes"]) / (n["s"] / n["bytes"])
                    per.append(
                        (
                            q,
                            f"{p}, {KIND_NAMES[kind]}, {mb(c['bytes'])}: {c['s'] / c['bytes'] * 1e9:.1f} vs "
                            f"{n['s'] / n['bytes'] * 1e9:.1f} ns/byte",
                        )
                    )
    return lin, per


# ---------------------------------------------------------------------------- render


def _table(head: List[str], rows: List[List[str]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def _ids_cell(s: dict) -> str:
    if s.get("ids_equal") is None:
        return "reference"
    return "yes" if s["ids_equal"] else "**no**"


def _builds(m: dict) -> str:
    start, end = m.get("extension_start"), m.get("extension_end")
    if not start:
        return "—"
    text = ", ".join(start)
    if end is not None and end != start:
        text += f" — **rebuilt during the run** (at the end: {', '.join(end)}); numbers mix builds"
    return text


def _control(m: dict) -> str:
    parts = []
    for key in ("control_start", "control_end"):
        c = m.get(key)
        if c:
            parts.append(f"{c['speedup']:.2f}x")
    if not parts:
        return "—"
    return (
        " / ".join(parts)
        + " speed-up of a perfectly parallel workload (sha256 in Python threads) from 1 to "
        f"{m['control_start']['threads']} threads: what this machine really gave to parallel code during the run"
    )


def render(res: dict, chart: Optional[str], publish: bool) -> str:
    m = res["machine"]
    L: List[str] = []
    L.append("# Benchmarks\n")
    L.append(
        f"Generated by `python -m benches.run{'' if res['mode'] == 'full' else ' --' + res['mode']}` on "
        f"{res['started']} (mode **{res['mode']}**, median of {res['runs']} run(s) per number{_runs_note(res)}, "
        f"{res['duration_s'] / 60:.1f} min, {res.get('worker_processes', '?')} worker processes). "
        "Every ratio below comes from this one run on this one machine.\n"
    )
    if res["mode"] != "full":
        L.append(
            "> **Not a full run**: inputs are smaller than the issue's (see *Inputs*), so the targets table "
            "only indicates trends.\n"
        )
    L.append("## How to run\n")
    L.append(HOW_TO_RUN + "\n")
    # targets
    L.append("## Targets (issue 4)\n")
    tg = res.get("targets") or []
    if tg:
        L.append(
            _table(
                ["target", "measured", "ratio", "status"],
                [[t["target"], t["measured"], t["ratio"], status(t["met"])] for t in tg],
            )
        )
        met = sum(1 for t in tg if t["met"])
        L.append(f"\n{met} of {len(tg)} targets met in this run.\n")
    else:
        L.append("No target measured in this run.\n")
    if chart:
        L.append(f"![benchmarks]({chart})\n")
    # machine
    L.append("## Machine\n")
    v = m.get("versions", {})
    L.append(
        _table(
            ["", ""],
            [
                [
                    "CPU",
                    f"{m.get('cpu_model', '?')}, {m['cores']} usable cores (os.cpu_count()={m.get('cpu_count')})",
                ],
                ["memory", f"{m.get('mem_gb', '?')} GB"],
                ["OS / Python", f"{m['platform']} / Python {m['python']}"],
                [
                    "load average (start / end)",
                    f"{' '.join(f'{x:.2f}' for x in m['loadavg_start'])} / "
                    f"{' '.join(f'{x:.2f}' for x in m.get('loadavg_end', []))}",
                ],
                ["parallel control (start / end)", _control(m)],
                ["toksmith", f"{v.get('toksmith')} (git {m.get('git')})"],
                ["native extension", _builds(m)],
                [
                    "peers",
                    ", ".join(
                        f"{k} {v.get(k)}"
                        for k in ("tiktoken", "tokenizers", "rustbpe", "fastokens")
                    ),
                ],
                [
                    "tools",
                    ", ".join(f"{k} {v.get(k)}" for k in ("numpy", "psutil", "matplotlib", "regex"))
                    + f"; {m.get('rustc', 'rustc ?')}",
                ],
            ],
        )
    )
    L.append("")
    # inputs
    sz = res.get("data", {}).get("sizes", {})
    L.append("## Inputs\n")
    L.append(
        f"- corpora: {', '.join(res.get('data', {}).get('corpora', []))}, cut into documents of 1-10 KB at line "
        "ends and shuffled (seed 1234)."
    )
    if "train" in sz:
        L.append(
            f"- training corpus: the first {mb(sz['train'])} of documents ({sz.get('train_docs')} documents), "
            "streamed from disk by a Python generator to both trainers (`train_from_iterator`)."
        )
    if "text" in sz:
        L.append(
            f"- encode: one large string of {mb(sz['text'])}; {sz.get('docs_count')} documents "
            f"({mb(sz['docs'])}) encoded one by one and as one batch; {mb(sz['warm'])} of other documents "
            "to warm up first. The three sets are disjoint."
        )
    for name, s in (res.get("vocabs") or {}).items():
        L.append(
            f"- vocab `{name}`: {s['source']}; pattern `{s['pattern']}`; HF tokenizer.json: {s.get('hf_source')}."
        )
    L.append("")
    if "train" in res:
        L.append(render_train(res["train"]))
    if "encode" in res:
        L.append(render_encode(res["encode"]))
    if "batch" in res:
        L.append(render_batch(res["batch"], res.get("encode", {})))
    if "encode" in res and "decode" in res["sections"]:
        L.append(render_decode(res["encode"]))
    if "load" in res:
        L.append(render_load(res["load"]))
    if "worst" in res:
        L.append(render_worst(res["worst"], res))
    if "memory" in res:
        L.append(render_memory(res["memory"]))
    # checks
    L.append("## Equality checks\n")
    if res["checks"]:
        L.append(
            _table(
                ["check", "result", "detail"],
                [
                    [c["name"], "passed" if c["ok"] else "**FAILED**", c["detail"]]
                    for c in res["checks"]
                ],
            )
        )
    else:
        L.append("None in this run.")
    L.append("")
    families = REPO / "benches" / "families.md"  # python -m benches.families (issue 30)
    if families.exists():
        L.append(families.read_text(encoding="utf-8").strip() + "\n")
    scripts = REPO / "benches" / "scripts_results.md"  # benches.scripts --publish (issue 37)
    if scripts.exists():
        L.append(scripts.read_text(encoding="utf-8").strip() + "\n")
    models = REPO / "benches" / "pipeline_models.md"  # python -m benches.pipeline_models (31)
    if models.exists():
        L.append("## SentencePiece, Unigram and WordPiece models (issue 31)\n")
        L.append(
            "`python -m benches.pipeline_models`: one thread, CPU-time medians, ids compared.\n"
        )
        L.append(models.read_text(encoding="utf-8").strip() + "\n")
    L.append(METHOD)
    pipeline = REPO / "benches" / "pipeline_results.md"  # benches/pipeline.py's rows, by hand
    if pipeline.exists():
        L.append(pipeline.read_text().strip() + "\n")
    notes = REPO / "benches" / "perf_notes.md"
    if notes.exists():  # the notes start with their own heading
        L.append(notes.read_text().strip() + "\n")
    return "\n".join(L).rstrip() + "\n"


METHOD = """## Method

- Every measurement runs in a fresh worker process (`python -m benches.worker`), one library per
  process, so thread pools, caches and allocators never carry over; the parent takes the peak RSS
  of each process with `os.wait4`. Numbers are medians over the runs; timings cover the measured
  call only (not start-up, imports or loading the vocab).
- One thread: workers run with `RAYON_NUM_THREADS=1`, `RAYON_RS_NUM_CPUS=1`,
  `TOKENIZERS_PARALLELISM=false`, and pinned to one CPU (`os.sched_setaffinity`, before the
  library is imported), so a library that sizes its own thread pool from the CPU count (fastokens'
  BPE pool) runs on one core too; the *cores* columns (CPU time / wall time) show what each call
  really used.
- Every library returns Python lists of ids (HF tokenizers and fastokens: `Encoding.ids` is read
  inside the timed call). toksmith: `encode_ordinary`, `encode_ordinary_batch`, `decode`,
  `stream_decoder()`; tiktoken: `encode_ordinary`, `encode_ordinary_batch`, `decode`; HF:
  `encode`, `encode_batch`, `decode`, `decoders.DecodeStream`; fastokens: `encode_ordinary`,
  `encode_batch`, `decode`. tiktoken has no streaming decoder: its row uses
  `decode_single_token_bytes` with Python's incremental UTF-8 decoder.
- ids are compared with tiktoken's (a hash of every id sequence); a peer whose ids differ is
  shown as "ids differ" instead of a speed. Training: toksmith's mergeable ranks are compared
  with rustbpe's `get_mergeable_ranks()`.
- Worst cases: each input and size is measured in a process of its own (after the warm-up
  encode), so a 1 MB case never reuses heap memory that an earlier case's result left behind.
  Each input is first encoded in growing prefixes (4 KB, 16 KB, ...); when the fit predicts more
  than the cap (60 s in a full run) the measurement is skipped and the prediction shown instead.
"""


def render_train(tr: dict) -> str:
    L = [
        "## Training\n",
        f"{mb(tr['corpus_bytes'])} corpus, `train_from_iterator` on all cores for both; peak RSS is the whole "
        "process's (Python and the streamed corpus included; *baseline* = RSS before training).\n",
    ]
    rows = []
    for row in tr["rows"]:
        for lib in TRAIN_LIBS:
            s = row["libs"][lib]
            if s.get("error"):
                rows.append(
                    [
                        row["pattern"],
                        str(row["vocab"]),
                        lib,
                        f"error: {s['error']}",
                        "",
                        "",
                        "",
                        "",
                        "",
                    ]
                )
                continue
            rb = row["libs"]["rustbpe"]
            rows.append(
                [
                    row["pattern"],
                    str(row["vocab"]),
                    lib,
                    fmt(s["wall_s"], 2),
                    fmt(s["cpu_s"], 2),
                    fmt(ratio(s["cpu_s"], s["wall_s"]), 2),
                    f"{fmt(s['rss_mb'], 0)} ({fmt(s['base_rss_mb'], 0)})",
                    fx(ratio(rb["wall_s"], s["wall_s"])) if lib == "toksmith" else "",
                    (
                        "yes"
                        if row["merges_equal"]
                        else "**no**"
                        if row["merges_equal"] is False
                        else "—"
                    )
                    if lib == "toksmith"
                    else "",
                ]
            )
    L.append(
        _table(
            [
                "pattern",
                "vocab",
                "library",
                "wall s",
                "CPU s",
                "cores",
                "peak RSS MB (baseline)",
                "speed-up vs rustbpe",
                "merges == rustbpe",
            ],
            rows,
        )
    )
    ph = tr.get("phases") or {}
    if ph:
        L.append(
            f"\ntoksmith's two phases at vocab {tr.get('vocab_phases')} (internal API, one run):\n"
        )
        prow = []
        for p, r in ph.items():
            if r.get("error"):
                prow.append([p, f"error: {r['error']}", "", "", ""])
                continue
            prow.append(
                [
                    p,
                    f"{r['count_wall_s']:.2f} s ({r['count_cpu_s'] / max(r['count_wall_s'], 1e-9):.2f} cores)",
                    f"{r['merge_wall_s']:.2f} s ({r['merge_cpu_s'] / max(r['merge_wall_s'], 1e-9):.2f} cores)",
                    f"{r.get('unique_chunks'):,}" if r.get("unique_chunks") else "—",
                    f"{r.get('pieces'):,}" if r.get("pieces") else "—",
                ]
            )
        L.append(
            _table(
                [
                    "pattern",
                    "counting (pre-tokenize + count)",
                    "merging",
                    "unique chunks",
                    "pieces",
                ],
                prow,
            )
        )
    return "\n".join(L) + "\n"


def render_encode(enc: dict) -> str:
    L = [
        "## Encoding, one thread\n",
        "MB/s of UTF-8 input (medians of the runs). *vs tiktoken*: speed ratio on the large string / on the "
        "documents, the median of each run's ratio (the libraries of one pattern are timed one after the other "
        "in every run).\n",
    ]
    rows = []
    for p in ENCODE_PATTERNS:
        k = enc.get(p, {}).get("tiktoken", {})
        for lib in ENCODE_LIBS:
            s = enc.get(p, {}).get(lib, {})
            if not s or s.get("error"):
                rows.append(
                    [
                        p,
                        LIB_NAMES[lib],
                        f"error: {(s or {}).get('error', 'not run')}"[:160],
                        "",
                        "",
                        "",
                        "",
                    ]
                )
                continue
            if s.get("ids_equal") is False:
                rows.append([p, LIB_NAMES[lib], "ids differ", "ids differ", "", "", "**no**"])
                continue
            rows.append(
                [
                    p,
                    LIB_NAMES[lib],
                    fmt(s["text_mbps"]),
                    fmt(s["docs_mbps"]),
                    f"{fx(speedup(s, k, 'text_bytes', 'text_s'))} / {fx(speedup(s, k, 'docs_bytes', 'docs_s'))}"
                    if lib != "tiktoken"
                    else "1.00x",
                    f"{s['text_cores']:.2f} / {s['docs_cores']:.2f}",
                    _ids_cell(s),
                ]
            )
    L.append(
        _table(
            [
                "pattern",
                "library",
                "large string MB/s",
                "documents MB/s",
                "vs tiktoken",
                "cores",
                "ids == tiktoken",
            ],
            rows,
        )
    )
    return "\n".join(L) + "\n"


def paired_ratios(
    one: list, two: list, size: str = "docs_bytes", time: str = "batch_s"
) -> List[float]:
    """Each run's speed ratio of `two` over `one` (``size / time`` of each), when every run has both
    timings (the batch section: 2 threads over 1; the encode section: toksmith over a peer)."""
    if len(one) != len(two) or len(one) < 2 or not all(time in x for x in one + two):
        return []
    return [(y[size] / y[time]) / (x[size] / x[time]) for x, y in zip(one, two)]


def speedup(t: dict, peer: dict, size: str, time: str) -> Optional[float]:
    """toksmith's speed over a peer's: the median of each run's ratio (the two are timed one after
    the other in every run, so a slow stretch of the machine that spans one run does not decide
    it), else the ratio of the medians."""
    each = paired_ratios(peer.get("runs", []), t.get("runs", []), size, time)
    if each:
        return median(each)
    rates = [[x[size] / x[time] for x in s.get("runs", []) if time in x] for s in (t, peer)]
    return ratio(median(rates[0]), median(rates[1])) if all(rates) else None


def _each(xs: List[float]) -> str:
    return ", ".join(f"{x:.2f}x" for x in xs)


def _batch_runs(bt: dict) -> int:
    """How many runs the batch numbers are medians of (the most any row had)."""
    return max((len(v.get("runs", [])) for b in bt.values() for v in b.values()), default=0)


def _runs_note(res: dict) -> str:
    """How many runs the encode and batch sections took, where it differs from the others."""
    enc = max(
        (len(v.get("runs", [])) for e in (res.get("encode") or {}).values() for v in e.values()),
        default=0,
    )
    bat = _batch_runs(res.get("batch") or {})
    parts = [(n, name) for n, name in ((enc, "encode"), (bat, "batch")) if n and n != res["runs"]]
    if not parts:
        return ""
    if len(parts) == 2 and parts[0][0] == parts[1][0]:
        return f" ({parts[0][0]} in the encode and batch sections)"
    return " (" + ", ".join(f"{n} in the {name} section" for n, name in parts) + ")"


def render_batch(bt: dict, enc: dict) -> str:
    L = [
        "## Batch encoding\n",
        "The documents as one batch (`encode_ordinary_batch` / `encode_batch`). *vs 1 thread*: against "
        "toksmith's batch on 1 thread (the median of each run's ratio); *vs one by one*: against the same library encoding the documents one by "
        "one on one thread (encode section; those workers encode the 10 MB large string first, so their caches are warmer "
        "than the batch workers', which only saw the warm-up documents). Medians of "
        + str(_batch_runs(bt))
        + " runs.\n",
    ]
    rows = []
    for p in ENCODE_PATTERNS:
        b = bt.get(p, {})
        one = b.get("toksmith 1 thread", {})
        tk = next((v.get("mbps") for v in b.values() if v["lib"] == "tiktoken"), None)
        for label, v in b.items():
            if v.get("error"):
                rows.append([p, label, f"error: {v['error']}"[:160], "", "", "", "", ""])
                continue
            if v.get("ids_equal") is False:
                rows.append([p, label, "ids differ", "", "", "", "", "**no**"])
                continue
            single = enc.get(p, {}).get(v["lib"], {}).get("docs_mbps")
            rows.append(
                [
                    p,
                    label,
                    fmt(v["mbps"]),
                    f"{v['cores']:.2f}",
                    fx(speedup(v, one, "docs_bytes", "batch_s")) if v["lib"] == "toksmith" else "",
                    fx(ratio(v["mbps"], tk)),
                    fx(ratio(v["mbps"], single)),
                    _ids_cell(v),
                ]
            )
    L.append(
        _table(
            [
                "pattern",
                "library / threads",
                "MB/s",
                "cores",
                "vs toksmith 1 thread",
                "vs tiktoken",
                "vs one by one",
                "ids == tiktoken",
            ],
            rows,
        )
    )
    return "\n".join(L) + "\n"


def render_decode(enc: dict) -> str:
    L = [
        "## Decoding\n",
        "`decode(ids)` of the large string's ids, MB/s of UTF-8 output: the median of 3 in-process repetitions "
        "after a first call, which is shown on its own (*first call*: it includes one-time costs such as growing "
        "buffers and the heap); streaming: ids pushed one at a time, tokens/s.\n",
    ]
    rows = []
    for p in ENCODE_PATTERNS:
        k = enc.get(p, {}).get("tiktoken", {})
        for lib in ENCODE_LIBS:
            s = enc.get(p, {}).get(lib, {})
            if not s or s.get("error"):
                rows.append([p, LIB_NAMES[lib], "error", "", "", "", ""])
                continue
            if s.get("ids_equal") is False:
                rows.append([p, LIB_NAMES[lib], "ids differ", "", "", "", ""])
                continue
            rt = "yes" if s.get("decode_roundtrip") else "**no**"
            stream = (
                fmt(s.get("stream_tps"), 0)
                if "stream_tps" in s
                else ("no streaming decoder" if "stream_error" not in s else "error")
            )
            rows.append(
                [
                    p,
                    LIB_NAMES[lib],
                    fmt(s.get("decode_mbps")),
                    fx(speedup(s, k, "text_bytes", "decode_s")) if "decode_mbps" in k else "",
                    fmt(s.get("decode_first_mbps")) if "decode_first_mbps" in s else "",
                    stream,
                    rt,
                ]
            )
    L.append(
        _table(
            [
                "pattern",
                "library",
                "decode MB/s",
                "vs tiktoken",
                "first call MB/s",
                "streaming tokens/s",
                "round trip",
            ],
            rows,
        )
    )
    return "\n".join(L) + "\n"


LOAD_FILES = {
    "tiktoken": "`.tiktoken` rank file",
    "tokenizer.json": "HF `tokenizer.json`",
    "toksmith": "toksmith JSON",
}
LOAD_CALLS = {
    ("toksmith", "tiktoken"): "`toksmith.from_tiktoken`",
    ("toksmith", "tokenizer.json"): "`toksmith.from_huggingface`",
    ("toksmith", "toksmith"): "`toksmith.load`",
    ("tiktoken", "tiktoken"): "`load_tiktoken_bpe` + `Encoding`",
    ("fastokens", "tiktoken"): "`Tokenizer.from_tiktoken`",
    ("fastokens", "tokenizer.json"): "`Tokenizer.from_file`",
    ("hf", "tokenizer.json"): "`Tokenizer.from_file`",
}


def render_load(ld: dict) -> str:
    L = [
        "## Loading a tokenizer\n",
        "Time to read one tokenizer file into a ready encoder, in a fresh process per measurement (the library "
        "imported first, untimed; tiktoken reads the local file, no download cache). Every library reads the same "
        "file; each loaded tokenizer encodes a sample of the large string, and its ids are compared with "
        "tiktoken's. toksmith checks every entry of the file while reading it (ids, spelling, merge order, "
        "and for merge lists that BPE by rank gives the file's merges).\n",
    ]
    rows = []
    for p in ENCODE_PATTERNS:
        ref = ld.get(p, {}).get("tiktoken", {}).get("tiktoken", {}).get("digest")
        for fmt_name, libs in LOAD_FORMATS.items():
            cells = ld.get(p, {}).get(fmt_name, {})
            if not cells:
                continue
            ts = cells.get("toksmith", {}).get("s")
            for lib in libs:
                s = cells.get(lib)
                if not s:
                    continue
                if s.get("error"):
                    rows.append(
                        [
                            p,
                            LOAD_FILES[fmt_name],
                            LIB_NAMES[lib],
                            LOAD_CALLS[(lib, fmt_name)],
                            "error",
                            "",
                            "",
                        ]
                    )
                    continue
                same = (
                    "yes"
                    if ref and s.get("digest") == ref and s.get("same_ids")
                    else ("reference" if (lib, fmt_name) == ("tiktoken", "tiktoken") else "**no**")
                )
                rows.append(
                    [
                        p,
                        LOAD_FILES[fmt_name],
                        LIB_NAMES[lib],
                        LOAD_CALLS[(lib, fmt_name)],
                        fmt(s["s"] * 1e3, 0),
                        "" if lib == "toksmith" or not ts else fx(s["s"] / ts),
                        same,
                    ]
                )
    L.append(
        _table(
            [
                "pattern",
                "file",
                "library",
                "call",
                "ms",
                "peer time / toksmith time",
                "ids = tiktoken's",
            ],
            rows,
        )
    )
    return "\n".join(L) + "\n"


def render_worst(w: dict, res: dict) -> str:
    L = [
        "## Worst cases\n",
        "One thread. *x normal*: time per byte against normal text of the same size, same library; "
        "*large/small*: time of the large input over the small one (10x the bytes).\n",
    ]
    for p in ENCODE_PATTERNS:
        libs = w.get(p, {})
        head = ["input", "size"]
        for lib in ("toksmith", "tiktoken"):
            head += [f"{lib} s", "ns/byte", "x normal", "large/small"]
        rows = []
        sizes = set()
        for lib in ("toksmith", "tiktoken"):
            sizes |= {int(k.rsplit("_", 1)[1]) for k in libs.get(lib, {}).get("cases", {})}
        sizes = sorted(sizes)
        for kind in WORST_KINDS:
            for size in sizes:
                row = [KIND_NAMES[kind], mb(size)]
                for lib in ("toksmith", "tiktoken"):
                    info = libs.get(lib, {})
                    if info.get("error"):
                        row += [f"error: {info['error']}"[:80], "", "", ""]
                        continue
                    cases = info.get("cases", {})
                    c, n = cases.get(f"{kind}_{size}", {}), cases.get(f"normal_{size}", {})
                    if "error" in c:
                        row += [f"failed: {c['error']}"[:90], "", "", ""]
                        continue
                    if c.get("skipped"):
                        row += [f"skipped (> cap; predicted {c['predicted_s']:.0f} s)", "", "", ""]
                        continue
                    if "s" not in c:
                        row += ["—", "", "", ""]
                        continue
                    nsb = c["s"] / c["bytes"] * 1e9
                    xn = ratio(c["s"] / c["bytes"], n["s"] / n["bytes"]) if "s" in n else None
                    lin = ""
                    if size == sizes[-1] and len(sizes) > 1:
                        small = cases.get(f"{kind}_{sizes[0]}", {})
                        lin = fx(ratio(c["s"], small.get("s")), 1) if "s" in small else ""
                    row += [f"{c['s']:.4f}", f"{nsb:.1f}", fx(xn, 1), lin]
                rows.append(row)
        L.append(f"### {p}\n")
        L.append(_table(head, rows))
        L.append("")
    return "\n".join(L) + "\n"


def render_memory(mem: dict) -> str:
    L = ["## Memory: encoding a file from disk\n"]
    if mem.get("error"):
        L.append(mem["error"] + "\n")
        return "\n".join(L)
    L.append(
        f"`{mem['cmd']}` with the {mem['tokenizer']} tokenizer, peak RSS of the process (`os.wait4`).\n"
    )
    rows = []
    for key in ("small", "big"):
        r = mem.get(key)
        if not r:
            continue
        status_ = (
            "ok"
            if r["rc"] == 0
            else ("timed out" if r.get("timed_out") else f"exit status {r['rc']}")
        )
        rows.append(
            [
                mb(r["bytes"]),
                f"{r['wall_s']:.1f}",
                fmt(r["bytes"] / r["wall_s"] / 1e6),
                fmt(r["rss_mb"], 0),
                status_,
            ]
        )
    L.append(
        _table(
            ["file", "wall s", "MB/s (incl. start-up and writing ids)", "peak RSS MB", "status"],
            rows,
        )
    )
    if "python_import_rss_mb" in mem:
        L.append(
            f"\nFor scale: `python -c 'import toksmith'` peaks at {mem['python_import_rss_mb']:.0f} MB."
        )
    return "\n".join(L) + "\n"
