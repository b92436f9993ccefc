"""Audit of ``toksmith eval`` (cli/eval.py), the toksmith file format (serialization.py) and the
split-pattern translation between fancy-regex and Oniguruma (formats/_regex.py): regressions
for defects found by hostile files, odd corpora and differential tests against the engines."""

from __future__ import annotations

import json
import random
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toksmith
from toksmith import Tokenizer
from toksmith.cli import eval as tok_eval
from toksmith.cli import main
from toksmith.formats._common import ConversionError
from toksmith.formats._regex import from_oniguruma, to_oniguruma

BYTES = {bytes([b]): b for b in range(256)}


@pytest.fixture(scope="module")
def small_file(tmp_path_factory):
    """A saved tokenizer with merges, a special and a pinned token, and its JSON text."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = toksmith.train_from_iterator(
            ["hello world, hello there\n" * 30],
            vocab_size=275,
            pattern="cl100k",
            special_tokens=["<|bos|>"],
            pinned_tokens=["<tab>"],
            threads=1,
        )
    path = tmp_path_factory.mktemp("audit") / "tok.json"
    tok.save(path)
    return tok, path.read_text(encoding="utf-8")


def _write(tmp_path, text):
    p = tmp_path / "bad.json"
    p.write_text(text, encoding="utf-8")
    return p


# ------------------------------------------------------------------ serialization: duplicate keys


def _duplicated(text, where):
    if where == "vocab":  # a vocab entry twice: json kept the last, so an id vanished silently
        return text.replace('"vocab": {', '"vocab": {\n  "a": 999,', 1), "'a'"
    if where == "top":  # a second special_tokens object replaced the first
        return text.rstrip().rstrip("}") + ', "special_tokens": {}}', "'special_tokens'"
    if where == "special":
        return text.replace(
            '"special_tokens": {', '"special_tokens": {"<|x|>": 5000, "<|x|>": 5001, ', 1
        ), "'<|x|>'"
    return text.replace('"metadata": {', '"metadata": {"k": 1, "k": 2, ', 1), "'k'"


@pytest.mark.parametrize("where", ["vocab", "top", "special", "metadata"])
@pytest.mark.parametrize("native", [True, False])
def test_a_key_twice_in_a_file_is_refused(small_file, tmp_path, monkeypatch, where, native):
    """json.loads keeps the last of a key given twice: a file with a vocab entry, a special
    token or a whole top-level field twice loaded with data silently dropped."""
    from toksmith import serialization

    if not native:
        monkeypatch.setattr(serialization, "split_json_tables", lambda *a, **k: None)
    text, key = _duplicated(small_file[1], where)
    with pytest.raises(toksmith.TokenizerFileError, match=f"the key {key} appears twice"):
        toksmith.load(_write(tmp_path, text))


def test_a_key_twice_is_reported_after_the_field_checks_on_both_paths(
    small_file, tmp_path, monkeypatch
):
    """The native split and the Python parse report the same first problem."""
    from toksmith import serialization

    doc = json.loads(small_file[1])
    del doc["pattern"]
    text = json.dumps(doc, indent=1).replace('"vocab": {', '"vocab": {\n "a": 999,', 1)
    path = _write(tmp_path, text)
    with pytest.raises(toksmith.TokenizerFileError, match="'pattern' is missing"):
        toksmith.load(path)
    monkeypatch.setattr(serialization, "split_json_tables", lambda *a, **k: None)
    with pytest.raises(toksmith.TokenizerFileError, match="'pattern' is missing"):
        toksmith.load(path)


# ------------------------------------------------------------------ serialization: saving


def test_metadata_keys_that_are_not_str_are_refused_before_writing(tmp_path):
    """{1: "a", "1": "b"} was written as the key "1" twice (a reader kept one value); True and
    None keys came back as "true" and "null"."""
    tok = Tokenizer.from_ranks(BYTES, "gpt2")
    out = tmp_path / "t.json"
    for meta, key in [({1: "a", "1": "b"}, "1"), ({"x": [{True: 1}]}, "True"), ({None: 0}, "None")]:
        tok.metadata = meta
        with pytest.raises(TypeError, match=f"the key {key} in metadata.* is a .*not a str"):
            tok.save(out)
        assert not list(tmp_path.iterdir())
    tok.metadata = {"n": {"1": (1, 2)}}
    tok.save(out)
    assert toksmith.load(out).metadata == {"n": {"1": [1, 2]}}


@pytest.mark.parametrize("attr,value", [("name", "a\udcff"), ("metadata", {"note": "x\ud800"})])
def test_a_lone_surrogate_is_a_clear_error_and_writes_nothing(tmp_path, attr, value):
    """A lone surrogate (a str from surrogateescape'd bytes) raised UnicodeEncodeError from
    deep in the write, naming a position in a text the user never saw."""
    tok = Tokenizer.from_ranks(BYTES, "gpt2")
    setattr(tok, attr, value)
    with pytest.raises(ValueError, match="lone surrogate.*not UTF-8 text") as e:
        tok.save(tmp_path / "t.json")
    assert not isinstance(e.value, UnicodeError)
    assert not list(tmp_path.iterdir())


def test_an_empty_name_round_trips(tmp_path):
    tok = Tokenizer.from_ranks(BYTES, "gpt2")
    tok.name = ""
    tok.save(tmp_path / "t.json")
    assert toksmith.load(tmp_path / "t.json").name == ""


def test_load_of_a_bytes_path_names_the_file_as_text(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text("{", encoding="utf-8")
    with pytest.raises(toksmith.TokenizerFileError) as e:
        toksmith.load(bytes(p))
    assert str(e.value).startswith(f"{p}: not valid JSON")


_TOKEN = st.binary(min_size=1, max_size=4)
_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8)


@settings(max_examples=30, deadline=None)
@given(
    merges=st.lists(st.tuples(st.integers(0, 400), st.integers(0, 400)), max_size=12),
    specials=st.lists(_TEXT, max_size=3, unique=True),
    pinned=st.lists(_TEXT, max_size=2, unique=True),
    name=st.one_of(st.none(), st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)),
    meta=st.dictionaries(
        _TEXT,
        st.one_of(
            st.integers(),
            st.text(max_size=5),
            st.booleans(),
            st.none(),
            st.lists(st.integers(), max_size=3),
        ),
        max_size=3,
    ),
    pattern=st.sampled_from(
        ["gpt2", "cl100k", "o200k", "nanochat", r"\p{L}+|\p{N}|\s+|[^\s\p{L}\p{N}]+"]
    ),
)
def test_save_load_round_trips_every_attribute(
    tmp_path_factory, merges, specials, pinned, name, meta, pattern
):
    """Random merges, specials, pinned tokens, names and metadata: save -> load gives the same
    tokenizer (ids, merges, specials, pinned, pattern, name, metadata) and the same encoding."""
    ranks = dict(BYTES)
    toks = list(BYTES)
    merge_ids = []
    for a, b in merges:
        left, right = toks[a % len(toks)], toks[b % len(toks)]
        if left + right in ranks or len(left + right) > 12:
            continue
        merge_ids.append((ranks[left], ranks[right]))
        ranks[left + right] = len(ranks)
        toks.append(left + right)
    pinned = [p for p in pinned if p not in specials]
    added = {t: len(ranks) + k for k, t in enumerate(specials)}
    pins = {t: len(ranks) + len(added) + k for k, t in enumerate(pinned)}
    try:
        tok = Tokenizer(
            ranks,
            pattern=pattern,
            special_tokens=added,
            pinned_tokens=pins,
            merges=merge_ids,
            metadata=meta,
            name=name,
        )
    except ValueError:  # pinned tokens that overlap one another, and the like
        return
    path = tmp_path_factory.mktemp("rt") / "t.json"
    tok.save(path)
    back = toksmith.load(path)
    assert back.mergeable_ranks() == tok.mergeable_ranks() and back.merge_ids() == tok.merge_ids()
    assert (back.special_tokens, back.pinned_tokens) == (tok.special_tokens, tok.pinned_tokens)
    assert (back.pattern, back.pattern_name, back.name, back.metadata) == (
        tok.pattern,
        tok.pattern_name,
        tok.name,
        json.loads(json.dumps(tok.metadata)),
    )
    text = (
        "".join(specials + pinned)
        + " hello 123 wörld\n"
        + "".join(t.decode("latin-1") for t in toks[256:])
    )
    assert back.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")


# ------------------------------------------------------------------ eval


def test_max_bytes_equal_to_the_file_size_keeps_its_last_line(tmp_path):
    """A file of exactly --max-bytes bytes was taken as cut short: its last line (without a
    final newline) was dropped."""
    p = tmp_path / "c.txt"
    p.write_bytes(b"one\ntwo")
    assert tok_eval.read_corpus(str(p), 7) == "one\ntwo"
    assert tok_eval.read_corpus(str(p), 8) == "one\ntwo"
    assert tok_eval.read_corpus(str(p), 6) == "one\n"
    import gzip

    gz = tmp_path / "c.txt.gz"
    gz.write_bytes(gzip.compress(b"x\n" * 10 + b"end"))
    assert tok_eval.read_corpus(str(gz), 23) == "x\n" * 10 + "end"
    assert tok_eval.read_corpus(str(gz), 22) == "x\n" * 10


def test_a_tokenizer_that_drops_text_is_warned_about(tmp_path, capsys):
    """A custom split pattern that matches no piece somewhere leaves that text out of the
    tokens (as tiktoken does): its bytes/token counted bytes it never encoded, without a word."""
    letters = Tokenizer.from_ranks(BYTES, r"\p{L}+")
    whole = Tokenizer.from_ranks(
        BYTES, r"\p{L}+|[^\p{L}]"
    )  # a custom pattern that covers everything
    with pytest.warns(
        UserWarning, match=r"tokenizer 'letters' leaves out 4 of the 10 bytes of corpus 'x'"
    ):
        rows = tok_eval.evaluate({"whole": whole, "letters": letters}, {"x": "ab cd, ef\n"})
    assert [r["tokens"] for r in rows] == [10, 6]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tok_eval.evaluate(
            {"whole": whole}, {"x": "ab cd, ef\n"}
        )  # no warning when nothing is dropped
    with pytest.warns(UserWarning, match="no token at all"):
        tok_eval.evaluate({"digits": Tokenizer.from_ranks(BYTES, r"\d+")}, {"x": "hello"})
    letters.save(tmp_path / "letters.json")
    corpus = tmp_path / "x.txt"
    corpus.write_text("ab cd, ef\n", encoding="utf-8")
    assert (
        main(["eval", "-t", str(tmp_path / "letters.json"), "--corpus", str(corpus), "--json"]) == 0
    )
    captured = capsys.readouterr()
    assert "warning: tokenizer 'letters' leaves out 4 of the 10 bytes" in captured.err
    assert json.loads(captured.out)[0]["tokens"] == 6


def test_a_tiktoken_encoding_that_drops_text_is_warned_about():
    tiktoken = pytest.importorskip("tiktoken")
    enc = tiktoken.Encoding("letters", pat_str=r"\p{L}+", mergeable_ranks=BYTES, special_tokens={})
    with pytest.warns(UserWarning, match="leaves out 1 of the 5 bytes"):
        rows = tok_eval.evaluate({"enc": enc}, {"x": "ab cd"})
    assert rows[0]["tokens"] == 4


def test_an_empty_corpus_is_warned_about(tmp_path, capsys):
    tok = Tokenizer.from_ranks(BYTES, "gpt2")
    with pytest.warns(UserWarning, match="corpus 'e' is empty"):
        assert tok_eval.evaluate({"t": tok}, {"e": ""})[0]["bytes_per_token"] == 0.0
    tok.save(tmp_path / "t.json")
    (tmp_path / "e.txt").write_bytes(b"")
    assert main(["eval", "-t", str(tmp_path / "t.json"), "--corpus", str(tmp_path / "e.txt")]) == 0
    assert "warning: corpus 'e' is empty" in capsys.readouterr().err


def test_counting_with_an_object_that_is_no_tokenizer_says_what_to_pass():
    class NotATokenizer:
        def encode(self, text):
            return [1]

    with pytest.raises(TypeError, match="pass a toksmith Tokenizer or a tiktoken Encoding"):
        tok_eval.count_tokens(NotATokenizer(), "hello")
    with pytest.raises(TypeError, match="load_any"):
        tok_eval.evaluate({"x": NotATokenizer()}, {"c": "hello"})


def test_two_corpora_with_the_same_stem_suggest_naming_them(tmp_path, capsys):
    tok = Tokenizer.from_ranks(BYTES, "gpt2")
    tok.save(tmp_path / "t.json")
    for lang in ("en", "de"):
        (tmp_path / f"wiki.{lang}.txt").write_text("hello\n", encoding="utf-8")
    assert (
        main(
            [
                "eval",
                "-t",
                str(tmp_path / "t.json"),
                "--corpus",
                str(tmp_path / "wiki.en.txt"),
                "--corpus",
                str(tmp_path / "wiki.de.txt"),
            ]
        )
        == 1
    )
    assert "--corpus NAME=PATH" in capsys.readouterr().err


# ------------------------------------------------------------------ regex translation


@pytest.fixture(scope="module")
def onig():
    """Hugging Face's Split (Oniguruma) keeping the matches only, as toksmith does."""
    pytest.importorskip("tokenizers")
    from tokenizers import Regex, pre_tokenizers

    def run(regex, text):
        split = pre_tokenizers.Split(Regex(regex), behavior="removed", invert=True)
        return [s for s, _ in split.pre_tokenize_str(text)]

    return run


def _fancy(pattern, text):
    return toksmith._core.split(text, pattern, "auto")


def test_oniguruma_caret_does_not_match_at_the_end_after_a_final_newline(onig):
    """Oniguruma's ^ matches after a newline except at the end of the text: '\\n^' was
    translated to match the final newline too."""
    text = "a\n\na\n"
    for pat in [r"\n^", r"a\n^", r"\s^[ab]{0,2}", r"\n^\t?"]:
        assert _fancy(from_oniguruma(pat), text) == onig(pat, text), pat
    assert from_oniguruma(r"^a") == r"(?:\A|(?<=\n))a"  # before a character: no need to say it
    assert from_oniguruma(r"\n^") == r"\n(?:\A|(?<=\n)(?!\z))"


_CASED = "aAxǅǆ\u0345µKKİıiIßẞsSſ ﬁfi Σσς K"


def test_properties_under_icase(onig):
    """Under (?i) fancy-regex case-folds \\p{..} everywhere, Oniguruma only inside a class:
    (?i:\\p{Lu}) matched 'a' in one engine only."""
    assert to_oniguruma(r"(?i:\p{N}+)") == r"(?i:[\p{N}]+)"
    assert from_oniguruma(r"(?i:\p{Lu}+)") == r"(?i:(?-i:\p{Lu})+)"
    for pat in [r"(?i:\p{Lu})", r"(?i:\P{Ll})", r"(?i:\p{Greek})", r"(?i)\p{L}"]:
        assert _fancy(from_oniguruma(pat), _CASED) == onig(pat, _CASED), pat
    for pat in [r"(?i:\P{Lu})", r"(?i:[\P{L}])", r"(?i:[^\P{Ll}x])"]:
        with pytest.raises(ConversionError, match=r"\\P"):
            to_oniguruma(pat)
        if pat.startswith(
            "(?i:["
        ):  # (outside a class, Oniguruma's \P{..} is not folded: (?-i:\P{..}))
            with pytest.raises(ConversionError, match=r"\\P"):
                from_oniguruma(pat)


@pytest.mark.parametrize(
    "pat",
    [
        r"(?i)ss",
        r"(?i:sS)",
        r"(?i)s(?:s)",
        r"(?i:ß)",
        r"(?i)[a\x{DF}]",
        r"(?i:fi)",
        r"(?i: [\s\S]b)",
        r"(?i: [\p{Ll}]b)",
    ],
)
def test_multi_character_case_folds_under_icase_are_refused(pat, onig):
    """Oniguruma matches 'ß' to 'ss' and 'ﬁ' to 'fi' under (?i), also through a class that holds
    such a character (' [\\p{Ll}]b' matches ' ssb'); fancy-regex never does."""
    text = "ß ss ﬁ fi SS ssb"
    assert _fancy(pat, text) != onig(pat, text)
    with pytest.raises(ConversionError, match="multi-character case fold"):
        from_oniguruma(pat)
    if (
        pat == r"(?i: [\s\S]b)"
    ):  # the same with and without (?i) in fancy-regex: (?-i:[\s\S]) for Oniguruma
        assert onig(to_oniguruma(pat), text) == _fancy(pat, text)
    else:
        with pytest.raises(ConversionError, match="multi-character case fold"):
            to_oniguruma(pat)


def test_case_closed_classes_under_icase_keep_their_meaning(onig):
    text = "ß ss ﬁ fi SS ab_1 \u200c²"
    for pat in [
        r"(?i:\w)",
        r"(?i:[\w'])",
        r"(?i:[a-z]+)",
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)",
        r"(?i:[sdmt]|ll|ve|re)",
    ]:
        assert onig(to_oniguruma(pat), text) == _fancy(pat, text), pat
    assert to_oniguruma(r"(?i:\w)").startswith("(?i:(?-i:[")


