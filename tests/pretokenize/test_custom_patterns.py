"""Custom split patterns split exactly as ``regex.findall`` does, or are refused up front with a
PatternError naming the construct."""

import json

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toksmith
from toksmith import PatternError, split
from toksmith.formats._common import ConversionError
from toksmith.formats._regex import can_match_empty, to_oniguruma
from toksmith.pretokenize import resolve_pattern


def test_an_empty_split_pattern_is_refused():
    # was: Tokenizer.from_ranks(ranks, "") encoded every text to [] (no piece is ever matched)
    ranks = {bytes([b]): b for b in range(256)}
    with pytest.raises(toksmith.PatternError, match="split pattern is empty"):
        toksmith.Tokenizer.from_ranks(ranks, "")
    with pytest.raises(toksmith.PatternError, match="split pattern is empty"):
        toksmith.train_from_iterator(["some text"], vocab_size=258, pattern="")
    assert toksmith.Tokenizer.from_ranks(ranks, "gpt2").encode("hi") == [104, 105]


def test_a_saved_file_with_an_empty_pattern_is_refused(tmp_path):
    # was: a file whose "pattern" is "" loaded, and its tokenizer dropped all text
    tok = toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2")
    path = tmp_path / "t.json"
    tok.save(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["pattern"] = ""
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError, match="split pattern is empty"):
        toksmith.load(path)


@pytest.mark.parametrize("typo", ["CL100K", "gpt-4", "o200", "cl100k_bas", "Nanochat"])
def test_a_bare_word_that_is_no_pattern_name_is_refused(typo, tmp_path, capsys):
    # was: read as a regex matching only that word: "CL100K" trained on nothing, encoded "hello" to []
    ranks = {bytes([b]): b for b in range(256)}
    for call in (
        lambda: toksmith.Tokenizer.from_ranks(ranks, typo),
        lambda: toksmith.train_from_iterator(["hello " + typo], vocab_size=260, pattern=typo),
        lambda: toksmith.pretokenize.split("hello", typo),
    ):
        with pytest.raises(
            toksmith.PatternError, match=f"'{typo}' is no pattern name: pass gpt2, cl100k"
        ):
            call()
    from toksmith.cli import main

    (tmp_path / "c.txt").write_text("hello world " * 20, encoding="utf-8")
    assert (
        main(["train", str(tmp_path / "c.txt"), "--pattern", typo, "-o", str(tmp_path / "t.json")])
        != 0
    )
    assert "is no pattern name" in capsys.readouterr().err
    # names and their OpenAI aliases, and real regexes (even ones of letters), still work
    for ok in ("cl100k", "cl100k_base", "r50k_base", "o200k_harmony", r"\w+|\s+", "[a-z]+|[^a-z]+"):
        assert (
            toksmith.Tokenizer.from_ranks(ranks, ok).decode(
                toksmith.Tokenizer.from_ranks(ranks, ok).encode("hello world")
            )
            == "hello world"
        )


def findall(pattern, text):
    return [m.group(0) for m in regex.finditer(pattern, text) if m.group(0)]


def refused(pattern, match):
    with pytest.raises(PatternError, match=match):
        split("x", pattern)
    with pytest.raises(PatternError, match=match):  # Tokenizer(pattern=) and train(pattern=) too
        resolve_pattern(pattern)


# every atom here means the same to both engines outside (?i) (code points assigned in Unicode 14)
ATOMS = [
    r"a",
    r"A",
    r"é",
    r"\.",
    r" ",
    r"\n",
    r"'",
    r"1",
    r"\p{L}",
    r"\p{N}",
    r"\p{Lu}",
    r"\p{Ll}",
    r"\P{L}",
    r"\p{M}",
    r"[^\s\p{L}]",
    r"[^\s\p{L}\p{N}]",
    r"[^\r\n\p{L}\p{N}]",
    r"\s",
    r"\S",
    r"\d",
    r"\D",
    r"\w",
    r"\W",
    r".",
    r"[a-z]",
    r"[A-Z]",
    r"[\r\n]",
    r"[^\S\n]",
    r"\p{Nd}",
    r"\p{P}",
    r"ß",
    r"s",
    r"K",
    "😀",
    r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]",
    r"\p{Han}",
    r"[à-ö]",
    r"\u00e9",
    r"\x85",
    r"[\d_]",
]


# no lazy quantifiers: see test_lazy_quantifier_with_alternatives_is_refused
MUST = ["", "+", "++", "{1,3}", "{1,3}+", "{2}"]


MAY = ["", "*", "?", "*+", "?+", "{0,2}"]


