"""The benchmark command: ``python -m benches.run [--quick | --smoke] [--only SECTION ...] [--out DIR]``.

One run measures toksmith and its peers on the same inputs and writes:

* ``BENCHMARKS.md`` (repo root; only for a full run of every section, else into ``--out``),
* ``<out>/benchmarks.png`` (and ``docs/benchmarks.png`` with the published report),
* ``<out>/results.json`` (every raw number).

Sections: train, encode, batch, decode, load, worst, memory. The exit status is 1 when an equality
check failed (toksmith's merges vs rustbpe's, toksmith's ids vs tiktoken's), after the report is
written.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from . import data as D
from .config import (
    DEFAULT_OUT,
    ENCODE_LIBS,
    ENCODE_PATTERNS,
    LOAD_FORMATS,
    MODES,
    REPO,
    SECTIONS,
    TRAIN_LIBS,
    TRAIN_PATTERNS,
    WORST_KINDS,
    WORST_LIBS,
    Mode,
)

#: one-thread sections: thread-count variables for the libraries that read them, and the worker
#: pinned to one CPU (``benches.worker.pin_one_cpu``) for those that size their own pools from
#: the CPU count (fastokens' BPE pool ignores ``RAYON_NUM_THREADS`` and used 1.5 cores)
ONE_THREAD_ENV = {
    "RAYON_NUM_THREADS": "1",
    "RAYON_RS_NUM_CPUS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "OMP_NUM_THREADS": "1",
    "TOKSMITH_BENCH_ONE_CPU": "1",
}
MANY_THREADS_ENV = {"TOKENIZERS_PARALLELISM": "true"}


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def ncores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        return os.cpu_count() or 1


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


# ---------------------------------------------------------------------------- processes


class Proc:
    """Result of one child process: exit code, wall time, peak RSS, timed out?"""

    def __init__(self, rc: int, wall: float, maxrss_kb: int, timed_out: bool):
        self.rc, self.wall, self.maxrss_kb, self.timed_out = rc, wall, maxrss_kb, timed_out


# Linux keeps a process's peak RSS across execve and copies the parent's into a forked child, so
# a child of this (large) process would report at least our own peak. Children are therefore
# started by this small launcher (``python -S``, a few MB), which forks and execs the command,
# waits for it with ``os.wait4`` and writes its exit status, wall time and peak RSS to a file.
LAUNCHER = r"""
import json, os, sys, time
out, timeout, argv = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
timed_out, delay = False, 0.002
while True:
    p, status, ru = os.wait4(pid, os.WNOHANG)
    if p:
        break
    if time.perf_counter() - t0 > timeout:
        os.kill(pid, 9)
        p, status, ru = os.wait4(pid, 0)
        timed_out = True
        break
    time.sleep(delay)
    delay = min(delay * 2, 0.05)
with open(out, "w") as f:
    json.dump({"rc": os.waitstatus_to_exitcode(status), "wall": time.perf_counter() - t0,
               "maxrss_kb": ru.ru_maxrss, "timed_out": timed_out}, f)
