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

Decoding joins the words with single spaces, so ``decode(encode(text))`` is the text's words,
lower-cased, space-separated (:meth:`WordTokenizer.normalize`): lossy by design, like BERT.

>>> tok = train_from_counts({"low": 5, "lower": 2, "newest": 6, "widest": 3, ",": 4}, num_merges=10)
>>> tok.merges[:3]
[('e', 's'), ('t', '</w>'), ('es', 't</w>')]
>>> tok.tokenize("The lowest, newest")  # no token starts with "h"
['t', '<unk>', 'e', '</w>', 'low', 'est</w>', ',</w>', 'newest</w>']
>>> tok.decode(tok.encode("Newest lower"))
'newest lower'
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from .. import _core
from ..corpus import iter_line_blocks
from ..train import _progress_bar
from . import embeddings as _emb
from ._sources import check_source, is_path_source, iter_source_texts, source_files

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


def _token_bytes(token: str) -> bytes:
    if token.endswith(END_OF_WORD):
        return token[: -len(END_OF_WORD)].encode("utf-8") + b"\xff"
    return token.encode("utf-8")


class WordTokenizer:
    """A trained word-level tokenizer: ``tokens[id]`` is the text of each token (``</w>`` at
    the end of word-final ones); special tokens (``<unk>`` first) take the first ids.

    Build one with :func:`train`, :func:`train_from_counts` or :meth:`load`.
    """

    def __init__(self, tokens: Sequence[str], *, special_tokens: Sequence[str] = (UNK,),
                 merges: Sequence[Tuple[str, str]] = (), pattern: str = WORD_PATTERN,
                 lowercase: bool = True, metadata: Optional[Dict[str, Any]] = None) -> None:
        tokens = list(tokens)
        specials = list(special_tokens)
        if UNK not in specials:
            raise ValueError(f"special_tokens must include {UNK!r} (the id of unknown characters)")
        if tokens[: len(specials)] != specials:
            raise ValueError("the special tokens must be the first tokens, in order")
        index: Dict[str, int] = {}
        for i, t in enumerate(tokens):
            if not isinstance(t, str) or not t:
                raise ValueError(f"token {i} must be a non-empty str, not {t!r}")
            if t in index:
                raise ValueError(f"token {t!r} is in the vocabulary twice (ids {index[t]} and {i})")
            index[t] = i
        self.tokens: List[str] = tokens
        self.special_tokens: Dict[str, int] = {s: index[s] for s in specials}
        self.merges: List[Tuple[str, str]] = [tuple(m) for m in merges]  # type: ignore[misc]
        self.pattern = pattern
        self.lowercase = bool(lowercase)
        self.metadata: Dict[str, Any] = dict(metadata or {})
        self._index = index
        self.unk_id = index[UNK]
        learned = [(_token_bytes(t), i) for i, t in enumerate(tokens) if t not in self.special_tokens]
        self._enc = _core.WordEncoder(pattern, self.lowercase, learned, self.unk_id)
        # decode table: word-final tokens and specials end a word (a space after them)
        self._text = [t[: -len(END_OF_WORD)] + " " if t.endswith(END_OF_WORD) else t for t in tokens]
        for s, i in self.special_tokens.items():
            self._text[i] = s + " "

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
        return self._index.get(token)

    def id_to_token(self, id: int) -> str:
        self._check_id(id)
        return self.tokens[id]

    def vocab_by_length(self) -> List[str]:
        """The learned tokens longest first (the order the seed's greedy matcher scans; ties
        by id). ``</w>`` counts as one character."""
        learned = [(t, i) for i, t in enumerate(self.tokens) if t not in self.special_tokens]

        def length(t: str) -> int:
            return len(t) - len(END_OF_WORD) + 1 if t.endswith(END_OF_WORD) else len(t)

        return [t for t, i in sorted(learned, key=lambda p: (-length(p[0]), p[1]))]

    def _check_id(self, id: Any) -> None:
        if not isinstance(id, int) or isinstance(id, bool):
            raise TypeError(f"token ids must be int, not {type(id).__name__}")
        if not 0 <= id < len(self.tokens):
            raise ValueError(f"token id {id} is out of range: valid ids are 0..{len(self.tokens) - 1}")

    # ---- encoding ----
    def words(self, text: str) -> List[str]:
        """The words of ``text`` as the tokenizer sees them (split, lower-cased)."""
        _check_text(text)
        return self._enc.words(text)

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
        return self._enc.encode(text)

    def encode_batch(self, texts: Sequence[str], threads: Optional[int] = None) -> List[List[int]]:
        """:meth:`encode` of each text, in parallel (all cores unless ``threads``)."""
        if isinstance(texts, str):
            raise TypeError("texts must be a list of str, not a single str; wrap it in a list")
        texts = list(texts)
        for t in texts:
            _check_text(t)
        return self._enc.encode_batch(texts, _threads(threads))

    def encode_word(self, word: str) -> List[int]:
        """The ids of one word, as is (not split; lower-cased if the tokenizer lower-cases)."""
        _check_text(word)
        if not word:
            return []
        return self._enc.encode_word(word)

    def tokenize(self, text: str) -> List[str]:
        """The token texts of ``text`` (the seed's ``splitSentence``)."""
        return [self.tokens[i] for i in self.encode(text)]

    def decode(self, ids: Iterable[int]) -> str:
        """The words of ``ids`` joined by single spaces (``</w>`` ends a word)."""
        text = self._text
        ids = list(ids)
        try:
            if ids and min(ids) < 0:
                raise IndexError
            parts = [text[i] for i in ids]
        except (IndexError, TypeError):
            for i in ids:
                self._check_id(i)
            raise
        return "".join(parts).rstrip(" ")

    # ---- statistics and embeddings ----
    def token_stats(self, word_counts: Mapping[str, int], threads: Optional[int] = None) -> List[Tuple[str, int]]:
        """How often each token occurs when every counted word is encoded (the seed's
        ``calculateTokenStatsFromCounts``): [(token, count)], most frequent first (ties by id),
        tokens that never occur left out."""
        words = _count_items(word_counts)
        counts = self._enc.token_counts(words, len(self.tokens), _threads(threads))
        order = sorted((i for i, c in enumerate(counts) if c), key=lambda i: (-counts[i], i))
        return [(self.tokens[i], counts[i]) for i in order]

    def embeddings(self, dim: int = 128, *, seed: int = 0, backend: str = "cpu", device: Any = None,
                   threads: Optional[int] = None) -> Any:
        """One unit vector of ``dim`` float32 per token, row ``id`` for token ``id``
        (:mod:`toksmith.presets.embeddings` gives the formula). ``backend``: ``"cpu"`` (native,
        all cores) or ``"numpy"`` give a numpy array; ``"cupy"`` a cupy array on the GPU;
        ``"torch"`` a tensor on ``device`` (default CUDA when available)."""
        _emb.check_args(dim, seed, backend)
        if backend == "cpu":
            np = _emb._need("numpy", "toksmith[numpy]")
            return np.frombuffer(self._embedding_bytes(dim, seed, threads), dtype="<f4").reshape(len(self.tokens), dim)
        if backend == "numpy":
            return _emb.embed_numpy(self.tokens, dim, seed)
        if backend == "cupy":
            return _emb.embed_numpy(self.tokens, dim, seed, xp=_emb._need("cupy", "cupy"))
        return _emb.embed_torch(self.tokens, dim, seed, device=device)

    def _embedding_bytes(self, dim: int, seed: int, threads: Optional[int]) -> bytes:
        return _core.word_embeddings([t.encode("utf-8") for t in self.tokens], dim, seed, _threads(threads))

    # ---- files ----
    def to_dict(self) -> Dict[str, Any]:
        return {
            "format": FORMAT,
            "version": 1,
            "pattern": self.pattern,
            "lowercase": self.lowercase,
            "special_tokens": list(self.special_tokens),
            "tokens": self.tokens,
            "merges": [list(m) for m in self.merges],
            "metadata": self.metadata,
        }

    def save(self, path: PathLike) -> None:
        """Write the tokenizer as JSON (read back by :meth:`load`)."""
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, ensure_ascii=False)

    @classmethod
    def load(cls, path: PathLike) -> "WordTokenizer":
        """Read a file written by :meth:`save` (parsed as JSON, checked; never executed)."""
        with open(path, "r", encoding="utf-8") as f:
            try:
                d = json.load(f)
            except json.JSONDecodeError as e:
                raise ValueError(f"{os.fspath(path)} is not a JSON file: {e}") from None
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise ValueError(f"{os.fspath(path)} is not a {FORMAT} file (save one with WordTokenizer.save)")
        try:
            return cls.from_dict(d)
        except KeyError as e:
            raise ValueError(f"{os.fspath(path)} lacks the member {e.args[0]!r}") from None
        except TypeError as e:
            raise ValueError(f"{os.fspath(path)} is not a valid {FORMAT} file: {e}") from None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "WordTokenizer":
        """The tokenizer :meth:`to_dict` describes."""
        return cls(d["tokens"], special_tokens=d["special_tokens"], merges=[tuple(m) for m in d.get("merges", [])],
                   pattern=d["pattern"], lowercase=d["lowercase"], metadata=d.get("metadata"))

    def __reduce__(self) -> Tuple[Any, ...]:
        # pickled as its description (the native encoder is rebuilt), for multiprocessing
        return (WordTokenizer.from_dict, (self.to_dict(),))

    def __repr__(self) -> str:
        return f"WordTokenizer(n_vocab={len(self.tokens)}, merges={len(self.merges)})"


