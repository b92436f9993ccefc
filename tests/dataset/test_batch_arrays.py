"""``Tokenizer.encode_ordinary_batch_to_numpy``: per text, the ids of ``encode_ordinary`` (plus
BOS/EOS), in one array with int64 offsets; and the tokenize_dataset path built on it gives the
batches of the list-based path it replaced."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toksmith
from toksmith.dataset import pipeline
from toksmith.files.huggingface import huggingface_json

from .conftest import real_documents

EOT = 50256


def split(ids, offsets):
    return [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(len(offsets) - 1)]


def test_real_text_equals_encode_ordinary(gpt2, cl100k):
    docs = real_documents()
    code = open(pipeline.__file__, encoding="utf-8").read()  # a long document
    docs = docs + [code, "<|endoftext|>" * 3, "\U0001f600 emoji \u00e9\u0301 \u4e2d\u6587"]
    for tok, dtype in ((gpt2, np.uint16), (cl100k, np.uint32)):
        for threads in (None, 1, 2):
            ids, offsets = tok.encode_ordinary_batch_to_numpy(docs, threads=threads)
            assert ids.dtype == dtype and offsets.dtype == np.int64
            assert offsets.shape == (len(docs) + 1,) and offsets[0] == 0
            assert offsets[-1] == len(ids)
            assert split(ids, offsets) == [tok.encode_ordinary(d) for d in docs]
            assert split(ids, offsets) == tok.encode_ordinary_batch(docs)
            assert ids.flags.writeable and ids.flags.c_contiguous


def test_bos_and_eos(gpt2):
    docs = ["hello world", "", "second"]
    ids, offsets = gpt2.encode_ordinary_batch_to_numpy(docs, bos=EOT, eos=0)
    assert split(ids, offsets) == [[EOT] + gpt2.encode_ordinary(d) + [0] for d in docs]
    ids, offsets = gpt2.encode_ordinary_batch_to_numpy(docs, eos=np.int64(EOT))
    assert split(ids, offsets) == [gpt2.encode_ordinary(d) + [EOT] for d in docs]
    for bad in (-1, 50257, True, "x", 1.0):
        with pytest.raises(ValueError, match="eos must be a token id"):
            gpt2.encode_ordinary_batch_to_numpy(docs, eos=bad)


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "int32", "int64", np.int64, None])
def test_dtypes(gpt2, dtype):
    docs = real_documents()[:10]
    ids, offsets = gpt2.encode_ordinary_batch_to_numpy(docs, dtype=dtype)
    assert ids.dtype == np.dtype(dtype or "uint16")
    assert split(ids, offsets) == [gpt2.encode_ordinary(d) for d in docs]


def test_bad_dtypes(gpt2, cl100k):
    with pytest.raises(ValueError, match="uint16 cannot hold ids up to 100258"):
        cl100k.encode_ordinary_batch_to_numpy(["x"], dtype="uint16")
    for bad in ("int8", "float32", "nonsense", {}):
        with pytest.raises(ValueError, match="dtype must be one of"):
            gpt2.encode_ordinary_batch_to_numpy(["x"], dtype=bad)


def test_empty_batch_and_bad_texts(gpt2):
    ids, offsets = gpt2.encode_ordinary_batch_to_numpy([])
    assert len(ids) == 0 and offsets.tolist() == [0]
    with pytest.raises(TypeError, match="single str"):
        gpt2.encode_ordinary_batch_to_numpy("text")
    with pytest.raises(TypeError, match=r"texts\[1\] must be str"):
        gpt2.encode_ordinary_batch_to_numpy(["a", b"b"])
    with pytest.raises(ValueError, match="threads"):
        gpt2.encode_ordinary_batch_to_numpy(["a"], threads=0)


def test_lone_surrogates_as_encode_ordinary(gpt2):
    docs = ["a\ud800b", "\udfff", "ok"]
    ids, offsets = gpt2.encode_ordinary_batch_to_numpy(docs)
    assert split(ids, offsets) == [gpt2.encode_ordinary(d) for d in docs]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=60), max_size=12), st.sampled_from([None, 1, 2]))
def test_any_texts_equal_encode_ordinary(gpt2, texts, threads):
    ids, offsets = gpt2.encode_ordinary_batch_to_numpy(texts, threads=threads, eos=EOT)
    assert split(ids, offsets) == [gpt2.encode_ordinary(t) + [EOT] for t in texts]


class ListOnly:
    """A tokenizer with only the list-based batch encoder (as presets and wrappers are)."""

    def __init__(self, tok):
        self.tok = tok
        self.special_tokens = tok.special_tokens

    def encode_ordinary_batch(self, texts, threads=None):
        return self.tok.encode_ordinary_batch(texts, threads=threads)


def batches(tok, pieces, bos, eos, monkeypatch, limit):
    monkeypatch.setattr(pipeline, "BATCH_PIECES", limit)
    out = pipeline._encode_batches(
        iter(pieces), tok, np.dtype(np.uint16), bos, eos, None, lambda: None
    )
    return [(t.tolist(), e.tolist()) for t, e in out]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.text(max_size=20), st.booleans()), min_size=1, max_size=20),
    st.sampled_from([None, EOT]),
    st.sampled_from([None, 0]),
    st.integers(1, 6),
)
def test_pipeline_batches_equal_the_list_path(gpt2, pieces, bos, eos, limit):
    # pieces of documents: `last` marks the piece that ends one (BOS on the first, EOS on it)
    with pytest.MonkeyPatch.context() as mp:
        fast = batches(gpt2, pieces, bos, eos, mp, limit)
        slow = batches(ListOnly(gpt2), pieces, bos, eos, mp, limit)
    assert fast == slow


def test_batch_arrays_apply_the_normalizer():
    """A tokenizer.json's normalizer (NFKC here) applies on the array path as in encode."""
    base = toksmith.train_from_iterator(["ﬁne ﬁsh ① café"] * 20, vocab_size=270, pattern="gpt2")
    data = huggingface_json(base)
    data["normalizer"] = {"type": "NFKC"}
    tok = toksmith.from_huggingface(data)
    texts = ["ﬁne ﬁsh", "", "① café ﬁ", "plain"]
    ids, offsets = tok.encode_ordinary_batch_to_numpy(texts, bos=0)
    for i, t in enumerate(texts):
        assert ids[offsets[i] : offsets[i + 1]].tolist() == [0] + tok.encode_ordinary(t)
    assert tok.encode_ordinary("ﬁ") == tok.encode_ordinary("fi")
