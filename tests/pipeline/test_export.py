"""PipelineTokenizer.save_huggingface and `toksmith convert`: a tokenizer.json that
`tokenizers` (and `transformers`) load with the same ids, for every pipeline kind."""

import json

import pytest

import toksmith
import toksmith.cli.convert
from toksmith.cli import main
from toksmith.errors import ConversionError

from ..files.test_sentencepiece import ALL_TEXTS

tokenizers = pytest.importorskip("tokenizers")


def _check_same(tok, ref, kind):
    unk = "<unk>" if tok.model_kind == "unigram" else None
    scores = None
    if kind == "sentencepiece" and unk:
        spm = pytest.importorskip("sentencepiece")
        sp = spm.SentencePieceProcessor(model_file=tok.name)
        scores = sp.get_score
    ties = 0
    for text in ALL_TEXTS:
        if unk and unk in text:
            # a Hugging Face Unigram model matches its unknown piece's text as that piece,
            # sentencepiece never does (see save_huggingface)
            assert ref.encode(text).ids != tok.encode(text, special=True)
            text = text.replace(unk, "<unk >")
        ids = tok.encode(text, special=True)
        got = ref.encode(text).ids
        if scores is not None and got != ids:
            # sentencepiece and tokenizers break some Viterbi ties their own ways: the same
            # text and the same total score
            assert ref.decode(got) == ref.decode(ids), text
            assert sum(map(scores, got)) == pytest.approx(sum(map(scores, ids))), text
            ties += 1
            continue
        assert got == ids, text
        if kind == "sentencepiece":
            # sentencepiece drops control tokens and writes the unknown piece as " ⁇ ": the
            # texts without either
            ids = tok.encode(text)
            if tok.token_to_id("<unk>") in ids:
                continue
        assert ref.decode(ids, skip_special_tokens=False) == tok.decode(ids), text
    assert ties <= len(ALL_TEXTS) // 10


@pytest.mark.parametrize("name", ["llama2.model", "mistral_v1.model", "t5_spm.model"])
def test_model_file_exports_to_tokenizer_json(files, tmp_path, name):
    tok = toksmith.load_any(files / name)
    tok.save_huggingface(tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "special_tokens_map.json",
        "tokenizer.json",
        "tokenizer_config.json",
    ]
    ref = tokenizers.Tokenizer.from_file(str(tmp_path / "out" / "tokenizer.json"))
    _check_same(tok, ref, "sentencepiece")
    # toksmith reads the export back with tokenizers' ids
    back = toksmith.load_any(tmp_path / "out" / "tokenizer.json")
    assert back.encode_batch(ALL_TEXTS) == [e.ids for e in ref.encode_batch(ALL_TEXTS)]


def test_llama_export_loads_in_transformers(files, tmp_path):
    transformers = pytest.importorskip("transformers")
    tok = toksmith.load_any(files / "llama2.model")
    tok.save_huggingface(tmp_path)
    ref = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    assert ref.bos_token == "<s>" and ref.eos_token == "</s>"
    for text in ALL_TEXTS[:30]:
        assert ref(text)["input_ids"] == tok.encode(text, special=True), text


def test_bert_folder_exports_with_its_template(files, tmp_path):
    tok = toksmith.load_any(files / "bert")
    tok.save_huggingface(tmp_path)
    ref = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in ALL_TEXTS:
        assert ref.encode(text).ids == tok.encode(text), text
        assert ref.encode(text, add_special_tokens=False).ids == tok.encode(
            text, add_special_tokens=False
        )
        ids = tok.encode(text)
        assert ref.decode(ids, skip_special_tokens=False) == tok.decode(ids)


def test_tokenizer_json_exports_as_read(hf_refs, tmp_path):
    for name, (ref, path) in hf_refs.items():
        tok = toksmith.load_any(path)
        tok.enable_padding(length=40, pad_id=0, pad_token="<pad>")
        doc = tok.to_huggingface_json()
        assert doc["padding"]["strategy"] == {"Fixed": 40}
        assert {k: v for k, v in doc.items() if k not in ("padding",)} == {
            k: v for k, v in json.loads(ref.to_str()).items() if k != "padding"
        }
        out = tmp_path / name
        tok.save_huggingface(out)
        back = tokenizers.Tokenizer.from_file(str(out / "tokenizer.json"))
        for text in ALL_TEXTS[:40]:
            assert back.encode(text).ids == tok.encode(text), text
        assert toksmith.load_any(out).padding == tok.padding


def test_convert_command(files, tmp_path, capsys):
    out = tmp_path / "llama"
    assert main(["convert", str(files / "llama2.model"), str(out), "--to", "huggingface"]) == 0
    assert "model=bpe" in capsys.readouterr().err
    ref = tokenizers.Tokenizer.from_file(str(out / "tokenizer.json"))
    tok = toksmith.load_any(files / "llama2.model")
    assert ref.encode("Hello  world\n\tx").ids == tok.encode("Hello  world\n\tx")
    for src, model in (("t5_spm.model", "Unigram"), ("bert", "WordPiece")):
        for target in ("tiktoken", "gpt2", "toksmith"):
            dest = tmp_path / f"x.{target}"
            assert main(["convert", str(files / src), str(dest), "--to", target]) == 1
            assert model in capsys.readouterr().err
            assert not dest.exists()
    with pytest.raises(ConversionError, match="BPE over characters"):
        toksmith.cli.convert._convert_pipeline(
            tok, type("Args", (), {"input": "llama2.model"})(), "sentencepiece", "tiktoken"
        )