@pytest.mark.parametrize("pat", [r"a(?i)b|c", r"x(?i)|c", r"(?:a(?i)b|c)"])
def test_flags_within_a_branch_with_more_branches_are_refused(pat, onig):
    """fancy-regex reads a(?i)b|c as (?:a(?i:b))|(?i:c), Oniguruma as a(?i:b|c)."""
    assert _fancy(pat, "c aB aC C") != onig(pat, "c aB aC C")
    with pytest.raises(ConversionError, match="groups differently"):
        to_oniguruma(pat)
    with pytest.raises(ConversionError, match="groups differently"):
        from_oniguruma(pat)


def test_flags_that_agree_are_kept(onig):
    text = "c aB aC C ab A b"
    for pat in [r"(?i)a|b", r"a|(?i)b|c", r"a(?i)b", r"(?:x|(?i)b)|c"]:
        assert to_oniguruma(pat) == pat
        assert _fancy(pat, text) == onig(pat, text), pat
        assert _fancy(from_oniguruma(pat), text) == onig(pat, text), pat


@pytest.mark.parametrize("pat", [r"((?i)b)a", r"(?=(?i)b)ba", r"(?>(?i)b)a"])
def test_flags_inside_capturing_atomic_or_lookaround_groups_are_refused(pat, onig):
    """fancy-regex lets such flags reach past the group: ((?i)b)a matches 'bA'."""
    assert _fancy(pat, "bA ba") != onig(pat, "bA ba")
    for convert in (to_oniguruma, from_oniguruma):
        with pytest.raises(ConversionError, match="reaches past the group"):
            convert(pat)


