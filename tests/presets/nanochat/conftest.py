"""Fixtures for the nanochat preset tests: a small chat tokenizer trained on the chat slice."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import toksmith
from tests.conftest import DATA
from toksmith.presets import NANOCHAT_SPECIAL_TOKENS
from toksmith.presets.nanochat import ChatTokenizer, train

CHAT_SLICE = DATA / "corpora" / "chat_slice.jsonl"
VOCAB = 768


def chat_texts():
    for line in CHAT_SLICE.read_text(encoding="utf-8").splitlines():
        for m in json.loads(line)["messages"]:
            yield m["content"]


@pytest.fixture(scope="session")
def chat_slice_path() -> Path:
    return CHAT_SLICE


@pytest.fixture(scope="session")
def chat_lines():
    return CHAT_SLICE.read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="session")
def chat() -> ChatTokenizer:
    """A nanochat tokenizer (768 ids: 256 bytes, 503 merges, 9 specials) trained on the chats."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the slice must give all the merges asked for
        return train(chat_texts(), vocab_size=VOCAB, threads=1)


@pytest.fixture(scope="session")
def chat_path(chat, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("tok") / "chat.json"
    chat.save(path)
    return path


@pytest.fixture(scope="session")
def byte_chat() -> ChatTokenizer:
    """No merges: every byte is its own token and the specials are 256..264, so golden ids
    can be written by hand."""
    specials = {s: 256 + i for i, s in enumerate(NANOCHAT_SPECIAL_TOKENS)}
    tok = toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "nanochat", specials)
    return ChatTokenizer(tok)
