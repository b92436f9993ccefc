"""Thread-count arguments (threads / num_threads) and results that do not depend on them."""

import os
import threading
import warnings

import numpy as np
import pytest

import toksmith
from toksmith import calm
from toksmith.formats._common import atomic_write
from toksmith.presets import cppreason


def test_thread_counts_beyond_the_cores_give_the_same_ids(cl100k):
    # 4096 threads on a 2-core machine took 5 minutes for 100,000 short texts (0.1 s with 2);
    # the core now starts no more threads than there are cores (at least 8)
    tok, enc = cl100k
    texts = ["hello", "", " world!", "x" * 300] * 5000
    want = enc.encode_ordinary_batch(texts[:4])
    assert tok.encode_batch(texts, threads=4096) == want * 5000
    assert tok.encode_ordinary_batch(texts, threads=4000) == want * 5000
    assert tok.decode_batch(want * 5000, threads=4096) == texts


@pytest.fixture(scope="module")
def tok():
    return toksmith.Tokenizer.from_ranks(
        {bytes([b]): b for b in range(256)} | {b"ab": 256}, "gpt2", special_tokens={"<|end|>": 257}
    )


@pytest.fixture(scope="module")
def cpp():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cppreason.train(["int main() { return 0; }\n" * 20], vocab_size=2200)


def _thread_calls(tok, cpp):
    byte = calm.ByteTokenizer()
    return {
        "Tokenizer.encode_batch": lambda **kw: tok.encode_batch(["ab c", "x"], **kw),
        "Tokenizer.encode_ordinary_batch": lambda **kw: tok.encode_ordinary_batch(
            ["ab c", "x"], **kw
        ),
        "Tokenizer.decode_batch": lambda **kw: tok.decode_batch([[256, 99], [120]], **kw),
        "Tokenizer.decode_bytes_batch": lambda **kw: tok.decode_bytes_batch(
            [[256, 99], [120]], **kw
        ),
        "ByteTokenizer.encode_batch": lambda **kw: byte.encode_batch(["ab", "c"], **kw),
        "ByteTokenizer.encode_ordinary_batch": lambda **kw: byte.encode_ordinary_batch(
            ["ab", "c"], **kw
        ),
        "ByteTokenizer.decode_batch": lambda **kw: byte.decode_batch([[97], [98]], **kw),
        "CppTokenizer.encode_ordinary_batch": lambda **kw: cpp.encode_ordinary_batch(
            ["int x;"], **kw
        ),
    }


THREAD_METHODS = [
    "Tokenizer.encode_batch",
    "Tokenizer.encode_ordinary_batch",
    "Tokenizer.decode_batch",
    "Tokenizer.decode_bytes_batch",
    "ByteTokenizer.encode_batch",
    "ByteTokenizer.encode_ordinary_batch",
    "ByteTokenizer.decode_batch",
    "CppTokenizer.encode_ordinary_batch",
]


@pytest.mark.parametrize("method", THREAD_METHODS)
def test_threads_and_num_threads_that_disagree_are_refused(tok, cpp, method):
    call = _thread_calls(tok, cpp)[method]
    # was: threads won silently
    with pytest.raises(
        ValueError, match=r"threads=2 and num_threads=3 disagree.*pass only one of them"
    ):
        call(threads=2, num_threads=3)


@pytest.mark.parametrize("method", THREAD_METHODS)
def test_threads_and_num_threads_alone_or_equal_are_accepted(tok, cpp, method):
    call = _thread_calls(tok, cpp)[method]
    expected = call()
    assert call(threads=2) == expected
    assert call(num_threads=2) == expected
    assert call(threads=2, num_threads=2) == expected
    if not method.startswith("Cpp"):  # (CppTokenizer takes no numpy integers for thread counts)
        assert (
            call(threads=np.int64(2), num_threads=2) == expected
        )  # the same count, another int type


def test_cpp_positional_num_threads_that_disagrees_is_refused(cpp):
    # CppTokenizer.encode_ordinary_batch takes num_threads positionally (tiktoken's order)
    with pytest.raises(ValueError, match="pass only one of them"):
        cpp.encode_ordinary_batch(["int x;"], 3, threads=2)
    assert cpp.encode_ordinary_batch(["int x;"], 2, threads=2) == cpp.encode_ordinary_batch(
        ["int x;"]
    )


