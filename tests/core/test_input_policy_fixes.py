"""Bad input raises a clear exception instead of being accepted silently or failing deep inside.

1. ``threads`` and ``num_threads`` (tiktoken's name) given with different values;
2. a closed ``ShardWriter`` written to;
3. a CALM context key the template does not name;
4. the atomic write's fixed ``path + ".tmp"`` temporary file;
5. file paths no file system can hold (lone surrogates);
6. a toksmith file whose ``"format"`` key comes after the first 64 KB, with a key twice.
"""

import json
import os
import threading
import warnings
from pathlib import Path

import pytest

import toksmith
from tests.conftest import DATA
from toksmith import calm
from toksmith.formats import detect_format, load_any
from toksmith.formats._common import atomic_write
from toksmith.presets import cppreason, nanochat, wordbpe
from toksmith.presets.chat_shards import MANIFEST, ShardWriter, iter_rendered, read_manifest

np = pytest.importorskip("numpy")


@pytest.fixture(scope="module")
def tok():
    return toksmith.Tokenizer.from_ranks(
        {bytes([b]): b for b in range(256)} | {b"ab": 256}, "gpt2", special_tokens={"<|end|>": 257}
    )


@pytest.fixture(scope="module")
def cpp():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cppreason.train(["int main() { return 0; }\n" * 20], vocab_size=2200)


# ---- 1. threads / num_threads --------------------------------------------------------------------


def _thread_calls(tok, cpp):
    byte = calm.ByteTokenizer()
    return {
        "Tokenizer.encode_batch": lambda **kw: tok.encode_batch(["ab c", "x"], **kw),
        "Tokenizer.encode_ordinary_batch": lambda **kw: tok.encode_ordinary_batch(
            ["ab c", "x"], **kw
        ),
        "Tokenizer.decode_batch": lambda **kw: tok.decode_batch([[256, 99], [120]], **kw),
        "Tokenizer.decode_bytes_batch": lambda **kw: tok.decode_bytes_batch(
            [[256, 99], [120]], **kw
        ),
        "ByteTokenizer.encode_batch": lambda **kw: byte.encode_batch(["ab", "c"], **kw),
        "ByteTokenizer.encode_ordinary_batch": lambda **kw: byte.encode_ordinary_batch(
            ["ab", "c"], **kw
        ),
        "ByteTokenizer.decode_batch": lambda **kw: byte.decode_batch([[97], [98]], **kw),
        "CppTokenizer.encode_ordinary_batch": lambda **kw: cpp.encode_ordinary_batch(
            ["int x;"], **kw
        ),
    }


THREAD_METHODS = [
    "Tokenizer.encode_batch",
    "Tokenizer.encode_ordinary_batch",
    "Tokenizer.decode_batch",
    "Tokenizer.decode_bytes_batch",
    "ByteTokenizer.encode_batch",
    "ByteTokenizer.encode_ordinary_batch",
    "ByteTokenizer.decode_batch",
    "CppTokenizer.encode_ordinary_batch",
]


@pytest.mark.parametrize("method", THREAD_METHODS)
def test_threads_and_num_threads_that_disagree_are_refused(tok, cpp, method):
    call = _thread_calls(tok, cpp)[method]
    # was: threads won silently
    with pytest.raises(
        ValueError, match=r"threads=2 and num_threads=3 disagree.*pass only one of them"
    ):
        call(threads=2, num_threads=3)


@pytest.mark.parametrize("method", THREAD_METHODS)
def test_threads_and_num_threads_alone_or_equal_are_accepted(tok, cpp, method):
    call = _thread_calls(tok, cpp)[method]
    expected = call()
    assert call(threads=2) == expected
    assert call(num_threads=2) == expected
    assert call(threads=2, num_threads=2) == expected
    if not method.startswith("Cpp"):  # (CppTokenizer takes no numpy integers for thread counts)
        assert (
            call(threads=np.int64(2), num_threads=2) == expected
        )  # the same count, another int type


