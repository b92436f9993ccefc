"""``toksmith convert``: read a tokenizer in any format, write it in another.

::

    toksmith convert cl100k_base.tiktoken out/ --to huggingface
    toksmith convert tokenizer.json tok.json --to toksmith
    toksmith convert my.tiktoken my.json --to toksmith --pattern gpt2

The input's format is detected (see :func:`toksmith.formats.load_any`). ``--to`` may be left
out when OUT ends in ``.tiktoken`` or ``.json`` (toksmith JSON).
"""

from __future__ import annotations

import json
import sys

from .._paths import fspath
from ..errors import ConversionError
from ..files.detect import _detect
from ..pipeline_tokenizer import PipelineTokenizer
from ..registry import _load_detected
from ._common import special_tokens_arg

TARGETS = ("tiktoken", "huggingface", "gpt2", "toksmith")

#: what a pipeline tokenizer's model is, in the message that refuses a byte-level target
_MODEL_NAMES = {
    "bpe": "BPE over characters (with byte fallback)",
    "unigram": "Unigram",
    "wordpiece": "WordPiece",
}


def register(sub) -> None:
    p = sub.add_parser(
        "convert",
        help="convert a tokenizer between toksmith, tiktoken, Hugging Face and GPT-2 formats",
        description="Read IN (toksmith JSON, .tiktoken rank file, Hugging Face tokenizer.json or folder, "
        "GPT-2 vocab.json+merges.txt or encoder.json+vocab.bpe; the format is detected) and write it to "
        "OUT in the --to format: tiktoken (a .tiktoken file), huggingface (a folder for "
        "PreTrainedTokenizerFast.from_pretrained), gpt2 (a folder with vocab.json and merges.txt) or "
        "toksmith (a JSON file). The conversion is exact or fails with an error naming what cannot be "
        "converted.",
    )
    p.add_argument("input", metavar="IN", help="tokenizer file or folder")
    p.add_argument(
        "output", metavar="OUT", help="file (tiktoken, toksmith) or folder (huggingface, gpt2)"
    )
    p.add_argument(
        "--to",
        choices=TARGETS,
        default=None,
        help="output format (default: from OUT's extension: .tiktoken or .json)",
    )
    p.add_argument(
        "--pattern",
        default=None,
        help="split pattern (name or regex) for inputs that store none: .tiktoken rank files "
        "(default: the OpenAI encoding with the file's sha256, else cl100k) and GPT-2 files "
        "(default gpt2)",
    )
    p.add_argument(
        "--special-tokens",
        default=None,
        metavar="JSON",
        help='special tokens for inputs that store none, as a JSON object {"<|eot|>": 100257}',
    )
    p.add_argument(
        "--name", default=None, help="tokenizer name (tiktoken Encoding name, toksmith name)"
    )
    p.add_argument(
        "--no-strict",
        dest="strict",
        action="store_false",
        help="Hugging Face input: drop a Unicode normalizer or accept decoder differences with a "
        "warning instead of failing (strict=False of from_huggingface)",
    )
    p.set_defaults(func=run)


def _target(args) -> str:
    if args.to:
        return args.to
    out = args.output.lower()
    if out.endswith(".tiktoken"):
        return "tiktoken"
    if out.endswith(".json"):
        return "toksmith"
    raise ValueError(
        f"cannot tell the output format from {args.output!r}: pass --to {'|'.join(TARGETS)}"
    )


def run(args) -> int:
    target = _target(args)
    specials = special_tokens_arg(args.special_tokens)
    path = fspath(args.input)
    detected = _detect(path)  # once: a tokenizer.json is parsed to detect it
    source = detected[0]
    tok = _load_detected(path, detected, args.pattern, specials, args.strict)
    saver = {
        "tiktoken": "save_tiktoken",
        "huggingface": "save_huggingface",
        "gpt2": "save_gpt2_files",
        "toksmith": "save",
    }[target]
    if isinstance(tok, PipelineTokenizer):
        return _convert_pipeline(tok, args, source, target)
    if not hasattr(tok, saver):
        raise ConversionError(
            f"{args.input} is a {source} tokenizer ({type(tok).__name__}): toksmith reads it "
            f"with exact ids (toksmith.load_any) but cannot write it as {target}; keep the "
            "original file"
        )
    if args.name:
        tok.name = args.name
    if target == "tiktoken":
        tok.save_tiktoken(args.output)
    elif target == "huggingface":
        tok.save_huggingface(args.output)
    elif target == "gpt2":
        tok.save_gpt2_files(args.output)
    else:
        tok.save(args.output)
    print(
        f"{args.input} ({source}) -> {args.output} ({target}): n_vocab={tok.n_vocab}, "
        f"pattern={tok.pattern_name or 'custom'}, {len(tok.special_tokens)} special, "
        f"{len(tok.pinned_tokens)} pinned",
        file=sys.stderr,
    )
    if target == "tiktoken":
        print(
            f"note: a .tiktoken file stores neither the pattern ({tok.pattern_name or tok.pattern!r}) nor the "
            f"special tokens {json.dumps(tok.special_tokens, ensure_ascii=False)}; give them when loading it",
            file=sys.stderr,
        )
    elif target == "gpt2" and tok.pattern_name != "gpt2":
        print(
            f"note: GPT-2 files do not store the pattern ({tok.pattern_name or tok.pattern!r}); give it when "
            "loading them",
            file=sys.stderr,
        )
    if target == "gpt2" and tok.pinned_tokens:
        # vocab.json lists the pinned tokens among the others: loaded back, they are special tokens
        print(
            f"note: GPT-2 files do not say which tokens are pinned: give special_tokens="
            f"{json.dumps(tok.special_tokens, ensure_ascii=False)}, pinned_tokens="
            f"{json.dumps(tok.pinned_tokens, ensure_ascii=False)} when loading them "
            "(toksmith.from_gpt2_files), or they load as special tokens",
            file=sys.stderr,
        )
    return 0


def _convert_pipeline(tok: PipelineTokenizer, args, source: str, target: str) -> int:
    """A SentencePiece / Unigram / WordPiece / character-BPE tokenizer: written as a Hugging
    Face folder; the byte-level formats cannot hold it."""
    if target != "huggingface":
        raise ConversionError(
            f"{args.input} is a {source} tokenizer whose model is "
            f"{_MODEL_NAMES.get(tok.model_kind, tok.model_kind)}, not byte-level BPE: a "
            f"{target} file holds byte-level BPE only; convert it --to huggingface"
        )
    tok.save_huggingface(args.output)
    print(
        f"{args.input} ({source}) -> {args.output} ({target}): n_vocab={tok.n_vocab}, "
        f"model={tok.model_kind}, {len(tok.special_tokens)} special",
        file=sys.stderr,
    )
    if tok.source_kind == "sentencepiece":
        print(
            "note: tokenizers matches special tokens written in the text (sentencepiece reads "
            "them as text): ids equal toksmith's encode(text, special=True)",
            file=sys.stderr,
        )
    return 0
