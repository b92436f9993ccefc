"""Issue 36 item 1: training's pair tables, the pipeline decoders, the word model and its token
statistics raise MemoryError under a memory limit, never abort.

Each case runs in a child process under an address-space limit (tests/oom.py) set a little above
what the child uses once its input is built. Before, the merge loop's pair tables and heap
(`train/merge.rs`), the spelled tokens of `train_token_merges`, the decoders' per-token strings
(`decoders/`), the lower-cased words of `WordEncoder` and the `n_vocab` counts of
`token_counts` were allocated infallibly: SIGABRT ("memory allocation of N bytes failed").
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests import oom

resource = pytest.importorskip("resource")

if not sys.platform.startswith("linux") or not hasattr(resource, "RLIMIT_AS"):
    pytest.skip("RLIMIT_AS is enforced for mmap on Linux only", allow_module_level=True)

SETUP = oom.WORDS_SETUP


def run_child(body: str) -> subprocess.CompletedProcess[str]:
    return oom.run_child(body, SETUP, timeout=120, arenas=1)


check = oom.check


def test_train_merges_pair_tables() -> None:
    """The merge loop over 300,000 unique words: the pair counts, positions and heap."""
    check(
        run_child(
            """
            c = _core.ChunkCounter("gpt2")
            c.add_texts([" ".join(words(300_000))])
            warm = _core.ChunkCounter("gpt2")
            warm.add_texts(["warm up the pool"])
            warm.train(2)
            tight(2 << 20)
            def work():
                c.train(1000)
            """
        )
    )


def test_train_token_merges() -> None:
    """Superword training: the spelled tokens and the pair tables of 300,000 id sequences."""
    check(
        run_child(
            """
            tokens = [bytes([b]) for b in range(256)]
            seqs = [(list(w.encode()), 1) for w in words(300_000)]
            _core.train_token_merges([([97, 98], 2)], tokens, 1)
            tight(8 << 20)
            def work():
                _core.train_token_merges(seqs, tokens, 1000)
            """
        )
    )


# a HF pipeline per decoder: a word-level vocab of "▁w<k>" pieces (and byte pieces)
DECODERS = {
    "metaspace": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always"},
    "strip": {"type": "Strip", "content": "\u2581", "start": 1, "stop": 0},
    "replace": {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
    "wordpiece": {"type": "WordPiece", "prefix": "##", "cleanup": True},
    "bpe_suffix": {"type": "BPEDecoder", "suffix": "</w>"},
    "byte_fallback": {"type": "ByteFallback"},
}


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_pipeline_decoder(name: str) -> None:
    """Decoding 2M ids through each decoder: its tokens' strings and the text."""
    vocab = {"[UNK]": 0, "<0x41>": 1}
    vocab.update({f"\u2581w{k}</w>": 2 + k for k in range(100)})
    doc = {
        "model": {
            "type": "WordPiece",
            "unk_token": "[UNK]",
            "continuing_subword_prefix": "##",
            "vocab": vocab,
        },
        "decoder": DECODERS[name],
    }
    check(
        run_child(
            f"""
            p = _core.Pipeline.from_hf_json({json.dumps(doc)!r})
            ids = list(range(1, 102)) * 20_000
            p.decode(ids[:1000])
            limit(12 << 20)
            def work():
                p.decode(ids)
            """
        )
    )


def test_word_encoder_lowercases_a_long_word() -> None:
    """One 60 MB word of capitals: its lower-cased copy and spelling (word-sized)."""
    check(
        run_child(
            """
            enc = _core.WordEncoder(_core.WORDS_PATTERN, True, LETTERS, UNK)
            text = "AB" * 30_000_000
            enc.encode("Warm Up")
            tight(16 << 20)
            def work():
                enc.encode_word(text)
            """
        )
    )


def test_word_encoder_token_counts_of_a_big_vocabulary() -> None:
    """`token_counts` with n_vocab of 2M: a slot per id in each worker (16 MB each)."""
    check(
        run_child(
            """
            enc = _core.WordEncoder(_core.WORDS_PATTERN, True, LETTERS, UNK, 2_000_000)
            enc.token_counts([("ab", 1)], 53)
            tight(8 << 20)
            def work():
                enc.token_counts([("ab", 1)], 2_000_000)
            """
        )
    )


def test_word_encoder_of_a_huge_vocabulary() -> None:
    """The ints of a word model's ids (`IntTable`): n_vocab of 2**32 is refused, not aborted."""
    check(
        run_child(
            """
            limit(64 << 20)
            def work():
                _core.WordEncoder(_core.WORDS_PATTERN, True, LETTERS, UNK, 1 << 32)
            """
        )
    )


# one added token of 4 MB: the byte trie that finds added tokens has a node per byte before it
# is compressed (tens of bytes each), so it needs far more than the token's text
BIG_TOKEN = 4 << 20


def test_added_token_trie_of_an_encoder() -> None:
    """An encoder with a huge special token: the added tokens' trie."""
    check(
        run_child(
            f"""
            bytes_ = [(bytes([b]), b) for b in range(256)]
            _core.Bpe(bytes_, [("<|x|>", 256, False)], "gpt2")
            big = "<" + "x" * {BIG_TOKEN} + ">"
            tight(32 << 20)
            def work():
                _core.Bpe(bytes_, [(big, 256, False)], "gpt2")
            """
        )
    )


def test_pinned_token_trie_of_a_chunk_counter() -> None:
    """A chunk counter with a huge pinned token: the pinned tokens' trie."""
    check(
        run_child(
            f"""
            _core.ChunkCounter("gpt2", ["<|x|>"])
            big = "<" + "x" * {BIG_TOKEN} + ">"
            tight(32 << 20)
            def work():
                _core.ChunkCounter("gpt2", [big])
            """
        )
    )
