"""``toksmith calm inspect|encode|decode``, driven through the module's own parser."""

from __future__ import annotations

import argparse
import io
import json

import numpy as np
import pytest

from toksmith import calm
from toksmith.cli import calm as calm_cli
from toksmith.cli import main


def run_cli(argv, capsys):
    parser = argparse.ArgumentParser(prog="toksmith")
    sub = parser.add_subparsers(dest="command")
    calm_cli.register(sub)
    args = parser.parse_args(["calm", *argv])
    code = args.func(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_registered_in_the_main_cli(capsys):
    from toksmith.cli import SUBCOMMAND_MODULES, main

    assert "calm" in SUBCOMMAND_MODULES
    assert main(["calm", "encode", "--context", '{"input": "ls"}']) == 0
    assert capsys.readouterr().out.split() == ["257", "259", "264", "108", "115"]
    # errors become exit code 1 with a message
    assert main(["calm", "encode", "--context", "{bad"]) == 1
    assert "not valid JSON" in capsys.readouterr().err


def test_inspect(tmp_path, capsys):
    path = tmp_path / "shell.cwgt"
    calm.write_cwgt(
        path,
        calm.CWGTHeader(
            d_model=64, n_layers=2, dt_rank=4, def_temperature=700, flags=calm.FLAG_TIED
        ),
        calm.CWGTMetadata("shell", calm.TEMPLATES["shell"], "| ; && ||"),
        np.zeros(10, np.float32),
    )
    code, out, _ = run_cli(["inspect", str(path)], capsys)
    assert code == 0
    assert "arch_version     5" in out
    assert "d_model          64" in out
    assert "expand           2" in out and "dt_rank          4" in out
    assert "flags            0x0001 (tied)" in out
    assert "def_temperature  700 (0.7)" in out
    assert "domain           shell" in out
    assert f"template         {calm.TEMPLATES['shell']}" in out
    assert "stop_conditions  | ; && ||" in out
    assert "weights: 10 float32" in out and "ewc: none" in out
    code, out, _ = run_cli(["inspect", "--json", str(path)], capsys)
    doc = json.loads(out)
    assert doc["header"]["magic"] == "CWGT" and doc["header"]["param_count"] == 10
    assert doc["metadata"]["domain"] == "shell" and doc["ewc"] is False


def test_inspect_bad_file(tmp_path, capsys):
    path = tmp_path / "bad.cwgt"
    path.write_bytes(b"NOPE" + bytes(60))
    with pytest.raises(calm.CWGTError, match="'magic' at byte offset 0"):
        run_cli(["inspect", str(path)], capsys)


def test_encode(capsys):
    code, out, err = run_cli(
        ["encode", "--template", "shell", "--context", '{"cwd": "/home/u", "input": "git com"}'],
        capsys,
    )
    assert code == 0 and err == ""
    assert out.split() == [
        str(t) for t in calm.build_sequence("shell", {"cwd": "/home/u", "input": "git com"})
    ]
    code, out, _ = run_cli(
        ["encode", "--context", '{"input": "ls"}', "--training", "--names"], capsys
    )
    assert out.strip() == "<BOS> <ATN> <CMD> ls <EOS>"
    code, out, _ = run_cli(
        ["encode", "-T", "BOS;QUERY:q;ATN;CMD:input", "-c", '{"q": "hi", "input": "x"}', "--json"],
        capsys,
    )
    assert json.loads(out)["ids"] == [257, 267, 104, 105, 269, 259, 264, 120]


def test_encode_reports_dropped_and_reads_files(tmp_path, capsys, monkeypatch):
    ctx = {"history": [{"cmd": "abcdef", "exit": 0}] * 3, "input": "ls"}
    path = tmp_path / "ctx.json"
    path.write_text(json.dumps(ctx))
    code, out, err = run_cli(["encode", "--context-file", str(path), "--l-max", "20"], capsys)
    assert code == 0 and "dropped 2 history item(s) to fit l_max=20" in err
    assert len(out.split()) <= 20
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(ctx)))
    code, out, err = run_cli(["encode", "--context-file", "-"], capsys)
    assert code == 0 and out.split()[0] == "257"


