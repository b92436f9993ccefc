//! Normalizers (Hugging Face `tokenizers` `normalizers`, and sentencepiece's own): text -> text,
//! applied before pre-tokenization.
//!
//! They work on plain strings; alignments to the original text (offsets) are not tracked yet.

pub mod bert;
pub mod precompiled;

use std::borrow::Cow;
use unicode_categories::UnicodeCategories;
use unicode_normalization::{
    is_nfc_quick, is_nfd_quick, is_nfkc_quick, is_nfkd_quick, IsNormalized, UnicodeNormalization,
};

pub use bert::BertNormalizer;
pub use precompiled::{Precompiled, SpmNormalizer};

use crate::mem::{try_string, TextBuf};
use crate::{Error, Result};

/// What a refused allocation of the normalizers names.
const WHAT: &str = "the normalized text";

/// The pattern of a `Replace` (HF: `{"String": ...}` or `{"Regex": ...}`).
#[derive(Debug, Clone)]
pub enum Pattern {
    Literal(String),
    Regex(Box<fancy_regex::Regex>),
}

impl Pattern {
    pub fn regex(pattern: &str) -> Result<Self> {
        fancy_regex::Regex::new(pattern)
            .map(|r| Pattern::Regex(Box::new(r)))
            .map_err(|e| Error::InvalidPattern {
                pattern: pattern.to_string(),
                position: None,
                message: e.to_string(),
            })
    }

    /// Every non-overlapping match, left to right, replaced by `content`.
    pub fn replace_all(&self, text: &str, content: &str) -> Result<String> {
        match self {
            Pattern::Literal(p) if p.is_empty() => try_string(text, WHAT),
            Pattern::Literal(p) => {
                let mut out = TextBuf::with_capacity(text.len(), WHAT)?;
                let mut last = 0;
                for (at, _) in text.match_indices(p.as_str()) {
                    out.push_str(&text[last..at]);
                    out.push_str(content);
                    last = at + p.len();
                }
                out.push_str(&text[last..]);
                out.finish()
            }
            Pattern::Regex(r) => {
                let mut out = TextBuf::with_capacity(text.len(), WHAT)?;
                let mut last = 0;
                for m in r.find_iter(text) {
                    let m = m.map_err(|e| Error::RegexRuntime(e.to_string()))?;
                    if m.start() == m.end() {
                        continue;
                    }
                    out.push_str(&text[last..m.start()]);
                    out.push_str(content);
                    last = m.end();
                }
                out.push_str(&text[last..]);
                out.finish()
            }
        }
    }
}

#[derive(Debug, Clone)]
pub enum Normalizer {
    Nfc,
    Nfd,
    Nfkc,
    Nfkd,
    Lowercase,
    /// Removes combining marks (Mn, Mc, Me) as they are: combine with NFD/NFKD to strip accents.
    StripAccents,
    /// Removes whitespace at the start and/or the end.
    Strip {
        left: bool,
        right: bool,
    },
    Replace {
        pattern: Pattern,
        content: String,
    },
    /// Prepends a string to a non-empty text.
    Prepend(String),
    /// HF `Precompiled` (a SentencePiece charsmap).
    Precompiled(Precompiled),
    Bert(BertNormalizer),
    Sequence(Vec<Normalizer>),
    /// Not a `tokenizers` normalizer: the inner one applied to the whole text before special
    /// tokens are looked for (Qwen 1's own code NFC-normalizes the text, then encodes it with
    /// tiktoken), where Hugging Face normalizes the text between them.
    WholeText(Box<Normalizer>),
}

impl Normalizer {
    /// A Hugging Face `tokenizer.json` normalizer object (its JSON text): `NFC`, `NFD`, `NFKC`,
    /// `NFKD`, `Lowercase`, `StripAccents`, `Strip`, `Replace`, `Prepend`, `Precompiled`,
    /// `BertNormalizer` and `Sequence`s of them.
    pub fn from_hf_json(json: &str) -> Result<Self> {
        let v: serde_json::Value = serde_json::from_str(json)
            .map_err(|e| Error::InvalidVocab(format!("normalizer: not JSON ({e})")))?;
        crate::pipeline::hf_normalizer(&v)
    }

