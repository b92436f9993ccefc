"""Hugging Face files with a normalizer, and byte-level vocabularies without the 13 bytes UTF-8
never uses: GPT-NeoX-20B / Pythia / OLMo 1 (NFC). Ids must equal ``tokenizers``' on real text,
special tokens included; the native normalizer is applied between the special tokens."""

from __future__ import annotations

import json
import lzma
import os
import pickle

import pytest

import toksmith
from toksmith.bytelevel import token_to_str
from toksmith.errors import ConversionError

from .model_texts import DATA, MULTILINGUAL, all_texts, unxz

NEOX = "vocabs/models/gptneox20b_pii_special_tokenizer.json"
GOLDEN = os.path.join(DATA, "vocabs/models/gptneox20b_golden_ids.json.xz")


@pytest.fixture(scope="module")
def neox_path(tmp_path_factory):
    return unxz(NEOX, tmp_path_factory.mktemp("neox"))


@pytest.fixture(scope="module")
def neox(neox_path):
    return toksmith.load_any(neox_path)


def _added(path):
    with open(path, encoding="utf-8") as f:
        return [a["content"] for a in json.load(f)["added_tokens"]]


def test_neox_loads_with_its_normalizer_and_missing_bytes(neox):
    assert neox.normalizer == {"type": "NFC"}
    assert neox.n_vocab == 50280 and len(neox.special_tokens) == 2
    assert set(neox._missing_bytes) == {0xC0, 0xC1, *range(0xF5, 0x100)}
    # every valid UTF-8 text is still encodable, the highest code point included
    t = "\U0010ffff\u00c0\U0001f600"
    assert neox.decode(neox.encode(t)) == t


def test_neox_golden_ids(neox_path, neox):
    """Ids as tokenizers 0.23.3 gave them (stored, so this runs without tokenizers)."""
    with lzma.open(GOLDEN, "rt", encoding="utf-8") as f:
        golden = json.load(f)
    texts = all_texts(_added(neox_path))
    assert len(texts) == len(golden["ids"])
    assert neox.encode_batch(texts, allowed_special="all") == golden["ids"]
    for t, want in zip(texts, golden["ids"]):
        assert neox.encode(t, allowed_special="all") == want


def test_neox_equals_tokenizers(neox_path, neox):
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer.from_file(neox_path)
    texts = all_texts(_added(neox_path)) + [
        "e\u0301 A\u030a \u1100\u1161\u11a8 <|endoftext|>\u0338 |||EMAIL_ADDRESS|||\u0301",
        "<|padding|>" * 3 + "\u0338" + "     " * 9,
    ]
    for t in texts:
        ids = neox.encode(t, allowed_special="all")
        assert ids == hf.encode(t).ids, t
        assert neox.decode(ids) == hf.decode(ids, skip_special_tokens=False), t
    # a whole 1 MB string
    with open(os.path.join(DATA, "corpora", "english_slice.txt"), encoding="utf-8") as f:
        big = (f.read() + "".join(MULTILINGUAL)) * 4
    big = big[: 1 << 20]
    assert neox.encode(big, allowed_special="all") == hf.encode(big).ids


def test_normalizer_applies_between_special_tokens(neox):
    # NFC of the whole text would join the token's last ">" and U+0338 into U+226F
    ids = neox.encode("<|endoftext|>\u0338", allowed_special="all")
    assert ids[0] == neox.special_tokens["<|endoftext|>"]
    assert neox.decode(ids[1:]) == "\u0338"
    # as plain text the normalizer sees it all
    assert neox.decode(neox.encode_ordinary("<|endoftext|>\u0338")) == "<|endoftext|\u226f"
    assert neox.encode_ordinary("e\u0301") == neox.encode_ordinary("\u00e9")
    assert neox.encode_batch(["e\u0301"]) == [neox.encode("\u00e9")]
    assert neox.encode_ordinary_batch(["e\u0301"], threads=2) == [neox.encode("\u00e9")]
    assert neox.encode_bytes("e\u0301".encode()) == neox.encode("\u00e9")
    np = pytest.importorskip("numpy")
    assert np.array_equal(neox.encode_to_numpy("e\u0301"), neox.encode("\u00e9"))


