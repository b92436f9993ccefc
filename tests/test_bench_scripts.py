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

from benches.scripts import SLICES, _family_table, classify  # noqa: E402


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
    for kind in ("one_thread", "batch"):
        for vocab in ("cl100k_base", "o200k_base"):
            table = res[kind][vocab]
            assert sorted(table) == sorted(SLICES)
            for row in table.values():
                assert row["ids_equal"] == {"toksmith": True, "tiktoken": True}
                assert row["mbps"]["toksmith"] > 0 and row["vs_tiktoken"] > 0
    assert "## Encoding by script" in (tmp_path / "scripts.md").read_text()
