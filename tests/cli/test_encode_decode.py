"""`toksmith encode` and `toksmith decode`: id file formats, blocks, outputs, round trips."""

import bz2
import gzip
import io
import json
import os
import sys
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toksmith
from tests.cli.helpers import _err
from tests.complexity import assert_linear
from toksmith.cli import main


def _reference_cut(text, lo=0, avoid=()):
    """last_safe_cut as first written: one character at a time."""
    from toksmith.streaming import cut_lookahead

    need = cut_lookahead(avoid)
    letter = lambda c: c.isascii() and c.isalpha()  # noqa: E731

    def clear(i):
        if not avoid:
            return True
        if i + need > len(text):
            return False
        return all(text.find(t, max(0, i - 1 - len(t)), i + 1 + len(t)) < 0 for t in avoid)

    for i in range(len(text) - 2, max(lo, 1) - 1, -1):
        if text[i] == "\n" and "!" <= text[i - 1] <= "~" and letter(text[i + 1]) and clear(i + 1):
            return i + 1
    for i in range(len(text) - 2, max(lo, 1) - 1, -1):
        if text[i] == " " and letter(text[i - 1]) and letter(text[i + 1]) and clear(i):
            return i
    return 0


_text = st.text(st.characters(codec="utf-8", exclude_characters="\r"), max_size=60) | st.lists(
    st.sampled_from(
        ["New York", "\r\n", "\n", " ", "é", "😀", "<|bos|>", "a", ".\n/", "\x00", "\t"]
    ),
    max_size=30,
).map("".join)


@pytest.mark.parametrize("content", [b"104 --1", b"--1\n", b"1" * 5000 + b"\n", b"104 +-3"])
def test_decode_malformed_numbers_are_error_messages(tok_path, tmp_path, capsys, content):
    """Audit finding:  "--1" and a number of 5000 digits made ``int`` fail where the fallback looked for a word
    that is no digit run: StopIteration, seen as "RuntimeError: generator raised StopIteration"."""
    ids = tmp_path / "ids.txt"
    ids.write_bytes(content)
    assert main(["decode", "-t", str(tok_path), str(ids), "-o", str(tmp_path / "out")]) == 1
    assert "is not an integer token id" in _err(capsys)


def test_decode_text_without_whitespace_stops_early(tok_path, capsys, monkeypatch):
    """Audit finding: A run without whitespace was carried (and copied) block after block to the end of the
    input: quadratic, and unbounded on a binary file. Over 1 MiB of it is an error at once."""

    class Endless(io.RawIOBase):
        reads = 0

        def readable(self):
            return True

        def readinto(self, b):
            Endless.reads += 1
            assert Endless.reads < 8, "read on and on"
            b[:] = b"7" * len(b)
            return len(b)

    class Stdin:
        buffer = io.BufferedReader(Endless(), 1 << 20)

    monkeypatch.setattr(sys, "stdin", Stdin)
    assert main(["decode", "-t", str(tok_path), "-", "-o", os.devnull]) == 1
    assert "without whitespace" in _err(capsys)


@pytest.mark.parametrize("kind", ["empty", "npz", "text", "bool", "float", "truncated"])
def test_decode_npy_that_is_no_id_array(tok_path, tmp_path, capsys, kind):
    """Audit finding: An empty .npy was "EOFError: No data left in file" (a traceback), an .npz
    "AttributeError: 'NpzFile' object has no attribute 'ndim'", text "This file contains pickled
    (object) data", and a bool array decoded as ids 1 and 0 without a word."""
    np = pytest.importorskip("numpy")
    path = tmp_path / "ids.npy"
    if kind == "empty":
        path.write_bytes(b"")
    elif kind == "npz":
        with open(path, "wb") as f:
            np.savez(f, a=np.array([1, 2]))
    elif kind == "text":
        path.write_bytes(b"104 105\n")
    elif kind == "bool":
        np.save(path, np.array([True, False]))
    elif kind == "float":
        np.save(path, np.array([104.0]))
    else:
        np.save(path, np.arange(100, dtype=np.uint16))
        path.write_bytes(path.read_bytes()[:150])
    out = tmp_path / "out.txt"
    assert main(["decode", "-t", str(tok_path), str(path), "-o", str(out)]) == 1
    err = _err(capsys)
    assert "ids.npy" in err and err.count("\n") == 1, err
    assert not out.exists()  # issue 36: an output appears only when complete


