"""``toksmith.calm`` is :mod:`toksmith.presets.calm` under its first name.

The CALM preset lives in ``toksmith/presets/calm/`` with the other presets. This package only
makes the old import paths give the same module objects: ``toksmith.calm`` *is*
``toksmith.presets.calm`` and ``toksmith.calm.cwgt`` *is* ``toksmith.presets.calm.cwgt`` (so a
class, a constant or a monkeypatch is one thing under both names, and pickles made under either
name load).
"""

import sys
from typing import TYPE_CHECKING

from ..presets import calm as _calm
from ..presets.calm import byte_tokenizer, codec, cwgt, frames, sequence, stops, vocab

for _module in (byte_tokenizer, codec, cwgt, frames, sequence, stops, vocab):
    sys.modules[f"{__name__}.{_module.__name__.rpartition('.')[2]}"] = _module
if TYPE_CHECKING:  # what the type checker sees in toksmith.calm: the names of the real module
    from ..presets.calm import *  # noqa: F403

# the import system hands out what sys.modules holds under the name once this module has run
sys.modules[__name__] = _calm
