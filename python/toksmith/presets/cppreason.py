"""CppReason: the C++ hybrid tokenizer of seed 001, a fixed vocabulary of C++ primitives plus
learned byte-level BPE, with whitespace as a delimiter.

* **Fixed ids 0-1599** (:data:`LAYOUT`): 20 control tokens (``<PAD>`` 0, ``<UNK>`` 1, ``<BOS>``
  2, ``<EOS>`` 3, FIM, code, thought, diff...), C/C++ keywords from 20, multi-character
  operators from 120 (``::`` is 120, ``->`` 121), preprocessor directives from 180, single
  punctuation from 220, STL and common library names from 320, the numbers ``0``-``999`` at
  520-1519 (``42`` is 562), diff markers from 1520, ``\\n`` 1536 and ``\\n\\n`` 1537, the
  character ``\u2581`` 1552; every other id up to 1599 is a reserved ``<RESERVED_n>``. A fixed token is always one id, and only
  as a whole word: ``int`` is fixed, the ``int`` in ``print`` is not.
* **Learned ids 1600-32767**: bytes, then BPE merges trained (with toksmith's trainer) on the
  words that are not fixed, each spelled with a leading ``\u2581`` (SentencePiece's word mark)
  so that a word's first token shows where it starts, and each merged whole
  (:data:`INNER_PATTERN`: a merge may cross ``_``, case changes and digits). The character
  ``\u2581`` in the text itself is the fixed token 1552 (cutting a word around it), so it
  decodes as itself.
* **Words** (:data:`PATTERN`, on a hand-written scanner in the core, fuzzed against the regex): diff headers (``+++``, ``---``
  at the start of a line, with the path prefix ``a/`` or ``b/`` after them, and ``@@``),
  preprocessor directives (``#include``, ``#  define``), hex literals, string and
  character literals, the operators longest first, identifiers, numbers (a digit with the
  letters, digits and ``_`` after it, so that a suffix or exponent stays on its number:
  ``42u``, ``1e5``, ``10ULL``; only a whole ``0``-``999`` is a fixed number), newlines (up to
  two, with the indentation after them), a ``+``/``-`` that starts a line, runs of ASCII
  punctuation (``();``, ``){``: a learned word, unless the run is a fixed token such as ``(``;
  a run stops where an operator starts, so ``)->`` is ``)`` and ``->``) and any other
  character. (``train(punctuation_runs=False)`` and files trained before runs existed, which
  lack :data:`WORDS_KEY` in their metadata, use :data:`LEGACY_PATTERN`: every punctuation
  character a word of its own, as the seed's checklist shows them.) Then, as the seed's
  ``WhitespaceSplit``, a literal is cut at its whitespace (``"hello %d\\n"`` is the words
  ``"hello`` and ``%d\\n"``): whitespace other than line breaks is never a token, not even in
  strings. A ``+`` or ``-`` at the very start of a line is the diff marker (1520, 1521),
  elsewhere the punctuation token.
* **Decoding** puts the words back with the seed's rule: one space between two words that
  both touch a letter (``\\p{L}``), digit (``\\p{N}``) or underscore, none around
  punctuation and operators, newlines as they are (indentation is not restored; the seed runs
  clang-format on output). One exception keeps the meaning of the code: where two operators
  written together would read as another word, a space goes between them (``a / *p`` decodes
  as ``a/ *p``, not as a comment opener ``a/*p``; ``a - -b`` as ``a- -b``).

>>> tok = train(["int main() { return 0; }\\nstd::vector<int> values;"] * 20, vocab_size=1860)
>>> tok.encode("std::vector<int>")
[320, 120, 335, 226, 38, 227]
>>> tok.decode(tok.encode("int  x =  42;   // answer"))
'int x=42;//answer'
"""

from __future__ import annotations

import functools
import glob
import math
import os
import warnings
import zlib
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from .. import _core, formats
from .._args import index_arg, thread_count
from ..corpus import iter_line_blocks, surrogates_checked
from ..errors import VocabError
from ..tokenizer import Tokenizer, _fix_surrogates
from ..train import MAX_VOCAB_SIZE, train_from_counts
from ._base import WrapperTokenizer
from ._checks import INT_TYPE_ERROR
from ._sources import check_source, is_path_source, iter_source_texts, source_files

PathLike = Union[str, "os.PathLike[str]"]

VOCAB_SIZE = 32768
FIRST_LEARNED = 1600

SPECIAL_TOKENS: Tuple[str, ...] = (
    "<PAD>",
    "<UNK>",
    "<BOS>",
    "<EOS>",
    "<FIM_PREFIX>",
    "<FIM_MIDDLE>",
    "<FIM_SUFFIX>",
    "<CODE_START>",
    "<CODE_END>",
    "<THOUGHT_START>",
    "<THOUGHT_END>",
    "<QUERY_TOOL>",
    "<INDEX>",
    "<DEBUG_CONTEXT>",
    "<FILE_SEP>",
    "<DIFF_START>",
    "<DIFF_END>",
    "<COMMENT_START>",
    "<COMMENT_END>",
    "<RESERVED_19>",
)

