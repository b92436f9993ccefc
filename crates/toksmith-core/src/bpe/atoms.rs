//! Multi-byte characters that a merge may start from whole ("atoms") instead of from bytes.
//!
//! A 3-byte CJK character that is one token costs the byte-level merge two merges and about
//! four span lookups before it is whole, and the spans across its boundaries looked up in
//! between are almost never tokens. For most characters of a real vocabulary the order of
//! those merges cannot matter, and the merge may start from the character's token.
//!
//! A character `c` that is one token is an atom when
//! 1. the merge of its bytes alone ends in `[c]` (let `R` be the highest rank it merges), and
//! 2. every token longer than `c` that begins or ends with `c`'s bytes ranks above `R`;
//!
//! and one occurrence of it may start whole when also
//! 3. no token spans one of its boundaries while holding only part of it, given the bytes
//!    actually next to it in the piece (checked against the "fragment" tokens: those that
//!    end inside a character, or begin inside one).
//!
//! Why the ids stay those of the byte-level merge: by 3 no pair that holds part of `c` and
//! something outside it is ever a token, so `c`'s inner merges and every other merge are
//! independent; while `c` is not whole one of its inner pairs (rank at most `R`) is always
//! present, so every other merge made in that time ranks below `R`, and by 2 a pair holding
//! the whole `c` ranks above it: starting from `c` changes no choice of the merge loop, it
//! only drops the inner merges. (An earlier pass measured a per-piece condition, every inner
//! rank below every crossing token's, that held for 0-7% of the pieces; this one is checked
//! per occurrence and holds for nearly every character.)

use crate::bpe::grid::PairGrid;
use crate::vocab::Vocab;
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use std::sync::Arc;

/// Bits of an atom's id in a [`Atoms::bmp`] entry; the rule index is above them.
const ID_BITS: u32 = 20;
const ID_MASK: u32 = (1 << ID_BITS) - 1;
/// A character whose fragment tokens are more than this many is not an atom (its check
/// would cost more than the merges it saves, and this bounds the work per character).
const MAX_FRAGMENTS: usize = 48;

/// The fragment tokens that could hold part of one atom across its boundaries: `heads` are
/// the byte strings that, right before the character, complete a token ending inside it;
/// `tails` those that, right after it, complete a token beginning inside it. `before` /
/// `after` hold their last / first bytes, so most occurrences are cleared by one bit test.
/// The rest compare the 8 bytes before / after the character with each fragment of up to 8
/// bytes as one masked word (`head_words` / `tail_words`: `(bytes, mask)`), and the longer
/// fragments (few) as slices: a `memcmp` call per fragment was 1.6% of a multilingual encode.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Rule {
    before: [u64; 4],
    after: [u64; 4],
    heads: Vec<Box<[u8]>>,
    tails: Vec<Box<[u8]>>,
    /// heads of up to 8 bytes, in the top bytes of a little-endian word (last byte highest)
    head_words: Vec<(u64, u64)>,
    /// tails of up to 8 bytes, in the low bytes of a little-endian word (first byte lowest)
    tail_words: Vec<(u64, u64)>,
    long_heads: Vec<Box<[u8]>>,
    long_tails: Vec<Box<[u8]>>,
}

/// `(bytes, mask)` of a fragment of at most 8 bytes placed at the top (`top`) or the bottom
/// of a little-endian word.
fn fragment_word(f: &[u8], top: bool) -> (u64, u64) {
    let mut w = [0u8; 8];
    let mut m = [0u8; 8];
    let at = if top { 8 - f.len() } else { 0 };
    w[at..at + f.len()].copy_from_slice(f);
    m[at..at + f.len()].fill(0xFF);
    (u64::from_le_bytes(w), u64::from_le_bytes(m))
}

impl Rule {
    /// Fill the word and long lists from `heads` and `tails`.
    fn index(&mut self) {
        for h in &self.heads {
            if h.len() <= 8 {
                self.head_words.push(fragment_word(h, true));
            } else {
                self.long_heads.push(h.clone());
            }
        }
        for t in &self.tails {
            if t.len() <= 8 {
                self.tail_words.push(fragment_word(t, false));
            } else {
                self.long_tails.push(t.clone());
            }
        }
    }

