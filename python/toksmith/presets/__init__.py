"""Presets: the tokenizer systems of the seed documents, built on the same core.

A :class:`Preset` names the training defaults (pattern, vocabulary size, special tokens) that
``toksmith train --preset NAME`` and the preset modules use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Tuple


@dataclass(frozen=True)
class Preset:
    name: str
    pattern: str
    vocab_size: int
    special_tokens: Tuple[str, ...] = ()
    description: str = ""
    extra: Dict[str, object] = field(default_factory=dict)


NANOCHAT_SPECIAL_TOKENS: Tuple[str, ...] = (
    "<|bos|>",
    "<|user_start|>",
    "<|user_end|>",
    "<|assistant_start|>",
    "<|assistant_end|>",
    "<|python_start|>",
    "<|python_end|>",
    "<|output_start|>",
    "<|output_end|>",
)

PRESETS: Dict[str, Preset] = {
    "nanochat": Preset(
        name="nanochat",
        pattern="nanochat",
        vocab_size=65536,
        special_tokens=NANOCHAT_SPECIAL_TOKENS,
        description="nanochat's chat tokenizer: GPT-4-style split with \\p{N}{1,2}, 2^16 tokens, "
        "nine conversation special tokens after the merges",
    ),
}


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; available: {sorted(PRESETS)}") from None


__all__ = ["Preset", "PRESETS", "NANOCHAT_SPECIAL_TOKENS", "get_preset"]
