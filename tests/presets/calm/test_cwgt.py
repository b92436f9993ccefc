"""CWGT v5 files: round trips, memory mapping, EWC, and every way a header can be wrong."""

from __future__ import annotations

import os
import pickle
import struct

import numpy as np
import pytest

from tests.complexity import peak_allocated
from toksmith import calm
from toksmith.calm import cwgt

META = calm.CWGTMetadata("shell", calm.TEMPLATES["shell"], "| ; && ||")


def make_header(**overrides):
    fields = dict(
        flags=calm.FLAG_TIED,
        d_model=64,
        n_layers=4,
        ffn_expand=2,
        expand=2,
        d_state=16,
        l_max=768,
        def_temperature=800,
        def_top_k=40,
        def_top_p=900,
        def_min_p=50,
        def_max_tokens=64,
        def_candidates=3,
        d_conv=4,
        dt_rank=4,
    )
    fields.update(overrides)
    return calm.CWGTHeader(**fields)


@pytest.fixture
def weights():
    return np.random.default_rng(0).standard_normal(1000).astype(np.float32)


@pytest.fixture
def good_file(tmp_path, weights):
    path = tmp_path / "model.cwgt"
    calm.write_cwgt(path, make_header(), META, weights)
    return path


def patched(path, offset, fmt, value):
    data = bytearray(path.read_bytes())
    struct.pack_into("<" + fmt, data, offset, value)
    out = path.with_name("bad.cwgt")
    out.write_bytes(bytes(data))
    return out


def test_roundtrip(good_file, weights):
    model = calm.read_cwgt(good_file)
    h = model.header
    assert h.magic == b"CWGT" and h.arch_version == 5 and h.vocab_size == 320
    assert (h.d_model, h.n_layers, h.ffn_expand, h.expand, h.d_state) == (64, 4, 2, 2, 16)
    assert (h.l_max, h.param_count, h.d_conv, h.dt_rank) == (768, 1000, 4, 4)
    assert (h.def_temperature, h.def_top_k, h.def_top_p, h.def_min_p) == (800, 40, 900, 50)
    assert (h.def_max_tokens, h.def_candidates) == (64, 3)
    assert h.flags == calm.FLAG_TIED and h.tied and not h.has_ewc
    assert h.meta_size == len(META.to_bytes())
    assert h.reserved == bytes(9)
    assert h.sampling_defaults == {
        "temperature": 0.8, "top_k": 40, "top_p": 0.9, "min_p": 0.05, "max_tokens": 64, "candidates": 3,
    }  # fmt: skip
    assert model.metadata == META
    assert (model.metadata.domain, model.metadata.template, model.metadata.stop_conditions) == (
        "shell",
        "BOS;CWD:cwd;GIT:git;HIST:history;COMP:completions;ENV:env;ATN;CMD:input",
        "| ; && ||",
    )
    assert model.domain == "shell" and model.template == META.template
    assert model.ewc is None
    assert isinstance(model.weights, np.memmap)
    assert model.weights.dtype == np.float32 and model.weights.shape == (1000,)
    assert not model.weights.flags.writeable
    assert np.array_equal(model.weights, weights)
    assert "CWGTModel(" in repr(model)


def test_file_layout_is_header_metadata_weights(good_file, weights):
    data = good_file.read_bytes()
    blob = b"shell\n" + calm.TEMPLATES["shell"].encode() + b"\n| ; && ||\n"
    assert data[:4] == b"CWGT"
    assert data[48 : 48 + len(blob)] == blob
    assert data[48 + len(blob) :] == weights.astype("<f4").tobytes()
    assert len(data) == 48 + len(blob) + 4000


