"""Regression tests for the defects found by the second audit of the word-level preset (seed
004): lone surrogates, corrupt tokenizer files, numpy ids, non-UTF-8 stdin and arguments,
read-only CPU embeddings, the merge progress bar, special tokens and words that collide with the
model's own token texts, ``to_dict`` aliasing, ``save`` truncating a good file, and GPU backends
without a GPU."""

from __future__ import annotations

import io
import json
import sys
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toksmith.presets import embeddings as emb
from toksmith.presets import wordbpe
from toksmith.presets.wordbpe import END_OF_WORD, UNK, WordTokenizer

COUNTS = {"low": 5, "lower": 2, "newest": 6, "widest": 3, ",": 4, "a": 1}


@pytest.fixture(scope="module")
def tok():
    return wordbpe.train_from_counts(COUNTS, 10)


# ---- 1. lone surrogates are ValueErrors that say what is wrong, not bare UnicodeEncodeErrors -------


def test_lone_surrogates_are_clear_value_errors(tok, tmp_path):
    bad = "lo\ud800w"
    calls = [
        lambda: tok.encode(bad),
        lambda: tok.tokenize(bad),
        lambda: tok.words(bad),
        lambda: tok.normalize(bad),
        lambda: tok.encode_word(bad),
        lambda: tok.encode_batch(["low", bad]),
        lambda: tok.token_stats({bad: 1}),
        lambda: wordbpe.count_words([bad]),
        lambda: wordbpe.train([bad], 5),
        lambda: wordbpe.run(["low"], tmp_path / "out", sample=bad),
        lambda: wordbpe.train_from_counts({bad: 2}, 5),
        lambda: wordbpe.train_from_counts({bad: 2}, 5, lowercase=False),
        lambda: WordTokenizer([UNK, "\udcff"]),
        lambda: emb.token_seed("\udcff"),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="lone surrogate") as info:
            call()
        assert not isinstance(info.value, UnicodeError)
    assert not (tmp_path / "out").exists()
    # text without surrogates is untouched
    assert tok.encode("lower") == tok.encode_batch(["lower"])[0]


# ---- 2. corrupt tokenizer files --------------------------------------------------------------------


def test_loading_a_corrupt_file_is_a_value_error_naming_it(tmp_path, tok):
    cases = {
        "binary.json": b"\xff\xfe\x00\x01 not text",
        "deep.json": b"[" * 100_000 + b"]" * 100_000,
        "bigint.json": b'{"format": "toksmith-wordbpe", "version": ' + b"9" * 5000 + b"}",
    }
    for name, data in cases.items():
        p = tmp_path / name
        p.write_bytes(data)
        with pytest.raises(ValueError, match=name) as info:
            wordbpe.load(p)
        assert not isinstance(info.value, UnicodeError)


@pytest.mark.parametrize("version", [2, "1", None, 1.5])
def test_a_file_of_another_version_is_refused(tmp_path, tok, version):
    d = tok.to_dict()
    if version is None:
        del d["version"]
    else:
        d["version"] = version
    p = tmp_path / "v.json"
    p.write_text(json.dumps(d), encoding="utf-8")
    with pytest.raises(ValueError, match="version"):
        wordbpe.load(p)


def test_the_command_line_reports_a_corrupt_file_in_one_line(tmp_path, capsys):
    from toksmith.cli import main

    for name, data in {"deep.json": b"[" * 100_000, "bin.json": b"\xff\xfe"}.items():
        p = tmp_path / name
        p.write_bytes(data)
        assert main(["wordbpe", "encode", str(p), "hello"]) == 1
        err = capsys.readouterr().err
        assert err.startswith("toksmith wordbpe: error: ") and err.count("\n") == 1 and name in err


# ---- 3. numpy integer ids ----------------------------------------------------------------------


def test_decode_takes_numpy_integer_ids(tok):
    ids = tok.encode("lowest newest, a")
    text = tok.decode(ids)
    assert tok.decode(np.array(ids)) == text
    assert tok.decode(np.array(ids, dtype=np.uint16)) == text
    assert tok.decode([np.int32(i) for i in ids]) == text
    assert tok.id_to_token(np.int64(ids[0])) == tok.tokens[ids[0]]
    for bad in (np.bool_(True), np.float64(1.0)):
        with pytest.raises(TypeError, match="token ids must be int"):
            tok.decode([bad])
    with pytest.raises(ValueError, match="out of range"):
        tok.decode(np.array([tok.n_vocab]))


