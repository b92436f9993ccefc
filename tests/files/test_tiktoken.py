"""tiktoken interop: rank files, Encoding objects, OpenAI presets, exact ids."""

import base64
import hashlib
import shutil
import warnings

import pytest
from hypothesis import given

import toksmith
from tests.conftest import BYTES
from tests.helpers import (
    CL100K_TIKTOKEN,
    GPT2_TIKTOKEN,
    PATTERN_NAMES,
)
from tests.strategies_interop import text_with_specials, tiktoken_mixed_text
from toksmith import TokenizerFileError
from toksmith.formats import ConversionError, detect_format, load_any, to_tiktoken
from toksmith.formats.tiktoken import (
    OPENAI_ENCODINGS,
    dump_tiktoken_ranks,
    from_tiktoken,
    identify_openai_file,
    load_openai,
    load_tiktoken_ranks,
    openai_encoding,
    save_tiktoken,
)

tiktoken = pytest.importorskip("tiktoken")


def test_presets_match_tiktoken_ext():
    """Our preset table equals tiktoken's own constructors (patterns, specials, hashes)."""
    import inspect

    from tiktoken_ext import openai_public as op

    src = inspect.getsource(op)
    for enc in OPENAI_ENCODINGS.values():
        assert enc.sha256 in src
    for tk_name, ours in [
        ("r50k_base", "r50k_base"),
        ("p50k_base", "p50k_base"),
        ("cl100k_base", "cl100k_base"),
        ("o200k_base", "o200k_base"),
    ]:
        fn = getattr(op, tk_name)
        # build the constructor's dict without downloading: replace the loader
        orig = op.load_tiktoken_bpe
        op.load_tiktoken_bpe = lambda *a, **k: {}
        try:
            spec = fn()
        finally:
            op.load_tiktoken_bpe = orig
        e = OPENAI_ENCODINGS[ours]
        assert spec["pat_str"] == toksmith.PATTERNS[e.pattern]
        assert spec["special_tokens"] == e.special_tokens
    orig = op.load_tiktoken_bpe
    op.load_tiktoken_bpe = lambda *a, **k: {}
    try:
        assert (
            op.o200k_harmony()["special_tokens"] == OPENAI_ENCODINGS["o200k_harmony"].special_tokens
        )
        assert op.p50k_edit()["special_tokens"] == OPENAI_ENCODINGS["p50k_edit"].special_tokens
    finally:
        op.load_tiktoken_bpe = orig


def test_shared_gpt2_file_is_r50k():
    """whisper's gpt2.tiktoken is byte-for-byte OpenAI's r50k_base.tiktoken."""
    digest = hashlib.sha256(GPT2_TIKTOKEN.read_bytes()).hexdigest()
    assert digest == OPENAI_ENCODINGS["r50k_base"].sha256 == OPENAI_ENCODINGS["gpt2"].sha256
    assert identify_openai_file(GPT2_TIKTOKEN) == "r50k_base"
    assert identify_openai_file(CL100K_TIKTOKEN) == "cl100k_base"


@pytest.mark.parametrize(
    "alias,expected",
    [
        ("gpt2", "gpt2"),
        ("r50k", "r50k_base"),
        ("p50k", "p50k_base"),
        ("cl100k", "cl100k_base"),
        ("O200K", "o200k_base"),
    ],
)
def test_preset_aliases(alias, expected):
    assert openai_encoding(alias).name == expected


def test_unknown_preset():
    with pytest.raises(ValueError, match="unknown OpenAI encoding 'cl200k'"):
        openai_encoding("cl200k")


def test_load_openai_real_files(gpt2_tok, cl100k_tok):
    assert gpt2_tok.n_vocab == 50257 and gpt2_tok.special_tokens == {"<|endoftext|>": 50256}
    assert gpt2_tok.pattern_name == "gpt2" and gpt2_tok.name == "gpt2"
    assert cl100k_tok.n_vocab == 100277 and cl100k_tok.pattern_name == "cl100k"
    assert cl100k_tok.special_tokens["<|endofprompt|>"] == 100276
    assert (
        from_tiktoken(CL100K_TIKTOKEN, preset="cl100k").special_tokens == cl100k_tok.special_tokens
    )


