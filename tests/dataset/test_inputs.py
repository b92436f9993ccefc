import bz2
import gzip
import json
import lzma
import os

import numpy as np
import pytest

from toksmith.cli import main
from toksmith.cli.eval import read_corpus
from toksmith.counts import count_chunks
from toksmith.dataset import iter_documents, tokenize_dataset
from toksmith.dataset.readers import iter_documents_of

from .conftest import real_documents

EOT = 50256


def ids(out):
    return [list(map(int, d)) for d in iter_documents(out)]


def write_jsonl(path, docs, field="text"):
    with open(path, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps({field: d}) + "\n")


@pytest.mark.parametrize("suffix", [".gz", ".xz", ".bz2", ".zst"])
def test_compressed_jsonl(gpt2, corpus, tmp_path, suffix):
    import zstandard

    inputs, docs = corpus
    raw = open(inputs[0], "rb").read()
    compress = {
        ".gz": gzip.compress,
        ".xz": lzma.compress,
        ".bz2": bz2.compress,
        ".zst": lambda b: zstandard.ZstdCompressor().compress(b),
    }[suffix]
    p = tmp_path / f"c.jsonl{suffix}"
    p.write_bytes(compress(raw))
    out = str(tmp_path / "out")
    tokenize_dataset([str(p)], gpt2, out, format="npy", eos=EOT, progress=False)
    assert ids(out) == [gpt2.encode_ordinary(d) + [EOT] for d in docs[:-1]]
    # compression told by magic bytes when the name does not say it
    q = tmp_path / "d.jsonl"
    q.write_bytes(compress(raw))
    assert list(iter_documents_of(str(q))) == docs[:-1]


def test_large_text_file_is_one_document_read_in_blocks(gpt2, tmp_path):
    from toksmith.dataset.readers import DocumentSource

    text = open(
        os.path.join(os.path.dirname(__file__), "..", "data", "corpora", "cpp_slice.txt"),
        encoding="utf-8",
    ).read()
    p = tmp_path / "big.txt"
    p.write_text(text, encoding="utf-8", newline="")
    pieces = list(DocumentSource(str(p), tokenizer=gpt2, block_size=4096))
    assert len(pieces) > 10 and [last for _, last in pieces] == [False] * (len(pieces) - 1) + [True]
    out = str(tmp_path / "out")
    tokenize_dataset([str(p)], gpt2, out, format="npy", bos=EOT, progress=False)
    assert ids(out) == [[EOT] + gpt2.encode_ordinary(text)]


def test_parquet(gpt2, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    docs = ["first document", "second, longer document", "", "héllo wörld"]
    p = tmp_path / "t.parquet"
    pq.write_table(pa.table({"content": docs, "n": [1, 2, 3, 4]}), p, row_group_size=2)
    out = str(tmp_path / "out")
    tokenize_dataset(
        [str(p)], gpt2, out, format="npy", text_field="content", eos=EOT, progress=False
    )
    assert ids(out) == [gpt2.encode_ordinary(d) + [EOT] for d in docs]
    with pytest.raises(ValueError, match="no column 'text'"):
        tokenize_dataset([str(p)], gpt2, str(tmp_path / "o2"), progress=False)


def test_chat_messages(gpt2, tmp_path):
    src = os.path.join(os.path.dirname(__file__), "..", "data", "corpora", "chat_slice.jsonl")
    lines = [json.loads(x) for x in open(src, encoding="utf-8") if x.strip()][:20]
    docs = ["\n".join(m["content"] for m in obj["messages"]) for obj in lines]
    p = tmp_path / "chat.jsonl"
    p.write_text("".join(json.dumps(o) + "\n" for o in lines), encoding="utf-8")
    out = str(tmp_path / "out")
    tokenize_dataset([str(p)], gpt2, out, format="datatrove", eos=EOT, progress=False)
    assert ids(out) == [gpt2.encode_ordinary(d) + [EOT] for d in docs]


def test_text_field_and_missing_field(gpt2, tmp_path):
    p = tmp_path / "a.jsonl"
    write_jsonl(p, ["x", "y"], field="body")
    out = str(tmp_path / "out")
    tokenize_dataset([str(p)], gpt2, out, format="npy", text_field="body", progress=False)
    assert ids(out) == [gpt2.encode_ordinary("x"), gpt2.encode_ordinary("y")]
    with pytest.raises(ValueError, match="a.jsonl:1: no field 'text'"):
        tokenize_dataset([str(p)], gpt2, str(tmp_path / "o2"), progress=False)


@pytest.mark.parametrize(
    "content,match",
    [
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 100, "PNG image"),
        (b"PK\x03\x04" + b"\x00" * 100, "zip archive"),
        (b"some text\x00\x01\x02 then binary", "binary file"),
        (gzip.compress(b"text\x00\x00binary", mtime=0), "binary file .after decompression"),
    ],
)
def test_binary_files_are_refused_by_name(gpt2, tmp_path, content, match):
    p = tmp_path / "data.txt"
    p.write_bytes(content)
    with pytest.raises(ValueError, match=match) as e:
        tokenize_dataset([str(p)], gpt2, str(tmp_path / "out"), progress=False)
    assert "data.txt" in str(e.value) and "errors" not in str(e.value)


