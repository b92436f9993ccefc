"""CLIP's tokenizer files (vocab.json + merges.txt with the </w> suffix, OpenAI's
bpe_simple_vocab_16e6.txt.gz, a CLIP tokenizer.json): ids and decode equal to transformers'
CLIPTokenizer (and tokenizers for the tokenizer.json), from the real merges of CLIP ViT-L/14."""

from __future__ import annotations

import gzip
import json
import os
import pickle

import pytest

import toksmith
from toksmith.files.clip import read_clip_files
from toksmith.files.detect import detect_format
from toksmith.pipeline_tokenizer import PipelineTokenizer

from .model_texts import all_texts, unxz

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

SPECIALS = ["<|startoftext|>", "<|endoftext|>"]
EXTRA = [
    "<|STARTOFTEXT|>A Photo of <|ENDOFTEXT|> a cat<|endoftext|>",
    "<|endoftext|>\u0338 and <|startoftext|>\u0338",
    "It's   ME\t\tHere,\u00a0don't   you'll  KNOW",
    "a\u030a\u0301 Å \u212b ﬁ x" * 3,
]


def _bytes_to_unicode():
    # CLIP's simple_tokenizer.bytes_to_unicode, as its source writes it
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


def _clip_vocab(merges):
    # CLIP's SimpleTokenizer.__init__
    vocab = list(_bytes_to_unicode().values())
    vocab = vocab + [v + "</w>" for v in vocab]
    vocab += ["".join(m) for m in merges]
    vocab += SPECIALS
    return {t: i for i, t in enumerate(vocab)}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """(the folder with vocab.json + merges.txt + CLIP ViT-L/14's tokenizer_config.json, the
    same without the config, the merges text)."""
    d = tmp_path_factory.mktemp("clip")
    merges_path = unxz("vocabs/models/clip_vit_l14_merges.txt", d)
    with open(merges_path, encoding="utf-8") as f:
        text = f.read()
    merges = [tuple(line.split()) for line in text.strip().split("\n")[1:]]
    folders = []
    for name, config in (("with_config", True), ("bare", False)):
        folder = d / name
        folder.mkdir()
        (folder / "merges.txt").write_text(text, encoding="utf-8")
        with open(folder / "vocab.json", "w", encoding="utf-8") as f:
            json.dump(_clip_vocab(merges), f, ensure_ascii=False)
        if config:
            token = {"content": "", "lstrip": False, "normalized": True, "rstrip": False}
            token["single_word"] = False
            cfg = {
                "bos_token": {**token, "__type": "AddedToken", "content": "<|startoftext|>"},
                "eos_token": {**token, "__type": "AddedToken", "content": "<|endoftext|>"},
                "unk_token": {**token, "__type": "AddedToken", "content": "<|endoftext|>"},
                "pad_token": "<|endoftext|>",
                "do_lower_case": True,
                "errors": "replace",
                "model_max_length": 77,
                "tokenizer_class": "CLIPTokenizer",
            }
            (folder / "tokenizer_config.json").write_text(json.dumps(cfg), encoding="utf-8")
        folders.append(str(folder))
    return folders[0], folders[1], text


def _texts():
    return all_texts(SPECIALS) + EXTRA


def _check(tok, ref_ids, ref_decode):
    texts = _texts()
    got = tok.encode_batch(texts)
    for t, ids in zip(texts, got):
        assert ids == ref_ids(t), t
        assert tok.decode(ids) == ref_decode(ids), t


@pytest.mark.parametrize("which", [0, 1])
def test_folder_matches_transformers(files, which):
    folder = files[which]
    ref = transformers.CLIPTokenizer.from_pretrained(folder)
    assert detect_format(folder) == "clip"
    tok = toksmith.load_any(folder)
    assert tok.n_vocab == 49408 and tok.special_tokens == {
        "<|startoftext|>": 49406,
        "<|endoftext|>": 49407,
    }
    _check(
        tok,
        lambda t: ref(t, add_special_tokens=False)["input_ids"],
        lambda ids: ref.decode(ids),
    )
    # either file of the pair names the same tokenizer
    for name in ("vocab.json", "merges.txt"):
        assert detect_format(os.path.join(folder, name)) == "clip"
        assert toksmith.load_any(os.path.join(folder, name)).encode(EXTRA[0]) == tok.encode(
            EXTRA[0]
        )


def test_original_gz_matches_transformers(files, tmp_path):
    bare, text = files[1], files[2]
    lines = text.strip().split("\n")[1:]
    # the original file: a header line, CLIP's 48894 merges, then more that CLIP never reads
    body = "\n".join(['"bpe_simple_vocab_16e6.txt#version: 0.2'] + lines + lines[:500]) + "\n"
    gz = tmp_path / "bpe_simple_vocab_16e6.txt.gz"
    gz.write_bytes(gzip.compress(body.encode("utf-8")))
    assert detect_format(str(gz)) == "clip"
    tok = toksmith.load_any(gz)
    ref = transformers.CLIPTokenizer.from_pretrained(bare)
    _check(
        tok,
        lambda t: ref(t, add_special_tokens=False)["input_ids"],
        lambda ids: ref.decode(ids),
    )
    short = tmp_path / "short.txt.gz"
    short.write_bytes(gzip.compress("\n".join(['"x#version: 0.2'] + lines[:100]).encode()))
    with pytest.raises(toksmith.TokenizerFileError, match="truncated"):
        toksmith.load_any(short)


