//! Decoding: ids -> bytes.

use crate::error::{Error, Result};
use crate::vocab::Vocab;

/// Concatenate the bytes of `ids`; an unknown id is an error naming it.
///
/// Two passes: the first checks every id and sums the lengths, the second copies. Tokens of up
/// to 16 bytes (nearly all) are copied as one 16-byte block into the slack at the end of the
/// output (the token table is padded for this), avoiding a `memcpy` call per token.
pub fn decode_bytes(vocab: &Vocab, ids: &[u32]) -> Result<Vec<u8>> {
    let mut total = 0usize;
    for &id in ids {
        match vocab.span(id) {
            Some((_, len)) => total += len,
            None => {
                return Err(Error::UnknownId {
                    id: id as u64,
                    n_vocab: vocab.n_vocab() as u64,
                })
            }
        }
    }
    let mut out: Vec<u8> = Vec::with_capacity(total + 16);
    let flat = &vocab.flat;
    let dst = out.as_mut_ptr();
    let mut w = 0usize;
    for &id in ids {
        let (s, len) = vocab.span(id).expect("checked above");
        // SAFETY: `w + len <= total` and the buffer has `total + 16` bytes, so a 16-byte write at
        // `w` stays in bounds; `flat` has 16 bytes of padding after its last token, so a 16-byte
        // read at `s` (a token start) stays in bounds too. Source and destination do not overlap.
        unsafe {
            if len <= 16 {
                std::ptr::copy_nonoverlapping(flat.as_ptr().add(s), dst.add(w), 16);
            } else {
                std::ptr::copy_nonoverlapping(flat.as_ptr().add(s), dst.add(w), len);
            }
        }
        w += len;
    }
    // SAFETY: the first `total` bytes were written above.
    unsafe { out.set_len(total) };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::{AddedKind, AddedToken};

    #[test]
    fn decode_concatenates_and_checks_ids() {
        let mut m: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        m.push((b"a long token of more than sixteen bytes".to_vec(), 256));
        let added = vec![AddedToken {
            text: "<s>".into(),
            id: 300,
            kind: AddedKind::Special,
        }];
        let v = Vocab::new(m, added).unwrap();
        let out = decode_bytes(&v, &[104, 105, 256, 300, 0, 255]).unwrap();
        assert_eq!(
            out,
            b"hia long token of more than sixteen bytes<s>\x00\xff".to_vec()
        );
        assert_eq!(decode_bytes(&v, &[]).unwrap(), Vec::<u8>::new());
        assert!(matches!(
            decode_bytes(&v, &[1, 299]),
            Err(Error::UnknownId { id: 299, .. })
        ));
        assert!(matches!(
            decode_bytes(&v, &[5000]),
            Err(Error::UnknownId { id: 5000, .. })
        ));
    }
}
