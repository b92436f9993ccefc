"""Interruptible training: the merge loop (``ChunkCounter.train``, ``train_words``) and the
counting stop at Ctrl-C (KeyboardInterrupt) promptly, leave other trainings alone, let SIGINT
handlers decide, and the CLI exits with status 130."""

from __future__ import annotations

import _thread
import importlib
import os
import random
import signal
import subprocess
import sys
import threading
import time

import pytest

import toksmith
from toksmith import _core
from toksmith.presets import wordbpe

# Every test here presses Ctrl-C: see tests/conftest.py ctrl_c_raises.
pytestmark = pytest.mark.usefixtures("ctrl_c_raises")

BIG_MERGES = 200_000  # the big corpus gives them all: ~1.5 s of merging on a 2-core machine


SMALL_MERGES = 100_000  # ~0.3 s on the small corpus (which has ~188,000 to give)


WORD_MERGES = 100_000


_TABLE = bytes((b"abcdefghijklmnopqrstuvwxyz"[i % 26] if i % 9 else 32) for i in range(256))


def _random_text(n_bytes: int, seed: int) -> str:
    """Random lower-case words (a space about every 9th byte): every pair is about as frequent
    as the next, so the merge loop has a long way to go."""
    return random.Random(seed).randbytes(n_bytes).translate(_TABLE).decode("ascii")


def _counter(text: str):
    k = _core.ChunkCounter(toksmith.PATTERNS["gpt2"])
    k.add_texts([text])
    return k


def _timed(f, *args, **kwargs):
    t0 = time.perf_counter()
    out = f(*args, **kwargs)
    return out, time.perf_counter() - t0


def _merge_ids(tok) -> list:
    return [tuple(m) for m in tok.merge_ids()]


class _Presser:
    """Calls ``press`` (Ctrl-C by default) once, ``delay`` seconds after :meth:`go` (callable
    from any thread, e.g. a progress callback on the pool thread). Always joined on exit; a
    press that landed after the body ended is taken there, so nothing leaks out of the test."""

    def __init__(self, press=_thread.interrupt_main, delay: float = 0.0):
        self.press, self.delay = press, delay
        self._go, self._cancel = threading.Event(), threading.Event()
        self.pressed_at = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        if not self._go.wait(60) or self._cancel.is_set():
            return
        if self.delay and self._cancel.wait(self.delay):
            return
        self.pressed_at = time.perf_counter()
        self.press()

    def go(self) -> None:
        self._go.set()

    def __enter__(self) -> "_Presser":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> bool:
        self._cancel.set()
        self._go.set()
        self._thread.join()
        if self.pressed_at is not None:
            try:  # a press the body did not see is taken here (a handler runs in sleep)
                time.sleep(0.06)
            except BaseException:  # noqa: BLE001 - the stray KeyboardInterrupt/SystemExit/...
                pass
        return False


def _in_thread(f, *args, **kwargs):
    """Run ``f`` on a new thread; returns (result, exception, was it the main thread)."""
    box = {}

    def target():
        box["main"] = threading.current_thread() is threading.main_thread()
        try:
            box["result"] = f(*args, **kwargs)
        except BaseException as e:  # noqa: BLE001
            box["error"] = e

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(60)
    assert not t.is_alive(), "training on another thread hung"
    return box.get("result"), box.get("error"), box["main"]


@pytest.fixture(scope="module")
def big_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "big.txt"
    path.write_text(_random_text(3_000_000, 0), encoding="ascii")
    return path


@pytest.fixture(scope="module")
def big_text(big_file):
    return big_file.read_text(encoding="ascii")


@pytest.fixture(scope="module")
def big_ref(big_text):
    """(merges, seconds of the merge loop) of an uninterrupted run on the big corpus."""
    k = _counter(big_text)
    merges, seconds = _timed(k.train, BIG_MERGES)
    assert len(merges) == BIG_MERGES
    return merges, seconds


@pytest.fixture(scope="module")
def small_text():
    return _random_text(600_000, 1)


@pytest.fixture(scope="module")
def small_ref(small_text):
    merges, seconds = _timed(_counter(small_text).train, SMALL_MERGES)
    assert len(merges) == SMALL_MERGES
    return merges, seconds


@pytest.fixture(scope="module")
def words(small_text):
    return [(w, 1 + i % 7) for i, w in enumerate(small_text.split())]


