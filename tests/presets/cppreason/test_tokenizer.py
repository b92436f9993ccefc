"""The CppReason preset (seed 001): the fixed-id layout, the seed's 12-point validation
checklist, whole-word fixed tokens, the learned part against a pure-Python pipeline (the
``regex`` module for the words, the inner toksmith tokenizer for each learned word), decoding
by the seed's spacing rule, FIM and diff framing, files and errors."""

from __future__ import annotations

import doctest
import importlib
import itertools
import warnings

import pytest
import regex
from hypothesis import example, given, settings
from hypothesis import strategies as st

import toksmith
from tests.conftest import DATA
from tests.unicode16 import characters_16
from toksmith.presets import cppreason
from toksmith.presets.cppreason import (
    CPP_KEYWORDS,
    DIFF_ADD,
    DIFF_DEL,
    FIRST_LEARNED,
    FIXED_IDS,
    FIXED_NAMES,
    LEGACY_PATTERN,
    PATTERN,
    WORD_MARK,
    CppTokenizer,
)

from . import train_tiny

CPP = DATA / "corpora" / "cpp_slice.txt"
VOCAB = 3400


@pytest.fixture(scope="module")
def cpp() -> CppTokenizer:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the slice must give every merge asked for
        return cppreason.train(CPP, vocab_size=VOCAB)


# ---- words ----------------------------------------------------------------------------------


def test_pattern_is_the_cores_and_uses_the_scanner():
    from toksmith import _core

    assert PATTERN == _core.CPP_RUNS_PATTERN
    assert _core.compile_pattern(PATTERN) == (PATTERN, True)
    assert LEGACY_PATTERN == _core.CPP_WORDS_PATTERN
    assert _core.compile_pattern(LEGACY_PATTERN) == (LEGACY_PATTERN, True)
    assert cppreason.INNER_PATTERN == _core.WHOLE_PATTERN
    assert _core.compile_pattern(cppreason.INNER_PATTERN) == (cppreason.INNER_PATTERN, True)


CPP_ATOMS = st.lists(
    st.sampled_from(
        [
            "+",
            "-",
            "---",
            "+++",
            " a/",
            " b/",
            "@@",
            "#",
            "# ",
            "include",
            "x",
            "_",
            "\u00e9",
            "0",
            "0x",
            "0X1f",
            "9",
            "\u0663",
            '"',
            "'",
            "\\",
            '\\"',
            " ",
            "\t",
            "\n",
            "\r",
            "\r\n",
            "\xa0",
            "\x1c",
            "<",
            ">",
            "=",
            "->",
            ".",
            ":",
            "*",
            "/",
            "\u0301",
            "\U0001f600",
        ]
    ),
    max_size=20,
).map("".join)


@given(CPP_ATOMS)
def test_scanner_equals_the_regex_module(text):
    assert toksmith.split(text, PATTERN) == regex.findall(PATTERN, text)


@given(st.text(alphabet=characters_16, max_size=40))
def test_scanner_equals_the_regex_module_on_any_text(text):
    assert toksmith.split(text, PATTERN) == regex.findall(PATTERN, text)


# ---- layout ----------------------------------------------------------------------------------


def test_layout():
    assert len(FIXED_NAMES) == FIRST_LEARNED == 1600
    assert (
        FIXED_NAMES[:4] == ["<PAD>", "<UNK>", "<BOS>", "<EOS>"]
        and FIXED_NAMES[19] == "<RESERVED_19>"
    )
    assert FIXED_NAMES[20] == "auto" and FIXED_IDS["int"] == 20 + CPP_KEYWORDS.index("int")
    assert FIXED_IDS["::"] == 120 and FIXED_IDS["->"] == 121
    assert FIXED_IDS["#include"] == 180 and FIXED_IDS["{"] == 220 and FIXED_IDS["std"] == 320
    assert all(FIXED_IDS[str(n)] == 520 + n for n in range(1000))
    assert FIXED_NAMES[1520:1529] == ["+", "-", "@@", "diff", "---", "+++", "index", "a/", "b/"]
    assert FIXED_IDS["+"] == 220 + list("{}()[]<>;:,.+-").index(
        "+"
    )  # punctuation, not the diff marker
    assert FIXED_IDS["\n"] == 1536 and FIXED_IDS["\n\n"] == 1537
    assert FIXED_IDS[WORD_MARK] == 1552 and all(
        FIXED_NAMES[i] == f"<RESERVED_{i}>" for i in range(1553, 1600)
    )
    # a token listed twice ("typedef", "bind") keeps its first id; the free ids are reserved
    assert CPP_KEYWORDS.count("typedef") == 1 and FIXED_NAMES.count("bind") == 1
    assert sum(1 for t in FIXED_NAMES if t.startswith("<RESERVED_")) > 48


