import json
import sys
from pathlib import Path

import pytest

import toksmith

DATA = Path(__file__).parent.parent / "data"


def _ranks(name):
    sys.path.insert(0, str(Path(__file__).parent.parent))
    from conftest import read_tiktoken_file

    return read_tiktoken_file(DATA / "vocabs" / name)


@pytest.fixture(scope="session")
def gpt2():
    return toksmith.Tokenizer.from_ranks(_ranks("gpt2.tiktoken"), "gpt2", {"<|endoftext|>": 50256})


@pytest.fixture(scope="session")
def cl100k():
    specials = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258}
    return toksmith.Tokenizer.from_ranks(_ranks("cl100k_base.tiktoken"), "cl100k", specials)


def real_documents():
    """Real text as documents: paragraphs of the English slice, then whole source files."""
    english = (DATA / "corpora" / "english_slice.txt").read_text(encoding="utf-8")
    docs = [p for p in english.split("\n\n")][:60]
    docs.append("")  # an empty document stays a document
    docs.append("<|endoftext|> is text here, not a special token")
    return docs


@pytest.fixture
def corpus(tmp_path):
    """Two inputs: a JSON-lines file of paragraphs and a source file (one document)."""
    docs = real_documents()
    a = tmp_path / "in" / "a.jsonl"
    a.parent.mkdir()
    with open(a, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps({"text": d, "id": 1}) + "\n")
    b = tmp_path / "in" / "b.txt"
    code = (DATA / "corpora" / "python_slice.txt").read_text(encoding="utf-8")[:40000]
    b.write_text(code, encoding="utf-8", newline="")
    return [str(a), str(b)], docs + [code]