def test_hash_mismatch_raises_and_can_be_skipped():
    with pytest.raises(
        toksmith.TokenizerFileError, match="sha256 .* does not match OpenAI's cl100k_base"
    ):
        load_openai("cl100k", GPT2_TIKTOKEN)
    tok = load_openai("o200k", GPT2_TIKTOKEN, check_hash=False)  # the user insists
    assert tok.pattern_name == "o200k"


def test_file_without_preset_uses_its_hash(tmp_path):
    tok = from_tiktoken(GPT2_TIKTOKEN)  # no warning: the hash says r50k_base
    assert tok.pattern_name == "gpt2" and tok.special_tokens == {"<|endoftext|>": 50256}
    assert tok.metadata["source"]["encoding"] == "r50k_base"


def test_unknown_file_without_pattern_is_an_error(tmp_path):
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"ab"] = 256
    p = tmp_path / "mine.tiktoken"
    dump_tiktoken_ranks(ranks, p)
    with pytest.raises(toksmith.TokenizerFileError, match="stores no split pattern.*pattern="):
        from_tiktoken(p)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert from_tiktoken(p, pattern="gpt2").pattern_name == "gpt2"


@pytest.mark.parametrize("name", ["gpt2", "cl100k"])
def test_real_vocab_ids_on_corpora(name, real_toks, reference_encodings, corpus_chunks):
    tok, enc = real_toks[name], reference_encodings[name]
    assert tok.encode_batch(corpus_chunks, allowed_special="all") == enc.encode_batch(
        corpus_chunks, allowed_special="all"
    )
    assert tok.encode_ordinary_batch(corpus_chunks) == enc.encode_ordinary_batch(corpus_chunks)


@given(text=tiktoken_mixed_text)
def test_real_vocab_ids_hypothesis(text, real_toks, reference_encodings):
    for name in ("gpt2", "cl100k"):
        ids = real_toks[name].encode_ordinary(text)
        assert ids == reference_encodings[name].encode_ordinary(text)
        assert real_toks[name].decode_bytes(ids) == text.encode("utf-8", "surrogatepass")


@given(text=text_with_specials)
def test_real_vocab_specials_hypothesis(text, real_toks, reference_encodings):
    for name in ("gpt2", "cl100k"):
        assert real_toks[name].encode(text, allowed_special="all") == reference_encodings[
            name
        ].encode(text, allowed_special="all")


def test_to_tiktoken_real(cl100k_tok, corpus_chunks):
    enc = cl100k_tok.to_tiktoken()
    assert isinstance(enc, tiktoken.Encoding) and enc.name == "cl100k_base"
    assert enc.n_vocab == cl100k_tok.n_vocab
    assert enc.encode_batch(corpus_chunks[:40], allowed_special="all") == cl100k_tok.encode_batch(
        corpus_chunks[:40], allowed_special="all"
    )
    assert cl100k_tok.to_tiktoken(name="renamed").name == "renamed"


def test_from_encoding_object(reference_encodings, corpus_chunks):
    enc = reference_encodings["cl100k"]
    tok = from_tiktoken(enc)
    assert tok.name == "cl100k_base" and tok.pattern_name == "cl100k"
    assert tok.special_tokens == enc._special_tokens
    assert tok.encode_batch(corpus_chunks[:30], allowed_special="all") == enc.encode_batch(
        corpus_chunks[:30], allowed_special="all"
    )
    with pytest.raises(TypeError, match="preset"):
        from_tiktoken(enc, preset="cl100k")


