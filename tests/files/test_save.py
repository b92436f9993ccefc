"""Saving files: atomic writes (temporary file, permissions, threads), folders, links, FIFOs,
folder formats onto files."""

import os

import pytest

import toksmith
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