CPP_KEYWORDS: Tuple[str, ...] = (
    "auto",
    "const",
    "constexpr",
    "consteval",
    "constinit",
    "extern",
    "inline",
    "mutable",
    "register",
    "static",
    "thread_local",
    "volatile",
    "virtual",
    "explicit",
    "void",
    "bool",
    "char",
    "short",
    "int",
    "long",
    "float",
    "double",
    "signed",
    "unsigned",
    "wchar_t",
    "char8_t",
    "char16_t",
    "char32_t",
    "size_t",
    "struct",
    "class",
    "union",
    "enum",
    "typedef",
    "typename",
    "template",
    "concept",
    "requires",
    "namespace",
    "using",
    "if",
    "else",
    "switch",
    "case",
    "default",
    "for",
    "while",
    "do",
    "break",
    "continue",
    "return",
    "goto",
    "try",
    "catch",
    "throw",
    "noexcept",
    "new",
    "delete",
    "nullptr",
    "sizeof",
    "alignof",
    "alignas",
    "static_cast",
    "dynamic_cast",
    "const_cast",
    "reinterpret_cast",
    "public",
    "private",
    "protected",
    "friend",
    "true",
    "false",
    "this",
    "operator",
    "decltype",
    "typeid",
    "co_await",
    "co_return",
    "co_yield",
    "NULL",
    "restrict",
    "assert",
    "define",
    "include",
    "ifdef",
    "ifndef",
    "endif",
    "pragma",
    "elif",
    "undef",
)

CPP_OPERATORS: Tuple[str, ...] = (
    "::",
    "->",
    ".*",
    "->*",
    "==",
    "!=",
    "<=",
    ">=",
    "<=>",
    "&&",
    "||",
    "<<",
    ">>",
    "++",
    "--",
    "+=",
    "-=",
    "*=",
    "/=",
    "%=",
    "&=",
    "|=",
    "^=",
    "<<=",
    ">>=",
    "...",
    "##",
    "//",
    "/*",
    "*/",
)

PREPROCESSOR: Tuple[str, ...] = (
    "#include",
    "#define",
    "#undef",
    "#if",
    "#ifdef",
    "#ifndef",
    "#elif",
    "#else",
    "#endif",
    "#pragma",
    "#error",
    "#warning",
    "#line",
)

PUNCTUATION: Tuple[str, ...] = tuple("{}()[]<>;:,.+-*/%&|^~!?=#@$_\\\"'")
#: the seed's name for :data:`PUNCTUATION`
SINGLE_CHAR_PUNCT = PUNCTUATION

STL_NAMES: Tuple[str, ...] = (
    "std",
    "boost",
    "absl",
    "fmt",
    "cout",
    "cerr",
    "cin",
    "endl",
    "printf",
    "fprintf",
    "sprintf",
    "scanf",
    "puts",
    "getchar",
    "putchar",
    "vector",
    "map",
    "set",
    "list",
    "deque",
    "array",
    "unordered_map",
    "unordered_set",
    "stack",
    "queue",
    "priority_queue",
    "pair",
    "tuple",
    "string",
    "string_view",
    "wstring",
    "unique_ptr",
    "shared_ptr",
    "weak_ptr",
    "make_unique",
    "make_shared",
    "allocator",
    "malloc",
    "calloc",
    "realloc",
    "free",
    "memcpy",
    "memset",
    "memmove",
    "sort",
    "find",
    "count",
    "transform",
    "accumulate",
    "begin",
    "end",
    "size",
    "empty",
    "push_back",
    "emplace_back",
    "insert",
    "erase",
    "clear",
    "reserve",
    "resize",
    "front",
    "back",
    "data",
    "iterator",
    "const_iterator",
    "reverse_iterator",
    "optional",
    "variant",
    "any",
    "expected",
    "function",
    "bind",
    "move",
    "forward",
    "swap",
    "numeric_limits",
    "type_traits",
    "enable_if",
    "is_same",
    "decay",
    "initializer_list",
    "ifstream",
    "ofstream",
    "stringstream",
    "ostringstream",
    "iostream",
    "fstream",
    "sstream",
    "mutex",
    "lock_guard",
    "unique_lock",
    "shared_lock",
    "thread",
    "atomic",
    "condition_variable",
    "future",
    "promise",
    "async",
    "exception",
    "runtime_error",
    "logic_error",
    "invalid_argument",
    "out_of_range",
    "overflow_error",
    "error_code",
    "error_category",
    "strlen",
    "strcmp",
    "strncmp",
    "strcpy",
    "strcat",
    "atoi",
    "atof",
    "strtol",
    "strtod",
    "exit",
    "abort",
    "atexit",
    "open",
    "close",
    "read",
    "write",
    "ioctl",
    "socket",
    "listen",
    "accept",
    "connect",
    "send",
    "recv",
    "select",
    "poll",
    "epoll",
    "fork",
    "exec",
    "wait",
    "pipe",
    "signal",
    "pthread_create",
    "pthread_join",
    "pthread_mutex",
    "cudaMalloc",
    "cudaFree",
    "cudaMemcpy",
    "cudaDeviceSynchronize",
    "cudaGetLastError",
    "__global__",
    "__device__",
    "__host__",
    "__shared__",
    "blockIdx",
    "threadIdx",
    "blockDim",
    "gridDim",
)

