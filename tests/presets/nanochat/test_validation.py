"""Malformed conversations raise ValueError naming the message and what was expected."""

from __future__ import annotations

import numpy as np
import pytest

from toksmith.presets.nanochat import SPLIT_PATTERN, ChatTokenizer, RustBPETokenizer, train

U = {"role": "user", "content": "hi"}
A = {"role": "assistant", "content": "hello"}


@pytest.mark.parametrize(
    "conversation, pattern",
    [
        ({}, "no 'messages' field"),
        ({"messages": []}, "no messages"),
        ({"messages": "hi"}, "'messages' must be a list"),
        ({"messages": [A]}, r"message 0: expected role 'user'.*got 'assistant'"),
        ({"messages": [U, U]}, r"message 1: expected role 'assistant'.*got 'user'"),
        ({"messages": [U, A, A]}, r"message 2: expected role 'user'"),
        (
            {"messages": [U, {"role": "system", "content": "x"}]},
            r"message 1: .*system message is only allowed first",
        ),
        (
            {"messages": [U, {"role": "tool", "content": "x"}]},
            r"message 1: expected role 'assistant'.*'tool'",
        ),
        (
            {"messages": [{"role": "system", "content": "s"}]},
            r"message 1: expected a user message after the system",
        ),
        (
            {"messages": [{"role": "system", "content": "s"}, A]},
            r"message 1: expected a user message.*'assistant'",
        ),
        (
            {"messages": [{"role": "system", "content": 3}, U]},
            r"message 0: system content must be a str",
        ),
        (
            {"messages": [{"role": "system", "content": "s"}, U, U]},
            r"message 2: expected role 'assistant'",
        ),
        ({"messages": ["hi"]}, r"message 0: expected an object with 'role' and 'content', got str"),
        ({"messages": [{"content": "x"}]}, r"message 0: missing field 'role'"),
        ({"messages": [{"role": "user"}]}, r"message 0: missing field 'content'"),
        ({"messages": [{"role": 1, "content": "x"}]}, r"message 0: 'role' must be a str"),
        (
            {"messages": [{"role": "user", "content": None}]},
            r"message 0: user content must be a str, not NoneType",
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}]},
            r"message 0: user content must be a str, not list",
        ),
        (
            {"messages": [U, {"role": "assistant", "content": 5}]},
            r"message 1: assistant content must be a str or a list of parts, not int",
        ),
        (
            {"messages": [U, {"role": "assistant", "content": [{"type": "image", "text": "x"}]}]},
            r"message 1, part 0: expected 'type' to be one of \['text', 'python', 'python_output'\], got 'image'",
        ),
        (
            {
                "messages": [
                    U,
                    {"role": "assistant", "content": [{"type": "text", "text": "a"}, "b"]},
                ]
            },
            r"message 1, part 1: expected an object",
        ),
        (
            {"messages": [U, {"role": "assistant", "content": [{"type": "python"}]}]},
            r"message 1, part 0: missing field 'text'",
        ),
        (
            {
                "messages": [
                    U,
                    {"role": "assistant", "content": [{"type": "python_output", "text": 7}]},
                ]
            },
            r"message 1, part 0: 'text' must be a str, not int",
        ),
    ],
)
def test_bad_conversations(byte_chat, conversation, pattern):
    with pytest.raises(ValueError, match=pattern):
        byte_chat.render_conversation(conversation)
    with pytest.raises(ValueError, match=pattern):
        byte_chat.render_conversations([{"messages": [U]}, conversation])


def test_batch_error_names_the_conversation(byte_chat):
    with pytest.raises(ValueError, match=r"conversation 1: message 0: expected role 'user'"):
        byte_chat.render_conversations([{"messages": [U]}, {"messages": [A]}])


@pytest.mark.parametrize("conversation", ["hello", 5, None, b"x"])
def test_not_a_conversation(byte_chat, conversation):
    with pytest.raises(TypeError, match="conversation must be a dict"):
        byte_chat.render_conversation(conversation)


def test_bare_message_list_is_accepted(byte_chat):
    assert byte_chat.render_conversation([U, A]) == byte_chat.render_conversation(
        {"messages": [U, A]}
    )


def test_max_tokens_checked(byte_chat):
    with pytest.raises(ValueError, match="max_tokens"):
        byte_chat.render_conversation({"messages": [U]}, max_tokens=-1)
    with pytest.raises(TypeError, match="max_tokens"):
        byte_chat.render_conversation({"messages": [U]}, max_tokens="10")


