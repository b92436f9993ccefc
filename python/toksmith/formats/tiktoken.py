"""tiktoken interop (the Tokenizer-level names; the readers and writers are in
:mod:`toksmith.files.tiktoken`, OpenAI's encodings by name in :mod:`toksmith.registry`).

>>> import os, tempfile, toksmith
>>> tok = toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)} | {b"ab": 256}, "gpt2")
>>> path = os.path.join(tempfile.mkdtemp(), "tiny.tiktoken")
>>> save_tiktoken(tok, path)
>>> open(path).read().splitlines()[256]
'YWI= 256'
>>> from_tiktoken(path, pattern="gpt2").encode("abc")
[256, 99]
"""

from ..files import tiktoken as _files
from ..registry import encoding_for_model as encoding_for_model
from ..registry import from_tiktoken as from_tiktoken
from ..registry import get_encoding as get_encoding
from ..registry import load_openai as load_openai

# every name of toksmith.files.tiktoken, private ones included (this module was that one before
# the readers moved below the Tokenizer)
globals().update({k: v for k, v in vars(_files).items() if not k.startswith("__")})
