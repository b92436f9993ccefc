"""The wordbpe preset's argument checks and edge cases found by the audit of seed 004: huge
merge counts and embedding sizes, decoding around ``<unk>``, wrong types, overflowing counts,
``run()`` checking its arguments before touching the file system, and its inference demo."""

from __future__ import annotations

import io
import json
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.reference import wordbpe as reference
from toksmith.presets import _sources, wordbpe
from toksmith.presets import embeddings as emb
from toksmith.presets.wordbpe import END_OF_WORD, UNK, WORD_PATTERN, WordTokenizer

COUNTS = {"hello": 3, "help": 2}


@pytest.fixture(scope="module")
def tok():
    return wordbpe.train_from_counts(COUNTS, 5)


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.txt").write_text(
        "The newest lowest widest, the newest low.\nHello helper world\n", encoding="utf-8"
    )
    (folder / "b.txt").write_text("lower newer wider the quick brown fox\n", encoding="utf-8")
    return folder


# ---- 1. huge merge counts and embedding sizes ------------------------------------------------------


@pytest.mark.parametrize("n", [2**31, 2**40, 2**62, 2**64])
def test_a_huge_num_merges_is_a_value_error_naming_the_limit(n):
    with pytest.raises(ValueError, match=r"num_merges must be in 0\.\.2147483647 \(2\*\*31-1"):
        wordbpe.train_from_counts(COUNTS, n)
    with pytest.raises(ValueError, match="num_merges"):
        wordbpe.train(["hello help"], n)


def test_the_largest_num_merges_learns_every_merge_there_is():
    # 2**31-1 is accepted and stops when no pair is left (no up-front reservation of that size)
    tok = wordbpe.train_from_counts(COUNTS, wordbpe.MAX_MERGES)
    tokens, merges = reference.train(COUNTS, 100)
    assert tok.merges == merges and tok.tokens == [UNK] + tokens
    assert tok.metadata["num_merges"] == wordbpe.MAX_MERGES
    assert tok.metadata["merges_learned"] == len(merges)


@pytest.mark.parametrize("dim", [2**31, 2**61, 2**64 + 1])
@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_a_huge_embedding_dim_is_a_value_error_naming_the_limit(tok, dim, backend):
    with pytest.raises(ValueError, match=r"limit of 2147483648 \(2\*\*31\) float32.*pass dim <= "):
        tok.embeddings(dim, backend=backend)


def test_the_embedding_limit_counts_the_tokens(tok):
    largest = emb.MAX_FLOATS // tok.n_vocab
    with pytest.raises(ValueError, match=f"pass dim <= {largest}$"):
        tok.embeddings(largest + 1)
    with pytest.raises(ValueError, match="too large"):
        emb.embed_numpy(tok.tokens, largest + 1)
    with pytest.raises(ValueError, match="too large"):
        emb.embed_reference(tok.tokens, largest + 1)
    assert tok.embeddings(3).shape == (tok.n_vocab, 3)


