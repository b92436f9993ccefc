"""The seed's examples (002): the Hello!/Hi there! conversation and the tool-use conversation,
with their exact layout of special tokens and training mask."""

from __future__ import annotations

from toksmith.presets import NANOCHAT_SPECIAL_TOKENS

HELLO = {
    "messages": [
        {"role": "user", "content": "Hello!"},
        {"role": "assistant", "content": "Hi there!"},
    ]
}

TOOL_USE = {
    "messages": [
        {"role": "user", "content": "Calculate 123 * 456"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me calculate that."},
                {"type": "python", "text": "123 * 456"},
                {"type": "python_output", "text": "56088"},
                {"type": "text", "text": "The answer is 56088."},
            ],
        },
    ]
}

# byte-level ids of the byte_chat fixture: specials 256..264 in nanochat's order
BOS, US, UE, AS, AE, PS, PE, OS, OE = range(256, 265)


def segments(chat, ids, mask):
    """Split at special tokens: [(special name | decoded text, mask values of the piece)]."""
    names = {v: k for k, v in chat.tokenizer.special_tokens.items()}
    out, run, run_mask = [], [], []
    for i, m in zip(ids, mask):
        if i in names:
            if run:
                out.append((chat.decode(run), run_mask))
                run, run_mask = [], []
            out.append((names[i], [m]))
        else:
            run.append(i)
            run_mask.append(m)
    if run:
        out.append((chat.decode(run), run_mask))
    return [(piece, sorted(set(ms))) for piece, ms in out]


def test_hello_exact_ids(byte_chat):
    ids, mask = byte_chat.render_conversation(HELLO)
    assert ids == [BOS, US, *b"Hello!", UE, AS, *b"Hi there!", AE]
    assert mask == [0, 0] + [0] * 6 + [0, 0] + [1] * 9 + [1]


def test_hello_trained_tokenizer(chat):
    ids, mask = chat.render_conversation(HELLO)
    sp = {s: chat.encode_special(s) for s in NANOCHAT_SPECIAL_TOKENS}
    hello, hi = chat.encode("Hello!"), chat.encode("Hi there!")
    assert ids == [
        sp["<|bos|>"],
        sp["<|user_start|>"],
        *hello,
        sp["<|user_end|>"],
        sp["<|assistant_start|>"],
        *hi,
        sp["<|assistant_end|>"],
    ]
    assert mask == [0] * (4 + len(hello)) + [1] * (len(hi) + 1)
    assert segments(chat, ids, mask) == [
        ("<|bos|>", [0]),
        ("<|user_start|>", [0]),
        ("Hello!", [0]),
        ("<|user_end|>", [0]),
        ("<|assistant_start|>", [0]),
        ("Hi there!", [1]),
        ("<|assistant_end|>", [1]),
    ]
    # the seed's mask picture: only the assistant's reply and its end token are trained on
    assert chat.decode([i for i, m in zip(ids, mask) if m]) == "Hi there!<|assistant_end|>"
    assert (
        chat.decode(ids)
        == "<|bos|><|user_start|>Hello!<|user_end|><|assistant_start|>Hi there!<|assistant_end|>"
    )


def test_tool_use_exact_ids(byte_chat):
    ids, mask = byte_chat.render_conversation(TOOL_USE)
    expected = [
        (BOS, 0),
        (US, 0),
        *[(b, 0) for b in b"Calculate 123 * 456"],
        (UE, 0),
        (AS, 0),
        *[(b, 1) for b in b"Let me calculate that."],
        (PS, 1),
        *[(b, 1) for b in b"123 * 456"],
        (PE, 1),
        (OS, 0),
        *[(b, 0) for b in b"56088"],
        (OE, 0),
        *[(b, 1) for b in b"The answer is 56088."],
        (AE, 1),
    ]
    assert ids == [i for i, _ in expected]
    assert mask == [m for _, m in expected]