def test_cpp_positional_num_threads_that_disagrees_is_refused(cpp):
    # CppTokenizer.encode_ordinary_batch takes num_threads positionally (tiktoken's order)
    with pytest.raises(ValueError, match="pass only one of them"):
        cpp.encode_ordinary_batch(["int x;"], 3, threads=2)
    assert cpp.encode_ordinary_batch(["int x;"], 2, threads=2) == cpp.encode_ordinary_batch(
        ["int x;"]
    )


def test_each_thread_argument_is_still_checked_under_its_own_name(tok):
    with pytest.raises(ValueError, match="num_threads must be between 1 and 4096"):
        tok.encode_batch(["x"], threads=2, num_threads=0)
    with pytest.raises(TypeError, match="num_threads must be an int"):
        tok.encode_batch(["x"], num_threads="2")
    with pytest.raises(ValueError, match="threads must be between 1 and 4096"):
        calm.ByteTokenizer().encode_batch(["x"], threads=0, num_threads=2)


# ---- 2. ShardWriter after close -------------------------------------------------------------------


def test_shard_writer_add_after_close_is_refused(tmp_path):
    w = ShardWriter(tmp_path, n_vocab=300, shard_size=2)
    w.add([1, 2], [0, 1], line=1)
    manifest = w.close()
    assert w.closed
    # was: accepted silently (the conversation was lost: no shard or manifest was written again)
    with pytest.raises(ValueError, match="add: this ShardWriter is closed"):
        w.add([3], [1], line=2)
    with pytest.raises(ValueError, match="flush: this ShardWriter is closed"):
        w.flush()
    assert [i.tolist() for i, _ in iter_rendered(tmp_path)] == [[1, 2]]
    assert read_manifest(tmp_path) == manifest


def test_shard_writer_close_twice_is_harmless(tmp_path):
    w = ShardWriter(tmp_path, n_vocab=300)
    w.add([1], [1])
    first = w.close({"skipped_lines": 0})
    written = (tmp_path / MANIFEST).read_bytes()
    assert w.close() == first
    assert (tmp_path / MANIFEST).read_bytes() == written
    with pytest.raises(ValueError, match="already closed, extra cannot be written"):
        w.close({"skipped_lines": 3})


def test_shard_writer_as_context_manager(tmp_path):
    with ShardWriter(tmp_path / "a", n_vocab=300) as w:
        w.add([1, 2, 3], [0, 1, 1], line=1)
    assert w.closed and read_manifest(tmp_path / "a")["conversations"] == 1
    with pytest.raises(ValueError, match="is closed"):
        w.add([4], [1])
    with pytest.raises(ValueError, match="is closed"):
        with w:
            pass
    # an error in the block: what was written is removed, and the writer is closed
    with pytest.raises(KeyError):
        with ShardWriter(tmp_path / "b", n_vocab=300, shard_size=1) as w2:
            w2.add([1], [1])
            raise KeyError("boom")
    assert w2.closed and os.listdir(tmp_path / "b") == []
    with pytest.raises(ValueError, match="is closed"):
        w2.add([1], [1])
    # closed in the block, then an error: the finished dataset stays (as a closed file would)
    with pytest.raises(KeyError):
        with ShardWriter(tmp_path / "c", n_vocab=300) as w3:
            w3.add([1, 2], [0, 1], line=1)
            w3.close()
            raise KeyError("after close")
    assert read_manifest(tmp_path / "c")["conversations"] == 1


# ---- 3. CALM context keys -------------------------------------------------------------------------


def test_build_sequence_refuses_an_unknown_context_key():
    # was: ignored silently, so a misspelt key lost its value
    with pytest.raises(ValueError) as e:
        calm.build_sequence(
            "shell", {"cwd": "/tmp", "histroy": [{"cmd": "ls", "exit": 0}], "input": "ls"}
        )
    msg = str(e.value)
    assert "unknown key(s) 'histroy'" in msg
    for key in ("cwd", "git", "history", "completions", "env", "input"):
        assert repr(key) in msg


