"""Issue 36 item 11: a tokenizer.json's ``truncation`` and ``padding`` are applied by encode and
encode_batch as Hugging Face ``tokenizers`` applies them (GPT-2 built by ``tokenizers`` from the
original vocab files, with the settings edited in), turned off and on with the same switches,
and kept when the tokenizer is saved as tokenizer.json. Was: ignored (HF 5 ids, toksmith 18)."""

import json
import lzma
import pickle

import pytest

import toksmith
from tests.helpers import GPT2_ENCODER, GPT2_VOCAB_BPE
from toksmith import TokenizerFileError
from toksmith.formats import ConversionError
from toksmith.pipeline_tokenizer import PipelineTokenizer

tokenizers = pytest.importorskip("tokenizers")

from tests.conftest import DATA  # noqa: E402

TEXTS = [
    "Hello world, this is a longer sentence with quite a few more tokens in it.",
    "short",
    "",
    " ",
    "def f(x):\n    return x * 2  # a comment\n",
    "Ünïcödé façade naïve café 日本語 🤗",
    "<|endoftext|> and text after the special token",
]

TRUNCATIONS = [
    None,
    {"direction": "Right", "max_length": 5, "strategy": "LongestFirst", "stride": 0},
    {"direction": "Left", "max_length": 5, "strategy": "LongestFirst", "stride": 2},
    {"direction": "Right", "max_length": 7, "strategy": "OnlyFirst", "stride": 0},
    {"direction": "Left", "max_length": 0, "strategy": "LongestFirst", "stride": 0},
    {"direction": "Right", "max_length": 64, "strategy": "LongestFirst", "stride": 3},
]


def _padding(strategy, direction="Right", multiple=None, pad_id=50256):
    return {
        "strategy": strategy,
        "direction": direction,
        "pad_to_multiple_of": multiple,
        "pad_id": pad_id,
        "pad_type_id": 0,
        "pad_token": "<|endoftext|>",
    }


PADDINGS = [
    None,
    _padding("BatchLongest"),
    _padding("BatchLongest", "Left", 4),
    _padding({"Fixed": 12}),
    _padding({"Fixed": 10}, "Left", 8, pad_id=7),
    _padding({"Fixed": 0}, multiple=0),
]


@pytest.fixture(scope="module")
def gpt2_json():
    """GPT-2's tokenizer.json as ``tokenizers`` builds it from vocab.json + merges.txt."""
    from tokenizers import decoders, models, pre_tokenizers

    hf = tokenizers.Tokenizer(models.BPE.from_file(str(GPT2_ENCODER), str(GPT2_VOCAB_BPE)))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.add_special_tokens(["<|endoftext|>"])
    return json.loads(hf.to_str())


def _write(tmp_path, doc, truncation, padding, name="tokenizer.json"):
    d = dict(doc, truncation=truncation, padding=padding)
    path = tmp_path / name
    path.write_text(json.dumps(d), encoding="utf-8")
    return path


def _same_as_hf(tok, hf):
    for text in TEXTS:
        assert tok.encode(text, allowed_special="all") == hf.encode(text).ids, text
    batches = [TEXTS, TEXTS[1:3], [TEXTS[0]], []]
    for batch in batches:
        got = tok.encode_batch(batch, allowed_special="all")
        assert got == [e.ids for e in hf.encode_batch(batch)], batch


@pytest.mark.parametrize("padding", PADDINGS, ids=range(len(PADDINGS)))
@pytest.mark.parametrize("truncation", TRUNCATIONS, ids=range(len(TRUNCATIONS)))
def test_encode_matches_tokenizers(gpt2_json, tmp_path, truncation, padding):
    path = _write(tmp_path, gpt2_json, truncation, padding)
    hf = tokenizers.Tokenizer.from_file(str(path))
    for tok in (toksmith.from_huggingface(path), toksmith.load_any(path), toksmith.load(path)):
        assert tok.truncation == hf.truncation
        assert tok.padding == hf.padding
        _same_as_hf(tok, hf)


