"""Terminal and HTML views of rendered conversations."""

from __future__ import annotations

import re

import numpy as np
import pytest

from toksmith.presets import chat_render

from .test_golden import TOOL_USE

ANSI = re.compile(r"\033\[[0-9;]*m")


def test_terminal_colours_follow_the_mask(chat):
    ids, mask = chat.render_conversation(TOOL_USE)
    out = chat.visualize_tokenization(ids, mask)
    assert ANSI.sub("", out) == chat.decode(ids)  # no newline in this conversation
    # one coloured span per token, green shades (22, 28) for mask 1, red (52, 88) for mask 0
    spans = re.findall(r"\033\[97;48;5;(\d+)m(?:\033\[1m)?(.*?)\033\[0m", out)
    assert len(spans) == len(ids)
    for k, ((bg, text), m) in enumerate(zip(spans, mask)):
        assert bg == (("22", "28") if m else ("52", "88"))[k % 2]
        assert text == chat.tokenizer.decode_single_token_bytes(ids[k]).decode(
            "utf-8", "backslashreplace"
        )
    # specials are bold
    assert out.count("\033[1m") == sum(
        i in set(chat.tokenizer.special_tokens.values()) for i in ids
    )


def test_terminal_with_ids_and_plain(chat):
    ids, mask = chat.render_conversation({"messages": [{"role": "user", "content": "a\nb"}]})
    out = chat.visualize_tokenization(ids, mask, with_token_id=True)
    for i in ids:
        assert f"({i})" in ANSI.sub("", out)
    plain = chat.visualize_tokenization(ids, mask, color=False)
    assert "\033" not in plain
    assert plain.count("|") >= len(ids) - 1
    assert chat.visualize_tokenization(ids, mask, color=False, sep="").replace(
        "↵", ""
    ) == chat.decode(ids)
    assert chat.visualize_tokenization(ids, None, color=False) == plain
    with pytest.raises(ValueError, match="differ in length"):
        chat.visualize_tokenization(ids, mask[:-1])


def test_partial_utf8_is_escaped(byte_chat):
    ids = list("é".encode())
    assert chat_render.token_pieces(byte_chat.tokenizer, ids) == [
        ("\\xc3", False),
        ("\\xa9", False),
    ]


def test_html_escapes(chat):
    conv = {
        "messages": [
            {"role": "user", "content": '<script>alert("x")</script> & co'},
            {"role": "assistant", "content": "a < b > c"},
        ]
    }
    ids, mask = chat.render_conversation(conv)
    page = chat.visualize_html(ids, mask, with_token_id=True, title="<title>")
    assert "<script>" not in page
    assert "&lt;|bos|&gt;" in page and "<|bos|>" not in page
    assert "&lt;title&gt;" in page
    body = page.split('<div class="toks">', 1)[1]
    # the tokens' text, with tags and ids stripped, is the escaped rendering
    import html

    text = re.sub(r'<span class="id">\d+</span>', "", body)
    text = re.sub(r"<[^>]+>", "", text).replace("↵", "")
    assert html.unescape(text).strip() == chat.decode(ids)
    n1 = body.count('class="m1 ')
    n0 = body.count('class="m0 ')
    assert (n1, n0) == (sum(mask), len(mask) - sum(mask))
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")


def test_visualize_refuses_str_floats_bools_and_bad_masks(byte_chat):
    with pytest.raises(TypeError, match="ids must be a list of ints, not str"):
        byte_chat.visualize_tokenization("104")
    with pytest.raises(TypeError, match="mask must be a list of ints, not str"):
        byte_chat.visualize_tokenization([104, 105, 106, 107], "0101")
    with pytest.raises(TypeError, match="float"):
        byte_chat.visualize_tokenization([104.7])
    with pytest.raises(TypeError, match="bool"):
        byte_chat.visualize_html([True])
    with pytest.raises(ValueError, match="only 0"):
        byte_chat.visualize_tokenization([104], [2])
    with pytest.raises(TypeError, match="sep"):
        byte_chat.visualize_tokenization([104], sep=5)
    with pytest.raises(TypeError, match="title"):
        byte_chat.visualize_html([104], title=None)
    with pytest.raises(TypeError, match="heading"):
        chat_render.html_section(byte_chat.tokenizer, 5, [104])


def test_visualize_numpy_inputs(byte_chat):
    ids = np.array([104, 105], dtype=np.uint16)
    assert byte_chat.visualize_tokenization(ids, np.array([True, False]), color=False) == "h|i"
    assert byte_chat.visualize_tokenization([np.int64(104)], [np.uint8(1)], color=False) == "h"
