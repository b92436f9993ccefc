"""Word-level BPE with end-of-word markers and token embeddings (seed 004, "Tokeniser").

A different model from toksmith's byte-level BPE, for users who want the classic word-level
tokenizer of the original BPE paper:

* **words**: :data:`WORD_PATTERN` cuts text into words (whitespace is a delimiter, never a
  token): letter runs split at camelCase steps (``camelCase`` -> ``camel``, ``Case``;
  ``XMLHttpRequest`` -> ``XML``, ``Http``, ``Request``), digit runs, and each punctuation or
  symbol character on its own. Words are lower-cased.
* **training** (:func:`train`): words are counted over a folder of text files in parallel
  (:func:`count_words`); one-character words (punctuation, symbols, ``a``, ``i``) are atomic
  tokens; every other word is spelled as its characters plus ``</w>`` and merges are learned
  over that alphabet with the incremental merge loop of the byte-level trainer (pair counts
  and a pair -> words index, updated only where a merge happened).
* **encoding** (:meth:`WordTokenizer.encode`): greedy longest match, native: from the start of
  each word (with its ``</w>``), take the longest vocabulary token that matches, then go on
  after it. A character no token starts with becomes ``<unk>``.
* **outputs** (:func:`run`): the initial word counts, the final token statistics and one
  embedding per token (:mod:`toksmith.presets.embeddings`: CPU, numpy, CUDA via cupy or torch)
  as CSV files, and the tokenizer as JSON.

Decoding joins the tokens of a word without spaces (a word ends at a token ending in ``</w>``)
and the words with single spaces, so ``decode(encode(text))`` is the text's words, lower-cased,
space-separated (:meth:`WordTokenizer.normalize`): lossy by design, like BERT. An unknown
character decodes as ``<unk>`` in its place inside its word.

>>> tok = train_from_counts({"low": 5, "lower": 2, "newest": 6, "widest": 3, ",": 4}, num_merges=10)
>>> tok.merges[:3]
[('e', 's'), ('t', '</w>'), ('es', 't</w>')]
>>> tok.tokenize("The lowest, newest")  # no token starts with "h"
['t', '<unk>', 'e', '</w>', 'low', 'est</w>', ',</w>', 'newest</w>']
>>> tok.decode(tok.encode("Newest lower"))
'newest lower'
>>> tok.decode(tok.encode("The lowest"))
't<unk>e lowest'
"""

from __future__ import annotations

import copy
import csv
import json
import operator
import os
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from ... import _core
from ..._args import index_arg, thread_count
from ..._fileio import atomic_files, atomic_write, write_text_atomic
from ..._paths import fspath
from ...corpus import iter_line_blocks
from ...errors import PatternError
from ...pretokenize import _check_matches_text

# the largest word count, and the largest total the counts may add up to (the trainer's pair
# counts and the token statistics are 64-bit integers): 2**63-1
from ...train import MAX_COUNT, _MergeProgress, _progress_bar
from .._base import PresetTokenizer
from .._checks import check_flag
from .._sources import (
    check_extensions,
    check_source,
    is_path_source,
    iter_source_texts,
    source_files,
)
from . import embeddings as _emb

PathLike = Union[str, "os.PathLike[str]"]

#: words: an acronym before a capitalised word, a (capitalised) lower-case run, an upper-case
#: run, a digit run, or one character that is not a letter, mark, digit or whitespace
WORD_PATTERN = (
    r"[\p{Lu}\p{Lt}]+(?=[\p{Lu}\p{Lt}][\p{Ll}\p{Lm}\p{Lo}\p{M}])"
    r"|[\p{Lu}\p{Lt}]?[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"|[\p{Lu}\p{Lt}\p{M}]+"
    r"|\p{N}+"
    r"|[^\s\p{L}\p{M}\p{N}]"
)
END_OF_WORD = "</w>"
UNK = "<unk>"
FORMAT = "toksmith-wordbpe"
DEFAULT_NUM_MERGES = 8000
#: files of a folder that :func:`count_words` reads (explicit file paths are always read)
TEXT_EXTENSIONS: Tuple[str, ...] = (".txt",)
_BLOCK = 1 << 20  # characters per text handed to the counter
#: the largest ``num_merges`` accepted (2**31-1: far more merges than any corpus gives)
MAX_MERGES = 2**31 - 1
#: the sentence :func:`run` tokenizes to show the trained tokenizer at work (the seed's
#: inference demo)
DEFAULT_SAMPLE = "The quick brown fox jumps over the lazy dog, and the newest tokenizer splits it."


def _token_bytes(token: str) -> bytes:
    if token.endswith(END_OF_WORD):
        return token[: -len(END_OF_WORD)].encode("utf-8") + b"\xff"
    return token.encode("utf-8")