def test_build_sequence_unknown_keys_follow_the_template():
    # the valid keys are the template's: "cwd" is unknown to the dictionary template
    with pytest.raises(ValueError, match=r"unknown key\(s\) 'cwd'.*'word', 'definition'"):
        calm.build_sequence("dictionary", {"word": "cat", "cwd": "/tmp"})
    assert (
        calm.build_sequence("BOS;CWD:where;ATN;CMD:input", {"where": "/t", "input": "l"}).format()
        == "<BOS> <CWD> /t <END> <ATN> <CMD> l"
    )
    assert calm.build_sequence("shell", {"input": "ls"}) == [
        257,
        259,
        264,
        108,
        115,
    ]  # absent keys are fine
    with pytest.raises(ValueError, match=r"unknown key\(s\) 5"):
        calm.build_sequence("shell", {5: "x"})


def test_build_sequence_unknown_key_with_a_model_template(tmp_path):
    path = tmp_path / "m.cwgt"
    calm.write_cwgt(
        path,
        calm.CWGTHeader(d_model=16, n_layers=1),
        calm.CWGTMetadata("shell", "BOS;CWD:cwd;ATN;CMD:input", "|"),
        np.zeros(4, dtype=np.float32),
    )
    model = calm.read_cwgt(path)
    with pytest.raises(ValueError, match=r"unknown key\(s\) 'git'.*uses only 'cwd', 'input'"):
        calm.build_sequence(model, {"git": "main", "input": "ls"})


# ---- 4. atomic writes -----------------------------------------------------------------------------


def test_save_leaves_an_unrelated_tmp_file_alone(tok, tmp_path):
    target = tmp_path / "tok.json"
    other = tmp_path / "tok.json.tmp"
    other.write_text("someone else's file")
    tok.save(target)  # was: wrote tok.json.tmp, then moved it away
    assert other.read_text() == "someone else's file"
    assert toksmith.load(target).encode("ab") == [256]
    assert sorted(os.listdir(tmp_path)) == ["tok.json", "tok.json.tmp"]


