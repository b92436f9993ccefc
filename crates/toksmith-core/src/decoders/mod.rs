//! Decoders of Hugging Face `tokenizers` (`decoders`): token strings -> text. Each decoder maps
//! the list of token strings to a new list (`decode_chain`); the text is their concatenation.
//! [`spm::SpmDecoder`] is sentencepiece's own id -> text decoding.

pub mod spm;

use crate::mem::{try_map, try_push, try_replace, try_reserve, try_string, TextBuf};
use crate::models::spm::byte_piece_value;
use crate::Result;

/// What a refused allocation of the decoders names.
const WHAT: &str = "the decoded text";

#[derive(Debug, Clone)]
pub enum Decoder {
    /// The replacement character back to spaces; with a prepend scheme other than never, the
    /// first token loses its replacement characters (HF removes them all, not only the first).
    Metaspace {
        replacement: char,
        prepend_scheme_never: bool,
    },
    /// Runs of `<0xAB>` tokens back to text: valid UTF-8 as one token, else one U+FFFD per byte.
    ByteFallback,
    /// All tokens into one.
    Fuse,
    /// Up to `start` leading and `stop` trailing `content` characters removed from each token.
    Strip {
        content: char,
        start: usize,
        stop: usize,
    },
    /// Literal replacement in each token.
    Replace {
        pattern: String,
        content: String,
    },
    /// WordPiece: the prefix removed from continuation tokens, a space before the others.
    WordPiece {
        prefix: String,
        cleanup: bool,
    },
    Sequence(Vec<Decoder>),
    /// GPT-2's byte alphabet back to bytes, all tokens into one text (a token with a character
    /// outside the alphabet kept as its own UTF-8), invalid UTF-8 as U+FFFD.
    ByteLevel,
    /// HF `BPEDecoder`: the end-of-word suffix becomes a space (nothing on the last token).
    BpeSuffix(String),
    /// transformers' CLIP tokenizer after its decoder: the end-of-word suffix becomes a space in
    /// the whole text, which is then stripped of whitespace as Python's `str.strip` does.
    EndOfWordCleanup(String),
}

/// The clean-up of tokenization spaces (HF `wordpiece::cleanup`), allocated fallibly.
pub fn cleanup(s: &str) -> Result<String> {
    const PAIRS: [(&str, &str); 11] = [
        (" .", "."),
        (" ?", "?"),
        (" !", "!"),
        (" ,", ","),
        (" ' ", "'"),
        (" n't", "n't"),
        (" 'm", "'m"),
        (" do not", " don't"),
        (" 's", "'s"),
        (" 've", "'ve"),
        (" 're", "'re"),
    ];
    let mut out = try_string(s, WHAT)?;
    for (from, to) in PAIRS {
        if out.contains(from) {
            out = try_replace(&out, from, to, WHAT)?;
        }
    }
    Ok(out)
}

impl Decoder {
    /// The text of `tokens`; [`crate::Error::OutOfMemory`] when the allocator refuses room
    /// for the result (the token list and the text grow with the input).
    pub fn decode(&self, tokens: Vec<String>) -> Result<String> {
        concat(&self.decode_chain(tokens)?)
    }