    /// Whether a head ends at `b[..i]`. Bytes before the piece read as zero: a match made of
    /// them only keeps the character from starting whole, which is always exact.
    #[inline(always)]
    fn head_at(&self, b: &[u8], i: usize) -> bool {
        let w = if i >= 8 {
            u64::from_le_bytes(b[i - 8..i].try_into().unwrap())
        } else {
            let mut x = [0u8; 8];
            x[8 - i..].copy_from_slice(&b[..i]);
            u64::from_le_bytes(x)
        };
        self.head_words
            .iter()
            .fold(false, |hit, &(k, m)| hit | (w & m == k))
            || self.long_heads.iter().any(|h| b[..i].ends_with(h))
    }

    /// Whether a tail starts at `b[j..]` (bytes past the piece read as zero, as in
    /// [`Rule::head_at`]).
    #[inline(always)]
    fn tail_at(&self, b: &[u8], j: usize) -> bool {
        let left = b.len() - j;
        let w = if left >= 8 {
            u64::from_le_bytes(b[j..j + 8].try_into().unwrap())
        } else {
            let mut x = [0u8; 8];
            x[..left].copy_from_slice(&b[j..]);
            u64::from_le_bytes(x)
        };
        self.tail_words
            .iter()
            .fold(false, |hit, &(k, m)| hit | (w & m == k))
            || self.long_tails.iter().any(|t| b[j..].starts_with(t))
    }
}

fn has(set: &[u64; 4], b: u8) -> bool {
    set[(b >> 6) as usize] >> (b & 63) & 1 != 0
}

fn add(set: &mut [u64; 4], b: u8) {
    set[(b >> 6) as usize] |= 1 << (b & 63);
}

/// The atoms of one vocabulary (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Atoms {
    /// code point (below U+10000) -> `rule << ID_BITS | id`, `u32::MAX` when not an atom
    bmp: Box<[u32]>,
    /// the same for the 4-byte characters
    astral: FxHashMap<u32, u32>,
    /// `rules[0]` is empty: the character may start whole anywhere
    rules: Vec<Rule>,
    /// the pairs of low-rank tokens (`grid.rs`), built with the atoms
    pub(crate) grid: Option<PairGrid>,
}

/// The character at `b[i..]` if it is a valid multi-byte UTF-8 sequence: (length, code point).
/// Overlong forms and surrogates are refused, so a code point names one byte string.
#[inline(always)]
pub(crate) fn multibyte_at(b: &[u8], i: usize) -> Option<(usize, u32)> {
    let b0 = b[i] as u32;
    let cont = |k: usize| match b.get(i + k) {
        Some(&c) if c & 0xC0 == 0x80 => Some(c as u32 & 0x3F),
        _ => None,
    };
    match b0 {
        0xC2..=0xDF => Some((2, ((b0 & 0x1F) << 6) | cont(1)?)),
        0xE0..=0xEF => {
            let cp = ((b0 & 0x0F) << 12) | (cont(1)? << 6) | cont(2)?;
            (cp >= 0x800 && !(0xD800..0xE000).contains(&cp)).then_some((3, cp))
        }
        0xF0..=0xF4 => {
            let cp = ((b0 & 0x07) << 18) | (cont(1)? << 12) | (cont(2)? << 6) | cont(3)?;
            (0x10000..=0x10FFFF).contains(&cp).then_some((4, cp))
        }
        _ => None,
    }
}

/// tiktoken's merge of `bytes` alone (lowest rank first, leftmost on ties): the ids left and
/// the highest rank merged. (Characters only: at most 4 bytes.)
fn merge_alone(rank: impl Fn(&[u8]) -> Option<u32>, bytes: &[u8]) -> (Vec<u32>, u32) {
    let mut parts: Vec<(usize, usize)> = (0..bytes.len()).map(|i| (i, i + 1)).collect();
    let mut top = 0u32;
    loop {
        let best = (0..parts.len().saturating_sub(1))
            .filter_map(|k| rank(&bytes[parts[k].0..parts[k + 1].1]).map(|r| (r, k)))
            .min();
        let Some((r, k)) = best else { break };
        top = top.max(r);
        parts[k].1 = parts[k + 1].1;
        parts.remove(k + 1);
    }
    let ids = parts
        .iter()
        .map(|&(s, e)| rank(&bytes[s..e]).unwrap_or(u32::MAX))
        .collect();
    (ids, top)
}

