"""Regression tests for defects found by an adversarial audit of toksmith.calm.

Each test names the defect it pins: huge numbers, hostile CWGT files, wrong
types, quadratic time, and round trips.
"""

from __future__ import annotations

import io
import os
import pickle
import struct
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toksmith import calm
from toksmith.calm import byte_tokenizer, cwgt

tok = calm.ByteTokenizer()


# --------------------------------------------------------------------------- stop conditions


def test_stop_scan_is_linear_in_the_number_of_patterns():
    # every fed byte used to be compared with every pattern: O(tokens x patterns)
    spec = " ".join(f"<{i}>" for i in range(20_000))
    start = time.perf_counter()
    stops = calm.StopConditions(spec)
    kept, result = stops.scan(b"<1" * 25_000 + b"<19999>")
    assert time.perf_counter() - start < 1.0
    assert result.pattern == b"<19999>" and result.rollback == 6 and len(kept) == 50_000


def test_stop_pattern_parsing_dedupes_in_linear_time_and_keeps_order():
    words = [f"w{i}" for i in range(30_000)]
    start = time.perf_counter()
    parsed = calm.parse_stop_patterns(" ".join(words + words[::-1]))
    listed = calm.StopConditions(words + words).patterns
    assert time.perf_counter() - start < 1.0
    assert parsed == listed == tuple(w.encode() for w in words)


def test_stop_pattern_with_a_lone_surrogate_is_a_clear_value_error():
    with pytest.raises(ValueError, match="lone surrogate"):
        calm.StopConditions("a\ud800")
    with pytest.raises(ValueError, match="lone surrogate"):
        calm.StopConditions(["\udc80"])


def _reference_scan(patterns, stream):
    """What a stop check must do: after each byte, the longest pattern ending the bytes
    fed since the last reset (a stop, a special token or the start)."""
    window = b""
    kept = []
    for tok_id in stream:
        if tok_id in (calm.EOS, calm.PAD):
            return kept, ("eos" if tok_id == calm.EOS else "pad", None)
        if tok_id >= 256:
            window = b""
            kept.append(tok_id)
            continue
        window += bytes([tok_id])
        hits = [p for p in patterns if window.endswith(p)]
        if hits:
            longest = max(hits, key=len)
            rollback = len(longest) - 1
            return (kept[: len(kept) - rollback] if rollback else kept), ("pattern", longest)
        kept.append(tok_id)
    return kept, None


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.binary(min_size=1, max_size=5).map(lambda b: bytes(97 + x % 3 for x in b)),
        min_size=1,
        max_size=6,
    ),
    st.lists(st.sampled_from([97, 98, 99, 300, 97, 98]), max_size=40),
)
def test_stop_automaton_matches_a_brute_force_reference(patterns, stream):
    stops = calm.StopConditions(patterns)
    kept, result = stops.scan(stream)
    ref_kept, ref = _reference_scan(list(dict.fromkeys(patterns)), stream)
    assert kept == ref_kept
    if ref is None:
        assert not result
    else:
        assert (result.reason, result.pattern) == ref


def test_stop_state_restarts_after_a_stop():
    stops = calm.StopConditions("abc bc")
    assert stops.feed(ord("b")).stop is False
    assert stops.feed(ord("c")).pattern == b"bc"
    # the next "abc" is matched from scratch, nothing carried over from the stop
    assert [stops.feed(t).stop for t in b"ab"] == [False, False]
    result = stops.feed(ord("c"))
    assert result.pattern == b"abc" and result.rollback == 2


# --------------------------------------------------------------------------- ByteTokenizer


@pytest.mark.parametrize(
    "method, args",
    [
        ("encode_batch", (["a"],)),
        ("encode_ordinary_batch", (["a"],)),
        ("decode_batch", ([[97]],)),
    ],
)
def test_byte_tokenizer_checks_threads_like_tokenizer(method, args):
    call = getattr(tok, method)
    assert call(*args, threads=2) == call(*args)
    for bad in (True, "4", 1.5):
        with pytest.raises(TypeError, match="threads"):
            call(*args, threads=bad)
    for bad in (0, -1, 2**70):
        with pytest.raises(ValueError, match="threads must be between 1 and 4096"):
            call(*args, threads=bad)
    with pytest.raises(ValueError, match="num_threads"):
        call(*args, num_threads=2**62)


