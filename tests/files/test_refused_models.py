"""Model files toksmith cannot represent exactly are refused with a ConversionError naming the
component (never loaded approximately)."""

from __future__ import annotations

import json

import pytest

import toksmith


def test_clip_end_of_word_bpe(tmp_path):
    # CLIP's layout: each byte alone and with the end-of-word suffix, merges ending in </w>
    chars = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    vocab = {c: i for i, c in enumerate(chars)}
    vocab.update({c + "</w>": len(chars) + i for i, c in enumerate(chars)})
    merges = ["#version: 0.2", "e r</w>", "t h", "th e</w>", "i n", "a n</w>"]
    for a, b in (("e", "r</w>"), ("t", "h"), ("th", "e</w>"), ("i", "n"), ("a", "n</w>")):
        vocab[a + b] = len(vocab)
    (tmp_path / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (tmp_path / "merges.txt").write_text("\n".join(merges) + "\n", encoding="utf-8")
    # toksmith.Tokenizer cannot run it and says so; load_any runs it (tests/files/test_clip.py)
    with pytest.raises(toksmith.ConversionError, match="end-of-word BPE .*CLIP"):
        toksmith.from_gpt2_files(tmp_path / "vocab.json", tmp_path / "merges.txt")
    tok = toksmith.load_any(tmp_path)
    assert tok.encode("The inn") == [vocab["the</w>"], vocab["in"], vocab["n</w>"]]


def test_incomplete_tekken(tmp_path):
    # read by the Tekken reader (tests/files/test_tekken.py), which names what is missing
    path = tmp_path / "tekken.json"
    doc = {
        "config": {"pattern": r"\s+|\S+", "default_num_special_tokens": 1000},
        "vocab": [{"rank": 0, "token_bytes": "AA==", "token_str": "\x00"}],
    }
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(toksmith.TokenizerFileError, match="not a Tekken version"):
        toksmith.load_any(path)


def test_several_splits(tmp_path):
    split = {"type": "Split", "behavior": "Isolated", "invert": False}
    doc = {
        "model": {"type": "BPE", "vocab": {chr(c): c - 33 for c in range(33, 127)}, "merges": []},
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {**split, "pattern": {"Regex": "\\p{N}{1,3}"}},
                {**split, "pattern": {"Regex": "\\s+"}},
                {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False},
            ],
        },
    }
    with pytest.raises(toksmith.ConversionError, match=r"pre_tokenizer Sequence\['Split', 'Split'"):
        toksmith.from_huggingface(doc)