def test_the_issue_example(gpt2_json, tmp_path):
    """The reproducer: 18 ids without the settings, 5 with truncation, 64 with padding."""
    text = "The quick brown fox jumps over the lazy dog, and then it runs far away now."
    plain = toksmith.from_huggingface(_write(tmp_path, gpt2_json, None, None))
    assert len(plain.encode(text)) == 18
    trunc = dict(TRUNCATIONS[1])
    assert (
        len(toksmith.from_huggingface(_write(tmp_path, gpt2_json, trunc, None)).encode(text)) == 5
    )
    pad = _padding({"Fixed": 64})
    assert len(toksmith.from_huggingface(_write(tmp_path, gpt2_json, None, pad)).encode(text)) == 64


def test_switches_match_tokenizers(gpt2_json, tmp_path):
    path = _write(tmp_path, gpt2_json, TRUNCATIONS[2], PADDINGS[4])
    hf = tokenizers.Tokenizer.from_file(str(path))
    tok = toksmith.from_huggingface(path)
    hf.no_truncation()
    tok.no_truncation()
    assert tok.truncation is None and hf.truncation is None
    _same_as_hf(tok, hf)
    hf.no_padding()
    tok.no_padding()
    assert tok.padding is None
    _same_as_hf(tok, hf)
    assert tok.encode(TEXTS[0]) == tok.encode_ordinary(TEXTS[0])
    for kw in (
        dict(max_length=3),
        dict(max_length=4, stride=1, direction="left"),
        dict(max_length=6, strategy="only_first"),
    ):
        hf.enable_truncation(**kw)
        tok.enable_truncation(**kw)
        assert tok.truncation == hf.truncation
        _same_as_hf(tok, hf)
    for kw in (
        dict(),
        dict(direction="left", pad_id=3, pad_token="x", length=9),
        dict(pad_to_multiple_of=5, pad_id=1),
    ):
        hf.enable_padding(**kw)
        tok.enable_padding(**kw)
        assert tok.padding == hf.padding
        _same_as_hf(tok, hf)


def test_other_encoders_give_all_ids(gpt2_json, tmp_path):
    """Only encode and encode_batch apply the settings (as tokenizers' encode does)."""
    tok = toksmith.from_huggingface(_write(tmp_path, gpt2_json, TRUNCATIONS[1], PADDINGS[3]))
    full = toksmith.from_huggingface(_write(tmp_path, gpt2_json, None, None))
    text = TEXTS[0]
    assert tok.encode_ordinary(text) == full.encode(text)
    assert tok.encode_ordinary_batch([text]) == [full.encode(text)]
    assert tok.encode_with_unstable(text) == full.encode_with_unstable(text)
    assert len(tok.encode(text)) == 12 and tok.encode(text)[:5] == full.encode(text)[:5]


def test_the_cli_encodes_the_whole_text(gpt2_json, tmp_path):
    """A stream encoded in blocks is not truncated or padded block by block."""
    from toksmith.cli import main

    path = _write(tmp_path, gpt2_json, TRUNCATIONS[1], PADDINGS[1])
    text = tmp_path / "in.txt"
    text.write_text(TEXTS[0] * 50, encoding="utf-8")
    out = tmp_path / "ids.txt"
    assert main(["encode", "-t", str(path), str(text), "-o", str(out)]) == 0
    full = toksmith.from_huggingface(_write(tmp_path, gpt2_json, None, None, "plain.json"))
    assert list(map(int, out.read_text().split())) == full.encode(TEXTS[0] * 50)