def test_ewc_roundtrip(tmp_path, weights):
    fisher = np.linspace(0, 1, weights.size, dtype=np.float32)
    anchor = weights[::-1].copy()
    path = tmp_path / "ewc.cwgt"
    written = calm.write_cwgt(path, make_header(flags=0), META, weights, ewc=(fisher, anchor))
    assert written.has_ewc and not written.tied and written.flags == calm.FLAG_HAS_EWC
    model = calm.read_cwgt(path)
    assert model.header.has_ewc
    assert isinstance(model.ewc, calm.EWCData)
    got_fisher, got_anchor = model.ewc
    assert np.array_equal(got_fisher, fisher) and np.array_equal(model.ewc.anchor_weights, anchor)
    assert np.array_equal(model.weights, weights)
    assert all(isinstance(a, np.memmap) for a in (*model.ewc, model.weights))
    # EWC arrays sit before the weights
    data = path.read_bytes()
    start = 48 + model.header.meta_size
    assert data[start : start + 4000] == fisher.tobytes()
    # also as a dict
    calm.write_cwgt(
        path,
        make_header(),
        META,
        weights,
        ewc={"fisher_diagonal": fisher, "anchor_weights": anchor},
    )
    assert np.array_equal(calm.read_cwgt(path).ewc.fisher_diagonal, fisher)


def test_write_refuses_a_zero_dt_rank(tmp_path):
    # the rank is part of the model's shape: a zero is refused, never replaced by a guess
    path = tmp_path / "m.cwgt"
    for header in ({"d_model": 40, "n_layers": 1}, calm.CWGTHeader(d_model=40, n_layers=1)):
        with pytest.raises(ValueError, match=r"dt_rank is 0.*d_model=40 is 3\)"):
            calm.write_cwgt(path, header, None, np.zeros(2, np.float32))
    assert not path.exists()
    assert cwgt.default_dt_rank(40) == 3 and cwgt.default_dt_rank(16 * 300) == 255
    with pytest.raises(ValueError, match="d_model must be > 0"):
        cwgt.default_dt_rank(0)


def test_write_derives_counts_and_accepts_dicts(tmp_path):
    path = tmp_path / "m.cwgt"
    header = calm.write_cwgt(
        str(path),
        {"d_model": 40, "n_layers": 1, "tied": True, "dt_rank": 3},
        {"domain": "d"},
        np.arange(6).reshape(2, 3),
    )
    assert header.param_count == 6 and header.tied
    assert header.dt_rank == 3
    model = calm.read_cwgt(str(path))
    assert model.header == header
    assert model.weights.tolist() == [0, 1, 2, 3, 4, 5]
    assert model.metadata == calm.CWGTMetadata("d", "", "")
    assert path.read_bytes()[48 : 48 + header.meta_size] == b"d\n\n\n"


def test_write_sets_counts_and_ewc_flag_from_the_data(tmp_path, weights):
    # e.g. re-saving a model that had EWC data, with new metadata and without its EWC arrays
    src = tmp_path / "src.cwgt"
    calm.write_cwgt(src, make_header(), META, weights, ewc=(weights, weights))
    old = calm.read_cwgt(src)
    assert old.header.has_ewc
    dst = tmp_path / "dst.cwgt"
    written = calm.write_cwgt(dst, old.header, calm.CWGTMetadata("shell2"), old.weights[:10])
    assert (written.param_count, written.meta_size, written.has_ewc, written.tied) == (
        10,
        9,
        False,
        True,
    )
    assert calm.read_cwgt(dst).header == written
    stale = make_header(param_count=5, meta_size=5, flags=calm.FLAG_HAS_EWC)
    assert calm.write_cwgt(dst, stale, META, weights).param_count == 1000


def test_no_metadata_and_no_weights(tmp_path):
    path = tmp_path / "empty.cwgt"
    calm.write_cwgt(path, make_header(), None, np.zeros(0, np.float32))
    model = calm.read_cwgt(path)
    assert model.header.meta_size == 0 and model.header.param_count == 0
    assert model.metadata == calm.CWGTMetadata() and model.weights.size == 0
    assert path.stat().st_size == 48


def test_large_weights_memory_map(tmp_path):
    values = np.random.default_rng(1).random(1 << 18, dtype=np.float32)
    path = tmp_path / "big.cwgt"
    calm.write_cwgt(path, make_header(), META, values)
    model = calm.read_cwgt(path)
    assert isinstance(model.weights, np.memmap)
    assert np.array_equal(model.weights, values)
    assert float(model.weights[12345]) == float(values[12345])


