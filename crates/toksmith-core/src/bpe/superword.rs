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
//! The encoder keeps whole pieces of 17-64 bytes in a cache of their own
//! ([`super::superword_cache`]) and looks a long piece up in the vocabulary only when a filter
//! of the long tokens' hashes (8 KB) lets it through.

use super::small::{bpe_small, Scratch};
use super::superword_cache::{long_hash, LONG_MIN};
use crate::encode::piece_cache::{PieceCache, MAX_PIECE};
use crate::error::Result;
use crate::mem::try_reserve;
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
#[derive(Clone, Debug)]
struct Pairs {
    /// `(key, id)`; key `(a << 32) | b`, `EMPTY` for a free slot
    slots: Vec<(u64, u32)>,
    shift: u32,
}

const EMPTY: u64 = u64::MAX;

impl Pairs {
    fn new(vocab: &Vocab, cut: u32) -> Pairs {
        // every split of every mergeable token into two tokens: (left, right, token)
        let mut splits: Vec<(u32, u32, u32)> = Vec::new();
        for id in 0..vocab.n_vocab() as u32 {
            let Some((at, len)) = vocab.span(id) else {
                continue;
            };
            let t = &vocab.flat[at..at + len];
            if vocab.rank(t) != Some(id) {
                continue; // (an added token)
            }
            for k in 1..t.len() {
                if let (Some(a), Some(b)) = (vocab.rank(&t[..k]), vocab.rank(&t[k..])) {
                    splits.push((a, b, id));
                }
            }
        }
        let mut in_s: Vec<bool> = (0..vocab.n_vocab() as u32).map(|id| id >= cut).collect();
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
        let mut p = Pairs {
            slots: vec![(EMPTY, u32::MAX); size],
            shift: 64 - size.trailing_zeros(),
        };
        for (a, b, id) in splits {
            let key = ((a as u64) << 32) | b as u64;
            let i = p.find(key);
            p.slots[i] = (key, id);
        }
        p
    }