def test_properties_without_braces(onig):
    """\\pL is the letters property to fancy-regex and the two letters 'pL' to Oniguruma."""
    assert onig(r"\pL", "pL a") == ["pL"]
    assert to_oniguruma(r"\pL+|[\PN]") == r"\p{L}+|[\P{N}]"
    text = "pL a1 Ä"
    assert onig(to_oniguruma(r"\pL+|[\pN]"), text) == _fancy(r"\pL+|[\pN]", text)
    for pat in [r"\pL", r"[\pN ]"]:
        with pytest.raises(ConversionError, match="is the letters"):
            from_oniguruma(pat)


def test_negated_property_inside_a_class(onig):
    """Oniguruma's \\p{^L} was rewritten outside classes only: [\\p{^L}] gave a pattern that
    does not compile."""
    assert from_oniguruma(r"[\p{^L}\d]+") == r"[\P{L}\d]+"
    assert _fancy(from_oniguruma(r"[\p{^L}]+"), "ab 12,c") == onig(r"[\p{^L}]+", "ab 12,c")


@pytest.mark.parametrize(
    "pat", [r"(?:a|(?=b))+", r"(?:a|\z)*", r"x(?:a|(?:(?<=b)))+", r"(?:a|$){2}"]
)
def test_a_repeat_oniguruma_refuses_is_a_conversion_error(pat, onig):
    """Oniguruma refuses a quantifier on a non-capturing group with a branch that is only an
    anchor or a look-around ("target of repeat operator is invalid"): the export wrote a
    tokenizer.json that Hugging Face cannot load."""
    with pytest.raises(ConversionError):
        to_oniguruma(pat)


