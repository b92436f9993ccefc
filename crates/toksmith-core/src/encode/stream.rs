//! Long texts encoded without holding everything at once: ids handed over in blocks, and
//! text that arrives in parts encoded up to its last safe cut.

use super::{Allowed, Encoder};
use crate::added;
use crate::bpe::HEAP_THRESHOLD;
use crate::error::Result;

/// In [`Encoder::encode_parts`], a buffer this long with no safe cut gets room for the whole
/// text at once.
pub const PARTS_RESERVE_AT: usize = 1 << 20;

impl Encoder {
    /// Whether text may be encoded in parts cut at [`crate::added::is_safe_cut`] places with the
    /// ids of encoding it whole: true for the named patterns' scanners (no piece spans such a
    /// place; [`Encoder::encode_parts`] keeps its cuts clear of added tokens that could span
    /// one, see [`crate::added::may_span_a_safe_cut`]).
    pub fn can_encode_parts(&self) -> bool {
        self.pretok.is_fast()
    }

    /// Encode text that arrives in parts: `fill` appends the next part to the buffer it is given
    /// and returns false once everything has been appended. The buffer is encoded up to its last
    /// safe cut whenever it has one, so memory stays bounded by the parts (plus the longest
    /// stretch without a safe cut). The ids are those of the concatenation when
    /// [`Encoder::can_encode_parts`] holds; `sink` gets them in blocks, in order.
    ///
    /// `size_hint`: about how many bytes the whole text has at most. A text with no safe cut
    /// (one without ASCII letters, such as Chinese or Russian prose, or random characters) is
    /// held whole: once the buffer passes [`PARTS_RESERVE_AT`] without a cut, room for the
    /// hinted size is reserved in one go, advised as huge pages, instead of doubling (each
    /// doubling copied the text into fresh 4 KB pages: 10 MB of random Unicode spent about
    /// 70% of its page faults there).
    pub fn encode_parts(
        &self,
        allowed: &Allowed,
        size_hint: usize,
        fill: &mut dyn FnMut(&mut String) -> bool,
        sink: &mut dyn FnMut(&[u32]),
    ) -> Result<()> {
        // cuts are kept clear of the added tokens this call produces that could span one
        let avoid = added::spanning_tokens(
            self.vocab
                .added_tokens()
                .iter()
                .filter(|a| allowed.accepts(a.id, a.kind))
                .map(|a| a.text.as_str()),
        );
        let lookahead = added::cut_lookahead(&avoid);
        let mut buf = String::new();
        let mut scanned = 0; // no safe cut at or before this offset
        loop {
            let more = fill(&mut buf);
            if !more {
                return self.encode_blocks(&buf, allowed, sink);
            }
            let b = buf.as_bytes();
            // a place near the end may be decided only by what follows it
            let top = b.len().saturating_sub(lookahead);
            let cut = (scanned.max(1)..top)
                .rev()
                .find(|&i| added::is_safe_cut(b, i) && added::clear_of_tokens(b, i, &avoid));
            match cut {
                Some(cut) => {
                    self.encode_blocks(&buf[..cut], allowed, sink)?;
                    buf.drain(..cut);
                    scanned = 0;
                }
                None => {
                    scanned = top.saturating_sub(1);
                    if buf.len() >= PARTS_RESERVE_AT && buf.capacity() < size_hint {
                        let mut room =
                            crate::mem::try_big_vec::<u8>(size_hint, "the text to encode")?;
                        room.extend_from_slice(buf.as_bytes());
                        buf = String::from_utf8(room).expect("a copy of a str is UTF-8");
                    }
                }
            }
        }
    }

