"""Properties of render_conversation for any valid conversation."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from toksmith.presets import NANOCHAT_SPECIAL_TOKENS

# plain text, now and then with special tokens' text in it (which must stay plain text)
texts = st.one_of(
    st.text(max_size=40),
    st.lists(
        st.sampled_from(
            ["Hello", " world", "!", "\n", "  ", "123", "é", "日本", "🙂", *NANOCHAT_SPECIAL_TOKENS]
        ),
        max_size=8,
    ).map("".join),
)
parts = st.lists(
    st.builds(
        lambda kind, text: {"type": kind, "text": text},
        st.sampled_from(["text", "python", "python_output"]),
        texts,
    ),
    max_size=5,
)


@st.composite
def conversations(draw):
    n = draw(st.integers(1, 6))
    messages = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(texts)})
    for k in range(n):
        if k % 2 == 0:
            messages.append({"role": "user", "content": draw(texts)})
        else:
            messages.append({"role": "assistant", "content": draw(st.one_of(texts, parts))})
    return {"messages": messages}


def expected_texts(conversation):
    """(the whole rendering as text, the trained part as text) by the seed's rules."""
    msgs = [dict(m) for m in conversation["messages"]]
    if msgs[0]["role"] == "system":
        msgs[1]["content"] = msgs[0]["content"] + "\n\n" + msgs[1]["content"]
        msgs = msgs[1:]
    whole, trained = ["<|bos|>"], []
    for m in msgs:
        c = m["content"]
        if m["role"] == "user":
            whole += ["<|user_start|>", c, "<|user_end|>"]
            continue
        whole.append("<|assistant_start|>")
        for p in [{"type": "text", "text": c}] if isinstance(c, str) else c:
            if p["type"] == "text":
                piece = p["text"]
                trained.append(piece)
            elif p["type"] == "python":
                piece = "<|python_start|>" + p["text"] + "<|python_end|>"
                trained.append(piece)
            else:
                piece = "<|output_start|>" + p["text"] + "<|output_end|>"
            whole.append(piece)
        whole.append("<|assistant_end|>")
        trained.append("<|assistant_end|>")
    return "".join(whole), "".join(trained)


@given(conversations())
def test_lengths_and_masked_text(chat, conversation):
    ids, mask = chat.render_conversation(conversation, max_tokens=None)
    assert len(ids) == len(mask)
    assert set(mask) <= {0, 1}
    assert ids[0] == chat.get_bos_token_id() and mask[0] == 0
    whole, trained = expected_texts(conversation)
    assert chat.decode(ids) == whole
    assert chat.decode([i for i, m in zip(ids, mask) if m == 1]) == trained
    # special tokens appear only where the layout puts them: as many as the text says
    specials = set(chat.tokenizer.special_tokens.values())
    n_assistant = sum(m["role"] == "assistant" for m in conversation["messages"])
    assert sum(i == chat.encode_special("<|assistant_end|>") for i in ids) == n_assistant
    assert sum(i in specials for i in ids) == sum(
        whole.count(s) for s in NANOCHAT_SPECIAL_TOKENS
    ) - sum(
        m["content"].count(s)
        if isinstance(m["content"], str)
        else sum(p["text"].count(s) for p in m["content"])
        for m in conversation["messages"]
        for s in NANOCHAT_SPECIAL_TOKENS
    )


@given(conversations(), st.integers(0, 80))
def test_truncation_keeps_prefixes(chat, conversation, k):
    ids, mask = chat.render_conversation(conversation, max_tokens=None)
    cut_ids, cut_mask = chat.render_conversation(conversation, max_tokens=k)
    assert cut_ids == ids[:k] and cut_mask == mask[:k]
    assert len(cut_ids) == min(k, len(ids))


@given(st.lists(conversations(), max_size=4), st.integers(1, 60))
def test_batch_equals_single(chat, convs, k):
    assert chat.render_conversations(convs, max_tokens=k, num_threads=1) == [
        chat.render_conversation(c, max_tokens=k) for c in convs
    ]


@given(conversations())
def test_completion_prompt(chat, conversation):
    msgs = conversation["messages"]
    prompt = chat.render_for_completion(conversation)
    assert prompt[-1] == chat.encode_special("<|assistant_start|>")
    kept = msgs[:-1] if msgs[-1]["role"] == "assistant" else msgs
    if kept and kept[-1]["role"] != "system":
        ids, _ = chat.render_conversation({"messages": kept}, max_tokens=None)
        assert prompt == ids + [chat.encode_special("<|assistant_start|>")]