impl Atoms {
    /// The atoms of a vocabulary, built from its tokens (tens of milliseconds for 200k tokens).
    fn new(vocab: Tokens<'_>) -> Atoms {
        let cont = |b: u8| b & 0xC0 == 0x80;
        // Fragments, keyed by the part inside the character: a token ending in `lead, cont*`
        // (at most 3 bytes, after at least one byte) is a head of those bytes; a token
        // beginning with 1-3 continuation bytes followed by more is a tail of each such
        // prefix (all of them: in bytes that are not UTF-8 a stray continuation byte may
        // follow a character).
        let mut heads: FxHashMap<&[u8], Vec<&[u8]>> = FxHashMap::default();
        let mut tails: FxHashMap<&[u8], Vec<&[u8]>> = FxHashMap::default();
        // lowest rank of a longer token beginning / ending with a character's bytes
        let mut first_op: FxHashMap<u32, u32> = FxHashMap::default();
        let mut last_op: FxHashMap<u32, u32> = FxHashMap::default();
        let mut candidates: Vec<(u32, u32, &[u8])> = vec![];
        // the mergeable tokens by id, from the contiguous id -> bytes table (walking the rank
        // map would load every token's own allocation)
        // the mergeable tokens of 2-4 bytes that are not ASCII: all `merge_alone` looks up
        // besides single bytes
        let mut short: FxHashMap<&[u8], u32> = FxHashMap::default();
        let added: rustc_hash::FxHashSet<u32> = vocab.added.iter().copied().collect();
        for id in 0..vocab.present.len() {
            if !vocab.present[id] || added.contains(&(id as u32)) {
                continue;
            }
            let t = &vocab.flat[vocab.offsets[id] as usize..vocab.offsets[id + 1] as usize];
            let rank = id as u32;
            let n = t.len();
            // (an ASCII token is no head, tail or character)
            if n < 2 || t.is_ascii() {
                continue;
            }
            if n <= 4 {
                short.insert(t, rank);
            }
            if let Some(p) = t.iter().rposition(|&b| !cont(b)) {
                if p > 0 && t[p] >= 0xC0 && n - p <= 3 {
                    heads.entry(&t[p..]).or_default().push(&t[..p]);
                }
            }
            let lead = t.iter().take_while(|&&b| cont(b)).count().min(3);
            for k in 1..=lead.min(n - 1) {
                tails.entry(&t[..k]).or_default().push(&t[k..]);
            }
            if let Some((len, cp)) = multibyte_at(t, 0) {
                if len == n {
                    candidates.push((rank, cp, t));
                    continue;
                }
                let m = first_op.entry(cp).or_insert(u32::MAX);
                *m = (*m).min(rank);
            }
            for len in 2..=4.min(n - 1) {
                if let Some((l, cp)) = multibyte_at(t, n - len) {
                    if l == len {
                        let m = last_op.entry(cp).or_insert(u32::MAX);
                        *m = (*m).min(rank);
                    }
                }
            }
        }
        let mut atoms = Atoms {
            bmp: vec![u32::MAX; 0x10000].into_boxed_slice(),
            astral: FxHashMap::default(),
            rules: vec![Rule::default()],
            grid: PairGrid::build(
                (0..vocab.present.len() as u32)
                    .filter(|&id| vocab.present[id as usize] && !added.contains(&id)),
                |id| {
                    &vocab.flat[vocab.offsets[id as usize] as usize
                        ..vocab.offsets[id as usize + 1] as usize]
                },
            ),
        };
        let mut rule_ix: FxHashMap<Rule, u32> = FxHashMap::default();
        for (rank, cp, bytes) in candidates {
            let rank_of = |b: &[u8]| match b {
                [x] => Some(vocab.byte_ids[*x as usize]),
                _ => short.get(b).copied(),
            };
            let (ids, top) = merge_alone(rank_of, bytes);
            let op = |m: &FxHashMap<u32, u32>| m.get(&cp).copied().unwrap_or(u32::MAX);
            if ids != [rank] || op(&first_op) <= top || op(&last_op) <= top || rank > ID_MASK {
                continue;
            }
            let mut rule = Rule::default();
            for k in 1..bytes.len() {
                for &h in heads.get(&bytes[..k]).into_iter().flatten() {
                    add(&mut rule.before, h[h.len() - 1]);
                    rule.heads.push(h.into());
                }
                for &t in tails.get(&bytes[k..]).into_iter().flatten() {
                    add(&mut rule.after, t[0]);
                    rule.tails.push(t.into());
                }
            }
            if rule.heads.len() + rule.tails.len() > MAX_FRAGMENTS {
                continue;
            }
            let ix = if rule == Rule::default() {
                0
            } else {
                rule.heads.sort();
                rule.tails.sort();
                rule.index();
                *rule_ix.entry(rule.clone()).or_insert_with(|| {
                    atoms.rules.push(rule);
                    (atoms.rules.len() - 1) as u32
                })
            };
            if ix >= (1 << (32 - ID_BITS)) - 1 {
                continue;
            }
            let e = (ix << ID_BITS) | rank;
            if cp < 0x10000 {
                atoms.bmp[cp as usize] = e;
            } else {
                atoms.astral.insert(cp, e);
            }
        }
        atoms
    }