def test_trained_layout(cpp):
    assert cpp.vocab_size == VOCAB
    inner = cpp.tokenizer
    assert inner.decode_bytes([FIRST_LEARNED + 65]) == b"A"  # bytes right after the fixed ids
    assert (cpp.pad_token_id, cpp.bos_token_id, cpp.eos_token_id) == (0, 2, 3)
    assert cpp.special_id("<FIM_MIDDLE>") == 5
    with pytest.raises(ValueError, match="control tokens"):
        cpp.special_id("<NOPE>")


# ---- the seed's validation checklist -------------------------------------------------------------


def test_validation_checklist(cpp):
    t = cpp.tokenize
    assert t("std::vector<int>") == ["std", "::", "vector", "<", "int", ">"]  # 1
    assert cpp.encode("a::b")[1] == 120 and cpp.encode("x::y::z").count(120) == 2  # 2
    assert cpp.encode("p->q")[1] == 121  # 3
    assert cpp.encode("nullptr") == [FIXED_IDS["nullptr"]]  # 4
    assert cpp.encode("42") == [562]  # 5
    ids = cpp.encode("1024")  # 6
    assert all(i >= FIRST_LEARNED for i in ids) and cpp.decode(ids) == "1024"
    ids = cpp.encode("0x7ffee1234abc")  # 7
    assert all(i >= FIRST_LEARNED for i in ids) and cpp.decode(ids) == "0x7ffee1234abc"
    assert cpp.encode("\n") == [1536] and cpp.encode("a  \t b") == cpp.encode("a b")  # 8
    assert not any(
        cpp.tokenizer.decode_bytes([i]) in (b" ", b"\t") for i in cpp.encode("int  x ;\tq")
    )
    assert (
        t("// Check null pointer")[0] == "//"
        and cpp.decode(cpp.encode("// Check null pointer")) == "//Check null pointer"
    )  # 9
    line = 'printf("hello %d\\n", x);'  # 10 (`);` is one learned word: a punctuation run)
    assert cpp.words(line) == ["printf", "(", '"hello', '%d\\n"', ",", "x", ");"]
    ids = cpp.encode(line)
    assert ids[:2] == [FIXED_IDS["printf"], FIXED_IDS["("]]
    assert ids[-2:] == [*cpp.encode("x"), *cpp.encode(");")] and len(cpp.encode(");")) == 1
    assert not any(b" " in cpp.tokenizer.decode_bytes([i]) for i in ids if i >= FIRST_LEARNED)
    # the spacing rule, but the literal's two halves would read as one word without their space
    assert cpp.decode(ids) == 'printf("hello %d\\n",x);'
    assert t("+if (!buf) return;") == [
        "<DIFF_ADD>",
        "if",
        *t("(!"),
        *t("buf"),
        ")",
        "return",
        ";",
    ]  # 11 (`(!` is one learned word)
    assert cpp.encode("cout << endl") == [
        FIXED_IDS["cout"],
        FIXED_IDS["<<"],
        FIXED_IDS["endl"],
    ]  # 12


def test_fixed_tokens_only_as_whole_words(cpp):
    for word in ("print", "internal", "int_value", "nullptrs", "std2", "_int"):
        ids = cpp.encode(word)
        assert all(i >= FIRST_LEARNED for i in ids), word
        assert cpp.decode(ids) == word


def test_diff_markers_only_at_line_start(cpp):
    assert cpp.encode("+x\n-y")[0] == 1520 and 1521 in cpp.encode("+x\n-y")
    assert cpp.encode("a + b - c").count(FIXED_IDS["+"]) == 1 and 1520 not in cpp.encode(
        "a + b - c"
    )
    assert 1521 not in cpp.encode("x\n  -y")  # indented: the minus sign
    assert cpp.encode("--- a/f.c\n+++ b/f.c")[:2] == [1524, 1527]
    assert (
        cpp.decode(cpp.encode("--- a/f.c\n+++ b/f.c\n@@ -1,2 +1,3 @@"))
        == "--- a/f.c\n+++ b/f.c\n@@ -1,2+1,3 @@"
    )


def test_newlines_and_preprocessor(cpp):
    assert cpp.encode("a\n\n\n\nb")[1:-1] == [1537, 1537] and cpp.encode("a\n \n  b")[1] == 1537
    assert cpp.encode("#include <x>")[0] == 180 and cpp.encode("#  include <x>")[0] == 180
    assert all(i >= FIRST_LEARNED for i in cpp.encode("#include_next"))


