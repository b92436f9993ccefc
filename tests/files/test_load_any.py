"""Format detection, load_any on every format, `toksmith convert` and `encode -t` on them."""

import json
import os
import shutil
import threading

import pytest

import toksmith
from tests.cli.helpers import _err  # stderr with no traceback in it
from tests.helpers import CL100K_TIKTOKEN, GPT2_ENCODER, GPT2_TIKTOKEN, GPT2_VOCAB_BPE
from toksmith import TokenizerFileError
from toksmith.cli import main
from toksmith.formats import detect_format, load_any
from toksmith.formats.huggingface import save_huggingface

SAMPLE = "Hello world<|endoftext|> it's 12345\n\n  x = [1, 2]\n"


@pytest.fixture(scope="module")
def files(tmp_path_factory, trained):
    """One file (or folder) per format, all for the same trained tokenizer (no pinned tokens
    for tiktoken)."""
    d = tmp_path_factory.mktemp("formats")
    tok = trained["cl100k"]
    tok.save(d / "tok.json")
    tok.save_huggingface(d / "hf")
    tok.save_gpt2_files(d / "gpt2")
    shutil.copy(GPT2_ENCODER, d / "encoder.json")
    shutil.copy(GPT2_VOCAB_BPE, d / "vocab.bpe")
    return d


def test_detect_format(files):
    assert detect_format(files / "tok.json") == "toksmith"
    assert detect_format(files / "hf") == "huggingface"
    assert detect_format(files / "hf" / "tokenizer.json") == "huggingface"
    assert detect_format(files / "gpt2") == "gpt2"
    assert detect_format(files / "gpt2" / "vocab.json") == "gpt2"
    assert detect_format(files / "gpt2" / "merges.txt") == "gpt2"
    assert detect_format(files / "encoder.json") == "gpt2"
    assert detect_format(GPT2_TIKTOKEN) == "tiktoken"
    assert detect_format(CL100K_TIKTOKEN) == "tiktoken"


def test_load_any_every_format(files, trained, corpus_chunks):
    tok = trained["cl100k"]
    texts = corpus_chunks[::10]
    expected = tok.encode_batch(texts, allowed_special="all")
    for p in [files / "tok.json", files / "hf", files / "hf" / "tokenizer.json"]:
        assert load_any(p).encode_batch(texts, allowed_special="all") == expected, p
    for p in [files / "gpt2", files / "gpt2" / "merges.txt"]:
        t = load_any(
            p, pattern="cl100k", special_tokens={**tok.special_tokens, **tok.pinned_tokens}
        )
        assert t.mergeable_ranks() == tok.mergeable_ranks()
        assert t.encode_ordinary_batch(texts) == tok.encode_ordinary_batch(texts)
        assert t.special_tokens == {**tok.special_tokens, **tok.pinned_tokens}
    g = load_any(files / "encoder.json")
    assert g.n_vocab == 50257 and g.special_tokens == {"<|endoftext|>": 50256}
    assert load_any(files / "vocab.bpe").mergeable_ranks() == g.mergeable_ranks()


def test_load_any_tiktoken_defaults(tmp_path):
    assert load_any(CL100K_TIKTOKEN).special_tokens["<|endofprompt|>"] == 100276
    t = load_any(GPT2_TIKTOKEN, pattern="cl100k")  # the hash still gives the special tokens
    assert t.pattern_name == "cl100k" and t.special_tokens == {"<|endoftext|>": 50256}
    tok = toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2")
    tok.save_tiktoken(tmp_path / "mine.tiktoken")
    # an unrecognised rank file has no pattern to guess: the caller names it
    with pytest.raises(toksmith.TokenizerFileError, match="stores no split pattern"):
        load_any(tmp_path / "mine.tiktoken")
    assert load_any(tmp_path / "mine.tiktoken", pattern="gpt2").pattern_name == "gpt2"


def test_folder_with_saved_tokenizer_json(tmp_path, trained):
    # tok.save writes a file named tokenizer.json in Hugging Face's format (issue 34)
    trained["o200k"].save(tmp_path / "tokenizer.json")
    assert detect_format(tmp_path) == "huggingface"
    assert load_any(tmp_path).mergeable_ranks() == trained["o200k"].mergeable_ranks()


def test_load_any_rejects_pattern_for_self_describing_files(files):
    with pytest.raises(ValueError, match="stores its own pattern"):
        load_any(files / "tok.json", pattern="gpt2")


