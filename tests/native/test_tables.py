"""The native table readers (``toksmith_core::vocab_files``) against the Python references.

Each reader has a native pass that either returns exactly what the reference returns or
declines (``None``), after which the reference runs and reports the problem. These tests check
both halves: equal results on real files and on random corruptions of small ones, and that
the native pass declines every input the reference rejects.
"""

import base64
import contextlib
import json
import types

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toksmith
from tests.helpers import CL100K_TIKTOKEN, GPT2_ENCODER, GPT2_TIKTOKEN, GPT2_VOCAB_BPE
from toksmith import MergesError, TokenizerFileError, _core
from toksmith._jsontables import split_json_tables
from toksmith.bytelevel import token_to_str
from toksmith.formats import ConversionError, _common
from toksmith.formats.gpt2 import _merges_text_reference, gpt2_vocab, read_merges_file
from toksmith.formats.tiktoken import _parse_ranks_reference
from toksmith.serialization import _tables_reference, to_dict

FILE_ERRORS = (TokenizerFileError, ConversionError)


def reference_outcome(fn, *args):
    """("ok", result) or ("error", exception type) from a reference function."""
    try:
        return "ok", fn(*args)
    except FILE_ERRORS as e:
        return "error", type(e)


def assert_native_agrees(native, fn, *args):
    """The native result equals the reference's (order included), or the native pass declined;
    it declines whenever the reference raises."""
    kind, ref = reference_outcome(fn, *args)
    if native is None:
        return kind
    assert kind == "ok", f"native accepted what the reference rejects ({ref.__name__})"
    if isinstance(ref, tuple):
        assert len(native) == len(ref)
        for n, r in zip(native, ref):
            assert n == r
            if isinstance(r, dict):
                assert list(n.items()) == list(r.items())
    else:
        assert native == ref
        if isinstance(ref, dict):
            assert list(native.items()) == list(ref.items())
    return kind


@pytest.fixture(scope="module")
def tiny():
    return toksmith.train_from_iterator(
        ["low lower lowest newest widest  \n\tné ü"] * 30,
        vocab_size=275,
        pattern="gpt2",
        special_tokens=["<|end|>"],
    )


# ------------------------------------------------------------------ real files


@pytest.mark.parametrize("path", [GPT2_TIKTOKEN, CL100K_TIKTOKEN])
def test_tiktoken_files(path):
    raw = open(path, "rb").read()
    native = _core.parse_tiktoken_ranks(raw)
    assert native is not None and len(native) > 50000
    assert assert_native_agrees(native, _parse_ranks_reference, raw, "f") == "ok"
    crlf = raw.replace(b"\n", b"\r\n") + b"\n\n"
    assert _core.parse_tiktoken_ranks(crlf) == native


def test_gpt2_files_vocab_and_merges():
    vocab = json.load(open(GPT2_ENCODER, encoding="utf-8"))
    text = open(GPT2_VOCAB_BPE, encoding="utf-8").read()
    merges = _core.parse_merges_text(text)
    assert merges == _merges_text_reference(text, "f") and len(merges) == 50000
    native = _core.ranks_from_vocab_and_merges(vocab, merges, {})
    assert native is not None
    ranks, leftovers = native
    assert leftovers == {"<|endoftext|>": 50256} and len(ranks) == 50256
    assert_native_agrees(
        native, _common._ranks_from_vocab_and_merges_reference, vocab, merges, {}, "f"
    )
    # the same merges as "left right" lines (Hugging Face's usual form) and as lists
    lines = [f"{a} {b}" for a, b in merges]
    assert _core.ranks_from_vocab_and_merges(vocab, lines, {}) == native
    assert _core.ranks_from_vocab_and_merges(vocab, [list(m) for m in merges], {}) == native
    # with the special token declared as added, it is not a leftover
    assert _core.ranks_from_vocab_and_merges(vocab, lines, {"<|endoftext|>": 50256}) == (ranks, {})


