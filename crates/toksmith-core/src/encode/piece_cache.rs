//! Per-thread cache of the ids of pieces that are not a single token, so BPE runs once per
//! distinct piece.
//!
//! Pieces of up to 16 bytes (nearly all of them) live in open-addressing tables with the key
//! bytes inline, like the vocabulary's: one probe sequence, no allocation per entry, no key
//! comparison through a pointer. Longer pieces (up to [`LONG_MAX`] bytes) go to the
//! superword merge's [`LongCache`] (keys back to back in one vector): on non-Latin text most
//! pieces that are not one token are that long and four in five are new, and a hash map of
//! boxed keys cost an allocation per insert and a free per entry at every clear.
//! The ids of every entry are stored back to back in one vector.
//!
//! On text whose pieces hardly ever repeat (random characters), every lookup misses and every
//! insert only grows the tables, which then no longer fit in the cache: that made 1 MB of
//! random Unicode twice as slow as without a cache. So the hit rate is measured over windows of
//! [`WINDOW`] lookups, and after a window with fewer than [`MIN_HITS`] hits the next
//! [`BYPASS`] pieces skip the cache. Ordinary English text hits 65-85% from its first window
//! on; random Unicode about 1%. Multilingual text sits between: its first windows hit 5-15%
//! (long words that repeat over a whole document, not within 4096 pieces), so the bar is low
//! (one hit in 32): at one in eight such text was bypassed from its first window on, and as a
//! bypassed piece is never inserted, it stayed bypassed, and encoding the same text again was
//! hardly faster than the first time.

use crate::bpe::{LongCache, LONG_MAX};
use crate::table::{probe, InlineKey};

/// Longest piece whose ids every user of the cache may take from it without making room for
/// them first (the encoder keeps room for this many ids; the superword merge and the word
/// models cache no longer pieces). The encoder also caches pieces of up to [`LONG_MAX`] bytes
/// (with o200k_base, Thai and kana words are often longer than this), making room for their
/// ids on a hit.
pub const MAX_PIECE: usize = 64;
/// The cache is emptied when it holds this many pieces (64-128 bytes of slots each).
pub const MAX_ENTRIES: usize = 1 << 18;
/// Lookups per window over which the hit rate is measured.
pub const WINDOW: u32 = 4096;
/// Fewest hits in a window that keep the cache in use.
pub const MIN_HITS: u32 = WINDOW / 32;
/// Pieces that skip the cache after a window with too few hits.
pub const BYPASS: u32 = 15 * WINDOW;

/// A cached piece: its key, length and ids. Up to `N` ids are kept in the slot itself (a piece
/// that is not one token mostly has two or three), so a hit reads one line, the one requested
/// when the piece was found; more go to `PieceCache::ids`, their offset in `ids[0]`. 32 bytes
/// for both key widths (`N` = 5 for `u64` keys, 3 for `u128`).
///
/// (With every piece's ids kept apart from the slots, their load was the second miss of each
/// hit: 57% of `encode_multi`'s samples on new English text with o200k_base.)
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Slot<K, const N: usize> {
    key: K,
    /// piece length in bytes; 0 = empty slot
    len: u8,
    /// number of ids
    n: u8,
    ids: [u32; N],
}

impl<K: Default, const N: usize> Default for Slot<K, N> {
    fn default() -> Self {
        Slot {
            key: K::default(),
            len: 0,
            n: 0,
            ids: [0; N],
        }
    }
}

impl<K: Copy, const N: usize> Slot<K, N> {
    #[inline(always)]
    fn read(&self) -> (K, usize) {
        (self.key, self.len as usize)
    }

    /// The slot's ids: its own, or those at `ids[0]` in `all`.
    #[inline(always)]
    fn ids<'a>(&'a self, all: &'a [u32]) -> &'a [u32] {
        let n = self.n as usize;
        if n <= N {
            &self.ids[..n]
        } else {
            let start = self.ids[0] as usize;
            &all[start..start + n]
        }
    }
}

struct Table<K, const N: usize> {
    slots: Vec<Slot<K, N>>,
    shift: u32,
    used: usize,
}

impl<K: InlineKey, const N: usize> Table<K, N> {
    fn new() -> Self {
        Table {
            slots: vec![Slot::default(); 1024],
            shift: 64 - 10,
            used: 0,
        }
    }

