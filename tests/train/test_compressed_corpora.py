"""The presets that read corpora their own way (wordbpe's word counts, cppreason's and
cromwell's training) decompress .xz/.gz/.bz2 files as `toksmith.train` does: the result
equals training on the plain file; a corrupt archive names the file."""

import bz2
import gzip
import json
import lzma
from pathlib import Path

import pytest

from tests.conftest import CORPORA
from toksmith import CorpusDecodeError
from toksmith.presets import cppreason, cromwell, wordbpe

COMPRESS = {".xz": lzma.compress, ".gz": gzip.compress, ".bz2": bz2.compress}


def _write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(COMPRESS[path.suffix](data) if path.suffix in COMPRESS else data)
    return path


@pytest.mark.parametrize("suffix", [".xz", ".gz", ".bz2"])
def test_wordbpe_counts_compressed_files_and_folders(tmp_path, suffix):
    english = (CORPORA / "english_slice.txt").read_bytes()[:200_000]
    plain = _write(tmp_path, "plain.txt", english)
    packed_dir = tmp_path / "packed"
    packed_dir.mkdir()
    packed = _write(packed_dir, "notes.txt" + suffix, english)
    _write(packed_dir, "skipped.bin" + suffix, b"zzzz qqqq")  # not a .txt file inside: left out
    expected = wordbpe.count_words(plain)
    assert sum(expected.values()) > 10_000
    assert wordbpe.count_words(packed) == expected
    assert wordbpe.count_words(packed_dir) == expected
    trained = wordbpe.train(packed_dir, 200)
    assert trained.get_vocab() == wordbpe.train(plain, 200).get_vocab()


def test_cppreason_trains_on_compressed_files(tmp_path):
    cpp = (CORPORA / "cpp_slice.txt").read_bytes()[:150_000]
    plain = _write(tmp_path, "a.cpp", cpp)
    packed = _write(tmp_path, "a.cpp.xz", cpp)
    vocab = cppreason.FIRST_LEARNED + 256 + 64
    a = cppreason.train(plain, vocab)
    b = cppreason.train(packed, vocab)
    sample = cpp[:20_000].decode("utf-8", "replace")
    assert a.encode(sample) == b.encode(sample)
    assert len(set(a.encode(sample))) > 100


def test_cromwell_mixed_list_reads_compressed_files(tmp_path):
    py = (CORPORA / "python_slice.txt").read_bytes()[:120_000]
    chats = [
        json.loads(line)
        for line in (CORPORA / "chat_slice.jsonl").read_text("utf-8").splitlines()[:50]
    ]
    jsonl = "".join(json.dumps({"text": json.dumps(c)}) + "\n" for c in chats).encode()
    texts = ["def f(x):\n    return x + 1\n"] * 20
    plain = [_write(tmp_path, "m.py", py), _write(tmp_path, "c.jsonl", jsonl)]
    packed = [_write(tmp_path, "m.py.gz", py), _write(tmp_path, "c.jsonl.bz2", jsonl)]
    a = cromwell.train(plain + texts, 600)
    b = cromwell.train(packed + texts, 600)
    sample = py[:20_000].decode("utf-8", "replace")
    assert a.encode(sample) == b.encode(sample)
    assert len(set(a.encode(sample))) > 100


def test_corrupt_archives_name_the_file(tmp_path):
    bad = tmp_path / "broken.txt.xz"
    bad.write_bytes(lzma.compress(b"hello world\n" * 1000)[:-40])
    with pytest.raises(CorpusDecodeError, match="broken.txt.xz"):
        wordbpe.count_words(bad)
    bad_cpp = tmp_path / "broken.cpp.gz"
    bad_cpp.write_bytes(b"\x1f\x8b not gzip at all")
    with pytest.raises(CorpusDecodeError, match="broken.cpp.gz"):
        cppreason.train(bad_cpp, cppreason.FIRST_LEARNED + 300)
    bad_py = tmp_path / "broken.py.bz2"
    bad_py.write_bytes(b"BZh9 nonsense")
    with pytest.raises(CorpusDecodeError, match="broken.py.bz2"):
        cromwell.train([bad_py, "some text"], 600)
    invalid = _write(tmp_path, "latin1.txt.gz", "caf\xe9\n".encode("latin-1"))
    with pytest.raises(CorpusDecodeError, match="latin1.txt.gz.*not valid UTF-8"):
        wordbpe.count_words(invalid)
    assert wordbpe.count_words(invalid, errors="replace") == wordbpe.count_words(
        ["caf\ufffd"], errors="replace"
    )
