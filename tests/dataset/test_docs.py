"""The Python recipes of docs/datasets.md run as written, each against the library it is for:
Hugging Face datasets, datatrove and litdata where installed (the test is skipped, saying so,
where one is not); the PyTorch recipe with torch, or else with a stand-in of the three torch
names it uses (torch is too large for the test extra)."""

import importlib.util
import os
import re
import runpy
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from toksmith.dataset import iter_documents, read_shard

DOC = Path(__file__).parent.parent.parent / "docs" / "datasets.md"
EOT = 50256


def blocks():
    text = DOC.read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, re.S)


def block(marker):
    found = [b for b in blocks() if marker in b]
    assert len(found) == 1, marker
    return found[0]


def run(code, scope):
    exec(compile(code, str(DOC), "exec"), scope)
    return scope


@pytest.fixture
def workdir(tmp_path, monkeypatch, gpt2):
    """The folder the recipes run in: the API recipe's corpus and shards, and tokenizer.json."""
    monkeypatch.chdir(tmp_path)
    gpt2.save(str(tmp_path / "tokenizer.json"))
    scope = run(block("manifest = tokenize_dataset("), {})
    return tmp_path, scope


def test_every_block_is_tested():
    markers = [
        "manifest = tokenize_dataset(",
        "def windows(",
        "class ShardDataset(",
        "encode_ordinary_batch_to_numpy([",
        "import datasets",
        "class ToksmithTokenizer(",
        "litdata.optimize(",
    ]
    assert sorted(markers) == sorted(m for m in markers for b in blocks() if m in b)
    assert len(blocks()) == len(markers)


def test_api_and_array_recipes(workdir):
    path, scope = workdir
    run(block("def windows("), scope)
    run(block("encode_ordinary_batch_to_numpy(["), scope)
    assert os.path.exists(path / "shards" / "manifest.json")


def _torch_stand_in():
    """The torch names the recipe uses: IterableDataset, get_worker_info, from_numpy."""
    torch = types.ModuleType("torch")
    data = types.ModuleType("torch.utils.data")
    data.IterableDataset = type("IterableDataset", (), {})
    data.get_worker_info = lambda: None
    torch.utils = types.SimpleNamespace(data=data)
    torch.from_numpy = np.asarray
    return torch


def test_torch_iterable_dataset_recipe(workdir, monkeypatch):
    _, scope = workdir
    run(block("def windows("), scope)
    if importlib.util.find_spec("torch") is None:
        monkeypatch.setitem(sys.modules, "torch", _torch_stand_in())
    run(block("class ShardDataset("), scope)
    pairs = list(scope["ShardDataset"]("shards", seq_len=4))
    stream = np.concatenate([np.asarray(d) for d in iter_documents("shards")])
    assert pairs and len(pairs) == (len(stream) - 1) // 4
    for x, y in pairs:
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape == (4,) and (x[1:] == y[:-1]).all()
        # each window is a run of the shard's tokens
        starts = np.flatnonzero(stream[:-4] == x[0])
        assert any((stream[s : s + 5] == np.append(x, y[-1])).all() for s in starts)


def test_hugging_face_datasets_recipe(workdir, gpt2):
    pytest.importorskip("datasets")
    # run as a script of its own (datasets pickles `tokenize` with what it uses from __main__)
    path, _ = workdir
    script = path / "recipe.py"
    script.write_text(block("import datasets"), encoding="utf-8")
    ds = runpy.run_path(str(script), run_name="__main__")["ds"]
    want = [gpt2.encode_ordinary(t) + [EOT] for t in ("hello world", "second document")]
    assert [row["ids"] for row in ds] == want
    assert [row["n_tokens"] for row in ds] == [len(w) for w in want]


def test_datatrove_recipe(workdir, gpt2):
    pytest.importorskip("datatrove")
    path, scope = workdir
    run(block("class ToksmithTokenizer("), scope)
    shard = read_shard(str(path / "tokens" / "00000_toksmith.ds"), "datatrove")
    docs = [d.tolist() for d in shard.documents()]
    assert docs == [gpt2.encode_ordinary(t) + [EOT] for t in ("hello world", "second document")]


def test_litdata_recipe(workdir, gpt2):
    """Run as the docs say (a script: litdata's workers start with spawn), then read back."""
    pytest.importorskip("torch")
    litdata = pytest.importorskip("litdata")
    path, _ = workdir
    script = path / "litdata_recipe.py"
    script.write_text(block("litdata.optimize("), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=path, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    ds = litdata.StreamingDataset(
        str(path / "litdata-tokens"), item_loader=litdata.TokensLoader(block_size=5)
    )
    stream = [int(i) for item in ds for i in item]
    want = sum((gpt2.encode_ordinary(t) + [EOT] for t in ("hello world", "second document")), [])
    assert stream == want[: len(stream)] and len(stream) >= 5
