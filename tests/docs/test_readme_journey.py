"""A new user's walk through the README: worker processes started with fork (the default on
Linux) for `pool.map(tok.encode, docs)` and native work in forked children, `decode --lines` as the inverse of `encode --lines`,
CLI messages that name the command's options, `-t` with a mistyped encoding name, `--preset`
for the presets with commands of their own, and `toksmith.presets.X` / `toksmith.calm` as
attributes after `import toksmith`."""

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import warnings

import pytest

import toksmith
from tests.cli.helpers import _err  # stderr with no traceback in it
from toksmith.cli import main

TEXTS = ["hello world, hello there\nthe world is wide\n", "lorem ipsum dolor sit amet\n"] * 5
DOCS = ["hello world", "the world is wide", "lorem ipsum", "", "dolor sit amet " * 50]

fork_only = pytest.mark.skipif(
    not hasattr(os, "fork") or "fork" not in multiprocessing.get_all_start_methods(),
    reason="needs fork()",
)


@pytest.fixture(scope="module")
def tok():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the small corpus runs out of pairs
        return toksmith.train_from_iterator(
            TEXTS, vocab_size=300, pattern="gpt2", threads=1, special_tokens=["<|end|>"]
        )


@pytest.fixture(scope="module")
def tok_path(tok, tmp_path_factory):
    path = tmp_path_factory.mktemp("journey") / "tok.json"
    tok.save(path)
    return path


# ------------------------------------------------------------------ 1. workers started with fork


@fork_only
def test_pool_map_with_fork_workers(tok):
    # was: every worker waited forever: unpickling built a native core, which hands work to the
    # thread pools the parent had started, and those threads do not exist after fork()
    tok.encode_ordinary_batch(DOCS)  # the parent's pools are started
    want = [tok.encode(d) for d in DOCS]
    with multiprocessing.get_context("fork").Pool(2) as pool:
        got = pool.map_async(tok.encode, DOCS).get(timeout=60)
        batches = pool.map_async(tok.encode_ordinary_batch, [DOCS] * 3).get(timeout=60)
    assert got == want
    assert batches == [want] * 3


