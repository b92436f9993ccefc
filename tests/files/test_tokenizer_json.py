"""A file named tokenizer.json is a Hugging Face tokenizer.json (issue 34): `tok.save` and
`toksmith train -o tokenizer.json` write one that `tokenizers` and `transformers` load with the
same ids, `toksmith.load` reads it back to the same tokenizer (name, pattern text and metadata
ride along in the model object, where `tokenizers` tolerates an unknown key), and a tokenizer
the format cannot hold exactly is refused with a ConversionError that suggests another name."""

import json
import os
import subprocess
import sys
import warnings

import pytest

import toksmith
from toksmith import ConversionError
from toksmith.files.detect import detect_format

tokenizers = pytest.importorskip("tokenizers")

TEXTS = [
    "hello world, int x == y;\n  def f(a, b): return a + b\n",
    "the quick brown fox jumps over the lazy dog 12345 éèà 日本語\n",
] * 20
SAMPLES = [
    "hello int world<|endoftext|> x==y",
    "  def g(x):\n\treturn x*2  # 123456 ünïcödé",
    "",
    "<|endoftext|><|endoftext|>intint",
]


def _train(pattern="cl100k", **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the small corpus may run out of pairs
        return toksmith.train_from_iterator(
            TEXTS,
            vocab_size=320,
            pattern=pattern,
            special_tokens=["<|endoftext|>"],
            pinned_tokens=["int"],
            threads=1,
            **kw,
        )


def _hf_ids(path, text):
    return tokenizers.Tokenizer.from_file(str(path)).encode(text).ids


@pytest.mark.parametrize("pattern", ["cl100k", "o200k", "gpt2", r"\w+|\s+|[^\w\s]+"])
def test_save_tokenizer_json_loads_in_tokenizers_with_same_ids(tmp_path, pattern):
    tok = _train(pattern, name="mine")
    tok.metadata["note"] = {"list": [1, 2.5, None], "text": "é"}
    path = tmp_path / "tokenizer.json"
    tok.save(path)
    assert detect_format(path) == "huggingface"
    hf = tokenizers.Tokenizer.from_file(str(path))
    for s in SAMPLES:
        assert hf.encode(s).ids == tok.encode(s, allowed_special="all"), s
        assert hf.decode(hf.encode(s).ids, skip_special_tokens=False) == s
    for again in (toksmith.load(path), toksmith.Tokenizer.load(path), toksmith.load_any(path)):
        assert again.to_spec() == tok.to_spec()
        assert (again.name, again.pattern, again.metadata) == (tok.name, tok.pattern, tok.metadata)
        assert again.pinned_tokens == tok.pinned_tokens
        assert again.special_tokens == tok.special_tokens
    assert json.loads(path.read_text(encoding="utf-8"))["model"]["toksmith"]["name"] == "mine"


def test_save_tokenizer_json_loads_in_transformers(tmp_path):
    transformers = pytest.importorskip("transformers")
    tok = _train()
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path))
    for s in SAMPLES:
        assert fast(s)["input_ids"] == tok.encode(s, allowed_special="all"), s


def test_other_names_stay_toksmith_format(tmp_path):
    tok = _train()
    for name in ("tok.json", "my_tokenizer.json", "tokenizer.json.bak"):
        tok.save(tmp_path / name)
        assert detect_format(tmp_path / name) == "toksmith"
        assert toksmith.load(tmp_path / name).to_spec() == tok.to_spec()


def test_unexpressible_tokenizer_is_refused_with_another_name_suggested(tmp_path):
    # a rank table whose multi-byte token is no merge of two tokens: no merge list, so no
    # Hugging Face BPE model can hold it
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"abc"] = 256
    tok = toksmith.Tokenizer.from_ranks(ranks, "gpt2")
    path = tmp_path / "tokenizer.json"
    with pytest.raises(ConversionError, match=r"tokenizer\.json.*tok\.json"):
        tok.save(path)
    assert os.listdir(tmp_path) == []  # nothing written, not even a temporary file
    tok.save(tmp_path / "tok.json")  # toksmith's own format holds it
    assert toksmith.load(tmp_path / "tok.json").encode("abc") == [256]


def test_load_reads_a_plain_huggingface_tokenizer_json(tmp_path):
    tok = _train()
    tok.save_huggingface(tmp_path / "hf")  # no toksmith data in it
    again = toksmith.load(tmp_path / "hf" / "tokenizer.json")
    assert again.mergeable_ranks() == tok.mergeable_ranks()
    assert again.encode(SAMPLES[0], allowed_special="all") == tok.encode(
        SAMPLES[0], allowed_special="all"
    )


def test_bad_toksmith_data_in_the_model_is_named(tmp_path):
    tok = _train()
    path = tmp_path / "tokenizer.json"
    tok.save(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["model"]["toksmith"]["metadata"] = [1]
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(toksmith.TokenizerFileError, match=r"model\.toksmith\.metadata"):
        toksmith.load(path)


def test_cli_train_writes_huggingface_tokenizer_json(tmp_path):
    """The README's first command, `toksmith train -o tokenizer.json` on the default corpus (a
    smaller vocabulary here, for time), gives a file that tokenizers and transformers load."""
    r = subprocess.run(
        [sys.executable, "-m", "toksmith", "train", "--vocab-size", "600", "-o", "tokenizer.json"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    path = tmp_path / "tokenizer.json"
    tok = toksmith.load(path)
    text = "import os\n\ndef main(argv=None):\n    return os.path.join('a', 'b')  # 42\n"
    assert _hf_ids(path, text) == tok.encode(text)
    transformers = pytest.importorskip("transformers")
    fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path))
    assert fast(text)["input_ids"] == tok.encode(text)
