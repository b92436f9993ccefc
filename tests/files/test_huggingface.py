"""Hugging Face interop: tokenizer.json export/import, transformers folders, exact ids."""

import copy
import json
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toksmith
from tests.conftest import BYTES
from tests.helpers import GPT2_ENCODER, GPT2_VOCAB_BPE, PATTERN_NAMES, all_ids, hf_ids
from tests.strategies_interop import hf_mixed_text, text_with_specials
from toksmith import TokenizerFileError
from toksmith.formats import ConversionError, load_any
from toksmith.formats.huggingface import (
    from_huggingface,
    huggingface_json,
    save_huggingface,
    to_huggingface,
)

tokenizers = pytest.importorskip("tokenizers")


@pytest.fixture(scope="session")
def real_hf(real_toks):
    return {name: tok.to_huggingface() for name, tok in real_toks.items()}


@pytest.fixture(scope="session")
def native_gpt2_hf():
    """GPT-2 as Hugging Face builds it from the original files (no toksmith involved)."""
    from tokenizers import decoders, models, pre_tokenizers

    hf = tokenizers.Tokenizer(models.BPE.from_file(str(GPT2_ENCODER), str(GPT2_VOCAB_BPE)))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.add_special_tokens(["<|endoftext|>"])
    return hf


@pytest.fixture(scope="session")
def trained_hf(trained):
    return {pat: tok.to_huggingface() for pat, tok in trained.items()}


# ------------------------------------------------------------------ real vocabularies


@pytest.mark.parametrize("name", ["gpt2", "cl100k"])
def test_real_vocab_ids_on_corpora(name, real_toks, real_hf, corpus_chunks):
    tok, hf = real_toks[name], real_hf[name]
    expected = all_ids(tok, corpus_chunks)
    assert hf_ids(hf, corpus_chunks) == expected
    assert tok.to_tiktoken().encode_batch(corpus_chunks, allowed_special="all") == expected
    assert hf.decode_batch(expected[:50], skip_special_tokens=False) == corpus_chunks[:50]


@given(text=hf_mixed_text)
def test_real_vocab_ids_hypothesis(text, real_toks, real_hf):
    for name in ("gpt2", "cl100k"):
        assert real_hf[name].encode(text).ids == real_toks[name].encode_ordinary(text)


@given(text=text_with_specials)
def test_real_vocab_specials_hypothesis(text, real_toks, real_hf):
    for name in ("gpt2", "cl100k"):
        ids = real_toks[name].encode(text, allowed_special="all")
        assert real_hf[name].encode(text).ids == ids
        assert real_hf[name].decode(ids, skip_special_tokens=False) == text


def test_native_hf_gpt2_agrees(gpt2_tok, native_gpt2_hf, corpus_chunks):
    """Hugging Face's own GPT-2 (merge-list BPE, ByteLevel regex) == toksmith (rank BPE)."""
    assert hf_ids(native_gpt2_hf, corpus_chunks) == all_ids(gpt2_tok, corpus_chunks)


@given(text=hf_mixed_text)
def test_native_hf_gpt2_agrees_hypothesis(text, gpt2_tok, native_gpt2_hf):
    assert native_gpt2_hf.encode(text).ids == gpt2_tok.encode_ordinary(text)


def test_import_native_hf_gpt2(native_gpt2_hf, gpt2_tok):
    tok = from_huggingface(native_gpt2_hf)
    assert tok.pattern_name == "gpt2"
    assert tok.mergeable_ranks() == gpt2_tok.mergeable_ranks()
    assert tok.special_tokens == {"<|endoftext|>": 50256}


def test_export_import_real_cl100k(cl100k_tok, real_hf, tmp_path):
    data = huggingface_json(cl100k_tok)
    assert (
        data["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"].count("(?>\\p{N}{1,3})") == 1
    )
    back = from_huggingface(real_hf["cl100k"])
    assert back.pattern_name == "cl100k"
    assert back.mergeable_ranks() == cl100k_tok.mergeable_ranks()
    assert back.special_tokens == cl100k_tok.special_tokens


# ------------------------------------------------------------------ transformers


