"""The command line as a new user meets it (issue 34): every option and positional has help,
`-t` is the tokenizer file and `-o` the output everywhere, the tokenizer is never positional,
`--preset` lists its choices, a missing file is named with the argument that gave it, `-t`
takes OpenAI model names, and typed stdin ends at the first Ctrl-D."""

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import warnings

import pytest

import toksmith
from tests.cli.helpers import _err
from tests.conftest import CL100K_TIKTOKEN
from toksmith.cli import build_parser, main

TEXTS = ["hello world, hello there\nthe world is wide\n", "lorem ipsum dolor sit amet\n"] * 5


def _actions():
    """(command path, action) of every argument of every (sub-)command."""
    stack = [(["toksmith"], build_parser())]
    while stack:
        path, parser = stack.pop()
        for a in parser._actions:
            if isinstance(a, argparse._SubParsersAction):
                stack.extend((path + [name], p) for name, p in a.choices.items())
            elif not isinstance(a, (argparse._HelpAction, argparse._VersionAction)):
                yield " ".join(path), a


def test_every_option_and_positional_has_help():
    actions = list(_actions())
    assert len(actions) > 100
    missing = [
        f"{cmd} {'/'.join(a.option_strings) or a.dest}"
        for cmd, a in actions
        if not a.help or a.help == argparse.SUPPRESS
    ]
    assert missing == []


def test_t_is_the_tokenizer_and_o_the_output_everywhere():
    seen_t = seen_o = 0
    for cmd, a in _actions():
        if "-t" in a.option_strings:
            seen_t += 1
            if a.dest == "template_t":  # calm's old spelling, kept as a deprecated alias
                assert cmd == "toksmith calm encode" and "deprecated" in a.help
            else:
                assert a.option_strings[:2] == ["-t", "--tokenizer"], cmd
        if "-o" in a.option_strings:
            seen_o += 1
            assert "--output" in a.option_strings, cmd
        if not a.option_strings:  # the tokenizer is never positional
            assert "tokenizer" not in a.dest, cmd
    assert seen_t >= 8 and seen_o >= 6


def test_preset_lists_its_choices(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = capsys.readouterr().out
    assert "{cromwell,nanochat}" in out and "cppreason" in out


@pytest.fixture(scope="module")
def tok_file(tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = toksmith.train_from_iterator(TEXTS, vocab_size=290, pattern="gpt2", threads=1)
    path = tmp_path_factory.mktemp("cli") / "tok.json"
    tok.save(path)
    return path


def test_missing_files_are_named_with_their_argument(tmp_path, tok_file, capsys):
    missing = str(tmp_path / "nope.json")
    assert main(["encode", "-t", missing, str(tok_file)]) == 1
    assert f"-t/--tokenizer {missing!r}: No such file" in _err(capsys)
    assert main(["encode", "-t", str(tok_file), str(tmp_path / "in.txt")]) == 1
    assert f"FILE {str(tmp_path / 'in.txt')!r}: No such file" in _err(capsys)
    assert main(["decode", "-t", str(tok_file), str(tmp_path / "ids.txt")]) == 1
    assert "FILE " in _err(capsys)
    assert main(["info", "-t", missing]) == 1
    assert "-t/--tokenizer" in _err(capsys)


def test_t_takes_openai_model_names(tmp_path, monkeypatch, capsys):
    # tiktoken's cache, as tiktoken.get_encoding leaves it (no network)
    url = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
    shutil.copy(CL100K_TIKTOKEN, tmp_path / hashlib.sha1(url.encode()).hexdigest())
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    src = tmp_path / "in.txt"
    src.write_text("hello world", encoding="utf-8")
    assert main(["encode", "-t", "gpt-4", str(src)]) == 0
    ids = [int(x) for x in capsys.readouterr().out.split()]
    assert ids == toksmith.get_encoding("cl100k_base").encode("hello world")
    assert main(["encode", "-t", "no-such-model", str(src)]) == 1
    assert "OpenAI encoding or model" in _err(capsys)


def test_wordbpe_output_and_tokenizer_options(tmp_path, capsys):
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.txt").write_text("the cat sat on the mat\n" * 30, encoding="utf-8")
    for flag, out in (("-o", "o1"), ("--output", "o2"), ("--out", "o3")):  # --out: the old name
        argv = [
            "wordbpe",
            "run",
            str(corpus),
            flag,
            str(tmp_path / out),
            "--merges",
            "10",
            "--dim",
            "4",
        ]
        assert main(argv + ["--no-progress"]) == 0
    capsys.readouterr()
    tok = str(tmp_path / "o1" / "corpus_tokenizer.json")
    assert main(["wordbpe", "encode", "-t", tok, "the", "cat"]) == 0
    new = capsys.readouterr().out
    assert main(["wordbpe", "encode", tok, "the", "cat"]) == 0  # the old positional form
    assert capsys.readouterr().out == new and new.split()
    assert main(["wordbpe", "encode", "the", "cat"]) == 1
    assert "-t/--tokenizer is required" in _err(capsys)


def test_calm_template_option(capsys):
    assert main(["calm", "encode", "-T", "shell", "-c", '{"input": "ls"}']) == 0
    new = capsys.readouterr().out
    assert main(["calm", "encode", "--template", "shell", "-c", '{"input": "ls"}']) == 0
    assert capsys.readouterr().out == new
    assert main(["calm", "encode", "-t", "shell", "-c", '{"input": "ls"}']) == 0
    captured = capsys.readouterr()
    assert captured.out == new and "deprecated" in captured.err


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_typed_stdin_ends_at_the_first_ctrl_d(tok_file):
    master, slave = os.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "toksmith", "encode", "-t", str(tok_file)],
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        os.write(master, b"hello world\n")
        os.write(master, b"\x04")  # one Ctrl-D at the start of a line
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(master)
        os.close(slave)
    assert proc.returncode == 0, err
    ids = [int(x) for x in out.split()]
    assert toksmith.load(tok_file).decode(ids) == "hello world\n"
