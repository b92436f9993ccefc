"""The training defaults of the byte-level presets (:class:`Preset`, :data:`PRESETS`) and
their special tokens: plain data, below the preset modules that use them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Mapping, Sequence, Tuple, Union


@dataclass(frozen=True)
class Preset:
    name: str
    pattern: str
    vocab_size: int
    special_tokens: Tuple[str, ...] = ()
    description: str = ""
    extra: Dict[str, object] = field(default_factory=dict)
    #: the special tokens take the first ids (0, 1, ...) instead of the ids after the merges
    specials_first: bool = False

    def special_token_spec(self, extra: Sequence[str] = ()) -> Union[List[str], Mapping[str, int]]:
        """The ``special_tokens`` argument for training: the preset's tokens, then ``extra``
        ones it does not have. With :attr:`specials_first` a dict of fixed ids 0, 1, ...

        >>> PRESETS["cromwell"].special_token_spec(["<X>"])["<X>"]
        8
        """
        if isinstance(extra, (str, bytes)) or not isinstance(extra, Iterable):
            raise TypeError(
                f"extra must be a list of special token strings, not {type(extra).__name__}"
                + ("; wrap one token in a list" if isinstance(extra, str) else "")
            )
        extra = list(extra)
        for k, s in enumerate(extra):
            if not isinstance(s, str):
                raise TypeError(f"extra must hold str, not {type(s).__name__} ({s!r}, extra[{k}])")
            if not s:
                raise ValueError(f"extra[{k}] is the empty string: a special token needs text")
            if s in extra[:k]:
                raise ValueError(f"extra names {s!r} twice")
        names = list(self.special_tokens) + [s for s in extra if s not in self.special_tokens]
        if self.specials_first:
            return {s: i for i, s in enumerate(names)}
        return names


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

#: the Cromwell code tokenizer's special tokens, ids 0-7 in this order (seed 000, section 2.2)
CROMWELL_SPECIAL_TOKENS: Tuple[str, ...] = (
    "<PAD>",
    "<EOS>",
    "<BOS>",
    "<FILE>",
    "</FILE>",
    "<EDIT_START>",
    "<EDIT_END>",
    "<DELETE>",
)

#: Cromwell's split (seed 000): o200k's pattern with three changes, so that the seed's code
#: structures can be learned as tokens. A line break takes the next line's indentation and its
#: first word with one space after it (``"\\n    return "``, ``"\\n\\tdef "``) or its first
#: punctuation run (``"\\n    }"``); ``0x``/``0b`` numbers are pieces (``"0x1F"``); a
#: punctuation run stops at a line break (o200k's takes the line break, leaving the next
#: line's indentation alone). It runs on a hand-written scanner.
CROMWELL_LINE_PATTERN = (
    r"[\r\n]+[^\S\r\n]*(?:[^\s\p{L}\p{N}]?[\p{L}\p{N}_]+ ?|[^\s\p{L}\p{N}]+)?"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    r"|0[xX][0-9A-Fa-f]+|0[bB][01]+"
    r"|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+/*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
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
    "cromwell": Preset(
        name="cromwell",
        pattern=CROMWELL_LINE_PATTERN,
        vocab_size=50000,
        special_tokens=CROMWELL_SPECIAL_TOKENS,
        description="Cromwell's code tokenizer for mixed English + code: BPE on o200k's split "
        "with line starts (line break + indentation + first word and its space: "
        "'\\n    return '), 0x/0b numbers and punctuation runs that stop at a line break, "
        "50,000 tokens, eight file/edit special tokens at ids 0-7",
        specials_first=True,
    ),
}


def get_preset(name: str) -> Preset:
    if not isinstance(name, str):
        raise TypeError(
            f"preset name must be a str, one of {sorted(PRESETS)}, not {type(name).__name__}"
        )
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; available: {sorted(PRESETS)}") from None
