//! A faster exact merge for pieces of superword vocabularies (Cromwell: a first stage of
//! merges inside o200k-like pieces, then merges across them), whose pieces are longer and
//! repeat less than those of word-level BPE.
//!
//! The rank-ordered merge of a piece passes through the state that the merge with only the
//! tokens below a rank `R` ends in (as long as a pair below `R` is left, the lowest pair is
//! one of them), so it can be resumed from there (by token ids: [`Pairs`]). And the merge
//! below `R` never joins two adjacent bytes `a b` that occur next to each other in no token below
//! `R`: the piece can be cut there, and each segment merged (and cached) on its own. With `R`
//! where the cross-word tokens begin, the segments are the word-level pieces (they repeat: a
//! second piece cache holds them), and only the few cross-word merges are left for the whole
//! piece. The ids are those of the plain merge whatever `R` is; `R` only decides the speed.
//!
//! `R` is the lowest rank of a token in which an ASCII letter is followed by ASCII punctuation
//! other than the apostrophe (`"self."`, `"x)"`): the word-level patterns (gpt2, cl100k, o200k)
//! never put one in a piece. Vocabularies with such a token in their first half get no
//! [`Superword`] (nothing to gain).
//!
//! The encoder keeps whole pieces of 17-255 bytes in a cache of their own
//! ([`super::superword_cache`]) and looks a long piece up in the vocabulary only when a filter
//! of the long tokens' hashes (8 KB) lets it through.

use super::bpe;
use super::small::{first_min, Scratch};
use super::superword_cache::{long_hash, LONG_MAX, LONG_MIN};
use super::superword_pivot::{merge_at_pivot, PivotRule};
use crate::encode::piece_cache::{PieceCache, MAX_PIECE};
use crate::error::Result;
use crate::mem::{try_collect, try_filled, try_push, try_reserve};
use crate::vocab::Vocab;

/// The cut rank `R` and which byte pairs occur inside a token below it.
#[derive(Clone, Debug)]
pub struct Superword {
    cut: u32,
    /// bit `(a << 8) | b`: `a b` occurs in a token of rank below `cut`
    joined: Box<[u64; 1024]>,
    /// the tokens that the merge resumed above `cut` can make, by their splits into two
    pairs: Pairs,
    /// bit `long_hash(t) >> 48` set for every mergeable token `t` of [`LONG_MIN`] bytes or
    /// more: a long piece whose bit is clear is no token (8 KB that stay in the CPU cache, where
    /// the lookup of a long piece is a hash map's)
    long_tokens: Box<[u64; 1024]>,
    /// where a whitespace-then-word segment may be merged from its sides
    pivots: PivotRule,
}

/// `(left id, right id) -> id` for each split into two tokens of every token that the merge
/// resumed above the cut can make: the resumed merge's lookups, one probe on a `u64` key
/// instead of a byte-span lookup (a hash of up to 64 bytes and a `memcmp` once a span passes
/// 16 bytes).
///
/// Exact, unlike a table of the training merges: every split of such a token is in it, so
/// `get(a, b)` is the id of the bytes of `a` then `b` whenever those spell a token of the set.
/// The set `S` is the tokens from `cut` on, and every token with a split one half of which is
/// in `S` (to a fixpoint; on Cromwell 50k, 187 tokens such as `" typedef"` = `" "` +
/// `"typedef"`). The merge below `cut` leaves no adjacent pair that spells a token below it;
/// the resumed merge only makes tokens of `S` (it merges pairs found in the table), so a pair
/// holding one spells no token outside `S`, and a pair of two tokens from the start was
/// adjacent at the start: it spells no token below `cut` either.
///
/// The table is megabytes (16 bytes a slot, 100,854 splits on Cromwell 50k): a probe misses the
/// CPU caches, and most pairs of a piece that is merged afresh are in no token. So a blocked
/// Bloom filter (one 64-bit word per key, two bits in it: 256 KB for Cromwell 50k, about 1%
/// false positives) answers most absent pairs from the L2 cache.
#[derive(Clone, Debug)]
struct Pairs {
    /// `(key, id)`; key `(a << 32) | b`, `EMPTY` for a free slot
    slots: Vec<(u64, u32)>,
    shift: u32,
    /// word `hash >> filter_shift` has bits [`filter_bits`]`(hash)` set for every key
    filter: Vec<u64>,
    filter_shift: u32,
}

