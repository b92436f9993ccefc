"""Exporting a ranks-only vocabulary (a tiktoken rank file: Llama 3, Qwen 1, cl100k) to Hugging
Face gives ``tokenizers`` the same ids (issue 30). A rank table whose tokens are each the BPE of
two lower-ranked tokens is written with its recovered merge list; one that is not (Llama 3:
``".:.:"``, id 100421, is reached only as a whole piece) is written as ``transformers``
converts tiktoken files, with ``"ignore_merges": true``."""

from __future__ import annotations

import json

import pytest

import toksmith
from tests.complexity import assert_linear
from toksmith.files import tiktoken as tt
from toksmith.files.huggingface import (
    _tiktoken_merges_reference,
    huggingface_json,
    tiktoken_merges,
)

from .model_texts import all_texts, unxz

tokenizers = pytest.importorskip("tokenizers")

#: Llama 3's tokens around ".:.:" in their order in the real file (ids 17406, 18976, 100421,
#: 105051, 111898): with lower ranks, BPE makes ". :. :" of ".:.:", so Llama 3's rank table
#: has no merge list
DOTS = [b":.", b".:", b".:.:", b".:.", b":.:"]
DOT_TEXTS = [".:.:", "a.:.:b", " .:.:.:.: x", "::..::.:.:", ".:.\n:.:", "x :.:.:.:. y"]


@pytest.fixture(scope="module")
def llama3_like(tmp_path_factory):
    """The first 10000 ranks of Llama 3's tokenizer.model and the five tokens above, with
    Llama 3's pattern and first special tokens."""
    path = unxz("vocabs/models/llama3_first10000.tiktoken", tmp_path_factory.mktemp("l3"))
    ranks = tt.load_tiktoken_ranks(path)
    n = len(ranks)
    for k, t in enumerate(DOTS):
        ranks[t] = n + k
    specials = {"<|begin_of_text|>": n + 5, "<|end_of_text|>": n + 6, "<|eot_id|>": n + 7}
    return toksmith.Tokenizer.from_ranks(ranks, tt.LLAMA3_PATTERN, special_tokens=specials)


@pytest.fixture(scope="module")
def qwen1(tmp_path_factory):
    path = unxz("vocabs/models/qwen1_first10000.tiktoken", tmp_path_factory.mktemp("q1"))
    ranks = tt.load_tiktoken_ranks(path)
    n = len(ranks)
    specials = {"<|endoftext|>": n, "<|im_start|>": n + 1, "<|im_end|>": n + 2}
    return toksmith.Tokenizer.from_ranks(ranks, tt.QWEN1_PATTERN, special_tokens=specials)


def _check_export(tok, tmp_path, texts):
    tok.save_huggingface(tmp_path)
    path = tmp_path / "tokenizer.json"
    hf = tokenizers.Tokenizer.from_file(str(path))
    back = toksmith.load_any(path)
    assert back.mergeable_ranks() == tok.mergeable_ranks()
    assert back.special_tokens == tok.special_tokens
    for t in texts:
        ids = tok.encode(t, allowed_special="all")
        assert hf.encode(t, add_special_tokens=False).ids == ids, t
        assert back.encode(t, allowed_special="all") == ids, t
        assert hf.decode(ids, skip_special_tokens=False) == tok.decode(ids)
    return json.loads(path.read_text(encoding="utf-8"))


def test_a_rank_table_that_is_no_merge_list_exports_with_ignore_merges(llama3_like, tmp_path):
    with pytest.raises(toksmith.MergesError):
        llama3_like.merges()
    doc = _check_export(llama3_like, tmp_path, all_texts(llama3_like.special_tokens) + DOT_TEXTS)
    model = doc["model"]
    assert model["ignore_merges"] is True
    vocab = model["vocab"]
    pairs = [m.split(" ") for m in model["merges"]]
    made = [vocab[a + b] for a, b in pairs]
    assert made == sorted(made)
    assert len(set(made)) < len(made)  # several merges make one token
    dots = [p for p in pairs if vocab[p[0] + p[1]] == vocab[".:.:"]]
    assert dots == [[".", ":.:"], [".:", ".:"], [".:.", ":"]]  # (by the parts' ids)
    # ".:.:" is made from ".:" + ".:" only as a whole piece: toksmith's BPE stops at 3 parts
    assert llama3_like.encode(".:.:") == [vocab[".:.:"]]


def test_the_merges_are_those_transformers_writes(llama3_like, tmp_path):
    """transformers' TikTokenConverter on the same rank file writes the same merge list."""
    converter = pytest.importorskip("transformers.convert_slow_tokenizer")
    pytest.importorskip("tiktoken")
    path = tmp_path / "ranks.tiktoken"
    tt.dump_tiktoken_ranks(llama3_like.mergeable_ranks(), path)
    _, theirs = converter.TikTokenConverter(
        vocab_file=str(path), pattern=tt.LLAMA3_PATTERN
    ).extract_vocab_merges_from_model(str(path))
    assert tiktoken_merges(llama3_like.mergeable_ranks()) == [tuple(m) for m in theirs]
    doc = huggingface_json(llama3_like)
    assert doc["model"]["merges"] == [f"{a} {b}" for a, b in theirs]


def test_the_native_merge_list_is_the_reference_one(llama3_like, qwen1):
    for tok in (llama3_like, qwen1):
        ranks = tok.mergeable_ranks()
        assert tiktoken_merges(ranks) == _tiktoken_merges_reference(ranks)
    # runs of one byte (every cut of every token is a split), other runs, and ids given twice
    # (ties broken by the cut, then the token, as the reference's tuples)
    ranks = {bytes([b]): b for b in range(256)}
    for n in range(2, 40):
        ranks[b"a" * n] = 300 + n
        ranks[b"ab" * n] = 400 + n
        ranks[b"ba" * (n // 2) + b"\xff"] = 600 + n % 7
    got = tiktoken_merges(ranks)
    assert got == _tiktoken_merges_reference(ranks)
    assert len([m for m in got if m[0] + m[1] == "a" * 30]) == 29


def test_the_merge_list_is_found_in_linear_time():
    """A long token costs a lookup of each of its prefixes and suffixes by hashing: quadratic."""
    single = {bytes([b]): b for b in range(256)}

    def run(n):
        ranks = {**single, b"ab" * n: 256, b"b" + b"ab" * (n - 1): 257, b"a" * n: 258}
        assert tiktoken_merges(ranks) == [("a", "b" + "ab" * (n - 1))]

    assert_linear(run, 100_000)


def test_a_rank_table_with_a_merge_list_exports_it(qwen1, tmp_path):
    qwen1.merges()  # recovered
    doc = _check_export(qwen1, tmp_path, all_texts(qwen1.special_tokens))
    assert doc["model"]["ignore_merges"] is False
    assert len(doc["model"]["merges"]) == len(qwen1.mergeable_ranks()) - 256


def test_cl100k_exports_exactly(tmp_path, cl100k_tok):
    texts = all_texts()[:200]
    _check_export(cl100k_tok, tmp_path, texts)


def test_tokenizer_json_round_trips_a_rank_table_that_is_no_merge_list(llama3_like, tmp_path):
    path = tmp_path / "tokenizer.json"
    llama3_like.save(path)
    back = toksmith.load(path)
    assert back.pattern == llama3_like.pattern
    texts = all_texts(llama3_like.special_tokens)[:100] + DOT_TEXTS
    assert back.encode_batch(texts, allowed_special="all") == llama3_like.encode_batch(
        texts, allowed_special="all"
    )
