"""Paths that cannot be encoded (lone surrogates) are clear errors; surrogateescape paths work."""

import os
from pathlib import Path

import pytest

import toksmith
from tests.conftest import DATA
from toksmith import calm
from toksmith.formats import detect_format, load_any
from toksmith.presets import cppreason, nanochat, wordbpe
from toksmith.presets.chat_shards import ShardWriter, read_manifest

np = pytest.importorskip("numpy")


@pytest.fixture(scope="module")
def tok():
    return toksmith.Tokenizer.from_ranks(
        {bytes([b]): b for b in range(256)} | {b"ab": 256}, "gpt2", special_tokens={"<|end|>": 257}
    )


BAD = "a\ud800b.json"


def _path_calls(tok, tmp_path):
    bad = str(tmp_path / BAD)
    bad_dir = str(tmp_path / "d\udfffir")
    return {
        "toksmith.load": lambda: toksmith.load(bad),
        "Tokenizer.load": lambda: toksmith.Tokenizer.load(bad),
        "toksmith.load(Path)": lambda: toksmith.load(Path(bad)),
        "load_any": lambda: load_any(bad),
        "detect_format": lambda: detect_format(bad),
        "Tokenizer.save": lambda: tok.save(bad),
        "Tokenizer.save_tiktoken": lambda: tok.save_tiktoken(bad),
        "Tokenizer.save_huggingface": lambda: tok.save_huggingface(bad_dir),
        "save_gpt2_files": lambda: toksmith.formats.save_gpt2_files(tok, bad_dir),
        "from_tiktoken": lambda: toksmith.from_tiktoken(bad, pattern="gpt2"),
        "from_huggingface": lambda: toksmith.from_huggingface(bad),
        "from_gpt2_files": lambda: toksmith.from_gpt2_files(
            bad, str(DATA / "vocabs" / "gpt2_vocab.bpe")
        ),
        "get_encoding(cache_dir)": lambda: toksmith.get_encoding("gpt2", cache_dir=bad_dir),
        "train": lambda: toksmith.train(bad, vocab_size=300),
        "train([paths])": lambda: toksmith.train(
            [str(DATA / "corpora" / "shell_slice.txt"), bad], vocab_size=300
        ),
        "corpus.read_text": lambda: toksmith.corpus.read_text(bad),
        "corpus.expand_paths": lambda: toksmith.corpus.expand_paths([bad]),
        "nanochat.train": lambda: nanochat.train(bad, vocab_size=300),
        "nanochat.load": lambda: nanochat.load(bad),
        "ChatTokenizer.save": lambda: nanochat.ChatTokenizer(tok_with_chat_specials()).save(
            bad_dir
        ),
        "cppreason.load": lambda: cppreason.load(bad),
        "wordbpe.load": lambda: wordbpe.load(bad),
        "WordTokenizer.save": lambda: wordbpe.train(["a b a b"], 2).save(bad),
        "wordbpe.write_counts_csv": lambda: wordbpe.write_counts_csv(
            bad, [("a", 1)], ("token", "count")
        ),
        "wordbpe.run(out_dir)": lambda: wordbpe.run(["a b"], bad_dir),
        "cromwell.collect_code_corpus": lambda: toksmith.presets.cromwell.collect_code_corpus(
            bad_dir
        ),
        "calm.read_cwgt": lambda: calm.read_cwgt(bad),
        "calm.write_cwgt": lambda: calm.write_cwgt(
            bad,
            calm.CWGTHeader(d_model=16, n_layers=1, dt_rank=1),
            calm.CWGTMetadata("shell", "BOS;ATN;CMD:input", "|"),
            np.zeros(4, dtype=np.float32),
        ),
        "ByteTokenizer.save": lambda: calm.ByteTokenizer().save(bad),
        "ByteTokenizer.load": lambda: calm.ByteTokenizer.load(bad),
        "ShardWriter": lambda: ShardWriter(bad_dir, n_vocab=300),
        "read_manifest": lambda: read_manifest(bad_dir),
    }


def tok_with_chat_specials():
    specials = {s: 256 + k for k, s in enumerate(nanochat.SPECIAL_TOKENS)}
    return toksmith.Tokenizer.from_ranks(
        {bytes([b]): b for b in range(256)}, "gpt2", special_tokens=specials
    )


PATH_ENTRY_POINTS = [
    "toksmith.load",
    "Tokenizer.load",
    "toksmith.load(Path)",
    "load_any",
    "detect_format",
    "Tokenizer.save",
    "Tokenizer.save_tiktoken",
    "Tokenizer.save_huggingface",
    "save_gpt2_files",
    "from_tiktoken",
    "from_huggingface",
    "from_gpt2_files",
    "get_encoding(cache_dir)",
    "train",
    "train([paths])",
    "corpus.read_text",
    "corpus.expand_paths",
    "nanochat.train",
    "nanochat.load",
    "ChatTokenizer.save",
    "cppreason.load",
    "wordbpe.load",
    "WordTokenizer.save",
    "wordbpe.write_counts_csv",
    "wordbpe.run(out_dir)",
    "cromwell.collect_code_corpus",
    "calm.read_cwgt",
    "calm.write_cwgt",
    "ByteTokenizer.save",
    "ByteTokenizer.load",
    "ShardWriter",
    "read_manifest",
]


@pytest.mark.parametrize("entry", PATH_ENTRY_POINTS)
def test_unencodable_path_is_a_clear_value_error(tok, tmp_path, entry):
    # was: a bare UnicodeEncodeError ("'utf-8' codec can't encode character '\ud800' in position 1:
    # surrogates not allowed") from inside open() or os.stat(), naming no file
    with pytest.raises(ValueError) as e:
        _path_calls(tok, tmp_path)[entry]()
    assert not isinstance(e.value, UnicodeError)
    msg = str(e.value)
    assert "cannot be encoded for the file system" in msg
    assert "pass a str of valid characters (os.fsdecode(name_bytes)" in msg
    assert (
        "\\ud800" in msg and repr(BAD)[1:-1] in msg
    ) or "d\\udfffir" in msg  # the path, as repr shows it
    assert os.listdir(tmp_path) == []  # nothing half-written


def test_unencodable_path_in_the_cli(tmp_path, capsys):
    from toksmith.cli import main

    assert main(["encode", "-t", str(tmp_path / BAD), "-o", str(tmp_path / "o.txt")]) == 1
    err = capsys.readouterr().err
    assert "cannot be encoded for the file system" in err and "a\\ud800b.json" in err
    tok_path = tmp_path / "t.json"
    toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2").save(tok_path)
    assert main(["encode", "-t", str(tok_path), "-o", str(tmp_path / BAD)]) == 1
    assert "cannot be encoded for the file system" in capsys.readouterr().err
    assert main(["convert", str(tmp_path / BAD), str(tmp_path / "o.json")]) == 1
    assert "cannot be encoded for the file system" in capsys.readouterr().err


@pytest.mark.skipif(os.name != "posix", reason="surrogateescape file names are POSIX's")
def test_surrogateescape_paths_still_work(tok, tmp_path):
    # "\udcff" is how Python spells the undecodable byte 0xff of a POSIX file name: it can be stored
    name = str(tmp_path / "x\udcffy.json")
    tok.save(name)
    assert toksmith.load(name).encode("ab") == [256]
    assert load_any(os.fsencode(name)).encode("ab") == [256]  # bytes, as the message suggests
