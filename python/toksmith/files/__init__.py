"""Tokenizer files, one reader/writer module per format: toksmith JSON
(:mod:`~toksmith.files.toksmith_json`), tiktoken (:mod:`~toksmith.files.tiktoken`), Hugging
Face (:mod:`~toksmith.files.huggingface`), GPT-2 (:mod:`~toksmith.files.gpt2`), format
detection (:mod:`~toksmith.files.detect`), and what ``tok.save``/``toksmith.load`` write and
read (:mod:`~toksmith.files.saved`: a ``tokenizer.json`` in Hugging Face's format, else toksmith's).

The readers return a :class:`toksmith.spec.TokenizerSpec` (plain data) and never build a
:class:`toksmith.Tokenizer`: this layer is below the tokenizer, which builds one from a spec
(:meth:`toksmith.Tokenizer.from_spec`); :mod:`toksmith.registry` joins the two.
"""
