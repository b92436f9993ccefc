"""The Cromwell code-tokenizer preset (seed 000): layout, training, framing and parsing."""

from __future__ import annotations

import pickle
import subprocess
import sys
import warnings
from collections import Counter

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

import toksmith
from tests.conftest import DATA
from tests.reference import bpe as reference
from toksmith import _core
from toksmith.presets import CROMWELL_SPECIAL_TOKENS, PRESETS, cromwell, get_preset
from toksmith.presets.cromwell import (
    CodeTokenizer,
    collect_code_corpus,
    parse_edit_output,
    parse_edit_text,
    tokenize_file_with_edit,
)

CORPORA = DATA / "corpora"
CODE_FILES = [CORPORA / f"{n}_slice.txt" for n in ("python", "cpp", "javascript", "english")]
VOCAB = 3000
#: the two-stage form's share of superword merges, and how many it learns
SHARE = 0.2
N_SUPER = int((VOCAB - 264) * SHARE)


@pytest.fixture(scope="module")
def code() -> CodeTokenizer:
    """The default: one stage on Cromwell's line-start split."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the slices must give every merge asked for
        return cromwell.train(CODE_FILES, vocab_size=VOCAB)


@pytest.fixture(scope="module")
def two_stage() -> CodeTokenizer:
    """With a superword stage: o200k-pattern BPE, then merges across its pieces."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return cromwell.train(CODE_FILES, vocab_size=VOCAB, superword_share=SHARE)


def test_layout_specials_first_then_bytes_then_merges(code):
    tok = code.tokenizer
    assert tok.n_vocab == VOCAB
    # the seed's ids (section 2.2): PAD 0, EOS 1, BOS 2, FILE 3, /FILE 4, EDIT_START 5, EDIT_END 6, DELETE 7
    assert tok.special_tokens == {s: i for i, s in enumerate(CROMWELL_SPECIAL_TOKENS)}
    assert (
        code.pad_id,
        code.eos_id,
        code.bos_id,
        code.file_id,
        code.file_end_id,
        code.edit_start_id,
        code.edit_end_id,
        code.delete_id,
    ) == tuple(range(8))
    assert [tok.decode_single_token_bytes(8 + b) for b in range(256)] == [
        bytes([b]) for b in range(256)
    ]
    ranks = tok.mergeable_ranks()
    assert sorted(ranks.values()) == list(range(8, VOCAB))
    assert tok.pattern == cromwell.LINE_PATTERN and tok.metadata["preset"] == "cromwell"
    assert "superword_merges" not in tok.metadata


def test_two_stage_layout(two_stage):
    tok = two_stage.tokenizer
    assert tok.n_vocab == VOCAB and tok.special_tokens == {
        s: i for i, s in enumerate(CROMWELL_SPECIAL_TOKENS)
    }
    assert tok.pattern == cromwell.CODE_PATTERN and tok.metadata["preset"] == "cromwell"
    assert tok.metadata["superword_merges"] == N_SUPER


def test_one_stage_is_the_core_trainers_and_encoding_the_references(code):
    # one stage is the core trainer with Cromwell's line-start split: the same merges as a
    # plain train_from_iterator on the same texts
    texts = [p.read_text(encoding="utf-8") for p in CODE_FILES]
    plain = toksmith.train_from_iterator(
        texts,
        vocab_size=VOCAB,
        pattern=cromwell.LINE_PATTERN,
        special_tokens={s: i for i, s in enumerate(CROMWELL_SPECIAL_TOKENS)},
    )
    ranks = code.tokenizer.mergeable_ranks()
    assert plain.mergeable_ranks() == ranks
    # and it encodes as the pure-Python reference does with its ranks (ids are ranks here;
    # the reference splits with the regex module)
    for text in texts:
        sample = text[:20000]
        assert code.encode(sample) == reference.encode(sample, cromwell.LINE_PATTERN, ranks)


