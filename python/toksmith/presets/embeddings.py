"""Alias: ``toksmith.presets.embeddings`` is :mod:`toksmith.presets.wordbpe.embeddings` (the same module
object: the import system hands out what sys.modules holds once this has run)."""

import sys

from .wordbpe import embeddings as _module

sys.modules[__name__] = _module
