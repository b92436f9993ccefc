//! Decoding: ids -> bytes.

use crate::error::Result;
use crate::vocab::Vocab;

/// Concatenate the bytes of `ids`; an unknown id is an error naming it.
pub fn decode_bytes(vocab: &Vocab, ids: &[u32]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(ids.len() * 4);
    for &id in ids {
        out.extend_from_slice(vocab.token_bytes(id)?);
    }
    Ok(out)
}