#: the diff markers; ``+`` and ``-`` here are the line-initial ones (the punctuation tokens are
#: the same text at other places)
DIFF_TOKENS: Tuple[str, ...] = ("+", "-", "@@", "diff", "---", "+++", "index", "a/", "b/")
WHITESPACE_TOKENS: Tuple[str, ...] = ("\n", "\n\n")

#: (category, first id, number of ids, tokens)
LAYOUT: Tuple[Tuple[str, int, int, Tuple[str, ...]], ...] = (
    ("special", 0, 20, SPECIAL_TOKENS),
    ("keyword", 20, 100, CPP_KEYWORDS),
    ("operator", 120, 60, CPP_OPERATORS),
    ("preprocessor", 180, 40, PREPROCESSOR),
    ("punctuation", 220, 100, PUNCTUATION),
    ("stl", 320, 200, STL_NAMES),
    ("number", 520, 1000, tuple(str(n) for n in range(1000))),
    ("diff", 1520, 16, DIFF_TOKENS),
    ("whitespace", 1536, 16, WHITESPACE_TOKENS),
    ("mark", 1552, 1, ("\u2581",)),
    ("reserved", 1553, 47, ()),
)

DIFF_ADD, DIFF_DEL = 1520, 1521
#: the id of the word mark's character where the text itself holds it
MARK_ID = 1552
_DIFF_NAMES = {"<DIFF_ADD>": DIFF_ADD, "<DIFF_DEL>": DIFF_DEL}
_DIFF_SHOWN = {i: n for n, i in _DIFF_NAMES.items()}
NEWLINE, DOUBLE_NEWLINE = 1536, 1537

#: the alternatives both word patterns begin with
_WORDS = (
    r"(?m)^(?:\+\+\+|---)(?: [ab]/)?"
    r"|@@"
    r"|\#[ \t]*[A-Za-z_]+"
    r"|0[xX][0-9a-fA-F]+"
    r'|"(?:[^"\\\n]|\\.)*"'
    r"|'(?:[^'\\\n]|\\.)'"
    r"|<=>|<<=|>>=|->\*|\.\.\.|::|->|\.\*|==|!=|<=|>=|&&|\|\||<<|>>|\+\+|--"
    r"|\+=|-=|\*=|/=|%=|&=|\|=|\^=|\#\#|//|/\*|\*/"
    r"|[\p{L}_][\p{L}\p{N}_]*"
    r"|\p{N}[\p{L}\p{N}_]*"
    r"|(?:\r?\n[^\S\n]*){1,2}"
)
#: the word pattern of tokenizers trained before punctuation runs (whitespace other than
#: newlines matches nothing and is dropped); a file whose metadata lacks :data:`WORDS_KEY`
#: keeps reading with it, so its ids stay what they were
LEGACY_PATTERN = _WORDS + r"|\S"
#: the word pattern: :data:`LEGACY_PATTERN` with punctuation runs (a ``+``/``-`` that starts a
#: line is a word of its own, the diff marker; a run of ASCII punctuation but quotes and ``_``
#: is one word up to where an operator, ``@@`` or a directive starts: ``();`` and ``){`` are
#: learned words, ``)->`` is ``)`` and the fixed ``->``)
PATTERN = _WORDS + (
    r"|^[+\-]"
    r"|(?:(?!<=>|<<=|>>=|->\*|\.\.\.|::|->|\.\*|==|!=|<=|>=|&&|\|\||<<|>>|\+\+|--"
    r"|\+=|-=|\*=|/=|%=|&=|\|=|\^=|\#\#|//|/\*|\*/|@@|\#[ \t]*[A-Za-z_])"
    r"[!\#$%&()*+,\-./:;<=>?@\[\\\]^`{|}~])+"
    r"|\S"
)
#: the metadata key that names a tokenizer's word split (``"runs"``: :data:`PATTERN`; absent:
#: :data:`LEGACY_PATTERN`)
WORDS_KEY = "cppreason_words"
#: the mark a learned word starts with (U+2581, as in SentencePiece)
WORD_MARK = "\u2581"
#: diff header words that are two fixed tokens
_HEADERS = {
    "--- a/": (1524, 1527),
    "+++ b/": (1525, 1528),
    "--- b/": (1524, 1528),
    "+++ a/": (1525, 1527),
}
#: how the learned part splits a word (after the word mark it is given): not at all, so that
#: its merges may cross ``_``, case changes and digits (``▁__first``, ``▁_M_impl`` as
#: one token; o200k's split cost 23% more tokens, benches/perf_notes.md)
INNER_PATTERN = r"(?s).+"