def test_invalid_utf8_and_corrupt_compression(gpt2, tmp_path):
    from toksmith import CorpusDecodeError

    p = tmp_path / "bad.jsonl"
    p.write_bytes(b'{"text": "ok"}\n{"text": "\xff"}\n')
    with pytest.raises(CorpusDecodeError, match="bad.jsonl:2"):
        tokenize_dataset([str(p)], gpt2, str(tmp_path / "out"), progress=False)
    out = str(tmp_path / "out2")
    tokenize_dataset([str(p)], gpt2, out, format="npy", errors="replace", progress=False)
    assert ids(out)[1] == gpt2.encode_ordinary("\ufffd")
    q = tmp_path / "trunc.jsonl.gz"
    q.write_bytes(gzip.compress(b'{"text": "abc"}\n' * 1000)[:-30])
    with pytest.raises(CorpusDecodeError, match="trunc.jsonl.gz"):
        tokenize_dataset([str(q)], gpt2, str(tmp_path / "out3"), progress=False)


def test_missing_extra_is_named(gpt2, tmp_path, monkeypatch):
    import sys

    p = tmp_path / "t.parquet"
    p.write_bytes(b"PAR1" + b"\x00" * 20 + b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ImportError, match=r"toksmith\[parquet\]"):
        tokenize_dataset([str(p)], gpt2, str(tmp_path / "out"), progress=False)
    z = tmp_path / "t.jsonl.zst"
    z.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 20)
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with pytest.raises(ImportError, match=r"toksmith\[zstd\]"):
        tokenize_dataset([str(z)], gpt2, str(tmp_path / "out2"), progress=False)
    monkeypatch.setitem(sys.modules, "ray", None)
    q = tmp_path / "a.jsonl"
    write_jsonl(q, ["x"])
    with pytest.raises(ImportError, match=r"toksmith\[ray\]"):
        tokenize_dataset([str(q)], gpt2, str(tmp_path / "out3"), engine="ray", progress=False)


