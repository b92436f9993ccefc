//! Text without added tokens, piece by piece: a piece that is one token is one lookup; other
//! pieces come from the per-thread piece cache or are merged by BPE.

use super::piece_cache::{self, PieceCache};
use super::Encoder;
use crate::bpe::{bpe, bpe_long_blocks, Scratch, Superword, SuperwordCaches, LONG_MAX, LONG_MIN};
use crate::error::Result;
use crate::mem::{try_reserve, KEPT};
use crate::vocab::Vocab;
use std::cell::RefCell;

/// In a blocked encode, pieces at least this long hand their ids over in blocks too.
const BLOCKED_PIECE_MIN: usize = 1 << 16;

/// How many pieces ahead of its encoding a superword piece's lookups are requested.
const AHEAD: usize = 8;

/// Pieces found before they are encoded (see `encode_pieces`).
const CHUNK: usize = 64;

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

/// A superword encoder's merge and this thread's caches of it.
struct SuperwordRef<'a> {
    sw: &'a Superword,
    caches: &'a mut SuperwordCaches,
}

/// Encode a piece that is not a single token: from the piece cache, else by BPE. (`out` has
/// room for [`piece_cache::MAX_PIECE`] more ids: a cached piece's ids fit.)
#[inline(never)]
fn encode_multi(
    vocab: &Vocab,
    superword: Option<&mut SuperwordRef>,
    piece: &[u8],
    cache: &mut PieceCache,
    scratch: &mut Scratch,
    out: &mut Vec<u32>,
) -> Result<()> {
    // (not a token: the caller looked it up)
    let Some(SuperwordRef { sw, caches }) = superword.filter(|_| piece.len() <= LONG_MAX) else {
        if piece.len() > LONG_MAX || !cache.in_use() {
            return bpe(vocab, piece, u32::MAX, scratch, out);
        }
        if let Some(ids) = cache.get(piece) {
            if ids.len() > piece_cache::MAX_PIECE {
                // (a piece of over MAX_PIECE bytes: more ids than the room made before it)
                try_reserve(out, ids.len(), "the ids")?;
            }
            out.extend_from_slice(ids);
        } else {
            let before = out.len();
            bpe(vocab, piece, u32::MAX, scratch, out)?;
            cache.insert(piece, &out[before..]);
        }
        return Ok(());
    };
    let SuperwordCaches {
        segments,
        sides,
        ids,
        long,
    } = &mut **caches;
    if piece.len() >= LONG_MIN {
        if let Some(c) = long.get(piece) {
            // (up to LONG_MAX ids: more than the room made before each piece)
            try_reserve(out, c.len(), "the ids")?;
            out.extend_from_slice(c);
        } else {
            let before = out.len();
            sw.encode(vocab, piece, segments, sides, ids, scratch, out)?;
            long.insert(piece, &out[before..]);
        }
    } else if !cache.in_use() {
        sw.encode(vocab, piece, segments, sides, ids, scratch, out)?;
    } else if let Some(c) = cache.get(piece) {
        out.extend_from_slice(c);
    } else {
        let before = out.len();
        sw.encode(vocab, piece, segments, sides, ids, scratch, out)?;
        cache.insert(piece, &out[before..]);
    }
    Ok(())
}

/// Room for [`piece_cache::MAX_PIECE`] more ids in `out` (see `encode_plain`).
#[cold]
#[inline(never)]
fn make_room(out: &mut Vec<u32>) -> Result<()> {
    try_reserve(out, piece_cache::MAX_PIECE, "the ids")
}

/// The pieces of a chunk (byte spans in the text) and their whole-piece lookups.
struct Chunk {
    spans: [(usize, usize); CHUNK],
    /// For a piece of 1 to 8 bytes, its packed key and home slot in the vocabulary's short
    /// table (computed once, when its line is requested); else `NOT_SHORT`.
    homes: [(u64, usize); CHUNK],
    ids: [Option<u32>; CHUNK],
}

const NOT_SHORT: (u64, usize) = (0, usize::MAX);

impl Chunk {
    const EMPTY: Chunk = Chunk {
        spans: [(0, 0); CHUNK],
        homes: [NOT_SHORT; CHUNK],
        ids: [None; CHUNK],
    };
}

/// One encoder's caches on one thread: its merged pieces, and for a superword encoder the
/// caches of [`Superword::encode`] (its segments are merged below its cut rank, so they are
/// kept apart; whole pieces of 17-255 bytes).
#[derive(Default)]
struct Kept {
    pieces: PieceCache,
    superword: SuperwordCaches,
}

