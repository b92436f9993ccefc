"""Fixtures of the fault-injection tests: two small tokenizers that differ in every file."""

import warnings

import pytest

import toksmith

WORDS = ["low lower lowest newer newest wider widest " * 20, "tokens of another kind " * 30]


@pytest.fixture(scope="session")
def two_toks():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = toksmith.train_from_iterator([WORDS[0]], vocab_size=300, pattern="gpt2")
        b = toksmith.train_from_iterator([WORDS[1]], vocab_size=290, pattern="gpt2")
    return a, b
