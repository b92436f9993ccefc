"""The file-format readers and writers refuse arguments of the wrong type with a clear message."""

from __future__ import annotations

import os
import warnings

import pytest

from tests.conftest import BYTES
from toksmith import Tokenizer, calm, formats
from toksmith.formats import gpt2 as fgpt2
from toksmith.formats import huggingface as fhf
from toksmith.formats import tiktoken as ftiktoken
from toksmith.presets import (
    nanochat,
    wordbpe,
)

np = pytest.importorskip("numpy")


TEXTS = ["hello world, the quick brown fox", "lower lowest low"] * 5


@pytest.fixture(scope="module")
def tok():
    return Tokenizer.from_ranks({**BYTES, b"ab": 256}, "gpt2", {"<|end|>": 257})


@pytest.fixture(scope="module")
def word_tok():
    return wordbpe.train(TEXTS, num_merges=5)


@pytest.fixture(scope="module")
def chat_tok():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tiny corpus runs out of pairs
        return nanochat.train(TEXTS, vocab_size=300)


@pytest.fixture
def spare_fd(tmp_path):
    """A real file descriptor (of an empty file): were an int taken as a path again, it is this
    file that would be written and closed, not the test run's stdout."""
    path = tmp_path / "fd-target"
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    yield fd
    try:
        os.close(fd)
    except OSError:
        pass
    assert path.read_bytes() == b""


@pytest.mark.parametrize(
    "call, where",
    [
        (lambda t, p: formats.to_tiktoken(t), "to_tiktoken"),
        (lambda t, p: formats.save_tiktoken(t, p / "x.tiktoken"), "save_tiktoken"),
        (lambda t, p: formats.to_huggingface(t), "Hugging Face export"),
        (lambda t, p: formats.save_huggingface(t, p / "hf"), "save_huggingface"),
        (lambda t, p: fhf.huggingface_json(t), "Hugging Face export"),
        (lambda t, p: formats.save_gpt2_files(t, p / "g2"), "save_gpt2_files"),
        (lambda t, p: fgpt2.gpt2_vocab(t), "gpt2_vocab"),
    ],
)
@pytest.mark.parametrize("bad", [None, 1.5, "tok.json"])
def test_format_writers_need_a_tokenizer(tmp_path, call, where, bad):
    """Audit finding: was AttributeError ("'NoneType' object has no attribute 'merges'")."""
    with pytest.raises(
        TypeError, match=f"{where} needs a toksmith.Tokenizer, not {type(bad).__name__}"
    ):
        call(bad, tmp_path)


def test_format_writers_name_a_preset_wrapper(chat_tok, tmp_path):
    with pytest.raises(
        TypeError, match="needs a toksmith.Tokenizer, not ChatTokenizer; pass its .tokenizer"
    ):
        formats.save_gpt2_files(chat_tok, tmp_path)


def test_to_tiktoken_name_must_be_str(tok):
    with pytest.raises(TypeError, match="name must be a str"):
        tok.to_tiktoken(name=1.5)


@pytest.mark.parametrize(
    "ranks, exc, match",
    [
        (None, TypeError, "ranks must be a dict of bytes -> rank"),
        ({"a": 1}, TypeError, "ranks keys must be bytes, not str"),  # was: a base64 TypeError
        ({b"a": -1}, ValueError, "is not a rank"),
        ({b"a": True}, ValueError, "is not a rank"),
    ],
)
def test_dump_tiktoken_ranks_checks_ranks(tmp_path, ranks, exc, match):
    with pytest.raises(exc, match=match):
        ftiktoken.dump_tiktoken_ranks(ranks, tmp_path / "r.tiktoken")
    assert not (tmp_path / "r.tiktoken").exists()


def test_from_huggingface_strict_must_be_bool(tok):
    """Audit finding: was strict="no" taken as True."""
    with pytest.raises(TypeError, match="strict must be True or False, not str"):
        formats.from_huggingface(fhf.huggingface_json(tok), strict="no")


def test_save_huggingface_takes_a_numpy_max_length(tok, tmp_path):
    formats.save_huggingface(tok, tmp_path, model_max_length=np.int64(77))
    import json

    assert json.loads((tmp_path / "tokenizer_config.json").read_text())["model_max_length"] == 77


def test_openai_encoding_name_type_message():
    with pytest.raises(TypeError, match="encoding name .* must be a str"):
        formats.get_encoding(None)


@pytest.mark.parametrize(
    "call",
    [
        lambda w, fd: w.save(fd),
        lambda w, fd: wordbpe.load(fd),
        lambda w, fd: wordbpe.write_counts_csv(fd, [("a", 1)], ("token", "count")),
        lambda w, fd: wordbpe.write_embeddings_csv(fd, ["a"], np.zeros((1, 2)), 2),
        lambda w, fd: calm.ByteTokenizer().save(fd),
        lambda w, fd: calm.ByteTokenizer.load(fd),
        lambda w, fd: ftiktoken.identify_openai_file(fd),
    ],
)
def test_an_int_is_no_path(word_tok, spare_fd, call):
    """Audit finding: was open(fd) wrote to (or read) that file descriptor and closed it: save(1) printed the
    tokenizer and closed stdout, save(True) too."""
    with pytest.raises(TypeError, match="expected str, bytes or os.PathLike object, not int"):
        call(word_tok, spare_fd)
    with pytest.raises(TypeError, match="not bool"):
        call(word_tok, True)


def test_preset_save_huge_int_path(chat_tok):
    """Audit finding: was OverflowError "fd is greater than maximum" from os.path.isdir."""
    with pytest.raises(TypeError, match="expected str, bytes or os.PathLike object, not int"):
        chat_tok.save(2**64)
