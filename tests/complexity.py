"""Checks of how work grows with input, for the tests of "no quadratic worst case" fixes.

A wall-clock limit ("takes under 1 s") measures the machine as much as the code: it fails on a
loaded machine and passes a quadratic path on a fast one. These helpers compare the same code
with itself instead: the time of ``run(n)`` and of ``run(factor * n)`` (best of a few runs each).
A linear path takes about ``factor`` times as long on the larger input, a quadratic one
``factor ** 2`` times; the limit sits halfway between them (36x for the default factor of 8), so
that other work on the machine slowing one timing several times over does not fail the check. Memory is checked with ``tracemalloc``'s
peak, not with time.
"""

from __future__ import annotations

import time
import tracemalloc
from typing import Any, Callable


def best_seconds(fn: Callable[[], Any], repeat: int = 3) -> float:
    """The shortest of ``repeat`` timings of ``fn()``, in CPU seconds of this process (all its
    threads): on a machine shared with other work, wall time stretches a long call more than a
    short one (the long one is descheduled more often), CPU time does not."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def assert_linear(
    run: Callable[[int], Any], n: int, factor: int = 8, limit: float = 0.0, repeat: int = 3
) -> None:
    """Assert that ``run(factor * n)`` takes less than ``limit`` times as long as ``run(n)``
    (default: halfway between linear, ``factor``, and quadratic, ``factor ** 2``).

    ``n`` must make ``run(n)`` take a few milliseconds at least, so that the ratio is the
    algorithm's and not the timer's."""
    limit = limit or (factor + factor**2) / 2
    small = best_seconds(lambda: run(n), repeat)
    large = best_seconds(lambda: run(factor * n), repeat)
    ratio = large / max(small, 1e-3)
    assert ratio < limit, (
        f"{factor}x the input took {ratio:.1f}x the time ({small:.4f} s -> {large:.4f} s): "
        f"more than linear (limit {limit:.1f}x)"
    )


def peak_allocated(fn: Callable[[], Any]) -> int:
    """The peak bytes Python allocated while ``fn()`` ran (what it raises propagates)."""
    tracemalloc.start()
    try:
        fn()
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak
