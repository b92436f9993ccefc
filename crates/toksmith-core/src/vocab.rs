//! The token table: ids <-> bytes for mergeable tokens, plus special and pinned tokens.
//!
//! Ids follow tiktoken's model: the id of a mergeable token is also its merge rank, so merges
//! must have increasing ids. Ids may have gaps (cl100k has unused ids); `n_vocab` is the
//! largest id + 1.

use crate::added::AddedMatcher;
pub use crate::added::{AddedKind, AddedToken};
use crate::error::{Error, Result};
pub use crate::table::InlineKey;
use crate::table::{pack_at, packed_non_ascii, Filter, InlineTable};
use rustc_hash::FxHashMap;

#[derive(Clone, Debug)]
pub struct Vocab {
    /// bytes -> id for every mergeable token (single bytes included).
    pub(crate) ranks: FxHashMap<Box<[u8]>, u32>,
    /// Rank of every two-byte token, indexed by `(b0 << 8) | b1` (`u32::MAX` if none): 256 KB,
    /// so the first round of every BPE (all adjacent byte pairs) is one array load per pair.
    pub(crate) pair_table: Vec<u32>,
    /// Fast lookup of mergeable tokens of up to 8 / 16 bytes.
    pub(crate) short: InlineTable<u64>,
    pub(crate) medium: InlineTable<u128>,
    /// Tokens of 9 bytes and more, and of up to 8 bytes with a non-ASCII byte: most strings
    /// that are not tokens are ruled out before the lookup in `short`, `medium` or `ranks`.
    pub(crate) long_filter: Filter,
    pub(crate) wide_filter: Filter,
    /// id of each single byte.
    pub(crate) byte_ids: [u32; 256],
    /// id -> bytes (flat storage); `offsets[id]..offsets[id + 1]`, `present[id]` says if used.
    pub(crate) flat: Vec<u8>,
    pub(crate) offsets: Vec<u32>,
    pub(crate) present: Vec<bool>,
    /// (offset, length) per id; length `u32::MAX` for unused ids (the decoder's table).
    pub(crate) spans: Vec<(u32, u32)>,
    pub(crate) added: Vec<AddedToken>,
    /// Unique per vocabulary built (kept by clones, which hold the same tokens): per-thread
    /// memos of its lookups (`bpe/memo.rs`) know whose answers they hold.
    pub(crate) uid: u64,
    /// The characters a merge may start from whole (`bpe/atoms.rs`): built on a thread of
    /// their own when a large vocabulary is built, else on first use; shared by clones.
    pub(crate) atoms: crate::bpe::LazyAtoms,
}

/// Bytes that no valid UTF-8 text holds: 0xC0 and 0xC1 (they could only start an overlong
/// two-byte form) and 0xF5..=0xFF (they could only start a sequence past U+10FFFF).
pub fn never_in_utf8(b: u8) -> bool {
    b == 0xC0 || b == 0xC1 || b >= 0xF5
}