ZERO = [r"\b", r"\B", r"^", r"\A", r"\z", r"(?m:^)", r"(?m:$)", r"\s++$"]


def consuming(depth):
    base = st.sampled_from(ATOMS)
    if depth == 0:
        return base
    inner = st.lists(consuming(depth - 1), min_size=1, max_size=3).map("|".join)
    group = st.tuples(
        st.sampled_from(["(?:", "(?>", "(", "(?i:", "(?-i:", "(?s:", f"(?P<g{depth}>"]), inner
    ).map(lambda t: t[0] + t[1] + ")")
    return st.one_of(base, base, group)


extra = st.one_of(
    st.tuples(consuming(1), st.sampled_from(MAY + MUST)).map("".join),
    st.sampled_from(ZERO),
    st.tuples(st.sampled_from(["(?=", "(?!"]), consuming(1)).map(lambda t: t[0] + t[1] + ")"),
    st.tuples(
        st.sampled_from(["(?<=", "(?<!"]),
        st.lists(st.sampled_from(ATOMS[:20]), min_size=1, max_size=2).map("".join),
    ).map(lambda t: t[0] + t[1] + ")"),
)


alternative = st.tuples(
    st.lists(extra, max_size=2).map("".join),
    consuming(2),
    st.sampled_from(MUST),
    st.lists(extra, max_size=2).map("".join),
).map("".join)


patterns = st.tuples(
    st.sampled_from(["", "", "", "(?i)", "(?m)", "(?s)", "(?im)"]),
    st.lists(alternative, min_size=1, max_size=4).map("|".join),
).map("".join)


texts = st.lists(
    st.text(
        alphabet=st.sampled_from(
            list("aAbéÉ\u0301sSſßKk\u212aiIİı1٣²  \t\n\r\x85\u2028.,'’😀中ǅ_\u200d")
        ),
        max_size=25,
    ),
    min_size=1,
    max_size=4,
)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
    derandomize=True,
)  # the same 300 patterns in every run: CI must not depend on chance
@given(pattern=patterns, texts=texts)
def test_custom_patterns_split_like_regex_findall_or_are_refused(pattern, texts):
    try:
        compiled = regex.compile(pattern)
    except Exception:  # noqa: BLE001  regex.error, or the module's own bugs: 'a|(?:(?i:\p{L}|\P{L}))'
        return  # raises AttributeError inside regex 2024+; no reference to compare with
    try:
        pieces = [split(t, pattern) for t in texts]
    except PatternError:
        return  # refused up front: allowed
    for t, got in zip(texts, pieces):
        assert got == [m.group(0) for m in compiled.finditer(t) if m.group(0)], (pattern, t)


@pytest.mark.parametrize(
    "pattern, text",
    [
        (r"|a", "a"),
        (r"\d*?", "a12b"),
        (r"\s*|\w+", "ab cd"),
        (r"\b|\w+", "ab cd"),
        (r"(?=a)|a", "aa"),
        (r"a??", "aaa"),
    ],
)
def test_empty_match_before_a_longer_one_is_refused(pattern, text):
    # was: regex.findall goes on at the same place after an empty match ('|a' on 'a' finds 'a');
    # fancy-regex skips the place, so toksmith silently lost text ([] / ['b', 'd'] for '\b|\w+')
    assert findall(pattern, text)
    refused(pattern, "can match the empty string")


@pytest.mark.parametrize(
    "pattern, text",
    [
        (r"x*", "axxb"),
        (r"a|(?=b)", "abba"),
        (r"\s*$|\w+", "ab \n"),
        (r"x{0,3}|(?<=y)", "xxxxy"),
        (r"\w+|x*(?=y)", "a xy"),
    ],
)
def test_empty_matches_that_agree_are_still_accepted(pattern, text):
    assert split(text, pattern) == findall(pattern, text)


@pytest.mark.parametrize(
    "pattern, text, expected", [(r"\w+$", "ab\n", ["ab"]), (r".+$", "a b\n", ["a b"])]
)
def test_dollar_before_a_final_newline_is_refused(pattern, text, expected):
    # was: [] (fancy-regex's $ is the end of the text; Python's also matches before a final \n)
    assert findall(pattern, text) == expected
    refused(pattern, r"'\$' is the end of the text.*\(\?=\\n\?\\z\)")
    assert (
        split(text, pattern.replace("$", r"(?=\n?\z)")) == expected
    )  # what the error says to write


def test_dollar_uses_that_agree_are_accepted():
    for pattern, text in [
        (r"\s++$|\w+|\s", "ab \n"),
        (r"\s+$|\S+", "a \n"),
        (r"(?m)\w+$", "ab\ncd\n"),
        (r"(?m:\w+$)|\n", "ab\n"),
    ]:
        assert split(text, pattern) == findall(pattern, text)
    refused(r"(?m)a|(?-m:b$)", r"'\$'")


