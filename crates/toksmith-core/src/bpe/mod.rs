//! Byte-level BPE merging with tiktoken's semantics, one algorithm per file.
//!
//! A piece of text is encoded by repeatedly merging the adjacent pair of tokens whose
//! concatenation has the lowest rank (id), leftmost first, until no adjacent pair is a token.
//! Two paths give the same result (the encoder first tries a whole-piece lookup: most pieces
//! are a single token):
//! * [`bpe_small`] (`small.rs`): tiktoken's O(n·m) scan for short pieces (fast, no heap),
//!   whose span lookups in non-ASCII pieces go through a per-thread memo (`memo.rs`), and
//!   which starts non-ASCII pieces from their whole characters where that is exact
//!   (`atoms.rs`; also pieces of up to 1 KB that this leaves with fewer than 128 tokens);
//! * [`bpe_long`] (`long.rs`, `buckets.rs`): rank buckets swept in position order over a
//!   linked list for long pieces, so a 10 MB run of one letter stays near-linear; pieces of
//!   128 KB and more are merged in 32 KB chunks joined by an exact local check (`chunked.rs`),
//!   so the work stays in the cache.
//!
//! Performance notes (designs tried; see BENCHMARKS.md for numbers):
//! * merge-table lookups on (left id, right id) instead of byte slices are not exact with
//!   tiktoken rank files (a token can be the concatenation of pairs that were never merged),
//!   so lookups are on byte slices of the piece (no allocation: adjacent tokens are contiguous),
//!   except for pairs of two tokens of rank below 512: a dense grid filled from the tokens'
//!   bytes (every way a token splits in two, so exact) answers those in one load (`grid.rs`).
//! * one 10 MB piece merged in one go needs 120 MB of records, walked once per rank bucket:
//!   cache and page-fault bound (10 MB cost 12-13x 1 MB in a fresh process). Merging 32 KB
//!   chunks and checking each junction pair brought that to 10x (gpt2, 10 MB of one letter in a
//!   fresh process: 476 -> 315 ms); 16, 64 and 128 KB chunks were no better, and on real
//!   vocabularies a junction needs a window of 2-7 bytes re-merged, if any.
//!
//! [`bpe_merge_limited`] (tokens below a rank only) is what recovers a merge list from a rank
//! table (`recover.rs`: [`Vocab::recover_merges`]).

mod atoms;
mod buckets;
mod chunked;
mod grid;
mod long;
mod memo;
mod recover;
mod small;
mod superword;
mod superword_cache;
mod superword_pivot;
#[cfg(test)]
pub(crate) mod test_vocabs;

pub(crate) use atoms::{LazyAtoms, Tokens};
pub use long::LongWork;
pub use small::{bpe_small, Scratch, HEAP_THRESHOLD};
pub use superword::Superword;
pub use superword_cache::{LongCache, SuperwordCaches, LONG_MAX, LONG_MIN};

use crate::error::Result;
use crate::vocab::Vocab;
use chunked::{merge_chunked, CHUNK, CHUNKED_MIN};
use long::{extend_in_blocks, merge_long, no_pairs};
use std::cell::RefCell;

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
///
/// Every buffer that grows with the piece is allocated fallibly: [`crate::Error::OutOfMemory`]
/// when the allocator refuses (a MemoryError in Python, not an abort).
pub fn bpe_long(vocab: &Vocab, piece: &[u8], limit: u32, out: &mut Vec<u32>) -> Result<()> {
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
) -> Result<()> {
    bpe_long_with(vocab, piece, u32::MAX, out, block, flush, scratch)
}

pub(crate) fn bpe_long_with(
    vocab: &Vocab,
    piece: &[u8],
    limit: u32,
    out: &mut Vec<u32>,
    block: usize,
    flush: &mut dyn FnMut(&mut Vec<u32>),
    scratch: &mut Scratch,
) -> Result<()> {
    let r = merge_long_piece(vocab, piece, limit, out, block, flush, scratch);
    // (also after a failure: the buffers of a piece too big for memory are not kept)
    scratch.long.trim(2 * CHUNK);
    r
}

