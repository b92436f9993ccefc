"""Chat conversations: checking them and laying them out as segments with a training mask.

A conversation is ``{"messages": [...]}`` (a bare list of messages is accepted too). Messages
alternate ``user`` / ``assistant``, starting with ``user``; an optional leading ``system``
message is merged into the first user message (``system + "\\n\\n" + user``), as nanochat does.
User content is a str; assistant content is a str or a list of parts
``{"type": "text" | "python" | "python_output", "text": str}``.

:func:`plan_conversation` turns a conversation into a flat list of segments ``(piece, mask)``
where ``piece`` is a special token name (``"<|...|>"`` from the nine nanochat tokens, wrapped in
:class:`Special`) or a text to encode. The chat tokenizer encodes the texts and concatenates.

>>> plan_conversation({"messages": [{"role": "user", "content": "Hi"},
...                                 {"role": "assistant", "content": "Hello!"}]})
... # doctest: +NORMALIZE_WHITESPACE
[(Special('<|bos|>'), 0), (Special('<|user_start|>'), 0), ('Hi', 0), (Special('<|user_end|>'), 0),
 (Special('<|assistant_start|>'), 0), ('Hello!', 1), (Special('<|assistant_end|>'), 1)]
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Sequence, Tuple, Union

#: the assistant content part types and whether the model is trained on them
PART_TYPES = ("text", "python", "python_output")


class Special(str):
    """A special token's name in a plan (a str subclass, so it is distinguishable from text)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Special({str.__repr__(self)})"


BOS = Special("<|bos|>")
USER_START = Special("<|user_start|>")
USER_END = Special("<|user_end|>")
ASSISTANT_START = Special("<|assistant_start|>")
ASSISTANT_END = Special("<|assistant_end|>")
PYTHON_START = Special("<|python_start|>")
PYTHON_END = Special("<|python_end|>")
OUTPUT_START = Special("<|output_start|>")
OUTPUT_END = Special("<|output_end|>")

Segment = Tuple[Union[Special, str], int]
Message = Dict[str, Any]


def _type_name(value: Any) -> str:
    return type(value).__name__


def normalize_messages(conversation: Any) -> List[Message]:
    """Check a conversation and return its messages (shallow copies), with a leading system
    message merged into the first user message. Raises ValueError naming the message index
    (in the input) and what was expected; TypeError when ``conversation`` is not a dict or
    list.

    >>> normalize_messages({"messages": [{"role": "system", "content": "Be brief."},
    ...                                  {"role": "user", "content": "Hi"}]})
    [{'role': 'user', 'content': 'Be brief.\\n\\nHi'}]
    >>> normalize_messages({"messages": [{"role": "assistant", "content": "Hi"}]})
    Traceback (most recent call last):
    ...
    ValueError: message 0: expected role 'user' (messages alternate user/assistant, starting with user), got 'assistant'
    """
    if isinstance(conversation, Mapping):
        if "messages" not in conversation:
            raise ValueError("conversation has no 'messages' field")
        messages = conversation["messages"]
    elif isinstance(conversation, (list, tuple)):
        messages = conversation
    else:
        raise TypeError(
            f"conversation must be a dict with a 'messages' list (or a list of messages), "
            f"not {_type_name(conversation)}"
        )
    if not isinstance(messages, (list, tuple)):
        raise ValueError(f"'messages' must be a list, not {_type_name(messages)}")
    if not messages:
        raise ValueError("conversation has no messages (expected at least one user message)")
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping):
            raise ValueError(
                f"message {i}: expected an object with 'role' and 'content', got {_type_name(m)}"
            )
        for key in ("role", "content"):
            if key not in m:
                raise ValueError(f"message {i}: missing field {key!r}")
        if not isinstance(m["role"], str):
            raise ValueError(f"message {i}: 'role' must be a str, not {_type_name(m['role'])}")

    out: List[Message] = [dict(m) for m in messages]
    offset = 0  # index in the input of out[0]
    if out[0]["role"] == "system":
        system = out[0]["content"]
        if not isinstance(system, str):
            raise ValueError(f"message 0: system content must be a str, not {_type_name(system)}")
        if len(out) < 2 or out[1]["role"] != "user":
            got = "nothing" if len(out) < 2 else repr(out[1]["role"])
            raise ValueError(
                f"message 1: expected a user message after the system message, got {got}"
            )
        if not isinstance(out[1]["content"], str):
            raise ValueError(
                f"message 1: user content must be a str, not {_type_name(out[1]['content'])}"
            )
        out[1]["content"] = system + "\n\n" + out[1]["content"]
        out = out[1:]
        offset = 1

    for j, m in enumerate(out):
        i = j + offset
        role = m["role"]
        expected = "user" if j % 2 == 0 else "assistant"
        if role != expected:
            extra = " (a system message is only allowed first)" if role == "system" else ""
            raise ValueError(
                f"message {i}: expected role {expected!r} (messages alternate user/assistant, "
                f"starting with user), got {role!r}{extra}"
            )
        content = m["content"]
        if role == "user":
            if not isinstance(content, str):
                raise ValueError(
                    f"message {i}: user content must be a str, not {_type_name(content)}"
                )
        elif isinstance(content, (list, tuple)):
            for k, part in enumerate(content):
                _check_part(part, i, k)
        elif not isinstance(content, str):
            raise ValueError(
                f"message {i}: assistant content must be a str or a list of parts, not {_type_name(content)}"
            )
    return out