    /// The id of the character `piece[i..i + len]` (code point `cp`) if this occurrence may
    /// start whole (conditions 1-3 of the module docs).
    #[inline(always)]
    fn atom_at(&self, piece: &[u8], i: usize, len: usize, cp: u32) -> Option<u32> {
        let e = if cp < 0x10000 {
            self.bmp[cp as usize]
        } else {
            *self.astral.get(&cp)?
        };
        if e == u32::MAX {
            return None;
        }
        let rule = (e >> ID_BITS) as usize;
        if rule != 0 {
            let r = &self.rules[rule];
            let j = i + len;
            if i > 0 && has(&r.before, piece[i - 1]) && r.head_at(piece, i) {
                return None;
            }
            if j < piece.len() && has(&r.after, piece[j]) && r.tail_at(piece, j) {
                return None;
            }
        }
        Some(e & ID_MASK)
    }

    /// The first tokens of the merge of `piece`: its atoms where they may start whole, its
    /// bytes elsewhere, as `start[..=m]` (byte offsets, `start[m] == piece.len()`) and
    /// `id[..m]`; returns `m` (`piece.len()` when no atom applies). The arrays have room for
    /// `piece.len() + 1` entries.
    #[inline]
    pub(crate) fn initial(
        &self,
        piece: &[u8],
        byte_ids: &[u32; 256],
        start: &mut [u32],
        id: &mut [u32],
    ) -> usize {
        let n = piece.len();
        let mut m = 0;
        let mut i = 0;
        while i < n {
            let b = piece[i];
            if b >= 0xC2 {
                if let Some((len, cp)) = multibyte_at(piece, i) {
                    if let Some(a) = self.atom_at(piece, i, len, cp) {
                        start[m] = i as u32;
                        id[m] = a;
                        m += 1;
                        i += len;
                        continue;
                    }
                }
            }
            start[m] = i as u32;
            id[m] = byte_ids[b as usize];
            m += 1;
            i += 1;
        }
        start[m] = n as u32;
        m
    }

    /// How many characters are atoms, and how many of them need no check (for the tests and the notes).
    #[cfg(test)]
    pub(crate) fn count(&self) -> (usize, usize) {
        let n = self.bmp.iter().filter(|&&e| e != u32::MAX).count() + self.astral.len();
        let free = self.bmp.iter().filter(|&&e| e >> ID_BITS == 0).count()
            + self.astral.values().filter(|&&e| e >> ID_BITS == 0).count();
        (n, free)
    }
}

/// What [`Atoms::new`] reads of a vocabulary: its id -> bytes table, its added ids and the ids
/// of single bytes.
#[derive(Clone, Copy)]
pub(crate) struct Tokens<'a> {
    pub(crate) flat: &'a [u8],
    pub(crate) offsets: &'a [u32],
    pub(crate) present: &'a [bool],
    pub(crate) added: &'a [u32],
    pub(crate) byte_ids: &'a [u32; 256],
}

/// An owned copy of [`Tokens`], for a build on a thread of its own (which may outlive the
/// vocabulary).
struct OwnedTokens {
    flat: Vec<u8>,
    offsets: Vec<u32>,
    present: Vec<bool>,
    added: Vec<u32>,
    byte_ids: [u32; 256],
}