def test_render_for_completion_checks(byte_chat):
    with pytest.raises(ValueError, match="message 0"):
        byte_chat.render_for_completion({"messages": [A]})


A_YO = {"role": "assistant", "content": "yo"}


BIG = 2**70


class _CountingTokenizer:
    def __init__(self, inner):
        self.inner, self.calls = inner, 0

    def encode_ordinary(self, text):
        self.calls += 1
        return self.inner.encode_ordinary(text)

    def encode_ordinary_batch(self, texts, threads=None):
        self.calls += len(texts)
        return self.inner.encode_ordinary_batch(texts, threads=threads)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_numpy_integers_accepted(byte_chat):
    bos = byte_chat.get_bos_token_id()
    assert byte_chat.encode("a", prepend=np.int64(bos)) == [bos, 97]
    assert byte_chat.decode([np.int64(104), np.uint16(105)]) == "hi"
    assert byte_chat.id_to_token(np.int32(104)) == "h"
    full, full_mask = byte_chat.render_conversation([U, A_YO], max_tokens=None)
    assert byte_chat.render_conversation([U, A_YO], max_tokens=np.int64(3)) == (
        full[:3],
        full_mask[:3],
    )
    assert byte_chat.render_for_completion([U, A_YO], max_tokens=np.int64(3))[
        -1
    ] == byte_chat.encode_special("<|assistant_start|>")
    assert byte_chat.encode(["a", "b"], num_threads=np.int64(2)) == [[97], [98]]
    assert byte_chat.render_conversations([[U, A_YO]], num_threads=np.int64(1)) == [
        (full, full_mask)
    ]


def test_bools_and_wrong_types_are_type_errors(byte_chat):
    with pytest.raises(TypeError, match="bool"):
        byte_chat.id_to_token(True)
    with pytest.raises(TypeError, match="max_tokens"):
        byte_chat.render_for_completion([U], max_tokens=True)
    with pytest.raises(TypeError, match="ids must be integers"):
        byte_chat.decode(np.array([True, False]))
    for bad in ("hi", 104, None):
        with pytest.raises(TypeError, match="list of int"):
            byte_chat.decode(bad)
    with pytest.raises(TypeError, match=r"ids\[0\] must be an int, not float"):
        byte_chat.decode([104.0])


@pytest.mark.parametrize("name", [None, 5, ["<|bos|>"]])
def test_encode_special_non_str_is_type_error(byte_chat, name):
    with pytest.raises(TypeError, match="special token name must be a str"):
        byte_chat.encode_special(name)
    with pytest.raises(ValueError, match="not a special token"):
        byte_chat.encode_special("<|nope|>")


def test_huge_numbers_are_value_errors(byte_chat):
    with pytest.raises(ValueError, match="not a token id"):
        byte_chat.encode("a", append=BIG)
    with pytest.raises(ValueError):
        byte_chat.id_to_token(BIG)
    with pytest.raises(ValueError):
        byte_chat.encode(["a"], num_threads=BIG)
    assert byte_chat.render_conversation(
        [U, A_YO], max_tokens=BIG
    ) == byte_chat.render_conversation([U, A_YO], None)


def test_train_argument_checks():
    texts = ["hello world, hello there"] * 4
    assert train(texts, vocab_size=np.int64(266)).get_vocab_size() == 266
    with pytest.raises(TypeError, match="not None"):
        train(None, vocab_size=266)
    with pytest.raises(TypeError, match="vocab_size must be an int, not bool"):
        train(texts, vocab_size=True)
    with pytest.raises(TypeError, match="name"):
        train(texts, vocab_size=266, name=5)
    with pytest.raises(TypeError, match="text_field"):
        train(texts, vocab_size=266, text_field=None)
    with pytest.raises(ValueError, match="errors must be"):
        train(texts, vocab_size=266, errors="ignore")
    with pytest.raises(ValueError):
        train(texts, vocab_size=2**40)


def test_spec_names_and_save_to_a_new_folder(byte_chat, tmp_path):
    assert RustBPETokenizer is ChatTokenizer
    assert r"\p{N}{1,2}" in SPLIT_PATTERN and byte_chat.tokenizer.pattern == SPLIT_PATTERN
    target = tmp_path / "out" / "tokenizer"  # nanochat: tokenizer.save("out/tokenizer")
    byte_chat.save(str(target))
    assert (target / "tokenizer.json").is_file()
    assert ChatTokenizer.load(target).get_vocab_size() == byte_chat.get_vocab_size()
    byte_chat.save(tmp_path / "tok.json")  # a path with an extension stays a file
    assert (tmp_path / "tok.json").is_file()


