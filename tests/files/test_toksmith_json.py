"""tok.save / toksmith.load: versioned JSON, round trips, clear errors on bad files."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toksmith
from toksmith import Tokenizer


@pytest.fixture(scope="module")
def trained(corpus_slices):
    return toksmith.train_from_iterator(
        list(corpus_slices.values()),
        vocab_size=700,
        pattern="o200k",
        special_tokens=["<|bos|>", "<|eos|>"],
        pinned_tokens=["<tab>"],
    )


def test_round_trip(trained, tmp_path, corpus_slices):
    p = tmp_path / "tok.json"
    trained.save(p)
    data = json.loads(p.read_text(encoding="utf-8"))
    assert data["format"] == "toksmith" and data["version"] == 1 and data["pattern_name"] == "o200k"
    assert data["metadata"]["corpus"]["bytes"] > 0
    back = toksmith.load(p)
    assert back.mergeable_ranks() == trained.mergeable_ranks()
    assert back.merges() == trained.merges()
    assert (
        back.special_tokens == trained.special_tokens
        and back.pinned_tokens == trained.pinned_tokens
    )
    text = corpus_slices["javascript"][:5000] + "<tab><|bos|>"
    assert back.encode(text, allowed_special="all") == trained.encode(text, allowed_special="all")
    assert Tokenizer.load(p).n_vocab == trained.n_vocab


def test_ranks_only_tokenizer_recovers_merges(cl100k_ranks, tmp_path):
    tok = Tokenizer.from_ranks(cl100k_ranks, "cl100k")
    merges = tok.merges()
    assert len(merges) == len(cl100k_ranks) - 256
    assert merges[0] == (b" ", b" ") and all(
        cl100k_ranks[a + b] == 256 + k for k, (a, b) in enumerate(merges[:1000])
    )
    p = tmp_path / "cl.json"
    tok.save(p)
    assert toksmith.load(p).encode("hello world") == [15339, 1917]


def test_unrecoverable_merges_raise_and_still_save(tmp_path):
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"abc"] = 256  # not the merge of two lower-ranked tokens
    tok = Tokenizer.from_ranks(ranks, "gpt2")
    # like tiktoken: a piece that is itself a token is found whole; otherwise BPE cannot reach it
    import tiktoken

    enc = tiktoken.Encoding("odd", pat_str=tok.pattern, mergeable_ranks=ranks, special_tokens={})
    assert tok.encode("abc") == enc.encode("abc") == [256]
    assert tok.encode("xabc") == enc.encode("xabc") == [120, 97, 98, 99]
    with pytest.raises(toksmith.MergesError, match="not the merge of two"):
        tok.merges()
    tok.save(tmp_path / "t.json")
    assert toksmith.load(tmp_path / "t.json").mergeable_ranks() == ranks


def test_bad_files(trained, tmp_path):
    p = tmp_path / "tok.json"
    trained.save(p)
    good = json.loads(p.read_text(encoding="utf-8"))
    raw = p.read_text(encoding="utf-8")

    def write(obj_or_text):
        q = tmp_path / "bad.json"
        q.write_text(
            obj_or_text if isinstance(obj_or_text, str) else json.dumps(obj_or_text),
            encoding="utf-8",
        )
        return q

    cases = [
        (raw[: len(raw) // 2], "not valid JSON"),
        ({**good, "version": 99}, "unsupported file version 99"),
        ({**good, "format": "other"}, "not a toksmith tokenizer"),
        ({k: v for k, v in good.items() if k != "vocab"}, "'vocab' is missing"),
        ({**good, "vocab": {**good["vocab"], "zzzq": 5}}, "id 5 is given to both"),
        ({**good, "merges": good["merges"][:-1]}, "inconsistent"),
        ({**good, "merges": ["a Ġnope"] + good["merges"][1:]}, "not in the vocab"),
        ({**good, "special_tokens": {"<x>": 3}}, "inconsistent tokenizer"),
        ({**good, "pattern": "(bad"}, "inconsistent tokenizer"),
        ([1, 2], "JSON object"),
        ({**good, "name": 5}, "'name' must be a str or null, not int"),
        ({**good, "metadata": "x"}, "'metadata' must be a dict or null, not str"),
    ]
    for content, msg in cases:
        with pytest.raises(toksmith.TokenizerFileError, match=msg):
            toksmith.load(write(content))
    with pytest.raises(OSError):
        toksmith.load(tmp_path / "missing.json")
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe")
    with pytest.raises(ValueError, match="UTF-8"):
        toksmith.load(tmp_path / "bin.json")


def _same_tokenizer(a, b, text):
    assert type(a) is type(b)
    assert a.mergeable_ranks() == b.mergeable_ranks() and list(a.mergeable_ranks()) == list(
        b.mergeable_ranks()
    )
    assert a.merges() == b.merges()
    assert (a.pattern, a.pattern_name, a.name, a.metadata) == (
        b.pattern,
        b.pattern_name,
        b.name,
        b.metadata,
    )
    assert a.special_tokens == b.special_tokens and a.pinned_tokens == b.pinned_tokens
    assert a.encode(text, allowed_special="all") == b.encode(text, allowed_special="all")


def test_pickle_round_trip(trained, corpus_slices):
    """A pickle rebuilds the same tokenizer (tables, pattern, specials, pinned, name, metadata),
    for every protocol, and copy/deepcopy give working copies."""
    import copy
    import pickle

    text = corpus_slices["python"][:4000] + "<tab><|bos|> x<|eos|>"
    for proto in range(2, pickle.HIGHEST_PROTOCOL + 1):
        _same_tokenizer(trained, pickle.loads(pickle.dumps(trained, protocol=proto)), text)
    _same_tokenizer(trained, copy.deepcopy(trained), text)
    _same_tokenizer(trained, copy.copy(trained), text)


def test_pickle_keeps_a_custom_pattern_and_a_ranks_only_table(cl100k_ranks):
    import pickle

    tok = Tokenizer.from_ranks(
        cl100k_ranks, r"\p{L}+|\p{N}|\s+|[^\s\p{L}\p{N}]+", {"<|end|>": 100300}
    )
    back = pickle.loads(pickle.dumps(tok))
    assert back.pattern_name is None
    text = "Grüße 2024, ünïcödé!<|end|>"
    _same_tokenizer(tok, back, text)


def test_pickled_tokenizer_encodes_in_spawned_worker_processes(trained, corpus_slices):
    """The use pickling is for: a pool of fresh processes (``spawn``: nothing is inherited, so
    the tokenizer really travels as a pickle) encodes like the parent."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    docs = [
        corpus_slices[k][i * 700 : (i + 1) * 700] for k in sorted(corpus_slices) for i in range(2)
    ]
    with ProcessPoolExecutor(
        max_workers=2, mp_context=multiprocessing.get_context("spawn")
    ) as pool:
        got = list(pool.map(trained.encode_ordinary, docs))
    assert got == [trained.encode_ordinary(d) for d in docs]


