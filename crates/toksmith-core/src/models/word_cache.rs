//! A per-thread cache of the ids of whole words for the pipeline models (character BPE,
//! Unigram of `tokenizers`, WordPiece), so each distinct word is segmented once. It is the byte-
//! level engine's [`PieceCache`] (short keys inline, a hit-rate window that turns the cache off
//! on text whose words never repeat) in a thread-local of its own, tagged with the model that
//! filled it. Only exact: a model caches a word only where its ids depend on nothing but the
//! word.

use std::cell::RefCell;

use crate::encode::piece_cache::{HitRate, PieceCache, MAX_PIECE, MIN_HITS};
use crate::mem::try_reserve;
use crate::Result;

/// A tag for a new model's cache entries.
pub fn new_owner() -> u64 {
    crate::tag::next()
}

thread_local! {
    static CACHE: RefCell<PieceCache> = RefCell::new(PieceCache::default());
}

/// Append the ids of `word` to `out`: the cached ones, or those `segment` appends (then
/// remembered when the word is at most [`MAX_PIECE`] bytes).
#[inline]
pub fn cached(
    owner: u64,
    word: &str,
    out: &mut Vec<u32>,
    segment: impl FnOnce(&mut Vec<u32>) -> Result<()>,
) -> Result<()> {
    if word.is_empty() || word.len() > MAX_PIECE {
        return segment(out);
    }
    with(owner, |cache| {
        let Some(cache) = cache else {
            return segment(out);
        };
        if !cache.in_use() {
            return segment(out);
        }
        if let Some(ids) = cache.get(word.as_bytes()) {
            try_reserve(out, ids.len(), "the ids")?;
            out.extend_from_slice(ids);
            return Ok(());
        }
        let mark = out.len();
        segment(out)?;
        if out.len() - mark <= MAX_PIECE {
            cache.insert(word.as_bytes(), &out[mark..]);
        }
        Ok(())
    })
}

/// Run `f` with this thread's cache (emptied first when another model filled it), for models
/// that keep more than ids in an entry or look words up in a loop of their own; `None` when
/// the cache is borrowed already on this thread.
pub fn with<R>(owner: u64, f: impl FnOnce(Option<&mut PieceCache>) -> R) -> R {
    CACHE.with(|cell| with_owned(cell, owner, f))
}

/// What a thread keeps for one model at a time: whose it is, and how to empty it.
trait Owned {
    fn owner(&mut self) -> &mut u64;
    fn clear(&mut self);
}

impl Owned for PieceCache {
    fn owner(&mut self) -> &mut u64 {
        &mut self.owner
    }
    fn clear(&mut self) {
        PieceCache::clear(self)
    }
}

/// Run `f` with the value in `cell` (emptied first when another model filled it), or `None`
/// when it is borrowed already on this thread.
#[inline(always)]
fn with_owned<T: Owned, R>(
    cell: &RefCell<T>,
    owner: u64,
    f: impl FnOnce(Option<&mut T>) -> R,
) -> R {
    match cell.try_borrow_mut() {
        Ok(mut t) => {
            if *t.owner() != owner {
                t.clear();
                *t.owner() = owner;
            }
            f(Some(&mut t))
        }
        Err(_) => f(None),
    }
}

/// Shortest and longest word that [`WordTable`] holds. Shorter words stay in the
/// [`PieceCache`], whose table of keys up to 8 bytes is dense (16-byte slots).
pub const WORD_MIN: usize = 9;
pub const WORD_MAX: usize = MAX_PIECE;
/// [`WordTable`] is emptied when it holds this many words, or this many `u32`s of records.
/// (6 MB of multilingual text has 238k distinct words of 9 bytes or more: at 2^17 words the
/// table was emptied twice a pass, so a second pass over it missed as often as the first.
/// 2^19 words are about 25 MB of records and an 8 MB index, filled only as text needs them.)
const WORDS_MAX: usize = 1 << 19;
const ARENA_MAX: usize = 1 << 23;

