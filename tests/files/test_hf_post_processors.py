"""Post-processors of ``tokenizer.json`` files that add tokens (Llama 3's
``TemplateProcessing`` adding ``<|begin_of_text|>``, ``RobertaProcessing``, ``BertProcessing``,
``Sequence``s of them): applied by ``encode(..., add_special_tokens=...)``, True by default as
in ``tokenizers``."""

from __future__ import annotations

import json
import pickle

import pytest

import toksmith
from toksmith.errors import ConversionError, TokenizerFileError
from toksmith.files.huggingface import huggingface_json

from .model_texts import MULTILINGUAL

BOT, EOT = "<|begin_of_text|>", "<|end_of_text|>"


@pytest.fixture(scope="module")
def base():
    texts = ["low lower lowest newest widest, the end. 123 456"] * 30 + MULTILINGUAL
    return toksmith.train_from_iterator(
        texts, vocab_size=300, pattern="cl100k", special_tokens=[BOT, EOT]
    )


def _llama3_post_processor(bot_id):
    """Llama 3's tokenizer.json post-processor, as Meta's Hugging Face files have it."""
    return {
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
                    {"SpecialToken": {"id": BOT, "type_id": 0}},
                    {"Sequence": {"id": "A", "type_id": 0}},
                ],
                "pair": [
                    {"SpecialToken": {"id": BOT, "type_id": 0}},
                    {"Sequence": {"id": "A", "type_id": 0}},
                    {"SpecialToken": {"id": BOT, "type_id": 1}},
                    {"Sequence": {"id": "B", "type_id": 1}},
                ],
                "special_tokens": {BOT: {"id": BOT, "ids": [bot_id], "tokens": [BOT]}},
            },
        ],
    }


TEXTS = MULTILINGUAL + ["the lowest <|end_of_text|> newest", "<|begin_of_text|>x", ""]


def _compare(data, tok):
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer.from_str(json.dumps(data))
    for t in TEXTS:
        assert tok.encode(t, allowed_special="all") == hf.encode(t).ids, t
        assert (
            tok.encode(t, allowed_special="all", add_special_tokens=False)
            == hf.encode(t, add_special_tokens=False).ids
        ), t
    assert tok.encode_batch(TEXTS, allowed_special="all") == [e.ids for e in hf.encode_batch(TEXTS)]


def test_llama3_template(base):
    bot = base.special_tokens[BOT]
    data = huggingface_json(base)
    data["post_processor"] = _llama3_post_processor(bot)
    tok = toksmith.from_huggingface(data)
    assert tok.template == ([bot], [])
    _compare(data, tok)
    assert tok.encode("low") == [bot] + base.encode("low")
    assert tok.encode("low", add_special_tokens=False) == base.encode("low")
    assert tok.encode_ordinary("low") == base.encode("low")  # plain text only
    ids, spans = tok.encode_with_offsets("low")
    assert ids[0] == bot and spans[0] == (0, 0) and spans[1:] == base.encode_with_offsets("low")[1]
    np = pytest.importorskip("numpy")
    assert list(tok.encode_to_numpy("low")) == [bot] + base.encode("low")
    assert list(tok.encode_to_numpy("low", add_special_tokens=False)) == base.encode("low")
    with pytest.raises(TypeError, match="add_special_tokens"):
        tok.encode("low", add_special_tokens="yes")
    assert tok.decode(tok.encode("low")) == BOT + "low"
    del np


def test_template_survives_save_pickle_and_export(base, tmp_path):
    bot, eot = base.special_tokens[BOT], base.special_tokens[EOT]
    tok = toksmith.Tokenizer.from_spec(
        toksmith.Tokenizer.to_spec(base, merges=False).__class__(
            base.mergeable_ranks(),
            pattern="cl100k",
            special_tokens=base.special_tokens,
            template=([bot], [eot]),
        )
    )
    want = tok.encode("low lowest")
    assert want == [bot] + base.encode("low lowest") + [eot]
    tok.save(tmp_path / "t.json")
    assert toksmith.load(tmp_path / "t.json").encode("low lowest") == want
    assert pickle.loads(pickle.dumps(tok)).encode("low lowest") == want
    with pytest.raises(ConversionError, match="adds the ids"):
        tok.save_tiktoken(tmp_path / "t.tiktoken")
    data = huggingface_json(tok)
    assert toksmith.from_huggingface(data).template == ([bot], [eot])
    _compare(data, tok)


@pytest.mark.parametrize("kind", ["RobertaProcessing", "BertProcessing"])
def test_cls_sep_processors(base, kind):
    bot, eot = base.special_tokens[BOT], base.special_tokens[EOT]
    data = huggingface_json(base)
    data["post_processor"] = {"type": kind, "cls": [BOT, bot], "sep": [EOT, eot]}
    if kind == "RobertaProcessing":
        data["post_processor"].update(trim_offsets=True, add_prefix_space=False)
    tok = toksmith.from_huggingface(data)
    assert tok.template == ([bot], [eot])
    _compare(data, tok)


def test_bad_and_unsupported_processors(base):
    data = huggingface_json(base)
    data["post_processor"] = {"type": "RobertaProcessing", "cls": [BOT], "sep": [EOT, 1]}
    with pytest.raises(TokenizerFileError, match="cls must be"):
        toksmith.from_huggingface(data)
    pp = _llama3_post_processor(base.special_tokens[BOT])
    pp["processors"][1]["special_tokens"] = {}
    data["post_processor"] = pp
    with pytest.raises(TokenizerFileError, match="names the special token"):
        toksmith.from_huggingface(data)
    data["post_processor"] = {"type": "Whatever"}
    with pytest.raises(ConversionError, match="post_processor Whatever"):
        toksmith.from_huggingface(data)
    with pytest.warns(UserWarning, match="post_processor"):
        assert toksmith.from_huggingface(data, strict=False).template is None


def test_unstable_end_leaves_the_template_out(base):
    bot, eot = base.special_tokens[BOT], base.special_tokens[EOT]
    data = huggingface_json(base)
    data["post_processor"] = {"type": "RobertaProcessing", "cls": [BOT, bot], "sep": [EOT, eot]}
    tok = toksmith.from_huggingface(data)
    assert tok.encode_with_unstable("the lowest lo") == base.encode_with_unstable("the lowest lo")


@pytest.mark.parametrize("max_length", [0, 1, 2, 3, 6])
@pytest.mark.parametrize("direction", ["right", "left"])
@pytest.mark.parametrize("padding", [None, "BatchLongest", 9])
def test_template_with_truncation_and_padding(base, max_length, direction, padding):
    """tokenizers truncates to leave room for the template's tokens, adds them, then pads."""
    bot, eot = base.special_tokens[BOT], base.special_tokens[EOT]
    data = huggingface_json(base)
    data["post_processor"] = {"type": "BertProcessing", "cls": [BOT, bot], "sep": [EOT, eot]}
    data["truncation"] = {
        "direction": direction.capitalize(),
        "max_length": max_length,
        "strategy": "LongestFirst",
        "stride": 0,
    }
    if padding is not None:
        data["padding"] = {
            "strategy": "BatchLongest" if padding == "BatchLongest" else {"Fixed": padding},
            "direction": "Right",
            "pad_to_multiple_of": None,
            "pad_id": eot,
            "pad_type_id": 0,
            "pad_token": EOT,
        }
    _compare(data, toksmith.from_huggingface(data))
