//! BPE encoding with tiktoken's semantics.
//!
//! A piece of text is encoded by repeatedly merging the adjacent pair of tokens whose
//! concatenation has the lowest rank (id), leftmost first, until no adjacent pair is a token.
//! Three paths give the same result:
//! * whole-piece lookup: most pieces are a single token, found with one hash lookup;
//! * `bpe_small`: tiktoken's O(n·m) scan for short pieces (fast, no heap);
//! * `bpe_long`: rank buckets swept in position order over a linked list for long pieces, so a
//!   10 MB run of one letter stays near-linear; pieces of 128 KB and more are merged in 32 KB
//!   chunks joined by an exact local check (`merge_chunked`), so the work stays in the cache.
//!
//! Performance notes (designs tried; see BENCHMARKS.md for numbers):
//! * merge-table lookups on (left id, right id) instead of byte slices are not exact with
//!   tiktoken rank files (a token can be the concatenation of pairs that were never merged),
//!   so lookups are on byte slices of the piece (no allocation: adjacent tokens are contiguous).
//! * one 10 MB piece merged in one go needs 120 MB of records, walked once per rank bucket:
//!   cache and page-fault bound (10 MB cost 12-13x 1 MB in a fresh process). Merging 32 KB
//!   chunks and checking each junction pair brought that to 10x (gpt2, 10 MB of one letter in a
//!   fresh process: 476 -> 315 ms); 16, 64 and 128 KB chunks were no better, and on real
//!   vocabularies a junction needs a window of 2-7 bytes re-merged, if any.

use crate::error::{Error, Result};
use crate::mem::prefetch;
use self::piece_cache::PieceCache;
use crate::pretokenize::Pretokenizer;
use crate::added::{self, AddedKind};
use crate::vocab::Vocab;
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering};

pub mod piece_cache;

// Paths from before the added tokens moved to their own module.
pub use crate::added::{may_span_a_safe_cut, AddedMatcher};

/// Pieces at least this long use `bpe_long`.
pub const HEAP_THRESHOLD: usize = 128;

/// In [`Encoder::encode_parts`], a buffer this long with no safe cut gets room for the whole
/// text at once.
pub const PARTS_RESERVE_AT: usize = 1 << 20;

/// In a blocked encode, pieces at least this long hand their ids over in blocks too.
const BLOCKED_PIECE_MIN: usize = 1 << 16;

#[inline(always)]
fn rank_below(vocab: &Vocab, bytes: &[u8], limit: u32) -> u32 {
    match vocab.rank(bytes) {
        Some(r) if r < limit => r,
        _ => u32::MAX,
    }
}

/// Reusable buffers for `bpe_small`, grown as needed and never cleared (clearing arrays on
/// every call cost more than the merge of a short word).
#[derive(Default)]
pub struct Scratch {
    start: Vec<u32>,
    rank: Vec<u32>,
    id: Vec<u32>,
    long: LongWork,
}

/// tiktoken-style merge of a piece (meant for short ones: O(n·m)). Appends the ids to `out`.
///
/// Tokens are kept in three arrays, compacted after each merge (no allocation, no `memmove`
/// calls): `start[i]` (byte offset of token i), `rank[i]` (rank of token i + token i+1, `MAX` if
/// none) and `id[i]`. A merged token's id is the rank of the pair that made it, so no lookup is
/// needed at the end; the first round of pair ranks comes from the two-byte table.
pub fn bpe_small(
    vocab: &Vocab,
    piece: &[u8],
    limit: u32,
    scratch: &mut Scratch,
    out: &mut Vec<u32>,
) {
    let n = piece.len();
    let byte_ids = vocab.byte_ids();
    if n < 2 {
        out.extend(piece.iter().map(|&b| byte_ids[b as usize]));
        return;
    }
    if scratch.start.len() <= n {
        let size = (n + 1).max(HEAP_THRESHOLD + 1);
        scratch.start.resize(size, 0);
        scratch.rank.resize(size, 0);
        scratch.id.resize(size, 0);
    }
    let start = &mut scratch.start[..=n];
    let rank = &mut scratch.rank[..=n];
    let id = &mut scratch.id[..=n];
    for i in 0..n {
        start[i] = i as u32;
        id[i] = byte_ids[piece[i] as usize];
    }
    start[n] = n as u32;
    for i in 0..n - 1 {
        let r = vocab.pair_table[((piece[i] as usize) << 8) | piece[i + 1] as usize];
        rank[i] = if r < limit { r } else { u32::MAX };
    }
    // The first merges mostly join a byte pair with a neighbouring byte: the lookups of the
    // 3-byte spans come next, so their table lines are requested now, all at once.
    if n <= 64 {
        for w in piece.windows(3) {
            vocab.prefetch_short(w);
        }
        for w in piece.windows(4) {
            vocab.prefetch_short(w);
        }
    }
    let mut m = n; // number of tokens; rank[m - 1] is MAX
    rank[m - 1] = u32::MAX;
    let span = |start: &[u32], a: usize, b: usize| &piece[start[a] as usize..start[b] as usize];
    loop {
        let mut best = u32::MAX;
        let mut at = 0usize;
        for (i, &r) in rank[..m - 1].iter().enumerate() {
            if r < best {
                best = r;
                at = i;
            }
        }
        if best == u32::MAX {
            break;
        }
        // Merge token `at` with token `at + 1`: the new token's id is the pair's rank.
        id[at] = best;
        for k in at + 1..m {
            start[k] = start[k + 1];
            id[k] = id[k + 1];
            rank[k] = rank[k + 1];
        }
        m -= 1;
        rank[m - 1] = u32::MAX;
        if at + 1 < m {
            rank[at] = rank_below(vocab, span(start, at, at + 2), limit);
        }
        if at > 0 {
            rank[at - 1] = rank_below(vocab, span(start, at - 1, at + 1), limit);
        }
    }
    out.extend_from_slice(&id[..m]);
}