def _check_text(text: Any) -> None:
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")


def _threads(threads: Optional[int]) -> int:
    if threads is None:
        return 0
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
        raise ValueError(f"threads must be a positive int or None (all cores), not {threads!r}")
    return threads


def _count_items(counts: Any) -> List[Tuple[str, int]]:
    items = counts.items() if isinstance(counts, Mapping) else counts
    out = []
    for w, n in items:
        if not isinstance(w, str):
            raise TypeError(f"words must be str, not {type(w).__name__}")
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ValueError(f"the count of {w!r} must be a non-negative int, not {n!r}")
        if w and n:
            out.append((w, n))
    return out


# ---- counting --------------------------------------------------------------------------------

def _file_texts(path: Path, errors: str) -> Iterator[str]:
    """A file as texts of about :data:`_BLOCK` characters, cut after a newline (words never
    span a line break, so the counts are those of the whole file)."""
    return iter_line_blocks(path, errors, _BLOCK)


def count_words(paths_or_texts: Any, *, lowercase: bool = True, pattern: str = WORD_PATTERN,
                extensions: Optional[Sequence[str]] = TEXT_EXTENSIONS, threads: Optional[int] = None,
                progress: bool = False, errors: str = "strict") -> Dict[str, int]:
    """Count the words of a corpus (the seed's ``buildCorpusWordCounts``): {word: count}.

    ``paths_or_texts``: a file, a folder (its files ending in one of ``extensions``, recursed;
    ``extensions=None`` for all), a glob, a list of those, or an iterable of str texts. Files
    are read in blocks of whole lines while the native counter splits and counts the previous
    blocks on every core (each thread its own table, the tables added up pairwise).

    >>> sorted(count_words(["camelCase camel", "CASE"]).items())
    [('camel', 2), ('case', 2)]
    """
    check_source(paths_or_texts, errors)
    n_threads = _threads(threads)
    counter = _core.ChunkCounter(pattern)
    batch: List[str] = []
    per_call = 4 * max(1, n_threads or (os.cpu_count() or 1))

    def add(text: str) -> None:
        batch.append(text)
        if len(batch) >= per_call:
            flush()

    def flush() -> None:
        if batch:
            counter.add_texts(batch, n_threads)
            batch.clear()

    if is_path_source(paths_or_texts):
        files = source_files(paths_or_texts, extensions)
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