def test_byte_tokenizer_decode_skip_special_tokens_like_tokenizer():
    ids = [104, 258, 105, 300, 0xC3, 259, 0xA9]
    assert tok.decode(ids) == "h<EOS>i<RESERVED_300>\ufffd<ATN>\ufffd"
    assert tok.decode(ids, skip_special_tokens=True) == "hié"
    assert tok.decode_bytes(np.array(ids), skip_special_tokens=True) == calm.detokenize(ids)
    assert tok.decode_batch([ids], skip_special_tokens=True) == ["hié"]
    with pytest.raises(TypeError, match="skip_special_tokens must be a bool"):
        tok.decode(ids, skip_special_tokens=1)
    with pytest.raises(TypeError, match="errors must be a str"):
        tok.decode(ids, errors=None)
    with pytest.raises(TypeError, match="skip_special_tokens must be a bool"):
        tok.stream_decoder(skip_special_tokens="yes")


def test_disallowed_special_string_is_type_error_and_empty_name_ignored():
    with pytest.raises(TypeError, match="disallowed_special"):
        tok.encode("a", disallowed_special="ALL")
    # an empty name used to "match" every text, even ""
    assert tok.encode("abc", disallowed_special={""}) == [97, 98, 99]
    assert tok.encode("", disallowed_special={"", "<EOS>"}) == []


def test_special_regex_cache_is_bounded():
    for i in range(300):
        tok.encode("x", disallowed_special={f"name{i}"})
    assert len(byte_tokenizer._SPECIAL_RE) <= byte_tokenizer._SPECIAL_RE_MAX


def test_byte_tokenizer_load_hostile_json(tmp_path):
    path = tmp_path / "calm.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(ValueError, match="nested too deeply"):  # was a RecursionError
        calm.ByteTokenizer.load(path)
    path.write_text('{"format": "toksmith.calm", "version": ' + "9" * 5000 + "}")
    with pytest.raises(ValueError, match=str(path).replace("\\", "\\\\")):
        calm.ByteTokenizer.load(path)
    doc = tok.to_dict()
    for bad in (
        {**doc, "vocab_size": 320.0},
        {**doc, "version": 1.0},
        {**doc, "special_tokens": {k: float(v) for k, v in doc["special_tokens"].items()}},
    ):
        with pytest.raises(ValueError):
            calm.ByteTokenizer.from_dict(bad)
    assert calm.ByteTokenizer.from_dict(doc) == tok


# --------------------------------------------------------------------------- vocabulary and frames


def test_is_special_and_is_reserved_check_types():
    assert calm.is_special(np.int64(260)) and calm.is_reserved(np.uint16(300))
    assert not calm.is_special(2**70) and not calm.is_reserved(-1)
    for bad in (True, "260", None, 260.0):
        with pytest.raises(TypeError):
            calm.is_special(bad)
        with pytest.raises(TypeError):
            calm.is_reserved(bad)


def test_empty_memoryview_sub_token_is_absent_like_empty_bytes():
    assert calm.tokenize_frame("HIST", "ls", exit=memoryview(b"")) == calm.tokenize_frame(
        "HIST", "ls"
    )
    assert calm.tokenize_frame("WORD", "a", pos=memoryview(b"")) == [calm.WORD, 97, calm.END]


# --------------------------------------------------------------------------- templates and sequences


def test_template_items_are_checked_and_normalized():
    t = calm.Template(
        [(np.int64(calm.BOS), None), (calm.ATN, None), (np.uint16(calm.CMD), "input")]
    )
    assert t == calm.parse_template("BOS;ATN;CMD:input")
    assert all(type(item.token) is int for item in t.items)
    seq = calm.build_sequence(t, {"input": "ls"})
    assert all(type(i) is int for i in seq)
    with pytest.raises(TypeError, match="Template.parse"):
        calm.Template("BOS;ATN;CMD:input")
    with pytest.raises(TypeError, match="key must be a str"):
        calm.Template([(calm.ATN, None), (calm.CMD, 5)])
    with pytest.raises(TypeError):
        calm.Template([(True, None)])
    with pytest.raises(ValueError, match="out of range"):
        calm.Template([(2**70, None)])


class _FakeModel:
    def __init__(self, l_max):
        self.metadata = calm.CWGTMetadata("shell", "BOS;ATN;CMD:input", "")
        self.header = type("H", (), {"l_max": l_max})()


