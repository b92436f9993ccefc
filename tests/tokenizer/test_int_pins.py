"""The ints of a vocabulary's ids in result lists: pinned where the interpreter allows it (shared
by every tokenizer, never freed, held by lists without references), counted otherwise
(``TOKSMITH_EXACT_INT_REFS=1``). Both paths run on any interpreter that pins."""

import gc
import sys
import tracemalloc

import pytest

from tests.refs import PINS, Refs, exact_refs
from toksmith import Tokenizer


@pytest.fixture(scope="module")
def pair(cl100k_ranks):
    """cl100k with pinned ints (where the interpreter allows it) and with counted references."""
    build = lambda: Tokenizer.from_ranks(cl100k_ranks, "cl100k")  # noqa: E731
    return build(), exact_refs(build)


def test_ints_are_pinned_where_the_interpreter_allows(pair, cl100k_ranks):
    pinned, counted = pair
    a = pinned.encode_ordinary(" the")[0]
    b = counted.encode_ordinary(" the")[0]
    assert a == b == 279
    assert (sys.getrefcount(a) >= 1 << 30) == PINS
    assert sys.getrefcount(b) < 1 << 30
    # Pinned ints are made once per process: another tokenizer hands out the same objects, also
    # after the first one is gone; counted ones are each tokenizer's own.
    again = Tokenizer.from_ranks(cl100k_ranks, "cl100k")
    assert (again.encode_ordinary(" the")[0] is a) == PINS
    assert counted.encode_ordinary(" the")[0] is b and b is not a


@pytest.mark.parametrize("counted", [False, True])
@pytest.mark.parametrize("threads", [1, 2])
def test_repeated_batches_free_their_lists(pair, corpus_slices, counted, threads):
    """1000 batches whose results are dropped each time: no memory is kept (tracemalloc sees
    CPython's allocations, the lists' item buffers among them), and the probe's refcount moves
    exactly as the freed lists say (see `Refs`)."""
    tok = pair[1] if counted else pair[0]
    docs = [line for line in corpus_slices["english"].split("\n") if line][:40]
    expected = [tok.encode_ordinary(d) for d in docs]
    probe = tok.encode_ordinary(" the")[0]
    uses = sum(ids.count(probe) for ids in expected)
    assert uses > 0
    for _ in range(50):  # (the allocators' pools and the id buffers reach their sizes)
        assert tok.encode_ordinary_batch(docs, threads=threads) == expected
    gc.collect()
    refs = Refs(probe, counted).start()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(1000):
            out = tok.encode_ordinary_batch(docs, threads=threads)
            del out
        grown = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert grown < 16 << 10
    refs.expect(freed=1000 * uses)
    out = tok.encode_ordinary_batch(docs, threads=threads)
    assert out == expected
    refs.expect(held=uses, freed=1000 * uses)


def test_failed_batches_keep_no_references(pair):
    """A batch that fails (a lone surrogate) frees the lists already made, written or not."""
    for counted in (False, True):
        tok = pair[1] if counted else pair[0]
        probe = tok.encode_ordinary(" the")[0]
        docs = [" the cat" * 50] * 300 + ["x\ud800"] + [" the dog" * 50] * 300
        refs = Refs(probe, counted).start()
        for threads in (1, 2, 3):
            with pytest.raises(UnicodeEncodeError):
                tok._core.encode_batch(docs, None, False, threads)
        refs.expect()
        del refs
