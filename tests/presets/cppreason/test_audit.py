"""Regressions from an audit of the CppReason preset (seed 001): lone surrogates, ``line_start``
and the diff headers, argument types, lists of globs, and the command line's handling of
missing files and text that is not UTF-8."""

from __future__ import annotations

import io
import sys
import warnings

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import toksmith
from toksmith.presets import cppreason
from toksmith.presets.cppreason import FIXED_IDS, CppTokenizer

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


# (joined from a list: st.text drops surrogates from its alphabet)
SURROGATE_TEXT = st.lists(
    st.one_of(
        st.characters(),
        st.sampled_from(
            ["\ud800", "\udfff", "\udc80", "\ud83d", "\ude00", "\u2581", "\n", "+", "-"]
        ),
    ),
    max_size=30,
).map("".join)


def _fixed(text: str) -> str:
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


# ---- lone surrogates: U+FFFD, as toksmith.Tokenizer.encode and the README promise -------------


def test_lone_surrogates_are_replaced_not_a_unicode_error(tok):
    # was: UnicodeEncodeError: 'utf-8' codec can't encode character '\ud800' ... from encode,
    # encode_ordinary_batch, words, tokenize, encode_fim and encode_diff
    text = "int x\ud800y = \udfff;"
    same = "int x\ufffdy = \ufffd;"
    assert tok.encode(text) == tok.encode(same)
    assert tok.encode_ordinary_batch([text, "int"]) == [tok.encode(same), tok.encode("int")]
    assert tok.words(text) == tok.words(same)
    assert tok.tokenize(text) == tok.tokenize(same)
    assert tok.encode_fim(text, "\ud800", "a\udc80") == tok.encode_fim(same, "\ufffd", "a\ufffd")
    assert tok.encode_diff("+\ud800\n", message="m\udfff") == tok.encode_diff(
        "+\ufffd\n", message="m\ufffd"
    )
    assert tok.decode(tok.encode(text)) == tok.decode(tok.encode(same))


@settings(max_examples=60, deadline=None)
@given(st.lists(SURROGATE_TEXT, max_size=6))
def test_batch_equals_one_by_one(texts):
    tok = _TOK[0]
    assert tok.encode_ordinary_batch(texts) == [tok.encode(t) for t in texts]
    assert tok.encode_ordinary_batch(texts) == [tok.encode(_fixed(t)) for t in texts]


_TOK: list = []


@pytest.fixture(scope="module", autouse=True)
def _share(tok):
    # hypothesis tests cannot take a function-scoped fixture: they read the module's one here
    if not _TOK:
        _TOK.append(tok)


def test_train_on_texts_with_lone_surrogates():
    # was: UnicodeEncodeError from the native word counter
    with pytest.raises(
        toksmith.CorpusDecodeError, match=r'lone surrogate \(U\+D800 at index 5\).*errors="replace"'
    ):
        cppreason.train(["int x\ud800;"] * 3, vocab_size=1900)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        replaced = cppreason.train(
            ["foo\ud800bar foo\ud800bar"] * 3, vocab_size=1900, errors="replace"
        )
        same = cppreason.train(["foo\ufffdbar foo\ufffdbar"] * 3, vocab_size=1900)
    assert replaced.tokenizer.mergeable_ranks() == same.tokenizer.mergeable_ranks()
    assert replaced.vocab_size > 1856 and replaced.encode("foo\ud800bar") == same.encode(
        "foo\ufffdbar"
    )


# ---- FIM: each part where it stands on the line, diff headers included ------------------------


def test_fim_suffix_in_mid_line_is_no_diff_header(tok):
    # was: [4, <x = a>, 6, 1524, ...]: the suffix's `---` the diff header, though it goes on the
    # prefix's line (mid-line, `x = a --- b;` is the operators `--` and `-`)
    ids = tok.encode_fim("x = a", "--- b;")
    assert ids == [4, *tok.encode("x = a"), 6, *tok.encode("; --- b;")[1:], 5]
    assert 1524 not in ids and FIXED_IDS["--"] in ids
    ids = tok.encode_fim("x = a", "y;", "+++z")
    assert 1525 not in ids and ids[-5:] == [*tok.encode(";+++z")[1:], 3]
    # at the start of a line they are the headers
    assert tok.encode_fim("x;\n", "--- a/f")[tok.encode_fim("x;\n", "--- a/f").index(6) + 1 :][
        :2
    ] == [1524, 1527]


