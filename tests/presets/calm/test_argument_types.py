"""The CALM functions refuse arguments of the wrong type with a clear message."""

from __future__ import annotations

import os

import pytest

from toksmith import calm

np = pytest.importorskip("numpy")


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (
            dict(ids="abc"),
            TypeError,
            "ids must be an iterable of token ids, not str",
        ),  # was ['a', 'b', 'c']
        (dict(ids=[1, 400]), ValueError, r"ids\[1\] 400 is out of range"),
        (dict(ids=[1, None]), TypeError, r"ids\[1\] must be an int"),
        (dict(ids=[1], l_max="x"), TypeError, "l_max must be an int"),
        (dict(ids=[1], l_max=0), ValueError, "l_max must be >= 1"),
        (dict(ids=[1], training=1), TypeError, "training must be a bool"),
        (dict(ids=[1], dropped=5), TypeError, "dropped must be a calm.Dropped"),
        (dict(ids=[1], template="shell"), TypeError, "template must be a calm.Template"),
    ],
)
def test_token_sequence_checks_its_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        calm.TokenSequence(**kwargs)


def test_token_sequence_still_takes_ids():
    seq = calm.TokenSequence(np.array([257, 104]), l_max=np.int64(10))
    assert seq == [257, 104] and type(seq[0]) is int and seq.l_max == 10
    assert calm.TokenSequence(b"ab") == [97, 98]
    assert calm.build_sequence("shell", {"input": "ls"}).format() == "<BOS> <ATN> <CMD> ls"


def test_calm_ids_refuse_a_str():
    with pytest.raises(TypeError, match="not str"):  # was ""
        calm.format_tokens("")
    with pytest.raises(TypeError, match="not str"):  # was ""
        calm.StreamDecoder().push_many("")


def test_write_cwgt_over_a_folder(tmp_path):
    """Audit finding: was an IsADirectoryError naming a temporary file, after the whole file was written."""
    with pytest.raises(IsADirectoryError, match="cannot write a CWGT file over a folder"):
        calm.write_cwgt(
            tmp_path,
            calm.CWGTHeader(d_model=16, n_layers=1, dt_rank=4),
            None,
            np.zeros(4, dtype=np.float32),
        )
    assert os.listdir(tmp_path) == []