def test_gpt2_merges_listed_and_a_changed_merge():
    tok = toksmith.from_gpt2_files(GPT2_ENCODER, GPT2_VOCAB_BPE)
    merges = read_merges_file(GPT2_VOCAB_BPE)
    assert tok._core.merges_listed(merges) is True
    _common._check_merges_agree_reference(tok, merges, "f")
    # make one merged token come from another split of its bytes: no longer what BPE by rank does
    vocab = json.load(open(GPT2_ENCODER, encoding="utf-8"))
    changed = None
    for n, (a, b) in enumerate(merges):
        left, right, whole = a + b[:1], b[1:], vocab[a + b]
        if len(b) >= 2 and vocab.get(left, whole) < whole and vocab.get(right, whole) < whole:
            changed = merges[:n] + [(left, right)] + merges[n + 1 :]
            break
    assert changed is not None
    assert tok._core.merges_listed(changed) is False
    with pytest.raises(ConversionError, match="merging by rank"):
        _common.check_merges_agree(tok, changed, "f")


def test_toksmith_file_tables(cl100k_tok, tiny):
    for tok in (cl100k_tok, tiny):
        data = json.loads(json.dumps(to_dict(tok), ensure_ascii=False))
        native = _core.toksmith_tables(data["vocab"], data["merges"])
        assert native is not None
        assert assert_native_agrees(native, _tables_reference, data, "f") == "ok"
        assert native[1] == tok.merge_ids()
        no_merges = _core.toksmith_tables(data["vocab"], None)
        assert no_merges == (native[0], None)
        # without merges the ids must still be distinct
        dup = dict(data["vocab"])
        dup[next(iter(dup))] = dup[list(dup)[-1]]
        assert _core.toksmith_tables(dup, None) is None
        with pytest.raises(TokenizerFileError, match="is given to both"):
            _tables_reference({**data, "vocab": dup, "merges": None}, "f")


def test_loads_give_the_same_tokenizer_as_the_references(tmp_path, tiny, monkeypatch):
    """Whole loads with the native passes and with every native pass declining."""
    tiny.save(tmp_path / "t.json")
    tiny.save_tiktoken(tmp_path / "t.tiktoken")
    toksmith.formats.huggingface.save_huggingface(tiny, tmp_path / "hf")
    toksmith.formats.gpt2.save_gpt2_files(tiny, tmp_path / "g")

    def loads():
        return [
            toksmith.load(tmp_path / "t.json"),
            toksmith.from_tiktoken(
                tmp_path / "t.tiktoken", pattern="gpt2", special_tokens=tiny.special_tokens
            ),
            toksmith.from_huggingface(tmp_path / "hf"),
            toksmith.from_gpt2_files(tmp_path / "g" / "vocab.json", tmp_path / "g" / "merges.txt"),
        ]

    fast = loads()
    for name in (
        "parse_tiktoken_ranks",
        "parse_merges_text",
        "toksmith_tables",
        "ranks_from_vocab_and_merges",
        "split_json_tables",
        "split_gpt2_files",
    ):
        monkeypatch.setattr(_core, name, lambda *a: None)
    monkeypatch.setattr(toksmith.tokenizer._core, "Bpe", _DecliningBpe)
    slow = loads()
    text = "lowest newest  \n\tné ü<|end|> widest"
    for f, s in zip(fast, slow):
        assert f.mergeable_ranks() == s.mergeable_ranks() == tiny.mergeable_ranks()
        assert f.special_tokens == s.special_tokens == tiny.special_tokens
        assert f.merge_ids() == s.merge_ids() == tiny.merge_ids()
        assert (
            f.encode(text, allowed_special="all")
            == s.encode(text, allowed_special="all")
            == tiny.encode(text, allowed_special="all")
        )


class _DecliningBpe:
    """The core class with its fast constructor and merge check declining."""

    _real = _core.Bpe

    def __init__(self, *args):
        self._bpe = self._real(*args)

    @staticmethod
    def from_ranks(*args):
        return None

    def merges_listed(self, merges):
        return None

    def merges_listed_in(self, tables):
        return None

    def __getattr__(self, name):
        return getattr(self._bpe, name)


# ------------------------------------------------------------------ Tokenizer construction


class _Bytes(bytes):
    pass


class _Int(int):
    pass


