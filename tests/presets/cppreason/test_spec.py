"""Compliance of the CppReason preset with its spec (seed 001, "C++ Hybrid Tokenizer Design"):
the fixed-id layout token by token (the spec's lists copied here as literals), the learned part,
the pre-tokenizer's words, decoding, FIM and diff framing, the 12-point validation checklist and
the command line; plus regressions for the defects found against it."""

from __future__ import annotations

import math
import random
import re
import string
import warnings

import pytest

from tests.conftest import DATA
from toksmith.presets import cppreason
from toksmith.presets.cppreason import (
    CATEGORY,
    DIFF_ADD,
    DIFF_DEL,
    FIRST_LEARNED,
    FIXED_IDS,
    FIXED_NAMES,
    CppTokenizer,
)

from . import train_tiny

# ---- the spec's lists, verbatim (duplicates included: "typedef" and "bind" are listed twice) --------

SPEC_SPECIAL = [
    "<PAD>",
    "<UNK>",
    "<BOS>",
    "<EOS>",
    "<FIM_PREFIX>",
    "<FIM_MIDDLE>",
    "<FIM_SUFFIX>",
    "<CODE_START>",
    "<CODE_END>",
    "<THOUGHT_START>",
    "<THOUGHT_END>",
    "<QUERY_TOOL>",
    "<INDEX>",
    "<DEBUG_CONTEXT>",
    "<FILE_SEP>",
    "<DIFF_START>",
    "<DIFF_END>",
    "<COMMENT_START>",
    "<COMMENT_END>",
    "<RESERVED_19>",
]
SPEC_KEYWORDS = """auto const constexpr consteval constinit extern inline mutable register static thread_local
    volatile virtual explicit void bool char short int long float double signed unsigned wchar_t char8_t
    char16_t char32_t size_t struct class union enum typedef typename template concept requires namespace
    using if else switch case default for while do break continue return goto try catch throw noexcept new
    delete nullptr sizeof alignof alignas static_cast dynamic_cast const_cast reinterpret_cast public private
    protected friend true false this operator decltype typeid co_await co_return co_yield NULL typedef
    restrict assert define include ifdef ifndef endif pragma elif undef""".split()
SPEC_OPERATORS = """:: -> .* ->* == != <= >= <=> && || << >> ++ -- += -= *= /= %= &= |= ^= <<= >>= ... ## // /*
    */""".split()
SPEC_PUNCT = r"""{ } ( ) [ ] < > ; : , . + - * / % & | ^ ~ ! ? = # @ $ _ \ " '""".split()
SPEC_STL = """std boost absl fmt cout cerr cin endl printf fprintf sprintf scanf puts getchar putchar vector map
    set list deque array unordered_map unordered_set stack queue priority_queue pair tuple string string_view
    wstring unique_ptr shared_ptr weak_ptr make_unique make_shared allocator malloc calloc realloc free memcpy
    memset memmove sort find count transform accumulate begin end size empty push_back emplace_back insert
    erase clear reserve resize front back data iterator const_iterator reverse_iterator optional variant any
    expected function bind move forward swap numeric_limits type_traits enable_if is_same decay
    initializer_list ifstream ofstream stringstream ostringstream iostream fstream sstream mutex lock_guard
    unique_lock shared_lock thread atomic condition_variable future promise async exception runtime_error
    logic_error invalid_argument out_of_range overflow_error error_code error_category strlen strcmp strncmp
    strcpy strcat atoi atof strtol strtod exit abort atexit open close read write ioctl socket bind listen
    accept connect send recv select poll epoll fork exec wait pipe signal pthread_create pthread_join
    pthread_mutex cudaMalloc cudaFree cudaMemcpy cudaDeviceSynchronize cudaGetLastError __global__ __device__
    __host__ __shared__ blockIdx threadIdx blockDim gridDim""".split()
SPEC_DIFF = ["+", "-", "@@", "diff", "---", "+++", "index", "a/", "b/"]
#: the directives of the spec's pre-tokenizer regex (`\#\s*(?:include|define|...)`)
SPEC_DIRECTIVES = (
    "include define ifdef ifndef endif pragma if else elif undef error warning".split()
)