impl OwnedTokens {
    /// A copy of `tokens`, or None when memory for it is refused.
    fn of(tokens: &Tokens<'_>) -> Option<OwnedTokens> {
        fn copy<T: Copy>(v: &[T]) -> Option<Vec<T>> {
            let mut out = crate::mem::try_vec(v.len(), "a copy of a vocabulary").ok()?;
            out.extend_from_slice(v);
            Some(out)
        }
        Some(OwnedTokens {
            flat: copy(tokens.flat)?,
            offsets: copy(tokens.offsets)?,
            present: copy(tokens.present)?,
            added: copy(tokens.added)?,
            byte_ids: *tokens.byte_ids,
        })
    }

    fn tokens(&self) -> Tokens<'_> {
        Tokens {
            flat: &self.flat,
            offsets: &self.offsets,
            present: &self.present,
            added: &self.added,
            byte_ids: &self.byte_ids,
        }
    }
}

/// Vocabularies with at least this many ids start building their atoms on a thread of their
/// own when they are built (a smaller one builds them on first use, in well under a
/// millisecond).
const BACKGROUND_MIN_IDS: usize = 1 << 15;

/// The state a [`LazyAtoms`] shares with the thread that builds them.
#[derive(Debug, Default)]
struct Shared {
    /// the atoms once built (published once, freed with this)
    built: AtomicPtr<Atoms>,
    /// the id of the process in which a thread has started building them (0: none has)
    claimed: AtomicU32,
}

impl Shared {
    fn get(&self) -> Option<&Atoms> {
        let p = self.built.load(Ordering::Acquire);
        // SAFETY: a non-null pointer came from `Box::into_raw` in `publish`, is never replaced
        // and is freed only when `self` is dropped, which the borrow of `self` rules out.
        (!p.is_null()).then(|| unsafe { &*p })
    }

    /// Make `atoms` the built atoms (unless some are already) and return those.
    fn publish(&self, atoms: Atoms) -> &Atoms {
        let p = Box::into_raw(Box::new(atoms));
        if let Err(old) = self.built.compare_exchange(
            std::ptr::null_mut(),
            p,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            // SAFETY: `p` was never shared; `old` is the published one (see `get`).
            unsafe {
                drop(Box::from_raw(p));
                return &*old;
            }
        }
        // SAFETY: just published (see `get`).
        unsafe { &*p }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        let p = *self.built.get_mut();
        if !p.is_null() {
            // SAFETY: published by `publish` from `Box::into_raw`, and no borrow of `self` is left.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

/// A vocabulary's [`Atoms`]: built on a thread of its own when a large vocabulary is built
/// ([`LazyAtoms::start`]), else on first use by the first thread that needs them. While they
/// are being built, merges start from bytes (the same ids), so no thread waits for the build.
///
/// The build is claimed with the id of the process: a process forked while its parent built
/// them has no thread building them, so its first thread that needs them builds its own. (The
/// atoms are published with one pointer swap, not a `OnceLock`: a fork while another thread is
/// inside a `OnceLock`'s initialisation leaves the child's lock waiting forever.) Clones of a
/// vocabulary hold the same tokens, so they share its atoms, built or being built.
#[derive(Clone, Debug, Default)]
pub(crate) struct LazyAtoms(Arc<Shared>);

impl LazyAtoms {
    /// Start building the atoms of a vocabulary's `tokens` on a thread of their own, if it is
    /// large and nobody has started yet. A build that cannot start (no memory for the copy of
    /// the tokens, no thread) is left to the first use.
    ///
    /// `Vocab::new` calls this as soon as its id -> bytes layout is done, while its lookup
    /// tables are still being built on the other side of its join: the build then overlaps the
    /// rest of the load instead of a first batch started right after it.
    pub(crate) fn start(&self, tokens: Tokens<'_>) {
        if tokens.present.len() < BACKGROUND_MIN_IDS {
            return;
        }
        let me = std::process::id();
        let claimed = &self.0.claimed;
        if claimed
            .compare_exchange(0, me, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return;
        }
        let Some(tokens) = OwnedTokens::of(&tokens) else {
            claimed.store(0, Ordering::Release);
            return;
        };
        let shared = Arc::clone(&self.0);
        let spawned = std::thread::Builder::new()
            .name("toksmith-atoms".into())
            .spawn(move || {
                yield_to_other_threads();
                shared.publish(Atoms::new(tokens.tokens()));
            });
        if spawned.is_err() {
            claimed.store(0, Ordering::Release);
        }
    }
}

/// Lower the calling thread's scheduling priority to the lowest nice value: the background
/// build of the atoms (about 15 ms of a core for o200k_base) yields to a first batch that keeps
/// every core busy, and takes an idle core where there is one (a thread at nice 19 still gets
/// about 1.5% of a core it shares with a busy one, so a long batch does not starve it). Failure
/// leaves the priority as it was.
fn yield_to_other_threads() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority only changes the calling thread's nice value (`who` 0 with
    // PRIO_PROCESS is the calling thread on Linux); no memory is passed.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 19);
    }
}

impl Vocab {
    /// The pair grid (`grid.rs`) once this vocabulary's atoms are built (this never builds
    /// them: a large vocabulary builds them on a thread at load, a smaller one on its first
    /// merge of a non-ASCII piece).
    #[inline(always)]
    pub(crate) fn pair_grid(&self) -> Option<&PairGrid> {
        self.atoms.0.get().and_then(|a| a.grid.as_ref())
    }