def test_model_header_l_max_is_checked():
    assert calm.build_sequence(_FakeModel(np.uint16(5)), {"input": "ls"}).l_max == 5
    assert calm.build_sequence(_FakeModel(0), {"input": "ls"}).l_max == calm.DEFAULT_L_MAX
    with pytest.raises(TypeError, match="l_max"):
        calm.build_sequence(_FakeModel("768"), {"input": "ls"})
    with pytest.raises(TypeError, match="l_max"):
        calm.build_sequence(_FakeModel(True), {"input": "ls"})
    # a huge l_max is just "no limit", never an overflow
    assert len(calm.build_sequence(_FakeModel(2**70), {"input": "ls"})) == 5


def test_training_accepts_numpy_bool_but_not_int():
    assert calm.build_sequence("shell", {"input": "a"}, training=np.bool_(True))[-1] == calm.EOS
    with pytest.raises(TypeError, match="training must be a bool"):
        calm.build_sequence("shell", {"input": "a"}, training=1)


def test_empty_frames_survive_build_parse_build():
    # a dict whose fields are all empty is absent, like ""
    seq = calm.build_sequence("dictionary", {"word": {"text": "", "pos": None}, "definition": "d"})
    assert seq.format() == "<BOS> <ATN> <DEF> d"
    # an empty frame from a list comes back as a list, so rebuilding keeps it
    seq = calm.build_sequence("shell", {"cwd": [""], "input": "x"})
    assert seq.format() == "<BOS> <CWD> <END> <ATN> <CMD> x"
    back = calm.parse_sequence(seq, "shell")
    assert back == {"cwd": [""], "input": "x"}
    assert calm.build_sequence("shell", dict(back)) == seq
    # the (open) target stays a plain value
    assert calm.parse_sequence(calm.build_sequence("shell", {}), "shell") == {"input": ""}


_text = st.one_of(st.text(max_size=3), st.binary(max_size=3))
_simple = st.one_of(st.none(), _text, st.lists(_text, max_size=3))
_history = st.one_of(
    st.none(),
    _text,
    st.lists(
        st.one_of(
            _text,
            st.fixed_dictionaries(
                {"cmd": _text},
                optional={"exit": st.one_of(st.none(), st.integers(-3, 300), st.text(max_size=3))},
            ),
        ),
        max_size=4,
    ),
)


@settings(max_examples=150, deadline=None)
@given(_simple, _simple, _history, _simple, _simple, _text, st.booleans(), st.integers(4, 60))
def test_build_parse_build_is_stable(cwd, git, history, completions, env, inp, training, l_max):
    ctx = {
        "cwd": cwd,
        "git": git,
        "history": history,
        "completions": completions,
        "env": env,
        "input": inp,
    }
    try:
        seq = calm.build_sequence("shell", ctx, training=training, l_max=l_max)
    except ValueError as exc:
        assert "input alone" in str(exc)
        return
    back = calm.parse_sequence(seq, "shell")
    again = calm.build_sequence("shell", dict(back), training=training, l_max=l_max)
    assert again == seq and not again.dropped
    assert calm.parse_sequence(again, "shell") == back


# --------------------------------------------------------------------------- CWGT files


def _header(**fields):
    values = dict(d_model=8, n_layers=1, dt_rank=1)
    values.update(fields)
    return calm.CWGTHeader(**values)


def test_metadata_from_bytes_rejects_non_bytes_without_allocating():
    start = time.perf_counter()
    with pytest.raises(TypeError, match="must be bytes"):
        calm.CWGTMetadata.from_bytes(10**9)  # bytes(10**9) would allocate a gigabyte
    with pytest.raises(TypeError, match="must be bytes"):
        calm.CWGTMetadata.from_bytes(2**70)
    with pytest.raises(TypeError):
        calm.CWGTMetadata.from_bytes("shell\n")
    assert time.perf_counter() - start < 0.5


def test_header_accepts_numpy_ints_and_type_errors_are_type_errors(tmp_path):
    h = _header(d_model=np.int64(16), n_layers=np.uint8(2), l_max=np.int32(512))
    assert type(h.d_model) is int and h == _header(d_model=16, n_layers=2, l_max=512)
    path = tmp_path / "np.cwgt"
    calm.write_cwgt(path, {"d_model": np.int64(16), "n_layers": 1, "dt_rank": 1}, None, np.zeros(3))
    assert calm.read_cwgt(path).header.d_model == 16
    for field, value in (("d_model", 16.0), ("l_max", "768"), ("flags", True), ("magic", "CWGT")):
        with pytest.raises(TypeError, match=field) as info:
            _header(**{field: value}).to_bytes()
        assert isinstance(info.value, calm.CWGTError)  # and still a CWGTError (a ValueError)


