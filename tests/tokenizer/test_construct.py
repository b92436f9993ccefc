"""Building a Tokenizer: ranks, merges, sparse ids, copies, save paths."""

import numpy as np
import pytest

import toksmith
from tests.conftest import BYTES
from toksmith import Tokenizer


class _Tagged(Tokenizer):
    def __init__(self, *args, bos="<s>", **kwargs):
        super().__init__(*args, **kwargs)
        self.bos = bos


@pytest.mark.parametrize("where", ["special", "pinned", "rank"])
@pytest.mark.parametrize("big", [2**32 - 1, 10**9, 2**20 + 257])
def test_sparse_ids_are_refused_before_any_allocation(where, big):
    # one id of 2**32-1 made the core reserve tables for every id below it: the process aborted
    # ("memory allocation of 34359738368 bytes failed"); 10**9 needed about 70 GB
    special = {"<s>": big} if where == "special" else None
    pinned = {"xyz": big} if where == "pinned" else None
    ranks = {**BYTES, b"ab": big} if where == "rank" else BYTES
    with pytest.raises(
        toksmith.VocabError, match=f"the largest token id is {big} but there are only 257 tokens"
    ):
        Tokenizer.from_ranks(ranks, "gpt2", special, pinned_tokens=pinned)


def test_ids_with_room_to_spare_still_load():
    tok = Tokenizer.from_ranks(BYTES, "gpt2", {"<s>": 2**20 + 256})
    assert tok.n_vocab == 2**20 + 257
    assert tok.encode("a<s>", allowed_special="all") == [97, 2**20 + 256]
    assert tok.decode([2**20 + 256]) == "<s>"


def test_copies_keep_subclass_and_instance_attributes():
    # the pickle carried only the tables, name and metadata: copy.copy, deepcopy and pickling
    # (multiprocessing) silently dropped what a subclass or the caller had set
    import copy
    import pickle

    tok = _Tagged(BYTES, pattern="gpt2", special_tokens={"<b>": 256}, bos="<b>", name="tagged")
    tok.note = ["kept"]
    for dup in (copy.copy(tok), copy.deepcopy(tok), pickle.loads(pickle.dumps(tok))):
        assert type(dup) is _Tagged
        assert (dup.bos, dup.note, dup.name) == ("<b>", ["kept"], "tagged")
        assert dup.encode("hi<b>", allowed_special="all") == [104, 105, 256]
    assert copy.copy(tok).note is tok.note and copy.deepcopy(tok).note is not tok.note


def test_bad_numpy_ids_are_named_as_out_of_range(cl100k):
    # a numpy integer out of range was reported as "ids must be ints, got uint64"
    tok, _ = cl100k
    with pytest.raises(
        toksmith.UnknownTokenError, match="token id 18446744073709551615 is out of range"
    ):
        tok.decode_single_token_bytes(np.uint64(2**64 - 1))
    with pytest.raises(toksmith.UnknownTokenError, match="token id 1099511627776 is out of range"):
        tok.decode(np.array([5, 2**40], dtype=np.uint64))
    with pytest.raises(toksmith.UnknownTokenError, match="token id -1 is out of range"):
        tok.decode([True, -1])
    with pytest.raises(TypeError, match=r"ids must be ints, got float \(1.5\)"):
        tok.decode([5, 1.5])


def test_save_paths_that_are_bytes_empty_or_under_a_file(tmp_path, monkeypatch):
    # was: save(b"x.json") wrote a file named "b'x.json'"; save("") said "'.tmp' -> ''"; a path under
    # a file said the folder "does not exist"
    tok = toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TypeError, match="not bytes"):
        tok.save(b"x.json")
    with pytest.raises(FileNotFoundError, match="the file name is empty"):
        tok.save("")
    (tmp_path / "afile").write_text("x")
    with pytest.raises(NotADirectoryError, match="is a file, not a folder"):
        tok.save(tmp_path / "afile" / "t.json")
    with pytest.raises(NotADirectoryError, match="is a file, not a folder"):
        tok.save_tiktoken(tmp_path / "afile" / "t.tiktoken")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
