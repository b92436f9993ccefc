"""Character offsets and the rest of tiktoken's ``Encoding`` surface: ``encode_with_offsets``
against Hugging Face's ``Encoding.offsets``, ``decode_with_offsets``, ``token_byte_values``,
``is_special_token`` and ``decode_bytes_batch`` against tiktoken's."""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import toksmith
from tests.helpers import GPT2_ENCODER, GPT2_VOCAB_BPE
from tests.strategies_interop import (
    hf_mixed_text,
    mixed_text,
    text_with_specials,
    tiktoken_mixed_text,
)


def _check_spans(tok, text, ids, spans):
    """What a span means, checked without a peer: each token's bytes lie inside the UTF-8 of
    its span, which is as short as that allows, and the spans walk through the text in order."""
    assert len(spans) == len(ids)
    data = text.encode("utf-8")
    at = 0  # byte offset of the current token
    prev_start = 0
    for i, (s, e) in zip(ids, spans):
        b = tok.decode_single_token_bytes(i)
        before = len(text[:s].encode("utf-8"))
        inside = text[s:e].encode("utf-8")
        assert before <= at and at + len(b) <= before + len(inside), (text, i, s, e)
        assert data[at : at + len(b)] == b
        # the span's first and last characters both hold a byte of the token
        assert at < before + len(text[s].encode("utf-8"))
        assert at + len(b) > before + len(inside) - len(text[e - 1].encode("utf-8"))
        assert s >= prev_start
        prev_start = s
        at += len(b)
    assert at == len(data)


# ------------------------------------------------------------------ without a peer


@given(text=mixed_text)
@example(text="<|fim_prefix|>")
def test_encode_with_offsets_spans(text, gpt2_tok, cl100k_tok):
    # (the fragments hold special tokens' texts, such as cl100k's "<|fim_prefix|>": plain text)
    for tok in (gpt2_tok, cl100k_tok):
        ids, spans = tok.encode_with_offsets(text, disallowed_special=())
        assert ids == tok.encode(text, disallowed_special=())
        _check_spans(tok, text, ids, spans)


@given(text=text_with_specials)
def test_encode_with_offsets_specials(text, trained):
    tok = trained["cl100k"]
    ids, spans = tok.encode_with_offsets(text, allowed_special="all")
    assert ids == tok.encode(text, allowed_special="all")
    _check_spans(tok, text, ids, spans)
    for i, (s, e) in zip(ids, spans):
        if tok.is_special_token(i):
            assert tok.special_tokens[text[s:e]] == i


def test_encode_with_offsets_multibyte(gpt2_tok):
    # byte tokens of one character share its span; a token ending inside one reaches past it
    ids, spans = gpt2_tok.encode_with_offsets("a😀")
    assert [gpt2_tok.decode_single_token_bytes(i) for i in ids] == [b"a", b"\xf0\x9f\x98", b"\x80"]
    assert spans == [(0, 1), (1, 2), (1, 2)]
    assert gpt2_tok.encode_with_offsets("") == ([], [])


def test_encode_with_offsets_surrogates(gpt2_tok):
    # ids of the text with its surrogates replaced (as encode does); spans index the text given
    text = "a\ud83d\ude00b \udc00x"
    ids, spans = gpt2_tok.encode_with_offsets(text)
    assert ids == gpt2_tok.encode(text)
    pieces = [text[s:e] for s, e in spans]
    assert pieces[0] == "a" and pieces[-1] == "x"
    assert "\ud83d\ude00" in pieces and " \udc00" in pieces
    assert spans[-1][1] == len(text)


def test_encode_with_offsets_disallowed_special(gpt2_tok):
    with pytest.raises(toksmith.DisallowedSpecialError):
        gpt2_tok.encode_with_offsets("x<|endoftext|>")


def test_decode_with_offsets_doc_semantics(gpt2_tok):
    ids = gpt2_tok.encode("hé 😀!")
    text, offsets = gpt2_tok.decode_with_offsets(ids)
    assert text == "hé 😀!"
    assert offsets == [s for s, _ in gpt2_tok.encode_with_offsets("hé 😀!")[1]]
    with pytest.raises(UnicodeDecodeError):
        gpt2_tok.decode_with_offsets(ids[:-2])  # ends inside the emoji


