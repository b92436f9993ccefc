//! A per-thread table of whole pieces of up to [`MAX_LEN`] bytes, answered by one probe:
//! seeded with every vocabulary token of that length (its id), and filled with the ids of the
//! pieces merged on this thread.
//!
//! Without it, a piece costs a lookup in the vocabulary (a filter's block and the slot of a
//! 4 MB table for o200k_base), and a piece that is not one token a second probe in the piece
//! cache, then a copy of its ids from the cache's id vector; on warm text those loads were the
//! largest stall of the encode. Here both kinds of piece are one 32-byte slot (key and up to
//! three ids inline), and a piece that the table lacks is known not to be a token.
//!
//! The seed ([`Seed`], built once per encoder) is copied into a thread's table when that
//! thread has encoded [`ADOPT`] bytes with the encoder, outside a rayon job (a batch's worker
//! threads keep the vocabulary and the piece cache: a copy per worker would cost more memory
//! and time than one batch gains). The table never grows: once it holds [`Seed::limit`]
//! entries (or its spilled ids reach [`SPILL_MAX`]), the next chunk of pieces starts from a
//! fresh copy of the seed. Slot indexes found for a chunk stay valid while the chunk is
//! encoded, because entries never move and a reset only happens between chunks.

use super::piece_cache::{HitRate, MIN_HITS};
use crate::error::Result;
use crate::table::InlineKey;
use crate::vocab::Vocab;

/// Longest piece the table holds.
pub(crate) const MAX_LEN: usize = 16;
/// Ids kept in a slot; a piece with more keeps them in the spill vector.
const INLINE: usize = 3;
/// `Entry::n` of a piece whose ids are in the spill vector (`ids[0]` offset, `ids[1]` count).
const SPILLED: u8 = u8::MAX;
/// Most ids in a thread's spill vector before the table is started afresh (4 MB).
const SPILL_MAX: usize = 1 << 20;
/// Bytes a thread encodes with an encoder before it copies the encoder's seed (the copy is
/// 16 MB for o200k_base: about a tenth of the time those bytes take to encode).
#[cfg(not(test))]
const ADOPT: usize = 1 << 19;
#[cfg(test)]
const ADOPT: usize = 64;
/// A slot index that means "not in the table".
pub(crate) const MISS: u32 = u32::MAX;

#[derive(Clone, Copy, Default, Debug)]
#[repr(C, align(32))]
struct Entry {
    /// the piece's first 8 bytes and the rest, little-endian, zero-extended
    lo: u64,
    hi: u64,
    ids: [u32; INLINE],
    /// piece length; 0 = empty slot
    len: u8,
    /// number of ids (1 for a vocabulary token, never for a merged piece), or [`SPILLED`]
    n: u8,
}

#[inline(always)]
fn key(b: &[u8]) -> (u64, u64) {
    if b.len() <= 8 {
        (u64::pack(b), 0)
    } else {
        (u64::pack(&b[..8]), u64::pack(&b[8..]))
    }
}

