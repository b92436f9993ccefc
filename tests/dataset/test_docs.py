"""The Python recipes of docs/datasets.md run as written (those that need neither torch nor
Hugging Face datasets, which the tests do not install)."""

import os
import re
from pathlib import Path

DOC = Path(__file__).parent.parent.parent / "docs" / "datasets.md"


def blocks():
    text = DOC.read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_recipes_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runnable = [b for b in blocks() if "import torch" not in b and "import datasets" not in b]
    assert len(runnable) == 2
    scope: dict = {}
    for code in runnable:
        exec(compile(code, str(DOC), "exec"), scope)
    assert os.path.exists(tmp_path / "shards" / "manifest.json")
