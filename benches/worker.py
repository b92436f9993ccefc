"""Runs measurements in a (fresh) process: ``python -m benches.worker TASKS.json RESULTS.json``.

Each task is a dict with a ``kind`` (train, train_phases, encode, batch, worst); the results
file gets one dict per task (``{"error": ...}`` if it failed). Timings are taken here, around the
measured call only (no interpreter start, imports or file reading); peak RSS of the whole
process is taken by the parent with ``os.wait4``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import resource
import sys
import time
import traceback
from array import array
from typing import Callable, Dict, List, Tuple

from . import data as D


def cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def maxrss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def timed(fn: Callable[[], object]) -> Tuple[object, float, float]:
    c0 = cpu_s()
    t0 = time.perf_counter()
    out = fn()
    t1 = time.perf_counter()
    return out, t1 - t0, cpu_s() - c0


def digest(seqs) -> str:
    h = hashlib.blake2b(digest_size=16)
    for s in seqs:
        a = array("I", s)
        h.update(len(a).to_bytes(8, "little"))
        h.update(a.tobytes())
    return h.hexdigest()


# ---------------------------------------------------------------------------- training


def task_train(t: Dict) -> Dict:
    lib, vocab, regex = t["lib"], t["vocab_size"], t["regex"]
    corpus = t["corpus"]
    if lib == "toksmith":
        import toksmith

        def run():
            tok = toksmith.train_from_iterator(D.iter_docs(corpus), vocab_size=vocab, pattern=regex)
            return tok.mergeable_ranks()
    elif lib == "rustbpe":
        import rustbpe

        def run():
            tok = rustbpe.Tokenizer()
            tok.train_from_iterator(D.iter_docs(corpus), vocab, pattern=regex)
            return dict(tok.get_mergeable_ranks())
    else:
        raise ValueError(f"unknown trainer {lib}")
    base = maxrss_kb()
    ranks, wall, cpu = timed(run)
    from .vocabs import write_tiktoken

    write_tiktoken(ranks, t["ranks_out"])
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "baseline_rss_kb": base,
        "self_maxrss_kb": maxrss_kb(),
        "n_ranks": len(ranks),
    }


def task_train_phases(t: Dict) -> Dict:
    """toksmith only: time the counting and merging phases separately (internal API)."""
    import toksmith
    from toksmith import _core
    from toksmith.corpus import batched

    counter = _core.ChunkCounter(t["regex"], [])

    def count():
        for b in batched(D.iter_docs(t["corpus"])):
            counter.add_texts(b, 0)

    _, count_wall, count_cpu = timed(count)
    stats = counter.stats()
    pairs, merge_wall, merge_cpu = timed(lambda: counter.train(t["vocab_size"] - 256, None, 0))
    return {
        "count_wall_s": count_wall,
        "count_cpu_s": count_cpu,
        "merge_wall_s": merge_wall,
        "merge_cpu_s": merge_cpu,
        "unique_chunks": stats.get("unique"),
        "pieces": stats.get("pieces"),
        "merges": len(pairs),
        "toksmith": toksmith.__version__,
    }


# ---------------------------------------------------------------------------- encoding


def task_encode(t: Dict) -> Dict:
    """Warm up on other documents, then: one large string (once), the documents one by one
    (once), decode of the large string's ids (a first call, then the median of 3 more) and the
    streaming decoder."""
    from .libs import make

    a = make(t["lib"], t["spec"])
    warm = D.read_docs(t["warm"])
    a.encode_each(warm)
    text = D.read_text(t["text"])
    docs = D.read_docs(t["docs"])
    text_bytes = D.nbytes(text)
    docs_bytes = sum(map(D.nbytes, docs))
    res: Dict = {"text_bytes": text_bytes, "docs_bytes": docs_bytes, "docs": len(docs)}

    ids, wall, cpu = timed(lambda: a.encode(text))
    res.update(text_s=wall, text_cpu_s=cpu, text_tokens=len(ids), text_digest=digest([ids]))
    out, wall, cpu = timed(lambda: a.encode_each(docs))
    res.update(docs_s=wall, docs_cpu_s=cpu, docs_tokens=sum(map(len, out)), docs_digest=digest(out))
    del out
    if t.get("decode", True):
        # The first call in a process grows per-thread buffers and heap (one-time costs): it is
        # reported on its own, and the rate is the median of the 3 calls after it.
        s, first, _cpu = timed(lambda: a.decode(ids))
        ok = s == text
        del s
        res.update(decode_first_s=first)
        times = []
        for _ in range(3):
            s, wall, _cpu = timed(lambda: a.decode(ids))
            times.append(wall)
            ok = ok and s == text
        res.update(decode_s=sorted(times)[1], decode_roundtrip=ok)
        sids = ids[: t.get("stream_tokens", 100_000)]
        try:
            s, wall, _cpu = timed(lambda: a.stream_decode(sids))
        except Exception as e:  # noqa: BLE001
            res.update(stream_error=f"{type(e).__name__}: {e}")
        else:
            if s is not None:
                res.update(stream_s=wall, stream_tokens=len(sids), stream_ok=(s == a.decode(sids)))
    return res


def task_batch(t: Dict) -> Dict:
    from .libs import make

    a = make(t["lib"], t["spec"])
    threads = t["threads"]
    warm = D.read_docs(t["warm"])
    a.encode_batch(warm, threads)
    docs = D.read_docs(t["docs"])
    out, wall, cpu = timed(lambda: a.encode_batch(docs, threads))
    return {
        "docs_bytes": sum(map(D.nbytes, docs)),
        "docs": len(docs),
        "batch_s": wall,
        "batch_cpu_s": cpu,
        "threads": threads,
        "docs_digest": digest(out),
        "tokens": sum(map(len, out)),
    }


# ---------------------------------------------------------------------------- worst cases


def _probe(encode, text: str, size: int, cap_s: float) -> Tuple[bool, float, list]:
    """Encode growing prefixes (4 KB, 16 KB, ... up to a quarter of the text), fit t ~ n^k on
    the last two and predict the full time; stop as soon as the prediction is well under the
    cap, or when the next probe alone would be too long. Each probe is the best of up to 3
    tries (one time-slice lost on a busy machine must not look like a blow-up).
    Returns (run it?, predicted seconds, probes)."""
    n = len(text)
    probes: List[Tuple[int, float]] = []

    def best_time(chars: int) -> float:
        best = math.inf
        for _ in range(3):
            _, wall, _ = timed(lambda: encode(text[:chars]))
            best = min(best, wall)
            if wall > 0.2:
                break
        return best

    k = 2.0  # pessimistic until there are two points
    p = 4096
    while p * 4 <= size:
        wall = best_time(max(1, n * p // size))
        probes.append((p, wall))
        if len(probes) >= 2:
            (p1, t1), (p2, t2) = probes[-2], probes[-1]
            k = min(max(math.log(max(t2, 1e-7) / max(t1, 1e-7)) / math.log(p2 / p1), 1.0), 3.0)
        pred = wall * (size / p) ** k
        if pred <= cap_s / 2:
            return True, pred, probes
        if wall * 4**k > cap_s / 4:  # the next probe alone would be too long
            break
        p *= 4
    if not probes:
        return True, 0.0, probes
    p_last, t_last = probes[-1]
    pred = t_last * (size / p_last) ** k
    return pred <= cap_s, pred, probes


def task_worst(t: Dict) -> Dict:
    from .libs import make

    a = make(t["lib"], t["spec"])
    # warm up on ordinary text (as in the encode section)
    a.encode_each(D.read_docs(t["warm"]))
    out = {}
    for case in t["cases"]:
        text = D.read_text(case["path"])
        size = D.nbytes(text)
        key = f"{case['kind']}_{case['size']}"
        try:
            # normal text is linear for every library: no probe (it would also warm caches)
            run, pred, probes = (
                (True, 0.0, [])
                if case["kind"] == "normal"
                else _probe(a.encode, text, size, t["cap_s"])
            )
            if not run:
                out[key] = {"skipped": True, "predicted_s": pred, "bytes": size}
                continue
            ids, wall, cpu = timed(lambda: a.encode(text))
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:  # noqa: BLE001  (pyo3 panics are BaseException)
            out[key] = {"error": f"{type(e).__name__}: {e}"[:200], "bytes": size}
            continue
        out[key] = {
            "s": wall,
            "cpu_s": cpu,
            "bytes": size,
            "tokens": len(ids),
            "digest": digest([ids]),
        }
        del ids
    return {"cases": out}


# ---------------------------------------------------------------------------- loading


def task_load(t: Dict) -> Dict:
    """Read one tokenizer file in a fresh process (the library imported first, untimed), then
    encode a sample with it."""
    from .libs import loader

    load, encode = loader(t["lib"], t["format"], t["spec"], t["paths"])
    tok, wall, cpu = timed(load)
    sample = D.read_text(t["sample"])[: t["sample_chars"]]
    return {"s": wall, "cpu_s": cpu, "digest": digest([encode(tok, sample)])}


TASKS = {
    "train": task_train,
    "train_phases": task_train_phases,
    "encode": task_encode,
    "batch": task_batch,
    "worst": task_worst,
    "load": task_load,
}


def pin_one_cpu() -> None:
    """Pin this process to one CPU, before any library is imported: a library that sizes its
    thread pool from the CPU count (``std::thread::available_parallelism`` follows the affinity
    mask) then runs on one core too, as the one-thread sections mean."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    inp, outp = argv
    if os.environ.get("TOKSMITH_BENCH_ONE_CPU") == "1":
        pin_one_cpu()
    with open(inp) as f:
        tasks = json.load(f)
    results = []
    for t in tasks:
        try:
            r = TASKS[t["kind"]](t)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:  # noqa: BLE001  (pyo3 panics are BaseException)
            r = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
        results.append(r)
        with open(outp, "w") as f:  # written after each task: a timeout keeps what finished
            json.dump(results, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
