"""Reference counts of the ints in result lists, on the interpreters where toksmith pins a
vocabulary's ints (crates/toksmith-py's cpython.rs, `Pin`) and on those where it counts them."""

import gc
import os
import sys
import sysconfig

#: toksmith pins the ints of a vocabulary's ids on this interpreter (crates/toksmith-py's
#: cpython.rs, `Pin`): result lists hold them without a reference of their own.
PINS = (
    sys.implementation.name == "cpython"
    and sys.maxsize > 2**32
    and sys.byteorder == "little"
    and not hasattr(sys, "gettotalrefcount")
    and (3, 9) <= sys.version_info[:2] <= (3, 14)
    and not sysconfig.get_config_var("Py_GIL_DISABLED")
)


class Refs:
    """The reference count of `probe`, one of a vocabulary's shared int objects, against what
    result lists should have done to it since.

    A tokenizer built with ``TOKSMITH_EXACT_INT_REFS=1`` (the fallback, and every tokenizer where
    the interpreter cannot pin ints) counts one reference per id in a list. Pinned ints (CPython
    3.9-3.14 with the GIL) are held without one: 3.12+ makes them immortal (the count stays put),
    3.9-3.11 raise it by 2**60 once, after which only freeing lists lowers it, by the number of
    the probe's ids freed (which checks that the lists were freed)."""

    def __init__(self, probe, counted):
        self.probe = probe
        self.counted = counted or not PINS
        # (measured once the call is over: the call itself holds references to `probe`)
        self.before = 0

    def start(self):
        # Every pinned table holds a reference of its own to the shared pinned ints: a
        # tokenizer freed by the cyclic collector between `start` and `expect` would lower the
        # count by one. The collector waits until this object goes, and tests must not call
        # `gc.collect()` in between either (garbage of earlier tests may hold a pinned table).
        self._gc_was_on = gc.isenabled()
        gc.disable()
        self.before = self.now()
        if sys.version_info >= (3, 12) and self.before >= 1 << 31:
            # immortal already (CPython's small ints on 3.12+): no path moves its count
            self.counted = False
        return self

    def now(self):
        return sys.getrefcount(self.probe)

    def _gc_back(self):
        if getattr(self, "_gc_was_on", False):
            self._gc_was_on = False
            gc.enable()

    def __del__(self):
        self._gc_back()

    def expect(self, held=0, freed=0):
        now = self.now()
        if self.counted:
            assert now == self.before + held
        elif sys.version_info < (3, 12):
            assert now == self.before - freed
        else:
            assert now == self.before


def exact_refs(build):
    """`build()` with ``TOKSMITH_EXACT_INT_REFS=1`` set: a tokenizer whose lists count every
    reference (the path of interpreters that cannot pin ints)."""
    old = os.environ.get("TOKSMITH_EXACT_INT_REFS")
    os.environ["TOKSMITH_EXACT_INT_REFS"] = "1"
    try:
        return build()
    finally:
        if old is None:
            del os.environ["TOKSMITH_EXACT_INT_REFS"]
        else:
            os.environ["TOKSMITH_EXACT_INT_REFS"] = old
