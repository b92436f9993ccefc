//! Text without added tokens, piece by piece: a piece that is one token is one lookup; other
//! pieces come from the per-thread piece cache or are merged by BPE.

use super::piece_cache::{self, PieceCache};
use super::Encoder;
use crate::bpe::{bpe, bpe_long_blocks, bpe_small, Scratch, Superword};
use crate::error::Result;
use crate::mem::try_reserve;
use crate::vocab::Vocab;
use std::cell::RefCell;

/// In a blocked encode, pieces at least this long hand their ids over in blocks too.
const BLOCKED_PIECE_MIN: usize = 1 << 16;

/// Encode one piece (no special tokens) with the full vocabulary.
#[inline]
pub fn encode_piece(
    vocab: &Vocab,
    piece: &[u8],
    scratch: &mut Scratch,
    out: &mut Vec<u32>,
) -> Result<()> {
    match vocab.rank(piece) {
        Some(id) => {
            try_reserve(out, 1, "the ids")?;
            out.push(id);
            Ok(())
        }
        None => bpe(vocab, piece, u32::MAX, scratch, out),
    }
}

/// Encode a piece that is not a single token: from the piece cache, else by BPE. (`out` has
/// room for [`piece_cache::MAX_PIECE`] more ids: a cached piece's ids fit.)
#[inline(never)]
fn encode_multi(
    vocab: &Vocab,
    superword: Option<&Superword>,
    piece: &[u8],
    cache: &mut PieceCache,
    scratch: &mut Scratch,
    out: &mut Vec<u32>,
) -> Result<()> {
    if piece.len() <= piece_cache::MAX_PIECE && cache.in_use() {
        if let Some(ids) = cache.get(piece) {
            out.extend_from_slice(ids);
        } else {
            let before = out.len();
            match superword {
                Some(sw) => SEGMENTS.with(|cell| {
                    let (seg_cache, ids) = &mut *cell.borrow_mut();
                    sw.encode(vocab, piece, seg_cache, ids, scratch, out)
                })?,
                None => bpe_small(vocab, piece, u32::MAX, scratch, out)?,
            }
            cache.insert(piece, &out[before..]);
        }
        Ok(())
    } else {
        bpe(vocab, piece, u32::MAX, scratch, out) // not a token: the caller looked it up
    }
}

/// Room for [`piece_cache::MAX_PIECE`] more ids in `out` (see `encode_plain`).
#[cold]
#[inline(never)]
fn make_room(out: &mut Vec<u32>) -> Result<()> {
    try_reserve(out, piece_cache::MAX_PIECE, "the ids")
}

thread_local! {
    static CACHE: RefCell<PieceCache> = RefCell::new(PieceCache::default());
    /// The segments of [`Superword::encode`] (merged below its cut rank, so kept apart from
    /// `CACHE`), and a buffer for their ids.
    static SEGMENTS: RefCell<(PieceCache, Vec<u32>)> = RefCell::new(Default::default());
}

impl Encoder {
    /// Encode text with no special/pinned handling. Whenever `out` holds `limit` ids or more after
    /// a piece, `flush` is called with it (and may empty it).
    ///
    /// `out` grows with the text, so it never grows by an infallible push: before each piece
    /// it is given room for [`piece_cache::MAX_PIECE`] ids (a one-token piece pushes one id, a
    /// cached piece at most that many), and the merges reserve their own room; a refused
    /// allocation ends the encode with [`crate::Error::OutOfMemory`] instead of an abort.
    pub(super) fn encode_plain(
        &self,
        text: &str,
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
        limit: usize,
        flush: &mut dyn FnMut(&mut Vec<u32>),
    ) -> Result<()> {
        self.encode_plain_impl::<false>(text, scratch, out, limit, flush, &mut 0)
    }

    /// [`Encoder::encode_plain`] without blocks, returning how many ids its last piece has
    /// (0 for a text without pieces): the unstable end that `encode_bytes` merges again.
    pub(super) fn encode_plain_last(
        &self,
        text: &str,
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
    ) -> Result<usize> {
        let mut last = out.len();
        self.encode_plain_impl::<true>(text, scratch, out, usize::MAX, &mut |_| {}, &mut last)?;
        Ok(out.len() - last)
    }

    /// `encode_plain`; with `TRACK`, `last` is set to the length of `out` before each piece
    /// (a separate instance, so the ordinary encode's loop has no extra store).
    fn encode_plain_impl<const TRACK: bool>(
        &self,
        text: &str,
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
        limit: usize,
        flush: &mut dyn FnMut(&mut Vec<u32>),
        last: &mut usize,
    ) -> Result<()> {
        let vocab = &self.vocab;
        CACHE.with(|cell| {
            let mut cache = cell.borrow_mut();
            if cache.owner != self.id {
                cache.owner = self.id;
                cache.clear();
                if self.superword.is_some() {
                    SEGMENTS.with(|cell| cell.borrow_mut().0.clear());
                }
            }
            let cache = &mut *cache;
            let mut failed = Ok(());
            // The common case (the piece is one token) stays small enough to be inlined into
            // the scanner loop; everything else is out of line.
            self.pretok.for_each_piece(
                text,
                #[inline(always)]
                |p| {
                    if failed.is_err() {
                        return; // (the scanner runs to the end; nothing more is encoded)
                    }
                    if out.capacity() - out.len() < piece_cache::MAX_PIECE {
                        if let Err(e) = make_room(out) {
                            failed = Err(e);
                            return;
                        }
                    }
                    if TRACK {
                        *last = out.len();
                    }
                    let piece = p.as_bytes();
                    let r = match vocab.rank(piece) {
                        Some(id) => {
                            out.push(id);
                            Ok(())
                        }
                        None if piece.len() >= BLOCKED_PIECE_MIN && limit != usize::MAX => {
                            bpe_long_blocks(vocab, piece, out, limit, flush, scratch)
                        }
                        None => {
                            encode_multi(vocab, self.superword.as_ref(), piece, cache, scratch, out)
                        }
                    };
                    if let Err(e) = r {
                        failed = Err(e);
                        return;
                    }
                    if out.len() >= limit {
                        flush(out);
                    }
                },
            )?;
            failed
        })
    }
}