/// A per-thread cache of words of [`WORD_MIN`] to [`WORD_MAX`] bytes and their entries (any
/// number of `u32`s): the SentencePiece Unigram's word cache, whose entries (a bound, then an
/// (id, score) pair per node) are read on every word.
///
/// The words and entries are records back to back in `arena` (a header, the word's bytes
/// packed in `u32`s, the entry), found through `index`, an open-addressing table (linear
/// probing, load at most 3/4) of 8-byte slots: 32 bits of the word's hash beside the record's
/// offset, so a probe compares words only where the hashes agree and a hit reads the slot and
/// the record. The memory written is what the words need: a table of fixed 128-byte slots
/// (word and entry inline) zeroed about 64 MB, twice its final size as it doubled, on a first
/// pass over 2 MB of new multilingual text, and the kernel's page clearing was a large part of
/// that pass. The hit-rate window of [`PieceCache`] turns it off on text whose words never
/// repeat.
#[derive(Default)]
pub struct WordTable {
    owner: u64,
    /// 0: empty; else the word's hash's upper 32 bits, then the record's offset in `arena`
    index: Vec<u64>,
    /// records: `len | n << 8` (word bytes, entry `u32`s), the word (little-endian `u32`s,
    /// zero-padded), the entry; offset 0 is never a record
    arena: Vec<u32>,
    used: usize,
    rate: HitRate,
}

/// Hash of a word of up to [`WORD_MAX`] bytes (8 bytes at a time, the tail zero-padded); the
/// table keeps the upper 32 bits in the slot and takes the slot's place from them ([`home`]).
#[inline(always)]
pub fn word_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let x = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        h = (h.rotate_left(5) ^ x).wrapping_mul(K);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        h = (h.rotate_left(5) ^ tail_le(tail)).wrapping_mul(K);
    }
    h ^ (h >> 29)
}

/// Little-endian value of 1..=7 bytes, zero-extended, from two overlapping loads (a copy into
/// a padded buffer on the stack stalls the load that reads it back).
#[inline(always)]
fn tail_le(b: &[u8]) -> u64 {
    let n = b.len();
    if n >= 4 {
        let lo = u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let hi = u64::from(u32::from_le_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]));
        lo | (hi << (8 * (n - 4)))
    } else if n >= 2 {
        let lo = u64::from(u16::from_le_bytes([b[0], b[1]]));
        let hi = u64::from(u16::from_le_bytes([b[n - 2], b[n - 1]]));
        lo | (hi << (8 * (n - 2)))
    } else {
        u64::from(b[0])
    }
}

/// The `u32`s of a record's word: its bytes 4 at a time, the last ones zero-padded.
#[inline(always)]
fn key_words(word: &[u8]) -> impl Iterator<Item = u32> + '_ {
    word.chunks(4).map(|c| {
        if c.len() == 4 {
            u32::from_le_bytes(c.try_into().expect("4 bytes"))
        } else {
            tail_le(c) as u32
        }
    })
}

/// Whether `key` (a record's `u32`s of a word as long as `word`) holds `word`, compared 8
/// bytes at a time.
#[inline(always)]
fn key_eq(key: &[u32], word: &[u8]) -> bool {
    let mut chunks = word.chunks_exact(8);
    let mut pairs = key.chunks_exact(2);
    for (c, k) in (&mut chunks).zip(&mut pairs) {
        let k = u64::from(k[0]) | u64::from(k[1]) << 32;
        if k != u64::from_le_bytes(c.try_into().expect("8 bytes")) {
            return false;
        }
    }
    let tail = chunks.remainder();
    if tail.is_empty() {
        return true;
    }
    let k = match pairs.remainder() {
        [lo] => u64::from(*lo),
        _ => match key.get(key.len().wrapping_sub(2)..) {
            Some([lo, hi]) => u64::from(*lo) | u64::from(*hi) << 32,
            _ => return false,
        },
    };
    k == tail_le(tail)
}

/// Where the probe for hash `h` starts in an index of `mask + 1` slots: from the upper 32 bits,
/// the ones each slot keeps, so growing the index moves every slot without reading its record
/// (a random read into the arena per word, 70% of the inserts' time on a first pass).
#[inline(always)]
fn home(h: u64, mask: usize) -> usize {
    (h >> 32) as usize & mask
}

/// The slot value of a record at `at` of a word whose hash is `h`.
#[inline(always)]
fn slot_of(h: u64, at: usize) -> u64 {
    (h & !0xFFFF_FFFF) | at as u64
}

impl WordTable {
    fn clear(&mut self) {
        self.index.fill(0);
        self.arena.clear();
        self.used = 0;
    }

