"""The ``>>>`` examples in the nanochat preset's modules."""

from __future__ import annotations

import doctest
import importlib
import warnings

import pytest

MODULES = [
    "toksmith.presets.nanochat",
    "toksmith.presets.conversation",
    "toksmith.presets.chat_render",
    "toksmith.presets.chat_shards",
    "toksmith.cli.eval",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