    #[inline(always)]
    fn get(&self, bytes: &[u8]) -> Option<&Slot<K, N>> {
        let i = probe(
            &self.slots,
            self.shift,
            K::pack(bytes),
            bytes.len(),
            Slot::read,
        );
        let s = &self.slots[i];
        (s.len != 0).then_some(s)
    }

    #[inline(always)]
    fn prefetch(&self, bytes: &[u8]) {
        let i = K::pack(bytes).slot(bytes.len(), self.shift);
        crate::mem::prefetch(self.slots.as_ptr().wrapping_add(i));
    }

    /// Insert a piece known to be absent, with its ids (up to `N` in the slot, more in `all`).
    fn insert(&mut self, bytes: &[u8], ids: &[u32], all: &mut Vec<u32>) {
        if (self.used + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let mut slot = Slot {
            key: K::pack(bytes),
            len: bytes.len() as u8,
            n: ids.len() as u8,
            ids: [0; N],
        };
        if ids.len() <= N {
            slot.ids[..ids.len()].copy_from_slice(ids);
        } else {
            slot.ids[0] = all.len() as u32;
            all.extend_from_slice(ids);
        }
        self.place(slot);
        self.used += 1;
    }

    fn place(&mut self, slot: Slot<K, N>) {
        let i = probe(
            &self.slots,
            self.shift,
            slot.key,
            slot.len as usize,
            Slot::read,
        );
        self.slots[i] = slot;
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        self.slots = vec![Slot::default(); old.len() * 2];
        self.shift -= 1;
        for s in old {
            if s.len != 0 {
                self.place(s);
            }
        }
    }

    fn clear(&mut self) {
        self.slots.fill(Slot::default());
        self.used = 0;
    }
}

/// The cache of one thread; `owner` is the encoder whose results it holds.
pub struct PieceCache {
    pub owner: u64,
    short: Table<u64, 5>,
    medium: Table<u128, 3>,
    long: LongCache,
    /// the ids of pieces with more than their slot holds
    ids: Vec<u32>,
    rate: HitRate,
}

/// The hit rate of a cache over windows of [`WINDOW`] lookups, and the lookups left to skip
/// it (the next [`BYPASS`]) after a window with too few hits; shared by the piece cache and
/// the pipeline models' word table.
#[derive(Default)]
pub struct HitRate {
    lookups: u32,
    hits: u32,
    bypass: u32,
}

impl HitRate {
    /// Whether the next lookup should use the cache (false while bypassing it).
    #[inline(always)]
    pub fn in_use(&mut self) -> bool {
        if self.bypass == 0 {
            return true;
        }
        self.bypass -= 1;
        false
    }

    /// Count a lookup; at the end of a window with fewer than `min_hits` hits, start
    /// bypassing.
    #[inline(always)]
    pub fn lookup(&mut self, min_hits: u32) {
        self.lookups += 1;
        if self.lookups == WINDOW {
            if self.hits < min_hits {
                self.bypass = BYPASS;
            }
            self.lookups = 0;
            self.hits = 0;
        }
    }

    /// Count a hit.
    #[inline(always)]
    pub fn hit(&mut self) {
        self.hits += 1;
    }
}

impl Default for PieceCache {
    fn default() -> Self {
        PieceCache {
            owner: 0,
            short: Table::new(),
            medium: Table::new(),
            long: LongCache::default(),
            ids: Vec::new(),
            rate: HitRate::default(),
        }
    }
}

impl PieceCache {
    /// (the long pieces' cache empties itself when full)
    fn entries(&self) -> usize {
        self.short.used + self.medium.used
    }

    /// Forget everything.
    pub fn clear(&mut self) {
        self.short.clear();
        self.medium.clear();
        self.long.clear();
        self.ids.clear();
    }

    /// Whether the next piece should use the cache (false while bypassing it).
    #[inline(always)]
    pub fn in_use(&mut self) -> bool {
        self.rate.in_use()
    }

    /// The ids of `piece` (1 to [`LONG_MAX`] bytes), if cached.
    #[inline(always)]
    pub fn get(&mut self, piece: &[u8]) -> Option<&[u32]> {
        self.rate.lookup(MIN_HITS);
        let found = if piece.len() <= 8 {
            self.short.get(piece).map(|s| s.ids(&self.ids))
        } else if piece.len() <= 16 {
            self.medium.get(piece).map(|s| s.ids(&self.ids))
        } else {
            self.long.get(piece)
        };
        if found.is_some() {
            self.rate.hit();
        }
        found
    }

