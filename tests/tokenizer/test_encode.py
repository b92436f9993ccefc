"""Encoding: ids equal tiktoken's and the pure-Python reference's; special-token semantics."""

import json
import threading

import pytest
import tiktoken
from hypothesis import given
from hypothesis import strategies as st

import toksmith
from tests.conftest import BYTES
from tests.reference import bpe as reference
from tests.refs import Refs, exact_refs
from tests.strategies import tiktoken_mixed_text, tiktoken_text
from toksmith import Tokenizer

GPT2_SPECIALS = {"<|endoftext|>": 50256}
CL100K_SPECIALS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


@pytest.fixture(scope="module")
def exact(cl100k_ranks, small):
    """cl100k and the small o200k vocabulary with counted references (see `exact_refs`)."""
    o200k = small["o200k"][0]
    return {
        "cl100k": exact_refs(lambda: Tokenizer.from_ranks(cl100k_ranks, "cl100k", CL100K_SPECIALS)),
        "o200k": exact_refs(
            lambda: Tokenizer.from_ranks(
                o200k.mergeable_ranks(), o200k.pattern, o200k.special_tokens
            )
        ),
    }


@pytest.fixture(scope="module")
def small(corpus_slices):
    """A small trained vocabulary for each pattern, with its tiktoken twin."""
    out = {}
    texts = list(corpus_slices.values())
    for name in ["gpt2", "cl100k", "o200k", "nanochat"]:
        tok = toksmith.train_from_iterator(
            texts, vocab_size=1200, pattern=name, special_tokens=["<|endoftext|>"]
        )
        enc = tiktoken.Encoding(
            f"small_{name}",
            pat_str=tok.pattern,
            mergeable_ranks=tok.mergeable_ranks(),
            special_tokens=tok.special_tokens,
        )
        out[name] = (tok, enc)
    return out


def test_golden_ids_real_vocabularies(cl100k, gpt2):
    tok, _ = cl100k
    assert tok.encode("hello world") == [15339, 1917]
    assert tok.encode("Hello, world!") == [9906, 11, 1917, 0]
    tok2, _ = gpt2
    assert tok2.encode("hello world") == [31373, 995]
    assert tok2.encode("<|endoftext|>", allowed_special="all") == [50256]


@pytest.mark.parametrize("which", ["cl100k", "gpt2"])
def test_real_vocab_equals_tiktoken_on_corpora(which, cl100k, gpt2, corpus_slices):
    tok, enc = cl100k if which == "cl100k" else gpt2
    for name, text in corpus_slices.items():
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text), name


@given(text=tiktoken_text)
def test_real_vocab_equals_tiktoken_on_arbitrary_text(cl100k, gpt2, text):
    for tok, enc in (cl100k, gpt2):
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text)


@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k", "nanochat"])
def test_trained_vocab_equals_tiktoken_and_reference(name, small, corpus_slices):
    tok, enc = small[name]
    ranks = tok.mergeable_ranks()
    text = corpus_slices["english"][:20000] + corpus_slices["cpp"][:20000]
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
    assert tok.encode_ordinary(text[:4000]) == reference.encode(text[:4000], tok.pattern, ranks)


@given(text=tiktoken_mixed_text)
def test_trained_vocab_equals_reference_on_arbitrary_text(small, text):
    for tok, enc in small.values():
        ids = tok.encode_ordinary(text)
        assert ids == reference.encode(text, tok.pattern, tok.mergeable_ranks())
        assert ids == enc.encode_ordinary(text)


