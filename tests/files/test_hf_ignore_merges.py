"""Hugging Face tokenizer.json files with ``"ignore_merges": true`` and several merges per
token (Llama 3.x, and every vocabulary ``transformers`` converts from tiktoken): loaded exactly,
compared with ``tokenizers`` on a synthetic file built from a slice of Llama 3's ranks the way
``transformers`` converts tiktoken files."""

from __future__ import annotations

import json

import pytest

import toksmith
from toksmith.bytelevel import token_to_str
from toksmith.files import tiktoken as tt

from .model_texts import all_texts, unxz

tokenizers = pytest.importorskip("tokenizers")

SPECIALS = ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"]


def _converted(ranks):
    """vocab + merges as transformers' TikTokenConverter writes them: every split of a token
    into two tokens is a merge, sorted by (merged id, left length, right length)."""
    vocab = {token_to_str(b): i for b, i in ranks.items()}
    merges = []
    for tok, i in vocab.items():
        local = [
            (tok[:k], tok[k:], i)
            for k in range(1, len(tok))
            if tok[:k] in vocab and tok[k:] in vocab
        ]
        merges += sorted(local, key=lambda m: (vocab[m[0]], vocab[m[1]]))
    merges.sort(key=lambda m: (m[2], len(m[0]), len(m[1])))
    return vocab, [[a, b] for a, b, _ in merges]


@pytest.fixture(scope="module")
def document(tmp_path_factory):
    path = unxz("vocabs/models/llama3_first10000.tiktoken", tmp_path_factory.mktemp("l3"))
    ranks = toksmith.files.tiktoken.load_tiktoken_ranks(path)
    vocab, merges = _converted(ranks)
    n = len(vocab)
    added = []
    for k, t in enumerate(SPECIALS):
        vocab[t] = n + k
        added.append(
            {
                "id": n + k,
                "content": t,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
        )
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {
                    "type": "Split",
                    "pattern": {"Regex": tt.LLAMA3_PATTERN},
                    "behavior": "Isolated",
                    "invert": False,
                },
                {
                    "type": "ByteLevel",
                    "add_prefix_space": False,
                    "trim_offsets": True,
                    "use_regex": False,
                },
            ],
        },
        "post_processor": None,
        "decoder": {
            "type": "ByteLevel",
            "add_prefix_space": True,
            "trim_offsets": True,
            "use_regex": True,
        },
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": True,
            "vocab": vocab,
            "merges": merges,
        },
    }


def test_the_synthetic_file_has_the_llama3_properties(document):
    merges = document["model"]["merges"]
    vocab = document["model"]["vocab"]
    made = [vocab[a + b] for a, b in merges]
    assert len(set(made)) < len(made)  # several merges make one token
    assert any(vocab[a] > vocab[a + b] or vocab[b] > vocab[a + b] for a, b in merges)


def test_ids_and_decode_equal_tokenizers(document, tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    tok = toksmith.load_any(path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    texts = all_texts(SPECIALS)
    for t in texts:
        ids = tok.encode(t, allowed_special="all")
        assert ids == hf.encode(t, add_special_tokens=False).ids, t
        assert tok.decode(ids) == hf.decode(ids, skip_special_tokens=False)
    # the dict and the tokenizers object load the same
    assert toksmith.from_huggingface(document).encode_batch(texts[:20]) == tok.encode_batch(
        texts[:20]
    )
    assert toksmith.from_huggingface(hf).encode_batch(texts[:20]) == tok.encode_batch(texts[:20])


def test_a_missing_split_is_refused(document):
    doc = json.loads(json.dumps(document))
    merges = doc["model"]["merges"]
    vocab = doc["model"]["vocab"]
    # drop one merge of a token that other merges also make
    made = {}
    for m in merges:
        made.setdefault(vocab[m[0] + m[1]], []).append(m)
    victim = next(ms[1] for ms in made.values() if len(ms) > 1)
    merges.remove(victim)
    with pytest.raises(toksmith.ConversionError, match="has no merge"):
        toksmith.from_huggingface(doc)


def test_decreasing_merge_ids_are_refused(document):
    doc = json.loads(json.dumps(document))
    merges = doc["model"]["merges"]
    merges[300], merges[3000] = merges[3000], merges[300]
    with pytest.raises(toksmith.ConversionError, match="must not decrease"):
        toksmith.from_huggingface(doc)