def test_tokenizer_from_dict_and_from_other_mappings(tiny):
    ranks = tiny.mergeable_ranks()
    assert _core.Bpe.from_ranks(ranks, [], "gpt2") is not None
    subclassed = {_Bytes(k): _Int(v) for k, v in ranks.items()}
    for other in (types.MappingProxyType(ranks), subclassed):
        assert _core.Bpe.from_ranks(other, [], "gpt2") is None
        tok = toksmith.Tokenizer(other, pattern="gpt2")
        assert tok.mergeable_ranks() == ranks
        assert tok.encode("lowest newest") == tiny.encode("lowest newest")
    bad_key = dict(ranks)
    bad_key["ab"] = 9999
    with pytest.raises(TypeError, match="keys must be bytes, not str"):
        toksmith.Tokenizer(bad_key, pattern="gpt2")
    for value in (True, -1, 2**32, 1.0):
        bad = dict(ranks)
        bad[b"zz"] = value
        assert _core.Bpe.from_ranks(bad, [], "gpt2") is None
        with pytest.raises(ValueError, match="is not a valid id"):
            toksmith.Tokenizer(bad, pattern="gpt2")
    dup = dict(ranks)
    dup[b"zz"] = 0
    with pytest.raises(ValueError, match="id 0 is used by two tokens"):
        toksmith.Tokenizer(dup, pattern="gpt2")


# ------------------------------------------------------------------ corruptions

_ALPHABET = "ab=+/ \r\t\n0123456789\x00é"


def _mutate_text(draw, text):
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["insert", "delete", "dup_line", "swap_lines"]))
        lines = text.split("\n")
        if op == "insert":
            text = text[:at] + draw(st.sampled_from(_ALPHABET)) + text[at:]
        elif op == "delete" and text:
            text = text[:at] + text[at + 1 :]
        elif op == "dup_line":
            k = draw(st.integers(0, len(lines) - 1))
            lines.insert(draw(st.integers(0, len(lines))), lines[k])
            text = "\n".join(lines)
        elif op == "swap_lines" and len(lines) > 1:
            i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
    return text


@settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    max_examples=200,
)
@given(data=st.data())
def test_corrupted_tiktoken_files(tiny, data):
    ranks = sorted(tiny.mergeable_ranks().items(), key=lambda kv: kv[1])
    text = "".join(f"{base64.b64encode(b).decode()} {i}\n" for b, i in ranks[250:])
    raw = _mutate_text(data.draw, text).encode("utf-8")
    assert_native_agrees(_core.parse_tiktoken_ranks(raw), _parse_ranks_reference, raw, "f")


@settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    max_examples=200,
)
@given(data=st.data())
def test_corrupted_merges_text(tiny, data):
    text = "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in _common.merge_strings(tiny, "f"))
    text = _mutate_text(data.draw, text)
    assert_native_agrees(_core.parse_merges_text(text), _merges_text_reference, text, "f")


def _mutate_tables(draw, vocab, merges):
    """Random damage to a byte-level vocab (dict) and merge list (strings)."""
    vocab, merges = dict(vocab), list(merges)
    for _ in range(draw(st.integers(1, 2))):
        keys = list(vocab)
        op = draw(
            st.sampled_from(
                [
                    "id",
                    "dup_id",
                    "key",
                    "swap",
                    "drop",
                    "split",
                    "list",
                    "bool",
                    "big",
                    "odd_item",
                    "space",
                    "add_key",
                ]
            )
        )
        k = draw(st.sampled_from(keys))
        m = draw(st.integers(0, len(merges) - 1))
        if op == "id":
            vocab[k] = draw(st.integers(-1, len(vocab) + 2))
        elif op == "dup_id":
            vocab[k] = vocab[draw(st.sampled_from(keys))]
        elif op == "key":
            new = k[:-1] + draw(
                st.sampled_from(["a", " ", "\u0100", "\u0144", "\U0001f600", "\x00"])
            )
            vocab = {(new if x == k else x): v for x, v in vocab.items()}
        elif op == "swap":
            j = draw(st.integers(0, len(merges) - 1))
            merges[m], merges[j] = merges[j], merges[m]
        elif op == "drop":
            del merges[m]
        elif op == "split" and isinstance(merges[m], str) and merges[m].count(" ") == 1:
            a, b = merges[m].split(" ")
            merges[m] = (a + b[:1]) + " " + b[1:]
        elif op == "list" and isinstance(merges[m], str):
            merges[m] = merges[m].split(" ")
        elif op == "bool":
            vocab[k] = True
        elif op == "big":
            vocab[k] = 2**32 + vocab[k]
        elif op == "odd_item":
            merges[m] = draw(
                st.sampled_from(
                    [None, 5, ["a"], ("a", "b", "c"), "", "ab", "a  b", "a b c", ["a", ""]]
                )
            )
        elif op == "space" and isinstance(merges[m], str):
            merges[m] = merges[m] + " "
        elif op == "add_key":
            vocab[draw(st.sampled_from(["<|x|>", "Ġzz", "zz"]))] = draw(
                st.integers(0, len(vocab) + 2)
            )
    return vocab, merges


@settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    max_examples=300,
)
@given(data=st.data())
def test_corrupted_toksmith_files(tiny, data):
    d = json.loads(json.dumps(to_dict(tiny), ensure_ascii=False))
    d["vocab"], d["merges"] = _mutate_tables(data.draw, d["vocab"], d["merges"])
    if data.draw(st.booleans()):
        d["merges"] = None  # a rank table without a merge list: the vocab checks alone
    native = _core.toksmith_tables(d["vocab"], d["merges"])
    assert_native_agrees(native, _tables_reference, d, "f")


@settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    max_examples=300,
)
@given(data=st.data())
def test_corrupted_vocab_and_merges(tiny, data):
    vocab = gpt2_vocab(tiny)
    lines = [f"{a} {b}" for a, b in _common.merge_strings(tiny, "f")]
    vocab, merges = _mutate_tables(data.draw, vocab, lines)
    added = data.draw(
        st.sampled_from([{}, dict(tiny.special_tokens), {"<|x|>": 3}, {"<|end|>": 0}])
    )
    native = _core.ranks_from_vocab_and_merges(vocab, merges, added)

    def reference(vocab, merges, added, where):
        pairs = _common.merge_pairs(merges, where)
        return _common._ranks_from_vocab_and_merges_reference(vocab, pairs, added, where)

    kind = assert_native_agrees(native, reference, vocab, merges, added, "f")
    if kind == "ok" and native is not None and not native[1]:
        # a consistent table: the native merge check agrees with the reference's
        try:
            tok = toksmith.Tokenizer(native[0], pattern="gpt2")
        except ValueError:
            return
        pairs = _common.merge_pairs(merges, "f")
        listed = tok._core.merges_listed(merges)
        ref = reference_outcome(_common._check_merges_agree_reference, tok, pairs, "f")
        # None: the merges cannot be recovered from the ranks (the reference says so)
        assert (ref[0] == "ok") == bool(listed)


def test_leftover_keys_are_spelled_like_the_reference(tiny):
    vocab = gpt2_vocab(tiny)
    lines = [f"{a} {b}" for a, b in _common.merge_strings(tiny, "f")]
    extra = {token_to_str(b"zq"): len(vocab), "\u0144bad": len(vocab) + 1}
    vocab.update(extra)
    native = _core.ranks_from_vocab_and_merges(
        vocab, lines, {"<|end|>": tiny.special_tokens["<|end|>"]}
    )
    assert native[1] == {"\u0144bad": len(vocab) - 1, "zq": len(vocab) - 2}
    assert list(native[1]) == ["\u0144bad", "zq"]


def test_declined_files_still_get_the_readers_messages(tmp_path, tiny):
    """When a native pass declines, the Python reader names the problem as before."""
    from toksmith.formats.huggingface import huggingface_json

    doc = huggingface_json(tiny)
    for merges, msg in (
        (["a b c"], r"merge 0 \('a b c'\) is not a pair of tokens"),
        ("a b", "model.merges must be a list"),
        ([["a", ""]], "is not a pair of tokens"),
    ):
        bad = json.loads(json.dumps(doc))
        bad["model"]["merges"] = merges
        with pytest.raises(TokenizerFileError, match=msg):
            toksmith.from_huggingface(bad)
    bad = json.loads(json.dumps(doc))
    bad["model"]["merges"] = bad["model"]["merges"][::-1]
    with pytest.raises(ConversionError, match="out of order"):
        toksmith.from_huggingface(bad)
    lines = [f"{base64.b64encode(bytes([b])).decode()} {b}" for b in range(256)] + [
        "YWI= 256",
        "YWI= 257",
    ]
    (tmp_path / "dup.tiktoken").write_text("\n".join(lines) + "\n")
    with pytest.raises(TokenizerFileError, match="line 258: the token b'ab' appears twice"):
        toksmith.formats.tiktoken.load_tiktoken_ranks(tmp_path / "dup.tiktoken")
    (tmp_path / "m.txt").write_text("#version: 0.2\na b\nc d e\n")
    with pytest.raises(TokenizerFileError, match="line 3: expected 'left right'"):
        read_merges_file(tmp_path / "m.txt")