def test_transformers_real_cl100k(cl100k_tok, corpus_chunks, tmp_path):
    transformers = pytest.importorskip("transformers")
    cl100k_tok.save_huggingface(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "special_tokens_map.json",
        "tokenizer.json",
        "tokenizer_config.json",
    ]
    t = transformers.PreTrainedTokenizerFast.from_pretrained(tmp_path)
    texts = corpus_chunks[::5]
    expected = all_ids(cl100k_tok, texts)
    assert [t.encode(x) for x in texts] == expected
    assert [t.decode(ids) for ids in expected] == texts
    assert t.eos_token == "<|endoftext|>" and t.eos_token_id == 100257
    auto = transformers.AutoTokenizer.from_pretrained(tmp_path)
    assert auto(texts[:5])["input_ids"] == expected[:5]


@pytest.mark.parametrize("pattern", PATTERN_NAMES)
def test_round_trip_trained(pattern, trained, trained_hf, corpus_chunks, tmp_path):
    transformers = pytest.importorskip("transformers")
    tok, hf = trained[pattern], trained_hf[pattern]
    texts = corpus_chunks[::6] + [
        "<think>plan</think> answer<|endoftext|><|user_start|>hi<|user_end|>"
    ]
    expected = all_ids(tok, texts)
    assert hf_ids(hf, texts) == expected
    assert hf.decode_batch(expected, skip_special_tokens=False) == texts
    # files -> tokenizers, transformers and toksmith
    tok.save_huggingface(tmp_path)
    from_file = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert hf_ids(from_file, texts) == expected
    t = transformers.PreTrainedTokenizerFast.from_pretrained(tmp_path)
    assert [t.encode(x) for x in texts] == expected
    assert [t.decode(ids) for ids in expected] == texts
    back = toksmith.load_any(tmp_path)
    assert back.pattern_name == pattern
    assert back.mergeable_ranks() == tok.mergeable_ranks()
    assert back.special_tokens == tok.special_tokens and back.pinned_tokens == tok.pinned_tokens
    assert all_ids(back, texts) == expected
    assert back.decode_batch(expected) == texts


@given(text=text_with_specials)
def test_round_trip_trained_hypothesis(text, trained, trained_hf):
    for pat, tok in trained.items():
        ids = tok.encode(text, allowed_special="all")
        assert trained_hf[pat].encode(text).ids == ids, pat
        assert trained_hf[pat].decode(ids, skip_special_tokens=False) == text


@given(text=hf_mixed_text)
def test_round_trip_trained_any_text(text, trained, trained_hf):
    for pat, tok in trained.items():
        assert trained_hf[pat].encode(text).ids == tok.encode(text, allowed_special="all"), pat


def test_special_ids_before_bytes(trained_no_pinned, corpus_chunks, tmp_path):
    """Specials at ids 0-2, bytes from 3: Hugging Face keeps every id."""
    tok = trained_no_pinned["nanochat"]
    assert tok.special_tokens["<|endoftext|>"] == 0
    texts = corpus_chunks[::9] + ["<|endoftext|>x<|user_end|>"]
    assert hf_ids(tok.to_huggingface(), texts) == all_ids(tok, texts)
    save_huggingface(tok, tmp_path)
    assert all_ids(from_huggingface(tmp_path), texts) == all_ids(tok, texts)


# ------------------------------------------------------------------ Hugging Face-trained BPE


