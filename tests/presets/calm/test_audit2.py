"""Regression tests for a second adversarial audit of toksmith.calm (stop-pattern
metadata round trips, wrong types, CWGT writing, the calm CLI)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from toksmith import calm
from toksmith.cli import main

# --------------------------------------------------------------------------- stop patterns


@pytest.mark.parametrize("pattern", ["\u00a0", "\u3000", "\x85", "\u2028", "a\u00a0b"])
def test_stop_patterns_with_unicode_spaces_survive_the_metadata_round_trip(pattern):
    # was: parse_stop_patterns split on Unicode whitespace, so these patterns vanished (silent loss)
    data = pattern.encode("utf-8")
    spec = calm.format_stop_patterns([b"|", data])
    assert calm.parse_stop_patterns(spec) == (b"|", data)
    assert calm.StopConditions(spec).scan(b"x" + data + b"y")[1].pattern == data


def test_stop_metadata_still_splits_on_ascii_whitespace():
    assert calm.parse_stop_patterns(" |\t;\n&&\r\n||\x0b\x0c$ ") == (b"|", b";", b"&&", b"||", b"$")


def test_format_stop_patterns_is_linear_on_invalid_utf8():
    # was: quadratic (each invalid byte re-decoded the rest): 800 KB took ~25 s
    data = b"\xff\xc3\xa9" * 100_000
    start = time.perf_counter()
    spec = calm.format_stop_patterns([data])
    assert time.perf_counter() - start < 2.0
    assert calm.parse_stop_patterns(spec) == (data,)


def test_format_stop_patterns_rejects_empty_and_wrong_patterns():
    # was: b"" silently vanished from the string; a str item failed with "'<=' not supported ..."
    with pytest.raises(ValueError, match="stop pattern 1 is empty"):
        calm.format_stop_patterns([b"|", b""])
    with pytest.raises(TypeError, match="stop pattern 0 must be bytes, not str"):
        calm.format_stop_patterns(["&&"])
    with pytest.raises(TypeError, match="list of byte patterns, not str"):
        calm.format_stop_patterns("&&")
    assert calm.format_stop_patterns([memoryview(b"&&")]) == "&&"


def test_stop_conditions_raw_accepts_numpy_bool_and_names_the_type():
    # was: TypeError "raw must be a bool, not bool" for numpy.bool_
    assert calm.StopConditions("|", raw=np.bool_(True)).raw is True
    with pytest.raises(TypeError, match="raw must be a bool, not int"):
        calm.StopConditions("|", raw=1)


# --------------------------------------------------------------------------- ids and frames


@pytest.mark.parametrize("ids", [{104, 105}, {104: 1}, frozenset({104})])
def test_unordered_ids_are_type_errors(ids):
    # was: sets and dicts were decoded in their iteration order (bytes silently shuffled)
    with pytest.raises(TypeError, match="sequence of token ids"):
        calm.detokenize(ids)
    with pytest.raises(TypeError, match="sequence of token ids"):
        calm.ByteTokenizer().decode(ids)


def test_decode_batch_of_a_non_iterable_names_the_type():
    # was: TypeError "'NoneType' object is not iterable"
    with pytest.raises(TypeError, match="list of id sequences, not NoneType"):
        calm.ByteTokenizer().decode_batch(None)


def test_exit_code_with_too_many_digits_says_what_is_wrong():
    # was: ValueError "Exceeds the limit (4300 digits) for integer string conversion; use sys.set_int_max_str_digits()"
    with pytest.raises(ValueError, match="exit code has too many digits"):
        calm.tokenize_frame("HIST", "ls", exit=10**5000)


def test_template_with_a_reserved_id_is_not_called_a_sub_token():
    # was: "<RESERVED_300> (element 1) is a sub-token"
    with pytest.raises(ValueError, match="is a reserved id"):
        calm.Template([(calm.ATN, None), (300, "x")])
    with pytest.raises(ValueError, match="is a sub-token"):
        calm.Template([(calm.ATN, None), (calm.EXIT, "x")])


# --------------------------------------------------------------------------- CWGT writing


@pytest.mark.parametrize("weights", [[1e300], np.array([0.5, -1e39])])
def test_write_cwgt_refuses_weights_that_overflow_float32(tmp_path, weights):
    # was: stored as inf with only a RuntimeWarning (silent corruption)
    path = tmp_path / "w.cwgt"
    with pytest.raises(ValueError, match="does not fit float32"):
        calm.write_cwgt(path, {"d_model": 16, "n_layers": 1}, None, weights)
    assert not path.exists()
    calm.write_cwgt(
        path, {"d_model": 16, "n_layers": 1}, None, [np.inf, 3e38]
    )  # inf itself is kept
    assert calm.read_cwgt(path).weights[0] == np.inf


def test_write_cwgt_metadata_with_a_lone_surrogate_names_the_field(tmp_path):
    # was: bare UnicodeEncodeError "'utf-8' codec can't encode character '\udcff' ..."
    with pytest.raises(ValueError, match="metadata domain contains a lone surrogate"):
        calm.write_cwgt(
            tmp_path / "w.cwgt", {"d_model": 16, "n_layers": 1}, ("\udcff", "", ""), [1.0]
        )


# --------------------------------------------------------------------------- CLI


def test_cli_encode_empty_template_is_an_error(capsys):
    # was: --template '' silently built with the "shell" template
    code = main(["calm", "encode", "--template", "", "--context", '{"input": "ls"}'])
    out, err = capsys.readouterr()
    assert code == 1 and out == "" and "element 0 is empty" in err and "Traceback" not in err