class WordTokenizer(PresetTokenizer):
    """A trained word-level tokenizer: ``tokens[id]`` is the text of each token (``</w>`` at
    the end of word-final ones); special tokens (``<unk>`` first) take the first ids.

    Build one with :func:`train`, :func:`train_from_counts` or :meth:`load`.
    """

    preset = "wordbpe"
    EXPORT_REFUSAL = (
        "it is a word-level table read by greedy longest match (lowercased words, ``</w>`` on "
        "word-final tokens), not a byte-level BPE that tiktoken, Hugging Face's byte-level BPE "
        "or GPT-2 files can run with the same ids; keep its JSON file (save/load)"
    )

    def __init__(
        self,
        tokens: Sequence[str],
        *,
        special_tokens: Sequence[str] = (UNK,),
        merges: Sequence[Tuple[str, str]] = (),
        pattern: str = WORD_PATTERN,
        lowercase: bool = True,
        metadata: Optional[Dict[str, Any]] = None,
    ) -> None:
        if isinstance(tokens, (str, bytes)):
            raise TypeError(f"tokens must be a list of str, not a single {type(tokens).__name__}")
        tokens = list(tokens)
        specials = _check_specials(special_tokens, require_unk=True)
        index: Dict[str, int] = {}
        for i, t in enumerate(tokens):
            if not isinstance(t, str):
                raise TypeError(
                    f"token {i} must be a non-empty str, not {type(t).__name__} ({t!r})"
                )
            if not t:
                raise ValueError(f"token {i} is empty: every token must be a non-empty str")
            if not t.isascii():
                _check_utf8(t, f"token {i}")
            if t in index:
                raise ValueError(f"token {t!r} is in the vocabulary twice (ids {index[t]} and {i})")
            index[t] = i
        if tokens[: len(specials)] != specials:
            raise ValueError("the special tokens must be the first tokens, in order")
        pairs: List[Tuple[str, str]] = []
        if isinstance(merges, (str, bytes)):
            raise TypeError("merges must be a list of (str, str) pairs, not a single str")
        for m in merges:
            if isinstance(m, (str, bytes)) or not isinstance(m, Iterable):
                raise TypeError(f"each merge must be a pair of str, not {type(m).__name__} ({m!r})")
            m = tuple(m)  # type: ignore[assignment]
            if len(m) != 2:
                raise ValueError(f"each merge must be a pair of str (left, right), not {m!r}")
            if not all(isinstance(x, str) for x in m):
                raise TypeError(f"each merge must be a pair of str, not {m!r}")
            pairs.append(m)  # type: ignore[arg-type]
        if not isinstance(pattern, str):
            raise TypeError(
                f"pattern must be a str (a regular expression), not {type(pattern).__name__}"
            )
        _check_pattern(pattern)
        _check_bool("lowercase", lowercase)
        if metadata is not None and not isinstance(metadata, Mapping):
            raise TypeError(f"metadata must be a dict or None, not {type(metadata).__name__}")
        self.tokens: List[str] = tokens
        self.special_tokens: Dict[str, int] = {s: index[s] for s in specials}
        self.merges: List[Tuple[str, str]] = pairs
        self.pattern = pattern
        self.lowercase = lowercase
        self.metadata: Dict[str, Any] = dict(metadata or {})
        self._index = index
        self.unk_id = index[UNK]
        learned = [
            (_token_bytes(t), i) for i, t in enumerate(tokens) if t not in self.special_tokens
        ]
        self._enc = _core.WordEncoder(pattern, self.lowercase, learned, self.unk_id, len(tokens))
        # decode tables: the text of each token (without its </w>) and what it does to words:
        # _INSIDE (more of the word may follow; <unk> stands for one character of a word), _ENDS
        # (a </w> token ends its word) or _ALONE (a special token other than <unk> is a word of
        # its own)
        self._body = [t[: -len(END_OF_WORD)] if t.endswith(END_OF_WORD) else t for t in tokens]
        self._role = [_ENDS if t.endswith(END_OF_WORD) else _INSIDE for t in tokens]
        for s, i in self.special_tokens.items():
            self._body[i] = s
            self._role[i] = _INSIDE if s == UNK else _ALONE
        # the fast decode: with no whitespace in any token, each token's text with a space where
        # a word ends (around a word of its own) can be joined, and split at whitespace again
        self._spaced: Optional[List[str]] = None
        if all(t.split() == [t] for t in tokens):
            self._spaced = [
                b + " " if r is _ENDS else b if r is _INSIDE else " " + b + " "
                for b, r in zip(self._body, self._role)
            ]

    # ---- vocabulary ----
    @property
    def n_vocab(self) -> int:
        """The number of tokens (ids are 0 .. n_vocab - 1)."""
        return len(self.tokens)

    vocab_size = n_vocab

    def get_vocab(self) -> Dict[str, int]:
        """{token text: id}."""
        return dict(self._index)

    def token_to_id(self, token: str) -> Optional[int]:
        """The id of a token's text (``"lo"``, ``"low</w>"``, ``"<unk>"``), None if it is no token."""
        if not isinstance(token, str):
            raise TypeError(f"token must be a str (a token's text), not {type(token).__name__}")
        return self._index.get(token)

    def id_to_token(self, id: int) -> str:
        return self.tokens[self._check_id(id)]

    def vocab_by_length(self) -> List[str]:
        """The learned tokens longest first (the order the seed's greedy matcher scans; ties
        by id). ``</w>`` counts as one character."""
        learned = [(t, i) for i, t in enumerate(self.tokens) if t not in self.special_tokens]

        def length(t: str) -> int:
            return len(t) - len(END_OF_WORD) + 1 if t.endswith(END_OF_WORD) else len(t)

        return [t for t, i in sorted(learned, key=lambda p: (-length(p[0]), p[1]))]

    def _check_id(self, id: Any) -> int:
        """``id`` as a Python int: an int or a numpy integer (ids often come back as numpy
        arrays, and the byte-level tokenizer takes them too) in range; bools are refused."""
        id = index_arg(id, "token ids must be int, not {type}")
        if not 0 <= id < len(self.tokens):
            raise ValueError(
                f"token id {id} is out of range: valid ids are 0..{len(self.tokens) - 1}"
            )
        return id

    # ---- encoding ----
    def words(self, text: str) -> List[str]:
        """The words of ``text`` as the tokenizer sees them (split, lower-cased)."""
        _check_text(text)
        try:
            return self._enc.words(text)
        except UnicodeEncodeError as e:
            raise _surrogate_error("text", e) from None

    def normalize(self, text: str) -> str:
        """What ``decode(encode(text))`` gives when every character is known: the words joined
        by single spaces."""
        return " ".join(self.words(text))

    def encode(self, text: str) -> List[int]:
        """The ids of ``text``: its words, each by greedy longest match.

        >>> tok = train_from_counts({"hello": 3, "help": 2, "!": 1}, num_merges=6)
        >>> tok.tokenize("Hello, helper!")  # "," and "r" were never seen
        ['hello</w>', '<unk>', '</w>', 'hel', 'p', 'e', '<unk>', '</w>', '!</w>']
        """
        _check_text(text)
        try:
            return self._enc.encode(text)
        except UnicodeEncodeError as e:
            raise _surrogate_error("text", e) from None

    def encode_batch(self, texts: Sequence[str], threads: Optional[int] = None) -> List[List[int]]:
        """:meth:`encode` of each text, in parallel (all cores unless ``threads``)."""
        if isinstance(texts, str):
            raise TypeError("texts must be a list of str, not a single str; wrap it in a list")
        texts = list(texts)
        for t in texts:
            _check_text(t)
        try:
            return self._enc.encode_batch(texts, _threads(threads))
        except UnicodeEncodeError as e:
            raise _surrogate_error("a text of the batch", e) from None

    def encode_word(self, word: str) -> List[int]:
        """The ids of one word, as is (not split; lower-cased if the tokenizer lower-cases)."""
        _check_text(word)
        if not word:
            return []
        try:
            return self._enc.encode_word(word)
        except UnicodeEncodeError as e:
            raise _surrogate_error("word", e) from None

    def tokenize(self, text: str) -> List[str]:
        """The token texts of ``text`` (the seed's ``splitSentence``)."""
        return [self.tokens[i] for i in self.encode(text)]

    def decode(self, ids: Iterable[int]) -> str:
        """The words of ``ids`` joined by single spaces: the tokens of a word are joined as they
        are, and a token ending in ``</w>`` ends its word. ``<unk>`` (an unknown character)
        stays inside its word; another special token is a word of its own. A wrong-typed id
        (bool included) raises TypeError, an id out of range ValueError.

        >>> tok = train_from_counts({"the": 5, "at": 2}, 6)
        >>> tok.tokenize("t\u0127e at")
        ['t', '<unk>', 'e</w>', 'at</w>']
        >>> tok.decode(tok.encode("t\u0127e at"))
        't<unk>e at'
        """
        if isinstance(
            ids, (str, bytes, bytearray)
        ):  # "" decoded to "" (and "ab" raised deep inside)
            raise TypeError(f"ids must be an iterable of int token ids, not {type(ids).__name__}")
        ids = list(ids)
        if not set(map(type, ids)) <= {int} or (
            ids and (min(ids) < 0 or max(ids) >= len(self.tokens))
        ):
            ids = [self._check_id(i) for i in ids]  # numpy integers become ints here
        if self._spaced is not None:
            spaced = self._spaced
            return " ".join("".join([spaced[i] for i in ids]).split())
        body, role = self._body, self._role
        words: List[str] = []
        word: List[str] = []
        for i in ids:
            r = role[i]
            if r is _INSIDE:
                word.append(body[i])
            elif r is _ENDS:
                word.append(body[i])
                words.append("".join(word))
                word = []
            else:
                if word:
                    words.append("".join(word))
                    word = []
                words.append(body[i])
        if word:
            words.append("".join(word))
        return " ".join(w for w in words if w)

    # ---- statistics and embeddings ----
    def token_stats(
        self, word_counts: Mapping[str, int], threads: Optional[int] = None
    ) -> List[Tuple[str, int]]:
        """How often each token occurs when every counted word is encoded (the seed's
        ``calculateTokenStatsFromCounts``): [(token, count)], most frequent first (ties by id),
        tokens that never occur left out."""
        words = _count_items(word_counts)
        n_threads = _threads(threads)
        # a word of k characters (lower-cased if the tokenizer lower-cases) gives at most k + 1
        # tokens: the statistics are at most the sum of count * (k + 1)
        lower = self.lowercase
        bound = sum(
            n * ((len(w.lower()) if lower and not w.isascii() else len(w)) + 1) for w, n in words
        )
        if bound > MAX_COUNT:
            raise ValueError(
                f"the word counts are too large: the token statistics could reach {bound}, more "
                f"than {MAX_COUNT} (2**63-1); pass smaller counts (scale them down)"
            )
        counts = self._enc.token_counts(words, len(self.tokens), n_threads)
        order = sorted((i for i, c in enumerate(counts) if c), key=lambda i: (-counts[i], i))
        return [(self.tokens[i], counts[i]) for i in order]

    def embeddings(
        self,
        dim: int = 128,
        *,
        seed: int = 0,
        backend: str = "cpu",
        device: Any = None,
        threads: Optional[int] = None,
    ) -> Any:
        """One unit vector of ``dim`` float32 per token, row ``id`` for token ``id``
        (:mod:`toksmith.presets.embeddings` gives the formula). ``backend``: ``"cpu"`` (native,
        all cores) or ``"numpy"`` give a numpy array; ``"cupy"`` a cupy array on the GPU;
        ``"torch"`` a tensor on ``device`` (default CUDA when available)."""
        _emb.check_args(dim, seed, backend, len(self.tokens))
        _threads(threads)
        if backend == "cpu":
            np = _emb._need("numpy", "toksmith[numpy]")
            # over a bytearray, not the bytes: a writable array, as the other backends give
            return np.frombuffer(
                bytearray(self._embedding_bytes(dim, seed, threads)), dtype="<f4"
            ).reshape(len(self.tokens), dim)
        if backend == "numpy":
            return _emb.embed_numpy(self.tokens, dim, seed)
        if backend == "cupy":
            return _emb.embed_numpy(self.tokens, dim, seed, xp=_emb.gpu_backend("cupy"))
        return _emb.embed_torch(self.tokens, dim, seed, device=device)

    def _embedding_bytes(self, dim: int, seed: int, threads: Optional[int]) -> bytes:
        _emb.check_args(dim, seed, "cpu", len(self.tokens))
        return _core.word_embeddings(
            [t.encode("utf-8") for t in self.tokens], dim, seed, _threads(threads)
        )

    # ---- files ----
    def to_dict(self) -> Dict[str, Any]:
        return {
            "format": FORMAT,
            "version": 1,
            "pattern": self.pattern,
            "lowercase": self.lowercase,
            "special_tokens": list(self.special_tokens),
            # copies: changing the description must not change the tokenizer (its native
            # encoder was built from these lists)
            "tokens": list(self.tokens),
            "merges": [list(m) for m in self.merges],
            "metadata": copy.deepcopy(self.metadata),
        }

    def save(self, path: PathLike) -> None:
        """Write the tokenizer as JSON (read back by :meth:`load`)."""
        # the whole text first: metadata JSON cannot hold must not leave a truncated file where
        # a good one was
        try:
            data = json.dumps(self.to_dict(), ensure_ascii=False)
        except (TypeError, ValueError) as e:
            raise TypeError(
                f"the tokenizer's metadata must hold only JSON values (str, int, float, bool, None, "
                f"lists, dicts with str keys): {e}"
            ) from None
        write_text_atomic(path, data)  # a failed write leaves the old file

    @classmethod
    def load(cls, path: PathLike) -> "WordTokenizer":
        """Read a file written by :meth:`save` (parsed as JSON, checked; never executed)."""
        with open(
            fspath(path), "r", encoding="utf-8"
        ) as f:  # not an int: that is a file descriptor
            try:
                d = json.load(f)
            except json.JSONDecodeError as e:
                raise ValueError(f"{os.fspath(path)} is not a JSON file: {e}") from None
            except UnicodeDecodeError as e:
                raise ValueError(
                    f"{os.fspath(path)} is not a JSON file: not UTF-8 text ({e.reason} at byte "
                    f"{e.start})"
                ) from None
            except (ValueError, RecursionError) as e:
                # arrays nested thousands deep, numbers of thousands of digits: no file save writes
                raise ValueError(
                    f"{os.fspath(path)} is not a valid {FORMAT} file: {type(e).__name__}: "
                    f"{str(e)[:200]}"
                ) from None
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise ValueError(
                f"{os.fspath(path)} is not a {FORMAT} file (save one with WordTokenizer.save)"
            )
        if "version" not in d:
            raise ValueError(
                f"{os.fspath(path)} lacks the member 'version' (save it again with WordTokenizer.save)"
            )
        version = d["version"]
        if type(version) is not int or version != 1:
            raise ValueError(
                f"{os.fspath(path)} is a {FORMAT} file of version {version!r}: this toksmith reads "
                f"version 1 (save it again with this version's WordTokenizer.save)"
            )
        try:
            return cls.from_dict(d)
        except KeyError as e:
            raise ValueError(f"{os.fspath(path)} lacks the member {e.args[0]!r}") from None
        except (TypeError, ValueError) as e:
            raise ValueError(f"{os.fspath(path)} is not a valid {FORMAT} file: {e}") from None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "WordTokenizer":
        """The tokenizer :meth:`to_dict` describes."""
        if not isinstance(d, Mapping):
            raise TypeError(
                f"from_dict needs the dict WordTokenizer.to_dict() gives, not {type(d).__name__}"
            )
        for key in ("tokens", "special_tokens", "pattern", "lowercase"):
            if key not in d:
                raise ValueError(
                    f"the WordTokenizer description lacks the member {key!r} (pass the dict "
                    f"WordTokenizer.to_dict() gives)"
                )
        merges = d.get("merges", [])
        if isinstance(merges, (str, bytes)) or not isinstance(merges, Iterable):
            raise TypeError(
                f"'merges' must be a list of [str, str] pairs, not {type(merges).__name__}"
            )
        return cls(
            d["tokens"],
            special_tokens=d["special_tokens"],
            merges=[tuple(m) for m in d.get("merges", [])],
            pattern=d["pattern"],
            lowercase=d["lowercase"],
            metadata=d.get("metadata"),
        )

    def __reduce__(self) -> Tuple[Any, ...]:
        # pickled as its description (the native encoder is rebuilt), for multiprocessing
        return (WordTokenizer.from_dict, (self.to_dict(),))

    def __repr__(self) -> str:
        return f"WordTokenizer(n_vocab={len(self.tokens)}, merges={len(self.merges)})"