@pytest.mark.parametrize(
    "pattern, text, match",
    [
        (r"\w+\Z", "ab\n", r"\\Z"),  # was: ['ab'] (fancy-regex's \Z allows a final \n), regex: []
        (r"\h+", "ab 12 \t", r"\\h is a hex digit"),  # was: ['ab', '12'], regex: [' ', ' \t']
        (r"[[:alpha:]]+", "aé b", "POSIX classes"),  # was: ['a', 'b'], regex: ['aé', 'b']
        (r"[[a]]+", "a]a]", "holds a '\\['"),  # was: ['a', 'a'], regex: ['a]', 'a]']
        (r"[a~~b]+", "a~b", "holds '~~'"),  # was: ['a', 'b'], regex: ['a~b']
        (r"[\w--\d]+", "a1b", "holds '--'"),  # was: ['a', 'b'], regex: ['a1b']
        (r"[a&&b]", "&", "holds '&&'"),  # was: [], regex: ['&']
        (r"x{e}", "x{e}", "fuzzy-matching"),  # was: ['x{e}'], regex: ['x', '{', 'e', '}']
        (r"(?:ab){e<=1}", "ac", "fuzzy-matching"),  # was: [], regex: ['ac']
    ],
)
def test_constructs_that_mean_something_else_are_refused(pattern, text, match):
    refused(pattern, match)


@pytest.mark.parametrize(
    "pattern, match",
    [
        (
            r"(?U)a+",
            "swap greedy and lazy",
        ),  # was: accepted (Rust's swap-greed flag), regex refuses it
        (
            r"a{2}{2}",
            "follows the quantifier",
        ),  # was: accepted, splits 'aaaaa' into [], regex refuses
        (r"a{1,2}{3}", "follows the quantifier"),
        (r"(?<x>a)\k<x>", r"\(\?P=name\)"),  # was: accepted, regex refuses \k
        (r"\e", r"\\x1b"),  # was: accepted, regex refuses \e
        (r"(?x)a b", "verbose mode"),  # the audit cannot read verbose patterns: refused
    ],
)
def test_syntax_python_regex_refuses_is_refused(pattern, match):
    refused(pattern, match)


@pytest.mark.parametrize(
    "pattern, text",
    [
        (r"(?i)\p{Lt}", "ÉaAǅ1"),
        (r"(?i)\P{Lt}", "ÉaAǅ1"),
        (r"(?i)[\p{Lu}]+", "aB"),
        (r"(?i)\p{Ll}", "\u0130"),
        (r"(?i)\p{L}+", "α\u0345"),
        (r"(?i)\p{Greek}", "µ"),
    ],
)
def test_case_insensitive_letter_properties_are_refused(pattern, text):
    # was: (?i)\p{Lt} on 'ÉaAǅ1' gave ['ǅ'], regex ['É', 'a', 'A', 'ǅ'] (every cased letter);
    # (?i)\p{L}+ kept U+0345 with the letter; (?i)\p{Greek} matched the micro sign
    with pytest.raises(PatternError, match="under \\(\\?i\\)"):
        split(text, pattern)


@pytest.mark.parametrize(
    "pattern, text, expected",
    [
        (r"(?i)[a-z]+", "İi", ["İi"]),
        (r"(?i:i)", "İ", ["İ"]),
        (r"(?i)[^i]", "İ", []),
        (r"(?i)\x49", "ı", ["ı"]),
    ],
)
def test_case_insensitive_i_is_refused(pattern, text, expected):
    # was: the opposite of `expected` ((?i)[a-z]+ on 'İi' gave ['i']): regex folds İ with i and ı
    # with I, fancy-regex does not
    assert findall(pattern, text) == expected
    with pytest.raises(PatternError, match="U\\+0130"):
        split(text, pattern)


def test_case_insensitive_patterns_that_agree_are_accepted():
    for pattern, text in [
        (r"(?i)[\w']+", "İi ı'S"),
        (r"'(?i:[sdmt]|ll|ve|re)|\p{L}+|\s+", "I'LL ſ K's"),
        (r"(?i)ſ|k+|\p{N}+", "SsſKkK 12"),
        (r"(?i)[a-hj-z]+", "ABC abc"),
    ]:
        assert split(text, pattern) == findall(pattern, text)