/// Merge for long pieces, near-linear: pairs are kept in buckets by rank and each bucket is
/// processed in position order (tiktoken merges the lowest rank first, leftmost on ties).
///
/// Tokens form a linked list over byte offsets. A merge at rank `r` never creates another
/// pair of rank `r` (the new pair's bytes are longer than token `r`'s), so a bucket, once
/// sorted, is swept left to right. New pairs go to their own buckets; if one has a rank below
/// the bucket being swept (possible only in unusual vocabularies), the sweep stops and the
/// rest of the bucket is put back, so the global order is always respected. Entries whose pair
/// changed since they were queued are skipped. Sequential sweeps keep memory access local:
/// this replaced a binary heap that was 2-3x slower and degraded on 10 MB inputs.
pub fn bpe_long(vocab: &Vocab, piece: &[u8], limit: u32, out: &mut Vec<u32>) {
    bpe_long_with(
        vocab,
        piece,
        limit,
        out,
        usize::MAX,
        &mut |_| {},
        &mut Scratch::default(),
    )
}

/// [`bpe_long`] for a piece of any length inside a blocked encode: whenever `out` holds
/// `block` ids, `flush` is called with it (and may empty it), so a 10 MB piece does not need
/// a 40 MB id vector on top of the caller's result.
pub fn bpe_long_blocks(
    vocab: &Vocab,
    piece: &[u8],
    out: &mut Vec<u32>,
    block: usize,
    flush: &mut dyn FnMut(&mut Vec<u32>),
    scratch: &mut Scratch,
) {
    bpe_long_with(vocab, piece, u32::MAX, out, block, flush, scratch)
}

fn bpe_long_with(
    vocab: &Vocab,
    piece: &[u8],
    limit: u32,
    out: &mut Vec<u32>,
    block: usize,
    flush: &mut dyn FnMut(&mut Vec<u32>),
    scratch: &mut Scratch,
) {
    if piece.len() >= CHUNKED_MIN {
        if no_pairs(vocab, piece, limit, out, block, flush) {
            return;
        }
        let budget = 4 * piece.len();
        let done = if block == usize::MAX {
            merge_chunked(vocab, piece, limit, CHUNK, budget, scratch, out)
        } else {
            // at most one id per byte: reserved once, touched only as far as it is used
            let mut ids = crate::mem::big_vec(piece.len());
            let done = merge_chunked(vocab, piece, limit, CHUNK, budget, scratch, &mut ids);
            if done {
                extend_in_blocks(out, ids.len(), block, flush, |r, out| {
                    out.extend_from_slice(&ids[r])
                });
            }
            done
        };
        if done {
            scratch.long.trim();
            return;
        }
    }
    merge_long(
        vocab,
        piece,
        limit,
        false,
        out,
        block,
        flush,
        &mut scratch.long,
    );
    scratch.long.trim();
}

/// If no two adjacent bytes of the piece form a token (e.g. a run of spaces in GPT-2's
/// vocabulary), append the bytes' ids (the piece's tokens) and return true.
fn no_pairs(
    vocab: &Vocab,
    piece: &[u8],
    limit: u32,
    out: &mut Vec<u32>,
    block: usize,
    flush: &mut dyn FnMut(&mut Vec<u32>),
) -> bool {
    if !piece
        .windows(2)
        .all(|w| vocab.pair_table[((w[0] as usize) << 8) | w[1] as usize] >= limit)
    {
        return false;
    }
    let byte_ids = vocab.byte_ids();
    extend_in_blocks(out, piece.len(), block, flush, |r, out| {
        out.extend(piece[r].iter().map(|&b| byte_ids[b as usize]))
    });
    true
}

/// Append `n` ids, written part by part by `fill(range, out)`, calling `flush` whenever `out`
/// holds `block` ids or more.
fn extend_in_blocks(
    out: &mut Vec<u32>,
    n: usize,
    block: usize,
    flush: &mut dyn FnMut(&mut Vec<u32>),
    mut fill: impl FnMut(std::ops::Range<usize>, &mut Vec<u32>),
) {
    let step = block.clamp(1, 1 << 16);
    let mut at = 0;
    while at < n {
        let end = (at + step).min(n);
        fill(at..end, out);
        if out.len() >= block {
            flush(out);
        }
        at = end;
    }
}

/// Pieces at least this long are merged in chunks by [`merge_chunked`].
const CHUNKED_MIN: usize = 1 << 17;
/// Bytes per chunk in [`merge_chunked`]: the chunk's records (12 bytes per byte) and rank
/// buckets stay in a core's L2 cache.
const CHUNK: usize = 1 << 15;

/// Whether `[a, b]` is the BPE merge of the bytes of `a` followed by those of `b`.
fn compatible(
    vocab: &Vocab,
    limit: u32,
    (a, b): (u32, u32),
    work: &mut PairWork,
    scratch: &mut Scratch,
) -> bool {
    let key = ((a as u64) << 32) | b as u64;
    if let Some(&known) = work.known.get(&key) {
        return known;
    }
    work.bytes.clear();
    for t in [a, b] {
        let (s, len) = vocab.span(t).expect("merged ids are tokens");
        work.bytes.extend_from_slice(&vocab.flat[s..s + len]);
    }
    work.ids.clear();
    merge_any(vocab, &work.bytes, limit, scratch, &mut work.ids);
    let ok = work.ids[..] == [a, b];
    work.known.insert(key, ok);
    ok
}

/// Buffers and memo for [`compatible`] checks.
#[derive(Default)]
struct PairWork {
    known: FxHashMap<u64, bool>,
    bytes: Vec<u8>,
    ids: Vec<u32>,
}

