"""File-system paths as the public entry points take them (one check shared by all of them).

A ``str`` path holding a character the file-system encoding cannot store (a lone surrogate such
as ``"\\ud800"``: on POSIX only ``"\\udc80"``..``"\\udcff"``, the ``surrogateescape`` form of
undecodable bytes, can be stored) fails deep inside ``open()`` or ``os.stat()`` with a bare
``UnicodeEncodeError`` that names no file, and ``os.path.exists``/``isdir`` quietly answer
False for it. :func:`fspath` refuses it up front with a ValueError that names the path.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Union, overload


def check_encodable(path: str) -> str:
    """``path`` unchanged, or ValueError when the file-system encoding cannot encode it."""
    try:
        os.fsencode(path)
    except UnicodeEncodeError as e:
        raise ValueError(
            f"the path {path!r} cannot be encoded for the file system ({sys.getfilesystemencoding()}): "
            f"{path[e.start : e.end]!r} at index {e.start} is not a character a file name can hold (a lone "
            f"surrogate?); pass a str of valid characters (os.fsdecode(name_bytes) turns a "
            f"file name read as bytes into one)"
        ) from None
    return path


@overload
def fspath(path: Union[str, "os.PathLike[str]"]) -> str: ...
@overload
def fspath(path: Union[bytes, "os.PathLike[bytes]"]) -> bytes: ...
@overload
def fspath(path: Any) -> Any: ...
def fspath(path: Any) -> Union[str, bytes]:
    """``os.fspath(path)`` (TypeError for what is no path), with a ``str`` checked by
    :func:`check_encodable` (ValueError naming the path when it cannot be a file name)."""
    p = os.fspath(path)
    if isinstance(p, str):
        check_encodable(p)
    return p


__all__ = ["check_encodable", "fspath"]
