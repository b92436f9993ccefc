"""Hugging Face interop (the Tokenizer-level names; the reader and writers are in
:mod:`toksmith.files.huggingface`).

>>> import toksmith
>>> tok = toksmith.train_from_iterator(["low lower lowest"] * 20, vocab_size=262, pattern="gpt2",
...                                    special_tokens=["<|end|>"])
>>> data = huggingface_json(tok)
>>> from_huggingface(data).encode("lowest<|end|>", allowed_special="all") == tok.encode(
...     "lowest<|end|>", allowed_special="all")
True
"""

from ..files import huggingface as _files
from ..registry import from_huggingface as from_huggingface

# every name of toksmith.files.huggingface, private ones included (this module was that one before
# the readers moved below the Tokenizer)
globals().update({k: v for k, v in vars(_files).items() if not k.startswith("__")})
