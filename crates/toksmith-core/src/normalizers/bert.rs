//! BERT's normalizer (Hugging Face `BertNormalizer`): clean control characters, space out CJK
//! ideographs, strip accents, lowercase. Character classes come from the same
//! `unicode_categories` tables as the reference, so "unassigned" means the same thing.

use unicode_categories::UnicodeCategories;
use unicode_normalization::UnicodeNormalization;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BertNormalizer {
    pub clean_text: bool,
    pub handle_chinese_chars: bool,
    /// None: follow `lowercase` (HF's default).
    pub strip_accents: Option<bool>,
    pub lowercase: bool,
}

impl Default for BertNormalizer {
    fn default() -> Self {
        BertNormalizer {
            clean_text: true,
            handle_chinese_chars: true,
            strip_accents: None,
            lowercase: true,
        }
    }
}

/// Whitespace for BERT: tab, newline, carriage return and Unicode White_Space.
pub fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

/// Control for BERT: Cc, Cf, Cn, Co, except tab, newline and carriage return.
pub fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r') && c.is_other()
}

pub fn is_chinese_char(c: char) -> bool {
    matches!(
        c as u32,
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

impl BertNormalizer {
    /// The normalized text; [`crate::Error::OutOfMemory`] when the allocator refuses its room.
    pub fn normalize(&self, text: &str) -> crate::Result<String> {
        const WHAT: &str = "the normalized text";
        let mut s = crate::mem::TextBuf::with_capacity(text.len(), WHAT)?;
        for c in text.chars() {
            if self.clean_text {
                if c == '\0' || c == '\u{fffd}' || is_control(c) {
                    continue;
                }
                if is_whitespace(c) {
                    s.push(' ');
                    continue;
                }
            }
            if self.handle_chinese_chars && is_chinese_char(c) {
                s.push(' ');
                s.push(c);
                s.push(' ');
            } else {
                s.push(c);
            }
        }
        let mut s = s.finish()?;
        if self.strip_accents.unwrap_or(self.lowercase) {
            s = crate::mem::TextBuf::collect(
                s.nfd().filter(|c| !c.is_mark_nonspacing()),
                s.len(),
                WHAT,
            )?;
        }
        if self.lowercase {
            s = super::lowercase(&s)?;
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bert_normalizer() {
        let b = BertNormalizer::default();
        assert_eq!(
            b.normalize("Héllo\tWORLD\u{0}\u{200b}x\u{fffd}").unwrap(),
            "hello worldx"
        );
        assert_eq!(b.normalize("中文").unwrap(), " 中  文 ");
        let keep = BertNormalizer {
            lowercase: false,
            ..Default::default()
        };
        assert_eq!(keep.normalize("Héllo").unwrap(), "Héllo");
        let strip = BertNormalizer {
            lowercase: false,
            strip_accents: Some(true),
            ..Default::default()
        };
        assert_eq!(strip.normalize("Héllo").unwrap(), "Hello");
    }
}
