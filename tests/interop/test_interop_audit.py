"""Audit of the file formats: each test is a defect found and fixed, or a property checked
against the peer library (tokenizers, tiktoken) that could have hidden one."""

import base64
import copy
import itertools
import json
import os
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toksmith
from tests.strategies_interop import hf_mixed_text
from toksmith import TokenizerFileError
from toksmith.cli import main
from toksmith.formats import ConversionError, detect_format, from_huggingface, load_any
from toksmith.formats.huggingface import huggingface_json, save_huggingface
from toksmith.formats.tiktoken import load_tiktoken_ranks
from toksmith.serialization import to_dict

tokenizers = pytest.importorskip("tokenizers")

TEXT = "Hello world, hello there: lower lowest newest <|end|> widest <pin> 12345 \n\n  x"


@pytest.fixture(scope="module")
def small():
    return toksmith.train_from_iterator(
        [TEXT * 3, "the then there these those their"] * 20,
        vocab_size=300,
        pattern="gpt2",
        special_tokens=["<|end|>"],
        pinned_tokens=["<pin>"],
    )


@pytest.fixture(scope="module")
def doc(small):
    return huggingface_json(small)


def _hf(data):
    return tokenizers.Tokenizer.from_str(json.dumps(data, ensure_ascii=False))


# ---------------------------------------------- added tokens that Hugging Face decodes as bytes


@pytest.mark.parametrize("special", ["<é>", "<|ñ|>", "Ġqq", "<Ċ>", "<Ā>"])
def test_export_refuses_added_token_decoded_as_bytes(special, tmp_path):
    """Hugging Face's ByteLevel decoder maps an added token whose characters are all in the
    byte-level alphabet back to bytes ('<é>' decodes as '<\\ufffd>'): the export gave the same
    ids but other decoded text. It now raises ConversionError (and so does the GPT-2 export, whose
    files are read back with the same decoder)."""
    tok = toksmith.train_from_iterator(
        [TEXT] * 5, vocab_size=270, pattern="gpt2", special_tokens=["<|end|>", special]
    )
    # what tokenizers would do with the file: the token, renamed to ASCII for the export, back
    ascii_tok = toksmith.train_from_iterator(
        [TEXT] * 5, vocab_size=270, pattern="gpt2", special_tokens=["<|end|>", "<tmp>"]
    )
    data = huggingface_json(ascii_tok)
    i = ascii_tok.special_tokens["<tmp>"]
    for e in data["added_tokens"]:
        if e["content"] == "<tmp>":
            e["content"] = special
    data["model"]["vocab"][special] = data["model"]["vocab"].pop("<tmp>")
    assert _hf(data).decode([i], skip_special_tokens=False) != special
    with pytest.raises(ConversionError, match="byte-level alphabet"):
        huggingface_json(tok)
    with pytest.raises(ConversionError, match="ASCII"):
        save_huggingface(tok, tmp_path / "hf")
    assert not (tmp_path / "hf" / "tokenizer.json").exists()
    with pytest.raises(
        ConversionError, match="byte-level decoder"
    ):  # GPT-2 files are decoded alike
        tok.save_gpt2_files(tmp_path / "gpt2")
    # importing such a file: strict names the decoder, strict=False keeps the ids
    with pytest.raises(ConversionError, match="decoder ByteLevel decodes the added token"):
        from_huggingface(data)
    with pytest.warns(UserWarning, match="decoded_as_bytes"):
        loaded = from_huggingface(data, strict=False)
    assert loaded.metadata["huggingface"] == {"decoded_as_bytes": [special]}
    text = f"a{special}b <|end|>"
    assert _hf(data).encode(text).ids == loaded.encode(text, allowed_special="all")


@pytest.mark.parametrize("special", ["<|end|>", "a b", "<日本>", "<|▁|>", "<\u0144x>"])
def test_export_keeps_added_tokens_decoded_as_text(special):
    """Added tokens that are ASCII or have a character outside the byte-level alphabet (a space,
    U+0144 and above) decode as themselves in both libraries."""
    tok = toksmith.train_from_iterator(
        [TEXT] * 5,
        vocab_size=270,
        pattern="gpt2",
        special_tokens=[special, "<s>"],
        pinned_tokens=["<p é>"],
    )
    hf = tok.to_huggingface()
    text = f"x{special}y <p é> z"
    ids = tok.encode(text, allowed_special="all")
    assert hf.encode(text).ids == ids
    assert hf.decode(ids, skip_special_tokens=False) == tok.decode(ids) == text