impl Vocab {
    /// Build from mergeable tokens `(bytes, id)` and added tokens.
    pub fn new(mergeable: Vec<(Vec<u8>, u32)>, added: Vec<AddedToken>) -> Result<Self> {
        const WHAT: &str = "a vocabulary";
        let mut ranks: FxHashMap<Box<[u8]>, u32> = FxHashMap::default();
        crate::mem::try_reserve_map(&mut ranks, mergeable.len(), WHAT)?;
        let mut max_id = 0u32;
        let n_tokens = mergeable.len();
        // the token bytes move into the table (no copy per token)
        for (bytes, id) in mergeable {
            if bytes.is_empty() {
                return Err(Error::InvalidVocab(format!(
                    "token id {id} has empty bytes"
                )));
            }
            match ranks.entry(bytes.into_boxed_slice()) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    return Err(Error::InvalidVocab(format!(
                        "token {:?} appears twice (ids {} and {id})",
                        String::from_utf8_lossy(e.key()),
                        e.get()
                    )));
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(id);
                }
            }
            max_id = max_id.max(id);
        }
        let mut byte_ids = [u32::MAX; 256];
        let mut missing = [false; 256];
        for b in 0..=255u8 {
            match ranks.get(&[b][..]) {
                Some(&id) => byte_ids[b as usize] = id,
                // GPT-NeoX's vocabulary (Pythia, OLMo 1) lacks the bytes that UTF-8 text never
                // holds: only bytes, never text, can need them (see `missing_bytes`)
                None if never_in_utf8(b) => missing[b as usize] = true,
                None => {
                    return Err(Error::InvalidVocab(format!(
                        "the single byte 0x{b:02x} is not a token; a byte-level vocabulary needs all 256 bytes \
                         (only 0xc0, 0xc1 and 0xf5-0xff, which UTF-8 never uses, may be missing)"
                    )))
                }
            }
        }
        if missing.iter().any(|&m| m) {
            // a token holding a missing byte could not be merged from single bytes
            if let Some((t, &id)) = ranks
                .iter()
                .find(|(t, _)| t.iter().any(|&b| missing[b as usize]))
            {
                return Err(Error::InvalidVocab(format!(
                    "token id {id} ({:?}) holds the byte 0x{:02x}, which is not a token itself",
                    String::from_utf8_lossy(t),
                    t.iter().find(|&&b| missing[b as usize]).unwrap_or(&0)
                )));
            }
        }
        // The lookup tables and the id-ordered layout are independent: built on two threads.
        let tables = || {
            rayon::join(
                || InlineTable::new(ranks.iter().map(|(k, &v)| (&k[..], v)), 1),
                || {
                    (
                        InlineTable::new(ranks.iter().map(|(k, &v)| (&k[..], v)), 9),
                        Filter::new(ranks.keys().map(|k| &k[..]), |k| k.len() >= 9),
                        Filter::new(ranks.keys().map(|k| &k[..]), |k| {
                            k.len() <= 8 && !k.is_ascii()
                        }),
                    )
                },
            )
        };
        let atoms = crate::bpe::LazyAtoms::default();
        let added_ids: Vec<u32> = added.iter().map(|a| a.id).collect();
        let layout = || -> Result<_> {
            let mut by_id: Vec<(u32, &[u8])> = crate::mem::try_vec(n_tokens + added.len(), WHAT)?;
            by_id.extend(ranks.iter().map(|(b, &id)| (id, &b[..])));
            let mut seen_text: FxHashMap<&str, u32> = FxHashMap::default();
            crate::mem::try_reserve_map(&mut seen_text, added.len(), WHAT)?;
            for a in &added {
                if a.text.is_empty() {
                    return Err(Error::InvalidVocab(format!(
                        "added token with id {} has empty text",
                        a.id
                    )));
                }
                if let Some(prev) = seen_text.insert(a.text.as_str(), a.id) {
                    return Err(Error::InvalidVocab(format!(
                        "special/pinned token {:?} is given twice (ids {prev} and {})",
                        a.text, a.id
                    )));
                }
                max_id = max_id.max(a.id);
                by_id.push((a.id, a.text.as_bytes()));
            }
            by_id.sort_unstable_by_key(|(id, _)| *id);
            for w in by_id.windows(2) {
                if w[0].0 == w[1].0 {
                    return Err(Error::InvalidVocab(format!(
                        "id {} is used by two tokens ({:?} and {:?})",
                        w[0].0,
                        String::from_utf8_lossy(w[0].1),
                        String::from_utf8_lossy(w[1].1)
                    )));
                }
            }
            let n = if by_id.is_empty() {
                0
            } else {
                max_id as usize + 1
            };
            // ids may be sparse: these tables are sized by the largest id, not by the tokens
            let total: usize = by_id.iter().map(|(_, b)| b.len()).sum();
            let mut flat = crate::mem::try_vec(total + 16, WHAT)?;
            let mut offsets = crate::mem::try_vec(n + 1, WHAT)?;
            let mut present = crate::mem::try_filled(n, false, WHAT)?;
            let mut it = by_id.iter().peekable();
            for id in 0..n as u32 {
                offsets.push(flat.len() as u32);
                if let Some((tid, bytes)) = it.peek() {
                    if *tid == id {
                        flat.extend_from_slice(bytes);
                        present[id as usize] = true;
                        it.next();
                    }
                }
            }
            offsets.push(flat.len() as u32);
            let mut spans: Vec<(u32, u32)> = crate::mem::try_vec(n, WHAT)?;
            spans.extend((0..n).map(|i| {
                if present[i] {
                    (offsets[i], offsets[i + 1] - offsets[i])
                } else {
                    (0, u32::MAX)
                }
            }));
            // Padding so the decoder may copy 16 bytes at a time past the last token.
            flat.extend_from_slice(&[0u8; 16]);
            // (a large vocabulary's atoms are ready by the time its first non-ASCII text
            // comes, without making the load wait for them)
            atoms.start(crate::bpe::Tokens {
                flat: &flat,
                offsets: &offsets,
                present: &present,
                added: &added_ids,
                byte_ids: &byte_ids,
            });
            let mut pair_table = vec![u32::MAX; 1 << 16];
            for (k, &v) in ranks.iter() {
                if k.len() == 2 {
                    pair_table[((k[0] as usize) << 8) | k[1] as usize] = v;
                }
            }
            Ok((pair_table, flat, offsets, present, spans))
        };
        let ((short, (medium, long_filter, wide_filter)), layout) = rayon::join(tables, layout);
        let (pair_table, flat, offsets, present, spans) = layout?;
        let (short, medium, long_filter, wide_filter) =
            (short?, medium?, long_filter?, wide_filter?);
        let vocab = Vocab {
            pair_table,
            short,
            medium,
            long_filter,
            wide_filter,
            ranks,
            uid: crate::tag::next(),
            byte_ids,
            flat,
            offsets,
            present,
            spans,
            added,
            atoms,
        };
        Ok(vocab)
    }

    /// Largest id + 1.
    pub fn n_vocab(&self) -> usize {
        self.present.len()
    }

    /// Bytes of a token (mergeable, special or pinned).
    #[inline]
    pub fn token_bytes(&self, id: u32) -> Result<&[u8]> {
        let i = id as usize;
        if i < self.present.len() && self.present[i] {
            Ok(&self.flat[self.offsets[i] as usize..self.offsets[i + 1] as usize])
        } else {
            Err(Error::UnknownId {
                id: id as u64,
                n_vocab: self.present.len() as u64,
            })
        }
    }

    /// (offset, length) of a token's bytes in `flat`, if the id is used: one load from `spans`.
    #[inline(always)]
    pub(crate) fn span(&self, id: u32) -> Option<(usize, usize)> {
        match self.spans.get(id as usize) {
            Some(&(s, len)) if len != u32::MAX => Some((s as usize, len as usize)),
            _ => None,
        }
    }

    /// Id of a mergeable token given its bytes.
    #[inline(always)]
    pub fn rank(&self, bytes: &[u8]) -> Option<u32> {
        if bytes.len() == 1 {
            return Some(self.byte_ids[bytes[0] as usize]); // every byte is a token (checked in new)
        }
        if bytes.len() == 2 {
            let r = self.pair_table[((bytes[0] as usize) << 8) | bytes[1] as usize];
            return if r == u32::MAX { None } else { Some(r) };
        }
        if bytes.len() <= 8 {
            if packed_non_ascii(u64::pack(bytes))
                && !self.wide_filter.may_contain(Filter::hash(bytes))
            {
                return None;
            }
            self.short.get(bytes)
        } else if !self.long_filter.may_contain(Filter::hash(bytes)) {
            None
        } else if bytes.len() <= 16 {
            self.medium.get(bytes)
        } else {
            self.ranks.get(bytes).copied()
        }
    }

    /// Rank of a mergeable token if it is below `limit`, else `u32::MAX` (the merges' lookup).
    #[inline(always)]
    pub(crate) fn rank_below(&self, bytes: &[u8], limit: u32) -> u32 {
        match self.rank(bytes) {
            Some(r) if r < limit => r,
            _ => u32::MAX,
        }
    }

    /// For a piece `text[s..s + len]` of 1 to 8 bytes: its packed key and its home slot in
    /// the short table (which holds every token of up to 8 bytes), whose line is requested
    /// (and the filter's block, if the piece has a non-ASCII byte). [`Vocab::rank_short_from`]
    /// then looks it up without packing and hashing it again, and without branching on its
    /// length (the separate tables of one- and two-byte tokens made that branch
    /// unpredictable on text whose pieces are 1-8 bytes long).
    #[inline(always)]
    pub(crate) fn prefetch_short_at(&self, text: &[u8], s: usize, len: usize) -> (u64, usize) {
        let key = pack_at(text, s, len);
        if packed_non_ascii(key) {
            self.wide_filter.prefetch(Filter::hash_packed(key, len));
        }
        let home = self.short.home_of(key, len);
        self.short.prefetch_home(home);
        (key, home)
    }

    /// `rank` of a piece of `len` (1 to 8) bytes given [`Vocab::prefetch_short_at`]'s answer.
    #[inline(always)]
    pub(crate) fn rank_short_from(&self, key: u64, len: usize, home: usize) -> Option<u32> {
        if packed_non_ascii(key) && !self.wide_filter.may_contain(Filter::hash_packed(key, len)) {
            return None;
        }
        self.short.get_from(key, len, home)
    }

    /// `rank` of a string of 1 to 8 bytes given packed (see [`crate::table::pack_at`]),
    /// with no branch on its length.
    #[inline(always)]
    pub(crate) fn rank_packed(&self, key: u64, len: usize) -> Option<u32> {
        self.rank_short_from(key, len, self.short.home_of(key, len))
    }

    /// Ask for the cache line where a lookup of `bytes` (3 to 8 of them) starts, ahead of it.
    #[inline(always)]
    pub(crate) fn prefetch_short(&self, bytes: &[u8]) {
        self.short.prefetch(bytes);
    }

    /// Ask for the cache lines that `rank(bytes)` starts with, ahead of the lookup: the
    /// filter's block where it asks one (3 to 8 bytes with a non-ASCII byte, 9 bytes and
    /// more) and the table's home slot (3 to 16 bytes).
    ///
    /// (o200k_base's filters are 128 KB each, cl100k_base's 8 KB and 64 KB: o200k's leave L1
    /// and, not asked for, their loads were the largest stall of the whole-piece lookups of
    /// Latin text with diacritics.)
    #[inline(always)]
    pub(crate) fn prefetch_rank(&self, bytes: &[u8]) {
        match bytes.len() {
            3..=8 => {
                if packed_non_ascii(u64::pack(bytes)) {
                    self.wide_filter.prefetch(Filter::hash(bytes));
                }
                self.short.prefetch(bytes)
            }
            9..=16 => {
                self.long_filter.prefetch(Filter::hash(bytes));
                self.medium.prefetch(bytes)
            }
            0..=2 => {}
            _ => self.long_filter.prefetch(Filter::hash(bytes)),
        }
    }

    /// Id of any token (mergeable first, then added tokens) given its bytes.
    pub fn token_id(&self, bytes: &[u8]) -> Option<u32> {
        self.rank(bytes).or_else(|| {
            self.added
                .iter()
                .find(|a| a.text.as_bytes() == bytes)
                .map(|a| a.id)
        })
    }

    pub fn added_tokens(&self) -> &[AddedToken] {
        &self.added
    }

    /// The single bytes that are not tokens (only bytes UTF-8 never uses may be missing):
    /// text never needs them; bytes holding one cannot be encoded.
    pub fn missing_bytes(&self) -> Vec<u8> {
        (0..=255u8)
            .filter(|&b| self.byte_ids[b as usize] == u32::MAX)
            .collect()
    }

    pub fn byte_ids(&self) -> &[u32; 256] {
        &self.byte_ids
    }

    /// Number of mergeable tokens.
    pub fn n_mergeable(&self) -> usize {
        self.ranks.len()
    }

    /// Mergeable tokens sorted by id.
    pub fn mergeable_sorted(&self) -> Vec<(&[u8], u32)> {
        let mut v: Vec<(&[u8], u32)> = self.ranks.iter().map(|(k, &v)| (&k[..], v)).collect();
        v.sort_unstable_by_key(|&(_, id)| id);
        v
    }
}

