//! A dense table of the pairs of low-rank tokens, for the short merge's lookups.
//!
//! After each merge the short merge looks up the two pairs the new token makes with its
//! neighbours. By their bytes that is a length dispatch, a packing of up to 16 bytes, a hash
//! and a probe in a table of several megabytes (o200k_base: 4 MB for its 3-8 byte tokens). But
//! most such pairs join two frequent tokens: in the merges of English words that are no token,
//! both have a rank below 512 in 54% of the lookups after the first round (66% below 1024). For
//! those, `grid[a * SIDE + b]` is the answer in one load from a 1 MB array.
//!
//! The grid is filled from the tokens, not from merge rules: entry `(a, b)` is the rank of the
//! token whose bytes are token `a`'s followed by token `b`'s, whatever merges made it, so it
//! answers exactly what the lookup by bytes answers (tiktoken's semantics).
//!
//! Built with the atoms (`atoms.rs`): on their thread when a large vocabulary is built.

use crate::table::InlineTable;

/// Side of the grid: tokens of rank below it (1 MB of `u32`; 1024, 4 MB, was no faster).
pub(crate) const SIDE: usize = 512;

/// A cell the grid does not answer (a pair with a token of more than 16 bytes).
const ASK: u32 = u32::MAX - 1;

/// `(left rank, right rank) -> rank of the joined token` for ranks below [`SIDE`].
pub(crate) struct PairGrid {
    cells: Box<[u32]>,
}

impl std::fmt::Debug for PairGrid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PairGrid({SIDE} x {SIDE})")
    }
}

