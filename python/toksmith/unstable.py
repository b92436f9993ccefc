"""``encode_with_unstable``: the tokens of a prompt that more text cannot change, and every way
the rest could continue (tiktoken's API of the same name, for completion-style prompting); and
``encode_bytes`` (native) / ``encode_single_piece``, which share its unstable end and plain
merging.

The end of an encoding is unstable: appending text can merge the last piece with what follows
(``"hello fan"`` + ``"ta"`` is ``"hello"``, ``" fanta"``, not ``" fan"``, ``"ta"``). The last
piece's tokens (and a run of whitespace-only tokens before it) are therefore taken off, and the
completions list every token sequence that starts with those bytes:

1. each token whose bytes start with the unstable bytes;
2. for each split of the unstable bytes into a prefix and a suffix, each token that starts with
   the suffix, appended to the prefix and encoded, cut once it covers the unstable bytes;
3. when the unstable bytes end with a whitespace character, the bytes before it and that
   character merged separately.

This reproduces tiktoken's algorithm step for step (the reference in the tests), including its
use of plain byte-pair merging (no whole-token lookup) on byte strings that are not UTF-8.
"""

from __future__ import annotations

import bisect
import heapq
import re
import struct
from typing import Any, Dict, List, Optional, Set, Tuple

from ._args import fix_surrogates as _fix_surrogates
from .pretokenize import split

#: what the functions here take: a toksmith.Tokenizer (this module is below it: it reads the
#: tokenizer's tables and calls its encode methods, and the Tokenizer calls these functions)
TokenizerLike = Any

# Unicode White_Space (what Rust's char::is_whitespace tests; str.isspace differs on U+001C-001F)
_WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_SPACE_BYTES = frozenset(b" \n\t")


class _Tables:
    """What the completions need, built once per tokenizer: the token bytes sorted, and the id
    of each."""

    def __init__(self, tok: "TokenizerLike") -> None:
        ranks = tok.mergeable_ranks()
        self.sorted_bytes: List[bytes] = sorted(ranks)
        self.ids: Dict[bytes, int] = ranks
        #: the longest token's length: no token starts with a longer suffix
        self.max_len: int = max(map(len, ranks), default=0)

    def starting_with(self, prefix: bytes) -> List[bytes]:
        out = []
        i = bisect.bisect_left(self.sorted_bytes, prefix)
        while i < len(self.sorted_bytes) and self.sorted_bytes[i].startswith(prefix):
            out.append(self.sorted_bytes[i])
            i += 1
        return out


def byte_pair_encode(piece: bytes, ranks: Dict[bytes, int]) -> List[int]:
    """Plain byte-pair merging of ``piece``: the adjacent pair whose concatenation has the lowest
    rank first, the leftmost on ties, without looking the whole piece up first (tiktoken's
    ``byte_pair_encode``). A heap of candidate pairs over a linked list of parts keeps long
    pieces at O(n log n)."""
    n = len(piece)
    if n == 1:
        return [ranks[piece]]
    nxt = list(
        range(1, n + 1)
    )  # part starting at i ends at nxt[i]; parts are linked by their starts
    prv = list(range(-1, n - 1))
    alive = [True] * n
    heap: List[Tuple[int, int]] = []
    for i in range(n - 1):
        r = ranks.get(piece[i : i + 2])
        if r is not None:
            heap.append((r, i))
    heapq.heapify(heap)

    def pair_rank(i: int) -> Optional[int]:
        j = nxt[i]
        return ranks.get(piece[i : nxt[j]]) if j < n else None

    while heap:
        r, i = heapq.heappop(heap)
        if not alive[i] or nxt[i] >= n or pair_rank(i) != r:
            continue  # stale: one of the two parts has changed since
        j = nxt[i]
        alive[j] = False
        nxt[i] = nxt[j]
        if nxt[i] < n:
            prv[nxt[i]] = i
        for k in (prv[i], i):
            if k >= 0:
                q = pair_rank(k)
                if q is not None:
                    heapq.heappush(heap, (q, k))
    out = []
    i = 0
    while i < n:
        out.append(ranks[piece[i : nxt[i]]])
        i = nxt[i]
    return out


def _tables(tok: "TokenizerLike") -> _Tables:
    tables = tok._unstable_tables
    if tables is None:
        tables = tok._unstable_tables = _Tables(tok)
    return tables


def _last_char(data: bytes) -> Tuple[Optional[str], int]:
    """The last UTF-8 character of ``data`` and its length (None, 1 when the end is not one)."""
    for k in range(1, min(4, len(data)) + 1):
        try:
            ch = data[-k:].decode("utf-8")
        except UnicodeDecodeError:
            continue
        if len(ch) == 1:
            return ch, k
        break
    return None, 1


def _last_segment(tok: "TokenizerLike", text: str, tokens: List[int], allowed: Set[str]) -> str:
    """The text after the last allowed special (or pinned) token: the part the encoder split
    with the pattern last. Only the added tokens that the encoding holds can match (a longer
    one matching in their place would be there instead), so the search looks for those alone
    (a regex of 20,000 special tokens took 1.5 s to build and scanned slowly)."""
    present = set(tokens)
    names = [t for t, i in tok._special_tokens.items() if i in present and t in allowed]
    names += [t for t, i in tok._pinned_tokens.items() if i in present]
    names.sort(key=len, reverse=True)
    if not names:
        return text
    end = 0
    for m in re.finditer("|".join(map(re.escape, names)), text):  # leftmost, longest first
        end = m.end()
    return text[end:]


