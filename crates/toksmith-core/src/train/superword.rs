//! Superword merges: a second training stage over the tokens of a trained byte-level BPE
//! (SuperBPE, Liu et al. 2025). The first stage learns merges inside the pieces of a fine split
//! (words, operator runs, indentation); the second counts coarser pieces (spans of several
//! fine pieces) already encoded with the first stage's merges, and learns merges across the fine
//! boundaries (`" = self."`, `"\n    return"`). The result is an ordinary merge list: encoding
//! the coarse pieces with all merges in rank order is what the second stage trained on.

use super::merge::{train_symbol_merges, MergeLimits, MergeProgress, Pair};
use crate::error::{Error, Result};
use rustc_hash::FxHashMap;

/// Learn up to `num_new` new tokens from `words` (token-id sequences with counts) over the
/// vocabulary `tokens` (the bytes of ids `0..tokens.len()`). A merge whose bytes spell a token
/// that already exists reuses its id (it makes no new token). Returns the merges in order with
/// the id each made; fresh ids continue from `tokens.len()`. The merge list stops once it has
/// made `num_new` new tokens, or when the words run out of pairs (within `limits`).
pub fn train_token_merges<T: AsRef<[u8]>>(
    words: &[(Vec<u32>, u64)],
    tokens: &[T],
    num_new: usize,
    limits: MergeLimits,
    progress: &mut dyn FnMut(MergeProgress) -> bool,
) -> Result<Vec<(Pair, u32)>> {
    if tokens.len() >= u32::MAX as usize || num_new >= (u32::MAX as usize - tokens.len()) {
        return Err(Error::InvalidArgument(format!(
            "{} tokens and {num_new} new ones do not fit 32-bit ids",
            tokens.len()
        )));
    }
    // (what grows with the tokens and with the merges is allocated fallibly)
    const WHAT: &str = "the spelled tokens of training";
    let mut spelled: Vec<Vec<u8>> = crate::mem::try_vec(tokens.len(), WHAT)?;
    for t in tokens {
        spelled.push(crate::mem::try_bytes(t.as_ref(), WHAT)?);
    }
    let mut index: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
    crate::mem::try_reserve_map(&mut index, spelled.len(), WHAT)?;
    for (i, t) in spelled.iter().enumerate() {
        if !index.contains_key(t) {
            index.insert(crate::mem::try_bytes(t, WHAT)?, i as u32);
        }
    }
    let mut lens: Vec<usize> = crate::mem::try_vec(spelled.len(), WHAT)?;
    lens.extend(spelled.iter().map(Vec::len));
    // Merges that only re-spell existing tokens are rare (the words come from an encoder that
    // already merged every adjacent pair spelling a token); a little room covers them.
    let asked = num_new + num_new / 16 + 64;
    let mut fresh_made = 0usize;
    let mut cut_at: Option<usize> = None;
    let mut n_merges = 0usize;
    let merges = train_symbol_merges(
        words,
        lens,
        asked,
        limits,
        &mut |a, b, fresh| {
            n_merges += 1;
            let (x, y) = (&spelled[a as usize], &spelled[b as usize]);
            let mut t = crate::mem::try_vec(x.len() + y.len(), WHAT)?;
            t.extend_from_slice(x);
            t.extend_from_slice(y);
            if let Some(&id) = index.get(&t) {
                return Ok(id);
            }
            if fresh_made < num_new {
                fresh_made += 1;
                if fresh_made == num_new {
                    cut_at = Some(n_merges);
                }
            }
            crate::mem::try_reserve_map(&mut index, 1, WHAT)?;
            crate::mem::try_reserve(&mut spelled, 1, WHAT)?;
            index.insert(crate::mem::try_bytes(&t, WHAT)?, fresh);
            spelled.push(t);
            Ok(fresh)
        },
        progress,
    )?;
    let mut merges = merges;
    if let Some(n) = cut_at {
        merges.truncate(n);
    }
    Ok(merges)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes_vocab() -> Vec<Vec<u8>> {
        (0..=255u8).map(|b| vec![b]).collect()
    }

    #[test]
    fn merges_across_pieces_and_reuses_spelled_tokens() {
        let mut tokens = bytes_vocab();
        tokens.push(b"ab".to_vec()); // 256
        let ab = 256;
        // "ab ab" more often than "aab"; (ab, ' ') and (' ', ab) tie: the smaller pair first
        let words = vec![
            (vec![ab, b' ' as u32, ab], 10u64),
            (vec![b'a' as u32, ab], 3),
        ];
        let merges =
            train_token_merges(&words, &tokens, 2, MergeLimits::default(), &mut |_| true).unwrap();
        assert_eq!(merges[0], ((b' ' as u32, ab), 257));
        assert_eq!(merges[1], ((ab, 257), 258));
        assert_eq!(merges.len(), 2);
        // a pair spelling an existing token reuses its id and makes no new one
        let words = vec![(vec![b'a' as u32, b'b' as u32, b'c' as u32], 5u64)];
        let merges =
            train_token_merges(&words, &tokens, 1, MergeLimits::default(), &mut |_| true).unwrap();
        assert_eq!(merges, vec![((97, 98), ab), ((ab, 99), 257)]);
    }
}