@pytest.fixture(scope="module")
def words_ref(words):
    (alphabet, merges), seconds = _timed(_core.train_words, words, WORD_MERGES, 0, None, 0)
    assert len(merges) == WORD_MERGES
    return (alphabet, merges), seconds


def _press_when_merging_starts(monkeypatch, presser, target, name):
    """Wrap ``target.name`` (the call that starts the merge loop) to start ``presser``."""
    original = getattr(target, name)

    def wrapped(*args, **kwargs):
        presser.go()
        presser.merging_at = time.perf_counter()
        return original(*args, **kwargs)

    monkeypatch.setattr(target, name, wrapped)


@pytest.fixture(scope="module")
def wordbpe_ref(big_file):
    """The wordbpe preset on the big corpus, uninterrupted: (tokenizer, seconds of train_words)."""
    original = _core.train_words
    spent = []

    def timed(*args):
        out, s = _timed(original, *args)
        spent.append(s)
        return out

    _core.train_words = timed
    try:
        tok = wordbpe.train([big_file], WORD_MERGES)
    finally:
        _core.train_words = original
    assert len(tok.merges) == WORD_MERGES and len(spent) == 1
    return tok, spent[0]


@pytest.fixture(scope="module")
def wordbpe_small_ref(words):
    counts = dict(words[:20_000])
    tok = wordbpe.train_from_counts(counts, 5_000)
    assert len(tok.merges) == 5_000
    return counts, tok


_NESTED = """
import os, random, sys, threading
import toksmith
from toksmith import _core

def counter(text):
    k = _core.ChunkCounter(toksmith.PATTERNS["gpt2"])
    k.add_texts([text])
    return k

rng = random.Random(0)
text = " ".join("".join(rng.choices("abcdefghij", k=rng.randint(3, 9))) for _ in range(20000))
box = {}

def progress(done, total):
    if "inner" not in box:
        box["inner"] = counter("the cat sat on the mat " * 50).train(10, None, 1)

def outer():
    box["outer"] = counter(text).train(2000, progress, 1)

t = threading.Thread(target=outer, daemon=True)
t.start()
t.join(1.0)
print("hung" if t.is_alive() else "done %d %d" % (len(box["outer"]), len(box["inner"])), flush=True)
os._exit(0)
"""


def test_training_on_another_thread_gives_the_main_threads_merges(
    small_text, small_ref, words, words_ref
):
    ref, _ = small_ref
    # the merge loop alone, without and with a progress callback (which takes the GIL from the
    # pool thread while the waiting thread is not the main one)
    got, err, main = _in_thread(lambda: _counter(small_text).train(SMALL_MERGES))
    assert err is None and not main
    assert got == ref
    reports = []
    got, err, _ = _in_thread(
        lambda: _counter(small_text).train(SMALL_MERGES, lambda d, t: reports.append(d))
    )
    assert err is None and got == ref
    assert (
        reports[-1] == SMALL_MERGES and len(reports) == 201
    )  # (the first once the pairs are counted)
    # the public API and the word trainer
    tok, err, _ = _in_thread(
        toksmith.train_from_iterator, [small_text], vocab_size=256 + SMALL_MERGES, pattern="gpt2"
    )
    assert err is None and _merge_ids(tok) == ref
    got, err, _ = _in_thread(_core.train_words, words, WORD_MERGES, 0, None, 0)
    assert err is None and got == words_ref[0]

    # counting a Python stream on another thread (its readinto runs on the pool thread)
    import io

    def count_stream():
        k = _core.ChunkCounter(toksmith.PATTERNS["gpt2"])
        k.add_stream(io.BytesIO(small_text.encode()), "s", False, 0, 64 << 10)
        return k.counts()

    got, err, _ = _in_thread(count_stream)
    assert err is None and got == _counter(small_text).counts()


def test_ctrl_c_on_the_main_thread_leaves_a_training_on_another_thread_alone(small_text, small_ref):
    ref, _ = small_ref
    reports = []
    with _Presser() as presser:

        def progress(done, total):
            reports.append(done)
            presser.go()  # Ctrl-C while the other thread is merging

        box = {}
        t = threading.Thread(
            target=lambda: box.setdefault("r", _counter(small_text).train(SMALL_MERGES, progress)),
            daemon=True,
        )
        t.start()
        try:
            with pytest.raises(KeyboardInterrupt):  # the main thread gets it, wherever it is
                for _ in range(600):
                    time.sleep(0.05)
        finally:
            t.join(60)
    assert not t.is_alive()
    assert box["r"] == ref  # the other thread's training ran to its end
    assert reports[-1] == SMALL_MERGES