/// Pure merge (no whole-piece lookup) of any length, in one go.
fn merge_any(vocab: &Vocab, bytes: &[u8], limit: u32, scratch: &mut Scratch, out: &mut Vec<u32>) {
    if bytes.len() < HEAP_THRESHOLD {
        bpe_small(vocab, bytes, limit, scratch, out);
    } else {
        merge_long(
            vocab,
            bytes,
            limit,
            false,
            out,
            usize::MAX,
            &mut |_| {},
            &mut scratch.long,
        );
    }
}

/// Merge a long piece chunk by chunk, appending its ids to `ids`; exact.
///
/// Why it is exact. Call `[a, b]` *compatible* when merging the bytes of `a` followed by those
/// of `b` gives `[a, b]` back. A sequence of two or more tokens spelling a text is that text's
/// merge result if and only if every adjacent pair in it is compatible:
/// * only if: a boundary of the final result is never crossed by a merge, so the merges on
///   either side of it happen as they would in that side alone (each was the lowest candidate
///   overall, so the lowest on its side); the result of a text is therefore the results of
///   its parts cut at final boundaries, and two adjacent final tokens are the result of their
///   own bytes;
/// * if: until the first merge that crosses a boundary of the sequence, each token's bytes
///   merge as they would alone (into that token); that first crossing merge, at tokens
///   `a | b`, is the lowest candidate among a superset of the candidates in the text `ab`
///   alone, whose merges run through the same states, so `ab` alone would cross too.
///
/// Each chunk is merged alone (its records fit in the cache: one 10 MB piece merged in one go
/// walks 120 MB of records once per rank), so its inner pairs are compatible. Where the pair
/// across a junction is not, a window of `a` tokens before and `b` after it is merged again,
/// and each side that meets an incompatible pair at the window's edge is doubled. Windows stay
/// small on real text (differences die out within a few tokens); a run whose token grid is
/// shifted by the junction re-merges at most the rest of its chunk. If the windows re-merged
/// add up to more than `budget` bytes, `ids` is put back and `false` returned: the caller
/// merges the piece in one go.
fn merge_chunked(
    vocab: &Vocab,
    piece: &[u8],
    limit: u32,
    chunk: usize,
    mut budget: usize,
    scratch: &mut Scratch,
    ids: &mut Vec<u32>,
) -> bool {
    let base = ids.len();
    let n = piece.len();
    let len = |t: u32| vocab.span(t).map_or(0, |(_, l)| l);
    let mut work = PairWork::default();
    let (mut part, mut window) = (Vec::new(), Vec::new());
    let mut pos = 0usize; // bytes of the piece spelled by ids[base..]
    while pos < n {
        let end = (pos + chunk).min(n);
        part.clear();
        merge_long(
            vocab,
            &piece[pos..end],
            limit,
            true,
            &mut part,
            usize::MAX,
            &mut |_| {},
            &mut scratch.long,
        );
        if ids.len() > base
            && !compatible(
                vocab,
                limit,
                (ids[ids.len() - 1], part[0]),
                &mut work,
                scratch,
            )
        {
            let have = ids.len() - base;
            let (mut a, mut b) = (1usize, 1usize);
            loop {
                let w0 = pos - ids[ids.len() - a..].iter().map(|&t| len(t)).sum::<usize>();
                let w1 = pos + part[..b].iter().map(|&t| len(t)).sum::<usize>();
                if w1 - w0 > budget {
                    ids.truncate(base);
                    return false;
                }
                budget -= w1 - w0;
                window.clear();
                merge_any(vocab, &piece[w0..w1], limit, scratch, &mut window);
                let last = window[window.len() - 1];
                let left_ok = a == have
                    || compatible(
                        vocab,
                        limit,
                        (ids[ids.len() - a - 1], window[0]),
                        &mut work,
                        scratch,
                    );
                let right_ok = b == part.len()
                    || compatible(vocab, limit, (last, part[b]), &mut work, scratch);
                if left_ok && right_ok {
                    ids.truncate(ids.len() - a);
                    ids.extend_from_slice(&window);
                    part.drain(..b);
                    break;
                }
                if !left_ok {
                    a = (2 * a).min(have);
                }
                if !right_ok {
                    b = (2 * b).min(part.len());
                }
            }
        }
        ids.extend_from_slice(&part);
        pos = end;
    }
    true
}

