//! A per-thread memo of the span lookups of the short merge, for non-ASCII pieces.
//!
//! Merging a piece of Cyrillic, Greek, Thai, kana or Indic text looks up spans of 3 to 8
//! bytes (whole characters, character pairs, spans that cross a character boundary), and most
//! of those lookups reach a filter or table too big to stay in the core's caches next to
//! everything else (0.26 MB of filters and an 8 MB table for o200k_base). Such pieces rarely
//! repeat, but their spans do: a small alphabet gives few character pairs, so a direct-mapped
//! `span -> rank` memo of 128 KB answers 78-95% of them (one load instead of two or three).
//! CJK ideographs are the exception (thousands of characters: about half the spans were hits,
//! and the misses cost more than the hits saved), so [`bpe_small`](super::bpe_small) does not
//! use the memo for them.

use crate::table::packed_non_ascii;
use crate::vocab::Vocab;

/// log2 of the number of slots (16 bytes each).
const BITS: u32 = 13;

/// `span -> rank` for spans of 3 to 8 bytes with a non-ASCII byte of one vocabulary (the one whose `uid` is
/// `owner`). A slot packs the span's bytes (little-endian, zero-extended: low 64 bits), its
/// rank (`u32::MAX` when not a token) and its length (top 32 bits; 0 = empty): all-zero slots
/// are empty, so a fresh memo is zeroed memory.
#[derive(Default)]
pub(crate) struct SpanMemo {
    slots: Vec<u128>,
    owner: u64,
    /// The memos of the other vocabularies this thread merged with lately (least recently
    /// used first; with the bound one, at most [`crate::mem::KEPT`]), so that alternating
    /// between tokenizers does not start each one's memo afresh.
    others: Vec<(u64, Vec<u128>)>,
}

impl SpanMemo {
    /// Make the memo answer for `vocab`: the one it had the last time, if kept, else an empty
    /// one.
    #[inline]
    pub(crate) fn bind(&mut self, vocab: &Vocab) {
        if self.owner != vocab.uid || self.slots.is_empty() {
            self.switch(vocab.uid);
        }
    }

    #[cold]
    fn switch(&mut self, uid: u64) {
        if !self.slots.is_empty() {
            if self.others.len() + 1 >= crate::mem::KEPT {
                self.others.remove(0);
            }
            self.others
                .push((self.owner, std::mem::take(&mut self.slots)));
        }
        self.slots = match self.others.iter().position(|(o, _)| *o == uid) {
            Some(i) => self.others.remove(i).1,
            None => vec![0; 1 << BITS],
        };
        self.owner = uid;
    }

    /// The rank of `bytes` in the bound vocabulary (`u32::MAX` when not a token); the merges
    /// call [`SpanMemo::rank_packed`].
    #[cfg(test)]
    pub(crate) fn rank(&mut self, vocab: &Vocab, bytes: &[u8]) -> u32 {
        let key = if bytes.len() <= 8 {
            <u64 as crate::table::InlineKey>::pack(bytes)
        } else {
            0
        };
        self.rank_packed(vocab, bytes, key)
    }

    /// [`SpanMemo::rank`] given `bytes` packed (`key`) when they are at most 8.
    #[inline(always)]
    pub(crate) fn rank_packed(&mut self, vocab: &Vocab, bytes: &[u8], key: u64) -> u32 {
        let n = bytes.len();
        if n > 8 {
            return vocab.rank(bytes).unwrap_or(u32::MAX);
        }
        if n < 3 || !packed_non_ascii(key) {
            // (ASCII spans are mostly tokens, and their table lines mostly in the cache)
            return vocab.rank_packed(key, n).unwrap_or(u32::MAX);
        }
        let i = (key
            .wrapping_add(n as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            >> (64 - BITS)) as usize;
        let s = &mut self.slots[i];
        let tag = ((n as u128) << 96) | key as u128;
        if *s & !(0xFFFF_FFFFu128 << 64) == tag {
            return (*s >> 64) as u32;
        }
        let r = vocab.rank_packed(key, n).unwrap_or(u32::MAX);
        *s = tag | ((r as u128) << 64);
        r
    }
}

#[cfg(test)]
mod tests {
    use crate::bpe::test_vocabs::{multilingual_vocab, reference_merge, xorshift};
    use crate::bpe::{bpe_small, Scratch};
    use crate::vocab::Vocab;

    /// Random text of kana, Thai, Greek and a few Latin characters (no CJK ideograph, so the
    /// short merge takes the memo's path), `n_chars` long.
    fn memo_text(seed: &mut u64, n_chars: usize) -> Vec<u8> {
        const CHARS: [&str; 12] = ["あ", "い", "う", "ไ", "ก", "่", "า", "α", "β", "a", "n", " "];
        (0..n_chars)
            .flat_map(|_| CHARS[(xorshift(seed) % 12) as usize].bytes())
            .collect()
    }

    /// The tokens of `v` below `limit`, as a vocabulary of their own (same ids).
    fn below(v: &Vocab, limit: u32) -> Vocab {
        let m = (0..limit)
            .filter_map(|id| v.token_bytes(id).ok().map(|b| (b.to_vec(), id)))
            .collect();
        Vocab::new(m, vec![]).unwrap()
    }

    /// One scratch (one memo) serves two vocabularies and two rank limits in turn: every
    /// merge gives the reference's ids (a memo bound to the other vocabulary, or a remembered
    /// rank above the limit, would not).
    #[test]
    fn memo_merges_match_the_reference_across_vocabularies_and_limits() {
        let (mut s1, mut s2) = (37u64, 38u64);
        let a = multilingual_vocab(&mut s1);
        let b = multilingual_vocab(&mut s2);
        let limit = 256 + 1500;
        let a_low = below(&a, limit);
        let mut scratch = Scratch::default();
        let mut seed = 5u64;
        for k in 0..600 {
            let piece = memo_text(&mut seed, 1 + k % 45);
            if piece.len() >= crate::bpe::HEAP_THRESHOLD {
                continue;
            }
            let (v, lim, reference) = match k % 3 {
                0 => (&a, u32::MAX, &a),
                1 => (&b, u32::MAX, &b),
                _ => (&a, limit, &a_low),
            };
            let mut got = vec![];
            bpe_small(v, &piece, lim, &mut scratch, &mut got).unwrap();
            let want = reference_merge(reference, &piece);
            assert_eq!(got, want, "{k}: {:?}", String::from_utf8_lossy(&piece));
        }
    }

    /// A thread that merges with a few vocabularies in turn keeps each one's memo (the
    /// least recently used one is dropped past `KEPT`).
    #[test]
    fn memos_of_recent_vocabularies_are_kept() {
        let vocabs: Vec<Vocab> = (0..crate::mem::KEPT as u64 + 1)
            .map(|k| multilingual_vocab(&mut (40 + k)))
            .collect();
        let mut memo = super::SpanMemo::default();
        let filled = |m: &super::SpanMemo| m.slots.iter().filter(|&&s| s != 0).count();
        let span = "あい".as_bytes();
        memo.bind(&vocabs[0]);
        memo.rank(&vocabs[0], span);
        assert_eq!(filled(&memo), 1);
        memo.bind(&vocabs[1]);
        assert_eq!(filled(&memo), 0);
        memo.bind(&vocabs[0]);
        assert_eq!(filled(&memo), 1, "the first vocabulary's memo came back");
        for v in &vocabs[1..] {
            memo.bind(v);
        }
        memo.bind(&vocabs[0]);
        assert_eq!(filled(&memo), 0, "dropped after KEPT other vocabularies");
        assert!(memo.others.len() < crate::mem::KEPT);
    }
}