def test_cli(gpt2, corpus, tmp_path, capsys):
    inputs, docs = corpus
    tokpath = str(tmp_path / "tok.json")
    gpt2.save(tokpath)
    out = str(tmp_path / "out")
    args = [
        *inputs,
        "-t",
        tokpath,
        "-o",
        out,
        "--format",
        "megatron",
        "--eos",
        "<|endoftext|>",
        "--shard-tokens",
        "5000",
        "--shuffle",
        "2",
        "--threads",
        "2",
        "--engine",
        "local",
    ]
    assert main(["tokenize", *args]) == 0
    err = capsys.readouterr().err
    assert "tokens" in err and "shards" in err
    ref = str(tmp_path / "ref")
    tokenize_dataset(
        inputs, gpt2, ref, format="megatron", eos=EOT, shard_tokens=5000, shuffle=2, progress=False
    )
    assert ids(out) == ids(ref)
    assert main(["tokenize", *args, "--quiet"]) == 0  # done: nothing redone, nothing said
    assert capsys.readouterr().err == ""
    assert (
        main(["tokenize", inputs[0], "-t", tokpath, "-o", str(tmp_path / "o3"), "--bos", "<s>"])
        == 1
    )
    assert "'<s>' is not a special token" in capsys.readouterr().err
    p = tmp_path / "x.txt"
    p.write_bytes(b"\x7fELF\x02\x01")
    assert main(["tokenize", str(p), "-t", tokpath, "-o", str(tmp_path / "o4")]) == 1
    assert "x.txt is an executable" in capsys.readouterr().err


def test_ray_engine_equals_local(gpt2, corpus, tmp_path):
    ray = pytest.importorskip("ray")
    inputs, _ = corpus
    local = str(tmp_path / "local")
    m1 = tokenize_dataset(
        inputs, gpt2, local, format="bin", eos=EOT, shard_tokens=3000, shuffle=9, progress=False
    )
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = str(tmp_path / "ray")
        m2 = tokenize_dataset(
            inputs,
            gpt2,
            remote,
            format="bin",
            eos=EOT,
            shard_tokens=3000,
            shuffle=9,
            engine="ray",
            threads=1,
            progress=False,
        )
    finally:
        ray.shutdown()
    assert [e["shards"] for e in m1["inputs"]] == [e["shards"] for e in m2["inputs"]]
    for e in m1["inputs"]:
        for s in e["shards"]:
            for f in s["files"]:
                assert (
                    open(os.path.join(local, f), "rb").read()
                    == open(os.path.join(remote, f), "rb").read()
                )
    assert np.array_equal(
        np.concatenate(list(iter_documents(local))), np.concatenate(list(iter_documents(remote)))
    )


def _same_docs_in_every_layout(tmp_path, docs):
    """The same documents as .jsonl, .jsonl.zst, .parquet and chat lines."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import zstandard

    plain = tmp_path / "d.jsonl"
    write_jsonl(plain, docs)
    zst = tmp_path / "d.jsonl.zst"
    zst.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    parquet = tmp_path / "d.parquet"
    pq.write_table(pa.table({"text": docs}), parquet, row_group_size=7)
    chat = tmp_path / "chat.jsonl"
    with open(chat, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps({"messages": [{"role": "user", "content": d}]}) + "\n")
    return [str(p) for p in (plain, zst, parquet, chat)]


def test_every_command_reads_documents_through_the_one_reader(gpt2, tmp_path, capsys):
    """encode, eval, count and tokenize read JSON lines (plain, compressed, chat) and parquet
    as their documents, never as raw JSON text."""
    docs = [d for d in real_documents() if d][:25]
    tokpath = str(tmp_path / "tok.json")
    gpt2.save(tokpath)
    text = tmp_path / "docs.txt"
    text.write_text("\nsep\n".join(docs), encoding="utf-8")
    want_counts = count_chunks(str(text), pattern="gpt2", doc_sep="\nsep\n")
    for k, path in enumerate(_same_docs_in_every_layout(tmp_path, docs)):
        # encode: one line of ids per document
        assert main(["encode", "-t", tokpath, path]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert [list(map(int, line.split())) for line in lines] == [
            gpt2.encode_ordinary(d) for d in docs
        ], path
        # eval: the documents' text, joined by newlines
        assert read_corpus(path) == "\n".join(docs), path
        # count: the chunks of the documents (none of the JSON around them)
        assert count_chunks(path, pattern="gpt2") == want_counts, path
        # tokenize
        out = str(tmp_path / f"out{k}")
        tokenize_dataset([path], gpt2, out, format="npy", progress=False)
        assert ids(out) == [gpt2.encode_ordinary(d) for d in docs], path