def test_first_stage_is_the_core_trainers_and_encoding_the_references(two_stage):
    # with a superword stage, the first stage is the core trainer with o200k's split: the
    # same merges as a plain train_from_iterator on the same texts, for the first
    # VOCAB - N_SUPER tokens
    texts = [p.read_text(encoding="utf-8") for p in CODE_FILES]
    plain = toksmith.train_from_iterator(
        texts,
        vocab_size=VOCAB - N_SUPER,
        pattern="o200k",
        special_tokens={s: i for i, s in enumerate(CROMWELL_SPECIAL_TOKENS)},
    )
    ranks = two_stage.tokenizer.mergeable_ranks()
    assert plain.mergeable_ranks() == {t: r for t, r in ranks.items() if r < VOCAB - N_SUPER}
    for text in texts:
        sample = text[:20000]
        assert two_stage.encode(sample) == reference.encode(sample, cromwell.CODE_PATTERN, ranks)


def _reference_superwords(texts, ranks, n_new):
    """The second stage, naively: encode each piece of CODE_PATTERN with ``ranks``,
    then merge the most frequent adjacent pair (ties: the smallest pair of ids) until
    ``n_new`` new tokens exist; a pair spelling an existing token takes its id."""
    lines = Counter()
    for text in texts:
        lines.update(regex.findall(cromwell.CODE_PATTERN, text))
    words = [(reference.encode_piece(c.encode(), ranks), n) for c, n in lines.items()]
    spelled = {i: t for t, i in ranks.items()}
    ids_of = dict(ranks)
    next_id = max(ranks.values()) + 1
    new = {}
    while len(new) < n_new:
        pairs = Counter()
        for ids, n in words:
            for pair in zip(ids, ids[1:]):
                pairs[pair] += n
        if not pairs:
            break
        best = max(pairs, key=lambda p: (pairs[p], (-p[0], -p[1])))
        t = spelled[best[0]] + spelled[best[1]]
        made = ids_of.get(t)
        if made is None:
            made = ids_of[t] = new[t] = next_id
            spelled[made] = t
            next_id += 1
        words = [(reference.merge_pair(ids, best, made), n) for ids, n in words]
    return new


def test_small_training_equals_the_reference_trainer():
    texts = [p.read_text(encoding="utf-8")[:8000] for p in CODE_FILES[:3]]
    # one stage (the default): the reference trainer on the line-start split, the same
    # tokens in the same order, shifted by the eight special ids
    lines = reference.train(texts, cromwell.LINE_PATTERN, 200)
    one = cromwell.train(texts, vocab_size=8 + 256 + 200)
    assert one.tokenizer.mergeable_ranks() == {
        t: r + 8 for t, r in reference.ranks_from_merges(lines).items()
    }
    assert one.tokenizer.pattern == cromwell.LINE_PATTERN
    assert cromwell.train(texts, vocab_size=8 + 256 + 200, superword_share=0).tokenizer.pattern == (
        cromwell.LINE_PATTERN
    )
    merges = reference.train(texts, toksmith.PATTERNS["o200k"], 200)
    ref_ranks = {t: r + 8 for t, r in reference.ranks_from_merges(merges).items()}
    # two stages: 200 merges in o200k's pieces, then 50 across them in CODE_PATTERN's pieces
    code = cromwell.train(texts, vocab_size=8 + 256 + 250, superword_share=0.2)
    expected = {**ref_ranks, **_reference_superwords(texts, ref_ranks, 50)}
    assert code.tokenizer.mergeable_ranks() == expected
    assert any(t.startswith(b"\n ") for t in expected if expected[t] >= 8 + 256 + 200)


def test_seed_tests_round_trip(code):
    # seed 000, section 8
    for text in [
        "def hello_world():\n    print('Hello, World!')",
        "Привет мир 🌍",
        "class MyClass:\n    pass",
        "if (a === b && c !== d) {{ return x->y; }}\r\n\t\tfoo();",
    ]:
        ids = code.encode(text)
        assert code.decode(ids) == text
    tokens = tokenize_file_with_edit(
        "test.py", "class MyClass:\n    pass", "Add a method called 'process'", code
    )
    assert tokens[0] == code.file_id and tokens[-1] == code.edit_end_id


