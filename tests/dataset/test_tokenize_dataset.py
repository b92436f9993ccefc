import json
import os

import numpy as np
import pytest

from toksmith.dataset import iter_documents, pipeline, read_manifest, read_shard, tokenize_dataset

from . import reference

EOT = 50256
FORMATS = ["bin", "megatron", "datatrove", "npy"]


def expected(tok, docs, bos=None, eos=None):
    return [
        ([bos] if bos is not None else [])
        + tok.encode_ordinary(d)
        + ([eos] if eos is not None else [])
        for d in docs
    ]


def shard_files(out, m, i=None):
    entries = m["inputs"] if i is None else [m["inputs"][i]]
    return [os.path.join(out, s["files"][0]) for e in entries for s in e["shards"]]


def independent_documents(out, m, tok_eos=None):
    """Every document, read with the independent readers of tests/dataset/reference.py."""
    docs = []
    for e in m["inputs"]:
        paths = [os.path.join(out, s["files"][0]) for s in e["shards"]]
        if m["format"] == "bin":
            stream = np.concatenate([reference.llmc(p)[1] for p in paths])
            cut = np.flatnonzero(stream == tok_eos) + 1
            docs.extend(np.split(stream, cut)[:-1])
            assert cut[-1] == len(stream)
        for p in paths:
            if m["format"] == "megatron":
                code, seqs, doc_idx = reference.megatron(p[: -len(".bin")])
                assert list(doc_idx) == list(range(len(seqs) + 1))  # one sequence per document
                docs.extend(seqs)
            elif m["format"] == "datatrove":
                docs.extend(reference.datatrove(p, 2 if m["dtype"] == "uint16" else 4))
            elif m["format"] == "npy":
                docs.extend(reference.npy(p[: -len(".ids.npy")]))
    return [list(map(int, d)) for d in docs]


@pytest.mark.parametrize("fmt", FORMATS)
def test_documents_match_encode_ordinary_across_shards(gpt2, corpus, tmp_path, fmt):
    inputs, docs = corpus
    out = str(tmp_path / "out")
    m = tokenize_dataset(
        inputs, gpt2, out, format=fmt, eos="<|endoftext|>", shard_tokens=3000, progress=False
    )
    want = expected(gpt2, docs, eos=EOT)
    assert independent_documents(out, m, EOT) == want
    assert [list(map(int, d)) for d in iter_documents(out)] == want
    assert m["done"] and m["tokens"] == sum(map(len, want)) and m["documents"] == len(want)
    assert m["dtype"] == "uint16" and m["format"] == fmt
    assert len(m["inputs"][0]["shards"]) > 3  # the documents do cross shard boundaries
    for e in m["inputs"]:
        assert sum(s["tokens"] for s in e["shards"]) == e["tokens"]
        if fmt == "bin":  # llm.c shards are exactly shard_tokens long, the last one shorter
            sizes = [s["tokens"] for s in e["shards"]]
            assert all(n == 3000 for n in sizes[:-1]) and 0 < sizes[-1] <= 3000
        else:
            assert sum(s["documents"] for s in e["shards"]) == e["documents"]
    assert not [n for n in os.listdir(out) if "tmp" in n or n.startswith(".")]


def test_bin_header_is_llmc(gpt2, corpus, tmp_path):
    inputs, docs = corpus
    out = str(tmp_path / "out")
    m = tokenize_dataset(
        inputs[:1], gpt2, out, bos="<|endoftext|>", shard_tokens=1000, progress=False
    )
    for p in shard_files(out, m):
        header, ids = reference.llmc(p)
        assert header[1] == 1 and not header[3:].any()
        assert os.path.getsize(p) == 1024 + 2 * header[2]
    want = expected(gpt2, docs[:-1], bos=EOT)
    assert [list(map(int, d)) for d in iter_documents(out)] == want


def test_bos_and_eos_per_document(gpt2, corpus, tmp_path):
    inputs, docs = corpus
    out = str(tmp_path / "out")
    tokenize_dataset(inputs, gpt2, out, format="npy", bos=EOT, eos="<|endoftext|>", progress=False)
    got = [list(map(int, d)) for d in iter_documents(out)]
    assert got == expected(gpt2, docs, bos=EOT, eos=EOT)