# ---- 4. the command line's stdin ------------------------------------------------------------------


def test_encode_reports_stdin_that_is_not_utf8(tmp_path, tok, monkeypatch, capsys):
    from toksmith.cli import main

    p = tmp_path / "t.json"
    tok.save(p)
    stdin = io.TextIOWrapper(
        io.BytesIO(b"low \xff newest"), encoding="utf-8", errors="surrogateescape"
    )
    monkeypatch.setattr(sys, "stdin", stdin)
    assert main(["wordbpe", "encode", str(p)]) == 1
    err = capsys.readouterr().err
    assert (
        err.startswith("toksmith wordbpe: error: ")
        and "stdin is not valid UTF-8" in err
        and "0xff" in err
    )
    monkeypatch.setattr(
        sys, "stdin", io.TextIOWrapper(io.BytesIO("low newest\n".encode()), encoding="utf-8")
    )
    assert main(["wordbpe", "encode", str(p)]) == 0
    assert capsys.readouterr().out.split() == [str(i) for i in tok.encode("low newest")]
    # arguments that were not UTF-8 (Python passes such bytes on as lone surrogates)
    assert main(["wordbpe", "encode", str(p), "lo\udcffw"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("toksmith wordbpe: error: ") and "not valid UTF-8" in err


# ---- 5. the CPU backend's array is writable like the numpy backend's -------------------------------


def test_cpu_embeddings_are_a_writable_array(tok):
    e = tok.embeddings(6, seed=3)
    assert e.flags.writeable and np.array_equal(e, tok.embeddings(6, seed=3, backend="numpy"))
    e /= 2  # a user normalising or fine-tuning the table in place
    assert np.array_equal(e * 2, tok.embeddings(6, seed=3))


# ---- 6. the merge progress bar ends at the merges learned ---------------------------------------


def test_the_merge_bar_ends_at_the_merges_learned(monkeypatch):
    bars = []

    class Bar:
        def __init__(self, **kw):
            self.n, self.total, self.closed = 0, kw.get("total"), False
            bars.append(self)

        def update(self, k):
            self.n += k

        def close(self):
            self.closed = True

    monkeypatch.setattr(
        wordbpe, "_progress_bar", lambda progress, **kw: Bar(**kw) if progress else None
    )
    t = wordbpe.train_from_counts(
        {"aaaaaaaa": 3, "hello": 2}, 50, progress=True
    )  # runs out of pairs early
    assert len(t.merges) < bars[0].total
    assert [(b.n, b.closed) for b in bars] == [(len(t.merges), True)]


# ---- 7. special tokens that a learned token would shadow -----------------------------------------


@pytest.mark.parametrize("special", ["a</w>", END_OF_WORD, "e", "low"])
def test_a_special_token_equal_to_a_learned_token_is_refused(special):
    with pytest.raises(ValueError, match="special token"):
        wordbpe.train_from_counts(COUNTS, 10, special_tokens=[UNK, special])
    # other special tokens are fine
    t = wordbpe.train_from_counts(COUNTS, 10, special_tokens=[UNK, "<pad>"])
    assert t.special_tokens == {UNK: 0, "<pad>": 1} and t.decode(t.encode("a lower")) == "a lower"


# ---- 8. words holding the end-of-word marker ------------------------------------------------------


def test_words_holding_the_end_of_word_marker_are_refused():
    with pytest.raises(ValueError, match="end-of-word marker"):
        wordbpe.train_from_counts({"x</w>y": 5, "ab": 2}, 10)
    with pytest.raises(ValueError, match="end-of-word marker"):
        wordbpe.train(["x</w>y q</w>"], 10, pattern=r"\S+")
    # the default pattern cuts "<", "/" and ">" off: such text trains as usual
    t = wordbpe.train(["x</w>y q</w>"], 10)
    assert t.decode(t.encode("x</w>y")) == "x < / w > y"


# ---- 9. to_dict is a copy -------------------------------------------------------------------------


def test_to_dict_does_not_alias_the_tokenizer(tok):
    before = tok.encode("lowest newest")
    d = tok.to_dict()
    d["tokens"][5] = "zzz"
    d["tokens"].append("extra")
    d["metadata"]["preset"] = "changed"
    assert "zzz" not in tok.tokens and "extra" not in tok.tokens
    assert tok.metadata["preset"] == "wordbpe"
    assert tok.encode("lowest newest") == before and tok.to_dict() != d


# ---- 10. save never leaves a truncated file ----------------------------------------------------------


def test_saving_metadata_json_cannot_hold_keeps_the_old_file(tmp_path, tok):
    p = tmp_path / "t.json"
    tok.save(p)
    good = p.read_bytes()
    bad = WordTokenizer(tok.tokens, merges=tok.merges, metadata={"languages": {"en", "de"}})
    with pytest.raises(TypeError, match="metadata must hold only JSON values"):
        bad.save(p)
    assert p.read_bytes() == good and wordbpe.load(p).tokens == tok.tokens


# ---- 11. GPU backends without a GPU -----------------------------------------------------------------


def _fake_cupy(count):
    def get_device_count():
        if isinstance(count, Exception):
            raise count
        return count

    return types.SimpleNamespace(
        cuda=types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=get_device_count))
    )