    /// [`Normalizer::normalize`], borrowing the text when a Unicode form leaves it as it is
    /// (its quick check says so: ASCII text, most text already in that form), with no copy.
    pub fn normalize_cow<'a>(&self, text: &'a str) -> Result<Cow<'a, str>> {
        let unchanged = match self {
            Normalizer::Nfc => is_nfc_quick(text.chars()) == IsNormalized::Yes,
            Normalizer::Nfd => is_nfd_quick(text.chars()) == IsNormalized::Yes,
            Normalizer::Nfkc => is_nfkc_quick(text.chars()) == IsNormalized::Yes,
            Normalizer::Nfkd => is_nfkd_quick(text.chars()) == IsNormalized::Yes,
            Normalizer::WholeText(n) => return n.normalize_cow(text),
            _ => false,
        };
        if unchanged {
            Ok(Cow::Borrowed(text))
        } else {
            self.normalize(text).map(Cow::Owned)
        }
    }

    /// The normalized text; [`Error::OutOfMemory`] when the allocator refuses its room.
    pub fn normalize(&self, text: &str) -> Result<String> {
        let n = text.len();
        Ok(match self {
            Normalizer::Nfc => TextBuf::collect(text.nfc(), n, WHAT)?,
            Normalizer::Nfd => TextBuf::collect(text.nfd(), n, WHAT)?,
            Normalizer::Nfkc => TextBuf::collect(text.nfkc(), n, WHAT)?,
            Normalizer::Nfkd => TextBuf::collect(text.nfkd(), n, WHAT)?,
            Normalizer::Lowercase => lowercase(text)?,
            // tokenizers' StripAccents drops every combining mark: Mn, Mc and Me
            Normalizer::StripAccents => {
                TextBuf::collect(text.chars().filter(|c| !c.is_mark()), n, WHAT)?
            }
            Normalizer::Strip { left, right } => {
                let mut t = text;
                if *left {
                    t = t.trim_start();
                }
                if *right {
                    t = t.trim_end();
                }
                try_string(t, WHAT)?
            }
            Normalizer::Replace { pattern, content } => pattern.replace_all(text, content)?,
            Normalizer::Prepend(p) => {
                if text.is_empty() {
                    String::new()
                } else {
                    let mut out = TextBuf::with_capacity(p.len().saturating_add(n), WHAT)?;
                    out.push_str(p);
                    out.push_str(text);
                    out.finish()?
                }
            }
            Normalizer::Precompiled(p) => p.normalize_hf(text)?,
            Normalizer::Bert(b) => b.normalize(text)?,
            Normalizer::Sequence(list) => {
                let mut s = try_string(text, WHAT)?;
                for n in list {
                    s = n.normalize(&s)?;
                }
                s
            }
            Normalizer::WholeText(n) => n.normalize(text)?,
        })
    }
}

/// Per-character lowercasing (HF's NormalizedString::lowercase: no final-sigma context rule);
/// [`Error::OutOfMemory`] when the allocator refuses its room.
pub fn lowercase(text: &str) -> Result<String> {
    TextBuf::collect(text.chars().flat_map(char::to_lowercase), text.len(), WHAT)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(x: &Normalizer, t: &str) -> String {
        x.normalize(t).unwrap()
    }

    #[test]
    fn unicode_forms_and_case() {
        assert_eq!(n(&Normalizer::Nfc, "e\u{301}"), "é");
        assert_eq!(n(&Normalizer::Nfd, "é"), "e\u{301}");
        assert_eq!(n(&Normalizer::Nfkc, "ﬁ①"), "fi1");
        assert_eq!(n(&Normalizer::Nfkd, "ﬁé"), "fie\u{301}");
        for (x, t) in [
            (Normalizer::Nfc, "e\u{301}"),
            (Normalizer::Nfd, "é"),
            (Normalizer::Nfkc, "ﬁ"),
            (Normalizer::Nfkd, "ﬁé"),
        ] {
            assert_eq!(x.normalize_cow(t).unwrap(), x.normalize(t).unwrap());
            assert!(matches!(
                x.normalize_cow("plain ascii").unwrap(),
                Cow::Borrowed(_)
            ));
        }
        assert_eq!(n(&Normalizer::Lowercase, "ÀBΣΣ İ"), "àbσσ i\u{307}");
        assert_eq!(n(&Normalizer::StripAccents, "e\u{301}é"), "eé");
        assert_eq!(n(&Normalizer::StripAccents, "\u{93e}|\u{20dd}|a"), "||a");
        let seq = Normalizer::Sequence(vec![Normalizer::Nfd, Normalizer::StripAccents]);
        assert_eq!(n(&seq, "àé"), "ae");
    }

    #[test]
    fn from_hf_json() {
        let x = Normalizer::from_hf_json(
            r#"{"type":"Sequence","normalizers":[{"type":"NFC"},{"type":"Lowercase"}]}"#,
        )
        .unwrap();
        assert_eq!(n(&x, "E\u{301}X"), "éx");
        assert!(Normalizer::from_hf_json(r#"{"type":"Nope"}"#).is_err());
        assert!(Normalizer::from_hf_json("{").is_err());
    }

    #[test]
    fn replace_prepend_strip() {
        let r = Normalizer::Replace {
            pattern: Pattern::Literal(" ".into()),
            content: "▁".into(),
        };
        assert_eq!(n(&r, " a b "), "▁a▁b▁");
        let r = Normalizer::Replace {
            pattern: Pattern::regex(" {2,}").unwrap(),
            content: "▁".into(),
        };
        assert_eq!(n(&r, "a  b c    d"), "a▁b c▁d");
        assert!(Pattern::regex("(").is_err());
        let p = Normalizer::Prepend("▁".into());
        assert_eq!(n(&p, "a"), "▁a");
        assert_eq!(n(&p, ""), "");
        let s = Normalizer::Strip {
            left: false,
            right: true,
        };
        assert_eq!(n(&s, "  a \n"), "  a");
        let s = Normalizer::Strip {
            left: true,
            right: true,
        };
        assert_eq!(n(&s, "  a \n"), "a");
    }
}