#[inline(always)]
fn home(lo: u64, hi: u64, len: usize, shift: u32) -> usize {
    ((lo ^ hi.rotate_left(29))
        .wrapping_add(len as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        >> shift) as usize
}

/// From the home slot of a piece, the first slot that is empty or holds it.
#[inline(always)]
fn probe(slots: &[Entry], shift: u32, lo: u64, hi: u64, len: usize) -> usize {
    let mask = slots.len() - 1;
    let mut i = home(lo, hi, len, shift);
    loop {
        let e = &slots[i];
        if e.len == 0 || (e.lo == lo && e.hi == hi && e.len as usize == len) {
            return i;
        }
        i = (i + 1) & mask;
    }
}

/// The vocabulary's tokens of up to [`MAX_LEN`] bytes in a table at most 3/8 full, shared by
/// the threads that copy it.
#[derive(Debug)]
pub(crate) struct Seed {
    slots: Vec<Entry>,
    shift: u32,
    used: usize,
}

impl Seed {
    /// ([`crate::Error::OutOfMemory`] when the table does not fit: the encoder then keeps
    /// its other path.)
    pub(crate) fn new(vocab: &Vocab) -> Result<Seed> {
        let n = vocab.ranks.keys().filter(|k| k.len() <= MAX_LEN).count();
        let cap = (n * 8 / 3 + 1).next_power_of_two().max(1024);
        let mut slots = crate::mem::try_big_vec(cap, "the seeded piece table")?;
        slots.resize(cap, Entry::default());
        let shift = 64 - cap.trailing_zeros();
        for (k, &id) in vocab.ranks.iter() {
            if k.len() <= MAX_LEN {
                let (lo, hi) = key(k);
                let i = probe(&slots, shift, lo, hi, k.len());
                slots[i] = Entry {
                    lo,
                    hi,
                    ids: [id, 0, 0],
                    len: k.len() as u8,
                    n: 1,
                };
            }
        }
        Ok(Seed {
            slots,
            shift,
            used: n,
        })
    }

    /// Entries a thread's copy may hold before it starts afresh: 5/8 of the slots.
    #[cfg(not(test))]
    fn limit(&self) -> usize {
        self.slots.len() / 8 * 5
    }

    /// (in tests, 64 merged pieces: the tables start afresh often)
    #[cfg(test)]
    fn limit(&self) -> usize {
        self.used + 64
    }
}

/// One thread's table (see the module notes); `owner` is the encoder whose seed it copied.
#[derive(Default)]
pub(crate) struct Seeded {
    owner: u64,
    slots: Vec<Entry>,
    shift: u32,
    used: usize,
    limit: usize,
    spill: Vec<u32>,
    /// set by an insert refused for room: the next chunk starts from the seed again
    full: bool,
    rate: HitRate,
    /// the encoder whose bytes `seen` counts, toward its seed's copy
    pending: u64,
    seen: usize,
}

impl Seeded {
    /// Whether this thread encodes the `len` bytes of a text with encoder `id` through the
    /// table: yes when it holds that encoder's seed, or when the thread has now encoded
    /// [`ADOPT`] bytes with it outside a rayon job and its seed (`seed()`) is copied.
    #[inline]
    pub(crate) fn active<'s>(
        &mut self,
        id: u64,
        len: usize,
        seed: impl FnOnce() -> Option<&'s Seed>,
    ) -> bool {
        if self.owner == id && !self.slots.is_empty() {
            return true;
        }
        if self.pending != id {
            self.pending = id;
            self.seen = 0;
        }
        self.seen = self.seen.saturating_add(len);
        if self.seen < ADOPT || rayon::current_thread_index().is_some() {
            return false;
        }
        let Some(seed) = seed() else {
            return false;
        };
        if self.copy(seed).is_err() {
            // (no room for a copy: the other path, and no new try for a while)
            self.seen = 0;
            return false;
        }
        self.owner = id;
        true
    }

    /// This table made a copy of `seed` (its memory reused when the size is the same).
    fn copy(&mut self, seed: &Seed) -> Result<()> {
        if self.slots.len() != seed.slots.len() {
            self.owner = 0;
            self.slots = Vec::new();
            let mut v = crate::mem::try_big_vec(seed.slots.len(), "a thread's piece table")?;
            v.extend_from_slice(&seed.slots);
            self.slots = v;
        } else {
            self.slots.copy_from_slice(&seed.slots);
        }
        self.shift = seed.shift;
        self.used = seed.used;
        self.limit = seed.limit();
        self.spill.clear();
        self.full = false;
        self.rate = HitRate::default();
        Ok(())
    }

    /// Before a chunk's lookups: start afresh from `seed` when the table is full.
    #[inline(always)]
    pub(crate) fn begin_chunk(&mut self, seed: &Seed) {
        if self.full && self.copy(seed).is_err() {
            // (cannot happen: the same size reuses the memory; an empty table would only
            // make every piece a miss, merged exactly)
            self.full = false;
        }
    }

    /// Ask for the slot where the lookup of `piece` (1 to [`MAX_LEN`] bytes) starts.
    #[inline(always)]
    pub(crate) fn prefetch(&self, piece: &[u8]) {
        let (lo, hi) = key(piece);
        let i = home(lo, hi, piece.len(), self.shift);
        crate::mem::prefetch(self.slots.as_ptr().wrapping_add(i));
    }

    /// The slot that holds `piece` (1 to [`MAX_LEN`] bytes), or [`MISS`]: then the piece is
    /// no token and not merged here yet.
    #[inline(always)]
    pub(crate) fn find(&self, piece: &[u8]) -> u32 {
        let (lo, hi) = key(piece);
        let i = probe(&self.slots, self.shift, lo, hi, piece.len());
        if self.slots[i].len == 0 {
            MISS
        } else {
            i as u32
        }
    }

    /// Append the ids of the piece in slot `i` (a [`Seeded::find`] of this chunk) to `out`,
    /// which has room for [`MAX_LEN`] more.
    #[inline(always)]
    pub(crate) fn push_ids(&mut self, i: u32, out: &mut Vec<u32>) {
        let e = &self.slots[i as usize];
        if e.n == 1 {
            out.push(e.ids[0]);
            return;
        }
        self.rate.lookup(MIN_HITS);
        self.rate.hit();
        if e.n == SPILLED {
            let (s, n) = (e.ids[0] as usize, e.ids[1] as usize);
            out.extend_from_slice(&self.spill[s..s + n]);
        } else {
            out.extend_from_slice(&e.ids[..e.n as usize]);
        }
    }

    /// Whether a piece the table lacks should be inserted once merged (false while the hit
    /// rate of merged pieces says they do not repeat: see [`HitRate`]).
    #[inline(always)]
    pub(crate) fn wants(&mut self) -> bool {
        if !self.rate.in_use() {
            return false;
        }
        self.rate.lookup(MIN_HITS);
        true
    }

    /// Remember the ids of `piece` (1 to [`MAX_LEN`] bytes, 2 to `MAX_LEN` ids): ignored when
    /// the table has no room (it then starts afresh before the next chunk). A piece inserted
    /// twice in one chunk (found missing twice before it was merged) keeps its first entry.
    pub(crate) fn insert(&mut self, piece: &[u8], ids: &[u32]) {
        if piece.is_empty() || piece.len() > MAX_LEN || ids.len() < 2 || ids.len() > MAX_LEN {
            return; // (not a piece this table holds)
        }
        if self.used >= self.limit {
            self.full = true;
            return;
        }
        let (lo, hi) = key(piece);
        let i = probe(&self.slots, self.shift, lo, hi, piece.len());
        if self.slots[i].len != 0 {
            return;
        }
        let mut e = Entry {
            lo,
            hi,
            ids: [0; INLINE],
            len: piece.len() as u8,
            n: ids.len() as u8,
        };
        if ids.len() <= INLINE {
            e.ids[..ids.len()].copy_from_slice(ids);
        } else {
            if self.spill.len() + ids.len() > SPILL_MAX
                || self.spill.try_reserve(ids.len()).is_err()
            {
                self.full = true;
                return;
            }
            e.ids = [self.spill.len() as u32, ids.len() as u32, 0];
            e.n = SPILLED;
            self.spill.extend_from_slice(ids);
        }
        self.slots[i] = e;
        self.used += 1;
    }
}