def test_unconstrained_fields_roundtrip_any_value(tmp_path, weights):
    for name, value in [
        ("ffn_expand", 0),
        ("ffn_expand", 255),
        ("def_temperature", 65535),
        ("def_top_k", 65535),
        ("def_max_tokens", 65535),
        ("def_candidates", 255),
        ("d_model", 65535),
        ("l_max", 1),
    ]:
        path = tmp_path / f"{name}.cwgt"
        calm.write_cwgt(path, make_header(**{name: value}), META, weights)
        assert getattr(calm.read_cwgt(path).header, name) == value
    path = tmp_path / "v6.cwgt"  # later versions are read (their reserved bytes are kept)
    calm.write_cwgt(path, make_header(arch_version=6, reserved=b"\x01" * 9), META, weights)
    assert calm.read_cwgt(path).header.reserved == b"\x01" * 9


# --------------------------------------------------------------------------- corrupted headers

CORRUPTIONS = [
    ("magic", 0, "4s", b"CWGX", "expected b'CWGT'"),
    ("magic", 0, "4s", b"\x80NUM", "expected b'CWGT'"),
    ("arch_version", 4, "H", 4, "version 4 is not supported"),
    ("arch_version", 4, "H", 0, "version 0"),
    ("flags", 6, "H", 0x0004, "unknown flag bits 0x0004"),
    ("flags", 6, "H", 0x8001, "unknown flag bits"),
    ("vocab_size", 8, "H", 0, "must be 320, got 0"),
    ("vocab_size", 8, "H", 321, "must be 320, got 321"),
    ("d_model", 10, "H", 0, "must be > 0"),
    ("n_layers", 12, "B", 0, "must be > 0"),
    ("expand", 14, "B", 0, "must be > 0"),
    ("d_state", 15, "B", 0, "must be > 0"),
    ("l_max", 16, "H", 0, "must be > 0"),
    ("param_count", 18, "I", 1001, "truncated"),
    ("param_count", 18, "I", 999, "4 trailing bytes"),
    ("param_count", 18, "I", 0xFFFFFFFF, "need"),
    ("def_top_p", 26, "H", 1001, "above 1000"),
    ("def_min_p", 28, "H", 65535, "above 1000"),
    ("d_conv", 33, "B", 0, "must be > 0"),
    ("meta_size", 34, "I", 0xFFFFFFFF, "does not fit"),
    ("meta_size", 34, "I", 10**6, "does not fit"),
    ("dt_rank", 38, "B", 0, "must be > 0"),
    ("reserved", 39, "B", 1, "zero-filled"),
    ("reserved", 47, "B", 255, "zero-filled"),
]


@pytest.mark.parametrize("field, offset, fmt, value, problem", CORRUPTIONS)
def test_corrupted_field_rejected(good_file, field, offset, fmt, value, problem):
    bad = patched(good_file, offset, fmt, value)
    with pytest.raises(calm.CWGTError) as info:
        calm.read_cwgt(bad)
    err = info.value
    assert isinstance(err, ValueError)
    expected_offset = calm.HEADER_FIELDS[field][0]
    assert (err.field, err.offset) == (field, expected_offset)
    message = str(err)
    assert f"'{field}' at byte offset {expected_offset}" in message
    assert problem in message
    assert str(bad) in message


def test_meta_size_mismatch_shows_up_as_a_size_error(good_file):
    # a smaller meta_size leaves the rest of the metadata to be read as weights: sizes disagree
    bad = patched(good_file, 34, "I", 4)
    with pytest.raises(calm.CWGTError, match="'param_count' at byte offset 18"):
        calm.read_cwgt(bad)


