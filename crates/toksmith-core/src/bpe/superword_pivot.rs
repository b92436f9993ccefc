//! The merge below the cut of a segment that is a whitespace run then a word
//! (`"\n            self"`), from the merges of its two sides, which repeat where the whole does
//! not (on held-out Python, 5,588 of the 17,441 distinct segments that the superword merge had to
//! merge were such runs, half of the bytes merged, made of 102 distinct runs and 2,965 words).
//!
//! Cut such a segment `s` at the last whitespace byte `p` of its run (the pivot). When no token
//! below the cut holds the three bytes `s[p-1] s[p] s[p+1]`, no token ever made covers them
//! all, so the two sides `L = s[..=p]` and `R = s[p..]` share only the pivot: until one side
//! merges the pivot into a token, each side's merges are those of its own merge (the lowest pair
//! of the whole is the lowest of one side, leftmost on ties: the left side's), and after that
//! the other side goes on without the pivot. If side `A`'s merges, in order, have ranks
//! `a1, a2, ...` and its `k`-th takes the pivot, and `B`'s `l`-th does, `A`'s comes first iff
//! `max(a1..ak) < max(b1..bl)` (each of `B`'s merges up to its `l`-th was chosen over a merge of
//! `A` no later than `A`'s `k`-th, so below it; ties go to the left side). So the merge of `s` is
//! `merge(L) ++ merge(s[p+1..])` when `L` takes the pivot first, else
//! `merge(s[..p]) ++ merge(R)`; each side's two merges and its prefix maximum are cached.

use super::small::first_min;
use crate::encode::piece_cache::{PieceCache, MAX_PIECE};
use crate::error::Result;
use crate::mem::try_reserve;
use crate::vocab::Vocab;

/// Longest side that is merged and cached on its own (its two merges and maximum fit the
/// piece cache's [`MAX_PIECE`] values).
const SIDE_MAX: usize = (MAX_PIECE - 2) / 2;

/// Which whitespace bytes (`\t \n \v \f \r` and space) followed by which byte occur after a
/// whitespace byte inside a token below the cut: such a triple stops the split at a pivot.
#[derive(Clone, Debug)]
pub struct PivotRule {
    /// `[ws(x) * 6 + ws(y)]`, bit `z`: some token below the cut holds `x y z`
    bad: Box<[[u64; 4]; 36]>,
}

/// An ASCII whitespace byte (the pivot's side; any byte rule is exact, this one finds the runs).
#[inline(always)]
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\t' | b'\r' | 0x0b | 0x0c)
}

#[inline(always)]
fn ws_index(b: u8) -> usize {
    match b {
        b' ' => 0,
        b'\n' => 1,
        b'\t' => 2,
        b'\r' => 3,
        0x0b => 4,
        _ => 5, // 0x0c
    }
}

impl PivotRule {
    /// From the tokens below the cut.
    pub fn new<'a>(tokens: impl Iterator<Item = &'a [u8]>) -> PivotRule {
        let mut bad = Box::new([[0u64; 4]; 36]);
        for t in tokens {
            for w in t.windows(3) {
                if is_space(w[0]) && is_space(w[1]) && !is_space(w[2]) {
                    let z = w[2] as usize;
                    bad[ws_index(w[0]) * 6 + ws_index(w[1])][z >> 6] |= 1 << (z & 63);
                }
            }
        }
        PivotRule { bad }
    }

    /// The pivot of `seg` if it is a whitespace run of two bytes or more and then something
    /// else, with sides of at most [`SIDE_MAX`] bytes and no token over the pivot's three bytes.
    #[inline]
    pub fn pivot(&self, seg: &[u8]) -> Option<usize> {
        let q = seg.iter().position(|&b| !is_space(b))?;
        if !(2..=SIDE_MAX).contains(&q) || seg.len() - q + 1 > SIDE_MAX {
            return None;
        }
        let (x, y, z) = (seg[q - 2], seg[q - 1], seg[q] as usize);
        let bad = self.bad[ws_index(x) * 6 + ws_index(y)][z >> 6] & (1 << (z & 63)) != 0;
        (!bad).then_some(q - 1)
    }
}