# ---- against a pure-Python pipeline ----------------------------------------------------------------

WHITESPACE = regex.compile(r"[\p{White_Space}]+")
HEADERS = {
    "--- a/": [1524, 1527],
    "+++ b/": [1525, 1528],
    "--- b/": [1524, 1528],
    "+++ a/": [1525, 1527],
}


def reference_words(text: str) -> list:
    """The seed's two steps: the pattern's words, then those with whitespace in them (string
    literals) split at it."""
    out = []
    for w in regex.findall(PATTERN, text):
        whole = w in HEADERS or (w[0] == "#" and "#" + w[1:].lstrip(" \t") in FIXED_IDS)
        if w[0] not in "\r\n" and not whole and WHITESPACE.search(w):
            out.extend((p, True) for p in WHITESPACE.split(w) if p)
        else:
            out.append((w, False))
    return out


def reference_learned(tok: CppTokenizer, word: str) -> list:
    """A learned word's ids: marked and encoded by the inner tokenizer, the mark character in
    the word itself its fixed id (cutting the word around it)."""
    out = []
    for k, part in enumerate(word.split(WORD_MARK)):
        if k:
            out.append(FIXED_IDS[WORD_MARK])
        if part:
            out.extend(tok.tokenizer.encode_ordinary(WORD_MARK + part))
    return out


def reference_encode(tok: CppTokenizer, text: str, line_start: bool = True) -> list:
    """``line_start``: the text starts a line, so a ``+``/``-`` word at its position 0 (not after
    leading spaces, which the pattern skips) is a diff marker, as after a ``\n``."""
    out = []
    if not line_start and text[:1] in ("-", "+"):
        # in mid-line: neither a diff header nor a marker (the pattern's ^ is the text's start),
        # so a leading +/- is read as in " +-": a punctuation run ("+-") or an operator
        text = " " + text
    first = regex.search(PATTERN, text)
    line_start = line_start and first is not None and first.start() == 0
    for w, part in reference_words(text):
        if part:  # a piece of a literal: fixed or learned, nothing else
            out.extend([FIXED_IDS[w]] if w in FIXED_IDS else reference_learned(tok, w))
            line_start = False
            continue
        if w[0] in "\r\n":
            out.append(1537 if w.count("\n") == 2 else 1536)
            line_start = w.endswith("\n")
            continue
        if line_start and w in ("+", "-"):
            out.append(1520 if w == "+" else 1521)
        elif w in HEADERS:
            out.extend(HEADERS[w])
        elif w in FIXED_IDS:
            out.append(FIXED_IDS[w])
        elif w[0] == "#" and "#" + w[1:].lstrip(" \t") in FIXED_IDS:
            out.append(FIXED_IDS["#" + w[1:].lstrip(" \t")])
        else:
            out.extend(reference_learned(tok, w))
        line_start = False
    return out


def test_encode_equals_the_reference_on_real_code(cpp):
    text = CPP.read_text(encoding="utf-8")
    assert cpp.encode(text) == reference_encode(cpp, text)
    docs = [text[i : i + 4000] for i in range(0, 40000, 4000)]
    assert cpp.encode_ordinary_batch(docs) == [reference_encode(cpp, d) for d in docs]


CODE = st.lists(
    st.sampled_from(
        list("ab_xZ09\u00e9 \t\n+-*/<>=!&|:;.,#\"'\\@{}()\u3000\x85\x1c\u2581")
        + [
            "int",
            "std",
            "::",
            "->",
            "42",
            "1024",
            "nullptr",
            "#include",
            "\n+",
            "\n-",
            "--- a/",
            "+++ b/",
            "@@",
            "0x1F",
            "print",
        ]
    ),
    max_size=30,
).map("".join)


@example(" +", True)
@example("+-", False)  # mid-line: one punctuation run, not two words
@example("\t-x", True)
@given(CODE, st.booleans())
def test_encode_equals_the_reference_on_random_code(text, line_start):
    tok = _small()
    assert tok.encode(text, line_start=line_start) == reference_encode(tok, text, line_start)
    assert tok.words(text) == [
        p for w, _ in reference_words(text) for p in regex.split(f"({WORD_MARK})", w) if p
    ]


_SMALL = []


def _small() -> CppTokenizer:
    if not _SMALL:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _SMALL.append(
                cppreason.train([CPP.read_text(encoding="utf-8")[:20000]], vocab_size=2200)
            )
    return _SMALL[0]


