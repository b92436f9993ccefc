"""The one corpus reader (toksmith.documents): kinds, compression, binary refusal, caps."""

import bz2
import gzip
import json
import lzma
import struct
import sys
import warnings
import zlib
from pathlib import Path

import pytest

import toksmith
from toksmith.documents import Caps, expand_inputs, iter_documents, iter_documents_of

DATA = Path(__file__).resolve().parents[1] / "data" / "corpora"
ENGLISH = (DATA / "english_slice.txt").read_text(encoding="utf-8")
CHAT = DATA / "chat_slice.jsonl"


def _png() -> bytes:
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    idat = zlib.compress(b"\x00\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def _elf() -> bytes:
    return b"\x7fELF\x02\x01\x01" + b"\x00" * 57 + b"abc text after the header"


def _chat_contents():
    out = []
    for line in CHAT.read_text(encoding="utf-8").splitlines():
        if line.strip():
            out.append("\n".join(m["content"] for m in json.loads(line)["messages"]))
    return out


@pytest.mark.parametrize(
    "suffix,compress",
    [
        ("", lambda b: b),
        (".gz", gzip.compress),
        (".bz2", bz2.compress),
        (".xz", lzma.compress),
        (".zst", lambda b: pytest.importorskip("zstandard").ZstdCompressor().compress(b)),
    ],
)
def test_a_compressed_text_file_reads_as_the_plain_one(tmp_path, suffix, compress):
    p = tmp_path / f"english.txt{suffix}"
    p.write_bytes(compress(ENGLISH.encode()))
    assert list(iter_documents_of(str(p))) == [ENGLISH]
    # by magic bytes too, under a name that says nothing
    q = tmp_path / "english.data"
    q.write_bytes(compress(ENGLISH.encode()))
    assert list(iter_documents_of(str(q))) == [ENGLISH]


def test_chat_lines_give_their_message_contents():
    assert list(iter_documents_of(str(CHAT))) == _chat_contents()


def test_parquet_gives_its_column_by_row_group(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    docs = ENGLISH.split("\n\n")
    p = tmp_path / "docs.parquet"
    pq.write_table(pa.table({"id": list(range(len(docs))), "body": docs}), p, row_group_size=7)
    assert list(iter_documents_of(str(p), text_field="body")) == docs
    with pytest.raises(ValueError, match="no column 'text'"):
        list(iter_documents_of(str(p)))


def test_doc_sep_cuts_text_files_into_documents(tmp_path):
    p = tmp_path / "a.txt.gz"
    p.write_bytes(gzip.compress(ENGLISH.encode()))
    want = [d for d in ENGLISH.split("\n\n") if d]
    got = list(iter_documents_of(str(p), doc_sep="\n\n"))
    assert got == want
    # small blocks: a separator split between two reads is still found
    from toksmith.documents import DocumentSource

    src = DocumentSource(str(p), doc_sep="\n\n", block_size=7)
    assert [t for t, _ in src] == want


def test_caps_are_nanochats():
    docs = ["a" * 10, "b" * 3, "c" * 20, "d" * 5]
    assert list(Caps(doc_cap=4).apply(docs)) == ["aaaa", "bbb", "cccc", "dddd"]
    # stops after the document that takes the total past max_chars
    assert list(Caps(max_chars=12).apply(docs)) == ["a" * 10, "b" * 3]
    assert list(Caps(max_chars=12, doc_cap=4).apply(docs)) == ["aaaa", "bbb", "cccc", "dddd"]
    with pytest.raises(ValueError, match="doc_cap must be at least 1"):
        Caps(doc_cap=0)


@pytest.mark.parametrize("make,what", [(_png, "PNG"), (_elf, "ELF")])
def test_a_binary_file_is_refused_by_name_even_with_errors_replace(tmp_path, make, what):
    p = tmp_path / "x.txt"
    p.write_bytes(make())
    for errors in ("strict", "replace"):
        with pytest.raises(ValueError, match=what) as e:
            toksmith.train(p, vocab_size=300, errors=errors)
        assert str(p) in str(e.value) and "--errors" not in str(e.value)
        assert "errors=" not in str(e.value)


def test_nul_bytes_make_a_file_binary_even_compressed(tmp_path):
    p = tmp_path / "x.txt.gz"
    p.write_bytes(gzip.compress(b"text\x00\x01\x02 more"))
    with pytest.raises(ValueError, match="binary file .after decompression"):
        list(iter_documents_of(str(p), errors="replace"))


def test_binary_files_in_a_folder_are_skipped_with_one_warning(tmp_path):
    (tmp_path / "a.txt").write_text(ENGLISH, encoding="utf-8")
    (tmp_path / "logo.png").write_bytes(_png())
    (tmp_path / "tool").write_bytes(_elf())
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        files = expand_inputs(tmp_path)
    assert files == [str(tmp_path / "a.txt")]
    assert len(w) == 1 and "skipped 2 file(s)" in str(w[0].message)
    assert "logo.png" in str(w[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        folder = toksmith.train(tmp_path, vocab_size=400, pattern="gpt2")
    alone = toksmith.train(tmp_path / "a.txt", vocab_size=400, pattern="gpt2")
    assert folder.merges() == alone.merges()


def test_a_missing_extra_skips_in_a_folder_and_names_the_extra_alone(tmp_path, monkeypatch):
    (tmp_path / "a.txt").write_text("hello world", encoding="utf-8")
    (tmp_path / "b.parquet").write_bytes(b"PAR1" + b"\x00" * 20 + b"PAR1")
    (tmp_path / "c.txt.zst").write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 10)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert expand_inputs(tmp_path) == [str(tmp_path / "a.txt")]
    assert len(w) == 1
    with pytest.raises(ImportError, match=r"toksmith\[parquet\]"):
        list(iter_documents_of(str(tmp_path / "b.parquet")))
    with pytest.raises(ImportError, match=r"toksmith\[zstd\]"):
        list(iter_documents_of(str(tmp_path / "c.txt.zst")))


def test_a_url_needs_fsspec(monkeypatch):
    monkeypatch.setitem(sys.modules, "fsspec", None)
    with pytest.raises(ImportError, match=r"toksmith\[fsspec\]"):
        list(iter_documents_of("s3://bucket/corpus.txt"))


def test_a_url_is_read_through_fsspec():
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    with fs.open("/corpus/a.txt", "wb") as f:
        f.write(ENGLISH.encode())
    with fs.open("/corpus/b.jsonl", "wb") as f:
        f.write(b'{"text": "one"}\n{"text": "two"}\n')
    assert list(iter_documents("memory://corpus/*")) == [ENGLISH, "one", "two"]


def test_stdin_is_read_as_a_text_document(tmp_path, monkeypatch):
    p = tmp_path / "in.txt"
    p.write_bytes(gzip.compress(ENGLISH.encode()))
    with open(p, "rb") as f:
        monkeypatch.setattr(sys, "stdin", f)
        assert list(iter_documents("-")) == [ENGLISH]


def test_train_reads_chat_lines_as_their_contents(tmp_path):
    got = toksmith.train(CHAT, vocab_size=600, pattern="gpt2")
    want = toksmith.train_from_iterator(_chat_contents(), vocab_size=600, pattern="gpt2")
    assert got.merges() == want.merges()


def test_train_caps_as_nanochat(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text(ENGLISH, encoding="utf-8")
    docs = [d for d in ENGLISH.split("\n\n") if d]
    got = toksmith.train(
        p, vocab_size=400, pattern="gpt2", doc_sep="\n\n", doc_cap=80, max_chars=20000
    )
    want = toksmith.train_from_iterator(
        list(Caps(20000, 80).apply(docs)), vocab_size=400, pattern="gpt2"
    )
    assert got.merges() == want.merges()
