"""Malformed files raise clear errors naming what is wrong (one test each)."""

from __future__ import annotations

import base64
import json
import warnings

import pytest

import toksmith
from tests.conftest import BYTES
from tests.helpers import GPT2_ENCODER, GPT2_TIKTOKEN, GPT2_VOCAB_BPE
from tests.panics import CORPUS, call, expect
from toksmith import Tokenizer, TokenizerFileError, _core
from toksmith.cli import main
from toksmith.formats import (
    ConversionError,
    detect_format,
    from_gpt2_files,
    from_huggingface,
    from_tiktoken,
    load_any,
)
from toksmith.formats.huggingface import huggingface_json
from toksmith.formats.tiktoken import dump_tiktoken_ranks
from toksmith.serialization import to_dict


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


@pytest.fixture(scope="module")
def tok():
    return toksmith.Tokenizer.from_ranks(
        {bytes([b]): b for b in range(256)} | {b"ab": 256}, "gpt2", special_tokens={"<|end|>": 257}
    )


def _late_format_file(tok, tmp_path, extra_items=()):
    """A toksmith file whose "format" key comes after 64 KB of metadata (load_any cannot tell its
    format from the file's head and parses it whole), with ``extra_items`` appended."""
    tok.save(tmp_path / "src.json")
    doc = json.loads((tmp_path / "src.json").read_text(encoding="utf-8"))
    doc["metadata"] = {"pad": "x" * 70_000}
    items = [(k, json.dumps(v)) for k, v in doc.items() if k not in ("format", "metadata")]
    items = (
        [("metadata", json.dumps(doc["metadata"]))]
        + items
        + [("format", '"toksmith"')]
        + list(extra_items)
    )
    path = tmp_path / "late.json"
    path.write_text(
        "{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in items) + "}", encoding="utf-8"
    )
    assert b'"format"' not in path.read_bytes()[: 1 << 16]
    return path


def _hf_files(tmp_path):
    tok = toksmith.train_from_iterator(
        ["hello world hello there"] * 5, vocab_size=270, pattern="gpt2"
    )
    tok.save_huggingface(tmp_path / "hf")
    tok.save_gpt2_files(tmp_path / "gpt2")
    return tok, tmp_path / "hf" / "tokenizer.json", tmp_path / "gpt2"


def _with_duplicate_first_key(text: str, member: str, new_value: str) -> str:
    """``text`` with the first key of the object under ``member`` given again (first) with
    ``new_value``."""
    i = text.index(f'"{member}"') if member else 0
    j = text.index("{", i)
    key = text[j + 1 : text.index(":", j)].strip()
    return text[: j + 1] + f"{key}: {new_value}," + text[j + 1 :]


def test_late_format_file_without_duplicates_loads(tok, tmp_path):
    path = _late_format_file(tok, tmp_path)
    assert detect_format(path) == "toksmith"
    loaded = load_any(path)
    assert loaded.special_tokens == {"<|end|>": 257} and loaded.encode("ab") == [256]


def test_late_format_file_with_a_top_level_duplicate_is_refused(tok, tmp_path):
    path = _late_format_file(tok, tmp_path, [("special_tokens", '{"<|other|>": 257}')])
    with pytest.raises(toksmith.TokenizerFileError, match=r"'special_tokens'.* twice"):
        toksmith.load(path)
    # was: load_any parsed the file with json.loads to find its format and kept the last value
    with pytest.raises(toksmith.TokenizerFileError, match=r"'special_tokens'.* twice"):
        load_any(path)


def test_late_format_file_with_a_nested_duplicate_is_refused(tok, tmp_path):
    path = _late_format_file(tok, tmp_path)
    raw = path.read_text(encoding="utf-8").replace(
        '"special_tokens":{"<|end|>": 257}', '"special_tokens":{"<|end|>": 257, "<|end|>": 257}'
    )
    assert raw.count('"<|end|>": 257') == 2
    path.write_text(raw, encoding="utf-8")
    with pytest.raises(toksmith.TokenizerFileError, match=r"'<\|end\|>'.* twice"):
        load_any(path)


def test_early_format_file_with_a_duplicate_is_refused(tok, tmp_path):
    tok.save(tmp_path / "t.json")
    raw = (tmp_path / "t.json").read_text(encoding="utf-8").rstrip()
    assert raw.endswith("}")
    (tmp_path / "t.json").write_text(raw[:-1] + ',\n "name": "again"\n}', encoding="utf-8")
    with pytest.raises(toksmith.TokenizerFileError, match="the key 'name' appears twice"):
        load_any(tmp_path / "t.json")


