"""Document readers for :func:`toksmith.tokenize_dataset`: the one corpus reader of
:mod:`toksmith.documents`, under the names this module had."""

from __future__ import annotations

from ..documents import DocumentSource, iter_documents_of, kind_of, output_stem

__all__ = ["DocumentSource", "iter_documents_of", "kind_of", "output_stem"]
