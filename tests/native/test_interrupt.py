"""Ctrl-C during training: the merge loop runs on a pool thread while the calling thread waits
with the GIL released, looking for signals every 50 ms, so a KeyboardInterrupt stops training
at the loop's next progress report instead of after the last merge.

``_thread.interrupt_main()`` delivers what a Ctrl-C delivers (it simulates SIGINT for the main
thread), so these tests press Ctrl-C from a timer thread while training runs."""

from __future__ import annotations

import _thread
import importlib
import random
import threading
import time
import warnings

import pytest

import toksmith
from toksmith import _core

# Every test here presses Ctrl-C: see tests/conftest.py ctrl_c_raises.
pytestmark = pytest.mark.usefixtures("ctrl_c_raises")

MERGES = 200_000  # more than this corpus gives: about 1.5 s of merging on the 2-core machine


@pytest.fixture(scope="module")
def corpus() -> str:
    rng = random.Random(0)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return " ".join("".join(rng.choices(letters, k=rng.randint(3, 12))) for _ in range(400_000))


def _counter(text: str):
    k = _core.ChunkCounter(toksmith.PATTERNS["gpt2"])
    k.add_texts([text])
    return k


def _ctrl_c_when(event: threading.Event) -> threading.Thread:
    """A thread that presses Ctrl-C once ``event`` is set."""

    def press():
        if event.wait(30):
            _thread.interrupt_main()

    t = threading.Thread(target=press, daemon=True)
    t.start()
    return t


def test_ctrl_c_stops_the_native_merge_loop(corpus):
    whole = _counter(corpus).train(MERGES)
    assert len(whole) > 20_000  # the loop has a long way to go after the first report

    reports = []
    merging = threading.Event()

    def progress(done, total):  # runs on the pool thread: it raises nothing itself
        reports.append(done)
        merging.set()

    presser = _ctrl_c_when(merging)
    k = _counter(corpus)
    with pytest.raises(KeyboardInterrupt):
        k.train(MERGES, progress)
    presser.join()
    # stopped early: the reports end well before the last merge
    assert reports and reports[-1] < len(whole), (reports[-1], len(whole))

    # the pools still work afterwards, and a fresh run gives the same merges
    again = _counter(corpus).train(MERGES)
    assert again == whole


def test_ctrl_c_stops_train_from_iterator_without_a_progress_bar(corpus, monkeypatch):
    # no progress callback at all: the loop still stops at its next report
    train_module = importlib.import_module("toksmith.train")

    def timed_training():
        t0 = time.perf_counter()
        tok = toksmith.train_from_iterator([corpus], vocab_size=256 + MERGES, pattern="gpt2")
        return tok, time.perf_counter() - t0

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the corpus may run out of pairs first)
        whole, whole_s = timed_training()
    assert whole.n_vocab > 20_000
    merging = threading.Event()
    original = train_module._Trainer.finish

    def finish(self, *args, **kwargs):  # merging starts in here
        merging.set()
        return original(self, *args, **kwargs)

    monkeypatch.setattr(train_module._Trainer, "finish", finish)

    def press():  # Ctrl-C a moment after merging began (the loop runs for about whole_s)
        if merging.wait(30):
            time.sleep(min(0.3, whole_s / 5))
            _thread.interrupt_main()

    presser = threading.Thread(target=press, daemon=True)
    presser.start()
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        timed_training()
    stopped_s = time.perf_counter() - t0
    presser.join()
    # without the signal checks the call ran to its end (about whole_s) before Python saw Ctrl-C
    assert stopped_s < 0.7 * whole_s, (stopped_s, whole_s)
    monkeypatch.undo()
    tok = toksmith.train_from_iterator(["hello world hello"], vocab_size=257, pattern="gpt2")
    assert tok.decode(tok.encode("hello world")) == "hello world"


def test_a_progress_callback_that_raises_stops_the_loop_and_its_exception_propagates(corpus):
    calls = []

    def progress(done, total):
        calls.append(done)
        if len(calls) == 2:
            raise ValueError("stop here")

    k = _counter(corpus)
    with pytest.raises(ValueError, match="stop here"):
        k.train(MERGES, progress)
    assert len(calls) == 2  # no report after the one that raised

    words = [(w, 1 + i % 7) for i, w in enumerate(corpus.split()[:50_000])]
    calls.clear()
    with pytest.raises(ValueError, match="stop here"):
        _core.train_words(words, 20_000, 0, progress)
    assert len(calls) == 2


class _SlowStream:
    """A file that gives 1 KB per read, 5 ms apart: 2,000 reads, about 10 s in all."""

    def __init__(self):
        self.reads = 0

    def readinto(self, buf):
        if self.reads >= 2000:
            return 0
        self.reads += 1
        time.sleep(0.005)
        data = (b"hello world " * 86)[: len(buf)]
        buf[: len(data)] = data
        return len(data)


def test_ctrl_c_stops_counting_a_stream_between_blocks():
    k = _core.ChunkCounter(toksmith.PATTERNS["gpt2"])
    stream = _SlowStream()
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            k.add_stream(stream, "slow", False, 0, 1024)
    finally:
        timer.cancel()
        timer.join()
    assert 0 < stream.reads < 2000  # stopped part way
    # what was counted stays counted, and the counter goes on working
    assert k.stats()["pieces"] > 0
    k.add_texts(["more text"])
    assert len(k.train(5)) == 5
