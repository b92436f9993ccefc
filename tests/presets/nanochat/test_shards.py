"""The chat shards (presets/chat_shards.py): ShardWriter and reading shards back."""

import os

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