CORPUS = """#include <vector>
// Check null pointer before the buffer is processed.
int sum_values(const std::vector<int>& values, size_t count) {
    int total = 0;
    for (size_t index = 0; index < count; ++index) {
        total += values[index];
    }
    Header* h = reinterpret_cast<Header*>(buf);
    return total;
}
@@ -42,6 +42,8 @@
 void Process(char* buf) {
+    if (!buf) return;
-    printf("hello %d\\n", x);
"""


@pytest.fixture(scope="module")
def tok() -> CppTokenizer:
    return train_tiny(CORPUS)


def _ids(first: int, tokens: list) -> dict:
    """token -> id for a spec list laid out from ``first``, a repeated token keeping its first id."""
    return {t: first + k for k, t in enumerate(dict.fromkeys(tokens))}


# ---- Vocabulary Layout ------------------------------------------------------------------------------


def test_fixed_ids_are_the_spec_lists_in_order():
    # spec "Vocabulary Layout" and "Fixed Vocabulary: Detailed Lists": each list from its range's start
    for first, size, spec in (
        (0, 20, SPEC_SPECIAL),
        (20, 100, SPEC_KEYWORDS),
        (120, 60, SPEC_OPERATORS),
        (220, 100, SPEC_PUNCT),
        (320, 200, SPEC_STL),
    ):
        expected = _ids(first, spec)
        assert len(expected) <= size
        assert {t: FIXED_IDS[t] for t in expected} == expected
        assert FIXED_NAMES[first : first + len(expected)] == list(expected)
        assert all(
            FIXED_NAMES[i] == f"<RESERVED_{i}>" for i in range(first + len(expected), first + size)
        )
    assert (FIXED_IDS["::"], FIXED_IDS["->"], FIXED_IDS["nullptr"]) == (
        120,
        121,
        20 + SPEC_KEYWORDS.index("nullptr"),
    )
    assert FIXED_IDS["restrict"] == 20 + SPEC_KEYWORDS.index("restrict") - 1  # one "typedef" kept
    assert FIXED_NAMES[520:1520] == [str(n) for n in range(1000)] and FIXED_IDS["42"] == 562
    assert FIXED_NAMES[1520:1529] == SPEC_DIFF and (DIFF_ADD, DIFF_DEL) == (1520, 1521)
    assert FIXED_NAMES[1536:1538] == ["\n", "\n\n"]
    assert all(
        CATEGORY[i] == "reserved"
        for i in list(range(1529, 1536)) + list(range(1538, 1552)) + list(range(1553, 1600))
    )
    assert cppreason.VOCAB_SIZE == 32768 and FIRST_LEARNED == 1600


def test_preprocessor_directives_are_fixed_from_180():
    # spec "Preprocessor directives 180-219" and the directives of its pre-tokenizer regex
    ids = [FIXED_IDS["#" + d] for d in SPEC_DIRECTIVES]
    assert (
        FIXED_IDS["#include"] == 180
        and all(180 <= i < 220 for i in ids)
        and len(set(ids)) == len(ids)
    )


def test_every_fixed_token_is_one_id_alone_and_in_context(tok):
    # spec principle 2: fixed tokens "are guaranteed single tokens at all times"
    for i, name in enumerate(FIXED_NAMES):
        if CATEGORY[i] in ("special", "reserved", "diff", "whitespace", "mark"):
            continue
        assert tok.encode(name, line_start=False) == [i], name
        assert tok.decode([i]) == name
        if CATEGORY[i] in ("keyword", "stl", "number"):
            assert tok.encode(f"x {name} y")[1] == i, name


def test_control_token_text_is_not_a_control_token(tok):
    # spec "Integration": encode_ordinary_batch is "without special tokens"
    assert not {0, 1, 2, 3, 4, 5, 6} & set(tok.encode("<PAD><UNK><BOS><EOS><FIM_PREFIX>"))
    assert (tok.pad_token_id, tok.bos_token_id, tok.eos_token_id) == (0, 2, 3)
    assert [tok.special_id(n) for n in SPEC_SPECIAL] == list(range(20))