def test_the_command_line_reports_a_huge_merge_count_or_dim(tmp_path, corpus, capsys):
    from toksmith.cli import main

    out = tmp_path / "out"
    assert (
        main(
            [
                "wordbpe",
                "run",
                str(corpus),
                "--out",
                str(out),
                "--merges",
                str(2**40),
                "--no-progress",
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert "error: num_merges must be in 0..2147483647" in err and "Traceback" not in err
    assert (
        main(
            ["wordbpe", "run", str(corpus), "--out", str(out), "--dim", str(2**61), "--no-progress"]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert "error: dim=" in err and "2**31" in err
    # a dim that only the learned vocabulary makes too large: found before any file is written
    assert (
        main(
            ["wordbpe", "run", str(corpus), "--out", str(out), "--dim", str(2**30), "--no-progress"]
        )
        == 1
    )
    assert "error: dim=" in capsys.readouterr().err
    assert not out.exists()


# ---- 2. decode around <unk> -------------------------------------------------------------------


def test_decode_keeps_an_unknown_character_inside_its_word():
    tok = wordbpe.train_from_counts({"the": 5, "at": 2}, 6)
    assert tok.tokenize("t\u0127e at") == ["t", UNK, "e</w>", "at</w>"]
    assert tok.decode(tok.encode("t\u0127e at")) == "t<unk>e at"
    assert tok.tokenize("t\u0127 the") == ["t", UNK, END_OF_WORD, "the</w>"]
    assert tok.decode(tok.encode("t\u0127 the")) == "t<unk> the"
    assert tok.decode(tok.encode("\u0127\u0127 at \u0127")) == "<unk><unk> at <unk>"
    assert tok.decode(tok.encode("the\u0127at the")) == "the<unk>at the"


def test_decode_puts_a_special_token_between_words(tok):
    t = wordbpe.train_from_counts(COUNTS, 5, special_tokens=[UNK, "<pad>"])
    pad = t.special_tokens["<pad>"]
    ids = t.encode("hello help")
    assert t.decode([pad] + ids + [pad, pad]) == "<pad> hello help <pad> <pad>"
    # a special token cuts a word that has not ended
    h = t.token_to_id("h")
    assert t.decode([h, pad, h] + t.encode("help")) == "h <pad> hhelp"
    assert t.decode([]) == ""


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="helopxyz\u0127", min_size=1, max_size=6), max_size=6))
def test_decode_of_encode_is_each_word_with_unknown_characters_as_unk(words):
    tok = wordbpe.train_from_counts({"hello": 3, "help": 2, "hop": 1}, 8)
    text = " ".join(words)
    matcher = reference.GreedyMatcher(tok.tokens[1:])
    expected = [
        "".join(
            t[: -len(END_OF_WORD)] if t.endswith(END_OF_WORD) else t for t in matcher.split_word(w)
        )
        for w in regex.findall(WORD_PATTERN, text)
    ]
    decoded = tok.decode(tok.encode(text))
    assert decoded == " ".join(expected)
    assert len(decoded.split(" ")) == len(expected) or not expected


# ---- 3. special_tokens given as a single str --------------------------------------------------


def test_special_tokens_as_a_single_str_is_a_type_error():
    with pytest.raises(TypeError, match="pass a list of str"):
        wordbpe.train_from_counts({"ab": 1, "ba": 1}, 0, special_tokens="<pad>")
    with pytest.raises(TypeError, match="pass a list of str"):
        wordbpe.train(["ab ba"], 0, special_tokens="<pad>")
    with pytest.raises(TypeError, match="list of str"):
        WordTokenizer([UNK, "a</w>"], special_tokens=UNK)
    with pytest.raises(TypeError, match="special tokens must be str"):
        wordbpe.train_from_counts({"ab": 1}, 0, special_tokens=[UNK, 5])
    t = wordbpe.train_from_counts({"ab": 1, "ba": 1}, 0, special_tokens=["<pad>"])
    assert t.tokens[:2] == [UNK, "<pad>"] and t.special_tokens == {UNK: 0, "<pad>": 1}


# ---- 4. extensions given as a single str ------------------------------------------------------


def test_a_single_extension_str_is_one_extension(tmp_path):
    (tmp_path / "a.txt").write_text("alpha", encoding="utf-8")
    (tmp_path / "b.md").write_text("beta", encoding="utf-8")
    (tmp_path / "c.TXT").write_text("gamma", encoding="utf-8")
    assert wordbpe.count_words(tmp_path, extensions=".txt") == {"alpha": 1, "gamma": 1}
    assert wordbpe.count_words(tmp_path, extensions=".md") == {"beta": 1}
    assert wordbpe.count_words(tmp_path, extensions=[".md", ".txt"]) == {
        "alpha": 1,
        "beta": 1,
        "gamma": 1,
    }
    assert [f.name for f in _sources.source_files(tmp_path, ".md")] == ["b.md"]
    assert _sources.check_extensions(".TXT") == (".txt",)
    assert _sources.check_extensions(None) is None
    with pytest.raises(TypeError, match="extensions must be str"):
        wordbpe.count_words(tmp_path, extensions=[".txt", 3])
    with pytest.raises(TypeError, match="extensions must be"):
        wordbpe.count_words(tmp_path, extensions=5)
    with pytest.raises(ValueError, match="extension is empty"):
        wordbpe.count_words(tmp_path, extensions=[""])


# ---- 5. counts too large for 64-bit arithmetic -------------------------------------------------


def test_counts_too_large_are_value_errors(tok):
    with pytest.raises(ValueError, match="counts are too large"):
        wordbpe.train_from_counts({"ab": 2**62, "abc": 2**62, "abd": 2**62}, 2)
    with pytest.raises(ValueError, match="is too large"):
        wordbpe.train_from_counts({"ab": 2**64}, 2)
    with pytest.raises(ValueError, match="is too large"):
        wordbpe.train_from_counts({"ab": 2**63}, 2)
    # the sum fits, the character pairs it stands for do not
    with pytest.raises(ValueError, match="character pairs"):
        wordbpe.train_from_counts({"abcdefgh": 2**61}, 2)
    with pytest.raises(ValueError, match="is too large"):
        tok.token_stats({"hello": 2**63, "HELLO": 2**63})
    with pytest.raises(ValueError, match="counts are too large"):
        tok.token_stats({"hello": 2**62, "HELLO": 2**62})
    with pytest.raises(ValueError, match="counts are too large"):
        tok.token_stats({"hello": 2**61})  # 6 tokens at most: 6 * 2**61 > 2**63-1


def test_large_counts_that_fit_give_exact_results(tok):
    counts = {"ab": 2**60, "abc": 2**59, "abd": 2**58 + 1}
    t = wordbpe.train_from_counts(counts, 3)
    tokens, merges = reference.train(counts, 3)
    assert t.merges == merges and t.tokens == [UNK] + tokens
    words = {"hello": 2**59, "help": 2**58 + 3, "zzz": 0}
    expected = {}
    for w, n in words.items():
        for i in tok.encode_word(w) if n else []:
            expected[tok.tokens[i]] = expected.get(tok.tokens[i], 0) + n
    assert dict(tok.token_stats(words)) == expected
    # a count of zero is still accepted and left out
    assert (
        wordbpe.train_from_counts({"ab": 3, "cd": 0}, 5).tokens
        == wordbpe.train_from_counts({"ab": 3}, 5).tokens
    )


# ---- 6. wrong types are TypeErrors ----------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"num_merges": "2"},
        {"num_merges": 2.0},
        {"num_merges": True},
        {"min_frequency": 1.0},
        {"min_frequency": False},
        {"threads": "2"},
        {"threads": 2.0},
        {"pattern": 5},
        {"lowercase": "no"},
    ],
)
def test_wrong_typed_training_options_are_type_errors(kwargs):
    args = {"num_merges": 2, **kwargs}
    with pytest.raises(TypeError, match=next(iter(kwargs))):
        wordbpe.train_from_counts({"ab": 1}, **args)
    with pytest.raises(TypeError, match=next(iter(kwargs))):
        wordbpe.train(["ab"], **args)


