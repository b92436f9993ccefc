import base64
import os
import signal
from pathlib import Path

import pytest
from hypothesis import settings

import toksmith

settings.register_profile("ci", max_examples=150, deadline=None)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

DATA = Path(__file__).resolve().parent / "data"
VOCABS = DATA / "vocabs"
CORPORA = DATA / "corpora"
GPT2_TIKTOKEN = VOCABS / "gpt2.tiktoken"
CL100K_TIKTOKEN = VOCABS / "cl100k_base.tiktoken"
GPT2_ENCODER = VOCABS / "gpt2_encoder.json"
GPT2_VOCAB_BPE = VOCABS / "gpt2_vocab.bpe"

PATTERN_NAMES = ["gpt2", "cl100k", "o200k", "nanochat"]
TRAIN_SPECIALS = ["<|endoftext|>", "<|user_start|>", "<|user_end|>"]
TRAIN_PINNED = ["<think>", "</think>"]
#: the ranks of the 256 single bytes (each byte its own id): the base of hand-built vocabularies
BYTES = {bytes([b]): b for b in range(256)}

GPT2_SPECIALS = {"<|endoftext|>": 50256}
CL100K_SPECIALS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


@pytest.fixture
def ctrl_c_raises():
    """Ctrl-C (SIGINT) raises KeyboardInterrupt during the test, as in an interactive run.

    A suite started in the background (``nohup ... &``) inherits SIGINT ignored: then
    ``_thread.interrupt_main()`` does nothing and a SIGINT is lost, so the tests that press
    Ctrl-C install Python's handler themselves and put the old one back afterwards."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def child_takes_ctrl_c():
    """``preexec_fn`` for a child process sent SIGINT: its SIGINT is the default one, not the
    ignored one a suite started in the background hands down (Python then installs its
    KeyboardInterrupt handler in the child)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


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


# Fixtures of real vocabularies, corpus slices and trained tokenizers (used by the file-format,
# tokenizer and equivalence tests).


def _chunks(text, lines_per_chunk=25):
    lines = text.split("\n")
    return [
        "\n".join(lines[i : i + lines_per_chunk]) for i in range(0, len(lines), lines_per_chunk)
    ]


@pytest.fixture(scope="session")
def corpus_texts():
    return {
        p.stem.replace("_slice", ""): p.read_text(encoding="utf-8")
        for p in sorted((DATA / "corpora").glob("*_slice.txt"))
    }


@pytest.fixture(scope="session")
def corpus_chunks(corpus_texts):
    """Every corpus slice cut in chunks of 25 lines, plus texts with special tokens."""
    chunks = [c for t in corpus_texts.values() for c in _chunks(t)]
    chunks += [
        "<|endoftext|>Once upon a time<|endoftext|>\n\n",
        "a<|endoftext|>b <|fim_prefix|>x<|fim_suffix|> <|endofprompt|>",
        "  \n\t 12345678 it's I'LL don't  ",
    ]
    return chunks


@pytest.fixture(scope="session")
def gpt2_tok():
    return toksmith.formats.tiktoken.load_openai("gpt2", GPT2_TIKTOKEN)


@pytest.fixture(scope="session")
def cl100k_tok():
    return toksmith.formats.tiktoken.load_openai("cl100k", CL100K_TIKTOKEN)


@pytest.fixture(scope="session")
def real_toks(gpt2_tok, cl100k_tok):
    return {"gpt2": gpt2_tok, "cl100k": cl100k_tok}


@pytest.fixture(scope="session")
def trained(corpus_texts):
    """A small tokenizer per named pattern, with special and pinned tokens."""
    texts = list(corpus_texts.values())
    return {
        pat: toksmith.train_from_iterator(
            texts,
            vocab_size=1500,
            pattern=pat,
            special_tokens=TRAIN_SPECIALS,
            pinned_tokens=TRAIN_PINNED,
            name=f"test-{pat}",
        )
        for pat in PATTERN_NAMES
    }


@pytest.fixture(scope="session")
def trained_no_pinned(corpus_texts):
    """Like ``trained`` without pinned tokens (tiktoken has none); the nanochat one has its
    special tokens at fixed ids before the bytes, so its ranks start at 3."""
    texts = list(corpus_texts.values())
    out = {
        pat: toksmith.train_from_iterator(
            texts, vocab_size=1200, pattern=pat, special_tokens=TRAIN_SPECIALS, name=f"tt-{pat}"
        )
        for pat in PATTERN_NAMES
        if pat != "nanochat"
    }
    out["nanochat"] = toksmith.train_from_iterator(
        texts,
        vocab_size=1200,
        pattern="nanochat",
        special_tokens={t: i for i, t in enumerate(TRAIN_SPECIALS)},
        name="tt-nanochat",
    )
    return out


@pytest.fixture(scope="session")
def reference_encodings(real_toks):
    """tiktoken.Encoding objects built by tiktoken itself from the files (not by toksmith)."""
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    from toksmith.formats.tiktoken import OPENAI_ENCODINGS

    gpt2 = OPENAI_ENCODINGS["r50k_base"]
    cl = OPENAI_ENCODINGS["cl100k_base"]
    return {
        "gpt2": tiktoken.Encoding(
            "r50k_base",
            pat_str=toksmith.PATTERNS["gpt2"],
            mergeable_ranks=load_tiktoken_bpe(str(GPT2_TIKTOKEN)),
            special_tokens=gpt2.special_tokens,
            explicit_n_vocab=gpt2.n_vocab,
        ),
        "cl100k": tiktoken.Encoding(
            "cl100k_base",
            pat_str=toksmith.PATTERNS["cl100k"],
            mergeable_ranks=load_tiktoken_bpe(str(CL100K_TIKTOKEN)),
            special_tokens=cl.special_tokens,
        ),
    }
