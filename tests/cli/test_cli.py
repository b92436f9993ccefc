"""The CLI: train (default corpus and files), encode/decode exact inverses, info, errors."""

import json
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toksmith
from toksmith.cli import main


@pytest.fixture(scope="module")
def tok_file(tmp_path_factory, corpus_slices):
    d = tmp_path_factory.mktemp("cli")
    src = d / "corpus.txt"
    src.write_text("\n".join(corpus_slices.values()), encoding="utf-8")
    out = d / "tok.json"
    assert (
        main(
            [
                "train",
                str(src),
                "--vocab-size",
                "600",
                "--pattern",
                "nanochat",
                "--special",
                "<|bos|>",
                "--no-progress",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    return out


def test_train_default_corpus_via_entry_point(tmp_path):
    out = tmp_path / "default.json"
    r = subprocess.run(
        [sys.executable, "-m", "toksmith", "train", "--vocab-size", "300", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert "default corpus" in r.stderr
    assert toksmith.load(out).n_vocab == 300


def test_train_preset(tmp_path, corpus_slices):
    src = tmp_path / "c.txt"
    src.write_text(corpus_slices["english"], encoding="utf-8")
    out = tmp_path / "n.json"
    assert (
        main(
            [
                "train",
                str(src),
                "--preset",
                "nanochat",
                "--vocab-size",
                "400",
                "--no-progress",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    tok = toksmith.load(out)
    assert tok.pattern_name == "nanochat" and len(tok.special_tokens) == 9
    assert tok.special_tokens["<|bos|>"] == 391


def test_train_limits(tmp_path, corpus_slices):
    src = tmp_path / "c.txt"
    src.write_text(corpus_slices["english"], encoding="utf-8")
    out = tmp_path / "limited.json"
    assert (
        main(
            [
                "train",
                str(src),
                "--vocab-size",
                "1000",
                "--max-token-length",
                "5",
                "--min-frequency",
                "3",
                "--no-progress",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    tok = toksmith.load(out)
    assert max(map(len, tok.mergeable_ranks())) <= 5
    assert tok.metadata["min_frequency"] == 3 and tok.metadata["max_token_length"] == 5
    expected = toksmith.train([src], vocab_size=1000, min_frequency=3, max_token_length=5)
    assert tok.merge_ids() == expected.merge_ids()


def test_encode_decode_exact_inverse(tok_file, tmp_path, corpus_slices, capsysbinary):
    text = corpus_slices["cpp"][:20000] + "\r\n\n  trailing  <|bos|> \n"
    src = tmp_path / "in.txt"
    src.write_bytes(text.encode())
    ids_file = tmp_path / "ids.txt"
    assert main(["encode", "-t", str(tok_file), str(src), "-o", str(ids_file)]) == 0
    ids = [int(x) for x in ids_file.read_text().split()]
    assert ids == toksmith.load(tok_file).encode_ordinary(text)
    back = tmp_path / "back.txt"
    assert main(["decode", "-t", str(tok_file), str(ids_file), "-o", str(back)]) == 0
    assert back.read_bytes() == src.read_bytes()


@pytest.mark.parametrize("suffix", [".xz", ".gz", ".bz2"])
def test_compressed_input_files(tok_file, tmp_path, corpus_slices, suffix, capsys):
    """``encode``/``decode``/``eval`` read .xz/.gz/.bz2 files as they decompress (same output as
    the plain file); a corrupt archive is an error message naming it, not a traceback."""
    import bz2
    import gzip
    import lzma

    compress = {".xz": lzma.compress, ".gz": gzip.compress, ".bz2": bz2.compress}[suffix]
    text = corpus_slices["python"][:30000] + "\r\n tail\n"
    src = tmp_path / f"in.txt{suffix}"
    src.write_bytes(compress(text.encode()))
    ids_file = tmp_path / "ids.txt"
    assert (
        main(["encode", "-t", str(tok_file), str(src), "-o", str(ids_file), "--block-size", "4096"])
        == 0
    )
    ids = [int(x) for x in ids_file.read_text().split()]
    assert ids == toksmith.load(tok_file).encode_ordinary(text)
    packed = tmp_path / f"ids.txt{suffix}"
    packed.write_bytes(compress(ids_file.read_bytes()))
    back = tmp_path / "back.txt"
    assert main(["decode", "-t", str(tok_file), str(packed), "-o", str(back)]) == 0
    assert back.read_bytes() == text.encode()
    assert main(["eval", "-t", str(tok_file), "--corpus", f"py={src}", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [(r["corpus"], r["bytes"], r["tokens"]) for r in report] == [
        ("py", len(text.encode()), len(ids))
    ]
    data = compress(text.encode() * 4)
    bad = tmp_path / f"cut.txt{suffix}"
    bad.write_bytes(data[: len(data) // 2])
    for argv in (
        ["encode", "-t", str(tok_file), str(bad)],
        ["eval", "-t", str(tok_file), "--corpus", f"x={bad}"],
    ):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert f"cut.txt{suffix} is not a valid {suffix} file" in err, err


@pytest.mark.parametrize("fmt", ["json", "npy"])
def test_encode_formats(tok_file, tmp_path, corpus_slices, fmt):
    text = corpus_slices["python"][:8000]
    src = tmp_path / "in.txt"
    src.write_text(text, encoding="utf-8")
    out = tmp_path / f"ids.{fmt}"
    assert main(["encode", "-t", str(tok_file), str(src), "--format", fmt, "-o", str(out)]) == 0
    expected = toksmith.load(tok_file).encode_ordinary(text)
    if fmt == "json":
        assert json.loads(out.read_text()) == expected
    else:
        np = pytest.importorskip("numpy")
        arr = np.load(out)
        assert arr.dtype == np.uint16 and arr.tolist() == expected
    back = tmp_path / "back.txt"
    assert main(["decode", "-t", str(tok_file), str(out), "-o", str(back)]) == 0
    assert back.read_text(encoding="utf-8") == text


@given(
    ids=st.lists(st.integers(0, 2**32 - 1), max_size=50),
    sep=st.sampled_from([b" ", b",", b", ", b""]),
)
def test_id_output_formatting(ids, sep):
    """`toksmith encode` writes ids through these: the bytes of str.join / json.dumps /
    struct.pack exactly."""
    import struct

    from toksmith import _core

    assert _core.format_ids(ids, sep) == sep.decode().join(map(str, ids)).encode()
    assert _core.pack_ids(ids, 4) == struct.pack(f"<{len(ids)}I", *ids)
    small = [i % 65536 for i in ids]
    assert _core.pack_ids(small, 2) == struct.pack(f"<{len(small)}H", *small)


@given(
    words=st.lists(
        st.one_of(st.integers(0, 2**33).map(str), st.sampled_from(["-1", "+2", "1_0", "x", "007"])),
        max_size=20,
    ),
    seps=st.lists(
        st.sampled_from([" ", "\n", "\t", "\r\n", "  ", "\x0b\x0c"]), min_size=21, max_size=21
    ),
)
def test_id_text_parsing(words, seps):
    """`toksmith decode` parses plain decimal ids natively (as `int` would) and leaves
    anything else (signs, underscores, non-digits, ids over 32 bits) to `int`."""
    from toksmith import _core

    data = "".join(s + w for s, w in zip(seps, words)).encode() + seps[-1].encode()
    got = _core.parse_ids(data)
    plain = all(w.isdigit() and int(w) < 2**32 for w in words)
    assert got == ([int(x) for x in data.split()] if plain else None)


def test_id_output_formatting_errors():
    from toksmith import _core

    assert b"[" + _core.format_ids([1, 22, 333], b", ") + b"]" == json.dumps([1, 22, 333]).encode()
    with pytest.raises(ValueError, match="does not fit in 2 bytes"):
        _core.pack_ids([65536], 2)
    with pytest.raises(ValueError, match="width must be 2 or 4"):
        _core.pack_ids([1], 8)
    with pytest.raises(OverflowError):
        _core.format_ids([-1], b" ")
    with pytest.raises(TypeError):
        _core.format_ids(["1"], b" ")


def test_encode_lines(tok_file, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("first line\n\nthird <|bos|>\n", encoding="utf-8")
    out = tmp_path / "ids.txt"
    assert main(["encode", "-t", str(tok_file), str(src), "--lines", "-o", str(out)]) == 0
    rows = out.read_text().split("\n")
    tok = toksmith.load(tok_file)
    assert rows[:3] == [
        " ".join(map(str, tok.encode_ordinary(s))) for s in ["first line", "", "third <|bos|>"]
    ]
    assert (
        main(
            ["encode", "-t", str(tok_file), str(src), "--lines", "--allow-special", "-o", str(out)]
        )
        == 0
    )
    assert out.read_text().split("\n")[2].endswith(str(tok.special_tokens["<|bos|>"]))
    back = tmp_path / "back.txt"
    assert main(["decode", "-t", str(tok_file), str(out), "--lines", "-o", str(back)]) == 0
    assert back.read_text(encoding="utf-8") == "first line\n\nthird <|bos|>\n"


def test_streaming_encode_of_big_input_equals_whole(tok_file, tmp_path, corpus_slices):
    from toksmith.streaming import encode_stream

    tok = toksmith.load(tok_file)
    text = "\n".join(corpus_slices.values()) * 2
    src = tmp_path / "big.txt"
    src.write_text(text, encoding="utf-8")
    with open(src, "rb") as f:
        parts = list(encode_stream(tok, f, block_size=3000))
    assert len(parts) > 10
    assert [i for p in parts for i in p] == tok.encode_ordinary(text)


@pytest.mark.parametrize("threads", [2, 3, None])
def test_streaming_encode_in_parallel_equals_whole(tok_file, corpus_slices, threads):
    """Blocks encoded together with encode_batch: the same ids in the same order, with and
    without special tokens, and for a custom pattern (which is read whole)."""
    import io

    from toksmith.streaming import encode_lines, encode_stream

    tok = toksmith.load(tok_file)
    text = ("\n".join(corpus_slices.values()) + "\nA <|bos|> b\n") * 2
    data = text.encode()
    parts = list(encode_stream(tok, io.BytesIO(data), block_size=3000, threads=threads))
    assert len(parts) > 10
    assert [i for p in parts for i in p] == tok.encode_ordinary(text)
    special = list(
        encode_stream(tok, io.BytesIO(data), block_size=3000, threads=threads, allow_special=True)
    )
    assert [i for p in special for i in p] == tok.encode(text, allowed_special="all")
    custom = toksmith.Tokenizer.from_ranks(tok.mergeable_ranks(), pattern=r"\w+|\s+|[^\w\s]+")
    whole = list(encode_stream(custom, io.BytesIO(data), block_size=3000, threads=threads))
    assert whole == [custom.encode_ordinary(text)]
    lines = text.split("\n")
    got = list(encode_lines(tok, lines, threads=threads, batch_bytes=500))
    assert got == [tok.encode_ordinary(x) for x in lines]
    got = list(encode_lines(tok, lines, threads=threads, batch_bytes=500, allow_special=True))
    assert got == [tok.encode(x, allowed_special="all") for x in lines]


@pytest.mark.parametrize(
    "mode",
    [
        [],
        ["--lines"],
        ["--format", "json"],
        ["--lines", "--format", "json"],
        ["--format", "npy"],
        ["--allow-special"],
        ["--lines", "--allow-special"],
    ],
)
def test_encode_threads_give_the_same_output(tok_file, tmp_path, corpus_slices, mode, monkeypatch):
    """Every thread count, and the native path (ids formatted in Rust) against the one through
    lists of ids (other tokenizer kinds), give the same bytes."""
    from toksmith.cli import encode as cli_encode

    text = ("\n".join(corpus_slices.values()) + "\nx <|bos|> y\n") * 3
    src = tmp_path / "in.txt"
    src.write_text(text, encoding="utf-8")
    outs = []
    for threads in ("1", "2", "4", "lists-1", "lists-2"):
        if threads.startswith("lists-"):
            monkeypatch.setattr(cli_encode, "_native", lambda tok, args: None)
            threads = threads[len("lists-") :]
        out = tmp_path / f"ids_{len(outs)}.{'npy' if 'npy' in mode else 'txt'}"
        args = [
            "encode",
            "-t",
            str(tok_file),
            str(src),
            "--threads",
            threads,
            "--block-size",
            "3000",
        ]
        assert main(args + ["-o", str(out)] + mode) == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] == outs[2] == outs[3] == outs[4] and len(outs[0]) > 1000
    tok = toksmith.load(tok_file)
    if mode == []:
        assert [int(x) for x in outs[0].split()] == tok.encode_ordinary(text)


def _reference_lines(data: bytes, errors: str):
    """What ``for raw in f`` gives: split after each ``\\n``, the newline dropped."""
    import io

    out = []
    for lineno, raw in enumerate(io.BytesIO(data), 1):
        raw = raw[:-1] if raw.endswith(b"\n") else raw
        try:
            out.append(raw.decode("utf-8", errors))
        except UnicodeDecodeError as e:
            return out, (lineno, e.start)
    return out, None


@given(
    parts=st.lists(
        st.sampled_from(
            [
                b"a",
                b"\n",
                b"\r\n",
                b"\xc3\xa9",
                b"\xff",
                b"\xe2\x82",
                b"\xe2\x82\xac",
                b" ",
                b"\xf0\x9f\x98\x80",
                b"xyz",
            ]
        ),
        max_size=60,
    ),
    batch_bytes=st.integers(1, 20),
)
def test_line_batches_equal_reading_line_by_line(parts, batch_bytes):
    """Lines decoded a block at a time: the same lines as reading the file line by line (any
    block size, invalid UTF-8 replaced), and with strict decoding the same first bad line and
    byte."""
    import io

    from toksmith.errors import CorpusDecodeError
    from toksmith.streaming import iter_line_batches

    data = b"".join(parts)
    want, _ = _reference_lines(data, "replace")
    got = [
        x
        for b in iter_line_batches(io.BytesIO(data), errors="replace", batch_bytes=batch_bytes)
        for x in b
    ]
    assert got == want
    want, bad = _reference_lines(data, "strict")
    if bad is None:
        assert [
            x for b in iter_line_batches(io.BytesIO(data), batch_bytes=batch_bytes) for x in b
        ] == want
    else:
        with pytest.raises(
            CorpusDecodeError, match=f"line {bad[0]} is not valid UTF-8 \\(byte {bad[1]} of"
        ):
            list(iter_line_batches(io.BytesIO(data), batch_bytes=batch_bytes))


def test_long_input_without_cuts_in_small_blocks(tok_file):
    """4 MB with no safe cut and no line break, read 1 KB at a time: each block only extends the
    search for a cut (and a long line is joined once), so this stays linear; the ids are those
    of the whole text."""
    import io

    from toksmith.streaming import encode_stream, iter_line_batches, last_safe_cut

    tok = toksmith.load(tok_file)
    text = "1234567890" * 400_000
    parts = list(encode_stream(tok, io.BytesIO(text.encode()), block_size=1024, threads=2))
    assert [i for p in parts for i in p] == tok.encode_ordinary(text)
    assert [
        x for b in iter_line_batches(io.BytesIO(text.encode()), batch_bytes=1024) for x in b
    ] == [text]
    assert last_safe_cut("ab cd\nef gh", 0) == 6 and last_safe_cut("ab cd\nef gh", 6) == 8
    assert last_safe_cut("ab cd", 3) == 0 and last_safe_cut("ab cd", 1) == 2


def test_encode_threads_must_be_positive(tok_file, tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("hello", encoding="utf-8")
    assert main(["encode", "-t", str(tok_file), str(src), "--threads", "0"]) == 1
    assert "--threads must be between 1 and 4096" in capsys.readouterr().err
    assert main(["encode", "-t", str(tok_file), str(src), "--block-size", "0"]) == 1
    assert "--block-size must be >= 1" in capsys.readouterr().err
    # too many for the core: an error message, not an OverflowError traceback
    assert main(["encode", "-t", str(tok_file), str(src), "--threads", str(2**70)]) == 1
    assert "--threads must be between 1 and 4096" in capsys.readouterr().err


def test_writing_into_a_missing_folder_names_it(tok_file, tmp_path, capsys):
    out = tmp_path / "missing" / "tok.json"
    assert main(["convert", str(tok_file), str(out), "--to", "toksmith"]) == 1
    err = capsys.readouterr().err
    assert "the folder" in err and "missing" in err and ".tmp" not in err
    tok = toksmith.load(tok_file)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        tok.save(out)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        tok.save_tiktoken(out.with_suffix(".tiktoken"))
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k", "nanochat"])
def test_streaming_encode_without_line_breaks(pattern, corpus_slices):
    import io

    from toksmith.streaming import encode_stream

    tok = toksmith.train_from_iterator(
        list(corpus_slices.values()), vocab_size=400, pattern=pattern
    )
    text = corpus_slices["english"].replace("\n", " ")[:60000] + " it's  DON'T a\u0301 b  "
    parts = list(encode_stream(tok, io.BytesIO(text.encode()), block_size=2000))
    assert len(parts) > 10
    assert [i for p in parts for i in p] == tok.encode_ordinary(text)


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k", "nanochat"])
def test_cuts_after_whitespace_runs_keep_tiktoken_ids(pattern, corpus_slices):
    """Regression: GPT-2's ``\\s+(?!\\S)`` splits "]\\n\\nB" as "]", "\\n", "\\n", "B", so a part may
    not end after several whitespace characters. Streams and long non-ASCII strs (encoded in
    parts) must give tiktoken's ids."""
    import io

    import tiktoken

    from toksmith.streaming import encode_stream

    tok = toksmith.train_from_iterator(
        list(corpus_slices.values()), vocab_size=600, pattern=pattern
    )
    enc = tiktoken.Encoding(
        f"t_{pattern}",
        pat_str=tok.pattern,
        mergeable_ranks=tok.mergeable_ranks(),
        special_tokens={},
    )
    text = (
        "]\n\nBott x  \nabc\t\nDe\n\n\nF \u00e9t\u00e9 \r\n\r\nG.\n"
        + corpus_slices["python"][:3000]
    ) * 30
    expected = enc.encode_ordinary(text)
    assert len(text) > 1 << 16 and not text.isascii()
    assert tok.encode_ordinary(text) == expected
    parts = list(encode_stream(tok, io.BytesIO(text.encode()), block_size=1000))
    assert len(parts) > 10
    assert [i for p in parts for i in p] == expected


def test_pipe_through_subprocess(tok_file):
    text = "héllo wörld\n😀 ok\n"
    enc = subprocess.run(
        [sys.executable, "-m", "toksmith", "encode", "-t", str(tok_file)],
        input=text.encode(),
        capture_output=True,
        timeout=120,
    )
    assert enc.returncode == 0, enc.stderr
    dec = subprocess.run(
        [sys.executable, "-m", "toksmith", "decode", "-t", str(tok_file)],
        input=enc.stdout,
        capture_output=True,
        timeout=120,
    )
    assert dec.stdout == text.encode()


def test_info(tok_file, capsys):
    assert main(["info", "-t", str(tok_file)]) == 0
    out = capsys.readouterr().out
    assert "n_vocab:           600" in out and "nanochat" in out and "<|bos|>" in out
    assert main(["info", "-t", str(tok_file), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_vocab"] == 600


def test_cli_errors(tok_file, tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\xffno")
    assert main(["encode", "-t", str(tok_file), str(bad)]) == 1
    assert "offset 2" in capsys.readouterr().err
    assert (
        main(
            [
                "encode",
                "-t",
                str(tok_file),
                str(bad),
                "--errors",
                "replace",
                "-o",
                str(tmp_path / "o"),
            ]
        )
        == 0
    )
    nums = tmp_path / "nums.txt"
    nums.write_text("1 2 x3")
    assert main(["decode", "-t", str(tok_file), str(nums)]) == 1
    assert "not an integer" in capsys.readouterr().err
    nums.write_text("1 99999")
    assert main(["decode", "-t", str(tok_file), str(nums)]) == 1
    assert "99999" in capsys.readouterr().err
    assert main(["train", str(tmp_path / "missing"), "-o", str(tmp_path / "x.json")]) == 1
    assert main(["info", "-t", str(tmp_path / "missing.json")]) == 1


def test_calm_byte_tokenizer_file_works_with_encode_decode_info(tmp_path, capsys):
    from toksmith import calm
    from toksmith.formats import detect_format, load_any

    p = tmp_path / "calm.json"
    calm.ByteTokenizer().save(p)
    assert detect_format(p) == "calm" and load_any(p).n_vocab == 320
    src = tmp_path / "in.txt"
    src.write_bytes("git commit -m 'ü'\n".encode())
    ids = tmp_path / "ids.txt"
    assert main(["encode", "-t", str(p), str(src), "-o", str(ids)]) == 0
    assert [int(x) for x in ids.read_text().split()] == list(src.read_bytes())
    back = tmp_path / "back.txt"
    assert main(["decode", "-t", str(p), str(ids), "-o", str(back)]) == 0
    assert back.read_bytes() == src.read_bytes()
    assert main(["info", "-t", str(p)]) == 0
    assert "n_vocab:           320" in capsys.readouterr().out


def test_warnings_are_one_plain_line(tmp_path, capsys):
    """A warning (here: the corpus runs out of pairs) is printed as "toksmith train: warning: ..."
    instead of Python's "file:line: UserWarning" followed by a source line."""
    src = tmp_path / "tiny.txt"
    src.write_text("hello world\n", encoding="utf-8")
    assert (
        main(
            [
                "train",
                str(src),
                "--vocab-size",
                "300",
                "--no-progress",
                "-o",
                str(tmp_path / "t.json"),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("toksmith train: warning: the corpus ran out of pairs"), err
    assert err[1].startswith("trained 265 tokens") and len(err) == 2, err
