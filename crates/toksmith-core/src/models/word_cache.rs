//! A per-thread cache of the ids of whole words for the pipeline models (character BPE,
//! Unigram of `tokenizers`, WordPiece), so each distinct word is segmented once. It is the byte-
//! level engine's [`PieceCache`] (short keys inline, a hit-rate window that turns the cache off
//! on text whose words never repeat) in a thread-local of its own, tagged with the model that
//! filled it. Only exact: a model caches a word only where its ids depend on nothing but the
//! word.

use std::cell::RefCell;

use crate::encode::piece_cache::{HitRate, PieceCache, MAX_PIECE, WINDOW};
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

/// Shortest and longest word that [`WordTable`] holds, and the most `u32`s of an entry.
/// Shorter words stay in the [`PieceCache`], whose table of keys up to 8 bytes is dense
/// (16-byte slots): a table of 128-byte slots for English words was larger than the TLB
/// reaches, slower than the two lookups it saved.
pub const WORD_MIN: usize = 9;
pub const WORD_MAX: usize = 40;
pub const ENTRY_MAX: usize = 21;
/// [`WordTable`] is emptied when it holds this many words.
const WORDS_MAX: usize = 1 << 17;
/// `n` of a slot whose word's entry was too long for the slot (it is in the [`PieceCache`]).
const ELSEWHERE: u8 = u8::MAX;

/// One word and its entry in two cache lines, so a hit reads one place (a [`PieceCache`] hit
/// reads its slot, then the ids elsewhere).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct WordSlot {
    key: [u8; WORD_MAX],
    /// word length in bytes; 0 = empty slot
    len: u8,
    /// number of `u32`s in `entry`, or [`ELSEWHERE`]
    n: u8,
    entry: [u32; ENTRY_MAX],
}

const EMPTY: WordSlot = WordSlot {
    key: [0; WORD_MAX],
    len: 0,
    n: 0,
    entry: [0; ENTRY_MAX],
};

/// What [`WordTable::get`] finds.
pub enum Found<'a> {
    Entry(&'a [u32]),
    /// the word's entry did not fit its slot: it is in the [`PieceCache`]
    Elsewhere,
    Missing,
}

/// A per-thread cache of words of up to [`WORD_MAX`] bytes, each slot holding the word's bytes
/// and its entry (up to [`ENTRY_MAX`] `u32`s) side by side: the SentencePiece Unigram's word
/// cache, whose entries (a bound, then an (id, score) pair per node) are read on every word.
/// Open addressing with linear probing; the hit-rate window of [`PieceCache`] turns it off
/// on text whose words never repeat.
#[derive(Default)]
pub struct WordTable {
    owner: u64,
    slots: Vec<WordSlot>,
    used: usize,
    rate: HitRate,
}