def _check_part(part: Any, i: int, k: int) -> None:
    where = f"message {i}, part {k}"
    if not isinstance(part, Mapping):
        raise ValueError(
            f"{where}: expected an object with 'type' and 'text', got {_type_name(part)}"
        )
    kind = part.get("type")
    if kind not in PART_TYPES:
        raise ValueError(f"{where}: expected 'type' to be one of {list(PART_TYPES)}, got {kind!r}")
    if "text" not in part:
        raise ValueError(f"{where}: missing field 'text'")
    if not isinstance(part["text"], str):
        raise ValueError(f"{where}: 'text' must be a str, not {_type_name(part['text'])}")


def plan_messages(messages: Sequence[Message]) -> List[Segment]:
    """Segments for already-normalized messages (see :func:`normalize_messages`)."""
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, (list, tuple)):
        raise TypeError(
            f"messages must be the list normalize_messages() gives, not {type(messages).__name__}"
        )
    for k, m in enumerate(messages):
        if not isinstance(m, Mapping) or "role" not in m or "content" not in m:
            raise TypeError(
                f"messages[{k}] is {_type_name(m)}, not a message of normalize_messages() "
                f"(a dict with 'role' and 'content'); normalize the conversation first"
            )
    plan: List[Segment] = [(BOS, 0)]
    add = plan.append
    for m in messages:
        content = m["content"]
        if m["role"] == "user":
            add((USER_START, 0))
            add((content, 0))
            add((USER_END, 0))
            continue
        add((ASSISTANT_START, 0))
        if isinstance(content, str):
            add((content, 1))
        else:
            for part in content:
                kind, text = part["type"], part["text"]
                if kind == "text":
                    add((text, 1))
                elif kind == "python":
                    add((PYTHON_START, 1))
                    add((text, 1))
                    add((PYTHON_END, 1))
                else:  # python_output: produced by the interpreter, not the model
                    add((OUTPUT_START, 0))
                    add((text, 0))
                    add((OUTPUT_END, 0))
        add((ASSISTANT_END, 1))
    return plan


def plan_conversation(conversation: Any) -> List[Segment]:
    """Check a conversation and lay it out as ``(piece, mask)`` segments."""
    return plan_messages(normalize_messages(conversation))


__all__ = [
    "PART_TYPES",
    "Special",
    "Segment",
    "normalize_messages",
    "plan_messages",
    "plan_conversation",
]
