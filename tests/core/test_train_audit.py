"""Audit of the training API: argument edges, train_from_counts inputs, corpus reading."""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import toksmith

TEXTS = ["hello world, the quick brown fox"] * 20


def test_numpy_integers_are_taken_as_threads_and_ids_are():
    # was: TypeError for vocab_size/min_frequency/max_token_length/counts, ValueError for fixed ids
    want = toksmith.train_from_iterator(
        TEXTS,
        vocab_size=270,
        pattern="gpt2",
        special_tokens={"<a>": 269},
        min_frequency=2,
        max_token_length=4,
    )
    got = toksmith.train_from_iterator(
        TEXTS,
        vocab_size=np.int64(270),
        pattern="gpt2",
        special_tokens={"<a>": np.uint32(269)},
        min_frequency=np.int32(2),
        max_token_length=np.int64(4),
    )
    assert got.merge_ids() == want.merge_ids() and got.special_tokens == {"<a>": 269}
    assert type(got.special_tokens["<a>"]) is int
    counts = toksmith.train_from_counts(
        {"hello": np.int64(5), "help": 2}, vocab_size=260, pattern="gpt2"
    )
    assert (
        counts.merge_ids()
        == toksmith.train_from_counts(
            {"hello": 5, "help": 2}, vocab_size=260, pattern="gpt2"
        ).merge_ids()
    )
    with pytest.raises(TypeError, match="vocab_size must be an int, not bool"):
        toksmith.train_from_iterator(TEXTS, vocab_size=np.True_)
    with pytest.raises(ValueError, match="is not a valid id"):
        toksmith.train_from_iterator(TEXTS, vocab_size=270, special_tokens={"<a>": np.True_})


def test_a_set_of_special_tokens_gets_the_same_ids_in_every_run():
    # was: a set was taken in its hash order, so the ids changed from one run to the next
    code = (
        "import toksmith; print(toksmith.train_from_iterator(['ab ab'], vocab_size=262, pattern='gpt2', "
        "special_tokens={'<d>', '<b>', '<c>', '<a>'}).special_tokens)"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
        ).stdout.strip()
        for seed in (1, 2, 3)
    }
    assert outs == {
        "{'<a>': 258, '<b>': 259, '<c>': 260, '<d>': 261}"
    }  # sorted, whatever the hash seed
    tok = toksmith.train_from_iterator(
        TEXTS, vocab_size=270, pinned_tokens=frozenset({"fox", "brown"})
    )
    assert (
        tok.pinned_tokens
        == toksmith.train_from_iterator(
            TEXTS, vocab_size=270, pinned_tokens=["brown", "fox"]
        ).pinned_tokens
    )
    with pytest.raises(ValueError, match="is not a non-empty str"):
        toksmith.train_from_iterator(TEXTS, vocab_size=270, special_tokens={"<a>", 5})


def test_bad_special_token_arguments_say_what_was_wrong():
    # was: a bare UnicodeEncodeError ("'utf-8' codec can't encode") and "'int' object is not iterable"
    for kw in ({"special_tokens": ["ok", "x\ud800"]}, {"pinned_tokens": {"\udfff": 260}}):
        with pytest.raises(ValueError, match=r"_tokens: .* holds a lone surrogate \(U\+D[8F]"):
            toksmith.train_from_iterator(TEXTS, vocab_size=270, **kw)
    with pytest.raises(
        TypeError, match="special_tokens must be a list of str or a dict str -> id, not int"
    ):
        toksmith.train_from_iterator(TEXTS, vocab_size=270, special_tokens=5)


def test_many_special_tokens_are_checked_in_linear_time():
    # was: the duplicate check was quadratic (20000 specials took about 5 s)
    names = [f"<|s{i}|>" for i in range(40000)]
    tok = toksmith.train_from_iterator(
        ["ab ab"],
        vocab_size=257 + len(names),
        pattern="gpt2",
        special_tokens=names[:20000],
        pinned_tokens=names[20000:],
    )
    assert tok.n_vocab == 257 + len(names)
    with pytest.raises(ValueError, match=r"\['<\|s7\|>'\] given twice"):
        toksmith.train_from_iterator(
            ["ab"], vocab_size=300000, special_tokens=names, pinned_tokens=["<|s7|>"]
        )


