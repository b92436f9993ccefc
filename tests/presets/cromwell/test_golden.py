"""Golden regression for Cromwell's training (one stage, the default, and two stages): a fixed
corpus gives these merges and these ids. A change here changes every trained Cromwell
tokenizer: it must be deliberate."""

from __future__ import annotations

import hashlib

from tests.conftest import DATA
from toksmith.presets import cromwell

SLICES = [DATA / "corpora" / f"{n}_slice.txt" for n in ("python", "cpp", "javascript", "english")]
SAMPLE = "def add(a, b):\n    return a + b\n\nif (x !== 0x1F) {\n\tthis._m = y;\n}\n"
LINE_RANKS_SHA256 = "7767470bcaa8d0518adc7ebc20882a8808bb0e492688a81a08f0f2d4fe307830"
# fmt: off
LINE_SAMPLE_IDS = [
    377, 273, 1089, 48, 105, 52, 301, 393, 270, 412, 105, 40, 51, 301, 326, 441, 48, 128, 40, 41,
    69, 69, 40, 56, 128, 57, 78, 49, 529, 425, 269, 290, 928, 117, 584, 323, 67, 18, 133, 18,
]
# fmt: on
RANKS_SHA256 = "88131f49d851a1cf8ce63da19fcd5440011b50d2c6b308e450405f05fe8e9fe9"
# fmt: off
SAMPLE_IDS = [
    588, 271, 108, 108, 48, 105, 52, 296, 1021, 1018, 1022, 271, 40, 51, 296, 321, 352, 434, 128,
    40, 41, 69, 69, 1035, 128, 57, 78, 49, 284, 1026, 563, 292, 901, 117, 364, 325, 67, 18, 133, 18,
]
# fmt: on


def _ranks_digest(ranks):
    ordered = sorted(ranks.items(), key=lambda item: item[1])
    return hashlib.sha256(b"".join(t + b"\0" + str(i).encode() + b"\n" for t, i in ordered))


def test_one_stage_training_is_stable():
    texts = [p.read_text(encoding="utf-8")[:30000] for p in SLICES]
    code = cromwell.train(texts, vocab_size=1200)
    ranks = code.tokenizer.mergeable_ranks()
    assert code.tokenizer.pattern == cromwell.LINE_PATTERN
    assert _ranks_digest(ranks).hexdigest() == LINE_RANKS_SHA256
    assert code.encode(SAMPLE) == LINE_SAMPLE_IDS
    assert code.decode(LINE_SAMPLE_IDS) == SAMPLE
    # the same corpus from a one-shot iterator, on one thread, gives the same tokenizer
    again = cromwell.train(iter(texts), vocab_size=1200, threads=1)
    assert again.tokenizer.mergeable_ranks() == ranks


def test_two_stage_training_is_stable():
    texts = [p.read_text(encoding="utf-8")[:30000] for p in SLICES]
    code = cromwell.train(texts, vocab_size=1200, superword_share=0.2)
    ranks = code.tokenizer.mergeable_ranks()
    assert code.tokenizer.metadata["superword_merges"] == int((1200 - 264) * 0.2)
    assert _ranks_digest(ranks).hexdigest() == RANKS_SHA256
    assert code.encode(SAMPLE) == SAMPLE_IDS
    assert code.decode(SAMPLE_IDS) == SAMPLE
    # the same corpus from a one-shot iterator, on one thread, gives the same tokenizer
    again = cromwell.train(iter(texts), vocab_size=1200, threads=1, superword_share=0.2)
    assert again.tokenizer.mergeable_ranks() == ranks
