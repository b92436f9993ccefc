"""`toksmith encode/decode/info/eval` with SentencePiece, WordPiece and Unigram files."""

import json
import lzma

import pytest

import toksmith
from toksmith.cli import main

from ..conftest import DATA


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("pipeline_cli")
    for name in ("llama2.model", "t5_spm.model"):
        (d / name).write_bytes(lzma.decompress((DATA / "models" / f"{name}.xz").read_bytes()))
    (d / "bert").mkdir()
    (d / "bert" / "vocab.txt").write_bytes(
        lzma.decompress((DATA / "models" / "bert_base_uncased_vocab.txt.xz").read_bytes())
    )
    return d


TEXT = "Hello  world!\n\tdef f(x):  return x  # ok\nÜnïcödé 日本語 🤗\n"


@pytest.mark.parametrize("name", ["llama2.model", "t5_spm.model", "bert"])
def test_encode_decode_round_trip(models, tmp_path, capsys, name):
    tok = toksmith.load_any(models / name)
    src = tmp_path / "in.txt"
    src.write_text(TEXT, encoding="utf-8")
    ids_path = tmp_path / "ids.json"
    assert (
        main(
            ["encode", "-t", str(models / name), str(src), "--format", "json", "-o", str(ids_path)]
        )
        == 0
    )
    ids = json.loads(ids_path.read_text())
    assert ids == tok.encode_ordinary(TEXT)
    out = tmp_path / "out.txt"
    assert main(["decode", "-t", str(models / name), str(ids_path), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == tok.decode(ids)
    # ids as text, decoded through the stream decoder in parts
    ids_txt = tmp_path / "ids.txt"
    ids_txt.write_text(" ".join(map(str, ids)))
    assert main(["decode", "-t", str(models / name), str(ids_txt), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == tok.decode(ids)
    # --lines and npy
    assert main(["encode", "-t", str(models / name), str(src), "--lines", "-o", str(ids_txt)]) == 0
    lines = ids_txt.read_text().splitlines()
    assert [list(map(int, line.split())) for line in lines] == [
        tok.encode_ordinary(line) for line in TEXT.splitlines()
    ]
    npy = tmp_path / "ids.npy"
    assert (
        main(["encode", "-t", str(models / name), str(src), "--format", "npy", "-o", str(npy)]) == 0
    )
    assert main(["decode", "-t", str(models / name), str(npy), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == tok.decode(ids)


def test_encode_allow_special(models, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("<s>Hi</s>", encoding="utf-8")
    out = tmp_path / "ids.json"
    model = str(models / "llama2.model")
    assert (
        main(
            ["encode", "-t", model, str(src), "--allow-special", "--format", "json", "-o", str(out)]
        )
        == 0
    )
    ids = json.loads(out.read_text())
    assert ids[0] == 1 and ids[-1] == 2


def test_info(models, capsys):
    assert main(["info", "-t", str(models / "t5_spm.model")]) == 0
    out = capsys.readouterr().out
    assert "model:             unigram (sentencepiece file)" in out
    assert "mergeable" not in out and "pattern" not in out
    assert main(["info", "-t", str(models / "bert"), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["model"] == "wordpiece" and info["template"] == [[101], [102]]
    assert info["special_tokens"]["[CLS]"] == 101


def test_eval(models, tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text(TEXT * 20, encoding="utf-8")
    args = ["eval", "--json", "--corpus", f"c={corpus}"]
    for name in ("llama2.model", "t5_spm.model", "bert"):
        args += ["-t", f"{name}={models / name}"]
    assert main(args) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["tokenizer"] for r in rows] == ["llama2.model", "t5_spm.model", "bert"]
    for r in rows:
        # a corpus shorter than a chunk is encoded whole
        tok = toksmith.load_any(models / r["tokenizer"])
        assert r["tokens"] == len(tok.encode_ordinary(TEXT * 20))
        assert r["bytes"] == len((TEXT * 20).encode())