def _split_unstable(
    tok: "TokenizerLike", text: str, tokens: List[int], allowed: Set[str]
) -> Tuple[List[int], bytes]:
    """``tokens`` (the encoding of ``text``) cut before its unstable end: the last piece's tokens,
    with the whitespace-only tokens before them when that piece is whitespace (cl100k's
    ``\\s*[\\r\\n]+`` can turn ``"\\n"`` + ``" "`` into ``"\\n \\n"``); and the bytes cut off."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: encoded as U+FFFD, as encode() does
        text = _fix_surrogates(text)
    segment = _last_segment(tok, text, tokens, allowed)
    pieces = split(segment, tok.pattern) if segment else []
    if not pieces:
        return tokens, b""
    token_bytes = tok._core.token_bytes
    # The last piece's tokens are the last tokens whose bytes add up to the piece's: counted
    # from the bytes, not by encoding the piece alone, which a pattern with look-around can
    # split otherwise (under (?<= )\w+|\w|\s, "ab" after a space is one piece, alone two).
    n, size, want = 0, 0, len(pieces[-1].encode("utf-8"))
    while size < want:
        n += 1
        size += len(token_bytes(tokens[-n]))
    added = tok._special_ids | frozenset(tok._pinned_tokens.values())

    def all_space(i: int) -> bool:
        # tiktoken looks the bytes up among the mergeable tokens only: a special (or pinned)
        # token is never whitespace here
        return i not in added and all(b in _SPACE_BYTES for b in token_bytes(i))

    if all_space(tokens[-n]):
        while n < len(tokens) and all_space(tokens[-n - 1]):
            n += 1
    return tokens[:-n], tok.decode_bytes(tokens[-n:])


def encode_bytes(tok: "TokenizerLike", data: bytes) -> List[int]:
    """See :meth:`toksmith.Tokenizer.encode_bytes`."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"encode_bytes needs bytes, not {type(data).__name__}")
    # native (toksmith_core's Encoder::encode_bytes): tiktoken's semantics, merged in Rust
    return tok._core.encode_bytes(bytes(data))


def encode_single_piece(tok: "TokenizerLike", piece: bytes) -> List[int]:
    """See :meth:`toksmith.Tokenizer._encode_single_piece`."""
    if isinstance(piece, str):
        try:
            piece = piece.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValueError(
                f"the piece {piece!r} holds a lone surrogate (U+{ord(piece[e.start]):04X} at index "
                f"{e.start}) that UTF-8 cannot encode; pass bytes or a valid str"
            ) from None
    if not isinstance(piece, (bytes, bytearray)):
        raise TypeError(f"the piece must be str or bytes, not {type(piece).__name__}")
    piece = bytes(piece)
    if not piece:
        return []
    ranks = _tables(tok).ids
    whole = ranks.get(piece)
    return [whole] if whole is not None else byte_pair_encode(piece, ranks)


def encode_with_unstable(
    tok: "TokenizerLike", text: str, allowed_special, disallowed_special
) -> Tuple[List[int], List[List[int]]]:
    """See :meth:`toksmith.Tokenizer.encode_with_unstable`."""
    # all the ids: a truncation or padding would change the stable part
    tokens = tok._untruncated().encode(
        text, allowed_special=allowed_special, disallowed_special=disallowed_special
    )
    template = getattr(tok, "template", None)
    if template is not None:  # the ids of the text only: a post-processor's tokens go around it
        tokens = tokens[len(template[0]) : len(tokens) - len(template[1])]
    allowed = set(tok._special_tokens) if allowed_special == "all" else set(allowed_special)
    tokens, unstable = _split_unstable(tok, text, tokens, allowed)
    if not unstable:
        return tokens, []
    token_bytes, decode_bytes = tok._core.token_bytes, tok._core.decode_bytes
    tables = _tables(tok)
    ranks = tables.ids
    completions: Set[Tuple[int, ...]] = set()
    for t in tables.starting_with(unstable):
        completions.add((ranks[t],))
    # only a suffix no longer than the longest token can start a token: the splits before those
    # add nothing (and slicing every split of a long unstable end took quadratic time: 1 MB of
    # "a" ran for minutes)
    for i in range(max(1, len(unstable) - tables.max_len), len(unstable)):
        prefix, suffix = unstable[:i], unstable[i:]
        for t in tables.starting_with(suffix):
            possibility = prefix + t
            try:
                encoded = tok.encode_ordinary(possibility.decode("utf-8"))
            except UnicodeDecodeError:
                encoded = byte_pair_encode(possibility, ranks)
            # cut once it covers the unstable bytes: tokens are dropped from the end while the
            # rest still covers them (only the few past them are looked at; counting from the
            # start, a token at a time, took 14 s for 1,000 spaces, tiktoken 3.7 s)
            end, covered = len(encoded), len(decode_bytes(encoded))
            while end and covered - len(token_bytes(encoded[end - 1])) >= len(unstable):
                end -= 1
                covered -= len(token_bytes(encoded[end]))
            completions.add(tuple(encoded[:end]))
    if len(unstable) > 1:
        ch, size = _last_char(unstable)
        if len(unstable) - size > 0 and ch is not None and ch in _WHITE_SPACE:
            reencoded = byte_pair_encode(unstable[:-size], ranks) + byte_pair_encode(
                unstable[-size:], ranks
            )
            completions.add(tuple(reencoded))
    # sorted by their ids as big-endian 4-byte strings (the same order as the tuples, compared
    # with memcmp: the tuples of a long unstable end share long prefixes, slow to compare)
    return tokens, [
        list(c) for c in sorted(completions, key=lambda c: struct.pack(f">{len(c)}I", *c))
    ]
