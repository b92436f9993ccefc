"""tokenize_frame / parse_frame: sub-tokens, round trips, bad input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toksmith import calm

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
nonempty = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20)


def test_frame_accepts_ids_and_names():
    expected = [260, 97, 269]
    for frame in (calm.CWD, "CWD", "<CWD>", "cwd", " <cwd> "):
        assert calm.tokenize_frame(frame, "a") == expected


def test_frame_content_defaults_to_empty():
    assert calm.tokenize_frame("GIT") == [261, 269]
    assert calm.tokenize_frame("COMP", []) == [266, 269]


def test_frame_with_bytes_content_and_every_byte():
    assert calm.tokenize_frame("CMD", bytes(range(256))) == [264, *range(256), 269]


def test_exit_code_forms():
    assert calm.tokenize_frame("HIST", "x", exit=127) == [262, 120, 263, 49, 50, 55, 269]
    assert calm.tokenize_frame("HIST", "x", exit=-1) == [262, 120, 263, 45, 49, 269]
    assert calm.tokenize_frame("HIST", "x", exit="SIGINT")[2:4] == [263, 83]
    assert calm.tokenize_frame("HIST", "x") == [262, 120, 269]
    with pytest.raises(TypeError, match="exit"):
        calm.tokenize_frame("HIST", "x", exit=1.5)
    with pytest.raises(TypeError, match="exit"):
        calm.tokenize_frame("HIST", "x", exit=True)


def test_comp_single_string_is_one_candidate():
    assert calm.tokenize_frame("COMP", "ab") == [266, 97, 98, 269]
    assert calm.tokenize_frame("COMP", ("a", b"b")) == [266, 97, 268, 98, 269]


def test_comp_is_not_capped_here():
    ids = calm.tokenize_frame("COMP", [str(i % 10) for i in range(20)])
    assert ids.count(calm.NEXT) == 19


def test_reserved_ids_are_simple_frames():
    assert calm.tokenize_frame(300, "x") == [300, 120, 269]


def test_max_tokens():
    assert calm.tokenize_frame("CWD", "ab", max_tokens=4) == [260, 97, 98, 269]
    with pytest.raises(ValueError, match="needs 5 tokens but max_tokens is 4"):
        calm.tokenize_frame("CWD", "abc", max_tokens=4)


@pytest.mark.parametrize(
    "frame", ["BOS", "EOS", "PAD", "ATN", "END", "NEXT", "EXIT", "POS", "BY", calm.NOTE]
)
def test_non_frame_tokens_rejected(frame):
    with pytest.raises(ValueError, match="not a frame token"):
        calm.tokenize_frame(frame, "x")


def test_bad_frame_values_and_types():
    with pytest.raises(ValueError, match="byte token"):
        calm.tokenize_frame(65, "x")
    with pytest.raises(ValueError, match="out of range"):
        calm.tokenize_frame(320, "x")
    with pytest.raises(ValueError, match="unknown CALM special token"):
        calm.tokenize_frame("FOO", "x")
    with pytest.raises(TypeError, match="frame"):
        calm.tokenize_frame(None, "x")
    with pytest.raises(TypeError, match="frame"):
        calm.tokenize_frame(True, "x")
    with pytest.raises(TypeError, match="frame"):
        calm.tokenize_frame(2.0, "x")


def test_bad_content_types():
    with pytest.raises(TypeError, match="<CWD> content must be str or bytes"):
        calm.tokenize_frame("CWD", 5)
    with pytest.raises(TypeError, match="<CWD> content"):
        calm.tokenize_frame("CWD", ["a"])
    with pytest.raises(TypeError, match="list of candidates"):
        calm.tokenize_frame("COMP", 5)
    with pytest.raises(TypeError, match="completion candidate 1"):
        calm.tokenize_frame("COMP", ["a", 5])
    with pytest.raises(TypeError, match="pos must be str or bytes"):
        calm.tokenize_frame("WORD", "a", pos=3)
    with pytest.raises(ValueError, match="lone surrogate"):
        calm.tokenize_frame("CWD", "\udc80")


@pytest.mark.parametrize(
    "frame, keyword",
    [
        ("CWD", "exit"),
        ("HIST", "pos"),
        ("WORD", "by"),
        ("QUOTE", "note"),
        ("REF", "ipa"),
        ("COMP", "exit"),
    ],
)
def test_subtoken_on_wrong_frame_is_type_error(frame, keyword):
    with pytest.raises(TypeError, match=f"take no {keyword}="):
        calm.tokenize_frame(frame, "x", **{keyword: "1"})


def test_parse_frame_examples():
    assert calm.parse_frame(calm.tokenize_frame("WORD", "cat", pos="n.")) == {
        "frame": "<WORD>",
        "content": "cat",
        "pos": "n.",
    }
    assert calm.parse_frame([266, 97, 268, 98, 269]) == {"frame": "<COMP>", "content": ["a", "b"]}
    assert (
        calm.parse_frame([262, 120, 263, 48, 48, 269])["exit"] == "00"
    )  # not canonical: kept as text
    assert calm.parse_frame([260, 0xFF, 269])["content"] == b"\xff"


def test_parse_frame_errors():
    with pytest.raises(ValueError, match="does not end with <END>"):
        calm.parse_frame([260, 97])
    with pytest.raises(ValueError, match="unexpected <EXIT> at position 2 inside a <CWD> frame"):
        calm.parse_frame([260, 97, 263, 269])
    with pytest.raises(ValueError, match="<POS> appears twice"):
        calm.parse_frame([270, 97, 271, 98, 271, 99, 269])
    with pytest.raises(ValueError, match="not a frame token"):
        calm.parse_frame([257, 269])
    with pytest.raises(ValueError, match="at least"):
        calm.parse_frame([269])
    with pytest.raises(TypeError):
        calm.parse_frame("abc")


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["CWD", "GIT", "CMD", "ENV", "QUERY", "DEF"]),
    text,
)
def test_simple_frames_roundtrip(frame, content):
    ids = calm.tokenize_frame(frame, content)
    assert ids[0] == calm.resolve_token(frame) and ids[-1] == calm.END_TOKEN
    assert calm.parse_frame(ids) == {"frame": f"<{frame}>", "content": content}


@settings(max_examples=100, deadline=None)
@given(
    text,
    st.one_of(st.none(), st.integers(-300, 300)),
    st.one_of(st.none(), nonempty),
    st.one_of(st.none(), nonempty),
    st.one_of(st.none(), nonempty),
)
def test_subtoken_frames_roundtrip(content, exit_code, a, b, c):
    parsed = calm.parse_frame(calm.tokenize_frame("HIST", content, exit=exit_code))
    assert parsed.get("exit") == exit_code and parsed["content"] == content
    parsed = calm.parse_frame(calm.tokenize_frame("WORD", content, pos=a, note=b, ipa=c))
    assert (parsed.get("pos"), parsed.get("note"), parsed.get("ipa")) == (a, b, c)
    parsed = calm.parse_frame(calm.tokenize_frame("QUOTE", content, by=a))
    assert parsed.get("by") == a and parsed["content"] == content
    parsed = calm.parse_frame(calm.tokenize_frame("REF", content, note=b))
    assert parsed.get("note") == b and parsed["content"] == content


@settings(max_examples=100, deadline=None)
@given(st.lists(text, min_size=1, max_size=20))
def test_comp_roundtrip(candidates):
    ids = calm.tokenize_frame("COMP", candidates)
    assert ids.count(calm.NEXT) == len(candidates) - 1
    assert calm.parse_frame(ids)["content"] == candidates


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