def test_code_structure_becomes_tokens(code):
    # trained on code, indentation runs, operator and bracket runs and keyword pieces are tokens
    tok = code.tokenizer
    for piece in [
        b"   ",
        b"       ",
        b" return",
        b" ==",
        b"((",
        b"))",
        b"();",
        b" if",
        b" const",
        b"def",
        b" self",
        # the seed's structures that o200k's split keeps apart: line break + indentation,
        # keyword + space, and the two together (a line start is one piece)
        b"\n    ",
        b"\n        ",
        b"\n\t",
        b"\n\t\t",
        b"def ",
        b"return ",
        b"class ",
        b"if ",
        b"for ",
        b"import ",
        b"const ",
        b"\n    return ",
        b"\n        return ",
        b"\n    def ",
        b"\n\n    def ",
        b"\n    }",
        b"\n}",
    ]:
        assert tok.encode_single_token(piece) >= 264, piece
    # o200k's pieces "\n", "   ", " return", " self", ".x" become fewer tokens
    assert len(code.encode("\n    return self.x")) < 5
    # no token holds text on both sides of a line break's indentation and a later word
    assert not any(
        regex.fullmatch(rb"[\r\n]+[ \t]*\S+ \S.*", t, regex.S) for t in tok.mergeable_ranks()
    )
    # camelCase names split into parts before BPE (o200k's split, kept here)
    assert toksmith.split("parseJSONValue MyClass", cromwell.LINE_PATTERN) == [
        "parse",
        "JSONValue",
        " My",
        "Class",
    ]
    # number prefixes and punctuation runs that stop at a line break
    assert toksmith.split("x = 0x1F | 0b101;\n    y", cromwell.LINE_PATTERN) == [
        "x",
        " =",
        " ",
        "0x1F",
        " |",
        " ",
        "0b101",
        ";",
        "\n    y",
    ]


def test_superword_structure_becomes_tokens(two_stage):
    # the structures that o200k's split keeps apart are learned by the second stage:
    # line break + indentation (+ keyword), keyword + bracket, operator + operand
    tok = two_stage.tokenizer
    superwords = [t for t, r in tok.mergeable_ranks().items() if r >= VOCAB - N_SUPER]
    for piece in [
        b"\n    ",
        b"\n        ",
        b"\n\t\t",
        b"\n        return",
        b"\n\n    def",
        b"\n        if",
        b"else:",
        b"(self,",
        b" self._",
        b"->_M",
        b" std::",
        b" 0;",
    ]:
        assert piece in superwords, piece
    # never across a space inside a line
    assert not any(b" " in t.lstrip(b" \t\r\n").rstrip(b" ") for t in superwords)
    assert len(two_stage.encode("\n    return self.x")) < 5


@given(st.text(max_size=300))
def test_round_trip_any_text(code, text):
    assert code.decode(code.encode(text)) == text


#: code atoms whose junctions the encoder's two-level merge cuts or keeps (letter + symbol,
#: symbol + letter, operator runs, indentation, digits, non-ASCII whitespace)
_ATOMS = [
    "self",
    ".",
    "_",
    "foo",
    "(",
    ")",
    "[0]",
    " ",
    "    ",
    "\n",
    "\t",
    "\r\n",
    "return",
    "def",
    "!==",
    "->",
    "0x1F",
    "42",
    "é",
    "中",
    "\u00a0",
    "\u2028",
    "'s",
    ",",
    ":",
    "Bar",
]


@given(st.lists(st.sampled_from(_ATOMS), max_size=60).map("".join))
def test_encoding_equals_the_reference_on_code_atoms(code, two_stage, text):
    # one stage: the line-start scanner and the plain merge, against the regex and the
    # reference merge
    ranks = code.tokenizer.mergeable_ranks()
    assert code.encode(text) == reference.encode(text, cromwell.LINE_PATTERN, ranks)
    # two stages: the encoder cuts superword pieces at byte pairs no first-stage token holds
    # and merges in two levels (crates/toksmith-core/src/bpe/superword.rs): the ids stay the
    # plain merge's
    ranks = two_stage.tokenizer.mergeable_ranks()
    assert two_stage.encode(text) == reference.encode(text, cromwell.CODE_PATTERN, ranks)


def test_specials_text_is_text_and_bos_eos(code):
    text = "x = '<EOS>' + '<FILE>'"
    ids = code.encode(text)
    assert not set(ids) & set(range(8))
    assert code.decode(ids) == text
    assert code.encode("a", bos=True, eos=True) == [code.bos_id, *code.encode("a"), code.eos_id]
    docs = ["def f():\n    return 1\n", "int main() { return 0; }", ""]
    assert code.encode_batch(docs) == [code.encode(d) for d in docs]
    assert code.decode_batch(code.encode_batch(docs)) == docs


