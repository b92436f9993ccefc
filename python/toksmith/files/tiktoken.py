"""tiktoken interop: ``.tiktoken`` rank files, ``tiktoken.Encoding`` objects, OpenAI's encodings.

A ``.tiktoken`` file is one line per mergeable token: ``base64(token bytes) SPACE rank``. The
rank is both the token id and its merge priority. The file holds nothing else: **no split
pattern and no special tokens**. So:

* :func:`from_tiktoken` takes them as arguments (``pattern=``, ``special_tokens=``), or from a
  named encoding (``preset="cl100k"``, ``preset="llama3"``), or, when neither is given, from
  the encoding whose sha256 the file has: OpenAI's, or an open model's rank file
  (:data:`MODEL_RANK_FILES`: Llama 3, Llama 4, Qwen 1, with the pattern and special tokens
  their own code defines). Any other file without ``pattern=`` is an error: a guessed
  pattern would encode silently wrong.
* :func:`save_tiktoken` writes only the ranks; pass the pattern and special tokens again when
  loading it back (or keep the toksmith JSON file too).

Reading and writing rank files needs no tiktoken; :func:`to_tiktoken` (and passing a
``tiktoken.Encoding`` to :func:`from_tiktoken`) needs ``pip install toksmith[tiktoken]``.

OpenAI's encodings, when you have their rank file (toksmith downloads nothing):

=================  =================  =================================================
preset             pattern            special tokens
=================  =================  =================================================
``gpt2``, ``r50k``  ``gpt2``            ``<|endoftext|>`` 50256
``p50k``           ``gpt2``            ``<|endoftext|>`` 50256
``p50k_edit``      ``gpt2``            p50k + FIM prefix/middle/suffix 50281-50283
``cl100k``         ``cl100k``          ``<|endoftext|>`` 100257, FIM 100258-100260, ``<|endofprompt|>`` 100276
``o200k``          ``o200k``           ``<|endoftext|>`` 199999, ``<|endofprompt|>`` 200018
``o200k_harmony``  ``o200k``           the harmony chat tokens 199998-201087
=================  =================  =================================================

The files are checked against the sha256 that tiktoken itself pins (``check_hash=False`` skips
the check). ``gpt2`` and ``r50k_base`` are the same encoding (whisper ships the same file as
``gpt2.tiktoken``); the original ``encoder.json`` + ``vocab.bpe`` pair loads with
:func:`toksmith.from_gpt2_files`.

>>> import io, os, tempfile, toksmith
>>> tok = toksmith.Tokenizer.from_ranks({bytes([b]): b for b in range(256)} | {b"ab": 256}, "gpt2")
>>> path = os.path.join(tempfile.mkdtemp(), "tiny.tiktoken")
>>> save_tiktoken(tok, path)
>>> open(path).read().splitlines()[256]
'YWI= 256'
>>> read_tiktoken(path, pattern="gpt2").mergeable_ranks[b"ab"]
256
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import tempfile
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from .. import _core
from .._paths import fspath
from .._regex import can_match_empty
from ..errors import TokenizerFileError, UnknownModelError
from ..pretokenize import _from_file
from ..spec import TokenizerSpec
from ._common import (
    ConversionError,
    PathLike,
    check_no_normalizer,
    check_tokenizer,
    read_tokenizer_file,
    require,
    source_meta,
    write_text_atomic,
)

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"


@dataclass(frozen=True)
class OpenAIEncoding:
    """One of OpenAI's public encodings: everything but the rank file."""

    name: str
    pattern: str  # a toksmith pattern name
    special_tokens: Dict[str, int]
    sha256: str  # of the .tiktoken rank file, as pinned by tiktoken
    file: str  # the file's usual name
    n_vocab: int
    aliases: tuple = field(default=())


def _harmony_specials() -> Dict[str, int]:
    sp = {
        ENDOFTEXT: 199999,
        ENDOFPROMPT: 200018,
        "<|startoftext|>": 199998,
        "<|reserved_200000|>": 200000,
        "<|reserved_200001|>": 200001,
        "<|return|>": 200002,
        "<|constrain|>": 200003,
        "<|reserved_200004|>": 200004,
        "<|channel|>": 200005,
        "<|start|>": 200006,
        "<|end|>": 200007,
        "<|message|>": 200008,
        "<|reserved_200009|>": 200009,
        "<|reserved_200010|>": 200010,
        "<|reserved_200011|>": 200011,
        "<|call|>": 200012,
    }
    sp.update({f"<|reserved_{i}|>": i for i in range(200013, 201088)})
    return sp


_R50K_SHA = "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"
_P50K_SHA = "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"
_CL100K_SHA = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_O200K_SHA = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"