def test_cli_convert_chain(tmp_path, capsys, gpt2_tok):
    """tiktoken -> huggingface -> toksmith -> gpt2 -> tiktoken, ids unchanged throughout."""
    expected = gpt2_tok.encode(SAMPLE, allowed_special="all")
    assert main(["convert", str(GPT2_TIKTOKEN), str(tmp_path / "hf"), "--to", "huggingface"]) == 0
    assert main(["convert", str(tmp_path / "hf"), str(tmp_path / "t.json")]) == 0
    assert main(["convert", str(tmp_path / "t.json"), str(tmp_path / "g"), "--to", "gpt2"]) == 0
    assert main(["convert", str(tmp_path / "g"), str(tmp_path / "back.tiktoken")]) == 0
    err = capsys.readouterr().err
    assert "(tiktoken) -> " in err and "stores neither the pattern" in err
    assert (tmp_path / "back.tiktoken").read_bytes() == GPT2_TIKTOKEN.read_bytes()
    for p in ["hf", "t.json", "g", "back.tiktoken"]:
        assert load_any(tmp_path / p).encode(SAMPLE, allowed_special="all") == expected, p


def test_cli_convert_pattern_override(tmp_path):
    tok = toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2")
    tok.save_tiktoken(tmp_path / "r.tiktoken")
    assert (
        main(
            [
                "convert",
                str(tmp_path / "r.tiktoken"),
                str(tmp_path / "t.json"),
                "--pattern",
                "o200k",
                "--special-tokens",
                '{"<|eot|>": 256}',
                "--name",
                "mine",
            ]
        )
        == 0
    )
    t = toksmith.load(tmp_path / "t.json")
    assert (t.pattern_name, t.special_tokens, t.name) == ("o200k", {"<|eot|>": 256}, "mine")


def test_cli_convert_errors(tmp_path, capsys, trained):
    trained["gpt2"].save(tmp_path / "p.json")
    assert main(["convert", str(tmp_path / "p.json"), str(tmp_path / "out")]) == 1
    assert "pass --to" in capsys.readouterr().err
    # pinned tokens have no tiktoken form: a clear error, exit code 1
    assert main(["convert", str(tmp_path / "p.json"), str(tmp_path / "x.tiktoken")]) == 1
    assert "pinned" in capsys.readouterr().err
    assert not (tmp_path / "x.tiktoken").exists()


@pytest.mark.parametrize("fmt", ["toksmith", "huggingface", "gpt2", "tiktoken"])
def test_cli_encode_decode_any_format(fmt, tmp_path, capsys, cl100k_tok, trained_no_pinned):
    src = tmp_path / "in.txt"
    src.write_text(SAMPLE, encoding="utf-8")
    ref = cl100k_tok if fmt == "tiktoken" else trained_no_pinned["cl100k"]
    path = {
        "toksmith": tmp_path / "t.json",
        "huggingface": tmp_path / "hf",
        "gpt2": tmp_path / "g",
        "tiktoken": CL100K_TIKTOKEN,
    }[fmt]
    if fmt == "toksmith":
        ref.save(path)
    elif fmt == "huggingface":
        ref.save_huggingface(path)
    elif fmt == "gpt2":
        ref.save_gpt2_files(path)
        # GPT-2 files carry no pattern: the gpt2 pattern is assumed
        ref = toksmith.Tokenizer(
            ref.mergeable_ranks(), pattern="gpt2", special_tokens=ref.special_tokens
        )
    capsys.readouterr()
    assert main(["encode", "-t", str(path), str(src), "--allow-special", "--format", "json"]) == 0
    ids = json.loads(capsys.readouterr().out)
    assert ids == ref.encode(SAMPLE, allowed_special="all")
    (tmp_path / "ids.txt").write_text(" ".join(map(str, ids)))
    assert main(["decode", "-t", str(path), str(tmp_path / "ids.txt")]) == 0
    assert capsys.readouterr().out == SAMPLE


def test_cli_convert_reads_a_tokenizer_json_once(tmp_path, capsys, files, monkeypatch):
    """convert names the input's format and loads it from one parse of the file."""
    from toksmith import _core

    calls = []
    real = _core.split_json_tables
    monkeypatch.setattr(_core, "split_json_tables", lambda *a: calls.append(a[1]) or real(*a))
    assert main(["convert", str(files / "hf"), str(tmp_path / "t.json")]) == 0
    assert calls == ["huggingface"]
    assert "(huggingface) -> " in capsys.readouterr().err
    assert (
        toksmith.load(tmp_path / "t.json").mergeable_ranks()
        == load_any(files / "hf").mergeable_ranks()
    )