def test_unpickling_checks_the_tables(trained):
    """Unpickling goes through the constructor: doctored tables are refused like bad arguments,
    unreadable ones with a ValueError, and only Tokenizer classes are built."""
    import marshal

    from toksmith.tokenizer import _unpickle

    cls, state = trained.__reduce__()[1]
    assert cls is Tokenizer
    ranks, pattern, specials, pinned, merges = marshal.loads(state["tables"])
    doctored = marshal.dumps((ranks, pattern, {"<|x|>": 0}, pinned, merges))  # id 0 is the byte 0
    with pytest.raises(ValueError):
        _unpickle(cls, dict(state, tables=doctored))
    with pytest.raises(ValueError, match="do not read back"):
        _unpickle(cls, dict(state, tables=b"\x00garbage"))
    with pytest.raises(TypeError, match="not a pickled"):
        _unpickle(dict, state)
    with pytest.raises(TypeError, match="not a pickled"):
        _unpickle(cls, {"mergeable_ranks": ranks})


def test_repeated_unpickling_shares_the_core_not_the_mutable_parts(trained):
    """``executor.map(tok.encode, docs)`` pickles the tokenizer with every item: the second and
    later copies in a process reuse the first one's core; each still has its own name,
    metadata and special-token dict."""
    import pickle

    blob = pickle.dumps(trained)
    a, b = pickle.loads(blob), pickle.loads(blob)
    assert a._core is b._core and a is not b
    a.metadata["note"] = "changed"
    a.name = "renamed"
    a.special_tokens["<|bos|>"] = -1  # a copy: changes nothing
    assert "note" not in b.metadata and b.name == trained.name
    assert b.special_tokens == trained.special_tokens
    assert b.encode("<|bos|>x", allowed_special="all") == trained.encode(
        "<|bos|>x", allowed_special="all"
    )
    assert pickle.loads(pickle.dumps(a)).name == "renamed"


