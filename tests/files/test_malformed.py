"""Malformed files raise clear errors naming what is wrong (one test each)."""

import base64
import json

import pytest

import toksmith
from tests.helpers import GPT2_ENCODER, GPT2_TIKTOKEN, GPT2_VOCAB_BPE
from toksmith import TokenizerFileError
from toksmith.formats import (
    ConversionError,
    from_gpt2_files,
    from_huggingface,
    from_tiktoken,
    load_any,
)
from toksmith.formats.huggingface import huggingface_json
from toksmith.formats.tiktoken import dump_tiktoken_ranks


def _bytes_ranks():
    return {bytes([b]): b for b in range(256)}


def _write_ranks(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return path


def _b64(b):
    return base64.b64encode(b).decode()


@pytest.fixture
def tiny():
    return toksmith.train_from_iterator(
        ["low lower lowest newest widest"] * 30,
        vocab_size=268,
        pattern="gpt2",
        special_tokens=["<|end|>"],
    )


# ------------------------------------------------------------------ .tiktoken


def test_tiktoken_duplicate_ranks(tmp_path):
    lines = [f"{_b64(bytes([b]))} {b}" for b in range(256)] + [f"{_b64(b'ab')} 255"]
    with pytest.raises(
        TokenizerFileError, match=r"line 257: duplicate rank 255 \(also on line 256\)"
    ):
        from_tiktoken(_write_ranks(tmp_path / "d.tiktoken", lines), pattern="gpt2")


def test_tiktoken_duplicate_tokens(tmp_path):
    lines = [f"{_b64(bytes([b]))} {b}" for b in range(256)] + [f"{_b64(b'a')} 256"]
    with pytest.raises(TokenizerFileError, match=r"line 257: the token b'a' appears twice"):
        from_tiktoken(_write_ranks(tmp_path / "d.tiktoken", lines), pattern="gpt2")


def test_tiktoken_non_base64(tmp_path):
    lines = [f"{_b64(bytes([b]))} {b}" for b in range(256)] + ["not*base64 256"]
    with pytest.raises(TokenizerFileError, match=r"line 257: b'not\*base64' is not valid base64"):
        from_tiktoken(_write_ranks(tmp_path / "b.tiktoken", lines), pattern="gpt2")


def test_tiktoken_gaps_in_ranks(tmp_path):
    ranks = _bytes_ranks()
    ranks[b"ab"] = 300
    p = tmp_path / "g.tiktoken"
    dump_tiktoken_ranks(ranks, p)
    with pytest.raises(
        TokenizerFileError,
        match=r"gaps: 44 id\(s\) below the largest rank 300 are missing \(256, 257",
    ):
        from_tiktoken(p, pattern="gpt2")


def test_tiktoken_truncated(tmp_path):
    raw = GPT2_TIKTOKEN.read_bytes()
    p = tmp_path / "t.tiktoken"
    p.write_bytes(raw[: len(raw) // 2 - 3])  # cut inside a line
    with pytest.raises(
        TokenizerFileError, match=r"line \d+: (expected 'base64-token rank'|.* not valid base64)"
    ):
        from_tiktoken(p, pattern="gpt2")
    with pytest.raises(TokenizerFileError, match="sha256"):
        from_tiktoken(p, preset="gpt2")


def test_tiktoken_bad_rank(tmp_path):
    lines = [f"{_b64(bytes([b]))} {b}" for b in range(256)] + [f"{_b64(b'ab')} -3"]
    with pytest.raises(TokenizerFileError, match="rank b'-3' is not a non-negative integer"):
        from_tiktoken(_write_ranks(tmp_path / "r.tiktoken", lines), pattern="gpt2")


def test_tiktoken_empty_file(tmp_path):
    p = tmp_path / "e.tiktoken"
    p.write_text("\n")
    with pytest.raises(TokenizerFileError, match="no tokens"):
        from_tiktoken(p, pattern="gpt2")


def test_tiktoken_missing_byte(tmp_path):
    ranks = {bytes([b]): b for b in range(255)}
    p = tmp_path / "m.tiktoken"
    dump_tiktoken_ranks(ranks, p)
    with pytest.raises(toksmith.VocabError, match="0xff is not a token"):
        from_tiktoken(p, pattern="gpt2")


# ------------------------------------------------------------------ tokenizer.json


def test_hf_truncated_json(tiny, tmp_path):
    text = json.dumps(huggingface_json(tiny))
    p = tmp_path / "tokenizer.json"
    p.write_text(text[: len(text) // 2])
    with pytest.raises(TokenizerFileError, match="not valid JSON \\(truncated or corrupted\\?\\)"):
        from_huggingface(p)
    with pytest.raises(TokenizerFileError, match="does not parse"):
        load_any(p)


def test_hf_merge_names_unknown_token(tiny):
    data = huggingface_json(tiny)
    data["model"]["merges"].append("l zzz")
    with pytest.raises(
        TokenizerFileError, match=r"merge \d+ \('l' 'zzz'\) names 'zzz', which is not a token"
    ):
        from_huggingface(data)


def test_hf_merge_result_not_in_vocab(tiny):
    data = huggingface_json(tiny)
    data["model"]["merges"].append("w w")
    with pytest.raises(TokenizerFileError, match="makes 'ww', which is not in the vocab"):
        from_huggingface(data)


def test_hf_duplicate_ids(tiny):
    data = huggingface_json(tiny)
    data["model"]["vocab"]["a"] = data["model"]["vocab"]["b"]
    with pytest.raises(TokenizerFileError, match="is given to both"):
        from_huggingface(data)


def test_hf_bad_merge_entry(tiny):
    data = huggingface_json(tiny)
    data["model"]["merges"][0] = "l o w"
    with pytest.raises(TokenizerFileError, match="merge 0 .* is not a pair"):
        from_huggingface(data)


def test_hf_not_a_tokenizer_json(tmp_path):
    p = tmp_path / "tokenizer.json"
    p.write_text('{"hello": "world"}')
    with pytest.raises(TokenizerFileError, match="no 'model' object"):
        from_huggingface(p)


def test_hf_added_token_id_conflict(tiny):
    data = huggingface_json(tiny)
    data["added_tokens"][0]["id"] = data["model"]["vocab"]["a"]
    with pytest.raises(
        TokenizerFileError, match="is the added token '<\\|end\\|>' but the vocab gives it to 'a'"
    ):
        from_huggingface(data)


def test_hf_vocab_key_not_bytelevel(tiny):
    data = huggingface_json(tiny)
    data["model"]["vocab"]["日本"] = 500
    with pytest.raises(ConversionError, match="made by no merge"):
        from_huggingface(data)


# ------------------------------------------------------------------ GPT-2 files


def test_gpt2_truncated_encoder_json(tmp_path):
    p = tmp_path / "encoder.json"
    p.write_bytes(GPT2_ENCODER.read_bytes()[:5000])
    with pytest.raises(TokenizerFileError, match="encoder.json is not valid JSON"):
        from_gpt2_files(p, GPT2_VOCAB_BPE)


def test_gpt2_merges_naming_unknown_token(tmp_path):
    p = tmp_path / "vocab.bpe"
    p.write_text(GPT2_VOCAB_BPE.read_text(encoding="utf-8") + "Ġthe qqqqzz\n", encoding="utf-8")
    with pytest.raises(
        TokenizerFileError, match="names 'qqqqzz', which is not a token of the vocab"
    ):
        from_gpt2_files(GPT2_ENCODER, p)


def test_gpt2_bad_merges_line(tmp_path):
    p = tmp_path / "merges.txt"
    p.write_text("#version: 0.2\nĠ t\nĠ a b\n", encoding="utf-8")
    with pytest.raises(TokenizerFileError, match="line 3: expected 'left right'"):
        from_gpt2_files(GPT2_ENCODER, p)


def test_gpt2_duplicate_ids(tmp_path):
    vocab = json.loads(GPT2_ENCODER.read_text(encoding="utf-8"))
    vocab["zzzz"] = 5
    p = tmp_path / "encoder.json"
    p.write_text(json.dumps(vocab))
    with pytest.raises(TokenizerFileError, match="id 5 is given to both"):
        from_gpt2_files(p, GPT2_VOCAB_BPE)


def test_gpt2_merges_out_of_id_order(tmp_path):
    lines = GPT2_VOCAB_BPE.read_text(encoding="utf-8").split("\n")
    lines[1], lines[2] = lines[2], lines[1]
    p = tmp_path / "vocab.bpe"
    p.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(ConversionError, match="out of order"):
        from_gpt2_files(GPT2_ENCODER, p)


# ------------------------------------------------------------------ detection


def test_unknown_format(tmp_path):
    p = tmp_path / "x.bin"
    p.write_bytes(b"\x00\x01garbage")
    with pytest.raises(TokenizerFileError, match="unknown tokenizer file format"):
        load_any(p)
    (tmp_path / "d").mkdir()
    with pytest.raises(TokenizerFileError, match="has no tokenizer.json"):
        load_any(tmp_path / "d")
    # a folder without the files is also a file-system problem, as a missing path is
    with pytest.raises(FileNotFoundError, match="has no tokenizer.json"):
        load_any(tmp_path / "d")
    with pytest.raises(FileNotFoundError, match="has no tokenizer.json"):
        toksmith.from_huggingface(tmp_path / "d")
