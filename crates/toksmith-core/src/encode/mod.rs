//! BPE encoding with tiktoken's semantics: the [`Encoder`] (vocabulary + split pattern +
//! added-token matcher).
//!
//! Text is cut at the added (special and pinned) tokens a call produces ([`crate::added`]),
//! the text between them split into pieces by the pattern, and each piece encoded: most pieces
//! are a single token, found with one lookup; the others come from the per-thread
//! [`piece_cache`] or are merged by [`crate::bpe`].
//!
//! * `pieces.rs`: the text between added tokens, piece by piece;
//! * `stream.rs`: ids handed over in blocks, text that arrives in parts;
//! * `allowed.rs`: which special tokens a call may produce;
//! * `bytes.rs`: bytes that need not be UTF-8 (tiktoken's `_encode_bytes`);
//! * [`piece_cache`]: the per-thread cache of the pieces that are not one token;
//! * [`to_buffer`]: ids written into a caller's array memory.

mod allowed;
mod bytes;
pub mod piece_cache;
mod pieces;
mod stream;
pub mod to_buffer;

pub use allowed::Allowed;
pub use pieces::encode_piece;
pub use stream::PARTS_RESERVE_AT;
// Paths from before the merge algorithms and the added tokens moved to their own modules.
pub use crate::added::{may_span_a_safe_cut, AddedMatcher};
pub use crate::bpe::{
    bpe_long, bpe_long_blocks, bpe_merge_limited, bpe_small, LongWork, Scratch, HEAP_THRESHOLD,
};

use crate::added::AddedKind;
use crate::bpe::with_scratch;
use crate::error::{Error, Result};
use crate::normalizers::Normalizer;
use crate::pretokenize::Pretokenizer;
use crate::vocab::Vocab;

/// A complete encoder: vocabulary + split pattern + added-token matcher.
#[derive(Debug)]
pub struct Encoder {
    pub vocab: Vocab,
    pub pretok: Pretokenizer,
    matcher: AddedMatcher,
    /// the two-level merge of the pieces of a superword vocabulary (Cromwell), if it is one
    superword: Option<crate::bpe::Superword>,
    id: u64,
}

impl Clone for Encoder {
    /// A copy with its own id (so its piece caches are its own).
    fn clone(&self) -> Self {
        Encoder {
            vocab: self.vocab.clone(),
            pretok: self.pretok.clone(),
            matcher: self.matcher.clone(),
            superword: self.superword.clone(),
            id: crate::tag::next(),
        }
    }
}

impl Encoder {
    /// ([`Error::OutOfMemory`] when the added tokens' trie or the superword tables, which grow
    /// with the vocabulary, do not fit in memory.)
    pub fn new(vocab: Vocab, pretok: Pretokenizer) -> Result<Self> {
        let matcher = AddedMatcher::new(&vocab)?;
        // (Cromwell's one-stage split has word-level pieces: `_` in its words looks like a
        // cross-word token to the superword test, but its pieces repeat like o200k's)
        let superword = if pretok.is_code_lines() {
            None
        } else {
            crate::bpe::Superword::new(&vocab)?
        };
        Ok(Encoder {
            vocab,
            pretok,
            matcher,
            superword,
            id: crate::tag::next(),
        })
    }

    /// Encode, producing special tokens in `allowed` and pinned tokens always.
    pub fn encode_into(&self, text: &str, allowed: &Allowed, out: &mut Vec<u32>) -> Result<()> {
        self.encode_impl(text, allowed, out, usize::MAX, &mut |_| {})
    }

    fn encode_impl(
        &self,
        text: &str,
        allowed: &Allowed,
        out: &mut Vec<u32>,
        limit: usize,
        flush: &mut dyn FnMut(&mut Vec<u32>),
    ) -> Result<()> {
        with_scratch(|scratch| {
            let bytes = text.as_bytes();
            let mut pos = 0;
            // with no special token allowed and none pinned, nothing can match: no search
            if !matches!(allowed, Allowed::None) || self.matcher.has_pinned() {
                let accept = |id: u32, kind: AddedKind| allowed.accepts(id, kind);
                while let Some((s, e, id)) = self.matcher.find(bytes, pos, &accept) {
                    self.encode_plain(&text[pos..s], scratch, out, limit, flush)?;
                    crate::mem::try_reserve(out, 1, "the ids")?;
                    out.push(id);
                    pos = e;
                }
            }
            self.encode_plain(&text[pos..], scratch, out, limit, flush)
        })
    }

