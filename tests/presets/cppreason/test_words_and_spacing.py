"""CppReason: numbers keep their suffixes as one word, and decoding never fuses two words into
another (an operator pair into one operator, `/` `*` into a comment opener), so that the
decoded text encodes back to the same ids."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.conftest import DATA
from toksmith.presets.cppreason import FIRST_LEARNED, FIXED_IDS, CppTokenizer

from . import train_tiny

CPP = DATA / "corpora" / "cpp_slice.txt"


SMALL = "int main() { unsigned long x = 42u + 1.5e-3f * 10ULL; return x / *p - -y; }\n"


@pytest.fixture(scope="module")
def tok() -> CppTokenizer:
    return train_tiny(SMALL, 1900)


@pytest.fixture(scope="module")
def tok_single() -> CppTokenizer:
    """Single punctuation words (no runs), as the seed's spacing rule was written for."""
    return train_tiny(SMALL, 1900, punctuation_runs=False)


#: where punctuation runs decode otherwise: two punctuation words written together would read
#: as one run, so a space keeps them apart (`=` `*` is not the run `=*`)
RUNS_DECODED = {
    "x = *p;": "x= *p;",
    "std::vector<int> *ptr = nullptr;": "std::vector<int> *ptr=nullptr;",
    ". . . .": ". . . .",
}


@pytest.mark.parametrize(
    "text, words",
    [
        ("42u", ["42u"]),
        ("10ULL", ["10ULL"]),
        ("1e5", ["1e5"]),
        ("1.5f", ["1", ".", "5f"]),
        ("1.5e-3", ["1", ".", "5e", "-", "3"]),
        ("3.14", ["3", ".", "14"]),  # the seed's example: three words
        ("2x faster", ["2x", "faster"]),
        ("x2", ["x2"]),
        ("0xFFu", ["0xFF", "u"]),  # the hex literal rule comes first, as in the seed
        ("a[42]", ["a", "[", "42", "]"]),
    ],
)
def test_a_number_keeps_its_suffix(tok, text, words):
    assert tok.words(text) == words


def test_only_a_whole_number_below_1000_is_fixed(tok):
    assert tok.encode("42") == [FIXED_IDS["42"]]
    assert all(i >= FIRST_LEARNED for i in tok.encode("42u"))
    # was: `42` fixed, then `u` learned, decoded with a space between them: "42 u"
    assert tok.decode(tok.encode("x = 42u + 1.5e-3f;")) == "x=42u+1.5e-3f;"
    assert tok.decode(tok.encode("10ULL")) == "10ULL"


@pytest.mark.parametrize(
    "text, decoded",
    [
        # was "a/*p": a comment opener
        ("a / *p;", "a/ *p;"),
        # was "a--b": a decrement
        ("a - -b;", "a- -b;"),
        ("a + ++b;", "a+ ++b;"),
        ("a & &b", "a& &b"),
        ("x < <y", "x< <y"),
        ("x = *p;", "x=*p;"),  # =* reads as = then *: no space, as the seed's rule
        ("std::vector<int> *ptr = nullptr;", "std::vector<int>*ptr=nullptr;"),
        (". . . .", ".. .."),
        # the parts of a literal cut at its spaces come back with one space between them
        ('printf("hello %d\\n", x);', 'printf("hello %d\\n",x);'),
        ('s = " a";', 's=" a";'),
        ('s = "a + b = c";', 's="a + b = c";'),
        ('s = "say \\"hi there\\" now";', 's="say \\"hi there\\" now";'),
        ("c = ' ';", "c=' ';"),
        ("c = 'x'; // don't", "c='x';//don't"),
        # a + or - after indentation is no diff marker, and keeps one space to say so
        ("x\n  - y;\n+z", "x\n -y;\n+z"),
        # a quote that opens no literal (none closes it on its line): the spaces do no harm
        ('"unclosed ( x', '" unclosed ( x'),
    ],
)
def test_decode_never_fuses_two_words(tok, tok_single, text, decoded):
    ids = tok_single.encode(text)
    assert tok_single.decode(ids) == decoded
    assert tok_single.encode(decoded) == ids
    # with punctuation runs (the default)
    ids = tok.encode(text)
    assert tok.decode(ids) == RUNS_DECODED.get(text, decoded)
    assert tok.encode(tok.decode(ids)) == ids


OPERATOR_SOUP = st.lists(
    st.sampled_from(
        [
            "a",
            "x1",
            "42",
            "7u",
            "+",
            "-",
            "*",
            "/",
            "<",
            ">",
            "=",
            "!",
            "&",
            "|",
            ":",
            ".",
            "%",
            "^",
            "#",
            "(",
            ")",
            ";",
            "'",
            '"',
            "\\",
            "->",
            "::",
            "\n",
            "\n  ",
        ]
    ),
    max_size=25,
)


@given(OPERATOR_SOUP)
@example(["\n  ", "+", "-"])  # the learned run `+-` after a line break: not the diff marker
def test_decoded_operators_encode_back_to_the_same_ids(tok, tok_single, atoms):
    # words with spaces between them (so `" a "` is a literal cut at its spaces), and written
    # together (punctuation runs)
    for t in (tok, tok_single):
        for text in ("x " + " ".join(atoms), "x " + "".join(atoms)):
            ids = t.encode(text)
            assert t.encode(t.decode(ids)) == ids


def test_decoded_real_code_encodes_back_to_the_same_ids(tok):
    text = CPP.read_text(encoding="utf-8")[:20000]
    ids = tok.encode(text)
    back = tok.decode(ids)
    assert len(back) < len(text)  # indentation and spaces around operators are gone
    assert tok.encode(back) == ids


def test_batch_takes_threads_as_the_core_tokenizer_does(tok):
    """was: only ``num_threads``, so ``toksmith.streaming.encode_lines`` (which passes
    ``threads=``) failed with an unexpected keyword argument."""
    from toksmith.streaming import encode_lines

    texts = ["int x = 1;", "a / *p", ""]
    want = [tok.encode(t) for t in texts]
    assert tok.encode_ordinary_batch(texts, threads=2) == want
    assert tok.encode_ordinary_batch(texts, num_threads=1) == want
    assert list(encode_lines(tok, texts)) == want
    with pytest.raises(ValueError, match="threads"):
        tok.encode_ordinary_batch(texts, threads=0)
