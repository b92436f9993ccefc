"""Every ```python block of README.md runs as pasted, in order, in one namespace, in an empty
folder, within a time budget (issue 34: the blocks used names they never defined)."""

import os
import re
import shutil
import subprocess
import textwrap
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
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
    t0 = time.process_time()  # CPU seconds (with the native threads'): not stretched by load
    for line, code in python_blocks(README.read_text(encoding="utf-8")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # small corpora may run out of pairs
            try:
                exec(compile(code, f"README.md:{line}", "exec"), namespace)
            except Exception as e:
                raise AssertionError(f"the README block at line {line} fails: {e!r}") from e
    elapsed = time.process_time() - t0
    assert elapsed < BUDGET_S, f"the README's Python blocks took {elapsed:.1f} s"
    # run in the clone, they would leave these behind: .gitignore covers them
    written = [p.name + ("/" if p.is_dir() else "") for p in tmp_path.iterdir()]
    assert "corpus/" in written and "tokenizer.json" in written
    assert_ignored(written)


def assert_ignored(names):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        raise AssertionError("this check needs git and the clone's .git")
    for name in names:
        r = subprocess.run(
            ["git", "-C", str(ROOT), "check-ignore", "-q", "--no-index", name],
            capture_output=True,
        )
        assert r.returncode == 0, f"{name} (written by the README) is not in .gitignore"


def test_gitignore_covers_readme_cli_outputs():
    text = README.read_text(encoding="utf-8")
    bash = "\n".join(re.findall(r"^```bash\n(.*?)^```$", text, re.S | re.M))
    outputs = sorted(set(re.findall(r"(?:-o|--output|>)\s+([\w./-]+)", bash)))
    assert "tokenizer.json" in outputs and "ids.txt" in outputs
    assert_ignored(outputs + ["target/", "build/", "python/toksmith/_core.abi3.so"])