def test_train_from_counts_cuts_chunks_around_pinned_tokens():
    # was: merges were learned across and into pinned tokens (b"in", b"int", b"pr"+b"int"), wasting the vocabulary
    kw = dict(vocab_size=270, pattern="gpt2", pinned_tokens=["int", "in"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = toksmith.train_from_counts({"int x": 100, b"printing": 50}, **kw)
        want = toksmith.train_from_iterator(["int x"] * 100 + ["printing"] * 50, **kw)
    assert got.merge_ids() == want.merge_ids()
    assert not any(b"in" in t for t in got.mergeable_ranks() if len(t) > 1)


def test_train_from_counts_malformed_inputs_are_named():
    # was: "too many values to unpack", "not enough values to unpack", a bare UnicodeEncodeError
    for counts, match in (
        ("hello", "not str"),
        (None, "not NoneType"),
        (["hello", "world"], "an item is 'hello'"),
        ([("hello", 5, 1)], r"an item is \('hello', 5, 1\)"),
    ):
        with pytest.raises(
            TypeError, match="counts must be a dict {chunk: count} or an iterable of .*" + match
        ):
            toksmith.train_from_counts(counts, vocab_size=260)
    with pytest.raises(
        ValueError, match=r"chunk 'he\\ud800' holds a lone surrogate \(U\+D800 at index 2\)"
    ):
        toksmith.train_from_counts({"he\ud800": 3}, vocab_size=260)
    # generators of pairs and lists of lists stay accepted; repeated chunks add up
    a = toksmith.train_from_counts(
        (p for p in [["hello", 3], ("hello", 4), ("help", 5)]), vocab_size=261, pattern="gpt2"
    )
    assert (
        a.merge_ids()
        == toksmith.train_from_counts(
            {"hello": 7, "help": 5}, vocab_size=261, pattern="gpt2"
        ).merge_ids()
    )


def test_empty_corpus_messages_name_the_cause():
    # was: "the split pattern ... found no non-empty piece ... pass ... pattern=\"cl100k\"" even with cl100k
    with pytest.raises(
        toksmith.EmptyCorpusError, match="the 9 bytes of the corpus are all pinned tokens"
    ):
        toksmith.train_from_iterator(["<p><p><p>"], vocab_size=260, pinned_tokens=["<p>"])
    # was: a misspelt pattern name read as a regex without a word about it (now refused up front)
    with pytest.raises(toksmith.PatternError, match="'CL100K' is no pattern name"):
        toksmith.train_from_iterator(["hello"], vocab_size=260, pattern="CL100K")
    # was: "'NoneType' object is not iterable" / "'int' object is not iterable"
    with pytest.raises(TypeError, match="texts must be an iterable of str, not NoneType"):
        toksmith.train_from_iterator(None, vocab_size=260)
    with pytest.raises(TypeError, match="paths must be str or os.PathLike .*, not int"):
        toksmith.train(5, vocab_size=260)


def test_jsonl_with_a_byte_order_mark(tmp_path):
    # was: ValueError "not valid JSON: Unexpected UTF-8 BOM" on line 1
    p = tmp_path / "bom.jsonl"
    p.write_bytes('\ufeff{"text": "hello world"}\n{"text": "hello there"}\n'.encode())
    tok = toksmith.train(p, vocab_size=262, pattern="gpt2")
    assert (
        tok.merge_ids()
        == toksmith.train_from_iterator(
            ["hello world", "hello there"], vocab_size=262, pattern="gpt2"
        ).merge_ids()
    )


def test_an_unreadable_subfolder_is_an_error_not_skipped(tmp_path, monkeypatch):
    # was: os.walk skipped a folder it could not list, silently training on less
    (tmp_path / "a.txt").write_text("hello world\n", encoding="utf-8")
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "b.txt").write_text("more text\n", encoding="utf-8")
    scandir = os.scandir

    def refusing(path="."):
        if os.fspath(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    with pytest.raises(
        PermissionError, match="cannot read the folder .*locked.* fix its permissions"
    ):
        toksmith.train(tmp_path, vocab_size=260)


def test_progress_bar_ends_where_the_corpus_ran_out(capsys):
    # was: the merging bar stayed at 0/44 when the corpus ran out of pairs after 9 merges
    with pytest.warns(UserWarning, match="ran out of pairs"):
        toksmith.train_from_iterator(
            ["hello world"] * 5, vocab_size=300, pattern="gpt2", progress=True
        )
    err = capsys.readouterr().err
    assert "merging" in err and "9/44" in err