@pytest.mark.parametrize(
    "fmt,code", [("bin", None), ("megatron", 4), ("datatrove", None), ("npy", None)]
)
def test_uint32_for_large_vocabularies(cl100k, corpus, tmp_path, fmt, code):
    inputs, docs = corpus
    out = str(tmp_path / "out")
    m = tokenize_dataset(
        inputs, cl100k, out, format=fmt, eos="<|endoftext|>", shard_tokens=4000, progress=False
    )
    assert m["dtype"] == "uint32"
    assert independent_documents(out, m, 100257) == expected(cl100k, docs, eos=100257)
    first = shard_files(out, m)[0]
    if fmt == "bin":
        assert reference.llmc(first)[0][1] == 2
    elif fmt == "megatron":
        assert reference.megatron(first[:-4])[0] == code
        assert m["storage_dtype"] == "int32"
    elif fmt == "npy":
        assert np.load(first, mmap_mode="r").dtype == np.uint32


def test_megatron_uint16_code(gpt2, corpus, tmp_path):
    inputs, _ = corpus
    out = str(tmp_path / "out")
    m = tokenize_dataset(inputs, gpt2, out, format="megatron", progress=False)
    assert reference.megatron(shard_files(out, m)[0][:-4])[0] == 8


def test_datatrove_files_equal_datatrove_writer(gpt2, corpus, tmp_path):
    """The .ds and .ds.index files are byte for byte what datatrove's own TokenizedFile writes
    for the same documents."""
    from datatrove.pipeline.tokens.tokenizer import TokenizedFile

    inputs, docs = corpus
    out = str(tmp_path / "out")
    m = tokenize_dataset(
        inputs, gpt2, out, format="datatrove", eos=EOT, shard_tokens=5000, progress=False
    )
    want = expected(gpt2, docs, eos=EOT)
    n = 0
    for e in m["inputs"]:
        for s in e["shards"]:
            ref = TokenizedFile(str(tmp_path / "ref"), s["files"][0], token_size=2)
            for d in want[n : n + s["documents"]]:
                ref.write(d, None)
            ref.close()
            n += s["documents"]
            for f in s["files"]:
                mine = open(os.path.join(out, f), "rb").read()
                theirs = open(os.path.join(tmp_path / "ref", f), "rb").read()
                assert mine == theirs, f
    assert n == len(want)


def test_read_shard_every_format(gpt2, corpus, tmp_path):
    inputs, docs = corpus
    for fmt in FORMATS:
        out = str(tmp_path / fmt)
        m = tokenize_dataset(inputs[:1], gpt2, out, format=fmt, eos=EOT, progress=False)
        (path,) = shard_files(out, m)
        shard = read_shard(path)
        assert shard.format == fmt
        flat = [t for d in expected(gpt2, docs[:-1], eos=EOT) for t in d]
        assert list(map(int, shard.ids)) == flat
        if fmt == "bin":
            assert shard.offsets is None
        else:
            assert len(shard.documents()) == len(docs) - 1


def test_shuffle_is_seeded_and_keeps_the_documents(gpt2, corpus, tmp_path):
    inputs, docs = corpus
    want = sorted(map(tuple, expected(gpt2, docs, eos=EOT)))
    runs = {}
    for fmt in ("bin", "npy"):
        for seed, name in ((3, "a"), (3, "b"), (4, "c")):
            out = str(tmp_path / f"{fmt}{name}")
            m = tokenize_dataset(
                inputs,
                gpt2,
                out,
                format=fmt,
                eos=EOT,
                shard_tokens=4000,
                shuffle=seed,
                progress=False,
            )
            got = [tuple(map(int, d)) for d in iter_documents(out)]
            assert sorted(got) == want
            runs[fmt + name] = (got, [open(p, "rb").read() for p in shard_files(out, m)])
        assert runs[fmt + "a"] == runs[fmt + "b"]  # reproducible, byte for byte
        assert runs[fmt + "a"][0] != runs[fmt + "c"][0]
        assert runs[fmt + "a"][0] != [tuple(d) for d in expected(gpt2, docs, eos=EOT)]


