"""js-tiktoken rank files (``{"pat_str", "special_tokens", "bpe_ranks"}``): read as js-tiktoken
reads them; the JavaScript pattern keeps its JavaScript meaning (checked with node when there
is one)."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess

import pytest

import toksmith
from toksmith.files import tiktoken as tt
from toksmith.files.detect import detect_format
from toksmith.pretokenize import split

from .model_texts import all_texts

tiktoken = pytest.importorskip("tiktoken")

GPT2 = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "vocabs", "gpt2.tiktoken")
#: the pattern of js-tiktoken's gpt2/r50k ranks and of Anthropic's legacy claude.json
JS_GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


def _js_file(tmp_path, ranks, specials, per_line=1000, **extra):
    by_rank = sorted(ranks.items(), key=lambda kv: kv[1])
    lines = []
    for k in range(0, len(by_rank), per_line):
        chunk = by_rank[k : k + per_line]
        toks = " ".join(base64.b64encode(t).decode() for t, _ in chunk)
        lines.append(f"! {chunk[0][1]} {toks}")
    doc = {"pat_str": JS_GPT2, "special_tokens": specials, "bpe_ranks": "\n".join(lines), **extra}
    path = tmp_path / "ranks.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_ids_equal_tiktoken(tmp_path):
    ranks = tt.load_tiktoken_ranks(GPT2)
    specials = {"<|endoftext|>": 50256}
    # explicit_n_vocab disagreeing with the ranks is ignored, as js-tiktoken ignores it
    path = _js_file(tmp_path, ranks, specials, explicit_n_vocab=65000)
    assert detect_format(path) == "js-tiktoken"
    tok = toksmith.load_any(path)
    assert tok.special_tokens == specials and tok.n_vocab == 50257
    enc = tiktoken.Encoding("r50k", pat_str=JS_GPT2, mergeable_ranks=ranks, special_tokens=specials)
    # tiktoken's \s is Unicode's: the texts without the two characters where JavaScript's differs
    texts = [t for t in all_texts(specials) if "\ufeff" not in t and "\x85" not in t]
    assert tok.encode_batch(texts, allowed_special="all") == enc.encode_batch(
        texts, allowed_special="all"
    )
    ids = tok.encode(texts[0])
    assert tok.decode(ids) == enc.decode(ids)


def test_javascript_whitespace_is_kept():
    pat = tt._from_js_regex(JS_GPT2, "x")
    # JavaScript's \s has U+FEFF (Unicode's does not: one punctuation piece there)
    assert split("a\ufeff\ufeffb", pat) == ["a", "\ufeff", "\ufeff", "b"]
    assert split("a\ufeff\ufeffb", JS_GPT2) == ["a", "\ufeff\ufeff", "b"]
    assert split("a \x85b", pat) == ["a", " \x85", "b"]  # and not U+0085
    with pytest.raises(toksmith.ConversionError, match=r"\\b"):
        tt._from_js_regex(r"\b\w+", "x")
    with pytest.raises(toksmith.ConversionError, match="inside a character class"):
        tt._from_js_regex(r"[\S\d]+", "x")


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run JavaScript's regex")
def test_split_equals_javascript():
    texts = all_texts() + ["a\ufeff\ufeffb \x85 c\u2028d", "x1\u00a0 \ufeff"]
    script = (
        "const fs=require('fs');const d=JSON.parse(fs.readFileSync(0,'utf8'));"
        "const re=new RegExp(d.pat,'ug');"
        "process.stdout.write(JSON.stringify(d.texts.map(t=>t.match(re)||[])));"
    )
    out = subprocess.run(
        ["node", "-e", script],
        input=json.dumps({"pat": JS_GPT2, "texts": texts}),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    pat = tt._from_js_regex(JS_GPT2, "x")
    assert [split(t, pat) for t in texts] == json.loads(out)


def test_malformed(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"pat_str": JS_GPT2, "bpe_ranks": "! x YQ=="}), encoding="utf-8")
    with pytest.raises(toksmith.TokenizerFileError, match="expected 'NAME OFFSET TOKEN"):
        toksmith.load_any(path)
    path.write_text(json.dumps({"pat_str": JS_GPT2, "bpe_ranks": "! 0 Y@=="}), encoding="utf-8")
    with pytest.raises(toksmith.TokenizerFileError, match="not valid base64"):
        toksmith.load_any(path)