# ---------------------------------------------- malformed tokenizer.json components


def _set(path, value):
    def edit(d):
        obj = d
        for k in path[:-1]:
            obj = obj[k]
        obj[path[-1]] = value

    return edit


_MALFORMED = [
    (_set(["added_tokens"], ["<x>"]), "added_tokens\\[0\\] must be an object"),
    (_set(["added_tokens"], {"a": 1}), "added_tokens must be a list"),
    (_set(["added_tokens"], 5), "added_tokens must be a list"),
    (_set(["normalizer"], "NFC"), "normalizer must be an object"),
    (
        _set(["normalizer"], {"type": "Sequence", "normalizers": ["x"]}),
        "normalizer.normalizers\\[0\\]",
    ),
    (_set(["pre_tokenizer"], "ByteLevel"), "pre_tokenizer must be an object"),
    (_set(["pre_tokenizer", "pretokenizers"], {"a": 1}), "pretokenizers must be a list"),
    (
        _set(["pre_tokenizer", "pretokenizers"], ["x", "y"]),
        "pretokenizers\\[0\\] must be an object",
    ),
    (
        _set(["pre_tokenizer", "pretokenizers", 0, "pattern"], {"Regex": 5}),
        "pattern must be an object",
    ),
    (
        _set(["pre_tokenizer", "pretokenizers", 0, "pattern"], {"String": ["a"]}),
        "pattern must be an object",
    ),
    (_set(["post_processor"], "ByteLevel"), "post_processor must be an object"),
    (_set(["post_processor"], {"type": "Sequence", "processors": ["x"]}), "processors\\[0\\]"),
    (
        _set(
            ["post_processor"],
            {"type": "TemplateProcessing", "single": "<|end|> $A", "pair": "$A $B"},
        ),
        "post_processor.single must be a list",
    ),
    (_set(["decoder"], "ByteLevel"), "decoder must be an object"),
    (_set(["decoder"], {"type": "Sequence", "decoders": ["x"]}), "decoders\\[0\\]"),
    (_set(["added_tokens", 0, "special"], "false"), "special must be true or false"),
    (_set(["added_tokens", 0, "lstrip"], "false"), "lstrip must be true or false"),
    (_set(["model", "ignore_merges"], "yes"), "ignore_merges must be"),
]


@pytest.mark.parametrize("edit,match", _MALFORMED)
def test_malformed_components_are_file_errors(doc, edit, match):
    """A component of the wrong JSON type gave an AttributeError or TypeError from inside the
    reader (or, for a string template or flag, loaded a file Hugging Face refuses)."""
    data = copy.deepcopy(doc)
    edit(data)
    with pytest.raises(Exception):  # noqa: B017
        _hf(data)  # not a valid tokenizer.json
    for strict in (True, False):
        with pytest.raises(TokenizerFileError, match=match):
            from_huggingface(copy.deepcopy(data), strict=strict)


# ---------------------------------------------- an added token that is also a vocab token


def test_hf_add_tokens_of_a_vocab_token_is_a_conversion_error(doc):
    """tokenizers' add_tokens() of a token already in the vocab keeps its id: a valid file,
    refused with 'makes ..., which is not in the vocab' (a TokenizerFileError saying the file is
    corrupted). Now a ConversionError naming the token."""
    hf = _hf(doc)
    word = next(t for t in doc["model"]["vocab"] if len(t) > 2 and t.isascii() and t.isalpha())
    hf.add_tokens([word])
    data = json.loads(hf.to_str())
    assert any(
        a["content"] == word and a["id"] == doc["model"]["vocab"][word]
        for a in data["added_tokens"]
    )
    with pytest.raises(ConversionError, match=f"vocab token '{word}'.*also an added token"):
        from_huggingface(data)