/// The rank-bucket merge of [`bpe_long`] over the whole piece at once. Rank buckets are found
/// through an array over the vocabulary (no hashing per push) when `dense` asks for it, for
/// pieces of [`DENSE_BUCKETS_MIN`] bytes and more, and whenever `work` already holds that array
/// for this vocabulary.
#[allow(clippy::too_many_arguments)]
fn merge_long(
    vocab: &Vocab,
    piece: &[u8],
    limit: u32,
    dense: bool,
    out: &mut Vec<u32>,
    block: usize,
    flush: &mut dyn FnMut(&mut Vec<u32>),
    work: &mut LongWork,
) {
    let n = piece.len();
    assert!(n < u32::MAX as usize, "piece too long");
    if no_pairs(vocab, piece, limit, out, block, flush) {
        return;
    }
    const NONE: u32 = u32::MAX;
    let LongWork { nodes, buckets } = work;
    nodes.clear();
    if n > nodes.capacity() {
        *nodes = crate::mem::big_vec(n);
    }
    nodes.extend((0..n as u32).map(|i| Node {
        next: i + 1,
        prev: i.wrapping_sub(1),
        rank: u32::MAX,
    }));
    let slots = vocab.n_vocab() + 1;
    let dense = dense || n >= DENSE_BUCKETS_MIN || buckets.dense.len() == slots;
    buckets.reset(dense.then_some(slots));
    for i in 0..n.saturating_sub(1) {
        let r = rank_below(vocab, &piece[i..i + 2], limit);
        nodes[i].rank = r;
        if r != u32::MAX {
            buckets.push(r, i as u32);
        }
    }
    let end = |nodes: &[Node], j: u32| {
        if (j as usize) < n {
            nodes[j as usize].next
        } else {
            n as u32
        }
    };
    let mut pushes: Vec<(u32, u32)> = Vec::new();
    while let Some((r, mut positions)) = buckets.pop_min() {
        positions.sort_unstable();
        positions.dedup();
        let mut idx = 0;
        while idx < positions.len() {
            // The positions to visit are known in advance and, in a long piece, far apart: ask
            // for the records a few entries ahead so their cache misses overlap.
            if let Some(&ahead) = positions.get(idx + PREFETCH_AHEAD) {
                prefetch(nodes.as_ptr().wrapping_add(ahead as usize));
                prefetch(piece.as_ptr().wrapping_add(ahead as usize));
            }
            let i = positions[idx];
            idx += 1;
            let node = nodes[i as usize];
            if node.next == NONE || node.rank != r {
                continue; // absorbed, or the pair starting at i changed since it was queued
            }
            let j = node.next;
            let k = end(nodes, j);
            nodes[j as usize].next = NONE;
            pushes.clear();
            let mut rr = u32::MAX;
            if (k as usize) < n {
                nodes[k as usize].prev = i;
                rr = rank_below(vocab, &piece[i as usize..end(nodes, k) as usize], limit);
                if rr != u32::MAX {
                    pushes.push((rr, i));
                }
            }
            nodes[i as usize].next = k;
            nodes[i as usize].rank = rr;
            let p = node.prev;
            if p != NONE {
                let rp = rank_below(vocab, &piece[p as usize..k as usize], limit);
                nodes[p as usize].rank = rp;
                if rp != u32::MAX {
                    pushes.push((rp, p));
                }
            }
            let mut lower = false;
            for &(rank, pos) in &pushes {
                lower |= rank < r;
                buckets.push(rank, pos);
            }
            if lower {
                // A lower rank must be merged first: put the rest of this bucket back.
                for &pos in &positions[idx..] {
                    buckets.push(r, pos);
                }
                break;
            }
        }
        buckets.recycle(positions);
    }
    let mut i = 0usize;
    while i < n {
        let j = nodes[i].next as usize;
        out.push(vocab.rank(&piece[i..j]).expect("merged parts are tokens"));
        if out.len() >= block {
            flush(out);
        }
        i = j;
    }
}

/// One record per byte offset of a long piece (next token start, previous token start, rank
/// of the pair starting here): a merge touches one record per token instead of one cache line
/// in each of three arrays. `rank` is kept current on every merge, so a queued entry is valid
/// exactly when it still matches (no lookup needed to check it).
#[derive(Clone, Copy)]
struct Node {
    next: u32,
    prev: u32,
    rank: u32,
}

/// Buffers of [`merge_long`], reused from one piece (or chunk) to the next.
#[derive(Default)]
pub struct LongWork {
    nodes: Vec<Node>,
    buckets: Buckets,
}

impl LongWork {
    /// Give back buffers grown for a piece far longer than usual (kept per thread).
    fn trim(&mut self) {
        if self.nodes.capacity() > 2 * CHUNK {
            *self = LongWork::default();
        }
    }
}

/// Pieces at least this long index their rank buckets with an array over the vocabulary.
const DENSE_BUCKETS_MIN: usize = 1 << 16;

/// How many bucket entries ahead `bpe_long` prefetches.
const PREFETCH_AHEAD: usize = 16;

/// Position lists keyed by rank, with the smallest queued rank found through a min-heap. The
/// last two ranks pushed are memoised: pushes during a sweep mostly go to one or two ranks.
struct Buckets {
    index: FxHashMap<u32, usize>,
    lists: Vec<Vec<u32>>,
    queued: Vec<bool>,
    ranks: Vec<u32>,
    heap: BinaryHeap<Reverse<u32>>,
    /// The two ranks pushed last and their slots (pushes alternate between two ranks).
    memo: [(u32, usize); 2],
    spare: Vec<Vec<u32>>,
    /// For long pieces: slot + 1 of each rank (0 = none), used instead of `index`.
    dense: Vec<u32>,
}

impl Default for Buckets {
    fn default() -> Self {
        Buckets {
            index: FxHashMap::default(),
            lists: Vec::new(),
            queued: Vec::new(),
            ranks: Vec::new(),
            heap: BinaryHeap::new(),
            memo: [(u32::MAX, 0); 2],
            spare: Vec::new(),
            dense: Vec::new(),
        }
    }
}

/// Double a full position list. A large one is copied into a fresh buffer advised as huge
/// pages before it is touched (a 10 MB piece queues tens of MB of positions; growing them in
/// place cost a 4 KiB page fault per 1024 positions, copied by `realloc`).
#[cold]
fn grow(list: &mut Vec<u32>) {
    let cap = (list.len() * 2).max(16);
    if cap * std::mem::size_of::<u32>() >= crate::mem::HUGE_MIN {
        let mut bigger = crate::mem::big_vec(cap);
        bigger.extend_from_slice(list);
        *list = bigger;
    } else {
        list.reserve_exact(cap - list.len());
    }
}