def test_atomic_writers_to_one_path_do_not_clobber_each_other(tmp_path):
    target = tmp_path / "out.txt"
    # two writes of the same file open at once: each has its own temporary file
    with atomic_write(target) as outer:
        outer.write("outer")
        with atomic_write(target) as inner:
            inner.write("inner")
        assert target.read_text() == "inner"
    assert target.read_text() == "outer"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_atomic_writes_from_threads(tmp_path):
    target = tmp_path / "out.txt"
    texts = [str(k) * 50_000 for k in range(8)]
    errors = []

    def write(text):
        try:
            for _ in range(5):
                with atomic_write(target) as f:
                    f.write(text)
        except BaseException as e:  # pragma: no cover - the failure reported below
            errors.append(e)

    threads = [threading.Thread(target=write, args=(t,)) for t in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert target.read_text() in texts  # one whole text, never a mix
    assert os.listdir(tmp_path) == ["out.txt"]


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
def test_atomic_write_gives_the_permissions_of_a_plain_new_file(tmp_path, umask):
    old = os.umask(umask)
    try:
        plain = tmp_path / "plain.txt"
        with open(plain, "w") as f:
            f.write("x")
        with atomic_write(tmp_path / "atomic.txt") as f:
            f.write("x")
        with atomic_write(tmp_path / "atomic.bin", "wb") as f:
            f.write(b"x")
    finally:
        os.umask(old)
    want = plain.stat().st_mode & 0o777
    assert want == 0o666 & ~umask
    assert (tmp_path / "atomic.txt").stat().st_mode & 0o777 == want  # not mkstemp's 0o600
    assert (tmp_path / "atomic.bin").stat().st_mode & 0o777 == want


def test_atomic_write_failure_removes_its_temporary_file(tok, tmp_path):
    target = tmp_path / "keep.json"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_write(target) as f:
            f.write("half")
            raise RuntimeError("stop")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["keep.json"]
    with pytest.raises(
        LookupError
    ):  # a bad encoding: the temporary file's descriptor is closed, the file removed
        with atomic_write(target, "w", encoding="no-such-codec"):
            pass  # pragma: no cover
    assert os.listdir(tmp_path) == ["keep.json"] and target.read_text() == "old"


# ---- 5. paths no file system can hold -------------------------------------------------------------

BAD = "a\ud800b.json"


def _path_calls(tok, tmp_path):
    bad = str(tmp_path / BAD)
    bad_dir = str(tmp_path / "d\udfffir")
    return {
        "toksmith.load": lambda: toksmith.load(bad),
        "Tokenizer.load": lambda: toksmith.Tokenizer.load(bad),
        "toksmith.load(Path)": lambda: toksmith.load(Path(bad)),
        "load_any": lambda: load_any(bad),
        "detect_format": lambda: detect_format(bad),
        "Tokenizer.save": lambda: tok.save(bad),
        "Tokenizer.save_tiktoken": lambda: tok.save_tiktoken(bad),
        "Tokenizer.save_huggingface": lambda: tok.save_huggingface(bad_dir),
        "save_gpt2_files": lambda: toksmith.formats.save_gpt2_files(tok, bad_dir),
        "from_tiktoken": lambda: toksmith.from_tiktoken(bad, pattern="gpt2"),
        "from_huggingface": lambda: toksmith.from_huggingface(bad),
        "from_gpt2_files": lambda: toksmith.from_gpt2_files(
            bad, str(DATA / "vocabs" / "gpt2_vocab.bpe")
        ),
        "get_encoding(cache_dir)": lambda: toksmith.get_encoding("gpt2", cache_dir=bad_dir),
        "train": lambda: toksmith.train(bad, vocab_size=300),
        "train([paths])": lambda: toksmith.train(
            [str(DATA / "corpora" / "shell_slice.txt"), bad], vocab_size=300
        ),
        "corpus.read_text": lambda: toksmith.corpus.read_text(bad),
        "corpus.expand_paths": lambda: toksmith.corpus.expand_paths([bad]),
        "nanochat.train": lambda: nanochat.train(bad, vocab_size=300),
        "nanochat.load": lambda: nanochat.load(bad),
        "ChatTokenizer.save": lambda: nanochat.ChatTokenizer(tok_with_chat_specials()).save(
            bad_dir
        ),
        "cppreason.load": lambda: cppreason.load(bad),
        "wordbpe.load": lambda: wordbpe.load(bad),
        "WordTokenizer.save": lambda: wordbpe.train(["a b a b"], 2).save(bad),
        "wordbpe.write_counts_csv": lambda: wordbpe.write_counts_csv(
            bad, [("a", 1)], ("token", "count")
        ),
        "wordbpe.run(out_dir)": lambda: wordbpe.run(["a b"], bad_dir),
        "cromwell.collect_code_corpus": lambda: toksmith.presets.cromwell.collect_code_corpus(
            bad_dir
        ),
        "calm.read_cwgt": lambda: calm.read_cwgt(bad),
        "calm.write_cwgt": lambda: calm.write_cwgt(
            bad,
            calm.CWGTHeader(d_model=16, n_layers=1),
            calm.CWGTMetadata("shell", "BOS;ATN;CMD:input", "|"),
            np.zeros(4, dtype=np.float32),
        ),
        "ByteTokenizer.save": lambda: calm.ByteTokenizer().save(bad),
        "ByteTokenizer.load": lambda: calm.ByteTokenizer.load(bad),
        "ShardWriter": lambda: ShardWriter(bad_dir, n_vocab=300),
        "read_manifest": lambda: read_manifest(bad_dir),
    }


def tok_with_chat_specials():
    specials = {s: 256 + k for k, s in enumerate(nanochat.SPECIAL_TOKENS)}
    return toksmith.Tokenizer.from_ranks(
        {bytes([b]): b for b in range(256)}, "gpt2", special_tokens=specials
    )


PATH_ENTRY_POINTS = [
    "toksmith.load",
    "Tokenizer.load",
    "toksmith.load(Path)",
    "load_any",
    "detect_format",
    "Tokenizer.save",
    "Tokenizer.save_tiktoken",
    "Tokenizer.save_huggingface",
    "save_gpt2_files",
    "from_tiktoken",
    "from_huggingface",
    "from_gpt2_files",
    "get_encoding(cache_dir)",
    "train",
    "train([paths])",
    "corpus.read_text",
    "corpus.expand_paths",
    "nanochat.train",
    "nanochat.load",
    "ChatTokenizer.save",
    "cppreason.load",
    "wordbpe.load",
    "WordTokenizer.save",
    "wordbpe.write_counts_csv",
    "wordbpe.run(out_dir)",
    "cromwell.collect_code_corpus",
    "calm.read_cwgt",
    "calm.write_cwgt",
    "ByteTokenizer.save",
    "ByteTokenizer.load",
    "ShardWriter",
    "read_manifest",
]


@pytest.mark.parametrize("entry", PATH_ENTRY_POINTS)
def test_unencodable_path_is_a_clear_value_error(tok, tmp_path, entry):
    # was: a bare UnicodeEncodeError ("'utf-8' codec can't encode character '\ud800' in position 1:
    # surrogates not allowed") from inside open() or os.stat(), naming no file
    with pytest.raises(ValueError) as e:
        _path_calls(tok, tmp_path)[entry]()
    assert not isinstance(e.value, UnicodeError)
    msg = str(e.value)
    assert "cannot be encoded for the file system" in msg
    assert "pass a str of valid characters (os.fsdecode(name_bytes)" in msg
    assert (
        "\\ud800" in msg and repr(BAD)[1:-1] in msg
    ) or "d\\udfffir" in msg  # the path, as repr shows it
    assert os.listdir(tmp_path) == []  # nothing half-written


def test_unencodable_path_in_the_cli(tmp_path, capsys):
    from toksmith.cli import main

    assert main(["encode", "-t", str(tmp_path / BAD), "-o", str(tmp_path / "o.txt")]) == 1
    err = capsys.readouterr().err
    assert "cannot be encoded for the file system" in err and "a\\ud800b.json" in err
    tok_path = tmp_path / "t.json"
    toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2").save(tok_path)
    assert main(["encode", "-t", str(tok_path), "-o", str(tmp_path / BAD)]) == 1
    assert "cannot be encoded for the file system" in capsys.readouterr().err
    assert main(["convert", str(tmp_path / BAD), str(tmp_path / "o.json")]) == 1
    assert "cannot be encoded for the file system" in capsys.readouterr().err


@pytest.mark.skipif(os.name != "posix", reason="surrogateescape file names are POSIX's")
def test_surrogateescape_paths_still_work(tok, tmp_path):
    # "\udcff" is how Python spells the undecodable byte 0xff of a POSIX file name: it can be stored
    name = str(tmp_path / "x\udcffy.json")
    tok.save(name)
    assert toksmith.load(name).encode("ab") == [256]
    assert load_any(os.fsencode(name)).encode("ab") == [256]  # bytes, as the message suggests


# ---- 6. duplicate keys with a late "format" -------------------------------------------------------


def _late_format_file(tok, tmp_path, extra_items=()):
    """A toksmith file whose "format" key comes after 64 KB of metadata (load_any cannot tell its
    format from the file's head and parses it whole), with ``extra_items`` appended."""
    tok.save(tmp_path / "src.json")
    doc = json.loads((tmp_path / "src.json").read_text(encoding="utf-8"))
    doc["metadata"] = {"pad": "x" * 70_000}
    items = [(k, json.dumps(v)) for k, v in doc.items() if k not in ("format", "metadata")]
    items = (
        [("metadata", json.dumps(doc["metadata"]))]
        + items
        + [("format", '"toksmith"')]
        + list(extra_items)
    )
    path = tmp_path / "late.json"
    path.write_text(
        "{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in items) + "}", encoding="utf-8"
    )
    assert b'"format"' not in path.read_bytes()[: 1 << 16]
    return path