# ---------------------------------------------- accepted variants agree with tokenizers


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


# ---------------------------------------------- merge lists with alternative merges


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


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_alternative_merges_are_exact_or_refused(data):
    """Hugging Face merges by the rank of the listed pair, toksmith by the id of the merged token:
    a file is either loaded with the same ids on every short text, or refused."""
    doc = _random_bpe(data.draw)
    try:
        tok = from_huggingface(copy.deepcopy(doc))
    except ConversionError:
        return
    hf = _hf(doc)
    assert [e.ids for e in hf.encode_batch(_AB_TEXTS)] == tok.encode_ordinary_batch(_AB_TEXTS)


# ---------------------------------------------- .tiktoken files as tiktoken reads them


@pytest.fixture(scope="module")
def rank_lines(small):
    ranks = sorted(small.mergeable_ranks().items(), key=lambda kv: kv[1])
    return [(base64.b64encode(b).decode(), str(i)) for b, i in ranks]


_LAYOUTS = {
    "tab": lambda ls: "\n".join(f"{t}\t{r}" for t, r in ls) + "\n",
    "two_spaces": lambda ls: "\n".join(f"{t}  {r}" for t, r in ls) + "\n",
    "surrounding_spaces": lambda ls: "\n".join(f"  {t} {r} \t" for t, r in ls) + "\n",
    "cr_only": lambda ls: "\r".join(f"{t} {r}" for t, r in ls) + "\r",
    "bom_crlf": lambda ls: "\ufeff" + "\r\n".join(f"{t} {r}" for t, r in ls) + "\r\n\r\n",
    "blank_lines": lambda ls: "\n\n".join(f"{t} {r}" for t, r in ls) + "\n\n\n",
}


@pytest.mark.parametrize("layout", sorted(_LAYOUTS))
def test_tiktoken_whitespace_layouts(layout, rank_lines, small, tmp_path):
    """tiktoken reads rank lines split on any whitespace, with any line ends (and, by ignoring
    what is not base64, a UTF-8 BOM); toksmith refused these files ('expected base64-token rank')
    and load_any did not recognise them."""
    from tiktoken.load import load_tiktoken_bpe

    path = tmp_path / f"{layout}.tiktoken"
    path.write_bytes(_LAYOUTS[layout](rank_lines).encode("utf-8"))
    assert load_tiktoken_ranks(path) == load_tiktoken_bpe(str(path)) == small.mergeable_ranks()
    assert detect_format(path) == "tiktoken"
    tok = load_any(path, pattern="gpt2", special_tokens={})
    assert tok.encode(TEXT) == toksmith.Tokenizer(small.mergeable_ranks(), pattern="gpt2").encode(
        TEXT
    )


def test_tiktoken_still_refuses_what_tiktoken_cannot_read(rank_lines, tmp_path):
    lines = [f"{t} {r}" for t, r in rank_lines]
    for bad, match in (
        (lines + ["YWI= 256 x"], "expected 'base64-token rank'"),
        (lines + ["YWI 300"], "not valid base64"),
        (lines + ["YWI= +300"], "not a non-negative integer"),
    ):
        path = tmp_path / "bad.tiktoken"
        path.write_text("\n".join(bad) + "\n")
        with pytest.raises(TokenizerFileError, match=match):
            load_tiktoken_ranks(path)


# ---------------------------------------------- reading from a pipe, writing to special files


