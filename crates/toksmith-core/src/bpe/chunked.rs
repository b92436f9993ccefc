//! Long pieces merged in cache-sized chunks, joined by an exact check at each junction (with
//! the proof that the result equals merging the piece in one go).

use crate::bpe::long::merge_long;
use crate::bpe::small::{bpe_small, Scratch, HEAP_THRESHOLD};
use crate::error::Result;
use crate::mem::try_reserve;
use crate::vocab::Vocab;
use rustc_hash::FxHashMap;

/// Pieces at least this long are merged in chunks by [`merge_chunked`].
pub(crate) const CHUNKED_MIN: usize = 1 << 17;
/// Bytes per chunk in [`merge_chunked`]: the chunk's records (12 bytes per byte) and rank
/// buckets stay in a core's L2 cache.
pub(crate) const CHUNK: usize = 1 << 15;

/// Whether `[a, b]` is the BPE merge of the bytes of `a` followed by those of `b`.
fn compatible(
    vocab: &Vocab,
    limit: u32,
    (a, b): (u32, u32),
    work: &mut PairWork,
    scratch: &mut Scratch,
) -> Result<bool> {
    let key = ((a as u64) << 32) | b as u64;
    if let Some(&known) = work.known.get(&key) {
        return Ok(known);
    }
    work.bytes.clear();
    for t in [a, b] {
        let (s, len) = vocab.span(t).expect("merged ids are tokens");
        work.bytes.extend_from_slice(&vocab.flat[s..s + len]);
    }
    work.ids.clear();
    merge_any(vocab, &work.bytes, limit, scratch, &mut work.ids)?;
    let ok = work.ids[..] == [a, b];
    work.known.insert(key, ok);
    Ok(ok)
}

/// Buffers and memo for [`compatible`] checks.
#[derive(Default)]
struct PairWork {
    known: FxHashMap<u64, bool>,
    bytes: Vec<u8>,
    ids: Vec<u32>,
}

/// Pure merge (no whole-piece lookup) of any length, in one go.
pub(crate) fn merge_any(
    vocab: &Vocab,
    bytes: &[u8],
    limit: u32,
    scratch: &mut Scratch,
    out: &mut Vec<u32>,
) -> Result<()> {
    if bytes.len() < HEAP_THRESHOLD {
        bpe_small(vocab, bytes, limit, scratch, out)
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
        )
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
/// merges the piece in one go. ([`crate::error::Error::OutOfMemory`] when the allocator refuses
/// room for the ids: `ids` is then put back as it was.)
pub(crate) fn merge_chunked(
    vocab: &Vocab,
    piece: &[u8],
    limit: u32,
    chunk: usize,
    budget: usize,
    scratch: &mut Scratch,
    ids: &mut Vec<u32>,
) -> Result<bool> {
    let base = ids.len();
    let r = merge_chunks(vocab, piece, limit, chunk, budget, scratch, ids);
    if !matches!(r, Ok(true)) {
        ids.truncate(base);
    }
    r
}

/// [`merge_chunked`], leaving `ids` as it is on failure.
fn merge_chunks(
    vocab: &Vocab,
    piece: &[u8],
    limit: u32,
    chunk: usize,
    mut budget: usize,
    scratch: &mut Scratch,
    ids: &mut Vec<u32>,
) -> Result<bool> {
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
        )?;
        if ids.len() > base
            && !compatible(
                vocab,
                limit,
                (ids[ids.len() - 1], part[0]),
                &mut work,
                scratch,
            )?
        {
            let have = ids.len() - base;
            let (mut a, mut b) = (1usize, 1usize);
            loop {
                let w0 = pos - ids[ids.len() - a..].iter().map(|&t| len(t)).sum::<usize>();
                let w1 = pos + part[..b].iter().map(|&t| len(t)).sum::<usize>();
                if w1 - w0 > budget {
                    return Ok(false);
                }
                budget -= w1 - w0;
                window.clear();
                merge_any(vocab, &piece[w0..w1], limit, scratch, &mut window)?;
                let last = window[window.len() - 1];
                let left_ok = a == have
                    || compatible(
                        vocab,
                        limit,
                        (ids[ids.len() - a - 1], window[0]),
                        &mut work,
                        scratch,
                    )?;
                let right_ok = b == part.len()
                    || compatible(vocab, limit, (last, part[b]), &mut work, scratch)?;
                if left_ok && right_ok {
                    ids.truncate(ids.len() - a);
                    try_reserve(ids, window.len(), "the ids of a long piece")?;
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
        try_reserve(ids, part.len(), "the ids of a long piece")?;
        ids.extend_from_slice(&part);
        pos = end;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpe::test_vocabs::{lower_rank_vocab, toy_vocab};

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
                )
                .unwrap();
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
                    )
                    .unwrap());
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
                        merge_any(v, c, u32::MAX, &mut scratch, &mut naive).unwrap();
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
        assert!(!merge_chunked(&vocabs[0], &s, u32::MAX, 3, 0, &mut scratch, &mut ids).unwrap());
        assert_eq!(ids, [1, 2]);
    }
}
