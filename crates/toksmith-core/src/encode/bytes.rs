//! Bytes that need not be UTF-8, encoded as tiktoken's `_encode_bytes` does.

use super::Encoder;
use crate::added::AddedKind;
use crate::bpe::with_scratch;
use crate::encode::encode_piece;
use crate::error::Result;
use crate::mem::{try_reserve, try_vec};

/// Bytes of the tokens that extend the unstable end of `encode_bytes` backwards (tiktoken's
/// `_increase_last_piece_token_len`).
const SPACE_BYTES: &[u8] = b" \n\t";

impl Encoder {
    /// Encode bytes that need not be valid UTF-8, with exactly tiktoken's `_encode_bytes`
    /// semantics: valid UTF-8 is encoded as [`Encoder::encode_ordinary`] encodes it. Otherwise
    /// the valid prefix is encoded, and its last piece's tokens (with the whitespace-only
    /// mergeable tokens before them when its first token is one of those: cl100k's `\s*[\r\n]+` can
    /// join `"\n"` and `" "`), their bytes, and every byte from the first invalid one on form
    /// one piece: its id if it is a mergeable token, else its byte-pair merge. Pinned tokens
    /// are produced in the valid prefix, as `encode_ordinary` produces them; one at the very
    /// end of it is never merged again (tiktoken's special tokens end a piece the same way).
    pub fn encode_bytes(&self, bytes: &[u8]) -> Result<Vec<u32>> {
        let valid = match std::str::from_utf8(bytes) {
            Ok(text) => return self.encode_ordinary(text),
            Err(e) => e.valid_up_to(),
        };
        let text = std::str::from_utf8(&bytes[..valid]).expect("valid up to here");
        let mut out = try_vec(valid / 3 + 1, "the ids")?;
        with_scratch(|scratch| {
            let mut last = 0;
            let mut pos = 0;
            if self.matcher.has_pinned() {
                let accept = |_: u32, kind: AddedKind| kind == AddedKind::Pinned;
                let tb = text.as_bytes();
                while let Some((s, e, id)) = self.matcher.find(tb, pos, &accept) {
                    self.encode_plain(&text[pos..s], scratch, &mut out, usize::MAX, &mut |_| {})?;
                    try_reserve(&mut out, 1, "the ids")?;
                    out.push(id);
                    pos = e;
                }
            }
            if pos < text.len() {
                last = self.encode_plain_last(&text[pos..], scratch, &mut out)?;
            }
            // (mergeable tokens only: tiktoken looks the id up among them)
            let all_space = |id: u32| {
                self.vocab
                    .token_bytes(id)
                    .is_ok_and(|b| b.iter().all(|c| SPACE_BYTES.contains(c)))
                    && !self.vocab.added_tokens().iter().any(|a| a.id == id)
            };
            if last > 0 && all_space(out[out.len() - last]) {
                while last < out.len() && all_space(out[out.len() - last - 1]) {
                    last += 1;
                }
            }
            let tail = &bytes[valid..];
            let mut unstable = Vec::new();
            if last > 0 {
                let keep = out.len() - last;
                crate::decode::decode_into(&self.vocab, &out[keep..], &mut unstable)?;
                out.truncate(keep);
            }
            try_reserve(&mut unstable, tail.len(), "the bytes to merge")?;
            unstable.extend_from_slice(tail);
            encode_piece(&self.vocab, &unstable, scratch, &mut out)
        })?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpe::test_vocabs::toy_vocab;
    use crate::pretokenize::Pretokenizer;

    #[test]
    fn invalid_utf8_merges_the_last_piece_with_the_rest() {
        let enc = Encoder::new(toy_vocab(), Pretokenizer::new("gpt2").unwrap()).unwrap();
        let v = &enc.vocab;
        // valid UTF-8: the ordinary encoding
        assert_eq!(
            enc.encode_bytes(b"aa ab").unwrap(),
            enc.encode_ordinary("aa ab").unwrap()
        );
        // "aa" is stable, " a" + b"\xff" + "aa" is one piece (no split at the space inside it)
        let data = b"aa a\xffaa";
        let got = enc.encode_bytes(data).unwrap();
        let mut want = enc.encode_ordinary("aa").unwrap();
        let mut scratch = crate::bpe::Scratch::default();
        encode_piece(v, b" a\xffaa", &mut scratch, &mut want).unwrap();
        assert_eq!(got, want);
        assert_eq!(crate::decode::decode_bytes(v, &got).unwrap(), data);
        // nothing valid before the invalid byte; one byte alone; long invalid tails
        assert_eq!(enc.encode_bytes(b"\xff").unwrap(), [v.byte_ids()[0xff]]);
        assert_eq!(enc.encode_bytes(b"").unwrap(), Vec::<u32>::new());
        let mut long = b"ab \xfe".to_vec();
        long.extend(b"a".repeat(300_000));
        let got = enc.encode_bytes(&long).unwrap();
        assert_eq!(crate::decode::decode_bytes(v, &got).unwrap(), long);
        let mut want = enc.encode_ordinary("ab").unwrap();
        let mut rest = Vec::new();
        crate::bpe::bpe_long(v, &long[2..], u32::MAX, &mut rest).unwrap();
        want.extend(rest);
        assert_eq!(got, want);
    }
}
