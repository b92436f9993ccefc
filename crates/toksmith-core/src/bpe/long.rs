//! The merge for long pieces: rank buckets swept in position order over a linked list of
//! tokens, near-linear however long the piece (a 10 MB run of one letter included), plus the
//! shortcut for pieces where no two adjacent bytes form a token.

use crate::bpe::buckets::Buckets;
use crate::error::{Error, Result};
use crate::mem::{prefetch, try_reserve};
use crate::vocab::Vocab;

/// If no two adjacent bytes of the piece form a token (e.g. a run of spaces in GPT-2's
/// vocabulary), append the bytes' ids (the piece's tokens) and return true.
pub(crate) fn no_pairs(
    vocab: &Vocab,
    piece: &[u8],
    limit: u32,
    out: &mut Vec<u32>,
    block: usize,
    flush: &mut dyn FnMut(&mut Vec<u32>),
) -> Result<bool> {
    if !piece
        .windows(2)
        .all(|w| vocab.pair_table[((w[0] as usize) << 8) | w[1] as usize] >= limit)
    {
        return Ok(false);
    }
    let byte_ids = vocab.byte_ids();
    extend_in_blocks(out, piece.len(), block, flush, |r, out| {
        out.extend(piece[r].iter().map(|&b| byte_ids[b as usize]))
    })?;
    Ok(true)
}

/// Append `n` ids, written part by part by `fill(range, out)`, calling `flush` whenever `out`
/// holds `block` ids or more. `fill` appends at most as many ids as its range is long (room
/// for them is reserved first: [`Error::OutOfMemory`] when the allocator refuses).
pub(crate) fn extend_in_blocks(
    out: &mut Vec<u32>,
    n: usize,
    block: usize,
    flush: &mut dyn FnMut(&mut Vec<u32>),
    mut fill: impl FnMut(std::ops::Range<usize>, &mut Vec<u32>),
) -> Result<()> {
    let step = block.clamp(1, 1 << 16);
    let mut at = 0;
    while at < n {
        let end = (at + step).min(n);
        try_reserve(out, end - at, "the ids of a long piece")?;
        fill(at..end, out);
        if out.len() >= block {
            flush(out);
        }
        at = end;
    }
    Ok(())
}

/// The rank-bucket merge of [`bpe_long`] over the whole piece at once. Rank buckets are found
/// through an array over the vocabulary (no hashing per push) when `dense` asks for it, for
/// pieces of [`DENSE_BUCKETS_MIN`] bytes and more, and whenever `work` already holds that array
/// for this vocabulary.
#[allow(clippy::too_many_arguments)]
pub(crate) fn merge_long(
    vocab: &Vocab,
    piece: &[u8],
    limit: u32,
    dense: bool,
    out: &mut Vec<u32>,
    block: usize,
    flush: &mut dyn FnMut(&mut Vec<u32>),
    work: &mut LongWork,
) -> Result<()> {
    let n = piece.len();
    if n >= u32::MAX as usize {
        // (offsets are u32; such a piece is 4 GiB of text with no split in it)
        return Err(Error::InvalidArgument(format!(
            "a piece of {n} bytes is too long to merge (the most is {})",
            u32::MAX - 1
        )));
    }
    if no_pairs(vocab, piece, limit, out, block, flush)? {
        return Ok(());
    }
    const NONE: u32 = u32::MAX;
    let LongWork { nodes, buckets } = work;
    nodes.clear();
    if n > nodes.capacity() {
        *nodes = Vec::new(); // the old records go before the new ones are allocated
        *nodes = crate::mem::try_big_vec(n, "the records of a long piece")?;
    }
    nodes.extend((0..n as u32).map(|i| Node {
        next: i + 1,
        prev: i.wrapping_sub(1),
        rank: u32::MAX,
    }));
    let slots = vocab.n_vocab() + 1;
    let dense = dense || n >= DENSE_BUCKETS_MIN || buckets.is_dense(slots);
    buckets.reset(dense.then_some(slots));
    for i in 0..n.saturating_sub(1) {
        let r = vocab.rank_below(&piece[i..i + 2], limit);
        nodes[i].rank = r;
        if r != u32::MAX {
            buckets.push(r, i as u32)?;
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
                rr = vocab.rank_below(&piece[i as usize..end(nodes, k) as usize], limit);
                if rr != u32::MAX {
                    pushes.push((rr, i));
                }
            }
            nodes[i as usize].next = k;
            nodes[i as usize].rank = rr;
            let p = node.prev;
            if p != NONE {
                let rp = vocab.rank_below(&piece[p as usize..k as usize], limit);
                nodes[p as usize].rank = rp;
                if rp != u32::MAX {
                    pushes.push((rp, p));
                }
            }
            let mut lower = false;
            for &(rank, pos) in &pushes {
                lower |= rank < r;
                buckets.push(rank, pos)?;
            }
            if lower {
                // A lower rank must be merged first: put the rest of this bucket back.
                for &pos in &positions[idx..] {
                    buckets.push(r, pos)?;
                }
                break;
            }
        }
        buckets.recycle(positions);
    }
    let mut i = 0usize;
    while i < n {
        let j = nodes[i].next as usize;
        if out.len() == out.capacity() {
            try_reserve(out, 1, "the ids of a long piece")?;
        }
        out.push(vocab.rank(&piece[i..j]).expect("merged parts are tokens"));
        if out.len() >= block {
            flush(out);
        }
        i = j;
    }
    Ok(())
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
    /// Give back buffers grown for a piece far longer than usual (kept per thread): more than
    /// `keep` records.
    pub(crate) fn trim(&mut self, keep: usize) {
        if self.nodes.capacity() > keep {
            *self = LongWork::default();
        }
    }
}

/// Pieces at least this long index their rank buckets with an array over the vocabulary.
const DENSE_BUCKETS_MIN: usize = 1 << 16;

/// How many bucket entries ahead `bpe_long` prefetches.
const PREFETCH_AHEAD: usize = 16;
