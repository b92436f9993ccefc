"""Tests of the CppReason preset (seed 001)."""

import warnings


def train_tiny(corpus: str, vocab_size: int = 1950, **kw):
    """A CppReason tokenizer trained on four copies of a small ``corpus`` (fewer merges than
    asked for: the warning about it is silenced)."""
    from toksmith.presets import cppreason

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cppreason.train([corpus] * 4, vocab_size=vocab_size, **kw)
