"""Training: native == pure-Python reference == rustbpe; layout, pinned tokens, errors."""

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import rustbpe

import toksmith
from tests.reference import bpe as reference
from toksmith.pretokenize import PATTERNS, RUSTBPE_GPT4_PATTERN


def docs_of(corpus_slices, n_chars=None):
    text = "\n\n".join(corpus_slices.values())
    return text[:n_chars].split("\n\n") if n_chars else text.split("\n\n")


@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k", "nanochat"])
def test_native_equals_reference(name, corpus_slices):
    texts = docs_of(corpus_slices, 12000)
    tok = toksmith.train_from_iterator(texts, vocab_size=256 + 60, pattern=name)
    merges = reference.train(texts, PATTERNS[name], 60)
    assert tok.merge_ids() == merges
    assert tok.mergeable_ranks() == reference.ranks_from_merges(merges)


@pytest.mark.parametrize(
    "min_frequency,max_token_length", [(0, 3), (0, 6), (40, None), (25, 4), (10**9, None)]
)
def test_limits_equal_reference(min_frequency, max_token_length, corpus_slices):
    texts = docs_of(corpus_slices, 12000)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tok = toksmith.train_from_iterator(
            texts,
            vocab_size=256 + 300,
            pattern="cl100k",
            min_frequency=min_frequency,
            max_token_length=max_token_length,
        )
    merges = reference.train(texts, PATTERNS["cl100k"], 300, min_frequency, max_token_length)
    assert tok.merge_ids() == merges
    assert tok.n_vocab == 256 + len(merges)
    # the limits bind on this corpus
    if min_frequency:
        assert len(merges) < 300
        assert any("no pair left" in str(w.message) for w in caught)
    else:
        assert len(merges) == 300 and not caught
    if max_token_length is not None:
        assert max(map(len, tok.mergeable_ranks())) == max_token_length
        assert merges != reference.train(texts, PATTERNS["cl100k"], 300, min_frequency)
    assert tok.metadata.get("min_frequency") == (min_frequency or None)
    assert tok.metadata.get("max_token_length") == max_token_length


def test_limits_default_is_unlimited(corpus_slices):
    texts = docs_of(corpus_slices, 12000)
    plain = toksmith.train_from_iterator(texts, vocab_size=400, pattern="gpt2")
    same = toksmith.train_from_iterator(
        texts, vocab_size=400, pattern="gpt2", min_frequency=1, max_token_length=1000
    )
    assert plain.merge_ids() == same.merge_ids()
    assert "min_frequency" not in plain.metadata and "max_token_length" not in plain.metadata


@pytest.mark.parametrize(
    "kw,err",
    [
        ({"min_frequency": -1}, ValueError),
        ({"min_frequency": 1.5}, TypeError),
        ({"min_frequency": True}, TypeError),
        ({"max_token_length": 0}, ValueError),
        ({"max_token_length": "8"}, TypeError),
    ],
)
def test_limits_bad_values(kw, err):
    with pytest.raises(err, match=next(iter(kw))):
        toksmith.train_from_iterator(["hello world"], vocab_size=300, **kw)