@pytest.mark.parametrize("pat", [r"((\w*){0,2}|[^\w])++x", r"(?:a*b?)+c", r"(a|b*){2,}"])
def test_a_repeated_group_that_can_match_empty_is_refused(pat):
    """The engines end a loop over an empty-matching group differently (different pieces)."""
    for convert in (to_oniguruma, from_oniguruma):
        with pytest.raises(ConversionError, match="can match the empty string"):
            convert(pat)
    assert from_oniguruma(r"(?:a*b)+") == r"(?:a*b)+" and to_oniguruma(r"(?:a*)?x") == r"(?:a*)?x"


@pytest.mark.parametrize("pat", [r"\p{Alnum}+", r"a{2,1}", r"\0"])
def test_oniguruma_regexes_fancy_regex_cannot_run_are_conversion_errors(pat):
    """These went through and failed later, as a PatternError from the Tokenizer."""
    with pytest.raises(ConversionError):
        from_oniguruma(pat)


_ATOMS = [
    "a",
    "b",
    "s",
    " ",
    "\\n",
    "\\s",
    "\\S",
    "\\d",
    "\\w",
    "\\W",
    "\\p{L}",
    "\\p{N}",
    "\\p{Lu}",
    "\\pL",
    "[ab]",
    "[^\\s]",
    "[\\w]",
    "[^\\w]",
    ".",
    "'",
    "[\\r\\n]",
    "ß",
    "\\x{41}",
]
_QUANTS = ["", "", "", "+", "*", "?", "{1,3}", "{2}", "{1,3}+", "++", "*+", "?+", "+?", "{2,}"]
_CHARS = list("aAbsSßẞﬁ  \n\n\t.'é12_,-\u200c²½İ\r")