# what a token does to the words of decode's text (see WordTokenizer.__init__)
_INSIDE, _ENDS, _ALONE = "inside", "ends", "alone"


def _check_text(text: Any, name: str = "text") -> None:
    if not isinstance(text, str):
        raise TypeError(f"{name} must be str, not {type(text).__name__}")


def _surrogate_error(what: str, e: UnicodeEncodeError) -> ValueError:
    """The ValueError for a str UTF-8 cannot encode (the core takes UTF-8): a lone surrogate,
    as ``errors="surrogateescape"`` leaves for undecodable bytes."""
    bad = e.object[e.start] if isinstance(e.object, str) and e.start < len(e.object) else "\ud800"
    return ValueError(
        f"{what} holds a lone surrogate (U+{ord(bad):04X}) that UTF-8 cannot encode; pass text "
        f"decoded with errors='strict' or 'replace' (not 'surrogateescape')"
    )


def _check_utf8(text: str, what: str) -> None:
    """``text`` (a str) must be encodable as UTF-8: ValueError for a lone surrogate."""
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise _surrogate_error(what, e) from None


def _check_pattern(pattern: str) -> None:
    """A word pattern (a str) must be UTF-8 and match some text: the empty pattern, or one made
    only of anchors and look-arounds (``\\b``), finds no word in any text, so every text
    encoded to [] and a corpus counted to nothing, without a word of warning."""
    _check_utf8(pattern, "pattern")
    if not pattern:
        raise PatternError(
            "the word pattern is empty: it finds no word in any text, so all text would be "
            "dropped; pass a regex that matches words (the default is WORD_PATTERN)"
        )
    regex_text, _ = _core.compile_pattern(
        pattern
    )  # PatternError for a pattern that does not compile
    _check_matches_text(regex_text, "the word pattern")