FIM_PARTS = st.lists(
    st.sampled_from(
        [
            "---",
            "+++",
            " a/",
            " b/",
            "+",
            "-",
            "@@",
            "x",
            "1",
            " ",
            "\t",
            "\n",
            ";",
            "#",
            "include",
            "\u2581",
            "::",
            "int",
        ]
    ),
    max_size=8,
).map("".join)


@settings(max_examples=150, deadline=None)
@example("x", "--- a/f", None)
@example("x = ", "y", "+++")
@given(FIM_PARTS, FIM_PARTS, st.none() | FIM_PARTS)
def test_fim_parts_are_encoded_where_they_stand(prefix, suffix, middle):
    # a part that does not start a line is encoded as it is after `;` (which forms no word with
    # what follows it and ends no line): mid-line, so no diff marker or header at its start
    tok = _TOK[0]

    def part(text, before):
        if before == "" or before.endswith("\n"):
            return tok.encode(text)
        return tok.encode(";" + text)[1:]

    want = [4, *tok.encode(prefix), 6, *part(suffix, prefix + (middle or "")), 5]
    if middle is not None:
        want += [*part(middle, prefix), 3]
    assert tok.encode_fim(prefix, suffix, middle) == want


@settings(max_examples=150, deadline=None)
@example("--- a/f")
@example("+++ b/g\n+x")
@example("---")
@given(FIM_PARTS)
def test_encode_not_at_line_start_is_encoded_as_in_mid_line(text):
    # was: encode("--- a/f", line_start=False) gave the diff header ids [1524, 1527, ...]
    # although the flag says the text goes on a line; mid-line it is as after `;`
    tok = _TOK[0]
    assert tok.encode(text, line_start=False) == tok.encode(";" + text)[1:]
    if text.startswith("--- a/"):
        assert tok.encode(text)[:2] == [1524, 1527]  # at a line's start: the header


# ---- argument types -----------------------------------------------------------------------------


def test_encode_diff_checks_the_diff_type(tok):
    # was: TypeError: can only concatenate str (not "NoneType") to str
    with pytest.raises(TypeError, match="diff must be str, not NoneType"):
        tok.encode_diff(None)
    with pytest.raises(TypeError, match="diff must be str, not bytes"):
        tok.encode_diff(b"+x", message="m")


def test_decode_rejects_what_is_not_a_sequence_of_ids(tok):
    # was: decode(b"\x14\x15") == "auto const" (bytes read as ids), and "'int' object is not iterable"
    with pytest.raises(TypeError, match="ids must be a sequence of int token ids, not bytes"):
        tok.decode(b"\x14\x15")
    with pytest.raises(TypeError, match="ids must be a sequence of int token ids, not bytearray"):
        tok.decode(bytearray(b"\x14"))
    for bad in (562, None):
        with pytest.raises(TypeError, match=r"ids must be a sequence of int token ids \(a list"):
            tok.decode(bad)
    assert tok.decode((20, 21)) == "auto const" and tok.decode(iter([562])) == "42"


def test_batch_rejects_bytes(tok):
    # was: TypeError: text must be str, not int (the bytes iterated as ints)
    with pytest.raises(TypeError, match="texts must be a list of str, not bytes"):
        tok.encode_ordinary_batch(b"int x;")


# ---- train() on a list of globs -----------------------------------------------------------------


def test_train_on_a_list_with_a_glob(tmp_path):
    # was: the glob's own text trained on (a list of str is texts unless every item exists)
    (tmp_path / "a.cpp").write_text("int widgetcount = widgetcount;\n" * 4, encoding="utf-8")
    (tmp_path / "b.cpp").write_text("int widgetcount;\n" * 4, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from_glob = cppreason.train(
            [str(tmp_path / "a*.cpp"), str(tmp_path / "b.cpp")], vocab_size=1900
        )
        from_files = cppreason.train(
            [str(tmp_path / "a.cpp"), str(tmp_path / "b.cpp")], vocab_size=1900
        )
        # C++ texts with `[`, `*` or `?` that match no file stay texts
        texts = cppreason.train(["a[i] = b[j];", "x *p = q ? r : s;"] * 3, vocab_size=1900)
    assert from_glob.tokenizer.mergeable_ranks() == from_files.tokenizer.mergeable_ranks()
    assert len(from_glob.encode("widgetcount")) == 1
    assert texts.vocab_size > 1856


# ---- the command line ---------------------------------------------------------------------------


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