def _random_pattern(rng, depth=0):
    alts = []
    for _ in range(rng.randint(1, 3) if depth < 2 else 1):
        seq = []
        for _ in range(rng.randint(1, 3)):
            r = rng.random()
            if r < 0.15 and depth < 2:
                kind = rng.choice(["(?:", "(?>", "(?=", "(?!", "(?i:", "("])
                quant = "" if kind[2:3] in "=!" else rng.choice(_QUANTS)
                seq.append(kind + _random_pattern(rng, depth + 1) + ")" + quant)
            elif r < 0.2:
                seq.append(rng.choice(["^", "$", "(?i)"]))
            else:
                seq.append(rng.choice(_ATOMS) + rng.choice(_QUANTS))
        alts.append("".join(seq))
    return "|".join(alts)


def test_translations_split_like_the_other_engine(onig):
    """Random patterns: whatever is translated (either way) splits random texts as the source
    pattern does in its own engine (the test that found the defects above)."""
    from toksmith.formats._regex import can_match_empty

    rng = random.Random(20240611)
    checked = [0, 0]
    for _ in range(400):
        pat = _random_pattern(rng)
        try:
            if can_match_empty(pat):
                continue
        except ConversionError:
            continue
        texts = ["".join(rng.choice(_CHARS) for _ in range(rng.randint(0, 12))) for _ in range(8)]
        for k, (convert, src, dst) in enumerate(
            [
                (to_oniguruma, _fancy, lambda p, t: onig(p, t)),
                (from_oniguruma, lambda p, t: onig(p, t), _fancy),
            ]
        ):
            try:
                src(pat, "")
                out = convert(pat)
            except Exception:  # noqa: BLE001 - refused, or the source engine does not compile it
                continue
            checked[k] += 1
            for text in texts:
                try:
                    expected = src(pat, text)
                except BaseException:  # noqa: BLE001 - a backtracking limit of either engine
                    break
                assert dst(out, text) == expected, (pat, out, text)
    assert min(checked) > 100


def test_load_of_another_format_or_a_folder_points_to_load_any(tmp_path):
    # was: "not valid JSON ..." and a bare IsADirectoryError, with no word of load_any
    ranks = tmp_path / "x.tiktoken"
    ranks.write_text("IQ== 0\n")
    with pytest.raises(toksmith.TokenizerFileError, match=r"not valid JSON.*load_any\(path\)"):
        toksmith.load(ranks)
    with pytest.raises(IsADirectoryError, match=r"is a folder.*load_any\(path\)"):
        toksmith.load(tmp_path)
    truncated = tmp_path / "t.json"
    truncated.write_text('{"format": "toksmith", "vers')
    with pytest.raises(toksmith.TokenizerFileError) as info:
        toksmith.load(truncated)
    assert "load_any" not in str(info.value)  # a toksmith file cut short: no hint