def test_every_truncation_rejected(good_file):
    data = good_file.read_bytes()
    cut = good_file.with_name("cut.cwgt")
    meta_end = 48 + len(META.to_bytes())
    for size in list(range(0, 60)) + [
        meta_end - 1,
        meta_end,
        meta_end + 1,
        len(data) - 4,
        len(data) - 1,
    ]:
        cut.write_bytes(data[:size])
        with pytest.raises(calm.CWGTError) as info:
            calm.read_cwgt(cut)
        err = info.value
        if size < 48:
            offset, width = calm.HEADER_FIELDS[err.field]
            assert offset <= size < offset + width, (size, err.field)
            assert "truncated" in str(err)
        elif size < meta_end:
            assert err.field == "meta_size" and err.offset == 34
        else:
            assert err.field == "param_count" and err.offset == 18


def test_metadata_must_be_utf8_and_at_most_3_lines(tmp_path, weights):
    path = tmp_path / "m.cwgt"
    header = make_header()
    for blob, field, offset, problem in [
        (b"shell\n\xff\n|\n", "metadata", 54, "not valid UTF-8"),
        (b"a\nb\nc\nd\n", "metadata", 48, "expected 3 lines"),
    ]:
        data = _raw_header(header, weights.size, len(blob))
        path.write_bytes(data + blob + weights.tobytes())
        with pytest.raises(calm.CWGTError) as info:
            calm.read_cwgt(path)
        assert (info.value.field, info.value.offset) == (field, offset)
        assert problem in str(info.value)


def _raw_header(header, param_count, meta_size):
    import dataclasses

    return dataclasses.replace(header, param_count=param_count, meta_size=meta_size).to_bytes()


def test_lenient_metadata_forms(tmp_path, weights):
    path = tmp_path / "m.cwgt"
    for blob, expected in [
        (b"shell", ("shell", "", "")),
        (b"shell\nBOS;ATN;CMD:input", ("shell", "BOS;ATN;CMD:input", "")),
        (b"a\r\nb\r\nc\r\n", ("a", "b", "c")),
    ]:
        path.write_bytes(
            _raw_header(make_header(), weights.size, len(blob)) + blob + weights.tobytes()
        )
        assert calm.read_cwgt(path).metadata == calm.CWGTMetadata(*expected)


def test_not_a_cwgt_file(tmp_path):
    import pickle

    path = tmp_path / "x.cwgt"
    path.write_bytes(pickle.dumps({"weights": [1.0]}) + bytes(64))
    with pytest.raises(calm.CWGTError, match="'magic' at byte offset 0"):
        calm.read_cwgt(path)
    with pytest.raises(FileNotFoundError):
        calm.read_cwgt(tmp_path / "missing.cwgt")
    with pytest.raises(TypeError, match="path"):
        calm.read_cwgt(5)


# --------------------------------------------------------------------------- writing errors


def test_write_errors(tmp_path, weights):
    path = tmp_path / "w.cwgt"
    with pytest.raises(ValueError, match="fisher_diagonal has 3 values but there are 1000 weights"):
        calm.write_cwgt(path, make_header(), META, weights, ewc=(np.zeros(3), np.zeros(3)))
    with pytest.raises(ValueError, match="missing anchor_weights"):
        calm.write_cwgt(path, make_header(), META, weights, ewc={"fisher_diagonal": weights})
    with pytest.raises(TypeError, match="ewc must be None or a pair"):
        calm.write_cwgt(path, make_header(), META, weights, ewc=weights)
    with pytest.raises(ValueError, match="one line"):
        calm.write_cwgt(path, make_header(), calm.CWGTMetadata("a\nb"), weights)
    with pytest.raises(ValueError, match="exactly once"):
        calm.write_cwgt(path, make_header(), calm.CWGTMetadata("a", "BOS;CMD:input"), weights)
    with pytest.raises(TypeError, match="numeric array"):
        calm.write_cwgt(path, make_header(), META, np.array(["a"]))
    with pytest.raises(TypeError, match="numeric array"):
        calm.write_cwgt(path, make_header(), META, np.array([True]))
    with pytest.raises(ValueError, match="unknown CWGT header field"):
        calm.write_cwgt(path, {"d_model": 8, "n_layers": 1, "layers": 2}, META, weights)
    with pytest.raises(ValueError, match="unknown metadata field"):
        calm.write_cwgt(path, make_header(), {"domain": "x", "stops": "|"}, weights)
    with pytest.raises(TypeError, match="header must be"):
        calm.write_cwgt(path, 5, META, weights)
    with pytest.raises(TypeError, match="metadata must be"):
        calm.write_cwgt(path, make_header(), 5, weights)
    with pytest.raises(TypeError, match="metadata domain must be a str"):
        calm.write_cwgt(path, make_header(), calm.CWGTMetadata(5), weights)
    with pytest.raises(calm.CWGTError, match="'n_layers' at byte offset 12: 300 does not fit"):
        calm.write_cwgt(path, make_header(n_layers=300), META, weights)
    with pytest.raises(calm.CWGTError, match="'d_model' at byte offset 10: must be > 0"):
        calm.write_cwgt(path, {"n_layers": 1}, META, weights)
    with pytest.raises(calm.CWGTError, match="'d_state'.*must be an int"):
        calm.write_cwgt(path, make_header(d_state=1.5), META, weights)
    with pytest.raises(calm.CWGTError, match="arch_version"):
        calm.write_cwgt(path, make_header(arch_version=4), META, weights)
    assert not path.exists()  # nothing half-written
    assert [p.name for p in tmp_path.iterdir()] == []