@given(token=st.binary(max_size=40))
def test_byte_level_spelling_round_trips(token):
    """Every byte sequence has a spelling in the byte-level alphabet (one character per byte,
    the same as the character-by-character table) and reads back exactly."""
    from toksmith.bytelevel import BYTE_TO_CHAR, str_to_token, token_to_str

    s = token_to_str(token)
    assert s == "".join(BYTE_TO_CHAR[b] for b in token)
    assert str_to_token(s) == token


@given(prefix=st.binary(max_size=5), bad=st.characters(), suffix=st.binary(max_size=5))
def test_byte_level_spelling_rejects_characters_outside_the_alphabet(prefix, bad, suffix):
    from toksmith.bytelevel import CHAR_TO_BYTE, str_to_token, token_to_str

    s = token_to_str(prefix) + bad + token_to_str(suffix)
    if bad in CHAR_TO_BYTE:
        assert str_to_token(s) == prefix + bytes([CHAR_TO_BYTE[bad]]) + suffix
    else:
        with pytest.raises(ValueError, match="not a character of the byte-level alphabet") as e:
            str_to_token(s)
        assert repr(bad) in str(e.value)


def test_unpickled_tables_cache_is_bounded():
    """Distinct tokenizers unpickled in one process: only the last few cores are kept."""
    import pickle

    from toksmith import tokenizer as tkmod

    base = {bytes([b]): b for b in range(256)}
    toks = [
        Tokenizer.from_ranks({**base, b"ab" + bytes([65 + k]): 256}, "gpt2")
        for k in range(tkmod._UNPICKLED_MAX + 2)
    ]
    backs = [pickle.loads(pickle.dumps(t)) for t in toks]
    assert len(tkmod._UNPICKLED) <= tkmod._UNPICKLED_MAX
    for t, b in zip(toks, backs):
        assert b.mergeable_ranks() == t.mergeable_ranks()
        assert b.encode("xabC abD") == t.encode("xabC abD")


def test_metadata_that_is_not_strict_json_is_refused_before_writing(tmp_path):
    """NaN was written as the non-standard token NaN (other JSON readers refuse the file), a Path
    left a bare TypeError; both now say what to keep in the metadata, and no file is written."""
    import math
    import pathlib

    tok = toksmith.train_from_iterator(["hello world"] * 5, vocab_size=262, pattern="gpt2")
    out = tmp_path / "t.json"
    for bad, exc in [
        (math.nan, ValueError),
        (-math.inf, ValueError),
        (pathlib.Path("x"), TypeError),
        ({1}, TypeError),
    ]:
        tok.metadata["score"] = bad
        with pytest.raises(exc, match="cannot save the tokenizer as JSON.*metadata"):
            tok.save(out)
        assert not out.exists() and not list(tmp_path.iterdir())
    tok.metadata["score"] = 0.5
    tok.save(out)
    assert toksmith.load(out).metadata["score"] == 0.5