impl Buckets {
    #[inline]
    fn push(&mut self, rank: u32, pos: u32) {
        let slot = if self.memo[0].0 == rank {
            self.memo[0].1
        } else if self.memo[1].0 == rank {
            self.memo.swap(0, 1);
            self.memo[0].1
        } else {
            let known = if self.dense.is_empty() {
                self.index.get(&rank).copied()
            } else {
                self.dense[rank as usize].checked_sub(1).map(|s| s as usize)
            };
            let s = match known {
                Some(s) => s,
                None => {
                    let s = self.lists.len();
                    if self.dense.is_empty() {
                        self.index.insert(rank, s);
                    } else {
                        self.dense[rank as usize] = s as u32 + 1;
                    }
                    self.lists.push(self.spare.pop().unwrap_or_default());
                    self.queued.push(false);
                    self.ranks.push(rank);
                    s
                }
            };
            self.memo[1] = self.memo[0];
            self.memo[0] = (rank, s);
            s
        };
        if !self.queued[slot] {
            self.queued[slot] = true;
            self.heap.push(Reverse(rank));
        }
        let list = &mut self.lists[slot];
        if list.len() == list.capacity() {
            grow(list);
        }
        list.push(pos);
    }

    fn pop_min(&mut self) -> Option<(u32, Vec<u32>)> {
        let Reverse(rank) = self.heap.pop()?;
        let slot = if self.dense.is_empty() {
            self.index[&rank]
        } else {
            self.dense[rank as usize] as usize - 1
        };
        self.queued[slot] = false;
        let fresh = self.spare.pop().unwrap_or_default();
        Some((rank, std::mem::replace(&mut self.lists[slot], fresh)))
    }

    /// Empty, keeping the lists' storage; `dense` gives the size of the rank -> slot array to
    /// use (rank -> slot through an array: no hashing per push, a fifth of the time on digits).
    fn reset(&mut self, dense: Option<usize>) {
        for &rank in &self.ranks {
            if let Some(d) = self.dense.get_mut(rank as usize) {
                *d = 0;
            }
        }
        self.spare.extend(self.lists.drain(..).map(|mut v| {
            v.clear();
            v
        }));
        self.index.clear();
        self.queued.clear();
        self.ranks.clear();
        self.heap.clear();
        self.memo = [(u32::MAX, 0); 2];
        match dense {
            Some(len) if self.dense.len() != len => self.dense = vec![0; len],
            Some(_) => {}
            None => self.dense = Vec::new(),
        }
    }

    fn recycle(&mut self, mut v: Vec<u32>) {
        v.clear();
        self.spare.push(v);
    }
}

/// Encode one piece (no special tokens) with the full vocabulary.
#[inline]
pub fn encode_piece(vocab: &Vocab, piece: &[u8], scratch: &mut Scratch, out: &mut Vec<u32>) {
    match vocab.rank(piece) {
        Some(id) => out.push(id),
        None => bpe(vocab, piece, u32::MAX, scratch, out),
    }
}

/// BPE merge of a piece with tokens of rank < `limit`: `bpe_small` or `bpe_long` by length.
fn bpe(vocab: &Vocab, piece: &[u8], limit: u32, scratch: &mut Scratch, out: &mut Vec<u32>) {
    if piece.len() < HEAP_THRESHOLD {
        bpe_small(vocab, piece, limit, scratch, out);
    } else {
        bpe_long_with(vocab, piece, limit, out, usize::MAX, &mut |_| {}, scratch);
    }
}

/// BPE of `bytes` using only tokens with rank < `limit` (used to recover merge lists).
pub fn bpe_merge_limited(vocab: &Vocab, bytes: &[u8], limit: u32, out: &mut Vec<u32>) {
    with_scratch(|scratch| bpe(vocab, bytes, limit, scratch, out));
}

/// Which special tokens an `encode` call may produce.
#[derive(Clone, Debug)]
pub enum Allowed {
    None,
    All,
    Some(Vec<u32>),
}

impl Allowed {
    #[inline]
    fn accepts(&self, id: u32, kind: AddedKind) -> bool {
        kind == AddedKind::Pinned
            || match self {
                Allowed::None => false,
                Allowed::All => true,
                Allowed::Some(v) => v.contains(&id),
            }
    }
}

/// Encode a piece that is not a single token: from the piece cache, else by BPE.
#[inline(never)]
fn encode_multi(
    vocab: &Vocab,
    piece: &[u8],
    cache: &mut PieceCache,
    scratch: &mut Scratch,
    out: &mut Vec<u32>,
) {
    if piece.len() <= piece_cache::MAX_PIECE && cache.in_use() {
        if let Some(ids) = cache.get(piece) {
            out.extend_from_slice(ids);
        } else {
            let before = out.len();
            bpe_small(vocab, piece, u32::MAX, scratch, out);
            cache.insert(piece, &out[before..]);
        }
    } else {
        bpe(vocab, piece, u32::MAX, scratch, out); // not a token: the caller looked it up
    }
}

thread_local! {
    static CACHE: RefCell<PieceCache> = RefCell::new(PieceCache::default());
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Run `f` with this thread's scratch buffers (fresh ones if they are already in use).
fn with_scratch<T>(f: impl FnOnce(&mut Scratch) -> T) -> T {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => f(&mut s),
        Err(_) => f(&mut Scratch::default()),
    })
}

static NEXT_ENCODER_ID: AtomicU64 = AtomicU64::new(1);

/// A complete encoder: vocabulary + split pattern + added-token matcher.
#[derive(Debug)]
pub struct Encoder {
    pub vocab: Vocab,
    pub pretok: Pretokenizer,
    matcher: AddedMatcher,
    id: u64,
}

impl Clone for Encoder {
    fn clone(&self) -> Self {
        Encoder::new(self.vocab.clone(), self.pretok.clone())
    }
}