@pytest.fixture(scope="session")
def hf_trained(corpus_texts):
    """A byte-level BPE trained by Hugging Face's own trainer, specials first."""
    from tokenizers import decoders, models, pre_tokenizers, trainers

    hf = tokenizers.Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=1500,
        special_tokens=["<pad>", "<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    hf.train_from_iterator(list(corpus_texts.values()), trainer=trainer)
    return hf


def test_import_hf_trained(hf_trained, corpus_chunks):
    tok = from_huggingface(hf_trained)
    assert tok.special_tokens == {"<pad>": 0, "<|endoftext|>": 1}
    assert tok.pattern_name == "gpt2"
    assert all_ids(tok, corpus_chunks) == hf_ids(hf_trained, corpus_chunks)


@given(text=hf_mixed_text)
def test_import_hf_trained_hypothesis(text, hf_trained):
    tok = _cached_import(hf_trained)
    assert tok.encode(text, allowed_special="all") == hf_trained.encode(text).ids


_IMPORTED = {}


def _cached_import(hf):
    if id(hf) not in _IMPORTED:
        _IMPORTED[id(hf)] = from_huggingface(hf)
    return _IMPORTED[id(hf)]


# ------------------------------------------------------------------ import variants


def _tiny_json(pattern="gpt2", **changes):
    tok = toksmith.train_from_iterator(
        ["low lower lowest newest widest 1234567"] * 30,
        vocab_size=270,
        pattern=pattern,
        special_tokens=["<|end|>"],
    )
    data = huggingface_json(tok)
    for k, v in changes.items():
        data[k] = v
    return tok, data


def test_merges_as_pairs():
    tok, data = _tiny_json()
    data["model"]["merges"] = [m.split(" ") for m in data["model"]["merges"]]
    back = from_huggingface(data)
    assert back.mergeable_ranks() == tok.mergeable_ranks()
    hf = tokenizers.Tokenizer.from_str(json.dumps(data))
    assert hf.encode("lowest newest").ids == back.encode("lowest newest")


def test_not_strict_through_load_any_and_convert(tmp_path, capsys):
    """load_any(strict=False) and ``toksmith convert --no-strict`` relax a Hugging Face file as
    from_huggingface(strict=False) does (the error message names both)."""
    from toksmith.cli import main

    _, data = _tiny_json(normalizer={"type": "NFC"})
    src = tmp_path / "tokenizer.json"
    src.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ConversionError, match="--no-strict"):
        toksmith.load_any(src)
    with pytest.warns(UserWarning, match="dropped"):
        relaxed = toksmith.load_any(src, strict=False)
    assert relaxed.metadata["huggingface"]["normalizer"] == "NFC"
    with pytest.raises(TypeError, match="strict"):
        toksmith.load_any(src, strict="no")
    out = tmp_path / "tok.json"
    assert main(["convert", str(src), str(out)]) == 1
    assert "--no-strict" in capsys.readouterr().err and not out.exists()
    assert main(["convert", str(src), str(out), "--no-strict"]) == 0
    err = capsys.readouterr().err
    assert "warning: " in err and "dropped" in err
    assert toksmith.load(out).mergeable_ranks() == relaxed.mergeable_ranks()


def test_bytelevel_pretokenizer_means_gpt2():
    _, data = _tiny_json(
        pre_tokenizer={
            "type": "ByteLevel",
            "add_prefix_space": False,
            "trim_offsets": True,
            "use_regex": True,
        }
    )
    assert from_huggingface(data).pattern_name == "gpt2"


