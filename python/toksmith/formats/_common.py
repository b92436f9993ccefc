"""Alias of :mod:`toksmith.files._common`: ``toksmith.formats._common`` is that same module."""

import sys

from ..files import _common

sys.modules[__name__] = _common