/// The rank-ordered merge of `part` (at most [`SIDE_MAX`] bytes) with the tokens below `limit`,
/// its ids written to `out`; returns how many, and the largest rank merged up to the merge that
/// takes the byte at `pivot` into a longer token (`u32::MAX` if none does).
fn merge_tracked(
    vocab: &Vocab,
    part: &[u8],
    limit: u32,
    pivot: usize,
    out: &mut [u32],
) -> (usize, u32) {
    let n = part.len();
    debug_assert!(n <= SIDE_MAX && (pivot < n || pivot == usize::MAX));
    let byte_ids = vocab.byte_ids();
    let mut start = [0u8; SIDE_MAX + 1];
    let mut id = [0u32; SIDE_MAX];
    let mut rank = [u32::MAX; SIDE_MAX];
    for i in 0..n {
        start[i] = i as u8;
        id[i] = byte_ids[part[i] as usize];
    }
    start[n] = n as u8;
    for i in 1..n {
        rank[i - 1] = vocab.rank_below(&part[i - 1..i + 1], limit);
    }
    let span = |start: &[u8], a: usize, b: usize| &part[start[a] as usize..start[b] as usize];
    let (mut m, mut top, mut taken) = (n, 0u32, u32::MAX);
    while m > 1 {
        let (best, at) = first_min(&rank[..m - 1]);
        if best == u32::MAX {
            break;
        }
        top = top.max(best);
        if taken == u32::MAX && (start[at] as usize..start[at + 2] as usize).contains(&pivot) {
            taken = top;
        }
        // tokens `at` and `at + 1` become token `best`
        id[at] = best;
        id.copy_within(at + 2..m, at + 1);
        start.copy_within(at + 2..=m, at + 1);
        if at + 2 < m {
            rank.copy_within(at + 2..m - 1, at + 1);
        }
        m -= 1;
        if at + 1 < m {
            rank[at] = vocab.rank_below(span(&start, at, at + 2), limit);
        }
        if at > 0 {
            rank[at - 1] = vocab.rank_below(span(&start, at - 1, at + 1), limit);
        }
    }
    out[..m].copy_from_slice(&id[..m]);
    (m, taken)
}

/// A side's values (from `sides`, or merged and put there): `[top, k, merge of the side (k
/// ids), merge of the side without the pivot]`, in `buf`; returns their number.
fn side(
    vocab: &Vocab,
    part: &[u8],
    pivot_first: bool,
    limit: u32,
    sides: &mut PieceCache,
    buf: &mut [u32; MAX_PIECE],
) -> usize {
    let use_cache = sides.in_use();
    if use_cache {
        if let Some(c) = sides.get(part) {
            buf[..c.len()].copy_from_slice(c);
            return c.len();
        }
    }
    let n = part.len();
    let (k, top) = merge_tracked(
        vocab,
        part,
        limit,
        if pivot_first { 0 } else { n - 1 },
        &mut buf[2..],
    );
    let rest = if pivot_first {
        &part[1..]
    } else {
        &part[..n - 1]
    };
    let (j, _) = merge_tracked(vocab, rest, limit, usize::MAX, &mut buf[2 + k..]);
    buf[0] = top;
    buf[1] = k as u32;
    if use_cache {
        sides.insert(part, &buf[..2 + k + j]);
    }
    2 + k + j
}

/// Append the merge below `limit` of `seg` (pivot `p`, from [`PivotRule::pivot`]) to `out`.
pub fn merge_at_pivot(
    vocab: &Vocab,
    seg: &[u8],
    p: usize,
    limit: u32,
    sides: &mut PieceCache,
    out: &mut Vec<u32>,
) -> Result<()> {
    let (mut left, mut right) = ([0u32; MAX_PIECE], [0u32; MAX_PIECE]);
    let nl = side(vocab, &seg[..=p], false, limit, sides, &mut left);
    let nr = side(vocab, &seg[p..], true, limit, sides, &mut right);
    let (kl, kr) = (2 + left[1] as usize, 2 + right[1] as usize);
    try_reserve(out, seg.len(), "the ids")?;
    if left[0] != u32::MAX && left[0] <= right[0] {
        out.extend_from_slice(&left[2..kl]);
        out.extend_from_slice(&right[kr..nr]);
    } else {
        out.extend_from_slice(&left[kl..nl]);
        out.extend_from_slice(&right[2..kr]);
    }
    Ok(())
}