#: the wording of the word-level preset's type errors (no numpy integers: counts and sizes are
#: Python ints here)
_INT_TYPE_ERROR = "{name} must be an int, not {type} ({value!r})"


def _check_int(name: str, value: Any, lo: int, hi: int, what: str) -> int:
    """``value`` must be an int (not a bool: TypeError) in lo..hi (ValueError naming ``what``)."""
    value = index_arg(value, _INT_TYPE_ERROR, name=name, numpy=False)
    if not lo <= value <= hi:
        raise ValueError(f"{name} must be {what}, not {value}")
    return value


def _check_bool(name: str, value: Any) -> None:
    check_flag(value, name, numpy=False)


def _check_num_merges(num_merges: Any) -> int:
    return _check_int(
        "num_merges",
        num_merges,
        0,
        MAX_MERGES,
        f"in 0..{MAX_MERGES} (2**31-1; a corpus gives at most one merge per character of its "
        f"distinct words)",
    )


def _check_min_frequency(min_frequency: Any) -> int:
    return _check_int("min_frequency", min_frequency, 0, MAX_COUNT, f"in 0..{MAX_COUNT} (2**63-1)")


def _check_specials(special_tokens: Any, require_unk: bool) -> List[str]:
    """``special_tokens`` as a list of non-empty str (a single str is refused: it would be split
    into characters). With ``require_unk``, ``<unk>`` must be among them."""
    if isinstance(special_tokens, (str, bytes)):
        raise TypeError(
            f"special_tokens must be a list of str, not a single {type(special_tokens).__name__}: "
            f"pass a list of str, e.g. [{UNK!r}, {special_tokens!r}]"
        )
    if not isinstance(special_tokens, Iterable):
        raise TypeError(
            f"special_tokens must be a list of str, not {type(special_tokens).__name__}"
        )
    specials = list(special_tokens)
    for t in specials:
        if not isinstance(t, str):
            raise TypeError(
                f"special tokens must be str, not {type(t).__name__} ({t!r}): pass a list of str"
            )
        if not t:
            raise ValueError(
                "a special token is empty: every special token must be a non-empty str"
            )
    if len(set(specials)) != len(specials):
        raise ValueError(f"special_tokens has a token twice: {specials!r}")
    if require_unk and UNK not in specials:
        raise ValueError(f"special_tokens must include {UNK!r} (the id of unknown characters)")
    return specials


