"""`toksmith info`."""

import json
import warnings

import toksmith
from tests.cli.conftest import TEXTS
from toksmith.cli import main


def test_info_escapes_special_tokens(control_tok_path, capsys):
    # was: special tokens printed raw: "<|a\nb|>" broke its line in two, a tab or an escape
    # character went to the terminal as it is
    assert main(["info", "-t", str(control_tok_path)]) == 0
    out = capsys.readouterr().out
    assert "\t" not in out and "\x1b" not in out
    tok = toksmith.load(control_tok_path)
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("special tokens:"))
    shown = lines[start + 1 : start + 1 + len(tok.special_tokens)]
    assert [line.split(None, 1)[1] for line in shown] == [
        repr(t) for t, _ in sorted(tok.special_tokens.items(), key=lambda kv: kv[1])
    ]
    assert "'<|a\\nb|>'" in out and "'<|t\\tx|>'" in out and "'<|\\x1b|>'" in out
    # --json was already escaped: unchanged
    assert main(["info", "-t", str(control_tok_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["special_tokens"] == tok.special_tokens


def test_info_escapes_name_and_pattern(tmp_path, capsys):
    # was: a name (--name) or custom pattern holding a newline or tab printed raw
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = toksmith.train_from_iterator(
            TEXTS, vocab_size=270, pattern="x\n|\\s+|\\w+|.", name="my\tname", threads=1
        )
    path = tmp_path / "t.json"
    tok.save(path)
    assert main(["info", "-t", str(path)]) == 0
    out = capsys.readouterr().out
    assert "name:              my\\tname\n" in out
    assert "custom  x\\n|\\s+|\\w+|.\n" in out  # the regex's own backslashes as they are


def test_info_takes_the_special_tokens_of_a_rank_file(tmp_path, capsys):
    # was: info failed on a valid .tiktoken whose special tokens fill ids 0-2 ("pass special_tokens=", no such option)
    tok = toksmith.Tokenizer.from_ranks(
        {bytes([b]): b + 2 for b in range(256)}, "gpt2", special_tokens={"<|bos|>": 0, "<|eos|>": 1}
    )
    tok.save_tiktoken(tmp_path / "t.tiktoken")
    path = str(tmp_path / "t.tiktoken")
    assert main(["info", "-t", path, "--pattern", "gpt2"]) != 0
    assert "--special-tokens" in capsys.readouterr().err
    assert (
        main(
            [
                "info",
                "-t",
                path,
                "--pattern",
                "gpt2",
                "--json",
                "--special-tokens",
                '{"<|bos|>": 0, "<|eos|>": 1}',
            ]
        )
        == 0
    )
    info = json.loads(capsys.readouterr().out)
    assert info["n_vocab"] == 258 and info["special_tokens"] == {"<|bos|>": 0, "<|eos|>": 1}
    assert main(["info", "-t", path, "--special-tokens", "[0]"]) != 0
    assert "must be a JSON object" in capsys.readouterr().err
