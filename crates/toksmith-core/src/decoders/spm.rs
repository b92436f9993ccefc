//! sentencepiece's `DecodeIds`: control pieces vanish, the unknown piece reads as its surface
//! (` ⁇ `), runs of byte pieces are decoded as UTF-8 (one U+FFFD per invalid byte), `▁` reads as a
//! space, and the leading space that `add_dummy_prefix` put there is dropped.

use crate::mem::{try_push, TextBuf};
use crate::models::spm::{byte_piece_value, ModelProto, PieceType};
use crate::{Error, Result};

#[derive(Debug, Clone)]
pub struct SpmDecoder {
    pieces: Vec<String>,
    kinds: Vec<PieceType>,
    unk_surface: String,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
}

const SPACE_SYMBOL: &str = "\u{2581}";

impl SpmDecoder {
    /// The decoder of a model's pieces (copied: allocated fallibly, see [`crate::mem`]).
    pub fn new(m: &ModelProto) -> Result<Self> {
        const PIECES: &str = "the pieces of a SentencePiece model";
        Ok(SpmDecoder {
            pieces: crate::mem::try_map(
                &m.pieces,
                |p| crate::mem::try_string(&p.piece, PIECES),
                PIECES,
            )?,
            kinds: crate::mem::try_map(&m.pieces, |p| Ok(p.kind), PIECES)?,
            unk_surface: m.trainer_spec.unk_surface.clone(),
            add_dummy_prefix: m.normalizer_spec.add_dummy_prefix,
            remove_extra_whitespaces: m.normalizer_spec.remove_extra_whitespaces,
        })
    }

    /// The text of `ids`: an unknown id is an error naming it, a refused allocation (the text
    /// grows with the ids) [`Error::OutOfMemory`].
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        const WHAT: &str = "the decoded text";
        let mut text = TextBuf::with_capacity(ids.len(), WHAT)?;
        let mut bytes: Vec<u8> = Vec::new();
        let mut is_bos_ws = true;
        let mut bos_ws_seen = false;
        for &id in ids {
            let i = id as usize;
            let Some(kind) = self.kinds.get(i) else {
                return Err(Error::UnknownId {
                    id: u64::from(id),
                    n_vocab: self.pieces.len() as u64,
                });
            };
            if *kind == PieceType::Byte {
                try_push(
                    &mut bytes,
                    byte_piece_value(&self.pieces[i]).unwrap_or(0),
                    WHAT,
                )?;
                continue;
            }
            flush_bytes(&mut bytes, &mut text);
            if bos_ws_seen || !text.is_empty() {
                is_bos_ws = false;
            }
            // (written straight into the text: no copy of a piece)
            let consumed_ws = match kind {
                PieceType::Control => false,
                PieceType::Unknown => {
                    text.push_str(&self.unk_surface);
                    false
                }
                _ => {
                    let mut piece = self.pieces[i].as_str();
                    let mut has_bos_ws = false;
                    if is_bos_ws && (self.add_dummy_prefix || self.remove_extra_whitespaces) {
                        if let Some(rest) = piece.strip_prefix(SPACE_SYMBOL) {
                            piece = rest;
                            has_bos_ws = true;
                        }
                        if self.remove_extra_whitespaces {
                            has_bos_ws = false;
                        }
                    }
                    for (k, part) in piece.split(SPACE_SYMBOL).enumerate() {
                        if k > 0 {
                            text.push(' ');
                        }
                        text.push_str(part);
                    }
                    has_bos_ws
                }
            };
            bos_ws_seen = consumed_ws;
        }
        flush_bytes(&mut bytes, &mut text);
        text.finish()
    }
}

/// Bytes as UTF-8, each invalid byte one U+FFFD (sentencepiece decodes one character at a time).
fn flush_bytes(bytes: &mut Vec<u8>, text: &mut TextBuf) {
    let mut rest: &[u8] = bytes;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                text.push_str(s);
                break;
            }
            Err(e) => {
                let good = e.valid_up_to();
                text.push_str(std::str::from_utf8(&rest[..good]).unwrap_or_default());
                text.push('\u{fffd}');
                rest = &rest[good + 1..];
            }
        }
    }
    bytes.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_bytes_are_replaced_one_by_one() {
        let mut t = TextBuf::with_capacity(0, "test").unwrap();
        flush_bytes(&mut vec![0xe2, 0x98, b'a', 0xff, 0xe2, 0x98, 0x83], &mut t);
        assert_eq!(t.finish().unwrap(), "\u{fffd}\u{fffd}a\u{fffd}☃");
    }
}