def _build_layout() -> Tuple[List[str], Dict[str, int], Dict[int, str]]:
    """(names of ids 0..1599, word -> id, id -> category). A token listed twice keeps its first
    id; the ids a category does not fill are reserved."""
    names: List[str] = []
    lookup: Dict[str, int] = {}
    category: Dict[int, str] = {}
    for cat, first, n, tokens in LAYOUT:
        assert len(names) == first
        unique = [t for t in dict.fromkeys(tokens) if cat == "diff" or t not in lookup]
        if len(unique) > n:
            raise AssertionError(f"{cat}: {len(unique)} tokens for {n} ids")
        for k in range(n):
            i = first + k
            if k < len(unique):
                t = unique[k]
                names.append(t)
                category[i] = cat
                if t not in lookup:
                    lookup[t] = i
            else:
                names.append(f"<RESERVED_{i}>")
                category[i] = "reserved"
    return names, lookup, category


FIXED_NAMES, FIXED_IDS, CATEGORY = _build_layout()


def _inner_name(i: int) -> str:
    """The name id ``i`` has in the learned tokenizer's special tokens (which must be unique
    and not clash with the control tokens' names). The mark's id 1552 keeps the name it had
    while reserved, so files saved before it was given the mark still load."""
    if i == MARK_ID:
        return f"<RESERVED_{i}>"
    t = FIXED_NAMES[i]
    return t if i < 20 or t.startswith("<RESERVED_") else f"<|cpp:{i}|>"


#: diff header tokens a space follows when decoding (``--- a/x``, ``@@ -1,2 +1,3 @@``)
_SPACED = frozenset(("---", "+++", "@@"))


def _pattern_of(tokenizer: Tokenizer) -> str:
    """The word split a learned tokenizer was trained with (:data:`WORDS_KEY`)."""
    return PATTERN if tokenizer.metadata.get(WORDS_KEY) == "runs" else LEGACY_PATTERN


@functools.lru_cache(maxsize=None)
def _native_tables(pattern: str = PATTERN) -> Tuple[Any, Any]:
    """The native fixed-word encoder and decoder for a word split (the same for every
    CppReason tokenizer with that split: the learned part is given to each call), built
    once."""
    table = [(w, [i]) for w, i in FIXED_IDS.items()] + [
        (w, list(ids)) for w, ids in _HEADERS.items()
    ]
    encoder = _core.FixedWordEncoder(
        pattern, table, [("+", DIFF_ADD), ("-", DIFF_DEL)], (NEWLINE, DOUBLE_NEWLINE), WORD_MARK
    )
    shown = [
        None if i < 20 or CATEGORY[i] == "reserved" else FIXED_NAMES[i]
        for i in range(FIRST_LEARNED)
    ]
    decoder = _core.FixedWordDecoder(
        shown, WORD_MARK, sorted(_SPACED), ["@@"], pattern, [FIXED_IDS["+"], FIXED_IDS["-"]]
    )
    return encoder, decoder


