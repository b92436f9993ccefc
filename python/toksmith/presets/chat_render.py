"""Alias: ``toksmith.presets.chat_render`` is :mod:`toksmith.presets.nanochat.chat_render` (the same module
object: the import system hands out what sys.modules holds once this has run)."""

import sys

from .nanochat import chat_render as _module

sys.modules[__name__] = _module