def test_oniguruma_semantics_are_kept():
    """A tokenizer.json holding tiktoken's cl100k text with ``\\p{N}{1,3}+`` means, in Hugging
    Face, runs of digits of any length: toksmith reproduces that, not cl100k."""
    raw = toksmith.PATTERNS["cl100k"]
    tok, data = _tiny_json("cl100k")
    data["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = raw
    back = from_huggingface(data)
    assert back.pattern_name is None
    hf = tokenizers.Tokenizer.from_str(json.dumps(data))
    for text in ["1234567 lowest", "a 12345678901\n\n  x", "it's 99 IT'S"]:
        assert back.encode(text) == hf.encode(text).ids
    assert toksmith.split("1234567", back.pattern) == ["1234567"]


def test_split_string_pattern_and_gaps():
    """Split(String) keeps the text between matches as pieces."""
    _, data = _tiny_json()
    data["pre_tokenizer"]["pretokenizers"][0] = {
        "type": "Split",
        "pattern": {"String": " "},
        "behavior": "Isolated",
        "invert": False,
    }
    back = from_huggingface(data)
    hf = tokenizers.Tokenizer.from_str(json.dumps(data))
    for text in ["lowest newest  widest", " low", "x  "]:
        assert back.encode(text) == hf.encode(text).ids
        assert back.decode(back.encode(text)) == text


def test_nfc_normalizer_strict_and_not():
    _, data = _tiny_json(normalizer={"type": "NFC"})
    with pytest.raises(ConversionError, match="normalizer NFC"):
        from_huggingface(data)
    with pytest.warns(UserWarning, match="dropped"):
        tok = from_huggingface(data, strict=False)
    assert tok.metadata["huggingface"]["normalizer"] == "NFC"
    hf = tokenizers.Tokenizer.from_str(json.dumps(data))
    text = "e\u0301 lowe\u0301st"
    assert hf.encode(text).ids != tok.encode(text)  # the normalizer matters...
    assert hf.encode(text).ids == tok.encode(
        unicodedata.normalize("NFC", text)
    )  # ...and is all that differs


@pytest.mark.parametrize(
    "norm",
    [
        {"type": "Lowercase"},
        {"type": "NFKC"},
        {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Lowercase"}]},
    ],
)
def test_other_normalizers_raise(norm):
    _, data = _tiny_json(normalizer=norm)
    with pytest.raises(ConversionError, match="normalizer"):
        from_huggingface(data)


def test_empty_normalizer_sequence_is_fine():
    _, data = _tiny_json(normalizer={"type": "Sequence", "normalizers": []})
    from_huggingface(data)


@pytest.mark.parametrize(
    "model,name",
    [
        (
            {
                "type": "WordPiece",
                "unk_token": "[UNK]",
                "continuing_subword_prefix": "##",
                "max_input_chars_per_word": 100,
                "vocab": {"[UNK]": 0, "a": 1},
            },
            "model WordPiece",
        ),
        ({"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a", -1.0]]}, "model Unigram"),
        ({"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}, "model WordLevel"),
    ],
)
def test_unsupported_models(model, name):
    _, data = _tiny_json(model=model)
    with pytest.raises(ConversionError, match=name):
        from_huggingface(data)


@pytest.mark.parametrize(
    "change,match",
    [
        (("model", "dropout", 0.1), "dropout"),
        (("model", "continuing_subword_prefix", "##"), "continuing_subword_prefix"),
        (("model", "byte_fallback", True), "byte_fallback"),
    ],
)
def test_unsupported_bpe_options(change, match):
    _, data = _tiny_json()
    data[change[0]][change[1]] = change[2]
    with pytest.raises(ConversionError, match=match):
        from_huggingface(data)


@pytest.mark.parametrize(
    "pre,match",
    [
        ({"type": "ByteLevel", "add_prefix_space": True, "use_regex": True}, "add_prefix_space"),
        ({"type": "Whitespace"}, "pre_tokenizer Whitespace"),
        (
            {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
            "pre_tokenizer Metaspace",
        ),
        (
            {
                "type": "Sequence",
                "pretokenizers": [
                    {"type": "Digits", "individual_digits": True},
                    {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
                ],
            },
            r"Sequence\['Digits', 'ByteLevel'\]",
        ),
        (
            {
                "type": "Sequence",
                "pretokenizers": [
                    {
                        "type": "Split",
                        "pattern": {"Regex": "\\p{N}{1,3}"},
                        "behavior": "Isolated",
                        "invert": False,
                    },
                    {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
                ],
            },
            "two successive splits",
        ),
        (
            {
                "type": "Sequence",
                "pretokenizers": [
                    {
                        "type": "Split",
                        "pattern": {"Regex": "\\s+"},
                        "behavior": "Removed",
                        "invert": False,
                    },
                    {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False},
                ],
            },
            "behavior 'Removed'",
        ),
        (None, "no pre_tokenizer"),
    ],
)
def test_unsupported_pretokenizers(pre, match):
    _, data = _tiny_json(pre_tokenizer=pre)
    with pytest.raises(ConversionError, match=match):
        from_huggingface(data)


def test_unsupported_decoder_and_postprocessor():
    _, data = _tiny_json(
        decoder={"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}
    )
    with pytest.raises(ConversionError, match="decoder Metaspace"):
        from_huggingface(data)
    tok, data = _tiny_json()
    end = tok.special_tokens["<|end|>"]
    tmpl = {
        "type": "TemplateProcessing",
        "single": [
            {"SpecialToken": {"id": "<|end|>", "type_id": 0}},
            {"Sequence": {"id": "A", "type_id": 0}},
        ],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"<|end|>": {"id": "<|end|>", "ids": [end], "tokens": ["<|end|>"]}},
    }
    data["post_processor"] = tmpl
    with pytest.raises(ConversionError, match="post_processor TemplateProcessing adds tokens"):
        from_huggingface(data)
    with pytest.warns(UserWarning):
        back = from_huggingface(data, strict=False)
    hf = tokenizers.Tokenizer.from_str(json.dumps(data))
    assert hf.encode("lowest", add_special_tokens=False).ids == back.encode("lowest")


def test_added_token_options_raise():
    _, data = _tiny_json()
    data["added_tokens"][0]["lstrip"] = True
    with pytest.raises(ConversionError, match="lstrip"):
        from_huggingface(data)


def test_non_special_added_tokens_become_pinned(trained):
    data = huggingface_json(trained["gpt2"])
    flags = {a["content"]: a["special"] for a in data["added_tokens"]}
    assert flags["<think>"] is False and flags["<|endoftext|>"] is True
    back = from_huggingface(data)
    assert back.pinned_tokens == trained["gpt2"].pinned_tokens


def test_merge_order_must_follow_ids():
    tok, data = _tiny_json()
    m = data["model"]["merges"]
    m[0], m[1] = m[1], m[0]
    with pytest.raises((ConversionError, toksmith.TokenizerFileError), match="merge"):
        from_huggingface(data)


def test_tokens_without_merge_raise():
    tok, data = _tiny_json()
    data["model"]["vocab"]["lowXYZ"] = 400
    with pytest.raises(ConversionError, match="made by no merge"):
        from_huggingface(data)


# ------------------------------------------------------------------ export limits


def test_export_needs_merges(tmp_path):
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"abc"] = 256  # not the merge of two tokens
    tok = toksmith.Tokenizer.from_ranks(ranks, "gpt2")
    with pytest.raises(ConversionError, match="needs a merge list"):
        tok.save_huggingface(tmp_path)


def test_export_pattern_not_covering_text_drops_it_too():
    """toksmith drops the text a pattern does not match; the export's Split(Removed, invert=True)
    drops it too (see test_interop_audit.test_custom_pattern_leaving_gaps_exports_exactly)."""
    tok = toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, r"\w+")
    hf, back = to_huggingface(tok), from_huggingface(to_huggingface(tok))
    for text in ["ab, cd!", "  x  ", "é-ü"]:
        assert hf.encode(text).ids == back.encode(text) == tok.encode(text)


def test_export_custom_pattern_translated():
    pat = r"\p{N}{1,2}+|[a-z]+|\s++$|\s+$|\s|[^\s]"
    tok = toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, pat)
    hf = to_huggingface(tok)
    for text in ["12345 abc  \n  x  ", "abc \n", "9 \n\n"]:
        assert hf.encode(text).ids == tok.encode(text)
    back = from_huggingface(hf)
    for text in ["12345 abc  \n  x  ", "abc \n"]:
        assert back.encode(text) == tok.encode(text)


def test_export_flag_that_cannot_translate():
    tok = toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, r"(?s:.)")
    with pytest.raises(ConversionError, match="inline flags"):
        huggingface_json(tok)


def test_special_spelled_like_token_raises():
    ranks = {bytes([b]): b for b in range(256)}
    tok = toksmith.Tokenizer.from_ranks(
        ranks, "gpt2", special_tokens={"Ġ": 256}
    )  # byte-level spelling of b" "
    with pytest.raises(ConversionError, match="spelled like the mergeable token"):
        huggingface_json(tok)


LLAMA3_REGEX = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def test_import_llama3_style_file(gpt2_tok, corpus_chunks):
    """A file laid out like Llama 3's: its own Split regex, ignore_merges, merges as pairs, a
    BOS template (refused unless strict=False), many reserved special tokens."""
    data = huggingface_json(gpt2_tok)
    data["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = LLAMA3_REGEX
    data["model"]["ignore_merges"] = True
    data["model"]["merges"] = [m.split(" ") for m in data["model"]["merges"]]
    for i in range(50257, 50300):
        data["added_tokens"].append(
            {
                "id": i,
                "content": f"<|reserved_{i}|>",
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
        )
    data["post_processor"] = {
        "type": "Sequence",
        "processors": [
            {
                "type": "ByteLevel",
                "add_prefix_space": True,
                "trim_offsets": False,
                "use_regex": True,
            },
            {
                "type": "TemplateProcessing",
                "single": [
                    {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}},
                    {"Sequence": {"id": "A", "type_id": 0}},
                ],
                "pair": [
                    {"Sequence": {"id": "A", "type_id": 0}},
                    {"Sequence": {"id": "B", "type_id": 1}},
                ],
                "special_tokens": {
                    "<|endoftext|>": {
                        "id": "<|endoftext|>",
                        "ids": [50256],
                        "tokens": ["<|endoftext|>"],
                    }
                },
            },
        ],
    }
    with pytest.raises(ConversionError, match="post_processor Sequence adds tokens"):
        from_huggingface(data)
    with pytest.warns(UserWarning, match="post_processor"):
        tok = from_huggingface(data, strict=False)
    assert tok.pattern_name is None and len(tok.special_tokens) == 44
    hf = tokenizers.Tokenizer.from_str(json.dumps(data))
    texts = corpus_chunks[::4] + ["<|reserved_50260|>x 1234567<|endoftext|>"]
    ids = all_ids(tok, texts)
    assert [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)] == ids
    assert hf.encode(texts[0]).ids == [50256] + ids[0]  # what strict=False dropped
    assert tok.decode_batch(ids) == texts


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


@pytest.fixture(scope="module")
def doc(small_tok):
    return huggingface_json(small_tok)


def _hf(data):
    return tokenizers.Tokenizer.from_str(json.dumps(data, ensure_ascii=False))


def _set(path, value):
    def edit(d):
        obj = d
        for k in path[:-1]:
            obj = obj[k]
        obj[path[-1]] = value

    return edit


_MALFORMED = [
    (_set(["added_tokens"], ["<x>"]), "added_tokens\\[0\\] must be an object"),
    (_set(["added_tokens"], {"a": 1}), "added_tokens must be a list"),
    (_set(["added_tokens"], 5), "added_tokens must be a list"),
    (_set(["normalizer"], "NFC"), "normalizer must be an object"),
    (
        _set(["normalizer"], {"type": "Sequence", "normalizers": ["x"]}),
        "normalizer.normalizers\\[0\\]",
    ),
    (_set(["pre_tokenizer"], "ByteLevel"), "pre_tokenizer must be an object"),
    (_set(["pre_tokenizer", "pretokenizers"], {"a": 1}), "pretokenizers must be a list"),
    (
        _set(["pre_tokenizer", "pretokenizers"], ["x", "y"]),
        "pretokenizers\\[0\\] must be an object",
    ),
    (
        _set(["pre_tokenizer", "pretokenizers", 0, "pattern"], {"Regex": 5}),
        "pattern must be an object",
    ),
    (
        _set(["pre_tokenizer", "pretokenizers", 0, "pattern"], {"String": ["a"]}),
        "pattern must be an object",
    ),
    (_set(["post_processor"], "ByteLevel"), "post_processor must be an object"),
    (_set(["post_processor"], {"type": "Sequence", "processors": ["x"]}), "processors\\[0\\]"),
    (
        _set(
            ["post_processor"],
            {"type": "TemplateProcessing", "single": "<|end|> $A", "pair": "$A $B"},
        ),
        "post_processor.single must be a list",
    ),
    (_set(["decoder"], "ByteLevel"), "decoder must be an object"),
    (_set(["decoder"], {"type": "Sequence", "decoders": ["x"]}), "decoders\\[0\\]"),
    (_set(["added_tokens", 0, "special"], "false"), "special must be true or false"),
    (_set(["added_tokens", 0, "lstrip"], "false"), "lstrip must be true or false"),
    (_set(["model", "ignore_merges"], "yes"), "ignore_merges must be"),
]


_NAME_CHARS = "<>|_ab é€ĠĊĀĠ▁日\u0144\u0143\t\n"


_GAPPY = [r"\D{2}|\d+", r"\p{L}+|\p{N}{2}", r"[a-z]+|\s", r"(?<=a)b|\d"]


@pytest.fixture(scope="module")
def gappy(small_tok):
    out = {}
    for pat in _GAPPY:
        tok = toksmith.Tokenizer(
            small_tok.mergeable_ranks(), pattern=pat, special_tokens=small_tok.special_tokens
        )
        out[pat] = (tok, tok.to_huggingface())
    return out


@pytest.mark.parametrize("special", ["<é>", "<|ñ|>", "Ġqq", "<Ċ>", "<Ā>"])
def test_export_refuses_added_token_decoded_as_bytes(special, tmp_path):
    """Audit finding: Hugging Face's ByteLevel decoder maps an added token whose characters are all in the
    byte-level alphabet back to bytes ('<é>' decodes as '<\\ufffd>'): the export gave the same
    ids but other decoded text. It now raises ConversionError (and so does the GPT-2 export, whose
    files are read back with the same decoder)."""
    tok = toksmith.train_from_iterator(
        [TEXT] * 5, vocab_size=270, pattern="gpt2", special_tokens=["<|end|>", special]
    )
    # what tokenizers would do with the file: the token, renamed to ASCII for the export, back
    ascii_tok = toksmith.train_from_iterator(
        [TEXT] * 5, vocab_size=270, pattern="gpt2", special_tokens=["<|end|>", "<tmp>"]
    )
    data = huggingface_json(ascii_tok)
    i = ascii_tok.special_tokens["<tmp>"]
    for e in data["added_tokens"]:
        if e["content"] == "<tmp>":
            e["content"] = special
    data["model"]["vocab"][special] = data["model"]["vocab"].pop("<tmp>")
    assert _hf(data).decode([i], skip_special_tokens=False) != special
    with pytest.raises(ConversionError, match="byte-level alphabet"):
        huggingface_json(tok)
    with pytest.raises(ConversionError, match="ASCII"):
        save_huggingface(tok, tmp_path / "hf")
    assert not (tmp_path / "hf" / "tokenizer.json").exists()
    with pytest.raises(
        ConversionError, match="byte-level decoder"
    ):  # GPT-2 files are decoded alike
        tok.save_gpt2_files(tmp_path / "gpt2")
    # importing such a file: strict names the decoder, strict=False keeps the ids
    with pytest.raises(ConversionError, match="decoder ByteLevel decodes the added token"):
        from_huggingface(data)
    with pytest.warns(UserWarning, match="decoded_as_bytes"):
        loaded = from_huggingface(data, strict=False)
    assert loaded.metadata["huggingface"] == {"decoded_as_bytes": [special]}
    text = f"a{special}b <|end|>"
    assert _hf(data).encode(text).ids == loaded.encode(text, allowed_special="all")


@pytest.mark.parametrize("special", ["<|end|>", "a b", "<日本>", "<|▁|>", "<\u0144x>"])
def test_export_keeps_added_tokens_decoded_as_text(special):
    """Audit finding: Added tokens that are ASCII or have a character outside the byte-level alphabet (a space,
    U+0144 and above) decode as themselves in both libraries."""
    tok = toksmith.train_from_iterator(
        [TEXT] * 5,
        vocab_size=270,
        pattern="gpt2",
        special_tokens=[special, "<s>"],
        pinned_tokens=["<p é>"],
    )
    hf = tok.to_huggingface()
    text = f"x{special}y <p é> z"
    ids = tok.encode(text, allowed_special="all")
    assert hf.encode(text).ids == ids
    assert hf.decode(ids, skip_special_tokens=False) == tok.decode(ids) == text


@pytest.mark.parametrize("edit,match", _MALFORMED)
def test_malformed_components_are_file_errors(doc, edit, match):
    """Audit finding: A component of the wrong JSON type gave an AttributeError or TypeError from inside the
    reader (or, for a string template or flag, loaded a file Hugging Face refuses)."""
    data = copy.deepcopy(doc)
    edit(data)
    with pytest.raises(Exception):  # noqa: B017
        _hf(data)  # not a valid tokenizer.json
    for strict in (True, False):
        with pytest.raises(TokenizerFileError, match=match):
            from_huggingface(copy.deepcopy(data), strict=strict)


def test_hf_add_tokens_of_a_vocab_token_is_a_conversion_error(doc):
    """Audit finding: tokenizers' add_tokens() of a token already in the vocab keeps its id: a valid file,
    refused with 'makes ..., which is not in the vocab' (a TokenizerFileError saying the file is
    corrupted). Now a ConversionError naming the token."""
    hf = _hf(doc)
    word = next(t for t in doc["model"]["vocab"] if len(t) > 2 and t.isascii() and t.isalpha())
    hf.add_tokens([word])
    data = json.loads(hf.to_str())
    assert any(
        a["content"] == word and a["id"] == doc["model"]["vocab"][word]
        for a in data["added_tokens"]
    )
    with pytest.raises(ConversionError, match=f"vocab token '{word}'.*also an added token"):
        from_huggingface(data)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    names=st.lists(
        st.text(st.sampled_from(_NAME_CHARS), min_size=1, max_size=6),
        min_size=1,
        max_size=3,
        unique=True,
    )
)
def test_exported_added_tokens_encode_and_decode_alike(small_tok, names):
    """Audit finding: Any special/pinned token names: the export raises ConversionError, or tokenizers gives the
    same ids and the same decoded text as toksmith."""
    ranks = small_tok.mergeable_ranks()
    top = max(ranks.values())
    specials = {n: top + 1 + i for i, n in enumerate(names[::2])}
    pinned = {n: top + 1 + len(specials) + i for i, n in enumerate(names[1::2])}
    try:
        tok = toksmith.Tokenizer(
            ranks, pattern="gpt2", special_tokens=specials, pinned_tokens=pinned
        )
    except ValueError:
        return  # e.g. a pinned token inside another added token: not a valid toksmith tokenizer
    try:
        hf = tok.to_huggingface()
    except ConversionError:
        return
    text = "x" + " ".join(names) + "".join(names) + " lowest"
    ids = tok.encode(text, allowed_special="all")
    assert hf.encode(text).ids == ids
    assert hf.decode(ids, skip_special_tokens=False) == tok.decode(ids) == text


