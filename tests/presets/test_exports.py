"""Every preset's export to another library is exact or refused (issue 33): nanochat and
Cromwell (their ids are those of their byte-level tokenizer) export with identical ids on
held-out text, checked with tiktoken and tokenizers themselves; CppReason (whole-word fixed
ids), the word-level and the CALM tokenizers raise ConversionError naming why, and `toksmith
convert` fails on them without writing anything."""

from __future__ import annotations

import pytest

import toksmith
from tests.conftest import DATA
from toksmith.cli import main
from toksmith.errors import ConversionError
from toksmith.presets import calm, cppreason, cromwell, nanochat, wordbpe

tiktoken = pytest.importorskip("tiktoken")
tiktoken_load = pytest.importorskip("tiktoken.load")
tokenizers = pytest.importorskip("tokenizers")


def _slice(name: str) -> str:
    return (DATA / "corpora" / f"{name}_slice.txt").read_text(encoding="utf-8")


def _chunks(text: str, n: int = 40):
    lines = text.split("\n")
    return ["\n".join(lines[i : i + n]) for i in range(0, len(lines), n)]


#: held out from the training below (trained on the English and Python slices only)
HELD_OUT = (
    _chunks(_slice("cpp"))
    + _chunks(_slice("javascript"))
    + _chunks(_slice("shell"))
    + ["Unicode: 你好世界 🌍 naïve Grüße\r\n\t  12345 it's  \n\n\n    x"]
)
TRAIN = [_slice("english"), _slice("python")]


@pytest.fixture(scope="module")
def exact_presets():
    return {
        "nanochat": nanochat.train(TRAIN, vocab_size=900, threads=1),
        "cromwell": cromwell.train(TRAIN, vocab_size=900, threads=1),
    }


@pytest.mark.parametrize("name", ["nanochat", "cromwell"])
def test_exports_are_exact_on_held_out_text(exact_presets, name, tmp_path):
    tok = exact_presets[name]
    enc = tok.to_tiktoken()
    tok.save_huggingface(tmp_path / "hf")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "hf" / "tokenizer.json"))
    tok.save_tiktoken(tmp_path / "t.tiktoken")
    from_file = tiktoken.Encoding(
        "from-file",
        pat_str=tok.tokenizer.pattern,
        mergeable_ranks=tiktoken_load.load_tiktoken_bpe(str(tmp_path / "t.tiktoken")),
        special_tokens=tok.tokenizer.special_tokens,
    )
    for text in HELD_OUT:
        ids = tok.encode(text)
        assert enc.encode_ordinary(text) == ids
        assert from_file.encode_ordinary(text) == ids
        assert hf.encode(text, add_special_tokens=False).ids == ids
        assert hf.decode(ids, skip_special_tokens=False) == text
    # the special tokens keep their ids
    assert enc._special_tokens == tok.tokenizer.special_tokens
    assert {t.content: i for i, t in hf.get_added_tokens_decoder().items()} == (
        tok.tokenizer.special_tokens
    )


def _hf_from_gpt2_files(directory, pattern: str):
    """The other library reading GPT-2 files (vocab.json, merges.txt): its BPE with the split
    pattern given separately (the files do not hold it), as they are meant to be loaded."""
    from tokenizers import Regex, decoders, models, pre_tokenizers

    hf = tokenizers.Tokenizer(
        models.BPE.from_file(str(directory / "vocab.json"), str(directory / "merges.txt"))
    )
    hf.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    hf.decoder = decoders.ByteLevel()
    return hf


