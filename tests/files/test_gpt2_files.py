"""GPT-2 encoder.json + vocab.bpe (vocab.json + merges.txt)."""

import json
import shutil

import pytest

import toksmith
from tests.helpers import GPT2_ENCODER, GPT2_VOCAB_BPE, PATTERN_NAMES, all_ids, hf_ids
from toksmith.formats import (
    ConversionError,
    detect_format,
    from_gpt2_files,
    load_any,
)
from toksmith.formats.gpt2 import read_merges_file, save_gpt2_files


@pytest.fixture(scope="session")
def gpt2_from_files():
    return from_gpt2_files(GPT2_ENCODER, GPT2_VOCAB_BPE)


def test_original_files_equal_r50k(gpt2_from_files, gpt2_tok):
    assert gpt2_from_files.mergeable_ranks() == gpt2_tok.mergeable_ranks()
    assert gpt2_from_files.special_tokens == {"<|endoftext|>": 50256}
    assert gpt2_from_files.pattern_name == "gpt2"


def test_recovered_merges_equal_vocab_bpe(gpt2_tok):
    """Merges recovered from the rank file alone are exactly GPT-2's vocab.bpe."""
    from toksmith.bytelevel import token_to_str

    recovered = [(token_to_str(a), token_to_str(b)) for a, b in gpt2_tok.merges()]
    assert recovered == read_merges_file(GPT2_VOCAB_BPE)


def test_ids_on_corpora(gpt2_from_files, gpt2_tok, corpus_chunks):
    assert all_ids(gpt2_from_files, corpus_chunks) == all_ids(gpt2_tok, corpus_chunks)


def test_save_reproduces_original_files(gpt2_from_files, tmp_path):
    gpt2_from_files.save_gpt2_files(tmp_path)
    assert json.loads((tmp_path / "vocab.json").read_text(encoding="utf-8")) == json.loads(
        GPT2_ENCODER.read_text(encoding="utf-8")
    )
    assert (tmp_path / "merges.txt").read_text(encoding="utf-8").split("\n")[
        1:
    ] == GPT2_VOCAB_BPE.read_text(encoding="utf-8").split("\n")[1:]


@pytest.mark.parametrize("pattern", PATTERN_NAMES)
def test_round_trip_trained(pattern, trained, corpus_chunks, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import Regex, decoders, models, pre_tokenizers

    from toksmith.formats._regex import to_oniguruma

    tok = trained[pattern]
    save_gpt2_files(tok, tmp_path)
    texts = corpus_chunks[::8] + ["<think>a</think> b<|endoftext|>"]
    expected = all_ids(tok, texts)
    back = from_gpt2_files(
        tmp_path / "vocab.json",
        tmp_path / "merges.txt",
        pattern=pattern,
        special_tokens=tok.special_tokens,
        pinned_tokens=tok.pinned_tokens,
    )
    assert back.mergeable_ranks() == tok.mergeable_ranks()
    assert all_ids(back, texts) == expected and back.decode_batch(expected) == texts
    # Hugging Face builds the same tokenizer from the two files
    hf = tokenizers.Tokenizer(
        models.BPE.from_file(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt"))
    )
    hf.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(to_oniguruma(tok.pattern)), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    hf.decoder = decoders.ByteLevel()
    hf.add_special_tokens(list(tok.special_tokens))
    hf.add_tokens(list(tok.pinned_tokens))
    assert hf_ids(hf, texts) == expected
    assert hf.decode_batch(expected, skip_special_tokens=False) == texts


def test_extra_tokens_default_to_special(trained, tmp_path):
    tok = trained["gpt2"]
    save_gpt2_files(tok, tmp_path)
    back = from_gpt2_files(tmp_path / "vocab.json", tmp_path / "merges.txt")
    assert back.special_tokens == {**tok.special_tokens, **tok.pinned_tokens}
    with pytest.raises(
        ConversionError, match="the token '<think>' .* is neither a byte nor made by a merge"
    ):
        from_gpt2_files(
            tmp_path / "vocab.json", tmp_path / "merges.txt", special_tokens=tok.special_tokens
        )


def test_rank_table_without_merges_cannot_be_saved(tmp_path):
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"xyz"] = 256
    with pytest.raises(ConversionError, match="needs a merge list"):
        toksmith.Tokenizer.from_ranks(ranks, "gpt2").save_gpt2_files(tmp_path)


tokenizers = pytest.importorskip("tokenizers")


TEXT = "Hello world, hello there: lower lowest newest <|end|> widest <pin> 12345 \n\n  x"


@pytest.fixture(scope="module")
def small_tok():
    return toksmith.train_from_iterator(
        [TEXT * 3, "the then there these those their"] * 20,
        vocab_size=300,
        pattern="gpt2",
        special_tokens=["<|end|>"],
        pinned_tokens=["<pin>"],
    )


def test_gpt2_files_with_unmerged_byte_level_tokens(small_tok, tmp_path):
    """Audit finding: A merges.txt cut short at a line end leaves vocab tokens that no merge makes; they were
    taken as special tokens named by their byte-level spelling: toksmith decoded such an id as
    'Ġthe' where GPT-2 (and Hugging Face) decode ' the', and encode(allowed_special='all')
    turned the text 'Ġthe' into it. Now a ConversionError that suggests a truncated file."""
    from tokenizers import decoders, models, pre_tokenizers

    plain = toksmith.Tokenizer(small_tok.mergeable_ranks(), pattern="gpt2")
    plain.save_gpt2_files(tmp_path)
    merges = (tmp_path / "merges.txt").read_text().splitlines(keepends=True)
    (tmp_path / "merges.txt").write_text("".join(merges[:-15]))
    vocab = json.loads((tmp_path / "vocab.json").read_text())
    hf = tokenizers.Tokenizer(
        models.BPE.from_file(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt"))
    )
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    unmerged = [t for t in list(vocab)[-15:] if any(c in t for c in "ĠĊ")]
    assert unmerged and hf.decode([vocab[unmerged[0]]]) != unmerged[0]
    for load in (
        lambda: load_any(tmp_path),
        lambda: toksmith.from_gpt2_files(tmp_path / "vocab.json", tmp_path / "merges.txt"),
    ):
        with pytest.raises(ConversionError, match="made by no merge.*truncated"):
            load()
    # the original GPT-2 pair, whose one extra token is <|endoftext|>, still loads as before
    from tests.helpers import GPT2_ENCODER, GPT2_VOCAB_BPE

    assert toksmith.from_gpt2_files(GPT2_ENCODER, GPT2_VOCAB_BPE).special_tokens == {
        "<|endoftext|>": 50256
    }


def test_merges_file_without_version_line_is_detected_by_its_name(tmp_path):
    # was: "unknown tokenizer file format" for gpt2_vocab.bpe without "#version", though its pair is found by name
    shutil.copy(GPT2_ENCODER, tmp_path / "gpt2_encoder.json")
    merges = GPT2_VOCAB_BPE.read_text(encoding="utf-8").split("\n", 1)[1]
    (tmp_path / "gpt2_vocab.bpe").write_text(merges, encoding="utf-8")
    assert detect_format(tmp_path / "gpt2_vocab.bpe") == "gpt2"
    tok = load_any(tmp_path / "gpt2_vocab.bpe")
    assert tok.n_vocab == 50257 and tok.encode("hello world") == [31373, 995]