def test_saved_as_tokenizer_json(gpt2_json, tmp_path):
    path = _write(tmp_path, gpt2_json, TRUNCATIONS[2], PADDINGS[4])
    tok = toksmith.from_huggingface(path)
    out = tmp_path / "out"
    out.mkdir()
    tok.save(out / "tokenizer.json")
    saved = json.loads((out / "tokenizer.json").read_text(encoding="utf-8"))
    assert saved["truncation"] == TRUNCATIONS[2] and saved["padding"] == PADDINGS[4]
    again = toksmith.load(out / "tokenizer.json")
    assert again.truncation == tok.truncation and again.padding == tok.padding
    hf = tokenizers.Tokenizer.from_file(str(out / "tokenizer.json"))
    _same_as_hf(again, hf)
    hf2 = tok.to_huggingface()
    assert hf2.truncation == tok.truncation and hf2.padding == tok.padding
    tok.save_huggingface(tmp_path / "folder")
    assert toksmith.from_huggingface(tmp_path / "folder").padding == tok.padding
    # turned off, the file says null again
    tok.no_truncation()
    tok.no_padding()
    tok.save(out / "tokenizer.json")
    saved = json.loads((out / "tokenizer.json").read_text(encoding="utf-8"))
    assert saved["truncation"] is None and saved["padding"] is None


def test_toksmith_format_refuses_the_settings(gpt2_json, tmp_path):
    tok = toksmith.from_huggingface(_write(tmp_path, gpt2_json, TRUNCATIONS[1], None))
    with pytest.raises(ValueError, match="truncation / padding"):
        tok.save(tmp_path / "tok.json")
    assert not (tmp_path / "tok.json").exists()
    tok.no_truncation()
    tok.save(tmp_path / "tok.json")
    assert toksmith.load(tmp_path / "tok.json").truncation is None


def test_pickle_keeps_the_settings(gpt2_json, tmp_path):
    tok = toksmith.from_huggingface(_write(tmp_path, gpt2_json, TRUNCATIONS[2], PADDINGS[2]))
    copy = pickle.loads(pickle.dumps(tok))
    assert copy.truncation == tok.truncation and copy.padding == tok.padding
    assert copy.encode_batch(TEXTS[:6]) == tok.encode_batch(TEXTS[:6])
    plain = toksmith.from_huggingface(_write(tmp_path, gpt2_json, None, None))
    assert pickle.loads(pickle.dumps(plain)).padding is None


def test_stride_not_below_max_length(gpt2_json, tmp_path):
    """tokenizers fails (a Rust panic) when it truncates with stride >= max_length: a
    ValueError here, and only when a text needs truncating, as there."""
    bad = {"direction": "Right", "max_length": 3, "strategy": "LongestFirst", "stride": 3}
    tok = toksmith.from_huggingface(_write(tmp_path, gpt2_json, bad, None))
    assert tok.encode("hi") == toksmith.from_huggingface(
        _write(tmp_path, gpt2_json, None, None)
    ).encode("hi")
    with pytest.raises(ValueError, match="stride 3 must be less than max_length 3"):
        tok.encode(TEXTS[0])
    with pytest.raises(ValueError, match="stride"):
        tok.encode_batch(TEXTS[:6])


def test_only_second_is_refused(gpt2_json, tmp_path):
    t = {"direction": "Right", "max_length": 3, "strategy": "OnlySecond", "stride": 0}
    with pytest.raises(ConversionError, match="OnlySecond"):
        toksmith.from_huggingface(_write(tmp_path, gpt2_json, t, None))
    tok = toksmith.from_huggingface(_write(tmp_path, gpt2_json, None, None))
    with pytest.raises(ValueError, match="only_second"):
        tok.enable_truncation(3, strategy="only_second")