def test_shuffle_windows_are_one_shard_of_tokens(gpt2, corpus, tmp_path):
    """With shard_tokens above the input's size the whole file is one window: a full shuffle."""
    inputs, docs = corpus
    out = str(tmp_path / "out")
    tokenize_dataset(inputs[:1], gpt2, out, format="npy", eos=EOT, shuffle=1, progress=False)
    got = [list(map(int, d)) for d in iter_documents(out)]
    want = expected(gpt2, docs[:-1], eos=EOT)
    order = np.random.default_rng([1, 0]).permutation(len(want))
    assert got == [want[i] for i in order]


class Interrupt(Exception):
    pass


@pytest.mark.parametrize("fmt", ["bin", "megatron", "npy"])
@pytest.mark.parametrize("shuffle", [None, 5])
@pytest.mark.parametrize("after", [1, 4])
def test_interrupted_run_resumes_to_the_same_bytes(
    gpt2, corpus, tmp_path, monkeypatch, fmt, shuffle, after
):
    inputs, _ = corpus
    kw = dict(format=fmt, eos=EOT, shard_tokens=2500, shuffle=shuffle, progress=False)
    full = str(tmp_path / "full")
    m_full = tokenize_dataset(inputs, gpt2, full, **kw)

    out = str(tmp_path / "out")
    real_finish = pipeline._Sharder._finish
    count = {"n": 0}

    def finish(self):
        real_finish(self)
        count["n"] += 1
        if count["n"] == after:
            raise Interrupt

    monkeypatch.setattr(pipeline._Sharder, "_finish", finish)
    with pytest.raises(Interrupt):
        tokenize_dataset(inputs, gpt2, out, **kw)
    monkeypatch.setattr(pipeline._Sharder, "_finish", real_finish)
    assert not [n for n in os.listdir(out) if n.endswith(".toksmith-tmp")]
    progress = os.listdir(os.path.join(out, pipeline.PROGRESS_DIR))
    assert progress  # the progress of the input being written

    encoded = []
    real_batches = pipeline._encode_batches

    def counting(pieces, *a, **k):
        for b in real_batches(pieces, *a, **k):
            encoded.append(len(b[1]))
            yield b

    monkeypatch.setattr(pipeline, "_encode_batches", counting)
    m = tokenize_dataset(inputs, gpt2, out, **kw)
    assert m == dict(m_full, inputs=m["inputs"]) and [
        {k: v for k, v in e.items() if k != "path"} for e in m["inputs"]
    ] == [{k: v for k, v in e.items() if k != "path"} for e in m_full["inputs"]]
    for a, b in zip(shard_files(out, m), shard_files(full, m_full)):
        assert open(a, "rb").read() == open(b, "rb").read()
    assert sorted(os.listdir(out)) == sorted(os.listdir(full))
    if (
        shuffle is None and after == 4
    ):  # the documents of the finished shards were not encoded again
        assert sum(encoded) < m["documents"]


def test_finished_run_is_not_redone(gpt2, corpus, tmp_path, monkeypatch):
    inputs, _ = corpus
    out = str(tmp_path / "out")
    m1 = tokenize_dataset(inputs, gpt2, out, format="npy", eos=EOT, progress=False)

    def fail(*a, **k):
        raise AssertionError("redone")

    monkeypatch.setattr(pipeline, "process_input", fail)
    m2 = tokenize_dataset(inputs, gpt2, out, format="npy", eos=EOT, progress=False)
    assert m1 == m2
    monkeypatch.undo()
    # a changed input is redone, the other is not
    with open(inputs[0], "a", encoding="utf-8") as f:
        f.write(json.dumps({"text": "one more document"}) + "\n")
    os.utime(inputs[0], ns=(1, 1))
    calls = []
    real = pipeline.process_input

    def spy(entry, *a, **k):
        calls.append(entry["path"])
        return real(entry, *a, **k)

    monkeypatch.setattr(pipeline, "process_input", spy)
    m3 = tokenize_dataset(inputs, gpt2, out, format="npy", eos=EOT, progress=False)
    assert calls == [os.path.abspath(inputs[0])]
    assert m3["documents"] == m1["documents"] + 1


