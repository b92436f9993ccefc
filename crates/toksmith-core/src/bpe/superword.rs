//! A faster exact merge for pieces of superword vocabularies (Cromwell: a first stage of
//! merges inside o200k-like pieces, then merges across them), whose pieces are longer and
//! repeat less than those of word-level BPE.
//!
//! The rank-ordered merge of a piece passes through the state that the merge with only the
//! tokens below a rank `R` ends in (as long as a pair below `R` is left, the lowest pair is
//! one of them), so it can be resumed from there ([`bpe_small_tokens`]). And the merge below
//! `R` never joins two adjacent bytes `a b` that occur next to each other in no token below
//! `R`: the piece can be cut there, and each segment merged (and cached) on its own. With `R`
//! where the cross-word tokens begin, the segments are the word-level pieces (they repeat: a
//! second piece cache holds them), and only the few cross-word merges are left for the whole
//! piece. The ids are those of the plain merge whatever `R` is; `R` only decides the speed.
//!
//! `R` is the lowest rank of a token in which an ASCII letter is followed by ASCII punctuation
//! other than the apostrophe (`"self."`, `"x)"`): the word-level patterns (gpt2, cl100k, o200k)
//! never put one in a piece. Vocabularies with such a token in their first half get no
//! [`Superword`] (nothing to gain).

use super::small::{bpe_small, bpe_small_tokens, Scratch};
use crate::encode::piece_cache::{PieceCache, MAX_PIECE};
use crate::error::Result;
use crate::vocab::Vocab;

/// The cut rank `R` and which byte pairs occur inside a token below it.
#[derive(Clone, Debug)]
pub struct Superword {
    cut: u32,
    /// bit `(a << 8) | b`: `a b` occurs in a token of rank below `cut`
    joined: Box<[u64; 1024]>,
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
        Some(Superword { cut, joined })
    }

    #[inline(always)]
    fn joined(&self, a: u8, b: u8) -> bool {
        let k = ((a as usize) << 8) | b as usize;
        self.joined[k >> 6] & (1 << (k & 63)) != 0
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
        bpe_small_tokens(vocab, piece, ids, scratch, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A vocabulary of word-level tokens, then cross-word ones (`x.`, `y(`, `.y`...), some
    /// of which make pairs of lower rank than themselves.
    fn vocab() -> Vocab {
        let mut m: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        let words = [
            "xx", "xy", "yx", "xxx", ".x", "((", "..", " x", " .", ".xy", "yy", "xyx", " xx", "(x",
            "((x",
        ];
        let cross = [
            "x.", "y(", "x(", "x.x", "y((", " xy(", "xy(", "x..", "x)", ".x)", "y.x",
        ];
        for t in words.iter().chain(cross.iter()) {
            let id = m.len() as u32;
            m.push((t.as_bytes().to_vec(), id));
        }
        Vocab::new(m, vec![]).unwrap()
    }

    #[test]
    fn equals_the_plain_merge() {
        let v = vocab();
        let sw = Superword::new(&v).expect("cross-word tokens in the second half");
        assert_eq!(sw.cut, 256 + 15);
        assert!(sw.joined(b'.', b'x') && !sw.joined(b'x', b'.'));
        let alphabet = b"xy.() ";
        let mut seed = 0x1234_5678u64;
        let (mut cache, mut ids, mut scratch) = (PieceCache::default(), vec![], Scratch::default());
        for _ in 0..20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = 1 + (seed % 24) as usize;
            let piece: Vec<u8> = (0..len)
                .map(|k| alphabet[((seed >> (2 * k)) % 6) as usize])
                .collect();
            let (mut want, mut got) = (vec![], vec![]);
            bpe_small(&v, &piece, u32::MAX, &mut scratch, &mut want).unwrap();
            sw.encode(&v, &piece, &mut cache, &mut ids, &mut scratch, &mut got)
                .unwrap();
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&piece));
        }
    }

    #[test]
    fn word_level_vocabularies_have_none() {
        assert!(Superword::new(&crate::bpe::test_vocabs::toy_vocab()).is_none());
    }
}