def test_each_thread_argument_is_still_checked_under_its_own_name(tok):
    with pytest.raises(ValueError, match="num_threads must be between 1 and 4096"):
        tok.encode_batch(["x"], threads=2, num_threads=0)
    with pytest.raises(TypeError, match="num_threads must be an int"):
        tok.encode_batch(["x"], num_threads="2")
    with pytest.raises(ValueError, match="threads must be between 1 and 4096"):
        calm.ByteTokenizer().encode_batch(["x"], threads=0, num_threads=2)


def test_atomic_writes_from_threads(tmp_path):
    target = tmp_path / "out.txt"
    texts = [str(k) * 50_000 for k in range(8)]
    errors = []

    def write(text):
        try:
            for _ in range(5):
                with atomic_write(target) as f:
                    f.write(text)
        except BaseException as e:  # pragma: no cover - the failure reported below
            errors.append(e)

    threads = [threading.Thread(target=write, args=(t,)) for t in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert target.read_text() in texts  # one whole text, never a mix
    assert os.listdir(tmp_path) == ["out.txt"]


@pytest.fixture(scope="module")
def mixed_docs(corpus_slices):
    """Documents of 1-8 KB of English, C++, JavaScript and multilingual text, shuffled: about
    700 KB, so a batch has more ranges of text than threads."""
    import random

    from tests.conftest import DATA

    rng = random.Random(30)
    texts = [corpus_slices[name] for name in ("english", "cpp", "javascript")]
    texts.append((DATA / "bench" / "multilingual_sample.txt").read_text(encoding="utf-8") * 4)
    docs = []
    for text in texts:
        at = 0
        while at < len(text):
            n = rng.randint(1024, 8192)
            docs.append(text[at : at + n])
            at += n
    rng.shuffle(docs)
    return docs


@pytest.mark.parametrize("threads", [2, 3])
def test_a_repeated_batch_gives_the_ids_of_one_by_one_encodes(cl100k_ranks, mixed_docs, threads):
    # each thread takes the ranges of its own block first and steals from the others' ends,
    # so which thread encodes a range changes from batch to batch; a fresh tokenizer, so the
    # first batch also runs while the merge's atom table is being built
    tok = toksmith.Tokenizer.from_ranks(cl100k_ranks, "cl100k", {})
    want = [tok.encode_ordinary(d) for d in mixed_docs]
    fresh = toksmith.Tokenizer.from_ranks(cl100k_ranks, "cl100k", {})
    for _ in range(3):
        assert fresh.encode_ordinary_batch(mixed_docs, threads=threads) == want
        assert fresh.encode_batch(mixed_docs, threads=threads) == want


def test_a_skewed_batch_gives_the_ids_of_one_by_one_encodes(cl100k_ranks, mixed_docs):
    # one document holds half the text (one range no thread can share), at the front, in the
    # middle and at the end of the batch
    tok = toksmith.Tokenizer.from_ranks(cl100k_ranks, "cl100k", {})
    small = mixed_docs[:40]
    huge = "".join(mixed_docs[40:])
    for docs in ([huge] + small, small[:20] + [huge] + small[20:], small + [huge]):
        want = [tok.encode_ordinary(d) for d in docs]
        for threads in (1, 2, 3):
            assert tok.encode_ordinary_batch(docs, threads=threads) == want


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_process_forked_while_the_atoms_are_built_encodes_the_same_ids(cl100k_ranks):
    # a large vocabulary builds its merge's atom table on a thread of its own; a child forked
    # right after the load has no such thread and builds its own table (no wait, same ids)
    import hashlib
    import json
    import time

    from tests.conftest import DATA

    text = (DATA / "bench" / "multilingual_sample.txt").read_text(encoding="utf-8")[:20000]
    tok = toksmith.Tokenizer.from_ranks(cl100k_ranks, "cl100k", {})
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        try:
            os.close(r)
            ids = [tok.encode_ordinary(text), tok.encode_ordinary_batch([text] * 4, threads=2)]
            # (a digest: ids that fill the pipe would block the child until the parent reads)
            os.write(w, hashlib.sha256(json.dumps(ids).encode()).hexdigest().encode())
        finally:
            os._exit(0)
    os.close(w)
    deadline = time.monotonic() + 60
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child did not finish")
        time.sleep(0.01)
    with os.fdopen(r, "rb") as f:
        got = f.read().decode()
    want = tok.encode_ordinary(text)
    assert got == hashlib.sha256(json.dumps([want, [want] * 4]).encode()).hexdigest()