def render(text: str) -> str:
    """The seed's spacing rule applied to the reference words, with toksmith's three additions
    that make the text encode back to the same ids: one space between the parts of a literal
    cut at its whitespace (and between `'` and `'`), a space where two words would read as
    another (:func:`fuses`), and a space before a ``+``/``-`` that is not a diff marker but
    would start a line."""
    pieces = []  # (text, an ordinary + or - that must not start a line)
    first = regex.search(PATTERN, text)
    line_start = first is not None and first.start() == 0
    for w, part in reference_words(text):
        if part:
            pieces.append((w, False))
        elif w[0] in "\r\n":
            pieces.append(("\n" * min(2, w.count("\n")), False))
            line_start = w.endswith("\n")
            continue
        elif w in ("--- a/", "+++ b/", "--- b/", "+++ a/"):
            pieces.extend([(w[:3], False), (w[4:], False)])
        elif w[0] == "#" and "#" + w[1:].lstrip(" \t") in FIXED_IDS:
            pieces.append(("#" + w[1:].lstrip(" \t"), False))
        else:
            # a `+`/`-`, or a learned punctuation run that starts with one, not in the first
            # column: a space keeps it from reading as the diff marker after a line break
            sign = w in ("+", "-") or (w[0] in "+-" and w not in FIXED_IDS)
            pieces.append((w, sign and not line_start))
        line_start = False
    # the mark character cuts the word it is in, and only the word rule spaces it
    pieces = [(q, mid) for w, mid in pieces for q in regex.split(f"({WORD_MARK})", w) if q]
    out, prev, run = "", "", []  # run: the last (up to three) unspaced words on this line
    literal = quote = False
    for p, mid_line in pieces:
        if mid_line and out.endswith("\n"):
            out, prev, run = out + " ", " ", []
        glued = WORD_MARK in (p, prev)
        if prev and (prev[-1] == "\n" or p[0] == "\n"):
            run, literal = [], False
        elif prev and (
            (regex.match(r"[\p{L}\p{N}_]", prev[-1]) and regex.match(r"[\p{L}\p{N}_]", p[0]))
            or prev in ("---", "+++", "@@")
            or p == "@@"
            or (not glued and (literal or (quote and p == "'") or fuses(out, run, p)))
        ):
            out += " "
            run = []
        if p != WORD_MARK:
            literal = (
                not closes(p)
                if literal
                else p.startswith('"') and not (len(p) >= 2 and closes(p[1:]))
            )
            quote = p == "'"
        run = [] if p == WORD_MARK else run[-2:] + [p]  # no window across the mark
        out += p
        prev = p
    return out


def closes(word: str) -> bool:
    """Whether `word` ends with a ``"`` that no backslash escapes."""
    return word.endswith('"') and (len(word) - 1 - len(word[:-1].rstrip("\\"))) % 2 == 0


def fuses(out: str, run: list, word: str) -> bool:
    """Whether the words of `run` (ending `out`) and `word`, written together, read with a
    word across the end of one of them (two operators as one, `/` and `*` as a comment opener,
    the two halves of a literal cut at its space as one literal)."""
    window = "".join(run) + word
    if not run:
        return False
    at_line_start = len(out) == len(window) - len(word) or out[-len(window) + len(word) - 1] == "\n"
    lead = 0 if at_line_start else 1
    read = {m.end() - lead for m in regex.finditer(PATTERN, " " * lead + window)}
    ends = itertools.accumulate(len(w) for w in run + [word])
    return not read.issuperset(ends)


@given(CODE)
def test_decode_is_the_seeds_spacing_rule(text):
    tok = _small()
    assert tok.decode(tok.encode(text)) == render(text)


def test_decode_of_real_code(cpp):
    text = CPP.read_text(encoding="utf-8")[:20000]
    assert cpp.decode(cpp.encode(text)) == render(text)


# ---- framing, files, errors ----------------------------------------------------------------------


def test_fim_and_diff_framing(cpp):
    pre, suf, mid = "int f() {", "}", "return 1;"
    assert cpp.encode_fim(pre, suf) == [4] + cpp.encode(pre) + [6] + cpp.encode(suf) + [5]
    assert cpp.encode_fim(pre, suf, mid) == [4] + cpp.encode(pre) + [6] + cpp.encode(suf) + [
        5
    ] + cpp.encode(mid) + [3]
    d = cpp.encode_diff("+x;\n", message="Fix")
    assert d[0] == 15 and d[-1] == 16 and d[1:-1] == cpp.encode("// COMMIT: Fix\n+x;\n")
    assert cpp.encode("x", bos=True, eos=True) == [2] + cpp.encode("x") + [3]
    assert cpp.decode([2, 15] + cpp.encode("int x;") + [16, 3, 1599]) == "int x;"


