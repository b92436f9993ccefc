"""Defects found by the audit of the nanochat preset: argument types (numpy integers accepted,
bools / str / None refused with TypeError), huge numbers, batch and visualisation inputs, the
shard writer's consistency, truncation of long conversations, and the CLI on adversarial
lines."""

from __future__ import annotations

import json
import os
import time

import numpy as np
import pytest

from toksmith.cli import eval as tok_eval
from toksmith.cli import main
from toksmith.presets import chat_render
from toksmith.presets.chat_shards import ShardWriter, iter_rendered, read_manifest
from toksmith.presets.nanochat import SPLIT_PATTERN, ChatTokenizer, RustBPETokenizer, train

U = {"role": "user", "content": "hi"}
A = {"role": "assistant", "content": "yo"}
BIG = 2**70


# ---------------------------------------------------------------- argument types


def test_numpy_integers_accepted(byte_chat):
    bos = byte_chat.get_bos_token_id()
    assert byte_chat.encode("a", prepend=np.int64(bos)) == [bos, 97]
    assert byte_chat.decode([np.int64(104), np.uint16(105)]) == "hi"
    assert byte_chat.id_to_token(np.int32(104)) == "h"
    full, full_mask = byte_chat.render_conversation([U, A], max_tokens=None)
    assert byte_chat.render_conversation([U, A], max_tokens=np.int64(3)) == (
        full[:3],
        full_mask[:3],
    )
    assert byte_chat.render_for_completion([U, A], max_tokens=np.int64(3))[
        -1
    ] == byte_chat.encode_special("<|assistant_start|>")
    assert byte_chat.encode(["a", "b"], num_threads=np.int64(2)) == [[97], [98]]
    assert byte_chat.render_conversations([[U, A]], num_threads=np.int64(1)) == [(full, full_mask)]


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
    assert byte_chat.render_conversation([U, A], max_tokens=BIG) == byte_chat.render_conversation(
        [U, A], None
    )


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


# ---------------------------------------------------------------- conversations


@pytest.mark.parametrize("conversations", [{"messages": [U, A]}, "abc", None, 5])
def test_render_conversations_refuses_a_single_conversation(byte_chat, conversations):
    with pytest.raises(TypeError, match="conversations must be a list"):
        byte_chat.render_conversations(conversations)


def test_render_conversations_type_error_names_the_conversation(byte_chat):
    with pytest.raises(TypeError, match=r"conversation 1: conversation must be a dict"):
        byte_chat.render_conversations([[U, A], None])


def test_render_for_completion_max_tokens(byte_chat):
    with pytest.raises(ValueError, match=">= 1"):
        byte_chat.render_for_completion([U, A], max_tokens=0)
    start = byte_chat.encode_special("<|assistant_start|>")
    full = byte_chat.render_for_completion([U, A])
    for k in range(1, len(full) + 3):
        ids = byte_chat.render_for_completion([U, A], max_tokens=k)
        assert (
            len(ids) == min(k, len(full)) and ids[-1] == start and ids[:-1] == full[: len(ids) - 1]
        )


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


def test_long_conversation_cut_encodes_only_its_start(byte_chat):
    chat = ChatTokenizer(byte_chat.tokenizer)
    counting = _CountingTokenizer(byte_chat.tokenizer)
    chat.tokenizer = counting
    conv = [U, A] * 20000
    ids, mask = chat.render_conversation(conv, max_tokens=32)
    assert len(ids) == len(mask) == 32 and counting.calls <= 32
    counting.calls = 0
    assert (
        chat.render_conversations([conv], max_tokens=32) == [(ids, mask)] and counting.calls <= 32
    )


# ---------------------------------------------------------------- visualisation


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


# ---------------------------------------------------------------- shards


def test_shard_writer_refuses_inconsistent_conversations(tmp_path):
    w = ShardWriter(tmp_path, n_vocab=300)
    with pytest.raises(ValueError, match="differ in length"):
        w.add([1, 2, 3], [1])
    with pytest.raises(ValueError, match="70000 is out of range"):
        w.add([70000], [1])
    with pytest.raises(ValueError, match="-1 is out of range"):
        w.add([-1], [1])
    with pytest.raises(ValueError, match="mask value 2"):
        w.add([1], [2])
    with pytest.raises(TypeError, match="not str"):
        w.add("12", [1, 1])
    w.add([5, 6], [0, 1], line=3)
    assert w.close()["tokens"] == 2
    assert [(i.tolist(), m.tolist()) for i, m in iter_rendered(tmp_path)] == [([5, 6], [0, 1])]


def test_shard_writer_numpy_inputs_and_counts(tmp_path):
    w = ShardWriter(tmp_path, n_vocab=np.int64(300), shard_size=np.int64(10))
    for _ in range(300):  # 300 trained tokens: more than a uint8 sum could hold
        w.add(np.array([7], dtype=np.int64), np.array([1], dtype=np.uint8), line=np.int64(1))
    w.add(np.array([8, 9]), np.array([True, False]))
    manifest = w.close()
    assert manifest["trained_tokens"] == 301 and type(manifest["trained_tokens"]) is int
    assert read_manifest(tmp_path)["tokens"] == 302


@pytest.mark.parametrize(
    "kw, err",
    [
        ({"n_vocab": True}, TypeError),
        ({"n_vocab": BIG}, ValueError),
        ({"n_vocab": None}, TypeError),
        ({"n_vocab": 300, "shard_size": True}, TypeError),
    ],
)
def test_shard_writer_argument_checks(tmp_path, kw, err):
    with pytest.raises(err):
        ShardWriter(tmp_path, **kw)


# ---------------------------------------------------------------- command line


def test_chat_cli_deeply_nested_json_line(capsys, tmp_path, chat_path):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"messages": [U, A]}) + "\n" + "[" * 100000 + "]" * 100000 + "\n")
    assert main(["chat", "show", str(path), "-t", str(chat_path), "--color", "never"]) == 1
    assert "2: JSON nested too deeply" in capsys.readouterr().err
    out = tmp_path / "out"
    assert (
        main(
            [
                "chat",
                "render",
                str(path),
                "-t",
                str(chat_path),
                "-o",
                str(out),
                "--skip-bad",
                "--no-progress",
            ]
        )
        == 0
    )
    assert read_manifest(out)["conversations"] == 1 and read_manifest(out)["skipped_lines"] == 1


def test_eval_huge_max_bytes_and_bad_chunks(capsys, tmp_path, byte_chat, chat_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world\n" * 10)
    assert tok_eval.read_corpus(str(corpus), BIG) == "hello world\n" * 10
    assert (
        main(
            [
                "eval",
                "-t",
                str(chat_path),
                "--corpus",
                f"c={corpus}",
                "--max-bytes",
                str(BIG),
                "--json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)[0]["bytes"] == 120
    with pytest.raises(TypeError):
        tok_eval.read_corpus(str(corpus), True)
    start = time.perf_counter()
    for bad in (0, -3):  # a non-positive chunk size looped forever on text with newlines
        with pytest.raises(ValueError, match="chunk_chars"):
            tok_eval.count_tokens(byte_chat.tokenizer, "ab\ncd\nef", chunk_chars=bad)
    assert time.perf_counter() - start < 1
    assert tok_eval.count_tokens(byte_chat.tokenizer, "ab\ncd\nef", chunk_chars=1) == 8
    assert os.path.exists(corpus)