def test_wrong_typed_values_are_type_errors(tok, corpus, tmp_path):
    with pytest.raises(TypeError, match="count of 'ab' must be an int"):
        wordbpe.train_from_counts({"ab": 1.5}, 2)
    with pytest.raises(TypeError, match="count of 'ab' must be an int"):
        wordbpe.train_from_counts({"ab": True}, 2)
    with pytest.raises(TypeError, match="count of 'hello' must be an int"):
        tok.token_stats({"hello": 2.0})
    with pytest.raises(TypeError, match="token 1 must be a non-empty str"):
        WordTokenizer([UNK, 5])
    with pytest.raises(TypeError, match="lowercase"):
        WordTokenizer([UNK, "a</w>"], lowercase=1)
    with pytest.raises(TypeError, match="each merge"):
        WordTokenizer([UNK, "a", "b", "ab"], merges=[("a", 2)])
    with pytest.raises(TypeError, match="seed must be an int"):
        tok.embeddings(4, seed="1")
    with pytest.raises(TypeError, match="dim must be an int"):
        tok.embeddings(4.0)
    with pytest.raises(TypeError, match="dim must be an int"):
        tok.embeddings(True)
    with pytest.raises(TypeError, match="backend must be a str"):
        tok.embeddings(4, backend=1)
    with pytest.raises(TypeError, match="threads"):
        tok.embeddings(4, threads="2")
    with pytest.raises(TypeError, match="threads"):
        wordbpe.count_words(["ab"], threads=2.0)
    with pytest.raises(TypeError, match="prefix must be a str"):
        wordbpe.run(corpus, tmp_path / "o", prefix=None)
    # out-of-range values of the right type stay ValueErrors
    with pytest.raises(ValueError, match="threads"):
        wordbpe.train_from_counts({"ab": 1}, 2, threads=0)
    with pytest.raises(ValueError, match="num_merges"):
        wordbpe.train_from_counts({"ab": 1}, -1)
    with pytest.raises(ValueError, match="min_frequency"):
        wordbpe.train_from_counts({"ab": 1}, 2, min_frequency=-1)


