"""Issue 36 item 1: the pipeline tokenizers (SentencePiece, WordPiece, Unigram), the normalizers,
wide-str encoding, character spans and the word-level encoder raise MemoryError under a memory
limit, never abort.

Each case runs in a child process under an address-space limit (RLIMIT_AS) set a little above
what the child uses once its input is built (tests/oom.py), so the native buffers that grow with
the input cannot get their memory: the child must catch MemoryError and exit normally. Before,
each of these died of SIGABRT ("memory allocation of N bytes failed") or raised
PanicException (a Python list or str PyO3 could not allocate).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests import oom

resource = pytest.importorskip("resource")

if not sys.platform.startswith("linux") or not hasattr(resource, "RLIMIT_AS"):
    pytest.skip("RLIMIT_AS is enforced for mmap on Linux only", allow_module_level=True)

MODELS = Path(__file__).resolve().parent.parent / "data" / "models"

SETUP = f"""
import lzma
MODELS = {str(MODELS)!r}

def model(name):
    with open(MODELS + "/" + name, "rb") as f:
        return lzma.decompress(f.read())

def pipeline(kind):
    if kind == "spm_bpe":
        return _core.Pipeline.from_spm_model(model("llama2.model.xz"))
    if kind == "spm_unigram":
        return _core.Pipeline.from_spm_model(model("t5_spm.model.xz"))
    vocab = model("bert_base_uncased_vocab.txt.xz").decode()
    return _core.Pipeline.from_wordpiece_vocab(vocab, "[UNK]", [], True, None, True)
"""

check = oom.check


def run_child(body: str) -> subprocess.CompletedProcess[str]:
    return oom.run_child(body, SETUP, timeout=120)


# spm_bpe: SentencePiece BPE (byte fallback), the whole normalized text is one word for the
# model; spm_unigram: its lattice has a node per byte of the text; wordpiece: BERT normalizer,
# pre-tokenizer (a piece per word) and WordPiece
PIPELINES = ["spm_bpe", "spm_unigram", "wordpiece"]


@pytest.mark.parametrize("kind", PIPELINES)
def test_pipeline_encode(kind: str) -> None:
    check(
        run_child(
            f"""
            p = pipeline("{kind}")
            text = "Hello world, it's a test. " * 300_000
            p.encode("warm up " * 100, False)
            limit(16 << 20)
            def work():
                p.encode(text, False)
            """
        )
    )


@pytest.mark.parametrize("kind", PIPELINES)
def test_pipeline_encode_batch(kind: str) -> None:
    check(
        run_child(
            f"""
            p = pipeline("{kind}")
            texts = ["Hello world, it's a test. " * 300_000] * 2
            p.encode_batch(["warm up"] * 4, False, threads=2)
            limit(24 << 20)
            def work():
                p.encode_batch(texts, False, threads=2)
            """
        )
    )


@pytest.mark.parametrize("kind", PIPELINES)
def test_pipeline_decode(kind: str) -> None:
    """The tokens of 2M ids (their strings, the decoded text) cannot get their memory."""
    check(
        run_child(
            f"""
            p = pipeline("{kind}")
            ids = p.encode("Hello world, it's a test. ", False) * 200_000
            p.decode(ids[:1000])
            limit(12 << 20)
            def work():
                p.decode(ids)
            """
        )
    )


NORMALIZERS = {
    "nfkc": '{"type": "NFKC"}',
    "lowercase": '{"type": "Lowercase"}',
    "strip_accents": '{"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "StripAccents"}]}',
    "replace": '{"type": "Replace", "pattern": {"Regex": " "}, "content": "__"}',
    "prepend": '{"type": "Prepend", "prepend": "_"}',
    "bert": '{"type": "BertNormalizer", "lowercase": true}',
}


@pytest.mark.parametrize("name", sorted(NORMALIZERS))
def test_normalizer(name: str) -> None:
    check(
        run_child(
            f"""
            n = _core.Normalizer.from_hf_json({NORMALIZERS[name]!r})
            # (ASCII: CPython's storage is the UTF-8 the native code reads, no copy to make)
            text = "Hello World, ok " * 1_000_000
            n.normalize("warm up")
            limit(8 << 20)
            def work():
                n.normalize(text)
            """
        )
    )


BYTES = "[(bytes([b]), b) for b in range(256)]"


@pytest.mark.parametrize("char", ["\\u0101", "\\U0001F600"])
@pytest.mark.parametrize("how", ["encode", "encode_batch"])
def test_encode_a_wide_str(char: str, how: str) -> None:
    """A str stored two or four bytes per character: the room for its ids or its UTF-8 copy
    (whichever is asked for first) is refused."""
    call = "enc.encode(text)" if how == "encode" else "enc.encode_batch([text], threads=2)"
    check(
        run_child(
            f"""
            enc = _core.Bpe({BYTES}, [], "gpt2")
            text = "{char}" * 8_000_000
            enc.encode("{char}" * 1000)
            enc.encode_batch(["warm up"] * 4, threads=2)
            limit(16 << 20)
            def work():
                {call}
            """
        )
    )


@pytest.mark.parametrize("starts_only", [False, True])
def test_char_spans(starts_only: bool) -> None:
    """The spans of 4M ids (64 MB) and their list cannot get their memory."""
    check(
        run_child(
            f"""
            enc = _core.Bpe({BYTES}, [], "gpt2")
            ids = [97] * 4_000_000
            enc.char_spans([97, 98])
            limit(24 << 20)
            def work():
                enc.char_spans(ids, starts_only={starts_only})
            """
        )
    )


def test_word_encoder() -> None:
    """The word-level model (wordbpe): the ids and the word table of a long text."""
    check(
        run_child(
            """
            # the letters and the end-of-word marker (byte 0xFF), the unknown id 0
            tokens = [(bytes([c]), c - 96) for c in range(97, 123)] + [(b"\\xff", 27)]
            enc = _core.WordEncoder(_core.WORDS_PATTERN, True, tokens, 0)
            words = " ".join(
                "".join(chr(97 + (i * 7 + k * 3) % 26) for k in range(6)) for i in range(20_000)
            )
            text = (words + " ") * 100
            enc.encode("warm up")
            limit(16 << 20)
            def work():
                enc.encode(text)
            """
        )
    )


@pytest.mark.parametrize("kind", PIPELINES)
def test_pipeline_offsets(kind: str) -> None:
    """The offsets' aligned text: 16 bytes of alignment per byte of the (normalized) text."""
    check(
        run_child(
            f"""
            p = pipeline("{kind}")
            text = "Hello world, it's a test. " * 300_000
            p.encode_with_offsets("warm up " * 100, None)
            limit(16 << 20)
            def work():
                p.encode_with_offsets(text, None)
            """
        )
    )