impl Encoder {
    pub fn new(vocab: Vocab, pretok: Pretokenizer) -> Self {
        let matcher = AddedMatcher::new(&vocab);
        Encoder {
            vocab,
            pretok,
            matcher,
            id: NEXT_ENCODER_ID.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Encode text with no special/pinned handling. Whenever `out` holds `limit` ids or more after
    /// a piece, `flush` is called with it (and may empty it).
    fn encode_plain(
        &self,
        text: &str,
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
        limit: usize,
        flush: &mut dyn FnMut(&mut Vec<u32>),
    ) -> Result<()> {
        let vocab = &self.vocab;
        CACHE.with(|cell| {
            let mut cache = cell.borrow_mut();
            if cache.owner != self.id {
                cache.owner = self.id;
                cache.clear();
            }
            let cache = &mut *cache;
            // The common case (the piece is one token) stays small enough to be inlined into
            // the scanner loop; everything else is out of line.
            self.pretok.for_each_piece(
                text,
                #[inline(always)]
                |p| {
                    let piece = p.as_bytes();
                    match vocab.rank(piece) {
                        Some(id) => out.push(id),
                        None if piece.len() >= BLOCKED_PIECE_MIN && limit != usize::MAX => {
                            bpe_long_blocks(vocab, piece, out, limit, flush, scratch)
                        }
                        None => encode_multi(vocab, piece, cache, scratch, out),
                    }
                    if out.len() >= limit {
                        flush(out);
                    }
                },
            )
        })
    }

    /// Encode, producing special tokens in `allowed` and pinned tokens always.
    pub fn encode_into(&self, text: &str, allowed: &Allowed, out: &mut Vec<u32>) -> Result<()> {
        self.encode_impl(text, allowed, out, usize::MAX, &mut |_| {})
    }

    /// Whether text may be encoded in parts cut at [`crate::added::is_safe_cut`] places with the
    /// ids of encoding it whole: true for the named patterns' scanners (no piece spans such a
    /// place; [`Encoder::encode_parts`] keeps its cuts clear of added tokens that could span
    /// one, see [`may_span_a_safe_cut`]).
    pub fn can_encode_parts(&self) -> bool {
        self.pretok.is_fast()
    }

    /// Encode text that arrives in parts: `fill` appends the next part to the buffer it is given
    /// and returns false once everything has been appended. The buffer is encoded up to its last
    /// safe cut whenever it has one, so memory stays bounded by the parts (plus the longest
    /// stretch without a safe cut). The ids are those of the concatenation when
    /// [`Encoder::can_encode_parts`] holds; `sink` gets them in blocks, in order.
    ///
    /// `size_hint`: about how many bytes the whole text has at most. A text with no safe cut
    /// (one without ASCII letters, such as Chinese or Russian prose, or random characters) is
    /// held whole: once the buffer passes [`PARTS_RESERVE_AT`] without a cut, room for the
    /// hinted size is reserved in one go, advised as huge pages, instead of doubling (each
    /// doubling copied the text into fresh 4 KB pages: 10 MB of random Unicode spent about
    /// 70% of its page faults there).
    pub fn encode_parts(
        &self,
        allowed: &Allowed,
        size_hint: usize,
        fill: &mut dyn FnMut(&mut String) -> bool,
        sink: &mut dyn FnMut(&[u32]),
    ) -> Result<()> {
        // cuts are kept clear of the added tokens this call produces that could span one
        let avoid = added::spanning_tokens(
            self.vocab
                .added_tokens()
                .iter()
                .filter(|a| allowed.accepts(a.id, a.kind))
                .map(|a| a.text.as_str()),
        );
        let lookahead = added::cut_lookahead(&avoid);
        let mut buf = String::new();
        let mut scanned = 0; // no safe cut at or before this offset
        loop {
            let more = fill(&mut buf);
            if !more {
                return self.encode_blocks(&buf, allowed, sink);
            }
            let b = buf.as_bytes();
            // a place near the end may be decided only by what follows it
            let top = b.len().saturating_sub(lookahead);
            let cut = (scanned.max(1)..top).rev().find(|&i| {
                added::is_safe_cut(b, i) && added::clear_of_tokens(b, i, &avoid)
            });
            match cut {
                Some(cut) => {
                    self.encode_blocks(&buf[..cut], allowed, sink)?;
                    buf.drain(..cut);
                    scanned = 0;
                }
                None => {
                    scanned = top.saturating_sub(1);
                    if buf.len() >= PARTS_RESERVE_AT && buf.capacity() < size_hint {
                        let mut room = crate::mem::big_vec::<u8>(size_hint);
                        room.extend_from_slice(buf.as_bytes());
                        buf = String::from_utf8(room).expect("a copy of a str is UTF-8");
                    }
                }
            }
        }
    }

    /// Encode, handing the ids to `sink` in blocks of a few thousand (in order), so that a long
    /// text needs no id vector as long as its result (the Python layer writes the blocks straight
    /// into the result list).
    pub fn encode_blocks(
        &self,
        text: &str,
        allowed: &Allowed,
        sink: &mut dyn FnMut(&[u32]),
    ) -> Result<()> {
        const BLOCK: usize = 4096;
        let mut out = Vec::with_capacity(BLOCK + HEAP_THRESHOLD);
        let mut flush = |ids: &mut Vec<u32>| {
            sink(ids);
            ids.clear();
        };
        self.encode_impl(text, allowed, &mut out, BLOCK, &mut flush)?;
        flush(&mut out);
        Ok(())
    }

    fn encode_impl(
        &self,
        text: &str,
        allowed: &Allowed,
        out: &mut Vec<u32>,
        limit: usize,
        flush: &mut dyn FnMut(&mut Vec<u32>),
    ) -> Result<()> {
        with_scratch(|scratch| {
            let bytes = text.as_bytes();
            let mut pos = 0;
            // with no special token allowed and none pinned, nothing can match: no search
            if !matches!(allowed, Allowed::None) || self.matcher.has_pinned() {
                let accept = |id: u32, kind: AddedKind| allowed.accepts(id, kind);
                while let Some((s, e, id)) = self.matcher.find(bytes, pos, &accept) {
                    self.encode_plain(&text[pos..s], scratch, out, limit, flush)?;
                    out.push(id);
                    pos = e;
                }
            }
            self.encode_plain(&text[pos..], scratch, out, limit, flush)
        })
    }

    pub fn encode(&self, text: &str, allowed: &Allowed) -> Result<Vec<u32>> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        self.encode_into(text, allowed, &mut out)?;
        Ok(out)
    }

    /// Encode without special tokens (pinned tokens are still produced).
    pub fn encode_ordinary(&self, text: &str) -> Result<Vec<u32>> {
        self.encode(text, &Allowed::None)
    }

    /// First special token in `text` whose id is in `disallowed` (all specials when `None`):
    /// (token text, byte offset).
    pub fn find_special(&self, text: &str, disallowed: Option<&[u32]>) -> Option<(String, usize)> {
        let accept = |id: u32, kind: AddedKind| {
            kind == AddedKind::Special && disallowed.is_none_or(|d| d.contains(&id))
        };
        self.matcher
            .find(text.as_bytes(), 0, &accept)
            .map(|(s, e, _)| (text[s..e].to_string(), s))
    }

    /// Encode a string that must be exactly one token (any kind).
    pub fn encode_single_token(&self, bytes: &[u8]) -> Result<u32> {
        self.vocab
            .token_id(bytes)
            .ok_or_else(|| Error::NotAToken(bytes.to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toy_vocab() -> Vocab {
        let mut m: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        for (i, t) in ["aa", "ab", "aaa", "aaaa", "ba", "bab", "abab"]
            .iter()
            .enumerate()
        {
            m.push((t.as_bytes().to_vec(), 256 + i as u32));
        }
        Vocab::new(m, vec![]).unwrap()
    }

    /// Bytes plus a/b tokens whose ranks do not follow their lengths (merges can create pairs
    /// of a lower rank than the one being merged), plus `extra`.
    fn lower_rank_vocab(extra: &[(&str, u32)]) -> Vocab {
        let mut m: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        let base = [
            ("abab", 300),
            ("ab", 310),
            ("ba", 305),
            ("bb", 256),
            ("abb", 320),
            ("aab", 290),
            ("aa", 315),
        ];
        for (t, r) in base.iter().chain(extra) {
            m.push((t.as_bytes().to_vec(), *r));
        }
        Vocab::new(m, vec![]).unwrap()
    }

    #[test]
    fn long_path_handles_lower_ranks_created_by_merges() {
        // "abab" has a lower rank than "ab": merging ab creates an (ab, ab) pair that must be
        // merged before the remaining ab pairs, as tiktoken's global-minimum rule says.
        let v = lower_rank_vocab(&[]);
        // a/b strings of up to 300 bytes, about one third b
        assert_small_equals_long(
            &v,
            99,
            |seed, k| (seed.rotate_left(k as u32 * 7) >> 3) % 3 == 0,
            300,
        );
    }

    #[test]
    fn dense_and_hashed_buckets_agree() {
        let v = lower_rank_vocab(&[("bab", 330), ("aaaa", 340)]);
        let mut seed = 7u64;
        for len in [300usize, 5000, 20000] {
            let s: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    if seed.is_multiple_of(3) {
                        b'b'
                    } else {
                        b'a'
                    }
                })
                .collect();
            let (mut a, mut b) = (vec![], vec![]);
            for (dense, out) in [(false, &mut a), (true, &mut b)] {
                let mut work = LongWork::default();
                merge_long(
                    &v,
                    &s,
                    u32::MAX,
                    dense,
                    out,
                    usize::MAX,
                    &mut |_| {},
                    &mut work,
                );
            }
            assert_eq!(a, b, "length {len}");
        }
        // no adjacent pair is a token: the bytes are the tokens (no merge machinery)
        let s = b"cacbcc".repeat(50);
        let mut a = vec![];
        bpe_long(&v, &s, u32::MAX, &mut a);
        assert_eq!(a, s.iter().map(|&b| b as u32).collect::<Vec<_>>());
        let mut small = vec![];
        bpe_small(&v, &s[..100], u32::MAX, &mut Scratch::default(), &mut small);
        assert_eq!(small, a[..100]);
    }

    /// `bpe_small` and `bpe_long` agree on 3000 random a/b strings (`is_b(seed, k)` picks byte k).
    fn assert_small_equals_long(
        v: &Vocab,
        mut seed: u64,
        is_b: impl Fn(u64, usize) -> bool,
        max_len: u64,
    ) {
        for _ in 0..3000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % max_len) as usize;
            let s: Vec<u8> = (0..len)
                .map(|k| if is_b(seed, k) { b'b' } else { b'a' })
                .collect();
            let mut a = vec![];
            let mut b = vec![];
            bpe_small(v, &s, u32::MAX, &mut Scratch::default(), &mut a);
            bpe_long(v, &s, u32::MAX, &mut b);
            assert_eq!(a, b, "{:?}", String::from_utf8_lossy(&s));
        }
    }