def test_header_from_bytes_type_and_length():
    with pytest.raises(TypeError):
        calm.CWGTHeader.from_bytes("CWGT")
    with pytest.raises(calm.CWGTError, match="'l_max' at byte offset 16: file truncated: 17 bytes"):
        calm.CWGTHeader.from_bytes(make_header().to_bytes()[:17])
    h = make_header()
    assert calm.CWGTHeader.from_bytes(h.to_bytes()) == h
    assert h.as_dict()["tied"] is True


def _header(**fields):
    values = dict(d_model=8, n_layers=1, dt_rank=1)
    values.update(fields)
    return calm.CWGTHeader(**values)


def test_metadata_from_bytes_rejects_non_bytes_without_allocating():
    def refuse():
        with pytest.raises(TypeError, match="must be bytes"):
            calm.CWGTMetadata.from_bytes(10**9)  # bytes(10**9) would allocate a gigabyte
        with pytest.raises(TypeError, match="must be bytes"):
            calm.CWGTMetadata.from_bytes(2**70)
        with pytest.raises(TypeError):
            calm.CWGTMetadata.from_bytes("shell\n")

    assert peak_allocated(refuse) < 1 << 20


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


@pytest.mark.parametrize("weights", [[1e300], np.array([0.5, -1e39])])
def test_write_cwgt_refuses_weights_that_overflow_float32(tmp_path, weights):
    # was: stored as inf with only a RuntimeWarning (silent corruption)
    path = tmp_path / "w.cwgt"
    with pytest.raises(ValueError, match="does not fit float32"):
        calm.write_cwgt(path, {"d_model": 16, "n_layers": 1, "dt_rank": 1}, None, weights)
    assert not path.exists()
    calm.write_cwgt(
        path, {"d_model": 16, "n_layers": 1, "dt_rank": 1}, None, [np.inf, 3e38]
    )  # inf itself is kept
    assert calm.read_cwgt(path).weights[0] == np.inf


def test_write_cwgt_metadata_with_a_lone_surrogate_names_the_field(tmp_path):
    # was: bare UnicodeEncodeError "'utf-8' codec can't encode character '\udcff' ..."
    with pytest.raises(ValueError, match="metadata domain contains a lone surrogate"):
        calm.write_cwgt(
            tmp_path / "w.cwgt",
            {"d_model": 16, "n_layers": 1, "dt_rank": 1},
            ("\udcff", "", ""),
            [1.0],
        )


def test_load_model_expands_the_home_folder(tmp_path, monkeypatch):
    np = pytest.importorskip("numpy")
    from toksmith.presets.calm import CWGTHeader, load_model, write_cwgt

    monkeypatch.setenv("HOME", str(tmp_path))
    write_cwgt(
        tmp_path / "m.cwgt", CWGTHeader(d_model=16, n_layers=1, dt_rank=1), None, np.zeros(4)
    )
    assert load_model("~/m.cwgt").header.d_model == 16