@given(
    docs=st.lists(st.one_of(tiktoken_mixed_text, st.just(""), st.text(max_size=30)), max_size=40),
    threads=st.integers(1, 4),
    repeat=st.integers(1, 400),
)
def test_batch_equals_one_by_one_on_arbitrary_documents(
    cl100k, small, exact, docs, threads, repeat
):
    """Any documents (empty ones, lone surrogates, any characters) on any number of threads,
    the batch repeated up to 400 times so that it often spans several ranges and, with the small
    vocabulary (1200 ids) and counted references, takes the counted path: the same ids as
    encoding each document alone, in order."""
    batch = docs * repeat
    toks = [(cl100k[0], False), (small["o200k"][0], False)]
    toks += [(exact["cl100k"], True), (exact["o200k"], True)]
    for tok, counted in toks:
        expected = [tok.encode_ordinary(d) for d in docs] * repeat
        # an id whose int only the vocabulary and the results hold (not a small int)
        probe = max((i for ids in expected[: len(docs)] for i in ids), default=1000)
        probe = probe if probe > 256 else tok.encode_ordinary(" the the")[-1]
        refs = Refs(probe, counted).start()
        out = tok.encode_ordinary_batch(batch, threads=threads)
        assert out == expected
        refs.expect(held=sum(ids.count(probe) for ids in out))
        # (the next tokenizer's probe may be the same int: pinned ints are shared)
        del out, refs


@pytest.mark.parametrize("n", [1, 2, 127, 128, 129, 1000, 100_000])
@pytest.mark.parametrize("ch", ["a", " ", "1", "😀", "ab"])
def test_long_runs_equal_tiktoken(cl100k, n, ch):
    # Long pieces take the heap path (>= 128 bytes); results must not change.
    tok, enc = cl100k
    text = ch * n
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)


def test_special_token_semantics(cl100k):
    tok, enc = cl100k
    text = "a<|endoftext|>b<|fim_prefix|>"
    with pytest.raises(ValueError, match=r"<\|endoftext\|>.*allowed_special"):
        tok.encode(text)
    with pytest.raises(toksmith.DisallowedSpecialError):
        tok.encode(text, allowed_special={"<|fim_prefix|>"})
    for allowed in ["all", {"<|endoftext|>"}, {"<|endoftext|>", "<|fim_prefix|>"}]:
        assert tok.encode(text, allowed_special=allowed, disallowed_special=()) == enc.encode(
            text, allowed_special=allowed, disallowed_special=()
        )
    assert tok.encode(text, disallowed_special=()) == enc.encode_ordinary(text)
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
    # only the named special is disallowed
    assert tok.encode("x<|fim_prefix|>", disallowed_special={"<|endoftext|>"}) == enc.encode(
        "x<|fim_prefix|>", disallowed_special={"<|endoftext|>"}
    )
    with pytest.raises(ValueError, match="not a special token"):
        tok.encode("x", allowed_special={"<|nope|>"})


@given(
    text=tiktoken_mixed_text,
    specials=st.lists(st.sampled_from(sorted(CL100K_SPECIALS)), max_size=3),
)
def test_special_tokens_interleaved(cl100k, text, specials):
    tok, enc = cl100k
    full = text + "".join(specials) + text
    assert tok.encode(full, allowed_special="all") == enc.encode(full, allowed_special="all")


def test_encode_single_token(cl100k):
    tok, _ = cl100k
    assert tok.encode_single_token("hello") == 15339
    assert tok.encode_single_token(b"hello") == 15339
    assert tok.encode_single_token("<|endoftext|>") == 100257
    assert tok.token_to_id(" world") == 1917
    with pytest.raises(toksmith.UnknownTokenError):
        tok.encode_single_token("hello world")


def test_batch_equals_single(cl100k, corpus_slices):
    tok, enc = cl100k
    docs = [d for t in corpus_slices.values() for d in t.split("\n\n")][:300]
    expected = [tok.encode_ordinary(d) for d in docs]
    assert tok.encode_ordinary_batch(docs) == expected
    assert tok.encode_ordinary_batch(docs, threads=1) == expected
    assert tok.encode_batch(docs, threads=2) == enc.encode_batch(docs)
    with pytest.raises(ValueError):
        tok.encode_batch(["a<|endoftext|>"])
    assert tok.encode_batch(["a<|endoftext|>"], allowed_special="all") == [[64, 100257]]


