"""Helpers shared by the tests of the file formats and the equivalence tests."""

from tests.conftest import (  # noqa: F401 (re-exported for the tests)
    CL100K_TIKTOKEN,
    DATA,
    GPT2_ENCODER,
    GPT2_TIKTOKEN,
    GPT2_VOCAB_BPE,
    PATTERN_NAMES,
    TRAIN_PINNED,
    TRAIN_SPECIALS,
    VOCABS,
)


def hf_ids(hf, texts):
    """ids from a tokenizers.Tokenizer (special-token text becomes special tokens)."""
    return [e.ids for e in hf.encode_batch(list(texts))]


def all_ids(tok, texts):
    """toksmith ids with every special token allowed (Hugging Face's behaviour)."""
    return tok.encode_batch(list(texts), allowed_special="all")