def test_save_load_and_errors(tmp_path, cpp):
    p = tmp_path / "cpp.json"
    cpp.save(p)
    back = cppreason.load(p)
    text = CPP.read_text(encoding="utf-8")[:5000]
    assert back.encode(text) == cpp.encode(text)
    with pytest.raises(ValueError, match="fixed ids"):
        CppTokenizer(toksmith.train_from_iterator(["int x;"] * 5, vocab_size=259))
    assert (
        CppTokenizer(p).encode(text) == cpp.encode(text) == CppTokenizer(str(p)).encode(text)
    )  # the seed's constructor
    with pytest.raises(TypeError, match="path of a saved one"):
        CppTokenizer(5)
    with pytest.raises(FileNotFoundError):
        CppTokenizer(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="out of range"):
        cpp.decode([VOCAB])
    with pytest.raises(TypeError, match="must be int"):
        cpp.decode(["x"])
    with pytest.raises(TypeError, match="text must be str"):
        cpp.encode(b"int")
    with pytest.raises(TypeError, match="wrap it in a list"):
        cpp.encode_ordinary_batch("int x;")
    with pytest.raises(ValueError, match="vocab_size"):
        cppreason.train(["int x;"], vocab_size=1000)
    with pytest.raises(TypeError, match="not bytes"):
        cppreason.train(b"int x;")
    with pytest.raises(ValueError, match="errors must be"):
        cppreason.train(CPP, errors="ignore")


def test_fim_parts_keep_their_place_on_the_line(cpp):
    # the suffix and middle go on the prefix's line: their +/- are operators, not diff markers
    ids = cpp.encode_fim("x = a ", "+ b;", "- c ")
    assert DIFF_ADD not in ids and DIFF_DEL not in ids
    plus, minus = FIXED_IDS["+"], FIXED_IDS["-"]
    assert ids == [
        4,
        *cpp.encode("x = a "),
        6,
        plus,
        *cpp.encode("b;"),
        5,
        minus,
        *cpp.encode("c "),
        3,
    ]
    # after a line break they do start a line
    assert cpp.encode_fim("x;\n", "+y;\n", "-z;\n").count(DIFF_ADD) == 1
    assert (
        cpp.encode_fim("x;\n", "-y;", "").count(DIFF_DEL) == 1
    )  # empty middle: the suffix starts the line
    assert cpp.encode_fim("", "+y;")[1:3] == [6, DIFF_ADD]  # empty prefix, no middle
    assert cpp.encode("+x", line_start=False)[0] == plus and cpp.encode("+x")[0] == DIFF_ADD


def test_the_mark_character_in_the_text_decodes_as_itself(cpp):
    # the word mark U+2581 written in the source is its fixed id, not a word start
    text = '"a\u2581b" x\u2581y \u2581 z'
    ids = cpp.encode(text)
    assert ids.count(1552) == 3 and cpp.id_to_token(1552) == WORD_MARK
    assert cpp.decode(ids) == '"a\u2581b"x\u2581y\u2581z' == render(text)


def test_unclosed_quotes_stay_linear(cpp):
    # each unclosed `"` used to rescan to the end of the line (quadratic: minutes for 1 MB)
    text = '\\"' * 300_000
    words = cpp.words(text)
    assert len(words) == 600_000 and set(words) == {"\\", '"'}
    assert len(cpp.encode(text)) == 600_000