impl PairGrid {
    /// The grid of a vocabulary given as `bytes_of(id)` for the mergeable ids `ids` (None when
    /// its memory is refused). Every split of every token into two tokens below [`SIDE`].
    pub(crate) fn build<'a>(
        ids: impl Iterator<Item = u32> + Clone,
        bytes_of: impl Fn(u32) -> &'a [u8],
    ) -> Option<PairGrid> {
        let mut cells = crate::mem::try_vec(SIDE * SIDE, "the pair grid").ok()?;
        cells.resize(SIDE * SIDE, u32::MAX);
        // the tokens below the side, in two small inline-key tables (they stay in L1: the
        // build makes a few lookups for each token of the vocabulary)
        let mut low: Vec<(&[u8], u32)> = crate::mem::try_vec(SIDE, "the pair grid").ok()?;
        low.extend(
            ids.clone()
                .filter(|&id| (id as usize) < SIDE)
                .map(|id| (bytes_of(id), id)),
        );
        // A token below the side of more than 16 bytes (cl100k_base has a run of 19 spaces)
        // is not in the tables below: its row and column send the lookup to the bytes.
        for &(_, id) in low.iter().filter(|(b, _)| b.len() > 16) {
            let id = id as usize;
            cells[id * SIDE..(id + 1) * SIDE].fill(ASK);
            for row in 0..SIDE {
                cells[row * SIDE + id] = ASK;
            }
        }
        let short = InlineTable::<u64>::new(low.iter().copied(), 1).ok()?;
        let medium = InlineTable::<u128>::new(low.iter().copied(), 9).ok()?;
        // lengths (bit `n`: `n` bytes) of the tokens below the side by their first two and
        // their last two bytes (single bytes apart): a split of a token is only tried where
        // both parts may be such tokens
        let mut by_first = crate::mem::try_vec::<u32>(1 << 16, "the pair grid").ok()?;
        by_first.resize(1 << 16, 0);
        let mut by_last = by_first.clone();
        let mut single = [0u64; 256];
        for &(b, _) in low.iter().filter(|(b, _)| b.len() <= 16) {
            let n = b.len();
            if n == 1 {
                single[b[0] as usize] = 1 << 1;
            } else {
                by_first[(b[0] as usize) << 8 | b[1] as usize] |= 1 << n;
                by_last[(b[n - 2] as usize) << 8 | b[n - 1] as usize] |= 1 << n;
            }
        }
        let low_id = |b: &[u8]| match b.len() {
            0..=8 => short.get(b),
            _ => medium.get(b),
        };
        for id in ids {
            let t = bytes_of(id);
            let n = t.len();
            if !(2..=32).contains(&n) {
                continue; // (no two tokens of up to 16 bytes make it)
            }
            // left part of `i` bytes when bit `i` of `left` and bit `n - i` of the right
            // parts' lengths are set
            let left =
                by_first[(t[0] as usize) << 8 | t[1] as usize] as u64 | single[t[0] as usize];
            let right = by_last[(t[n - 2] as usize) << 8 | t[n - 1] as usize] as u64
                | single[t[n - 1] as usize];
            // bit i of `fits`: the right part of `n - i` bytes has a possible length
            let mut fits = left & (right.reverse_bits() >> (63 - n));
            fits &= !1 & ((1u64 << n) - 1);
            while fits != 0 {
                let i = fits.trailing_zeros() as usize;
                fits &= fits - 1;
                if let Some(a) = low_id(&t[..i]) {
                    if let Some(b) = low_id(&t[i..]) {
                        if id >= ASK {
                            return None; // (ids that high cannot be stored: no grid)
                        }
                        let cell = &mut cells[a as usize * SIDE + b as usize];
                        if *cell != ASK {
                            *cell = id;
                        }
                    }
                }
            }
        }
        Some(PairGrid {
            cells: cells.into_boxed_slice(),
        })
    }

    /// The rank of token `a` joined to token `b` when both are below [`SIDE`]: `Some(u32::MAX)`
    /// when that is no token, `None` when the grid does not cover the pair.
    #[inline(always)]
    pub(crate) fn get(&self, a: u32, b: u32) -> Option<u32> {
        if (a as usize) < SIDE && (b as usize) < SIDE {
            let r = self.cells[a as usize * SIDE + b as usize];
            (r != ASK).then_some(r)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{PairGrid, SIDE};
    use crate::bpe::test_vocabs::{reference_merge, xorshift};
    use crate::bpe::{bpe_small, Scratch};
    use crate::vocab::Vocab;

    const ALPHABET: &[&str] = &[
        "e", "t", "a", "o", "n", " ", "s", "h", ".", "'", "\u{e9}", "\u{3b1}",
    ];

    fn text(seed: &mut u64, n: usize) -> String {
        (0..n)
            .map(|_| ALPHABET[(xorshift(seed) % ALPHABET.len() as u64) as usize])
            .collect()
    }

    /// Bytes (ranks 256-511, so single bytes are in the grid but not first), runs of spaces,
    /// plus about 2700 tokens cut from random text over [`ALPHABET`], ranked in random order
    /// with gaps: many pairs below the side join into tokens, some of them in more than one
    /// way.
    fn grid_vocab(seed: &mut u64) -> Vocab {
        let mut m: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], 256 + b as u32)).collect();
        let mut seen: std::collections::HashSet<Vec<u8>> =
            m.iter().map(|(t, _)| t.clone()).collect();
        // runs of 2-20 spaces below the side (cl100k_base has 19 there) and of 21-40 above it:
        // tokens that join two tokens of the grid across its whole length range, and tokens of
        // the grid too long for it
        for n in 2..=40u32 {
            let id = if n <= 20 { n - 2 } else { 3000 + n };
            m.push((vec![b' '; n as usize], id));
            seen.insert(vec![b' '; n as usize]);
        }
        let source = text(seed, 3000).into_bytes();
        let mut ids: Vec<u32> = (19..256).chain(512..3000).collect();
        for i in (1..ids.len()).rev() {
            ids.swap(i, (xorshift(seed) % (i as u64 + 1)) as usize);
        }
        while let Some(id) = ids.pop() {
            let len = 2 + (xorshift(seed) % 6) as usize;
            let at = (xorshift(seed) as usize) % (source.len() - len);
            let t = source[at..at + len].to_vec();
            if seen.insert(t.clone()) {
                m.push((t, id));
            }
        }
        Vocab::new(m, vec![]).unwrap()
    }

    /// The tokens of `v` below `limit` and the single bytes, as a vocabulary of their own
    /// (same ids).
    fn below(v: &Vocab, limit: u32) -> Vocab {
        let m = (0..v.present.len() as u32)
            .filter_map(|id| v.token_bytes(id).ok().map(|b| (b.to_vec(), id)))
            .filter(|(b, id)| *id < limit || b.len() == 1)
            .collect();
        Vocab::new(m, vec![]).unwrap()
    }

    #[test]
    fn every_cell_is_the_rank_of_the_joined_bytes() {
        let v = grid_vocab(&mut 11);
        let ids: Vec<u32> = (0..v.present.len() as u32)
            .filter(|&i| v.present[i as usize])
            .collect();
        let g = PairGrid::build(ids.iter().copied(), |i| v.token_bytes(i).unwrap()).unwrap();
        let (mut joined_tokens, mut asked) = (0, 0);
        for &a in ids.iter().filter(|&&a| (a as usize) < SIDE) {
            for &b in ids.iter().filter(|&&b| (b as usize) < SIDE) {
                let joined = [v.token_bytes(a).unwrap(), v.token_bytes(b).unwrap()].concat();
                let want = v.rank(&joined).unwrap_or(u32::MAX);
                let long =
                    v.token_bytes(a).unwrap().len() > 16 || v.token_bytes(b).unwrap().len() > 16;
                if long {
                    assert_eq!(g.get(a, b), None, "{joined:?}: left to the bytes");
                    asked += 1;
                } else {
                    assert_eq!(g.get(a, b), Some(want), "{joined:?}");
                    joined_tokens += (want != u32::MAX) as usize;
                }
            }
        }
        assert!(joined_tokens > 100, "{joined_tokens} cells hold a token");
        assert!(asked > 0);
        assert_eq!(g.get(SIDE as u32, 0), None);
        assert_eq!(g.get(0, SIDE as u32), None);
    }

    /// The short merge once the grid is built (its lookups of pairs below the side go
    /// through it), with the whole vocabulary and below rank limits, against the reference.
    #[test]
    fn merges_through_the_grid_match_the_reference() {
        let v = grid_vocab(&mut 12);
        assert!(v.atoms().is_some());
        assert!(v.pair_grid().is_some(), "built with the atoms");
        let limits = [300, 700, 1500];
        let lows: Vec<Vocab> = limits.iter().map(|&l| below(&v, l)).collect();
        let mut seed = 5u64;
        let mut scratch = Scratch::default();
        for k in 0..3000 {
            let piece = match k % 8 {
                // runs of spaces, which join tokens too long for the grid
                0 => vec![b' '; 1 + k % 45],
                _ => text(&mut seed, 1 + k % 40).into_bytes(),
            };
            let mut got = Vec::new();
            bpe_small(&v, &piece, u32::MAX, &mut scratch, &mut got).unwrap();
            assert_eq!(got, reference_merge(&v, &piece), "{piece:?}");
            let j = k % limits.len();
            let mut got = Vec::new();
            bpe_small(&v, &piece, limits[j], &mut scratch, &mut got).unwrap();
            assert_eq!(
                got,
                reference_merge(&lows[j], &piece),
                "{piece:?} below {}",
                limits[j]
            );
        }
    }
}
