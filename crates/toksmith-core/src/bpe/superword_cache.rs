//! The per-thread caches of the superword merge ([`super::Superword`]): its segments, and the
//! whole pieces of [`LONG_MIN`] to [`LONG_MAX`] bytes.
//!
//! A sixth of Cromwell's pieces on code are of 17-64 bytes and not one token; the generic piece
//! cache keeps such pieces in a hash map of boxed keys (a probe of its control bytes, then of
//! the entry, then of the key behind its pointer). [`LongCache`] keeps one 16-byte slot per
//! piece (a 64-bit hash, the offset of the key and of the ids), the keys back to back in one
//! vector: one probe, then one comparison with bytes that are usually in the same line as
//! those of the pieces inserted around them, and the slot can be requested ahead of the lookup.

use crate::encode::piece_cache::PieceCache;
#[cfg(doc)]
use crate::encode::piece_cache::MAX_PIECE;

/// Pieces from this length on go to the [`LongCache`] (shorter ones to the generic cache).
pub const LONG_MIN: usize = 17;
/// The longest piece that the superword merge and the [`LongCache`] take (a key's length is
/// one byte); longer ones are merged by the generic BPE each time. (The generic cache stops at
/// [`MAX_PIECE`] bytes, but 3.5% of held-out C++ is in Cromwell pieces of 65-255 bytes: rules
/// such as `//-----...`, long qualified names, that repeat.)
pub const LONG_MAX: usize = 255;
/// The long cache is emptied when it holds this many pieces, or this many key bytes (its ids
/// then take at most four times as much).
const MAX_LONG: usize = 1 << 16;
const MAX_LONG_BYTES: usize = 1 << 22;

/// The caches of one thread's superword merges.
#[derive(Default)]
pub struct SuperwordCaches {
    /// the segments, merged below the cut rank
    pub segments: PieceCache,
    /// the sides of whitespace-then-word segments ([`super::superword_pivot`])
    pub sides: PieceCache,
    /// a buffer for the segments' ids
    pub ids: Vec<u32>,
    /// the whole pieces of [`LONG_MIN`] to [`LONG_MAX`] bytes
    pub long: LongCache,
}

impl SuperwordCaches {
    pub fn clear(&mut self) {
        self.segments.clear();
        self.sides.clear();
        self.long.clear();
    }
}

/// A hash of a piece of [`LONG_MIN`] bytes or more, never 0 (the empty slot).
#[inline(always)]
pub(crate) fn long_hash(p: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = (p.len() as u64).wrapping_mul(K);
    let mut chunks = p.chunks_exact(8);
    for c in &mut chunks {
        h = (h.rotate_left(23) ^ u64::from_le_bytes(c.try_into().unwrap())).wrapping_mul(K);
    }
    if !chunks.remainder().is_empty() {
        // the last 8 bytes (overlapping the chunk before: the piece is longer than 8)
        let tail = u64::from_le_bytes(p[p.len() - 8..].try_into().unwrap());
        h = (h.rotate_left(23) ^ tail).wrapping_mul(K);
    }
    (h ^ (h >> 29)) | 1
}

#[derive(Clone, Copy, Default)]
struct Slot {
    /// [`long_hash`] of the piece; 0 = empty
    hash: u64,
    /// offset in `keys` of the piece's length byte, followed by its bytes
    key: u32,
    /// offset in `ids` of the number of ids, followed by the ids
    start: u32,
}

/// Whole-piece cache for pieces of [`LONG_MIN`] to [`LONG_MAX`] bytes.
pub struct LongCache {
    slots: Vec<Slot>,
    shift: u32,
    used: usize,
    keys: Vec<u8>,
    ids: Vec<u32>,
}

impl Default for LongCache {
    fn default() -> Self {
        LongCache {
            slots: vec![Slot::default(); 1024],
            shift: 64 - 10,
            used: 0,
            keys: Vec::new(),
            ids: Vec::new(),
        }
    }
}