    /// The tokens after this decoder (see [`Decoder::decode`] for the errors).
    pub fn decode_chain(&self, tokens: Vec<String>) -> Result<Vec<String>> {
        Ok(match self {
            Decoder::Metaspace {
                replacement,
                prepend_scheme_never,
            } => try_map(
                tokens.iter().enumerate(),
                |(i, t)| {
                    TextBuf::collect(
                        t.chars().filter_map(|c| {
                            if c == *replacement {
                                (i != 0 || *prepend_scheme_never).then_some(' ')
                            } else {
                                Some(c)
                            }
                        }),
                        t.len(),
                        WHAT,
                    )
                },
                WHAT,
            )?,
            Decoder::ByteFallback => {
                let mut out = crate::mem::try_vec(tokens.len(), WHAT)?;
                let mut bytes: Vec<u8> = Vec::new();
                let flush = |bytes: &mut Vec<u8>, out: &mut Vec<String>| -> Result<()> {
                    if bytes.is_empty() {
                        return Ok(());
                    }
                    match String::from_utf8(std::mem::take(bytes)) {
                        Ok(s) => try_push(out, s, WHAT),
                        Err(e) => {
                            let n = e.as_bytes().len();
                            try_reserve(out, n, WHAT)?;
                            for _ in 0..n {
                                out.push(try_string("\u{fffd}", WHAT)?);
                            }
                            Ok(())
                        }
                    }
                };
                for t in tokens {
                    match byte_piece_value(&t) {
                        Some(b) => try_push(&mut bytes, b, WHAT)?,
                        None => {
                            flush(&mut bytes, &mut out)?;
                            try_push(&mut out, t, WHAT)?;
                        }
                    }
                }
                flush(&mut bytes, &mut out)?;
                out
            }
            Decoder::Fuse => one(concat(&tokens)?)?,
            Decoder::Strip {
                content,
                start,
                stop,
            } => try_map(
                tokens,
                |t| {
                    // byte offsets of the kept part: up to `start` leading and `stop` trailing
                    // `content` characters cut
                    let a: usize = t
                        .chars()
                        .take(*start)
                        .take_while(|c| c == content)
                        .map(char::len_utf8)
                        .sum();
                    let cut: usize = t[a..]
                        .chars()
                        .rev()
                        .take(*stop)
                        .take_while(|c| c == content)
                        .map(char::len_utf8)
                        .sum();
                    if a == 0 && cut == 0 {
                        Ok(t)
                    } else {
                        try_string(&t[a..t.len() - cut], WHAT)
                    }
                },
                WHAT,
            )?,
            Decoder::Replace { pattern, content } => try_map(
                tokens,
                |t| {
                    if pattern.is_empty() || !t.contains(pattern.as_str()) {
                        Ok(t)
                    } else {
                        try_replace(&t, pattern, content, WHAT)
                    }
                },
                WHAT,
            )?,
            Decoder::WordPiece {
                prefix,
                cleanup: clean,
            } => try_map(
                tokens.into_iter().enumerate(),
                |(i, t)| {
                    let t = if i == 0 {
                        t
                    } else if let Some(rest) = t.strip_prefix(prefix.as_str()) {
                        try_string(rest, WHAT)?
                    } else {
                        let mut s = TextBuf::with_capacity(t.len() + 1, WHAT)?;
                        s.push(' ');
                        s.push_str(&t);
                        s.finish()?
                    };
                    if *clean {
                        cleanup(&t)
                    } else {
                        Ok(t)
                    }
                },
                WHAT,
            )?,
            Decoder::ByteLevel => {
                let mut bytes = Vec::new();
                for t in &tokens {
                    // (a token's bytes are at most as many as its UTF-8: room for that first)
                    try_reserve(&mut bytes, t.len(), WHAT)?;
                    let at = bytes.len();
                    if !crate::bytelevel::decode_into(t, &mut bytes) {
                        bytes.truncate(at);
                        bytes.extend_from_slice(t.as_bytes());
                    }
                }
                one(lossy(bytes)?)?
            }
            Decoder::BpeSuffix(suffix) => {
                let n = tokens.len().saturating_sub(1);
                try_map(
                    tokens.into_iter().enumerate(),
                    |(i, t)| try_replace(&t, suffix, if i == n { "" } else { " " }, WHAT),
                    WHAT,
                )?
            }
            Decoder::EndOfWordCleanup(suffix) => {
                let all = concat(&tokens)?;
                let all = if suffix.is_empty() {
                    all
                } else {
                    // (one space for each suffix: never longer than the text)
                    let mut out = TextBuf::with_capacity(all.len(), WHAT)?;
                    let mut parts = all.split(suffix.as_str());
                    if let Some(first) = parts.next() {
                        out.push_str(first);
                    }
                    for part in parts {
                        out.push(' ');
                        out.push_str(part);
                    }
                    out.finish()?
                };
                // Python's isspace: Unicode White_Space and the separators U+001C..U+001F
                let space = |c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c);
                let trimmed = all.trim_matches(space);
                if trimmed.len() == all.len() {
                    one(all)?
                } else {
                    one(concat(&[trimmed])?)?
                }
            }
            Decoder::Sequence(list) => {
                let mut t = tokens;
                for d in list {
                    t = d.decode_chain(t)?;
                }
                t
            }
        })
    }
}

