"""Reading nanochat's ``tokenizer.pkl`` without running code from the file.

nanochat's ``RustBPETokenizer.save`` pickles its ``tiktoken.Encoding``. tiktoken pickles an
Encoding through ``__getstate__``: a dict ``{"name", "pat_str", "mergeable_ranks",
"special_tokens"}`` (str, str, ``dict[bytes, int]``, ``dict[str, int]``), or only the
encoding's name when it is one of tiktoken's registered encodings (``from_pretrained``). So the
whole file is one reference to ``tiktoken.core.Encoding`` plus plain data; with the older
pickle protocols also ``copyreg._reconstructor`` + ``builtins.object`` (protocols 0 and 1)
and ``_codecs.encode`` (how protocols 0-2 write bytes).

:func:`read_encoding_pickle` unpickles with a :class:`pickle.Unpickler` whose ``find_class``
gives, for exactly those names, stand-ins defined here that only store or convert plain data
(no tiktoken is imported, nothing of the file's choosing is called); any other global (say
``os.system`` or ``builtins.eval``) is refused before anything is called, and persistent ids
are refused too. The state is then checked (types of every key and value) and built as a
toksmith :class:`~toksmith.Tokenizer` with the same ids.
"""

from __future__ import annotations

import io
import os
import pickle
from typing import Any, Callable, Dict, Tuple

from ... import registry
from ..._paths import fspath
from ...errors import TokenizerFileError
from ...tokenizer import Tokenizer

#: the name nanochat gives the pickle in its tokenizer folder
PICKLE_NAME = "tokenizer.pkl"


class PickledEncoding:
    """The state of a pickled ``tiktoken.Encoding``, as plain data (never a tiktoken object).

    The attribute names are tiktoken's, so :func:`toksmith.from_tiktoken` reads it as it reads
    an Encoding. ``registered`` is set instead when the pickle holds only the name of one of
    tiktoken's own encodings.
    """

    name: str = ""
    _pat_str: str = ""
    _mergeable_ranks: Dict[bytes, int]
    _special_tokens: Dict[str, int]
    registered: str = ""
    #: set by __setstate__ (a pickle's NEWOBJ makes the object without calling __init__)
    _state_set: bool = False

    def __init__(self) -> None:  # takes no arguments: a pickle cannot pass it any
        self._mergeable_ranks = {}
        self._special_tokens = {}
        self._state_set = False

    def __setstate__(self, state: Any) -> None:
        if self._state_set:
            raise pickle.UnpicklingError("the Encoding's state is given twice")
        self._state_set = True
        if isinstance(state, str):
            self.registered = state
            return
        if not isinstance(state, dict):
            raise pickle.UnpicklingError(
                f"a tiktoken Encoding's state is a dict or a name, not {type(state).__name__}"
            )
        want = {"name", "pat_str", "mergeable_ranks", "special_tokens"}
        if set(state) != want:
            raise pickle.UnpicklingError(
                f"a tiktoken Encoding's state has the keys {sorted(want)}, not {sorted(map(str, state))}"
            )
        name, pat, ranks, specials = (
            state["name"],
            state["pat_str"],
            state["mergeable_ranks"],
            state["special_tokens"],
        )
        if not isinstance(name, str) or not isinstance(pat, str):
            raise pickle.UnpicklingError("the Encoding's name and pat_str must be str")
        _check_table(ranks, bytes, "mergeable_ranks")
        _check_table(specials, str, "special_tokens")
        self.name, self._pat_str = name, pat
        self._mergeable_ranks, self._special_tokens = ranks, specials


def _check_table(table: Any, key_type: type, what: str) -> None:
    if type(table) is not dict:
        raise pickle.UnpicklingError(f"the Encoding's {what} must be a dict")
    for k, v in table.items():
        if type(k) is not key_type or type(v) is not int:
            raise pickle.UnpicklingError(
                f"the Encoding's {what} maps {key_type.__name__} to int; it holds "
                f"{type(k).__name__} {k!r:.40} -> {type(v).__name__}"
            )


def _reconstructor(cls: Any, base: Any, state: Any) -> PickledEncoding:
    """copyreg._reconstructor, for protocols 0 and 1: only ever builds a PickledEncoding."""
    if cls is not PickledEncoding or base is not object or state is not None:
        raise pickle.UnpicklingError("copyreg._reconstructor is only accepted for the Encoding")
    return PickledEncoding()


def _latin1(text: Any, encoding: Any = None) -> bytes:
    """_codecs.encode as protocols 0-2 use it for bytes: ``encode(str, "latin1")``."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError("_codecs.encode is only accepted as encode(str, 'latin1')")
    return text.encode("latin1")


_ALLOWED: Dict[Tuple[str, str], Callable[..., Any]] = {
    ("tiktoken.core", "Encoding"): PickledEncoding,
    ("copyreg", "_reconstructor"): _reconstructor,
    ("builtins", "object"): object,
    ("_codecs", "encode"): _latin1,
    # protocols 0-2 write Python 2's module names (pickle's fix_imports)
    ("copy_reg", "_reconstructor"): _reconstructor,
    ("__builtin__", "object"): object,
}


class _EncodingUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        try:
            return _ALLOWED[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(
                f"refused: the pickle calls {module}.{name}, and a nanochat tokenizer.pkl holds "
                "only a tiktoken Encoding's data (nothing from the file is run)"
            ) from None

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError("refused: the pickle uses persistent ids")


def read_encoding_pickle_bytes(raw: bytes, where: str = "<bytes>") -> Tokenizer:
    """:func:`read_encoding_pickle` on the bytes of a file (``where`` names it in messages)."""
    try:
        obj = _EncodingUnpickler(io.BytesIO(raw)).load()
    except (pickle.UnpicklingError, EOFError, TypeError, ValueError, AttributeError) as e:
        # TypeError/ValueError: a stand-in called with arguments it does not take, bad opcodes
        raise TokenizerFileError(f"{where}: not a pickled tiktoken Encoding: {e}") from None
    except RecursionError:
        raise TokenizerFileError(
            f"{where}: not a pickled tiktoken Encoding (nested too deeply)"
        ) from None
    if type(obj) is not PickledEncoding or not obj._state_set:
        raise TokenizerFileError(
            f"{where}: not a pickled tiktoken Encoding (it holds {type(obj).__name__})"
        )
    if obj.registered:
        # tiktoken pickles its own encodings by name: read that one from tiktoken's cache (an
        # OSError says how to get it when it is not there)
        try:
            return registry.get_encoding(obj.registered)
        except ValueError as e:
            raise TokenizerFileError(f"{where}: a pickled tiktoken Encoding by name: {e}") from None
    try:
        return registry.from_tiktoken(obj, name=obj.name or None)
    except (TypeError, ValueError) as e:
        raise TokenizerFileError(
            f"{where}: the pickled Encoding is not a valid tokenizer: {e}"
        ) from None


def read_encoding_pickle(path: Any) -> Tokenizer:
    """The tokenizer of a pickled ``tiktoken.Encoding`` (nanochat's ``tokenizer.pkl``), read
    without tiktoken and without running anything from the file (see the module's
    documentation); :class:`~toksmith.TokenizerFileError` for any other pickle. A folder is
    read as the ``tokenizer.pkl`` inside it."""
    p = os.fsdecode(fspath(path))
    if os.path.isdir(p):
        p = os.path.join(p, PICKLE_NAME)
    with open(p, "rb") as f:
        raw = f.read()
    return read_encoding_pickle_bytes(raw, p)


__all__ = ["PICKLE_NAME", "PickledEncoding", "read_encoding_pickle", "read_encoding_pickle_bytes"]