#: OpenAI's public encodings by tiktoken name (see the module docstring for the aliases)
OPENAI_ENCODINGS: Dict[str, OpenAIEncoding] = {
    e.name: e
    for e in [
        OpenAIEncoding(
            "r50k_base",
            "gpt2",
            {ENDOFTEXT: 50256},
            _R50K_SHA,
            "r50k_base.tiktoken",
            50257,
            ("r50k",),
        ),
        OpenAIEncoding("gpt2", "gpt2", {ENDOFTEXT: 50256}, _R50K_SHA, "gpt2.tiktoken", 50257),
        OpenAIEncoding(
            "p50k_base",
            "gpt2",
            {ENDOFTEXT: 50256},
            _P50K_SHA,
            "p50k_base.tiktoken",
            50281,
            ("p50k",),
        ),
        OpenAIEncoding(
            "p50k_edit",
            "gpt2",
            {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283},
            _P50K_SHA,
            "p50k_base.tiktoken",
            50284,
        ),
        OpenAIEncoding(
            "cl100k_base",
            "cl100k",
            {
                ENDOFTEXT: 100257,
                FIM_PREFIX: 100258,
                FIM_MIDDLE: 100259,
                FIM_SUFFIX: 100260,
                ENDOFPROMPT: 100276,
            },
            _CL100K_SHA,
            "cl100k_base.tiktoken",
            100277,
            ("cl100k",),
        ),
        OpenAIEncoding(
            "o200k_base",
            "o200k",
            {ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
            _O200K_SHA,
            "o200k_base.tiktoken",
            200019,
            ("o200k",),
        ),
        OpenAIEncoding(
            "o200k_harmony", "o200k", _harmony_specials(), _O200K_SHA, "o200k_base.tiktoken", 201088
        ),
    ]
}

# sha256 -> the encoding a file with that hash is loaded as when no preset is named
_BY_SHA = {
    _R50K_SHA: "r50k_base",
    _P50K_SHA: "p50k_base",
    _CL100K_SHA: "cl100k_base",
    _O200K_SHA: "o200k_base",
}

#: the pattern a rank file that is not recognised used to get; kept for compatibility: such a
#: file now needs ``pattern=`` (guessing a pattern mis-encodes files such as Llama 4's)
DEFAULT_PATTERN = "cl100k"

# ---- open models that ship a bare rank file: their code defines the pattern and special
# tokens (each spelled here exactly as that code spells it)

#: Meta's llama-models ``llama3/tokenizer.py`` (Llama 3, 3.1, 3.2, 3.3 share the file)
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
#: llama-models ``llama4/tokenizer.py``'s ``O200K_PATTERN`` (not OpenAI's o200k: ``[\r\n/]*``)
LLAMA4_PATTERN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+"
    r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
#: Qwen's ``tokenization_qwen.py`` (qwen-agent, and the Qwen 1 model repositories)
QWEN1_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def _numbered(names, start: int) -> Dict[str, int]:
    return {t: start + i for i, t in enumerate(names)}


def _llama3_specials() -> Dict[str, int]:
    named = [
        "<|begin_of_text|>",
        "<|end_of_text|>",
        "<|reserved_special_token_0|>",
        "<|reserved_special_token_1|>",
        "<|finetune_right_pad_id|>",
        "<|step_id|>",
        "<|start_header_id|>",
        "<|end_header_id|>",
        "<|eom_id|>",
        "<|eot_id|>",
        "<|python_tag|>",
        "<|image|>",
    ]
    reserved = [f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(named))]
    return _numbered(named + reserved, 128000)


def _llama4_specials() -> Dict[str, int]:
    def reserved(kind: str, count: int, start: int = 0):
        return [f"<|{kind}_reserved_special_token_{i}|>" for i in range(start, start + count)]

    text = [
        "<|header_start|>",
        "<|header_end|>",
        "<|eom|>",
        "<|eot|>",
        "<|step|>",
        *reserved("text_post_train", 6),
        "<|python_start|>",
        "<|python_end|>",
        "<|finetune_right_pad|>",
        *reserved("text_post_train", 61, 8),
    ]
    vision = [
        "<|image_start|>",
        "<|image_end|>",
        *reserved("vision", 2),
        "<|tile_x_separator|>",
        "<|tile_y_separator|>",
        *reserved("vision", 4, 2),
        "<|image|>",
        "<|vision_reserved_special_token_6|>",
        "<|patch|>",
        *reserved("vision", 1041, 7),
    ]
    reasoning = [
        *reserved("reasoning", 8),
        "<|reasoning_thinking_start|>",
        "<|reasoning_thinking_end|>",
    ]
    basic = ["<|begin_of_text|>", "<|end_of_text|>", FIM_PREFIX, FIM_MIDDLE, FIM_SUFFIX]
    named = basic + text + vision + reasoning
    rest = [f"<|reserved_special_token_{i}|>" for i in range(2048 - len(named))]
    return _numbered(named + rest, 200000)


def _qwen1_specials() -> Dict[str, int]:
    names = [ENDOFTEXT, "<|im_start|>", "<|im_end|>"] + [f"<|extra_{i}|>" for i in range(205)]
    return _numbered(names, 151643)


#: Whisper's languages in its token order (openai-whisper ``tokenizer.LANGUAGES``); the
#: multilingual models use the first 99, large-v3 all 100
WHISPER_LANGUAGES = (
    "en zh de es ru ko fr ja pt tr pl ca nl ar sv it id hi fi vi he uk el ms cs ro da hu ta no th "
    "ur hr bg lt la mi ml cy sk te fa lv bn sr az sl kn et mk br eu is hy ne mn bs kk sq sw gl mr "
    "pa si km sn yo so af oc ka be tg sd gu am yi lo uz fo ht ps tk nn mt sa lb my bo tl mg as tt "
    "haw ln ha ba jw su yue"
).split()
#: openai-whisper ``tokenizer.get_encoding``'s pattern
WHISPER_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def whisper_specials(num_languages: int = 99, start: int = 50257) -> Dict[str, int]:
    """Whisper's special tokens as ``tokenizer.get_encoding(num_languages=...)`` numbers them
    (99 languages: the multilingual models before large-v3; 100: large-v3)."""
    names = [
        ENDOFTEXT,
        "<|startoftranscript|>",
        *[f"<|{lang}|>" for lang in WHISPER_LANGUAGES[:num_languages]],
        "<|translate|>",
        "<|transcribe|>",
        "<|startoflm|>",
        "<|startofprev|>",
        "<|nospeech|>",
        "<|notimestamps|>",
        *[f"<|{i * 0.02:.2f}|>" for i in range(1501)],
    ]
    return _numbered(names, start)


