//! Decoding: ids -> bytes.

use crate::error::{Error, Result};
use crate::mem::prefetch;
use crate::vocab::Vocab;

/// How many ids ahead `decode_into` prefetches token bytes (twice that for their spans).
const DECODE_AHEAD: usize = 8;

/// Concatenate the bytes of `ids`; an unknown id is an error naming it.
///
/// One pass: tokens of up to 16 bytes (nearly all) are copied as one 16-byte block into the
/// slack at the end of the output (the token table is padded for this), avoiding a `memcpy`
/// call per token; the buffer grows when less than a token + 16 bytes is left.
pub fn decode_bytes(vocab: &Vocab, ids: &[u32]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    decode_into(vocab, ids, &mut out)?;
    Ok(out)
}

/// [`decode_bytes`] appending to `out`, a buffer the caller may reuse (writing a 10 MB result
/// into fresh memory costs about 8 ms of page faults on the benchmark machine).
pub fn decode_into(vocab: &Vocab, ids: &[u32], out: &mut Vec<u8>) -> Result<()> {
    crate::mem::try_reserve(out, ids.len().saturating_mul(4) + 64, "the decoded bytes")?;
    let flat = &vocab.flat;
    let spans = &vocab.spans;
    for (k, &id) in ids.iter().enumerate() {
        // Token records are read in id order, i.e. at random: ask for the span of the id
        // `2 * AHEAD` places on and for the bytes of the one `AHEAD` places on, so the cache
        // misses overlap.
        if let Some(&far) = ids.get(k + 2 * DECODE_AHEAD) {
            prefetch(spans.as_ptr().wrapping_add(far as usize));
        }
        if let Some(&near) = ids.get(k + DECODE_AHEAD) {
            if let Some(&(s, _)) = spans.get(near as usize) {
                prefetch(flat.as_ptr().wrapping_add(s as usize));
            }
        }
        let Some((s, len)) = vocab.span(id) else {
            return Err(Error::UnknownId {
                id: id as u64,
                n_vocab: vocab.n_vocab() as u64,
            });
        };
        let w = out.len();
        if out.capacity() - w < len + 16 {
            crate::mem::try_reserve(out, len + 16 + w / 2, "the decoded bytes")?;
        }
        // SAFETY: the capacity check above leaves at least `len + 16` writable bytes at `w`;
        // `flat` has 16 bytes of padding after its last token, so a 16-byte read at `s` (a
        // token start) stays in bounds; the regions do not overlap; `set_len` covers exactly
        // the `len` bytes written for this token.
        unsafe {
            let dst = out.as_mut_ptr().add(w);
            if len <= 16 {
                std::ptr::copy_nonoverlapping(flat.as_ptr().add(s), dst, 16);
            } else {
                std::ptr::copy_nonoverlapping(flat.as_ptr().add(s), dst, len);
            }
            out.set_len(w + len);
        }
    }
    Ok(())
}

/// The character span of each id's bytes in the text the ids decode to: `(start, end)` in
/// characters (code points), from the character holding the token's first byte to the one
/// holding its last, so the byte tokens of one multi-byte character share its span. `out` is
/// cleared first. Meaningful when the bytes are UTF-8; an unknown id is an error naming it, a
/// refused allocation [`Error::OutOfMemory`].
pub fn char_spans(vocab: &Vocab, ids: &[u32], out: &mut Vec<(usize, usize)>) -> Result<()> {
    out.clear();
    crate::mem::try_reserve(out, ids.len(), "the character spans")?;
    let mut chars = 0usize; // characters begun before this token
    for &id in ids {
        let b = vocab.token_bytes(id)?;
        let inside = b.first().is_some_and(|&c| is_continuation(c));
        let start = chars.saturating_sub(inside as usize);
        chars += b.iter().filter(|&&c| !is_continuation(c)).count();
        out.push((start, chars));
    }
    Ok(())
}

/// A UTF-8 continuation byte (`0b10xxxxxx`); every other byte begins a character.
fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::added::{AddedKind, AddedToken};

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

    #[test]
    fn char_spans_follow_characters() {
        let mut m: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        m.push(("é".as_bytes().to_vec(), 256)); // 2 bytes, one character
        m.push((b"\x98\x80!".to_vec(), 257)); // the end of an emoji, then '!'
        let added = vec![AddedToken {
            text: "<s>".into(),
            id: 300,
            kind: AddedKind::Special,
        }];
        let v = Vocab::new(m, added).unwrap();
        // "aé<s>😀!" as a, é, <s>, F0, 9F, [98 80 !]
        let ids = [97, 256, 300, 0xF0, 0x9F, 257];
        let text = String::from_utf8(decode_bytes(&v, &ids).unwrap()).unwrap();
        assert_eq!(text, "aé<s>😀!");
        let mut spans = vec![(9, 9)];
        char_spans(&v, &ids, &mut spans).unwrap();
        assert_eq!(spans, [(0, 1), (1, 2), (2, 5), (5, 6), (5, 6), (5, 7)]);
        // a text that begins inside a character: clamped at 0
        char_spans(&v, &[0x80, 97], &mut spans).unwrap();
        assert_eq!(spans, [(0, 0), (0, 1)]);
        assert!(matches!(
            char_spans(&v, &[97, 299], &mut spans),
            Err(Error::UnknownId { id: 299, .. })
        ));
    }
}