impl AddedMatcher {
    /// A matcher of the added (special and pinned) tokens of `vocab`. (Defined here rather than
    /// in [`crate::added`], which knows nothing of the vocabulary, so the two modules do not
    /// import each other.)
    pub fn new(vocab: &Vocab) -> Result<Self> {
        Self::from_tokens(
            vocab
                .added_tokens()
                .iter()
                .map(|a| (a.text.as_bytes(), a.id, a.kind)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rank` (filters, inline tables, hash map) finds every token and nothing else, for
    /// tokens of every length class, ASCII or not.
    #[test]
    fn rank_finds_tokens_and_only_them() {
        let mut seed = 5u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let chars = ["a", "é", "中", "ไ", "😀", " ", "я"];
        let mut m: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        let mut seen: std::collections::HashSet<Vec<u8>> =
            m.iter().map(|(t, _)| t.clone()).collect();
        let mut others = vec![];
        for _ in 0..6000 {
            let n = 1 + (next() % 12) as usize;
            let mut t: Vec<u8> = (0..n)
                .flat_map(|_| chars[(next() % 7) as usize].bytes())
                .collect();
            if next() % 4 == 0 {
                t.truncate(t.len() - 1); // (a token may end inside a character)
            }
            if t.len() >= 2 && seen.insert(t.clone()) {
                if next() % 2 == 0 {
                    let id = m.len() as u32;
                    m.push((t, id));
                } else {
                    others.push(t);
                }
            }
        }
        let v = Vocab::new(m.clone(), vec![]).unwrap();
        for (t, id) in &m {
            assert_eq!(v.rank(t), Some(*id), "{t:?}");
        }
        for t in &others {
            assert_eq!(v.rank(t), None, "{t:?}");
        }
    }
}