def test_late_format_file_without_duplicates_loads(tok, tmp_path):
    path = _late_format_file(tok, tmp_path)
    assert detect_format(path) == "toksmith"
    loaded = load_any(path)
    assert loaded.special_tokens == {"<|end|>": 257} and loaded.encode("ab") == [256]


def test_late_format_file_with_a_top_level_duplicate_is_refused(tok, tmp_path):
    path = _late_format_file(tok, tmp_path, [("special_tokens", '{"<|other|>": 257}')])
    with pytest.raises(toksmith.TokenizerFileError, match=r"'special_tokens'.* twice"):
        toksmith.load(path)
    # was: load_any parsed the file with json.loads to find its format and kept the last value
    with pytest.raises(toksmith.TokenizerFileError, match=r"'special_tokens'.* twice"):
        load_any(path)


def test_late_format_file_with_a_nested_duplicate_is_refused(tok, tmp_path):
    path = _late_format_file(tok, tmp_path)
    raw = path.read_text(encoding="utf-8").replace(
        '"special_tokens":{"<|end|>": 257}', '"special_tokens":{"<|end|>": 257, "<|end|>": 257}'
    )
    assert raw.count('"<|end|>": 257') == 2
    path.write_text(raw, encoding="utf-8")
    with pytest.raises(toksmith.TokenizerFileError, match=r"'<\|end\|>'.* twice"):
        load_any(path)


