"""GPT-2 files (the Tokenizer-level names; the reader and writers are in
:mod:`toksmith.files.gpt2`).

>>> import os, tempfile, toksmith
>>> tok = toksmith.train_from_iterator(["low lower lowest"] * 20, vocab_size=262, pattern="gpt2",
...                                    special_tokens=["<|endoftext|>"])
>>> d = tempfile.mkdtemp()
>>> save_gpt2_files(tok, d)
>>> tok2 = from_gpt2_files(os.path.join(d, "vocab.json"), os.path.join(d, "merges.txt"))
>>> tok2.encode("lowest") == tok.encode("lowest"), tok2.special_tokens
(True, {'<|endoftext|>': 261})
"""

from ..files import gpt2 as _files
from ..registry import from_gpt2_files as from_gpt2_files

# every name of toksmith.files.gpt2, private ones included (this module was that one before
# the readers moved below the Tokenizer)
globals().update({k: v for k, v in vars(_files).items() if not k.startswith("__")})