    /// The record of `word` (hash `h`) or, when absent, `Err` with the empty slot where it
    /// would go (the table is not empty).
    #[inline(always)]
    fn find(&self, word: &[u8], h: u64) -> std::result::Result<usize, usize> {
        let mask = self.index.len() - 1;
        let mut i = home(h, mask);
        let len = word.len();
        let header_len = len as u32;
        loop {
            let s = self.index[i];
            if s == 0 {
                return Err(i);
            }
            if (s ^ h) >> 32 == 0 {
                let at = s as u32 as usize;
                let kw = len.div_ceil(4);
                if let Some([header, key @ ..]) = self.arena.get(at..at + 1 + kw) {
                    if header & 0xFF == header_len && key_eq(key, word) {
                        return Ok(at);
                    }
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// Whether the next word should use the table (false while bypassing it).
    #[inline(always)]
    pub fn in_use(&mut self) -> bool {
        self.rate.in_use()
    }

    /// The entry of `word` ([`WORD_MIN`] to [`WORD_MAX`] bytes) whose [`word_hash`] is `h`.
    #[inline(always)]
    pub fn get(&mut self, word: &[u8], h: u64) -> Option<&[u32]> {
        debug_assert!((WORD_MIN..=WORD_MAX).contains(&word.len()));
        self.rate.lookup(MIN_HITS);
        if self.index.is_empty() {
            return None;
        }
        let at = self.find(word, h).ok()?;
        self.rate.hit();
        let header = self.arena[at];
        let from = at + 1 + (header & 0xFF).div_ceil(4) as usize;
        self.arena.get(from..from + (header >> 8) as usize)
    }

    /// Ask for the cache line of the slot where a lookup of hash `h` starts.
    #[inline(always)]
    pub fn prefetch_slot(&self, h: u64) {
        if !self.index.is_empty() {
            let i = home(h, self.index.len() - 1);
            crate::mem::prefetch(self.index.as_ptr().wrapping_add(i));
        }
    }

    /// Ask for the cache lines of the record that the first slot of hash `h` names (its line
    /// asked for by [`WordTable::prefetch_slot`] a while before).
    #[inline(always)]
    pub fn prefetch_record(&self, h: u64) {
        if self.index.is_empty() {
            return;
        }
        let s = self.index[home(h, self.index.len() - 1)];
        if s != 0 && (s ^ h) >> 32 == 0 {
            let p = self.arena.as_ptr().wrapping_add(s as u32 as usize) as *const u8;
            crate::mem::prefetch(p);
            crate::mem::prefetch(p.wrapping_add(64));
        }
    }

    /// Remember the entry of `word` (absent so far; [`WORD_MIN`] to [`WORD_MAX`] bytes; hash
    /// `h`). Dropped where the memory is not there (a cache).
    pub fn insert(&mut self, word: &[u8], h: u64, entry: &[u32]) {
        debug_assert!((WORD_MIN..=WORD_MAX).contains(&word.len()));
        if entry.len() >= 1 << 24 {
            return;
        }
        let need = 1 + word.len().div_ceil(4) + entry.len();
        if self.used >= WORDS_MAX || self.arena.len() + need > ARENA_MAX {
            self.clear();
        }
        // load at most 3/4: the index of the 80k words of 2 MB of multilingual text is 1 MB
        // instead of 2 (a miss's probes mostly stay in its first slot's cache line)
        if (self.used + 1) * 4 > self.index.len() * 3 && !self.grow() {
            // (no memory for a larger index: start over in this one, if there is one)
            self.clear();
            if self.index.is_empty() {
                return;
            }
        }
        if self.arena.capacity() - self.arena.len() < need && !self.grow_arena(need) {
            return;
        }
        if self.arena.is_empty() {
            // offset 0 is the empty slot's
            self.arena.push(0);
        }
        let Err(i) = self.find(word, h) else {
            return;
        };
        let at = self.arena.len();
        self.arena
            .push(word.len() as u32 | (entry.len() as u32) << 8);
        self.arena.extend(key_words(word));
        self.arena.extend_from_slice(entry);
        self.index[i] = slot_of(h, at);
        self.used += 1;
    }

    /// Room for `need` more `u32`s (and offset 0) in the arena, at least doubling it (64K
    /// `u32`s at first); false where the memory is not there.
    fn grow_arena(&mut self, need: usize) -> bool {
        let n = (self.arena.capacity() * 2)
            .max(1 << 16)
            .max(self.arena.len() + need + 1);
        let old = self.arena.as_ptr();
        let more = n - self.arena.len();
        if try_reserve(&mut self.arena, more, "the word cache").is_err() {
            return false;
        }
        if self.arena.as_ptr() != old {
            // records are read at random: huge pages keep them in the TLB (the allocator
            // grows or remaps a large block rather than copying it into fresh pages, so the
            // advice reaches the pages not written yet; a copy into a new block advised
            // first zeroed more memory on a first pass)
            crate::mem::advise_huge_pages(self.arena.as_ptr() as *const u8, n * 4);
        }
        true
    }

    /// Double the index (1024 slots at first); false where the memory is not there.
    fn grow(&mut self) -> bool {
        let n = (self.index.len() * 2).max(1024);
        // the index is read at random, one slot per word: huge pages keep its addresses in
        // the TLB (advised before the slots are first written)
        let Ok(mut new) = crate::mem::try_big_vec(n, "the word cache") else {
            return false;
        };
        new.resize(n, 0u64);
        let old = std::mem::replace(&mut self.index, new);
        let mask = n - 1;
        for &s in old.iter().filter(|&&s| s != 0) {
            let mut i = home(s, mask);
            while self.index[i] != 0 {
                i = (i + 1) & mask;
            }
            self.index[i] = s;
        }
        true
    }
}

thread_local! {
    static WORDS: RefCell<WordTable> = RefCell::new(WordTable::default());
}

/// Run `f` with this thread's [`WordTable`] (emptied first when another model filled it);
/// `None` when it is borrowed already on this thread.
pub fn with_words<R>(owner: u64, f: impl FnOnce(Option<&mut WordTable>) -> R) -> R {
    WORDS.with(|cell| with_owned(cell, owner, f))
}

impl Owned for WordTable {
    fn owner(&mut self) -> &mut u64 {
        &mut self.owner
    }
    fn clear(&mut self) {
        WordTable::clear(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_le_matches_padding() {
        let data: Vec<u8> = (1..=8).collect();
        for n in 1..8 {
            let mut buf = [0u8; 8];
            buf[..n].copy_from_slice(&data[..n]);
            assert_eq!(tail_le(&data[..n]), u64::from_le_bytes(buf), "n={n}");
        }
    }

    #[test]
    fn word_table_finds_what_was_inserted_across_growth_and_clear() {
        let mut t = WordTable::default();
        let word = |k: u32| -> Vec<u8> {
            let len = WORD_MIN + (k as usize * 7) % (WORD_MAX - WORD_MIN + 1);
            (0..len)
                .map(|j| (k.wrapping_mul(31).wrapping_add(j as u32 * 7) % 251) as u8)
                .collect()
        };
        // entries of 0 to 129 u32s, as long as a path over a word of WORD_MAX bytes
        let entry = |k: u32| -> Vec<u32> { (k..k + k % 130).collect() };
        let get = |t: &mut WordTable, w: &[u8]| t.get(w, word_hash(w)).map(<[u32]>::to_vec);
        let mut first = std::collections::HashMap::new();
        for k in 0..30_000u32 {
            let w = word(k);
            if let std::collections::hash_map::Entry::Vacant(e) = first.entry(w) {
                assert_eq!(get(&mut t, e.key()), None);
                t.insert(e.key(), word_hash(e.key()), &entry(k));
                e.insert(k);
            }
        }
        assert!(first.len() > 1000);
        for (w, &k) in &first {
            assert_eq!(get(&mut t, w), Some(entry(k)), "{w:?}");
            // the same bytes one shorter or longer, or one byte changed, are other words
            for other in [&w[..w.len() - 1], &[&w[..], b"x"].concat()[..]] {
                if (WORD_MIN..=WORD_MAX).contains(&other.len()) && !first.contains_key(other) {
                    assert_eq!(get(&mut t, other), None);
                }
            }
            let mut changed = w.clone();
            changed[w.len() / 2] ^= 0x40;
            if !first.contains_key(&changed) {
                assert_eq!(get(&mut t, &changed), None);
            }
        }
        // words that differ only in their zero padding
        let a = b"abcdefghi\0".to_vec();
        t.insert(&a, word_hash(&a), &[7]);
        assert_eq!(get(&mut t, &a), Some(vec![7]));
        assert_eq!(get(&mut t, b"abcdefghi"), None);
        t.clear();
        assert_eq!(get(&mut t, &word(3)), None);
        // the table empties itself when full
        let key = |k: usize| format!("word {k:>9}");
        for k in 0..WORDS_MAX + 10 {
            let w = key(k);
            t.insert(w.as_bytes(), word_hash(w.as_bytes()), &[k as u32]);
        }
        assert!(t.used <= WORDS_MAX);
        assert_eq!(get(&mut t, key(3).as_bytes()), None);
        let last = key(WORDS_MAX + 9);
        assert_eq!(
            get(&mut t, last.as_bytes()),
            Some(vec![WORDS_MAX as u32 + 9])
        );
        // and when its records fill the arena
        t.clear();
        let long: Vec<u32> = vec![5; 1000];
        for k in 0..(ARENA_MAX / 1000 + 10) {
            let w = key(k);
            t.insert(w.as_bytes(), word_hash(w.as_bytes()), &long);
            assert!(t.arena.len() <= ARENA_MAX);
        }
        let last = key(ARENA_MAX / 1000 + 9);
        assert_eq!(get(&mut t, last.as_bytes()).map(|e| e.len()), Some(1000));
    }
}