def test_encode_with_model(tmp_path, capsys):
    path = tmp_path / "m.cwgt"
    calm.write_cwgt(
        path,
        {"d_model": 16, "n_layers": 1, "l_max": 8, "dt_rank": 1},
        {"template": "BOS;ATN;CMD:input"},
        np.zeros(1),
    )
    code, out, _ = run_cli(
        ["encode", "--model", str(path), "--context", '{"input": "abcde"}'], capsys
    )
    assert out.split() == ["257", "259", "264", "97", "98", "99", "100", "101"]
    with pytest.raises(ValueError, match="only 8 fit"):
        run_cli(["encode", "--model", str(path), "--context", '{"input": "abcdef"}'], capsys)


def test_encode_bad_context(capsys):
    with pytest.raises(ValueError, match="--context is not valid JSON"):
        run_cli(["encode", "--context", "{nope"], capsys)
    with pytest.raises(ValueError, match="must be a JSON object"):
        run_cli(["encode", "--context", "[1]"], capsys)
    with pytest.raises(SystemExit):
        run_cli(["encode"], capsys)  # a context is required


def test_decode(capsys, monkeypatch):
    code, out, _ = run_cli(["decode", "257", "104", "105", "258"], capsys)
    assert code == 0 and out == "hi"
    code, out, _ = run_cli(["decode", "--names", "104", "258"], capsys)
    assert out == "h<EOS>"
    with pytest.raises(ValueError, match="not a token id: 'x'"):
        run_cli(["decode", "x"], capsys)
    with pytest.raises(ValueError, match="320"):
        run_cli(["decode", "320"], capsys)


def test_no_subcommand_prints_help(capsys):
    code, out, _ = run_cli([], capsys)
    assert code == 2 and "inspect" in out and "encode" in out


def _run(argv, capsys, stdin=None, monkeypatch=None):
    from toksmith.cli import main

    if stdin is not None:
        monkeypatch.setattr("sys.stdin", stdin)
    code = main(["calm", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("word", ["1_0", "\u0663", "0x41", " 65"])
def test_cli_decode_takes_ascii_decimal_ids_only(word, capsys):
    code, _, err = _run(["decode", word], capsys)
    assert code == 1 and "not a token id" in err


def test_cli_decode_huge_id_is_out_of_range(capsys):
    code, _, err = _run(["decode", "9" * 5000], capsys)
    assert code == 1 and "out of range" in err


def test_cli_hostile_context_files(tmp_path, capsys, monkeypatch):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000)
    code, _, err = _run(["encode", "--context-file", str(deep)], capsys)
    assert code == 1 and ("nested too deeply" in err or "not valid JSON" in err)
    deep.write_text("[" * 200_000 + "]" * 200_000)
    code, _, err = _run(["encode", "--context-file", str(deep)], capsys)
    assert code == 1 and "nested too deeply" in err
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"input": "\xff"}')
    code, _, err = _run(["encode", "--context-file", str(bad)], capsys)
    assert code == 1 and "is not UTF-8: invalid byte at offset 11" in err
    code, out, _ = _run(
        ["encode", "--context-file", "-"], capsys, io.StringIO('{"input": "ls"}'), monkeypatch
    )
    assert code == 0 and out.split() == ["257", "259", "264", "108", "115"]


def test_exit_code_with_too_many_digits_says_what_is_wrong():
    # was: ValueError "Exceeds the limit (4300 digits) for integer string conversion; use sys.set_int_max_str_digits()"
    with pytest.raises(ValueError, match="exit code has too many digits"):
        calm.tokenize_frame("HIST", "ls", exit=10**5000)


def test_cli_encode_empty_template_is_an_error(capsys):
    # was: --template '' silently built with the "shell" template
    code = main(["calm", "encode", "--template", "", "--context", '{"input": "ls"}'])
    out, err = capsys.readouterr()
    assert code == 1 and out == "" and "element 0 is empty" in err and "Traceback" not in err
