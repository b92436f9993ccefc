"""toksmith equals Hugging Face tokenizers on the same files (differential tests)."""

import copy
import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toksmith
from tests.strategies_interop import hf_mixed_text
from toksmith.formats import ConversionError, from_huggingface
from toksmith.formats.huggingface import huggingface_json

tokenizers = pytest.importorskip("tokenizers")


TEXT = "Hello world, hello there: lower lowest newest <|end|> widest <pin> 12345 \n\n  x"


@pytest.fixture(scope="module")
def small_tok():
    return toksmith.train_from_iterator(
        [TEXT * 3, "the then there these those their"] * 20,
        vocab_size=300,
        pattern="gpt2",
        special_tokens=["<|end|>"],
        pinned_tokens=["<pin>"],
    )


@pytest.fixture(scope="module")
def doc(small_tok):
    return huggingface_json(small_tok)


def _hf(data):
    return tokenizers.Tokenizer.from_str(json.dumps(data, ensure_ascii=False))


def _set(path, value):
    def edit(d):
        obj = d
        for k in path[:-1]:
            obj = obj[k]
        obj[path[-1]] = value

    return edit


def _edit(f):
    def run(d):
        f(d)
        return d

    return run


_ACCEPTED = {
    "ignore_merges": _set(["model", "ignore_merges"], True),
    "unk_token": _set(["model", "unk_token"], "<|end|>"),
    "dropout_zero": _set(["model", "dropout"], 0.0),
    "empty_prefixes": _edit(
        lambda d: d["model"].update(continuing_subword_prefix="", end_of_word_suffix="")
    ),
    "normalized_true": _edit(lambda d: [a.update(normalized=True) for a in d["added_tokens"]]),
    "all_non_special": _edit(lambda d: [a.update(special=False) for a in d["added_tokens"]]),
    "split_invert": _set(["pre_tokenizer", "pretokenizers", 0, "invert"], True),
    "bytelevel_trim_offsets": _set(["pre_tokenizer", "pretokenizers", 1, "trim_offsets"], False),
    "bytelevel_alone": _set(
        ["pre_tokenizer"],
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
    ),
    "merges_as_pairs": _edit(
        lambda d: d["model"].update(merges=[m.split(" ") for m in d["model"]["merges"]])
    ),
    "decoder_sequence": _set(
        ["decoder"],
        {
            "type": "Sequence",
            "decoders": [
                {
                    "type": "ByteLevel",
                    "add_prefix_space": True,
                    "trim_offsets": True,
                    "use_regex": True,
                }
            ],
        },
    ),
    "template_without_specials": _set(
        ["post_processor"],
        {
            "type": "TemplateProcessing",
            "single": [{"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [
                {"Sequence": {"id": "A", "type_id": 0}},
                {"Sequence": {"id": "B", "type_id": 1}},
            ],
            "special_tokens": {},
        },
    ),
    "no_post_processor": _set(["post_processor"], None),
}


@pytest.fixture(scope="module")
def accepted(doc):
    out = {}
    for name, edit in _ACCEPTED.items():
        data = copy.deepcopy(doc)
        edit(data)
        out[name] = (_hf(data), from_huggingface(data))
    return out


def _random_bpe(draw):
    """A byte-level BPE over 'ab' with random merges, some tokens listed with several merges
    (in id order), as a tokenizer.json."""
    base = huggingface_json(
        toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2")
    )
    base["pre_tokenizer"] = {
        "type": "ByteLevel",
        "add_prefix_space": False,
        "trim_offsets": True,
        "use_regex": False,
    }
    vocab, toks, merges = dict(base["model"]["vocab"]), ["a", "b"], []
    for _ in range(draw(st.integers(2, 8))):
        a, b = draw(st.sampled_from(toks)), draw(st.sampled_from(toks))
        if a + b in vocab or len(a + b) > 5:
            continue
        vocab[a + b] = len(vocab)
        toks.append(a + b)
        t = a + b
        group = [(a, b)] + [
            (p, t[len(p) :])
            for p in toks
            if p != a and t.startswith(p) and len(p) < len(t) and t[len(p) :] in vocab
        ]
        merges += draw(st.permutations(group))[: draw(st.integers(1, len(group)))]
    base["model"]["vocab"] = vocab
    base["model"]["merges"] = [f"{a} {b}" for a, b in merges]
    base["model"]["ignore_merges"] = draw(st.booleans())
    return base


_AB_TEXTS = ["".join(p) for n in range(1, 7) for p in itertools.product("ab", repeat=n)]


_GAPPY = [r"\D{2}|\d+", r"\p{L}+|\p{N}{2}", r"[a-z]+|\s", r"(?<=a)b|\d"]


@pytest.fixture(scope="module")
def gappy(small_tok):
    out = {}
    for pat in _GAPPY:
        tok = toksmith.Tokenizer(
            small_tok.mergeable_ranks(), pattern=pat, special_tokens=small_tok.special_tokens
        )
        out[pat] = (tok, tok.to_huggingface())
    return out


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=hf_mixed_text,
    extra=st.sampled_from(["", "<|end|>", "<pin>", "<pin><|end|>", " <pin", "lowest"]),
)
def test_accepted_variants_match_tokenizers(accepted, text, extra):
    text = extra + text + extra
    for name, (hf, tok) in accepted.items():
        ids = tok.encode(text, allowed_special="all")
        assert hf.encode(text).ids == ids, name
        assert hf.decode(ids, skip_special_tokens=False) == tok.decode(ids), name


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_alternative_merges_are_exact_or_refused(data):
    """Audit finding: Hugging Face merges by the rank of the listed pair, toksmith by the id of the merged token:
    a file is either loaded with the same ids on every short text, or refused."""
    doc = _random_bpe(data.draw)
    try:
        tok = from_huggingface(copy.deepcopy(doc))
    except ConversionError:
        return
    hf = _hf(doc)
    assert [e.ids for e in hf.encode_batch(_AB_TEXTS)] == tok.encode_ordinary_batch(_AB_TEXTS)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=hf_mixed_text)
def test_custom_patterns_round_trip_on_any_text(gappy, text):
    text = "ab-1<|end|>2 " + text
    for pat, (tok, hf) in gappy.items():
        ids = tok.encode(text, allowed_special="all")
        assert hf.encode(text).ids == ids, pat
        assert from_huggingface(hf).encode(text, allowed_special="all") == ids, pat