# ---- the learned part (BPE Training) ----------------------------------------------------------------


def test_learned_part_starts_at_1600_and_holds_no_whitespace(tok):
    # spec "What BPE Learns (IDs 1600-32767)" and principle 1 (spaces are never tokens)
    inner = tok.tokenizer
    assert [inner.decode_bytes([FIRST_LEARNED + b]) for b in (0, 65, 255)] == [
        b"\x00",
        b"A",
        b"\xff",
    ]
    assert FIRST_LEARNED + 256 < tok.vocab_size <= 1950
    for i in range(FIRST_LEARNED + 256, tok.vocab_size):
        piece = inner.decode_bytes([i])
        assert len(piece) > 1 and not any(c in piece for c in b" \t\n\r"), (i, piece)
    # learned words are never split into fixed ids and come back whole
    for word in ("ptr", "sum_values", "Process", "1024", "0xFFEE", "65536", "printable"):
        ids = tok.encode(word)
        assert min(ids) >= FIRST_LEARNED and tok.decode(ids) == word


def test_train_fills_the_vocab_size_asked_for():
    # spec "Training Procedure": the learned ids fill the vocabulary up to vocab_size
    text = (DATA / "corpora" / "cpp_slice.txt").read_text(encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every merge asked for is learned
        assert cppreason.train([text[:20000]], vocab_size=2200).vocab_size == 2200


def test_train_reaches_32768_when_the_corpus_allows():
    # issue 33: the default vocab_size=32768 is reached, with no warning, from a corpus whose
    # pairs last (12,000 distinct identifiers, each seen twice: whole-word merges)
    rng = random.Random(33)
    names = {"".join(rng.choice(string.ascii_lowercase) for _ in range(7)) for _ in range(12000)}
    text = " ".join(sorted(names)) + "\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tok = cppreason.train([text, text], threads=1)
    assert tok.vocab_size == 32768 == cppreason.VOCAB_SIZE


def test_short_vocabulary_says_how_much_corpus_it_needs():
    # min_frequency=2 stops early on a small corpus: the one warning names the corpus that the
    # requested size needs, extrapolated from this corpus and half of it
    text = (DATA / "corpora" / "cpp_slice.txt").read_text(encoding="utf-8")
    estimates = []
    for size in (40_000, 150_000):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tok = cppreason.train([text[:size]], vocab_size=32768)
        assert tok.vocab_size < 32768
        assert len(caught) == 1, [str(w.message) for w in caught]
        message = str(caught[0].message)
        learned = tok.vocab_size - FIRST_LEARNED - 256
        assert f"after {learned} merges (30912 requested)" in message
        assert f"has {tok.vocab_size} tokens, not 32768" in message
        found = re.search(
            r"of text gave \d+ merges \(half of it gave (\d+), so merges grow as "
            r"size\^(0\.\d\d)\): 30912 merges need about ([\d.]+) MB",
            message,
        )
        assert found, message
        half, needed = int(found[1]), float(found[3])
        exponent = min(1.0, max(0.2, math.log2(learned / half)))
        assert 0 < half < learned and float(found[2]) == round(exponent, 2)
        # the estimate follows the power law through this corpus
        n_bytes = len(text[:size].encode())
        assert needed * 1e6 == pytest.approx(
            n_bytes * (30912 / learned) ** (1 / exponent), rel=0.02
        )
        estimates.append(needed)
    # far more than the corpus given, and of the same order from either corpus size
    assert all(e > 1 for e in estimates) and 0.2 < estimates[0] / estimates[1] < 5


def test_train_default_vocab_size_is_the_specs():
    import inspect

    from toksmith.cli import build_parser

    assert inspect.signature(cppreason.train).parameters["vocab_size"].default == 32768
    assert inspect.signature(cppreason.train).parameters["min_frequency"].default == 2
    args = build_parser().parse_args(["cppreason", "train", "x.cpp", "-o", "t.json"])
    assert (args.vocab_size, args.min_frequency) == (32768, 2)


# ---- Pre-Tokenization ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, words",
    [
        ("a::b->c", ["a", "::", "b", "->", "c"]),
        ("x<<=1;y>>=2", ["x", "<<=", "1", ";", "y", ">>=", "2"]),
        (
            "p->*q a.*b a<=>b f(...) a##b",
            [
                "p",
                "->*",
                "q",
                "a",
                ".*",
                "b",
                "a",
                "<=>",
                "b",
                "f",
                "(",
                "...",
                ")",
                "a",
                "##",
                "b",
            ],
        ),
        ("#include <vector>", ["#include", "<", "vector", ">"]),
        ('s = "a\\"b";', ["s", "=", '"a\\"b"', ";"]),  # a string literal with an escape is one word
        ("c = '\\n'; d = 'x';", ["c", "=", "'\\n'", ";", "d", "=", "'x'", ";"]),
        ("0x7ffee1234abc 0XFF", ["0x7ffee1234abc", "0XFF"]),  # the hex literal rule
        ("3.14", ["3", ".", "14"]),  # spec: `3.14` -> "3" + "." + "14"
        ("1024 42 007", ["1024", "42", "007"]),
        ("/* c */ x; // note", ["/*", "c", "*/", "x", ";", "//", "note"]),
        ("a \t\u3000 b", ["a", "b"]),  # whitespace is a delimiter only
    ],
)
def test_words(tok, text, words):
    # spec "Pre-Tokenization: BERT-Style Whitespace + C++ Awareness", step 1 and step 2
    assert tok.words(text) == words


