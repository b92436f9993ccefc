"""Alias of :mod:`toksmith._regex` (the regex translation moved below the pretokenizer, which
uses its lexer): ``toksmith.formats._regex`` is that same module object."""

import sys

from .. import _regex

sys.modules[__name__] = _regex
