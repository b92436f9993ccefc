"""The word-level preset's functions refuse arguments of the wrong type with a clear message."""

from __future__ import annotations

import pytest

from toksmith.presets import (
    embeddings,
    wordbpe,
)

np = pytest.importorskip("numpy")


TEXTS = ["hello world, the quick brown fox", "lower lowest low"] * 5


@pytest.fixture(scope="module")
def word_tok():
    return wordbpe.train(TEXTS, num_merges=5)


def test_word_from_dict_checks_its_argument(word_tok):
    """Audit finding: was IndexError for a numpy scalar, KeyError 'tokens' for a dict without it."""
    with pytest.raises(TypeError, match="from_dict needs the dict WordTokenizer.to_dict"):
        wordbpe.WordTokenizer.from_dict(np.int64(3))
    with pytest.raises(ValueError, match="lacks the member 'tokens'"):
        wordbpe.WordTokenizer.from_dict({"a": 1})
    d = word_tok.to_dict()
    d["merges"] = "ab"
    with pytest.raises(TypeError, match="'merges' must be a list"):
        wordbpe.WordTokenizer.from_dict(d)


def test_word_load_names_a_missing_member(tmp_path):
    path = tmp_path / "w.json"
    path.write_text('{"format": "toksmith-wordbpe", "version": 1}')
    with pytest.raises(ValueError, match="w.json is not a valid .*lacks the member 'tokens'"):
        wordbpe.load(path)


@pytest.mark.parametrize("bad", [None, 1.5, b"h"])
def test_word_token_to_id_needs_a_str(word_tok, bad):
    """Audit finding: was None for any non-str (as for an unknown token)."""
    with pytest.raises(TypeError, match="token must be a str"):
        word_tok.token_to_id(bad)
    assert word_tok.token_to_id("no such token") is None


def test_word_decode_refuses_a_string(word_tok):
    """Audit finding: was decode("") gave ""."""
    with pytest.raises(TypeError, match="ids must be an iterable of int"):
        word_tok.decode("")


@pytest.mark.parametrize(
    "rows, header, exc, match",
    [
        (
            "abc",
            ("token", "count"),
            TypeError,
            "rows must be an iterable of",
        ),  # was a row per character
        ([("a", 1), "b"], ("token", "count"), TypeError, "row 1 is 'b'"),
        ([("a", 1.5)], ("token", "count"), TypeError, "row 0 is"),
        ([("a\ud800", 1)], ("token", "count"), ValueError, "row 0 holds a lone surrogate"),
        ([("a", 1)], "tc", TypeError, "header must be a pair of str"),  # was the header t,c
        ([("a", 1)], None, TypeError, "header must be a pair of str"),  # was _csv.Error
        ([("a", 1)], ("a", "b", "c"), TypeError, "header must be a pair of str"),
    ],
)
def test_write_counts_csv_checks_rows_and_header(tmp_path, rows, header, exc, match):
    with pytest.raises(exc, match=match):
        wordbpe.write_counts_csv(tmp_path / "c.csv", rows, header)
    assert not (tmp_path / "c.csv").exists()  # nothing half-written


@pytest.mark.parametrize(
    "tokens, dim, exc, match",
    [
        ([None], 2, TypeError, r"tokens\[0\] is NoneType"),  # was written as an empty field
        ("a", 2, TypeError, "tokens must be a list of str"),
        (["a\ud800"], 2, ValueError, "lone surrogate"),
        (["a"], 2.0, TypeError, "dim must be an int"),
        (["a"], 0, ValueError, "dim must be at least 1"),
    ],
)
def test_write_embeddings_csv_checks_tokens(tmp_path, tokens, dim, exc, match):
    with pytest.raises(exc, match=match):
        wordbpe.write_embeddings_csv(tmp_path / "e.csv", tokens, np.zeros((1, 2)), dim)
    assert not (tmp_path / "e.csv").exists()


def test_wordbpe_run_checks_prefix_before_training(tmp_path):
    """Audit finding: was a UnicodeEncodeError when the first file was written, after the training."""
    with pytest.raises(ValueError, match="prefix .* holds a character"):
        wordbpe.run(["hello world"], tmp_path / "out", num_merges=2, dim=2, prefix="a\ud800")
    assert not (tmp_path / "out").exists()


def test_embeddings_argument_types():
    assert embeddings.splitmix64(np.int64(3)) == embeddings.splitmix64(3)  # was OverflowError
    assert embeddings.token_seed("a", np.uint64(3)) == embeddings.token_seed(
        "a", 3
    )  # was OverflowError
    with pytest.raises(TypeError, match="x must be an int"):
        embeddings.splitmix64(1.5)
    with pytest.raises(
        TypeError, match="a token must be a str, not NoneType"
    ):  # was AttributeError
        embeddings.token_seed(None)
    with pytest.raises(TypeError, match="wrap one token in a list"):  # was one vector per character
        embeddings.embed_reference("abc", 4)
    with pytest.raises(TypeError, match="a token must be a str, not int"):  # was AttributeError
        embeddings.embed_numpy([1, 2], 4)
    with pytest.raises(TypeError, match="xp must be an array module"):  # was AttributeError
        embeddings.embed_numpy(["a"], 4, xp=1.5)
    with pytest.raises(TypeError, match="n_tokens must be an int"):
        embeddings.check_dim(4, 1.5)
    with pytest.raises(ValueError, match="n_tokens must be a number of tokens >= 0"):
        embeddings.check_args(4, 0, "cpu", -1)
    with pytest.raises(TypeError, match="backend must be a str"):  # was "unhashable type"
        embeddings.gpu_backend(["torch"])