const EMPTY: u64 = u64::MAX;

#[inline(always)]
fn pair_hash(key: u64) -> u64 {
    key.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The two bits of a key in its filter word (from the middle of the hash: the top bits pick
/// the word and the slot).
#[inline(always)]
fn filter_bits(hash: u64) -> u64 {
    (1 << ((hash >> 20) & 63)) | (1 << ((hash >> 26) & 63))
}

impl Pairs {
    /// From the mergeable tokens (`tokens`, by id).
    fn new(vocab: &Vocab, tokens: &[(u32, &[u8])], cut: u32) -> Result<Pairs> {
        const WHAT: &str = "the superword pair table";
        // every split of every mergeable token into two tokens: (left, right, token); the
        // right half is looked up only when the left one is a token (about half the lookups
        // of building the table at load)
        let mut splits: Vec<(u32, u32, u32)> = Vec::new();
        for &(id, t) in tokens {
            for k in 1..t.len() {
                let Some(a) = vocab.rank(&t[..k]) else {
                    continue;
                };
                if let Some(b) = vocab.rank(&t[k..]) {
                    try_push(&mut splits, (a, b, id), WHAT)?;
                }
            }
        }
        let mut in_s: Vec<bool> =
            try_collect((0..vocab.n_vocab() as u32).map(|id| id >= cut), WHAT)?;
        loop {
            let mut changed = false;
            for &(a, b, t) in &splits {
                if !in_s[t as usize] && (in_s[a as usize] || in_s[b as usize]) {
                    in_s[t as usize] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        splits.retain(|&(_, _, t)| in_s[t as usize]);
        let size = (splits.len() * 2 + 2).next_power_of_two().max(64);
        // about three keys a word
        let words = (splits.len() / 3 + 1).next_power_of_two().max(64);
        let mut p = Pairs {
            slots: try_filled(size, (EMPTY, u32::MAX), WHAT)?,
            shift: 64 - size.trailing_zeros(),
            filter: try_filled(words, 0, WHAT)?,
            filter_shift: 64 - words.trailing_zeros(),
        };
        for (a, b, id) in splits {
            let key = ((a as u64) << 32) | b as u64;
            let h = pair_hash(key);
            let i = p.find(key, h);
            p.slots[i] = (key, id);
            p.filter[(h >> p.filter_shift) as usize] |= filter_bits(h);
        }
        Ok(p)
    }

    /// The slot of `key` (hash `h`), or the empty slot where it would go.
    #[inline(always)]
    fn find(&self, key: u64, h: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = (h >> self.shift) as usize;
        loop {
            let k = self.slots[i].0;
            if k == key || k == EMPTY {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// False when no token is spelled by `a` then `b` (the filter; true may be a false alarm).
    #[inline(always)]
    fn may_have(&self, a: u32, b: u32) -> bool {
        let h = pair_hash(((a as u64) << 32) | b as u64);
        let bits = filter_bits(h);
        self.filter[(h >> self.filter_shift) as usize] & bits == bits
    }

    /// The id of the token that `a` then `b` spell, `u32::MAX` if none (at or above `cut`).
    #[inline(always)]
    fn get(&self, a: u32, b: u32) -> u32 {
        let key = ((a as u64) << 32) | b as u64;
        let h = pair_hash(key);
        let bits = filter_bits(h);
        if self.filter[(h >> self.filter_shift) as usize] & bits != bits {
            return u32::MAX;
        }
        self.slots[self.find(key, h)].1
    }

    /// Ask for the cache line of the slot where `get(a, b)` starts.
    #[inline(always)]
    fn prefetch(&self, a: u32, b: u32) {
        let h = pair_hash(((a as u64) << 32) | b as u64);
        let i = (h >> self.shift) as usize;
        crate::mem::prefetch(self.slots.as_ptr().wrapping_add(i));
    }

    /// The rank-ordered merge of `ids` (none of whose adjacent pairs spells a token below
    /// `cut`), appended to `out`.
    #[inline(always)]
    fn merge(&self, ids: &mut [u32], out: &mut Vec<u32>) -> Result<()> {
        if ids.len() <= MAX_PIECE {
            self.merge_with(ids, &mut [u32::MAX; MAX_PIECE], out)
        } else {
            self.merge_long(ids, out)
        }
    }

    #[inline(never)]
    fn merge_long(&self, ids: &mut [u32], out: &mut Vec<u32>) -> Result<()> {
        debug_assert!(ids.len() <= LONG_MAX);
        self.merge_with(ids, &mut [u32::MAX; LONG_MAX], out)
    }

    /// `merge` with `rank` (at least as long as `ids`) for the pairs' ranks.
    #[inline(always)]
    fn merge_with(&self, ids: &mut [u32], rank: &mut [u32], out: &mut Vec<u32>) -> Result<()> {
        let mut m = ids.len();
        // the pairs that pass the filter are requested first, then looked up
        for i in 1..m {
            if self.may_have(ids[i - 1], ids[i]) {
                self.prefetch(ids[i - 1], ids[i]);
            }
        }
        for i in 1..m {
            rank[i - 1] = self.get(ids[i - 1], ids[i]);
        }
        while m > 1 {
            let (best, at) = first_min(&rank[..m - 1]);
            if best == u32::MAX {
                break;
            }
            // the new token's id is the pair's rank
            ids[at] = best;
            ids.copy_within(at + 2..m, at + 1);
            rank.copy_within(at + 2..m, at + 1);
            m -= 1;
            rank[m - 1] = u32::MAX;
            if at + 1 < m {
                rank[at] = self.get(ids[at], ids[at + 1]);
            }
            if at > 0 {
                rank[at - 1] = self.get(ids[at - 1], ids[at]);
            }
        }
        try_reserve(out, m, "the ids")?;
        out.extend_from_slice(&ids[..m]);
        Ok(())
    }
}

impl Superword {
    /// For `vocab`, if it has cross-word tokens in its second half (its tables grow with the
    /// vocabulary: allocated fallibly).
    pub fn new(vocab: &Vocab) -> Result<Option<Superword>> {
        const WHAT: &str = "the superword tables";
        let n = vocab.n_vocab();
        let spans = || {
            (0..n as u32).filter_map(|id| {
                vocab
                    .span(id)
                    .map(|(at, len)| (id, &vocab.flat[at..at + len]))
            })
        };
        // (mergeable tokens only: `<FILE>` is no cross-word merge)
        let mergeable = |&(id, t): &(u32, &[u8])| vocab.rank(t) == Some(id);
        let cross = |t: &[u8]| {
            t.windows(2)
                .any(|w| w[0].is_ascii_alphabetic() && w[1].is_ascii_punctuation() && w[1] != b'\'')
        };
        // Every vocabulary is asked (a word-level one has no such token): the byte test first,
        // the lookup only for the tokens that pass it.
        let Some((cut, _)) = spans().filter(|(_, t)| cross(t)).find(mergeable) else {
            return Ok(None);
        };
        if (cut as usize) < n / 2 {
            return Ok(None);
        }
        let tokens: Vec<(u32, &[u8])> = try_collect(spans().filter(mergeable), WHAT)?;
        let below = || tokens.iter().filter(|&&(id, _)| id < cut).map(|&(_, t)| t);
        let mut joined = Box::new([0u64; 1024]);
        for t in below() {
            for w in t.windows(2) {
                let k = ((w[0] as usize) << 8) | w[1] as usize;
                joined[k >> 6] |= 1 << (k & 63);
            }
        }
        let pairs = Pairs::new(vocab, &tokens, cut)?;
        let mut long_tokens = Box::new([0u64; 1024]);
        for &(_, t) in tokens.iter().filter(|(_, t)| t.len() >= LONG_MIN) {
            let k = (long_hash(t) >> 48) as usize;
            long_tokens[k >> 6] |= 1 << (k & 63);
        }
        let pivots = PivotRule::new(below());
        Ok(Some(Superword {
            cut,
            joined,
            pairs,
            long_tokens,
            pivots,
        }))
    }

    #[inline(always)]
    fn joined(&self, a: u8, b: u8) -> bool {
        let k = ((a as usize) << 8) | b as usize;
        self.joined[k >> 6] & (1 << (k & 63)) != 0
    }

    /// False when `piece` ([`LONG_MIN`] bytes or more) is surely not a token.
    #[inline(always)]
    pub fn may_be_long_token(&self, piece: &[u8]) -> bool {
        if piece.len() > LONG_MAX {
            return true; // (not hashed: looked up)
        }
        let k = (long_hash(piece) >> 48) as usize;
        self.long_tokens[k >> 6] & (1 << (k & 63)) != 0
    }

    /// Append the ids of `piece` (at most [`LONG_MAX`] bytes, not a single token) to `out`:
    /// the segments merged below the cut rank (from `cache` when it has them), then the merge
    /// resumed over the whole piece. `ids` is a buffer for the segments' ids; `sides` caches
    /// the sides of whitespace-then-word segments.
    #[allow(clippy::too_many_arguments)]
    pub fn encode(
        &self,
        vocab: &Vocab,
        piece: &[u8],
        cache: &mut PieceCache,
        sides: &mut PieceCache,
        ids: &mut Vec<u32>,
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        debug_assert!(piece.len() <= LONG_MAX);
        // The segments' ends first, and their lookups' lines requested (a piece merged here is
        // new, so its segments' lines are often not in the CPU caches), then the lookups.
        let mut ends = [0u8; LONG_MAX + 1];
        let mut n = 0;
        for k in 1..piece.len() {
            if !self.joined(piece[k - 1], piece[k]) {
                ends[n] = k as u8;
                n += 1;
            }
        }
        ends[n] = piece.len() as u8;
        n += 1;
        let mut a = 0;
        for &e in &ends[..n] {
            let seg = &piece[a..e as usize];
            vocab.prefetch_rank(seg);
            cache.prefetch(seg);
            a = e as usize;
        }
        ids.clear();
        let mut a = 0;
        for &e in &ends[..n] {
            let seg = &piece[a..e as usize];
            a = e as usize;
            match vocab.rank(seg) {
                Some(r) if r < self.cut => ids.push(r),
                _ => {
                    if seg.len() > MAX_PIECE || !cache.in_use() {
                        bpe(vocab, seg, self.cut, scratch, ids)?;
                    } else if let Some(c) = cache.get(seg) {
                        ids.extend_from_slice(c);
                    } else {
                        let before = ids.len();
                        match self.pivots.pivot(seg) {
                            Some(p) => merge_at_pivot(vocab, seg, p, self.cut, sides, ids)?,
                            None => bpe(vocab, seg, self.cut, scratch, ids)?,
                        }
                        cache.insert(seg, &ids[before..]);
                    }
                }
            }
        }
        self.pairs.merge(ids, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A vocabulary of word-level tokens, then cross-word ones (`x.`, `y(`, `.y`...), some
    /// of which make pairs of lower rank than themselves; with `late` tokens after them.
    fn vocab_with(words: &[&str], late: &[&str]) -> Vocab {
        let mut m: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        let cross = [
            "x.", "y(", "x(", "x.x", "y((", " xy(", "xy(", "x..", "x)", ".x)", "y.x",
        ];
        for t in words.iter().chain(cross.iter()).chain(late.iter()) {
            let id = m.len() as u32;
            m.push((t.as_bytes().to_vec(), id));
        }
        Vocab::new(m, vec![]).unwrap()
    }

    const WORDS: [&str; 15] = [
        "xx", "xy", "yx", "xxx", ".x", "((", "..", " x", " .", ".xy", "yy", "xyx", " xx", "(x",
        "((x",
    ];

    fn vocab() -> Vocab {
        vocab_with(&WORDS, &[])
    }

    /// `sw.encode` of random pieces of `alphabet` equals the plain merge with every token.
    fn check_random_pieces(v: &Vocab, sw: &Superword, alphabet: &[u8], max_len: u64) {
        let mut seed = 0x1234_5678u64;
        let (mut cache, mut ids, mut scratch) = (PieceCache::default(), vec![], Scratch::default());
        let mut sides = PieceCache::default();
        for _ in 0..20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = 1 + (seed % max_len) as usize;
            let mut r = seed;
            let piece: Vec<u8> = (0..len)
                .map(|k| {
                    if k % 21 == 20 {
                        r = r.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(1);
                    }
                    alphabet[((r >> (3 * (k % 21))) % alphabet.len() as u64) as usize]
                })
                .collect();
            let (mut want, mut got) = (vec![], vec![]);
            bpe(v, &piece, u32::MAX, &mut scratch, &mut want).unwrap();
            sw.encode(
                v,
                &piece,
                &mut cache,
                &mut sides,
                &mut ids,
                &mut scratch,
                &mut got,
            )
            .unwrap();
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&piece));
        }
    }

    #[test]
    fn equals_the_plain_merge() {
        let v = vocab();
        let sw = Superword::new(&v)
            .unwrap()
            .expect("cross-word tokens in the second half");
        assert_eq!(sw.cut, 256 + 15);
        assert!(sw.joined(b'.', b'x') && !sw.joined(b'x', b'.'));
        check_random_pieces(&v, &sw, b"xy.() ", 24);
        check_random_pieces(&v, &sw, b"xy.() ", MAX_PIECE as u64);
        // pieces of up to 255 bytes (segments, and id runs, longer than the generic cache's)
        check_random_pieces(&v, &sw, b"xy.() ", LONG_MAX as u64);
        check_random_pieces(&v, &sw, b"xxxxy.", LONG_MAX as u64);
    }

    /// The filter of the id pairs lets every pair of the table through, and keeps most others
    /// out (it only saves probes: `get` is exact either way).
    #[test]
    fn pair_filter_has_every_key() {
        let v = vocab();
        let sw = Superword::new(&v).unwrap().unwrap();
        let p = &sw.pairs;
        let keys: Vec<u64> = p
            .slots
            .iter()
            .map(|s| s.0)
            .filter(|&k| k != EMPTY)
            .collect();
        assert!(keys.len() > 10);
        for &k in &keys {
            assert!(p.may_have((k >> 32) as u32, k as u32));
            assert_eq!(
                p.get((k >> 32) as u32, k as u32),
                p.slots[p.find(k, pair_hash(k))].1
            );
        }
        let n = v.n_vocab() as u32;
        let passed = (0..n)
            .flat_map(|a| (0..n).map(move |b| (a, b)))
            .filter(|&(a, b)| p.may_have(a, b))
            .count();
        assert!(passed < keys.len() + (n * n) as usize / 4, "{passed}");
    }

    #[test]
    fn pairs_hold_every_split_of_the_tokens_from_the_cut() {
        let v = vocab();
        let sw = Superword::new(&v).unwrap().unwrap();
        let p = &sw.pairs;
        let id = |t: &str| v.rank(t.as_bytes()).unwrap();
        // " xy(" is " x" + "y(", " " + "xy(" and " xy" is no token
        assert_eq!(p.get(id(" x"), id("y(")), id(" xy("));
        assert_eq!(p.get(id(" "), id("xy(")), id(" xy("));
        assert_eq!(p.get(id("x"), id(".")), id("x."));
        // below the cut, or no token
        assert_eq!(p.get(id("x"), id("x")), u32::MAX);
        assert_eq!(p.get(id("y"), id(".")), u32::MAX);
    }

    #[test]
    fn pairs_hold_word_tokens_that_split_into_a_later_one() {
        // "((" only after the cross-word tokens, and "((x" below them splits into "((" + "x":
        // a resumed merge can then make "((x", a token below the cut, and "(((x" from it
        let words: Vec<&str> = WORDS.iter().copied().filter(|&w| w != "((").collect();
        let v = vocab_with(&words, &["(((x", "(("]);
        let sw = Superword::new(&v).unwrap().unwrap();
        let id = |t: &str| v.rank(t.as_bytes()).unwrap();
        assert!(id("((x") < sw.cut);
        assert_eq!(sw.pairs.get(id("(("), id("x")), id("((x"));
        assert_eq!(sw.pairs.get(id("("), id("((x")), id("(((x"));
        assert_eq!(sw.pairs.get(id("("), id("(x")), id("((x"));
        check_random_pieces(&v, &sw, b"x(.y", MAX_PIECE as u64);
    }

    /// The whole encoder (pieces looked up ahead, long pieces filtered and cached apart, the
    /// segment and piece caches warm or cold) against the plain merge of each piece.
    #[test]
    fn encoder_equals_the_plain_merge_of_each_piece() {
        use crate::encode::Encoder;
        use crate::pretokenize::Pretokenizer;
        // long tokens made of "yy" (a word-level token): 4, 8, 16, 24 and 32 bytes
        let ys: Vec<String> = [4, 8, 16, 24, 32].iter().map(|&n| "y".repeat(n)).collect();
        let late: Vec<&str> = ys.iter().map(|y| y.as_str()).collect();
        let v = vocab_with(&WORDS, &late);
        let sw = Superword::new(&v).unwrap().unwrap();
        assert!(sw.may_be_long_token(late[4].as_bytes()));
        let pretok = Pretokenizer::new(r"\S+|\s+").unwrap();
        let mut seed = 0x9876_5432u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut text = String::new();
        for _ in 0..6000 {
            let r = next();
            match r % 4 {
                0 => (0..1 + r % 70).for_each(|_| text.push('y')),
                1 => (0..1 + (r >> 8) % 70)
                    .for_each(|k| text.push(b"xy.()"[((r >> (k % 64)) % 5) as usize] as char)),
                // 65-300 bytes: the long cache, the merge of long id runs, and `bpe` past it
                2 if r % 16 == 2 => (0..65 + (r >> 8) % 236)
                    .for_each(|k| text.push(b"xy.()xx"[((r >> (k % 50)) % 7) as usize] as char)),
                _ => text.push_str(
                    ["x.xx.xx.xx.xy(", "x.x", "(x.y", "xyx)", "xx.xx.x"][(r >> 3) as usize % 5],
                ),
            }
            text.push_str([" ", "\n", "  ", ""][(r >> 20) as usize % 4]);
        }
        let mut want = vec![];
        let mut scratch = Scratch::default();
        pretok
            .for_each_piece(&text, |p| {
                bpe(&v, p.as_bytes(), u32::MAX, &mut scratch, &mut want).unwrap()
            })
            .unwrap();
        assert!(want
            .iter()
            .any(|&id| v.token_bytes(id).unwrap().len() >= LONG_MIN));
        let enc = Encoder::new(v.clone(), pretok.clone()).unwrap();
        for _ in 0..2 {
            assert_eq!(enc.encode_ordinary(&text).unwrap(), want);
        }
        // another encoder in between empties the caches
        let other = Encoder::new(vocab(), pretok.clone()).unwrap();
        other.encode_ordinary("x.x y(").unwrap();
        assert_eq!(enc.encode_ordinary(&text).unwrap(), want);
        // texts of fewer pieces than the lookahead ring, of as many, and a few more (the
        // pieces encoded after the scanner's end)
        let mut pieces: Vec<&str> = vec![];
        pretok.for_each_piece(&text, |p| pieces.push(p)).unwrap();
        for n in 1..=20 {
            for at in [0, 501, 2000] {
                let part = &pieces[at..at + n];
                let mut want = vec![];
                for p in part {
                    bpe(&v, p.as_bytes(), u32::MAX, &mut scratch, &mut want).unwrap();
                }
                assert_eq!(enc.encode_ordinary(&part.concat()).unwrap(), want);
            }
        }
    }

    /// Whitespace runs then words (`"\n    xy"`): merged from the sides of the pivot when no
    /// token holds its three bytes, with whitespace and word tokens whose ranks interleave so
    /// that either side may take the pivot; equal to the plain merge either way.
    #[test]
    fn whitespace_then_word_segments_equal_the_plain_merge() {
        let ws = [
            "  ", " x", "\n ", "xy", "   ", " xy", "\n  ", "    ", " y", "\n\n", "\n   ", "yx",
            " yx", "      ", "\n    ", " xyx", "\t ", " \t", "\n\t", "\n\n ", "\n\n.",
        ];
        let v = vocab_with(&ws, &[]);
        let sw = Superword::new(&v).unwrap().unwrap();
        assert!(sw.pivots.pivot(b"\n    xy").is_some());
        assert!(sw.pivots.pivot(b"  xy").is_some());
        // "\n\n." is a token below the cut: no pivot between the line breaks and the dot
        assert_eq!(sw.pivots.pivot(b"\n\n.x"), None);
        assert_eq!(sw.pivots.pivot(b" xy"), None);
        check_random_pieces(&v, &sw, b"   \n\txy.", 40);
        check_random_pieces(&v, &sw, b"    \nxy", 70);
        // each kind of pivot: runs of 2-20 whitespace bytes, then a word
        let (mut cache, mut ids, mut scratch) = (PieceCache::default(), vec![], Scratch::default());
        let mut sides = PieceCache::default();
        let mut r = 77u64;
        for _ in 0..5000 {
            r = r
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let mut piece = vec![];
            for k in 0..2 + (r >> 33) % 19 {
                piece.push(b"  \n \t  "[((r >> (k % 40)) % 7) as usize]);
            }
            for k in 0..1 + (r >> 50) % 9 {
                piece.push(b"xyxy.("[((r >> (2 * k + 1)) % 6) as usize]);
            }
            let (mut want, mut got) = (vec![], vec![]);
            bpe(&v, &piece, u32::MAX, &mut scratch, &mut want).unwrap();
            sw.encode(
                &v,
                &piece,
                &mut cache,
                &mut sides,
                &mut ids,
                &mut scratch,
                &mut got,
            )
            .unwrap();
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&piece));
        }
    }

    /// An added token shaped like a cross-word one (`"<FILE>"`: a letter then `>`) at a low id,
    /// as Cromwell's specials are, is no cut: only mergeable tokens count.
    #[test]
    fn added_tokens_set_no_cut() {
        use crate::added::{AddedKind, AddedToken};
        let mut m: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32 + 1)).collect();
        for t in WORDS.iter().chain(["x.", "y(", "x(", "x.x"].iter()) {
            let id = m.len() as u32 + 1;
            m.push((t.as_bytes().to_vec(), id));
        }
        let added = vec![AddedToken {
            text: "<FILE>".into(),
            id: 0,
            kind: AddedKind::Special,
        }];
        let v = Vocab::new(m, added).unwrap();
        let sw = Superword::new(&v)
            .unwrap()
            .expect("a cut after the specials");
        assert_eq!(sw.cut, v.rank(b"x.").unwrap());
        check_random_pieces(&v, &sw, b"xy.() ", 24);
    }

    #[test]
    fn word_level_vocabularies_have_none() {
        assert!(Superword::new(&crate::bpe::test_vocabs::toy_vocab())
            .unwrap()
            .is_none());
    }
}