def _in_forked_child(fn):
    """fn() in a child process made with os.fork(); returns what it returned (a str), killing the
    child if it hangs."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        code = 1
        try:
            os.close(r)
            signal.alarm(30)
            out = fn()
            os.write(w, out.encode())
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        out = f.read().decode()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, (
        f"the child ended with status {status}"
    )
    return out


@fork_only
def test_forked_child_builds_trains_and_runs_batches(tok, tok_path):
    # was: in a child forked after the parent had used the native thread pools, building a
    # tokenizer, training, loading and batches with the default thread count waited forever (the
    # pools' threads do not exist after fork(); the core now keeps pools per process)
    tok.encode_ordinary_batch(DOCS, threads=1)
    tok.encode_ordinary_batch(DOCS)
    tok.decode_batch([tok.encode(d) for d in DOCS], threads=1)
    tok.decode_batch([tok.encode(d) for d in DOCS])
    want = toksmith.train_from_iterator(TEXTS, vocab_size=270, threads=2).mergeable_ranks()

    def child():
        out = {}
        built = toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, "gpt2")
        out["build"] = built.encode("hi") == [104, 105]
        out["train"] = (
            toksmith.train_from_iterator(TEXTS, vocab_size=270, threads=2).mergeable_ranks() == want
        )
        out["train_default"] = (
            toksmith.train_from_iterator(TEXTS, vocab_size=270).mergeable_ranks() == want
        )
        out["load"] = toksmith.load(tok_path).encode(DOCS[1]) == tok.encode(DOCS[1])
        ids = tok.encode_ordinary_batch(DOCS) + tok.encode_batch(DOCS, threads=2)
        out["batch"] = ids == [tok.encode(d) for d in DOCS] * 2
        out["decode"] = (
            tok.decode_batch(ids) == DOCS * 2 and tok.decode_batch(ids, threads=2) == DOCS * 2
        )
        return json.dumps(out)

    out = json.loads(_in_forked_child(child))
    assert out == {k: True for k in out} and len(out) == 6, out


@fork_only
def test_pool_started_before_the_tokenizer(tok):
    # workers forked before the parent built anything, then handed a pickled tokenizer
    with multiprocessing.get_context("fork").Pool(2) as pool:
        fresh = toksmith.train_from_iterator(TEXTS, vocab_size=280)
        fresh.encode_ordinary_batch(DOCS)
        got = pool.map_async(fresh.encode_ordinary_batch, [DOCS] * 2).get(timeout=60)
    assert got == [fresh.encode_ordinary_batch(DOCS, threads=1)] * 2


# ------------------------------------------------------------------ 2. decode --lines


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_decode_lines_inverts_encode_lines(tok_path, tmp_path, fmt):
    # was: decode --lines ended every line with a newline, so a text without a final newline
    # came back with one (encode --lines keeps the final-newline status)
    for data in ["hello world\nthe world", "hello world\n", "x", "\n", "a\n\nb", ""]:
        src, ids, back = tmp_path / "in.txt", tmp_path / "ids.out", tmp_path / "back.txt"
        src.write_bytes(data.encode())
        assert (
            main(
                [
                    "encode",
                    "-t",
                    str(tok_path),
                    str(src),
                    "--lines",
                    "--format",
                    fmt,
                    "-o",
                    str(ids),
                ]
            )
            == 0
        )
        assert (
            main(
                [
                    "decode",
                    "-t",
                    str(tok_path),
                    str(ids),
                    "--lines",
                    "--format",
                    fmt,
                    "-o",
                    str(back),
                ]
            )
            == 0
        )
        assert back.read_bytes() == data.encode(), data


# ------------------------------------------------------------------ 3. CLI messages name options


def test_train_messages_name_the_cli_options(tmp_path, capsys):
    # was: "pass text_field= ..." and 'pass errors="replace" ...', the Python arguments
    # (a {"messages": [...]} line is now read as its message contents: issue 34)
    jsonl = tmp_path / "chats.jsonl"
    jsonl.write_text(json.dumps({"body": "hello"}) + "\n", encoding="utf-8")
    out = tmp_path / "t.json"
    assert main(["train", str(jsonl), "-o", str(out)]) == 1
    err = _err(capsys)
    assert "--text-field" in err and "text_field=" not in err
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n\xff\xfe\n")
    assert main(["train", str(bad), "-o", str(out)]) == 1
    err = _err(capsys)
    assert "--errors replace" in err and "errors=" not in err
    assert (
        main(["train", str(bad), "--errors", "replace", "-o", str(out), "--vocab-size", "260"]) == 0
    )


def test_train_preset_of_a_command_of_its_own(tmp_path, capsys):
    corpus = tmp_path / "a.cpp"
    corpus.write_text("int main() { return 0; }\n", encoding="utf-8")
    for preset, command in [
        ("cppreason", "toksmith cppreason train"),
        ("wordbpe", "toksmith wordbpe run"),
    ]:
        assert main(["train", str(corpus), "--preset", preset, "-o", str(tmp_path / "t.json")]) == 1
        assert command in _err(capsys)
    assert not (tmp_path / "t.json").exists()


def test_mistyped_encoding_name_says_what_to_pass(tmp_path, capsys, monkeypatch):
    # was: "[Errno 2] No such file or directory: 'cl100k_bas'", though -t also takes names
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # an empty cache
    for name in ["cl100k_bas", "gpt-4x"]:
        assert main(["info", "-t", name]) == 1
        err = _err(capsys)
        assert "OpenAI encoding" in err and "cl100k_base" in err and repr(name) in err
    # a model name is read as tiktoken.encoding_for_model reads it (issue 34)
    assert main(["info", "-t", "gpt-4"]) == 1
    assert "cl100k_base rank file is not in" in _err(capsys)
    assert main(["info", "-t", "missing.json"]) == 1
    assert "No such file" in _err(capsys)


def test_train_given_texts_for_paths_points_to_train_from_iterator(tmp_path, monkeypatch):
    # was: only "no such file or folder: 'hello world'"
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"'hello world'.*train_from_iterator"):
        toksmith.train(["hello world", "more text"], vocab_size=300)
    with pytest.raises(FileNotFoundError) as info:
        toksmith.train(["missing.txt"], vocab_size=300)
    assert "train_from_iterator" not in str(info.value)  # a path, not a text: no hint


# ------------------------------------------------------------------ 4. subpackages as attributes


def test_presets_and_calm_are_attributes_of_toksmith():
    # was: AttributeError: module 'toksmith' has no attribute 'presets' (and 'calm'), though
    # the README names toksmith.presets.nanochat and toksmith.calm
    code = (
        "import toksmith\n"
        "assert callable(toksmith.presets.nanochat.train) and callable(toksmith.presets.cromwell.train)\n"
        "assert callable(toksmith.presets.cppreason.train) and callable(toksmith.presets.wordbpe.train)\n"
        "assert toksmith.calm.tokenize_frame('CWD', '/') == [260, 47, 269]\n"
        "assert 'presets' in dir(toksmith)\n"
        "try:\n    toksmith.presets.nope\nexcept AttributeError as e:\n    print(e)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "nope" in r.stdout
