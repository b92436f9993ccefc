//! Text without added tokens, piece by piece: a piece that is one token is one lookup; other
//! pieces come from the per-thread piece cache or are merged by BPE.

use super::piece_cache::{self, PieceCache};
use super::Encoder;
use crate::bpe::{bpe, bpe_long_blocks, bpe_small, Scratch};
use crate::error::Result;
use crate::vocab::Vocab;
use std::cell::RefCell;

/// In a blocked encode, pieces at least this long hand their ids over in blocks too.
const BLOCKED_PIECE_MIN: usize = 1 << 16;

/// Encode one piece (no special tokens) with the full vocabulary.
#[inline]
pub fn encode_piece(vocab: &Vocab, piece: &[u8], scratch: &mut Scratch, out: &mut Vec<u32>) {
    match vocab.rank(piece) {
        Some(id) => out.push(id),
        None => bpe(vocab, piece, u32::MAX, scratch, out),
    }
}

/// Encode a piece that is not a single token: from the piece cache, else by BPE.
#[inline(never)]
fn encode_multi(
    vocab: &Vocab,
    piece: &[u8],
    cache: &mut PieceCache,
    scratch: &mut Scratch,
    out: &mut Vec<u32>,
) {
    if piece.len() <= piece_cache::MAX_PIECE && cache.in_use() {
        if let Some(ids) = cache.get(piece) {
            out.extend_from_slice(ids);
        } else {
            let before = out.len();
            bpe_small(vocab, piece, u32::MAX, scratch, out);
            cache.insert(piece, &out[before..]);
        }
    } else {
        bpe(vocab, piece, u32::MAX, scratch, out); // not a token: the caller looked it up
    }
}

thread_local! {
    static CACHE: RefCell<PieceCache> = RefCell::new(PieceCache::default());
}

impl Encoder {
    /// Encode text with no special/pinned handling. Whenever `out` holds `limit` ids or more after
    /// a piece, `flush` is called with it (and may empty it).
    pub(super) fn encode_plain(
        &self,
        text: &str,
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
        limit: usize,
        flush: &mut dyn FnMut(&mut Vec<u32>),
    ) -> Result<()> {
        let vocab = &self.vocab;
        CACHE.with(|cell| {
            let mut cache = cell.borrow_mut();
            if cache.owner != self.id {
                cache.owner = self.id;
                cache.clear();
            }
            let cache = &mut *cache;
            // The common case (the piece is one token) stays small enough to be inlined into
            // the scanner loop; everything else is out of line.
            self.pretok.for_each_piece(
                text,
                #[inline(always)]
                |p| {
                    let piece = p.as_bytes();
                    match vocab.rank(piece) {
                        Some(id) => out.push(id),
                        None if piece.len() >= BLOCKED_PIECE_MIN && limit != usize::MAX => {
                            bpe_long_blocks(vocab, piece, out, limit, flush, scratch)
                        }
                        None => encode_multi(vocab, piece, cache, scratch, out),
                    }
                    if out.len() >= limit {
                        flush(out);
                    }
                },
            )
        })
    }
}