def _pipe_path(data: bytes) -> str:
    r, w = os.pipe()

    def feed():
        with os.fdopen(w, "wb") as f:
            f.write(data)

    threading.Thread(target=feed, daemon=True).start()
    return f"/dev/fd/{r}"


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="needs /dev/fd")
@pytest.mark.parametrize("fmt", ["toksmith", "tiktoken", "huggingface"])
def test_load_any_reads_a_pipe_once(fmt, small, tmp_path, capsys):
    """load_any (and `toksmith convert <(cat tok.json) ...`) read the head of the file to detect
    its format and then opened it again: from a pipe the second read got nothing, and a valid
    file was reported as 'not valid JSON (truncated or corrupted?)'."""
    path = tmp_path / "t"
    if fmt == "toksmith":
        small.save(path)
    elif fmt == "tiktoken":
        toksmith.Tokenizer(small.mergeable_ranks(), pattern="gpt2").save_tiktoken(path)
    else:
        save_huggingface(
            toksmith.Tokenizer(small.mergeable_ranks(), pattern="gpt2"), tmp_path / "hf"
        )
        path = tmp_path / "hf" / "tokenizer.json"
    raw = path.read_bytes()
    ref = (
        small if fmt == "toksmith" else toksmith.Tokenizer(small.mergeable_ranks(), pattern="gpt2")
    )
    want = ref.encode(TEXT, allowed_special="all")
    kw = {"pattern": "gpt2"} if fmt == "tiktoken" else {}
    assert load_any(_pipe_path(raw), **kw).encode(TEXT, allowed_special="all") == want
    out = tmp_path / "out.json"
    args = ["--pattern", "gpt2"] if fmt == "tiktoken" else []
    assert main(["convert", _pipe_path(raw), str(out), *args]) == 0
    assert toksmith.load(out).encode(TEXT, allowed_special="all") == want


def test_save_onto_a_folder_names_it(small, tmp_path, capsys):
    """Writing a file onto an existing folder said "Is a directory: 'x.tmp' -> 'x'"."""
    (tmp_path / "d").mkdir()
    with pytest.raises(IsADirectoryError, match="'.*d': it is a folder"):
        small.save(tmp_path / "d")
    small.save(tmp_path / "in.json")
    assert (
        main(["convert", str(tmp_path / "in.json"), str(tmp_path / "d"), "--to", "toksmith"]) == 1
    )
    err = capsys.readouterr().err
    assert "it is a folder" in err and ".tmp" not in err and "Traceback" not in err
    assert os.listdir(tmp_path / "d") == []


def test_save_through_a_symlink_keeps_it(small, tmp_path):
    """The atomic write replaced a symbolic link with a regular file."""
    (tmp_path / "real.json").write_text("{}")
    os.symlink("real.json", tmp_path / "link.json")
    small.save(tmp_path / "link.json")
    assert os.path.islink(tmp_path / "link.json")
    assert toksmith.load(tmp_path / "real.json").mergeable_ranks() == small.mergeable_ranks()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_save_to_a_fifo_writes_into_it(small, tmp_path):
    """A FIFO (or a device: /dev/stdout, /dev/null) at the path was replaced by the written file
    (run as root, `toksmith convert tok.json /dev/null` replaced /dev/null)."""
    fifo = tmp_path / "fifo.tiktoken"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)
    reader.start()
    plain = toksmith.Tokenizer(small.mergeable_ranks(), pattern="gpt2")
    plain.save_tiktoken(tmp_path / "plain.tiktoken")
    plain.save_tiktoken(fifo)
    reader.join(10)
    assert got == [(tmp_path / "plain.tiktoken").read_bytes()]
    assert not os.path.isfile(fifo) and not os.path.exists(f"{fifo}.tmp")


# ---------------------------------------------- toksmith's own file


@pytest.mark.parametrize("version", [True, 1.0, "1", 2, None])
def test_toksmith_file_version_must_be_the_integer_1(small, tmp_path, version):
    """`"version": true` and `1.0` were read as version 1."""
    data = to_dict(small)
    data["version"] = version
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    with pytest.raises(TokenizerFileError, match="unsupported file version"):
        toksmith.load(path)
    with pytest.raises(TokenizerFileError, match="unsupported file version"):
        load_any(path)


@pytest.mark.parametrize("layout", ["toksmith", "huggingface", "other"])
def test_deeply_nested_json_is_a_file_error(layout, tmp_path, capsys):
    """json's RecursionError came out of load/load_any/from_huggingface (and the CLI printed a
    traceback) for a file nesting arrays 100000 deep."""
    head = {
        "toksmith": '{"format": "toksmith", "version": 1, "vocab": {"a": 0}, "x": ',
        "huggingface": '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "x": ',
        "other": '{"x": ',
    }[layout]
    path = tmp_path / "deep.json"
    path.write_text(head + "[" * 100_000 + "]" * 100_000 + "}")
    for load in (load_any, toksmith.load, from_huggingface):
        with pytest.raises(TokenizerFileError, match="too deeply"):
            load(path)
    assert main(["convert", str(path), str(tmp_path / "out.json")]) == 1
    err = capsys.readouterr().err
    assert "too deeply" in err and "Traceback" not in err


