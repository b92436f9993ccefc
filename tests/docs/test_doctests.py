"""The ``>>>`` examples in the docstrings of the core modules run and hold."""

import doctest
import importlib
import warnings

import pytest

MODULES = [
    "toksmith",
    "toksmith.tokenizer",
    "toksmith.pretokenize",
    "toksmith.train",
    "toksmith.bytelevel",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    mod = importlib.import_module(name)
    with warnings.catch_warnings():
        # the package example trains on a tiny corpus, which warns that it ran out of pairs
        warnings.simplefilter("ignore", UserWarning)
        res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert res.failed == 0 and res.attempted > 0, name
