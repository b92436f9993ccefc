"""``toksmith info``: describe a tokenizer file."""

from __future__ import annotations

import json

from ..registry import load_any
from ._common import add_tokenizer_arg, load_tokenizer, special_tokens_arg


def register(sub) -> None:
    p = sub.add_parser("info", help="describe a tokenizer file")
    add_tokenizer_arg(p)
    p.add_argument(
        "--special-tokens",
        default=None,
        metavar="JSON",
        help="special tokens for a file that stores none (a .tiktoken rank file whose special tokens "
        'fill gaps in its ranks), as a JSON object {"<|bos|>": 0}',
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def _load(args):
    if args.special_tokens is None:
        return load_tokenizer(args.tokenizer, args.pattern)

    return load_any(
        args.tokenizer, pattern=args.pattern, special_tokens=special_tokens_arg(args.special_tokens)
    )


def _escaped(text) -> str:
    """``text`` with its control characters (newline, tab, ESC...) escaped as in a Python
    string literal, so that it stays on its line (a regex's own backslashes are kept as they
    are, unlike repr)."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


def run(args) -> int:
    tok = _load(args)
    ranks = getattr(tok, "mergeable_ranks", None)
    info = {  # other tokenizer kinds (e.g. calm.ByteTokenizer) lack some of these
        "name": getattr(tok, "name", type(tok).__name__),
        "n_vocab": tok.n_vocab,
        "mergeable_tokens": len(ranks()) if callable(ranks) else 256,
        "pattern_name": getattr(tok, "pattern_name", None),
        "pattern": getattr(tok, "pattern", None) or "(none: one token per byte)",
        "special_tokens": tok.special_tokens,
        "pinned_tokens": getattr(tok, "pinned_tokens", {}),
        "metadata": getattr(tok, "metadata", {}),
    }
    model_kind = getattr(tok, "model_kind", None)  # a PipelineTokenizer: no pattern, no ranks
    if model_kind is not None:
        info["model"] = model_kind
        info["source"] = tok.source_kind
        info["mergeable_tokens"] = None
        info["pattern"] = None
    # what a tokenizer.json adds to the byte-level BPE (printed only when there is one)
    for key in ("normalizer", "template"):
        if getattr(tok, key, None) is not None:
            info[key] = getattr(tok, key)
    if args.json:
        print(json.dumps(info, ensure_ascii=False, indent=2))
        return 0
    print(f"name:              {_escaped(info['name'])}")
    print(f"n_vocab:           {info['n_vocab']}")
    if "model" in info:
        print(f"model:             {info['model']} ({info['source']} file)")
    else:
        print(f"mergeable tokens:  {info['mergeable_tokens']}")
        print(f"pattern:           {info['pattern_name'] or 'custom'}  {_escaped(info['pattern'])}")
    if "normalizer" in info:
        print(f"normalizer:        {json.dumps(info['normalizer'], ensure_ascii=False)}")
    if "template" in info:
        prefix, suffix = info["template"]
        print(f"adds tokens:       {prefix} before, {suffix} after (add_special_tokens)")
    print(f"special tokens:    {len(info['special_tokens'])}")
    for t, i in sorted(info["special_tokens"].items(), key=lambda kv: kv[1]):
        print(f"  {i:>8}  {t!r}")
    if info["pinned_tokens"]:
        print(f"pinned tokens:     {len(info['pinned_tokens'])}")
        for t, i in sorted(info["pinned_tokens"].items(), key=lambda kv: kv[1])[:50]:
            print(f"  {i:>8}  {t!r}")
    corpus = info["metadata"].get("corpus")
    if corpus:
        print(
            f"trained on:        {corpus.get('bytes', 0) / 1e6:.1f} MB, {corpus.get('unique_chunks')} unique chunks, "
            f"{corpus.get('n_sources', 0)} files"
        )
    return 0