/// `bytes` as text, invalid UTF-8 replaced as `String::from_utf8_lossy` replaces it: no copy
/// when it is valid, else one allocated fallibly.
fn lossy(bytes: Vec<u8>) -> Result<String> {
    match String::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(e) => {
            let bytes = e.into_bytes();
            // (a replacement character is 3 bytes for at least one invalid byte)
            let mut out = TextBuf::with_capacity(bytes.len(), WHAT)?;
            for chunk in bytes.utf8_chunks() {
                out.push_str(chunk.valid());
                if !chunk.invalid().is_empty() {
                    out.push('\u{fffd}');
                }
            }
            out.finish()
        }
    }
}

/// A list of the one text `t`, allocated fallibly.
fn one(t: String) -> Result<Vec<String>> {
    let mut v = crate::mem::try_vec(1, WHAT)?;
    v.push(t);
    Ok(v)
}

/// The tokens joined, allocated fallibly.
pub(crate) fn concat<S: AsRef<str>>(tokens: &[S]) -> Result<String> {
    let n = tokens
        .iter()
        .fold(0usize, |n, t| n.saturating_add(t.as_ref().len()));
    let mut out = TextBuf::with_capacity(n, WHAT)?;
    out.extend(tokens.iter().map(AsRef::as_ref));
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn llama_style_chain() {
        let d = Decoder::Sequence(vec![
            Decoder::Replace {
                pattern: "▁".into(),
                content: " ".into(),
            },
            Decoder::ByteFallback,
            Decoder::Fuse,
            Decoder::Strip {
                content: ' ',
                start: 1,
                stop: 0,
            },
        ]);
        assert_eq!(
            d.decode(v(&["▁Hey", "▁", "<0xE2>", "<0x98>", "<0x83>", "!"]))
                .unwrap(),
            "Hey ☃!"
        );
        assert_eq!(
            d.decode(v(&["▁a", "<0xE2>", "<0x98>", "b"])).unwrap(),
            "a\u{fffd}\u{fffd}b"
        );
        assert_eq!(d.decode(v(&[])).unwrap(), "");
    }

    #[test]
    fn metaspace_wordpiece_strip() {
        let m = Decoder::Metaspace {
            replacement: '▁',
            prepend_scheme_never: false,
        };
        assert_eq!(
            m.decode(v(&["▁▁Hey", "▁friend", "▁"])).unwrap(),
            "Hey friend "
        );
        let m = Decoder::Metaspace {
            replacement: '▁',
            prepend_scheme_never: true,
        };
        assert_eq!(m.decode(v(&["▁Hey"])).unwrap(), " Hey");
        let w = Decoder::WordPiece {
            prefix: "##".into(),
            cleanup: true,
        };
        assert_eq!(
            w.decode(v(&["i", "do", "not", "know", "##s", "it", "'", "s", "."]))
                .unwrap(),
            "i do not knows it ' s."
        );
        let s = Decoder::Strip {
            content: 'x',
            start: 2,
            stop: 1,
        };
        assert_eq!(
            s.decode_chain(v(&["xxxaxx", "x", ""])).unwrap(),
            v(&["xax", "", ""])
        );
    }
}
