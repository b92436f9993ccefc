"""Fixtures of the pipeline tokenizer tests: the model slices of tests/data decompressed once,
and `tokenizers` references built from them (as tests/files/test_sentencepiece.py builds them)."""

import lzma

import pytest

from ..conftest import DATA
from ..files.test_sentencepiece import (
    _bert_tokenizer_json,
    _llama_tokenizer_json,
    _t5_tokenizer_json,
)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The model files, decompressed, and a BERT folder (vocab.txt + tokenizer_config.json)."""
    d = tmp_path_factory.mktemp("models")
    for name in ("llama2.model", "mistral_v1.model", "t5_spm.model"):
        (d / name).write_bytes(lzma.decompress((DATA / "models" / f"{name}.xz").read_bytes()))
    bert = d / "bert"
    bert.mkdir()
    (bert / "vocab.txt").write_bytes(
        lzma.decompress((DATA / "models" / "bert_base_uncased_vocab.txt.xz").read_bytes())
    )
    (bert / "tokenizer_config.json").write_text(
        '{"do_lower_case": true, "tokenizer_class": "BertTokenizer"}'
    )
    return d


@pytest.fixture(scope="module")
def hf_refs(files, tmp_path_factory):
    """name -> (tokenizers.Tokenizer, path of its tokenizer.json) for the T5 (with T5's
    `$A </s>` template), Llama and BERT (BertProcessing) references."""
    tokenizers = pytest.importorskip("tokenizers")
    d = tmp_path_factory.mktemp("hf_refs")
    t5 = _t5_tokenizer_json(files / "t5_spm.model")
    t5.post_processor = tokenizers.processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", 1)]
    )
    refs = {
        "t5": t5,
        "llama": _llama_tokenizer_json(files / "llama2.model"),
        "bert": _bert_tokenizer_json(files / "bert" / "vocab.txt"),
    }
    out = {}
    for name, ref in refs.items():
        path = d / f"{name}.json"
        path.write_text(ref.to_str(), encoding="utf-8")
        out[name] = (ref, path)
    return out
