"""The per-script benchmark (benches/scripts.py): its script classifier, and a smoke run on
tests/data only (toksmith and tiktoken; ids checked, exit status 0)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # benches/ is a folder of the repository, not an installed package

from benches.libs import (  # noqa: E402
    builtin_encoding,
    check_token_table,
    missing_reason,
    openai_encoding,
)
from benches.scripts import SLICES, _family_table, classify, mixed_documents  # noqa: E402
from benches.vocabs import read_tiktoken  # noqa: E402


@pytest.mark.parametrize(
    "line, family",
    [
        ("Paramètres de l'écran", "latin"),
        ("Настройки экрана", "cyrillic"),
        ("Ρυθμίσεις οθόνης", "greek"),
        ("画面の設定", "kana"),
        ("显示设置", "cjk"),
        ("화면 설정", "korean"),
        ("إعدادات الشاشة", "arabic_hebrew"),
        ("הגדרות תצוגה", "arabic_hebrew"),
        ("प्रदर्शन सेटिंग्स", "indic"),
        ("ಪ್ರದರ್ಶನ ಸಂಯೋಜನೆಗಳು", "indic"),
        ("การตั้งค่าหน้าจอ", "thai"),
        ("great job \U0001f44d\U0001f3fd", "emoji"),
        ("Display settings", None),
        ("12345 !?", None),
        ("GTK 3 (Настройки)", "cyrillic"),
    ],
)
def test_classify(line, family):
    assert classify(line, _family_table()) == family


def test_smoke_run(tmp_path):
    pytest.importorskip("tiktoken")
    env = dict(os.environ)
    env["TOKSMITH_BENCH_DATA"] = str(tmp_path / "no-shared-data-here")
    # benches/ from the checkout; toksmith from python/ only where the native module was built
    # in place (a development checkout), else the installed package (a clean clone in CI)
    paths = [str(REPO)]
    if any((REPO / "python" / "toksmith").glob("_core*.so")):
        paths.append(str(REPO / "python"))
    env["PYTHONPATH"] = os.pathsep.join(
        paths + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    proc = subprocess.run(
        [sys.executable, "-m", "benches.scripts", "--smoke", "--out", str(tmp_path)]
        + ["--libs", "toksmith", "tiktoken"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    res = json.loads((tmp_path / "scripts.json").read_text())
    # (nanochat: a small vocabulary of toksmith's nanochat preset trained on tests/data)
    assert res["vocabs"]["nanochat"]["source"].startswith("a 1,024-id tokenizer of toksmith's")
    for kind in ("one_thread", "batch"):
        for vocab in ("cl100k_base", "o200k_base", "nanochat"):
            table = res[kind][vocab]
            assert sorted(table) == sorted(SLICES)
            for row in table.values():
                assert row["ids_equal"] == {"toksmith": True, "tiktoken": True}
                assert row["mbps"]["toksmith"] > 0 and row["vs_tiktoken"] > 0
    for vocab in ("cl100k_base", "o200k_base", "nanochat"):
        sc = res["scaling"][vocab]  # toksmith's batch on mixed_docs, 2 threads / 1
        assert sc["ratio"] > 0 and sc["control"] > 0
    md = (tmp_path / "scripts.md").read_text()
    assert "## Speed per script (issue 37)" in md and "mixed_docs, 2 threads / 1 thread" in md


def test_mixed_documents_mix_code_prose_and_scripts():
    import random

    docs = mixed_documents(
        "smoke", random.Random(1), ["Настройки экрана", "显示设置"] * 200, 40_000
    )
    text = "".join(docs)
    assert len(docs) >= 8
    assert "#include" in text or "std::" in text  # C++
    assert "function" in text or "const " in text  # JavaScript
    assert "Настройки" in text and "显示设置" in text


def test_builtin_encodings_are_taken_only_for_openais_files(tmp_path):
    """Peers that have only built-in OpenAI encodings are measured only on OpenAI's own file
    and pattern, and their token table must be the file's."""
    cl100k = REPO / "tests" / "data" / "vocabs" / "cl100k_base.tiktoken"
    spec = {"name": "cl100k_base", "ranks": str(cl100k), "pattern": "cl100k"}
    assert openai_encoding(spec) == "cl100k_base"
    assert builtin_encoding(spec, "x") == "cl100k_base"
    assert openai_encoding(dict(spec, pattern="o200k")) is None
    other = tmp_path / "other.tiktoken"
    other.write_bytes(cl100k.read_bytes()[:-1])  # the last line without its newline
    with pytest.raises(RuntimeError, match="not OpenAI's cl100k_base or o200k_base"):
        builtin_encoding(dict(spec, ranks=str(other)), "x")
    ranks = read_tiktoken(cl100k)
    table = {r: t for t, r in ranks.items()}
    check_token_table("x", spec, table.get)
    table[1000] = b"?"
    with pytest.raises(RuntimeError, match="at rank 1000"):
        check_token_table("x", spec, table.get)
    assert missing_reason("toksmith") is None
    assert missing_reason("no-such-lib") is not None