def train_from_counts(word_counts: Mapping[str, int], num_merges: int = DEFAULT_NUM_MERGES, *,
                      min_frequency: int = 0, special_tokens: Sequence[str] = (UNK,),
                      pattern: str = WORD_PATTERN, lowercase: bool = True,
                      threads: Optional[int] = None, progress: bool = False) -> WordTokenizer:
    """Learn ``num_merges`` merges from counted words (the seed's ``groupCommonTokens``).

    The vocabulary, in id order: ``special_tokens`` (``<unk>`` always among them), the atomic
    one-character words (``x</w>``, by code point), the characters of the other words (by code
    point), ``</w>``, then the learned tokens in the order they were made (a merge whose text is
    already a token, such as an atomic ``a</w>``, adds no id). Equally frequent pairs are merged
    in the order of their symbols' ids. ``min_frequency`` stops early when the best pair is
    rarer.
    """
    items = _count_items(word_counts)
    if lowercase:
        items = _core.fold_word_counts([(w.encode("utf-8"), n) for w, n in items], True)
    return _learn(items, num_merges, min_frequency=min_frequency, special_tokens=special_tokens,
                  pattern=pattern, lowercase=lowercase, threads=threads, progress=progress)


def _learn(items: List[Tuple[str, int]], num_merges: int, *, min_frequency: int, special_tokens: Sequence[str],
           pattern: str, lowercase: bool, threads: Optional[int], progress: bool) -> WordTokenizer:
    """:func:`train_from_counts` on words already checked and folded to the tokenizer's case."""
    if not isinstance(num_merges, int) or isinstance(num_merges, bool) or num_merges < 0:
        raise ValueError(f"num_merges must be a non-negative int, not {num_merges!r}")
    if not isinstance(min_frequency, int) or isinstance(min_frequency, bool) or min_frequency < 0:
        raise ValueError(f"min_frequency must be a non-negative int, not {min_frequency!r}")
    specials = list(special_tokens)
    if UNK not in specials:
        specials.insert(0, UNK)
    atomic = sorted({w for w, _ in items if len(w) == 1})
    candidates = [(w, n) for w, n in items if len(w) > 1]
    if not items:
        raise _core.EmptyCorpusError("the training corpus has no words: pass at least one non-empty text")
    alphabet, merges = "", []
    if candidates:
        bar = _progress_bar(progress, total=num_merges, unit="merge", desc="merging")
        done = [0]

        def on_progress(n: int, total: int) -> None:
            if bar is not None:
                bar.update(n - done[0])
                done[0] = n

        alphabet, merges = _core.train_words(candidates, num_merges, min_frequency,
                                             on_progress if bar is not None else None, _threads(threads))
        if bar is not None:
            bar.close()
    symbols = list(alphabet) + [END_OF_WORD]
    pairs: List[Tuple[str, str]] = []
    for a, b, made in merges:
        pairs.append((symbols[a], symbols[b]))
        if made == len(symbols):
            symbols.append(symbols[a] + symbols[b])
    tokens: List[str] = list(specials)
    seen = set(tokens)
    for t in [w + END_OF_WORD for w in atomic] + (symbols if candidates else []):
        if t not in seen:
            seen.add(t)
            tokens.append(t)
    meta = {"preset": "wordbpe", "num_merges": num_merges, "merges_learned": len(merges),
            "words": len(items), "atomic_tokens": len(atomic)}
    return WordTokenizer(tokens, special_tokens=specials, merges=pairs, pattern=pattern,
                         lowercase=lowercase, metadata=meta)