"""


def spawn(
    cmd: List[str], env: Optional[Dict[str, str]], timeout: float, stdout=None, stderr=None
) -> Proc:
    full_env = dict(os.environ)
    full_env.pop("PYTHONSTARTUP", None)
    if env:
        full_env.update(env)
    pp = full_env.get("PYTHONPATH")
    full_env["PYTHONPATH"] = str(REPO) + (os.pathsep + pp if pp else "")
    with tempfile.TemporaryDirectory(prefix="tsbench-") as td:
        res = Path(td) / "proc.json"
        t0 = time.perf_counter()
        try:
            subprocess.run(
                [sys.executable, "-S", "-c", LAUNCHER, str(res), str(timeout), *cmd],
                cwd=str(REPO),
                env=full_env,
                stdout=stdout,
                stderr=stderr,
                timeout=timeout + 60,
            )
        except subprocess.TimeoutExpired:
            return Proc(-9, time.perf_counter() - t0, 0, True)
        if not res.exists():
            return Proc(-1, time.perf_counter() - t0, 0, False)
        r = json.loads(res.read_text())
    return Proc(r["rc"], r["wall"], r["maxrss_kb"], r["timed_out"])


class Executor:
    """Runs worker tasks: one fresh process per task (``isolate``) or one per library and
    environment (smoke mode, to stay within seconds)."""

    def __init__(self, mode: Mode, logdir: Path):
        self.mode = mode
        self.logdir = logdir
        logdir.mkdir(parents=True, exist_ok=True)
        self.n = 0

    def _run_group(self, tasks: List[dict], env: Dict[str, str], timeout: float) -> List[dict]:
        self.n += 1
        with tempfile.TemporaryDirectory(prefix="tsbench-") as td:
            inp, outp = Path(td) / "in.json", Path(td) / "out.json"
            inp.write_text(json.dumps(tasks))
            logf = self.logdir / f"worker-{self.n:04d}.log"
            with open(logf, "w") as lf:
                proc = spawn(
                    [sys.executable, "-m", "benches.worker", str(inp), str(outp)],
                    env,
                    timeout,
                    stdout=lf,
                    stderr=subprocess.STDOUT,
                )
            results = json.loads(outp.read_text()) if outp.exists() else []
        while len(results) < len(tasks):
            why = (
                "timed out"
                if proc.timed_out
                else f"worker exited with status {proc.rc} (see {logf})"
            )
            results.append({"error": why, "timed_out": proc.timed_out})
        for r in results:
            r.setdefault("proc_rss_kb", proc.maxrss_kb)
            r.setdefault("proc_wall_s", proc.wall)
        return results

    def run(
        self,
        tasks: List[dict],
        env: Optional[Dict[str, str]] = None,
        timeout: Optional[float] = None,
    ) -> List[dict]:
        env = env or {}
        timeout = timeout or self.mode.timeout_s
        if self.mode.isolate:
            out = []
            for t in tasks:
                log(t.get("label", t["kind"]))
                r = self._run_group([t], env, timeout)[0]
                log(f"  -> {_brief(r)}")
                out.append(r)
            return out
        groups: Dict[str, List[int]] = {}
        for i, t in enumerate(tasks):
            groups.setdefault(t.get("lib", ""), []).append(i)
        out: List[Optional[dict]] = [None] * len(tasks)
        for lib, idx in groups.items():
            log(f"{tasks[idx[0]]['kind']} x{len(idx)} in one process ({lib})")
            res = self._run_group([tasks[i] for i in idx], env, timeout)
            for i, r in zip(idx, res):
                out[i] = r
        return out  # type: ignore[return-value]


def _brief(r: dict) -> str:
    if "error" in r:
        return "error: " + r["error"]
    if "wall_s" in r:
        return f"{r['wall_s']:.2f} s wall, {r['cpu_s']:.2f} s cpu, {r['proc_rss_kb'] / 1024:.0f} MB peak RSS"
    if "text_s" in r:
        return (
            f"text {r['text_bytes'] / r['text_s'] / 1e6:.1f} MB/s, docs {r['docs_bytes'] / r['docs_s'] / 1e6:.1f} MB/s"
            + (
                f", decode {r['text_bytes'] / r['decode_s'] / 1e6:.0f} MB/s"
                if "decode_s" in r
                else ""
            )
        )
    if "batch_s" in r:
        return f"{r['docs_bytes'] / r['batch_s'] / 1e6:.1f} MB/s ({r['batch_cpu_s'] / r['batch_s']:.2f} cores)"
    if "cases" in r:
        return ", ".join(
            f"{k} "
            + (
                "skipped"
                if v.get("skipped")
                else f"failed ({v['error'][:60]})"
                if "error" in v
                else f"{v['s'] * 1e3:.0f} ms"
            )
            for k, v in r["cases"].items()
        )
    if "count_wall_s" in r:
        return f"count {r['count_wall_s']:.2f} s, merge {r['merge_wall_s']:.2f} s"
    return "ok"


# ---------------------------------------------------------------------------- machine info


def parallel_control(threads: int = 2, rounds: int = 40) -> dict:
    """A control workload that scales perfectly on idle cores (sha256 of 8 MB buffers in Python
    threads, GIL released): its speed-up from 1 to ``threads`` threads shows how much parallelism
    the machine really gave this run (a shared or oversubscribed machine gives less)."""
    import hashlib
    import threading

    buf = b"x" * (8 << 20)

    def work(n):
        for _ in range(n):
            hashlib.sha256(buf).digest()

    def rate(nthreads: int) -> float:
        ts = [threading.Thread(target=work, args=(rounds // nthreads,)) for _ in range(nthreads)]
        t0 = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return rounds * len(buf) / (time.perf_counter() - t0)

    one, many = rate(1), rate(threads)
    return {
        "threads": threads,
        "one_mbps": one / 1e6,
        "many_mbps": many / 1e6,
        "speedup": many / one,
    }


def extension_builds() -> List[str]:
    """The native extension files of the installed toksmith, with their modification times (to
    tell whether the extension was rebuilt while the benchmarks ran)."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("toksmith")
        pkg = Path(spec.origin).parent if spec and spec.origin else None
    except (ImportError, ValueError):
        pkg = None
    if pkg is None:
        return []
    try:
        import toksmith._core as core

        loaded = Path(core.__file__).name
    except ImportError:
        loaded = None
    return sorted(
        f"{p.name} {time.strftime('%H:%M:%S', time.gmtime(p.stat().st_mtime))} UTC"
        + (" (loaded)" if p.name == loaded else "")
        for p in pkg.glob("_core*.so")
    )