def test_tool_use_trained_tokenizer(chat):
    ids, mask = chat.render_conversation(TOOL_USE)
    assert len(ids) == len(mask)
    assert segments(chat, ids, mask) == [
        ("<|bos|>", [0]),
        ("<|user_start|>", [0]),
        ("Calculate 123 * 456", [0]),
        ("<|user_end|>", [0]),
        ("<|assistant_start|>", [0]),
        ("Let me calculate that.", [1]),
        ("<|python_start|>", [1]),
        ("123 * 456", [1]),
        ("<|python_end|>", [1]),
        ("<|output_start|>", [0]),
        ("56088", [0]),
        ("<|output_end|>", [0]),
        ("The answer is 56088.", [1]),
        ("<|assistant_end|>", [1]),
    ]
    # special tokens sit at exactly these positions
    sp = chat.encode_special
    n_user = len(chat.encode("Calculate 123 * 456"))
    n_text = len(chat.encode("Let me calculate that."))
    n_py = len(chat.encode("123 * 456"))
    n_out = len(chat.encode("56088"))
    n_answer = len(chat.encode("The answer is 56088."))
    positions = {
        0: "<|bos|>",
        1: "<|user_start|>",
        2 + n_user: "<|user_end|>",
        3 + n_user: "<|assistant_start|>",
    }
    p = 4 + n_user + n_text
    positions[p] = "<|python_start|>"
    positions[p + 1 + n_py] = "<|python_end|>"
    positions[p + 2 + n_py] = "<|output_start|>"
    positions[p + 3 + n_py + n_out] = "<|output_end|>"
    positions[p + 4 + n_py + n_out + n_answer] = "<|assistant_end|>"
    assert len(ids) == p + 5 + n_py + n_out + n_answer
    for pos, name in positions.items():
        assert ids[pos] == sp(name), (pos, name)
    specials = set(chat.tokenizer.special_tokens.values())
    assert sorted(k for k, i in enumerate(ids) if i in specials) == sorted(positions)
    # trained: the text parts and the python call with its tags, and the end token
    assert chat.decode([i for i, m in zip(ids, mask) if m]) == (
        "Let me calculate that.<|python_start|>123 * 456<|python_end|>The answer is 56088.<|assistant_end|>"
    )
    assert chat.decode([i for i, m in zip(ids, mask) if not m]) == (
        "<|bos|><|user_start|>Calculate 123 * 456<|user_end|><|assistant_start|><|output_start|>56088<|output_end|>"
    )


def test_system_message_is_merged_into_the_first_user_message(byte_chat):
    conv = {"messages": [{"role": "system", "content": "Be brief."}, *HELLO["messages"]]}
    ids, mask = byte_chat.render_conversation(conv)
    assert ids == [BOS, US, *b"Be brief.\n\nHello!", UE, AS, *b"Hi there!", AE]
    assert conv["messages"][1]["content"] == "Hello!"  # the input is not modified
    assert mask.count(1) == len("Hi there!") + 1


def test_truncation(byte_chat):
    full_ids, full_mask = byte_chat.render_conversation(TOOL_USE, max_tokens=None)
    ids, mask = byte_chat.render_conversation(TOOL_USE, max_tokens=10)
    assert ids == full_ids[:10] and mask == full_mask[:10]
    assert byte_chat.render_conversation(TOOL_USE) == (full_ids, full_mask)  # 2048 > length
    assert byte_chat.render_conversation(TOOL_USE, max_tokens=0) == ([], [])


def test_render_for_completion(byte_chat):
    ids = byte_chat.render_for_completion(HELLO)
    assert ids == [BOS, US, *b"Hello!", UE, AS]
    # a conversation that ends with the user's turn is primed as it is
    assert byte_chat.render_for_completion({"messages": HELLO["messages"][:1]}) == ids
    multi = {
        "messages": [
            *HELLO["messages"],
            {"role": "user", "content": "Bye"},
            {"role": "assistant", "content": "Ciao"},
        ]
    }
    assert byte_chat.render_for_completion(multi) == [
        BOS,
        US,
        *b"Hello!",
        UE,
        AS,
        *b"Hi there!",
        AE,
        US,
        *b"Bye",
        UE,
        AS,
    ]
    assert len(multi["messages"]) == 4  # not modified
    # nanochat's cut: the conversation to max_tokens ids, then <|assistant_start|> (max_tokens + 1)
    cut = byte_chat.render_for_completion(multi, max_tokens=5)
    assert cut == [BOS, US, *b"Hel", AS] and len(cut) == 6


def test_render_conversations_batch_equals_single(chat, chat_lines):
    import json

    convs = [json.loads(line) for line in chat_lines[:40]] + [TOOL_USE, HELLO]
    batch = chat.render_conversations(convs, max_tokens=300, num_threads=2)
    assert batch == [chat.render_conversation(c, max_tokens=300) for c in convs]