@pytest.mark.parametrize("threads", [(1, 1), (0, 0), (1, 2)])
def test_two_trainings_at_once_give_the_merges_of_a_lone_run(small_text, small_ref, threads):
    ref, _ = small_ref
    counters = [_counter(small_text) for _ in threads]
    start = threading.Barrier(len(threads))
    out = [None] * len(threads)

    def run(i):
        start.wait(30)
        out[i] = counters[i].train(SMALL_MERGES, None, threads[i])

    ts = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(threads))]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert not any(t.is_alive() for t in ts)
    assert out == [ref, ref]


def test_one_of_two_trainings_on_one_pool_stopped_leaves_the_other_whole(small_text, small_ref):
    # both on the 1-thread pool: the stop flag and the raised exception are the stopped call's own
    ref, _ = small_ref
    box = {}
    t = threading.Thread(
        target=lambda: box.setdefault("r", _counter(small_text).train(SMALL_MERGES, None, 1)),
        daemon=True,
    )
    t.start()
    calls = []

    def progress(done, total):
        calls.append(done)
        if len(calls) == 3:
            raise ValueError("only this one")

    try:
        with pytest.raises(ValueError, match="only this one"):
            _counter(small_text).train(SMALL_MERGES, progress, 1)
    finally:
        t.join(60)
    assert len(calls) == 3
    assert box["r"] == ref
    # and a Ctrl-C on the main thread stops the main thread's training, not the other one
    box.clear()
    reports = []
    with _Presser() as presser:
        t = threading.Thread(
            target=lambda: box.setdefault("r", _counter(small_text).train(SMALL_MERGES, None, 1)),
            daemon=True,
        )
        t.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                _counter(small_text).train(
                    SMALL_MERGES, lambda d, tot: (reports.append(d), presser.go()), 1
                )
        finally:
            t.join(60)
    assert box["r"] == ref
    assert reports and reports[-1] < SMALL_MERGES


@pytest.mark.parametrize("how", ["interrupt_main", "kill"])
def test_a_sigint_handler_that_does_not_raise_lets_training_finish(small_text, small_ref, how):
    ref, _ = small_ref
    reports, seen = [], []
    press = (
        _thread.interrupt_main
        if how == "interrupt_main"
        else (lambda: os.kill(os.getpid(), signal.SIGINT))
    )
    old = signal.signal(signal.SIGINT, lambda signum, frame: seen.append(len(reports)))
    try:
        with _Presser(press) as presser:

            def progress(done, total):
                reports.append(done)
                if len(reports) == 2:
                    presser.go()

            got = _counter(small_text).train(SMALL_MERGES, progress)
            # (a press must have been taken by now: sleep so that a late handler run shows)
            deadline = time.monotonic() + 5
            while not seen and time.monotonic() < deadline:
                time.sleep(0.01)
    finally:
        signal.signal(signal.SIGINT, old)
    assert got == ref  # the whole result
    assert len(seen) == 1  # the handler ran once...
    assert seen[0] < len(reports) == 201  # ...while the loop was running, and the loop went on


def test_a_sigint_handler_that_raises_on_the_second_ctrl_c_stops_training(small_text, small_ref):
    ref, _ = small_ref
    reports, seen = [], []

    def handler(signum, frame):
        seen.append(len(reports))
        if len(seen) == 2:
            raise KeyboardInterrupt("second Ctrl-C")

    old = signal.signal(signal.SIGINT, handler)
    try:
        with _Presser() as first, _Presser() as second:

            def progress(done, total):
                reports.append(done)
                if len(reports) == 2:
                    first.go()
                if (
                    seen
                ):  # the second press once the first was handled (two pending presses are one)
                    second.go()

            with pytest.raises(KeyboardInterrupt, match="second Ctrl-C"):
                _counter(small_text).train(SMALL_MERGES, progress)
    finally:
        signal.signal(signal.SIGINT, old)
    assert len(seen) == 2
    assert seen[0] < seen[1] < 200  # both handled while the loop ran
    assert reports[-1] < SMALL_MERGES  # stopped early by the second
    assert _counter(small_text).train(SMALL_MERGES) == ref