@pytest.mark.parametrize("counted", [False, True])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_big_batch_results_and_refcounts(small, exact, corpus_slices, threads, counted):
    """Big batches (a quarter of their bytes, about their ids, at least 4x the vocabulary) fill
    their lists on worker threads and, unless the ints are pinned, raise the reference counts of
    the shared int objects once per id: check both exactly."""
    import gc

    tok, enc = small["o200k"]
    tok = exact["o200k"] if counted else tok
    docs = [d for t in corpus_slices.values() for d in t.split("\n")][:2000] + ["", "x"]
    expected = enc.encode_ordinary_batch(docs)
    assert sum(len(d.encode()) for d in docs) // 4 >= 4 * tok.n_vocab  # the parallel path
    probe = tok.encode_ordinary(" the")[0]
    refs = Refs(probe, counted).start()
    out = tok.encode_ordinary_batch(docs, threads=threads)
    assert out == expected
    uses = sum(ids.count(probe) for ids in out)
    assert uses > 100
    refs.expect(held=uses)
    # The result lists are ordinary lists that the cycle collector need not walk.
    assert not gc.is_tracked(out[0]) and gc.is_tracked(out)
    out[0].append(7)
    assert out[0][-1] == 7
    del out
    refs.expect(freed=uses)


@pytest.fixture(scope="module")
def batch_in_rounds_docs(cl100k, corpus_slices):
    """The documents of test_batch_in_rounds with tiktoken's ids (ordinary, and with special
    tokens allowed), computed once for every thread count: tiktoken takes most of the time."""
    _, enc = cl100k
    base = [d for t in corpus_slices.values() for d in t.split("\n\n") if d]
    tails = ["", " \u00e9t\u00e9", " \U0001f600"]  # ASCII, one-byte and four-byte storage
    docs = [d + tails[k % 3] for _ in range(5) for k, d in enumerate(base)]
    docs[-5] += "<|endoftext|>"
    expected = enc.encode_ordinary_batch(docs)
    # tiktoken's encode_batch encodes each document alone: only docs[-5] holds a special token
    assert [k for k, d in enumerate(docs) if any(s in d for s in enc.special_tokens_set)] == [
        len(docs) - 5
    ]
    specials = list(expected)
    specials[-5] = enc.encode(docs[-5], allowed_special="all")
    return docs, expected, specials


@pytest.mark.parametrize("threads", [1, 2])
def test_batch_in_rounds(cl100k, batch_in_rounds_docs, threads):
    """Batches over 1 MB are encoded in ranges of about 64 KB whose lists are built while later
    ranges are encoded, through id buffers kept from one call to the next: results (ASCII,
    Latin-1, astral and special-token documents), refcounts, and an error near the end after
    earlier ranges built their lists."""
    tok, enc = cl100k
    docs, expected, tiktoken_specials = batch_in_rounds_docs
    docs = list(docs)  # (changed below)
    assert sum(len(d.encode()) for d in docs) > 3 << 20  # several rounds
    probe = tok.encode_ordinary(" the")[0]
    refs = Refs(probe, False).start()
    freed = 0
    for _ in range(2):  # the second call reuses the id buffers of the first
        out = tok.encode_ordinary_batch(docs, threads=threads)
        assert out == expected
        uses = sum(ids.count(probe) for ids in out)
        refs.expect(held=uses, freed=freed)
        del out
        freed += uses
    refs.expect(freed=freed)
    specials = tok.encode_batch(docs, allowed_special="all", threads=threads)
    assert specials == tiktoken_specials
    assert specials[-5][-1] == 100257
    freed += sum(ids.count(probe) for ids in specials)
    del specials
    # A lone surrogate near the end: the native call fails after the lists of earlier ranges
    # were built (they are freed), and the batch is encoded again with it replaced.
    docs[-2] += "\ud800"
    out = tok.encode_ordinary_batch(docs, threads=threads)
    assert out[-2] == enc.encode_ordinary(docs[-2]) and out[:-2] == expected[:-2]
    freed += sum(ids.count(probe) for ids in out)
    del out
    refs.expect(freed=freed)