def test_custom_pattern_leaving_gaps_exports_exactly(gappy):
    """Audit finding: toksmith (like tiktoken) drops the text its pattern does not match; the export wrote
    Split(Isolated), which keeps it as pieces, and only tried three probe texts to see whether
    the pattern matched all text: r'\\D{2}|\\d+' passed them, and Hugging Face's ids for 'ab-12 c'
    had a token for '-' that toksmith drops. Custom patterns are now written Split(Removed,
    invert=True), which keeps only the matches; reading that back gives the pattern itself."""
    tok, hf = gappy[r"\D{2}|\d+"]
    assert toksmith.split("ab-12 c", tok.pattern) == ["ab", "12", " c"]
    assert hf.encode("ab-12 c").ids == tok.encode("ab-12 c")
    step = json.loads(hf.to_str())["pre_tokenizer"]["pretokenizers"][0]
    assert (step["behavior"], step["invert"]) == ("Removed", True)


@pytest.mark.parametrize(
    "value,error",
    [(0, ValueError), (-5, ValueError), ("512", TypeError), (True, TypeError), (2.5, TypeError)],
)
def test_save_huggingface_model_max_length_is_checked(small_tok, tmp_path, value, error):
    """Audit finding: model_max_length=0 was written as 'no maximum' (1e30) and a str or float went into
    tokenizer_config.json as it was."""
    with pytest.raises(error, match="model_max_length"):
        save_huggingface(small_tok, tmp_path / "hf", model_max_length=value)
    assert not (tmp_path / "hf").exists()
    save_huggingface(small_tok, tmp_path / "ok", model_max_length=512)
    assert (
        json.loads((tmp_path / "ok" / "tokenizer_config.json").read_text())["model_max_length"]
        == 512
    )


