"""Malformed conversations raise ValueError naming the message and what was expected."""

from __future__ import annotations

import pytest

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
