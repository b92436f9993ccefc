"""Run modes (full / quick / smoke): sizes, repetitions, where the data comes from."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Tuple

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "benches" / "out"

SECTIONS = ("train", "encode", "batch", "decode", "load", "worst", "memory")

#: patterns measured by the encode / batch / decode / worst-case sections
ENCODE_PATTERNS = ("gpt2", "cl100k", "o200k")
#: patterns measured by the training section (rustbpe gets the same regex text)
TRAIN_PATTERNS = ("cl100k", "nanochat")
#: encoders compared (rustbpe is a trainer; its encoder is not a tiktoken-compatible peer)
ENCODE_LIBS = ("toksmith", "tiktoken", "fastokens", "hf")
TRAIN_LIBS = ("toksmith", "rustbpe")
#: tokenizer files loaded by the load section, and the libraries that read each
LOAD_FORMATS = {
    "tiktoken": ("toksmith", "tiktoken", "fastokens"),
    "tokenizer.json": ("toksmith", "fastokens", "hf"),
    "toksmith": ("toksmith",),
}
WORST_KINDS = ("normal", "letter", "unicode", "digits", "spaces")
WORST_LIBS = ("toksmith", "tiktoken")


def shared_data_dir() -> Path:
    """``$TOKSMITH_BENCH_DATA`` or ``<repo>/../shared/data`` (vocabs/ and corpora/ inside)."""
    env = os.environ.get("TOKSMITH_BENCH_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


@dataclass(frozen=True)
class Mode:
    name: str
    runs: int
    train_bytes: int
    train_vocabs: Tuple[int, ...]
    trained_vocab: int  # size of the vocab trained for patterns without a real rank file
    text_bytes: int  # the "one large string"
    docs_bytes: int  # the list of 1-10 KB documents
    warm_bytes: int  # warm-up documents (disjoint from the measured texts)
    worst_sizes: Tuple[int, int]
    memory_bytes: int
    isolate: bool  # one process per measurement (else one process per library)
    cap_s: float  # skip a measurement predicted to take longer than this
    stream_tokens: int  # ids fed to the streaming decoders
    real_vocabs: bool  # use the real gpt2 / cl100k rank files
    source: str = "shared"  # "shared": ../shared/data corpora (.txt.xz); "tests": tests/data
    timeout_s: float = 1800.0
    #: runs of the batch section (0: ``runs``); its numbers are single short calls that depend on
    #: both cores staying free, so a busy moment moves one run's ratio far more than elsewhere
    batch_runs: int = 0
    #: runs of the encode section (0: ``runs``); the one-thread comparisons with the closest peer
    #: are within a few percent, where one run's noise decides a median of three
    encode_runs: int = 0
    extra: dict = field(default_factory=dict)


MODES = {
    "full": Mode(
        name="full",
        runs=3,
        train_bytes=50_000_000,
        train_vocabs=(8192, 32768),
        trained_vocab=65536,
        text_bytes=10_000_000,
        docs_bytes=10_000_000,
        warm_bytes=1_000_000,
        worst_sizes=(1_000_000, 10_000_000),
        memory_bytes=1_000_000_000,
        isolate=True,
        cap_s=60.0,
        stream_tokens=500_000,
        real_vocabs=True,
        batch_runs=5,
        encode_runs=5,
    ),
    "quick": Mode(
        name="quick",
        runs=1,
        train_bytes=2_000_000,
        train_vocabs=(2048, 4096),
        trained_vocab=4096,
        text_bytes=1_000_000,
        docs_bytes=1_000_000,
        warm_bytes=200_000,
        worst_sizes=(100_000, 1_000_000),
        memory_bytes=20_000_000,
        isolate=True,
        cap_s=20.0,
        stream_tokens=100_000,
        real_vocabs=True,
        timeout_s=600.0,
    ),
    "smoke": Mode(
        name="smoke",
        runs=1,
        train_bytes=200_000,
        train_vocabs=(300, 400),
        trained_vocab=600,
        text_bytes=60_000,
        docs_bytes=60_000,
        warm_bytes=10_000,
        worst_sizes=(4_000, 40_000),
        memory_bytes=300_000,
        isolate=False,
        cap_s=5.0,
        stream_tokens=5_000,
        real_vocabs=False,
        source="tests",
        timeout_s=120.0,
    ),
}