@pytest.mark.parametrize("threads", [1, 2, 4, 0])
def test_batch_failure_names_the_first_failing_document(cl100k, corpus_slices, threads):
    """Several documents fail (lone surrogates) in a batch of many ranges: whichever thread
    meets one first, the native call reports the earliest document, on any number of threads
    (0: the global pool); the lists already built are freed."""
    tok, _ = cl100k
    base = [d for t in corpus_slices.values() for d in t.split("\n\n") if d]
    docs = base * 10
    n = len(docs)
    assert sum(map(len, docs)) > 1 << 20  # about 16 ranges or more
    probe = tok.encode_ordinary(" the")[0]
    refs = Refs(probe, False).start()
    for bad in ([n - 50, n // 4, n // 2], [5, n - 1], [n - 1]):
        broken = list(docs)
        for k in bad:
            broken[k] = broken[k][:10] + "\udc80" + broken[k][10:]
        with pytest.raises(UnicodeEncodeError) as e:
            tok._core.encode_batch(broken, None, False, threads)
        assert e.value.object is broken[min(bad)] and e.value.start == 10
        del e  # its traceback holds this frame (and `probe`) in a cycle
    refs.expect()
    assert tok._core.encode_batch(docs, None, False, threads) == tok.encode_ordinary_batch(
        docs, threads=1
    )


@pytest.mark.parametrize("threads", [1, 2, 0])
def test_encode_batch_bytes_formats_like_python(cl100k, small, corpus_slices, threads):
    """The CLI's native path: ids written straight to bytes (decimal text as one run or one
    line per text, or little-endian integers) equal formatting the ids of encode_batch in
    Python; the first failing text is the one reported."""
    import struct

    tok, _ = cl100k
    docs = [d for t in corpus_slices.values() for d in t.split("\n\n")][:300] + [
        "",
        "a<|endoftext|>b",
        "",
    ]
    ids = tok.encode_ordinary_batch(docs)
    core = tok._core
    data, n = core.encode_batch_bytes(docs, None, False, threads)
    assert data == " ".join(str(i) for x in ids for i in x).encode() and n == sum(map(len, ids))
    data, _ = core.encode_batch_bytes(docs, None, False, threads, sep=b",")
    assert data == ",".join(str(i) for x in ids for i in x).encode()
    data, _ = core.encode_batch_bytes(
        docs, None, False, threads, sep=b", ", lines=True, open=b"[", close=b"]"
    )
    assert data == "".join(json.dumps(x) + "\n" for x in ids).encode()
    data, n = core.encode_batch_bytes(docs, None, False, threads, width=4)
    assert data == struct.pack(f"<{n}I", *(i for x in ids for i in x))
    special = tok.encode_batch(docs, allowed_special="all")
    data, n = core.encode_batch_bytes(docs, None, True, threads, sep=b" ", lines=True)
    assert data == "".join(" ".join(map(str, x)) + "\n" for x in special).encode()
    assert core.encode_batch_bytes([], None, False, threads) == (b"", 0)
    with pytest.raises(ValueError, match="does not fit in 2 bytes"):
        core.encode_batch_bytes(docs, None, False, threads, width=2)
    with pytest.raises(ValueError, match="width must be 0"):
        core.encode_batch_bytes(docs, None, False, threads, width=3)
    small_tok = small["o200k"][0]
    data, n = small_tok._core.encode_batch_bytes(docs, None, False, threads, width=2)
    assert data == struct.pack(
        f"<{n}H", *(i for x in small_tok.encode_ordinary_batch(docs) for i in x)
    )
    bad = list(docs)
    bad[7] += "\udc80"
    bad[200] += "\ud800"
    with pytest.raises(UnicodeEncodeError) as e:
        core.encode_batch_bytes(bad, None, False, threads)
    assert e.value.object is bad[7]
    del e


def test_batches_from_several_python_threads_at_once(small, corpus_slices):
    """Callers on several Python threads share the pools: each batch waits for its own pool
    threads with the GIL released, so none blocks another, and every result is right."""
    import threading

    tok, enc = small["o200k"]
    docs = [d for t in corpus_slices.values() for d in t.split("\n") if d][:3000]
    expected = enc.encode_ordinary_batch(docs)
    results, errors = {}, []

    def run(k):
        try:
            results[k] = [tok.encode_ordinary_batch(docs[k:], threads=1 + k % 3) for _ in range(3)]
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors and not any(t.is_alive() for t in threads)
    for k in range(4):
        assert results[k] == [expected[k:]] * 3


def test_encode_to_numpy(cl100k, small, corpus_slices):
    np = pytest.importorskip("numpy")
    tok, _ = cl100k
    text = corpus_slices["python"][:5000]
    arr = tok.encode_to_numpy(text)
    assert arr.dtype == np.uint32 and arr.tolist() == tok.encode_ordinary(text)
    small_tok = small["cl100k"][0]
    arr16 = small_tok.encode_to_numpy(text)
    assert arr16.dtype == np.uint16 and arr16.tolist() == small_tok.encode_ordinary(text)
    with pytest.raises(ValueError, match="uint16"):
        tok.encode_to_numpy(text, dtype="uint16")


def test_many_python_threads(cl100k, corpus_slices):
    tok, enc = cl100k
    texts = list(corpus_slices.values())
    expected = [enc.encode_ordinary(t) for t in texts]
    errors = []

    def work():
        for _ in range(3):
            for t, e in zip(texts, expected):
                if tok.encode_ordinary(t) != e:
                    errors.append(t[:20])

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_lone_surrogates_are_replaced_not_crashing(cl100k):
    tok, enc = cl100k
    text = "ab\ud800cd"
    assert tok.encode(text) == enc.encode(text)
    assert tok.decode(tok.encode(text)) == "ab\ufffdcd"


@pytest.mark.parametrize(
    "text",
    [
        "plain ascii text, long enough for the eight-character path",
        "caf\xe9 cr\xe8me br\xfbl\xe9e \xff\x80 " * 3,  # one byte per character
        "\u65e5\u672c\u8a9e text \u03a9mega \u2014 dashes " * 3,  # two bytes per character
        "emoji \U0001f600 and \U00010348 gothic, then ascii" * 3,  # four bytes per character
    ],
)
def test_every_python_string_storage_encodes_alike(cl100k, text):
    """CPython stores str as 1, 2 or 4 bytes per character; the native layer reads each form
    (and a UTF-8 copy the string may cache) itself: ids equal tiktoken's in every case."""
    tok, enc = cl100k
    expected = enc.encode_ordinary(text)
    assert tok.encode_ordinary(text) == expected
    assert tok.encode(text) == expected
    assert tok.encode_ordinary_batch([text, text[1:]], threads=2) == [
        expected,
        enc.encode_ordinary(text[1:]),
    ]
    text.encode("utf-8")  # no effect on the str itself; now ask CPython to cache its UTF-8:
    import ctypes

    ctypes.pythonapi.PyUnicode_AsUTF8.restype = ctypes.c_char_p
    ctypes.pythonapi.PyUnicode_AsUTF8.argtypes = [ctypes.py_object]
    assert ctypes.pythonapi.PyUnicode_AsUTF8(text) == text.encode("utf-8")
    assert tok.encode_ordinary(text) == expected


@pytest.mark.parametrize("counted", [False, True])
def test_short_texts_results_and_refcounts(cl100k, exact, corpus_slices, counted):
    """Short texts (and small batches) go through a per-thread id buffer into lists that share
    the vocabulary's int objects: ids, refcounts and list behaviour must be exact, also when the
    buffer is reused by texts of very different lengths."""
    import gc

    tok, enc = cl100k
    tok = exact["cl100k"] if counted else tok
    words = corpus_slices["english"][:20000]
    texts = [words[:n] for n in (0, 1, 7, 300, 5000, 20000, 3, 60000, 11)]
    probe = tok.encode_ordinary(" the")[0]
    refs = Refs(probe, counted).start()
    outs = [tok.encode_ordinary(t) for t in texts]
    assert outs == [enc.encode_ordinary(t) for t in texts]
    uses = sum(ids.count(probe) for ids in outs)
    assert uses > 50
    refs.expect(held=uses)
    small_batch = tok.encode_ordinary_batch(texts[:5], threads=2)  # below the counted-refs size
    assert small_batch == outs[:5]
    in_batch = sum(ids.count(probe) for ids in small_batch)
    refs.expect(held=uses + in_batch)
    ids = outs[4]
    assert not gc.is_tracked(ids) and len(ids) == len(enc.encode_ordinary(texts[4]))
    ids.append(5)
    ids.extend(range(3))
    assert ids[-4:] == [5, 0, 1, 2]
    del ids, outs, small_batch
    refs.expect(freed=uses + in_batch)


@pytest.mark.parametrize("extra", ["", "\xe9", "\u03a9", "\U0001f600"])
@pytest.mark.parametrize("counted", [False, True])
def test_long_texts_are_written_straight_into_the_list(
    cl100k, exact, corpus_slices, extra, counted
):
    """Texts of 64 KB and more are encoded straight into the result list's buffer: ids,
    special tokens, reference counts and list behaviour must be those of the ordinary path."""
    import gc

    tok, enc = cl100k
    tok = exact["cl100k"] if counted else tok
    text = (
        corpus_slices["english"][:40000] + extra + "<|endoftext|>" + corpus_slices["python"][:40000]
    ) * 2
    assert len(text.encode("utf-8")) >= 1 << 16
    expected = enc.encode_ordinary(text)
    probe = tok.encode_ordinary(text[:100])[1]  # our shared int object for this id
    refs = Refs(probe, counted).start()
    ids = tok.encode_ordinary(text)
    assert ids == expected
    uses = ids.count(probe)
    refs.expect(held=uses)
    with_specials = tok.encode(text, allowed_special="all")
    assert with_specials == enc.encode(text, allowed_special="all")
    uses += with_specials.count(probe)
    del with_specials
    assert not gc.is_tracked(ids) and len(ids) == len(expected)
    ids.append(1)
    ids.extend(range(5))
    del ids[:10]
    assert ids[-6:] == [1, 0, 1, 2, 3, 4]
    del ids
    refs.expect(freed=uses)


@pytest.mark.parametrize("width", ["\u0416", "\u4e2d", "\U0001f600"])
def test_long_text_without_safe_cuts(cl100k, width):
    """Over 1 MB with no place to cut it (no ASCII letters), in 2- and 4-byte storage: held
    whole in a buffer reserved once, then text that can be cut; the ids are tiktoken's."""
    import random

    tok, enc = cl100k
    rng = random.Random(width)
    alphabet = [width, "\u0430", "\u3002", "\u00e9", " ", "1", ",", "\n", "\u0436\u0438"]
    text = "".join(rng.choice(alphabet) for _ in range(700_000))
    assert len(text.encode("utf-8")) > 1 << 20
    text += " and then some plain words\nat the end" * 2000
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)


def test_long_text_with_a_lone_surrogate(cl100k, corpus_slices):
    tok, enc = cl100k
    text = corpus_slices["english"][:70000] + "\ud800" + corpus_slices["python"][:70000]
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)