_WHISPER_SHA = "b34b360dbb493e781e479794586d661700670d65564001f23024971d1f2fa126"
_LLAMA3_SHA = "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55"
_LLAMA4_SHA = "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed"
_QWEN1_SHA = "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186"

#: the rank files of open models recognised by sha256 (``preset=`` takes these names too);
#: pattern and special tokens as each model's own code builds its ``tiktoken.Encoding``.
#: Qwen's own ``tokenize`` applies Unicode NFC to the whole text first, and so does toksmith
#: (the spec's normalizer, :func:`whole_text_normalizer`): the ids are those of Qwen's code.
MODEL_RANK_FILES: Dict[str, OpenAIEncoding] = {
    e.name: e
    for e in [
        OpenAIEncoding(
            "llama3",
            LLAMA3_PATTERN,
            _llama3_specials(),
            _LLAMA3_SHA,
            "tokenizer.model",
            128256,
            ("llama3.1", "llama3.2", "llama3.3"),
        ),
        OpenAIEncoding(
            "llama4", LLAMA4_PATTERN, _llama4_specials(), _LLAMA4_SHA, "tokenizer.model", 202048
        ),
        OpenAIEncoding(
            "whisper",
            WHISPER_PATTERN,
            whisper_specials(99),
            _WHISPER_SHA,
            "multilingual.tiktoken",
            51865,
            ("whisper-multilingual",),
        ),
        OpenAIEncoding(
            "whisper-v3",
            WHISPER_PATTERN,
            whisper_specials(100),
            _WHISPER_SHA,
            "multilingual.tiktoken",
            51866,
            ("whisper-large-v3",),
        ),
        OpenAIEncoding(
            "qwen1",
            QWEN1_PATTERN,
            _qwen1_specials(),
            _QWEN1_SHA,
            "qwen.tiktoken",
            151851,
            ("qwen",),
        ),
    ]
}
# the same file serves both Whisper presets: recognised as the first (99 languages)
_BY_SHA.update({e.sha256: e.name for e in MODEL_RANK_FILES.values() if e.name != "whisper-v3"})
#: what a recognised model's own code does to the whole text before encoding (Qwen 1's
#: ``tokenization_qwen.py``: ``unicodedata.normalize("NFC", text)``, then tiktoken's ``encode``)
_MODEL_NORMALIZERS = {"qwen1": "NFC"}


def whole_text_normalizer(form: str) -> Dict[str, Any]:
    """The normalizer object of a Unicode form applied to the whole text before special
    tokens are looked for (toksmith's ``toksmith.WholeText`` wrapper; a Hugging Face
    normalizer only sees the text between special tokens)."""
    return {"type": "toksmith.WholeText", "normalizer": {"type": form}}


def openai_encoding(name: str) -> OpenAIEncoding:
    """Look up an OpenAI encoding by tiktoken name or alias (``"cl100k"``, ``"gpt2"``...)."""
    if not isinstance(name, str):
        raise TypeError(
            f"the encoding name (preset) must be a str such as 'cl100k_base', not {type(name).__name__}"
        )
    key = name.lower()
    if key in OPENAI_ENCODINGS:
        return OPENAI_ENCODINGS[key]
    for e in OPENAI_ENCODINGS.values():
        if key in e.aliases:
            return e
    names = sorted(
        set(OPENAI_ENCODINGS) | {a for e in OPENAI_ENCODINGS.values() for a in e.aliases}
    )
    raise ValueError(f"unknown OpenAI encoding {name!r}; known: {', '.join(names)}")


def rank_file_preset(name: str) -> OpenAIEncoding:
    """Look up a ``preset=`` name: an OpenAI encoding (:func:`openai_encoding`) or an open
    model's rank file (:data:`MODEL_RANK_FILES`: ``"llama3"``, ``"llama4"``, ``"qwen1"``)."""
    if isinstance(name, str):
        key = name.lower()
        for e in MODEL_RANK_FILES.values():
            if key == e.name or key in e.aliases:
                return e
    try:
        return openai_encoding(name)
    except ValueError as e:
        models = sorted({n for m in MODEL_RANK_FILES.values() for n in (m.name, *m.aliases)})
        raise ValueError(f"{e}; open models' rank files: {', '.join(models)}") from None


def identify_openai_file(path: PathLike) -> Optional[str]:
    """The name of the encoding whose rank file this is (by sha256: OpenAI's, or an open
    model's of :data:`MODEL_RANK_FILES`), else None."""
    raw = read_tokenizer_file(fspath(path))  # not an int: that is a file descriptor
    return _BY_SHA.get(hashlib.sha256(raw).hexdigest())


# ------------------------------------------------------------------------------ rank files


_BOM = b"\xef\xbb\xbf"


