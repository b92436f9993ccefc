"""Saving files: atomic writes (temporary file, permissions, threads), folders, links, FIFOs,
folder formats onto files."""

import os
import threading

import pytest

import toksmith
from tests.conftest import BYTES
from toksmith.cli import main
from toksmith.formats._common import atomic_write


@pytest.fixture(scope="module")
def tok():
    return toksmith.Tokenizer.from_ranks(
        {bytes([b]): b for b in range(256)} | {b"ab": 256}, "gpt2", special_tokens={"<|end|>": 257}
    )


def test_save_leaves_an_unrelated_tmp_file_alone(tok, tmp_path):
    target = tmp_path / "tok.json"
    other = tmp_path / "tok.json.tmp"
    other.write_text("someone else's file")
    tok.save(target)  # was: wrote tok.json.tmp, then moved it away
    assert other.read_text() == "someone else's file"
    assert toksmith.load(target).encode("ab") == [256]
    assert sorted(os.listdir(tmp_path)) == ["tok.json", "tok.json.tmp"]


def test_atomic_writers_to_one_path_do_not_clobber_each_other(tmp_path):
    target = tmp_path / "out.txt"
    # two writes of the same file open at once: each has its own temporary file
    with atomic_write(target) as outer:
        outer.write("outer")
        with atomic_write(target) as inner:
            inner.write("inner")
        assert target.read_text() == "inner"
    assert target.read_text() == "outer"
    assert os.listdir(tmp_path) == ["out.txt"]


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
def test_atomic_write_gives_the_permissions_of_a_plain_new_file(tmp_path, umask):
    old = os.umask(umask)
    try:
        plain = tmp_path / "plain.txt"
        with open(plain, "w") as f:
            f.write("x")
        with atomic_write(tmp_path / "atomic.txt") as f:
            f.write("x")
        with atomic_write(tmp_path / "atomic.bin", "wb") as f:
            f.write(b"x")
    finally:
        os.umask(old)
    want = plain.stat().st_mode & 0o777
    assert want == 0o666 & ~umask
    assert (tmp_path / "atomic.txt").stat().st_mode & 0o777 == want  # not mkstemp's 0o600
    assert (tmp_path / "atomic.bin").stat().st_mode & 0o777 == want


def test_atomic_write_failure_removes_its_temporary_file(tok, tmp_path):
    target = tmp_path / "keep.json"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_write(target) as f:
            f.write("half")
            raise RuntimeError("stop")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["keep.json"]
    with pytest.raises(
        LookupError
    ):  # a bad encoding: the temporary file's descriptor is closed, the file removed
        with atomic_write(target, "w", encoding="no-such-codec"):
            pass  # pragma: no cover
    assert os.listdir(tmp_path) == ["keep.json"] and target.read_text() == "old"


TEXT = "Hello world, hello there: lower lowest newest <|end|> widest <pin> 12345 \n\n  x"


@pytest.fixture(scope="module")
def small_tok():
    return toksmith.train_from_iterator(
        [TEXT * 3, "the then there these those their"] * 20,
        vocab_size=300,
        pattern="gpt2",
        special_tokens=["<|end|>"],
        pinned_tokens=["<pin>"],
    )


def test_save_onto_a_folder_names_it(small_tok, tmp_path, capsys):
    """Audit finding: Writing a file onto an existing folder said "Is a directory: 'x.tmp' -> 'x'"."""
    (tmp_path / "d").mkdir()
    with pytest.raises(IsADirectoryError, match="'.*d': it is a folder"):
        small_tok.save(tmp_path / "d")
    small_tok.save(tmp_path / "in.json")
    assert (
        main(["convert", str(tmp_path / "in.json"), str(tmp_path / "d"), "--to", "toksmith"]) == 1
    )
    err = capsys.readouterr().err
    assert "it is a folder" in err and ".tmp" not in err and "Traceback" not in err
    assert os.listdir(tmp_path / "d") == []


def test_save_through_a_symlink_keeps_it(small_tok, tmp_path):
    """Audit finding: The atomic write replaced a symbolic link with a regular file."""
    (tmp_path / "real.json").write_text("{}")
    os.symlink("real.json", tmp_path / "link.json")
    small_tok.save(tmp_path / "link.json")
    assert os.path.islink(tmp_path / "link.json")
    assert toksmith.load(tmp_path / "real.json").mergeable_ranks() == small_tok.mergeable_ranks()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_save_to_a_fifo_writes_into_it(small_tok, tmp_path):
    """Audit finding: A FIFO (or a device: /dev/stdout, /dev/null) at the path was replaced by the written file
    (run as root, `toksmith convert tok.json /dev/null` replaced /dev/null)."""
    fifo = tmp_path / "fifo.tiktoken"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)
    reader.start()
    plain = toksmith.Tokenizer(small_tok.mergeable_ranks(), pattern="gpt2")
    plain.save_tiktoken(tmp_path / "plain.tiktoken")
    plain.save_tiktoken(fifo)
    reader.join(10)
    assert got == [(tmp_path / "plain.tiktoken").read_bytes()]
    assert not os.path.isfile(fifo) and not os.path.exists(f"{fifo}.tmp")


@pytest.fixture(scope="module")
def small_trained():
    return toksmith.Tokenizer.from_ranks(
        {**BYTES, b"ab": 256}, "gpt2", special_tokens={"<|end|>": 257}
    )


@pytest.mark.parametrize("save", ["save_huggingface", "save_gpt2_files"])
def test_saving_a_folder_format_onto_a_file_says_so(small_trained, tmp_path, save):
    # was: FileExistsError "[Errno 17] File exists: '...'", which does not say a folder is needed
    target = tmp_path / "out"
    target.write_text("keep me")
    with pytest.raises(NotADirectoryError, match="it is a file, not a folder"):
        getattr(small_trained, save)(target)
    assert target.read_text() == "keep me"


def test_convert_to_a_folder_format_onto_a_file_says_so(small_trained, tmp_path, capsys):
    # was: "toksmith convert: error: [Errno 17] File exists: 'out'"
    small_trained.save(tmp_path / "t.json")
    (tmp_path / "out").write_text("x")
    assert (
        main(["convert", str(tmp_path / "t.json"), str(tmp_path / "out"), "--to", "huggingface"])
        != 0
    )
    assert "not a folder" in capsys.readouterr().err