def test_format_reader_names_resolve_from_the_package():
    """Every public name of the file-format readers resolves from `toksmith` (they were loaded on
    first use until the package's layers were made to import at module level)."""
    import subprocess
    import sys

    code = (
        "import sys, toksmith\n"
        "from toksmith import ConversionError, from_gpt2_files, from_huggingface, from_tiktoken, load_any\n"
        "assert toksmith.formats.tiktoken.load_openai and 'formats' in dir(toksmith)\n"
        "assert issubclass(ConversionError, toksmith.VocabError)\n"
        "try:\n"
        "    toksmith.not_a_name\n"
        "except AttributeError as e:\n"
        "    assert 'not_a_name' in str(e)\n"
        "else:\n"
        "    raise SystemExit('no AttributeError')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_load_any_parses_a_tokenizer_json_once(tmp_path, tiny, monkeypatch):
    """A tokenizer.json's format is only known from its "model" (written last), so detection
    parses it; load_any then builds the tokenizer from that document instead of reading the file
    again, with the same result as from_huggingface."""
    toksmith.formats.huggingface.save_huggingface(tiny, tmp_path / "hf")
    tiny.save(tmp_path / "own.json")
    expected = [toksmith.from_huggingface(tmp_path / "hf"), toksmith.load(tmp_path / "own.json")]
    calls = []
    real = json.loads
    monkeypatch.setattr(json, "loads", lambda *a, **k: calls.append(1) or real(*a, **k))
    for path, want in (
        (tmp_path / "hf", expected[0]),
        (tmp_path / "hf" / "tokenizer.json", expected[0]),
        (tmp_path / "own.json", expected[1]),
    ):
        calls.clear()
        got = toksmith.load_any(path)
        assert len(calls) == 1, path
        assert (
            got.name,
            got.metadata,
            got.mergeable_ranks(),
            got.special_tokens,
            got.merge_ids(),
        ) == (
            want.name,
            want.metadata,
            want.mergeable_ranks(),
            want.special_tokens,
            want.merge_ids(),
        )


# ------------------------------------------------------------------ tokenizer.json split natively


def _tables_of(tok):
    """What a loaded tokenizer is made of (its merge ids, or why it has none)."""
    try:
        merges = tok.merge_ids()
    except MergesError as e:
        merges = str(e)
    return (
        tok.mergeable_ranks(),
        tok.special_tokens,
        tok.pinned_tokens,
        merges,
        tok.pattern,
        tok.name,
        tok.metadata,
    )


def _as_tokenizers_object(text):
    """Something with ``to_str()``, like a ``tokenizers.Tokenizer``: read through the same
    native split as a file, without writing one."""
    return types.SimpleNamespace(to_str=lambda: text)


def _hf_outcome(text, monkeypatch=None):
    """("ok", the loaded tables) or ("error", type, message) for a tokenizer.json's text."""
    try:
        tok = toksmith.from_huggingface(_as_tokenizers_object(text))
    except (ValueError, TypeError) as e:
        return "error", type(e), str(e)
    return "ok", _tables_of(tok)


@contextlib.contextmanager
def _split_declined(name="split_json_tables"):
    """A native split (of JSON files, or of GPT-2's two files) declining: the files parsed by
    Python, as before the split existed. A plain context manager: hypothesis examples cannot
    use fixtures."""
    real = getattr(_core, name)
    setattr(_core, name, lambda *args: None)
    try:
        yield
    finally:
        setattr(_core, name, real)


def _hf_outcome_declined(text):
    with _split_declined():
        return _hf_outcome(text)


def test_tokenizer_json_tables_split_natively(tiny):
    from toksmith.formats.huggingface import huggingface_json

    doc = huggingface_json(tiny)
    text = json.dumps(doc, ensure_ascii=False)
    got = split_json_tables(text.encode("utf-8"), "huggingface")
    assert got is not None
    rest, tables = got
    # the document minus the two tables, key order kept
    want = json.loads(text)
    model = want["model"]
    del model["vocab"], model["merges"]
    assert rest == want and list(rest["model"]) == list(model) and list(rest) == list(want)
    assert tables.native.has_merges
    native = tables.native.ranks_from_vocab_and_merges(dict(tiny.special_tokens))
    ref = _core.ranks_from_vocab_and_merges(
        doc["model"]["vocab"], doc["model"]["merges"], dict(tiny.special_tokens)
    )
    assert native == ref and list(native[0].items()) == list(ref[0].items())
    assert _hf_outcome(text) == _hf_outcome_declined(text)
    # \u escapes, pairs instead of lines, whitespace: the same tables
    pairs = json.loads(text)
    pairs["model"]["merges"] = [m.split(" ") for m in pairs["model"]["merges"]]
    for variant in (json.dumps(doc, ensure_ascii=True), json.dumps(pairs, indent=2)):
        got = split_json_tables(variant.encode("utf-8"), "huggingface")
        assert got is not None
        assert got[1].native.ranks_from_vocab_and_merges(dict(tiny.special_tokens)) == ref
        assert _hf_outcome(variant) == _hf_outcome(text)


def test_tokenizer_json_of_a_real_vocabulary(tmp_path):
    gpt2 = toksmith.from_tiktoken(
        GPT2_TIKTOKEN, pattern="gpt2", special_tokens={"<|endoftext|>": 50256}
    )
    gpt2.save_huggingface(tmp_path)
    raw = (tmp_path / "tokenizer.json").read_bytes()
    assert split_json_tables(raw, "huggingface") is not None
    fast = toksmith.from_huggingface(tmp_path)
    assert (
        fast.mergeable_ranks() == gpt2.mergeable_ranks()
        and fast.special_tokens == gpt2.special_tokens
    )
    assert _hf_outcome(raw.decode("utf-8")) == _hf_outcome_declined(raw.decode("utf-8"))


def _mutate_json_text(draw, text, vocab):
    """Damage only JSON text can carry: a key twice, a float or exponent id, a model key twice."""
    op = draw(
        st.sampled_from(
            ["none", "dup_key", "float_id", "exp_id", "dup_model_key", "dup_top_key", "nan"]
        )
    )
    k = draw(st.sampled_from(list(vocab)))
    entry = f"{json.dumps(k, ensure_ascii=False)}: {vocab[k]}"
    if op == "dup_key" and entry in text:
        other = draw(st.integers(0, len(vocab) + 2))
        text = text.replace(entry, f"{entry}, {json.dumps(k, ensure_ascii=False)}: {other}", 1)
    elif op == "float_id" and entry in text:
        text = text.replace(entry, f"{entry}.0", 1)
    elif op == "exp_id" and entry in text:
        text = text.replace(entry, f"{entry}e0", 1)
    elif op == "dup_model_key":
        text = text.replace('"model": {', '"model": {"type": "BPE", ', 1)
    elif op == "dup_top_key":
        text = text.replace('"model": {', '"decoder": null, "model": {', 1)
    elif op == "nan" and entry in text:
        text = text.replace(entry, f"{json.dumps(k, ensure_ascii=False)}: NaN", 1)
    return text


@settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    max_examples=200,
)
@given(data=st.data())
def test_corrupted_tokenizer_json(tiny, data):
    """Whatever the damage, loading with the native split gives what the Python parse gives: the
    same tokenizer, or the same error and message."""
    from toksmith.formats.huggingface import huggingface_json

    doc = huggingface_json(tiny)
    model = doc["model"]
    if data.draw(st.booleans()):
        model["vocab"], model["merges"] = _mutate_tables(data.draw, model["vocab"], model["merges"])
    if data.draw(st.booleans()):
        model["merges"] = [
            m.split(" ") if isinstance(m, str) and data.draw(st.booleans()) else m
            for m in model["merges"]
        ]
    if data.draw(st.booleans()):
        del model["merges"]
    text = json.dumps(
        doc, ensure_ascii=data.draw(st.booleans()), indent=data.draw(st.sampled_from([None, 1]))
    )
    text = _mutate_json_text(data.draw, text, model["vocab"])
    assert _hf_outcome(text) == _hf_outcome_declined(text)


