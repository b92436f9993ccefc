//! Merge lists recovered from a rank table (tiktoken files have ranks only): each token is the
//! BPE, with lower-ranked tokens only, of exactly two tokens.

use crate::bpe::bpe_merge_limited;
use crate::error::{Error, Result};
use crate::vocab::Vocab;

impl Vocab {
    /// Recover the merge list `(left_id, right_id, merged_id)` from the ranks: each token of
    /// length >= 2 must be the BPE encoding, with lower-ranked tokens only, of exactly two tokens.
    /// This holds for every vocabulary produced by BPE training (tiktoken's files included).
    pub fn recover_merges(&self) -> Result<Vec<(u32, u32, u32)>> {
        use rayon::prelude::*;
        const WHAT: &str = "the merges of a rank table";
        let mut tokens: Vec<(u32, &[u8])> = crate::mem::try_collect(
            self.ranks
                .iter()
                .filter(|(b, _)| b.len() >= 2)
                .map(|(b, &id)| (id, &b[..])),
            WHAT,
        )?;
        tokens.sort_unstable_by_key(|&(id, _)| id);
        // Each token's BPE is independent of the others': split across the pool (a 100k
        // vocabulary takes ~50 ms on one core), then the first failure in id order is reported.
        // (filled in place: rayon's collect would allocate infallibly)
        let mut parts: Vec<Option<(u32, u32)>> = crate::mem::try_filled(tokens.len(), None, WHAT)?;
        parts
            .par_iter_mut()
            .zip(tokens.par_iter())
            .with_min_len(1024)
            .try_for_each(|(slot, &(id, bytes))| -> Result<()> {
                let mut parts = Vec::with_capacity(4);
                bpe_merge_limited(self, bytes, id, &mut parts)?;
                *slot = (parts.len() == 2).then(|| (parts[0], parts[1]));
                Ok(())
            })?;
        // (every push below is within this room)
        let mut out = crate::mem::try_vec(tokens.len(), WHAT)?;
        for (&(id, bytes), p) in tokens.iter().zip(parts) {
            let Some((a, b)) = p else {
                let mut parts = Vec::new();
                bpe_merge_limited(self, bytes, id, &mut parts)?;
                return Err(Error::MergesUnrecoverable(format!(
                    "token {id} ({:?}) is not the merge of two lower-ranked tokens (BPE with lower ranks gives {} parts); \
                     this rank table can be used for encoding but has no merge list",
                    String::from_utf8_lossy(bytes),
                    parts.len()
                )));
            };
            out.push((a, b, id));
        }
        Ok(out)
    }
}
