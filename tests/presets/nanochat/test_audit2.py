"""Defects found by the second audit of the nanochat preset: ``chat show --html`` onto its own
input, lone surrogates from JSON escapes, ``--overwrite`` with a missing input, corrupt
rendered folders, dicts and sets taken as token ids, and bad training sources."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from toksmith.cli import main
from toksmith.presets.chat_shards import MANIFEST, ShardWriter, iter_rendered, read_manifest
from toksmith.presets.nanochat import ChatTokenizer, train

CONV = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def conv_file(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(CONV) + "\n", encoding="utf-8")
    return path


# ---------------------------------------------------------------- chat show --html


def test_html_onto_the_input_is_refused(capsys, conv_file, chat_path, monkeypatch):
    # was: the input was truncated before it was read: "wrote 0 conversation(s)", exit 0, input lost
    before = conv_file.read_bytes()
    code, _, err = run(capsys, "chat", "show", conv_file, "-t", chat_path, "--html", conv_file)
    assert code == 1 and "is the input file" in err and "Traceback" not in err
    assert conv_file.read_bytes() == before
    with open(conv_file, "rb") as stdin:  # the same file behind stdin
        monkeypatch.setattr("sys.stdin", type("S", (), {"buffer": stdin, "fileno": stdin.fileno})())
        code, _, err = run(capsys, "chat", "show", "-", "-t", chat_path, "--html", conv_file)
    assert code == 1 and "is the input file" in err
    assert conv_file.read_bytes() == before


def test_html_onto_the_tokenizer_is_refused(capsys, tmp_path, conv_file, chat_path):
    # was: the tokenizer file was replaced by the HTML page, exit 0
    tok = tmp_path / "tok.json"
    tok.write_bytes(chat_path.read_bytes())
    code, _, err = run(capsys, "chat", "show", conv_file, "-t", tok, "--html", tok)
    assert code == 1 and "is the tokenizer file" in err
    assert tok.read_bytes() == chat_path.read_bytes()


def test_html_empty_name_is_an_error(capsys, conv_file, chat_path):
    # was: --html "" was taken as no --html: the terminal view was printed, exit 0
    code, out, err = run(capsys, "chat", "show", conv_file, "-t", chat_path, "--html", "")
    assert code == 1 and "file name is empty" in err and out == ""


def test_html_not_half_written_on_a_bad_line(capsys, tmp_path, chat_path):
    # was: a malformed line left a half HTML page behind (and replaced an earlier good page)
    src = tmp_path / "c.jsonl"
    src.write_text(json.dumps(CONV) + "\n{oops\n", encoding="utf-8")
    page = tmp_path / "page.html"
    page.write_text("earlier page", encoding="utf-8")
    code, _, err = run(capsys, "chat", "show", src, "-t", chat_path, "--html", page)
    assert code == 1 and f"{src}:2: not valid JSON" in err
    assert page.read_text(encoding="utf-8") == "earlier page"
    assert sorted(os.listdir(tmp_path)) == ["c.jsonl", "page.html"]


# ---------------------------------------------------------------- lone surrogates


def test_lone_surrogate_escape_is_a_malformed_line(capsys, tmp_path, chat_path):
    # was: a "\ud800" escape in a conversation was silently rendered as U+FFFD
    src = tmp_path / "c.jsonl"
    bad = '{"messages": [{"role": "user", "content": "a\\ud800"}, {"role": "assistant", "content": "b"}]}'
    pair = '{"messages": [{"role": "user", "content": "\\ud83d\\ude00"}, {"role": "assistant", "content": "b"}]}'
    src.write_text(json.dumps(CONV) + "\n" + bad + "\n" + pair + "\n", encoding="utf-8")
    code, _, err = run(
        capsys, "chat", "show", src, "-t", chat_path, "--color", "never", "--index", 1
    )
    assert code == 1 and f"{src}:2: a string holds a lone surrogate (U+D800" in err
    out_dir = tmp_path / "out"
    code, _, err = run(
        capsys, "chat", "render", src, "-t", chat_path, "-o", out_dir, "--skip-bad", "--no-progress"
    )
    assert code == 0, err
    manifest = read_manifest(out_dir)
    assert manifest["conversations"] == 2 and manifest["skipped_line_numbers"] == [2]
    pair_ids = list(iter_rendered(out_dir))[1][0].tolist()
    assert "\U0001f600" in ChatTokenizer.load(chat_path).decode(
        pair_ids
    )  # a valid surrogate pair still renders


# ---------------------------------------------------------------- chat render --overwrite


def test_overwrite_with_a_missing_input_keeps_the_earlier_render(
    capsys, tmp_path, conv_file, chat_path
):
    # was: --overwrite deleted the earlier shards and manifest, then failed on the missing input
    out_dir = tmp_path / "out"
    assert (
        run(capsys, "chat", "render", conv_file, "-t", chat_path, "-o", out_dir, "--no-progress")[0]
        == 0
    )
    code, _, err = run(
        capsys,
        "chat",
        "render",
        tmp_path / "missing.jsonl",
        "-t",
        chat_path,
        "-o",
        out_dir,
        "--overwrite",
        "--no-progress",
    )
    assert code == 1 and "missing.jsonl" in err
    assert sorted(os.listdir(out_dir)) == [MANIFEST, "shard_00000.npz"]
    assert read_manifest(out_dir)["conversations"] == 1


# ---------------------------------------------------------------- corrupt rendered folders


@pytest.fixture()
def rendered(tmp_path):
    out = tmp_path / "r"
    w = ShardWriter(out, n_vocab=300)
    w.add([1, 2, 3], [0, 1, 1], line=1)
    w.close()
    return out


@pytest.mark.parametrize(
    "text",
    [
        "[1, 2]",
        "{bad",
        '{"format": "toksmith-chat-shards"}',
        '{"format": "toksmith-chat-shards", "shards": "abc"}',
        '{"format": "toksmith-chat-shards", "shards": [{"x": 1}]}',
        '{"format": "toksmith-chat-shards", "shards": [{"file": "../../x.npz"}]}',
    ],
)
def test_corrupt_manifest_is_a_value_error(rendered, text):
    # was: AttributeError / KeyError / TypeError, or a JSONDecodeError not naming the file
    (rendered / MANIFEST).write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match="manifest.json"):
        list(iter_rendered(rendered))


def test_manifest_not_utf8_names_the_file(rendered):
    # was: a bare UnicodeDecodeError naming no file
    (rendered / MANIFEST).write_bytes(b"\xff\xfe{}")
    with pytest.raises(ValueError, match=r"manifest.json is not a toksmith-chat-shards manifest"):
        read_manifest(rendered)


def test_corrupt_shard_is_a_value_error(rendered):
    # was: zipfile.BadZipFile / KeyError, or silently misaligned ids and mask
    shard = rendered / "shard_00000.npz"
    good = shard.read_bytes()
    shard.write_bytes(good[: len(good) // 2])
    with pytest.raises(ValueError, match="shard_00000.npz is not a rendered shard"):
        list(iter_rendered(rendered))
    np.savez(shard, ids=np.array([1, 2]), mask=np.array([1, 1]))
    with pytest.raises(ValueError, match="shard_00000.npz is not a rendered shard"):
        list(iter_rendered(rendered))
    np.savez(shard, ids=np.array([1, 2]), mask=np.array([1]), offsets=np.array([0, 2]))
    with pytest.raises(ValueError, match="not a consistent rendered shard"):
        list(iter_rendered(rendered))
    shard.write_bytes(good)
    assert [(i.tolist(), m.tolist()) for i, m in iter_rendered(rendered)] == [
        ([1, 2, 3], [0, 1, 1])
    ]


# ---------------------------------------------------------------- ids of the wrong type


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


def test_shard_writer_refuses_dict_and_set(tmp_path):
    # was: a dict or set was stored as its keys, so a conversation's ids could come back reordered
    w = ShardWriter(tmp_path, n_vocab=300)
    with pytest.raises(TypeError, match="ids must be a list of ints, not set"):
        w.add({3, 1, 2}, [0, 1, 1])
    with pytest.raises(TypeError, match="mask must be a list of ints, not dict"):
        w.add([1, 2], {0: 1, 1: 1})
    w.add(range(3), (0, 1, 1), line=1)
    w.close()
    assert [(i.tolist(), m.tolist()) for i, m in iter_rendered(tmp_path)] == [
        ([0, 1, 2], [0, 1, 1])
    ]


# ---------------------------------------------------------------- training sources


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