impl crate::bpe::TokenTable for Seeded {
    /// (an entry of one id is a vocabulary token; a merged piece has two or more)
    #[inline(always)]
    fn rank(&self, span: &[u8]) -> u32 {
        let (lo, hi) = key(span);
        let e = &self.slots[probe(&self.slots, self.shift, lo, hi, span.len())];
        if e.n == 1 {
            e.ids[0]
        } else {
            u32::MAX
        }
    }

    #[inline(always)]
    fn prefetch(&self, span: &[u8]) {
        Seeded::prefetch(self, span)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab() -> Vocab {
        let mut m: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        for (k, t) in ["ab", "abc", "0123456789abcdef", "xyz", "\u{4e2d}"]
            .iter()
            .enumerate()
        {
            m.push((t.as_bytes().to_vec(), 256 + k as u32));
        }
        Vocab::new(m, vec![]).unwrap()
    }

    #[test]
    fn seed_holds_every_short_token_and_nothing_else() {
        let v = vocab();
        let seed = Seed::new(&v).unwrap();
        let mut t = Seeded::default();
        assert!(!t.active(7, ADOPT - 1, || Some(&seed)));
        assert!(t.active(7, 1, || Some(&seed)));
        for (k, &id) in v.ranks.iter() {
            let i = t.find(k);
            assert_ne!(i, MISS);
            let mut out = vec![];
            t.push_ids(i, &mut out);
            assert_eq!(out, [id]);
        }
        for p in [
            "abcd",
            "a\0",
            "\0\0",
            "0123456789abcdeg",
            "xy",
            "\u{4e2d}\u{4e2d}",
        ] {
            assert_eq!(t.find(p.as_bytes()), MISS, "{p:?}");
        }
        // another encoder's bytes do not count toward this one
        assert!(!t.active(8, ADOPT - 1, || Some(&seed)));
        assert!(t.active(7, 1, || Some(&seed)));
    }

    #[test]
    fn inserts_spill_fill_and_start_afresh() {
        let v = vocab();
        let seed = Seed::new(&v).unwrap();
        let mut t = Seeded::default();
        assert!(t.active(1, ADOPT, || Some(&seed)));
        let piece = |k: u32| format!("{k:x}q{}", "z".repeat((k % 9) as usize)).into_bytes();
        let ids = |k: u32| -> Vec<u32> { (0..2 + k % 7).map(|j| k * 10 + j).collect() };
        let mut k = 0u32;
        while !t.full {
            t.insert(&piece(k), &ids(k));
            k += 1;
        }
        assert!(k as usize >= t.limit - seed.used);
        for j in 0..k - 1 {
            let i = t.find(&piece(j));
            assert_ne!(i, MISS);
            let mut out = vec![];
            t.push_ids(i, &mut out);
            assert_eq!(out, ids(j));
        }
        // a second insert of a piece keeps the first
        let before = t.used;
        t.full = false;
        t.insert(&piece(0), &[1, 2]);
        assert_eq!(t.used, before);
        t.full = true;
        t.begin_chunk(&seed);
        assert_eq!(t.find(&piece(3)), MISS);
        assert_ne!(t.find(b"abc"), MISS);
        assert!(t.spill.is_empty() && t.used == seed.used);
    }
}
