"""Rank files of open models (Llama 3, Llama 4, Qwen 1): recognised by sha256 with the pattern
and special tokens their own code defines; an unrecognised rank file without a pattern is an
error, not a guess."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import unicodedata
import warnings

import pytest

import toksmith
from toksmith.files import tiktoken as tt

from .model_texts import all_texts, unxz

tiktoken = pytest.importorskip("tiktoken")
tiktoken_load = pytest.importorskip("tiktoken.load")

SLICES = {
    "llama3": "vocabs/models/llama3_first10000.tiktoken",
    "llama4": "vocabs/models/llama4_first10000.tiktoken",
    "qwen1": "vocabs/models/qwen1_first10000.tiktoken",
}


def test_table_is_the_models_own_definition():
    l3, l4, q = (tt.MODEL_RANK_FILES[k] for k in ("llama3", "llama4", "qwen1"))
    # ids as llama-models 0.3.0 and Qwen's tokenization_qwen.py number them
    assert l3.special_tokens["<|begin_of_text|>"] == 128000
    assert l3.special_tokens["<|eot_id|>"] == 128009
    assert l3.special_tokens["<|image|>"] == 128011
    assert l3.special_tokens["<|reserved_special_token_245|>"] == 128255
    assert l4.special_tokens["<|begin_of_text|>"] == 200000
    assert l4.special_tokens["<|eot|>"] == 200008
    assert l4.special_tokens["<|patch|>"] == 200092
    assert l4.special_tokens["<|reasoning_thinking_end|>"] == 201143
    assert q.special_tokens["<|endoftext|>"] == 151643
    assert q.special_tokens["<|im_end|>"] == 151645
    assert q.special_tokens["<|extra_204|>"] == 151850
    for e in (l3, l4, q):
        ids = sorted(e.special_tokens.values())
        assert ids == list(range(ids[0], e.n_vocab))  # contiguous, right after the ranks
    assert "[\\r\\n/]*" in l4.pattern and "\\p{N}{1,3}" in l3.pattern
    assert "|\\p{N}|" in q.pattern  # Qwen splits every digit
    # the real files' sha256 are recognised
    assert tt._BY_SHA[tt._LLAMA3_SHA] == "llama3"
    assert tt._BY_SHA[tt._LLAMA4_SHA] == "llama4"
    assert tt._BY_SHA[tt._QWEN1_SHA] == "qwen1"
    assert tt.rank_file_preset("Llama3.1") is l3 and tt.rank_file_preset("qwen") is q


def _as_slice(monkeypatch, key, path):
    """Make ``path`` (a slice of the model's file) recognised as the model's file, its special
    tokens numbered right after the slice's ranks (the real file's hash cannot be had from a slice)."""
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    e = tt.MODEL_RANK_FILES[key]
    base = min(e.special_tokens.values())
    specials = {t: i - base + 10000 for t, i in e.special_tokens.items()}
    fake = dataclasses.replace(e, sha256=digest, special_tokens=specials)
    monkeypatch.setitem(tt.MODEL_RANK_FILES, key, fake)
    monkeypatch.setitem(tt._BY_SHA, digest, key)
    return fake


@pytest.mark.parametrize("key", sorted(SLICES))
def test_recognised_file_matches_the_models_tiktoken(key, tmp_path, monkeypatch):
    path = unxz(SLICES[key], tmp_path)
    e = _as_slice(monkeypatch, key, path)
    tok = toksmith.load_any(path)
    assert tok.name == key and tok.pattern == e.pattern and tok.special_tokens == e.special_tokens
    assert toksmith.from_tiktoken(path, preset=key).special_tokens == e.special_tokens
    enc = tiktoken.Encoding(
        key,
        pat_str=e.pattern,
        mergeable_ranks=tiktoken_load.load_tiktoken_bpe(path),
        special_tokens=e.special_tokens,
    )
    texts = all_texts(list(e.special_tokens)[:40])
    # Qwen's tokenization_qwen.py: unicodedata.normalize("NFC", text), then tiktoken's encode
    model = (lambda t: unicodedata.normalize("NFC", t)) if key == "qwen1" else (lambda t: t)
    assert tok.encode_batch(texts, allowed_special="all") == enc.encode_batch(
        [model(t) for t in texts], allowed_special="all"
    )
    assert tok.encode_ordinary_batch(texts) == enc.encode_ordinary_batch([model(t) for t in texts])
    for t in texts:
        ids = tok.encode(t, allowed_special="all")
        assert tok.decode(ids) == enc.decode(ids)


def test_qwen1_normalizes_the_whole_text(tmp_path, monkeypatch):
    path = unxz(SLICES["qwen1"], tmp_path)
    e = _as_slice(monkeypatch, "qwen1", path)
    tok = toksmith.load_any(path)
    assert tok.metadata["normalizer"]["form"] == "NFC"
    assert tok.metadata["normalizer"]["applied"] is True
    assert tok.normalizer == {"type": "toksmith.WholeText", "normalizer": {"type": "NFC"}}
    enc = tiktoken.Encoding(
        "qwen1",
        pat_str=e.pattern,
        mergeable_ranks=tiktoken_load.load_tiktoken_bpe(path),
        special_tokens=e.special_tokens,
    )
    # NFC joins '>' + U+0338 into '≯' before special tokens are looked for, as Qwen's code does
    for t in ["<|endoftext|>\u0338 e\u0301", "A\u030a <|im_start|>x", "\u212b\ufb01"]:
        want = enc.encode(unicodedata.normalize("NFC", t), allowed_special="all")
        assert tok.encode(t, allowed_special="all") == want, t
    assert tok.encode("e\u0301") == tok.encode("\u00e9")
    # saved and loaded again as toksmith JSON, the normalizer stays
    tok.save(tmp_path / "q.json")
    back = toksmith.load(tmp_path / "q.json")
    assert back.encode("<|endoftext|>\u0338", allowed_special="all") == tok.encode(
        "<|endoftext|>\u0338", allowed_special="all"
    )
    # exported to tokenizer.json, every added token is marked normalized, so tokenizers
    # normalizes the whole text first too: the same ids, no warning
    tokenizers = pytest.importorskip("tokenizers")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tok.save_huggingface(tmp_path / "hf")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "hf" / "tokenizer.json"))
    for t in [
        "<|endoftext|>\u0338 e\u0301",
        "A\u030a <|im_start|>x\u0338",
        "\u212b\ufb01 <|endoftext|>",
    ]:
        assert hf.encode(t).ids == tok.encode(t, allowed_special="all"), t


def test_preset_checks_the_hash(tmp_path):
    path = unxz(SLICES["llama3"], tmp_path)
    with pytest.raises(
        toksmith.TokenizerFileError, match="does not match llama3's tokenizer.model"
    ):
        toksmith.from_tiktoken(path, preset="llama3")
    with pytest.raises(ValueError, match="open models' rank files: .*llama3"):
        toksmith.from_tiktoken(path, preset="llama9")


def test_unrecognised_rank_file_needs_a_pattern(tmp_path):
    path = unxz(SLICES["llama4"], tmp_path)
    with pytest.raises(toksmith.TokenizerFileError, match="stores no split pattern.*pattern="):
        toksmith.load_any(path)
    with pytest.raises(toksmith.TokenizerFileError, match="stores no split pattern"):
        toksmith.from_tiktoken(path)
    tok = toksmith.load_any(path, pattern=tt.LLAMA4_PATTERN)
    assert tok.special_tokens == {} and tok.n_vocab == 10000


WHISPER_SLICE = "vocabs/models/whisper_multilingual_first5000.tiktoken"


def _whisper_file(tmp_path):
    """The slice with the empty-token line Whisper's file has (``= 50256`` there) at its end."""
    path = unxz(WHISPER_SLICE, tmp_path)
    with open(path, "ab") as f:
        f.write(b"= 5000\n")
    return path


