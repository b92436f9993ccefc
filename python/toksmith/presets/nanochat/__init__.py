"""The nanochat preset: nanochat's chat tokenizer, trained and run by toksmith.

* :func:`train`: nanochat's split pattern, 2^16 tokens by default, and the nine conversation
  special tokens given the ids right after the merges (``vocab_size - 256 - 9`` merges), the
  layout of nanochat's ``RustBPETokenizer.train_from_iterator``.
* :class:`ChatTokenizer`: nanochat's tokenizer interface (``encode``, ``decode``,
  ``encode_special``, ``render_conversation``, ...) over any toksmith
  :class:`~toksmith.Tokenizer` that has the nine special tokens, so a nanochat-style training
  script can use it unchanged.

>>> chat = train(["The quick brown fox jumps over the lazy dog. "] * 20, vocab_size=290)
>>> chat.get_vocab_size(), chat.get_bos_token_id() == chat.encode_special("<|bos|>")
(290, True)
>>> ids, mask = chat.render_conversation({"messages": [
...     {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "The dog."}]})
>>> [chat.id_to_token(i) for i in ids]  # doctest: +NORMALIZE_WHITESPACE
['<|bos|>', '<|user_start|>', 'H', 'i', '<|user_end|>',
 '<|assistant_start|>', 'The', ' dog', '.', '<|assistant_end|>']
>>> mask
[0, 0, 0, 0, 0, 0, 1, 1, 1, 1]
"""

from __future__ import annotations

import os
from collections import abc
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

from ... import registry
from ..._args import bool_arg
from ..._optional import lazy_module
from ..._paths import fspath
from ...pretokenize import NANOCHAT_PATTERN
from ...tokenizer import Tokenizer, _threads
from .._base import WrapperTokenizer
from .._checks import as_int as _as_int
from .._checks import check_train_options, optional_int
from .._registry import NANOCHAT_SPECIAL_TOKENS, PRESETS
from .._sources import train_preset
from .chat_render import to_ansi, to_html
from .conversation import (
    ASSISTANT_START,
    Segment,
    Special,
    normalize_messages,
    plan_conversation,
    plan_messages,
)
from .tiktoken_pickle import PICKLE_NAME, read_encoding_pickle

PRESET = PRESETS["nanochat"]
#: the nine special tokens, in id order
SPECIAL_TOKENS: Tuple[str, ...] = NANOCHAT_SPECIAL_TOKENS
#: nanochat's default vocabulary size (2^16: ids fit in uint16)
DEFAULT_VOCAB_SIZE = PRESET.vocab_size
#: nanochat's split pattern (GPT-4's, with numbers of at most two digits), nanochat's name for it
SPLIT_PATTERN: str = NANOCHAT_PATTERN

PathLike = Union[str, "os.PathLike[str]"]
#: the file of token byte counts beside a tokenizer (nanochat's tok_train writes token_bytes.pt)
TOKEN_BYTES_NAME = "token_bytes.npy"

np = lazy_module("numpy", extra="numpy")


def _is_tiktoken_encoding(obj: Any) -> bool:
    return all(hasattr(obj, a) for a in ("_mergeable_ranks", "_special_tokens", "_pat_str"))


def train(
    paths_or_texts: Union[PathLike, Sequence[PathLike], Iterable[str]],
    vocab_size: int = DEFAULT_VOCAB_SIZE,
    *,
    threads: Optional[int] = None,
    progress: bool = False,
    text_field: str = "text",
    errors: str = "strict",
    name: Optional[str] = "nanochat",
) -> "ChatTokenizer":
    """Train a nanochat tokenizer and return it as a :class:`ChatTokenizer`.

    ``paths_or_texts``: a path (str or os.PathLike: file, folder or glob, as
    :func:`toksmith.train`) or a list of paths; or any other iterable of str texts (streamed,
    as :func:`toksmith.train_from_iterator`). A single str is a path; a list of str is a list of
    paths when every item names an existing file or folder (or is a glob), texts otherwise (pass
    ``pathlib.Path`` objects or a generator to be explicit). ``vocab_size`` is the total: 256
    bytes + merges + the nine special tokens (an int; numpy integers are accepted).
    """
    check_train_options(paths_or_texts, name=name, text_field=text_field, errors=errors)
    if isinstance(paths_or_texts, (str, os.PathLike)) and not os.fspath(paths_or_texts):
        # an empty path would be the current folder, every file under it read as training text
        raise ValueError(
            "paths_or_texts is an empty path; pass a file, folder or glob, or a list of str texts"
        )
    vocab_size = _as_int(vocab_size, "vocab_size")
    bool_arg(progress, "progress", "{name} must be a bool, not {type}", numpy=False)
    tok = train_preset(
        PRESET,
        paths_or_texts,
        vocab_size,
        threads=threads,
        progress=progress,
        text_field=text_field,
        errors=errors,
        name=name,
    )
    return ChatTokenizer(tok)