def test_frame_layout(code):
    enc = code.tokenizer.encode_ordinary
    ids = code.tokenize_file_with_edit("src/app.py", "x = 1\n", "set x to 2")
    assert ids == [3, *enc("src/app.py"), 4, *enc("x = 1\n"), 5, *enc("set x to 2"), 6]
    assert code.decode(ids) == "<FILE>src/app.py</FILE>x = 1\n<EDIT_START>set x to 2<EDIT_END>"
    assert code.decode(ids, skip_special_tokens=True) == "src/app.pyx = 1\nset x to 2"
    assert code.decode_batch([ids], skip_special_tokens=True) == ["src/app.pyx = 1\nset x to 2"]
    assert code.encode_file("a.h", "int x;") == [3, *enc("a.h"), 4, *enc("int x;")]
    assert code.encode_delete("a.h", "int x;") == [3, *enc("a.h"), 4, *enc("int x;"), 5, 7, 6]


def test_parse_types(code):
    out = code.parse_edit_output(code.tokenize_file_with_edit("a.py", "x = 1\n", "x = 2\n"))
    assert out == {
        "file_path": "a.py",
        "old_content": "x = 1\n",
        "new_content": "x = 2\n",
        "edit_type": "replace",
        "complete": True,
    }
    out = code.parse_edit_output(code.tokenize_file_with_edit("new.py", "  \n", "print(1)\n"))
    assert out["edit_type"] == "insert" and out["new_content"] == "print(1)\n"
    out = code.parse_edit_output(code.encode_delete("old.py", "gone\n"))
    assert out == {
        "file_path": "old.py",
        "old_content": "gone\n",
        "new_content": "",
        "edit_type": "delete",
        "complete": True,
    }
    # the seed's free function, with a plain Tokenizer
    assert (
        parse_edit_output(code.encode_delete("o.py", "z"), code.tokenizer)["edit_type"] == "delete"
    )


def test_parse_model_output_shapes(code):
    frame = code.tokenize_file_with_edit("a.py", "old\n", "new\n")
    # BOS and padding dropped, everything after EOS ignored
    out = code.parse_edit_output([code.bos_id, *frame, code.eos_id, 99, 100, code.pad_id])
    assert (out["file_path"], out["old_content"], out["new_content"], out["complete"]) == (
        "a.py",
        "old\n",
        "new\n",
        True,
    )
    padded = code.parse_edit_output(frame + [code.pad_id] * 5)
    assert padded == code.parse_edit_output(frame)
    # truncated before <EDIT_END>: what there is, marked incomplete
    out = code.parse_edit_output(frame[:-2])
    assert out["complete"] is False and "new\n".startswith(out["new_content"])
    # no header: no path, the content starts at the first id
    out = code.parse_edit_output(
        [*code.encode("old\n"), code.edit_start_id, *code.encode("new"), code.edit_end_id]
    )
    assert (
        out["file_path"] is None and out["old_content"] == "old\n" and out["new_content"] == "new"
    )
    # numpy arrays are accepted
    np = pytest.importorskip("numpy")
    assert code.parse_edit_output(np.array(frame, dtype=np.uint32)) == code.parse_edit_output(frame)


def test_parse_errors(code):
    with pytest.raises(ValueError, match="no <EDIT_START>"):
        code.parse_edit_output(code.encode_file("a.py", "x"))
    with pytest.raises(ValueError, match="not closed by </FILE>"):
        code.parse_edit_output(
            [code.file_id, *code.encode("a.py"), code.edit_start_id, code.edit_end_id]
        )
    with pytest.raises(TypeError, match="sequence of int"):
        code.parse_edit_output("<EDIT_START>")
    with pytest.raises(TypeError, match="int token ids"):
        code.parse_edit_output([5, 1.5])
    with pytest.raises(ValueError, match="out of range"):
        code.parse_edit_output([5, VOCAB])
    with pytest.raises(TypeError, match="file_path must be a str"):
        code.tokenize_file_with_edit(b"a.py", "", "")
    with pytest.raises(ValueError, match="file_path must not be empty"):
        code.encode_file("", "x")