def test_read_cwgt_accepts_non_utf8_bytes_paths(tmp_path):
    plain = tmp_path / "model.cwgt"
    calm.write_cwgt(plain, _header(), None, np.arange(2, dtype=np.float32))
    name = os.fsencode(str(tmp_path)) + b"/model-\xff.cwgt"
    try:
        os.rename(os.fsencode(str(plain)), name)
    except OSError:  # pragma: no cover - file systems that refuse the name
        pytest.skip("file system does not take non-UTF-8 names")
    model = calm.read_cwgt(name)
    assert model.weights.tolist() == [0.0, 1.0] and model.path == os.fsdecode(name)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_read_cwgt_refuses_a_fifo_instead_of_hanging(tmp_path):
    fifo = tmp_path / "model.cwgt"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        calm.read_cwgt(fifo)
    with pytest.raises(IsADirectoryError):
        calm.read_cwgt(tmp_path)


def test_huge_meta_size_is_refused_before_reading(tmp_path):
    path = tmp_path / "sparse.cwgt"
    header = bytearray(_header().to_bytes())
    struct.pack_into("<I", header, 34, 2**32 - 1)
    with open(path, "wb") as fh:  # a sparse file really holding the claimed 4 GiB
        fh.write(header)
        fh.truncate(48 + 2**32 - 1)
    start = time.perf_counter()
    with pytest.raises(
        calm.CWGTError,
        match="'meta_size' at byte offset 34: .* larger than the 16777216-byte limit",
    ):
        calm.read_cwgt(path)
    assert time.perf_counter() - start < 0.5
    with pytest.raises(ValueError, match="larger than the 16777216-byte limit"):
        calm.write_cwgt(
            tmp_path / "big.cwgt", _header(), ("a" * cwgt.MAX_META_SIZE, "", ""), np.zeros(1)
        )
    assert not (tmp_path / "big.cwgt").exists()


def test_cwgt_errors_pickle():
    err = calm.CWGTError("magic", 0, "expected b'CWGT'", "m.cwgt")
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is calm.CWGTError and str(back) == str(err) and back.field == "magic"
    err = cwgt.CWGTFieldTypeError("d_model", 10, "must be an int")
    assert isinstance(pickle.loads(pickle.dumps(err)), TypeError)


def test_write_cwgt_tied_must_be_a_bool_and_false_clears_the_flag(tmp_path):
    path = tmp_path / "t.cwgt"
    fields = {"d_model": 8, "n_layers": 1, "dt_rank": 1, "flags": calm.FLAG_TIED}
    assert calm.write_cwgt(path, {**fields, "tied": False}, None, np.zeros(1)).tied is False
    assert (
        calm.write_cwgt(path, {**fields, "flags": 0, "tied": True}, None, np.zeros(1)).tied is True
    )
    with pytest.raises(TypeError, match="'tied' must be a bool"):
        calm.write_cwgt(path, {**fields, "tied": "no"}, None, np.zeros(1))


# --------------------------------------------------------------------------- CLI


def _run(argv, capsys, stdin=None, monkeypatch=None):
    from toksmith.cli import main

    if stdin is not None:
        monkeypatch.setattr("sys.stdin", stdin)
    code = main(["calm", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("word", ["1_0", "\u0663", "0x41", " 65"])
def test_cli_decode_takes_ascii_decimal_ids_only(word, capsys):
    code, _, err = _run(["decode", word], capsys)
    assert code == 1 and "not a token id" in err


def test_cli_decode_huge_id_is_out_of_range(capsys):
    code, _, err = _run(["decode", "9" * 5000], capsys)
    assert code == 1 and "out of range" in err


def test_cli_hostile_context_files(tmp_path, capsys, monkeypatch):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000)
    code, _, err = _run(["encode", "--context-file", str(deep)], capsys)
    assert code == 1 and ("nested too deeply" in err or "not valid JSON" in err)
    deep.write_text("[" * 200_000 + "]" * 200_000)
    code, _, err = _run(["encode", "--context-file", str(deep)], capsys)
    assert code == 1 and "nested too deeply" in err
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"input": "\xff"}')
    code, _, err = _run(["encode", "--context-file", str(bad)], capsys)
    assert code == 1 and "is not UTF-8: invalid byte at offset 11" in err
    code, out, _ = _run(
        ["encode", "--context-file", "-"], capsys, io.StringIO('{"input": "ls"}'), monkeypatch
    )
    assert code == 0 and out.split() == ["257", "259", "264", "108", "115"]
