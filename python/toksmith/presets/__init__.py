"""Presets: the tokenizer systems of the seed documents, built on the same core.

* :mod:`toksmith.presets.cromwell` (seed 000): byte-level code tokenizer with file/edit
  special tokens at ids 0-7;
* :mod:`toksmith.presets.cppreason` (seed 001): fixed whole-word ids for C++ primitives in
  front of a learned byte-level BPE, whitespace as a delimiter;
* :mod:`toksmith.presets.nanochat` (seed 002): nanochat's chat tokenizer and conversation
  rendering;
* :mod:`toksmith.presets.calm` (seed 003; also importable as :mod:`toksmith.calm`): the CALM
  320-id byte tokenizer and its weight files;
* :mod:`toksmith.presets.wordbpe` (seed 004): word-level ``</w>`` BPE with greedy longest
  match, token statistics and embeddings.

A :class:`Preset` names the training defaults (pattern, vocabulary size, special tokens) that
``toksmith train --preset NAME`` uses for the byte-level presets (nanochat, cromwell).

Every preset's tokenizer class derives from :class:`PresetTokenizer` (the three over a toksmith
:class:`~toksmith.Tokenizer` from :class:`WrapperTokenizer`); ``presets/_base.py`` says what
they share. Their argument checks are one set, in ``presets/_checks.py``.
"""

from __future__ import annotations

from . import calm, cppreason, cromwell, nanochat, wordbpe
from ._base import PresetTokenizer, WrapperTokenizer
from ._registry import (
    CROMWELL_SPECIAL_TOKENS,
    NANOCHAT_SPECIAL_TOKENS,
    PRESETS,
    Preset,
    get_preset,
)

# the registry's examples are run as this module's (doctest looks in __test__ for objects that
# live in other modules)
__test__ = {"Preset.special_token_spec": Preset.special_token_spec}

__all__ = [
    "Preset",
    "PRESETS",
    "NANOCHAT_SPECIAL_TOKENS",
    "CROMWELL_SPECIAL_TOKENS",
    "get_preset",
    "PresetTokenizer",
    "WrapperTokenizer",
    "calm",
    "cppreason",
    "cromwell",
    "nanochat",
    "wordbpe",
]