@pytest.mark.parametrize("which", ["SIGALRM-TimeoutError", "SIGUSR1-SystemExit"])
def test_a_handler_raising_another_exception_stops_training_with_it(
    big_text, big_ref, small_text, small_ref, which
):
    ref_big, whole_s = big_ref
    signum = signal.SIGALRM if which.startswith("SIGALRM") else signal.SIGUSR1
    raised = TimeoutError("training took too long") if signum == signal.SIGALRM else SystemExit(3)

    def handler(s, frame):
        raise raised

    reports = []
    k = _counter(big_text)
    old = signal.signal(signum, handler)
    try:
        with _Presser(lambda: os.kill(os.getpid(), signal.SIGUSR1), delay=0.1) as presser:
            t0 = time.perf_counter()
            with pytest.raises(type(raised)) as info:
                if signum == signal.SIGALRM:
                    signal.setitimer(signal.ITIMER_REAL, 0.3)
                else:
                    presser.go()
                k.train(BIG_MERGES, lambda d, t: reports.append(d))
            stopped_s = time.perf_counter() - t0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signum, old)
    assert info.value is raised  # that very exception, not a KeyboardInterrupt or a wrapper
    assert stopped_s < 0.7 * whole_s, (stopped_s, whole_s)
    assert not reports or reports[-1] < BIG_MERGES
    # training works again afterwards, with the same merges
    assert _counter(small_text).train(SMALL_MERGES) == small_ref[0]


def test_ctrl_c_during_toksmith_train_on_a_file(
    big_file, big_ref, small_text, small_ref, monkeypatch, tmp_path
):
    train_module = importlib.import_module("toksmith.train")

    _, whole_s = big_ref
    before = sorted(os.listdir(big_file.parent))
    with _Presser(delay=0.1) as presser:
        _press_when_merging_starts(monkeypatch, presser, train_module._Trainer, "finish")
        result = "not called"
        with pytest.raises(KeyboardInterrupt):
            result = toksmith.train([big_file], vocab_size=256 + BIG_MERGES, pattern="gpt2")
        stopped_s = time.perf_counter() - presser.merging_at
    monkeypatch.undo()
    assert result == "not called"  # no partial tokenizer came back
    assert stopped_s < 0.7 * whole_s, (stopped_s, whole_s)
    assert sorted(os.listdir(big_file.parent)) == before  # nothing written next to the corpus
    tok = toksmith.train_from_iterator([small_text], vocab_size=256 + SMALL_MERGES, pattern="gpt2")
    assert _merge_ids(tok) == small_ref[0]


def test_ctrl_c_during_train_from_counts(big_text, big_ref, small_text, small_ref, monkeypatch):
    train_module = importlib.import_module("toksmith.train")

    _, whole_s = big_ref
    counts = _counter(big_text).counts()
    with _Presser(delay=0.1) as presser:
        _press_when_merging_starts(monkeypatch, presser, train_module._Trainer, "finish")
        with pytest.raises(KeyboardInterrupt):
            toksmith.train_from_counts(counts, vocab_size=256 + BIG_MERGES, pattern="gpt2")
        stopped_s = time.perf_counter() - presser.merging_at
    monkeypatch.undo()
    assert stopped_s < 0.7 * whole_s, (stopped_s, whole_s)
    small_counts = _counter(small_text).counts()
    tok = toksmith.train_from_counts(small_counts, vocab_size=256 + SMALL_MERGES, pattern="gpt2")
    assert _merge_ids(tok) == small_ref[0]


@pytest.mark.parametrize("progress", [False, True])
def test_ctrl_c_during_the_wordbpe_preset(
    big_file, wordbpe_ref, wordbpe_small_ref, monkeypatch, tmp_path, progress
):
    _, merging_s = wordbpe_ref
    out_dir = tmp_path / "out"
    with _Presser(delay=0.1) as presser:
        _press_when_merging_starts(monkeypatch, presser, _core, "train_words")
        result = "not called"
        with pytest.raises(KeyboardInterrupt):
            result = wordbpe.run(
                [big_file], out_dir, num_merges=WORD_MERGES, dim=8, progress=progress
            )
        stopped_s = time.perf_counter() - presser.merging_at
    monkeypatch.undo()
    assert result == "not called"
    assert stopped_s < 0.7 * merging_s, (stopped_s, merging_s)
    assert not out_dir.exists()  # every output is written after training: none was
    # the preset trains again afterwards, with the merges it gave before
    small_counts, small_tok = wordbpe_small_ref
    tok = wordbpe.train_from_counts(small_counts, 5_000, progress=progress)
    assert tok.merges == small_tok.merges and tok.tokens == small_tok.tokens