class CppTokenizer(WrapperTokenizer):
    """The CppReason tokenizer: fixed ids for C++ primitives (:data:`FIXED_IDS`), a learned
    byte-level BPE (:attr:`tokenizer`, ids from 1600) for other words.

    Build one with :func:`train`, or from a saved file: ``CppTokenizer(path)`` (the seed's
    constructor) or :meth:`load`. :meth:`load` and :meth:`save` take a file, or a folder
    holding ``cppreason.json`` (toksmith's format: a Hugging Face ``tokenizer.json`` cannot hold
    the fixed whole-word ids).
    """

    preset = "cppreason"
    PRESET_NAME = "CppReason"
    FILE_NAME = "cppreason.json"

    def __init__(self, tokenizer: Union[Tokenizer, PathLike]) -> None:
        super().__init__(tokenizer)  # type: ignore[arg-type]
        self._fixed, self._decoder = _native_tables(_pattern_of(self.tokenizer))

    def _check_tokenizer(self, tokenizer: Any) -> Tokenizer:
        """A toksmith Tokenizer (or the path of a saved one) that has CppReason's fixed ids,
        each at its own id (not one of the special tokens of the other presets)."""
        if isinstance(tokenizer, (str, os.PathLike)):
            tokenizer = formats.load_any(tokenizer)
        if not isinstance(tokenizer, Tokenizer):
            raise TypeError(
                f"CppTokenizer needs a toksmith.Tokenizer or the path of a saved one, "
                f"not {type(tokenizer).__name__}"
            )
        specials = tokenizer.special_tokens
        missing = [i for i in range(FIRST_LEARNED) if specials.get(_inner_name(i)) != i]
        if missing:
            raise ValueError(
                f"the tokenizer lacks CppReason's fixed ids (first missing: {missing[0]}); "
                "train it with toksmith.presets.cppreason.train()"
            )
        return tokenizer

    # ---- properties (nanochat's interface) ----
    @property
    def vocab_size(self) -> int:
        return self.tokenizer.n_vocab

    @property
    def bos_token_id(self) -> int:
        return 2

    @property
    def eos_token_id(self) -> int:
        return 3

    @property
    def pad_token_id(self) -> int:
        return 0

    def special_id(self, name: str) -> int:
        """The id of a control token, e.g. ``"<FIM_PREFIX>"``, or of a line-initial diff
        marker by the name :meth:`id_to_token` shows (``"<DIFF_ADD>"`` 1520, ``"<DIFF_DEL>"``
        1521)."""
        if not isinstance(name, str):
            raise TypeError(f"name must be str, not {type(name).__name__}")
        if name in _DIFF_NAMES:
            return _DIFF_NAMES[name]
        if name not in SPECIAL_TOKENS:
            raise ValueError(
                f"{name!r} is not one of CppReason's control tokens {list(SPECIAL_TOKENS)} "
                f"(or {list(_DIFF_NAMES)})"
            )
        return SPECIAL_TOKENS.index(name)

    def id_to_token(self, id: int) -> str:
        """A fixed token's text (``<DIFF_ADD>`` / ``<DIFF_DEL>`` for the line-initial diff
        markers), or a learned token's bytes as text."""
        id = _as_id(id)
        self._check_id(id)
        if id < FIRST_LEARNED:
            return _DIFF_SHOWN.get(id, FIXED_NAMES[id])
        return self.tokenizer.decode_bytes([id]).decode("utf-8", "replace")

    def _check_id(self, id: Any) -> None:
        if not isinstance(id, int) or isinstance(id, bool):
            raise TypeError(f"token ids must be int, not {type(id).__name__}")
        if not 0 <= id < self.tokenizer.n_vocab:
            raise ValueError(
                f"token id {id} is out of range: valid ids are 0..{self.tokenizer.n_vocab - 1}"
            )

    # ---- encoding ----
    def words(self, text: str) -> List[str]:
        """The words of ``text``, as the native encoder sees them: :data:`PATTERN`'s matches,
        those with whitespace in them (string literals) cut at it, the character ``\u2581``
        a word of its own (newline words keep the indentation after them).

        >>> train(["int x;"] * 5, vocab_size=1856).words('printf("hello %d", x);')
        ['printf', '(', '"hello', '%d"', ',', 'x', ');']
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be str, not {type(text).__name__}")
        try:
            return self._fixed.words(text)
        except UnicodeEncodeError:  # lone surrogates: U+FFFD, as encode() reads them
            return self._fixed.words(_fix_surrogates(text))

    def encode(
        self, text: str, *, bos: bool = False, eos: bool = False, line_start: bool = True
    ) -> List[int]:
        """The ids of ``text``: fixed ids for fixed words, learned BPE for the others; spaces and
        tabs are not encoded. Control-token text (``<BOS>``) is encoded as text.
        A ``+``/``-`` is a diff marker only in the first column: right after a ``\n``, or at
        position 0 of ``text`` (not after leading spaces). ``line_start=False``: ``text`` goes
        on a line (its first word is not at the start of one, so a leading ``+``/``-`` is not
        a diff marker, nor a leading ``---``/``+++`` a diff header). Lone surrogates are replaced with U+FFFD (as
        :meth:`toksmith.Tokenizer.encode` does).

        >>> tok = train(["x = a->b;"] * 5, vocab_size=1858)  # 2 merges: they spell the word mark
        >>> tok.tokenize("x = a->b;")
        ['▁', 'x', '=', '▁', 'a', '->', '▁', 'b', ';']
        >>> tok.encode("a->b")[2]
        121
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be str, not {type(text).__name__}")
        for flag, value in (("bos", bos), ("eos", eos), ("line_start", line_start)):
            if not isinstance(value, bool):
                raise TypeError(f"{flag} must be True or False, not {value!r}")
        if not line_start and text[:1] in ("-", "+"):
            # the scanner takes `---`/`+++` at position 0 for a diff header, and a `+`/`-` there
            # for a word of its own (the diff marker), whatever line_start says; a space in
            # front (dropped, as every space is) puts them in mid-line
            text = " " + text
        try:
            ids = self._fixed.encode(self.tokenizer._core, text, line_start)
        except UnicodeEncodeError:  # lone surrogates cannot be UTF-8
            ids = self._fixed.encode(self.tokenizer._core, _fix_surrogates(text), line_start)
        if bos:
            ids.insert(0, 2)
        if eos:
            ids.append(3)
        return ids

    def encode_ordinary(self, text: str) -> List[int]:
        """:meth:`encode` with no framing (tiktoken's name: control-token text is text here in
        any case), so that code written for :class:`toksmith.Tokenizer` (``encode_ordinary``,
        ``encode_ordinary_batch``, :func:`toksmith.streaming.encode_lines`) takes this one too."""
        return self.encode(text)

    def encode_ordinary_batch(
        self,
        texts: Sequence[str],
        num_threads: Optional[int] = None,
        *,
        threads: Optional[int] = None,
    ) -> List[List[int]]:
        """:meth:`encode` of each text, in parallel (all cores unless ``threads``, or its
        tiktoken name ``num_threads``, says how many: pass one of the two, or both with the same
        value), as :meth:`toksmith.Tokenizer.encode_ordinary_batch`."""
        if isinstance(texts, str):
            raise TypeError("texts must be a list of str, not a single str; wrap it in a list")
        if isinstance(texts, (bytes, bytearray, memoryview)):
            raise TypeError(
                f"texts must be a list of str, not {type(texts).__name__}; decode it to str and "
                "wrap it in a list"
            )
        texts = list(texts)
        for t in texts:
            if not isinstance(t, str):
                raise TypeError(f"text must be str, not {type(t).__name__}")
        n, m = _thread_count(threads, "threads"), _thread_count(num_threads, "num_threads")
        if n and m and n != m:
            raise ValueError(
                f"threads={n} and num_threads={m} disagree: num_threads is another name for "
                "threads, pass only one of them"
            )
        n = n or m
        try:
            return self._fixed.encode_batch(self.tokenizer._core, texts, n)
        except UnicodeEncodeError:  # lone surrogates: U+FFFD, as encode() reads them
            return self._fixed.encode_batch(
                self.tokenizer._core, [_fix_surrogates(t) for t in texts], n
            )

    def encode_fim(self, prefix: str, suffix: str, middle: Optional[str] = None) -> List[int]:
        """Fill-in-the-middle, prefix-suffix-middle order: ``<FIM_PREFIX> prefix <FIM_SUFFIX>
        suffix <FIM_MIDDLE>`` then ``middle <EOS>`` for a training example (``middle`` given) or
        nothing for a prompt. Each part is encoded where it stands in ``prefix + middle +
        suffix``: the middle starts a line only after a prefix that ends one, the suffix only
        after a prefix and middle that end one (without a middle: after the prefix), so a
        ``+``/``-`` in mid-line stays an operator."""
        for what, part in (("prefix", prefix), ("suffix", suffix)):
            if not isinstance(part, str):
                raise TypeError(f"{what} must be str, not {type(part).__name__}")
        if middle is not None and not isinstance(middle, str):
            raise TypeError(f"middle must be str or None, not {type(middle).__name__}")

        def starts_line(before: str) -> bool:
            return before == "" or before.endswith("\n")

        def part(text: str, before: str) -> List[int]:  # type: ignore[no-redef]
            return self.encode(text, line_start=starts_line(before))

        before_suffix = prefix + (middle or "")
        out = [4] + self.encode(prefix) + [6] + part(suffix, before_suffix) + [5]  # type: ignore[operator]
        if middle is not None:
            out += part(middle, prefix) + [3]  # type: ignore[operator]
        return out

    def encode_diff(self, diff: str, message: Optional[str] = None) -> List[int]:
        """A unified diff framed as ``<DIFF_START> [// COMMIT: message \\n] diff <DIFF_END>``. Each
        further line of a multi-line message is a ``//`` comment too (so its ``+``/``-`` are no diff
        markers)."""
        if not isinstance(diff, str):
            raise TypeError(f"diff must be str, not {type(diff).__name__}")
        if message is not None and not isinstance(message, str):
            raise TypeError(f"message must be str or None, not {type(message).__name__}")
        lines = f"COMMIT: {message}".rstrip("\n").split("\n")
        head = "".join(f"// {line}\n" for line in lines) if message else ""
        return [15] + self.encode(head + diff) + [16]

    # ---- decoding ----
    def decode(self, ids: Sequence[int]) -> str:
        """Text from ids: words joined by the seed's spacing rule (a space between two words
        that touch a letter, digit or ``_``, and after the diff headers ``---``, ``+++`` and
        ``@@`` and before ``@@``; newlines as they are), and a space wherever two words written
        together would read as another word (``/`` ``*`` as ``/ *``, not a comment opener), so
        that the text encodes back to the same ids. Control and reserved tokens are left
        out. Native: :data:`WORD_MARK` starts a learned word, whose tokens run until the next
        mark or fixed token (the mark may be split over tokens)."""
        if isinstance(ids, (str, bytes, bytearray, memoryview)):
            # bytes would iterate as small ints and decode as ids without a word
            raise TypeError(f"ids must be a sequence of int token ids, not {type(ids).__name__}")
        try:
            ids = list(ids)
        except TypeError:
            raise TypeError(
                f"ids must be a sequence of int token ids (a list, tuple or numpy array), "
                f"not {type(ids).__name__}"
            ) from None
        try:
            if any(type(i) is bool for i in ids):
                raise TypeError
            return self._decoder.decode(self.tokenizer._core, ids)
        except (TypeError, OverflowError, ValueError):
            # the slow path: numpy integers converted, or the error that names the bad id
            ids = [_as_id(i) for i in ids]
            for i in ids:
                self._check_id(i)
            return self._decoder.decode(self.tokenizer._core, ids)

    def tokenize(self, text: str) -> List[str]:
        """The token texts of ``text`` (:meth:`id_to_token` of each id)."""
        return [self.id_to_token(i) for i in self.encode(text)]

    # files: WrapperTokenizer's save and load (fixed ids and learned BPE in one toksmith JSON
    # file); pickled as the learned tokenizer (the native fixed-word table is rebuilt)

    def __repr__(self) -> str:
        return f"CppTokenizer(vocab_size={self.vocab_size})"


