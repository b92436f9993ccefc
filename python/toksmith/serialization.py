"""Alias of :mod:`toksmith.files.toksmith_json` (toksmith's own file format, which moved below
the Tokenizer with the other readers): ``toksmith.serialization`` is that same module;
:func:`toksmith.load` builds a Tokenizer from what it reads."""

import sys

from .files import toksmith_json

sys.modules[__name__] = toksmith_json