@pytest.mark.parametrize("conversations", [{"messages": [U, A_YO]}, "abc", None, 5])
def test_render_conversations_refuses_a_single_conversation(byte_chat, conversations):
    with pytest.raises(TypeError, match="conversations must be a list"):
        byte_chat.render_conversations(conversations)


def test_render_conversations_type_error_names_the_conversation(byte_chat):
    with pytest.raises(TypeError, match=r"conversation 1: conversation must be a dict"):
        byte_chat.render_conversations([[U, A_YO], None])


def test_render_for_completion_max_tokens(byte_chat):
    # as nanochat's: render_conversation(..., max_tokens) then <|assistant_start|>
    with pytest.raises(ValueError, match=">= 0"):
        byte_chat.render_for_completion([U, A_YO], max_tokens=-1)
    start = byte_chat.encode_special("<|assistant_start|>")
    full = byte_chat.render_for_completion([U, A_YO], max_tokens=None)
    assert byte_chat.render_for_completion([U, A_YO]) == full  # 2048 by default
    assert byte_chat.render_for_completion([U, A_YO], max_tokens=0) == [start]
    for k in range(0, len(full) + 3):
        ids = byte_chat.render_for_completion([U, A_YO], max_tokens=k)
        assert len(ids) == min(k + 1, len(full)) and ids[-1] == start
        assert ids[:-1] == full[: len(ids) - 1]
    long = {"messages": [{"role": "user", "content": "x" * 3000}]}
    assert len(byte_chat.render_for_completion(long)) == 2049


def test_cut_equals_prefix_with_empty_texts(byte_chat):
    conv = [
        U,
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": ""},
                {"type": "python", "text": ""},
                {"type": "python_output", "text": "42"},
                {"type": "text", "text": "ok"},
            ],
        },
        {"role": "user", "content": ""},
        {"role": "assistant", "content": ""},
    ]
    full_ids, full_mask = byte_chat.render_conversation(conv, max_tokens=None)
    for k in range(len(full_ids) + 2):
        ids, mask = byte_chat.render_conversation(conv, max_tokens=k)
        assert (ids, mask) == (full_ids[:k], full_mask[:k])
        assert byte_chat.render_conversations([conv], max_tokens=k) == [(ids, mask)]


def test_long_conversation_cut_encodes_only_its_start(byte_chat):
    chat = ChatTokenizer(byte_chat.tokenizer)
    counting = _CountingTokenizer(byte_chat.tokenizer)
    chat.tokenizer = counting
    conv = [U, A_YO] * 20000
    ids, mask = chat.render_conversation(conv, max_tokens=32)
    assert len(ids) == len(mask) == 32 and counting.calls <= 32
    counting.calls = 0
    assert (
        chat.render_conversations([conv], max_tokens=32) == [(ids, mask)] and counting.calls <= 32
    )


@pytest.mark.parametrize("ids", [{104: 1, 105: 2}, {104, 105}, frozenset([104])])
def test_dict_and_set_ids_are_type_errors(byte_chat, ids):
    # was: a dict or set was decoded / shown as its keys in arbitrary order
    with pytest.raises(TypeError, match="ids must be a list of int"):
        byte_chat.decode(ids)
    with pytest.raises(TypeError, match="ids must be a list of ints"):
        byte_chat.visualize_tokenization(ids)
    with pytest.raises(TypeError, match="ids must be a list of ints"):
        byte_chat.visualize_html(ids)
    with pytest.raises(TypeError, match="mask must be a list of ints"):
        byte_chat.visualize_tokenization([104, 105], {0: 1, 1: 1})
    assert byte_chat.decode((104, 105)) == byte_chat.decode(x for x in [104, 105]) == "hi"


@pytest.mark.parametrize("source", [None, 5, b"some text", {"a": 1}])
def test_train_from_iterator_bad_source_is_a_clear_type_error(source):
    # was: "'NoneType' object is not iterable", bytes as "item 0 ... is int", a dict trained on its keys
    with pytest.raises(TypeError, match="text_iterator must be an iterable of str texts"):
        ChatTokenizer.train_from_iterator(source, 300)


def test_train_empty_path_is_refused(tmp_path, monkeypatch):
    # was: "" was the current folder: every file under it was read as training text
    (tmp_path / "a.txt").write_text("hello world " * 50, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="empty path"):
        train("", vocab_size=270)