def train(
    paths_or_texts: Any,
    vocab_size: int = VOCAB_SIZE,
    *,
    threads: Optional[int] = None,
    progress: bool = False,
    errors: str = "strict",
    min_frequency: int = 2,
    name: Optional[str] = "cppreason",
    punctuation_runs: bool = True,
) -> CppTokenizer:
    """Learn the BPE part (ids ``1600 .. vocab_size - 1``) from C++ files or texts: the corpus
    is cut into words (:data:`PATTERN`), fixed words are left out, and the others are counted
    with a leading :data:`WORD_MARK`, split by :data:`INNER_PATTERN`, and merged by toksmith's
    trainer.

    ``paths_or_texts``: a file, folder (recursed), glob, list of those, or an iterable of str.
    A list of str is a list of paths when each names an existing file or folder or is a glob
    that matches a file; texts otherwise. ``errors="strict"`` raises on invalid UTF-8 in a file
    (or a lone surrogate in a text), ``"replace"`` reads it as U+FFFD.
    ``min_frequency=2`` (the seed's trainer setting): a pair seen once is not merged.
    ``punctuation_runs=False``: every punctuation character is a word of its own, as the
    seed's checklist shows them (``);`` is ``)`` ``;``), instead of runs such as ``);`` being
    learned words (:data:`PATTERN`); about 6% more tokens on held-out C++.
    """
    if not isinstance(punctuation_runs, bool):
        raise TypeError(f"punctuation_runs must be True or False, not {punctuation_runs!r}")
    vocab_size = index_arg(vocab_size, INT_TYPE_ERROR, name="vocab_size", numpy=False)
    if vocab_size < FIRST_LEARNED + 256:
        raise ValueError(
            f"vocab_size must be at least {FIRST_LEARNED + 256} (1600 fixed ids + 256 bytes), "
            f"not {vocab_size}"
        )
    if vocab_size > MAX_VOCAB_SIZE:
        raise VocabError(
            f"vocab_size={vocab_size} is too large: token ids are 32-bit, so it can be at most "
            f"{MAX_VOCAB_SIZE}"
        )
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be str or None, not {type(name).__name__}")
    _thread_count(threads, "threads")
    corpus_bytes = [0]
    pattern = PATTERN if punctuation_runs else LEGACY_PATTERN
    counts = _learned_counts(
        paths_or_texts, threads=threads, errors=errors, size=corpus_bytes, pattern=pattern
    )
    specials = {_inner_name(i): i for i in range(FIRST_LEARNED)}

    def learn(counts: Dict[bytes, int], progress: bool) -> Tokenizer:
        with warnings.catch_warnings():
            # a short vocabulary is reported below, with the corpus it would need
            warnings.filterwarnings(
                "ignore", message=r".*requested\): the vocabulary has", category=UserWarning
            )
            return train_from_counts(
                counts,  # type: ignore[arg-type]
                vocab_size=vocab_size,
                pattern=INNER_PATTERN,
                special_tokens=specials,
                threads=threads,
                progress=progress,
                name=name,
                min_frequency=min_frequency,
            )

    tok = learn(counts, progress)
    if tok.n_vocab < vocab_size:
        learned = tok.n_vocab - FIRST_LEARNED - 256
        half = learn(_half_counts(counts), False).n_vocab - FIRST_LEARNED - 256
        warnings.warn(
            f"no pair left that occurs at least min_frequency={min_frequency} times after "
            f"{learned} merges ({vocab_size - FIRST_LEARNED - 256} requested): the vocabulary "
            f"has {tok.n_vocab} tokens, not {vocab_size}. "
            + _corpus_needed(corpus_bytes[0], learned, half, vocab_size - FIRST_LEARNED - 256)
            + " (or ask for a smaller vocab_size, or min_frequency=1)",
            stacklevel=2,
        )
    tok.metadata["preset"] = "cppreason"
    if punctuation_runs:
        tok.metadata[WORDS_KEY] = "runs"
    return CppTokenizer(tok)


