"""Sequences of Split pre-tokenizers (DeepSeek V3 / R1) loaded as one pattern that splits
exactly like Hugging Face's sequence: compared with ``tokenizers`` on varied and CJK-heavy
text."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import toksmith
from toksmith.bytelevel import str_to_token, token_to_str
from toksmith.files import huggingface as hf_files
from toksmith.pretokenize import split

from .model_texts import all_texts, fuzz

tokenizers = pytest.importorskip("tokenizers")


def _split(regex):
    return {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False}


#: DeepSeek V3's pre_tokenizer, as its tokenizer.json spells it
DEEPSEEK_V3 = {
    "type": "Sequence",
    "pretokenizers": [
        _split("\\p{N}{1,3}"),
        _split("[一-龥぀-ゟ゠-ヿ]+"),
        _split(hf_files._DS_LAST),
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
    ],
}


def _document(merges=()):
    vocab = {token_to_str(bytes([b])): b for b in range(256)}
    for a, b in merges:
        vocab[a + b] = len(vocab)
    return {
        "version": "1.0",
        "added_tokens": [],
        "normalizer": {"type": "Sequence", "normalizers": []},
        "pre_tokenizer": DEEPSEEK_V3,
        "post_processor": None,
        "decoder": {
            "type": "ByteLevel",
            "add_prefix_space": True,
            "trim_offsets": True,
            "use_regex": True,
        },
        "model": {"type": "BPE", "vocab": vocab, "merges": [f"{a} {b}" for a, b in merges]},
    }


def _texts():
    r = random.Random(3)
    pool = (
        "一丁中文字龥ぁあゝゞゟ゠アヽヾヿ・ーッ\u3099\u309a 　\n12３４五①!?。、「」abcXYZ'é\u0301\t"
    )
    cjk = ["".join(r.choice(pool) for _ in range(r.randint(1, 40))) for _ in range(800)]
    return all_texts() + fuzz(600, seed=5) + cjk


def test_the_sequence_is_deepseeks():
    assert DEEPSEEK_V3["pretokenizers"][1]["pattern"]["Regex"] == f"[{hf_files._DS_K}]+"


def test_pieces_equal_tokenizers():
    doc = _document()
    tok = toksmith.from_huggingface(doc)
    pre = tokenizers.Tokenizer.from_str(json.dumps(doc)).pre_tokenizer
    for t in _texts():
        want = [str_to_token(p).decode("utf-8") for p, _ in pre.pre_tokenize_str(t)]
        assert split(t, tok.pattern) == want, t


def test_ids_equal_tokenizers():
    merges = [("Ġ", "t"), ("e", "r"), ("1", "2"), ("12", "3"), ("ä", "¸"), ("ä¸", "Ń"), ("Ġt", "h")]
    doc = _document(merges)
    tok = toksmith.from_huggingface(doc)
    hf = tokenizers.Tokenizer.from_str(json.dumps(doc))
    for t in _texts():
        ids = tok.encode(t)
        assert ids == hf.encode(t, add_special_tokens=False).ids, t
        assert tok.decode(ids) == hf.decode(ids)


def test_an_unknown_sequence_names_the_component():
    doc = _document()
    doc["pre_tokenizer"] = json.loads(json.dumps(DEEPSEEK_V3))
    doc["pre_tokenizer"]["pretokenizers"][0] = _split("\\p{N}{1,2}")
    with pytest.raises(toksmith.ConversionError, match=r"pre_tokenizer Sequence\['Split', 'Split'"):
        toksmith.from_huggingface(doc)


def test_runs_on_the_native_scanner():
    # the one pattern of DeepSeek V3's sequence has a hand-written scanner (not the regex engine)
    tok = toksmith.from_huggingface(_document())
    assert tok._core.fast_pretokenizer


_POOL = list(
    "一丁龥ぁゝゟ゠アヿ・ーッ\u3099\u309a\u3040 　\n\r\t\x0b12３五①٣!?.,'#(。「"
    "aZéß\u0301\u200d\x00😀\u00a0\u2028"
)


@settings(max_examples=300, deadline=None)
@example(":\U0001cc00")  # a Unicode 16 symbol
@example(":\u20bfa")  # the bitcoin sign (Unicode 10)
@given(st.lists(st.sampled_from(_POOL), max_size=30).map("".join) | st.text(max_size=20))
def test_pieces_equal_tokenizers_on_any_text(text):
    pre = _pre_tokenizer()
    want = [str_to_token(p).decode("utf-8") for p, _ in pre.pre_tokenize_str(text)]
    assert split(text, _deepseek_pattern()) == want


_CACHE: dict = {}


def _pre_tokenizer():
    if "pre" not in _CACHE:
        _CACHE["pre"] = tokenizers.Tokenizer.from_str(json.dumps(_document())).pre_tokenizer
    return _CACHE["pre"]


def _deepseek_pattern():
    if "pattern" not in _CACHE:
        _CACHE["pattern"] = toksmith.from_huggingface(_document()).pattern
    return _CACHE["pattern"]