def machine_info(control_rounds: int = 40) -> dict:
    from importlib import metadata

    info = {
        "cores": ncores(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "loadavg_start": os.getloadavg(),
        "control_start": parallel_control(rounds=control_rounds),
        "extension_start": extension_builds(),
    }
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
        models = [
            line.split(":", 1)[1].strip()
            for line in cpuinfo.splitlines()
            if line.startswith("model name")
        ]
        info["cpu_model"] = models[0] if models else platform.processor()
        mem = Path("/proc/meminfo").read_text().splitlines()[0].split()
        info["mem_gb"] = round(int(mem[1]) / 1024 / 1024, 1)
    except OSError:
        info["cpu_model"] = platform.processor()
    versions = {}
    for dist in (
        "toksmith",
        "tiktoken",
        "tokenizers",
        "rustbpe",
        "fastokens",
        "numpy",
        "psutil",
        "matplotlib",
        "regex",
    ):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    info["versions"] = versions
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        info["git"] = commit + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        info["git"] = "unknown"
    try:
        info["rustc"] = (
            subprocess.run(
                ["rustc", "--version"], capture_output=True, text=True, timeout=10
            ).stdout.strip()
            or "unknown"
        )
    except (OSError, subprocess.SubprocessError):
        info["rustc"] = "unknown"
    try:
        import toksmith

        info["toksmith_module"] = os.path.dirname(toksmith.__file__)
    except ImportError:
        pass
    return info


# ---------------------------------------------------------------------------- sections


def _by_key(tasks: List[dict], results: List[dict]) -> Dict[tuple, List[dict]]:
    out: Dict[tuple, List[dict]] = {}
    for t, r in zip(tasks, results):
        out.setdefault(tuple(t["key"]), []).append(r)
    return out


def _errors(runs: List[dict]) -> Optional[str]:
    ok = [x for x in runs if "error" not in x]
    return None if ok else (runs[-1]["error"] if runs else "not run")


def section_train(mode: Mode, ex: Executor, data: dict, cache: Path, checks: list) -> dict:
    from toksmith.pretokenize import PATTERNS

    from .vocabs import read_tiktoken

    rdir = cache / "trained"
    rdir.mkdir(exist_ok=True)
    tasks = []
    for r in range(mode.runs):
        for pattern in TRAIN_PATTERNS:
            for vocab in mode.train_vocabs:
                for lib in TRAIN_LIBS:
                    tasks.append(
                        {
                            "kind": "train",
                            "lib": lib,
                            "regex": PATTERNS[pattern],
                            "vocab_size": vocab,
                            "corpus": data["files"]["train"],
                            "ranks_out": str(rdir / f"{lib}_{pattern}_{vocab}.tiktoken"),
                            "key": [pattern, vocab, lib],
                            "label": f"train {lib} {pattern} vocab={vocab} run {r + 1}/{mode.runs}",
                        }
                    )
    if mode.train_vocabs:
        vocab = max(mode.train_vocabs)
        for pattern in TRAIN_PATTERNS:
            tasks.append(
                {
                    "kind": "train_phases",
                    "lib": "toksmith",
                    "regex": PATTERNS[pattern],
                    "vocab_size": vocab,
                    "corpus": data["files"]["train"],
                    "key": ["phases", pattern],
                    "label": f"train phases toksmith {pattern} vocab={vocab}",
                }
            )
    by = _by_key(tasks, ex.run(tasks))
    rows = []
    for pattern in TRAIN_PATTERNS:
        for vocab in mode.train_vocabs:
            row = {"pattern": pattern, "vocab": vocab, "libs": {}}
            for lib in TRAIN_LIBS:
                runs = by.get((pattern, vocab, lib), [])
                ok = [x for x in runs if "error" not in x]
                row["libs"][lib] = {
                    "runs": runs,
                    "wall_s": median(x["wall_s"] for x in ok),
                    "cpu_s": median(x["cpu_s"] for x in ok),
                    "rss_mb": median(x["proc_rss_kb"] / 1024 for x in ok),
                    "base_rss_mb": median(x["baseline_rss_kb"] / 1024 for x in ok),
                    "error": _errors(runs),
                }
            a, b = (
                rdir / f"toksmith_{pattern}_{vocab}.tiktoken",
                rdir / f"rustbpe_{pattern}_{vocab}.tiktoken",
            )
            if (
                all(row["libs"][lib]["error"] is None for lib in TRAIN_LIBS)
                and a.exists()
                and b.exists()
            ):
                ra, rb = read_tiktoken(a), read_tiktoken(b)
                equal = ra == rb
                detail = f"{len(ra)} tokens" if equal else _first_rank_difference(ra, rb)
            else:
                equal, detail = None, "a trainer failed"
            row["merges_equal"] = equal
            checks.append(
                {
                    "name": f"train {pattern} {vocab}: toksmith merges == rustbpe merges",
                    "ok": bool(equal),
                    "detail": detail,
                }
            )
            rows.append(row)
    phases = {
        pattern: by[("phases", pattern)][0]
        for pattern in TRAIN_PATTERNS
        if ("phases", pattern) in by
    }
    return {
        "rows": rows,
        "phases": phases,
        "corpus_bytes": data["sizes"]["train"],
        "corpus_docs": data["sizes"]["train_docs"],
        "vocab_phases": max(mode.train_vocabs) if mode.train_vocabs else None,
    }


def _first_rank_difference(a: Dict[bytes, int], b: Dict[bytes, int]) -> str:
    ia = sorted(a.items(), key=lambda kv: kv[1])
    ib = sorted(b.items(), key=lambda kv: kv[1])
    for (ta, ra), (tb, rb) in zip(ia, ib):
        if ta != tb or ra != rb:
            return f"first difference at rank {min(ra, rb)}: toksmith {ta!r}, rustbpe {tb!r}"
    return f"sizes differ: toksmith {len(a)}, rustbpe {len(b)}"


def section_encode(
    mode: Mode, ex: Executor, data: dict, specs: dict, checks: list, do_decode: bool
) -> dict:
    files = data["files"]
    tasks = []
    runs = mode.encode_runs or mode.runs
    for r in range(runs):
        for pattern in ENCODE_PATTERNS:
            for lib in ENCODE_LIBS:
                tasks.append(
                    {
                        "kind": "encode",
                        "lib": lib,
                        "spec": specs[pattern],
                        "text": files["text"],
                        "docs": files["docs"],
                        "warm": files["warm"],
                        "decode": do_decode,
                        "stream_tokens": mode.stream_tokens,
                        "key": [pattern, lib],
                        "label": f"encode {lib} {pattern} run {r + 1}/{runs}",
                    }
                )
    by = _by_key(tasks, ex.run(tasks, env=ONE_THREAD_ENV))
    out: Dict[str, dict] = {}
    for pattern in ENCODE_PATTERNS:
        out[pattern] = {lib: _summarize_encode(by.get((pattern, lib), [])) for lib in ENCODE_LIBS}
        ref = out[pattern].get("tiktoken", {})
        for lib, s in out[pattern].items():
            if lib == "tiktoken" or s.get("error") or ref.get("error"):
                s["ids_equal"] = None
                continue
            s["ids_equal"] = (
                s["text_digest"] == ref["text_digest"] and s["docs_digest"] == ref["docs_digest"]
            )
        ts = out[pattern].get("toksmith", {})
        checks.append(
            {
                "name": f"encode {pattern}: toksmith ids == tiktoken ids (large string and documents)",
                "ok": bool(ts.get("ids_equal")),
                "detail": ts.get("error")
                or ref.get("error")
                or ("equal" if ts.get("ids_equal") else "ids differ"),
            }
        )
        if do_decode and not ts.get("error"):
            checks.append(
                {
                    "name": f"decode {pattern}: toksmith decode(encode(text)) == text, stream decoder agrees",
                    "ok": bool(ts.get("decode_roundtrip")) and bool(ts.get("stream_ok")),
                    "detail": f"roundtrip={ts.get('decode_roundtrip')}, stream={ts.get('stream_ok')}",
                }
            )
    return out


def _summarize_encode(runs: List[dict]) -> dict:
    ok = [x for x in runs if "error" not in x]
    if not ok:
        return {"error": _errors(runs), "runs": runs}
    first = ok[0]
    s = {
        "runs": runs,
        "text_bytes": first["text_bytes"],
        "docs_bytes": first["docs_bytes"],
        "docs": first["docs"],
        "text_tokens": first["text_tokens"],
        "text_digest": first["text_digest"],
        "docs_digest": first["docs_digest"],
        "text_mbps": median(x["text_bytes"] / x["text_s"] / 1e6 for x in ok),
        "docs_mbps": median(x["docs_bytes"] / x["docs_s"] / 1e6 for x in ok),
        "text_cores": median(x["text_cpu_s"] / x["text_s"] for x in ok),
        "docs_cores": median(x["docs_cpu_s"] / x["docs_s"] for x in ok),
        "consistent": all(
            x["text_digest"] == first["text_digest"] and x["docs_digest"] == first["docs_digest"]
            for x in ok
        ),
    }
    if "decode_s" in first:
        s["decode_mbps"] = median(x["text_bytes"] / x["decode_s"] / 1e6 for x in ok)
        s["decode_roundtrip"] = all(x.get("decode_roundtrip") for x in ok)
    if "decode_first_s" in first:
        s["decode_first_mbps"] = median(x["text_bytes"] / x["decode_first_s"] / 1e6 for x in ok)
    if "stream_s" in first:
        s["stream_tps"] = median(x["stream_tokens"] / x["stream_s"] for x in ok)
        s["stream_ok"] = all(x.get("stream_ok") for x in ok)
    if "stream_error" in first:
        s["stream_error"] = first["stream_error"]
    return s


def batch_configs() -> List[Tuple[str, str, int]]:
    n = ncores()
    cfgs = [("toksmith", "toksmith 1 thread", 1), ("toksmith", "toksmith 2 threads", 2)]
    if n not in (1, 2):
        cfgs.append(("toksmith", f"toksmith {n} threads", n))
    for lib in ENCODE_LIBS:
        if lib != "toksmith":
            cfgs.append((lib, f"{lib} {n} threads", n))
    return cfgs


def section_batch(mode: Mode, ex: Executor, data: dict, specs: dict, checks: list) -> dict:
    files = data["files"]
    tasks = []
    runs = mode.batch_runs or mode.runs
    for r in range(runs):
        for pattern in ENCODE_PATTERNS:
            for lib, label, threads in batch_configs():
                tasks.append(
                    {
                        "kind": "batch",
                        "lib": lib,
                        "spec": specs[pattern],
                        "docs": files["docs"],
                        "warm": files["warm"],
                        "threads": threads,
                        "key": [pattern, label],
                        "label": f"batch {label} {pattern} run {r + 1}/{runs}",
                    }
                )
    by = _by_key(tasks, ex.run(tasks, env=MANY_THREADS_ENV))
    out: Dict[str, dict] = {}
    for pattern in ENCODE_PATTERNS:
        out[pattern] = {}
        for lib, label, threads in batch_configs():
            runs = by.get((pattern, label), [])
            ok = [x for x in runs if "error" not in x]
            if not ok:
                out[pattern][label] = {
                    "lib": lib,
                    "threads": threads,
                    "error": _errors(runs),
                    "runs": runs,
                }
                continue
            out[pattern][label] = {
                "lib": lib,
                "threads": threads,
                "runs": runs,
                "mbps": median(x["docs_bytes"] / x["batch_s"] / 1e6 for x in ok),
                "cores": median(x["batch_cpu_s"] / x["batch_s"] for x in ok),
                "digest": ok[0]["docs_digest"],
            }
        ref = next(
            (v for v in out[pattern].values() if v["lib"] == "tiktoken" and "digest" in v), None
        )
        for _label, v in out[pattern].items():
            v["ids_equal"] = (
                None
                if (ref is None or "digest" not in v or v["lib"] == "tiktoken")
                else v["digest"] == ref["digest"]
            )
        for label, v in out[pattern].items():
            if v["lib"] == "toksmith":
                checks.append(
                    {
                        "name": f"batch {pattern}: {label} ids == tiktoken ids",
                        "ok": bool(v.get("ids_equal")),
                        "detail": v.get("error")
                        or ("equal" if v.get("ids_equal") else "ids differ"),
                    }
                )
    return out


def section_worst(mode: Mode, ex: Executor, data: dict, specs: dict, checks: list) -> dict:
    files = data["files"]
    cases = [
        {"kind": k, "size": s, "path": files[f"worst_{k}_{s}"]}
        for k in WORST_KINDS
        for s in mode.worst_sizes
    ]
    # One fresh process per case: a case's time must not depend on the memory that earlier
    # cases left in the process (a 1 MB result reusing heap freed by a 10 MB one, say).
    tasks = []
    for r in range(mode.runs):
        for pattern in ENCODE_PATTERNS:
            for lib in WORST_LIBS:
                for c in cases:
                    tasks.append(
                        {
                            "kind": "worst",
                            "lib": lib,
                            "spec": specs[pattern],
                            "cases": [c],
                            "warm": files["warm"],
                            "cap_s": mode.cap_s,
                            "key": [pattern, lib],
                            "label": f"worst {lib} {pattern} {c['kind']} {c['size']} run {r + 1}/{mode.runs}",
                        }
                    )
    # a process may spend up to about the cap on each of its cases, plus probes (smoke mode runs
    # a library's tasks in one process)
    per_process = 1 if mode.isolate else len(tasks)
    timeout = min(mode.timeout_s, 60 + per_process * mode.cap_s * 3)
    by = _by_key(tasks, ex.run(tasks, env=ONE_THREAD_ENV, timeout=timeout))
    out: Dict[str, dict] = {}
    for pattern in ENCODE_PATTERNS:
        out[pattern] = {}
        for lib in WORST_LIBS:
            runs = by.get((pattern, lib), [])
            ok = [x for x in runs if "error" not in x]
            if not ok:
                out[pattern][lib] = {"error": _errors(runs)}
                continue
            summary = {}
            for c in cases:
                key = f"{c['kind']}_{c['size']}"
                vals = [x["cases"][key] for x in ok if key in x["cases"]]
                done = [v for v in vals if not v.get("skipped") and "error" not in v]
                errs = [v for v in vals if "error" in v]
                if errs:
                    summary[key] = {"error": errs[0]["error"], "bytes": errs[0]["bytes"]}
                elif done:
                    summary[key] = {
                        "s": median(v["s"] for v in done),
                        "bytes": done[0]["bytes"],
                        "digest": done[0]["digest"],
                        "tokens": done[0]["tokens"],
                        "runs_s": [v["s"] for v in done],
                    }
                elif vals:
                    summary[key] = {
                        "skipped": True,
                        "predicted_s": median(v["predicted_s"] for v in vals),
                        "bytes": vals[0]["bytes"],
                    }
            out[pattern][lib] = {"cases": summary, "runs": len(ok) // len(cases)}
        ts = out[pattern].get("toksmith", {}).get("cases", {})
        tk = out[pattern].get("tiktoken", {}).get("cases", {})
        compared = [k for k in ts if k in tk and "digest" in ts[k] and "digest" in tk[k]]
        same = all(ts[k]["digest"] == tk[k]["digest"] for k in compared)
        if compared:
            checks.append(
                {
                    "name": f"worst {pattern}: toksmith ids == tiktoken ids (the {len(compared)} inputs tiktoken finished)",
                    "ok": same,
                    "detail": "equal"
                    if same
                    else "differ on "
                    + ", ".join(k for k in compared if ts[k]["digest"] != tk[k]["digest"]),
                }
            )
    return out


#: characters of the encode section's large string encoded by every loaded tokenizer
LOAD_SAMPLE_CHARS = 200_000


def section_load(
    mode: Mode, ex: Executor, data: dict, specs: dict, cache: Path, checks: list
) -> dict:
    """Time to read a tokenizer file, each library in a fresh process, the same files for all;
    every loaded tokenizer must give tiktoken's ids on a sample."""
    import toksmith

    from .vocabs import read_tiktoken

    tasks = []
    paths: Dict[str, dict] = {}
    for pattern in ENCODE_PATTERNS:
        spec = specs[pattern]
        own = cache / f"load_{pattern}_toksmith.json"
        toksmith.Tokenizer.from_ranks(
            read_tiktoken(spec["ranks"]), spec["pattern"], spec["specials"]
        ).save(own)
        paths[pattern] = {
            "tiktoken": spec["ranks"],
            "tokenizer.json": spec.get("hf"),
            "toksmith": str(own),
        }
    for r in range(mode.runs):
        for pattern in ENCODE_PATTERNS:
            for fmt, libs in LOAD_FORMATS.items():
                if not paths[pattern][fmt]:
                    continue
                for lib in libs:
                    tasks.append(
                        {
                            "kind": "load",
                            "lib": lib,
                            "format": fmt,
                            "spec": specs[pattern],
                            "paths": paths[pattern],
                            "sample": data["files"]["text"],
                            "sample_chars": LOAD_SAMPLE_CHARS,
                            "key": [pattern, fmt, lib],
                            "label": f"load {lib} {pattern} {fmt} run {r + 1}/{mode.runs}",
                        }
                    )
    # tiktoken reads a local file directly (no copy into its download cache)
    by = _by_key(tasks, ex.run(tasks, env={**ONE_THREAD_ENV, "TIKTOKEN_CACHE_DIR": ""}))
    out: Dict[str, dict] = {}
    for pattern in ENCODE_PATTERNS:
        out[pattern] = {}
        for fmt, libs in LOAD_FORMATS.items():
            out[pattern][fmt] = {}
            for lib in libs:
                runs = by.get((pattern, fmt, lib), [])
                ok = [x for x in runs if "error" not in x]
                if not runs:
                    continue
                if not ok:
                    out[pattern][fmt][lib] = {"error": _errors(runs)}
                    continue
                out[pattern][fmt][lib] = {
                    "s": median(x["s"] for x in ok),
                    "runs_s": [x["s"] for x in ok],
                    "digest": ok[0]["digest"],
                    "same_ids": len({x["digest"] for x in ok}) == 1,
                }
        ref = out[pattern].get("tiktoken", {}).get("tiktoken", {}).get("digest")
        loaded = [(fmt, lib, s) for fmt, libs in out[pattern].items() for lib, s in libs.items()]
        ts = [(fmt, s) for fmt, lib, s in loaded if lib == "toksmith"]
        bad = [
            f"toksmith {fmt}" for fmt, s in ts if s.get("digest") != ref or not s.get("same_ids")
        ]
        if ref:
            checks.append(
                {
                    "name": f"load {pattern}: toksmith loaded from each file gives tiktoken's ids "
                    f"({LOAD_SAMPLE_CHARS // 1000}k characters)",
                    "ok": not bad and bool(ts),
                    "detail": "equal" if not bad else "differ: " + ", ".join(bad),
                }
            )
    return out


def toksmith_cmd() -> List[str]:
    exe = shutil.which("toksmith")
    return [exe] if exe else [sys.executable, "-m", "toksmith"]


def section_memory(
    mode: Mode, data: dict, specs: dict, cache: Path, out_dir: Path, checks: list, keep: bool
) -> dict:
    import toksmith

    from .vocabs import read_tiktoken

    spec = specs["cl100k"]
    tokjson = cache / "cl100k_tok.json"
    tok = toksmith.Tokenizer.from_ranks(
        read_tiktoken(spec["ranks"]), spec["pattern"], spec["specials"]
    )
    tok.save(tokjson)
    cmd = toksmith_cmd()
    with open(os.devnull, "w") as dn:
        probe = spawn(cmd + ["encode", "--help"], None, 120, stdout=dn, stderr=dn)
    if probe.rc != 0:
        return {
            "error": f"not measured: `{' '.join(cmd)} encode` is not available (exit status {probe.rc})"
        }
    res: dict = {
        "cmd": " ".join(["toksmith", "encode", "-t", "tok.json", "FILE", ">", "/dev/null"]),
        "tokenizer": "cl100k_base",
    }
    text = D.read_text(data["files"]["text"])
    # correctness on a small file: the CLI's ids == encode_ordinary of the whole text
    small = cache / "mem_small.txt"
    small_size = D.make_big_file(small, min(1_000_000, mode.memory_bytes // 10), text)
    outp = cache / "mem_small.ids"
    with open(outp, "w") as f:
        p = spawn(cmd + ["encode", "-t", str(tokjson), str(small)], None, 600, stdout=f)
    if p.rc != 0:
        return {"error": f"not measured: `toksmith encode` failed with exit status {p.rc}"}
    got = [int(x) for x in outp.read_text().split()]
    want = tok.encode_ordinary(D.read_text(small))
    checks.append(
        {
            "name": "memory: `toksmith encode` output == encode_ordinary(file)",
            "ok": got == want,
            "detail": f"{len(got)} ids"
            if got == want
            else f"{len(got)} ids vs {len(want)} expected",
        }
    )
    with open(os.devnull, "w") as dn:
        p = spawn(cmd + ["encode", "-t", str(tokjson), str(small)], None, 600, stdout=dn)
    res["small"] = {"bytes": small_size, "wall_s": p.wall, "rss_mb": p.maxrss_kb / 1024, "rc": p.rc}
    with open(os.devnull, "w") as dn:
        p = spawn([sys.executable, "-c", "import toksmith"], None, 120, stdout=dn)
    res["python_import_rss_mb"] = p.maxrss_kb / 1024
    big = out_dir / "mem_big.txt"
    log(f"[memory] writing a {mode.memory_bytes / 1e6:.0f} MB file")
    size = D.make_big_file(big, mode.memory_bytes, text)
    try:
        log(f"[memory] toksmith encode on {size / 1e6:.0f} MB")
        with open(os.devnull, "w") as dn:
            p = spawn(
                cmd + ["encode", "-t", str(tokjson), str(big)], None, mode.timeout_s * 2, stdout=dn
            )
        res["big"] = {
            "bytes": size,
            "wall_s": p.wall,
            "rss_mb": p.maxrss_kb / 1024,
            "rc": p.rc,
            "timed_out": p.timed_out,
        }
        log(f"[memory]   {p.wall:.1f} s, peak RSS {p.maxrss_kb / 1024:.0f} MB, status {p.rc}")
    finally:
        if not keep:
            big.unlink(missing_ok=True)
    return res


# ---------------------------------------------------------------------------- main


def parse_args(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benches.run", description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument(
        "--quick", action="store_true", help="small inputs, 1 run each (seconds to a minute)"
    )
    g.add_argument(
        "--smoke",
        action="store_true",
        help="tiny inputs from tests/data, small trained vocabs, one process per library "
        "(for the test suite; reads nothing outside the repository)",
    )
    ap.add_argument(
        "--only",
        nargs="+",
        choices=SECTIONS,
        metavar="SECTION",
        help=f"run only these sections ({', '.join(SECTIONS)})",
    )
    ap.add_argument(
        "--out", type=Path, default=None, help=f"output and cache folder (default {DEFAULT_OUT})"
    )
    ap.add_argument(
        "--runs", type=int, default=None, help="repetitions per measurement (median is reported)"
    )
    ap.add_argument(
        "--no-publish",
        action="store_true",
        help="never write the repo-root BENCHMARKS.md / docs/benchmarks.png",
    )
    ap.add_argument(
        "--keep-big-file", action="store_true", help="keep the memory section's big file"
    )
    ap.add_argument(
        "--report-only",
        action="store_true",
        help="measure nothing: rewrite the report and chart from <out>/results.json",
    )
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.report_only:
        out_dir = (args.out or DEFAULT_OUT).resolve()
        results = json.loads((out_dir / "results.json").read_text())
        return write_outputs(
            results,
            out_dir,
            publish=results["mode"] == "full"
            and set(results["sections"]) == set(SECTIONS)
            and not args.no_publish,
        )
    mode = MODES["smoke" if args.smoke else "quick" if args.quick else "full"]
    if args.runs:
        from dataclasses import replace

        mode = replace(mode, runs=args.runs, batch_runs=args.runs, encode_runs=args.runs)
    sections = list(args.only) if args.only else list(SECTIONS)
    out_dir = (args.out or DEFAULT_OUT).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    cache = out_dir / "cache" / mode.name
    t_start = time.time()
    log(f"toksmith benchmarks: mode={mode.name}, sections={','.join(sections)}, out={out_dir}")

    results: dict = {
        "mode": mode.name,
        "runs": mode.runs,
        "sections": sections,
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "machine": machine_info(8 if mode.name == "smoke" else 40),
        "checks": [],
    }
    checks = results["checks"]
    data = D.prepare(mode, cache, log=log)
    results["data"] = {"sizes": data["sizes"], "corpora": data["corpora"]}
    from .vocabs import prepare_vocabs

    need_vocabs = any(
        s in sections for s in ("encode", "batch", "decode", "load", "worst", "memory")
    )
    specs = (
        prepare_vocabs(
            mode,
            cache,
            data,
            want_hf=any(s in sections for s in ("encode", "batch", "decode", "load")),
            log=log,
        )
        if need_vocabs
        else {}
    )
    results["vocabs"] = {
        k: {kk: vv for kk, vv in v.items() if kk not in ("ranks", "hf")} for k, v in specs.items()
    }
    ex = Executor(mode, out_dir / "logs")

    if "train" in sections:
        results["train"] = section_train(mode, ex, data, cache, checks)
    if "encode" in sections or "decode" in sections:
        results["encode"] = section_encode(
            mode, ex, data, specs, checks, do_decode="decode" in sections
        )
    if "batch" in sections:
        results["batch"] = section_batch(mode, ex, data, specs, checks)
    if "load" in sections:
        results["load"] = section_load(mode, ex, data, specs, cache, checks)
    if "worst" in sections:
        results["worst"] = section_worst(mode, ex, data, specs, checks)
    if "memory" in sections:
        log("[memory] toksmith encode CLI")
        try:
            results["memory"] = section_memory(
                mode, data, specs, cache, out_dir, checks, args.keep_big_file
            )
        except Exception as e:  # noqa: BLE001
            results["memory"] = {"error": f"not measured: {type(e).__name__}: {e}"}

    results["machine"]["loadavg_end"] = os.getloadavg()
    results["machine"]["control_end"] = parallel_control(rounds=8 if mode.name == "smoke" else 40)
    results["machine"]["extension_end"] = extension_builds()
    results["duration_s"] = time.time() - t_start
    results["worker_processes"] = ex.n

    publish = mode.name == "full" and set(sections) == set(SECTIONS) and not args.no_publish
    rc = write_outputs(results, out_dir, publish)
    log(f"done in {results['duration_s']:.0f} s ({ex.n} worker processes)")
    return rc


def write_outputs(results: dict, out_dir: Path, publish: bool) -> int:
    """results.json, the chart and BENCHMARKS.md; 1 if an equality check failed."""
    from .report import render, targets

    results["targets"] = targets(results)
    (out_dir / "results.json").write_text(json.dumps(results, indent=1, default=str))
    png = out_dir / "benchmarks.png"
    try:
        from .chart import draw

        draw(results, png)
        chart_ok = True
    except Exception as e:  # noqa: BLE001
        log(f"[chart] not drawn: {type(e).__name__}: {e}")
        chart_ok = False
    report_path = (REPO / "BENCHMARKS.md") if publish else (out_dir / "BENCHMARKS.md")
    chart_ref = "docs/benchmarks.png" if publish else "benchmarks.png"
    report_path.write_text(render(results, chart_ref if chart_ok else None, publish=publish))
    if publish and chart_ok:
        (REPO / "docs").mkdir(exist_ok=True)
        shutil.copyfile(png, REPO / "docs" / "benchmarks.png")
    log(f"report: {report_path}")
    failed = [c for c in results["checks"] if not c["ok"]]
    for c in failed:
        log(f"CHECK FAILED: {c['name']}: {c['detail']}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
