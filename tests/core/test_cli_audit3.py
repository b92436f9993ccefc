"""Audit of the core CLI and corpus reading, third round: folders with symbolic links (files read
twice, link loops), `info` printing special tokens raw, `encode --lines` adding a final newline,
`encode --format npy` onto stdout that appends, and JSON files of integers taken for a GPT-2
vocab.json."""

import io
import json
import os
import sys
import threading
import warnings

import pytest

import toksmith
from tests.cli.helpers import _err  # stderr with no traceback in it
from toksmith.cli import main
from toksmith.corpus import expand_paths
from toksmith.errors import TokenizerFileError
from toksmith.formats import detect_format, load_any

TEXTS = ["hello world, hello there\nthe world is wide\n", "lorem ipsum dolor sit amet\n"] * 5


@pytest.fixture(scope="module")
def tok_path(tmp_path_factory):
    """A small tokenizer whose special tokens hold a newline, a tab and an escape character."""
    d = tmp_path_factory.mktemp("cli_audit3")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = toksmith.train_from_iterator(
            TEXTS,
            vocab_size=300,
            pattern="gpt2",
            threads=1,
            special_tokens=["<|bos|>", "<|a\nb|>", "<|t\tx|>", "<|\x1b|>"],
        )
    path = d / "tok.json"
    tok.save(path)
    return path


def _finishes(fn, *args):
    """fn(*args), run in a thread so that a hang fails the test instead of stopping the suite."""
    result = []
    t = threading.Thread(target=lambda: result.append(fn(*args)), daemon=True)
    t.start()
    t.join(60)
    assert result, (
        f"{fn.__name__}{args} did not finish (a symbolic link loop followed without end?)"
    )
    return result[0]


# ------------------------------------------------------------------ 1. folders with symbolic links


@pytest.fixture
def linked_tree(tmp_path):
    """corpus/ with a.txt, a link to it, sub/b.txt, a link to sub/, two links looping back up the
    tree, and a link to a folder outside the tree (other/c.txt)."""
    root = tmp_path / "corpus"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "other").mkdir()
    (root / "a.txt").write_text(TEXTS[0], encoding="utf-8")
    (root / "sub" / "b.txt").write_text(TEXTS[1], encoding="utf-8")
    (tmp_path / "other" / "c.txt").write_text("other text here\n", encoding="utf-8")
    (root / "link.txt").symlink_to("a.txt")
    (root / "sublink").symlink_to("sub")
    (root / "sub" / "up").symlink_to("..")
    (root / "sub" / "top").symlink_to(root)
    (root / "outside").symlink_to(tmp_path / "other")
    return root


def _real_files(paths):
    return sorted(os.path.realpath(p) for p in paths)


def test_folder_reads_each_real_file_once(linked_tree, tmp_path):
    # was: a file and a symbolic link to it were both read (trained on twice); a linked folder
    # outside the tree was skipped while linked files were read
    files = _finishes(expand_paths, linked_tree)
    real = _real_files(files)
    assert len(real) == len(set(real)) == 3
    assert real == sorted(
        os.path.realpath(p)
        for p in (
            linked_tree / "a.txt",
            linked_tree / "sub" / "b.txt",
            tmp_path / "other" / "c.txt",
        )
    )
    assert [p.name for p in files] == [
        "a.txt",
        "c.txt",
        "b.txt",
    ]  # sorted walk: a.txt, outside/, sub/


@pytest.mark.parametrize("pattern", ["**", "**/*.txt", "*.txt", "*/*.txt"])
def test_glob_reads_each_real_file_once_and_stops_at_link_loops(linked_tree, monkeypatch, pattern):
    # was: glob.glob(recursive=True) followed the two loops (sub/up, sub/top) without end, and a
    # link to a file gave the file twice
    monkeypatch.chdir(linked_tree)
    files = _finishes(expand_paths, pattern)
    real = _real_files(files)
    assert len(real) == len(set(real)) and real
    want = {"**": 3, "**/*.txt": 3, "*.txt": 1, "*/*.txt": 2}[
        pattern
    ]  # */*.txt: sub/b.txt, outside/c.txt
    assert len(real) == want


