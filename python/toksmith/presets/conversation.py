"""Alias: ``toksmith.presets.conversation`` is :mod:`toksmith.presets.nanochat.conversation` (the same module
object: the import system hands out what sys.modules holds once this has run)."""

import sys

from .nanochat import conversation as _module

sys.modules[__name__] = _module