def test_limits_from_counts():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        tok = toksmith.train_from_counts(
            {"aaaa": 5, "abab": 2}, vocab_size=300, pattern="gpt2", min_frequency=5
        )
    # "aa" (count 15), then "aaaa" (5); "ab" (4) is not frequent enough
    assert tok.merges() == [(b"a", b"a"), (b"aa", b"aa")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        tok = toksmith.train_from_counts(
            {"aaaa": 5, "abab": 2}, vocab_size=300, pattern="gpt2", max_token_length=2
        )
    # "aa" (15), then "aaaa" (5) would be 4 bytes: passed over for "ab" (4); "abab" likewise
    assert tok.merges() == [(b"a", b"a"), (b"a", b"b")]


@pytest.mark.parametrize(
    "pattern", [RUSTBPE_GPT4_PATTERN, PATTERNS["nanochat"], PATTERNS["cl100k"], PATTERNS["gpt2"]]
)
@pytest.mark.parametrize("vocab_size", [300, 2000, 5000])
def test_merges_equal_rustbpe(pattern, vocab_size, corpus_slices):
    texts = docs_of(corpus_slices)
    rb = rustbpe.Tokenizer()
    rb.train_from_iterator(iter(texts), vocab_size, pattern=pattern)
    expected = {bytes(b): i for b, i in rb.get_mergeable_ranks()}
    tok = toksmith.train_from_iterator(texts, vocab_size=vocab_size, pattern=pattern)
    assert tok.mergeable_ranks() == expected


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_thread_count_does_not_change_merges(threads, corpus_slices):
    texts = docs_of(corpus_slices)
    base = toksmith.train_from_iterator(texts, vocab_size=1500, pattern="cl100k", threads=1)
    tok = toksmith.train_from_iterator(texts, vocab_size=1500, pattern="cl100k", threads=threads)
    assert tok.merge_ids() == base.merge_ids()


def test_files_folders_globs_and_jsonl(tmp_path, corpus_slices):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.txt").write_text(corpus_slices["english"], encoding="utf-8")
    (tmp_path / "sub" / "b.txt").write_text(corpus_slices["python"], encoding="utf-8")
    (tmp_path / ".hidden").write_text("ignored", encoding="utf-8")
    with open(tmp_path / "c.jsonl", "w", encoding="utf-8") as f:
        for line in corpus_slices["shell"].split("\n\n"):
            f.write(json.dumps({"body": line}) + "\n")
    texts = [corpus_slices["english"], corpus_slices["python"]]
    from_files = toksmith.train(
        [tmp_path / "a.txt", tmp_path / "sub"], vocab_size=800, pattern="gpt2"
    )
    from_iter = toksmith.train_from_iterator(texts, vocab_size=800, pattern="gpt2")
    assert from_files.merge_ids() == from_iter.merge_ids()
    from_glob = toksmith.train(str(tmp_path / "**" / "*.txt"), vocab_size=800, pattern="gpt2")
    assert from_glob.merge_ids() == from_iter.merge_ids()
    from_folder = toksmith.train(tmp_path, vocab_size=800, pattern="gpt2", text_field="body")
    assert from_folder.metadata["corpus"]["n_sources"] == 3
    with pytest.raises(ValueError, match="text_field"):
        toksmith.train(tmp_path / "c.jsonl", vocab_size=800)


def test_big_file_read_in_blocks_equals_whole(tmp_path, corpus_slices):
    text = "\n".join(corpus_slices.values()) * 3
    p = tmp_path / "big.txt"
    p.write_text(text, encoding="utf-8")
    counter = toksmith._core.ChunkCounter("cl100k")
    counter.add_file(str(p), False, 0, 4096)  # tiny blocks
    whole = toksmith._core.ChunkCounter("cl100k")
    whole.add_texts([text])
    assert counter.counts() == whole.counts()


def test_layout_specials_after_merges():
    tok = toksmith.train_from_iterator(
        ["hello world, the quick brown fox " * 50],
        vocab_size=270,
        pattern="gpt2",
        special_tokens=["<|a|>", "<|b|>"],
    )
    assert tok.special_tokens == {"<|a|>": 268, "<|b|>": 269}
    assert len(tok.mergeable_ranks()) == 268
    assert tok.n_vocab == 270


def test_pinned_tokens_fixed_ids_and_never_crossed():
    texts = ["int x = 42; int y == 3; if (x == y) return x;"] * 40
    tok = toksmith.train_from_iterator(
        texts, vocab_size=265, pattern="gpt2", pinned_tokens={"int": 0, "==": 1, "return": 2}
    )
    assert tok.pinned_tokens == {"int": 0, "==": 1, "return": 2}
    ranks = tok.mergeable_ranks()
    assert min(ranks.values()) == 3 and ranks[b"\x00"] == 3  # bytes fill the free ids
    ids = tok.encode_ordinary("int a == b; return a")
    assert ids[0] == 0 and 1 in ids and 2 in ids
    assert tok.decode(ids) == "int a == b; return a"
    for b in ranks:
        assert b"int" not in b and b"==" not in b and b"return" not in b
    # pinned tokens match as substrings, like special tokens (documented), in encode_ordinary too
    assert tok.encode_ordinary("print") == tok.encode_ordinary("pr") + [0]


def test_pinned_tokens_default_ids_after_specials():
    tok = toksmith.train_from_iterator(
        ["abc hello world"] * 10,
        vocab_size=262,
        pattern="gpt2",
        special_tokens=["<s>"],
        pinned_tokens=["abc"],
    )
    assert tok.special_tokens == {"<s>": 260} and tok.pinned_tokens == {"abc": 261}


def test_train_from_counts_reuses_merge_loop():
    counts = {"hello": 10, " world": 7, "help": 3}
    tok = toksmith.train_from_counts(counts, vocab_size=262, pattern="gpt2")
    merges = reference.train(["hello"] * 10 + [" world"] * 7 + ["help"] * 3, r"\S+| \S+", 6)
    assert tok.merge_ids() == merges


def test_corpus_smaller_than_vocab_warns():
    with pytest.warns(UserWarning, match="ran out of pairs"):
        tok = toksmith.train_from_iterator(["ab"], vocab_size=1000, pattern="gpt2")
    assert tok.n_vocab == 257
    # a vocab_size far beyond what the corpus gives reserves nothing for merges that cannot
    # happen (it aborted the process on the allocation), and one past 32-bit ids is refused
    with pytest.warns(UserWarning, match="ran out of pairs"):
        assert toksmith.train_from_iterator(["ab"], vocab_size=2**32, pattern="gpt2").n_vocab == 257
    with pytest.raises(toksmith.VocabError, match="at most 4294967296"):
        toksmith.train_from_iterator(["ab"], vocab_size=2**40)


def test_progress_bars_run(capsys):
    tok = toksmith.train_from_iterator(
        ["some text here"] * 100, vocab_size=265, pattern="gpt2", progress=True
    )
    assert tok.n_vocab > 256
    assert "merging" in capsys.readouterr().err


def test_errors(tmp_path):
    with pytest.raises(toksmith.EmptyCorpusError):
        toksmith.train_from_iterator([], vocab_size=300)
    with pytest.raises(toksmith.EmptyCorpusError):
        toksmith.train_from_iterator(["", ""], vocab_size=300)
    with pytest.raises(toksmith.VocabError, match="at least 258"):
        toksmith.train_from_iterator(["abc"], vocab_size=257, special_tokens=["<a>", "<b>"])
    with pytest.raises(ValueError, match="twice"):
        toksmith.train_from_iterator(["abc"], vocab_size=300, special_tokens=["<a>", "<a>"])
    with pytest.raises(toksmith.PatternError, match="position"):
        toksmith.train_from_iterator(["abc"], vocab_size=300, pattern="(unclosed")
    with pytest.raises(TypeError):
        toksmith.train_from_iterator("a string", vocab_size=300)
    with pytest.raises(TypeError):
        toksmith.train_from_iterator([b"bytes"], vocab_size=300)
    with pytest.raises(FileNotFoundError):
        toksmith.train(tmp_path / "missing.txt", vocab_size=300)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"hello world\n" * 10 + b"\xff\xfe oops")
    with pytest.raises(
        toksmith.CorpusDecodeError, match=r"bad\.txt.*offset 120.*errors=\"replace\""
    ):
        toksmith.train(bad, vocab_size=300)
    tok = toksmith.train(bad, vocab_size=266, errors="replace")
    assert tok.n_vocab > 256
    with pytest.raises(ValueError):
        toksmith.train(bad, vocab_size=300, errors="ignore")