@pytest.mark.parametrize("name", ["nanochat", "cromwell"])
def test_convert_writes_exact_files(exact_presets, name, tmp_path, capsys):
    """`toksmith convert` of a saved nanochat or Cromwell tokenizer to every format: each file,
    read by the other library, gives toksmith's ids on held-out text."""
    tok = exact_presets[name]
    saved = tmp_path / "tok.json"
    tok.save(saved)
    pattern = tok.tokenizer.pattern
    for to in ("huggingface", "tiktoken", "gpt2"):
        out = tmp_path / f"out-{to}"
        assert main(["convert", str(saved), str(out), "--to", to]) == 0, capsys.readouterr()
        capsys.readouterr()
        if to == "huggingface":
            hf = tokenizers.Tokenizer.from_file(str(out / "tokenizer.json"))
            encode = lambda t: hf.encode(t, add_special_tokens=False).ids  # noqa: E731
        elif to == "gpt2":
            hf = _hf_from_gpt2_files(out, pattern)
            encode = lambda t: hf.encode(t, add_special_tokens=False).ids  # noqa: E731
        else:
            files = [f for f in out.rglob("*") if f.is_file()] if out.is_dir() else [out]
            (ranks_file,) = [f for f in files if f.suffix == ".tiktoken"] or files
            enc = tiktoken.Encoding(
                "from-file",
                pat_str=pattern,
                mergeable_ranks=tiktoken_load.load_tiktoken_bpe(str(ranks_file)),
                special_tokens={},
            )
            encode = enc.encode_ordinary
        for text in HELD_OUT:
            assert encode(text) == tok.tokenizer.encode_ordinary(text), (to, text[:60])


@pytest.fixture(scope="module")
def cpp():
    return cppreason.train([_slice("cpp")], vocab_size=2000)


def test_cppreason_exports_are_refused(cpp, tmp_path):
    path = tmp_path / "cpp.json"
    cpp.save(path)
    for tok in (cpp, cpp.tokenizer, toksmith.load(path)):
        for call in (
            lambda: tok.to_tiktoken(),
            lambda: tok.save_tiktoken(tmp_path / "x.tiktoken"),
            lambda: tok.to_huggingface(),
            lambda: tok.save_huggingface(tmp_path / "hf"),
            lambda: tok.save_gpt2_files(tmp_path / "gpt2"),
        ):
            with pytest.raises(ConversionError, match="whole-word fixed ids"):
                call()
    assert not (tmp_path / "x.tiktoken").exists() and not (tmp_path / "hf").exists()
    # what such an export would have held: the learned BPE alone, other ids than CppReason's
    text = _chunks(_slice("cpp"))[3]
    assert cpp.tokenizer.encode_ordinary(text) != cpp.encode(text)


@pytest.mark.parametrize("to", ["huggingface", "tiktoken", "gpt2"])
def test_convert_refuses_cppreason_and_calm(cpp, tmp_path, capsys, to):
    cpp.save(tmp_path / "cpp.json")
    calm.ByteTokenizer().save(tmp_path / "calm.json")
    for name, why in (("cpp", "whole-word fixed ids"), ("calm", "320-id byte table")):
        out = tmp_path / f"out-{name}-{to}"
        assert main(["convert", str(tmp_path / f"{name}.json"), str(out), "--to", to]) != 0
        err = capsys.readouterr().err
        assert why in err and "Traceback" not in err
        assert not out.exists()


def test_cppreason_exports_are_refused_with_either_word_split(tmp_path, capsys):
    """Punctuation runs (the default) or single punctuation: refused the same way."""
    single = cppreason.train([_slice("cpp")], vocab_size=1900, punctuation_runs=False)
    single.save(tmp_path / "s.json")
    for to in ("huggingface", "tiktoken", "gpt2"):
        out = tmp_path / f"o-{to}"
        assert main(["convert", str(tmp_path / "s.json"), str(out), "--to", to]) != 0
        assert "whole-word fixed ids" in capsys.readouterr().err and not out.exists()


def test_word_and_calm_tokenizers_refuse_every_export(tmp_path):
    word = wordbpe.train([_slice("english")], 200)
    for tok, why in ((word, "word-level"), (calm.ByteTokenizer(), "320-id byte table")):
        for call in (
            lambda: tok.to_tiktoken(),
            lambda: tok.save_tiktoken(tmp_path / "x.tiktoken"),
            lambda: tok.to_huggingface(),
            lambda: tok.save_huggingface(tmp_path / "hf"),
            lambda: tok.save_gpt2_files(tmp_path / "g"),
        ):
            with pytest.raises(ConversionError, match=why):
                call()
    word.save(tmp_path / "w.json")
    for to in ("tiktoken", "huggingface", "gpt2"):
        out = tmp_path / f"o-{to}"
        assert main(["convert", str(tmp_path / "w.json"), str(out), "--to", to])
        assert not out.exists()