@given(path=st.text(min_size=1, max_size=40), old=st.text(max_size=200), new=st.text(max_size=200))
def test_parse_inverts_the_frame(code, path, old, new):
    # markers written as text inside the path or contents stay text: parsing works on ids
    out = code.parse_edit_output(code.tokenize_file_with_edit(path, old, new))
    assert (out["file_path"], out["old_content"], out["new_content"], out["complete"]) == (
        path,
        old,
        new,
        True,
    )
    assert out["edit_type"] == ("insert" if not old.strip() else "replace")


def test_parse_reads_the_seeds_text_header(code):
    # a model trained on the seed's text form writes <FILE=path> as ordinary text
    ids = [*code.encode("<FILE=src/a.py>\nx = 1\n"), code.edit_start_id, *code.encode("x = 2\n")]
    out = code.parse_edit_output([*ids, code.edit_end_id])
    assert out == {
        "file_path": "src/a.py",
        "old_content": "\nx = 1\n",
        "new_content": "x = 2\n",
        "edit_type": "replace",
        "complete": True,
    }
    assert parse_edit_output(ids, code.tokenizer)["complete"] is False
    # not a header: not at the start, an empty path, or a path across lines
    for text in ("x <FILE=a.py>", "<FILE=>x", "<FILE=a\nb>x", "<FILE=a.py"):
        out = code.parse_edit_output([*code.encode(text), code.edit_start_id])
        assert out["file_path"] is None and out["old_content"] == text
    # the <FILE> id header wins; its content may start with the text form
    out = code.parse_edit_output(code.tokenize_file_with_edit("b.py", "<FILE=a.py>", ""))
    assert (out["file_path"], out["old_content"]) == ("b.py", "<FILE=a.py>")


def test_parse_edit_text_both_forms(code):
    seed_form = "<FILE=path/to/file.py>\nx = 1\n<EDIT_START>\nx = 2\n<EDIT_END>"
    out = parse_edit_text(seed_form)
    assert out == code.parse_edit_text(seed_form)
    assert out == {
        "file_path": "path/to/file.py",
        "old_content": "\nx = 1\n",
        "new_content": "\nx = 2\n",
        "edit_type": "replace",
        "complete": True,
    }
    frame = code.tokenize_file_with_edit("a.py", "old\n", "new\n")
    assert parse_edit_text(code.decode(frame)) == code.parse_edit_output(frame)
    deleted = code.encode_delete("a.py", "gone\n")
    assert parse_edit_text(code.decode(deleted)) == code.parse_edit_output(deleted)
    out = parse_edit_text("<BOS><FILE=n.py>  <EDIT_START>print(1)<EOS><EDIT_END>")
    assert (out["file_path"], out["edit_type"], out["new_content"], out["complete"]) == (
        "n.py",
        "insert",
        "print(1)",
        False,
    )
    assert parse_edit_text("old<EDIT_START>new<EDIT_END>")["file_path"] is None
    with pytest.raises(ValueError, match="no <EDIT_START>"):
        parse_edit_text("<FILE=a.py>x")
    with pytest.raises(ValueError, match="not closed by </FILE>"):
        parse_edit_text("<FILE>a.py<EDIT_START>")
    with pytest.raises(TypeError, match="text must be a str"):
        parse_edit_text(frame)
    with pytest.raises(TypeError, match="use parse_edit_text"):
        code.parse_edit_output(code.decode(frame))


_NO_MARKERS = st.text(max_size=80).filter(lambda t: "<" not in t)


@given(
    path=st.text(min_size=1, max_size=30).filter(lambda p: not set(p) & set("<>\r\n")),
    old=_NO_MARKERS,
    new=_NO_MARKERS,
)
def test_text_forms_invert_the_frame(code, path, old, new):
    seed_form = f"<FILE={path}>{old}<EDIT_START>{new}<EDIT_END>"
    ids_form = code.tokenize_file_with_edit(path, old, new)
    expected = code.parse_edit_output(ids_form)
    assert parse_edit_text(seed_form) == expected == parse_edit_text(code.decode(ids_form))
    # the text header read from ids (a model that writes the seed's form)
    assert (
        code.parse_edit_output(
            code.encode(seed_form[: seed_form.index("<EDIT_START>")])
            + [code.edit_start_id, *code.encode(new), code.edit_end_id]
        )
        == expected
    )


