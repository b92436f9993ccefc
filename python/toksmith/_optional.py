"""Optional dependencies, imported where first used.

`lazy_module("numpy", extra="numpy")` returns a stand-in that imports numpy on first attribute
access, so a module that needs numpy only inside its functions can still be imported (and
exported from `toksmith`) where numpy is not installed; the first use then raises the ImportError
that names the extra to install.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from .errors import missing_extra


class _LazyModule:
    __slots__ = ("_name", "_extra", "_module")

    def __init__(self, name: str, extra: str) -> None:
        self._name = name
        self._extra = extra
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        module = self._module
        if module is None:
            try:
                module = importlib.import_module(self._name)
            except ImportError:
                raise missing_extra(self._extra, self._name) from None
            self._module = module
        return getattr(module, attr)


def lazy_module(name: str, extra: str) -> Any:
    """A stand-in for the optional module `name` (installed by `pip install toksmith[extra]`)."""
    return _LazyModule(name, extra)
