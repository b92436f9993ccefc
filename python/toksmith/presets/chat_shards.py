"""Alias: ``toksmith.presets.chat_shards`` is :mod:`toksmith.presets.nanochat.chat_shards` (the same module
object: the import system hands out what sys.modules holds once this has run)."""

import sys

from .nanochat import chat_shards as _module

sys.modules[__name__] = _module