def test_argument_errors(cpp):
    import numpy as np

    assert cpp.decode(np.array(cpp.encode("int x;"))) == "int x;"
    assert cpp.id_to_token(np.int64(562)) == "42"
    with pytest.raises(ValueError, match="out of range"):
        cpp.decode(np.array([99999]))
    with pytest.raises(ValueError, match="out of range"):
        cpp.decode([2**70])
    with pytest.raises(TypeError, match="must be int"):
        cpp.decode([True])
    with pytest.raises(TypeError, match="bos must be True or False"):
        cpp.encode("x", bos="no")
    with pytest.raises(TypeError, match="message must be str"):
        cpp.encode_diff("+x", message=5)
    with pytest.raises(TypeError, match="suffix must be str"):
        cpp.encode_fim("x", None)
    with pytest.raises(TypeError, match="name must be str"):
        cpp.special_id(5)
    assert cpp.special_id("<DIFF_ADD>") == DIFF_ADD and cpp.special_id("<DIFF_DEL>") == DIFF_DEL
    with pytest.raises(ValueError, match="between 1 and 4096"):
        cpp.encode_ordinary_batch(["x"], num_threads=2**70)
    with pytest.raises(TypeError, match="num_threads must be a positive int"):
        cpp.encode_ordinary_batch(["x"], num_threads=True)
    with pytest.raises(ValueError, match="between 1 and 4096"):
        cppreason.train(["int x;"], vocab_size=2000, threads=-1)
    with pytest.raises(TypeError, match="vocab_size must be an int"):
        cppreason.train(["int x;"], vocab_size="2000")
    with pytest.raises(TypeError, match="name must be str"):
        cppreason.train(["int x;"], vocab_size=2000, name=5)
    with pytest.raises(ValueError, match="too large"):
        cppreason.train(["int x;"], vocab_size=2**40)


def test_min_frequency_is_the_seeds(cpp):
    assert cppreason.SINGLE_CHAR_PUNCT == cppreason.PUNCTUATION
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        once = cppreason.train(["foo"], vocab_size=2000)  # every pair occurs once: nothing merged
        assert once.vocab_size == 1856
        assert cppreason.train(["foo"], vocab_size=2000, min_frequency=0).vocab_size == 1856 + 5


def test_doctests():
    module = importlib.import_module("toksmith.presets.cppreason")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the examples train on tiny corpora
        result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


def test_native_table_is_checked_against_the_tokenizer():
    from toksmith import _core

    small = toksmith.train_from_iterator(["int x;"] * 5, vocab_size=258)
    fw = _core.FixedWordEncoder(PATTERN, [("int", [1599])], [], (1536, 1537), WORD_MARK)
    with pytest.raises(ValueError, match="fixed id 1599 is not an id of this tokenizer"):
        fw.encode(small._core, "int x")
    with pytest.raises(ValueError, match="fixed id 1599"):
        fw.encode_batch(small._core, ["int x"])
    ok = _core.FixedWordEncoder(PATTERN, [("int", [3])], [("+", 4)], (1, 2), "")
    assert ok.encode(small._core, "+int x\n\n+") == [4, 3, *small.encode_ordinary("x"), 2, 4]


def test_decode_with_the_mark_split_over_tokens():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bare = cppreason.train(["x = a->b;"] * 5, vocab_size=1856)  # no merges: bytes only
    ids = bare.encode("x = a->b; yy zz")
    assert len(ids) > 10
    assert bare.decode(ids) == "x=a->b;yy zz"


def test_pickles_for_multiprocessing(cpp):
    import pickle

    back = pickle.loads(pickle.dumps(cpp))
    text = CPP.read_text(encoding="utf-8")[:3000]
    assert back.encode(text) == cpp.encode(text) and back.decode(cpp.encode(text)) == cpp.decode(
        cpp.encode(text)
    )