@pytest.mark.parametrize("pattern", PATTERN_NAMES)
def test_round_trip_trained(pattern, trained_no_pinned, corpus_chunks, tmp_path):
    tok = trained_no_pinned[pattern]
    texts = corpus_chunks[::7]
    expected = tok.encode_batch(texts, allowed_special="all")
    # in memory
    enc = tok.to_tiktoken()
    assert enc.encode_batch(texts, allowed_special="all") == expected
    assert [enc.decode(x) for x in expected] == texts
    # through a file, back in toksmith and in tiktoken
    path = tmp_path / f"{pattern}.tiktoken"
    tok.save_tiktoken(path)
    back = from_tiktoken(path, pattern=pattern, special_tokens=tok.special_tokens)
    assert back.mergeable_ranks() == tok.mergeable_ranks()
    assert back.encode_batch(texts, allowed_special="all") == expected
    assert back.decode_batch(expected) == texts
    from tiktoken.load import load_tiktoken_bpe

    enc2 = tiktoken.Encoding(
        "x",
        pat_str=tok.pattern,
        mergeable_ranks=load_tiktoken_bpe(str(path)),
        special_tokens=tok.special_tokens,
    )
    assert enc2.encode_batch(texts, allowed_special="all") == expected
    # the file is tiktoken's own format
    assert load_tiktoken_bpe(str(path)) == load_tiktoken_ranks(path)


@given(text=text_with_specials)
def test_round_trip_trained_hypothesis(text, trained_no_pinned):
    for tok in trained_no_pinned.values():
        enc = _encodings_cache(tok)
        assert enc.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")


_ENCS = {}


def _encodings_cache(tok):
    if id(tok) not in _ENCS:
        _ENCS[id(tok)] = tok.to_tiktoken()
    return _ENCS[id(tok)]


def test_save_writes_tiktoken_format(tmp_path):
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b" the"] = 256
    tok = toksmith.Tokenizer.from_ranks(ranks, "gpt2")
    p = tmp_path / "t.tiktoken"
    save_tiktoken(tok, p)
    lines = p.read_text().splitlines()
    assert len(lines) == 257 and lines[0] == "AA== 0" and lines[-1] == "IHRoZQ== 256"


def test_copied_real_file_round_trips_byte_identical(tmp_path, gpt2_tok):
    p = tmp_path / "gpt2.tiktoken"
    gpt2_tok.save_tiktoken(p)
    assert p.read_bytes() == GPT2_TIKTOKEN.read_bytes()
    shutil.copy(CL100K_TIKTOKEN, tmp_path / "c.tiktoken")
    assert identify_openai_file(tmp_path / "c.tiktoken") == "cl100k_base"


def test_pinned_tokens_are_not_tiktoken(trained, tmp_path):
    tok = trained["gpt2"]
    with pytest.raises(ConversionError, match="pinned"):
        tok.to_tiktoken()
    with pytest.raises(ConversionError, match="pinned"):
        tok.save_tiktoken(tmp_path / "x.tiktoken")


def test_special_ids_in_rank_gaps(tmp_path):
    """Special tokens may sit between ranks (p50k's <|endoftext|> does): the file has a gap
    that the special tokens fill."""
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"ab"] = 257
    p = tmp_path / "gap.tiktoken"
    dump_tiktoken_ranks(ranks, p)
    tok = from_tiktoken(p, pattern="gpt2", special_tokens={"<|eot|>": 256})
    assert tok.encode("ab<|eot|>", allowed_special="all") == [257, 256]
    with pytest.raises(toksmith.TokenizerFileError, match="gaps"):
        from_tiktoken(p, pattern="gpt2")


def _tiktoken_cache_name(url: str) -> str:
    return hashlib.sha1(url.encode()).hexdigest()


_BLOB = "https://openaipublic.blob.core.windows.net/"