def test_jsonl_decode_errors_name_the_line_and_upper_case_suffix(tmp_path):
    """Invalid UTF-8 in a .jsonl is a CorpusDecodeError naming file and line (it was a bare
    UnicodeDecodeError); ``errors="replace"`` reads it with U+FFFD; ``.JSONL`` is JSON lines too."""
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"text": "hello world"}\n' * 3 + b'{"text": "caf\xe9 au lait"}\n')
    with pytest.raises(
        toksmith.CorpusDecodeError, match=r"bad\.jsonl:4: not valid UTF-8.*errors=\"replace\""
    ):
        toksmith.train(bad, vocab_size=300)
    tok = toksmith.train(bad, vocab_size=258, errors="replace", pattern="gpt2")
    assert tok.metadata["corpus"]["texts"] == 4
    assert tok.metadata["corpus"]["bytes"] == 3 * len("hello world") + len(
        "caf\ufffd au lait".encode()
    )
    upper = tmp_path / "c.JSONL"
    upper.write_text('{"text": "hello world"}\n' * 3, encoding="utf-8")
    a = toksmith.train(upper, vocab_size=262, pattern="gpt2")
    b = toksmith.train_from_iterator(["hello world"] * 3, vocab_size=262, pattern="gpt2")
    assert a.merge_ids() == b.merge_ids()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_pipes_broken_links_and_bytes_paths(tmp_path):
    """A pipe inside a folder is skipped (reading it hung forever); a pipe named directly is
    read as a stream (``toksmith train <(xzcat corpus.xz)``); a broken link is named; a bytes
    path is a TypeError (it was iterated as ints)."""
    import threading

    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.txt").write_text("hello world\n" * 20, encoding="utf-8")
    os.mkfifo(folder / "pipe")
    tok = toksmith.train(folder, vocab_size=262, pattern="gpt2")
    assert tok.metadata["corpus"]["sources"] == [str(folder / "a.txt")]
    expected = toksmith.train_from_iterator(["hello world\n" * 20], vocab_size=262, pattern="gpt2")
    assert tok.merge_ids() == expected.merge_ids()

    def feed():
        with open(folder / "pipe", "w", encoding="utf-8") as f:
            f.write("hello world\n" * 20)

    writer = threading.Thread(target=feed)
    writer.start()
    streamed = toksmith.train(folder / "pipe", vocab_size=262, pattern="gpt2")
    writer.join()
    assert streamed.merge_ids() == expected.merge_ids()

    (folder / "gone.txt").symlink_to(tmp_path / "nowhere.txt")
    with pytest.raises(FileNotFoundError, match=r"gone\.txt.*broken symbolic link"):
        toksmith.train(folder, vocab_size=262)
    with pytest.raises(FileNotFoundError, match="broken symbolic link"):
        toksmith.train(folder / "gone.txt", vocab_size=262)
    with pytest.raises(TypeError, match="not bytes"):
        toksmith.train(os.fsencode(folder), vocab_size=262)