@pytest.mark.parametrize("normalized", [False, True])
def test_tokenizer_json_matches_tokenizers(files, tmp_path, normalized):
    ref = transformers.CLIPTokenizer.from_pretrained(files[0])
    doc = json.loads(ref.backend_tokenizer.to_str())
    for a in doc["added_tokens"]:
        a["normalized"] = normalized  # found in the raw or in the lower-cased text
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    hf = tokenizers.Tokenizer.from_file(str(path))
    tok = toksmith.load_any(path)
    # the post-processor's <|startoftext|> ... <|endoftext|> by default, as tokenizers adds them
    _check(
        tok,
        lambda t: hf.encode(t).ids,
        lambda ids: hf.decode(ids, skip_special_tokens=False),
    )
    for t in [*_texts(), "A <|startoftext|>b <|endoftext|>", "<|ENDOFTEXT|> x"]:
        assert tok.encode(t, add_special_tokens=False) == hf.encode(t, add_special_tokens=False).ids
        # the offsets path finds the added tokens where encode does (normalized or raw text)
        ids, spans = tok.encode_with_offsets(t)
        assert ids == tok.encode(t) == hf.encode(t).ids, t
        assert len(spans) == len(ids), t
        # (CLIP's normalizer does not change text piecewise: the runs between added tokens are
        # aligned as a whole; the added tokens' own spans are exact)
        ref = hf.encode(t)
        for i, x in enumerate(ids):
            if x in (49406, 49407) and ref.offsets[i] != (0, 0):
                assert spans[i] == ref.offsets[i], t


def test_gpt2_reader_points_to_load_any(files):
    folder = files[1]
    with pytest.raises(toksmith.ConversionError, match="end-of-word BPE .*load_any"):
        toksmith.from_gpt2_files(
            os.path.join(folder, "vocab.json"), os.path.join(folder, "merges.txt")
        )


def test_malformed_files_name_the_problem(tmp_path):
    merges = "#version: 0.2\ni n\nt h</w>\n"
    (tmp_path / "merges.txt").write_text(merges, encoding="utf-8")
    (tmp_path / "vocab.json").write_text('{"i": "x", "n": 1}', encoding="utf-8")
    with pytest.raises(toksmith.TokenizerFileError, match="no valid id"):
        toksmith.load_any(tmp_path)
    (tmp_path / "merges.txt").write_text(merges + "a b c</w>\n", encoding="utf-8")
    with pytest.raises(toksmith.TokenizerFileError, match="line 4: expected 'left right'"):
        toksmith.load_any(tmp_path)


def test_odd_files_read_as_the_python_reader(files, tmp_path):
    # CR LF lines, a lone CR and blank lines (the native reader declines them: read in Python,
    # as before) and a file without the header (read natively) give the same tokenizer
    folder, text = files[1], files[2]
    ref = toksmith.load_any(folder)
    assert ref.source_kind == "clip"
    body = text.strip().split("\n")
    variants = {
        "crlf": "\r\n".join(body) + "\r\n",
        "cr": "\r".join(body),
        "blank": "\n\n".join(body[:3]) + "\n \t\n" + "\n".join(body[3:]) + "\n\n",
        "no_header": "\n".join(body[1:]),
    }
    sample = _texts()[:20] + EXTRA
    for name, merges in variants.items():
        d = tmp_path / name
        d.mkdir()
        (d / "merges.txt").write_bytes(merges.encode("utf-8"))
        with open(os.path.join(folder, "vocab.json"), "rb") as f:
            (d / "vocab.json").write_bytes(f.read())
        tok = toksmith.load_any(d)
        assert tok.encode_batch(sample) == ref.encode_batch(sample), name


def test_export_and_pickle_keep_the_ids(files, tmp_path):
    # the exported document (its decoder is toksmith's: CLIPTokenizer's clean-up) read back
    tok = toksmith.load_any(files[0])
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(tok.to_huggingface_json()), encoding="utf-8")
    back = toksmith.load_any(path)
    again = pickle.loads(pickle.dumps(tok))
    assert again.source_kind == "clip" and back.source_kind == "hf_json"
    for t in _texts()[:20] + EXTRA:
        ids = tok.encode(t, add_special_tokens=False)
        assert back.encode(t, add_special_tokens=False) == ids, t
        assert again.encode(t, add_special_tokens=False) == ids, t
        assert back.decode(ids) == again.decode(ids) == tok.decode(ids), t


def test_bad_files_name_the_file(tmp_path):
    vocab, merges = tmp_path / "vocab.json", tmp_path / "merges.txt"

    def load():
        return PipelineTokenizer.from_source(read_clip_files(vocab, merges))

    merges.write_text("#version: 0.2\ni n\nt h</w>\n", encoding="utf-8")
    vocab.write_text('["i", "n"]', encoding="utf-8")
    with pytest.raises(toksmith.TokenizerFileError, match="vocab.json: expected a JSON object"):
        load()
    vocab.write_text('{"i": 0, "n": 1', encoding="utf-8")
    with pytest.raises(toksmith.TokenizerFileError, match="merges.txt: does not parse"):
        load()
    vocab.write_text('{"i": 0, "n": 1, "in": 2}', encoding="utf-8")
    with pytest.raises(toksmith.TokenizerFileError, match="merges.txt: .*merge .*not in the vocab"):
        load()
    merges.write_bytes(b"#version: 0.2\ni n\n\xff h</w>\n")
    with pytest.raises(toksmith.TokenizerFileError, match="merges.txt: does not parse"):
        load()
