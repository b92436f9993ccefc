"""`toksmith encode` outputs: --lines keeps the final newline status, npy onto stdout, bad
outputs; with special tokens that hold a newline, a tab and an escape character."""

import io
import json
import sys

import pytest

import toksmith
from tests.cli.helpers import _err  # stderr with no traceback in it
from toksmith.cli import main
from toksmith.formats import load_any


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("calm", [False, True])
def test_encode_lines_keeps_the_final_newline_status(control_tok_path, tmp_path, fmt, calm):
    # was: a last line without a newline came out with one ("a\nb" gave two lines of ids, each
    # ending with "\n"), so the output was no line-by-line transform of the input
    if calm:
        from toksmith import calm as calm_module

        tok_file = tmp_path / "calm.json"
        calm_module.ByteTokenizer().save(tok_file)  # not a toksmith Tokenizer: the Python path
    else:
        tok_file = control_tok_path
    tok = load_any(tok_file)
    for data in [
        "hello world\nthe world",
        "hello world\nthe world\n",
        "x",
        "\n",
        "\n\n",
        "",
        "a\n\nb",
    ]:
        src, out = tmp_path / "in.txt", tmp_path / "ids.out"
        src.write_bytes(data.encode())
        # small blocks: the newline held back is written when the next batch comes
        assert (
            main(
                [
                    "encode",
                    "-t",
                    str(tok_file),
                    str(src),
                    "--lines",
                    "--format",
                    fmt,
                    "--block-size",
                    "4",
                    "-o",
                    str(out),
                ]
            )
            == 0
        )
        lines = data.split("\n")
        if data.endswith("\n"):
            lines.pop()
        rows = [tok.encode(line) for line in lines] if data else []
        if fmt == "json":
            want = "\n".join(json.dumps(r) for r in rows)
        else:
            want = "\n".join(" ".join(map(str, r)) for r in rows)
        if data.endswith("\n"):
            want += "\n"
        assert out.read_text() == want, data


@pytest.mark.parametrize("before", [b"", b"\x93NUMPY earlier array"])
def test_encode_npy_to_appending_stdout_is_refused(
    control_tok_path, tmp_path, capsys, monkeypatch, before
):
    # was: `>> out.npy` wrote the placeholder and ids after what was there and the header (which
    # is rewritten at the start, but O_APPEND puts it at the end) last: a corrupt file, exit 0
    src = tmp_path / "in.txt"
    src.write_text("hello world\n", encoding="utf-8")
    target = tmp_path / "out.npy"
    target.write_bytes(before)
    with open(target, "ab") as f:
        monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(f))
        assert main(["encode", "-t", str(control_tok_path), str(src), "--format", "npy"]) == 1
        monkeypatch.undo()
    err = _err(capsys)
    assert "appending" in err and "-o FILE" in err
    assert target.read_bytes() == before


def test_encode_npy_to_stdout_after_other_data_is_refused(
    control_tok_path, tmp_path, capsys, monkeypatch
):
    # was: `{ echo x; toksmith encode --format npy ...; } > out.npy` wrote the header over the
    # data before it and the ids after it: a corrupt file, exit 0
    src = tmp_path / "in.txt"
    src.write_text("hello world\n", encoding="utf-8")
    target = tmp_path / "out.npy"
    with open(target, "wb") as f:
        f.write(b"x\n")
        f.flush()
        monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(f))
        assert main(["encode", "-t", str(control_tok_path), str(src), "--format", "npy"]) == 1
        monkeypatch.undo()
    err = _err(capsys)
    assert "already holds 2 bytes" in err and "-o FILE" in err
    assert target.read_bytes() == b"x\n"


def test_encode_npy_to_a_fresh_stdout_file_and_with_o_still_work(
    control_tok_path, tmp_path, monkeypatch
):
    np = pytest.importorskip("numpy")
    src = tmp_path / "in.txt"
    src.write_text("hello world\n", encoding="utf-8")
    want = toksmith.load(control_tok_path).encode("hello world\n")
    target = tmp_path / "stdout.npy"
    with open(target, "wb") as f:  # `> out.npy`
        monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(f))
        assert main(["encode", "-t", str(control_tok_path), str(src), "--format", "npy"]) == 0
        monkeypatch.undo()
    assert np.load(target).tolist() == want
    out = tmp_path / "o.npy"
    out.write_bytes(b"old content, replaced")
    assert (
        main(["encode", "-t", str(control_tok_path), str(src), "--format", "npy", "-o", str(out)])
        == 0
    )
    assert np.load(out).tolist() == want


@pytest.mark.parametrize(
    "out, message",
    [
        ("", "output file name is empty"),
        (".", "is a folder"),
        ("nowhere/ids.txt", "does not exist"),
    ],
)
def test_encode_bad_output_is_a_clear_message(
    control_tok_path, tmp_path, capsys, monkeypatch, out, message
):
    # was: the bare OSError ("[Errno 2] No such file or directory: ''", "[Errno 21] Is a
    # directory: '.'"), after the tokenizer was loaded
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.txt").write_text("hello\n", encoding="utf-8")
    assert main(["encode", "-t", str(control_tok_path), "in.txt", "-o", out]) == 1
    assert message in _err(capsys)