def test_lone_surrogates_in_a_batch(cl100k):
    tok, enc = cl100k
    texts = ["fine", "x\ud800y", "\U0001f600\udfff"]
    assert tok.encode_ordinary_batch(texts) == [enc.encode_ordinary(t) for t in texts]


def test_bad_argument_types(cl100k):
    tok, _ = cl100k
    with pytest.raises(TypeError):
        tok.encode(b"bytes")
    with pytest.raises(TypeError):
        tok.encode_ordinary(None)
    with pytest.raises(TypeError):
        tok.encode_batch("not a list")
    with pytest.raises(ValueError):
        tok.encode_batch(["a"], threads=0)
    with pytest.raises(TypeError, match=r"texts\[1\] must be str, not int"):
        tok.encode_ordinary_batch(["a", 3, "b"])

    class Text(str):
        pass

    assert tok.encode_ordinary_batch(["a", Text("b")]) == [
        tok.encode_ordinary("a"),
        tok.encode_ordinary("b"),
    ]


def test_from_ranks_validation():
    base = {bytes([b]): b for b in range(256)}
    with pytest.raises(toksmith.VocabError, match="0x41"):
        Tokenizer.from_ranks({k: v for k, v in base.items() if k != b"A"}, "gpt2")
    with pytest.raises(toksmith.VocabError, match="id 65"):
        Tokenizer.from_ranks({**base, b"zz": 65}, "gpt2")
    with pytest.raises(toksmith.VocabError):
        Tokenizer.from_ranks(base, "gpt2", {"<a>": 300, "<b>": 300})
    with pytest.raises(TypeError):
        Tokenizer.from_ranks({"a": 1}, "gpt2")