def _parse_ranks(raw: bytes, where: str, empty: Optional[List[int]] = None) -> Dict[bytes, int]:
    fast = _core.parse_tiktoken_ranks(raw)  # None: not a plain, valid file (the reference says why)
    if fast is not None:
        return fast
    return _parse_ranks_reference(raw, where, empty)


def _parse_ranks_reference(
    raw: bytes, where: str, empty: Optional[List[int]] = None
) -> Dict[bytes, int]:
    """The readable reference of :func:`_parse_ranks` (``_core.parse_tiktoken_ranks``), which
    also reports what is wrong, with the line number.

    With ``empty`` (a list), a line ``= RANK`` (the empty token, which tiktoken's lenient
    base64 reads as ``b""``: Whisper's ``multilingual.tiktoken`` has one) adds RANK to it
    instead of failing: no text encodes to that id, in tiktoken either."""
    ranks: Dict[bytes, int] = {}
    by_rank: Dict[int, int] = {}
    if raw.startswith(_BOM):
        raw = raw[len(_BOM) :]
    # as tiktoken reads it: \n, \r\n or \r line ends, any ASCII whitespace around and between
    for n, line in enumerate(raw.splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 2:
            raise TokenizerFileError(
                f"{where}: line {n}: expected 'base64-token rank', found {line[:60]!r} (truncated or not a .tiktoken file?)"
            )
        tok_b64, rank_s = parts
        if empty is not None and tok_b64 == b"=" and rank_s.isdigit():
            if int(rank_s) in by_rank or int(rank_s) in empty:
                raise TokenizerFileError(f"{where}: line {n}: duplicate rank {int(rank_s)}")
            empty.append(int(rank_s))
            continue
        try:
            token = base64.b64decode(tok_b64, validate=True)
        except (binascii.Error, ValueError):
            raise TokenizerFileError(
                f"{where}: line {n}: {tok_b64[:60]!r} is not valid base64"
            ) from None
        if not token:
            raise TokenizerFileError(f"{where}: line {n}: empty token")
        if not rank_s.isdigit():
            raise TokenizerFileError(
                f"{where}: line {n}: rank {rank_s[:20]!r} is not a non-negative integer"
            )
        # a rank of more than 10 digits is over 2**32 (and int() refuses over 4300 digits)
        rank = int(rank_s) if len(rank_s.lstrip(b"0")) <= 10 else 2**32
        if rank >= 2**32:
            raise TokenizerFileError(
                f"{where}: line {n}: rank {rank_s[:20].decode('ascii')}"
                f"{'...' if len(rank_s) > 20 else ''} is too large (ranks are below 2**32)"
            )
        if token in ranks:
            raise TokenizerFileError(
                f"{where}: line {n}: the token {token!r} appears twice (first with rank {ranks[token]})"
            )
        if rank in by_rank:
            raise TokenizerFileError(
                f"{where}: line {n}: duplicate rank {rank} (also on line {by_rank[rank]})"
            )
        ranks[token] = rank
        by_rank[rank] = n
    if not ranks:
        raise TokenizerFileError(
            f"{where}: no tokens: the file is empty or not a .tiktoken rank file"
        )
    return ranks


def load_tiktoken_ranks(path: PathLike) -> Dict[bytes, int]:
    """Read a ``.tiktoken`` rank file (``bytes -> rank``) without tiktoken, checking every line:
    malformed lines, invalid base64, duplicate tokens and duplicate ranks raise
    :class:`toksmith.TokenizerFileError` with the line number."""
    p = fspath(path)
    return _parse_ranks(read_tokenizer_file(p, "the .tiktoken file"), p)


def dump_tiktoken_ranks(ranks: Mapping[bytes, int], path: PathLike) -> None:
    """Write a rank table as a ``.tiktoken`` file (sorted by rank)."""
    if not isinstance(ranks, Mapping):
        raise TypeError(
            f"ranks must be a dict of bytes -> rank (tok.mergeable_ranks()), not {type(ranks).__name__}"
        )
    for t, r in ranks.items():
        if not isinstance(t, (bytes, bytearray)):
            raise TypeError(f"ranks keys must be bytes, not {type(t).__name__} ({t!r})")
        if isinstance(r, bool) or not isinstance(r, int) or r < 0:
            raise ValueError(f"ranks[{bytes(t)!r}] = {r!r} is not a rank (an int >= 0)")
    lines = [
        f"{base64.b64encode(t).decode('ascii')} {r}\n"
        for t, r in sorted(ranks.items(), key=lambda kv: kv[1])
    ]
    write_text_atomic(path, "".join(lines))


def _check_gaps(ranks: Mapping[bytes, int], specials: Mapping[str, int], where: str) -> None:
    top = max(ranks.values())
    if len(ranks) == top + 1:
        return
    # counted, not listed: a rank near 2**32 must not make a list of four billion ids (ids that are
    # not ints are left to the Tokenizer's checks)
    used = set(ranks.values()) | {
        i
        for i in specials.values()
        if isinstance(i, int) and not isinstance(i, bool) and 0 <= i <= top
    }
    n_missing = top + 1 - len(used)
    if n_missing:
        missing = []  # type: ignore[var-annotated]
        i = 0
        while len(missing) < min(5, n_missing):
            if i not in used:
                missing.append(i)
            i += 1
        shown = ", ".join(map(str, missing[:5])) + (", ..." if n_missing > 5 else "")
        raise TokenizerFileError(
            f"{where}: the ranks have gaps: {n_missing} id(s) below the largest rank {top} are missing "
            f"({shown}); a rank file is truncated or corrupted, or the missing ids belong to special tokens "
            "that must be passed with special_tokens= (or --special-tokens)"
        )


# ------------------------------------------------------------------------------ loading


def _is_encoding(obj: Any) -> bool:
    return all(hasattr(obj, a) for a in ("_mergeable_ranks", "_special_tokens", "_pat_str"))


def read_tiktoken(
    obj_or_path: Union[PathLike, Any],
    *,
    pattern: Optional[str] = None,
    special_tokens: Optional[Mapping[str, int]] = None,
    preset: Optional[str] = None,
    check_hash: bool = True,
    name: Optional[str] = None,
) -> TokenizerSpec:
    """The spec of a ``tiktoken.Encoding`` or a ``.tiktoken`` rank file (what
    :func:`toksmith.from_tiktoken` builds a :class:`toksmith.Tokenizer` from).

    For an Encoding, its pattern and special tokens are used unless given. For a rank file:

    * ``preset="cl100k"`` (or any name of :data:`OPENAI_ENCODINGS` or
      :data:`MODEL_RANK_FILES`) uses that encoding's pattern and special tokens and checks the
      file's sha256 (``check_hash=False`` skips it);
    * otherwise a file whose sha256 is one of those gets that encoding's pattern and special
      tokens; any other file needs ``pattern=`` (:class:`toksmith.TokenizerFileError` without
      it) and has no special tokens unless ``special_tokens=`` names them;
    * ``pattern`` and ``special_tokens``, when given, replace those in every case.

    Ids below the largest rank that are neither a rank nor a special token (gaps) raise
    :class:`toksmith.TokenizerFileError`, as do malformed lines.
    """
    if _is_encoding(obj_or_path):
        if preset is not None:
            raise TypeError("preset= applies to rank files, not to a tiktoken.Encoding")
        enc = obj_or_path
        return TokenizerSpec(
            dict(enc._mergeable_ranks),  # type: ignore[union-attr]
            pattern=_from_file(pattern if pattern is not None else enc._pat_str),  # type: ignore[union-attr]
            special_tokens=dict(enc._special_tokens) if special_tokens is None else special_tokens,  # type: ignore[union-attr]
            name=name or enc.name,  # type: ignore[union-attr]
            metadata={"source": source_meta("tiktoken", encoding=enc.name)},  # type: ignore[union-attr]
        )
    if not isinstance(obj_or_path, (str, os.PathLike)):
        raise TypeError(
            f"expected a tiktoken.Encoding or the path of a .tiktoken file, not {type(obj_or_path).__name__}"
        )
    p = fspath(obj_or_path)
    raw = read_tokenizer_file(p, "the .tiktoken file")
    return _spec_from_rank_file(
        raw,
        p,
        pattern=pattern,
        special_tokens=special_tokens,
        preset=preset,
        check_hash=check_hash,
        name=name,
    )


def _spec_from_rank_file(
    raw: bytes,
    p: str,
    *,
    pattern: Optional[str] = None,
    special_tokens: Optional[Mapping[str, int]] = None,
    preset: Optional[str] = None,
    check_hash: bool = True,
    name: Optional[str] = None,
) -> TokenizerSpec:
    """:func:`read_tiktoken` on the bytes of a rank file (``p`` names it)."""
    digest = hashlib.sha256(raw).hexdigest()
    enc_info: Optional[OpenAIEncoding] = None
    if preset is not None:
        enc_info = rank_file_preset(preset)
        if check_hash and digest != enc_info.sha256:
            owner = "OpenAI's" if enc_info.name in OPENAI_ENCODINGS else f"{enc_info.name}'s"
            raise TokenizerFileError(
                f"{p}: sha256 {digest} does not match {owner} {enc_info.file} ({enc_info.sha256}): not the "
                f"{enc_info.name} rank file, or corrupted (pass check_hash=False to load it anyway)"
            )
    elif digest in _BY_SHA:
        name_ = _BY_SHA[digest]
        enc_info = OPENAI_ENCODINGS.get(name_) or MODEL_RANK_FILES[name_]
    if pattern is None and enc_info is None:
        # a guessed pattern encodes silently wrong (Llama 4's file with cl100k's pattern differs
        # on 40% of documents): the caller must say
        known = ", ".join(sorted({*OPENAI_ENCODINGS, *MODEL_RANK_FILES}))
        raise TokenizerFileError(
            f"{p}: a .tiktoken rank file stores no split pattern and no special tokens, and this one "
            f"(sha256 {digest[:16]}...) is none of the files toksmith recognises ({known}): pass the "
            "pattern its model's code uses, pattern= (a name: 'cl100k', 'o200k', 'gpt2', or the regex) "
            "and special_tokens= ({'<|endoftext|>': id, ...}); on the command line --pattern and "
            "--special-tokens; or preset=NAME with check_hash=False if it is a known model's file"
        )
    empty: List[int] = []
    ranks = _parse_ranks(raw, p, empty)
    if pattern is None:
        assert enc_info is not None
        pattern = enc_info.pattern
    if special_tokens is None:
        special_tokens = dict(enc_info.special_tokens) if enc_info is not None else {}
    _check_gaps(ranks, {**special_tokens, **{f"\0empty{i}": i for i in empty}}, p)
    if name is None:
        name = enc_info.name if enc_info is not None else os.path.splitext(os.path.basename(p))[0]
    metadata: Dict[str, Any] = {
        "source": source_meta(
            "tiktoken", p, sha256=digest, encoding=enc_info.name if enc_info else None
        )
    }
    if empty:
        # tiktoken keeps them as b"" tokens that no text encodes to; toksmith leaves the ids unused
        metadata["empty_tokens"] = sorted(empty)
    normalizer = None
    if enc_info is not None and enc_info.name in _MODEL_NORMALIZERS:
        form = _MODEL_NORMALIZERS[enc_info.name]
        metadata["normalizer"] = {
            "form": form,
            "applied": True,
            "note": "the model's own tokenize() normalizes the whole text first, then finds "
            "special tokens; toksmith does the same natively",
        }
        normalizer = whole_text_normalizer(form)
    return TokenizerSpec(
        ranks,
        pattern=_from_file(pattern),
        special_tokens=special_tokens,
        name=name,
        metadata=metadata,
        normalizer=normalizer,
    )


# ------------------------------------------------------------------------------ js-tiktoken


def is_js_tiktoken(data: Any) -> bool:
    """Whether a parsed JSON document is a js-tiktoken rank file
    (``{"pat_str", "special_tokens", "bpe_ranks"}``)."""
    return (
        isinstance(data, dict)
        and isinstance(data.get("bpe_ranks"), str)
        and isinstance(data.get("pat_str"), str)
    )


#: JavaScript's ``\s`` (ECMAScript WhiteSpace + LineTerminator: U+FEFF, not U+0085, unlike the
#: Unicode White_Space that toksmith's ``\s`` is), as the characters of a class
_JS_SPACE = "\\t\\n\\x0b\\f\\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
#: the escapes whose meaning differs between JavaScript (ASCII \d \w; \s above) and toksmith
_JS_CLASSES = {"s": _JS_SPACE, "d": "0-9", "w": "A-Za-z0-9_"}


def _from_js_regex(pattern: str, where: str) -> str:
    """A js-tiktoken ``pat_str`` (a JavaScript regex, run with the ``u`` flag) as a toksmith
    pattern with the same matches: ``\\s``, ``\\d``, ``\\w`` and their negations are spelled out
    (JavaScript's differ from Unicode's); ``\\b`` and a negated class escape inside ``[...]``
    raise ConversionError."""
    out = []
    in_class = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            e = pattern[i + 1]
            if e.lower() in _JS_CLASSES:
                chars = _JS_CLASSES[e.lower()]
                if e.islower():
                    out.append(chars if in_class else f"[{chars}]")
                elif in_class:
                    raise ConversionError(
                        f"{where}: pat_str has \\{e} inside a character class, whose JavaScript "
                        "meaning toksmith cannot spell exactly"
                    )
                else:
                    out.append(f"[^{chars}]")
            elif e in "bB":
                raise ConversionError(
                    f"{where}: pat_str has \\{e} (JavaScript's word boundary is ASCII-only), which "
                    "toksmith cannot spell exactly"
                )
            else:
                out.append(pattern[i : i + 2])
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
            out.append(c)
            if pattern.startswith("[^]", i) or pattern.startswith("[]", i):
                raise ConversionError(f"{where}: pat_str has an empty JavaScript class ([] or [^])")
            i += 1
            continue
        if c == "]" and in_class:
            in_class = False
        out.append(c)
        i += 1
    return "".join(out)


def read_js_tiktoken(
    data: Mapping[str, Any], where: str, *, name: Optional[str] = None
) -> TokenizerSpec:
    """The spec of a js-tiktoken rank file (``js-tiktoken/ranks/*.json``, Anthropic's legacy
    ``claude.json``...), already parsed: ``pat_str`` (a regex), ``special_tokens``
    (``str -> id``) and ``bpe_ranks``, one string of lines ``NAME OFFSET TOK TOK ...`` whose
    base64 tokens have the ranks ``OFFSET``, ``OFFSET + 1``... (the first field is not read).
    ``explicit_n_vocab`` is ignored, as js-tiktoken ignores it (real files disagree with their
    ranks)."""
    if not is_js_tiktoken(data):
        raise TokenizerFileError(
            f"{where}: not a js-tiktoken file (a JSON object with pat_str and bpe_ranks strings)"
        )
    specials = data.get("special_tokens") or {}
    if not isinstance(specials, dict) or not all(
        isinstance(t, str) and t and isinstance(i, int) and not isinstance(i, bool) and i >= 0
        for t, i in specials.items()
    ):
        raise TokenizerFileError(f"{where}: special_tokens must be an object of token -> id")
    ranks: Dict[bytes, int] = {}
    by_rank: Dict[int, bytes] = {}
    for n, line in enumerate(data["bpe_ranks"].split("\n"), 1):
        if not line:
            continue
        fields = line.split(" ")
        if len(fields) < 2 or not fields[1].isdigit():
            raise TokenizerFileError(
                f"{where}: bpe_ranks line {n}: expected 'NAME OFFSET TOKEN...', found {line[:60]!r}"
            )
        offset = int(fields[1])
        for k, b64 in enumerate(fields[2:]):
            try:
                token = base64.b64decode(b64, validate=True)
            except (binascii.Error, ValueError):
                raise TokenizerFileError(
                    f"{where}: bpe_ranks line {n}: {b64[:60]!r} is not valid base64"
                ) from None
            rank = offset + k
            if not token:
                raise TokenizerFileError(f"{where}: bpe_ranks line {n}: empty token")
            if token in ranks:
                raise TokenizerFileError(
                    f"{where}: bpe_ranks line {n}: the token {token!r} appears twice"
                )
            if rank in by_rank:
                raise TokenizerFileError(f"{where}: bpe_ranks line {n}: duplicate rank {rank}")
            ranks[token] = rank
            by_rank[rank] = token
    if not ranks:
        raise TokenizerFileError(f"{where}: bpe_ranks holds no tokens")
    _check_gaps(ranks, specials, where)
    return TokenizerSpec(
        ranks,
        pattern=_from_file(_from_js_regex(data["pat_str"], where)),
        special_tokens=dict(specials),
        name=name or os.path.splitext(os.path.basename(where))[0],
        metadata={"source": source_meta("js-tiktoken", where)},
        where=where,
        build_error="file",
    )


#: where tiktoken downloads OpenAI's rank files from; its download cache names each file by the
#: sha1 of this address
_TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{}"
#: GPT-2's original pair, which tiktoken's ``gpt2`` encoding reads
_GPT2_URLS = (
    "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/encoder.json",
    "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe",
)


def tiktoken_cache_dir() -> Optional[str]:
    """The folder where tiktoken keeps the files it downloaded, as tiktoken itself picks it:
    ``$TIKTOKEN_CACHE_DIR``, else ``$DATA_GYM_CACHE_DIR``, else ``<temp dir>/data-gym-cache``;
    None when caching is turned off (the variable set to an empty string)."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return os.environ[var] or None
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _cached(folder: str, url: str) -> Optional[str]:
    path = os.path.join(folder, hashlib.sha1(url.encode()).hexdigest())
    return path if os.path.isfile(path) else None


def find_cached_encoding(
    enc: OpenAIEncoding, cache_dir: Optional[PathLike] = None
) -> Tuple[str, ...]:
    """Where tiktoken's cache holds the files of ``enc``: ``("tiktoken", rank file)``, or for
    ``gpt2`` possibly ``("gpt2", encoder.json, vocab.bpe)`` (GPT-2's original pair, which
    tiktoken reads for it). Looked up in ``cache_dir``, else in :func:`tiktoken_cache_dir`;
    FileNotFoundError saying how to get the file when it is not there (toksmith never
    downloads)."""
    folder = fspath(cache_dir) if cache_dir is not None else tiktoken_cache_dir()
    # gpt2 and r50k_base have the same ranks; tiktoken reads GPT-2's original pair for gpt2
    url = _TIKTOKEN_URL.format("r50k_base.tiktoken" if enc.name == "gpt2" else enc.file)
    if folder:
        path = _cached(folder, url)
        if path is not None:
            return ("tiktoken", path)
        if enc.name == "gpt2":
            pair = [_cached(folder, u) for u in _GPT2_URLS]
            if pair[0] is not None and pair[1] is not None:
                return ("gpt2", pair[0], pair[1])
    where = (
        f"in {folder!r}"
        if folder
        else "(tiktoken's cache is turned off: TIKTOKEN_CACHE_DIR is empty)"
    )
    raise FileNotFoundError(
        f"the {enc.name} rank file is not {where}: toksmith never downloads. Run "
        f"tiktoken.get_encoding({enc.name!r}) once where there is a network (it caches the file there), or "
        f"download {url} and load it with toksmith.from_tiktoken(path, preset={enc.name!r})"
    )


def _names(encoding: str, *names: str) -> Dict[str, str]:
    return dict.fromkeys(names, encoding)


#: OpenAI model names and the encodings tiktoken maps them to (``encoding_name_for_model``)
_MODEL_ENCODINGS: Dict[str, str] = {
    **_names("o200k_base", "o1", "o3", "o4-mini", "gpt-5", "gpt-4.1", "gpt-4o"),
    **_names(
        "cl100k_base",
        "gpt-4",
        "gpt-3.5-turbo",
        "gpt-3.5",
        "gpt-35-turbo",
        "davinci-002",
        "babbage-002",
        "text-embedding-ada-002",
        "text-embedding-3-small",
        "text-embedding-3-large",
    ),
    **_names(
        "p50k_base",
        "text-davinci-003",
        "text-davinci-002",
        "code-davinci-002",
        "code-davinci-001",
        "code-cushman-002",
        "code-cushman-001",
        "davinci-codex",
        "cushman-codex",
    ),
    **_names("p50k_edit", "text-davinci-edit-001", "code-davinci-edit-001"),
    **_names(
        "r50k_base",
        "text-davinci-001",
        "text-curie-001",
        "text-babbage-001",
        "text-ada-001",
        "davinci",
        "curie",
        "babbage",
        "ada",
        "code-search-babbage-code-001",
        "code-search-ada-code-001",
        *(
            f"text-{kind}-{size}{doc}-001"
            for kind, doc in (("similarity", ""), ("search", "-doc"))
            for size in ("davinci", "curie", "babbage", "ada")
        ),
    ),
    **_names("gpt2", "gpt2", "gpt-2"),
}
#: then by prefix, the first that matches (dated and fine-tuned variants: "gpt-4o-2024-08-06",
#: "ft:gpt-3.5-turbo:org::id"); a prefix comes after the longer ones it starts
_MODEL_PREFIXES = (
    ("o1-", "o200k_base"),
    ("o3-", "o200k_base"),
    ("o4-mini-", "o200k_base"),
    ("gpt-5", "o200k_base"),
    ("gpt-4.5-", "o200k_base"),
    ("gpt-4.1-", "o200k_base"),
    ("chatgpt-4o-", "o200k_base"),
    ("gpt-4o-", "o200k_base"),
    ("gpt-4-", "cl100k_base"),
    ("gpt-3.5-turbo-", "cl100k_base"),
    ("gpt-35-turbo-", "cl100k_base"),
    ("gpt-oss-", "o200k_harmony"),
    ("ft:gpt-4o", "o200k_base"),
    ("ft:gpt-4", "cl100k_base"),
    ("ft:gpt-3.5-turbo", "cl100k_base"),
    ("ft:davinci-002", "cl100k_base"),
    ("ft:babbage-002", "cl100k_base"),
)


def encoding_name_for_model(model: str) -> str:
    """The name of the encoding an OpenAI model uses, as tiktoken maps it (``"gpt-4o"`` ->
    ``"o200k_base"``); an unknown model raises :class:`toksmith.errors.UnknownModelError`
    (a ``ValueError`` and a ``KeyError``).

    >>> encoding_name_for_model("gpt-4o-mini-2024-07-18")
    'o200k_base'
    """
    if not isinstance(model, str):
        raise TypeError(f"model must be a str, not {type(model).__name__}")
    if model in _MODEL_ENCODINGS:
        return _MODEL_ENCODINGS[model]
    for prefix, name in _MODEL_PREFIXES:
        if model.startswith(prefix):
            return name
    raise UnknownModelError(
        f"no encoding is known for the model {model!r}: name the encoding instead, e.g. "
        f"toksmith.get_encoding('o200k_base') (known encodings: {', '.join(sorted(OPENAI_ENCODINGS))})"
    )


# ------------------------------------------------------------------------------ saving


def to_tiktoken(tok, name: Optional[str] = None):
    """A ``tiktoken.Encoding`` with the same ranks, pattern and special tokens.

    Pinned tokens have no tiktoken equivalent (tiktoken only produces special tokens when the
    call allows them) and raise :class:`ConversionError`.
    """
    check_tokenizer(tok, "to_tiktoken")
    check_no_normalizer(tok, "to_tiktoken")
    if name is not None and not isinstance(name, str):
        raise TypeError(
            f"name must be a str (or None for the tokenizer's name), not {type(name).__name__}"
        )
    tiktoken = require("tiktoken", "tiktoken")
    if tok.pinned_tokens:
        raise ConversionError(
            f"tiktoken has no pinned tokens (tokens always produced where their text occurs); this tokenizer "
            f"has {len(tok.pinned_tokens)} ({sorted(tok.pinned_tokens)[:3]}...). Export it to Hugging Face "
            "(where they are non-special added tokens) or keep the toksmith JSON file"
        )
    if can_match_empty(tok.pattern):
        raise ConversionError(
            f"the split pattern {tok.pattern!r} can match the empty string: toksmith skips empty "
            "matches, but tiktoken's encoder panics on them (e.g. on text where only the empty match "
            "applies); use a pattern whose every alternative matches at least one character"
        )
    names = sorted(tok.special_tokens)  # a token's extensions sort right after it
    prefix = next(((a, b) for a, b in zip(names, names[1:]) if b.startswith(a)), None)
    if prefix:
        raise ConversionError(
            f"the special token {prefix[0]!r} is the start of the special token {prefix[1]!r}: where the longer one "
            "occurs toksmith matches it, but tiktoken matches whichever comes first in its (unordered) table, so "
            "the ids could differ; rename one of them so that neither starts the other"
        )
    try:
        return tiktoken.Encoding(
            name or tok.name,
            pat_str=tok.pattern,
            mergeable_ranks=tok.mergeable_ranks(),
            special_tokens=tok.special_tokens,
        )
    except ValueError as e:
        raise ConversionError(f"tiktoken rejects this tokenizer: {e}") from None


def save_tiktoken(tok, path: PathLike) -> None:
    """Write the rank table as a ``.tiktoken`` file (needs no tiktoken).

    The file stores only the mergeable tokens: the pattern (``tok.pattern``) and the special
    tokens (``tok.special_tokens``) must be given again to :func:`from_tiktoken`, and pinned
    tokens are not representable.
    """
    check_tokenizer(tok, "save_tiktoken")
    check_no_normalizer(tok, "save_tiktoken")
    if tok.pinned_tokens:
        raise ConversionError(
            f"a .tiktoken file cannot hold pinned tokens; this tokenizer has {len(tok.pinned_tokens)} "
            f"({sorted(tok.pinned_tokens)[:3]}): save it as toksmith JSON (tok.save) or for Hugging Face "
            "(tok.save_huggingface), which keep them, or train it without pinned_tokens"
        )
    dump_tiktoken_ranks(tok.mergeable_ranks(), path)


__all__ = [
    "OPENAI_ENCODINGS",
    "encoding_name_for_model",
    "tiktoken_cache_dir",
    "DEFAULT_PATTERN",
    "OpenAIEncoding",
    "openai_encoding",
    "rank_file_preset",
    "MODEL_RANK_FILES",
    "identify_openai_file",
    "load_tiktoken_ranks",
    "dump_tiktoken_ranks",
    "read_tiktoken",
    "read_js_tiktoken",
    "is_js_tiktoken",
    "find_cached_encoding",
    "to_tiktoken",
    "save_tiktoken",
]