def test_decode_npy_from_a_pipe(tok_path, tmp_path, capsys, monkeypatch):
    """Audit finding: ``encode --format npy -o ids.npy; decode --format npy < ids.npy`` through a pipe was
    "File or stream is not seekable."."""
    pytest.importorskip("numpy")
    text = "piped New York\n<|bos|> é😀\n"
    src = tmp_path / "in.txt"
    src.write_text(text, encoding="utf-8")
    ids = tmp_path / "ids.npy"
    assert main(["encode", "-t", str(tok_path), str(src), "--format", "npy", "-o", str(ids)]) == 0

    class Pipe(io.RawIOBase):
        data = io.BytesIO(ids.read_bytes())

        def readable(self):
            return True

        def readinto(self, b):
            n = self.data.readinto(b)
            return n

    class Stdin:
        buffer = io.BufferedReader(Pipe())

    assert not Stdin.buffer.seekable()
    monkeypatch.setattr(sys, "stdin", Stdin)
    out = tmp_path / "out.txt"
    assert main(["decode", "-t", str(tok_path), "--format", "npy", "-o", str(out)]) == 0
    assert out.read_bytes() == text.encode()


@pytest.mark.parametrize(
    "suffix,compress", [(".npy.gz", gzip.compress), (".json.bz2", bz2.compress)]
)
def test_decode_auto_format_of_compressed_ids(tok_path, tmp_path, suffix, compress):
    """Audit finding: decode reads .gz/.bz2 files (README), but ``--format auto`` looked at the outer extension:
    ids.npy.gz was parsed as text ("b'\\x93NUMPY...' is not an integer token id")."""
    pytest.importorskip("numpy")
    text = "compressed ids\n"
    src = tmp_path / "in.txt"
    src.write_text(text, encoding="utf-8")
    fmt = suffix.split(".")[1]
    plain = tmp_path / f"ids.{fmt}"
    assert main(["encode", "-t", str(tok_path), str(src), "--format", fmt, "-o", str(plain)]) == 0
    packed = tmp_path / f"ids{suffix}"
    packed.write_bytes(compress(plain.read_bytes()))
    out = tmp_path / "out.txt"
    assert main(["decode", "-t", str(tok_path), str(packed), "-o", str(out)]) == 0
    assert out.read_bytes() == text.encode()


@pytest.mark.parametrize(
    "line,message",
    [
        (b"null", "expected a JSON list of token ids, not null"),
        (b'{"a": 1}', "expected a JSON list of token ids"),
        (b"5", "expected a JSON list of token ids, not 5"),
        (b"[true]", "true is not an integer token id"),
        (b"[[104]]", "[104] is not an integer token id"),
        (b"[104, \xff]", "not valid JSON"),
    ],
)
def test_decode_json_that_is_no_id_list(tok_path, tmp_path, capsys, line, message):
    """Audit finding: A JSON line that is no list was "'NoneType' object is not iterable" (no file, no line),
    an object "ids must be ints, got str" (its keys), and ``true`` decoded as id 1."""
    path = tmp_path / "ids.jsonl"
    path.write_bytes(b"[104]\n" + line + b"\n")
    assert main(["decode", "-t", str(tok_path), str(path), "--lines", "-o", os.devnull]) == 1
    err = _err(capsys)
    assert "ids.jsonl:2: " in err and message in err, err
    whole = tmp_path / "ids.json"
    whole.write_bytes(line)
    assert main(["decode", "-t", str(tok_path), str(whole), "-o", os.devnull]) == 1
    err = _err(capsys)
    assert "ids.json: " in err and message in err, err