def _threads(threads: Optional[int]) -> int:
    """A thread count for the native calls (0: all cores)."""
    return thread_count(
        threads,
        type_error=_INT_TYPE_ERROR,
        range_error="{name} must be in 1..{max}, or None for all cores, not {value}",
        numpy=False,
    )


def _count_items(counts: Any) -> List[Tuple[str, int]]:
    """The (word, count) items of ``counts`` (a mapping or pairs), each count an int in
    0..2**63-1 and their sum at most 2**63-1; words of count 0 and the empty word left out."""
    if isinstance(counts, (str, bytes)):
        raise TypeError(f"word counts must be a dict {{word: count}}, not {type(counts).__name__}")
    items = counts.items() if isinstance(counts, Mapping) else counts
    out = []
    total = 0
    for w, n in items:
        if not isinstance(w, str):
            raise TypeError(f"words must be str, not {type(w).__name__}")
        if not w.isascii():
            _check_utf8(w, f"the word {w[:50]!r}")
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError(f"the count of {w!r} must be an int, not {type(n).__name__} ({n!r})")
        if n < 0:
            raise ValueError(f"the count of {w!r} must be a non-negative int, not {n!r}")
        if n > MAX_COUNT:
            raise ValueError(
                f"the count of {w!r} is too large: {n} is more than {MAX_COUNT} (2**63-1); "
                f"pass smaller counts (scale them down)"
            )
        total += n
        if w and n:
            out.append((w, n))
    if total > MAX_COUNT:
        raise ValueError(
            f"the word counts are too large: they add up to {total}, more than {MAX_COUNT} "
            f"(2**63-1); pass smaller counts (scale them down)"
        )
    return out


# ---- counting --------------------------------------------------------------------------------


def _file_texts(path: Path, errors: str) -> Iterator[str]:
    """A file as texts of about :data:`_BLOCK` characters, cut after a newline (words never
    span a line break, so the counts are those of the whole file). A byte order mark at the
    start of the file (as Windows tools write it) is not text: it is left out."""
    for i, text in enumerate(iter_line_blocks(path, errors, _BLOCK)):
        yield text[1:] if i == 0 and text.startswith("\ufeff") else text


def count_words(
    paths_or_texts: Any,
    *,
    lowercase: bool = True,
    pattern: str = WORD_PATTERN,
    extensions: Optional[Sequence[str]] = TEXT_EXTENSIONS,
    threads: Optional[int] = None,
    progress: bool = False,
    errors: str = "strict",
) -> Dict[str, int]:
    """Count the words of a corpus (the seed's ``buildCorpusWordCounts``): {word: count}.

    ``paths_or_texts``: a file, a folder (its files ending in one of ``extensions``, recursed;
    a single str is one extension; ``extensions=None`` for all), a glob, a list of those, or an
    iterable of str texts. Files are read in blocks of whole lines while the native counter
    splits and counts the previous blocks on every core (each thread its own table, the tables
    added up pairwise).

    >>> sorted(count_words(["camelCase camel", "CASE"]).items())
    [('camel', 2), ('case', 2)]
    """
    check_source(paths_or_texts, errors)
    n_threads = _threads(threads)
    _check_bool("lowercase", lowercase)
    _check_text(pattern, "pattern")
    _check_pattern(pattern)
    exts = check_extensions(extensions)
    counter = _core.ChunkCounter(pattern)
    batch: List[str] = []
    per_call = 4 * max(1, n_threads or (os.cpu_count() or 1))

    def add(text: str) -> None:
        batch.append(text)
        if len(batch) >= per_call:
            flush()

    def flush() -> None:
        if batch:
            try:
                counter.add_texts(batch, n_threads)
            except UnicodeEncodeError as e:
                raise _surrogate_error("a text", e) from None
            batch.clear()

    if is_path_source(paths_or_texts):
        files = source_files(paths_or_texts, exts)
        bar = _progress_bar(progress, total=len(files), unit="file", desc="counting words")
        for f in files:
            for text in _file_texts(f, errors):
                add(text)
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()
    else:
        for text in iter_source_texts(paths_or_texts):
            add(text)
    flush()
    return dict(counter.word_counts(bool(lowercase)))


