"""Per-script encoding benchmark (issue 37): ``python -m benches.scripts [--quick | --smoke]``.

The multilingual corpus (``../shared/data/corpora/multilingual_ui.txt.xz``: translated program
messages in 183 languages) is cut into lines, each line is given the script family that most of
its letters belong to, and the lines of each family are grouped into documents of 1-8 KB:

    latin (with diacritics), cyrillic, greek, cjk (Han without kana), kana (Japanese: any kana),
    korean, arabic_hebrew, indic (Devanagari .. Sinhala), thai, emoji, mixed (the corpus as
    it comes, every language shuffled together), and mixed_docs (issue 37's batch of mixed
    documents: English, C++, JavaScript and multilingual documents, a quarter each, shuffled).

No corpus here has emoji, so the emoji slice is English chat lines (``chat.jsonl.xz``) with
emoji (single code points, skin tones, ZWJ sequences, flags) put between words with a fixed
seed; it is labelled as such in the output. Lines whose letters are all ASCII go nowhere but the
mixed slice.

Every library is measured in this one process, interleaved: each round times every library on
every (vocabulary, slice) in a rotating order, so a slow stretch of the shared machine hits all
of them; one thread is CPU time of ``encode`` on each document (the process pinned to one CPU
before anything is imported), batch is the wall time of ``encode_batch`` on all documents (all
cores, after the one-thread rounds, in a second process that is not pinned; there toksmith's
batch on mixed_docs is also timed on 2 threads against 1, beside the parallel control of
``benches.run``, which tells what 2 threads could give at that moment). Rates are medians
over rounds, ratios the median of each round's ratio. Every library's ids are compared with
tiktoken's on every slice; a library that differs is reported and not ranked.

Vocabularies: the real cl100k_base, and the real o200k_base when a copy whose SHA-256 is
OpenAI's is found (``../shared/data/vocabs``, tiktoken's cache, or the ``o200k_base.tiktoken.gz``
that the bpe-openai wheel ships); else a vocabulary trained by ``benches.run`` (a 65k vocab with
the o200k pattern, from its cache) when one is there, else the o200k pattern over the cl100k
ranks (labelled); and a 65,536-id nanochat tokenizer trained by toksmith's nanochat preset on
English and code that no slice holds (``nanochat_spec``). Smoke mode uses tests/data only (a
sample of the corpus in ``tests/data/bench/multilingual_sample.txt``, the cl100k ranks from
tests/data/vocabs, a small nanochat tokenizer trained on tests/data).

Output: ``<out>/scripts.json`` and ``<out>/scripts.md``.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import hashlib
import json
import lzma
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from .config import DEFAULT_OUT, REPO, shared_data_dir

FAMILIES: List[Tuple[str, List[Tuple[int, int]]]] = [
    ("latin", [(0x41, 0x5A), (0x61, 0x7A), (0xC0, 0x24F), (0x1E00, 0x1EFF)]),
    ("cyrillic", [(0x400, 0x52F), (0x1C80, 0x1C8F), (0xA640, 0xA69F)]),
    ("greek", [(0x370, 0x3FF), (0x1F00, 0x1FFF)]),
    ("kana", [(0x3040, 0x30FF), (0x31F0, 0x31FF), (0xFF66, 0xFF9F)]),
    ("cjk", [(0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF)]),
    ("korean", [(0x1100, 0x11FF), (0x3130, 0x318F), (0xAC00, 0xD7AF)]),
    (
        "arabic_hebrew",
        [(0x590, 0x5FF), (0x600, 0x6FF), (0x750, 0x77F), (0x8A0, 0x8FF), (0xFB1D, 0xFDFF)],
    ),
    ("indic", [(0x900, 0xDFF)]),
    ("thai", [(0xE00, 0xE7F)]),
    ("emoji", [(0x1F300, 0x1FAFF), (0x2600, 0x27BF), (0x1F1E6, 0x1F1FF)]),
]
SLICES = [name for name, _ in FAMILIES] + ["mixed", "mixed_docs"]
#: how many times the batch timing encodes ``mixed_docs`` again after the first batch
WARM_REPEATS = 5
#: the corpora of the ``mixed_docs`` slice besides the multilingual one (issue 37's batch of
#: mixed documents: English, C/C++, JavaScript standing in for TypeScript, multilingual)
MIXED_DOCS = ("english", "cpp", "javascript")
#: the nanochat vocabulary's size per mode (ids, with its nine special tokens) and its training
#: corpora, read from NANOCHAT_SKIP characters on: ``mixed_docs`` takes its documents from at
#: most the first 4 * 1 MB characters of each corpus (full mode)
NANOCHAT_VOCAB = {"full": 65536, "quick": 65536, "smoke": 1024}
NANOCHAT_CORPORA = ("english", "python", "cpp", "javascript", "shell")
NANOCHAT_SKIP = 4_000_000
#: toksmith, the nine exact peers of issue 37 (benches/libs.py PEERS), Hugging Face tokenizers
LIBS = (
    "toksmith",
    "tiktoken",
    "fastokens",
    "toktok",
    "quicktok",
    "splintr",
    "rs-bpe",
    "bpe-openai",
    "wordchipper",
    "riptoken",
    "hf",
)
EMOJI = [
    "\U0001f600", "\U0001f602", "\U0001f44d", "\U0001f44d\U0001f3fd", "\u2764\ufe0f",
    "\U0001f389", "\U0001f914", "\U0001f468\u200d\U0001f469\u200d\U0001f467", "\U0001f1eb\U0001f1f7",
    "\U0001f525", "\u2728", "\U0001f64f\U0001f3fb", "\U0001f680", "\U0001f923", "\u2615",
    "\U0001f9d1\u200d\U0001f4bb", "\U0001f60d", "\U0001f44b\U0001f3ff", "\U0001f3f3\ufe0f\u200d\U0001f308",
]  # fmt: skip
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
SMOKE_SAMPLE = REPO / "tests" / "data" / "bench" / "multilingual_sample.txt"

#: (slice bytes per family, mixed bytes, rounds, batch rounds) per mode
SIZES = {"full": (1_000_000, 4_000_000, 7, 5), "quick": (200_000, 600_000, 3, 3), "smoke": (6_000, 20_000, 1, 1)}  # fmt: skip


def _family_table() -> Dict[int, str]:
    """``str.translate`` table: a code point of a family -> that family's index as a letter."""
    table: Dict[int, str] = {}
    for i, (_, ranges) in enumerate(FAMILIES):
        for a, b in ranges:
            for c in range(a, b + 1):
                table[c] = chr(ord("a") + i)
    return table


