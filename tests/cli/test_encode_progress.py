"""`toksmith encode` shows a progress bar (bytes) when stderr is a terminal, none with --quiet
or when stderr is not a terminal, and the ids are the same either way (issue 34)."""

import warnings

import pytest

import toksmith
import toksmith.cli.encode as encode_cli
from toksmith.cli import main

tqdm_auto = pytest.importorskip("tqdm.auto")


class _Bar:
    made: list = []

    def __init__(self, **kw):
        self.kw, self.n = kw, 0
        _Bar.made.append(self)

    def update(self, n=1):
        self.n += n

    def close(self):
        self.closed = True


@pytest.fixture
def setup(tmp_path, monkeypatch):
    _Bar.made = []
    monkeypatch.setattr(tqdm_auto, "tqdm", _Bar)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = toksmith.train_from_iterator(["hello world\n"] * 50, vocab_size=270, threads=1)
    tok_path = tmp_path / "tok.json"
    tok.save(tok_path)
    src = tmp_path / "in.txt"
    src.write_text("hello world, said the encoder\n" * 20000, encoding="utf-8")
    return tok, tok_path, src


def test_bar_on_a_terminal(setup, monkeypatch, capsys):
    tok, tok_path, src = setup
    monkeypatch.setattr(encode_cli, "progress_default", lambda: True)
    assert main(["encode", "-t", str(tok_path), str(src), "--block-size", "65536"]) == 0
    ids = [int(x) for x in capsys.readouterr().out.split()]
    assert ids == tok.encode(src.read_text(encoding="utf-8"))
    (bar,) = _Bar.made
    size = src.stat().st_size
    assert bar.kw["total"] == size and bar.n == size and bar.kw["unit"] == "B" and bar.closed


def test_no_bar_with_quiet_or_off_a_terminal(setup, monkeypatch, capsys):
    tok, tok_path, src = setup
    assert main(["encode", "-t", str(tok_path), str(src)]) == 0  # stderr is no terminal here
    monkeypatch.setattr(encode_cli, "progress_default", lambda: True)
    assert main(["encode", "-t", str(tok_path), str(src), "--quiet"]) == 0
    assert _Bar.made == []
    assert capsys.readouterr().err == ""