def test_a_vocab_key_twice_in_a_tokenizer_json_is_refused(tmp_path):
    tok, path, _ = _hf_files(tmp_path)
    assert (
        toksmith.from_huggingface(path).mergeable_ranks() == tok.mergeable_ranks()
    )  # as written: fine
    path.write_text(
        _with_duplicate_first_key(path.read_text(encoding="utf-8"), "vocab", "269"),
        encoding="utf-8",
    )
    for load in (toksmith.from_huggingface, toksmith.load_any):
        with pytest.raises(toksmith.TokenizerFileError, match="twice in one JSON object"):
            load(path)


def test_a_top_level_key_twice_in_a_tokenizer_json_is_refused(tmp_path):
    _, path, _ = _hf_files(tmp_path)
    text = path.read_text(encoding="utf-8")
    path.write_text('{"version": "0.9",' + text.lstrip()[1:], encoding="utf-8")
    assert text.count('"version"') == 1
    for load in (toksmith.from_huggingface, toksmith.load_any):
        with pytest.raises(toksmith.TokenizerFileError, match="'version' twice"):
            load(path)


def test_a_key_twice_in_an_encoder_json_is_refused(tmp_path):
    tok, _, folder = _hf_files(tmp_path)
    enc, bpe = (
        folder / "vocab.json",
        folder / "merges.txt",
    )  # (the names Hugging Face's GPT-2 folders use)
    assert toksmith.from_gpt2_files(enc, bpe).mergeable_ranks() == tok.mergeable_ranks()
    enc.write_text(
        _with_duplicate_first_key(enc.read_text(encoding="utf-8"), "", "269"), encoding="utf-8"
    )
    for load in (lambda: toksmith.from_gpt2_files(enc, bpe), lambda: toksmith.load_any(folder)):
        with pytest.raises(toksmith.TokenizerFileError, match="has the key .* twice"):
            load()


