"""Paths and helpers shared by the interop tests."""

from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"
VOCABS = DATA / "vocabs"
GPT2_TIKTOKEN = VOCABS / "gpt2.tiktoken"
CL100K_TIKTOKEN = VOCABS / "cl100k_base.tiktoken"
GPT2_ENCODER = VOCABS / "gpt2_encoder.json"
GPT2_VOCAB_BPE = VOCABS / "gpt2_vocab.bpe"

PATTERN_NAMES = ["gpt2", "cl100k", "o200k", "nanochat"]
TRAIN_SPECIALS = ["<|endoftext|>", "<|user_start|>", "<|user_end|>"]
TRAIN_PINNED = ["<think>", "</think>"]


def hf_ids(hf, texts):
    """ids from a tokenizers.Tokenizer (special-token text becomes special tokens)."""
    return [e.ids for e in hf.encode_batch(list(texts))]


def all_ids(tok, texts):
    """toksmith ids with every special token allowed (Hugging Face's behaviour)."""
    return tok.encode_batch(list(texts), allowed_special="all")