@pytest.mark.parametrize(
    "exc",
    [
        ValueError("bad value"),
        SystemExit(7),
        KeyboardInterrupt("pressed"),
        GeneratorExit("closing"),
    ],
    ids=lambda e: type(e).__name__,
)
@pytest.mark.parametrize("loop", ["ChunkCounter.train", "train_words"])
def test_what_a_progress_callback_raises_propagates_unchanged_and_at_once(
    small_text, small_ref, words, words_ref, exc, loop
):
    calls = []

    def progress(done, total):
        calls.append(done)
        raise exc

    if loop == "ChunkCounter.train":
        k = _counter(small_text)
        call, whole_s = (lambda: k.train(SMALL_MERGES, progress)), small_ref[1]
    else:
        call, whole_s = (
            (lambda: _core.train_words(words, WORD_MERGES, 0, progress, 0)),
            words_ref[1],
        )
    t0 = time.perf_counter()
    with pytest.raises(type(exc)) as info:
        call()
    stopped_s = time.perf_counter() - t0
    assert info.value is exc  # the same object, not a copy or a wrapper
    assert calls == [calls[0]] and calls[0] < SMALL_MERGES  # no report after the one that raised
    assert stopped_s < 0.7 * whole_s, (stopped_s, whole_s)


def test_a_progress_callback_raising_on_the_last_report_still_propagates(small_text):
    # the loop has ended by then: the exception must not be dropped for the finished result
    def progress(done, total):
        if done == total:
            raise ValueError("at the end")

    with pytest.raises(ValueError, match="at the end"):
        _counter(small_text).train(5_000, progress)
    with pytest.raises(TypeError):  # a progress that cannot be called is an error, raised as is
        _counter(small_text).train(5_000, 42)


def test_finding_training_from_a_progress_callback_on_a_one_thread_pool_does_not_hang():
    got = subprocess.run(
        [sys.executable, "-c", _NESTED], capture_output=True, text=True, timeout=60
    )
    assert got.stdout.strip() == "done 2000 10", (got.stdout, got.stderr[-2000:])


def test_finding_ctrl_c_stops_a_training_asked_for_more_merges_than_the_corpus_gives(small_text):
    huge = 2**31 - 1
    merges, whole_s = _timed(_counter(small_text).train, huge)
    assert len(merges) < 200_000  # the corpus runs out first
    k = _counter(small_text)
    with _Presser(delay=0.1) as presser:
        presser.go()
        t0 = time.perf_counter()
        with pytest.raises(KeyboardInterrupt):
            k.train(huge)
        stopped_s = time.perf_counter() - t0
    assert stopped_s < 0.7 * whole_s, (stopped_s, whole_s)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_finding_ctrl_c_stops_counting_a_slow_pipe_promptly(tmp_path):
    fifo = tmp_path / "corpus.txt"
    os.mkfifo(fifo)
    done = threading.Event()

    def writer():  # ~400 KB/s for at most 1.2 s, then EOF
        try:
            with open(fifo, "wb") as f:
                t0 = time.monotonic()
                while not done.is_set() and time.monotonic() - t0 < 1.2:
                    f.write(b"hello world again " * 100)
                    f.flush()
                    time.sleep(0.005)
        except OSError:  # the reader went away
            pass

    w = threading.Thread(target=writer, daemon=True)
    w.start()
    try:
        with _Presser(delay=0.2) as presser:
            presser.go()
            t0 = time.perf_counter()
            with pytest.raises(KeyboardInterrupt):
                toksmith.train([fifo], vocab_size=300, pattern="gpt2")
            stopped_s = time.perf_counter() - t0
    finally:
        done.set()
        if w.is_alive():  # a writer still waiting for a reader to open the pipe: open it and go
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        w.join(10)
    assert stopped_s < 0.7, stopped_s