def test_cli_tokenizer_by_openai_encoding_name(tmp_path, capsys, monkeypatch, cl100k_tok):
    """`-t cl100k_base` reads the rank file from tiktoken's cache; a missing one is a clear error."""
    import hashlib

    cache = tmp_path / "cache"
    cache.mkdir()
    url = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
    shutil.copy(CL100K_TIKTOKEN, cache / hashlib.sha1(url.encode()).hexdigest())
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    src = tmp_path / "in.txt"
    src.write_text(SAMPLE, encoding="utf-8")
    capsys.readouterr()
    assert (
        main(["encode", "-t", "cl100k_base", str(src), "--allow-special", "--format", "json"]) == 0
    )
    assert json.loads(capsys.readouterr().out) == cl100k_tok.encode(SAMPLE, allowed_special="all")
    assert main(["encode", "-t", "o200k_base", str(src)]) == 1
    assert "never downloads" in capsys.readouterr().err
    # eval takes the names too (it read -t only as a file: "No such file or directory")
    assert main(["eval", "-t", "cl100k_base", "--corpus", str(src), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["tokenizer"] == "cl100k_base" and row["tokens"] == len(
        cl100k_tok.encode_ordinary(SAMPLE)
    )
    assert main(["eval", "-t", "cl100k_bas", "--corpus", str(src)]) == 1
    assert "OpenAI encoding" in capsys.readouterr().err
    assert main(["encode", "-t", str(tmp_path / "no-such-file.json"), str(src)]) == 1
    assert "no-such-file" in capsys.readouterr().err


def test_json_of_repeating_integers_is_no_gpt2_vocab(tmp_path, capsys):
    # was: token counts ({"the": 5, "a": 5}) were detected as a GPT-2 vocab.json, then failed
    # asking for its merges.txt
    p = tmp_path / "counts.json"
    p.write_text(json.dumps({"the": 5, "a": 5, "cat": 1}), encoding="utf-8")
    with pytest.raises(TokenizerFileError, match="no GPT-2 vocab.json.*repeat"):
        detect_format(p)
    p.write_text(json.dumps({"x": -1, "y": 0}), encoding="utf-8")
    with pytest.raises(TokenizerFileError, match="negative"):
        detect_format(p)
    p.write_text(json.dumps({"x": True, "y": False}), encoding="utf-8")  # bool is an int in Python
    with pytest.raises(TokenizerFileError, match="no known tokenizer format"):
        detect_format(p)
    assert main(["info", "-t", str(p)]) == 1
    assert "no known tokenizer format" in _err(capsys)


def test_json_of_ids_without_merges_says_what_it_was_taken_for(tmp_path, capsys):
    # was: "a GPT-2 vocab.json/encoder.json needs its merges.txt/vocab.bpe beside it": not saying
    # that the file was only taken for one, nor what else it could be
    p = tmp_path / "ids.json"
    p.write_text(json.dumps({"hello": 0, "world": 1}), encoding="utf-8")
    assert detect_format(p) == "gpt2"
    assert main(["info", "-t", str(p)]) == 1
    err = _err(capsys)
    assert "read as a GPT-2 vocab.json" in err and "no merges.txt/vocab.bpe is beside it" in err
    assert "tokenizer.json" in err and "from_gpt2_files" in err
    (tmp_path / "one.bpe").write_text("#version: 0.2\n", encoding="utf-8")
    (tmp_path / "two-merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    with pytest.raises(
        TokenizerFileError,
        match=r"several files beside it could be its merges file \(one.bpe, "
        r"two-merges.txt\)",
    ):
        load_any(p)
    p.unlink()
    with pytest.raises(
        TokenizerFileError, match="merges.txt/vocab.bpe, but no vocab.json/encoder.json is beside"
    ):
        load_any(tmp_path / "two-merges.txt")


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


def _pipe_path(data: bytes) -> str:
    r, w = os.pipe()

    def feed():
        with os.fdopen(w, "wb") as f:
            f.write(data)

    threading.Thread(target=feed, daemon=True).start()
    return f"/dev/fd/{r}"


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="needs /dev/fd")
@pytest.mark.parametrize("fmt", ["toksmith", "tiktoken", "huggingface"])
def test_load_any_reads_a_pipe_once(fmt, small_tok, tmp_path, capsys):
    """Audit finding: load_any (and `toksmith convert <(cat tok.json) ...`) read the head of the file to detect
    its format and then opened it again: from a pipe the second read got nothing, and a valid
    file was reported as 'not valid JSON (truncated or corrupted?)'."""
    path = tmp_path / "t"
    if fmt == "toksmith":
        small_tok.save(path)
    elif fmt == "tiktoken":
        toksmith.Tokenizer(small_tok.mergeable_ranks(), pattern="gpt2").save_tiktoken(path)
    else:
        save_huggingface(
            toksmith.Tokenizer(small_tok.mergeable_ranks(), pattern="gpt2"), tmp_path / "hf"
        )
        path = tmp_path / "hf" / "tokenizer.json"
    raw = path.read_bytes()
    ref = (
        small_tok
        if fmt == "toksmith"
        else toksmith.Tokenizer(small_tok.mergeable_ranks(), pattern="gpt2")
    )
    want = ref.encode(TEXT, allowed_special="all")
    kw = {"pattern": "gpt2"} if fmt == "tiktoken" else {}
    assert load_any(_pipe_path(raw), **kw).encode(TEXT, allowed_special="all") == want
    out = tmp_path / "out.json"
    args = ["--pattern", "gpt2"] if fmt == "tiktoken" else []
    assert main(["convert", _pipe_path(raw), str(out), *args]) == 0
    assert toksmith.load(out).encode(TEXT, allowed_special="all") == want
