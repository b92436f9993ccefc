"""Every ```python block of README.md runs as pasted, in order, in one namespace, in an empty
folder, within a time budget (issue 34: the blocks used names they never defined)."""

import os
import re
import textwrap
import time
import warnings
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
BUDGET_S = 60.0


def python_blocks(text: str):
    """(line number, code) of each ```python fenced block (indented ones, in list items, too)."""
    return [
        (text.count("\n", 0, m.start()) + 2, textwrap.dedent(m.group(2)))
        for m in re.finditer(r"^( *)```python\n(.*?)^\1```$", text, re.S | re.M)
    ]


def test_readme_has_python_blocks_and_preset_examples():
    text = README.read_text(encoding="utf-8")
    blocks = python_blocks(text)
    assert len(blocks) >= 5
    presets = text[text.index("## Presets") : text.index("## How it works")]
    for module in ("nanochat", "cromwell", "cppreason", "wordbpe", "calm"):
        assert any(module in code for _, code in python_blocks(presets)), module


def test_readme_python_blocks_run_in_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert os.listdir(tmp_path) == []
    namespace = {"__name__": "__main__"}
    t0 = time.perf_counter()
    for line, code in python_blocks(README.read_text(encoding="utf-8")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # small corpora may run out of pairs
            try:
                exec(compile(code, f"README.md:{line}", "exec"), namespace)
            except Exception as e:
                raise AssertionError(f"the README block at line {line} fails: {e!r}") from e
    elapsed = time.perf_counter() - t0
    assert elapsed < BUDGET_S, f"the README's Python blocks took {elapsed:.1f} s"
