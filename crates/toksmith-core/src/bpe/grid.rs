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

use rustc_hash::FxHashMap;

/// Side of the grid: tokens of rank below it (1 MB of `u32`; 1024, 4 MB, was no faster).
pub(crate) const SIDE: usize = 512;

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
        let mut low: FxHashMap<&[u8], u32> = FxHashMap::default();
        low.try_reserve(SIDE).ok()?;
        for id in ids.clone().filter(|&id| (id as usize) < SIDE) {
            low.insert(bytes_of(id), id);
        }
        let longest = low.keys().map(|k| k.len()).max().unwrap_or(0);
        for id in ids {
            let t = bytes_of(id);
            if t.len() < 2 || t.len() > 2 * longest {
                continue;
            }
            // left parts of 1..=longest bytes whose right part is not longer than `longest`
            for i in t.len().saturating_sub(longest).max(1)..=longest.min(t.len() - 1) {
                if let (Some(&a), Some(&b)) = (low.get(&t[..i]), low.get(&t[i..])) {
                    cells[a as usize * SIDE + b as usize] = id;
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
            Some(self.cells[a as usize * SIDE + b as usize])
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

    /// Bytes (ranks 256-511, so single bytes are in the grid but not first) plus 2500 tokens
    /// cut from random text over [`ALPHABET`], ranked in random order with gaps: many pairs
    /// below the side join into tokens, some of them in more than one way.
    fn grid_vocab(seed: &mut u64) -> Vocab {
        let mut m: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], 256 + b as u32)).collect();
        let mut seen: std::collections::HashSet<Vec<u8>> =
            m.iter().map(|(t, _)| t.clone()).collect();
        let source = text(seed, 3000).into_bytes();
        let mut ids: Vec<u32> = (0..256).chain(512..3000).collect();
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
        let mut joined_tokens = 0;
        for &a in ids.iter().filter(|&&a| (a as usize) < SIDE) {
            for &b in ids.iter().filter(|&&b| (b as usize) < SIDE) {
                let joined = [v.token_bytes(a).unwrap(), v.token_bytes(b).unwrap()].concat();
                let want = v.rank(&joined).unwrap_or(u32::MAX);
                assert_eq!(g.get(a, b), Some(want), "{joined:?}");
                joined_tokens += (want != u32::MAX) as usize;
            }
        }
        assert!(joined_tokens > 100, "{joined_tokens} cells hold a token");
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
            let piece = text(&mut seed, 1 + k % 40).into_bytes();
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