/// Hash of a word of up to [`WORD_MAX`] bytes (8 bytes at a time, the tail zero-padded).
#[inline(always)]
fn word_hash(bytes: &[u8]) -> u64 {
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

impl WordTable {
    fn clear(&mut self) {
        self.slots.fill(EMPTY);
        self.used = 0;
    }

    /// The slot of `word` or the empty slot where it would go (the table is not empty).
    #[inline(always)]
    fn find(&self, word: &[u8]) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = word_hash(word) as usize & mask;
        loop {
            let s = &self.slots[i];
            if s.len == 0 || (s.len as usize == word.len() && &s.key[..word.len()] == word) {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// Whether the next word should use the table (false while bypassing it).
    #[inline(always)]
    pub fn in_use(&mut self) -> bool {
        self.rate.in_use()
    }

    /// The entry of `word` (1 to [`WORD_MAX`] bytes).
    #[inline(always)]
    pub fn get(&mut self, word: &[u8]) -> Found<'_> {
        debug_assert!(!word.is_empty() && word.len() <= WORD_MAX);
        self.rate.lookup(WINDOW / 8);
        if self.slots.is_empty() {
            return Found::Missing;
        }
        let s = &self.slots[self.find(word)];
        match s.n {
            _ if s.len == 0 => Found::Missing,
            ELSEWHERE => {
                self.rate.hit();
                Found::Elsewhere
            }
            n => {
                self.rate.hit();
                Found::Entry(&s.entry[..n as usize])
            }
        }
    }

    /// Ask for the cache lines where `get(word)` starts its probe.
    #[inline(always)]
    pub fn prefetch(&self, word: &[u8]) {
        if self.slots.is_empty() || word.is_empty() || word.len() > WORD_MAX {
            return;
        }
        let i = word_hash(word) as usize & (self.slots.len() - 1);
        let p = self.slots.as_ptr().wrapping_add(i) as *const u8;
        crate::mem::prefetch(p);
        crate::mem::prefetch(p.wrapping_add(64));
    }

    /// Remember the entry of `word` (absent so far; 1 to [`WORD_MAX`] bytes); an entry longer
    /// than [`ENTRY_MAX`] is marked [`Found::Elsewhere`] (the caller keeps it elsewhere).
    pub fn insert(&mut self, word: &[u8], entry: &[u32]) {
        debug_assert!(!word.is_empty() && word.len() <= WORD_MAX);
        if self.used >= WORDS_MAX {
            self.clear();
        }
        if (self.used + 1) * 2 > self.slots.len() && !self.grow() {
            // (no memory for a larger table: start over in this one, if there is one)
            self.clear();
            if self.slots.is_empty() {
                return;
            }
        }
        let i = self.find(word);
        let s = &mut self.slots[i];
        s.key[..word.len()].copy_from_slice(word);
        s.len = word.len() as u8;
        if entry.len() <= ENTRY_MAX {
            s.entry[..entry.len()].copy_from_slice(entry);
            s.n = entry.len() as u8;
        } else {
            s.n = ELSEWHERE;
        }
        self.used += 1;
    }

    /// Double the slots (1024 at first); false where the memory is not there.
    fn grow(&mut self) -> bool {
        let n = (self.slots.len() * 2).max(1024);
        // a table of many slots is read at random, one slot per word: huge pages keep its
        // addresses in the TLB (advised before the slots are first written)
        let Ok(mut new) = crate::mem::try_big_vec(n, "the word cache") else {
            return false;
        };
        new.resize(n, EMPTY);
        let old = std::mem::replace(&mut self.slots, new);
        for s in old.iter().filter(|s| s.len != 0) {
            let i = self.find(&s.key[..s.len as usize]);
            self.slots[i] = *s;
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
            let len = 1 + (k as usize * 7) % WORD_MAX;
            (0..len)
                .map(|j| (k.wrapping_mul(31).wrapping_add(j as u32 * 7) % 251) as u8)
                .collect()
        };
        let entry = |k: u32| -> Vec<u32> { (k..k + 1 + k % 30).collect() };
        let mut first = std::collections::HashMap::new();
        for k in 0..30_000u32 {
            let w = word(k);
            if let std::collections::hash_map::Entry::Vacant(e) = first.entry(w) {
                assert!(matches!(t.get(e.key()), Found::Missing));
                t.insert(e.key(), &entry(k));
                e.insert(k);
            }
        }
        assert!(first.len() > 1000);
        for (w, &k) in &first {
            match t.get(w) {
                Found::Entry(got) => assert_eq!(got, &entry(k)[..]),
                Found::Elsewhere => assert!(entry(k).len() > ENTRY_MAX),
                Found::Missing => panic!("{w:?} lost"),
            }
        }
        t.clear();
        assert!(matches!(t.get(b"abc"), Found::Missing));
        // the table empties itself when full
        for k in 0..(WORDS_MAX as u32 + 10) {
            t.insert(format!("{k}").as_bytes(), &[k]);
        }
        assert!(t.used <= WORDS_MAX);
        assert!(matches!(t.get(b"3"), Found::Missing));
        let last = format!("{}", WORDS_MAX + 9);
        assert!(
            matches!(t.get(last.as_bytes()), Found::Entry(&[k]) if k as usize == WORDS_MAX + 9)
        );
    }
}