def test_whisper_specials_are_whispers_own():
    sp = tt.MODEL_RANK_FILES["whisper"].special_tokens
    # openai-whisper's tokenizer.get_encoding("multilingual") numbering (99 languages)
    assert sp["<|endoftext|>"] == 50257 and sp["<|startoftranscript|>"] == 50258
    assert sp["<|en|>"] == 50259 and sp["<|su|>"] == 50357 and "<|yue|>" not in sp
    assert sp["<|transcribe|>"] == 50359 and sp["<|notimestamps|>"] == 50363
    assert sp["<|0.00|>"] == 50364 and sp["<|30.00|>"] == 51864
    v3 = tt.MODEL_RANK_FILES["whisper-v3"].special_tokens
    assert v3["<|yue|>"] == 50358 and v3["<|transcribe|>"] == 50360 and v3["<|30.00|>"] == 51865
    assert tt._BY_SHA[tt._WHISPER_SHA] == "whisper"


@pytest.mark.parametrize("key", ["whisper", "whisper-v3"])
def test_whisper_file_with_its_empty_token(key, tmp_path, monkeypatch):
    path = _whisper_file(tmp_path)
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    e = tt.MODEL_RANK_FILES[key]
    specials = tt.whisper_specials(99 if key == "whisper" else 100, start=5001)
    monkeypatch.setitem(
        tt.MODEL_RANK_FILES, key, dataclasses.replace(e, sha256=digest, special_tokens=specials)
    )
    monkeypatch.setitem(tt._BY_SHA, digest, key)
    tok = toksmith.load_any(path) if key == "whisper" else toksmith.from_tiktoken(path, preset=key)
    assert tok.metadata["empty_tokens"] == [5000] and tok.special_tokens == specials
    # as openai-whisper builds it: tiktoken's lenient base64 reads "=" as the empty token
    with open(path, "rb") as f:
        ranks = {
            base64.b64decode(t): int(r) for t, r in (line.split() for line in f.read().splitlines())
        }
    assert ranks[b""] == 5000
    enc = tiktoken.Encoding(
        "w", pat_str=tt.WHISPER_PATTERN, mergeable_ranks=ranks, special_tokens=specials
    )
    texts = all_texts(list(specials)[:120])
    assert tok.encode_batch(texts, allowed_special="all") == enc.encode_batch(
        texts, allowed_special="all"
    )
    for t in texts[:40]:
        ids = tok.encode(t, allowed_special="all")
        assert tok.decode(ids) == enc.decode(ids)