@pytest.fixture(scope="module")
def small_trained():
    return toksmith.Tokenizer.from_ranks(
        {**BYTES, b"ab": 256}, "gpt2", special_tokens={"<|end|>": 257}
    )


def _write_hf(tmp_path, doc, name="tokenizer.json"):
    p = tmp_path / name
    p.write_text(json.dumps(doc), encoding="utf-8")
    return p


def test_template_piece_that_is_not_an_object_is_a_file_error(small_trained, tmp_path):
    # was: TypeError "argument of type 'int' is not iterable" from deep inside the reader
    doc = huggingface_json(small_trained)
    doc["post_processor"] = {"type": "TemplateProcessing", "single": [1, 2], "pair": []}
    with pytest.raises(TokenizerFileError, match=r"post_processor\.single\[0\] must be an object"):
        load_any(_write_hf(tmp_path, doc))


def test_nested_post_processor_sequences_do_not_overflow_the_stack(small_trained, tmp_path):
    # was: RecursionError (not a ValueError) for 400 nested Sequence post-processors, which the JSON reader accepts
    depth = 450
    nested = '{"type":"Sequence","processors":[' * depth + '{"type":"ByteLevel"}' + "]}" * depth
    doc = huggingface_json(small_trained)
    doc["post_processor"] = None
    text = json.dumps(doc).replace('"post_processor": null', f'"post_processor": {nested}', 1)
    p = tmp_path / "tokenizer.json"
    p.write_text(text, encoding="utf-8")
    assert load_any(p).encode("ab<|end|>", allowed_special="all") == [256, 257]