def test_named_groups_backrefs_comments_and_conditionals():
    # the audit reads them (before: its lexer refused named groups as "unsupported group syntax")
    for pattern, text in [
        (r"(?P<a>x)(?P=a)|\w", "xxy"),
        (r"(?#comment)\w+|\s", "ab c"),
        (r"(a)\1|\w", "aab"),
        (r"(?<n>\w)\w*", "ab cd"),
    ]:
        assert split(text, pattern) == findall(pattern, text)
    assert not can_match_empty(r"(?P<a>x)(?P=a)")
    assert can_match_empty(r"(?=(a*))\1")  # a back-reference to an empty group is empty
    assert can_match_empty(r"(a)?(?(1)b)")  # a conditional without its 'no' branch
    for pattern in [
        r"(?P<a>x)",
        r"(?<a>x)",
        r"(?P<a>x)(?P=a)",
        r"(a)?(?(1)b|c)",
    ]:  # still not exported
        with pytest.raises(ConversionError, match="unsupported group syntax"):
            to_oniguruma(pattern)


def test_named_patterns_and_their_texts_are_not_audited():
    for name, text in toksmith.PATTERNS.items():
        assert resolve_pattern(text) == (text, name)  # cl100k's \s++$, o200k's (?i:...) are exact
        assert split("I'LL go \n", text, engine="regex") == findall(text, "I'LL go \n")


@pytest.mark.parametrize("pattern", [r".+?A|.+?,", r".*?A|.*?,", r"\s+?|x", r"(?:a{1,3}?b|c)"])
def test_lazy_quantifier_with_alternatives_is_refused(pattern):
    # was: fancy-regex hands a pattern without look-around to the regex crate, whose lazy
    # quantifiers in an alternation are not leftmost-first: '.+?A|.+?,' split 'xx,A' as
    # ['xx,'] where regex finds ['xx,A']
    refused(pattern, "lazy quantifier")


@pytest.mark.parametrize(
    "pattern, text",
    [
        (r"(?=.).+?A|.+?,", "xx,A"),
        (r"(?>.+?A)|.+?,", "xx,A"),
        (r".+?A|.++,", "xx,A"),
        (r"a+?", "aaa"),
    ],
)
def test_lazy_quantifiers_the_backtracker_runs_are_accepted(pattern, text):
    # with look-around, an atomic group or a possessive quantifier fancy-regex backtracks itself,
    # leftmost-first as Python's regex; without alternatives the crate agrees too
    assert split(text, pattern) == findall(pattern, text)


def test_patterns_read_from_tokenizer_files_load_as_before(tmp_path):
    """Audit finding: A pattern from a tokenizer file runs as its engine reads it (tiktoken runs fancy-regex
    too; Hugging Face's Oniguruma reads a nested class as fancy-regex does): the refusals above
    are for patterns users write. was: BLOOM's split regex ``' ?[^(\\s|[.,!?…])]+'`` (a nested
    class) in a tokenizer.json that loaded with Hugging Face's ids became a ConversionError."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, pre_tokenizers, trainers

    bloom = r" ?[^(\s|[.,!?…。，、।۔،])]+"
    hf = tokenizers.Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(tokenizers.Regex(bloom), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    hf.decoder = decoders.ByteLevel()
    hf.train_from_iterator(
        ["hello world, this is it. ok!"] * 50,
        trainer=trainers.BpeTrainer(
            vocab_size=300,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        ),
    )
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    text = "hello world, (this) is|it. ok! [x] a[b"
    want = hf.encode(text).ids
    tok = toksmith.load_any(str(path))
    assert tok.encode(text) == want
    tok.save(str(tmp_path / "ts.json"))
    assert toksmith.load(str(tmp_path / "ts.json")).encode(text) == want
    # the same construct written by a user is still refused
    with pytest.raises(toksmith.PatternError, match="nested class"):
        toksmith.split(text, r" ?[^(\s|[.,])]+z")


@pytest.mark.parametrize("pattern", [r"((?i)b)a", r"(?>(?i)b)a", r"(?P<n>(?i)b)a", r"x|((?i)b)a"])
def test_inline_flags_inside_capturing_or_atomic_groups_are_refused(pattern):
    # fancy-regex keeps (?i) on after such a group ends: ((?i)b)a split 'bA BA ba Ba' as all four
    # where regex.findall gives ['ba', 'Ba']
    refused(pattern, r"inside the group .* scope them with \(\?i:\.\.\.\)")


@pytest.mark.parametrize(
    "pattern", [r"(?:(?i)b)a", r"(?i:b)a", r"(?i)(?i:(?-i)b)a", r"(?i)(?:(?-i)b)a", r"(?i)\w+"]
)
def test_inline_flags_scoped_alike_are_accepted(pattern):
    text = "bA BA ba Ba"
    assert split(text, pattern) == findall(pattern, text)