    /// ([`Error::OutOfMemory`] when the ids do not fit in memory.)
    pub fn encode(&self, text: &str, allowed: &Allowed) -> Result<Vec<u32>> {
        let mut out = crate::mem::try_vec(text.len() / 3 + 1, "the ids")?;
        self.encode_into(text, allowed, &mut out)?;
        Ok(out)
    }

    /// Encode as Hugging Face does for a file with a normalizer: the allowed special tokens are
    /// found in `text` as it is, the text between them is normalized, and each normalized part
    /// is encoded on its own (pinned tokens are found in the normalized parts, as `tokenizers`
    /// finds its `normalized: true` added tokens). A special token's text that the normalizer
    /// makes is plain text, as in `tokenizers`.
    pub fn encode_normalized(
        &self,
        text: &str,
        allowed: &Allowed,
        norm: &Normalizer,
    ) -> Result<Vec<u32>> {
        if let Normalizer::WholeText(n) = norm {
            // normalized first, special tokens then found in the normalized text
            return self.encode(&n.normalize_cow(text)?, allowed);
        }
        let mut out = crate::mem::try_vec(text.len() / 3 + 1, "the encoded ids")?;
        let mut pos = 0;
        if !matches!(allowed, Allowed::None) {
            let accept =
                |id: u32, kind: AddedKind| kind == AddedKind::Special && allowed.accepts(id, kind);
            while let Some((s, e, id)) = self.matcher.find(text.as_bytes(), pos, &accept) {
                let part = norm.normalize_cow(&text[pos..s])?;
                self.encode_into(&part, &Allowed::None, &mut out)?;
                crate::mem::try_push(&mut out, id, "the encoded ids")?;
                pos = e;
            }
        }
        let part = norm.normalize_cow(&text[pos..])?;
        self.encode_into(&part, &Allowed::None, &mut out)?;
        Ok(out)
    }

    /// Encode without special tokens (pinned tokens are still produced).
    pub fn encode_ordinary(&self, text: &str) -> Result<Vec<u32>> {
        self.encode(text, &Allowed::None)
    }

    /// First special token in `text` whose id is in `disallowed` (all specials when `None`):
    /// (token text, byte offset).
    pub fn find_special(&self, text: &str, disallowed: Option<&[u32]>) -> Option<(String, usize)> {
        let accept = |id: u32, kind: AddedKind| {
            kind == AddedKind::Special && disallowed.is_none_or(|d| d.contains(&id))
        };
        self.matcher
            .find(text.as_bytes(), 0, &accept)
            .map(|(s, e, _)| (text[s..e].to_string(), s))
    }