def test_megabyte_results_take_references_through_counts(gpt2_ranks, corpus_slices):
    """Results of 1 MB of text and more raise each int's refcount once per distinct id (counted
    while the list is written); pieces of 64 KB and more hand their ids over in blocks. Ids and
    reference counts must be those of the ordinary path (with counted references and pinned
    ints)."""
    tiktoken = pytest.importorskip("tiktoken")
    enc = tiktoken.Encoding(
        "gpt2-test",
        pat_str=toksmith.PATTERNS["gpt2"],
        mergeable_ranks=gpt2_ranks,
        special_tokens={},
    )
    # a 300 KB run of spaces is one piece whose bytes are its tokens (GPT-2 has no pair of
    # spaces), a 200 KB run of digits one piece that merges
    text = corpus_slices["english"] * 2 + " " * 300000 + "7" * 200000 + corpus_slices["python"] * 2
    assert len(text.encode("utf-8")) >= 1 << 20
    expected = enc.encode_ordinary(text)
    for counted in (False, True):
        build = lambda: Tokenizer.from_ranks(gpt2_ranks, "gpt2")  # noqa: E731
        tok = exact_refs(build) if counted else build()
        space = tok.encode_ordinary(" ")[0]
        refs = Refs(space, counted).start()
        ids = tok.encode_ordinary(text)
        assert ids == expected
        uses = ids.count(space)
        refs.expect(held=uses)
        del ids
        refs.expect(freed=uses)
        del refs  # (it holds `space`, the same small int next round)


