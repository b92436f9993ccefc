"""toksmith's benchmark harness: ``python -m benches.run [--quick|--smoke] [--only SECTION ...]``.

Measures toksmith side by side with tiktoken, Hugging Face tokenizers, rustbpe and fastokens in
one run and writes ``BENCHMARKS.md`` plus a PNG chart. See ``benches/README.md``.
"""
