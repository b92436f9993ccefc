"""`tokenize_dataset` with a SentencePiece `.model` file (a PipelineTokenizer): every document of
the shards is sentencepiece's own encoding of it, plus the end-of-sequence id."""

import json

import pytest

import toksmith
from toksmith.dataset import iter_documents, tokenize_dataset

from ..conftest import DATA

spm = pytest.importorskip("sentencepiece")


def documents():
    english = (DATA / "corpora" / "english_slice.txt").read_text(encoding="utf-8")
    docs = english.split("\n\n")[:40]
    code = (DATA / "corpora" / "python_slice.txt").read_text(encoding="utf-8")
    docs += [
        code[:3000],
        "",
        "  leading and trailing spaces  ",
        "<s> </s> <unk> stay text 日本語 🤗",
    ]
    return docs


@pytest.mark.parametrize("fmt", ["npy", "megatron", "bin"])
@pytest.mark.parametrize("name", ["llama2.model", "t5_spm.model"])
def test_shards_are_sentencepiece_documents(files, tmp_path, name, fmt):
    sp = spm.SentencePieceProcessor(model_file=str(files / name))
    tok = toksmith.load_any(files / name)
    docs = documents()
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps({"text": d}) + "\n" for d in docs), encoding="utf-8")
    out = tmp_path / "out"
    m = tokenize_dataset(
        str(src), tok, str(out), format=fmt, eos="</s>", shard_tokens=2000, progress=False
    )
    want = [sp.encode(d) + [sp.eos_id()] for d in docs]
    got = [list(map(int, d)) for d in iter_documents(str(out))]
    if fmt == "bin":
        # llm.c shards are one stream: cut it after each end-of-sequence id
        stream = [i for d in got for i in d]
        got, cur = [], []
        for i in stream:
            cur.append(i)
            if i == sp.eos_id():
                got.append(cur)
                cur = []
        assert cur == []
    assert got == want
    assert m["tokens"] == sum(map(len, want)) and len(m["inputs"][0]["shards"]) > 1
