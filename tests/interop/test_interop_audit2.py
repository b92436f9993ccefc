"""Second audit of the file formats and of ``toksmith convert``/``info``: each test is a defect
found and fixed (its comment says what happened before)."""

import json
import shutil

import pytest

import toksmith
from tests.helpers import GPT2_ENCODER, GPT2_VOCAB_BPE
from toksmith import TokenizerFileError
from toksmith.cli import main
from toksmith.formats import ConversionError, detect_format, load_any, to_tiktoken
from toksmith.formats.huggingface import huggingface_json

BYTES = {bytes([b]): b for b in range(256)}


@pytest.fixture(scope="module")
def small():
    return toksmith.Tokenizer.from_ranks(
        {**BYTES, b"ab": 256}, "gpt2", special_tokens={"<|end|>": 257}
    )


def _write_hf(tmp_path, doc, name="tokenizer.json"):
    p = tmp_path / name
    p.write_text(json.dumps(doc), encoding="utf-8")
    return p


def test_template_piece_that_is_not_an_object_is_a_file_error(small, tmp_path):
    # was: TypeError "argument of type 'int' is not iterable" from deep inside the reader
    doc = huggingface_json(small)
    doc["post_processor"] = {"type": "TemplateProcessing", "single": [1, 2], "pair": []}
    with pytest.raises(TokenizerFileError, match=r"post_processor\.single\[0\] must be an object"):
        load_any(_write_hf(tmp_path, doc))


def test_nested_post_processor_sequences_do_not_overflow_the_stack(small, tmp_path):
    # was: RecursionError (not a ValueError) for 400 nested Sequence post-processors, which the JSON reader accepts
    depth = 450
    nested = '{"type":"Sequence","processors":[' * depth + '{"type":"ByteLevel"}' + "]}" * depth
    doc = huggingface_json(small)
    doc["post_processor"] = None
    text = json.dumps(doc).replace('"post_processor": null', f'"post_processor": {nested}', 1)
    p = tmp_path / "tokenizer.json"
    p.write_text(text, encoding="utf-8")
    assert load_any(p).encode("ab<|end|>", allowed_special="all") == [256, 257]


@pytest.mark.parametrize("save", ["save_huggingface", "save_gpt2_files"])
def test_saving_a_folder_format_onto_a_file_says_so(small, tmp_path, save):
    # was: FileExistsError "[Errno 17] File exists: '...'", which does not say a folder is needed
    target = tmp_path / "out"
    target.write_text("keep me")
    with pytest.raises(NotADirectoryError, match="it is a file, not a folder"):
        getattr(small, save)(target)
    assert target.read_text() == "keep me"


def test_convert_to_a_folder_format_onto_a_file_says_so(small, tmp_path, capsys):
    # was: "toksmith convert: error: [Errno 17] File exists: 'out'"
    small.save(tmp_path / "t.json")
    (tmp_path / "out").write_text("x")
    assert (
        main(["convert", str(tmp_path / "t.json"), str(tmp_path / "out"), "--to", "huggingface"])
        != 0
    )
    assert "not a folder" in capsys.readouterr().err


def test_save_tiktoken_refusing_pinned_tokens_says_what_to_do(tmp_path):
    # was: "a .tiktoken file cannot hold pinned tokens; this tokenizer has 1" and nothing more
    tok = toksmith.Tokenizer.from_ranks(BYTES, "gpt2", pinned_tokens={"<think>": 256})
    with pytest.raises(ConversionError, match=r"'<think>'.*save_huggingface"):
        tok.save_tiktoken(tmp_path / "x.tiktoken")
    assert not (tmp_path / "x.tiktoken").exists()


@pytest.mark.parametrize("save", ["save_huggingface", "save_gpt2_files"])
def test_special_token_spelled_like_a_mergeable_token_says_what_to_do(tmp_path, save):
    # was: "... the file could not tell them apart" with no way out named
    tok = toksmith.Tokenizer.from_ranks({**BYTES, b"ab": 256}, "gpt2", special_tokens={"ab": 257})
    with pytest.raises(
        ConversionError, match=r"rename the special/pinned token \(e\.g\. <\|ab\|>\)"
    ):
        getattr(tok, save)(tmp_path / "d")


def test_to_tiktoken_refuses_a_special_token_that_starts_another():
    # was: an Encoding whose ids differ: tiktoken matched '<|e' inside '<|end|>' (its table order decides)
    pytest.importorskip("tiktoken")
    tok = toksmith.Tokenizer.from_ranks(BYTES, "gpt2", special_tokens={"<|e": 256, "<|end|>": 257})
    with pytest.raises(
        ConversionError, match=r"'<\|e' is the start of the special token '<\|end\|>'"
    ):
        to_tiktoken(tok)
    fine = toksmith.Tokenizer.from_ranks(
        BYTES, "gpt2", special_tokens={"<|a|>": 256, "<|end|>": 257}
    )
    assert to_tiktoken(fine).encode("<|a|>x<|end|>", allowed_special="all") == [256, 120, 257]


def test_merges_file_without_version_line_is_detected_by_its_name(tmp_path):
    # was: "unknown tokenizer file format" for gpt2_vocab.bpe without "#version", though its pair is found by name
    shutil.copy(GPT2_ENCODER, tmp_path / "gpt2_encoder.json")
    merges = GPT2_VOCAB_BPE.read_text(encoding="utf-8").split("\n", 1)[1]
    (tmp_path / "gpt2_vocab.bpe").write_text(merges, encoding="utf-8")
    assert detect_format(tmp_path / "gpt2_vocab.bpe") == "gpt2"
    tok = load_any(tmp_path / "gpt2_vocab.bpe")
    assert tok.n_vocab == 50257 and tok.encode("hello world") == [31373, 995]


def test_info_takes_the_special_tokens_of_a_rank_file(tmp_path, capsys):
    # was: info failed on a valid .tiktoken whose special tokens fill ids 0-2 ("pass special_tokens=", no such option)
    tok = toksmith.Tokenizer.from_ranks(
        {bytes([b]): b + 2 for b in range(256)}, "gpt2", special_tokens={"<|bos|>": 0, "<|eos|>": 1}
    )
    tok.save_tiktoken(tmp_path / "t.tiktoken")
    path = str(tmp_path / "t.tiktoken")
    assert main(["info", "-t", path, "--pattern", "gpt2"]) != 0
    assert "--special-tokens" in capsys.readouterr().err
    assert (
        main(
            [
                "info",
                "-t",
                path,
                "--pattern",
                "gpt2",
                "--json",
                "--special-tokens",
                '{"<|bos|>": 0, "<|eos|>": 1}',
            ]
        )
        == 0
    )
    info = json.loads(capsys.readouterr().out)
    assert info["n_vocab"] == 258 and info["special_tokens"] == {"<|bos|>": 0, "<|eos|>": 1}
    assert main(["info", "-t", path, "--special-tokens", "[0]"]) != 0
    assert "must be a JSON object" in capsys.readouterr().err