def test_marker_text_inside_contents(code):
    old = "s = '<EDIT_START>'  # </FILE> <EDIT_END> <DELETE>\n"
    out = code.parse_edit_output(code.tokenize_file_with_edit("<FILE>.py", old, "<EDIT_END>"))
    assert (out["file_path"], out["old_content"], out["new_content"], out["edit_type"]) == (
        "<FILE>.py",
        old,
        "<EDIT_END>",
        "replace",
    )


def test_code_tokenizer_needs_the_specials():
    plain = toksmith.train_from_iterator(
        ["hello world"] * 5, vocab_size=260, pattern="o200k", special_tokens=["<PAD>", "<EOS>"]
    )
    with pytest.raises(ValueError, match=r"lacks the Cromwell special token\(s\) \['<BOS>'"):
        CodeTokenizer(plain)
    with pytest.raises(TypeError, match="needs a toksmith.Tokenizer"):
        CodeTokenizer("tokenizer.json")
    # the specials may sit at other ids (a tokenizer trained with them after the merges)
    other = toksmith.train_from_iterator(
        ["hello world"] * 5,
        vocab_size=273,
        pattern="o200k",
        special_tokens=list(CROMWELL_SPECIAL_TOKENS),
    )
    wrapped = CodeTokenizer(other)
    assert wrapped.file_id == other.special_tokens["<FILE>"] >= 256
    assert wrapped.parse_edit_output(wrapped.encode_delete("a", "b"))["edit_type"] == "delete"


def test_save_load_pickle_and_exports(code, tmp_path):
    code.save(tmp_path)
    again = CodeTokenizer.load(tmp_path)
    text = "def f(x):\n    return x ** 2  # <EOS>\n"
    assert again.encode(text) == code.encode(text) and again.special_ids == code.special_ids
    copy = pickle.loads(pickle.dumps(code))
    assert copy.tokenize_file_with_edit("a", text, "b") == code.tokenize_file_with_edit(
        "a", text, "b"
    )
    tiktoken = pytest.importorskip("tiktoken")
    enc = code.tokenizer.to_tiktoken(name="cromwell")
    assert isinstance(enc, tiktoken.Encoding)
    # (tiktoken matches special-token text in the decoded frame: the contents here hold none)
    frame = code.tokenize_file_with_edit("a.py", "def f(x):\n    return x ** 2\n", "x")
    assert enc.encode(code.decode(frame), allowed_special="all") == frame


