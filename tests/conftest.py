import base64
import os
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", max_examples=150, deadline=None)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

DATA = Path(__file__).parent / "data"

GPT2_SPECIALS = {"<|endoftext|>": 50256}
CL100K_SPECIALS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


@pytest.fixture(scope="session")
def gpt2_specials():
    return dict(GPT2_SPECIALS)


@pytest.fixture(scope="session")
def cl100k_specials():
    return dict(CL100K_SPECIALS)


def read_tiktoken_file(path):
    ranks = {}
    for line in open(path, "rb"):
        if line.strip():
            tok, rank = line.split()
            ranks[base64.b64decode(tok)] = int(rank)
    return ranks


@pytest.fixture(scope="session")
def corpus_slices():
    return {
        p.stem.replace("_slice", ""): p.read_text(encoding="utf-8")
        for p in sorted((DATA / "corpora").glob("*_slice.txt"))
    }


@pytest.fixture(scope="session")
def gpt2_ranks():
    return read_tiktoken_file(DATA / "vocabs" / "gpt2.tiktoken")


@pytest.fixture(scope="session")
def cl100k_ranks():
    return read_tiktoken_file(DATA / "vocabs" / "cl100k_base.tiktoken")


def _pair(name, ranks, specials):
    """A toksmith Tokenizer and a tiktoken Encoding of the same ranks, pattern and specials."""
    import tiktoken

    from toksmith import Tokenizer

    tok = Tokenizer.from_ranks(ranks, name, specials)
    enc = tiktoken.Encoding(
        f"test_{name}", pat_str=tok.pattern, mergeable_ranks=ranks, special_tokens=specials
    )
    return tok, enc


@pytest.fixture(scope="module")
def gpt2(gpt2_ranks):
    """gpt2 with <|endoftext|>, as a toksmith Tokenizer and a tiktoken Encoding."""
    return _pair("gpt2", gpt2_ranks, GPT2_SPECIALS)


@pytest.fixture(scope="module")
def cl100k(cl100k_ranks):
    """cl100k with its special tokens, as a toksmith Tokenizer and a tiktoken Encoding."""
    return _pair("cl100k", cl100k_ranks, CL100K_SPECIALS)
