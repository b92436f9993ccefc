"""The chat shards (presets/chat_shards.py): ShardWriter and reading shards back."""

from __future__ import annotations

import os

import numpy as np
import pytest

from toksmith.presets.chat_shards import MANIFEST, ShardWriter, iter_rendered, read_manifest


def test_shard_writer_add_after_close_is_refused(tmp_path):
    w = ShardWriter(tmp_path, n_vocab=300, shard_size=2)
    w.add([1, 2], [0, 1], line=1)
    manifest = w.close()
    assert w.closed
    # was: accepted silently (the conversation was lost: no shard or manifest was written again)
    with pytest.raises(ValueError, match="add: this ShardWriter is closed"):
        w.add([3], [1], line=2)
    with pytest.raises(ValueError, match="flush: this ShardWriter is closed"):
        w.flush()
    assert [i.tolist() for i, _ in iter_rendered(tmp_path)] == [[1, 2]]
    assert read_manifest(tmp_path) == manifest


def test_shard_writer_close_twice_is_harmless(tmp_path):
    w = ShardWriter(tmp_path, n_vocab=300)
    w.add([1], [1])
    first = w.close({"skipped_lines": 0})
    written = (tmp_path / MANIFEST).read_bytes()
    assert w.close() == first
    assert (tmp_path / MANIFEST).read_bytes() == written
    with pytest.raises(ValueError, match="already closed, extra cannot be written"):
        w.close({"skipped_lines": 3})


def test_shard_writer_as_context_manager(tmp_path):
    with ShardWriter(tmp_path / "a", n_vocab=300) as w:
        w.add([1, 2, 3], [0, 1, 1], line=1)
    assert w.closed and read_manifest(tmp_path / "a")["conversations"] == 1
    with pytest.raises(ValueError, match="is closed"):
        w.add([4], [1])
    with pytest.raises(ValueError, match="is closed"):
        with w:
            pass
    # an error in the block: what was written is removed, and the writer is closed
    with pytest.raises(KeyError):
        with ShardWriter(tmp_path / "b", n_vocab=300, shard_size=1) as w2:
            w2.add([1], [1])
            raise KeyError("boom")
    assert w2.closed and os.listdir(tmp_path / "b") == []
    with pytest.raises(ValueError, match="is closed"):
        w2.add([1], [1])
    # closed in the block, then an error: the finished dataset stays (as a closed file would)
    with pytest.raises(KeyError):
        with ShardWriter(tmp_path / "c", n_vocab=300) as w3:
            w3.add([1, 2], [0, 1], line=1)
            w3.close()
            raise KeyError("after close")
    assert read_manifest(tmp_path / "c")["conversations"] == 1


BIG = 2**70


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