def _fake_torch(available):
    class Device:
        def __init__(self, spec):
            if not isinstance(spec, str) or spec.split(":")[0] not in ("cpu", "cuda", "mps"):
                raise RuntimeError(
                    f"Expected one of cpu, cuda, mps device type at start of device string: {spec}"
                )
            self.type = spec.split(":")[0]
            self.index = int(spec.split(":")[1]) if ":" in spec else None

    return types.SimpleNamespace(
        device=Device,
        cuda=types.SimpleNamespace(
            is_available=lambda: available, device_count=lambda: 1 if available else 0
        ),
    )


def test_gpu_backends_without_a_gpu_say_what_to_pass(tok, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(
        sys.modules, "cupy", _fake_cupy(RuntimeError("cudaErrorNoDevice: no CUDA-capable device"))
    )
    with pytest.raises(ValueError, match="cupy finds no CUDA GPU.*backend='cpu'"):
        tok.embeddings(4, backend="cupy")
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(0))
    with pytest.raises(ValueError, match="cupy finds no CUDA GPU"):
        tok.embeddings(4, backend="cupy")
    monkeypatch.setitem(sys.modules, "torch", _fake_torch(False))
    with pytest.raises(ValueError, match="torch finds no CUDA GPU.*device='cpu'"):
        tok.embeddings(4, backend="torch", device="cuda")
    with pytest.raises(ValueError, match="device must be a torch device"):
        tok.embeddings(4, backend="torch", device="gpu0")
    monkeypatch.setitem(sys.modules, "torch", _fake_torch(True))
    with pytest.raises(ValueError, match="cuda:3"):
        tok.embeddings(4, backend="torch", device="cuda:3")
    # the command line checks before reading the corpus or writing a file, in one line
    from toksmith.cli import main

    monkeypatch.setitem(sys.modules, "torch", _fake_torch(False))
    out = tmp_path / "out"
    assert (
        main(
            [
                "wordbpe",
                "run",
                str(tmp_path / "missing"),
                "--out",
                str(out),
                "--backend",
                "torch",
                "--device",
                "cuda",
                "--no-progress",
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert err.startswith("toksmith wordbpe: error: ") and "no CUDA GPU" in err and not out.exists()
    # without the package: what to install
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(ImportError, match="pip install cupy-cuda12x"):
        tok.embeddings(4, backend="cupy")


# ---- properties -------------------------------------------------------------------------------------

WORDS = st.lists(
    st.sampled_from(["low", "Lower", "NEWEST", "wid", "a", ",", "q", "zz", "é", "x\u0301"]),
    max_size=10,
)


@settings(max_examples=200, deadline=None)
@given(WORDS, st.sampled_from([" ", "\n", "\r\n", "\t "]))
def test_decode_of_numpy_ids_equals_decode_of_ints(words, sep):
    t = wordbpe.train_from_counts(COUNTS, 10)
    ids = t.encode(sep.join(words))
    assert t.decode(np.array(ids, dtype=np.int64)) == t.decode(ids)
    # every word comes back as one word: unknown characters stay inside their word
    assert len(t.decode(ids).split()) == len(t.words(sep.join(words)))