def _half_counts(counts: Dict[bytes, int]) -> Dict[bytes, int]:
    """The counts of about half the corpus: each word keeps half its occurrences (an odd one
    kept or not by a hash of the word, the same in every run)."""
    out = {}
    for word, n in counts.items():
        k = n // 2 + (n & 1 & zlib.crc32(word))
        if k:
            out[word] = k
    return out


def _corpus_needed(size: int, learned: int, half: int, wanted: int) -> str:
    """How much text of this kind ``wanted`` merges need, from how many merges the corpus
    (``size`` bytes, ``learned`` merges) and about half of it (``half`` merges) allowed: merges
    grow as a power of the corpus size (Heaps' law), whose exponent those two points give."""
    if learned <= 0 or size <= 0:
        return "Train on more text."
    if 0 < half < learned:
        exponent = min(1.0, max(0.2, math.log2(learned / half)))
        how = f"half of it gave {half}, so merges grow as size^{exponent:.2f}"
    else:
        exponent = 1.0
        how = "growing at most in proportion to it"
    needed = size * (wanted / learned) ** (1.0 / exponent)
    return (
        f"The {_mb(size)} of text gave {learned} merges ({how}): {wanted} merges need about "
        f"{_mb(needed)} of such text."
    )


def _mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.1f} kB"