def test_empty_token_only_in_place_of_a_rank(tmp_path):
    path = _whisper_file(tmp_path)
    with open(path, "ab") as f:
        f.write(b"= 5000\n")
    with pytest.raises(toksmith.TokenizerFileError, match="duplicate rank 5000"):
        toksmith.from_tiktoken(path, pattern=tt.WHISPER_PATTERN)


@pytest.mark.parametrize("in_folder", [False, True])
def test_llama_tokenizer_model_is_a_rank_file(in_folder, tmp_path, monkeypatch):
    """Meta's Llama 3 / 4 ``tokenizer.model`` is a tiktoken rank file despite its name: found by
    its content (not read as SentencePiece), alone or as a model folder's tokenizer.model."""
    from toksmith.files.detect import detect_format

    src = unxz(SLICES["llama3"], tmp_path)
    folder = tmp_path / "Meta-Llama-3-8B"
    folder.mkdir()
    path = folder / "tokenizer.model"
    with open(src, "rb") as f:
        path.write_bytes(f.read())
    e = _as_slice(monkeypatch, "llama3", str(path))
    target = folder if in_folder else path
    assert detect_format(target) == "tiktoken"
    tok = toksmith.load_any(target)
    assert tok.name == "llama3" and tok.special_tokens == e.special_tokens
    # a real SentencePiece model of that name is still read as one
    sp = tmp_path / "sp" / "tokenizer.model"
    sp.parent.mkdir()
    with open(unxz("models/llama2.model", tmp_path), "rb") as f:
        sp.write_bytes(f.read())
    assert detect_format(sp) == "sentencepiece" and detect_format(sp.parent) == "sentencepiece"