impl LongCache {
    #[inline(always)]
    fn home(&self, hash: u64) -> usize {
        (hash.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The slot of `piece` (hash `hash`), or the empty one where it would go.
    #[inline(always)]
    fn find(&self, piece: &[u8], hash: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = self.home(hash);
        loop {
            let s = self.slots[i];
            if s.hash == 0 {
                return i;
            }
            if s.hash == hash {
                let k = s.key as usize;
                if self.keys[k] as usize == piece.len()
                    && &self.keys[k + 1..][..piece.len()] == piece
                {
                    return i;
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// Ask for the cache line of the slot where `get(piece)` starts.
    #[inline(always)]
    pub fn prefetch(&self, piece: &[u8]) {
        let i = self.home(long_hash(piece));
        crate::mem::prefetch(self.slots.as_ptr().wrapping_add(i));
    }

    /// The ids of `piece` ([`LONG_MIN`] to [`LONG_MAX`] bytes), if cached.
    #[inline(always)]
    pub fn get(&self, piece: &[u8]) -> Option<&[u32]> {
        let s = self.slots[self.find(piece, long_hash(piece))];
        if s.hash == 0 {
            return None;
        }
        let at = s.start as usize;
        Some(&self.ids[at + 1..][..self.ids[at] as usize])
    }

    /// Remember the ids of `piece` (absent so far).
    pub fn insert(&mut self, piece: &[u8], ids: &[u32]) {
        debug_assert!((LONG_MIN..=LONG_MAX).contains(&piece.len()) && ids.len() <= LONG_MAX);
        if self.used >= MAX_LONG || self.keys.len() >= MAX_LONG_BYTES {
            self.clear();
        }
        if (self.used + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let hash = long_hash(piece);
        let i = self.find(piece, hash);
        self.slots[i] = Slot {
            hash,
            key: self.keys.len() as u32,
            start: self.ids.len() as u32,
        };
        self.keys.push(piece.len() as u8);
        self.keys.extend_from_slice(piece);
        self.ids.push(ids.len() as u32);
        self.ids.extend_from_slice(ids);
        self.used += 1;
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        self.slots = vec![Slot::default(); old.len() * 2];
        self.shift -= 1;
        let mask = self.slots.len() - 1;
        for s in old.into_iter().filter(|s| s.hash != 0) {
            let mut i = self.home(s.hash);
            while self.slots[i].hash != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = s;
        }
    }

    pub fn clear(&mut self) {
        self.slots.fill(Slot::default());
        self.used = 0;
        self.keys.clear();
        self.ids.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_was_inserted_across_growth_and_clear() {
        let mut c = LongCache::default();
        let piece = |k: u32| -> Vec<u8> {
            let len = LONG_MIN + (k as usize * 7) % (LONG_MAX - LONG_MIN + 1);
            (0..len)
                .map(|j| (k.wrapping_mul(31).wrapping_add(j as u32) % 251) as u8)
                .collect()
        };
        let mut first = std::collections::HashMap::new();
        for k in 0..20_000u32 {
            let p = piece(k);
            if let std::collections::hash_map::Entry::Vacant(e) = first.entry(p) {
                assert!(c.get(e.key()).is_none());
                c.insert(e.key(), &[k, k + 1, k + 2][..1 + (k as usize % 3)]);
                e.insert(k);
            }
        }
        assert!(first.len() > 1000);
        for (p, &k) in &first {
            let want: Vec<u32> = (k..k + 1 + k % 3).collect();
            assert_eq!(c.get(p), Some(&want[..]));
        }
        c.clear();
        assert!(c.get(&piece(5)).is_none());
        // pieces that differ in their last byte only, or in length only
        for n in [40, LONG_MAX] {
            let a = vec![7u8; n];
            let mut b = a.clone();
            b[n - 1] = 8;
            c.insert(&a, &[1]);
            assert_eq!(c.get(&b), None);
            assert_eq!(c.get(&a[..n - 1]), None);
            c.insert(&a[..n - 1], &[2, 3]);
            assert_eq!(c.get(&a), Some(&[1u32][..]));
            assert_eq!(c.get(&a[..n - 1]), Some(&[2u32, 3][..]));
        }
    }
}