    /// The slot of `key`, or the empty slot where it would go.
    #[inline(always)]
    fn find(&self, key: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize;
        loop {
            let k = self.slots[i].0;
            if k == key || k == EMPTY {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// The id of the token that `a` then `b` spell, `u32::MAX` if none (at or above `cut`).
    #[inline(always)]
    fn get(&self, a: u32, b: u32) -> u32 {
        self.slots[self.find(((a as u64) << 32) | b as u64)].1
    }

    /// The rank-ordered merge of `ids` (at most [`MAX_PIECE`] of them, none of whose adjacent
    /// pairs spells a token below `cut`), appended to `out`.
    fn merge(&self, ids: &mut [u32], out: &mut Vec<u32>) -> Result<()> {
        let mut m = ids.len();
        let mut rank = [u32::MAX; MAX_PIECE];
        for i in 1..m {
            rank[i - 1] = self.get(ids[i - 1], ids[i]);
        }
        while m > 1 {
            let mut best = u32::MAX;
            let mut at = 0;
            for (i, &r) in rank[..m - 1].iter().enumerate() {
                if r < best {
                    best = r;
                    at = i;
                }
            }
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
    /// For `vocab`, if it has cross-word tokens in its second half.
    pub fn new(vocab: &Vocab) -> Option<Superword> {
        let n = vocab.n_vocab();
        let tokens = || {
            (0..n as u32).filter_map(|id| {
                vocab
                    .span(id)
                    .map(|(at, len)| (id, &vocab.flat[at..at + len]))
                    // (mergeable tokens only: `<FILE>` is no cross-word merge)
                    .filter(|&(id, t)| vocab.rank(t) == Some(id))
            })
        };
        let cross = |t: &[u8]| {
            t.windows(2)
                .any(|w| w[0].is_ascii_alphabetic() && w[1].is_ascii_punctuation() && w[1] != b'\'')
        };
        let cut = tokens().find(|(_, t)| cross(t))?.0;
        if (cut as usize) < n / 2 {
            return None;
        }
        let mut joined = Box::new([0u64; 1024]);
        for (_, t) in tokens().filter(|&(id, _)| id < cut) {
            for w in t.windows(2) {
                let k = ((w[0] as usize) << 8) | w[1] as usize;
                joined[k >> 6] |= 1 << (k & 63);
            }
        }
        let pairs = Pairs::new(vocab, cut);
        let mut long_tokens = Box::new([0u64; 1024]);
        for (_, t) in tokens().filter(|(_, t)| t.len() >= LONG_MIN) {
            let k = (long_hash(t) >> 48) as usize;
            long_tokens[k >> 6] |= 1 << (k & 63);
        }
        Some(Superword {
            cut,
            joined,
            pairs,
            long_tokens,
        })
    }

    #[inline(always)]
    fn joined(&self, a: u8, b: u8) -> bool {
        let k = ((a as usize) << 8) | b as usize;
        self.joined[k >> 6] & (1 << (k & 63)) != 0
    }

    /// False when `piece` ([`LONG_MIN`] bytes or more) is surely not a token.
    #[inline(always)]
    pub fn may_be_long_token(&self, piece: &[u8]) -> bool {
        if piece.len() > MAX_PIECE {
            return true; // (not hashed: looked up)
        }
        let k = (long_hash(piece) >> 48) as usize;
        self.long_tokens[k >> 6] & (1 << (k & 63)) != 0
    }

    /// Append the ids of `piece` (at most [`MAX_PIECE`] bytes, not a single token) to `out`:
    /// the segments merged below the cut rank (from `cache` when it has them), then the merge
    /// resumed over the whole piece. `ids` is a buffer for the segments' ids.
    pub fn encode(
        &self,
        vocab: &Vocab,
        piece: &[u8],
        cache: &mut PieceCache,
        ids: &mut Vec<u32>,
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        debug_assert!(piece.len() <= MAX_PIECE);
        ids.clear();
        let mut a = 0;
        for k in 1..=piece.len() {
            if k < piece.len() && self.joined(piece[k - 1], piece[k]) {
                continue;
            }
            let seg = &piece[a..k];
            a = k;
            match vocab.rank(seg) {
                Some(r) if r < self.cut => ids.push(r),
                _ => {
                    if !cache.in_use() {
                        bpe_small(vocab, seg, self.cut, scratch, ids)?;
                    } else if let Some(c) = cache.get(seg) {
                        ids.extend_from_slice(c);
                    } else {
                        let before = ids.len();
                        bpe_small(vocab, seg, self.cut, scratch, ids)?;
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

    /// `sw.encode` of random pieces of `alphabet` equals `bpe_small` with every token.
    fn check_random_pieces(v: &Vocab, sw: &Superword, alphabet: &[u8], max_len: u64) {
        let mut seed = 0x1234_5678u64;
        let (mut cache, mut ids, mut scratch) = (PieceCache::default(), vec![], Scratch::default());
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
            bpe_small(v, &piece, u32::MAX, &mut scratch, &mut want).unwrap();
            sw.encode(v, &piece, &mut cache, &mut ids, &mut scratch, &mut got)
                .unwrap();
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&piece));
        }
    }

    #[test]
    fn equals_the_plain_merge() {
        let v = vocab();
        let sw = Superword::new(&v).expect("cross-word tokens in the second half");
        assert_eq!(sw.cut, 256 + 15);
        assert!(sw.joined(b'.', b'x') && !sw.joined(b'x', b'.'));
        check_random_pieces(&v, &sw, b"xy.() ", 24);
        check_random_pieces(&v, &sw, b"xy.() ", MAX_PIECE as u64);
    }

    #[test]
    fn pairs_hold_every_split_of_the_tokens_from_the_cut() {
        let v = vocab();
        let sw = Superword::new(&v).unwrap();
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
        let sw = Superword::new(&v).unwrap();
        let id = |t: &str| v.rank(t.as_bytes()).unwrap();
        assert!(id("((x") < sw.cut);
        assert_eq!(sw.pairs.get(id("(("), id("x")), id("((x"));
        assert_eq!(sw.pairs.get(id("("), id("((x")), id("(((x"));
        assert_eq!(sw.pairs.get(id("("), id("(x")), id("((x"));
        check_random_pieces(&v, &sw, b"x(.y", MAX_PIECE as u64);
    }

    /// The whole encoder (pieces looked up ahead, long pieces filtered and cached apart, the
    /// segment and piece caches warm or cold) against `bpe_small` of each piece.
    #[test]
    fn encoder_equals_the_plain_merge_of_each_piece() {
        use crate::encode::Encoder;
        use crate::pretokenize::Pretokenizer;
        // long tokens made of "yy" (a word-level token): 4, 8, 16, 24 and 32 bytes
        let ys: Vec<String> = [4, 8, 16, 24, 32].iter().map(|&n| "y".repeat(n)).collect();
        let late: Vec<&str> = ys.iter().map(|y| y.as_str()).collect();
        let v = vocab_with(&WORDS, &late);
        let sw = Superword::new(&v).unwrap();
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
                    .for_each(|k| text.push(b"xy.()"[((r >> k) % 5) as usize] as char)),
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
                bpe_small(&v, p.as_bytes(), u32::MAX, &mut scratch, &mut want).unwrap()
            })
            .unwrap();
        assert!(want
            .iter()
            .any(|&id| v.token_bytes(id).unwrap().len() >= LONG_MIN));
        let enc = Encoder::new(v.clone(), pretok.clone());
        for _ in 0..2 {
            assert_eq!(enc.encode_ordinary(&text).unwrap(), want);
        }
        // another encoder in between empties the caches
        let other = Encoder::new(vocab(), pretok);
        other.encode_ordinary("x.x y(").unwrap();
        assert_eq!(enc.encode_ordinary(&text).unwrap(), want);
    }

    #[test]
    fn word_level_vocabularies_have_none() {
        assert!(Superword::new(&crate::bpe::test_vocabs::toy_vocab()).is_none());
    }
}