    /// Encode, handing the ids to `sink` in blocks of a few thousand (in order), so that a long
    /// text needs no id vector as long as its result (the Python layer writes the blocks straight
    /// into the result list).
    pub fn encode_blocks(
        &self,
        text: &str,
        allowed: &Allowed,
        sink: &mut dyn FnMut(&[u32]),
    ) -> Result<()> {
        const BLOCK: usize = 4096;
        let mut out = crate::mem::try_vec(BLOCK + HEAP_THRESHOLD, "the ids")?;
        let mut flush = |ids: &mut Vec<u32>| {
            sink(ids);
            ids.clear();
        };
        self.encode_impl(text, allowed, &mut out, BLOCK, &mut flush)?;
        flush(&mut out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpe::test_vocabs::toy_vocab;
    use crate::pretokenize::Pretokenizer;

    #[test]
    fn blocks_concatenate_to_the_encoding() {
        let enc = Encoder::new(toy_vocab(), Pretokenizer::new("gpt2").unwrap()).unwrap();
        let text = "ab aab abab ba bab\n".repeat(2000);
        let whole = enc.encode_ordinary(&text).unwrap();
        assert!(whole.len() > 3 * 4096);
        let mut blocks: Vec<Vec<u32>> = Vec::new();
        enc.encode_blocks(&text, &Allowed::None, &mut |ids| blocks.push(ids.to_vec()))
            .unwrap();
        assert!(blocks.len() >= 3 && blocks.iter().all(|b| b.len() <= 4096 + HEAP_THRESHOLD));
        assert_eq!(blocks.concat(), whole);
    }

    #[test]
    fn parts_encode_like_the_whole() {
        let enc = Encoder::new(toy_vocab(), Pretokenizer::new("cl100k").unwrap()).unwrap();
        let text: String = (0..3000)
            .map(|i| match i % 7 {
                0 => "ab aab\n".to_string(),
                1 => "bab  abab\r\n\n".to_string(),
                2 => format!("{i} ba."),
                3 => "  \u{e9}t\u{e9} \u{3a9}mega\n\n\n".to_string(),
                4 => "no-breaks-here-at-all".repeat(i % 5),
                5 => "a\nb\n \n".to_string(),
                _ => " b a".to_string(),
            })
            .collect();
        let whole = enc.encode_ordinary(&text).unwrap();
        assert!(enc.can_encode_parts());
        for step in [1usize, 7, 100, 4096] {
            // feed `step` characters at a time
            let chars: Vec<char> = text.chars().collect();
            let mut at = 0;
            let mut ids = Vec::new();
            enc.encode_parts(
                &Allowed::None,
                text.len(),
                &mut |buf| {
                    let end = (at + step).min(chars.len());
                    buf.extend(&chars[at..end]);
                    at = end;
                    at < chars.len()
                },
                &mut |b| ids.extend_from_slice(b),
            )
            .unwrap();
            assert_eq!(ids, whole, "step {step}");
        }
    }

    #[test]
    fn parts_without_cuts_past_the_reserve_size() {
        // over PARTS_RESERVE_AT of text with no safe cut, then text with cuts; any size hint
        let vocab = toy_vocab();
        let pre = Pretokenizer::new(crate::pretokenize::named_pattern("cl100k").unwrap()).unwrap();
        let enc = Encoder::new(vocab, pre).unwrap();
        let text = "éaß\u{4e2d}".repeat(PARTS_RESERVE_AT / 5) + &"word and more\n".repeat(5000);
        let whole = enc.encode_ordinary(&text).unwrap();
        let chars: Vec<char> = text.chars().collect();
        for hint in [0, text.len() / 2, text.len(), 4 * chars.len()] {
            let mut at = 0;
            let mut ids = Vec::new();
            enc.encode_parts(
                &Allowed::None,
                hint,
                &mut |buf| {
                    let end = (at + 65536).min(chars.len());
                    buf.extend(&chars[at..end]);
                    at = end;
                    at < chars.len()
                },
                &mut |b| ids.extend_from_slice(b),
            )
            .unwrap();
            assert_eq!(ids, whole, "hint {hint}");
        }
    }
}
