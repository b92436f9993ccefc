"""The nanochat preset's functions refuse arguments of the wrong type with a clear message."""

from __future__ import annotations

import warnings

import pytest

from tests.conftest import BYTES
from toksmith import Tokenizer
from toksmith.presets import (
    PRESETS,
    chat_render,
    chat_shards,
    conversation,
    nanochat,
)

np = pytest.importorskip("numpy")


TEXTS = ["hello world, the quick brown fox", "lower lowest low"] * 5


@pytest.fixture(scope="module")
def tok():
    return Tokenizer.from_ranks({**BYTES, b"ab": 256}, "gpt2", {"<|end|>": 257})


@pytest.fixture(scope="module")
def chat_tok():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tiny corpus runs out of pairs
        return nanochat.train(TEXTS, vocab_size=300)


def test_chat_render_needs_a_tokenizer(tok, chat_tok):
    """Audit finding: was AttributeError "'NoneType' object has no attribute 'special_tokens'"."""
    for call in (
        lambda t: chat_render.token_pieces(t, [104]),
        lambda t: chat_render.to_ansi(t, [104]),
        lambda t: chat_render.html_section(t, "h", [104]),
        lambda t: chat_render.to_html(t, [("h", [104], None)]),
    ):
        with pytest.raises(
            TypeError, match="tokenizer must be a toksmith Tokenizer .*, not NoneType"
        ):
            call(None)
        with pytest.raises(TypeError, match="not ChatTokenizer; pass its .tokenizer"):
            call(chat_tok)
    assert chat_render.token_pieces(tok, [104, 257]) == [("h", False), ("<|end|>", True)]


@pytest.mark.parametrize("sections", ["", "abc", {"h": 1}])
def test_to_html_sections_must_be_a_list(tok, sections):
    """Audit finding: was "" gave a page with no section."""
    with pytest.raises(TypeError, match="sections must be a list of"):
        chat_render.to_html(tok, sections)


@pytest.mark.parametrize(
    "messages", [np.array([1, 2]), "", "ab", [None], [{"role": "user"}], {"role": "user"}]
)
def test_plan_messages_checks_its_messages(messages):
    """Audit finding: was IndexError for a numpy array, [BOS] for ""."""
    with pytest.raises(TypeError, match="normalize"):
        conversation.plan_messages(messages)
    msgs = conversation.normalize_messages({"messages": [{"role": "user", "content": "hi"}]})
    assert conversation.plan_messages(msgs) == conversation.plan_conversation({"messages": msgs})


def test_shard_writer_checks_meta_line_and_extra(tmp_path):
    with pytest.raises(TypeError, match="meta must be a dict"):  # was dict([b"ab"]) == {97: 98}
        chat_shards.ShardWriter(str(tmp_path / "a"), n_vocab=300, meta=[b"ab"])
    w = chat_shards.ShardWriter(str(tmp_path / "b"), n_vocab=300)
    with pytest.raises(ValueError, match="line must be a line number >= 0"):
        w.add([1], [1], line=2**64)  # was OverflowError from the int64 array
    with pytest.raises(ValueError, match="line must be a line number >= 0"):
        w.add([1], [1], line=-1)
    with pytest.raises(TypeError, match="extra must be a dict"):
        w.close(extra=[b"ab"])
    w.add([1], [1], line=np.int64(3))
    assert w.close(extra={"note": "x"})["conversations"] == 1


@pytest.mark.parametrize(
    "index, exc", [(-1, ValueError), (None, TypeError), (True, TypeError), (1.0, TypeError)]
)
def test_shard_name_checks_index(index, exc):
    """Audit finding: was 'shard_-0001.npz', and "unsupported format string passed to NoneType.__format__"."""
    with pytest.raises(exc, match="index must be"):
        chat_shards.shard_name(index)
    assert chat_shards.shard_name(np.int64(2)) == "shard_00002.npz"


@pytest.mark.parametrize(
    "extra, exc, match",
    [
        ("<X>", TypeError, "wrap one token in a list"),  # was '<', 'X', '>' as three tokens
        ([1], TypeError, r"extra must hold str, not int"),  # was the key 1 in a str -> id dict
        (["<X>", "<X>"], ValueError, "names '<X>' twice"),  # was a gap in the ids
        ([""], ValueError, "empty string"),
    ],
)
def test_special_token_spec_checks_extra(extra, exc, match):
    for name in ("cromwell", "nanochat"):
        with pytest.raises(exc, match=match):
            PRESETS[name].special_token_spec(extra)
    assert PRESETS["cromwell"].special_token_spec(iter(["<X>"]))["<X>"] == 8


@pytest.mark.parametrize(
    "n, exc", [(1.5, TypeError), (True, TypeError), (0, ValueError), (object(), TypeError)]
)
def test_chat_encode_checks_num_threads_for_one_text(chat_tok, n, exc):
    """Audit finding: was any value taken (and ignored) when encoding one text."""
    with pytest.raises(exc, match="threads"):
        chat_tok.encode("hi", num_threads=n)
    assert chat_tok.encode("hi", num_threads=2) == chat_tok.encode("hi")