def test_command_line(tmp_path, capsys):
    from toksmith.cli import main

    out = str(tmp_path / "cpp.json")
    assert (
        main(["cppreason", "train", str(CPP), "-o", out, "--vocab-size", "2500", "--no-progress"])
        == 0
    )
    tok = cppreason.load(out)
    assert tok.vocab_size == 2500
    capsys.readouterr()
    assert main(["cppreason", "encode", "-t", out, "std::vector<int>", "v;"]) == 0
    ids = [int(x) for x in capsys.readouterr().out.split()]
    assert ids == tok.encode("std::vector<int> v;")
    assert main(["cppreason", "decode", "-t", out] + [str(i) for i in ids]) == 0
    assert capsys.readouterr().out == tok.decode(ids) + "\n"
    assert main(["cppreason", "encode", "--tokens", "-t", out, "a->b"]) == 0
    assert capsys.readouterr().out.split() == [t for t in tok.tokenize("a->b")]
    # the plain commands refuse the file: they would give other ids
    for cmd in (["encode", "-t", out, str(CPP)], ["decode", "-t", out, str(CPP)]):
        assert main(cmd) == 1
        assert "toksmith cppreason" in capsys.readouterr().err
    assert main(["cppreason", "decode", "-t", out, "x"]) == 1
    assert "must be integers" in capsys.readouterr().err
    assert (
        main(["cppreason", "train", str(CPP), "-o", out, "--threads", "-1", "--no-progress"]) == 1
    )
    assert "threads must be between 1 and 4096" in capsys.readouterr().err
    # the CLI prints warnings as one "toksmith COMMAND: warning:" line
    assert (
        main(
            [
                "cppreason",
                "train",
                str(CPP),
                "-o",
                out,
                "--vocab-size",
                "2500",
                "--min-frequency",
                "1000",
                "--no-progress",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert (
        "toksmith cppreason: warning:" in err
        and "min_frequency=1000" in err
        and "Warning" not in err
    )
    assert cppreason.load(out).vocab_size < 2500


CORPUS = """#include <vector>
// Compute the sum of the values in a buffer.
int sum_values(const std::vector<int>& values, size_t count) {
    int total = 0;
    for (size_t index = 0; index < count; ++index) {
        total += values[index];
    }
    return total;
}
@@ -1,2 +1,3 @@
--- a/buffer.cpp
+++ b/buffer.cpp
+    if (!buffer) return nullptr;
-    printf("value %d\\n", total);
"""


@pytest.fixture(scope="module")
def tok() -> CppTokenizer:
    return train_tiny(CORPUS)


# (joined from a list: st.text drops surrogates from its alphabet)
SURROGATE_TEXT = st.lists(
    st.one_of(
        st.characters(),
        st.sampled_from(
            ["\ud800", "\udfff", "\udc80", "\ud83d", "\ude00", "\u2581", "\n", "+", "-"]
        ),
    ),
    max_size=30,
).map("".join)


def _fixed(text: str) -> str:
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


_TOK: list = []


@pytest.fixture(scope="module", autouse=True)
def _share(tok):
    # hypothesis tests cannot take a function-scoped fixture: they read the module's one here
    if not _TOK:
        _TOK.append(tok)


FIM_PARTS = st.lists(
    st.sampled_from(
        [
            "---",
            "+++",
            " a/",
            " b/",
            "+",
            "-",
            "@@",
            "x",
            "1",
            " ",
            "\t",
            "\n",
            ";",
            "#",
            "include",
            "\u2581",
            "::",
            "int",
        ]
    ),
    max_size=8,
).map("".join)


def test_lone_surrogates_are_replaced_not_a_unicode_error(tok):
    # was: UnicodeEncodeError: 'utf-8' codec can't encode character '\ud800' ... from encode,
    # encode_ordinary_batch, words, tokenize, encode_fim and encode_diff
    text = "int x\ud800y = \udfff;"
    same = "int x\ufffdy = \ufffd;"
    assert tok.encode(text) == tok.encode(same)
    assert tok.encode_ordinary_batch([text, "int"]) == [tok.encode(same), tok.encode("int")]
    assert tok.words(text) == tok.words(same)
    assert tok.tokenize(text) == tok.tokenize(same)
    assert tok.encode_fim(text, "\ud800", "a\udc80") == tok.encode_fim(same, "\ufffd", "a\ufffd")
    assert tok.encode_diff("+\ud800\n", message="m\udfff") == tok.encode_diff(
        "+\ufffd\n", message="m\ufffd"
    )
    assert tok.decode(tok.encode(text)) == tok.decode(tok.encode(same))


@settings(max_examples=60, deadline=None)
@given(st.lists(SURROGATE_TEXT, max_size=6))
def test_batch_equals_one_by_one(texts):
    tok = _TOK[0]
    assert tok.encode_ordinary_batch(texts) == [tok.encode(t) for t in texts]
    assert tok.encode_ordinary_batch(texts) == [tok.encode(_fixed(t)) for t in texts]


def test_train_on_texts_with_lone_surrogates():
    # was: UnicodeEncodeError from the native word counter
    with pytest.raises(
        toksmith.CorpusDecodeError, match=r'lone surrogate \(U\+D800 at index 5\).*errors="replace"'
    ):
        cppreason.train(["int x\ud800;"] * 3, vocab_size=1900)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        replaced = cppreason.train(
            ["foo\ud800bar foo\ud800bar"] * 3, vocab_size=1900, errors="replace"
        )
        same = cppreason.train(["foo\ufffdbar foo\ufffdbar"] * 3, vocab_size=1900)
    assert replaced.tokenizer.mergeable_ranks() == same.tokenizer.mergeable_ranks()
    assert replaced.vocab_size > 1856 and replaced.encode("foo\ud800bar") == same.encode(
        "foo\ufffdbar"
    )


def test_fim_suffix_in_mid_line_is_no_diff_header(tok):
    # was: [4, <x = a>, 6, 1524, ...]: the suffix's `---` the diff header, though it goes on the
    # prefix's line (mid-line, `x = a --- b;` is the operators `--` and `-`)
    ids = tok.encode_fim("x = a", "--- b;")
    assert ids == [4, *tok.encode("x = a"), 6, *tok.encode("; --- b;")[1:], 5]
    assert 1524 not in ids and FIXED_IDS["--"] in ids
    ids = tok.encode_fim("x = a", "y;", "+++z")
    assert 1525 not in ids and ids[-5:] == [*tok.encode(";+++z")[1:], 3]
    # at the start of a line they are the headers
    assert tok.encode_fim("x;\n", "--- a/f")[tok.encode_fim("x;\n", "--- a/f").index(6) + 1 :][
        :2
    ] == [1524, 1527]


@settings(max_examples=150, deadline=None)
@example("x", "--- a/f", None)
@example("x = ", "y", "+++")
@given(FIM_PARTS, FIM_PARTS, st.none() | FIM_PARTS)
def test_fim_parts_are_encoded_where_they_stand(prefix, suffix, middle):
    # a part that does not start a line is encoded as it is after `x ` (a word and a space,
    # which form no word with what follows them and end no line): mid-line, so no diff marker
    # or header at its start
    tok = _TOK[0]
    n = len(tok.encode("x"))

    def part(text, before):
        if before == "" or before.endswith("\n"):
            return tok.encode(text)
        return tok.encode("x " + text)[n:]

    want = [4, *tok.encode(prefix), 6, *part(suffix, prefix + (middle or "")), 5]
    if middle is not None:
        want += [*part(middle, prefix), 3]
    assert tok.encode_fim(prefix, suffix, middle) == want


@settings(max_examples=150, deadline=None)
@example("--- a/f")
@example("+++ b/g\n+x")
@example("---")
@given(FIM_PARTS)
def test_encode_not_at_line_start_is_encoded_as_in_mid_line(text):
    # was: encode("--- a/f", line_start=False) gave the diff header ids [1524, 1527, ...]
    # although the flag says the text goes on a line; mid-line it is as after `x `
    tok = _TOK[0]
    assert tok.encode(text, line_start=False) == tok.encode("x " + text)[len(tok.encode("x")) :]
    if text.startswith("--- a/"):
        assert tok.encode(text)[:2] == [1524, 1527]  # at a line's start: the header


def test_encode_diff_checks_the_diff_type(tok):
    # was: TypeError: can only concatenate str (not "NoneType") to str
    with pytest.raises(TypeError, match="diff must be str, not NoneType"):
        tok.encode_diff(None)
    with pytest.raises(TypeError, match="diff must be str, not bytes"):
        tok.encode_diff(b"+x", message="m")


def test_decode_rejects_what_is_not_a_sequence_of_ids(tok):
    # was: decode(b"\x14\x15") == "auto const" (bytes read as ids), and "'int' object is not iterable"
    with pytest.raises(TypeError, match="ids must be a sequence of int token ids, not bytes"):
        tok.decode(b"\x14\x15")
    with pytest.raises(TypeError, match="ids must be a sequence of int token ids, not bytearray"):
        tok.decode(bytearray(b"\x14"))
    for bad in (562, None):
        with pytest.raises(TypeError, match=r"ids must be a sequence of int token ids \(a list"):
            tok.decode(bad)
    assert tok.decode((20, 21)) == "auto const" and tok.decode(iter([562])) == "42"


def test_batch_rejects_bytes(tok):
    # was: TypeError: text must be str, not int (the bytes iterated as ints)
    with pytest.raises(TypeError, match="texts must be a list of str, not bytes"):
        tok.encode_ordinary_batch(b"int x;")


def test_train_on_a_list_with_a_glob(tmp_path):
    # was: the glob's own text trained on (a list of str is texts unless every item exists)
    (tmp_path / "a.cpp").write_text("int widgetcount = widgetcount;\n" * 4, encoding="utf-8")
    (tmp_path / "b.cpp").write_text("int widgetcount;\n" * 4, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from_glob = cppreason.train(
            [str(tmp_path / "a*.cpp"), str(tmp_path / "b.cpp")], vocab_size=1900
        )
        from_files = cppreason.train(
            [str(tmp_path / "a.cpp"), str(tmp_path / "b.cpp")], vocab_size=1900
        )
        # C++ texts with `[`, `*` or `?` that match no file stay texts
        texts = cppreason.train(["a[i] = b[j];", "x *p = q ? r : s;"] * 3, vocab_size=1900)
    assert from_glob.tokenizer.mergeable_ranks() == from_files.tokenizer.mergeable_ranks()
    assert len(from_glob.encode("widgetcount")) == 1
    assert texts.vocab_size > 1856
