"""`toksmith info`, `encode`, `decode`, `convert` and `eval` take the tokenizer files of every
model family in tests/data (issue 30): OpenAI's rank files, GPT-2's files, open models' rank
files (Llama 3, Llama 4, Qwen 1, with their patterns) and a Hugging Face tokenizer.json with
``ignore_merges`` (Llama 3's kind, made by ``convert``)."""

from __future__ import annotations

import json
import lzma
import shutil

import pytest

import toksmith
from tests.conftest import DATA
from toksmith.cli import main
from toksmith.files import tiktoken as tt

from .helpers import _err

TEXT = (
    (DATA / "corpora" / "english_slice.txt").read_text(encoding="utf-8")[:6000]
    + (DATA / "bench" / "multilingual_sample.txt").read_text(encoding="utf-8")[:6000]
    + (DATA / "corpora" / "python_slice.txt").read_text(encoding="utf-8")[:6000]
    + " .:.:  x 2024\r\n\n  "
)

#: Llama 3's tokens around ".:.:" (its rank table is no merge list: see
#: tests/files/test_hf_export_ranks_only.py)
DOTS = [b":.", b".:", b".:.:", b".:.", b":.:"]


def _unxz(name, dest):
    out = dest / name.rsplit("/", 1)[-1].removesuffix(".xz")
    out.write_bytes(lzma.open(DATA / name).read())
    return out


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """family -> (tokenizer path, extra CLI arguments, the tokenizer the API loads)."""
    d = tmp_path_factory.mktemp("families")
    out = {}
    cl100k = DATA / "vocabs" / "cl100k_base.tiktoken"
    out["cl100k"] = (cl100k, [], toksmith.from_tiktoken(cl100k))
    gpt2 = d / "gpt2"
    gpt2.mkdir()
    shutil.copy(DATA / "vocabs" / "gpt2_encoder.json", gpt2 / "encoder.json")
    shutil.copy(DATA / "vocabs" / "gpt2_vocab.bpe", gpt2 / "vocab.bpe")
    out["gpt2-files"] = (gpt2, [], toksmith.load_any(gpt2))
    for family, name, pattern in (
        ("llama3", "llama3_first10000", tt.LLAMA3_PATTERN),
        ("llama4", "llama4_first10000", tt.LLAMA4_PATTERN),
        ("qwen1", "qwen1_first10000", tt.QWEN1_PATTERN),
    ):
        path = _unxz(f"vocabs/models/{name}.tiktoken.xz", d)
        if family == "llama3":  # with the tokens that make it no merge list
            ranks = tt.load_tiktoken_ranks(path)
            for t in DOTS:
                ranks[t] = len(ranks)
            tt.dump_tiktoken_ranks(ranks, path)
        out[family] = (path, ["--pattern", pattern], toksmith.from_tiktoken(path, pattern=pattern))
    # Llama 3's tokenizer.json kind: made by convert (ignore_merges), checked below
    hf = d / "llama3-hf"
    path, extra, _ = out["llama3"]
    assert main(["convert", str(path), str(hf), "--to", "huggingface", *extra]) == 0
    out["llama3-hf"] = (hf / "tokenizer.json", [], toksmith.load_any(hf / "tokenizer.json"))
    return out


FAMILIES = [
    "cl100k",
    "gpt2-files",
    "llama3",
    "llama4",
    "qwen1",
    "llama3-hf",
]


@pytest.mark.parametrize("family", FAMILIES)
def test_info(family, files, capsys):
    path, extra, tok = files[family]
    assert main(["info", "-t", str(path), *extra, "--json"]) == 0, _err(capsys)
    info = json.loads(capsys.readouterr().out)
    assert info["n_vocab"] == tok.n_vocab
    assert info["pattern"] == tok.pattern


@pytest.mark.parametrize("family", FAMILIES)
def test_encode_and_decode(family, files, tmp_path, capsys):
    path, extra, tok = files[family]
    src = tmp_path / "text.txt"
    src.write_bytes(TEXT.encode("utf-8"))
    ids_path, back = tmp_path / "ids.json", tmp_path / "back.txt"
    args = ["-t", str(path), *extra]
    assert main(["encode", *args, str(src), "--format", "json", "-o", str(ids_path)]) == 0, _err(
        capsys
    )
    ids = json.loads(ids_path.read_text())
    assert ids == tok.encode(TEXT)
    assert main(["decode", *args, str(ids_path), "-o", str(back)]) == 0, _err(capsys)
    assert back.read_bytes() == src.read_bytes()


@pytest.mark.parametrize("family", FAMILIES)
def test_convert_and_eval(family, files, tmp_path, capsys):
    path, extra, tok = files[family]
    want = tok.encode(TEXT)
    corpus = tmp_path / "c.txt"
    corpus.write_text(TEXT, encoding="utf-8")
    saved = tmp_path / "tok.json"
    assert main(["convert", str(path), str(saved), "--to", "toksmith", *extra]) == 0, _err(capsys)
    assert toksmith.load(saved).encode(TEXT) == want
    hf = tmp_path / "hf"
    assert main(["convert", str(path), str(hf), "--to", "huggingface", *extra]) == 0, _err(capsys)
    assert toksmith.load_any(hf / "tokenizer.json").encode(TEXT) == want
    tokenizers = pytest.importorskip("tokenizers")
    got = tokenizers.Tokenizer.from_file(str(hf / "tokenizer.json")).encode(TEXT).ids
    assert got == want
    # eval reads files that store their pattern: the original, or the converted one
    evaluated = saved if extra else path
    capsys.readouterr()
    assert main(["eval", "-t", f"{family}={evaluated}", "--corpus", f"c={corpus}", "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert (row["tokenizer"], row["corpus"]) == (family, "c")
    assert (row["bytes"], row["tokens"]) == (len(TEXT.encode("utf-8")), len(want))
