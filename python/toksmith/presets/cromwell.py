"""The Cromwell preset: a code-aware byte-level BPE for mixed English + code (seed 000).

What the design asks for, and how it is met on toksmith's core:

* **50,000 byte-level tokens** with byte fallback: any text, any language, encodes and decodes
  exactly.
* **Code-aware merges** (indentation, operators, brackets, keywords): the split is o200k's, on
  its hand-written scanner. Indentation runs, operator runs (``==``, ``!==``, ``->``), bracket
  runs (``((``, ``))``, ``{}``) and words with their leading space (`` return``) are pieces of
  their own, and camelCase names split into parts (``MyClass`` -> ``My`` + ``Class``), so a
  code corpus teaches BPE exactly those tokens. The seed's training loop (which rescans the
  corpus for every merge, and rewrites it with fixed rules) becomes toksmith's incremental trainer.
* **Special tokens at ids 0-7**: ``<PAD> <EOS> <BOS> <FILE> </FILE> <EDIT_START> <EDIT_END>
  <DELETE>``; bytes take ids 8-263 and merges the ids after them.
* **File and edit framing**: :meth:`CodeTokenizer.tokenize_file_with_edit` lays out
  ``<FILE> path </FILE> content <EDIT_START> new content <EDIT_END>`` (the seed's
  ``<FILE=path>`` header is the ``<FILE> path </FILE>`` ids) and
  :meth:`CodeTokenizer.parse_edit_output` reads a model's output back, on the ids: a file that
  contains the text ``<EDIT_START>`` is still content, never a marker.
* **Cache and parallel batches**: the core's per-thread piece cache and
  :meth:`CodeTokenizer.encode_batch` on all cores.

>>> code = train(["def add(a, b):\\n    return a + b\\n"] * 30, vocab_size=300)
>>> code.special_ids["<FILE>"], code.tokenizer.decode_single_token_bytes(8)
(3, b'\\x00')
>>> ids = code.tokenize_file_with_edit("add.py", "x = 1\\n", "x = 2\\n")
>>> code.tokenizer.decode(ids)
'<FILE>add.py</FILE>x = 1\\n<EDIT_START>x = 2\\n<EDIT_END>'
>>> out = code.parse_edit_output(ids)
>>> out["file_path"], out["old_content"], out["new_content"], out["edit_type"]
('add.py', 'x = 1\\n', 'x = 2\\n', 'replace')
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from ..tokenizer import Tokenizer
from . import CROMWELL_SPECIAL_TOKENS, PRESETS
from ._base import PresetTokenizer
from ._sources import train_preset

PRESET = PRESETS["cromwell"]
#: the eight special tokens, in id order (ids 0-7 in a tokenizer trained by :func:`train`)
SPECIAL_TOKENS: Tuple[str, ...] = CROMWELL_SPECIAL_TOKENS
#: the seed's vocabulary size
DEFAULT_VOCAB_SIZE = PRESET.vocab_size
#: the file extensions :func:`collect_code_corpus` takes by default (the seed's list)
DEFAULT_EXTENSIONS: Tuple[str, ...] = (".py", ".js", ".cpp", ".h", ".ts")

PAD, EOS, BOS, FILE, FILE_END, EDIT_START, EDIT_END, DELETE = SPECIAL_TOKENS

PathLike = Union[str, "os.PathLike[str]"]


def collect_code_corpus(directories: Union[PathLike, Sequence[PathLike]],
                        extensions: Sequence[str] = DEFAULT_EXTENSIONS) -> List[Path]:
    """The files under ``directories`` (recursively) whose names end with one of
    ``extensions``, sorted, ready for :func:`train`. Hidden folders (``.git``...) are skipped.
    A missing directory raises FileNotFoundError; finding no file raises ValueError.

    Files are returned, not read: training streams them.
    """
    if isinstance(directories, (str, os.PathLike)):
        directories = [directories]
    if isinstance(extensions, str):
        extensions = [extensions]
    exts = tuple(extensions)
    if not exts or not all(isinstance(e, str) and e for e in exts):
        raise ValueError(f"extensions must be non-empty strings such as '.py', not {extensions!r}")
    found: List[Path] = []
    for directory in directories:
        root = Path(directory)
        if not root.is_dir():
            raise FileNotFoundError(f"collect_code_corpus: {str(root)!r} is not a directory")
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            found.extend(Path(dirpath) / f for f in sorted(filenames) if f.endswith(exts))
    if not found:
        raise ValueError(f"collect_code_corpus: no file ending with {list(exts)} under {[str(d) for d in directories]}")
    return found


def train(
    paths_or_texts: Union[PathLike, Sequence[PathLike], Iterable[str]],
    vocab_size: int = DEFAULT_VOCAB_SIZE,
    *,
    extensions: Optional[Sequence[str]] = None,
    name: Optional[str] = "cromwell",
    threads: Optional[int] = None,
    progress: bool = False,
    text_field: str = "text",
    errors: str = "strict",
) -> "CodeTokenizer":
    """Train a Cromwell code tokenizer and return it as a :class:`CodeTokenizer`.

    ``paths_or_texts``: a path (file, folder or glob) or a list of paths (for example
    :func:`collect_code_corpus`'s), or any other iterable of str texts, read as
    :func:`toksmith.presets.nanochat.train` reads it. ``vocab_size`` is the total: the eight
    special tokens (ids 0-7), 256 bytes (ids 8-263) and ``vocab_size - 264`` merges.

    ``extensions`` (for example ``(".py", ".cpp")``): folders among the paths are read for
    files with those endings only (:func:`collect_code_corpus`); without it a folder gives all
    its files, as :func:`toksmith.train`.
    """
    if extensions is not None:
        paths_or_texts = _with_extensions(paths_or_texts, extensions)
    tok = train_preset(PRESET, paths_or_texts, vocab_size, threads=threads, progress=progress,
                       text_field=text_field, errors=errors, name=name)
    return CodeTokenizer(tok)


def _with_extensions(source: Any, extensions: Sequence[str]) -> Any:
    items = [source] if isinstance(source, (str, os.PathLike)) else source
    if not isinstance(items, (list, tuple)) or not all(isinstance(p, (str, os.PathLike)) for p in items):
        raise TypeError("extensions= needs paths_or_texts to be a path or a list of paths")
    out: List[Any] = []
    for p in items:
        if not os.path.exists(p):
            raise FileNotFoundError(f"extensions= applies to files and folders: {str(p)[:80]!r} is neither "
                                    "(to train on texts, leave extensions out)")
        out.extend(collect_code_corpus(p, extensions) if os.path.isdir(p) else [p])
    return out


def _ids_list(ids: Any, what: str, n_vocab: int) -> List[int]:
    if isinstance(ids, (str, bytes, bytearray)):
        raise TypeError(f"{what} must be a sequence of int token ids, not {type(ids).__name__}")
    if hasattr(ids, "tolist") and not isinstance(ids, list):
        ids = ids.tolist()
    try:
        out = list(ids)
    except TypeError:
        raise TypeError(f"{what} must be a sequence of int token ids, not {type(ids).__name__}") from None
    for i in out:
        if isinstance(i, bool) or not isinstance(i, int):
            raise TypeError(f"{what} must hold int token ids, not {type(i).__name__} ({i!r})")
        if not 0 <= i < n_vocab:
            raise ValueError(f"{what}: token id {i} is out of range for a vocabulary of {n_vocab} ids")
    return out


class CodeTokenizer(PresetTokenizer):
    """The Cromwell interface over a toksmith :class:`~toksmith.Tokenizer`.

    ``CodeTokenizer(tok)`` needs ``tok`` to have the eight special tokens of
    :data:`SPECIAL_TOKENS` (at any ids; ValueError naming the missing ones otherwise). The
    underlying tokenizer is :attr:`tokenizer`; :attr:`special_ids` maps each name to its id.
    :meth:`load` and :meth:`save` take a file, or a folder holding ``tokenizer.json``.
    """

    PRESET_NAME = "Cromwell"
    REQUIRED_SPECIALS = SPECIAL_TOKENS
    SPECIALS_SPEC = dict(PRESET.special_token_spec())

    def __init__(self, tokenizer: Tokenizer) -> None:
        super().__init__(tokenizer)
        self.special_ids: Dict[str, int] = {s: self._all_specials[s] for s in SPECIAL_TOKENS}
        self.pad_id, self.eos_id, self.bos_id = (self.special_ids[s] for s in (PAD, EOS, BOS))
        self.file_id, self.file_end_id = self.special_ids[FILE], self.special_ids[FILE_END]
        self.edit_start_id, self.edit_end_id = self.special_ids[EDIT_START], self.special_ids[EDIT_END]
        self.delete_id = self.special_ids[DELETE]

    @property
    def n_vocab(self) -> int:
        """Largest token id + 1."""
        return self.tokenizer.n_vocab

    def get_vocab_size(self) -> int:
        return self.tokenizer.n_vocab

    # ------------------------------------------------------------------ encode / decode

    def encode(self, text: str, *, bos: bool = False, eos: bool = False) -> List[int]:
        """Token ids of ``text``, all of it as text: a source file that contains ``<EOS>`` or
        ``<FILE>`` gets the ids of those characters, never the special tokens (those come only
        from the framing methods, or from ``bos``/``eos``)."""
        ids = self.tokenizer.encode_ordinary(text)
        if bos:
            ids.insert(0, self.bos_id)
        if eos:
            ids.append(self.eos_id)
        return ids

    def encode_batch(self, texts: Sequence[str], *, threads: Optional[int] = None) -> List[List[int]]:
        """:meth:`encode` of each text, on ``threads`` threads (default: all cores)."""
        return self.tokenizer.encode_ordinary_batch(texts, threads=threads)

    def decode(self, ids: Sequence[int], *, skip_special_tokens: bool = False) -> str:
        """The text of ``ids`` (special tokens by name unless ``skip_special_tokens``, invalid
        UTF-8 as U+FFFD)."""
        return self.tokenizer.decode(ids, skip_special_tokens=skip_special_tokens)

    def decode_batch(self, batch: Sequence[Sequence[int]], *, threads: Optional[int] = None,
                     skip_special_tokens: bool = False) -> List[str]:
        return self.tokenizer.decode_batch(batch, threads=threads, skip_special_tokens=skip_special_tokens)

    # ------------------------------------------------------------------ framing

    def encode_file(self, file_path: str, file_content: str) -> List[int]:
        """``<FILE> path </FILE> content``: one file with its path header (the seed's
        ``<FILE=path>``)."""
        for value, what in ((file_path, "file_path"), (file_content, "file_content")):
            if not isinstance(value, str):
                raise TypeError(f"{what} must be a str, not {type(value).__name__}")
        if not file_path:
            raise ValueError("file_path must not be empty")
        enc = self.tokenizer.encode_ordinary
        return [self.file_id, *enc(file_path), self.file_end_id, *enc(file_content)]

    def tokenize_file_with_edit(self, file_path: str, file_content: str, edit_instruction: str) -> List[int]:
        """``<FILE> path </FILE> content <EDIT_START> edit <EDIT_END>`` (seed 000, 5.1).

        ``edit_instruction`` is what goes in the edit region: an instruction when building a
        prompt, the new content (or ``<DELETE>``'s text, see :meth:`encode_delete`) when
        building a training target. Texts are encoded as text: markers inside them stay text.
        """
        if not isinstance(edit_instruction, str):
            raise TypeError(f"edit_instruction must be a str, not {type(edit_instruction).__name__}")
        ids = self.encode_file(file_path, file_content)
        ids.append(self.edit_start_id)
        ids.extend(self.tokenizer.encode_ordinary(edit_instruction))
        ids.append(self.edit_end_id)
        return ids

    def encode_delete(self, file_path: str, file_content: str) -> List[int]:
        """The frame of deleting ``file_content``: ``... <EDIT_START> <DELETE> <EDIT_END>``."""
        ids = self.encode_file(file_path, file_content)
        ids.extend((self.edit_start_id, self.delete_id, self.edit_end_id))
        return ids

    def parse_edit_output(self, tokens: Sequence[int]) -> Dict[str, Any]:
        """Read an edit frame back from ids (seed 000, 5.2), for example a model's output.

        Returns ``{"file_path", "old_content", "new_content", "edit_type", "complete"}``:

        * ``file_path``: the text between ``<FILE>`` and ``</FILE>``, or None when the ids have
          no ``<FILE>`` before ``<EDIT_START>`` (ids before ``<FILE>`` are not part of the frame);
        * ``old_content``: the text between the header (or the start) and ``<EDIT_START>``;
        * ``new_content``: the text between ``<EDIT_START>`` and ``<EDIT_END>``, without
          ``<DELETE>`` markers;
        * ``edit_type``: ``"delete"`` when the edit region holds ``<DELETE>``, else
          ``"insert"`` when the old content is blank, else ``"replace"``;
        * ``complete``: False when the ids end before ``<EDIT_END>`` (a truncated output:
          ``new_content`` is what there is).

        The ids end at the first ``<EOS>``; ``<PAD>`` and ``<BOS>`` are dropped. A frame
        without ``<EDIT_START>``, or with ``<FILE>`` not closed by ``</FILE>``, raises
        ValueError.
        """
        ids = _ids_list(tokens, "tokens", self.tokenizer.n_vocab)
        if self.eos_id in ids:
            ids = ids[: ids.index(self.eos_id)]
        ids = [i for i in ids if i != self.pad_id and i != self.bos_id]
        if self.edit_start_id not in ids:
            raise ValueError("parse_edit_output: the ids hold no <EDIT_START> token: not an edit frame "
                             "(build one with tokenize_file_with_edit)")
        edit_at = ids.index(self.edit_start_id)
        file_path: Optional[str] = None
        body_at = 0
        if self.file_id in ids[:edit_at]:
            file_at = ids.index(self.file_id)
            try:
                end_at = ids.index(self.file_end_id, file_at + 1, edit_at)
            except ValueError:
                raise ValueError("parse_edit_output: the <FILE> header is not closed by </FILE> before "
                                 "<EDIT_START>") from None
            file_path = self.tokenizer.decode(ids[file_at + 1:end_at])
            body_at = end_at + 1
        region = ids[edit_at + 1:]
        complete = self.edit_end_id in region
        if complete:
            region = region[: region.index(self.edit_end_id)]
        deleted = self.delete_id in region
        old_content = self.tokenizer.decode(ids[body_at:edit_at])
        new_content = self.tokenizer.decode([i for i in region if i != self.delete_id])
        if deleted:
            edit_type = "delete"
        elif not old_content.strip():
            edit_type = "insert"
        else:
            edit_type = "replace"
        return {"file_path": file_path, "old_content": old_content, "new_content": new_content,
                "edit_type": edit_type, "complete": complete}


def _code_tokenizer(tokenizer: Union[Tokenizer, CodeTokenizer]) -> CodeTokenizer:
    return tokenizer if isinstance(tokenizer, CodeTokenizer) else CodeTokenizer(tokenizer)


def tokenize_file_with_edit(file_path: str, file_content: str, edit_instruction: str,
                            tokenizer: Union[Tokenizer, CodeTokenizer]) -> List[int]:
    """The seed's function: :meth:`CodeTokenizer.tokenize_file_with_edit` with ``tokenizer``
    (a :class:`CodeTokenizer` or a :class:`~toksmith.Tokenizer` with the eight special tokens)."""
    return _code_tokenizer(tokenizer).tokenize_file_with_edit(file_path, file_content, edit_instruction)


def parse_edit_output(tokens: Sequence[int], tokenizer: Union[Tokenizer, CodeTokenizer]) -> Dict[str, Any]:
    """The seed's function: :meth:`CodeTokenizer.parse_edit_output` with ``tokenizer``."""
    return _code_tokenizer(tokenizer).parse_edit_output(tokens)


__all__ = ["SPECIAL_TOKENS", "DEFAULT_VOCAB_SIZE", "DEFAULT_EXTENSIONS", "CodeTokenizer", "train",
           "collect_code_corpus", "tokenize_file_with_edit", "parse_edit_output"]