    #[test]
    fn blocks_concatenate_to_the_encoding() {
        let enc = Encoder::new(toy_vocab(), Pretokenizer::new("gpt2").unwrap());
        let text = "ab aab abab ba bab\n".repeat(2000);
        let whole = enc.encode_ordinary(&text).unwrap();
        assert!(whole.len() > 3 * 4096);
        let mut blocks: Vec<Vec<u32>> = Vec::new();
        enc.encode_blocks(&text, &Allowed::None, &mut |ids| blocks.push(ids.to_vec()))
            .unwrap();
        assert!(blocks.len() >= 3 && blocks.iter().all(|b| b.len() <= 4096 + HEAP_THRESHOLD));
        assert_eq!(blocks.concat(), whole);
    }

    #[test]
    fn parts_encode_like_the_whole() {
        let enc = Encoder::new(toy_vocab(), Pretokenizer::new("cl100k").unwrap());
        let text: String = (0..3000)
            .map(|i| match i % 7 {
                0 => "ab aab\n".to_string(),
                1 => "bab  abab\r\n\n".to_string(),
                2 => format!("{i} ba."),
                3 => "  \u{e9}t\u{e9} \u{3a9}mega\n\n\n".to_string(),
                4 => "no-breaks-here-at-all".repeat(i % 5),
                5 => "a\nb\n \n".to_string(),
                _ => " b a".to_string(),
            })
            .collect();
        let whole = enc.encode_ordinary(&text).unwrap();
        assert!(enc.can_encode_parts());
        for step in [1usize, 7, 100, 4096] {
            // feed `step` characters at a time
            let chars: Vec<char> = text.chars().collect();
            let mut at = 0;
            let mut ids = Vec::new();
            enc.encode_parts(
                &Allowed::None,
                text.len(),
                &mut |buf| {
                    let end = (at + step).min(chars.len());
                    buf.extend(&chars[at..end]);
                    at = end;
                    at < chars.len()
                },
                &mut |b| ids.extend_from_slice(b),
            )
            .unwrap();
            assert_eq!(ids, whole, "step {step}");
        }
    }

