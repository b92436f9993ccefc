"""Regression tests for a second adversarial audit of the Cromwell preset."""

from __future__ import annotations

import pytest

from tests.conftest import DATA
from toksmith.presets import cromwell
from toksmith.presets.cromwell import CodeTokenizer

PY = DATA / "corpora" / "python_slice.txt"


@pytest.fixture(scope="module")
def code() -> CodeTokenizer:
    return cromwell.train([PY], vocab_size=400)


@pytest.mark.parametrize("batch", [None, 5])
def test_decode_batch_of_a_non_iterable_names_the_type(code, batch):
    # was: TypeError "'NoneType' object is not iterable"
    with pytest.raises(TypeError, match="batch must be a list of id sequences"):
        code.decode_batch(batch)