def test_manifest(gpt2, corpus, tmp_path):
    inputs, docs = corpus
    out = str(tmp_path / "out")
    m = tokenize_dataset(
        inputs, gpt2, out, format="npy", eos="<|endoftext|>", shard_tokens=10**6, progress=False
    )
    assert read_manifest(out) == m
    assert (
        m["tokenizer"]["sha256"] == pipeline.tokenizer_identity(gpt2)
        and len(m["tokenizer"]["sha256"]) == 64
    )
    assert m["n_vocab"] == 50257 and m["eos"] == EOT and m["bos"] is None
    for p, e in zip(inputs, m["inputs"]):
        st = os.stat(p)
        assert (
            e["path"] == os.path.abspath(p)
            and e["size"] == st.st_size
            and e["mtime_ns"] == st.st_mtime_ns
        )
        assert e["done"] and e["shards"][0]["files"] == [
            e["output"] + "_000000.ids.npy",
            e["output"] + "_000000.offsets.npy",
        ]
    assert [e["output"] for e in m["inputs"]] == ["00000-a", "00001-b"]
    assert [e["documents"] for e in m["inputs"]] == [len(docs) - 1, 1]


def test_other_settings_in_the_same_folder_are_refused(gpt2, cl100k, corpus, tmp_path):
    inputs, _ = corpus
    out = str(tmp_path / "out")
    tokenize_dataset(inputs, gpt2, out, format="npy", progress=False)
    with pytest.raises(ValueError, match="other settings.*format"):
        tokenize_dataset(inputs, gpt2, out, format="bin", progress=False)
    with pytest.raises(ValueError, match="other settings.*tokenizer"):
        tokenize_dataset(inputs, cl100k, out, format="npy", progress=False)


def test_bad_arguments(gpt2, corpus, tmp_path):
    inputs, _ = corpus
    out = str(tmp_path / "out")
    with pytest.raises(ValueError, match="not a special token.*<\\|endoftext\\|>"):
        tokenize_dataset(inputs, gpt2, out, bos="<s>", progress=False)
    with pytest.raises(ValueError, match="not the id of a special token"):
        tokenize_dataset(inputs, gpt2, out, eos=5, progress=False)
    with pytest.raises(ValueError, match="format"):
        tokenize_dataset(inputs, gpt2, out, format="parquet", progress=False)
    with pytest.raises(ValueError, match="engine"):
        tokenize_dataset(inputs, gpt2, out, engine="spark", progress=False)
    with pytest.raises(ValueError, match="shard_tokens"):
        tokenize_dataset(inputs, gpt2, out, shard_tokens=0, progress=False)
    with pytest.raises(ValueError, match="shard_tokens"):
        tokenize_dataset(inputs, gpt2, out, shard_tokens=2**31, progress=False)
    with pytest.raises(TypeError, match="shuffle"):
        tokenize_dataset(inputs, gpt2, out, shuffle="yes", progress=False)
    with pytest.raises(TypeError, match="tokenizer"):
        tokenize_dataset(inputs, object(), out, progress=False)
    with pytest.raises(FileNotFoundError):
        tokenize_dataset([str(tmp_path / "missing.jsonl")], gpt2, out, progress=False)


def test_tokenizer_file_path(gpt2, corpus, tmp_path):
    inputs, docs = corpus
    path = str(tmp_path / "tok.json")
    gpt2.save(path)
    out = str(tmp_path / "out")
    tokenize_dataset(inputs, path, out, format="npy", eos="<|endoftext|>", progress=False)
    assert [list(map(int, d)) for d in iter_documents(out)] == expected(gpt2, docs, eos=EOT)


def test_progress_bar(gpt2, corpus, tmp_path, capsys):
    inputs, _ = corpus
    tokenize_dataset(inputs, gpt2, str(tmp_path / "out"), format="npy", progress=True)
    err = capsys.readouterr().err
    total = sum(os.path.getsize(p) for p in inputs)
    assert (
        "tokenize" in err
        and "100%" in err
        and f"{total / 1024:.0f}" in err.replace(".", "")
        or "kB" in err
    )
    tokenize_dataset(inputs, gpt2, str(tmp_path / "out2"), format="npy")  # not a TTY: no bar
    assert capsys.readouterr().err == ""