# ---- 7. decode's ids --------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [True, False, 1.0, "1", None])
def test_decode_rejects_non_int_ids_like_id_to_token(tok, bad):
    with pytest.raises(TypeError, match="token ids must be int"):
        tok.decode([bad])
    with pytest.raises(TypeError, match="token ids must be int"):
        tok.decode(tok.encode("hello") + [bad])
    with pytest.raises(TypeError, match="token ids must be int"):
        tok.id_to_token(bad)


def test_decode_rejects_out_of_range_ids(tok):
    for bad in (-1, tok.n_vocab, 2**70):
        with pytest.raises(ValueError, match="out of range"):
            tok.decode([1, bad])


# ---- 8. run() checks its arguments first; the loader checks "lowercase" -----------------------------


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"num_merges": -1}, ValueError),
        ({"num_merges": 2**40}, ValueError),
        ({"num_merges": "5"}, TypeError),
        ({"min_frequency": -1}, ValueError),
        ({"dim": 0}, ValueError),
        ({"dim": 2**40}, ValueError),
        ({"dim": 8.0}, TypeError),
        ({"seed": -1}, ValueError),
        ({"backend": "opencl"}, ValueError),
        ({"prefix": None}, TypeError),
        ({"prefix": "a/b"}, ValueError),
        ({"threads": 0}, ValueError),
        ({"errors": "ignore"}, ValueError),
        ({"extensions": [3]}, TypeError),
        ({"lowercase": None}, TypeError),
        ({"sample": b"bytes"}, TypeError),
    ],
)
def test_run_checks_every_argument_before_reading_or_writing(tmp_path, kwargs, error):
    out = tmp_path / "out"
    # the corpus does not exist: reading it first would raise FileNotFoundError instead
    with pytest.raises(error) as info:
        wordbpe.run(tmp_path / "missing", out, **kwargs)
    assert not isinstance(info.value, FileNotFoundError)
    assert not out.exists()


