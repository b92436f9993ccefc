"""CALM: the byte-level tokenizer, context frames, sequences and weight files of seed 003.

The vocabulary has 320 ids: bytes 0-255 (identity), 22 special tokens
256-277 (``calm.PAD`` ... ``calm.REF``; ``calm.END_TOKEN`` is ``<END>``) and
reserved ids 278-319. Everything here is pure Python; ``tokenize`` and the
CWGT functions need numpy (``pip install toksmith[numpy]``).

>>> from toksmith import calm
>>> calm.tokenize("git com").tolist()
[103, 105, 116, 32, 99, 111, 109]
>>> calm.tokenize_frame("CWD", "/home")
[260, 47, 104, 111, 109, 101, 269]
>>> seq = calm.build_sequence("shell", {"cwd": "/home", "input": "ls"})
>>> seq.format()
'<BOS> <CWD> /home <END> <ATN> <CMD> ls'
>>> calm.detokenize(seq)
b'/homels'

Modules: :mod:`.vocab` (ids and names), :mod:`.codec` (tokenize /
detokenize), :mod:`.frames` (tokenize_frame), :mod:`.sequence` (templates,
build_sequence, parse_sequence), :mod:`.stops` (StopConditions),
:mod:`.cwgt` (CWGT v5 files), :mod:`.byte_tokenizer` (ByteTokenizer).
"""

from __future__ import annotations

from ...registry import register_file_loader
from .byte_tokenizer import ByteTokenizer, StreamDecoder, TokenNotFoundError
from .codec import detokenize, tokenize
from .cwgt import (
    FLAG_HAS_EWC,
    FLAG_TIED,
    HEADER_FIELDS,
    HEADER_SIZE,
    CWGTError,
    CWGTHeader,
    CWGTMetadata,
    CWGTModel,
    EWCData,
    load_model,
    read_cwgt,
    write_cwgt,
)
from .frames import parse_frame, tokenize_frame
from .sequence import (
    DEFAULT_KEYS,
    TEMPLATES,
    Dropped,
    ParsedContext,
    Template,
    TemplateItem,
    TokenSequence,
    build_sequence,
    parse_sequence,
    parse_template,
)
from .stops import StopConditions, StopResult, format_stop_patterns, parse_stop_patterns
from .vocab import (
    ATN,
    BOS,
    BY,
    BYTE_TOKENS,
    CMD,
    COMP,
    CWD,
    DEF,
    DEFAULT_L_MAX,
    END,
    END_TOKEN,
    ENV,
    EOS,
    EXIT,
    FRAME_TOKENS,
    GIT,
    HIST,
    IPA,
    MAX_FRAME_ITEMS,
    MAX_TOKENS,
    NEXT,
    NOTE,
    NUM_SPECIAL,
    PAD,
    POS,
    QUERY,
    QUOTE,
    REF,
    RESERVED_BASE,
    SPECIAL_BASE,
    SPECIAL_NAMES,
    SPECIAL_TOKENS,
    SUBTOKENS,
    VOCAB_SIZE,
    WORD,
    format_tokens,
    is_reserved,
    is_special,
    resolve_token,
    token_name,
)

# load_any builds CALM tokenizer files with this class (the file readers sit below presets)
register_file_loader("calm", ByteTokenizer.load)

#: The reserved ids (278-319), headroom for future domain tokens.
RESERVED_IDS = range(RESERVED_BASE, VOCAB_SIZE)

__all__ = [
    # vocabulary
    "VOCAB_SIZE", "BYTE_TOKENS", "SPECIAL_BASE", "NUM_SPECIAL", "RESERVED_BASE", "RESERVED_IDS",
    "MAX_TOKENS", "DEFAULT_L_MAX", "MAX_FRAME_ITEMS", "SPECIAL_NAMES", "SPECIAL_TOKENS",
    "FRAME_TOKENS", "SUBTOKENS",
    "PAD", "BOS", "EOS", "ATN", "CWD", "GIT", "HIST", "EXIT", "CMD", "ENV", "COMP", "QUERY",
    "NEXT", "END_TOKEN", "END", "WORD", "POS", "NOTE", "IPA", "DEF", "QUOTE", "BY", "REF",
    "token_name", "resolve_token", "is_special", "is_reserved", "format_tokens",
    # bytes and frames
    "tokenize", "detokenize", "tokenize_frame", "parse_frame",
    # sequences
    "TEMPLATES", "DEFAULT_KEYS", "Template", "TemplateItem", "parse_template", "build_sequence",
    "parse_sequence", "TokenSequence", "Dropped", "ParsedContext",
    # stop conditions
    "StopConditions", "StopResult", "parse_stop_patterns", "format_stop_patterns",
    # weight files
    "read_cwgt", "write_cwgt", "load_model", "CWGTError", "CWGTHeader", "CWGTMetadata", "CWGTModel",
    "EWCData", "HEADER_SIZE", "HEADER_FIELDS", "FLAG_TIED", "FLAG_HAS_EWC",
    # tokenizer interface
    "ByteTokenizer", "StreamDecoder", "TokenNotFoundError",
]  # fmt: skip
