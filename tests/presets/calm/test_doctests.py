"""The ``>>>`` examples in the calm modules' docstrings."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "toksmith.calm",
    "toksmith.calm.vocab",
    "toksmith.calm.codec",
    "toksmith.calm.frames",
    "toksmith.calm.sequence",
    "toksmith.calm.stops",
    "toksmith.calm.cwgt",
    "toksmith.calm.byte_tokenizer",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
