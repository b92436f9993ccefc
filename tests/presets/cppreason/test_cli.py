"""The CppReason preset on the command line."""

from __future__ import annotations

import io
import sys

import pytest

from toksmith.presets import cppreason
from toksmith.presets.cppreason import CppTokenizer

from . import train_tiny

CORPUS = """#include <vector>
// Compute the sum of the values in a buffer.
int sum_values(const std::vector<int>& values, size_t count) {
    int total = 0;
    for (size_t index = 0; index < count; ++index) {
        total += values[index];
    }
    return total;
}
@@ -1,2 +1,3 @@
--- a/buffer.cpp
+++ b/buffer.cpp
+    if (!buffer) return nullptr;
-    printf("value %d\\n", total);
"""


@pytest.fixture(scope="module")
def tok() -> CppTokenizer:
    return train_tiny(CORPUS)


@pytest.fixture(scope="module")
def saved(tok, tmp_path_factory):
    path = tmp_path_factory.mktemp("cpp") / "cpp.json"
    tok.save(path)
    return str(path)


def test_cli_train_with_a_missing_file_among_several(tmp_path, capsys):
    from toksmith.cli import main

    # was: exit 0, the file names trained on as texts
    good = tmp_path / "a.cpp"
    good.write_text("int widgetcount = widgetcount;\n" * 4, encoding="utf-8")
    out = str(tmp_path / "out.json")
    assert (
        main(
            [
                "cppreason",
                "train",
                str(good),
                str(tmp_path / "missing.cpp"),
                "-o",
                out,
                "--vocab-size",
                "1900",
                "--no-progress",
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert (
        err.startswith("toksmith cppreason: error: ")
        and "missing.cpp" in err
        and "Traceback" not in err
    )
    # a quoted glob among the files is expanded
    assert (
        main(
            [
                "cppreason",
                "train",
                str(good),
                str(tmp_path / "a*.cpp"),
                "-o",
                out,
                "--vocab-size",
                "1900",
                "--no-progress",
            ]
        )
        == 0
    )
    assert len(cppreason.load(out).encode("widgetcount")) == 1


def test_cli_text_that_is_not_utf8(saved, capsys, monkeypatch):
    from toksmith.cli import main

    # was: "toksmith cppreason: error: 'utf-8' codec can't encode character '\udcff' ..."
    stdin = io.TextIOWrapper(io.BytesIO(b"int \xff x;"), encoding="utf-8", errors="surrogateescape")
    monkeypatch.setattr(sys, "stdin", stdin)
    assert main(["cppreason", "encode", "-t", saved]) == 1
    assert "stdin is not valid UTF-8 (byte 0xff at offset 4" in capsys.readouterr().err
    # an argument with bytes that are not UTF-8 (Python passes them as lone surrogates)
    assert main(["cppreason", "encode", "-t", saved, "int \udcff x"]) == 1
    assert "the argument b'int \\xff x' is not valid UTF-8" in capsys.readouterr().err
    stdin = io.TextIOWrapper(io.BytesIO(b"20 \xff"), encoding="utf-8", errors="surrogateescape")
    monkeypatch.setattr(sys, "stdin", stdin)
    assert main(["cppreason", "decode", "-t", saved]) == 1
    assert "stdin is not valid UTF-8" in capsys.readouterr().err
    # valid UTF-8 on stdin still works
    monkeypatch.setattr(
        sys, "stdin", io.TextIOWrapper(io.BytesIO("int é;".encode()), encoding="utf-8")
    )
    assert main(["cppreason", "encode", "-t", saved]) == 0
    assert capsys.readouterr().out.split() == [
        str(i) for i in cppreason.load(saved).encode("int é;")
    ]


def test_cli_train_single_punctuation(tmp_path, capsys):
    from toksmith.cli import main

    src = tmp_path / "a.cpp"
    src.write_text(CORPUS * 4, encoding="utf-8")
    for flag, words in (([], ["f", "();"]), (["--single-punctuation"], ["f", "(", ")", ";"])):
        out = tmp_path / f"t{len(flag)}.json"
        argv = ["cppreason", "train", str(src), "-o", str(out), "--vocab-size", "1900"]
        assert main([*argv, *flag, "--no-progress"]) == 0
        assert cppreason.load(out).words("f();") == words
    capsys.readouterr()