def classify(line: str, table: Dict[int, str]) -> Optional[str]:
    """The family of most of the line's letters (kana anywhere: Japanese; emoji anywhere:
    emoji); None for lines without letters of any family or with ASCII letters only."""
    marks = line.translate(table)
    counts: Dict[str, int] = {}
    for ch in marks:
        if "a" <= ch <= "j":
            counts[ch] = counts.get(ch, 0) + 1
    if not counts:
        return None
    for fam in ("emoji", "kana"):
        code = chr(ord("a") + [n for n, _ in FAMILIES].index(fam))
        if code in counts:
            return fam
    fam = FAMILIES[ord(max(counts, key=counts.__getitem__)) - ord("a")][0]
    if fam == "latin" and line.isascii():
        return None
    return fam


def to_docs(lines: List[str], rng: random.Random, budget: int) -> List[str]:
    """Lines grouped into documents of 1-8 KB (smaller for small budgets: at least 4 per
    slice), up to ``budget`` UTF-8 bytes."""
    lo, hi = min(1024, budget // 16), min(8192, budget // 8)
    docs: List[str] = []
    cur: List[str] = []
    size = total = 0
    target = rng.randint(lo, hi)
    for line in lines:
        n = len(line.encode("utf-8")) + 1
        cur.append(line)
        size += n
        total += n
        if size >= target:
            docs.append("\n".join(cur) + "\n")
            cur, size, target = [], 0, rng.randint(lo, hi)
        if total >= budget:
            break
    if cur:
        docs.append("\n".join(cur) + "\n")
    return docs


def emoji_lines(chat_lines: List[str], rng: random.Random) -> List[str]:
    out = []
    for line in chat_lines:
        words = line.split(" ")
        for _ in range(1 + len(words) // 4):
            words.insert(rng.randrange(len(words) + 1), rng.choice(EMOJI))
        out.append(" ".join(words))
    return out


def build_slices(mode: str, cache: Path) -> Dict[str, List[str]]:
    """Documents per slice (cached as JSON)."""
    per_family, mixed_bytes, _, _ = SIZES[mode]
    path = cache / f"scripts_{mode}.json"
    if path.exists():
        cached = json.loads(path.read_text(encoding="utf-8"))
        if sorted(cached) == sorted(SLICES):  # else made by an older version: made again
            return cached
    if mode == "smoke":
        text = SMOKE_SAMPLE.read_text(encoding="utf-8")
        chat = [ln for ln in text.splitlines() if ln.isascii() and " " in ln][:200]
    else:
        with lzma.open(shared_data_dir() / "corpora" / "multilingual_ui.txt.xz", "rt") as f:
            text = f.read()
        chat = []
        with lzma.open(shared_data_dir() / "corpora" / "chat.jsonl.xz", "rt") as f:
            for row in f:
                for m in json.loads(row)["messages"]:
                    chat.extend(x for x in m["content"].splitlines() if x.strip())
                if len(chat) > 20 * per_family // 40:
                    break
    rng = random.Random(37)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    table = _family_table()
    by_family: Dict[str, List[str]] = {name: [] for name, _ in FAMILIES}
    for ln in lines:
        fam = classify(ln, table)
        if fam:
            by_family[fam].append(ln)
    by_family["emoji"].extend(emoji_lines(chat, rng))
    slices: Dict[str, List[str]] = {}
    for name in by_family:
        fam_lines = by_family[name]
        rng.shuffle(fam_lines)
        slices[name] = to_docs(fam_lines, rng, per_family)
    mixed = list(lines)
    rng.shuffle(mixed)
    slices["mixed"] = to_docs(mixed, rng, mixed_bytes)
    slices["mixed_docs"] = mixed_documents(mode, rng, mixed, mixed_bytes)
    cache.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(slices, ensure_ascii=False), encoding="utf-8")
    return slices


def mixed_documents(mode: str, rng: random.Random, ml_lines: List[str], budget: int) -> List[str]:
    """Issue 37's batch of mixed documents: English, C++ and JavaScript documents of 1-8 KB cut
    from their corpora (tests/data slices in smoke mode) and multilingual ones, a quarter of
    ``budget`` each, shuffled together."""
    from .data import read_text

    quarter = budget // 4
    docs = to_docs(ml_lines[len(ml_lines) // 2 :], rng, quarter)
    for name in MIXED_DOCS:
        if mode == "smoke":
            text = read_text(REPO / "tests" / "data" / "corpora" / f"{name}_slice.txt")
        else:
            with lzma.open(shared_data_dir() / "corpora" / f"{name}.txt.xz", "rt") as f:
                text = f.read(4 * quarter)
        at = total = 0
        while at < len(text) and total < quarter:
            n = rng.randint(min(1024, quarter // 16), min(8192, max(quarter // 8, 1)))
            doc = text[at : at + n]
            docs.append(doc)
            at += n
            total += len(doc.encode("utf-8"))
    rng.shuffle(docs)
    return docs


# ---------------------------------------------------------------------------- vocabularies


def find_o200k_base(cache: Path) -> Tuple[Optional[Path], str]:
    """A copy of OpenAI's o200k_base.tiktoken (checked by SHA-256), and where it came from."""
    candidates: List[Tuple[str, object]] = [
        ("../shared/data/vocabs", shared_data_dir() / "vocabs" / "o200k_base.tiktoken")
    ]
    tk_cache = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    tk_cache = tk_cache or os.path.join(tempfile.gettempdir(), "data-gym-cache")
    candidates.append(
        ("tiktoken's cache", Path(tk_cache) / hashlib.sha1(O200K_URL.encode()).hexdigest())
    )
    try:
        import importlib.util

        spec = importlib.util.find_spec("bpe_openai")
        if spec and spec.submodule_search_locations:
            for loc in spec.submodule_search_locations:
                candidates.append(
                    ("the bpe-openai wheel", Path(loc) / "data" / "o200k_base.tiktoken.gz")
                )
    except (ImportError, ValueError):
        pass
    for where, p in candidates:
        p = Path(p)  # type: ignore[arg-type]
        if not p.is_file():
            continue
        data = gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
        if hashlib.sha256(data).hexdigest() != O200K_SHA256:
            continue
        if p.suffix == ".gz":
            out = cache / "o200k_base.tiktoken"
            cache.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            return out, f"real o200k_base (from {where}, SHA-256 checked)"
        return p, f"real o200k_base (from {where}, SHA-256 checked)"
    return None, "o200k_base not found (not in ../shared, tiktoken's cache or bpe-openai)"


def vocab_specs(mode: str, out_dir: Path) -> Dict[str, dict]:
    from toksmith.pretokenize import PATTERNS

    from .vocabs import CL100K_SPECIALS

    cache = out_dir / "cache" / "scripts"
    if mode == "smoke":
        cl100k = REPO / "tests" / "data" / "vocabs" / "cl100k_base.tiktoken"
    else:
        cl100k = shared_data_dir() / "vocabs" / "cl100k_base.tiktoken"
    specs = {
        "cl100k_base": {
            "name": "cl100k_base",
            "pattern": "cl100k",
            "regex": PATTERNS["cl100k"],
            "ranks": str(cl100k),
            "specials": CL100K_SPECIALS,
            "source": "real cl100k_base",
        }
    }
    o200k, source = (None, "smoke: tests/data only") if mode == "smoke" else find_o200k_base(cache)
    if o200k is None:
        trained = sorted((out_dir / "cache").glob("*/vocabs/o200k_trained_65536.tiktoken"))
        if trained:
            o200k, source = trained[0], f"{source}; a 65536 vocab trained by benches.run instead"
        else:
            o200k, source = cl100k, f"{source}; the o200k pattern over the cl100k ranks instead"
    specs["o200k_base"] = {
        "name": "o200k_base",
        "pattern": "o200k",
        "regex": PATTERNS["o200k"],
        "ranks": str(o200k),
        "specials": {},
        "source": source,
    }
    specs["nanochat"] = nanochat_spec(mode, cache)
    return specs


def nanochat_spec(mode: str, cache: Path) -> dict:
    """Issue 37's third vocabulary: a tokenizer of toksmith's nanochat preset (nanochat's split
    pattern; 65,536 ids with its nine special tokens, as nanochat's tok_train) trained on English
    and code that no slice holds (each corpus after the characters ``mixed_docs`` cuts its
    documents from). Trained once (a few seconds) and kept in the cache; smoke mode trains a
    small one on tests/data."""
    from toksmith.presets import nanochat
    from toksmith.pretokenize import PATTERNS

    from .data import read_text
    from .vocabs import write_tiktoken

    size = NANOCHAT_VOCAB[mode]
    path = cache / f"nanochat_{size}.tiktoken"
    if mode == "smoke":
        where = "tests/data's English, C++ and JavaScript slices"
    else:
        names = ", ".join(NANOCHAT_CORPORA)
        where = f"{names} from ../shared/data (each after its first {NANOCHAT_SKIP:,} characters)"
    if not path.exists():
        if mode == "smoke":
            texts = [
                read_text(REPO / "tests" / "data" / "corpora" / f"{name}_slice.txt")
                for name in MIXED_DOCS
            ]
        else:
            texts = []
            for name in NANOCHAT_CORPORA:
                with lzma.open(shared_data_dir() / "corpora" / f"{name}.txt.xz", "rt") as f:
                    texts.append(f.read()[NANOCHAT_SKIP:])
        chunks = (t[i : i + 100_000] for t in texts for i in range(0, len(t), 100_000))
        tok = nanochat.train(chunks, size)
        cache.mkdir(parents=True, exist_ok=True)
        write_tiktoken(tok.tokenizer.mergeable_ranks(), path)
    return {
        "name": "nanochat",
        "pattern": "nanochat",
        "regex": PATTERNS["nanochat"],
        "ranks": str(path),
        "specials": {},
        "source": f"a {size:,}-id tokenizer of toksmith's nanochat preset, trained on {where}",
    }


def add_hf(specs: Dict[str, dict], sample: str, out_dir: Path) -> None:
    """A tokenizer.json (toksmith's exporter) for Hugging Face tokenizers, when it gives
    tiktoken's ids on ``sample``."""
    from .vocabs import build_hf, read_tiktoken

    vdir = out_dir / "cache" / "scripts"
    vdir.mkdir(parents=True, exist_ok=True)
    for name, spec in specs.items():
        tag = hashlib.sha1(spec["ranks"].encode()).hexdigest()[:8]
        try:
            spec["hf"], spec["hf_source"] = build_hf(
                read_tiktoken(spec["ranks"]),
                spec["pattern"],
                spec["regex"],
                {},
                vdir / f"{name}_{tag}.hf.json",
                sample,
            )
        except Exception as e:  # noqa: BLE001
            spec["hf"], spec["hf_source"] = None, f"could not build: {e}"


# ---------------------------------------------------------------------------- measuring


def _ids_digest(seqs) -> str:
    from .worker import digest

    return digest(seqs)


def measure(task: dict) -> dict:
    """Run in a child process: load every library for every vocabulary, check ids, then the
    interleaved rounds. ``task["batch"]``: time ``encode_batch`` on all cores (wall), else
    ``encode`` per document on one thread (CPU time)."""
    from .libs import lib_version, make

    slices: Dict[str, List[str]] = task["slices"]
    batch = task["batch"]
    threads = task["threads"]
    adapters: Dict[Tuple[str, str], object] = {}
    notes: Dict[str, str] = {}
    for vname, spec in task["specs"].items():
        for lib in task["libs"]:
            if lib == "hf" and not spec.get("hf"):
                notes[f"{lib} ({vname})"] = f"not measured: {spec.get('hf_source')}"
                continue
            try:
                adapters[(vname, lib)] = a = make(lib, spec)
                if a.note:
                    notes[f"{lib} ({vname})"] = a.note
            except Exception as e:  # noqa: BLE001
                # (the first line: some engines' errors quote the pattern with a caret below)
                first = (str(e).splitlines() or [""])[0]
                notes[f"{lib} ({vname})"] = f"not measured: {type(e).__name__}: {first}"
    # Each round encodes its own documents (part r + 1 of the slice; part 0 warms up): a library
    # that caches whole inputs or pieces across calls sees no text twice.
    nparts = task["rounds"] + 1
    parts = {sname: [docs[i::nparts] for i in range(nparts)] for sname, docs in slices.items()}
    part_bytes = {
        sname: [sum(len(d.encode("utf-8")) for d in part) for part in ps]
        for sname, ps in parts.items()
    }
    digests: Dict[tuple, str] = {}

    def call(a, docs):
        return a.encode_batch(docs, threads) if batch else a.encode_each(docs)

    for (vname, lib), a in adapters.items():
        for sname in slices:
            digests[(vname, sname, lib, 0)] = _ids_digest(call(a, parts[sname][0]))
    times: Dict[str, Dict[str, Dict[str, List[float]]]] = {}
    keys = list(adapters)
    clock = time.perf_counter if batch else time.process_time
    for r in range(task["rounds"]):
        for sname in slices:
            docs = parts[sname][r + 1]
            for vname in task["specs"]:
                order = [k for k in keys if k[0] == vname]
                order = order[r % len(order) :] + order[: r % len(order)] if order else order
                for key in order:
                    a = adapters[key]
                    t0 = clock()
                    out = call(a, docs)
                    dt = clock() - t0
                    digests[(vname, sname, key[1], r + 1)] = _ids_digest(out)
                    del out
                    times.setdefault(vname, {}).setdefault(sname, {}).setdefault(key[1], []).append(
                        dt
                    )
    scaling = measure_scaling(task, adapters, parts) if batch else {}
    # ids equal to tiktoken's on every document of the slice
    equal: Dict[str, Dict[str, Dict[str, bool]]] = {}
    for vname, lib in keys:
        for sname in slices:
            equal.setdefault(vname, {}).setdefault(sname, {})[lib] = all(
                digests.get((vname, sname, "tiktoken", i)) == digests[(vname, sname, lib, i)]
                for i in range(nparts)
            )
    return {
        "times": times,
        "scaling": scaling,
        "part_bytes": part_bytes,
        "equal": equal,
        "notes": notes,
        "versions": {
            lib: (_toksmith_version() if lib == "toksmith" else lib_version(lib))
            for lib in task["libs"]
        },
    }


def measure_scaling(task: dict, adapters: dict, parts: Dict[str, List[List[str]]]) -> dict:
    """toksmith's batch on all of ``mixed_docs``: 2 threads against 1 (wall time), with the
    parallel control of benches.run measured between rounds (what 2 threads of a perfectly
    parallel workload gave at that moment).

    Each timing loads a fresh tokenizer, so neither thread count inherits the other's piece
    caches (the rounds before this one encoded these documents on threads that each saw some of
    them, which biased a comparison on those warm tokenizers either way): "cold" is the first
    batch of the fresh tokenizer, "warm" the median of the same batch encoded
    ``WARM_REPEATS`` more times. The order of the two thread
    counts alternates between rounds."""
    from .libs import make
    from .run import parallel_control

    out: dict = {}
    for vname, spec in task["specs"].items():
        if (vname, "toksmith") not in adapters or "mixed_docs" not in parts:
            continue
        docs = [d for part in parts["mixed_docs"] for d in part]
        cold: List[float] = []
        warm: List[float] = []
        controls: List[float] = []
        for r in range(task["rounds"]):
            t: Dict[Tuple[str, int], float] = {}
            for th in (1, 2) if r % 2 == 0 else (2, 1):
                a = make("toksmith", spec)
                # (the load's garbage is collected first, so no collection of it lands in a
                # timed batch of 10-30 ms)
                gc.collect()
                times = []
                for _ in range(1 + WARM_REPEATS):
                    t0 = time.perf_counter()
                    a.encode_batch(docs, th)
                    times.append(time.perf_counter() - t0)
                t[("cold", th)] = times[0]
                t[("warm", th)] = statistics.median(times[1:])
                del a
            cold.append(t[("cold", 1)] / t[("cold", 2)])
            warm.append(t[("warm", 1)] / t[("warm", 2)])
            controls.append(parallel_control(2, 16)["speedup"])
        out[vname] = {
            "ratio": statistics.median(cold),
            "warm_ratio": statistics.median(warm),
            "control": statistics.median(controls),
            "ratio_over_control": statistics.median(r / c for r, c in zip(cold, controls)),
            "ratios": cold,
            "warm_ratios": warm,
            "controls": controls,
        }
    return out


def _toksmith_version() -> str:
    import toksmith

    return f"{toksmith.__version__} ({Path(toksmith.__file__).parent})"


def run_child(task: dict, pin: bool) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    if pin:
        env.update(RAYON_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    with tempfile.TemporaryDirectory(prefix="tsscripts-") as td:
        inp, outp = Path(td) / "in.json", Path(td) / "out.json"
        inp.write_text(json.dumps(task, ensure_ascii=False), encoding="utf-8")
        cmd = [sys.executable, "-m", "benches.scripts", "--child", str(inp), str(outp)]
        if pin:
            cmd.append("--pin")
        subprocess.run(cmd, cwd=REPO, env=env, check=True)
        return json.loads(outp.read_text())


def summarize(res: dict, slices: Dict[str, List[str]]) -> Dict[str, dict]:
    """Per vocabulary and slice: MB/s per library (median), toksmith / best exact peer (median
    of each round's ratio)."""
    out: Dict[str, dict] = {}
    for vname, per_slice in res["times"].items():
        for sname, per_lib in per_slice.items():
            nbytes = sum(len(d.encode("utf-8")) for d in slices[sname])
            pb = res["part_bytes"][sname][1:]  # bytes of each round's documents
            eq = res["equal"][vname][sname]
            row: dict = {"bytes": nbytes, "mbps": {}, "ids_equal": eq}
            for lib, ts in per_lib.items():
                row["mbps"][lib] = statistics.median(b / t / 1e6 for b, t in zip(pb, ts))
            peers = [lib for lib in per_lib if lib != "toksmith" and eq.get(lib, lib == "tiktoken")]
            if "toksmith" in per_lib and peers:
                n = len(per_lib["toksmith"])
                ratios = [
                    min(per_lib[p][i] for p in peers) / per_lib["toksmith"][i] for i in range(n)
                ]
                row["vs_best_peer"] = statistics.median(ratios)
                row["best_peer"] = max(peers, key=lambda p: row["mbps"][p])
                row["vs_tiktoken"] = statistics.median(
                    per_lib["tiktoken"][i] / per_lib["toksmith"][i] for i in range(n)
                )
            out.setdefault(vname, {})[sname] = row
    return out


def render(results: dict) -> str:
    lines = [
        "## Speed per script (issue 37)",
        "",
        "`python -m benches.scripts --quick --publish` (this section: benches/scripts_results.md, "
        "which BENCHMARKS.md takes in). Toksmith against every exact peer of issue 37 that "
        "installs here; a library whose ids differ from tiktoken's on a slice is marked and not "
        "ranked there.",
        "",
        f"Mode {results['mode']}; {results['rounds']} interleaved rounds one thread (CPU time), "
        f"{results['batch_rounds']} batch on {results['threads']} threads (wall). Medians; the "
        "ratio is the median of each round's ratio. Libraries: "
        + ", ".join(f"{k} {v}" for k, v in results["versions"].items())
        + "."
        + (
            " Load average at the end: "
            + ", ".join(f"{x:.1f}" for x in results["load_average"])
            + "."
            if results.get("load_average")
            else ""
        ),
        "",
    ]
    for vname, spec in results["vocabs"].items():
        lines.append(f"### {vname}: {spec['source']}")
        lines.append("")
        for kind in ("one_thread", "batch"):
            table = results[kind].get(vname, {})
            if not table:
                continue
            libs = sorted({lib for row in table.values() for lib in row["mbps"]}, key=LIBS.index)
            lines.append(f"{'One thread' if kind == 'one_thread' else 'Batch'}, MB/s:")
            lines.append("")
            lines.append(
                "| slice | KB | " + " | ".join(libs) + " | toksmith / best peer | / tiktoken |"
            )
            lines.append("|---|---:|" + "---:|" * len(libs) + "---:|---:|")
            for sname in SLICES:
                row = table.get(sname)
                if not row:
                    continue
                cells = []
                for lib in libs:
                    v = row["mbps"].get(lib)
                    mark = "" if row["ids_equal"].get(lib, True) else " (ids differ)"
                    cells.append("-" if v is None else f"{v:.1f}{mark}")
                best = row.get("vs_best_peer")
                vs_peer = "-" if best is None else f"{best:.2f}x ({row['best_peer']})"
                vs_tk = "-" if best is None else f"{row['vs_tiktoken']:.2f}x"
                lines.append(
                    f"| {sname} | {row['bytes'] // 1000} | "
                    + " | ".join(cells)
                    + f" | {vs_peer} | {vs_tk} |"
                )
            lines.append("")
        sc = results.get("scaling", {}).get(vname)
        if sc:
            warm = sc.get("warm_ratio")
            warm_text = (
                ""
                if warm is None
                else f", the same batch again (median of {WARM_REPEATS}) {warm:.2f}x"
            )
            lines.append(
                f"toksmith's batch on all of mixed_docs, 2 threads / 1 thread: a fresh "
                f"tokenizer's first batch {sc['ratio']:.2f}x{warm_text} (parallel control "
                f"{sc['control']:.2f}x, first batch / control {sc['ratio_over_control']:.2f}; "
                f"medians of {len(sc['ratios'])} rounds)."
            )
            lines.append("")
    if results.get("notes"):
        lines.append("Notes: " + "; ".join(f"{k}: {v}" for k, v in results["notes"].items()))
        lines.append("")
    lines.append(
        "The emoji slice is English chat lines with emoji inserted (no corpus here has emoji). "
        "The peers install as splintr-rs, toktok-rs and quicktok-v1 (modules splintr, toktok, "
        "quicktok): PyPI's splintr, toktok and quicktok are other projects (a multi-GPU "
        "training helper, a word splitter, a trainable byte-level BPE)."
    )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--libs", nargs="+", default=list(LIBS), choices=LIBS)
    ap.add_argument("--rounds", type=int, default=0)
    ap.add_argument(
        "--publish",
        action="store_true",
        help="also write benches/scripts_results.md (the section BENCHMARKS.md takes in)",
    )
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--pin", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        if args.pin and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
        task = json.loads(Path(args.child[0]).read_text(encoding="utf-8"))
        Path(args.child[1]).write_text(json.dumps(measure(task)))
        return 0
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    _, _, rounds, batch_rounds = SIZES[mode]
    rounds = args.rounds or rounds
    batch_rounds = args.rounds or batch_rounds
    out_dir = args.out.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    slices = build_slices(mode, out_dir / "cache" / "scripts")
    specs = vocab_specs(mode, out_dir)
    from .libs import missing_reason

    if "tiktoken" not in args.libs:
        # tiktoken is the reference every library's ids are compared with
        args.libs = ["tiktoken", *args.libs]
    missing = {lib: missing_reason(lib) for lib in args.libs}
    if missing["tiktoken"] is not None:
        print(f"benches.scripts needs tiktoken, the ids' reference: {missing['tiktoken']}")
        return 2
    libs = [lib for lib in args.libs if missing[lib] is None]
    if "hf" in libs:
        add_hf(specs, "".join(slices["mixed"])[:100_000], out_dir)
    from .libs import ncores

    threads = ncores()
    task = {"slices": slices, "specs": specs, "libs": libs, "threads": threads}
    one = run_child(dict(task, batch=False, rounds=rounds), pin=True)
    bat = run_child(dict(task, batch=True, rounds=batch_rounds), pin=False)
    results = {
        "mode": mode,
        "rounds": rounds,
        "batch_rounds": batch_rounds,
        "threads": threads,
        "vocabs": {k: {"source": v["source"], "hf": v.get("hf_source")} for k, v in specs.items()},
        "versions": one["versions"],
        "notes": {
            **{lib: why for lib, why in missing.items() if why},
            **one["notes"],
        },
        "one_thread": summarize(one, slices),
        "batch": summarize(bat, slices),
        "scaling": bat.get("scaling", {}),
        "load_average": os.getloadavg(),
        "duration_s": time.time() - t0,
    }
    (out_dir / "scripts.json").write_text(json.dumps(results, indent=1))
    (out_dir / "scripts.md").write_text(render(results))
    if args.publish:
        (REPO / "benches" / "scripts_results.md").write_text(render(results))
    print(render(results))
    differ = [
        (v, s)
        for kind in ("one_thread", "batch")
        for v, t in results[kind].items()
        for s, row in t.items()
        if not row["ids_equal"].get("toksmith", False)
    ]
    if differ:
        print(f"toksmith's ids differ from tiktoken's on {differ}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