# ---- training --------------------------------------------------------------------------------


def train_from_counts(
    word_counts: Mapping[str, int],
    num_merges: int = DEFAULT_NUM_MERGES,
    *,
    min_frequency: int = 0,
    special_tokens: Sequence[str] = (UNK,),
    pattern: str = WORD_PATTERN,
    lowercase: bool = True,
    threads: Optional[int] = None,
    progress: bool = False,
) -> WordTokenizer:
    """Learn ``num_merges`` merges from counted words (the seed's ``groupCommonTokens``).

    The vocabulary, in id order: ``special_tokens`` (``<unk>`` always among them), the atomic
    one-character words (``x</w>``, by code point), the characters of the other words (by code
    point), ``</w>`` (also when every word is atomic), then the learned tokens in the order they
    were made (a merge whose text is already a token, such as an atomic ``a</w>``, adds no id).
    Equally frequent pairs are merged in the order of their symbols' ids. ``min_frequency``
    stops early when the best pair is rarer.

    ``num_merges`` is an int in 0..2**31-1 (training stops earlier when no pair is left);
    ``word_counts`` are ints in 0..2**63-1 (words of count 0 are left out) whose sum, and the
    number of character pairs they stand for, must stay below 2**63; ``special_tokens`` is a
    list of str (``<unk>`` is added first when missing).
    """
    _check_training_args(num_merges, min_frequency, special_tokens, pattern, lowercase, threads)
    items = _count_items(word_counts)
    if lowercase:
        items = _core.fold_word_counts([(w.encode("utf-8"), n) for w, n in items], True)
    return _learn(
        items,
        num_merges,
        min_frequency=min_frequency,
        special_tokens=special_tokens,
        pattern=pattern,
        lowercase=lowercase,
        threads=threads,
        progress=progress,
    )


def _check_training_args(
    num_merges: Any,
    min_frequency: Any,
    special_tokens: Any,
    pattern: Any,
    lowercase: Any,
    threads: Any,
) -> List[str]:
    """Check the training options (before anything is counted or read); returns the special
    tokens, ``<unk>`` first when it was missing."""
    _check_num_merges(num_merges)
    _check_min_frequency(min_frequency)
    specials = _check_specials(special_tokens, require_unk=False)
    if UNK not in specials:
        specials.insert(0, UNK)
    _check_text(pattern, "pattern")
    _check_pattern(pattern)
    _check_bool("lowercase", lowercase)
    _threads(threads)
    return specials


def _learn(
    items: List[Tuple[str, int]],
    num_merges: int,
    *,
    min_frequency: int,
    special_tokens: Sequence[str],
    pattern: str,
    lowercase: bool,
    threads: Optional[int],
    progress: bool,
) -> WordTokenizer:
    """:func:`train_from_counts` on words already checked and folded to the tokenizer's case."""
    specials = _check_training_args(
        num_merges, min_frequency, special_tokens, pattern, lowercase, threads
    )
    atomic = sorted({w for w, _ in items if len(w) == 1})
    candidates = [(w, n) for w, n in items if len(w) > 1]
    if not items:
        raise _core.EmptyCorpusError(
            "the training corpus has no words: pass at least one non-empty text"
        )
    # a token's text ends in </w> when it ends its word: a word holding that text itself would
    # make tokens whose text says "end of word" where the word goes on
    marked = next((w for w, _ in candidates if END_OF_WORD in w), None)
    if marked is not None:
        raise ValueError(
            f"the word {marked!r} holds the end-of-word marker {END_OF_WORD!r}, which no token text "
            f"can tell from the end of a word: use a pattern that cuts '<', '/' and '>' off "
            f"(as WORD_PATTERN does), or leave such words out"
        )
    alphabet, merges = "", []  # type: ignore[var-annotated]
    if candidates:
        # each merge joins two symbols of at least one word: a word of k characters (k + 1
        # symbols with its </w>) takes part in at most k merges, and a pair occurs at most
        # count * k times in it; the trainer counts pairs in 64 bits
        possible = 0
        pairs_total = 0
        for w, n in candidates:
            possible += len(w)
            pairs_total += n * len(w)
        if pairs_total > MAX_COUNT:
            raise ValueError(
                f"the word counts are too large: their words hold {pairs_total} character pairs "
                f"(count x length), more than {MAX_COUNT} (2**63-1); pass smaller counts "
                f"(scale them down)"
            )
        num_merges_run = min(num_merges, possible)
        bar = _progress_bar(progress, total=num_merges_run, unit="merge", desc="merging")
        if bar is None:
            alphabet, merges = _core.train_words(
                candidates, num_merges_run, min_frequency, None, _threads(threads)
            )
        else:
            with _MergeProgress(bar) as on_progress:
                alphabet, merges = _core.train_words(
                    candidates, num_merges_run, min_frequency, on_progress, _threads(threads)
                )
                on_progress.finish(len(merges))  # the last report, also when training stopped early
    symbols = list(alphabet) + [END_OF_WORD]
    pairs: List[Tuple[str, str]] = []
    for a, b, made in merges:
        pairs.append((symbols[a], symbols[b]))
        if made == len(symbols):
            symbols.append(symbols[a] + symbols[b])
    tokens: List[str] = list(specials)
    seen = set(tokens)
    reserved = set(specials)
    # </w> even when every word is atomic: encoding appends it to every word, and without it
    # each word not made of one atomic token would end in an <unk> that stands for no character
    # (and decode would run the words together)
    for t in [w + END_OF_WORD for w in atomic] + (symbols if candidates else [END_OF_WORD]):
        if t in reserved:
            # a special token is never matched in text: the learned token would be lost
            raise ValueError(
                f"the special token {t!r} is also a token the corpus gives: pass special tokens "
                f"that no word can make, such as '<pad>' or '<s>'"
            )
        if t not in seen:
            seen.add(t)
            tokens.append(t)
    meta = {
        "preset": "wordbpe",
        "num_merges": num_merges,
        "merges_learned": len(merges),
        "words": len(items),
        "atomic_tokens": len(atomic),
    }
    return WordTokenizer(
        tokens,
        special_tokens=specials,
        merges=pairs,
        pattern=pattern,
        lowercase=lowercase,
        metadata=meta,
    )


