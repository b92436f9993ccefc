"""Mistral Tekken files (``tekken_*.json``): ids as mistral-common's ``Tekkenizer`` gives them
(golden ids computed once with mistral-common 1.13.1 and stored in tests/data, so these checks
run without it; the live comparison runs when mistral-common is installed)."""

from __future__ import annotations

import base64
import json
import lzma
import os

import pytest

import toksmith
from toksmith.errors import TokenizerFileError
from toksmith.files import tekken as tk
from toksmith.files.detect import detect_format

from .model_texts import DATA, MULTILINGUAL, all_texts, unxz

TEKKEN = "vocabs/models/tekken_240718.json"
GOLDEN = os.path.join(DATA, "vocabs/models/tekken_240718_golden.json.xz")


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    return unxz(TEKKEN, tmp_path_factory.mktemp("tekken"))


@pytest.fixture(scope="module")
def tok(path):
    return toksmith.load_any(path)


@pytest.fixture(scope="module")
def golden():
    with lzma.open(GOLDEN, "rt", encoding="utf-8") as f:
        return json.load(f)


def _big():
    with open(os.path.join(DATA, "corpora", "english_slice.txt"), encoding="utf-8") as f:
        return ((f.read() + "".join(MULTILINGUAL)) * 4)[: 1 << 20]


def test_loads_as_mistral_common_builds_it(path, tok):
    assert detect_format(path) == "tekken"
    assert tok.name == "tekken_240718" and tok.n_vocab == 131072
    # 1000 control tokens first (v3 files list none: mistral-common's 20, then fillers)
    assert len(tok.special_tokens) == 1000
    assert [tok.special_tokens[t] for t in tk.DEPRECATED_SPECIAL_TOKENS] == list(range(20))
    assert tok.special_tokens["<SPECIAL_20>"] == 20 and tok.special_tokens["<SPECIAL_999>"] == 999
    # the ranks shifted past them: the byte 0x00 is id 1000
    assert tok.encode_single_token(b"\x00") == 1000
    assert tok.metadata["tekken"]["bos"] == "<s>"


def test_golden_ids(path, tok, golden):
    names = list(tk.DEPRECATED_SPECIAL_TOKENS)
    texts = all_texts(names)
    assert len(texts) == len(golden["ids"])
    # control tokens are never read from text: their names are plain text
    assert tok.encode_ordinary_batch(texts) == golden["ids"]
    assert tok.encode(texts[-1], disallowed_special=()) == golden["ids"][-1]
    assert tok.encode_ordinary(_big()) == golden["big_ids"]
    for ids, text in zip(golden["mixed"], golden["decoded"]):
        assert tok.decode(ids, skip_special_tokens=True) == text


def test_live_mistral_common(path, tok):
    tekken = pytest.importorskip("mistral_common.tokens.tokenizers.tekken")
    ref = tekken.Tekkenizer.from_file(path)
    for t in all_texts(list(tk.DEPRECATED_SPECIAL_TOKENS)):
        ids = tok.encode_ordinary(t)
        assert ids == ref.encode(t, False, False), t
        assert tok.decode(ids, skip_special_tokens=True) == ref.decode(ids)


def _doc(**config):
    vocab = [
        {"rank": i, "token_bytes": base64.b64encode(bytes([i])).decode(), "token_str": None}
        for i in range(256)
    ]
    cfg = {
        "pattern": r"\s+|\S+",
        "num_vocab_tokens": 256,
        "default_vocab_size": 276,
        "default_num_special_tokens": 20,
        "version": "v3",
    }
    cfg.update(config)
    return {"config": cfg, "vocab": vocab}


def test_listed_special_tokens_and_fillers():
    doc = _doc(version="v11", default_vocab_size=266, default_num_special_tokens=10)
    with pytest.raises(TokenizerFileError, match="must list its special_tokens"):
        tk.read_tekken(doc)
    doc["special_tokens"] = [
        {"rank": 0, "token_str": "<unk>", "is_control": True},
        {"rank": 1, "token_str": "<s>", "is_control": True},
    ]
    tok = toksmith.Tokenizer.from_spec(tk.read_tekken(doc))
    assert tok.special_tokens == {
        "<unk>": 0,
        "<s>": 1,
        **{f"<SPECIAL_{i}>": i for i in range(2, 10)},
    }
    assert tok.encode_ordinary("a <s>") == [10 + b for b in b"a <s>"]


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda d: d["config"].update(version="v99"), "not a Tekken version"),
        (lambda d: d["config"].update(default_vocab_size=300), "fewer than the 280"),
        (lambda d: d["config"].update(default_num_special_tokens=-1), "non-negative"),
        (lambda d: d["vocab"][5].update(rank=6), r"vocab\[5\]"),
        (lambda d: d["vocab"][5].update(token_bytes="!!"), "not valid base64"),
        (lambda d: d["vocab"][5].update(token_bytes="AA=="), "single byte 0x05"),
        (
            lambda d: d.update(special_tokens=[{"rank": 3, "token_str": "x"}]),
            r"special_tokens\[0\]",
        ),
        (lambda d: d["config"].update(pattern=""), "config.pattern"),
    ],
)
def test_malformed_files_name_the_field(change, match):
    doc = _doc()
    change(doc)
    with pytest.raises(TokenizerFileError, match=match):
        toksmith.Tokenizer.from_spec(tk.read_tekken(doc))


def test_cli_takes_it(path, tmp_path, capsys):
    from toksmith.cli import main

    src = tmp_path / "in.txt"
    src.write_text("Hello [INST] wörld 😀", encoding="utf-8")
    out = tmp_path / "ids.txt"
    assert main(["encode", "-t", path, str(src), "-o", str(out)]) == 0
    ids = [int(x) for x in out.read_text().split()]
    tok = toksmith.load_any(path)
    assert ids == tok.encode_ordinary("Hello [INST] wörld 😀")
    assert main(["info", "-t", path]) == 0
    assert "131072" in capsys.readouterr().out
