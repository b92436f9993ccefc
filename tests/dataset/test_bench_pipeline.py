"""The pipeline benchmark's tiktoken job (benches/pipeline.py) is the same job as ``toksmith
tokenize --format bin --eos``: on a small .jsonl.zst and parquet input its shards are byte for
byte toksmith's."""

import filecmp
import json
import os
import sys
from pathlib import Path

import pytest

from toksmith.dataset import tokenize_dataset

from .conftest import real_documents

REPO = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(REPO))  # benches/ is a folder of the repository, not an installed package

from benches import pipeline  # noqa: E402


@pytest.mark.parametrize("kind", ["jsonl.zst", "parquet"])
def test_tiktoken_job_writes_toksmiths_shards(gpt2, tmp_path, monkeypatch, kind):
    pytest.importorskip("tiktoken")
    import pyarrow as pa
    import pyarrow.parquet as pq
    import zstandard

    docs = real_documents() * 3
    path = tmp_path / f"part-00.{kind}"
    if kind == "parquet":
        pq.write_table(pa.table({"text": docs}), path, row_group_size=50)
    else:
        lines = "".join(json.dumps({"text": d}) + "\n" for d in docs).encode("utf-8")
        path.write_bytes(zstandard.ZstdCompressor().compress(lines))
    monkeypatch.setattr(pipeline, "SHARD_TOKENS", 1000)
    monkeypatch.setattr(pipeline, "BATCH_DOCS", 7)
    ranks = str(REPO / "tests" / "data" / "vocabs" / "gpt2.tiktoken")
    pipeline.tiktoken_job([str(path)], ranks, str(tmp_path / "tt"))
    m = tokenize_dataset(
        [str(path)], gpt2, str(tmp_path / "ts"), eos="<|endoftext|>", shard_tokens=1000,
        progress=False,
    )  # fmt: skip
    names = sorted(f for s in m["inputs"][0]["shards"] for f in s["files"])
    assert len(names) > 3 and sorted(os.listdir(tmp_path / "tt")) == names
    for n in names:
        assert filecmp.cmp(tmp_path / "tt" / n, tmp_path / "ts" / n, shallow=False), n