def _thread_count(n: Any, what: str) -> int:
    """A thread count for the native calls (0: all cores) from ``None`` or a positive int."""
    return thread_count(
        n,
        what,
        type_error="{name} must be a positive int or None, not {type}",
        range_error="{name} must be between 1 and {max} (or None: all cores), not {value}",
        numpy=False,
    )


def _as_id(i: Any) -> int:
    """A token id as a Python int (numpy integers accepted), TypeError for anything else."""
    return index_arg(i, "token ids must be int, not {type}")


def _names_globs(source: Any) -> bool:
    """A list or tuple of paths in which some str are globs, each matching a file (the shared
    :func:`~toksmith.presets._sources.is_path_source` takes only existing paths in a list, so a
    list with a glob in it was read as texts: the glob itself trained on)."""
    if not isinstance(source, (list, tuple)) or not source:
        return False
    for p in source:
        if isinstance(p, os.PathLike) or (isinstance(p, str) and os.path.exists(p)):
            continue
        # a C++ text may hold `*`, `?` or `[` too: a glob only if it looks like a path and
        # matches a file
        if not (
            isinstance(p, str)
            and len(p) <= 4096
            and "\n" not in p
            and any(c in p for c in "*?[")
            and any(os.path.isfile(m) for m in glob.iglob(p, recursive=True))
        ):
            return False
    return True


def _texts(paths_or_texts: Any, errors: str) -> Iterator[str]:
    """Texts from files (read in blocks of whole lines) or from an iterable of str."""
    check_source(paths_or_texts, errors)
    if is_path_source(paths_or_texts) or _names_globs(paths_or_texts):
        for f in source_files(paths_or_texts):
            yield from iter_line_blocks(f, errors)
    else:
        yield from iter_source_texts(paths_or_texts)


def _learned_counts(
    paths_or_texts: Any,
    *,
    threads: Optional[int] = None,
    errors: str = "strict",
    size: Optional[List[int]] = None,
    pattern: str = PATTERN,
) -> Dict[bytes, int]:
    """The learned part's training counts: the words that are not fixed, told apart by the
    native encoder itself (so training sees what encoding hands to the BPE), each with its
    word mark, split by :data:`INNER_PATTERN`."""
    encoder = _native_tables(pattern)[0]
    counter = _core.ChunkCounter(INNER_PATTERN)
    batch: List[str] = []
    n = 0 if threads is None else threads

    def count(batch: List[str]) -> None:
        try:
            counter.add_counts(encoder.count_learned(batch, INNER_PATTERN, n))
        except UnicodeEncodeError:
            # a lone surrogate (text decoded with errors="surrogateescape"): UTF-8 cannot hold
            # it, so it is invalid UTF-8 as `errors` means it for files
            fixed = [surrogates_checked(t, errors, "a training text") for t in batch]
            counter.add_counts(encoder.count_learned(fixed, INNER_PATTERN, n))

    n_bytes = 0
    for t in _texts(paths_or_texts, errors):
        n_bytes += len(t) if t.isascii() else len(t.encode("utf-8", "surrogatepass"))
        batch.append(t)
        if len(batch) >= 64:
            count(batch)
            batch.clear()
    if batch:
        count(batch)
    if size is not None:
        size[0] = n_bytes  # (what the corpus was: a short vocabulary says how much more it needs)
    return dict(counter.counts())


def load(path: PathLike) -> CppTokenizer:
    """:meth:`CppTokenizer.load`."""
    return CppTokenizer.load(path)


__all__ = [
    "CppTokenizer",
    "train",
    "load",
    "LAYOUT",
    "FIXED_IDS",
    "FIXED_NAMES",
    "PATTERN",
    "LEGACY_PATTERN",
    "SPECIAL_TOKENS",
    "CPP_KEYWORDS",
    "CPP_OPERATORS",
    "PREPROCESSOR",
    "PUNCTUATION",
    "STL_NAMES",
    "DIFF_TOKENS",
]
