"""Optional dependencies, ranks <-> merges, the regex translation, top-level API."""

import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toksmith
from tests.strategies_interop import hf_mixed_text
from toksmith.formats import ConversionError
from toksmith.formats._regex import covering, from_oniguruma, to_oniguruma


@pytest.fixture
def tiny():
    return toksmith.train_from_iterator(["low lower lowest"] * 20, vocab_size=262, pattern="gpt2")


# ------------------------------------------------------------------ optional dependencies


@pytest.mark.parametrize(
    "module,extra,call",
    [
        ("tiktoken", "tiktoken", lambda t: t.to_tiktoken()),
        ("tokenizers", "tokenizers", lambda t: t.to_huggingface()),
    ],
)
def test_missing_extra(monkeypatch, tiny, module, extra, call):
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` raise ImportError
    with pytest.raises(ImportError, match=rf"pip install toksmith\[{extra}\]"):
        call(tiny)


def test_files_need_no_extra(monkeypatch, tiny, tmp_path):
    for m in ("tiktoken", "tokenizers", "transformers"):
        monkeypatch.setitem(sys.modules, m, None)
    tiny.save_tiktoken(tmp_path / "t.tiktoken")
    tiny.save_huggingface(tmp_path / "hf")
    tiny.save_gpt2_files(tmp_path / "g")
    for p in ["hf", "g"]:
        assert toksmith.load_any(tmp_path / p).encode("lowest") == tiny.encode("lowest")
    assert toksmith.from_tiktoken(tmp_path / "t.tiktoken", pattern="gpt2").encode(
        "lowest"
    ) == tiny.encode("lowest")


# ------------------------------------------------------------------ ranks <-> merges


def test_merges_recovered_from_ranks(tiny, tmp_path):
    tiny.save_tiktoken(tmp_path / "t.tiktoken")
    loaded = toksmith.from_tiktoken(tmp_path / "t.tiktoken", pattern="gpt2")
    assert loaded.merges() == tiny.merges()
    assert loaded.merges()[:2] == [(b"l", b"o"), (b"lo", b"w")]


def test_merges_impossible_is_a_clear_error(tmp_path):
    """A token that is not the merge of two lower-ranked tokens: the rank table encodes, but
    formats that need a merge list refuse it; toksmith JSON and .tiktoken keep it."""
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"abc"] = 256
    tok = toksmith.Tokenizer.from_ranks(ranks, "gpt2")
    assert tok.encode("abc") == [256]
    with pytest.raises(toksmith.MergesError, match="not the merge of two lower-ranked tokens"):
        tok.merges()
    for save in (tok.save_huggingface, tok.save_gpt2_files):
        with pytest.raises(
            ConversionError, match="needs a merge list.*can only be saved as toksmith JSON"
        ):
            save(tmp_path / "out")
    tok.save_tiktoken(tmp_path / "abc.tiktoken")
    assert toksmith.from_tiktoken(tmp_path / "abc.tiktoken", pattern="gpt2").encode("abc") == [256]
    tok.save(tmp_path / "abc.json")
    assert toksmith.load(tmp_path / "abc.json").encode("abc") == [256]


def test_hf_merges_that_disagree_with_ranks_raise(tiny):
    """A merge list whose BPE differs from merging by rank cannot be represented."""
    from toksmith.formats.huggingface import from_huggingface, huggingface_json

    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"ab": 256, b"bc": 257, b"abc": 258})
    tok = toksmith.Tokenizer.from_ranks(ranks, "gpt2")
    data = huggingface_json(tok)
    assert data["model"]["merges"] == ["a b", "b c", "ab c"]
    data["model"]["merges"][2] = "a bc"  # HF would make abc from a + bc; ranks give ab + c
    with pytest.raises(ConversionError, match="merging by rank .* makes it from 'ab' \\+ 'c'"):
        from_huggingface(data)


# ------------------------------------------------------------------ regex translation


@pytest.mark.parametrize(
    "fancy,onig",
    [
        (r"\p{N}{1,3}+", r"(?>\p{N}{1,3})"),
        (r"[a-z]{2}+x", r"(?>[a-z]{2})x"),
        (r"(ab|c){1,}+", r"(?>(ab|c){1,})"),
        (r"\s++$", r"\s++$"),
        (r"a$", r"a\z"),
        (r"^a", r"\Aa"),
        (r"[$^]", r"[$^]"),
        (r"\$x", r"\$x"),
        (r"(?i:ab)c+?d*+", r"(?i:ab)c+?d*+"),
    ],
)
def test_to_oniguruma(fancy, onig):
    assert to_oniguruma(fancy) == onig


@pytest.mark.parametrize(
    "onig,fancy",
    [
        (r"\p{N}{1,3}+", r"(?:\p{N}{1,3})+"),
        (r"a$", r"a(?:(?=\n)|\z)"),
        (r"^a", r"(?:\A|(?<=\n))a"),
        (r"\h+", r"[0-9a-fA-F]+"),
        (r"\p{^L}", r"\P{L}"),
        (r"\s++$|x", r"\s++$|x"),
    ],
)
def test_from_oniguruma(onig, fancy):
    assert from_oniguruma(onig) == fancy


@pytest.mark.parametrize(
    "bad", [r"(?s:.)", r"(?m)a", r"[[:alpha:]]", r"\Z", r"\R", r"(ab", r"\bx", r"\B"]
)
def test_untranslatable(bad):
    with pytest.raises(ConversionError):
        to_oniguruma(bad)


@pytest.fixture(scope="module")
def onig_split():
    pytest.importorskip("tokenizers")
    from tokenizers import Regex, pre_tokenizers

    cache = {}

    def run(regex, text):
        if regex not in cache:
            cache[regex] = pre_tokenizers.Split(Regex(regex), behavior="isolated")
        return [s for s, _ in cache[regex].pre_tokenize_str(text)]

    return run


_EXTRA_PATTERNS = [
    r"\p{N}{1,2}+|\p{L}+|\s+$|\s|[^\s]",
    r"^\s*\S|\S+|\s+$|\s",
    r"[ab]{2}+|.|\n",
    r"\w+|[^\w\s]+|\W",
]


def test_word_class_over_all_unicode(onig_split):
    """\\w means different things in the two engines; the translations are exact everywhere."""
    text = "".join(chr(c) for c in range(0x20, 0x10000) if not 0xD800 <= c < 0xE000)
    for fancy in (r"\w+", r"\W+", r"[\w-]+", r"[^\w]+"):
        assert onig_split(to_oniguruma(fancy) + r"|[\s\S]", text) == toksmith.split(
            text, fancy + r"|[\s\S]"
        )
    for onig in (r"\w+", r"\W+", r"[\w-]+", r"[^\w]+"):
        assert toksmith.split(text, covering(from_oniguruma(onig))) == onig_split(onig, text)


@given(text=hf_mixed_text)
def test_translated_patterns_split_identically(text, onig_split):
    for pat in list(toksmith.PATTERNS.values()) + _EXTRA_PATTERNS:
        assert onig_split(to_oniguruma(pat), text) == toksmith.split(text, pat), pat


@given(
    text=hf_mixed_text,
    pat=st.sampled_from(
        [
            r"\p{N}{1,3}+|\p{L}+|\s+$|\s",
            r"\s+$|\w+|.|\n",
            r"x|^.|y$",
            r" ?\w+| ?\W",
            r"[\w']+|[^\w\s]{1,2}+",
        ]
    ),
)
def test_imported_patterns_split_identically(text, pat, onig_split):
    """An Oniguruma regex, translated and made to cover the gaps, splits like Hugging Face."""
    assert toksmith.split(text, covering(from_oniguruma(pat))) == [
        p for p in onig_split(pat, text) if p
    ]


@pytest.mark.parametrize("pat", [r"\s*$|\w+|.|\n", r"a|(?=b)", r"x{0,3}"])
def test_patterns_matching_empty_are_refused(pat):
    from toksmith.formats.huggingface import from_huggingface, huggingface_json

    tok = toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, pat)
    with pytest.raises(ConversionError, match="can match the empty string"):
        huggingface_json(tok)
    data = huggingface_json(
        toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2")
    )
    data["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = pat
    with pytest.raises(ConversionError, match="can match the empty string"):
        from_huggingface(data)


# ------------------------------------------------------------------ API surface


def test_top_level_names():
    for name in (
        "from_tiktoken",
        "from_huggingface",
        "from_gpt2_files",
        "load_any",
        "ConversionError",
        "get_encoding",
        "encoding_for_model",
        "UnknownModelError",
    ):
        assert name in toksmith.__all__ and hasattr(toksmith, name)
    assert issubclass(ConversionError, toksmith.VocabError)
    for meth in (
        "to_tiktoken",
        "save_tiktoken",
        "to_huggingface",
        "save_huggingface",
        "save_gpt2_files",
    ):
        assert callable(getattr(toksmith.Tokenizer, meth))


def test_doctests():
    import doctest

    import toksmith.formats as f
    import toksmith.formats._regex as r
    import toksmith.formats.gpt2 as g
    import toksmith.formats.huggingface as h
    import toksmith.formats.tiktoken as t

    for mod in (f, r, g, h, t):
        res = doctest.testmod(mod)
        assert res.failed == 0 and res.attempted > 0, mod.__name__