def test_the_specs_example_line(tok):
    # spec "How It Works — Example": 11 words, all fixed but `ptr`
    text = "std::vector<int> *ptr = nullptr;"
    assert tok.words(text) == [
        "std",
        "::",
        "vector",
        "<",
        "int",
        ">",
        "*",
        "ptr",
        "=",
        "nullptr",
        ";",
    ]
    ids = tok.encode(text)
    ptr = tok.encode("ptr")
    assert ids == [
        320,
        120,
        335,
        226,
        38,
        227,
        FIXED_IDS["*"],
        *ptr,
        FIXED_IDS["="],
        FIXED_IDS["nullptr"],
        FIXED_IDS[";"],
    ]


def test_numbers_0_to_999_are_fixed_whole_words_only(tok):
    # spec "Numbers 0-999": a dedicated token each; `\b[0-9]{1,3}\b`
    assert [tok.encode(str(n)) for n in range(1000)] == [[520 + n] for n in range(1000)]
    for text in ("1000", "1024", "65536", "007", "0999"):
        assert min(tok.encode(text)) >= FIRST_LEARNED and tok.decode(tok.encode(text)) == text


def test_the_specs_diff_example(tok, tok_single):
    # spec "Diff Tokenization Example": hunk header, context line, added line
    diff = "@@ -42,6 +42,8 @@\n void Process(char* buf) {\n+    if (!buf) return;\n"
    ids = tok.encode(diff)
    p = FIXED_IDS
    assert ids[:11] == [1522, p["-"], 562, p[","], 526, p["+"], 562, p[","], 528, 1522, 1536]
    add = ids.index(DIFF_ADD)
    assert ids[add - 1] == 1536 and ids[add + 1] == p["if"]
    # `(!` is a punctuation run (one learned word); single punctuation words as the spec shows
    assert tok.tokenize("+if (!buf) return;") == [
        "<DIFF_ADD>",
        "if",
        *tok.tokenize("(!"),
        *tok.tokenize("buf"),
        ")",
        "return",
        ";",
    ]
    assert tok_single.tokenize("+if (!buf) return;") == [
        "<DIFF_ADD>",
        "if",
        "(",
        "!",
        *tok_single.tokenize("buf"),
        ")",
        "return",
        ";",
    ]
    assert tok.encode("--- a/x.cc\n+++ b/x.cc\n")[:2] == [1524, 1527]
    assert tok.encode("diff index") == [1523, 1526]