_NAME_CHARS = "<>|_ab é€ĠĊĀĠ▁日\u0144\u0143\t\n"


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    names=st.lists(
        st.text(st.sampled_from(_NAME_CHARS), min_size=1, max_size=6),
        min_size=1,
        max_size=3,
        unique=True,
    )
)
def test_exported_added_tokens_encode_and_decode_alike(small, names):
    """Any special/pinned token names: the export raises ConversionError, or tokenizers gives the
    same ids and the same decoded text as toksmith."""
    ranks = small.mergeable_ranks()
    top = max(ranks.values())
    specials = {n: top + 1 + i for i, n in enumerate(names[::2])}
    pinned = {n: top + 1 + len(specials) + i for i, n in enumerate(names[1::2])}
    try:
        tok = toksmith.Tokenizer(
            ranks, pattern="gpt2", special_tokens=specials, pinned_tokens=pinned
        )
    except ValueError:
        return  # e.g. a pinned token inside another added token: not a valid toksmith tokenizer
    try:
        hf = tok.to_huggingface()
    except ConversionError:
        return
    text = "x" + " ".join(names) + "".join(names) + " lowest"
    ids = tok.encode(text, allowed_special="all")
    assert hf.encode(text).ids == ids
    assert hf.decode(ids, skip_special_tokens=False) == tok.decode(ids) == text


# ---------------------------------------------- custom split patterns that leave text unmatched

_GAPPY = [r"\D{2}|\d+", r"\p{L}+|\p{N}{2}", r"[a-z]+|\s", r"(?<=a)b|\d"]


@pytest.fixture(scope="module")
def gappy(small):
    out = {}
    for pat in _GAPPY:
        tok = toksmith.Tokenizer(
            small.mergeable_ranks(), pattern=pat, special_tokens=small.special_tokens
        )
        out[pat] = (tok, tok.to_huggingface())
    return out


def test_custom_pattern_leaving_gaps_exports_exactly(gappy):
    """toksmith (like tiktoken) drops the text its pattern does not match; the export wrote
    Split(Isolated), which keeps it as pieces, and only tried three probe texts to see whether
    the pattern matched all text: r'\\D{2}|\\d+' passed them, and Hugging Face's ids for 'ab-12 c'
    had a token for '-' that toksmith drops. Custom patterns are now written Split(Removed,
    invert=True), which keeps only the matches; reading that back gives the pattern itself."""
    tok, hf = gappy[r"\D{2}|\d+"]
    assert toksmith.split("ab-12 c", tok.pattern) == ["ab", "12", " c"]
    assert hf.encode("ab-12 c").ids == tok.encode("ab-12 c")
    step = json.loads(hf.to_str())["pre_tokenizer"]["pretokenizers"][0]
    assert (step["behavior"], step["invert"]) == ("Removed", True)


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


# ---------------------------------------------- GPT-2 files: tokens made by no merge