def test_decode_lines_with_npy_is_refused(tok_path, tmp_path, capsys):
    """Audit finding: encode refuses --lines with --format npy; decode ignored --lines for a .npy input."""
    np = pytest.importorskip("numpy")
    path = tmp_path / "ids.npy"
    np.save(path, np.array([104, 105], dtype=np.uint16))
    out = tmp_path / "out.txt"
    assert main(["decode", "-t", str(tok_path), str(path), "--lines", "-o", str(out)]) == 1
    assert "--lines" in _err(capsys)


@pytest.mark.parametrize("command", ["encode", "decode"])
def test_output_that_is_the_input_is_refused(tok_path, tmp_path, capsys, monkeypatch, command):
    """Audit finding: ``-o`` naming the input (or a link to it) truncated it before it was read: the input was
    lost and the output was "\\n" (encode) or empty (decode), exit status 0."""
    data = b"hello world\n" if command == "encode" else b"104 105\n"
    src = tmp_path / "in.txt"
    src.write_bytes(data)
    link = tmp_path / "link.txt"
    link.symlink_to(src)
    for out in (src, link):
        assert main([command, "-t", str(tok_path), str(src), "-o", str(out)]) == 1
        assert "is the input file" in _err(capsys)
        assert src.read_bytes() == data
    # stdin redirected from the file with -o naming it; stdout appending to the input file
    with open(src, "rb") as fin:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(fin))
        assert main([command, "-t", str(tok_path), "-o", str(src)]) == 1
    assert "is the input file" in _err(capsys)
    with open(src, "ab") as fout:
        monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(fout))
        assert main([command, "-t", str(tok_path), str(src)]) == 1
    assert "is the input file" in _err(capsys)
    assert src.read_bytes() == data


@pytest.mark.parametrize("size", [2**40, 2**62, 2**70])
def test_encode_huge_block_size(tok_path, tmp_path, capsys, size):
    """Audit finding: --block-size 2**40 was a MemoryError traceback (the read allocates the block), 2**70
    "OverflowError: cannot fit 'int' into an index-sized integer"."""
    src = tmp_path / "in.txt"
    src.write_text("hello\n", encoding="utf-8")
    for mode in ([], ["--lines"]):
        assert (
            main(
                [
                    "encode",
                    "-t",
                    str(tok_path),
                    str(src),
                    "--block-size",
                    str(size),
                    "-o",
                    os.devnull,
                ]
                + mode
            )
            == 1
        )
        assert "--block-size must be at most" in _err(capsys)


@given(
    prefix=st.text(max_size=30),
    bad=st.sampled_from([b"\xff", b"\xe2\x82", b"\xf0\x9f\x98", b"\xc3"]),
    tail=st.sampled_from([b"", b"x", b"abc", b"\xe2\x82\xac"]),
    block=st.integers(1, 8),
)
@settings(max_examples=60, deadline=None)
def test_invalid_utf8_offset_does_not_depend_on_the_block_size(tok_path, prefix, bad, tail, block):
    """Audit finding: The offset named in the error was that of the start of the block holding the rest of a
    character cut by the previous block (b"ab\\xe2\\x82xyz", blocks of 4: offset 4, not 2)."""
    from toksmith.errors import CorpusDecodeError
    from toksmith.streaming import encode_stream

    head = prefix.encode()
    data = head + bad + tail
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        where = e.start
    tok = toksmith.load(tok_path)
    with pytest.raises(CorpusDecodeError, match=f"at byte offset {where};"):
        list(encode_stream(tok, io.BytesIO(data), block_size=block))