/// The caches of the last [`KEPT`] encoders this thread used, least recently used first.
#[derive(Default)]
struct ThreadCaches {
    kept: Vec<Kept>,
}

impl ThreadCaches {
    /// The caches of encoder `owner`, now the most recently used: its own if kept, else
    /// empty ones (those of the least recently used encoder are dropped when `KEPT` are kept).
    fn of(&mut self, owner: u64) -> &mut Kept {
        match self.kept.iter().position(|k| k.pieces.owner == owner) {
            Some(i) => {
                let k = self.kept.remove(i);
                self.kept.push(k);
            }
            None => {
                if self.kept.len() == KEPT {
                    self.kept.remove(0);
                }
                let mut k = Kept::default();
                k.pieces.owner = owner;
                self.kept.push(k);
            }
        }
        let last = self.kept.len() - 1;
        &mut self.kept[last]
    }
}

thread_local! {
    static CHUNKS: RefCell<Chunk> = const { RefCell::new(Chunk::EMPTY) };
    static CACHES: RefCell<ThreadCaches> = RefCell::new(ThreadCaches::default());
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
        CACHES.with(|cell| {
            let mut caches = cell.borrow_mut();
            let Kept { pieces, superword } = caches.of(self.id);
            let sw = self.superword.as_ref().map(|sw| SuperwordRef {
                sw,
                caches: superword,
            });
            self.encode_pieces::<TRACK>(text, sw, pieces, scratch, out, limit, flush, last)
        })
    }

    /// The pieces of `text`, encoded with this thread's caches (see `encode_plain_impl`).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn encode_pieces<const TRACK: bool>(
        &self,
        text: &str,
        mut superword: Option<SuperwordRef>,
        cache: &mut PieceCache,
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
        limit: usize,
        flush: &mut dyn FnMut(&mut Vec<u32>),
        last: &mut usize,
    ) -> Result<()> {
        let vocab = &self.vocab;
        let mut failed = Ok(());
        // (a long piece that no long token hashes like is no token: no lookup)
        let lookup = |piece: &[u8], sw: &Option<SuperwordRef>| match sw {
            Some(r) if piece.len() >= LONG_MIN && !r.sw.may_be_long_token(piece) => None,
            _ => vocab.rank(piece),
        };
        // One piece whose whole-piece lookup gave `id`. (The compiler keeps it out of line:
        // the chunked loop below pushes a token itself.)
        let mut encode_id = |piece: &[u8],
                             id: Option<u32>,
                             cache: &mut PieceCache,
                             sw: &mut Option<SuperwordRef>,
                             out: &mut Vec<u32>| {
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
            let r = match id {
                Some(id) => {
                    out.push(id);
                    Ok(())
                }
                None if piece.len() >= BLOCKED_PIECE_MIN && limit != usize::MAX => {
                    bpe_long_blocks(vocab, piece, out, limit, flush, scratch)
                }
                None => encode_multi(vocab, sw.as_mut(), piece, cache, scratch, out),
            };
            if let Err(e) = r {
                failed = Err(e);
                return;
            }
            if out.len() >= limit {
                flush(out);
            }
        };
        let mut encode = |piece: &[u8],
                          cache: &mut PieceCache,
                          sw: &mut Option<SuperwordRef>,
                          out: &mut Vec<u32>| {
            let id = lookup(piece, sw);
            encode_id(piece, id, cache, sw, out)
        };
        if superword.is_some() {
            // Superword pieces are long and varied: their lookups miss the CPU caches. So the
            // lines of each piece's lookups (vocabulary, piece cache) are requested when the
            // scanner finds it, and the piece is encoded `AHEAD` pieces later.
            let bytes = text.as_bytes();
            let base = bytes.as_ptr() as usize;
            let mut ring = [(0usize, 0usize); AHEAD];
            let mut count = 0usize;
            self.pretok.for_each_piece(
                text,
                #[inline(always)]
                |p| {
                    let b = p.as_bytes();
                    if b.len() < LONG_MIN {
                        vocab.prefetch_rank(b);
                        cache.prefetch(b);
                    } else if let Some(r) = &superword {
                        if b.len() <= LONG_MAX {
                            r.caches.long.prefetch(b);
                        }
                    }
                    let slot = &mut ring[count % AHEAD];
                    if count >= AHEAD {
                        let (s, e) = *slot;
                        encode(&bytes[s..e], cache, &mut superword, out);
                    }
                    let s = b.as_ptr() as usize - base;
                    *slot = (s, s + b.len());
                    count += 1;
                },
            )?;
            for c in count.saturating_sub(AHEAD)..count {
                let (s, e) = ring[c % AHEAD];
                encode(&bytes[s..e], cache, &mut superword, out);
            }
        } else {
            // The vocabulary's tables (13 MB for o200k_base) and the piece cache do not fit in
            // the CPU caches, so a lookup done between two runs of the scanner waited for
            // its line with nothing else in flight. Now the scanner fills a chunk of pieces,
            // requesting each one's line as it finds it; the whole-piece lookups of the chunk
            // are then made one after the other (independent loads: their misses overlap),
            // the piece cache's line requested for each piece that is not a token, and only
            // then are the pieces encoded, in order.
            // (the chunk's arrays live in a thread-local: on the stack they were cleared on
            // every call, a fixed cost that showed on short texts)
            let mut go = |chunk: &mut Chunk| -> Result<()> {
                let Chunk { spans, homes, ids } = chunk;
                let bytes = text.as_bytes();
                let base = bytes.as_ptr() as usize;
                let mut n = 0usize;
                let mut run = |spans: &[(usize, usize)],
                               homes: &[(u64, usize)],
                               ids: &mut [Option<u32>],
                               cache: &mut PieceCache,
                               superword: &mut Option<SuperwordRef>| {
                    for ((id, &(s, e)), &(key, home)) in ids.iter_mut().zip(spans).zip(homes) {
                        let b = &bytes[s..e];
                        *id = if home != NOT_SHORT.1 {
                            vocab.rank_short_from(key, e - s, home)
                        } else {
                            vocab.rank(b)
                        };
                        if id.is_none() {
                            cache.prefetch(b);
                        }
                    }
                    for (&id, &(s, e)) in ids.iter().zip(spans) {
                        // (a token with room for it, inline; everything else through
                        // `encode_id`, which the compiler keeps out of line. After a failure
                        // tokens may still be pushed here: the encode returns the error.)
                        if let Some(id) = id {
                            if !TRACK && out.len() < out.capacity() && out.len() + 1 < limit {
                                out.push(id);
                                continue;
                            }
                        }
                        encode_id(&bytes[s..e], id, cache, superword, out);
                    }
                };
                self.pretok.for_each_piece(
                    text,
                    #[inline(always)]
                    |p| {
                        let b = p.as_bytes();
                        let s = b.as_ptr() as usize - base;
                        homes[n] = if (1..=8).contains(&b.len()) {
                            vocab.prefetch_short_at(bytes, s, b.len())
                        } else {
                            vocab.prefetch_rank(b);
                            NOT_SHORT
                        };
                        spans[n] = (s, s + b.len());
                        n += 1;
                        if n == CHUNK {
                            run(
                                &spans[..n],
                                &homes[..n],
                                &mut ids[..n],
                                cache,
                                &mut superword,
                            );
                            n = 0;
                        }
                    },
                )?;
                run(
                    &spans[..n],
                    &homes[..n],
                    &mut ids[..n],
                    cache,
                    &mut superword,
                );
                Ok(())
            };
            CHUNKS.with(|cell| match cell.try_borrow_mut() {
                Ok(mut chunk) => go(&mut chunk),
                Err(_) => {
                    // (re-entered from `flush`: arrays of its own)
                    let mut own = Chunk::EMPTY;
                    go(&mut own)
                }
            })?;
        }
        failed
    }
}

#[cfg(test)]
mod tests {
    use super::{ThreadCaches, KEPT};

    #[test]
    fn a_thread_keeps_the_caches_of_its_last_encoders() {
        let mut caches = ThreadCaches::default();
        caches.of(1).pieces.insert(b"ab c", &[7, 8]);
        caches.of(2).pieces.insert(b"xy z", &[9, 10]);
        assert_eq!(caches.of(1).pieces.get(b"ab c"), Some(&[7u32, 8][..]));
        assert_eq!(caches.of(2).pieces.get(b"ab c"), None);
        // order now: 1, 2; then 3.. fill the rest and push 1 (the least recently used) out
        for owner in 3..=KEPT as u64 + 1 {
            caches.of(owner);
        }
        assert_eq!(caches.kept.len(), KEPT);
        assert_eq!(caches.of(2).pieces.get(b"xy z"), Some(&[9u32, 10][..]));
        assert_eq!(caches.of(1).pieces.get(b"ab c"), None);
        assert_eq!(caches.kept.len(), KEPT);
    }
}