    /// This vocabulary's [`Atoms`] (only merges of non-ASCII pieces with the whole vocabulary
    /// use them). `None` while another thread of this process builds them: the caller merges
    /// from bytes meanwhile (the same ids), so the threads of a first batch do not wait.
    pub(crate) fn atoms(&self) -> Option<&Atoms> {
        let shared = &*self.atoms.0;
        if let Some(atoms) = shared.get() {
            return Some(atoms);
        }
        let me = std::process::id();
        let by = shared.claimed.load(Ordering::Acquire);
        // (unclaimed, or claimed in the process this one was forked from)
        if by == me
            || shared
                .claimed
                .compare_exchange(by, me, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
        {
            return None;
        }
        let added: Vec<u32> = self.added.iter().map(|a| a.id).collect();
        Some(shared.publish(Atoms::new(Tokens {
            flat: &self.flat,
            offsets: &self.offsets,
            present: &self.present,
            added: &added,
            byte_ids: &self.byte_ids,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpe::test_vocabs::{
        multilingual_text, multilingual_vocab, reference_merge, xorshift,
    };
    use crate::bpe::{bpe, Scratch};

    /// Small alphabets of every script family, so that random text of one of them meets the
    /// real vocabularies' multi-character tokens (a range each, inclusive).
    const SCRIPTS: [(u32, u32); 16] = [
        (0xC0, 0xFF),       // Latin-1 letters with diacritics
        (0x100, 0x17F),     // Latin Extended-A
        (0x3B1, 0x3C9),     // Greek
        (0x430, 0x44F),     // Cyrillic
        (0x5D0, 0x5EA),     // Hebrew
        (0x627, 0x64A),     // Arabic
        (0x915, 0x94D),     // Devanagari with vowel signs and virama
        (0xB95, 0xBCD),     // Tamil
        (0xE01, 0xE4E),     // Thai
        (0xAC00, 0xAC40),   // Hangul syllables
        (0x3041, 0x3096),   // hiragana
        (0x30A1, 0x30FA),   // katakana
        (0x4E00, 0x4EFF),   // CJK ideographs
        (0x1F600, 0x1F64F), // emoji
        (0x300, 0x36F),     // combining marks
        (0x80, 0x10FFFF),   // anything
    ];

    /// A random piece: characters of one or two script families, ASCII letters and spaces,
    /// and now and then a byte that breaks the UTF-8 (a lone lead or continuation byte).
    fn random_piece(seed: &mut u64, n_chars: usize) -> Vec<u8> {
        let a = SCRIPTS[(xorshift(seed) % 16) as usize];
        let b = SCRIPTS[(xorshift(seed) % 16) as usize];
        let mut s = vec![];
        for _ in 0..n_chars {
            let r = xorshift(seed);
            let (lo, hi) = if r.is_multiple_of(7) { b } else { a };
            match (r >> 8) % 23 {
                0 => s.push(b"a en"[(r >> 16) as usize % 4]),
                1 if r.is_multiple_of(5) => s.push(0x80 | (r >> 20) as u8 & 0x3F),
                2 if r.is_multiple_of(5) => s.push(0xE0 | (r >> 20) as u8 & 0xF),
                _ => {
                    let cp = lo + ((r >> 24) as u32) % (hi - lo + 1);
                    if let Some(c) = char::from_u32(cp) {
                        s.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                    }
                }
            }
        }
        s
    }

    /// `v`'s atoms, once the thread that builds them (a large vocabulary's) is done.
    fn built(v: &Vocab) -> &Atoms {
        loop {
            if let Some(a) = v.atoms() {
                return a;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    fn check(v: &Vocab, piece: &[u8], scratch: &mut Scratch, with_reference: bool) {
        let mut got = vec![];
        bpe(v, piece, u32::MAX, scratch, &mut got).unwrap();
        // (a limit that keeps every token: the same merge, from the bytes)
        let mut bytes = vec![];
        bpe(v, piece, u32::MAX - 1, scratch, &mut bytes).unwrap();
        assert_eq!(got, bytes, "{piece:?}");
        if with_reference {
            assert_eq!(got, reference_merge(v, piece), "{piece:?}");
        }
    }

    /// A vocabulary full of fragment tokens (cut from random text at any byte): starting from
    /// the atoms gives the reference merge's ids on random pieces of every length.
    /// The bytes and the first 400 other tokens of `v`, ranked anew by length, the shorter first.
    fn shortest_first(v: &Vocab) -> Vocab {
        let mut m: Vec<(Vec<u8>, u32)> = (0..256 + 400)
            .map(|id| (v.token_bytes(id).unwrap().to_vec(), id))
            .collect();
        m.sort_by_key(|(t, id)| (t.len(), *id));
        let m = m
            .into_iter()
            .enumerate()
            .map(|(i, (t, _))| (t, i as u32))
            .collect();
        Vocab::new(m, vec![]).unwrap()
    }

    #[test]
    fn atoms_match_the_reference_on_fragment_heavy_vocabularies() {
        for s in [37u64, 38, 39, 40] {
            let mut seed = s;
            let v = multilingual_vocab(&mut seed);
            // (ranked in random order: few characters are atoms there, the ranks of a
            // trained vocabulary grow with the length more or less)
            let mut scratch = Scratch::default();
            for k in 0..200 {
                let piece = multilingual_text(&mut seed, 1 + k % 60);
                check(&v, &piece, &mut scratch, true);
            }
            let v = shortest_first(&v);
            let (atoms, free) = built(&v).count();
            assert!(atoms > 0 && free < atoms, "{atoms} {free}");
            let mut scratch = Scratch::default();
            for k in 0..400 {
                let piece = multilingual_text(&mut seed, 1 + k % 60);
                check(&v, &piece, &mut scratch, true);
                let piece = random_piece(&mut seed, 1 + k % 30);
                check(&v, &piece, &mut scratch, true);
            }
        }
    }

    /// The masked-word fragment checks answer as the slice comparisons they replace (and,
    /// where the piece has fewer than 8 bytes on that side, at least whenever those do), on
    /// the rules of a fragment-heavy vocabulary (fragments of 1 to 11 bytes) and random
    /// pieces with broken UTF-8.
    #[test]
    fn fragment_words_match_the_slices() {
        let mut seed = 43u64;
        let v = multilingual_vocab(&mut seed);
        // (atoms with fragments; with all the tokens most characters have too many fragments)
        let v = shortest_first(&v);
        let atoms = v.atoms().unwrap();
        assert!(atoms.rules.len() > 1, "{}", atoms.rules.len());
        let (mut hits, mut checks) = (0, 0);
        for k in 0..3000 {
            let r = &atoms.rules[1 + k % (atoms.rules.len() - 1)];
            let mut piece = multilingual_text(&mut seed, 1 + k % 12);
            piece.extend(random_piece(&mut seed, 1 + k % 5));
            for i in 0..=piece.len() {
                let head = r.heads.iter().any(|h| piece[..i].ends_with(h));
                let tail = r.tails.iter().any(|t| piece[i..].starts_with(t));
                let (hw, tw) = (r.head_at(&piece, i), r.tail_at(&piece, i));
                assert!(hw || !head, "{piece:?} {i}");
                assert!(tw || !tail, "{piece:?} {i}");
                if i >= 8 {
                    assert_eq!(hw, head, "{piece:?} {i}");
                }
                if piece.len() - i >= 8 {
                    assert_eq!(tw, tail, "{piece:?} {i}");
                }
                hits += (head || tail) as usize;
                checks += 1;
            }
        }
        assert!(hits > 100, "{hits} of {checks}");
    }

    /// Condition 2: a character that a token joins to its neighbour at a rank below one of
    /// its own inner merges is no atom (it would merge too early).
    #[test]
    fn a_character_joined_before_it_is_whole_is_no_atom() {
        let mut m: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        let e = "é".as_bytes(); // C3 A9
        let z = "中".as_bytes(); // E4 B8 AD
        m.push((e.to_vec(), 300));
        m.push((z[..2].to_vec(), 256));
        m.push((z.to_vec(), 400));
        // "中" + "é" spelled before "中" is whole cannot be, but "xé" ranks below "中"'s inner
        // merges only matter for "中": make "中a" rank below its last inner merge
        m.push(([z, b"a"].concat(), 350));
        m.push(([b"a", e].concat(), 299));
        let v = Vocab::new(m, vec![]).unwrap();
        let at = |c: char| {
            v.atoms()
                .unwrap()
                .atom_at(c.to_string().as_bytes(), 0, c.len_utf8(), c as u32)
        };
        assert_eq!(at('中'), None); // "中a" (350) ranks below "中" (400)
        assert_eq!(at('é'), None); // "aé" (299) ranks below "é" (300)
        let mut scratch = Scratch::default();
        for p in ["中a中é", "a中aé中", "éé中中a", "aéa中aa中"] {
            check(&v, p.as_bytes(), &mut scratch, true);
        }
    }

    fn cl100k() -> Vocab {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/vocabs/cl100k_base.tiktoken"
        );
        let raw = std::fs::read(path).unwrap();
        let ranks = crate::vocab_files::parse_tiktoken(&raw).unwrap().unwrap();
        Vocab::new(ranks, vec![]).unwrap()
    }

    /// A large vocabulary's atoms are built by a thread that `Vocab::new` starts, while merges
    /// start from bytes; a clone keeps them; a build claimed by another process (the parent of
    /// a forked one, whose building thread is not in the child) is made again on first use.
    #[test]
    fn large_vocabularies_build_their_atoms_in_the_background() {
        let mut v = cl100k();
        let me = std::process::id();
        assert_eq!(v.atoms.0.claimed.load(Ordering::Relaxed), me);
        let mut scratch = Scratch::default();
        let mut seed = 7u64;
        let pieces: Vec<Vec<u8>> = (0..300)
            .map(|k| random_piece(&mut seed, 1 + k % 40))
            .collect();
        let mut before = vec![];
        for p in &pieces {
            bpe(&v, p, u32::MAX, &mut scratch, &mut before).unwrap();
        }
        let (n, _) = built(&v).count();
        assert!(n > 1000, "{n}");
        let mut after = vec![];
        for p in &pieces {
            bpe(&v, p, u32::MAX, &mut scratch, &mut after).unwrap();
        }
        assert_eq!(before, after);
        assert_eq!(v.clone().atoms().unwrap().count(), (n, built(&v).count().1));
        v.atoms = LazyAtoms::default();
        v.atoms
            .0
            .claimed
            .store(me.wrapping_add(1), Ordering::Relaxed);
        assert_eq!(v.atoms().unwrap().count().0, n);
    }

    /// The real cl100k_base: most characters of every script are atoms, and pieces of random
    /// text of every script family (and broken UTF-8) merge to the byte-level merge's ids.
    #[test]
    fn atoms_of_cl100k_match_the_byte_merge() {
        let v = cl100k();
        let (atoms, _) = built(&v).count();
        assert!(atoms > 1000, "{atoms}");
        let mut scratch = Scratch::default();
        let mut seed = 99u64;
        for k in 0..6000 {
            let piece = random_piece(&mut seed, 1 + k % 50);
            check(&v, &piece, &mut scratch, k.is_multiple_of(10));
        }
    }
}