    #[test]
    fn parts_without_cuts_past_the_reserve_size() {
        // over PARTS_RESERVE_AT of text with no safe cut, then text with cuts; any size hint
        let vocab = toy_vocab();
        let pre = Pretokenizer::new(crate::pretokenize::named_pattern("cl100k").unwrap()).unwrap();
        let enc = Encoder::new(vocab, pre);
        let text = "éaß\u{4e2d}".repeat(PARTS_RESERVE_AT / 5) + &"word and more\n".repeat(5000);
        let whole = enc.encode_ordinary(&text).unwrap();
        let chars: Vec<char> = text.chars().collect();
        for hint in [0, text.len() / 2, text.len(), 4 * chars.len()] {
            let mut at = 0;
            let mut ids = Vec::new();
            enc.encode_parts(
                &Allowed::None,
                hint,
                &mut |buf| {
                    let end = (at + 65536).min(chars.len());
                    buf.extend(&chars[at..end]);
                    at = end;
                    at < chars.len()
                },
                &mut |b| ids.extend_from_slice(b),
            )
            .unwrap();
            assert_eq!(ids, whole, "hint {hint}");
        }
    }

    #[test]
    fn chunked_merge_equals_one_go() {
        // small chunks, so that junctions fall everywhere: inside runs, on shifted token grids,
        // next to pairs whose rank is lower than the merge that created them
        let vocabs = [
            toy_vocab(),
            lower_rank_vocab(&[("bab", 330), ("aaaa", 340)]),
        ];
        let mut seed = 99u64;
        let mut fixed = 0;
        for (vi, v) in vocabs.iter().enumerate() {
            for round in 0..400 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let len = 1 + (seed % 700) as usize;
                let p_b = [0u64, 1, 2, 4][round % 4]; // b density: none, 1/2, 1/3, 1/5
                let mut x = seed;
                let s: Vec<u8> = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        if p_b > 0 && x.is_multiple_of(p_b + 1) {
                            b'b'
                        } else {
                            b'a'
                        }
                    })
                    .collect();
                let mut whole = vec![];
                let mut scratch = Scratch::default();
                merge_long(
                    v,
                    &s,
                    u32::MAX,
                    false,
                    &mut whole,
                    usize::MAX,
                    &mut |_| {},
                    &mut scratch.long,
                );
                for chunk in [1usize, 2, 3, 7, 16, 61] {
                    let mut ids = vec![7u32]; // ids already in the output stay untouched
                    assert!(merge_chunked(
                        v,
                        &s,
                        u32::MAX,
                        chunk,
                        usize::MAX,
                        &mut scratch,
                        &mut ids
                    ));
                    assert_eq!(ids[0], 7);
                    assert_eq!(
                        &ids[1..],
                        &whole[..],
                        "vocab {vi} chunk {chunk} {:?}",
                        String::from_utf8_lossy(&s)
                    );
                    // count the cases where merging the chunks alone is wrong (junctions fixed)
                    let mut naive = vec![];
                    for c in s.chunks(chunk) {
                        merge_any(v, c, u32::MAX, &mut scratch, &mut naive);
                    }
                    fixed += (naive != whole) as usize;
                }
            }
        }
        assert!(fixed > 1000, "only {fixed} cases needed a junction fixed");
        // a budget too small to fix a junction: the output is put back as it was
        let s = b"a".repeat(101);
        let mut ids = vec![1u32, 2];
        let mut scratch = Scratch::default();
        assert!(!merge_chunked(
            &vocabs[0],
            &s,
            u32::MAX,
            3,
            0,
            &mut scratch,
            &mut ids
        ));
        assert_eq!(ids, [1, 2]);
    }

    #[test]
    fn small_and_long_agree() {
        assert_small_equals_long(
            &toy_vocab(),
            12345,
            |seed, k| (seed >> (k % 60)) & 1 == 1,
            40,
        );
    }

    #[test]
    fn long_run_is_fast_and_right() {
        let v = toy_vocab();
        let s = vec![b'a'; 1_000_001];
        let mut out = vec![];
        bpe_long(&v, &s, u32::MAX, &mut out);
        // All "aa" merge first (leftmost first), then the trailing "aa"+"a" (rank 258) before
        // the "aa"+"aa" pairs (rank 259).
        let mut expect = vec![259u32; 249_999];
        expect.extend([256, 258]);
        assert_eq!(out, expect);
        let mut small = vec![];
        bpe_small(
            &v,
            &s[..1001],
            u32::MAX,
            &mut Scratch::default(),
            &mut small,
        );
        let mut long = vec![];
        bpe_long(&v, &s[..1001], u32::MAX, &mut long);
        assert_eq!(small, long);
    }
}