@pytest.mark.parametrize("kind", ["digits", "letters", "cjk", "symbols", "mixed-case"])
def test_chunked_long_pieces_equal_tiktoken(gpt2, cl100k, kind):
    """Pieces of 128 KB and more are merged in 32 KB chunks whose junctions are checked and
    re-merged where needed (each junction pair must merge back into itself); random pieces put
    junctions inside tokens of every length."""
    import random

    rng = random.Random(kind)
    alphabet = {
        "digits": "0123456789",
        "letters": "etaoinshrdlu",
        "cjk": "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年",
        "symbols": "!#$%&*+-./:<=>?@^_|~",
        "mixed-case": "aAbBeEsSTt",
    }[kind]
    text = "".join(rng.choice(alphabet) for _ in range(150_000))
    for tok, enc in (gpt2, cl100k):
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
        # the same piece seen through a blocked (long text) and a plain encode
        assert tok.encode_ordinary(text[:140_000]) == enc.encode_ordinary(text[:140_000])


SPECIALS = {"<|end|>": 256}


@pytest.fixture(scope="module")
def pair():
    """A byte-level tokenizer (with ``b"he"``/``b"hel"``) and the tiktoken Encoding of the same
    ranks."""
    ranks = {**BYTES, b"he": 257, b"hel": 258}
    tok = Tokenizer.from_ranks(ranks, "gpt2", SPECIALS)
    enc = tiktoken.Encoding(
        "audit_decode", pat_str=tok.pattern, mergeable_ranks=ranks, special_tokens=SPECIALS
    )
    return tok, enc


def test_encode_single_token_names_the_text(pair):
    # was: "[104, 101, 108, 108, 111, 32] is not a single token" (the bytes as a list of ints)
    tok, _ = pair
    with pytest.raises(
        toksmith.UnknownTokenError, match=r"^'hello ' is not a single token of this vocabulary"
    ):
        tok.encode_single_token("hello ")
    with pytest.raises(toksmith.UnknownTokenError, match=r"^b'\\xff\\xfe' is not a single token"):
        tok.encode_single_token(b"\xff\xfe")
    assert tok.encode_single_token("hel") == 258 and tok.encode_single_token(b"<|end|>") == 256