    /// Encode a string that must be exactly one token (any kind).
    pub fn encode_single_token(&self, bytes: &[u8]) -> Result<u32> {
        self.vocab
            .token_id(bytes)
            .ok_or_else(|| Error::NotAToken(bytes.to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretokenize::Pretokenizer;
    use crate::vocab::{never_in_utf8, AddedToken};

    fn vocab(skip: impl Fn(u8) -> bool, extra: &[(&[u8], u32)]) -> Result<Vocab> {
        let mut m: Vec<(Vec<u8>, u32)> = (0..=255u8)
            .filter(|&b| !skip(b))
            .map(|b| (vec![b], b as u32))
            .collect();
        m.extend(extra.iter().map(|(t, i)| (t.to_vec(), *i)));
        let added = vec![AddedToken {
            text: ">".repeat(2),
            id: 300,
            kind: AddedKind::Special,
        }];
        Vocab::new(m, added)
    }

    #[test]
    fn bytes_utf8_never_uses_may_be_missing() {
        let v = vocab(never_in_utf8, &[(b"\xc3\xa9", 256)]).unwrap();
        assert_eq!(v.missing_bytes().len(), 13);
        let enc = Encoder::new(v, Pretokenizer::new("gpt2").unwrap()).unwrap();
        assert_eq!(
            enc.encode_ordinary("é\u{10FFFF}").unwrap(),
            [256, 244, 143, 191, 191]
        );
        // any other byte is still needed
        assert!(vocab(|b| b == 0x80, &[]).is_err());
        // and no token may hold a missing byte
        assert!(vocab(never_in_utf8, &[(b"a\xff", 256)]).is_err());
    }

    #[test]
    fn long_pieces_give_the_same_ids_from_the_cache() {
        // one-piece words of 81 and 203 bytes (cached whole) and 601 bytes (not cached)
        let v = vocab(|_| false, &[(b"ab", 256), (b"abab", 257)]).unwrap();
        let enc = Encoder::new(v, Pretokenizer::new("cl100k").unwrap()).unwrap();
        for n in [40usize, 101, 300] {
            let text = "ab".repeat(n) + "a";
            let mut want = vec![257; n / 2];
            if n % 2 == 1 {
                want.push(256);
            }
            want.push(b'a' as u32);
            for _ in 0..3 {
                assert_eq!(enc.encode_ordinary(&text).unwrap(), want, "n={n}");
            }
        }
    }

    #[test]
    fn pieces_across_chunks_encode_one_by_one() {
        // Pieces are looked up a chunk at a time: a text of any number of pieces (around
        // multiples of the chunk), tokens and merged pieces mixed, in blocks or whole, gives
        // the ids of its pieces encoded one by one.
        let extra: &[(&[u8], u32)] = &[
            (b" t", 256),
            (b"he", 257),
            (b" the", 258),
            (b"ab", 259),
            (b" abab", 260),
            (b"\xc3\xa9", 261),
            (b" caf\xc3\xa9", 262),
            (b"0123456789abcdef", 263),
        ];
        let enc = Encoder::new(
            vocab(|_| false, extra).unwrap(),
            Pretokenizer::new("o200k").unwrap(),
        )
        .unwrap();
        let words = [
            " the",
            " abab",
            " thehe",
            " café",
            " cafés",
            "\n",
            " ababab",
            "!!",
            " 12345",
            " 0123456789abcdef",
            " 0123456789abcdefab",
            " x",
            "\u{4e2d}\u{6587}",
        ];
        let mut scratch = Scratch::default();
        for n in [0usize, 1, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1000] {
            let text: String = (0..n)
                .map(|i| words[(i * 7 + i / 3) % words.len()])
                .collect();
            let mut want = Vec::new();
            for p in enc.pretok.split(&text).unwrap() {
                encode_piece(&enc.vocab, p.as_bytes(), &mut scratch, &mut want).unwrap();
            }
            for _ in 0..2 {
                assert_eq!(enc.encode_ordinary(&text).unwrap(), want, "n={n}");
            }
            let mut blocks = Vec::new();
            enc.encode_blocks(&text, &Allowed::None, &mut |ids| {
                blocks.extend_from_slice(ids)
            })
            .unwrap();
            assert_eq!(blocks, want, "blocks n={n}");
        }
    }

    #[test]
    fn normalized_parts_between_specials() {
        let enc = Encoder::new(
            vocab(|_| false, &[]).unwrap(),
            Pretokenizer::new("gpt2").unwrap(),
        )
        .unwrap();
        let nfc = Normalizer::Nfc;
        // the combining solidus after the special token stays apart (NFC of the whole text
        // would make it U+226F with the token's last '>')
        let ids = enc
            .encode_normalized("e\u{301}>>\u{338}", &Allowed::All, &nfc)
            .unwrap();
        assert_eq!(ids, [0xc3, 0xa9, 300, 0xcc, 0xb8]);
        let ids = enc
            .encode_normalized("e\u{301}>>\u{338}", &Allowed::None, &nfc)
            .unwrap();
        assert_eq!(ids, [0xc3, 0xa9, b'>' as u32, 0xe2, 0x89, 0xaf]);
    }
}
