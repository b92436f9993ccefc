"""The ``>>>`` examples of the Cromwell preset and the preset registry."""

from __future__ import annotations

import doctest
import importlib
import warnings

import pytest

MODULES = ["toksmith.presets.cromwell", "toksmith.presets"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the examples train on tiny corpora
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