@pytest.mark.parametrize("suffix", [".xz", ".gz", ".bz2", ".LZMA"])
def test_compressed_corpora_give_the_plain_files_merges(tmp_path, corpus_slices, suffix):
    """Compressed files (plain text and JSON lines) are decompressed as they are read, in blocks
    (the named pattern's safe cuts) or whole (a custom regex): the merges of the plain files."""
    import bz2
    import gzip
    import lzma

    opener = {
        ".xz": lzma.open,
        ".gz": gzip.open,
        ".bz2": bz2.open,
        ".LZMA": lambda p, m, **kw: lzma.open(p, m, format=lzma.FORMAT_ALONE, **kw),
    }[suffix]
    text = corpus_slices["english"] + corpus_slices["python"]
    paras = [p for p in text.split("\n\n") if p]
    with opener(tmp_path / f"c.txt{suffix}", "wt", encoding="utf-8") as f:
        f.write(text)
    with opener(tmp_path / f"c.jsonl{suffix}", "wt", encoding="utf-8") as f:
        f.writelines(json.dumps({"text": p}) + "\n" for p in paras)
    custom = r"\w+|\s+|[^\w\s]+"
    for pattern in ("cl100k", custom):
        plain = toksmith.train_from_iterator([text], vocab_size=700, pattern=pattern)
        packed = toksmith.train(
            tmp_path / f"c.txt{suffix}", vocab_size=700, pattern=pattern, threads=2
        )
        assert packed.merge_ids() == plain.merge_ids()
        assert packed.metadata["corpus"]["bytes"] == len(text.encode())
    jl = toksmith.train(tmp_path / f"c.jsonl{suffix}", vocab_size=700)
    assert jl.merge_ids() == toksmith.train_from_iterator(paras, vocab_size=700).merge_ids()