def test_glob_keeps_glob_matching(tmp_path, monkeypatch):
    """`**` walked by toksmith matches as glob.glob does where there is no link: hidden names
    only by a pattern that names them, folders in the middle of the pattern."""
    import glob

    for f in ["d/a.txt", "d/b.md", "d/.h.txt", "d/x/deep/e.txt", "d/.hid/f.txt", "d/x/g.txt"]:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("x", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for pattern in [
        "d/**",
        "d/**/*.txt",
        "**/*.txt",
        "d/**/deep/*",
        "d/.hid/**",
        "d/**/.h*",
        "d/x/**/*.txt",
        str(tmp_path / "d" / "**" / "*.md"),
    ]:
        want = sorted(m for m in glob.glob(pattern, recursive=True) if os.path.isfile(m))
        assert [str(p) for p in expand_paths(pattern)] == want, pattern


def test_train_on_a_linked_folder_reads_each_file_once(linked_tree, tmp_path, capsys):
    # was: toksmith.train(folder) and `toksmith train folder` read a.txt and link.txt, counting
    # the text twice
    real = [linked_tree / "a.txt", linked_tree / "sub" / "b.txt", tmp_path / "other" / "c.txt"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = toksmith.train(real, vocab_size=280, pattern="gpt2", threads=1)
        got = _finishes(
            lambda: toksmith.train(linked_tree, vocab_size=280, pattern="gpt2", threads=1)
        )
    assert got.metadata["corpus"]["bytes"] == sum(p.stat().st_size for p in real)
    assert got.merge_ids() == want.merge_ids()
    out = tmp_path / "t.json"
    assert (
        main(
            [
                "train",
                str(linked_tree),
                "--vocab-size",
                "280",
                "--pattern",
                "gpt2",
                "--threads",
                "1",
                "--no-progress",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    _err(capsys)
    cli = toksmith.load(out)
    assert cli.metadata["corpus"]["bytes"] == want.metadata["corpus"]["bytes"]
    assert cli.merge_ids() == want.merge_ids()


def test_a_link_to_itself_in_a_folder_is_an_error_message(tmp_path, capsys):
    # was: OSError "[Errno 40] Too many levels of symbolic links" without the folder named
    (tmp_path / "a.txt").write_text("hello\n", encoding="utf-8")
    (tmp_path / "self").symlink_to("self")
    with pytest.raises(FileNotFoundError, match="symbolic link loop"):
        expand_paths(tmp_path)
    assert main(["train", str(tmp_path), "-o", str(tmp_path / "t.json"), "--no-progress"]) == 1
    assert "symbolic link loop" in _err(capsys)


# ------------------------------------------------------------------ 2. info: special tokens escaped


def test_info_escapes_special_tokens(tok_path, capsys):
    # was: special tokens printed raw: "<|a\nb|>" broke its line in two, a tab or an escape
    # character went to the terminal as it is
    assert main(["info", "-t", str(tok_path)]) == 0
    out = capsys.readouterr().out
    assert "\t" not in out and "\x1b" not in out
    tok = toksmith.load(tok_path)
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("special tokens:"))
    shown = lines[start + 1 : start + 1 + len(tok.special_tokens)]
    assert [line.split(None, 1)[1] for line in shown] == [
        repr(t) for t, _ in sorted(tok.special_tokens.items(), key=lambda kv: kv[1])
    ]
    assert "'<|a\\nb|>'" in out and "'<|t\\tx|>'" in out and "'<|\\x1b|>'" in out
    # --json was already escaped: unchanged
    assert main(["info", "-t", str(tok_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["special_tokens"] == tok.special_tokens


def test_info_escapes_name_and_pattern(tmp_path, capsys):
    # was: a name (--name) or custom pattern holding a newline or tab printed raw
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = toksmith.train_from_iterator(
            TEXTS, vocab_size=270, pattern="x\n|\\s+|\\w+|.", name="my\tname", threads=1
        )
    path = tmp_path / "t.json"
    tok.save(path)
    assert main(["info", "-t", str(path)]) == 0
    out = capsys.readouterr().out
    assert "name:              my\\tname\n" in out
    assert "custom  x\\n|\\s+|\\w+|.\n" in out  # the regex's own backslashes as they are


# ------------------------------------------------------------------ 3. encode --lines: final newline


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("calm", [False, True])
def test_encode_lines_keeps_the_final_newline_status(tok_path, tmp_path, fmt, calm):
    # was: a last line without a newline came out with one ("a\nb" gave two lines of ids, each
    # ending with "\n"), so the output was no line-by-line transform of the input
    if calm:
        from toksmith import calm as calm_module

        tok_file = tmp_path / "calm.json"
        calm_module.ByteTokenizer().save(tok_file)  # not a toksmith Tokenizer: the Python path
    else:
        tok_file = tok_path
    tok = load_any(tok_file)
    for data in [
        "hello world\nthe world",
        "hello world\nthe world\n",
        "x",
        "\n",
        "\n\n",
        "",
        "a\n\nb",
    ]:
        src, out = tmp_path / "in.txt", tmp_path / "ids.out"
        src.write_bytes(data.encode())
        # small blocks: the newline held back is written when the next batch comes
        assert (
            main(
                [
                    "encode",
                    "-t",
                    str(tok_file),
                    str(src),
                    "--lines",
                    "--format",
                    fmt,
                    "--block-size",
                    "4",
                    "-o",
                    str(out),
                ]
            )
            == 0
        )
        lines = data.split("\n")
        if data.endswith("\n"):
            lines.pop()
        rows = [tok.encode(line) for line in lines] if data else []
        if fmt == "json":
            want = "\n".join(json.dumps(r) for r in rows)
        else:
            want = "\n".join(" ".join(map(str, r)) for r in rows)
        if data.endswith("\n"):
            want += "\n"
        assert out.read_text() == want, data


# ------------------------------------------------------------------ 4. encode --format npy onto stdout


@pytest.mark.parametrize("before", [b"", b"\x93NUMPY earlier array"])
def test_encode_npy_to_appending_stdout_is_refused(tok_path, tmp_path, capsys, monkeypatch, before):
    # was: `>> out.npy` wrote the placeholder and ids after what was there and the header (which
    # is rewritten at the start, but O_APPEND puts it at the end) last: a corrupt file, exit 0
    src = tmp_path / "in.txt"
    src.write_text("hello world\n", encoding="utf-8")
    target = tmp_path / "out.npy"
    target.write_bytes(before)
    with open(target, "ab") as f:
        monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(f))
        assert main(["encode", "-t", str(tok_path), str(src), "--format", "npy"]) == 1
        monkeypatch.undo()
    err = _err(capsys)
    assert "appending" in err and "-o FILE" in err
    assert target.read_bytes() == before


def test_encode_npy_to_stdout_after_other_data_is_refused(tok_path, tmp_path, capsys, monkeypatch):
    # was: `{ echo x; toksmith encode --format npy ...; } > out.npy` wrote the header over the
    # data before it and the ids after it: a corrupt file, exit 0
    src = tmp_path / "in.txt"
    src.write_text("hello world\n", encoding="utf-8")
    target = tmp_path / "out.npy"
    with open(target, "wb") as f:
        f.write(b"x\n")
        f.flush()
        monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(f))
        assert main(["encode", "-t", str(tok_path), str(src), "--format", "npy"]) == 1
        monkeypatch.undo()
    err = _err(capsys)
    assert "already holds 2 bytes" in err and "-o FILE" in err
    assert target.read_bytes() == b"x\n"


def test_encode_npy_to_a_fresh_stdout_file_and_with_o_still_work(tok_path, tmp_path, monkeypatch):
    np = pytest.importorskip("numpy")
    src = tmp_path / "in.txt"
    src.write_text("hello world\n", encoding="utf-8")
    want = toksmith.load(tok_path).encode("hello world\n")
    target = tmp_path / "stdout.npy"
    with open(target, "wb") as f:  # `> out.npy`
        monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(f))
        assert main(["encode", "-t", str(tok_path), str(src), "--format", "npy"]) == 0
        monkeypatch.undo()
    assert np.load(target).tolist() == want
    out = tmp_path / "o.npy"
    out.write_bytes(b"old content, replaced")
    assert main(["encode", "-t", str(tok_path), str(src), "--format", "npy", "-o", str(out)]) == 0
    assert np.load(out).tolist() == want


# ------------------------------------------------------------------ 5. JSON of integers: GPT-2 vocab?


def test_json_of_repeating_integers_is_no_gpt2_vocab(tmp_path, capsys):
    # was: token counts ({"the": 5, "a": 5}) were detected as a GPT-2 vocab.json, then failed
    # asking for its merges.txt
    p = tmp_path / "counts.json"
    p.write_text(json.dumps({"the": 5, "a": 5, "cat": 1}), encoding="utf-8")
    with pytest.raises(TokenizerFileError, match="no GPT-2 vocab.json.*repeat"):
        detect_format(p)
    p.write_text(json.dumps({"x": -1, "y": 0}), encoding="utf-8")
    with pytest.raises(TokenizerFileError, match="negative"):
        detect_format(p)
    p.write_text(json.dumps({"x": True, "y": False}), encoding="utf-8")  # bool is an int in Python
    with pytest.raises(TokenizerFileError, match="no known tokenizer format"):
        detect_format(p)
    assert main(["info", "-t", str(p)]) == 1
    assert "no known tokenizer format" in _err(capsys)


def test_json_of_ids_without_merges_says_what_it_was_taken_for(tmp_path, capsys):
    # was: "a GPT-2 vocab.json/encoder.json needs its merges.txt/vocab.bpe beside it": not saying
    # that the file was only taken for one, nor what else it could be
    p = tmp_path / "ids.json"
    p.write_text(json.dumps({"hello": 0, "world": 1}), encoding="utf-8")
    assert detect_format(p) == "gpt2"
    assert main(["info", "-t", str(p)]) == 1
    err = _err(capsys)
    assert "read as a GPT-2 vocab.json" in err and "no merges.txt/vocab.bpe is beside it" in err
    assert "tokenizer.json" in err and "from_gpt2_files" in err
    (tmp_path / "one.bpe").write_text("#version: 0.2\n", encoding="utf-8")
    (tmp_path / "two-merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    with pytest.raises(
        TokenizerFileError,
        match=r"several files beside it could be its merges file \(one.bpe, "
        r"two-merges.txt\)",
    ):
        load_any(p)
    p.unlink()
    with pytest.raises(
        TokenizerFileError, match="merges.txt/vocab.bpe, but no vocab.json/encoder.json is beside"
    ):
        load_any(tmp_path / "two-merges.txt")


# ------------------------------------------------------------------ other: encode -o checked first


@pytest.mark.parametrize(
    "out, message",
    [
        ("", "output file name is empty"),
        (".", "is a folder"),
        ("nowhere/ids.txt", "does not exist"),
    ],
)
def test_encode_bad_output_is_a_clear_message(
    tok_path, tmp_path, capsys, monkeypatch, out, message
):
    # was: the bare OSError ("[Errno 2] No such file or directory: ''", "[Errno 21] Is a
    # directory: '.'"), after the tokenizer was loaded
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.txt").write_text("hello\n", encoding="utf-8")
    assert main(["encode", "-t", str(tok_path), "in.txt", "-o", out]) == 1
    assert message in _err(capsys)
