"""Benchmark inputs, built once per mode into a cache folder and reused.

* the corpora (``../shared/data/corpora/*.txt.xz`` decompressed with lzma; ``tests/data/corpora``
  in smoke mode) are cut into documents of 1-10 KB at line boundaries and shuffled with a fixed
  seed;
* ``train.txt``: the training corpus (documents separated by ``SEP``), the first
  ``train_bytes`` of the shuffled documents;
* ``text.txt`` (one large string), ``docs.txt`` (the documents encoded one by one and in
  batch) and ``warm.txt`` (warm-up documents) are taken from the other end of the list, so the
  three are disjoint;
* worst cases: ``worst_<kind>_<size>.txt``.

Everything is read and written as UTF-8 with ``newline=""`` (no newline translation).
This module imports no tokenizer library, so a worker's memory baseline does not depend on it.
"""

from __future__ import annotations

import json
import lzma
import random
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

from .config import REPO, Mode, shared_data_dir

SEP = "\x1e"  # ASCII record separator: never in the corpora (checked)
SEED = 1234


def read_text(path) -> str:
    with open(path, "r", encoding="utf-8", newline="") as f:
        return f.read()


def write_text(path, text: str) -> None:
    tmp = Path(str(path) + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    tmp.replace(path)


def read_docs(path) -> List[str]:
    text = read_text(path)
    return text.split(SEP) if text else []


def iter_docs(path, block: int = 1 << 20) -> Iterator[str]:
    """Stream the documents of a ``SEP``-separated file (bounded memory)."""
    with open(path, "r", encoding="utf-8", newline="") as f:
        rest = ""
        while True:
            chunk = f.read(block)
            if not chunk:
                break
            parts = (rest + chunk).split(SEP)
            rest = parts.pop()
            yield from parts
        if rest:
            yield rest


def nbytes(s: str) -> int:
    return len(s.encode("utf-8"))


# ---------------------------------------------------------------------------- corpora


def load_sources(mode: Mode, cache: Path) -> List[Tuple[str, str]]:
    """(name, text) of each corpus, decompressed into ``cache/corpora`` on first use."""
    out = []
    if mode.source == "tests":
        for p in sorted((REPO / "tests" / "data" / "corpora").glob("*.txt")):
            out.append((p.stem, read_text(p)))
    else:
        src = shared_data_dir() / "corpora"
        files = sorted(src.glob("*.txt.xz"))
        if not files:
            raise FileNotFoundError(
                f"no corpora (*.txt.xz) in {src}; set TOKSMITH_BENCH_DATA to the folder holding "
                "vocabs/ and corpora/, or run with --smoke (uses tests/data)"
            )
        dest = cache.parent / "corpora"
        dest.mkdir(parents=True, exist_ok=True)
        for p in files:
            name = p.name[: -len(".txt.xz")]
            txt = dest / f"{name}.txt"
            if not txt.exists() or txt.stat().st_mtime < p.stat().st_mtime:
                with lzma.open(p, "rb") as f:
                    data = f.read()
                data.decode("utf-8")  # must be valid UTF-8
                tmp = txt.with_suffix(".tmp")
                tmp.write_bytes(data)
                tmp.replace(txt)
            out.append((name, read_text(txt)))
    if not out:
        raise FileNotFoundError("no corpus text found")
    for name, text in out:
        if SEP in text:
            raise ValueError(f"corpus {name} contains the document separator U+001E")
    return out


def split_docs(text: str, rng: random.Random, lo: int = 1024, hi: int = 10240) -> List[str]:
    """Cut ``text`` at line ends into documents of about ``lo``..``hi`` bytes."""
    docs: List[str] = []
    lines = text.splitlines(keepends=True)
    cur: List[str] = []
    size = 0
    target = rng.randint(lo, hi)
    for line in lines:
        cur.append(line)
        size += len(line)  # mostly ASCII: chars ~ bytes; the exact size is not important
        if size >= target:
            docs.append("".join(cur))
            cur, size, target = [], 0, rng.randint(lo, hi)
    if cur:
        docs.append("".join(cur))
    return [d for d in docs if d]


def _take(docs: List[str], start: int, step: int, budget: int) -> Tuple[List[str], int]:
    """Documents from index ``start`` going by ``step`` (cycling) until ``budget`` bytes."""
    out: List[str] = []
    total = 0
    i = start
    n = len(docs)
    while total < budget:
        d = docs[i % n]
        out.append(d)
        total += nbytes(d)
        i += step
        if len(out) > 50 * n:
            break
    return out, i


def _random_unicode(rng: random.Random, size: int) -> str:
    """Random code points, about ``size`` UTF-8 bytes: uniform over the code space, keeping only
    code points assigned in Python's Unicode database (``unicodedata``, an older Unicode version
    than any tokenizer's tables here), so every library classifies them alike (characters
    assigned later are letters for some libraries and unassigned for others). Surrogates and
    controls are excluded; most of what remains is private use (planes 15-16) and CJK."""
    import unicodedata

    chars = []
    total = 0
    while total < size:
        cps = [rng.randrange(0x20, 0x110000) for _ in range(8192)]
        s = "".join(chr(c) for c in cps if unicodedata.category(chr(c)) not in ("Cn", "Cs", "Cc"))
        chars.append(s)
        total += nbytes(s)
    text = "".join(chars)
    b = text.encode("utf-8")[:size]  # trim to the size, on a character boundary
    return b.decode("utf-8", errors="ignore")


def worst_text(kind: str, size: int, normal: str, seed: int = SEED) -> str:
    rng = random.Random(seed + size)
    if kind == "letter":
        return "a" * size
    if kind == "spaces":
        return " " * size
    if kind == "digits":
        return "".join(rng.choices("0123456789", k=size))
    if kind == "unicode":
        return _random_unicode(rng, size)
    if kind == "normal":
        if not normal:
            raise ValueError("no normal text")
        reps = size // max(1, nbytes(normal)) + 1
        b = (normal * reps).encode("utf-8")[:size]
        return b.decode("utf-8", errors="ignore")
    raise ValueError(f"unknown worst-case kind {kind!r}")


# ---------------------------------------------------------------------------- building


def prepare(mode: Mode, cache: Path, log=print) -> Dict[str, object]:
    """Build (or reuse) the inputs; return their paths and sizes."""
    from .config import WORST_KINDS

    cache.mkdir(parents=True, exist_ok=True)
    manifest_path = cache / "data.json"
    key = {
        "v": 5,
        "mode": mode.name,
        "train": mode.train_bytes,
        "text": mode.text_bytes,
        "docs": mode.docs_bytes,
        "warm": mode.warm_bytes,
        "worst": list(mode.worst_sizes),
        "source": mode.source,
    }
    if manifest_path.exists():
        try:
            man = json.loads(manifest_path.read_text())
            if man.get("key") == key and all(Path(p).exists() for p in man["files"].values()):
                return man
        except (ValueError, KeyError):
            pass
    log(f"[data] building {mode.name} inputs in {cache}")
    sources = load_sources(mode, cache)
    rng = random.Random(SEED)
    docs: List[str] = []
    for _name, text in sources:
        docs.extend(split_docs(text, rng))
    rng.shuffle(docs)
    files: Dict[str, str] = {}
    sizes: Dict[str, int] = {}

    train, _ = _take(docs, 0, 1, mode.train_bytes)
    p = cache / "train.txt"
    write_text(p, SEP.join(train))
    files["train"], sizes["train"] = str(p), sum(map(nbytes, train))
    sizes["train_docs"] = len(train)

    # measured texts from the end of the list, going backwards (disjoint from each other)
    text_docs, i = _take(docs, len(docs) - 1, -1, mode.text_bytes)
    batch_docs, i = _take(docs, i, -1, mode.docs_bytes)
    warm_docs, i = _take(docs, i, -1, mode.warm_bytes)
    text = "".join(text_docs)
    for name, content, n in (
        ("text", text, nbytes(text)),
        ("docs", SEP.join(batch_docs), sum(map(nbytes, batch_docs))),
        ("warm", SEP.join(warm_docs), sum(map(nbytes, warm_docs))),
    ):
        p = cache / f"{name}.txt"
        write_text(p, content)
        files[name], sizes[name] = str(p), n
    sizes["docs_count"] = len(batch_docs)

    # normal text: the small size from the documents, the large one from the large string, so
    # the two never share text (a piece cache warmed by one would flatter the other)
    docs_text = "".join(batch_docs)
    for kind in WORST_KINDS:
        for size in mode.worst_sizes:
            s = worst_text(kind, size, text if size == max(mode.worst_sizes) else docs_text)
            p = cache / f"worst_{kind}_{size}.txt"
            write_text(p, s)
            files[f"worst_{kind}_{size}"] = str(p)
            sizes[f"worst_{kind}_{size}"] = nbytes(s)
    man = {"key": key, "files": files, "sizes": sizes, "corpora": [n for n, _ in sources]}
    manifest_path.write_text(json.dumps(man, indent=1))
    return man


def make_big_file(path: Path, size: int, seed_text: str, block: int = 8 << 20) -> int:
    """Write about ``size`` bytes by repeating ``seed_text``; return the bytes written."""
    unit = seed_text.encode("utf-8")
    if not unit:
        raise ValueError("empty seed text")
    if len(unit) > size:  # cut on a character boundary
        unit = unit[:size].decode("utf-8", errors="ignore").encode("utf-8")
    reps = max(1, block // len(unit))
    chunk = unit * reps
    written = 0
    with open(path, "wb") as f:
        while written + len(chunk) <= size:
            f.write(chunk)
            written += len(chunk)
        # finish with whole copies of the unit so the file stays valid UTF-8
        while written < size:
            f.write(unit)
            written += len(unit)
    return written