def test_compressed_stream_in_small_blocks_equals_whole(corpus_slices):
    """The native stream reader with tiny blocks (cuts everywhere) counts what one text does."""
    import io

    from toksmith import _core
    from toksmith.pretokenize import PATTERNS

    text = "".join(corpus_slices.values())
    whole = _core.ChunkCounter(PATTERNS["gpt2"])
    whole.add_texts([text])
    streamed = _core.ChunkCounter(PATTERNS["gpt2"])
    streamed.add_stream(io.BytesIO(text.encode()), "mem", False, 1, 4096)
    assert streamed.stats()["bytes"] == whole.stats()["bytes"]
    assert streamed.stats()["pieces"] == whole.stats()["pieces"]
    assert streamed.train(50, None, 1, 0, None) == whole.train(50, None, 1, 0, None)


def test_corrupt_compressed_corpora_are_named(tmp_path):
    import gzip
    import lzma

    data = lzma.compress(("hello world\n" * 5000).encode())
    (tmp_path / "cut.txt.xz").write_bytes(data[: len(data) // 2])
    (tmp_path / "not.txt.gz").write_bytes(b"this is not gzip")
    (tmp_path / "bad.txt.bz2").write_bytes(b"BZh9 and then garbage")
    (tmp_path / "latin1.txt.gz").write_bytes(
        gzip.compress("hello w\u00f6rld\n".encode("latin-1") * 10)
    )
    for name, what in [
        ("cut.txt.xz", "not a valid .xz file"),
        ("not.txt.gz", "not a valid .gz file"),
        ("bad.txt.bz2", "not a valid .bz2 file"),
        ("latin1.txt.gz", "not valid UTF-8"),
    ]:
        with pytest.raises(toksmith.CorpusDecodeError, match=what) as info:
            toksmith.train(tmp_path / name, vocab_size=300)
        assert name in str(info.value)
    tok = toksmith.train(
        tmp_path / "latin1.txt.gz", vocab_size=262, errors="replace", pattern="gpt2"
    )
    assert tok.metadata["corpus"]["bytes"] == len("hello w\ufffdrld\n".encode()) * 10


def test_pattern_that_finds_no_piece_is_named():
    """A custom pattern whose matches are all empty leaves nothing to count: the error says so
    (it said the corpus was empty)."""
    for pat in ["x*", "x?"]:  # (the empty pattern is refused earlier: a PatternError)
        with pytest.raises(
            toksmith.EmptyCorpusError, match=r"found no non-empty piece in the 11 bytes"
        ):
            toksmith.train_from_iterator(["hello world"], vocab_size=300, pattern=pat)
    # a pattern that can match only the empty string is refused earlier too, as the empty one is
    with pytest.raises(toksmith.PatternError, match="can match only the empty string"):
        toksmith.train_from_iterator(["hello world"], vocab_size=300, pattern="(?=a)")


def test_custom_regex_training(corpus_slices):
    pat = r"\w+|[^\w\s]+|\s+"
    texts = docs_of(corpus_slices, 8000)
    tok = toksmith.train_from_iterator(texts, vocab_size=300, pattern=pat)
    assert tok.merge_ids() == reference.train(texts, pat, 44)
    assert tok.pattern == pat and tok.pattern_name is None


def test_out_of_range_numbers_are_value_errors():
    """Numbers too big for the core are refused up front (they raised OverflowError from the
    glue, or, as counts, silently wrapped around in the merge loop's 64-bit pair counts)."""
    for kwargs, match in (
        ({"threads": 2**70}, "threads must be between 1 and 4096"),
        ({"min_frequency": 2**70}, "min_frequency must be between 0"),
        ({"max_token_length": 2**70}, "max_token_length must be between 1 and 2\\*\\*32"),
    ):
        with pytest.raises(ValueError, match=match):
            toksmith.train_from_iterator(["ab ab"] * 3, vocab_size=300, **kwargs)
    with pytest.raises(ValueError, match="between 1 and 4096"):
        toksmith.train_from_iterator(["ab"] * 2, vocab_size=257).encode_ordinary_batch(
            ["a"], threads=2**70
        )
    with pytest.raises(ValueError, match="must be between 0 and"):
        toksmith.train_from_counts({"ab": 2**64}, vocab_size=300)
    with pytest.raises(TypeError, match="must be an int"):
        toksmith.train_from_counts({"ab": True}, vocab_size=300)
    # two chunks whose shared pair would count 2 * (2**63 - 1): refused, not wrapped around
    with pytest.raises(ValueError, match="counts are too large"):
        toksmith.train_from_counts({"ab": 2**63 - 1, "abc": 2**63 - 1}, vocab_size=260)
    # big counts that fit give the reference's merges
    counts = {"ab": 2**61, "abc": 2**61, "bc": 2**60}
    with pytest.warns(UserWarning, match="ran out of pairs"):
        tok = toksmith.train_from_counts(counts, vocab_size=260, pattern="gpt2")
    assert tok.merges()[:2] == [(b"a", b"b"), (b"ab", b"c")]


def test_lone_surrogates_in_texts_name_the_text_or_train_as_replacement(tmp_path):
    texts = ["plain text here"] * 3 + ["bad \ud800 text here", "more text"]
    with pytest.raises(
        toksmith.CorpusDecodeError,
        match=r"text 3 of the iterable .*U\+D800 at index 4.*errors=\"replace\"",
    ):
        toksmith.train_from_iterator(texts, vocab_size=270, pattern="gpt2")
    with pytest.raises(ValueError, match="errors must be 'strict' or 'replace'"):
        toksmith.train_from_iterator(texts, vocab_size=270, pattern="gpt2", errors="ignore")
    got = toksmith.train_from_iterator(texts, vocab_size=270, pattern="gpt2", errors="replace")
    fixed = [t.replace("\ud800", "\ufffd") for t in texts]
    want = toksmith.train_from_iterator(fixed, vocab_size=270, pattern="gpt2")
    assert got.merge_ids() == want.merge_ids()
    assert got.merge_ids() == reference.train(fixed, PATTERNS["gpt2"], 14)

    # a \uD800 escape in a JSON line: named by file, line and field; replaced if asked
    p = tmp_path / "c.jsonl"
    lines = [{"text": t} for t in texts]
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    assert "\\ud800" in p.read_text(encoding="utf-8")
    with pytest.raises(
        toksmith.CorpusDecodeError,
        match=r"c\.jsonl:4: field 'text' holds a lone surrogate \(U\+D800",
    ):
        toksmith.train([p], vocab_size=270, pattern="gpt2")
    from_file = toksmith.train([p], vocab_size=270, pattern="gpt2", errors="replace")
    assert from_file.merge_ids() == want.merge_ids()
    # a surrogate pair escape is one character, not an error
    q = tmp_path / "pair.jsonl"
    q.write_text(json.dumps({"text": "emoji \U0001f600 " * 5}) + "\n", encoding="utf-8")
    assert "\\ud83d\\ude00" in q.read_text(encoding="utf-8")
    tok = toksmith.train([q], vocab_size=258, pattern="gpt2")
    assert tok.decode(tok.encode("emoji \U0001f600")) == "emoji \U0001f600"


def test_an_empty_path_is_refused_not_the_current_folder(tmp_path, monkeypatch, capsys):
    # was: Path("") is ".": every file under the working folder was read as training text
    (tmp_path / "secret.txt").write_text("not a corpus " * 50, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for paths in ("", [""], [str(tmp_path / "secret.txt"), ""]):
        with pytest.raises(ValueError, match=r"a path is empty.*'\.' for the current folder"):
            toksmith.train(paths, vocab_size=260)
    from toksmith.presets import cppreason

    with pytest.raises(ValueError, match="a path is empty"):
        cppreason.train("", vocab_size=1900)
    from toksmith.cli import main

    assert main(["train", "", "-o", str(tmp_path / "t.json")]) != 0
    assert "a path is empty" in capsys.readouterr().err
    assert not (tmp_path / "t.json").exists()
    # "." still means the current folder when it is asked for
    assert toksmith.train(".", vocab_size=260).n_vocab == 260


TEXTS = ["hello world, the quick brown fox"] * 20


def test_numpy_integers_are_taken_as_threads_and_ids_are():
    # was: TypeError for vocab_size/min_frequency/max_token_length/counts, ValueError for fixed ids
    want = toksmith.train_from_iterator(
        TEXTS,
        vocab_size=270,
        pattern="gpt2",
        special_tokens={"<a>": 269},
        min_frequency=2,
        max_token_length=4,
    )
    got = toksmith.train_from_iterator(
        TEXTS,
        vocab_size=np.int64(270),
        pattern="gpt2",
        special_tokens={"<a>": np.uint32(269)},
        min_frequency=np.int32(2),
        max_token_length=np.int64(4),
    )
    assert got.merge_ids() == want.merge_ids() and got.special_tokens == {"<a>": 269}
    assert type(got.special_tokens["<a>"]) is int
    counts = toksmith.train_from_counts(
        {"hello": np.int64(5), "help": 2}, vocab_size=260, pattern="gpt2"
    )
    assert (
        counts.merge_ids()
        == toksmith.train_from_counts(
            {"hello": 5, "help": 2}, vocab_size=260, pattern="gpt2"
        ).merge_ids()
    )
    with pytest.raises(TypeError, match="vocab_size must be an int, not bool"):
        toksmith.train_from_iterator(TEXTS, vocab_size=np.True_)
    with pytest.raises(ValueError, match="is not a valid id"):
        toksmith.train_from_iterator(TEXTS, vocab_size=270, special_tokens={"<a>": np.True_})


def test_a_set_of_special_tokens_gets_the_same_ids_in_every_run():
    # was: a set was taken in its hash order, so the ids changed from one run to the next
    code = (
        "import toksmith; print(toksmith.train_from_iterator(['ab ab'], vocab_size=262, pattern='gpt2', "
        "special_tokens={'<d>', '<b>', '<c>', '<a>'}).special_tokens)"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
        ).stdout.strip()
        for seed in (1, 2, 3)
    }
    assert outs == {
        "{'<a>': 258, '<b>': 259, '<c>': 260, '<d>': 261}"
    }  # sorted, whatever the hash seed
    tok = toksmith.train_from_iterator(
        TEXTS, vocab_size=270, pinned_tokens=frozenset({"fox", "brown"})
    )
    assert (
        tok.pinned_tokens
        == toksmith.train_from_iterator(
            TEXTS, vocab_size=270, pinned_tokens=["brown", "fox"]
        ).pinned_tokens
    )
    with pytest.raises(ValueError, match="is not a non-empty str"):
        toksmith.train_from_iterator(TEXTS, vocab_size=270, special_tokens={"<a>", 5})


def test_bad_special_token_arguments_say_what_was_wrong():
    # was: a bare UnicodeEncodeError ("'utf-8' codec can't encode") and "'int' object is not iterable"
    for kw in ({"special_tokens": ["ok", "x\ud800"]}, {"pinned_tokens": {"\udfff": 260}}):
        with pytest.raises(ValueError, match=r"_tokens: .* holds a lone surrogate \(U\+D[8F]"):
            toksmith.train_from_iterator(TEXTS, vocab_size=270, **kw)
    with pytest.raises(
        TypeError, match="special_tokens must be a list of str or a dict str -> id, not int"
    ):
        toksmith.train_from_iterator(TEXTS, vocab_size=270, special_tokens=5)


def test_many_special_tokens_are_checked_in_linear_time():
    # was: the duplicate check was quadratic (20000 specials took about 5 s)
    names = [f"<|s{i}|>" for i in range(40000)]
    tok = toksmith.train_from_iterator(
        ["ab ab"],
        vocab_size=257 + len(names),
        pattern="gpt2",
        special_tokens=names[:20000],
        pinned_tokens=names[20000:],
    )
    assert tok.n_vocab == 257 + len(names)
    with pytest.raises(ValueError, match=r"\['<\|s7\|>'\] given twice"):
        toksmith.train_from_iterator(
            ["ab"], vocab_size=300000, special_tokens=names, pinned_tokens=["<|s7|>"]
        )


def test_train_from_counts_cuts_chunks_around_pinned_tokens():
    # was: merges were learned across and into pinned tokens (b"in", b"int", b"pr"+b"int"), wasting the vocabulary
    kw = dict(vocab_size=270, pattern="gpt2", pinned_tokens=["int", "in"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = toksmith.train_from_counts({"int x": 100, b"printing": 50}, **kw)
        want = toksmith.train_from_iterator(["int x"] * 100 + ["printing"] * 50, **kw)
    assert got.merge_ids() == want.merge_ids()
    assert not any(b"in" in t for t in got.mergeable_ranks() if len(t) > 1)


def test_train_from_counts_malformed_inputs_are_named():
    # was: "too many values to unpack", "not enough values to unpack", a bare UnicodeEncodeError
    for counts, match in (
        ("hello", "not str"),
        (None, "not NoneType"),
        (["hello", "world"], "an item is 'hello'"),
        ([("hello", 5, 1)], r"an item is \('hello', 5, 1\)"),
    ):
        with pytest.raises(
            TypeError, match="counts must be a dict {chunk: count} or an iterable of .*" + match
        ):
            toksmith.train_from_counts(counts, vocab_size=260)
    with pytest.raises(
        ValueError, match=r"chunk 'he\\ud800' holds a lone surrogate \(U\+D800 at index 2\)"
    ):
        toksmith.train_from_counts({"he\ud800": 3}, vocab_size=260)
    # generators of pairs and lists of lists stay accepted; repeated chunks add up
    a = toksmith.train_from_counts(
        (p for p in [["hello", 3], ("hello", 4), ("help", 5)]), vocab_size=261, pattern="gpt2"
    )
    assert (
        a.merge_ids()
        == toksmith.train_from_counts(
            {"hello": 7, "help": 5}, vocab_size=261, pattern="gpt2"
        ).merge_ids()
    )


def test_progress_bar_ends_where_the_corpus_ran_out(capsys):
    # was: the merging bar stayed at 0/44 when the corpus ran out of pairs after 9 merges
    with pytest.warns(UserWarning, match="ran out of pairs"):
        toksmith.train_from_iterator(
            ["hello world"] * 5, vocab_size=300, pattern="gpt2", progress=True
        )
    err = capsys.readouterr().err
    assert "merging" in err and "9/44" in err
