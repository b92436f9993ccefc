"""Corpus reading for training: folders, globs, links, compressed and JSON lines files."""

import os
import threading
import warnings

import pytest

import toksmith
from tests.cli.helpers import _err  # stderr with no traceback in it
from toksmith.cli import main
from toksmith.corpus import expand_paths

TEXTS = ["hello world, hello there\nthe world is wide\n", "lorem ipsum dolor sit amet\n"] * 5


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
    """Audit finding: `**` walked by toksmith matches as glob.glob does where there is no link: hidden names
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


def test_empty_corpus_messages_name_the_cause():
    # was: "the split pattern ... found no non-empty piece ... pass ... pattern=\"cl100k\"" even with cl100k
    with pytest.raises(
        toksmith.EmptyCorpusError, match="the 9 bytes of the corpus are all pinned tokens"
    ):
        toksmith.train_from_iterator(["<p><p><p>"], vocab_size=260, pinned_tokens=["<p>"])
    # was: a misspelt pattern name read as a regex without a word about it (now refused up front)
    with pytest.raises(toksmith.PatternError, match="'CL100K' is no pattern name"):
        toksmith.train_from_iterator(["hello"], vocab_size=260, pattern="CL100K")
    # was: "'NoneType' object is not iterable" / "'int' object is not iterable"
    with pytest.raises(TypeError, match="texts must be an iterable of str, not NoneType"):
        toksmith.train_from_iterator(None, vocab_size=260)
    with pytest.raises(TypeError, match="paths must be str or os.PathLike .*, not int"):
        toksmith.train(5, vocab_size=260)


def test_jsonl_with_a_byte_order_mark(tmp_path):
    # was: ValueError "not valid JSON: Unexpected UTF-8 BOM" on line 1
    p = tmp_path / "bom.jsonl"
    p.write_bytes('\ufeff{"text": "hello world"}\n{"text": "hello there"}\n'.encode())
    tok = toksmith.train(p, vocab_size=262, pattern="gpt2")
    assert (
        tok.merge_ids()
        == toksmith.train_from_iterator(
            ["hello world", "hello there"], vocab_size=262, pattern="gpt2"
        ).merge_ids()
    )


def test_an_unreadable_subfolder_is_an_error_not_skipped(tmp_path, monkeypatch):
    # was: os.walk skipped a folder it could not list, silently training on less
    (tmp_path / "a.txt").write_text("hello world\n", encoding="utf-8")
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "b.txt").write_text("more text\n", encoding="utf-8")
    scandir = os.scandir

    def refusing(path="."):
        if os.fspath(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    with pytest.raises(
        PermissionError, match="cannot read the folder .*locked.* fix its permissions"
    ):
        toksmith.train(tmp_path, vocab_size=260)