def test_early_format_file_with_a_duplicate_is_refused(tok, tmp_path):
    tok.save(tmp_path / "t.json")
    raw = (tmp_path / "t.json").read_text(encoding="utf-8").rstrip()
    assert raw.endswith("}")
    (tmp_path / "t.json").write_text(raw[:-1] + ',\n "name": "again"\n}', encoding="utf-8")
    with pytest.raises(toksmith.TokenizerFileError, match="the key 'name' appears twice"):
        load_any(tmp_path / "t.json")


# ---------------------------------------------------------------- duplicate keys in HF / GPT-2 files


def _hf_files(tmp_path):
    tok = toksmith.train_from_iterator(
        ["hello world hello there"] * 5, vocab_size=270, pattern="gpt2"
    )
    tok.save_huggingface(tmp_path / "hf")
    tok.save_gpt2_files(tmp_path / "gpt2")
    return tok, tmp_path / "hf" / "tokenizer.json", tmp_path / "gpt2"


def _with_duplicate_first_key(text: str, member: str, new_value: str) -> str:
    """``text`` with the first key of the object under ``member`` given again (first) with
    ``new_value``."""
    i = text.index(f'"{member}"') if member else 0
    j = text.index("{", i)
    key = text[j + 1 : text.index(":", j)].strip()
    return text[: j + 1] + f"{key}: {new_value}," + text[j + 1 :]


def test_a_vocab_key_twice_in_a_tokenizer_json_is_refused(tmp_path):
    tok, path, _ = _hf_files(tmp_path)
    assert (
        toksmith.from_huggingface(path).mergeable_ranks() == tok.mergeable_ranks()
    )  # as written: fine
    path.write_text(
        _with_duplicate_first_key(path.read_text(encoding="utf-8"), "vocab", "269"),
        encoding="utf-8",
    )
    for load in (toksmith.from_huggingface, toksmith.load_any):
        with pytest.raises(toksmith.TokenizerFileError, match="twice in one JSON object"):
            load(path)


def test_a_top_level_key_twice_in_a_tokenizer_json_is_refused(tmp_path):
    _, path, _ = _hf_files(tmp_path)
    text = path.read_text(encoding="utf-8")
    path.write_text('{"version": "0.9",' + text.lstrip()[1:], encoding="utf-8")
    assert text.count('"version"') == 1
    for load in (toksmith.from_huggingface, toksmith.load_any):
        with pytest.raises(toksmith.TokenizerFileError, match="'version' twice"):
            load(path)


def test_a_key_twice_in_an_encoder_json_is_refused(tmp_path):
    tok, _, folder = _hf_files(tmp_path)
    enc, bpe = (
        folder / "vocab.json",
        folder / "merges.txt",
    )  # (the names Hugging Face's GPT-2 folders use)
    assert toksmith.from_gpt2_files(enc, bpe).mergeable_ranks() == tok.mergeable_ranks()
    enc.write_text(
        _with_duplicate_first_key(enc.read_text(encoding="utf-8"), "", "269"), encoding="utf-8"
    )
    for load in (lambda: toksmith.from_gpt2_files(enc, bpe), lambda: toksmith.load_any(folder)):
        with pytest.raises(toksmith.TokenizerFileError, match="has the key .* twice"):
            load()