    /// Ask for the cache line where `get(piece)` starts its probe (pieces of up to
    /// [`LONG_MAX`] bytes).
    ///
    /// (The long pieces' slot too: on new multilingual text with o200k_base, its load was
    /// 43% of `encode_multi`'s samples, where the prefetched short and medium slots took 12%.)
    #[inline(always)]
    pub fn prefetch(&self, piece: &[u8]) {
        match piece.len() {
            0 => {}
            1..=8 => self.short.prefetch(piece),
            9..=16 => self.medium.prefetch(piece),
            17..=LONG_MAX => self.long.prefetch(piece),
            _ => {}
        }
    }

    /// Remember the ids of `piece` (absent so far; at most [`LONG_MAX`] bytes, so at most that
    /// many ids).
    pub fn insert(&mut self, piece: &[u8], ids: &[u32]) {
        debug_assert!(!piece.is_empty() && piece.len() <= LONG_MAX && ids.len() <= LONG_MAX);
        if self.entries() >= MAX_ENTRIES {
            self.clear();
        }
        if piece.len() > 16 {
            self.long.insert(piece, ids);
            return;
        }
        if piece.len() <= 8 {
            self.short.insert(piece, ids, &mut self.ids);
        } else {
            self.medium.insert(piece, ids, &mut self.ids);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_was_inserted_across_growth_and_clear() {
        let mut c = PieceCache::default();
        let piece = |k: u32| -> Vec<u8> {
            let len = 1 + (k as usize * 7) % 40;
            (0..len)
                .map(|j| (k.wrapping_mul(31).wrapping_add(j as u32) % 251) as u8)
                .collect()
        };
        let mut first = std::collections::HashMap::new();
        for k in 0..20_000u32 {
            let p = piece(k);
            if let std::collections::hash_map::Entry::Vacant(e) = first.entry(p) {
                assert!(c.get(e.key()).is_none());
                // (1-9 ids: in the slot, or more than a short / medium slot holds)
                let ids: Vec<u32> = (k..k + 1 + k % 9).collect();
                c.insert(e.key(), &ids);
                e.insert(k);
            }
        }
        assert!(first.len() > 1000);
        for (p, &k) in &first {
            let want: Vec<u32> = (k..k + 1 + k % 9).collect();
            assert_eq!(c.get(p), Some(&want[..]));
        }
        c.clear();
        assert!(c.get(&piece(5)).is_none());
        // a piece and its zero-padded twin are different keys
        c.insert(&[0u8][..], &[1]);
        assert_eq!(c.get(&[0u8][..]), Some(&[1u32][..]));
        assert_eq!(c.get(&[0u8, 0][..]), None);
    }

    #[test]
    fn bypassed_after_a_window_of_misses_only() {
        let mut c = PieceCache::default();
        // a window where every other lookup hits: the cache stays in use
        for k in 0..WINDOW {
            let p = (k / 2).to_le_bytes();
            assert!(c.in_use());
            if c.get(&p).is_none() {
                c.insert(&p, &[k]);
            }
        }
        assert!(c.in_use());
        // a window of new pieces: the next BYPASS pieces skip it, then it is used again
        for k in 0..WINDOW {
            let p = (1_000_000 + k).to_le_bytes();
            assert!(c.get(&p).is_none());
            c.insert(&p, &[k]);
        }
        let skipped = (0..2 * BYPASS).take_while(|_| !c.in_use()).count();
        assert_eq!(skipped as u32, BYPASS);
        assert_eq!(c.get(&1_000_005u32.to_le_bytes()), Some(&[5u32][..]));
    }

    #[test]
    fn stays_in_use_on_a_few_repeats_per_window() {
        // one lookup in 16 repeats an earlier piece (multilingual text's first windows): the
        // cache stays in use, so the second pass over the same pieces hits every time
        let mut c = PieceCache::default();
        let piece = |k: u32| if k % 16 == 15 { k - 8 } else { k };
        for _ in 0..3 {
            for k in 0..WINDOW {
                assert!(c.in_use());
                let p = piece(k).to_le_bytes();
                if c.get(&p).is_none() {
                    c.insert(&p, &[k]);
                }
            }
        }
        assert!(c.in_use());
        // and one in 64 is not enough
        let mut c = PieceCache::default();
        for k in 0..WINDOW {
            let p = (if k % 64 == 63 { k - 8 } else { k }).to_le_bytes();
            if c.get(&p).is_none() {
                c.insert(&p, &[k]);
            }
        }
        assert!(!c.in_use());
    }
}