def _ids_list(ids: Any) -> List[int]:
    """Token ids as a list for the core: a list, tuple or numpy array of ints (numpy integers
    accepted); a str, bytes or a single int is a TypeError (not split into characters)."""
    if (
        isinstance(ids, (str, bytes, bytearray, abc.Mapping, abc.Set))
        or ids is None
        or isinstance(ids, (int, float))
    ):
        # a dict or a set would give its keys, in no useful order
        raise TypeError(f"ids must be a list of int token ids, not {type(ids).__name__}")
    if hasattr(ids, "tolist") and not isinstance(ids, list):
        if getattr(getattr(ids, "dtype", None), "kind", "i") not in "iu":
            raise TypeError(f"ids must be integers, not an array of dtype {ids.dtype}")
        ids = ids.tolist()
        if isinstance(ids, int):  # a 0-d array
            raise TypeError("ids must be a list of int token ids, not a single int")
        return ids
    return list(ids)


def _ids_checked(ids: List[Any]) -> List[int]:
    """The slow path: each id through ``__index__`` (numpy integers), bools and floats refused."""
    return [_as_int(i, f"ids[{k}]") for k, i in enumerate(ids)]


class ChatTokenizer(WrapperTokenizer):
    """nanochat's tokenizer interface over a toksmith :class:`~toksmith.Tokenizer`.

    ``ChatTokenizer(tok)`` needs ``tok`` to have the nine special tokens of
    :data:`SPECIAL_TOKENS` (ValueError naming the missing ones otherwise). The underlying
    tokenizer is :attr:`tokenizer`. :meth:`load` and :meth:`save` take a file, or a folder
    holding ``tokenizer.json`` (as nanochat's ``save(tokenizer_dir)``).
    """

    preset = "nanochat"
    PRESET_NAME = "nanochat"
    REQUIRED_SPECIALS = SPECIAL_TOKENS
    SPECIALS_SPEC = list(SPECIAL_TOKENS)

    def __init__(self, tokenizer: Any, bos_token: Optional[str] = None) -> None:
        """``tokenizer``: a toksmith :class:`~toksmith.Tokenizer` (or another preset's wrapper of
        one), or a ``tiktoken.Encoding`` (nanochat's ``enc``: read into a toksmith tokenizer
        with the same ids).

        ``bos_token=None`` requires the nine :data:`SPECIAL_TOKENS` (``<|bos|>`` is the
        document delimiter). A name, as in nanochat's ``RustBPETokenizer(enc, bos_token)``,
        requires only that special token and makes it the delimiter (``"<|endoftext|>"`` for
        OpenAI's encodings, see :meth:`from_pretrained`); rendering conversations still needs
        the nine, and says which are missing.
        """
        if bos_token is not None and not isinstance(bos_token, str):
            raise TypeError(
                f"bos_token must be a special token name such as '<|bos|>', not {type(bos_token).__name__}"
            )
        self._bos_name = bos_token
        if _is_tiktoken_encoding(tokenizer):
            tokenizer = registry.from_tiktoken(tokenizer)
        super().__init__(tokenizer)
        self._special_ids: Dict[str, int] = {
            s: self._all_specials[s] for s in SPECIAL_TOKENS if s in self._all_specials
        }
        self.bos_token_id: int = self._all_specials[bos_token or "<|bos|>"]

    def _check_tokenizer(self, tokenizer: Any) -> Tokenizer:
        if self._bos_name is None:
            return super()._check_tokenizer(tokenizer)
        if isinstance(tokenizer, WrapperTokenizer):
            tokenizer = tokenizer.tokenizer
        if not isinstance(tokenizer, Tokenizer):
            raise TypeError(
                f"ChatTokenizer needs a toksmith.Tokenizer or a tiktoken.Encoding, not "
                f"{type(tokenizer).__name__}"
            )
        if self._bos_name not in tokenizer.special_tokens:
            raise ValueError(
                f"bos_token {self._bos_name!r} is not a special token of this tokenizer; its special "
                f"tokens are {sorted(tokenizer.special_tokens)[:12]}"
            )
        return tokenizer

    def _require_chat_specials(self) -> None:
        """Conversations need the nine special tokens (a tokenizer made with ``bos_token`` may
        lack them, as nanochat's ``from_pretrained`` tokenizers do)."""
        if len(self._special_ids) != len(SPECIAL_TOKENS):
            missing = [s for s in SPECIAL_TOKENS if s not in self._special_ids]
            raise ValueError(
                f"rendering conversations needs the nanochat special tokens; this tokenizer lacks "
                f"{missing} (train it with toksmith.presets.nanochat.train())"
            )

    def __reduce__(self) -> Tuple[Any, ...]:
        return (type(self), (self.tokenizer, self._bos_name))

    # ------------------------------------------------------------------ files

    def save(self, path: PathLike) -> None:
        """Write the tokenizer as a toksmith JSON file. As nanochat's ``save(tokenizer_dir)``, a
        path that does not exist and has no file extension (``"out/tokenizer"``) is a folder:
        it is created (with its parents) and ``tokenizer.json`` is written inside; an existing
        folder gets ``tokenizer.json`` too; any other path is the file itself."""
        if isinstance(path, (str, os.PathLike)) and not isinstance(path, bytes):
            p = os.fsdecode(fspath(path))
            if (
                p
                and not os.path.exists(p)
                and not os.path.splitext(os.path.basename(p.rstrip("/\\")))[1]
            ):
                os.makedirs(p, exist_ok=True)
        super().save(path)

    @classmethod
    def load(cls, path: PathLike) -> "ChatTokenizer":
        """Load a tokenizer file of any format :func:`toksmith.load_any` reads, or nanochat's
        pickled ``tiktoken.Encoding`` (a ``.pkl`` file, read without running code from it:
        :mod:`.tiktoken_pickle`). A folder is read as the ``tokenizer.json`` inside it (what
        :meth:`save` writes), else as nanochat's ``tokenizer.pkl``; as nanochat's
        ``from_directory``, a pickle's delimiter is ``<|bos|>``."""
        p = os.fsdecode(fspath(path))
        if os.path.isdir(p) and not os.path.isfile(os.path.join(p, cls.FILE_NAME)):
            pkl = os.path.join(p, PICKLE_NAME)
            if os.path.isfile(pkl):
                return cls(read_encoding_pickle(pkl), "<|bos|>")
        elif os.path.isfile(p) and p.endswith(".pkl"):
            return cls(read_encoding_pickle(p), "<|bos|>")
        return super().load(p)

    @classmethod
    def from_directory(cls, tokenizer_dir: PathLike) -> "ChatTokenizer":
        """nanochat's name for :meth:`load` of a folder: the ``tokenizer.json`` toksmith
        writes, or the ``tokenizer.pkl`` nanochat writes."""
        return cls.load(tokenizer_dir)

    @classmethod
    def from_pretrained(cls, tiktoken_name: str) -> "ChatTokenizer":
        """One of OpenAI's encodings by tiktoken name (``"cl100k_base"``, ``"gpt2"``...), read
        from tiktoken's cache (:func:`toksmith.get_encoding`: toksmith never downloads), with
        ``<|endoftext|>`` as the delimiter, as nanochat's ``from_pretrained``."""
        return cls(registry.get_encoding(tiktoken_name), "<|endoftext|>")

    # ------------------------------------------------------------------ token bytes

    def token_bytes(self) -> Any:
        """The number of bytes of each token id as nanochat's ``tok_train`` counts them for
        bits-per-byte evaluation: ``len(decode([id]).encode("utf-8"))``, 0 for special tokens
        (a token that is not whole UTF-8 counts the 3 bytes of each U+FFFD its text decodes
        to, as there). A numpy int32 array of ``get_vocab_size()`` values."""
        tok = self.tokenizer
        specials = set(tok.special_tokens.values())
        counts = [
            0 if i in specials else len(tok.decode([i]).encode("utf-8")) for i in range(tok.n_vocab)
        ]
        return np.asarray(counts, dtype=np.int32)

    def save_token_bytes(self, tokenizer_dir: PathLike) -> str:
        """Write :meth:`token_bytes` as ``token_bytes.npy`` in ``tokenizer_dir`` (created if
        needed), where nanochat's ``tok_train`` writes ``token_bytes.pt``; returns the path.
        Read it with :func:`load_token_bytes`."""
        d = os.fsdecode(fspath(tokenizer_dir))
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, TOKEN_BYTES_NAME)
        np.save(path, self.token_bytes(), allow_pickle=False)
        return path

    @classmethod
    def train_from_iterator(
        cls, text_iterator: Iterable[str], vocab_size: int, **kwargs: Any
    ) -> "ChatTokenizer":
        """nanochat's name for :func:`train` on texts."""
        if isinstance(text_iterator, (str, os.PathLike)):
            raise TypeError("text_iterator must be an iterable of str texts; use train() for paths")
        if isinstance(text_iterator, (bytes, bytearray, abc.Mapping)) or not isinstance(
            text_iterator, abc.Iterable
        ):
            raise TypeError(
                f"text_iterator must be an iterable of str texts (a list, a generator...), "
                f"not {type(text_iterator).__name__}"
            )
        return train(iter(text_iterator), vocab_size, **kwargs)

    # ------------------------------------------------------------------ vocabulary

    def get_vocab_size(self) -> int:
        """Largest token id + 1."""
        return self.tokenizer.n_vocab

    def get_special_tokens(self) -> Set[str]:
        """The names of all special tokens (the nine, plus any other the tokenizer has)."""
        return set(self._all_specials)

    def get_bos_token_id(self) -> int:
        return self.bos_token_id

    def encode_special(self, text: str) -> int:
        """The id of a special token, by name (``"<|bos|>"``...)."""
        if not isinstance(text, str):
            raise TypeError(
                f"a special token name must be a str such as '<|bos|>', not {type(text).__name__}"
            )
        try:
            return self._all_specials[text]
        except KeyError:
            raise ValueError(
                f"{text!r} is not a special token of this tokenizer; its special tokens are "
                f"{sorted(self._all_specials)}"
            ) from None

    def id_to_token(self, id: int) -> str:
        """The text of one token (special tokens by name; incomplete UTF-8 as U+FFFD)."""
        return self.tokenizer.decode([_as_int(id, "id")])

    # ------------------------------------------------------------------ encode / decode

    def _special_id(self, value: Union[str, int], what: str) -> int:
        if isinstance(value, str):
            return self.encode_special(value)
        try:
            value = _as_int(value, what)
        except TypeError:
            raise TypeError(
                f"{what} must be a special token name or id, not {type(value).__name__}"
            ) from None
        if not 0 <= value < self.tokenizer.n_vocab:
            raise ValueError(f"{what}={value} is not a token id (0..{self.tokenizer.n_vocab - 1})")
        return value

    def encode(
        self,
        text: Union[str, Sequence[str]],
        prepend: Union[str, int, None] = None,
        append: Union[str, int, None] = None,
        num_threads: int = 8,
    ) -> Union[List[int], List[List[int]]]:
        """Encode a text (or a list of texts, in parallel on ``num_threads`` threads) as plain
        text: special tokens' text never becomes a special token. ``prepend`` / ``append``
        (a special token name or an id) are added at the start / end of each text's ids."""
        pre = self._special_id(prepend, "prepend") if prepend is not None else None
        post = self._special_id(append, "append") if append is not None else None
        if isinstance(text, str):
            if (
                type(num_threads) is not int or num_threads != 8
            ):  # unused for one text, still checked
                _threads(optional_int(num_threads, "num_threads"))
            ids = self.tokenizer.encode_ordinary(text)
            if pre is not None:
                ids.insert(0, pre)
            if post is not None:
                ids.append(post)
            return ids
        if isinstance(text, (list, tuple)):
            batch = self.tokenizer.encode_ordinary_batch(
                list(text), threads=optional_int(num_threads, "num_threads")
            )
            if pre is not None:
                for ids in batch:
                    ids.insert(0, pre)
            if post is not None:
                for ids in batch:
                    ids.append(post)
            return batch
        raise TypeError(f"text must be a str or a list of str, not {type(text).__name__}")

    __call__ = encode

    def decode(self, ids: Sequence[int]) -> str:
        """Ids back to text (special tokens by name). ``ids``: a list, tuple or numpy array of
        ints (numpy integers accepted)."""
        ids = _ids_list(ids)
        try:
            return self.tokenizer.decode(ids)
        except TypeError:
            # numpy integer items (the core takes Python ints), or a real type error
            return self.tokenizer.decode(_ids_checked(ids))

    # ------------------------------------------------------------------ conversations

    def _assemble(
        self, plan: List[Segment], encoded: Any, max_tokens: Optional[int]
    ) -> Tuple[List[int], List[int]]:
        """Concatenate a plan's segments; ``encoded(k, text)`` gives the ids of text segment
        ``k``. Stops as soon as ``max_tokens`` ids are out, so ids and mask stay aligned."""
        ids: List[int] = []
        mask: List[int] = []
        for k, (piece, m) in enumerate(plan):
            if max_tokens is not None and len(ids) >= max_tokens:
                break
            if isinstance(piece, Special):
                ids.append(self._special_ids[piece])
                mask.append(m)
            else:
                toks = encoded(k, piece)
                ids.extend(toks)
                mask.extend([m] * len(toks))
        if max_tokens is not None:
            del ids[max_tokens:], mask[max_tokens:]
        return ids, mask

    @staticmethod
    def _trim_plan(plan: List[Segment], max_tokens: Optional[int]) -> List[Segment]:
        """The segments that can reach the first ``max_tokens`` tokens: every special token
        and every non-empty text gives at least one token, so nothing after the
        ``max_tokens``-th of them can (a very long conversation is not encoded in full)."""
        if max_tokens is None:
            return plan
        n = 0
        for k, (piece, _) in enumerate(plan):
            if piece:
                n += 1
                if n >= max_tokens:
                    return plan[: k + 1]
        return plan

    @staticmethod
    def _check_max_tokens(max_tokens: Optional[int]) -> Optional[int]:
        if max_tokens is None:
            return None
        try:
            max_tokens = _as_int(max_tokens, "max_tokens")
        except TypeError:
            raise TypeError(
                f"max_tokens must be an int or None, not {type(max_tokens).__name__}"
            ) from None
        if max_tokens < 0:
            raise ValueError(f"max_tokens must be >= 0, not {max_tokens}")
        return max_tokens

    def _render_plan(
        self, plan: List[Segment], max_tokens: Optional[int]
    ) -> Tuple[List[int], List[int]]:
        encode = self.tokenizer.encode_ordinary
        return self._assemble(
            self._trim_plan(plan, max_tokens), lambda k, text: encode(text), max_tokens
        )

    def render_conversation(
        self, conversation: Any, max_tokens: Optional[int] = 2048
    ) -> Tuple[List[int], List[int]]:
        """Token ids and training mask (1: train on it) of a conversation.

        ``<|bos|>`` (0); each user message ``<|user_start|>`` text ``<|user_end|>`` (all 0);
        each assistant message ``<|assistant_start|>`` (0), its content (1) and
        ``<|assistant_end|>`` (1). List content: ``text`` parts (1), ``python`` parts wrapped in
        ``<|python_start|>``/``<|python_end|>`` (all 1), ``python_output`` parts wrapped in
        ``<|output_start|>``/``<|output_end|>`` (all 0). A leading system message is merged into
        the first user message. The result is cut to ``max_tokens`` (None: no limit).
        Malformed conversations raise ValueError naming the message.
        """
        max_tokens = self._check_max_tokens(max_tokens)
        self._require_chat_specials()
        return self._render_plan(plan_conversation(conversation), max_tokens)

    def render_conversations(
        self,
        conversations: Iterable[Any],
        max_tokens: Optional[int] = 2048,
        num_threads: Optional[int] = None,
    ) -> List[Tuple[List[int], List[int]]]:
        """:meth:`render_conversation` for many conversations, encoding all their texts in one
        parallel batch (``num_threads``; None: all cores). The first malformed conversation
        raises ValueError prefixed with its position (``conversation 3: message 1: ...``)."""
        max_tokens = self._check_max_tokens(max_tokens)
        num_threads = optional_int(num_threads, "num_threads")
        self._require_chat_specials()
        if isinstance(conversations, (abc.Mapping, str, bytes, bytearray)) or not isinstance(
            conversations, abc.Iterable
        ):
            raise TypeError(
                f"conversations must be a list (or other iterable) of conversations, not "
                f"{type(conversations).__name__}; use render_conversation() for a single conversation"
            )
        plans = []
        for n, conv in enumerate(conversations):
            try:
                plans.append(plan_conversation(conv))
            except (ValueError, TypeError) as exc:
                raise type(exc)(f"conversation {n}: {exc}") from None
        return self._render_plans(plans, max_tokens, num_threads)

    def _render_plans(
        self, plans: List[List[Segment]], max_tokens: Optional[int], num_threads: Optional[int]
    ) -> List[Tuple[List[int], List[int]]]:
        plans = [self._trim_plan(plan, max_tokens) for plan in plans]
        texts: List[str] = []
        for plan in plans:
            texts.extend(p for p, _ in plan if not isinstance(p, Special))
        encoded_all = (
            self.tokenizer.encode_ordinary_batch(texts, threads=num_threads) if texts else []
        )
        out = []
        pos = 0
        for plan in plans:
            encoded = {}
            for k, (p, _) in enumerate(plan):
                if not isinstance(p, Special):
                    encoded[k] = encoded_all[pos]
                    pos += 1
            out.append(self._assemble(plan, lambda k, _text, e=encoded: e[k], max_tokens))
        return out

    def render_for_completion(
        self, conversation: Any, max_tokens: Optional[int] = 2048
    ) -> List[int]:
        """The prompt ids for generating the assistant's next reply, as nanochat's: the
        conversation without its last message if that is an assistant message, rendered as
        :meth:`render_conversation` (cut to ``max_tokens``, nanochat's 2048 by default; None:
        no limit), then ``<|assistant_start|>``: at most ``max_tokens + 1`` ids.

        Unlike nanochat, a conversation that ends with a user message is accepted as it is.
        """
        max_tokens = self._check_max_tokens(max_tokens)
        self._require_chat_specials()
        messages = normalize_messages(conversation)
        if messages[-1]["role"] == "assistant":
            messages = messages[:-1]
        ids, _ = self._render_plan(plan_messages(messages), max_tokens)
        ids.append(self._special_ids[ASSISTANT_START])
        return ids

    # ------------------------------------------------------------------ visualisation

    def visualize_tokenization(
        self,
        ids: Sequence[int],
        mask: Optional[Sequence[int]] = None,
        with_token_id: bool = False,
        *,
        color: bool = True,
        sep: Optional[str] = None,
    ) -> str:
        """Terminal text of ``ids``: mask 1 on green, mask 0 on red, in alternating shades per
        token; ``with_token_id`` shows each id; ``color=False`` gives plain ``a|b|c`` text."""
        if sep is not None and not isinstance(sep, str):
            raise TypeError(f"sep must be a str or None, not {type(sep).__name__}")
        return to_ansi(self.tokenizer, ids, mask, with_token_id=with_token_id, color=color, sep=sep)

    def visualize_html(
        self,
        ids: Sequence[int],
        mask: Optional[Sequence[int]] = None,
        with_token_id: bool = False,
        *,
        title: str = "toksmith: rendered conversation",
    ) -> str:
        """The same as an HTML page."""
        if not isinstance(title, str):
            raise TypeError(f"title must be a str, not {type(title).__name__}")
        return to_html(
            self.tokenizer, [(None, ids, mask)], title=title, with_token_id=with_token_id
        )

    def __repr__(self) -> str:
        return f"<toksmith.presets.nanochat.ChatTokenizer n_vocab={self.get_vocab_size()} {self.tokenizer!r}>"


#: nanochat's name for the tokenizer class
RustBPETokenizer = ChatTokenizer


def load(path: PathLike) -> ChatTokenizer:
    """Same as :meth:`ChatTokenizer.load`."""
    return ChatTokenizer.load(path)


def load_token_bytes(tokenizer_dir: PathLike) -> Any:
    """The ``token_bytes.npy`` that :meth:`ChatTokenizer.save_token_bytes` (and ``toksmith
    train --preset nanochat``) wrote in ``tokenizer_dir`` (or that file itself): a numpy int32
    array, nanochat's ``get_token_bytes()`` (``torch.from_numpy`` makes it the tensor)."""
    p = os.fsdecode(fspath(tokenizer_dir))
    if os.path.isdir(p):
        p = os.path.join(p, TOKEN_BYTES_NAME)
    return np.load(p, allow_pickle=False)


__all__ = [
    "ChatTokenizer",
    "RustBPETokenizer",
    "train",
    "load",
    "load_token_bytes",
    "TOKEN_BYTES_NAME",
    "SPECIAL_TOKENS",
    "SPLIT_PATTERN",
    "DEFAULT_VOCAB_SIZE",
    "PRESET",
]