def test_run_leaves_no_file_behind_on_a_bad_option(tmp_path, corpus):
    out = tmp_path / "out4"
    with pytest.raises(ValueError, match="num_merges"):
        wordbpe.run(corpus, out, num_merges=-1)
    assert not out.exists()
    # a dim too large for the learned vocabulary is found before the first file is written
    with pytest.raises(ValueError, match="dim="):
        wordbpe.run(corpus, out, num_merges=5, dim=emb.MAX_FLOATS // 3)
    assert not out.exists()
    (tmp_path / "afile").write_text("x")
    with pytest.raises(NotADirectoryError):
        wordbpe.run(corpus, tmp_path / "afile", num_merges=5, dim=4)


def test_loading_checks_that_lowercase_is_a_bool(tmp_path, tok):
    for member, value in [
        ("lowercase", "no"),
        ("lowercase", 0),
        ("merges", [["h"]]),
        ("merges", [[1, 2]]),
        ("metadata", [1]),
        ("special_tokens", UNK),
        ("pattern", 3),
    ]:
        d = tok.to_dict()
        d[member] = value
        p = tmp_path / "bad.json"
        p.write_text(json.dumps(d))
        with pytest.raises(ValueError, match="not a valid toksmith-wordbpe file"):
            wordbpe.load(p)
    d = tok.to_dict()
    d["lowercase"] = False
    p = tmp_path / "cased.json"
    p.write_text(json.dumps(d))
    assert wordbpe.load(p).lowercase is False


# ---- 9. run() tokenizes a sample sentence ------------------------------------------------------


def test_run_tokenizes_a_sample_sentence(tmp_path, corpus):
    out = wordbpe.run(corpus, tmp_path / "o", num_merges=20, dim=4)
    tok = out["tokenizer"]
    assert out["sample"] == {
        "text": wordbpe.DEFAULT_SAMPLE,
        "tokens": tok.tokenize(wordbpe.DEFAULT_SAMPLE),
        "ids": tok.encode(wordbpe.DEFAULT_SAMPLE),
    }
    out = wordbpe.run(corpus, tmp_path / "o", num_merges=20, dim=4, sample="The newest fox")
    assert out["sample"]["tokens"] == out["tokenizer"].tokenize("The newest fox")
    assert out["tokenizer"].decode(out["sample"]["ids"]) == "the newest fox"
    assert wordbpe.run(corpus, tmp_path / "o", num_merges=20, dim=4, sample=None)["sample"] is None


def test_the_command_line_shows_the_sample_on_stderr(tmp_path, corpus, capsys):
    from toksmith.cli import main

    out = tmp_path / "o"
    assert (
        main(
            [
                "wordbpe",
                "run",
                str(corpus),
                "--out",
                str(out),
                "--merges",
                "20",
                "--dim",
                "4",
                "--no-progress",
                "--sample",
                "The newest fox",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    tok = wordbpe.load(out / "corpus_tokenizer.json")
    assert f"tokens: {' '.join(tok.tokenize('The newest fox'))}" in captured.err
    assert sorted(Path(p).name for p in captured.out.split()) == [
        "corpus_final_embeddings.csv",
        "corpus_final_token_stats.csv",
        "corpus_tokenizer.json",
        "corpus_unique_initial_tokens.csv",
    ]
    assert (
        main(
            [
                "wordbpe",
                "run",
                str(corpus),
                "--out",
                str(out),
                "--merges",
                "20",
                "--dim",
                "4",
                "--no-progress",
            ]
        )
        == 0
    )
    assert "tokens: " in capsys.readouterr().err
    assert (
        main(
            [
                "wordbpe",
                "run",
                str(corpus),
                "--out",
                str(out),
                "--merges",
                "20",
                "--dim",
                "4",
                "--no-progress",
                "--sample",
                "",
            ]
        )
        == 0
    )
    assert "tokens: " not in capsys.readouterr().err


WORD_COUNTS = {"low": 5, "lower": 2, "newest": 6, "widest": 3, ",": 4, "a": 1}


@pytest.fixture(scope="module")
def word_tok():
    return wordbpe.train_from_counts(WORD_COUNTS, 10)


def _fake_cupy(count):
    def get_device_count():
        if isinstance(count, Exception):
            raise count
        return count

    return types.SimpleNamespace(
        cuda=types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=get_device_count))
    )


def _fake_torch(available):
    class Device:
        def __init__(self, spec):
            if not isinstance(spec, str) or spec.split(":")[0] not in ("cpu", "cuda", "mps"):
                raise RuntimeError(
                    f"Expected one of cpu, cuda, mps device type at start of device string: {spec}"
                )
            self.type = spec.split(":")[0]
            self.index = int(spec.split(":")[1]) if ":" in spec else None

    return types.SimpleNamespace(
        device=Device,
        cuda=types.SimpleNamespace(
            is_available=lambda: available, device_count=lambda: 1 if available else 0
        ),
    )


WORDS = st.lists(
    st.sampled_from(["low", "Lower", "NEWEST", "wid", "a", ",", "q", "zz", "é", "x\u0301"]),
    max_size=10,
)


def test_lone_surrogates_are_clear_value_errors(word_tok, tmp_path):
    bad = "lo\ud800w"
    calls = [
        lambda: word_tok.encode(bad),
        lambda: word_tok.tokenize(bad),
        lambda: word_tok.words(bad),
        lambda: word_tok.normalize(bad),
        lambda: word_tok.encode_word(bad),
        lambda: word_tok.encode_batch(["low", bad]),
        lambda: word_tok.token_stats({bad: 1}),
        lambda: wordbpe.count_words([bad]),
        lambda: wordbpe.train([bad], 5),
        lambda: wordbpe.run(["low"], tmp_path / "out", sample=bad),
        lambda: wordbpe.train_from_counts({bad: 2}, 5),
        lambda: wordbpe.train_from_counts({bad: 2}, 5, lowercase=False),
        lambda: WordTokenizer([UNK, "\udcff"]),
        lambda: emb.token_seed("\udcff"),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="lone surrogate") as info:
            call()
        assert not isinstance(info.value, UnicodeError)
    assert not (tmp_path / "out").exists()
    # text without surrogates is untouched
    assert word_tok.encode("lower") == word_tok.encode_batch(["lower"])[0]


def test_loading_a_corrupt_file_is_a_value_error_naming_it(tmp_path, word_tok):
    cases = {
        "binary.json": b"\xff\xfe\x00\x01 not text",
        "deep.json": b"[" * 100_000 + b"]" * 100_000,
        "bigint.json": b'{"format": "toksmith-wordbpe", "version": ' + b"9" * 5000 + b"}",
    }
    for name, data in cases.items():
        p = tmp_path / name
        p.write_bytes(data)
        with pytest.raises(ValueError, match=name) as info:
            wordbpe.load(p)
        assert not isinstance(info.value, UnicodeError)


@pytest.mark.parametrize("version", [2, "1", None, 1.5])
def test_a_file_of_another_version_is_refused(tmp_path, word_tok, version):
    d = word_tok.to_dict()
    if version is None:
        del d["version"]
    else:
        d["version"] = version
    p = tmp_path / "v.json"
    p.write_text(json.dumps(d), encoding="utf-8")
    with pytest.raises(ValueError, match="version"):
        wordbpe.load(p)


def test_the_command_line_reports_a_corrupt_file_in_one_line(tmp_path, capsys):
    from toksmith.cli import main

    for name, data in {"deep.json": b"[" * 100_000, "bin.json": b"\xff\xfe"}.items():
        p = tmp_path / name
        p.write_bytes(data)
        assert main(["wordbpe", "encode", str(p), "hello"]) == 1
        err = capsys.readouterr().err
        assert err.startswith("toksmith wordbpe: error: ") and err.count("\n") == 1 and name in err


def test_decode_takes_numpy_integer_ids(word_tok):
    ids = word_tok.encode("lowest newest, a")
    text = word_tok.decode(ids)
    assert word_tok.decode(np.array(ids)) == text
    assert word_tok.decode(np.array(ids, dtype=np.uint16)) == text
    assert word_tok.decode([np.int32(i) for i in ids]) == text
    assert word_tok.id_to_token(np.int64(ids[0])) == word_tok.tokens[ids[0]]
    for bad in (np.bool_(True), np.float64(1.0)):
        with pytest.raises(TypeError, match="token ids must be int"):
            word_tok.decode([bad])
    with pytest.raises(ValueError, match="out of range"):
        word_tok.decode(np.array([word_tok.n_vocab]))


def test_encode_reports_stdin_that_is_not_utf8(tmp_path, word_tok, monkeypatch, capsys):
    from toksmith.cli import main

    p = tmp_path / "t.json"
    word_tok.save(p)
    stdin = io.TextIOWrapper(
        io.BytesIO(b"low \xff newest"), encoding="utf-8", errors="surrogateescape"
    )
    monkeypatch.setattr(sys, "stdin", stdin)
    assert main(["wordbpe", "encode", str(p)]) == 1
    err = capsys.readouterr().err
    assert (
        err.startswith("toksmith wordbpe: error: ")
        and "stdin is not valid UTF-8" in err
        and "0xff" in err
    )
    monkeypatch.setattr(
        sys, "stdin", io.TextIOWrapper(io.BytesIO("low newest\n".encode()), encoding="utf-8")
    )
    assert main(["wordbpe", "encode", str(p)]) == 0
    assert capsys.readouterr().out.split() == [str(i) for i in word_tok.encode("low newest")]
    # arguments that were not UTF-8 (Python passes such bytes on as lone surrogates)
    assert main(["wordbpe", "encode", str(p), "lo\udcffw"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("toksmith wordbpe: error: ") and "not valid UTF-8" in err


def test_cpu_embeddings_are_a_writable_array(word_tok):
    e = word_tok.embeddings(6, seed=3)
    assert e.flags.writeable and np.array_equal(e, word_tok.embeddings(6, seed=3, backend="numpy"))
    e /= 2  # a user normalising or fine-tuning the table in place
    assert np.array_equal(e * 2, word_tok.embeddings(6, seed=3))


def test_the_merge_bar_ends_at_the_merges_learned(monkeypatch):
    bars = []

    class Bar:
        def __init__(self, **kw):
            self.n, self.total, self.closed = 0, kw.get("total"), False
            bars.append(self)

        def update(self, k):
            self.n += k

        def close(self):
            self.closed = True

    monkeypatch.setattr(
        wordbpe, "_progress_bar", lambda progress, **kw: Bar(**kw) if progress else None
    )
    t = wordbpe.train_from_counts(
        {"aaaaaaaa": 3, "hello": 2}, 50, progress=True
    )  # runs out of pairs early
    assert len(t.merges) < bars[0].total
    assert [(b.n, b.closed) for b in bars] == [(len(t.merges), True)]


@pytest.mark.parametrize("special", ["a</w>", END_OF_WORD, "e", "low"])
def test_a_special_token_equal_to_a_learned_token_is_refused(special):
    with pytest.raises(ValueError, match="special token"):
        wordbpe.train_from_counts(WORD_COUNTS, 10, special_tokens=[UNK, special])
    # other special tokens are fine
    t = wordbpe.train_from_counts(WORD_COUNTS, 10, special_tokens=[UNK, "<pad>"])
    assert t.special_tokens == {UNK: 0, "<pad>": 1} and t.decode(t.encode("a lower")) == "a lower"


def test_words_holding_the_end_of_word_marker_are_refused():
    with pytest.raises(ValueError, match="end-of-word marker"):
        wordbpe.train_from_counts({"x</w>y": 5, "ab": 2}, 10)
    with pytest.raises(ValueError, match="end-of-word marker"):
        wordbpe.train(["x</w>y q</w>"], 10, pattern=r"\S+")
    # the default pattern cuts "<", "/" and ">" off: such text trains as usual
    t = wordbpe.train(["x</w>y q</w>"], 10)
    assert t.decode(t.encode("x</w>y")) == "x < / w > y"


def test_to_dict_does_not_alias_the_tokenizer(word_tok):
    before = word_tok.encode("lowest newest")
    d = word_tok.to_dict()
    d["tokens"][5] = "zzz"
    d["tokens"].append("extra")
    d["metadata"]["preset"] = "changed"
    assert "zzz" not in word_tok.tokens and "extra" not in word_tok.tokens
    assert word_tok.metadata["preset"] == "wordbpe"
    assert word_tok.encode("lowest newest") == before and word_tok.to_dict() != d


def test_saving_metadata_json_cannot_hold_keeps_the_old_file(tmp_path, word_tok):
    p = tmp_path / "t.json"
    word_tok.save(p)
    good = p.read_bytes()
    bad = WordTokenizer(
        word_tok.tokens, merges=word_tok.merges, metadata={"languages": {"en", "de"}}
    )
    with pytest.raises(TypeError, match="metadata must hold only JSON values"):
        bad.save(p)
    assert p.read_bytes() == good and wordbpe.load(p).tokens == word_tok.tokens


def test_gpu_backends_without_a_gpu_say_what_to_pass(word_tok, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(
        sys.modules, "cupy", _fake_cupy(RuntimeError("cudaErrorNoDevice: no CUDA-capable device"))
    )
    with pytest.raises(ValueError, match="cupy finds no CUDA GPU.*backend='cpu'"):
        word_tok.embeddings(4, backend="cupy")
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(0))
    with pytest.raises(ValueError, match="cupy finds no CUDA GPU"):
        word_tok.embeddings(4, backend="cupy")
    monkeypatch.setitem(sys.modules, "torch", _fake_torch(False))
    with pytest.raises(ValueError, match="torch finds no CUDA GPU.*device='cpu'"):
        word_tok.embeddings(4, backend="torch", device="cuda")
    with pytest.raises(ValueError, match="device must be a torch device"):
        word_tok.embeddings(4, backend="torch", device="gpu0")
    monkeypatch.setitem(sys.modules, "torch", _fake_torch(True))
    with pytest.raises(ValueError, match="cuda:3"):
        word_tok.embeddings(4, backend="torch", device="cuda:3")
    # the command line checks before reading the corpus or writing a file, in one line
    from toksmith.cli import main

    monkeypatch.setitem(sys.modules, "torch", _fake_torch(False))
    out = tmp_path / "out"
    assert (
        main(
            [
                "wordbpe",
                "run",
                str(tmp_path / "missing"),
                "--out",
                str(out),
                "--backend",
                "torch",
                "--device",
                "cuda",
                "--no-progress",
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert err.startswith("toksmith wordbpe: error: ") and "no CUDA GPU" in err and not out.exists()
    # without the package: what to install
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(ImportError, match="pip install cupy-cuda12x"):
        word_tok.embeddings(4, backend="cupy")


@settings(max_examples=200, deadline=None)
@given(WORDS, st.sampled_from([" ", "\n", "\r\n", "\t "]))
def test_decode_of_numpy_ids_equals_decode_of_ints(words, sep):
    t = wordbpe.train_from_counts(WORD_COUNTS, 10)
    ids = t.encode(sep.join(words))
    assert t.decode(np.array(ids, dtype=np.int64)) == t.decode(ids)
    # every word comes back as one word: unknown characters stay inside their word
    assert len(t.decode(ids).split()) == len(t.words(sep.join(words)))