def _load_outcome(path):
    try:
        tok = toksmith.load(path)
    except (ValueError, TypeError) as e:
        return "error", type(e), str(e)
    return "ok", _tables_of(tok)


def _load_outcome_declined(path):
    with _split_declined():
        return _load_outcome(path)


def test_toksmith_file_tables_split_natively(tmp_path, tiny):
    tiny.save(tmp_path / "t.json")
    raw = (tmp_path / "t.json").read_bytes()
    got = split_json_tables(raw, "toksmith")
    assert got is not None
    rest, tables = got
    want = json.loads(raw)
    del want["vocab"], want["merges"]
    assert rest == want and list(rest) == list(want)
    assert tables.native.toksmith_tables() == _core.toksmith_tables(
        *(lambda d: (d["vocab"], d["merges"]))(json.loads(raw))
    )
    assert _load_outcome(tmp_path / "t.json") == _load_outcome_declined(tmp_path / "t.json")
    assert _load_outcome(tmp_path / "t.json")[1][0] == tiny.mergeable_ranks()
    # a rank table without merges
    d = json.loads(raw)
    d["merges"] = None
    (tmp_path / "n.json").write_text(json.dumps(d, ensure_ascii=False))
    tables = split_json_tables((tmp_path / "n.json").read_bytes(), "toksmith")[1]
    assert not tables.native.has_merges and tables.native.toksmith_tables()[1] is None
    assert _load_outcome(tmp_path / "n.json") == _load_outcome_declined(tmp_path / "n.json")


@settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    max_examples=150,
)
@given(data=st.data())
def test_corrupted_toksmith_files_whole(tmp_path, tiny, data):
    """toksmith.load with the native split gives what the Python parse gives, whatever the damage."""
    d = json.loads(json.dumps(to_dict(tiny), ensure_ascii=False))
    if data.draw(st.booleans()):
        d["vocab"], d["merges"] = _mutate_tables(data.draw, d["vocab"], d["merges"])
    if data.draw(st.booleans()):
        d["merges"] = data.draw(st.sampled_from([None, "a b", 3]))
    if data.draw(st.booleans()):
        del d[data.draw(st.sampled_from(["merges", "vocab", "pattern"]))]
    vocab = d.get("vocab") or {"a": 0}
    text = json.dumps(
        d, ensure_ascii=data.draw(st.booleans()), indent=data.draw(st.sampled_from([None, 1]))
    )
    text = _mutate_json_text(data.draw, text, vocab)
    path = tmp_path / "t.json"
    path.write_text(text, encoding="utf-8")
    assert _load_outcome(path) == _load_outcome_declined(path)


def _gpt2_outcome(vocab_path, merges_path):
    try:
        tok = toksmith.from_gpt2_files(vocab_path, merges_path)
    except (ValueError, TypeError) as e:
        return "error", type(e), str(e)
    return "ok", _tables_of(tok)


def _gpt2_outcome_declined(vocab_path, merges_path):
    with _split_declined("split_gpt2_files"):
        return _gpt2_outcome(vocab_path, merges_path)


def test_gpt2_files_split_natively():
    raw = open(GPT2_ENCODER, "rb").read()
    text = open(GPT2_VOCAB_BPE, encoding="utf-8").read()
    tables = _core.split_gpt2_files(raw, text)
    assert tables is not None and tables.has_merges
    ranks, extras = tables.ranks_from_vocab_and_merges({})
    assert extras == {"<|endoftext|>": 50256} and len(ranks) == 50256
    vocab = json.loads(raw)
    assert (ranks, extras) == _core.ranks_from_vocab_and_merges(
        vocab, _core.parse_merges_text(text), {}
    )
    fast = _gpt2_outcome(GPT2_ENCODER, GPT2_VOCAB_BPE)
    assert fast[0] == "ok" and fast == _gpt2_outcome_declined(GPT2_ENCODER, GPT2_VOCAB_BPE)


@settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    max_examples=150,
)
@given(data=st.data())
def test_corrupted_gpt2_files_whole(tmp_path, tiny, data):
    """from_gpt2_files with the native split gives what the Python readers give, whatever the damage."""
    vocab = gpt2_vocab(tiny)
    lines = [f"{a} {b}" for a, b in _common.merge_strings(tiny, "f")]
    if data.draw(st.booleans()):
        vocab, lines = _mutate_tables(data.draw, vocab, lines)
        lines = [m if isinstance(m, str) else json.dumps(m) for m in lines]
    text = json.dumps(vocab, ensure_ascii=data.draw(st.booleans()))
    text = _mutate_json_text(data.draw, text, vocab)
    merges = "#version: 0.2\n" + "\n".join(lines) + "\n"
    if data.draw(st.booleans()):
        merges = _mutate_text(data.draw, merges)
    (tmp_path / "vocab.json").write_text(text, encoding="utf-8")
    (tmp_path / "merges.txt").write_text(merges, encoding="utf-8")
    args = (tmp_path / "vocab.json", tmp_path / "merges.txt")
    assert _gpt2_outcome(*args) == _gpt2_outcome_declined(*args)