@pytest.fixture(scope="module")
def trained_tok():
    """A trained tokenizer: merges, two special tokens, a pinned token with a space."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return toksmith.train_from_iterator(
            [CORPUS],
            vocab_size=420,
            pattern="gpt2",
            special_tokens=["<|endoftext|>", "<|fim|>"],
            pinned_tokens=["New York"],
        )


@pytest.fixture(scope="module")
def tiny_tok():
    return Tokenizer.from_ranks({**BYTES, b"ab": 256}, "gpt2", {"<|end|>": 257})


def _rank_line(b: bytes, r) -> bytes:
    return base64.b64encode(b) + b" " + str(r).encode()


_BASE = [_rank_line(bytes([b]), b) for b in range(256)]


@pytest.fixture(scope="module")
def saved(tiny_tok, tmp_path_factory):
    path = tmp_path_factory.mktemp("saved") / "tok.json"
    tiny_tok.save(path)
    return path.read_bytes()


def _mutated(raw: bytes, f) -> bytes:
    d = json.loads(raw)
    f(d)
    return json.dumps(d).encode()


@pytest.mark.parametrize(
    "lines, match",
    [
        (b"\n".join(_BASE)[:-3], "expected 'base64-token rank'"),
        (_BASE + [b"!!!! 256"], "is not valid base64"),
        (_BASE + [b"YWI 256"], "is not valid base64"),
        (_BASE + [_rank_line(b"ab", 255)], "duplicate rank 255"),
        (_BASE + [_rank_line(b"a", 256)], "appears twice"),
        (_BASE + [_rank_line(b"ab", 100000)], "the ranks have gaps"),
        (_BASE + [_rank_line(b"ab", 2**31)], "the ranks have gaps"),
        (_BASE + [_rank_line(b"ab", 2**32)], "rank 4294967296 is too large"),
        (_BASE + [_rank_line(b"ab", 2**64)], "is too large"),
        (_BASE + [_rank_line(b"ab", -1)], "is not a non-negative integer"),
        (_BASE + [base64.b64encode(b"ab") + b" 256.0"], "is not a non-negative integer"),
        (_BASE + [base64.b64encode(b"ab") + b" 0x100"], "is not a non-negative integer"),
        (_BASE + [base64.b64encode(b"ab") + " ٢٥٦".encode()], "is not a non-negative integer"),
        (_BASE + [base64.b64encode(b"ab")], "expected 'base64-token rank'"),
        (_BASE + [base64.b64encode(b"ab") + b" 256 7"], "expected 'base64-token rank'"),
        (_BASE + [b" 256"], "expected 'base64-token rank'"),
        (_BASE + [b"\x00"], "expected 'base64-token rank'"),
        (_BASE + [b"\xff\xfe 256"], "is not valid base64"),
        (_BASE[1:], "the ranks have gaps"),
        (b"", "no tokens"),
        (b"\n\n\n", "no tokens"),
    ],
)
def test_malformed_tiktoken_files(tmp_path, lines, match):
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(b"\n".join(lines) + b"\n" if isinstance(lines, list) else lines)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expect(TokenizerFileError, from_tiktoken, path, pattern="gpt2", match=match)
        raw = path.read_bytes()
        parsed = call(_core.parse_tiktoken_ranks, raw)  # the native parser declines, never panics
        assert parsed is None or isinstance(parsed, dict)


def test_good_tiktoken_file_round_trips(tmp_path, trained_tok):
    plain = Tokenizer.from_ranks(
        trained_tok.mergeable_ranks(), "gpt2", trained_tok.special_tokens
    )  # (no pinned tokens)
    path = tmp_path / "good.tiktoken"
    plain.save_tiktoken(path)
    back = from_tiktoken(path, pattern="gpt2", special_tokens=plain.special_tokens)
    assert back.mergeable_ranks() == plain.mergeable_ranks()
    assert _core.parse_tiktoken_ranks(path.read_bytes()) == plain.mergeable_ranks()
    text = "The quick <|fim|> café"
    assert back.encode(text, allowed_special="all") == trained_tok.encode(
        text, allowed_special="all"
    )


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda raw: raw[: len(raw) // 2], "not valid JSON"),
        (lambda raw: raw[:-3], "not valid JSON"),
        (lambda raw: b"\xef\xbb\xbf" + raw, "not valid JSON"),
        (lambda raw: raw.replace(b'"<|end|>"', b'"<|end|>\xff"', 1), "not UTF-8"),
        (lambda raw: raw.replace(b'"vocab"', b'"vocab": {}, "vocab"', 1), "appears twice"),
        (lambda raw: raw.replace(b'"<|end|>"', b'"<|end|>\\ud800"', 1), "lone surrogate"),
        (lambda raw: b"[" * 100000 + b"]" * 100000, "expected a JSON object|too deeply"),
        (
            lambda raw: _mutated(raw, lambda d: d["vocab"].__setitem__("ab", -1)),
            "is not a valid id",
        ),
        (
            lambda raw: _mutated(raw, lambda d: d["vocab"].__setitem__("ab", 2**64)),
            "is not a valid id",
        ),
        (
            lambda raw: _mutated(raw, lambda d: d["vocab"].__setitem__("ab", 256.0)),
            "is not a valid id",
        ),
        (
            lambda raw: _mutated(raw, lambda d: d["vocab"].__setitem__("ab", None)),
            "is not a valid id",
        ),
        (
            lambda raw: _mutated(raw, lambda d: d["vocab"].__setitem__("ab", 5000000)),
            "ids must be dense",
        ),
        (
            lambda raw: _mutated(raw, lambda d: d["vocab"].__setitem__("a b", 258)),
            "byte-level alphabet",
        ),
        (lambda raw: _mutated(raw, lambda d: d["vocab"].__setitem__("", 258)), "empty bytes"),
        (
            lambda raw: _mutated(raw, lambda d: d.__setitem__("merges", ["a"])),
            "is not of the form 'left right'",
        ),
        (
            lambda raw: _mutated(raw, lambda d: d.__setitem__("merges", [])),
            "0 merges for 1 multi-byte tokens",
        ),
        (
            lambda raw: _mutated(raw, lambda d: d.__setitem__("merges", ["a b", "a b"])),
            "out of order",
        ),
        (lambda raw: _mutated(raw, lambda d: d.__setitem__("merges", ["x y"])), "not in the vocab"),
        (lambda raw: _mutated(raw, lambda d: d.__setitem__("merges", 5)), "must be a list"),
        (
            lambda raw: _mutated(raw, lambda d: d["special_tokens"].__setitem__("<|x|>", 257)),
            "used by two tokens",
        ),
        (
            lambda raw: _mutated(raw, lambda d: d["special_tokens"].__setitem__("", 258)),
            "empty text",
        ),
        (
            lambda raw: _mutated(raw, lambda d: d["special_tokens"].__setitem__("<|x|>", -3)),
            "is not a valid id",
        ),
        (
            lambda raw: _mutated(raw, lambda d: d["pinned_tokens"].__setitem__("<|end|>", 258)),
            "given twice",
        ),
        (lambda raw: _mutated(raw, lambda d: d.__setitem__("pattern", "(")), "Opening parenthesis"),
        (
            lambda raw: _mutated(raw, lambda d: d.__setitem__("pattern", "")),
            "the split pattern is empty",
        ),
        (
            lambda raw: _mutated(raw, lambda d: d.__setitem__("pattern", r"\b")),
            "can match only the empty string",
        ),
        (
            lambda raw: _mutated(raw, lambda d: d.__setitem__("pattern", 5)),
            "'pattern' is missing or not a str",
        ),
        (
            lambda raw: _mutated(raw, lambda d: d.__setitem__("version", 2)),
            "unsupported file version 2",
        ),
    ],
)
def test_malformed_toksmith_files(tmp_path, saved, change, match):
    path = tmp_path / "bad.json"
    raw = change(saved)
    path.write_bytes(raw)
    expect(TokenizerFileError, toksmith.load, path, match=match)
    split = call(_core.split_json_tables, raw, "toksmith")  # declines or splits, never panics
    if split is not None:
        assert call(split[1].toksmith_tables) is None or isinstance(
            split[1].toksmith_tables(), tuple
        )


def test_toksmith_file_with_nul_characters_round_trips(tmp_path):
    t = Tokenizer.from_ranks(
        {**BYTES, b"a\x00": 256}, "gpt2", {"<\x00>": 257}, pinned_tokens={"x\x00y": 258}
    )
    t.save(tmp_path / "nul.json")
    back = toksmith.load(tmp_path / "nul.json")
    text = "a\x00<\x00>x\x00y"
    assert (
        back.encode(text, allowed_special="all")
        == t.encode(text, allowed_special="all")
        == [97, 0, 257, 258]
    )
    assert back.decode(back.encode(text, allowed_special="all")) == text
    assert back.mergeable_ranks() == t.mergeable_ranks()


TEXT = "Hello world, hello there: lower lowest newest <|end|> widest <pin> 12345 \n\n  x"


@pytest.fixture(scope="module")
def small_tok():
    return toksmith.train_from_iterator(
        [TEXT * 3, "the then there these those their"] * 20,
        vocab_size=300,
        pattern="gpt2",
        special_tokens=["<|end|>"],
        pinned_tokens=["<pin>"],
    )


@pytest.mark.parametrize("version", [True, 1.0, "1", 2, None])
def test_toksmith_file_version_must_be_the_integer_1(small_tok, tmp_path, version):
    """Audit finding: `"version": true` and `1.0` were read as version 1."""
    data = to_dict(small_tok)
    data["version"] = version
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    with pytest.raises(TokenizerFileError, match="unsupported file version"):
        toksmith.load(path)
    with pytest.raises(TokenizerFileError, match="unsupported file version"):
        load_any(path)


@pytest.mark.parametrize("layout", ["toksmith", "huggingface", "other"])
def test_deeply_nested_json_is_a_file_error(layout, tmp_path, capsys):
    """Audit finding: json's RecursionError came out of load/load_any/from_huggingface (and the CLI printed a
    traceback) for a file nesting arrays 100000 deep."""
    head = {
        "toksmith": '{"format": "toksmith", "version": 1, "vocab": {"a": 0}, "x": ',
        "huggingface": '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "x": ',
        "other": '{"x": ',
    }[layout]
    path = tmp_path / "deep.json"
    path.write_text(head + "[" * 100_000 + "]" * 100_000 + "}")
    for load in (load_any, toksmith.load, from_huggingface):
        with pytest.raises(TokenizerFileError, match="too deeply"):
            load(path)
    assert main(["convert", str(path), str(tmp_path / "out.json")]) == 1
    err = capsys.readouterr().err
    assert "too deeply" in err and "Traceback" not in err
