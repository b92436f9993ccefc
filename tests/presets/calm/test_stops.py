"""StopConditions: patterns across token boundaries, rollback, EOS/PAD, raw mode."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.complexity import assert_linear
from toksmith import calm

SHELL_STOPS = "| ; && ||"


def run(stops, stream):
    """Feed a stream the way a generation loop does; return (output, final result)."""
    stops.reset()
    out = []
    for token in stream:
        result = stops.feed(token)
        if result.stop:
            if result.rollback:
                del out[-result.rollback :]
            return out, result
        out.append(token)
    return out, None


@pytest.mark.parametrize(
    "stream, kept, pattern, rollback",
    [
        (b"ls | grep x", b"ls ", b"|", 0),
        (b"cd /tmp; ls", b"cd /tmp", b";", 0),
        (b"make && make install", b"make ", b"&&", 1),
        (b"test -f x || touch x", b"test -f x ", b"|", 0),  # '|' alone stops before '||' completes
        (b"echo a&b", b"echo a&b", None, 0),  # a single '&' is not a stop
    ],
)
def test_shell_patterns(stream, kept, pattern, rollback):
    stops = calm.StopConditions(SHELL_STOPS)
    out, result = run(stops, list(stream))
    assert bytes(out) == kept
    if pattern is None:
        assert result is None
    else:
        assert result.stop and result.reason == "pattern"
        assert result.pattern == pattern and result.rollback == rollback
    assert stops.scan(list(stream))[0] == list(kept)


def test_multibyte_pattern_spans_tokens_with_rollback():
    stops = calm.StopConditions("&&")
    assert not stops.feed(ord("a"))
    assert not stops.feed(ord("&"))  # first byte is emitted...
    result = stops.feed(ord("&"))  # ...and rolled back when the second completes the pattern
    assert result == calm.StopResult(True, 1, "pattern", b"&&")
    assert bool(result) is True


def test_longer_patterns_and_utf8_patterns():
    stops = calm.StopConditions(["END!", "→"])
    out, result = run(stops, list(b"abcEND!xyz"))
    assert bytes(out) == b"abc" and result.rollback == 3 and result.pattern == b"END!"
    arrow = "→".encode()  # 3 bytes
    out, result = run(stops, list(b"a " + arrow + b"b"))
    assert bytes(out) == b"a " and result.rollback == 2


def test_longest_pattern_wins_on_the_same_byte():
    stops = calm.StopConditions("& &&")
    out, result = run(stops, list(b"x&"))
    assert result.pattern == b"&"
    stops = calm.StopConditions("b ab")
    out, result = run(stops, list(b"xab"))
    assert bytes(out) == b"x" and result.pattern == b"ab" and result.rollback == 1


def test_eos_and_pad_always_stop():
    for raw in (False, True):
        stops = calm.StopConditions("", raw=raw)
        assert stops.feed(calm.EOS) == calm.StopResult(True, 0, "eos", None)
        assert stops.feed(calm.PAD) == calm.StopResult(True, 0, "pad", None)
    out, result = run(calm.StopConditions(SHELL_STOPS), [97, 98, calm.EOS, 99])
    assert out == [97, 98] and result.reason == "eos"


def test_raw_mode_disables_patterns_but_not_eos():
    stops = calm.StopConditions(SHELL_STOPS, raw=True)
    out, result = run(stops, list(b"a && b | c; d") + [calm.EOS])
    assert bytes(out) == b"a && b | c; d" and result.reason == "eos"
    assert calm.StopConditions(SHELL_STOPS, raw=True).scan(list(b"a|b")) == (
        list(b"a|b"),
        calm.StopResult(False),
    )


def test_special_tokens_break_multibyte_matches():
    stops = calm.StopConditions("&&")
    out, result = run(stops, [ord("&"), calm.NEXT, ord("&"), ord("x")])
    assert result is None


def test_reset_and_state_after_stop():
    stops = calm.StopConditions("&&")
    stops.feed(ord("&"))
    stops.reset()
    assert not stops.feed(ord("&"))
    assert stops.feed(ord("&")).stop
    assert not stops.feed(ord("&"))  # window cleared after a stop


def test_parsing_metadata_strings():
    assert calm.parse_stop_patterns("") == ()
    assert calm.parse_stop_patterns("  |   ;  ") == (b"|", b";")
    assert calm.parse_stop_patterns("| |") == (b"|",)
    assert calm.parse_stop_patterns(r"\n \s \t\r \\ \x00 \q") == (
        b"\n",
        b" ",
        b"\t\r",
        b"\\",
        b"\x00",
        b"\\q",
    )
    stops = calm.StopConditions(r"\n")
    out, result = run(stops, list(b"ls\nrm"))
    assert bytes(out) == b"ls"


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=4), max_size=5))
def test_metadata_string_roundtrip(patterns):
    stops = calm.StopConditions(patterns)
    again = calm.StopConditions(str(stops))
    assert again.patterns == stops.patterns
    assert again == stops


def test_from_metadata_and_model(tmp_path):
    import numpy as np

    assert calm.StopConditions.from_metadata(SHELL_STOPS).patterns == (b"|", b";", b"&&", b"||")
    meta = calm.CWGTMetadata("shell", calm.TEMPLATES["shell"], SHELL_STOPS)
    assert calm.StopConditions.from_metadata(meta).patterns == (b"|", b";", b"&&", b"||")
    path = tmp_path / "m.cwgt"
    calm.write_cwgt(
        path, {"d_model": 8, "n_layers": 1, "dt_rank": 1}, meta, np.zeros(1, np.float32)
    )
    model = calm.read_cwgt(path)
    assert calm.StopConditions.from_metadata(model) == calm.StopConditions(SHELL_STOPS)
    assert model.stop_conditions(raw=True).raw is True
    with pytest.raises(TypeError):
        calm.StopConditions.from_metadata(5)


def test_bad_input():
    with pytest.raises(TypeError, match="raw must be a bool"):
        calm.StopConditions("|", raw="yes")
    with pytest.raises(TypeError, match="not bytes"):
        calm.StopConditions(b"|")
    with pytest.raises(TypeError, match="iterable"):
        calm.StopConditions(5)
    with pytest.raises(TypeError, match="stop pattern 1"):
        calm.StopConditions(["|", 5])
    with pytest.raises(ValueError, match="stop pattern 0 is empty"):
        calm.StopConditions([""])
    stops = calm.StopConditions("|")
    with pytest.raises(ValueError, match="320"):
        stops.feed(320)
    with pytest.raises(ValueError, match="-1"):
        stops.feed(-1)
    with pytest.raises(TypeError):
        stops.feed("a")
    with pytest.raises(TypeError):
        stops.feed(1.0)
    with pytest.raises(TypeError):
        stops.scan("abc")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from([b"|", b";", b"&&", b"||", b"ab", b"xyz"]),
        min_size=1,
        max_size=3,
        unique=True,
    ),
    st.binary(max_size=40),
)
def test_scan_matches_a_reference(patterns, stream):
    """The first position where some pattern ends; output is everything before that pattern."""
    stops = calm.StopConditions(patterns)
    kept, result = stops.scan(list(stream))
    for end in range(1, len(stream) + 1):
        hits = [p for p in patterns if stream[:end].endswith(p)]
        if hits:
            longest = max(hits, key=len)
            assert result.stop and result.pattern == longest
            assert bytes(kept) == stream[: end - len(longest)]
            assert result.rollback == len(longest) - 1
            return
    assert not result and bytes(kept) == stream


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


def test_stop_scan_is_linear_in_the_number_of_patterns():
    # every fed byte used to be compared with every pattern: O(tokens x patterns)
    spec = " ".join(f"<{i}>" for i in range(20_000))
    stops = calm.StopConditions(spec)
    kept, result = stops.scan(b"<1" * 25_000 + b"<19999>")
    assert result.pattern == b"<19999>" and result.rollback == 6 and len(kept) == 50_000

    def run(k):  # k patterns, a stream of 2k bytes that matches the last one at its end
        last = f"<{k - 1}>".encode()
        stops = calm.StopConditions(" ".join(f"<{i}>" for i in range(k)))
        assert stops.scan(b"<1" * k + last)[1].pattern == last

    assert_linear(run, 2_000)


def test_stop_pattern_parsing_dedupes_in_linear_time_and_keeps_order():
    words = [f"w{i}" for i in range(30_000)]
    parsed = calm.parse_stop_patterns(" ".join(words + words[::-1]))
    listed = calm.StopConditions(words + words).patterns
    assert parsed == listed == tuple(w.encode() for w in words)

    def run(k):
        some = words[:k]
        calm.parse_stop_patterns(" ".join(some + some[::-1]))
        calm.StopConditions(some + some)

    assert_linear(run, 3_000)


def test_stop_pattern_with_a_lone_surrogate_is_a_clear_value_error():
    with pytest.raises(ValueError, match="lone surrogate"):
        calm.StopConditions("a\ud800")
    with pytest.raises(ValueError, match="lone surrogate"):
        calm.StopConditions(["\udc80"])


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
    spec = calm.format_stop_patterns([data])
    assert calm.parse_stop_patterns(spec) == (data,)
    assert_linear(lambda k: calm.format_stop_patterns([b"\xff\xc3\xa9" * k]), 10_000)


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
