"""tok.save / toksmith.load: versioned JSON, round trips, clear errors on bad files."""

from __future__ import annotations

import json
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toksmith
from tests.conftest import BYTES
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


@pytest.mark.parametrize(
    "attr, value, msg",
    [("name", 5, "its name must be a str"), ("metadata", [1], "its metadata must be a dict")],
)
def test_save_refuses_what_load_refuses(tmp_path, attr, value, msg):
    # was: the file was written, then load() refused it ("field 'name' must be a str or null")
    tok = Tokenizer.from_ranks(BYTES, "gpt2")
    setattr(tok, attr, value)
    with pytest.raises(TypeError, match=msg):
        tok.save(tmp_path / "t.json")
    assert not list(tmp_path.iterdir())
    tok.name, tok.metadata = None, None  # null is what load() reads back as the defaults
    tok.save(tmp_path / "t.json")
    back = toksmith.load(tmp_path / "t.json")
    assert (back.name, back.metadata) == ("toksmith", {})
    assert json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))["name"] is None


@pytest.fixture(scope="module")
def small_file(tmp_path_factory):
    """A saved tokenizer with merges, a special and a pinned token, and its JSON text."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = toksmith.train_from_iterator(
            ["hello world, hello there\n" * 30],
            vocab_size=275,
            pattern="cl100k",
            special_tokens=["<|bos|>"],
            pinned_tokens=["<tab>"],
            threads=1,
        )
    path = tmp_path_factory.mktemp("audit") / "tok.json"
    tok.save(path)
    return tok, path.read_text(encoding="utf-8")


def _write(tmp_path, text):
    p = tmp_path / "bad.json"
    p.write_text(text, encoding="utf-8")
    return p


def _duplicated(text, where):
    if where == "vocab":  # a vocab entry twice: json kept the last, so an id vanished silently
        return text.replace('"vocab": {', '"vocab": {\n  "a": 999,', 1), "'a'"
    if where == "top":  # a second special_tokens object replaced the first
        return text.rstrip().rstrip("}") + ', "special_tokens": {}}', "'special_tokens'"
    if where == "special":
        return text.replace(
            '"special_tokens": {', '"special_tokens": {"<|x|>": 5000, "<|x|>": 5001, ', 1
        ), "'<|x|>'"
    return text.replace('"metadata": {', '"metadata": {"k": 1, "k": 2, ', 1), "'k'"


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8)


@pytest.mark.parametrize("where", ["vocab", "top", "special", "metadata"])
@pytest.mark.parametrize("native", [True, False])
def test_a_key_twice_in_a_file_is_refused(small_file, tmp_path, monkeypatch, where, native):
    """Audit finding: json.loads keeps the last of a key given twice: a file with a vocab entry, a special
    token or a whole top-level field twice loaded with data silently dropped."""
    from toksmith import serialization

    if not native:
        monkeypatch.setattr(serialization, "split_json_tables", lambda *a, **k: None)
    text, key = _duplicated(small_file[1], where)
    with pytest.raises(toksmith.TokenizerFileError, match=f"the key {key} appears twice"):
        toksmith.load(_write(tmp_path, text))


def test_a_key_twice_is_reported_after_the_field_checks_on_both_paths(
    small_file, tmp_path, monkeypatch
):
    """Audit finding: The native split and the Python parse report the same first problem."""
    from toksmith import serialization

    doc = json.loads(small_file[1])
    del doc["pattern"]
    text = json.dumps(doc, indent=1).replace('"vocab": {', '"vocab": {\n "a": 999,', 1)
    path = _write(tmp_path, text)
    with pytest.raises(toksmith.TokenizerFileError, match="'pattern' is missing"):
        toksmith.load(path)
    monkeypatch.setattr(serialization, "split_json_tables", lambda *a, **k: None)
    with pytest.raises(toksmith.TokenizerFileError, match="'pattern' is missing"):
        toksmith.load(path)


def test_metadata_keys_that_are_not_str_are_refused_before_writing(tmp_path):
    """Audit finding: {1: "a", "1": "b"} was written as the key "1" twice (a reader kept one value); True and
    None keys came back as "true" and "null"."""
    tok = Tokenizer.from_ranks(BYTES, "gpt2")
    out = tmp_path / "t.json"
    for meta, key in [({1: "a", "1": "b"}, "1"), ({"x": [{True: 1}]}, "True"), ({None: 0}, "None")]:
        tok.metadata = meta
        with pytest.raises(TypeError, match=f"the key {key} in metadata.* is a .*not a str"):
            tok.save(out)
        assert not list(tmp_path.iterdir())
    tok.metadata = {"n": {"1": (1, 2)}}
    tok.save(out)
    assert toksmith.load(out).metadata == {"n": {"1": [1, 2]}}


@pytest.mark.parametrize("attr,value", [("name", "a\udcff"), ("metadata", {"note": "x\ud800"})])
def test_a_lone_surrogate_is_a_clear_error_and_writes_nothing(tmp_path, attr, value):
    """Audit finding: A lone surrogate (a str from surrogateescape'd bytes) raised UnicodeEncodeError from
    deep in the write, naming a position in a text the user never saw."""
    tok = Tokenizer.from_ranks(BYTES, "gpt2")
    setattr(tok, attr, value)
    with pytest.raises(ValueError, match="lone surrogate.*not UTF-8 text") as e:
        tok.save(tmp_path / "t.json")
    assert not isinstance(e.value, UnicodeError)
    assert not list(tmp_path.iterdir())


def test_an_empty_name_round_trips(tmp_path):
    tok = Tokenizer.from_ranks(BYTES, "gpt2")
    tok.name = ""
    tok.save(tmp_path / "t.json")
    assert toksmith.load(tmp_path / "t.json").name == ""


def test_load_of_a_bytes_path_names_the_file_as_text(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text("{", encoding="utf-8")
    with pytest.raises(toksmith.TokenizerFileError) as e:
        toksmith.load(bytes(p))
    assert str(e.value).startswith(f"{p}: not valid JSON")


@settings(max_examples=30, deadline=None)
@given(
    merges=st.lists(st.tuples(st.integers(0, 400), st.integers(0, 400)), max_size=12),
    specials=st.lists(_TEXT, max_size=3, unique=True),
    pinned=st.lists(_TEXT, max_size=2, unique=True),
    name=st.one_of(st.none(), st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)),
    meta=st.dictionaries(
        _TEXT,
        st.one_of(
            st.integers(),
            st.text(max_size=5),
            st.booleans(),
            st.none(),
            st.lists(st.integers(), max_size=3),
        ),
        max_size=3,
    ),
    pattern=st.sampled_from(
        ["gpt2", "cl100k", "o200k", "nanochat", r"\p{L}+|\p{N}|\s+|[^\s\p{L}\p{N}]+"]
    ),
)
def test_save_load_round_trips_every_attribute(
    tmp_path_factory, merges, specials, pinned, name, meta, pattern
):
    """Audit finding: Random merges, specials, pinned tokens, names and metadata: save -> load gives the same
    tokenizer (ids, merges, specials, pinned, pattern, name, metadata) and the same encoding."""
    ranks = dict(BYTES)
    toks = list(BYTES)
    merge_ids = []
    for a, b in merges:
        left, right = toks[a % len(toks)], toks[b % len(toks)]
        if left + right in ranks or len(left + right) > 12:
            continue
        merge_ids.append((ranks[left], ranks[right]))
        ranks[left + right] = len(ranks)
        toks.append(left + right)
    pinned = [p for p in pinned if p not in specials]
    added = {t: len(ranks) + k for k, t in enumerate(specials)}
    pins = {t: len(ranks) + len(added) + k for k, t in enumerate(pinned)}
    try:
        tok = Tokenizer(
            ranks,
            pattern=pattern,
            special_tokens=added,
            pinned_tokens=pins,
            merges=merge_ids,
            metadata=meta,
            name=name,
        )
    except ValueError:  # pinned tokens that overlap one another, and the like
        return
    path = tmp_path_factory.mktemp("rt") / "t.json"
    tok.save(path)
    back = toksmith.load(path)
    assert back.mergeable_ranks() == tok.mergeable_ranks() and back.merge_ids() == tok.merge_ids()
    assert (back.special_tokens, back.pinned_tokens) == (tok.special_tokens, tok.pinned_tokens)
    assert (back.pattern, back.pattern_name, back.name, back.metadata) == (
        tok.pattern,
        tok.pattern_name,
        tok.name,
        json.loads(json.dumps(tok.metadata)),
    )
    text = (
        "".join(specials + pinned)
        + " hello 123 wörld\n"
        + "".join(t.decode("latin-1") for t in toks[256:])
    )
    assert back.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")


def test_load_of_another_format_or_a_folder_points_to_load_any(tmp_path):
    # was: "not valid JSON ..." and a bare IsADirectoryError, with no word of load_any
    ranks = tmp_path / "x.tiktoken"
    ranks.write_text("IQ== 0\n")
    with pytest.raises(toksmith.TokenizerFileError, match=r"not valid JSON.*load_any\(path\)"):
        toksmith.load(ranks)
    with pytest.raises(IsADirectoryError, match=r"is a folder.*load_any\(path\)"):
        toksmith.load(tmp_path)
    truncated = tmp_path / "t.json"
    truncated.write_text('{"format": "toksmith", "vers')
    with pytest.raises(toksmith.TokenizerFileError) as info:
        toksmith.load(truncated)
    assert "load_any" not in str(info.value)  # a toksmith file cut short: no hint