def train(paths_or_texts: Any, num_merges: int = DEFAULT_NUM_MERGES, *, min_frequency: int = 0,
          special_tokens: Sequence[str] = (UNK,), lowercase: bool = True, pattern: str = WORD_PATTERN,
          extensions: Optional[Sequence[str]] = TEXT_EXTENSIONS, threads: Optional[int] = None,
          progress: bool = False, errors: str = "strict") -> WordTokenizer:
    """Count the words of a corpus (:func:`count_words`) and learn ``num_merges`` merges from
    them (:func:`train_from_counts`)."""
    counts = count_words(paths_or_texts, lowercase=lowercase, pattern=pattern, extensions=extensions,
                         threads=threads, progress=progress, errors=errors)
    # the counts are already in the tokenizer's case: no second fold
    return _learn(list(counts.items()), num_merges, min_frequency=min_frequency, special_tokens=special_tokens,
                  pattern=pattern, lowercase=lowercase, threads=threads, progress=progress)


# ---- CSV outputs -----------------------------------------------------------------------------

def write_counts_csv(path: PathLike, rows: Iterable[Tuple[str, int]], header: Tuple[str, str]) -> None:
    """``rows`` as a two-column CSV file with ``header``."""
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def write_embeddings_csv(path: PathLike, tokens: Sequence[str], rows: Any, dim: int) -> None:
    """One line per token: its text, then its ``dim`` numbers (float32 written with 9
    significant digits, enough to read back the same float32). ``rows``: a 2-D array, or the
    native backend's bytes."""
    if isinstance(rows, (bytes, bytearray)):
        import array

        flat = array.array("f")
        flat.frombytes(rows)
        if flat.itemsize != 4 or len(flat) != len(tokens) * dim:
            raise ValueError("embedding bytes do not hold len(tokens) * dim float32 numbers")
        get = lambda k: flat[k * dim:(k + 1) * dim]  # noqa: E731
    else:
        get = lambda k: rows[k].tolist()  # noqa: E731
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["token"] + [f"e{i}" for i in range(dim)])
        for k, t in enumerate(tokens):
            w.writerow([t] + [format(x, ".9g") for x in get(k)])