def test_bytes_the_vocabulary_lacks(neox):
    with pytest.raises(ValueError, match="0xff .*not a token"):
        neox.encode_bytes(b"ab\xff")
    with pytest.raises(ValueError, match="0xc0 .*not a token"):
        neox._encode_single_piece(b"\xc0")
    with pytest.raises(ValueError, match="valid UTF-8 only"):
        neox.encode_bytes(b"ab\x80")  # a byte the vocabulary has, but not text


def test_offsets_and_unstable_refused_with_a_normalizer(neox):
    with pytest.raises(ValueError, match="normalizer"):
        neox.encode_with_offsets("abc")
    with pytest.raises(ValueError, match="normalizer"):
        neox.encode_with_unstable("abc")


def test_normalizer_survives_save_pickle_and_export(neox, tmp_path):
    text = "e\u0301 caf\u00e9 <|endoftext|>"
    want = neox.encode(text, allowed_special="all")
    p = tmp_path / "neox.json"
    neox.save(p)
    back = toksmith.load(p)
    assert back.normalizer == {"type": "NFC"} and back.encode(text, allowed_special="all") == want
    copy = pickle.loads(pickle.dumps(neox))
    assert copy.normalizer == {"type": "NFC"} and copy.encode(text, allowed_special="all") == want
    with pytest.raises(ConversionError, match="normalizes text first"):
        neox.save_tiktoken(tmp_path / "x.tiktoken")
    spec = neox.to_spec(merges=False)
    assert spec.normalizer == {"type": "NFC"}
    tokenizers = pytest.importorskip("tokenizers")
    hf = neox.to_huggingface()
    assert isinstance(hf, tokenizers.Tokenizer)
    assert hf.encode(text).ids == want


def _tiny(normalizer, added=()):
    """A byte-level file with the 256 bytes and no merge, and ``normalizer``."""
    vocab = {token_to_str(bytes([b])): b for b in range(256)}
    return {
        "version": "1.0",
        "added_tokens": list(added),
        "normalizer": normalizer,
        "pre_tokenizer": {
            "type": "ByteLevel",
            "add_prefix_space": False,
            "trim_offsets": True,
            "use_regex": True,
        },
        "post_processor": None,
        "decoder": {
            "type": "ByteLevel",
            "add_prefix_space": False,
            "trim_offsets": True,
            "use_regex": True,
        },
        "model": {"type": "BPE", "vocab": vocab, "merges": []},
    }


@pytest.mark.parametrize(
    "norm",
    [
        {"type": "NFKC"},
        {"type": "NFD"},
        {"type": "NFKD"},
        {"type": "Lowercase"},
        {"type": "Strip", "strip_left": True, "strip_right": True},
        {"type": "Replace", "pattern": {"String": "  "}, "content": " "},
        {"type": "Prepend", "prepend": "_"},
        {"type": "Sequence", "normalizers": [{"type": "NFKD"}, {"type": "Lowercase"}]},
        {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "StripAccents"}]},
    ],
)
def test_each_native_normalizer_equals_tokenizers(norm):
    tokenizers = pytest.importorskip("tokenizers")
    doc = _tiny(norm)
    hf = tokenizers.Tokenizer.from_str(json.dumps(doc))
    tok = toksmith.from_huggingface(doc)
    for t in MULTILINGUAL + ["  Ünïcödé  ÀÉ İ ﬁ①  x  "]:
        assert tok.encode(t) == hf.encode(t).ids, (norm, t)


def test_unsupported_normalizers_name_the_component():
    with pytest.raises(ConversionError, match="normalizer BertNormalizer"):
        toksmith.from_huggingface(_tiny({"type": "BertNormalizer"}))
    with pytest.raises(ConversionError, match="normalizer Replace with pattern"):
        toksmith.from_huggingface(
            _tiny({"type": "Replace", "pattern": {"Regex": " +"}, "content": " "})
        )
    # an added token that tokenizers matches on the other side of the normalizer
    added = [
        {
            "id": 256,
            "content": "<x>",
            "special": False,
            "normalized": False,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
        }
    ]
    with pytest.raises(ConversionError, match="normalized=False under normalizer NFC"):
        toksmith.from_huggingface(_tiny({"type": "NFC"}, added))
    # an empty Sequence changes nothing
    assert (
        toksmith.from_huggingface(_tiny({"type": "Sequence", "normalizers": []})).normalizer is None
    )
