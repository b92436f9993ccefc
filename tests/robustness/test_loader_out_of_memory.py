"""Issue 36 item 1: loading a big tokenizer file under a memory limit raises MemoryError, never
aborts.

The native readers of tokenizer files (`vocab_files.rs`, `bpe_json.rs`) and the vocabulary
tables (`Vocab::new`, `table.rs`) hold tables that grow with the file (up to
``MAX_TOKENIZER_FILE_BYTES``, 1 GiB) or with the largest id; each used to allocate infallibly, so
a big file under a memory limit killed the process with SIGABRT. Each case runs in a child
process under an address-space limit (tests/oom.py) set a little above what the child uses once
the file's bytes (or the Python tables) are built.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests import oom

resource = pytest.importorskip("resource")

if not sys.platform.startswith("linux") or not hasattr(resource, "RLIMIT_AS"):
    pytest.skip("RLIMIT_AS is enforced for mmap on Linux only", allow_module_level=True)

# the tokens: the 256 bytes, then N distinct multi-byte ones (digits: spelled the same in the
# byte-level alphabet)
SETUP = """
import base64, json
N = 400_000
BYTES = [(bytes([b]), b) for b in range(256)]
TOKENS = BYTES + [(b"%07d" % i, 256 + i) for i in range(N)]
"""


def run_child(body: str) -> subprocess.CompletedProcess[str]:
    return oom.run_child(body, SETUP, timeout=120)


check = oom.check


def test_parse_tiktoken_ranks() -> None:
    """A 5 MB `.tiktoken` file: its rank table (`parse_tiktoken`) needs about 30 MB."""
    check(
        run_child(
            """
            raw = b"".join(base64.b64encode(t) + b" %d\\n" % i for t, i in TOKENS)
            _core.parse_tiktoken_ranks(b"YQ== 0\\n")
            limit(4 << 20)
            def work():
                _core.parse_tiktoken_ranks(raw)
            """
        )
    )


def test_read_tiktoken_file(tmp_path) -> None:
    """The public path: `toksmith.from_tiktoken` of such a file on disk."""
    path = tmp_path / "big.tiktoken"
    check(
        run_child(
            f"""
            import toksmith
            with open({str(path)!r}, "wb") as f:
                f.write(b"".join(base64.b64encode(t) + b" %d\\n" % i for t, i in TOKENS))
            del TOKENS
            limit(8 << 20)
            def work():
                toksmith.from_tiktoken({str(path)!r}, pattern="gpt2")
            """
        )
    )


@pytest.mark.parametrize("layout", ["huggingface", "toksmith"])
def test_split_json_tables(layout: str) -> None:
    """A JSON tokenizer file's vocab (`bpe_json::split`): about 20 MB of decoded tables."""
    check(
        run_child(
            f"""
            vocab = {{t.decode("latin-1"): i for t, i in TOKENS[256:]}}
            if {layout!r} == "huggingface":
                doc = {{"model": {{"type": "BPE", "vocab": vocab, "merges": []}}}}
            else:
                doc = {{"format": "toksmith", "vocab": vocab, "merges": None}}
            raw = json.dumps(doc).encode()
            del vocab, doc, TOKENS
            _core.split_json_tables(b'{{"model":{{"vocab":{{}}}}}}', "huggingface")
            limit(4 << 20)
            def work():
                _core.split_json_tables(raw, {layout!r})
            """
        )
    )


def test_gpt2_files() -> None:
    """GPT-2's `vocab.json` and `merges.txt` (`bpe_json::split_gpt2`, `parse_merges_text`)."""
    check(
        run_child(
            """
            raw = json.dumps({t.decode("latin-1"): i for t, i in TOKENS[256:]}).encode()
            merges = "\\n".join("%d %d" % (i, i + 1) for i in range(N))
            del TOKENS
            limit(4 << 20)
            def work():
                _core.split_gpt2_files(raw, merges)
            """
        )
    )


def test_ranks_from_vocab_and_merges() -> None:
    """The glue over Python containers (`files.rs`): the decoded vocab grows with the dict."""
    check(
        run_child(
            """
            vocab = {t.decode("latin-1"): i for t, i in TOKENS}
            merges = ["%d %d" % (i, i + 1) for i in range(N)]
            del TOKENS
            limit(4 << 20)
            def work():
                _core.ranks_from_vocab_and_merges(vocab, merges, {})
            """
        )
    )


def test_vocabulary_tables() -> None:
    """`Vocab::new` and its lookup tables (`table.rs`) for a rank table of 400k tokens."""
    check(
        run_child(
            """
            _core.Bpe(BYTES, [], "gpt2")
            limit(8 << 20)
            def work():
                _core.Bpe(TOKENS, [], "gpt2")
            """
        )
    )


def test_sparse_ids() -> None:
    """A small table whose largest id is a million: the id tables are sized by that id."""
    check(
        run_child(
            """
            ranks = BYTES + [(b"ab", 1_000_000)]
            _core.Bpe(BYTES, [], "gpt2")  # (the thread pool started before the limit)
            limit(2 << 20)
            def work():
                _core.Bpe(ranks, [], "gpt2")
            """
        )
    )


def test_tiktoken_merges() -> None:
    """The merge list of a rank table (`tiktoken_merges`: every split of every token)."""
    check(
        run_child(
            """
            ranks = dict(TOKENS)
            del TOKENS
            limit(4 << 20)
            def work():
                _core.tiktoken_merges(ranks)
            """
        )
    )