def test_get_encoding_reads_what_tiktoken_cached(tmp_path, monkeypatch):
    """toksmith.get_encoding finds a rank file where tiktoken's own get_encoding finds it (no
    network: tiktoken reads the same cache here), and the two encode alike."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    shutil.copy(
        CL100K_TIKTOKEN, tmp_path / _tiktoken_cache_name(_BLOB + "encodings/cl100k_base.tiktoken")
    )
    tok = toksmith.get_encoding("cl100k_base")
    assert (
        tok.name == "cl100k_base"
        and tok.special_tokens == OPENAI_ENCODINGS["cl100k_base"].special_tokens
    )
    assert toksmith.get_encoding("cl100k").mergeable_ranks() == tok.mergeable_ranks()  # alias
    ref = tiktoken.get_encoding("cl100k_base")
    text = "Grüße, world!<|endoftext|> 12345 naïve\n\n  code()"
    assert tok.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")


def test_get_encoding_gpt2_from_the_original_pair_or_r50k(tmp_path, monkeypatch):
    from tests.helpers import GPT2_ENCODER, GPT2_VOCAB_BPE

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    shutil.copy(
        GPT2_ENCODER, tmp_path / _tiktoken_cache_name(_BLOB + "gpt-2/encodings/main/encoder.json")
    )
    shutil.copy(
        GPT2_VOCAB_BPE, tmp_path / _tiktoken_cache_name(_BLOB + "gpt-2/encodings/main/vocab.bpe")
    )
    from_pair = toksmith.get_encoding("gpt2")
    ref = tiktoken.get_encoding("gpt2")
    text = "Hello  world's <|endoftext|> 2024!\n\tx"
    assert from_pair.name == "gpt2" and from_pair.special_tokens == {"<|endoftext|>": 50256}
    assert from_pair.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    other = tmp_path / "r50k"
    other.mkdir()
    shutil.copy(GPT2_TIKTOKEN, other / _tiktoken_cache_name(_BLOB + "encodings/r50k_base.tiktoken"))
    from_ranks = toksmith.get_encoding("gpt2", cache_dir=other)  # explicit folder, env ignored
    assert from_ranks.mergeable_ranks() == from_pair.mergeable_ranks()
    assert toksmith.get_encoding("r50k_base", cache_dir=other).encode_ordinary(
        text
    ) == from_pair.encode_ordinary(text)


def test_get_encoding_without_the_file_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    with pytest.raises(
        OSError,
        match=r"never downloads.*tiktoken.get_encoding\('o200k_base'\).*preset='o200k_base'",
    ):
        toksmith.get_encoding("o200k")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    with pytest.raises(FileNotFoundError, match="turned off"):
        toksmith.get_encoding("cl100k_base")
    with pytest.raises(ValueError, match="unknown OpenAI encoding"):
        toksmith.get_encoding("cl200k")
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR")
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", str(tmp_path / "gym"))
    from toksmith.formats.tiktoken import tiktoken_cache_dir

    assert tiktoken_cache_dir() == str(tmp_path / "gym")


def test_get_encoding_refuses_a_corrupted_cached_file(tmp_path):
    bad = CL100K_TIKTOKEN.read_bytes()[:-40]  # the last lines lost
    (tmp_path / _tiktoken_cache_name(_BLOB + "encodings/cl100k_base.tiktoken")).write_bytes(bad)
    with pytest.raises(toksmith.TokenizerFileError, match="sha256"):
        toksmith.get_encoding("cl100k_base", cache_dir=tmp_path)


def test_encoding_name_for_model_is_tiktokens():
    """Every model name tiktoken knows, variants of each of its prefixes and unknown names map
    (or fail) exactly as in tiktoken."""
    from tiktoken import model as tm

    from toksmith.errors import UnknownModelError
    from toksmith.formats.tiktoken import encoding_name_for_model

    names = list(tm.MODEL_TO_ENCODING)
    names += [p + "2025-01-01" for p in tm.MODEL_PREFIX_TO_ENCODING] + [
        p + ":acme::x1" for p in tm.MODEL_PREFIX_TO_ENCODING
    ]
    names += [
        "llama-3",
        "ft:o1-mini:acme::x",
        "claude",
        "",
        "gpt-4o",
        "gpt-4-turbo",
        "gpt-4.1-nano",
        "gpt-oss-120b",
    ]
    for name in names:
        try:
            expected = tm.encoding_name_for_model(name)
        except KeyError:
            with pytest.raises(UnknownModelError) as e:
                encoding_name_for_model(name)
            assert isinstance(e.value, KeyError) and isinstance(e.value, toksmith.ToksmithError)
            assert toksmith.UnknownModelError is UnknownModelError
            assert str(e.value).startswith("no encoding is known for the model")
        else:
            assert encoding_name_for_model(name) == expected, name
    with pytest.raises(TypeError):
        encoding_name_for_model(4)


def test_encoding_for_model_loads_the_cached_file(tmp_path):
    shutil.copy(
        CL100K_TIKTOKEN, tmp_path / _tiktoken_cache_name(_BLOB + "encodings/cl100k_base.tiktoken")
    )
    tok = toksmith.encoding_for_model("gpt-3.5-turbo-0125", cache_dir=tmp_path)
    assert tok.name == "cl100k_base"
    with pytest.raises(FileNotFoundError, match="o200k_base"):
        toksmith.encoding_for_model("gpt-4o", cache_dir=tmp_path)


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
def rank_lines(small_tok):
    ranks = sorted(small_tok.mergeable_ranks().items(), key=lambda kv: kv[1])
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
def test_tiktoken_whitespace_layouts(layout, rank_lines, small_tok, tmp_path):
    """Audit finding: tiktoken reads rank lines split on any whitespace, with any line ends (and, by ignoring
    what is not base64, a UTF-8 BOM); toksmith refused these files ('expected base64-token rank')
    and load_any did not recognise them."""
    from tiktoken.load import load_tiktoken_bpe

    path = tmp_path / f"{layout}.tiktoken"
    path.write_bytes(_LAYOUTS[layout](rank_lines).encode("utf-8"))
    assert load_tiktoken_ranks(path) == load_tiktoken_bpe(str(path)) == small_tok.mergeable_ranks()
    assert detect_format(path) == "tiktoken"
    tok = load_any(path, pattern="gpt2", special_tokens={})
    assert tok.encode(TEXT) == toksmith.Tokenizer(
        small_tok.mergeable_ranks(), pattern="gpt2"
    ).encode(TEXT)


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


def test_tiktoken_rank_near_2_32_is_a_quick_error(rank_lines, tmp_path):
    """Audit finding: The gap check listed every missing id: a 3 kB file with one rank 4294967295 built a list
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
    "pattern", [r"a|(?=b)", r"\s*$|\w+", r"x*"]
)  # "" is refused at construction
def test_to_tiktoken_refuses_patterns_that_match_empty(pattern):
    """Audit finding: tiktoken's encoder panics on an empty match (``a|(?=b)`` on ``"bb"``); toksmith skips them.
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


def test_save_tiktoken_refusing_pinned_tokens_says_what_to_do(tmp_path):
    # was: "a .tiktoken file cannot hold pinned tokens; this tokenizer has 1" and nothing more
    tok = toksmith.Tokenizer.from_ranks(BYTES, "gpt2", pinned_tokens={"<think>": 256})
    with pytest.raises(ConversionError, match=r"'<think>'.*save_huggingface"):
        tok.save_tiktoken(tmp_path / "x.tiktoken")
    assert not (tmp_path / "x.tiktoken").exists()


@pytest.mark.parametrize("save", ["save_huggingface", "save_gpt2_files"])
def test_special_token_spelled_like_a_mergeable_token_says_what_to_do(tmp_path, save):
    # was: "... the file could not tell them apart" with no way out named
    tok = toksmith.Tokenizer.from_ranks({**BYTES, b"ab": 256}, "gpt2", special_tokens={"ab": 257})
    with pytest.raises(
        ConversionError, match=r"rename the special/pinned token \(e\.g\. <\|ab\|>\)"
    ):
        getattr(tok, save)(tmp_path / "d")


def test_to_tiktoken_refuses_a_special_token_that_starts_another():
    # was: an Encoding whose ids differ: tiktoken matched '<|e' inside '<|end|>' (its table order decides)
    pytest.importorskip("tiktoken")
    tok = toksmith.Tokenizer.from_ranks(BYTES, "gpt2", special_tokens={"<|e": 256, "<|end|>": 257})
    with pytest.raises(
        ConversionError, match=r"'<\|e' is the start of the special token '<\|end\|>'"
    ):
        to_tiktoken(tok)
    fine = toksmith.Tokenizer.from_ranks(
        BYTES, "gpt2", special_tokens={"<|a|>": 256, "<|end|>": 257}
    )
    assert to_tiktoken(fine).encode("<|a|>x<|end|>", allowed_special="all") == [256, 120, 257]
