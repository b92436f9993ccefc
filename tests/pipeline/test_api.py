"""PipelineTokenizer's Tokenizer API: special tokens (special= and tiktoken's
allowed/disallowed), post-processor templates, numpy encoders, decoding, streaming decode."""

import pytest

import toksmith
from toksmith.errors import DisallowedSpecialError, UnknownTokenError

from ..files.test_sentencepiece import ALL_TEXTS, TEXTS

np = pytest.importorskip("numpy")


@pytest.fixture(scope="module")
def llama(files):
    return toksmith.load_any(files / "llama2.model")


def test_allowed_and_disallowed_special(llama):
    text = "<s>hi</s>"
    assert llama.encode(text, allowed_special="all") == llama.encode(text, special=True)
    assert llama.encode(text, allowed_special="all")[0] == 1
    # one allowed, the other one disallowed by default
    with pytest.raises(DisallowedSpecialError, match="</s>"):
        llama.encode(text, allowed_special={"<s>"})
    ids = llama.encode(text, allowed_special={"<s>"}, disallowed_special=())
    assert ids[0] == 1 and 2 not in ids
    assert ids[1:] == llama.encode("hi</s>")
    with pytest.raises(DisallowedSpecialError):
        llama.encode(text, disallowed_special="all")
    assert llama.encode("hi", disallowed_special="all") == llama.encode("hi")
    with pytest.raises(DisallowedSpecialError, match=r"texts\[1\]"):
        llama.encode_batch(["hi", text], disallowed_special="all")
    assert llama.encode_batch([text], allowed_special="all") == [llama.encode(text, special=True)]
    with pytest.raises(TypeError):
        llama.encode(text, special=True, allowed_special="all")
    with pytest.raises(ValueError, match="not a special token"):
        llama.encode(text, allowed_special={"<nope>"})
    with pytest.raises(TypeError):
        llama.encode(text, allowed_special="<s>")
    # sentencepiece's default: special tokens are text
    assert llama.encode(text) == llama.encode_ordinary(text) == llama.encode(text, special=False)
    assert llama.encode_ordinary_batch([text, "x"], threads=2) == [
        llama.encode_ordinary(text),
        llama.encode_ordinary("x"),
    ]


def test_numpy_encoders(llama):
    text = ALL_TEXTS[-1]
    arr = llama.encode_to_numpy(text)
    assert arr.dtype == np.uint16 and arr.tolist() == llama.encode(text)
    assert llama.encode_to_numpy(text, dtype="uint32").dtype == np.uint32
    with pytest.raises(ValueError):
        llama.encode_to_numpy(text, dtype="float32")
    texts = ["Hello", "", "<s> x"]
    ids, offsets = llama.encode_ordinary_batch_to_numpy(texts, bos=1, eos=2)
    rows = llama.encode_ordinary_batch(texts)
    assert offsets.dtype == np.int64 and offsets[0] == 0 and len(offsets) == 4
    for i, row in enumerate(rows):
        assert ids[offsets[i] : offsets[i + 1]].tolist() == [1, *row, 2]
    ids, offsets = llama.encode_ordinary_batch_to_numpy([], dtype="int64")
    assert ids.tolist() == [] and offsets.tolist() == [0]
    with pytest.raises(ValueError):
        llama.encode_ordinary_batch_to_numpy(texts, bos=llama.n_vocab)


def test_decoding(llama):
    ids = llama.encode("<s>Hello world</s>", special=True)
    assert llama.decode(ids, skip_special_tokens=True) == llama.decode(ids[1:-1])
    assert llama.decode_bytes(ids[1:-1]) == b"Hello world"
    assert (
        llama.decode_batch([ids, ids[1:]], threads=2, skip_special_tokens=True)
        == ["Hello world"] * 2
    )
    assert llama.decode(np.array(ids[1:-1])) == "Hello world"
    for bad in ([llama.n_vocab], [-1], [2**40]):
        with pytest.raises((UnknownTokenError, OverflowError, ValueError)):
            llama.decode(bad)
    with pytest.raises(TypeError):
        llama.decode("abc")
    assert llama.token_to_id("▁Hello") == llama.encode("Hello")[0]
    assert llama.id_to_token(1) == "<s>" and llama.token_to_id("nope-nope") is None


@pytest.mark.parametrize("source", ["llama2.model", "t5_spm.model", "bert", "t5", "llama"])
def test_stream_decoder(files, hf_refs, source):
    tokenizers = pytest.importorskip("tokenizers")
    if source in hf_refs:
        ref, path = hf_refs[source]
        tok = toksmith.load_any(path)
    else:
        ref, tok = None, toksmith.load_any(files / source)
    for text in TEXTS + ALL_TEXTS[-3:]:
        ids = tok.encode(text, add_special_tokens=False)
        d = tok.stream_decoder()
        parts = [d.push(i) for i in ids]
        assert "".join(parts) + d.flush() == tok.decode(ids), text
        assert d.push_many(ids) + d.flush() == tok.decode(ids)
        if ref is not None:
            # tokenizers' DecodeStream gives the same text at the same steps
            stream = tokenizers.decoders.DecodeStream(skip_special_tokens=False)
            assert parts == [stream.step(ref, i) or "" for i in ids], text
    d = tok.stream_decoder(skip_special_tokens=True)
    special = next(iter(tok.special_tokens.values()))
    assert d.push(special) == ""
    with pytest.raises(UnknownTokenError):
        d.push(tok.n_vocab)


def test_template_of_tokenizer_json(hf_refs):
    ref, path = hf_refs["t5"]
    tok = toksmith.load_any(path)
    assert tok.template == ([], [1])
    for text in TEXTS:
        assert tok.encode(text) == ref.encode(text).ids, text
        assert (
            tok.encode(text, add_special_tokens=False)
            == ref.encode(text, add_special_tokens=False).ids
        )
    assert tok.encode_batch(TEXTS) == [e.ids for e in ref.encode_batch(TEXTS)]
    assert tok.encode_to_numpy("Hello").tolist() == ref.encode("Hello").ids
    # truncation leaves room for the template's tokens, as in tokenizers
    tok.enable_truncation(4)
    ref.enable_truncation(4)
    try:
        for text in TEXTS:
            assert tok.encode(text) == ref.encode(text).ids, text
    finally:
        ref.no_truncation()
    with pytest.raises(TypeError):
        tok.encode("x", add_special_tokens=1)


def test_bert_folder_template_matches_transformers(files):
    transformers = pytest.importorskip("transformers")
    tok = toksmith.load_any(files / "bert")
    ref = transformers.AutoTokenizer.from_pretrained(str(files / "bert"))
    assert tok.template == ([101], [102])
    for text in TEXTS:
        assert tok.encode(text) == ref(text)["input_ids"], text
    assert tok.encode_batch(TEXTS) == ref(TEXTS)["input_ids"]


def test_pickle_and_reset(files, hf_refs):
    import pickle

    tok = toksmith.load_any(hf_refs["bert"][1])
    tok.enable_truncation(5)
    back = pickle.loads(pickle.dumps(tok))
    assert back.truncation == tok.truncation and back.template == tok.template
    assert back.encode_batch(TEXTS) == tok.encode_batch(TEXTS)
    llama = toksmith.load_any(files / "llama2.model")
    assert pickle.loads(pickle.dumps(llama)).encode(TEXTS[5]) == llama.encode(TEXTS[5])
    d = llama.stream_decoder()
    assert d.push_many(llama.encode("\U0001f917")[:3]) == ""  # 2 of its 4 bytes: pending
    d.reset()
    assert d.push_many(llama.encode("Hi")) + d.flush() == "Hi"