@given(
    text=st.lists(st.sampled_from(list("ab Z.\n\n  !é\t") + ["New York", "a\nb"]), max_size=40).map(
        "".join
    ),
    lo=st.integers(0, 45),
    avoid=st.lists(st.sampled_from(["New York", "a\nb", "b\nZ"]), max_size=2),
    pad=st.sampled_from([0, 5000, 9000]),
)
@settings(max_examples=150, deadline=None)
def test_cut_search_on_whitespace_runs_is_fast_and_unchanged(text, lo, avoid, pad):
    """Audit finding: A long run of spaces or newlines was searched for a cut one character at a time in
    Python (0.6 s per MB of spaces, 12 s to encode 20 MB); the regex search finds the same places
    (``pad`` puts them across the search windows)."""
    from toksmith.streaming import last_safe_cut

    text = text + " " * pad + text[::-1]
    assert last_safe_cut(text, lo, avoid) == _reference_cut(text, lo, avoid)


def test_cut_search_on_a_long_whitespace_run_is_linear():
    from toksmith.streaming import last_safe_cut

    for unit in (" ", "\n", ". \n"):
        runs = {n: unit * n for n in (100_000, 800_000)}  # was 1.2 s per 2 MB of spaces
        assert last_safe_cut(runs[800_000], 0) == 0
        assert_linear(lambda n: last_safe_cut(runs[n], 0), 100_000)


@given(
    text=_text,
    fmt=st.sampled_from(["text", "json", "npy"]),
    block=st.integers(1, 64),
    special=st.booleans(),
)
@settings(max_examples=40, deadline=None)
def test_encode_decode_reproduces_the_bytes(tok_path, tmp_path_factory, text, fmt, block, special):
    """Audit finding: README: ``encode | decode`` gives the same bytes, in every output format, for any block
    size, with and without --allow-special, inputs without a final newline and CRLF included."""
    if fmt == "npy":
        pytest.importorskip("numpy")
    d = tmp_path_factory.mktemp("rt")
    src, ids, back = d / "in.txt", d / f"ids.{fmt}", d / "back.txt"
    src.write_bytes(text.encode())
    extra = ["--allow-special"] if special else []
    assert (
        main(
            [
                "encode",
                "-t",
                str(tok_path),
                str(src),
                "--format",
                fmt,
                "--block-size",
                str(block),
                "-o",
                str(ids),
            ]
            + extra
        )
        == 0
    )
    assert main(["decode", "-t", str(tok_path), str(ids), "-o", str(back)]) == 0
    assert back.read_bytes() == src.read_bytes()


@given(
    lines=st.lists(
        st.text(st.characters(codec="utf-8", exclude_characters="\n"), max_size=20), max_size=8
    ),
    fmt=st.sampled_from(["text", "json"]),
)
@settings(max_examples=30, deadline=None)
def test_encode_lines_round_trip(tok_path, tmp_path_factory, lines, fmt):
    """Audit finding: --lines: one line of ids per input line (empty lines included), decoded back line by line."""
    d = tmp_path_factory.mktemp("lines")
    src, ids, back = d / "in.txt", d / "ids.out", d / "back.txt"
    data = "".join(line + "\n" for line in lines).encode()
    src.write_bytes(data)
    assert (
        main(["encode", "-t", str(tok_path), str(src), "--lines", "--format", fmt, "-o", str(ids)])
        == 0
    )
    assert ids.read_bytes().count(b"\n") == len(lines)
    assert (
        main(["decode", "-t", str(tok_path), str(ids), "--lines", "--format", fmt, "-o", str(back)])
        == 0
    )
    assert back.read_bytes() == data