@pytest.mark.parametrize(
    "key,value",
    [
        ("truncation", {"max_length": 5}),  # tokenizers needs strategy and stride
        ("truncation", {"max_length": -1, "strategy": "LongestFirst", "stride": 0}),
        ("truncation", {"max_length": 5.0, "strategy": "LongestFirst", "stride": 0}),
        ("truncation", {"max_length": 5, "strategy": "LongestFirst", "stride": True}),
        ("truncation", {"max_length": 5, "strategy": "longest_first", "stride": 0}),
        (
            "truncation",
            {"max_length": 5, "strategy": "LongestFirst", "stride": 0, "direction": "up"},
        ),
        ("truncation", [5]),
        ("padding", {"strategy": "BatchLongest", "direction": "Right"}),
        ("padding", dict(_padding("Fixed"))),
        ("padding", dict(_padding({"Fixed": None}))),
        ("padding", dict(_padding("BatchLongest", pad_id=-1))),
        ("padding", dict(_padding("BatchLongest", pad_id=2**32))),
        ("padding", dict(_padding("BatchLongest", "left"))),
        ("padding", dict(_padding("BatchLongest"), pad_token=3)),
        ("padding", "BatchLongest"),
    ],
)
def test_malformed_settings_are_named(gpt2_json, tmp_path, key, value):
    """What tokenizers refuses to load is a TokenizerFileError naming the key."""
    path = _write(tmp_path, gpt2_json, None, None)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc[key] = value
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(Exception):  # noqa: B017 (tokenizers raises a plain Exception)
        tokenizers.Tokenizer.from_file(str(path))
    with pytest.raises(TokenizerFileError, match=key):
        toksmith.from_huggingface(path)


@pytest.mark.parametrize(
    "call,kw",
    [
        ("enable_truncation", dict(max_length=-1)),
        ("enable_truncation", dict(max_length="5")),
        ("enable_truncation", dict(max_length=5, direction="up")),
        ("enable_truncation", dict(max_length=5, stride=True)),
        ("enable_padding", dict(pad_id=-1)),
        ("enable_padding", dict(length=2.5)),
        ("enable_padding", dict(pad_token=None)),
        ("enable_padding", dict(direction="middle")),
    ],
)
def test_bad_switch_arguments(call, kw):
    tok = toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2")
    with pytest.raises((TypeError, ValueError)):
        getattr(tok, call)(**kw)
    assert tok.truncation is None and tok.padding is None


def test_pipeline_tokenizer_applies_them(tmp_path):
    """A WordPiece tokenizer.json (BERT, whose post-processor adds [CLS]/[SEP]): the ids of
    tokenizers' encode, with and without add_special_tokens, truncated and padded alike."""
    vocab = tmp_path / "vocab.txt"
    vocab.write_bytes(
        lzma.decompress((DATA / "models" / "bert_base_uncased_vocab.txt.xz").read_bytes())
    )
    hf = tokenizers.BertWordPieceTokenizer(str(vocab), lowercase=True)._tokenizer
    hf.enable_truncation(6, direction="left")
    hf.enable_padding(pad_id=0, pad_token="[PAD]", pad_to_multiple_of=4)
    path = tmp_path / "tokenizer.json"
    path.write_text(hf.to_str(), encoding="utf-8")
    tok = toksmith.load_any(path)
    assert isinstance(tok, PipelineTokenizer)
    assert tok.truncation == hf.truncation and tok.padding == hf.padding
    for text in TEXTS:
        assert (
            tok.encode(text, add_special_tokens=False)
            == hf.encode(text, add_special_tokens=False).ids
        ), text
        assert tok.encode(text) == hf.encode(text).ids, text
    assert tok.encode_batch(TEXTS, add_special_tokens=False) == [
        e.ids for e in hf.encode_batch(TEXTS, add_special_tokens=False)
    ]
    assert tok.encode_batch(TEXTS) == [e.ids for e in hf.encode_batch(TEXTS)]
    tok.no_truncation()
    tok.no_padding()
    hf.no_truncation()
    hf.no_padding()
    assert tok.encode_batch(TEXTS, add_special_tokens=False) == [
        e.ids for e in hf.encode_batch(TEXTS, add_special_tokens=False)
    ]
    doc = json.loads(hf.to_str())
    doc["truncation"] = {
        "direction": "Right",
        "max_length": 3,
        "strategy": "OnlySecond",
        "stride": 0,
    }
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ConversionError, match="OnlySecond"):
        toksmith.load_any(path)
