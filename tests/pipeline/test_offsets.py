"""PipelineTokenizer.encode_with_offsets: each token's character span, equal to `tokenizers`'
Encoding.offsets for tokenizer.json files (BERT, Llama, T5)."""

import pytest

import toksmith

from ..files.test_sentencepiece import ALL_TEXTS, TEXTS


@pytest.mark.parametrize("name", ["bert", "llama", "t5"])
def test_offsets_match_tokenizers(hf_refs, name):
    ref, path = hf_refs[name]
    tok = toksmith.load_any(path)
    for text in ALL_TEXTS:
        enc = ref.encode(text)
        ids, spans = tok.encode_with_offsets(text)
        assert ids == enc.ids == tok.encode(text), text
        assert spans == enc.offsets, text
        ids, spans = tok.encode_with_offsets(text, add_special_tokens=False)
        assert spans == ref.encode(text, add_special_tokens=False).offsets, text


@pytest.mark.parametrize("name", ["llama2.model", "t5_spm.model", "bert"])
def test_offsets_of_files_cover_their_tokens(files, name):
    tok = toksmith.load_any(files / name)
    for text in ALL_TEXTS:
        ids, spans = tok.encode_with_offsets(text, add_special_tokens=False)
        assert ids == tok.encode(text, add_special_tokens=False), text
        assert len(spans) == len(ids)
        last = 0
        for a, b in spans:
            assert 0 <= a <= b <= len(text) and a >= last - 1, (text, spans)
            last = a


def test_offsets_of_special_and_surrogate_text(files):
    tok = toksmith.load_any(files / "llama2.model")
    text = "<s>Hi"
    ids, spans = tok.encode_with_offsets(text, special=True)
    assert ids[0] == 1 and spans[0] == (0, 3)
    assert spans[1:] == [(a + 3, b + 3) for a, b in tok.encode_with_offsets("Hi")[1]]
    # a lone surrogate is U+FFFD (byte fallback: 3 tokens of one character)
    ids, spans = tok.encode_with_offsets("a\ud800b")
    assert ids == tok.encode("a\ufffdb")
    assert all(0 <= a <= b <= 3 for a, b in spans)
    ids, spans = tok.encode_with_offsets("a\U0001f600b")
    assert ids == tok.encode("a\U0001f600b") and spans[-1][1] == 3


def test_offsets_spell_the_tokens_of_plain_text(files):
    # where no normalizer changes the text, each token's span holds its text
    tok = toksmith.load_any(files / "llama2.model")
    for text in TEXTS[:4]:
        ids, spans = tok.encode_with_offsets(text)
        for i, (a, b) in zip(ids, spans):
            assert tok.id_to_token(i).replace("▁", " ").strip() == text[a:b].strip(), text