def test_collect_code_corpus(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    files = {
        "pkg/a.py": "def a():\n    return 1\n",
        "pkg/sub/b.cpp": "int b() { return 2; }\n",
        "pkg/notes.txt": "not code",
        ".git/c.py": "hidden",
        "pkg/sub/d.h": "#pragma once\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    found = collect_code_corpus(tmp_path)
    assert [p.relative_to(tmp_path).as_posix() for p in found] == [
        "pkg/a.py",
        "pkg/sub/b.cpp",
        "pkg/sub/d.h",
    ]
    assert collect_code_corpus([tmp_path / "pkg"], extensions=[".txt"]) == [
        tmp_path / "pkg" / "notes.txt"
    ]
    with pytest.raises(FileNotFoundError, match="is not a directory"):
        collect_code_corpus(tmp_path / "missing")
    with pytest.raises(ValueError, match="no file ending with"):
        collect_code_corpus(tmp_path, extensions=".rs")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a tiny corpus runs out of pairs
        code = cromwell.train(found, vocab_size=300)
    assert code.decode(code.encode(files["pkg/a.py"])) == files["pkg/a.py"]
    assert code.tokenizer.metadata["corpus"]["texts"] == 3
    # the same through train(folder, extensions=...): only the code files are read
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same = cromwell.train(tmp_path, vocab_size=300, extensions=cromwell.DEFAULT_EXTENSIONS)
        everything = cromwell.train(str(tmp_path / "pkg"), vocab_size=300)
    assert same.tokenizer.mergeable_ranks() == code.tokenizer.mergeable_ranks()
    assert same.tokenizer.metadata["corpus"]["texts"] == 3
    assert everything.tokenizer.metadata["corpus"]["texts"] == 4  # notes.txt too, no hidden filter
    with pytest.raises(FileNotFoundError, match="extensions= applies to files and folders"):
        cromwell.train(["def f(): pass"] * 3, vocab_size=300, extensions=[".py"])
    with pytest.raises(TypeError, match="extensions= needs"):
        cromwell.train(iter(["def f(): pass"]), vocab_size=300, extensions=[".py"])


def test_preset_registry():
    preset = get_preset("cromwell")
    assert (
        preset is PRESETS["cromwell"]
        and preset.vocab_size == 50000
        and preset.pattern == cromwell.LINE_PATTERN
    )
    assert preset.special_token_spec() == {s: i for i, s in enumerate(CROMWELL_SPECIAL_TOKENS)}
    assert preset.special_token_spec(["<X>", "<PAD>"]) == {**preset.special_token_spec(), "<X>": 8}
    assert get_preset("nanochat").special_token_spec(["<X>"])[-1] == "<X>"
    with pytest.raises(ValueError, match="available"):
        get_preset("cromwel")


def test_cli_train_preset(tmp_path):
    out = tmp_path / "code.json"
    cmd = [
        sys.executable,
        "-m",
        "toksmith",
        "train",
        str(CORPORA / "python_slice.txt"),
        "--preset",
        "cromwell",
        "--vocab-size",
        "600",
        "--special",
        "<X>",
        "--no-progress",
        "-o",
        str(out),
    ]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    tok = toksmith.load(out)
    assert tok.special_tokens == {**{s: i for i, s in enumerate(CROMWELL_SPECIAL_TOKENS)}, "<X>": 8}
    assert tok.decode_single_token_bytes(9) == b"\x00" and tok.n_vocab == 600
    # one stage on Cromwell's line-start split, as cromwell.train
    assert tok.metadata["preset"] == "cromwell" and tok.pattern == cromwell.LINE_PATTERN
    assert "superword_merges" not in tok.metadata
    assert CodeTokenizer(tok).encode_delete("a", "b")[-3:] == [5, 7, 6]


def test_line_split_is_the_regex():
    # the preset's split runs on a hand-written scanner; it equals the regex module on code
    pattern = cromwell.LINE_PATTERN
    assert _core.compile_pattern(pattern) == (pattern, True)
    for path in CODE_FILES:
        text = path.read_text(encoding="utf-8")
        assert toksmith.split(text, pattern) == regex.findall(pattern, text)


@given(st.lists(st.sampled_from(_ATOMS + ["0b1", "0X", "b", "\n\n", "#", "/"]), max_size=40))
def test_line_split_is_the_regex_on_code_atoms(atoms):
    text = "".join(atoms)
    assert toksmith.split(text, cromwell.LINE_PATTERN) == regex.findall(cromwell.LINE_PATTERN, text)


def test_superword_share_checked_and_short_corpus_warns(tmp_path):
    for bad, err in ((1.0, ValueError), (-0.1, ValueError), ("0.2", TypeError), (True, TypeError)):
        with pytest.raises(err, match="superword_share"):
            cromwell.train(["x y"] * 3, vocab_size=300, superword_share=bad)
    # a corpus with few pieces runs out of pairs in the second stage: fewer tokens, a warning
    with pytest.warns(UserWarning, match=r"superword stage ran out of pairs after \d+ new tokens"):
        small = cromwell.train(["ab ab ab\n  cd cd\n"] * 3, vocab_size=264 + 8, superword_share=0.5)
    assert small.tokenizer.n_vocab < 272
    text = "ab ab\n  cd  cd\n"
    assert small.decode(small.encode(text)) == text
    # files are read again for the second stage: the same tokenizer as from their texts
    paths = []
    for k, p in enumerate(CODE_FILES[:2]):
        paths.append(tmp_path / f"f{k}.txt")
        paths[-1].write_text(p.read_text(encoding="utf-8")[:20000], encoding="utf-8")
    from_files = cromwell.train(paths, vocab_size=600, superword_share=SHARE)
    from_texts = cromwell.train(
        [p.read_text(encoding="utf-8") for p in paths], vocab_size=600, superword_share=SHARE
    )
    assert from_files.tokenizer.mergeable_ranks() == from_texts.tokenizer.mergeable_ranks()
    assert from_files.tokenizer.metadata["superword_merges"] == int(336 * 0.2)
