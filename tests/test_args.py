"""The package's one set of argument checks (toksmith._args), which the core layers and the
presets' wordings (toksmith.presets._checks) share: integers (numpy integers in, bools out),
bools (numpy bools in, ints out) and thread counts, each with its caller's message."""

import numpy as np
import pytest

from toksmith._args import MAX_THREADS, bool_arg, index_arg, thread_count, threads_arg
from toksmith.presets._checks import INT_TYPE_ERROR, as_int, check_threads


def test_index_arg():
    assert index_arg(3, INT_TYPE_ERROR, name="n") == 3
    assert type(index_arg(np.int64(3), INT_TYPE_ERROR, name="n")) is int
    for bad, kind in ((True, "bool"), (np.bool_(True), "bool"), (1.5, "float"), ("4", "str")):
        with pytest.raises(TypeError, match=f"^n must be an int, not {kind}$"):
            index_arg(bad, INT_TYPE_ERROR, name="n")
        with pytest.raises(TypeError, match=f"^n must be an int, not {kind}$"):
            as_int(bad, "n")  # a preset's wording over the same check
    with pytest.raises(TypeError, match=r"^n: int64$"):
        index_arg(np.int64(3), "{name}: {type}", name="n", numpy=False)


def test_thread_count():
    # the core's form: 0 (all cores) for None; the presets' form keeps None
    assert thread_count(None) == 0 and check_threads(None) is None
    assert thread_count(np.int32(2)) == 2 and check_threads(np.int32(2)) == 2
    with pytest.raises(ValueError, match=f"threads must be between 1 and {MAX_THREADS}"):
        thread_count(0)
    with pytest.raises(TypeError, match="^t must be an int or None, not bool$"):
        thread_count(True, "t")
    with pytest.raises(TypeError, match="^t must be an int, not bool$"):
        check_threads(np.bool_(True), "t")
    with pytest.raises(ValueError, match=f"^t: 5000 > {MAX_THREADS}$"):
        thread_count(5000, "t", range_error="{name}: {value} > {max}")


def test_threads_and_num_threads_must_agree():
    assert threads_arg(None, 3) == 3 and threads_arg(3, 3) == 3 and threads_arg(None) == 0
    with pytest.raises(ValueError, match="threads=2 and num_threads=3 disagree"):
        threads_arg(2, 3)


def test_bool_arg():
    assert bool_arg(np.bool_(True), "b", "") is True and bool_arg(False, "b", "") is False
    with pytest.raises(TypeError, match="^b: int$"):
        bool_arg(1, "b", "{name}: {type}")
    with pytest.raises(TypeError, match="^b: bool$"):
        bool_arg(np.bool_(True), "b", "{name}: {type}", numpy=False)