# ---- Decoding (Reconstruction) -------------------------------------------------------------------------


def test_decode_restores_newlines_and_spaces_between_words_only(tok, tok_single):
    # spec "Decoding": newlines as they are; a space between two word tokens, none around
    # punctuation (with punctuation runs: but between two punctuation words that would read as
    # one run, `(` `)` as `()`)
    text = "int  main ( )\n{\n\n\treturn   0 ;\n}"
    assert tok_single.decode(tok_single.encode(text)) == "int main()\n{\n\nreturn 0;\n}"
    assert tok.decode(tok.encode(text)) == "int main( )\n{\n\nreturn 0;\n}"
    assert tok.decode(tok.encode("int  main()\n")) == "int main()\n"
    assert tok.decode(tok.encode("x\n\n\ny")) == "x\n\n\ny" and tok.encode("1\n\n\n2") == [
        521,
        1537,
        1536,
        522,
    ]
    assert tok.decode(tok.encode("std::cout << x << std::endl;")) == "std::cout<<x<<std::endl;"
    assert tok.decode(tok.encode("a\r\nb")) == "a\nb"
    assert tok.decode([]) == ""


# ---- Control tokens: FIM and diff framing --------------------------------------------------------------


def test_fim_uses_the_specs_ids(tok):
    # spec "Control / Special Tokens": <FIM_PREFIX> 4, <FIM_MIDDLE> 5, <FIM_SUFFIX> 6, <EOS> 3
    ids = tok.encode_fim("int f() {\n", "}\n", "return 1;\n")
    assert ids == [
        4,
        *tok.encode("int f() {\n"),
        6,
        *tok.encode("}\n"),
        5,
        *tok.encode("return 1;\n"),
        3,
    ]
    # control tokens are left out (`)` `{` are two words: a space keeps them from the run `){`)
    assert tok.decode(ids) == "int f() {\n}\nreturn 1;\n"


def test_diff_framing_is_the_specs_commit_format(tok):
    # spec "Commit Message Format for Training": <DIFF_START> // COMMIT: msg \n diff <DIFF_END>
    ids = tok.encode_diff("+if (!buf) return;\n", message="Fix null pointer dereference")
    assert ids == [
        15,
        *tok.encode("// COMMIT: Fix null pointer dereference\n+if (!buf) return;\n"),
        16,
    ]


def test_diff_framing_with_a_multi_line_message(tok):
    # was: the message's later lines were diff lines ("- item" the removed-line marker 1521)
    ids = tok.encode_diff("+x;\n", message="Fix crash\n\n- was: null deref\n+ now: checked\n")
    assert ids.count(DIFF_ADD) == 1 and DIFF_DEL not in ids
    assert ids == [
        15,
        *tok.encode("// COMMIT: Fix crash\n// \n// - was: null deref\n// + now: checked\n+x;\n"),
        16,
    ]


# ---- Validation Checklist ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tok_single() -> CppTokenizer:
    """Trained with single punctuation words (``punctuation_runs=False``), as the checklist
    shows them."""
    return train_tiny(CORPUS, punctuation_runs=False)


@pytest.mark.parametrize("runs", [False, True])
def test_validation_checklist_exact_ids(tok, tok_single, runs):
    # spec "Validation Checklist", items 1-12; with punctuation runs (the default) items 10 and
    # 11 read `);` and `(!` as one learned word each, all else is the same
    tok = tok if runs else tok_single
    f = FIXED_IDS
    assert tok.encode("std::vector<int>") == [320, 120, 335, 226, 38, 227]  # 1
    assert tok.encode("a::b") == [*tok.encode("a"), 120, *tok.encode("b")]  # 2
    assert tok.encode("a->b") == [*tok.encode("a"), 121, *tok.encode("b")]  # 3
    assert tok.encode("nullptr") == [f["nullptr"]] and f["nullptr"] < FIRST_LEARNED  # 4
    assert tok.encode("42") == [562]  # 5
    assert min(tok.encode("1024")) >= FIRST_LEARNED  # 6
    assert tok.decode(tok.encode("0x7ffee1234abc")) == "0x7ffee1234abc"  # 7
    assert tok.encode("\n") == [1536] and tok.encode(" a \t") == tok.encode("a")  # 8
    assert tok.words("// Check null pointer") == ["//", "Check", "null", "pointer"]  # 9
    assert tok.encode("// Check null pointer")[0] == 147
    end = [");"] if runs else [")", ";"]
    assert tok.words('printf("hello %d\\n", x);') == [
        "printf",
        "(",
        '"hello',
        '%d\\n"',
        ",",
        "x",
        *end,
    ]  # 10
    ids = tok.encode("+if (!buf) return;")  # 11
    if runs:
        assert ids[:2] == [DIFF_ADD, f["if"]] and min(ids[2:-3]) >= FIRST_LEARNED
        assert tok.words("+if (!buf) return;")[2] == "(!"
        assert ids[-3:] == [f[")"], f["return"], f[";"]]
    else:
        assert ids[:4] == [DIFF_ADD, f["if"], f["("], f["!"]]
    assert tok.encode("cout << endl") == [f["cout"], f["<<"], f["endl"]]  # 12


# ---- the command line ---------------------------------------------------------------------------------


def test_cli_train_encode_decode(tmp_path, capsys):
    from toksmith.cli import main

    src = tmp_path / "a.cpp"
    src.write_text(CORPUS * 4, encoding="utf-8")
    out = str(tmp_path / "t.json")
    assert (
        main(["cppreason", "train", str(src), "-o", out, "--vocab-size", "1950", "--no-progress"])
        == 0
    )
    assert "tokens -> " in capsys.readouterr().err
    assert main(["cppreason", "encode", "-t", out, "std::vector<int>"]) == 0
    assert capsys.readouterr().out.split() == ["320", "120", "335", "226", "38", "227"]
    assert main(["cppreason", "encode", "-t", out, "--tokens", "+if (x)\n"]) == 0
    assert capsys.readouterr().out.split() == [
        "<DIFF_ADD>",
        "if",
        "(",
        *cppreason.load(out).tokenize("x"),
        ")",
        "\\n",
    ]
    assert main(["cppreason", "decode", "-t", out, "320", "120", "335", "1536", "562"]) == 0
    assert capsys.readouterr().out == "std::vector\n42\n"
    for bad, message in (
        (["1950"], "token id 1950 is out of range"),
        (["-1"], "token id -1 is out of range"),
        (["x1"], "ids must be integers"),
    ):
        assert main(["cppreason", "decode", "-t", out, "--", *bad]) == 1
        err = capsys.readouterr().err
        assert (
            err.startswith("toksmith cppreason: error: ")
            and message in err
            and "Traceback" not in err
        )
    assert (
        main(["cppreason", "train", str(src), "-o", out, "--vocab-size", "1000", "--no-progress"])
        == 1
    )
    assert "vocab_size must be at least 1856" in capsys.readouterr().err


def test_diff_framing_keeps_every_character_of_the_message(tok):
    # the message's lines are cut at "\n" only (a "\x1c" in it is text, not a line break)
    assert tok.encode_diff("", message="a\x1cb\r\nc") == [
        15,
        *tok.encode("// COMMIT: a\x1cb\r\n// c\n"),
        16,
    ]
    assert tok.encode_diff("x", message="") == [15, *tok.encode("x"), 16]


def test_cli_tokens_show_partial_utf8_as_bytes(tok, tmp_path, capsys):
    from toksmith.cli import main

    # was: each byte of "é" printed as U+FFFD ("\ufffd \ufffd"), the token's bytes lost
    out = str(tmp_path / "t.json")
    tok.save(out)
    assert (
        min(tok.encode("\u00e9")) >= FIRST_LEARNED and len(tok.encode("\u00e9")) == 3
    )  # mark, 0xc3, 0xa9
    assert main(["cppreason", "encode", "-t", out, "--tokens", "\u00e9 \\ \n"]) == 0
    assert capsys.readouterr().out.split() == ["\u2581", "\\xc3", "\\xa9", "\\\\", "\\n"]