def train(
    paths_or_texts: Any,
    num_merges: int = DEFAULT_NUM_MERGES,
    *,
    min_frequency: int = 0,
    special_tokens: Sequence[str] = (UNK,),
    lowercase: bool = True,
    pattern: str = WORD_PATTERN,
    extensions: Optional[Sequence[str]] = TEXT_EXTENSIONS,
    threads: Optional[int] = None,
    progress: bool = False,
    errors: str = "strict",
) -> WordTokenizer:
    """Count the words of a corpus (:func:`count_words`) and learn ``num_merges`` merges from
    them (:func:`train_from_counts`). The options are checked before the corpus is read."""
    _check_training_args(num_merges, min_frequency, special_tokens, pattern, lowercase, threads)
    check_source(paths_or_texts, errors)
    check_extensions(extensions)
    counts = count_words(
        paths_or_texts,
        lowercase=lowercase,
        pattern=pattern,
        extensions=extensions,
        threads=threads,
        progress=progress,
        errors=errors,
    )
    # the counts are already in the tokenizer's case: no second fold
    return _learn(
        list(counts.items()),
        num_merges,
        min_frequency=min_frequency,
        special_tokens=special_tokens,
        pattern=pattern,
        lowercase=lowercase,
        threads=threads,
        progress=progress,
    )


# ---- CSV outputs -----------------------------------------------------------------------------


def write_counts_csv(
    path: PathLike, rows: Iterable[Tuple[str, int]], header: Tuple[str, str]
) -> None:
    """``rows`` as a two-column CSV file with ``header``."""
    if (
        isinstance(header, (str, bytes))
        or not isinstance(header, Sequence)
        or len(header) != 2
        or not all(isinstance(h, str) for h in header)
    ):
        raise TypeError(f"header must be a pair of str such as ('token', 'count'), not {header!r}")
    for h in header:
        _check_utf8(h, "header")
    if isinstance(rows, (str, bytes, bytearray)) or not isinstance(rows, Iterable):
        raise TypeError(f"rows must be an iterable of (str, int) pairs, not {type(rows).__name__}")
    checked = []
    for k, row in enumerate(rows):
        if (
            isinstance(row, (str, bytes))
            or not isinstance(row, Sequence)
            or len(row) != 2
            or not isinstance(row[0], str)
            or isinstance(row[1], bool)
            or not isinstance(row[1], int)
        ):
            raise TypeError(f"rows must be (str, int) pairs; row {k} is {row!r}")
        _check_utf8(row[0], f"row {k}")
        checked.append(row)
    with _csv_file(path) as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(checked)


def _csv_file(path: PathLike) -> Any:
    """The file a CSV is written to, moved onto ``path`` only when complete (a failed write
    keeps the old file). ``path`` is not an int: that would be a file descriptor."""
    p = fspath(path)
    return atomic_write(os.fsdecode(p), "w", encoding="utf-8", newline="")


def write_embeddings_csv(path: PathLike, tokens: Sequence[str], rows: Any, dim: int) -> None:
    """One line per token: its text, then its ``dim`` numbers (float32 written with 9
    significant digits, enough to read back the same float32). ``rows``: a 2-D array, or the
    native backend's bytes."""
    if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Sequence):
        raise TypeError(f"tokens must be a list of str, not {type(tokens).__name__}")
    for k, t in enumerate(tokens):
        if not isinstance(t, str):
            raise TypeError(
                f"tokens must be a list of str; tokens[{k}] is {type(t).__name__} ({t!r})"
            )
        _check_utf8(t, f"tokens[{k}]")
    if isinstance(dim, bool) or not hasattr(type(dim), "__index__"):
        raise TypeError(f"dim must be an int, not {type(dim).__name__}")
    dim = operator.index(dim)
    if dim < 1:
        raise ValueError(f"dim must be at least 1, not {dim}")
    if isinstance(rows, (bytes, bytearray)):
        import array

        flat = array.array("f")
        flat.frombytes(rows)
        if flat.itemsize != 4 or len(flat) != len(tokens) * dim:
            raise ValueError("embedding bytes do not hold len(tokens) * dim float32 numbers")
        get = lambda k: flat[k * dim : (k + 1) * dim]  # noqa: E731
    else:
        shape = tuple(getattr(rows, "shape", ()))
        if shape != (len(tokens), dim):
            raise ValueError(
                f"the embeddings must be a 2-D array of shape (len(tokens), dim) = "
                f"({len(tokens)}, {dim}), not of shape {shape}"
            )
        get = lambda k: rows[k].tolist()  # noqa: E731
    with _csv_file(path) as f:
        w = csv.writer(f)
        w.writerow(["token"] + [f"e{i}" for i in range(dim)])
        for k, t in enumerate(tokens):
            w.writerow([t] + [format(x, ".9g") for x in get(k)])