def run(paths_or_texts: Any, out_dir: PathLike, *, num_merges: int = DEFAULT_NUM_MERGES, dim: int = 128,
        backend: str = "cpu", device: Any = None, seed: int = 0, prefix: str = "corpus",
        min_frequency: int = 0, lowercase: bool = True, extensions: Optional[Sequence[str]] = TEXT_EXTENSIONS,
        threads: Optional[int] = None, progress: bool = False, errors: str = "strict") -> Dict[str, Any]:
    """The seed's whole pipeline: count words, learn the vocabulary, compute token statistics
    and embeddings, and write into ``out_dir``:

    * ``{prefix}_unique_initial_tokens.csv``: ``word,count``, most frequent first;
    * ``{prefix}_final_token_stats.csv``: ``token,count`` (the corpus encoded), most frequent
      first;
    * ``{prefix}_final_embeddings.csv``: ``token,e0,...`` one row per token, in id order;
    * ``{prefix}_tokenizer.json``: the tokenizer (:meth:`WordTokenizer.load`).

    Returns {"tokenizer", "word_counts", "token_stats", "files"}.
    """
    _emb.check_args(dim, seed, backend)
    os.makedirs(out_dir, exist_ok=True)
    base = Path(out_dir)
    files = {k: base / f"{prefix}_{k}" for k in
             ("unique_initial_tokens.csv", "final_token_stats.csv", "final_embeddings.csv", "tokenizer.json")}
    counts = count_words(paths_or_texts, lowercase=lowercase, extensions=extensions, threads=threads,
                         progress=progress, errors=errors)
    write_counts_csv(files["unique_initial_tokens.csv"], sorted(counts.items(), key=lambda p: (-p[1], p[0])),
                     ("word", "count"))
    tok = _learn(list(counts.items()), num_merges, min_frequency=min_frequency, special_tokens=(UNK,),
                 pattern=WORD_PATTERN, lowercase=lowercase, threads=threads, progress=progress)
    stats = tok.token_stats(counts, threads=threads)
    write_counts_csv(files["final_token_stats.csv"], stats, ("token", "count"))
    if backend == "cpu":
        rows: Any = tok._embedding_bytes(dim, seed, threads)
    else:
        rows = tok.embeddings(dim, seed=seed, backend=backend, device=device)
        if backend == "cupy":
            rows = rows.get()
        elif backend == "torch":
            rows = rows.cpu().numpy()
    write_embeddings_csv(files["final_embeddings.csv"], tok.tokens, rows, dim)
    tok.save(files["tokenizer.json"])
    return {"tokenizer": tok, "word_counts": counts, "token_stats": stats,
            "files": {k.rsplit(".", 1)[0]: str(v) for k, v in files.items()}}


def load(path: PathLike) -> WordTokenizer:
    """:meth:`WordTokenizer.load`."""
    return WordTokenizer.load(path)


__all__ = ["WORD_PATTERN", "END_OF_WORD", "UNK", "WordTokenizer", "count_words", "train", "train_from_counts",
           "run", "load", "write_counts_csv", "write_embeddings_csv"]