fn merge_long_piece(
    vocab: &Vocab,
    piece: &[u8],
    limit: u32,
    out: &mut Vec<u32>,
    block: usize,
    flush: &mut dyn FnMut(&mut Vec<u32>),
    scratch: &mut Scratch,
) -> Result<()> {
    if piece.len() >= CHUNKED_MIN {
        if no_pairs(vocab, piece, limit, out, block, flush)? {
            return Ok(());
        }
        let budget = 4 * piece.len();
        let done = if block == usize::MAX {
            merge_chunked(vocab, piece, limit, CHUNK, budget, scratch, out)?
        } else {
            // at most one id per byte: reserved once, touched only as far as it is used
            let mut ids = crate::mem::try_big_vec(piece.len(), "the ids of a long piece")?;
            let done = merge_chunked(vocab, piece, limit, CHUNK, budget, scratch, &mut ids)?;
            if done {
                extend_in_blocks(out, ids.len(), block, flush, |r, out| {
                    out.extend_from_slice(&ids[r])
                })?;
            }
            done
        };
        if done {
            return Ok(());
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
    )
}

/// Pieces of [`HEAP_THRESHOLD`] bytes or more but fewer than this go to the short merge when
/// their atoms leave fewer than [`HEAP_THRESHOLD`] tokens (`atoms.rs`).
const ATOMS_LONG_MAX: usize = 1024;

/// BPE merge of a piece with tokens of rank < `limit`: `bpe_small` or `bpe_long` by length.
pub(crate) fn bpe(
    vocab: &Vocab,
    piece: &[u8],
    limit: u32,
    scratch: &mut Scratch,
    out: &mut Vec<u32>,
) -> Result<()> {
    if piece.len() < HEAP_THRESHOLD {
        bpe_small(vocab, piece, limit, scratch, out)
    } else {
        if limit == u32::MAX && piece.len() < ATOMS_LONG_MAX {
            // Long runs of Thai, kana or CJK: from their atoms, most are short enough for
            // the short merge.
            if let Some(&b) = piece.iter().find(|&&b| b >= 0x80) {
                if small::bpe_atoms(vocab, piece, b, scratch, out, HEAP_THRESHOLD)? {
                    return Ok(());
                }
            }
        }
        bpe_long_with(vocab, piece, limit, out, usize::MAX, &mut |_| {}, scratch)
    }
}

/// BPE of `bytes` using only tokens with rank < `limit` (used to recover merge lists).
pub fn bpe_merge_limited(
    vocab: &Vocab,
    bytes: &[u8],
    limit: u32,
    out: &mut Vec<u32>,
) -> Result<()> {
    with_scratch(|scratch| bpe(vocab, bytes, limit, scratch, out))
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Run `f` with this thread's scratch buffers (fresh ones if they are already in use).
pub(crate) fn with_scratch<T>(f: impl FnOnce(&mut Scratch) -> T) -> T {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => f(&mut s),
        Err(_) => f(&mut Scratch::default()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpe::test_vocabs::{lower_rank_vocab, toy_vocab};

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
                )
                .unwrap();
            }
            assert_eq!(a, b, "length {len}");
        }
        // no adjacent pair is a token: the bytes are the tokens (no merge machinery)
        let s = b"cacbcc".repeat(50);
        let mut a = vec![];
        bpe_long(&v, &s, u32::MAX, &mut a).unwrap();
        assert_eq!(a, s.iter().map(|&b| b as u32).collect::<Vec<_>>());
        let mut small = vec![];
        bpe_small(&v, &s[..100], u32::MAX, &mut Scratch::default(), &mut small).unwrap();
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
            bpe_small(v, &s, u32::MAX, &mut Scratch::default(), &mut a).unwrap();
            bpe_long(v, &s, u32::MAX, &mut b).unwrap();
            assert_eq!(a, b, "{:?}", String::from_utf8_lossy(&s));
        }
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
        bpe_long(&v, &s, u32::MAX, &mut out).unwrap();
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
        )
        .unwrap();
        let mut long = vec![];
        bpe_long(&v, &s[..1001], u32::MAX, &mut long).unwrap();
        assert_eq!(small, long);
    }
}

#[cfg(test)]
mod multilingual_tests {
    use super::*;
    use crate::bpe::test_vocabs::{multilingual_text, multilingual_vocab, reference_merge};

    /// Both merges give the reference merge's ids on random runs of CJK, kana, Thai and Latin
    /// characters of every length up to 360 bytes (the short merge's vector path starts above
    /// 16 tokens, the long merge at 128 bytes).
    #[test]
    fn merges_match_the_reference_on_long_multilingual_runs() {
        let mut seed = 37u64;
        let v = multilingual_vocab(&mut seed);
        let mut scratch = Scratch::default();
        for k in 0..300 {
            let n_chars = 1 + k % 120;
            let piece = multilingual_text(&mut seed, n_chars);
            let want = reference_merge(&v, &piece);
            let mut got = vec![];
            bpe(&v, &piece, u32::MAX, &mut scratch, &mut got).unwrap();
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&piece));
            let mut long = vec![];
            bpe_long(&v, &piece, u32::MAX, &mut long).unwrap();
            assert_eq!(long, want, "{:?}", String::from_utf8_lossy(&piece));
            {
                let mut small = vec![];
                bpe_small(&v, &piece, u32::MAX, &mut scratch, &mut small).unwrap();
                assert_eq!(small, want, "{:?}", String::from_utf8_lossy(&piece));
            }
        }
    }
}