def test_is_special_token(trained):
    tok = trained["gpt2"]
    specials = set(tok.special_tokens.values())
    assert specials and all(tok.is_special_token(i) for i in specials)
    assert not any(tok.is_special_token(i) for i in tok.pinned_tokens.values())
    assert not tok.is_special_token(65) and not tok.is_special_token(-1)


def test_token_byte_values(trained):
    tok = trained["o200k"]
    values = tok.token_byte_values()
    assert values == sorted(tok.mergeable_ranks())
    assert not set(t.encode() for t in tok.special_tokens) & set(values)


def test_decode_bytes_batch(cl100k_tok, corpus_chunks):
    batch = cl100k_tok.encode_batch(corpus_chunks, allowed_special="all")
    expected = [t.encode("utf-8") for t in corpus_chunks]
    assert cl100k_tok.decode_bytes_batch(batch) == expected
    assert cl100k_tok.decode_bytes_batch(batch, num_threads=2) == expected
    assert cl100k_tok.decode_batch(batch, num_threads=1) == corpus_chunks
    with pytest.raises(toksmith.UnknownTokenError):
        cl100k_tok.decode_bytes_batch([[1, 2], [10**6]])


# ------------------------------------------------------------------ against the peers


@pytest.fixture(scope="session")
def native_gpt2_hf():
    """GPT-2 as Hugging Face builds it from the original files (no toksmith involved)."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, pre_tokenizers

    hf = tokenizers.Tokenizer(models.BPE.from_file(str(GPT2_ENCODER), str(GPT2_VOCAB_BPE)))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.add_special_tokens(["<|endoftext|>"])
    return hf


def test_offsets_match_hugging_face_on_corpora(gpt2_tok, native_gpt2_hf, corpus_chunks):
    for text in corpus_chunks:
        enc = native_gpt2_hf.encode(text)
        assert gpt2_tok.encode_with_offsets(text, allowed_special="all") == (enc.ids, enc.offsets)


@given(text=st.one_of(hf_mixed_text, text_with_specials))
def test_offsets_match_hugging_face(text, gpt2_tok, native_gpt2_hf):
    enc = native_gpt2_hf.encode(text)
    assert gpt2_tok.encode_with_offsets(text, allowed_special="all") == (enc.ids, enc.offsets)


def test_offsets_match_exported_hugging_face(trained, corpus_chunks):
    pytest.importorskip("tokenizers")
    for tok in trained.values():
        hf = tok.to_huggingface()
        for text in corpus_chunks[:40] + ["héllo wörld 😀 <|endoftext|> 你好  x"]:
            enc = hf.encode(text)
            assert tok.encode_with_offsets(text, allowed_special="all") == (enc.ids, enc.offsets)


@pytest.fixture(scope="session")
def tiktoken_encs(gpt2_tok, cl100k_tok, trained_no_pinned):
    pytest.importorskip("tiktoken")
    toks = {"gpt2": gpt2_tok, "cl100k": cl100k_tok, "o200k-trained": trained_no_pinned["o200k"]}
    return {name: (tok, tok.to_tiktoken()) for name, tok in toks.items()}


@given(text=st.one_of(tiktoken_mixed_text, text_with_specials))
def test_decode_with_offsets_matches_tiktoken(text, tiktoken_encs):
    for tok, tk in tiktoken_encs.values():
        ids = tok.encode(text, allowed_special="all")
        assert tok.decode_with_offsets(ids) == tk.decode_with_offsets(ids)


def test_decode_with_offsets_matches_tiktoken_on_corpora(tiktoken_encs, corpus_chunks):
    for tok, tk in tiktoken_encs.values():
        for ids in tok.encode_batch(corpus_chunks, allowed_special="all"):
            assert tok.decode_with_offsets(ids) == tk.decode_with_offsets(ids)


def test_encoding_surface_matches_tiktoken(tiktoken_encs, corpus_chunks):
    for tok, tk in tiktoken_encs.values():
        assert tok.token_byte_values() == tk.token_byte_values()
        for i in list(tok.special_tokens.values()) + [0, 255, 256, tok.n_vocab - 1]:
            assert tok.is_special_token(i) == tk.is_special_token(i)
        batch = tok.encode_batch(corpus_chunks[:30], allowed_special="all")
        assert tok.decode_bytes_batch(batch) == tk.decode_bytes_batch(batch)