def test_pattern_option_for_rank_files_that_store_none(tok_path, tmp_path, capsys, corpus_slices):
    """Audit finding: The warning for a .tiktoken file that is not OpenAI's says to pass --pattern: encode,
    decode and info take it (before, only convert and train had it)."""
    tok = toksmith.train_from_iterator(
        list(corpus_slices.values()), vocab_size=400, pattern="nanochat", threads=1
    )
    rank_file = tmp_path / "mine.tiktoken"
    tok.save_tiktoken(rank_file)
    text = tmp_path / "in.txt"
    sample = "Hello world, it's 12345 New York!\n  x"
    text.write_text(sample, encoding="utf-8")
    out = tmp_path / "ids.txt"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "pass pattern= (or --pattern)" warning once it is given
        assert (
            main(
                ["encode", "-t", str(rank_file), "--pattern", "nanochat", str(text), "-o", str(out)]
            )
            == 0
        )
        ids = [int(x) for x in out.read_text().split()]
        plain = toksmith.Tokenizer.from_ranks(tok.mergeable_ranks(), "nanochat")
        assert ids == plain.encode_ordinary(sample)
        assert (
            main(
                [
                    "decode",
                    "-t",
                    str(rank_file),
                    "--pattern",
                    "nanochat",
                    str(out),
                    "-o",
                    str(tmp_path / "back.txt"),
                ]
            )
            == 0
        )
        assert (tmp_path / "back.txt").read_text(encoding="utf-8") == sample
        assert main(["info", "-t", str(rank_file), "--pattern", "nanochat", "--json"]) == 0
        info = json.loads(capsys.readouterr().out)
        assert info["pattern"] == plain.pattern
    # the pattern changes the ids: gpt2 splits "'s" and digits differently from nanochat
    assert (
        main(["encode", "-t", str(rank_file), "--pattern", "gpt2", str(text), "-o", str(out)]) == 0
    )
    assert [int(x) for x in out.read_text().split()] == toksmith.Tokenizer.from_ranks(
        tok.mergeable_ranks(), "gpt2"
    ).encode_ordinary(sample)
    # a file that stores its own pattern refuses it, as does an empty one
    assert (
        main(["encode", "-t", str(tok_path), "--pattern", "gpt2", str(text), "-o", str(out)]) == 1
    )
    assert "stores its own split pattern" in _err(capsys)
    assert main(["info", "-t", str(rank_file), "--pattern", ""]) == 1
    assert "--pattern is empty" in _err(capsys)


@pytest.mark.parametrize("fmt", ["json", "npy", "text"])
def test_decode_of_piped_ids_finds_their_format(tok_path, tmp_path, monkeypatch, fmt):
    # was: `toksmith encode --format json | toksmith decode` failed ("is not an integer token id"): on
    # stdin (no extension) "auto" always meant text
    sample = "Hello world, New York!\n  it's 42\n"
    (tmp_path / "in.txt").write_text(sample, encoding="utf-8")
    ids = tmp_path / f"ids.{fmt}"
    assert (
        main(
            [
                "encode",
                "-t",
                str(tok_path),
                "--format",
                fmt,
                str(tmp_path / "in.txt"),
                "-o",
                str(ids),
            ]
        )
        == 0
    )
    piped = (
        b"\n " + ids.read_bytes() if fmt == "json" else ids.read_bytes()
    )  # leading whitespace is fine
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(piped))))
    out = tmp_path / "back.txt"
    assert main(["decode", "-t", str(tok_path), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == sample
    # a file whose name tells nothing is sniffed too
    plain = tmp_path / "ids"
    plain.write_bytes(ids.read_bytes())
    assert main(["decode", "-t", str(tok_path), str(plain), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == sample


@pytest.mark.parametrize("command", ["train", "encode", "eval"])
def test_threads_option_is_checked_alike(tok_path, tmp_path, capsys, command):
    # was: `toksmith train --threads 0` said "threads must be ... (or None for all cores)", a Python word
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world " * 20, encoding="utf-8")
    argv = {
        "train": ["train", str(corpus), "-o", str(tmp_path / "t.json")],
        "encode": ["encode", "-t", str(tok_path), str(corpus), "-o", str(tmp_path / "ids.txt")],
        "eval": ["eval", "-t", str(tok_path), "--corpus", f"c={corpus}"],
    }[command]
    for bad in ("0", "-2", "100000"):
        assert main(argv + ["--threads", bad]) == 1
        err = _err(capsys)
        assert (
            "--threads must be between 1 and" in err
            and f"not {bad} (leave it out for all cores)" in err
        )
        assert "None" not in err
    assert main(argv + ["--threads", "1"]) == 0
