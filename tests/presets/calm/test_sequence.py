"""Templates, build_sequence (caps, l_max, dropping) and parse_sequence."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from toksmith import calm

SHELL = calm.TEMPLATES["shell"]
text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
nonempty = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
history_item = st.builds(
    lambda cmd, code: {"cmd": cmd} if code is None else {"cmd": cmd, "exit": code},
    text,
    st.one_of(st.none(), st.integers(-5, 300)),
)


@st.composite
def shell_contexts(draw, max_history=25, max_completions=22):
    ctx = {}
    for key in ("cwd", "git"):
        value = draw(st.one_of(st.none(), nonempty))
        if value is not None:
            ctx[key] = value
    history = draw(st.lists(history_item, max_size=max_history))
    if history:
        ctx["history"] = history
    completions = draw(st.lists(text, max_size=max_completions))
    if completions:
        ctx["completions"] = completions
    env = draw(st.one_of(st.none(), nonempty, st.lists(nonempty, min_size=2, max_size=18)))
    if env is not None:
        ctx["env"] = env
    ctx["input"] = draw(text)
    return ctx


def expected_after_caps(ctx):
    out = dict(ctx)
    if "history" in out:
        out["history"] = out["history"][-15:]
    if "completions" in out:
        out["completions"] = out["completions"][:15]
    if isinstance(out.get("env"), list):
        out["env"] = out["env"][:15]
    return out


# --------------------------------------------------------------------------- templates


def test_template_parse_and_canonical_spec():
    t = calm.parse_template(" bos ; <CWD>:cwd;ATN ; cmd:input ")
    assert t.spec == "BOS;CWD:cwd;ATN;CMD:input"
    assert t.items == (
        calm.TemplateItem(calm.BOS, None),
        calm.TemplateItem(calm.CWD, "cwd"),
        calm.TemplateItem(calm.ATN, None),
        calm.TemplateItem(calm.CMD, "input"),
    )
    assert t.target == calm.TemplateItem(calm.CMD, "input")
    assert calm.parse_template("shell") == calm.Template.parse(SHELL)
    assert str(calm.parse_template("shell")) == SHELL
    assert calm.parse_template(t) is t
    assert hash(t) == hash(calm.Template.parse(t.spec))


@pytest.mark.parametrize("name", sorted(calm.TEMPLATES))
def test_all_named_templates_parse(name):
    template = calm.parse_template(name)
    assert str(template) == calm.TEMPLATES[name]
    assert [item.token for item in template.items].count(calm.ATN) == 1


@pytest.mark.parametrize(
    "spec, message",
    [
        ("BOS;CWD:cwd;CMD:input", "exactly once, found 0"),
        ("BOS;ATN;ATN;CMD:input", "exactly once, found 2"),
        ("BOS;CWD:cwd;ATN", "last element must be a frame after <ATN>"),
        ("BOS;ATN;CMD:input;EOS", "<EOS> is not part of a template"),
        ("PAD;ATN;CMD:input", "<PAD> is not part of a template"),
        ("BOS;CWD;ATN;CMD:input", "needs a context key"),
        ("BOS:x;ATN;CMD:input", "takes no context key"),
        ("BOS;CWD:cwd;CWD:cwd2;ATN;CMD:input", "<CWD> appears twice"),
        ("BOS;CWD:x;GIT:x;ATN;CMD:input", "'x' is used twice"),
        ("BOS;CWD:1x;ATN;CMD:input", "not an identifier"),
        ("BOS;CWD:;ATN;CMD:input", "empty key"),
        ("CWD:cwd;BOS;ATN;CMD:input", "<BOS> may only be the first"),
        ("BOS;;ATN;CMD:input", "element 1 is empty"),
        ("BOS;EXIT:x;ATN;CMD:input", "sub-token"),
        ("BOS;FOO:x;ATN;CMD:input", "unknown token 'FOO'"),
        ("shel", "named templates: shell"),
    ],
)
def test_bad_templates(spec, message):
    with pytest.raises(ValueError, match=message):
        calm.parse_template(spec)
    with pytest.raises(ValueError, match=message):
        calm.build_sequence(spec, {})


def test_template_type_errors():
    with pytest.raises(TypeError, match="template spec must be a str"):
        calm.Template.parse(5)
    with pytest.raises(TypeError, match="build_sequence expects a template"):
        calm.build_sequence(5, {})
    with pytest.raises(TypeError, match="build_sequence expects a template"):
        calm.build_sequence(None, {})


# --------------------------------------------------------------------------- building


def test_absent_values_omit_frames_but_not_the_target():
    seq = calm.build_sequence(
        "shell", {"cwd": "", "git": None, "history": [], "completions": [], "env": {}}
    )
    assert seq == [calm.BOS, calm.ATN, calm.CMD]


def test_history_forms_and_order():
    seq = calm.build_sequence(
        "shell",
        {
            "history": ["ls", {"cmd": b"pwd", "exit": None}, {"cmd": "make", "exit": "2"}],
            "input": "",
        },
    )
    assert (
        seq.format()
        == "<BOS> <HIST> ls <END> <HIST> pwd <END> <HIST> make <EXIT> 2 <END> <ATN> <CMD>"
    )
    # a single dict is one item
    assert calm.build_sequence("shell", {"history": {"cmd": "ls", "exit": 0}}).format() == (
        "<BOS> <HIST> ls <EXIT> 0 <END> <ATN> <CMD>"
    )


def test_env_forms():
    assert calm.build_sequence("shell", {"env": {"venv": "p", "node": 18}}).format() == (
        "<BOS> <ENV> venv:p <END> <ENV> node:18 <END> <ATN> <CMD>"
    )
    assert (
        calm.build_sequence("shell", {"env": ["a", "b"]}).format()
        == "<BOS> <ENV> a <END> <ENV> b <END> <ATN> <CMD>"
    )


def test_unused_context_keys_are_refused():
    # was: ignored silently (a misspelt key lost its value); the template names every key
    with pytest.raises(ValueError, match="unknown key.*'extra'"):
        calm.build_sequence("shell", {"input": "ls", "extra": 5})


def test_dictionary_quote_reference_templates():
    seq = calm.build_sequence(
        "dictionary",
        {
            "word": {"text": "window", "pos": "n.", "note": "OE. windowe"},
            "definition": "An opening",
        },
        training=True,
    )
    assert (
        seq.format()
        == "<BOS> <WORD> window <POS> n. <NOTE> OE. windowe <END> <ATN> <DEF> An opening <EOS>"
    )
    seq = calm.build_sequence(
        "quote", {"query": "sorrow", "quote": {"text": "Then to come", "by": "Milton"}}
    )
    assert seq.format() == "<BOS> <QUERY> sorrow <END> <ATN> <QUOTE> Then to come <BY> Milton"
    seq = calm.build_sequence(
        "reference", {"query": "tls", "ref": {"text": "RFC 8446", "note": "TLS 1.3"}}
    )
    assert seq.format() == "<BOS> <QUERY> tls <END> <ATN> <REF> RFC 8446 <NOTE> TLS 1.3"


def test_caps_at_15_items():
    ctx = {
        "history": [{"cmd": f"c{i}", "exit": 0} for i in range(20)],
        "completions": [f"x{i}" for i in range(20)],
        "env": [f"e{i}" for i in range(20)],
        "input": "",
    }
    seq = calm.build_sequence("shell", ctx)
    assert seq.count(calm.HIST) == 15
    assert seq.count(calm.COMP) == 1 and seq.count(calm.NEXT) == 14
    assert seq.count(calm.ENV) == 15
    parsed = calm.parse_sequence(seq)
    assert [h["cmd"] for h in parsed["history"]] == [f"c{i}" for i in range(5, 20)]  # newest kept
    assert parsed["completions"] == [f"x{i}" for i in range(15)]
    assert parsed["env"] == [f"e{i}" for i in range(15)]
    assert not seq.dropped  # the cap is silent...
    assert seq.dropped.capped["history"] == ctx["history"][:5]  # ...but listed
    assert seq.dropped.capped["completions"] == ctx["completions"][15:]


def test_l_max_drops_oldest_history_then_completions():
    ctx = {
        "cwd": "/home/u",
        "history": [{"cmd": "a" * 10, "exit": 0}, {"cmd": "b" * 10, "exit": 0}],
        "completions": ["c" * 5, "d" * 5],
        "input": "ls",
    }
    full = calm.build_sequence("shell", ctx)
    # BOS + CWD frame + 2 HIST frames + COMP frame + ATN + CMD frame
    assert len(full) == 1 + 9 + 2 * 14 + 13 + 1 + 3  # 55
    # one history item too many
    seq = calm.build_sequence("shell", ctx, l_max=54)
    assert len(seq) == 41 and seq.dropped.history == [ctx["history"][0]]
    assert seq.dropped["history"] == [ctx["history"][0]] and seq.dropped.completions == []
    assert calm.parse_sequence(seq)["history"] == [ctx["history"][1]]
    # all history, then the last completion
    seq = calm.build_sequence("shell", ctx, l_max=26)
    assert seq.dropped.history == ctx["history"]
    assert seq.dropped.completions == ["d" * 5]
    assert calm.parse_sequence(seq)["completions"] == ["c" * 5]
    assert len(seq) == 21
    # then the whole remaining context
    seq = calm.build_sequence("shell", ctx, l_max=6)
    assert seq == [257, 259, 264, 108, 115]
    assert seq.dropped.frames == ["cwd"] and seq.dropped.completions == ctx["completions"]
    assert bool(seq.dropped)


def test_input_alone_not_fitting_raises():
    with pytest.raises(
        ValueError, match=r"the input alone needs 5 tokens .* only 4 fit \(l_max=4\)"
    ):
        calm.build_sequence("shell", {"input": "ls"}, l_max=4)
    with pytest.raises(ValueError, match="needs 6 tokens .*<EOS>"):
        calm.build_sequence("shell", {"input": "ls"}, l_max=5, training=True)
    with pytest.raises(ValueError, match="reserve=2"):
        calm.build_sequence("shell", {"input": "ls"}, l_max=6, reserve=2)
    assert len(calm.build_sequence("shell", {"input": "x" * 765})) == 768
    with pytest.raises(ValueError, match="768"):
        calm.build_sequence("shell", {"input": "x" * 766})


def test_reserve_keeps_room():
    ctx = {"history": [{"cmd": "abc"}] * 4, "input": "ls"}  # each item 5 tokens
    seq = calm.build_sequence("shell", ctx, l_max=30, reserve=10)
    assert len(seq) <= 20 and len(seq.dropped.history) == 1


def test_model_header_l_max_is_the_default(tmp_path):
    path = tmp_path / "m.cwgt"
    metadata = {"domain": "shell", "template": SHELL, "stop_conditions": "|"}
    calm.write_cwgt(
        path,
        {"d_model": 16, "n_layers": 1, "l_max": 20, "dt_rank": 1},
        metadata,
        np.zeros(2, np.float32),
    )
    model = calm.read_cwgt(path)
    ctx = {"history": [{"cmd": "abcdef", "exit": 0}] * 3, "input": "ls"}
    seq = calm.build_sequence(model, ctx)
    assert seq.l_max == 20 and len(seq) <= 20 and seq.dropped.history
    assert calm.build_sequence(model, ctx, l_max=100).dropped.history == []


def test_model_without_template(tmp_path):
    path = tmp_path / "m.cwgt"
    calm.write_cwgt(
        path, {"d_model": 16, "n_layers": 1, "dt_rank": 1}, None, np.zeros(2, np.float32)
    )
    with pytest.raises(ValueError, match="no template"):
        calm.build_sequence(calm.read_cwgt(path), {})


def test_result_type():
    seq = calm.build_sequence("shell", {"input": "ls"})
    assert isinstance(seq, list) and isinstance(seq, calm.TokenSequence)
    assert type(seq.ids) is list
    assert seq.to_numpy().dtype == np.uint16 and seq.to_numpy().tolist() == seq.ids
    assert seq.template == calm.parse_template("shell") and seq.training is False
    assert "TokenSequence([257" in repr(seq)
    assert seq.dropped == {"history": [], "completions": [], "frames": [], "capped": {}}
    with pytest.raises(KeyError):
        seq.dropped["nope"]


@pytest.mark.parametrize(
    "ctx, exc, message",
    [
        ({"history": [5]}, TypeError, r"context\['history'\]\[0\] must be a dict"),
        ({"history": [{"exit": 0}]}, ValueError, r"context\['history'\]\[0\] needs a 'cmd'"),
        ({"history": [{"cmd": "x", "code": 0}]}, ValueError, "unknown key"),
        (
            {"history": [{"cmd": "x", "exit": 1.5}]},
            TypeError,
            r"history'\]\[0\].*exit must be an int",
        ),
        ({"history": [None]}, TypeError, "is None"),
        ({"cwd": 5}, TypeError, r"context\['cwd'\] must be str or bytes"),
        ({"completions": 5}, TypeError, "list of completion candidates"),
        ({"completions": ["a", 5]}, TypeError, r"context\['completions'\]\[1\]"),
        ({"input": ["a", "b"]}, ValueError, "target frame <CMD>.*not a list"),
        ({"input": 5}, TypeError, r"context\['input'\]"),
        ({"env": {"a": None}}, TypeError, "map str to str"),
        ({"git": {"text": "m", "by": "x"}}, ValueError, "unknown key"),
        ({"cwd": "\ud800"}, ValueError, "lone surrogate"),
    ],
)
def test_bad_context_values(ctx, exc, message):
    with pytest.raises(exc, match=message):
        calm.build_sequence("shell", ctx)


def test_bad_arguments():
    with pytest.raises(TypeError, match="context must be a dict"):
        calm.build_sequence("shell", [("input", "ls")])
    with pytest.raises(TypeError, match="context must be a dict"):
        calm.build_sequence("shell", None)
    with pytest.raises(TypeError, match="training must be a bool"):
        calm.build_sequence("shell", {}, training=1)
    with pytest.raises(ValueError, match="l_max must be >= 1"):
        calm.build_sequence("shell", {}, l_max=0)
    with pytest.raises(TypeError, match="l_max must be an int"):
        calm.build_sequence("shell", {}, l_max="768")
    with pytest.raises(ValueError, match="reserve must be >= 0"):
        calm.build_sequence("shell", {}, reserve=-1)


# --------------------------------------------------------------------------- parsing


def test_parse_sequence_shell_window():
    ctx = {
        "cwd": "/home/user/lilush",
        "git": "main",
        "history": [{"cmd": "git diff --stat", "exit": 0}, {"cmd": "git status", "exit": 0}],
        "completions": ["commit", "checkout", "cherry-pick", "clone"],
        "env": "venv:myproject",
        "input": "git com",
    }
    parsed = calm.parse_sequence(calm.build_sequence("shell", ctx))
    assert parsed == ctx and parsed.training is False
    parsed = calm.parse_sequence(calm.build_sequence("shell", ctx, training=True), "shell")
    assert parsed == ctx and parsed.training is True


def test_parse_sequence_ignores_padding_and_uses_template_keys():
    ids = [256, 256, 257, 260, 97, 269, 259, 264, 98, 258, 256]
    assert calm.parse_sequence(ids) == {"cwd": "a", "input": "b"}
    assert calm.parse_sequence(ids, "BOS;CWD:dir;ATN;CMD:line") == {"dir": "a", "line": "b"}


def test_parse_sequence_closed_target_and_invalid_utf8():
    assert calm.parse_sequence([259, 264, 0xFF, 269]) == {"input": b"\xff"}


@pytest.mark.parametrize(
    "ids, message",
    [
        ([257, 260, 97, 269, 264, 98], "no <ATN>"),
        ([257, 259, 259, 264], "second <ATN> at position 2"),
        ([257, 97, 259, 264], "expected a frame token or <ATN> at position 1, found byte 97"),
        ([257, 263, 259, 264], "found <EXIT>"),
        ([257, 260, 97, 259, 264], "unexpected <ATN> at position 3 inside a <CWD> frame"),
        ([257, 260, 97], "has no <END> and no <ATN>"),
        ([257, 259, 264, 258, 97], "unexpected <EOS> at position 3"),
        ([257, 300, 259, 264], "found <RESERVED_300>"),
    ],
)
def test_parse_sequence_errors(ids, message):
    with pytest.raises(ValueError, match=message):
        calm.parse_sequence(ids)


def test_parse_sequence_frame_not_in_template():
    with pytest.raises(ValueError, match="<GIT> at position 1 is not in the template"):
        calm.parse_sequence([257, 261, 97, 269, 259, 264], "BOS;CWD:cwd;ATN;CMD:input")
    with pytest.raises(ValueError, match="out of range"):
        calm.parse_sequence([257, 400])
    with pytest.raises(TypeError):
        calm.parse_sequence("abc")


# --------------------------------------------------------------------------- properties


@settings(max_examples=150, deadline=None)
@given(shell_contexts(), st.booleans())
def test_frames_parse_back_to_the_same_context(ctx, training):
    seq = calm.build_sequence("shell", ctx, training=training, l_max=100_000)
    assert not seq.dropped
    assert seq.count(calm.ATN) == 1
    assert (seq[-1] == calm.EOS) == training
    parsed = calm.parse_sequence(seq, "shell")
    assert parsed == expected_after_caps(ctx)
    assert parsed.training == training
    assert calm.detokenize(seq) == b"".join(t.to_bytes(1, "little") for t in seq if t < 256)


def hist_cost(item):
    return len(calm.tokenize_frame("HIST", item["cmd"], exit=item.get("exit")))


@settings(max_examples=200, deadline=None)
@given(shell_contexts(), st.integers(1, 300), st.booleans())
def test_cap_and_l_max_rules(ctx, l_max, training):
    capped = expected_after_caps(ctx)
    minimum = 3 + len(ctx["input"].encode()) + (1 if training else 0)  # BOS ATN CMD input [EOS]
    if minimum > l_max:
        with pytest.raises(ValueError, match="input alone"):
            calm.build_sequence("shell", ctx, training=training, l_max=l_max)
        return
    seq = calm.build_sequence("shell", ctx, training=training, l_max=l_max)
    assert len(seq) <= l_max
    assert seq.count(calm.ATN) == 1
    assert seq.count(calm.HIST) <= 15 and seq.count(calm.NEXT) <= 14
    parsed = calm.parse_sequence(seq, "shell")
    assert parsed["input"] == ctx["input"]
    dropped = seq.dropped
    history = capped.get("history", [])
    kept_history = parsed.get("history", [])
    # oldest history items go first: what is kept is the newest suffix
    assert dropped.history + kept_history == history
    completions = capped.get("completions", [])
    kept_completions = parsed.get("completions", [])
    assert kept_completions + dropped.completions == completions
    # order: completions only after all history, frames only after both
    if dropped.completions:
        assert kept_history == []
    if dropped.frames:
        assert kept_history == [] and kept_completions == []
    # greedy: nothing was dropped that would have fit
    if dropped.history and not dropped.completions and not dropped.frames:
        assert len(seq) + hist_cost(dropped.history[-1]) > l_max
    if dropped.completions and not dropped.frames:
        first = dropped.completions[0]
        extra = len(first.encode()) + (1 if kept_completions else 2)
        assert len(seq) + extra > l_max
    if not dropped:
        assert parsed == capped


@settings(max_examples=50, deadline=None)
@given(
    st.one_of(
        nonempty,
        st.builds(
            lambda t, p, n, i: {
                k: v for k, v in (("text", t), ("pos", p), ("note", n), ("ipa", i)) if v
            },
            text,
            text,
            text,
            text,
        ),
    ),
    text,
)
def test_dictionary_roundtrip(word, definition):
    if isinstance(word, dict):
        assume(len(word) > 1)
        word.setdefault("text", "")
    seq = calm.build_sequence("dictionary", {"word": word, "definition": definition}, training=True)
    assert calm.parse_sequence(seq, "dictionary") == {"word": word, "definition": definition}


def test_build_sequence_refuses_an_unknown_context_key():
    # was: ignored silently, so a misspelt key lost its value
    with pytest.raises(ValueError) as e:
        calm.build_sequence(
            "shell", {"cwd": "/tmp", "histroy": [{"cmd": "ls", "exit": 0}], "input": "ls"}
        )
    msg = str(e.value)
    assert "unknown key(s) 'histroy'" in msg
    for key in ("cwd", "git", "history", "completions", "env", "input"):
        assert repr(key) in msg


def test_build_sequence_unknown_keys_follow_the_template():
    # the valid keys are the template's: "cwd" is unknown to the dictionary template
    with pytest.raises(ValueError, match=r"unknown key\(s\) 'cwd'.*'word', 'definition'"):
        calm.build_sequence("dictionary", {"word": "cat", "cwd": "/tmp"})
    assert (
        calm.build_sequence("BOS;CWD:where;ATN;CMD:input", {"where": "/t", "input": "l"}).format()
        == "<BOS> <CWD> /t <END> <ATN> <CMD> l"
    )
    assert calm.build_sequence("shell", {"input": "ls"}) == [
        257,
        259,
        264,
        108,
        115,
    ]  # absent keys are fine
    with pytest.raises(ValueError, match=r"unknown key\(s\) 5"):
        calm.build_sequence("shell", {5: "x"})


def test_build_sequence_unknown_key_with_a_model_template(tmp_path):
    path = tmp_path / "m.cwgt"
    calm.write_cwgt(
        path,
        calm.CWGTHeader(d_model=16, n_layers=1, dt_rank=1),
        calm.CWGTMetadata("shell", "BOS;CWD:cwd;ATN;CMD:input", "|"),
        np.zeros(4, dtype=np.float32),
    )
    model = calm.read_cwgt(path)
    with pytest.raises(ValueError, match=r"unknown key\(s\) 'git'.*uses only 'cwd', 'input'"):
        calm.build_sequence(model, {"git": "main", "input": "ls"})


class _FakeModel:
    def __init__(self, l_max):
        self.metadata = calm.CWGTMetadata("shell", "BOS;ATN;CMD:input", "")
        self.header = type("H", (), {"l_max": l_max})()


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


def test_template_with_a_reserved_id_is_not_called_a_sub_token():
    # was: "<RESERVED_300> (element 1) is a sub-token"
    with pytest.raises(ValueError, match="is a reserved id"):
        calm.Template([(calm.ATN, None), (300, "x")])
    with pytest.raises(ValueError, match="is a sub-token"):
        calm.Template([(calm.ATN, None), (calm.EXIT, "x")])
