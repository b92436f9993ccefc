"""Issue 36 item 1: building a pipeline model (character BPE, Unigram, WordPiece) from a big
tokenizer file under a memory limit raises MemoryError, never aborts; the same file loads
without the limit.

`Pipeline.from_hf_json`, `from_clip_files`, `from_spm_model` and `from_wordpiece_vocab` hold
tables that grow with the file (up to ``MAX_TOKENIZER_FILE_BYTES``, 1 GiB): the vocab map,
the merge list and merge table, Unigram's rows, scores and trie, WordPiece's tries, the
SentencePiece reader's pieces, the id -> token list. Each used to allocate infallibly, so a big
file under a memory limit killed the process with SIGABRT. Each case runs in a child process
under an address-space limit (tests/oom.py) set a little above what the child uses once the
file's bytes are built, raised step by step until the load fits (so that the refusals land in one
table after another); the load that fits must give the whole vocabulary.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests import oom

resource = pytest.importorskip("resource")

if not sys.platform.startswith("linux") or not hasattr(resource, "RLIMIT_AS"):
    pytest.skip("RLIMIT_AS is enforced for mmap on Linux only", allow_module_level=True)

# The tokens: the ten digits, every 2- and 4-digit string and N 6-digit ones, each longer one
# the merge of two shorter ones (so every merge list is valid); a SentencePiece `.model` is
# written with a few lines of protobuf wire format (no sentencepiece or protobuf needed).
SETUP = """
import json, struct
N = 200_000
TOKENS = (
    [str(d) for d in range(10)]
    + ["%02d" % i for i in range(100)]
    + ["%04d" % i for i in range(10_000)]
    + ["%06d" % i for i in range(N)]
)
MERGES = [(t[:-2], t[-2:]) if len(t) > 2 else (t[0], t[1]) for t in TOKENS[10:]]

def varint(v):
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        out.append(b | 0x80 if v else b)
        if not v:
            return bytes(out)

def field(number, data):
    return varint(number << 3 | 2) + varint(len(data)) + data

def piece(text, score, kind):
    body = field(1, text.encode()) + varint(2 << 3 | 5) + struct.pack("<f", score)
    return field(1, body + varint(3 << 3) + varint(kind))

def spm_model(model_type, tokens):
    # kind 2: the unknown piece, 1: normal; trainer_spec field 3: model_type (1 Unigram, 2 BPE)
    pieces = [piece("<unk>", 0.0, 2)] + [piece(t, -1.0 - i, 1) for i, t in enumerate(tokens)]
    return b"".join(pieces) + field(2, varint(3 << 3) + varint(model_type))

def sweep(load, n_vocab):
    # the load under a limit that grows from 2 MiB above the child's size until it fits, so the
    # refusals land in one table after another: each must be a MemoryError; the load that fits
    # must give the whole vocabulary
    def work():
        trim = ctypes.CDLL(None).malloc_trim
        trim(0)
        base, extra, refused = vm_size(), 2 << 20, 0
        while True:
            resource.setrlimit(resource.RLIMIT_AS, (base + extra, resource.RLIM_INFINITY))
            try:
                got = load()
                break
            except MemoryError:
                refused += 1
                trim(0)
                extra *= 2
        resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        assert got is not None and got.n_vocab == n_vocab, (got, n_vocab)
        assert refused >= 3, refused
        raise MemoryError("refused %d times, then loaded with %d MiB" % (refused, extra >> 20))
    return work
"""


def run_child(body: str) -> subprocess.CompletedProcess[str]:
    return oom.run_child(body, oom.WORDS_SETUP + SETUP, timeout=120)


check = oom.check

# a tokenizer.json document per model type, its model's tables as Python objects
HF_MODELS = {
    "bpe": """{"type": "BPE", "vocab": {t: i for i, t in enumerate(TOKENS)},
              "merges": ["%s %s" % m for m in MERGES]}""",
    "bpe_pairs": """{"type": "BPE", "vocab": {t: i for i, t in enumerate(TOKENS)},
                    "merges": [list(m) for m in MERGES]}""",
    "unigram": """{"type": "Unigram", "unk_id": 0,
                  "vocab": [["<unk>", 0.0]] + [[t, -1.0 - i] for i, t in enumerate(TOKENS)]}""",
    "wordpiece": """{"type": "WordPiece", "unk_token": "[UNK]",
                    "vocab": {t: i for i, t in enumerate(["[UNK]"] + TOKENS)}}""",
}


@pytest.mark.parametrize("kind", sorted(HF_MODELS))
def test_tokenizer_json(kind: str) -> None:
    """A big tokenizer.json of each model type `Pipeline.from_hf_json` builds."""
    n_vocab = "len(TOKENS)" if kind.startswith("bpe") else "len(TOKENS) + 1"
    check(
        run_child(
            f"""
            doc = json.dumps({{"model": {HF_MODELS[kind]}}})
            _core.Pipeline.from_hf_json(json.dumps({{"model": {{"type": "WordPiece",
                "unk_token": "a", "vocab": {{"a": 0}}}}}}))
            work = sweep(lambda: _core.Pipeline.from_hf_json(doc), {n_vocab})
            """
        )
    )


@pytest.mark.parametrize("model_type", [1, 2], ids=["unigram", "bpe"])
def test_sentencepiece_model(model_type: int) -> None:
    """A big SentencePiece `.model` (`from_spm_model`: the pieces, the model's tables)."""
    check(
        run_child(
            f"""
            raw = spm_model({model_type}, TOKENS)
            _core.Pipeline.from_spm_model(spm_model({model_type}, TOKENS[:200]))
            work = sweep(lambda: _core.Pipeline.from_spm_model(raw), len(TOKENS) + 1)
            """
        )
    )


def test_clip_files() -> None:
    """CLIP's `vocab.json` + `merges.txt` (`from_clip_files`: the vocab map, the merges)."""
    check(
        run_child(
            """
            shell = json.dumps({"model": {"type": "BPE", "end_of_word_suffix": "</w>"}})
            vocab = json.dumps({t: i for i, t in enumerate(TOKENS)}).encode()
            merges = ("#version: 0.2\\n" + "\\n".join("%s %s" % m for m in MERGES)).encode()
            _core.Pipeline.from_clip_files(shell, b'{"0": 0}', b"")
            work = sweep(lambda: _core.Pipeline.from_clip_files(shell, vocab, merges), len(TOKENS))
            """
        )
    )


def test_wordpiece_vocab_txt() -> None:
    """BERT's `vocab.txt` (`from_wordpiece_vocab`: the vocab map, the tries)."""
    check(
        run_child(
            """
            text = "\\n".join(["[UNK]"] + TOKENS)
            load = lambda: _core.Pipeline.from_wordpiece_vocab(text, "[UNK]", [], True, None, True)
            _core.Pipeline.from_wordpiece_vocab("[UNK]", "[UNK]", [], True, None, True)
            work = sweep(load, len(TOKENS) + 1)
            """
        )
    )