def test_gpt2_files_with_unmerged_byte_level_tokens(small, tmp_path):
    """A merges.txt cut short at a line end leaves vocab tokens that no merge makes; they were
    taken as special tokens named by their byte-level spelling: toksmith decoded such an id as
    'Ġthe' where GPT-2 (and Hugging Face) decode ' the', and encode(allowed_special='all')
    turned the text 'Ġthe' into it. Now a ConversionError that suggests a truncated file."""
    from tokenizers import decoders, models, pre_tokenizers

    plain = toksmith.Tokenizer(small.mergeable_ranks(), pattern="gpt2")
    plain.save_gpt2_files(tmp_path)
    merges = (tmp_path / "merges.txt").read_text().splitlines(keepends=True)
    (tmp_path / "merges.txt").write_text("".join(merges[:-15]))
    vocab = json.loads((tmp_path / "vocab.json").read_text())
    hf = tokenizers.Tokenizer(
        models.BPE.from_file(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt"))
    )
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    unmerged = [t for t in list(vocab)[-15:] if any(c in t for c in "ĠĊ")]
    assert unmerged and hf.decode([vocab[unmerged[0]]]) != unmerged[0]
    for load in (
        lambda: load_any(tmp_path),
        lambda: toksmith.from_gpt2_files(tmp_path / "vocab.json", tmp_path / "merges.txt"),
    ):
        with pytest.raises(ConversionError, match="made by no merge.*truncated"):
            load()
    # the original GPT-2 pair, whose one extra token is <|endoftext|>, still loads as before
    from tests.helpers import GPT2_ENCODER, GPT2_VOCAB_BPE

    assert toksmith.from_gpt2_files(GPT2_ENCODER, GPT2_VOCAB_BPE).special_tokens == {
        "<|endoftext|>": 50256
    }


# ---------------------------------------------- .tiktoken rank gaps


def test_tiktoken_rank_near_2_32_is_a_quick_error(rank_lines, tmp_path):
    """The gap check listed every missing id: a 3 kB file with one rank 4294967295 built a list
    of four billion ints (minutes, then a MemoryError)."""
    lines = [f"{t} {r}" for t, r in rank_lines[:256]] + ["YWI= 4294967295"]
    path = tmp_path / "huge.tiktoken"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(
        TokenizerFileError,
        match=r"4294967039 id\(s\) below the largest rank 4294967295 are "
        r"missing \(256, 257, 258, 259, 260, \.\.\.\)",
    ):
        toksmith.from_tiktoken(path, pattern="gpt2")
    # special tokens fill gaps; ids that are not ints are reported by the Tokenizer, not a TypeError
    path.write_text("\n".join(lines[:256] + ["YWI= 258"]) + "\n")
    with pytest.raises(
        TokenizerFileError, match=r"1 id\(s\) below the largest rank 258 are missing \(257\)"
    ):
        toksmith.from_tiktoken(path, pattern="gpt2", special_tokens={"<a>": 256, "<b>": "257"})
    tok = toksmith.from_tiktoken(path, pattern="gpt2", special_tokens={"<a>": 256, "<b>": 257})
    assert tok.encode("<b>ab", allowed_special="all") == [257, 258]


@pytest.mark.parametrize(
    "value,error",
    [(0, ValueError), (-5, ValueError), ("512", TypeError), (True, TypeError), (2.5, TypeError)],
)
def test_save_huggingface_model_max_length_is_checked(small, tmp_path, value, error):
    """model_max_length=0 was written as 'no maximum' (1e30) and a str or float went into
    tokenizer_config.json as it was."""
    with pytest.raises(error, match="model_max_length"):
        save_huggingface(small, tmp_path / "hf", model_max_length=value)
    assert not (tmp_path / "hf").exists()
    save_huggingface(small, tmp_path / "ok", model_max_length=512)
    assert (
        json.loads((tmp_path / "ok" / "tokenizer_config.json").read_text())["model_max_length"]
        == 512
    )


@pytest.mark.parametrize(
    "pattern", [r"a|(?=b)", r"\s*$|\w+", r"x*"]
)  # "" is refused at construction
def test_to_tiktoken_refuses_patterns_that_match_empty(pattern):
    """tiktoken's encoder panics on an empty match (``a|(?=b)`` on ``"bb"``); toksmith skips them.
    An Encoding that panics is not exact interop: ConversionError."""
    base = toksmith.train_from_iterator(["hello world"] * 5, vocab_size=262, pattern="gpt2")
    tok = toksmith.Tokenizer(base.mergeable_ranks(), pattern=pattern)
    with pytest.raises(toksmith.ConversionError, match="can match the empty string"):
        tok.to_tiktoken()
    for ok in ["gpt2", "cl100k", "o200k", "nanochat", r"\w+|\s+|[^\w\s]+"]:
        enc = toksmith.Tokenizer(base.mergeable_ranks(), pattern=ok).to_tiktoken()
        assert enc.encode("hello world, 123") == toksmith.Tokenizer(
            base.mergeable_ranks(), pattern=ok
        ).encode("hello world, 123")