def _check_prefix(prefix: Any) -> None:
    if not isinstance(prefix, str):
        raise TypeError(
            f"prefix must be a str (the start of the output file names), not {type(prefix).__name__}"
        )
    if "/" in prefix or os.sep in prefix or (os.altsep and os.altsep in prefix) or "\0" in prefix:
        raise ValueError(
            f"prefix must be a file name prefix without path separators or NUL, not {prefix!r}; "
            f"put the folder in out_dir"
        )
    try:
        os.fsencode(prefix)  # checked before training, not when the first file is written after it
    except UnicodeEncodeError as e:
        raise ValueError(
            f"prefix {prefix!r} holds a character (U+{ord(prefix[e.start]):04X}) that no file name "
            f"can hold; pass valid text"
        ) from None


def run(
    paths_or_texts: Any,
    out_dir: PathLike,
    *,
    num_merges: int = DEFAULT_NUM_MERGES,
    dim: int = 128,
    backend: str = "cpu",
    device: Any = None,
    seed: int = 0,
    prefix: str = "corpus",
    min_frequency: int = 0,
    lowercase: bool = True,
    extensions: Optional[Sequence[str]] = TEXT_EXTENSIONS,
    threads: Optional[int] = None,
    progress: bool = False,
    errors: str = "strict",
    sample: Optional[str] = DEFAULT_SAMPLE,
) -> Dict[str, Any]:
    """The seed's whole pipeline: count words, learn the vocabulary, compute token statistics
    and embeddings, write into ``out_dir``:

    * ``{prefix}_unique_initial_tokens.csv``: ``word,count``, most frequent first;
    * ``{prefix}_final_token_stats.csv``: ``token,count`` (the corpus encoded), most frequent
      first;
    * ``{prefix}_final_embeddings.csv``: ``token,e0,...`` one row per token, in id order;
    * ``{prefix}_tokenizer.json``: the tokenizer (:meth:`WordTokenizer.load`);

    and tokenize ``sample`` with the trained tokenizer (the seed's inference demo; default
    :data:`DEFAULT_SAMPLE`, None to skip it).

    Every argument is checked before anything is read, and every result is computed before
    the first file is written (a bad option, or a ``dim`` too large for the vocabulary, leaves
    no file behind). The four files are written into a staging folder and moved into place
    together: a failed or killed write leaves the earlier set whole.

    Returns {"tokenizer", "word_counts", "token_stats", "files", "sample"}; "sample" is
    {"text", "tokens", "ids"} (None when ``sample`` is None).
    """
    # the arguments, before anything is read or written
    check_source(paths_or_texts, errors)
    _check_training_args(num_merges, min_frequency, (UNK,), WORD_PATTERN, lowercase, threads)
    _emb.check_args(dim, seed, backend, 2)  # at least <unk> and one learned token
    _check_prefix(prefix)
    check_extensions(extensions)
    if sample is not None:
        _check_text(sample, "sample")
        _check_utf8(sample, "sample")
    base = Path(out_dir)  # TypeError unless a path
    fspath(base)  # ValueError for a name no file system can hold, before the corpus is read
    if base.exists() and not base.is_dir():
        raise NotADirectoryError(
            f"out_dir {os.fspath(out_dir)!r} is a file, not a folder: pass a folder "
            f"(created if missing)"
        )
    if backend == "numpy":
        _emb._need("numpy", "toksmith[numpy]")
    elif backend in ("cupy", "torch"):
        _emb.gpu_backend(backend, device)  # installed, and a device to run on

    counts = count_words(
        paths_or_texts,
        lowercase=lowercase,
        extensions=extensions,
        threads=threads,
        progress=progress,
        errors=errors,
    )
    tok = _learn(
        list(counts.items()),
        num_merges,
        min_frequency=min_frequency,
        special_tokens=(UNK,),
        pattern=WORD_PATTERN,
        lowercase=lowercase,
        threads=threads,
        progress=progress,
    )
    _emb.check_args(dim, seed, backend, len(tok.tokens))  # the table's size, now that it is known
    stats = tok.token_stats(counts, threads=threads)
    if backend == "cpu":
        rows: Any = tok._embedding_bytes(dim, seed, threads)
    else:
        rows = tok.embeddings(dim, seed=seed, backend=backend, device=device)
        if backend == "cupy":
            rows = rows.get()
        elif backend == "torch":
            rows = rows.cpu().numpy()
    demo: Optional[Dict[str, Any]] = None
    if sample is not None:
        ids = tok.encode(sample)
        demo = {"text": sample, "tokens": [tok.tokens[i] for i in ids], "ids": ids}

    os.makedirs(base, exist_ok=True)
    files = {
        k: base / f"{prefix}_{k}"
        for k in (
            "unique_initial_tokens.csv",
            "final_token_stats.csv",
            "final_embeddings.csv",
            "tokenizer.json",
        )
    }
    # the four files appear together or not at all (an earlier set stays whole on a failure)
    with atomic_files(os.fspath(base)) as stage:
        write_counts_csv(
            stage.path(files["unique_initial_tokens.csv"].name),
            sorted(counts.items(), key=lambda p: (-p[1], p[0])),
            ("word", "count"),
        )
        write_counts_csv(stage.path(files["final_token_stats.csv"].name), stats, ("token", "count"))
        write_embeddings_csv(stage.path(files["final_embeddings.csv"].name), tok.tokens, rows, dim)
        tok.save(stage.path(files["tokenizer.json"].name))
    return {
        "tokenizer": tok,
        "word_counts": counts,
        "token_stats": stats,
        "files": {k.rsplit(".", 1)[0]: str(v) for k, v in files.items()},
        "sample": demo,
    }


def load(path: PathLike) -> WordTokenizer:
    """:meth:`WordTokenizer.load`."""
    return WordTokenizer.load(path)


__all__ = [
    "WORD_PATTERN",
    "END_OF_WORD",
    "UNK",
    "DEFAULT_SAMPLE",
    "MAX_MERGES",
    "MAX_COUNT",
    "WordTokenizer",
    "count_words",
    "train",
    "train_from_counts",
    "run",
    "load",
    "write_counts_csv",
    "write_embeddings_csv",
]
