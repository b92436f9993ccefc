//! Pre-tokenizers of Hugging Face `tokenizers` (`pre_tokenizers`): split normalized text into
//! the pieces a model encodes one by one.
//!
//! A split remembers whether it starts the original text ([`Split::at_start`]), which is what
//! Metaspace's `prepend_scheme: first` looks at.

pub mod hf_split;

use unicode_categories::UnicodeCategories;

use crate::mem::{try_push, try_reserve, try_string, try_vec, TextBuf};
pub use hf_split::{ByteLevelPre, RegexSplit};

use crate::{Error, Result};

/// What a refused allocation of the pre-tokenizers names.
const WHAT: &str = "the pre-tokenized pieces";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    pub text: String,
    pub at_start: bool,
}

impl Split {
    pub fn new(text: impl Into<String>, at_start: bool) -> Self {
        Split {
            text: text.into(),
            at_start,
        }
    }

    /// A split holding a copy of `text`, allocated fallibly.
    pub fn try_new(text: &str, at_start: bool) -> Result<Self> {
        Ok(Split {
            text: try_string(text, WHAT)?,
            at_start,
        })
    }
}

/// What happens to the characters a pre-tokenizer splits on (HF `SplitDelimiterBehavior`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behavior {
    Removed,
    Isolated,
    MergedWithPrevious,
    MergedWithNext,
    Contiguous,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrependScheme {
    First,
    Always,
    Never,
}

#[derive(Debug, Clone)]
pub enum PreTokenizer {
    Metaspace {
        replacement: char,
        prepend_scheme: PrependScheme,
        split: bool,
    },
    /// Whitespace removed, then each punctuation character isolated.
    Bert,
    /// Splits on whitespace, which is removed.
    WhitespaceSplit,
    /// `\w+|[^\w\s]+`: word runs and punctuation runs, whitespace dropped.
    Whitespace(Box<fancy_regex::Regex>),
    Punctuation(Behavior),
    Digits {
        individual_digits: bool,
    },
    Sequence(Vec<PreTokenizer>),
    /// HF `Split` with a regex or literal pattern.
    Split(Box<RegexSplit>),
    /// HF `ByteLevel`: GPT-2's byte alphabet (for a BPE over those characters, as CLIP's).
    ByteLevel(Box<ByteLevelPre>),
}

/// BERT punctuation: ASCII punctuation and Unicode P* categories.
pub fn is_bert_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || c.is_punctuation()
}

/// HF `NormalizedString::split` with a per-character pattern: the byte spans kept
/// ([`Error::OutOfMemory`] when the allocator refuses their room).
pub fn split_chars(
    text: &str,
    is_delim: impl Fn(char) -> bool,
    behavior: Behavior,
) -> Result<Vec<(usize, usize)>> {
    // (start, end, is_match) events: every delimiter character is its own match
    let mut events: Vec<(usize, usize, bool)> = Vec::new();
    let mut last = 0;
    for (b, c) in text.char_indices() {
        if is_delim(c) {
            if last < b {
                try_push(&mut events, (last, b, false), WHAT)?;
            }
            let e = b + c.len_utf8();
            try_push(&mut events, (b, e, true), WHAT)?;
            last = e;
        }
    }
    if last < text.len() {
        try_push(&mut events, (last, text.len(), false), WHAT)?;
    }
    spans_of_events(&events, behavior)
}

/// HF `SplitDelimiterBehavior` on (start, end, is_delimiter) events that tile a text: the byte
/// spans kept, empty ones dropped ([`Error::OutOfMemory`] when the allocator refuses their room).
pub fn spans_of_events(
    events: &[(usize, usize, bool)],
    behavior: Behavior,
) -> Result<Vec<(usize, usize)>> {
    // (every behavior keeps at most one span per event: no growth past this room)
    let mut out: Vec<(usize, usize)> = try_vec(events.len(), WHAT)?;
    match behavior {
        Behavior::Removed => out.extend(events.iter().filter(|e| !e.2).map(|e| (e.0, e.1))),
        Behavior::Isolated => out.extend(events.iter().map(|e| (e.0, e.1))),
        Behavior::Contiguous => {
            let mut prev = None;
            for &(s, e, m) in events {
                match out.last_mut() {
                    Some(last) if prev == Some(m) => last.1 = e,
                    _ => out.push((s, e)),
                }
                prev = Some(m);
            }
        }
        Behavior::MergedWithPrevious => {
            let mut prev_match = false;
            for &(s, e, m) in events {
                match out.last_mut() {
                    Some(last) if m && !prev_match => last.1 = e,
                    _ => out.push((s, e)),
                }
                prev_match = m;
            }
        }
        Behavior::MergedWithNext => {
            let mut prev_match = false;
            for &(s, e, m) in events.iter().rev() {
                match out.last_mut() {
                    Some(last) if m && !prev_match => last.0 = s,
                    _ => out.push((s, e)),
                }
                prev_match = m;
            }
            out.reverse();
        }
    }
    out.retain(|(s, e)| s < e);
    Ok(out)
}

fn split_into(out: &mut Vec<Split>, parent: &Split, spans: Vec<(usize, usize)>) -> Result<()> {
    try_reserve(out, spans.len(), WHAT)?;
    for (s, e) in spans {
        out.push(Split::try_new(
            &parent.text[s..e],
            parent.at_start && s == 0,
        )?);
    }
    Ok(())
}

impl PreTokenizer {
    pub fn whitespace() -> Self {
        PreTokenizer::Whitespace(Box::new(
            fancy_regex::Regex::new(r"\w+|[^\w\s]+").expect("a fixed pattern"),
        ))
    }

    /// Pre-tokenize a whole normalized text.
    pub fn pre_tokenize_str(&self, text: &str) -> Result<Vec<Split>> {
        self.pre_tokenize(vec![Split::try_new(text, true)?])
    }

    /// The pieces of `splits`; [`Error::OutOfMemory`] when the allocator refuses their room.
    pub fn pre_tokenize(&self, splits: Vec<Split>) -> Result<Vec<Split>> {
        let mut out = try_vec(splits.len(), WHAT)?;
        for sp in splits.iter().filter(|s| !s.text.is_empty()) {
            match self {
                PreTokenizer::Metaspace {
                    replacement,
                    prepend_scheme,
                    split,
                } => {
                    let mut rep = [0u8; 4];
                    let rep: &str = replacement.encode_utf8(&mut rep);
                    let prepend = match prepend_scheme {
                        PrependScheme::Always => true,
                        PrependScheme::First => sp.at_start,
                        PrependScheme::Never => false,
                    };
                    // (the text starts with the replacement after replacing if it starts
                    // with a space or with the replacement itself)
                    let prepend =
                        prepend && !sp.text.starts_with(' ') && !sp.text.starts_with(*replacement);
                    let mut t = TextBuf::with_capacity(sp.text.len() + 4, WHAT)?;
                    if prepend {
                        t.push_str(rep);
                    }
                    for (k, part) in sp.text.split(' ').enumerate() {
                        if k > 0 {
                            t.push_str(rep);
                        }
                        t.push_str(part);
                    }
                    let whole = Split::new(t.finish()?, sp.at_start);
                    if *split {
                        let spans = split_chars(
                            &whole.text,
                            |c| c == *replacement,
                            Behavior::MergedWithNext,
                        )?;
                        split_into(&mut out, &whole, spans)?;
                    } else {
                        try_push(&mut out, whole, WHAT)?;
                    }
                }
                PreTokenizer::Bert => {
                    for w in split_chars(&sp.text, char::is_whitespace, Behavior::Removed)? {
                        let word = Split::try_new(&sp.text[w.0..w.1], sp.at_start && w.0 == 0)?;
                        let spans =
                            split_chars(&word.text, is_bert_punctuation, Behavior::Isolated)?;
                        split_into(&mut out, &word, spans)?;
                    }
                }
                PreTokenizer::WhitespaceSplit => split_into(
                    &mut out,
                    sp,
                    split_chars(&sp.text, char::is_whitespace, Behavior::Removed)?,
                )?,
                PreTokenizer::Whitespace(re) => {
                    let mut spans = Vec::new();
                    for m in re.find_iter(&sp.text) {
                        let m = m.map_err(|e| Error::RegexRuntime(e.to_string()))?;
                        if m.start() < m.end() {
                            try_push(&mut spans, (m.start(), m.end()), WHAT)?;
                        }
                    }
                    split_into(&mut out, sp, spans)?;
                }
                PreTokenizer::Punctuation(behavior) => split_into(
                    &mut out,
                    sp,
                    split_chars(&sp.text, is_bert_punctuation, *behavior)?,
                )?,
                PreTokenizer::Digits { individual_digits } => {
                    let behavior = if *individual_digits {
                        Behavior::Isolated
                    } else {
                        Behavior::Contiguous
                    };
                    split_into(
                        &mut out,
                        sp,
                        split_chars(&sp.text, char::is_numeric, behavior)?,
                    )?
                }
                PreTokenizer::Split(p) => p.split(sp, &mut out)?,
                PreTokenizer::ByteLevel(p) => p.split(sp, &mut out)?,
                PreTokenizer::Sequence(list) => {
                    let mut cur = vec![Split::try_new(&sp.text, sp.at_start)?];
                    for p in list {
                        cur = p.pre_tokenize(cur)?;
                    }
                    try_reserve(&mut out, cur.len(), WHAT)?;
                    out.extend(cur);
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(p: &PreTokenizer, t: &str) -> Vec<String> {
        p.pre_tokenize_str(t)
            .unwrap()
            .into_iter()
            .map(|s| s.text)
            .collect()
    }

    #[test]
    fn behaviors() {
        let d = |c: char| c == '-';
        let t = "a-b--c-";
        let show = |b| -> Vec<&str> {
            split_chars(t, d, b)
                .unwrap()
                .into_iter()
                .map(|(s, e)| &t[s..e])
                .collect()
        };
        assert_eq!(show(Behavior::Removed), vec!["a", "b", "c"]);
        assert_eq!(
            show(Behavior::Isolated),
            vec!["a", "-", "b", "-", "-", "c", "-"]
        );
        assert_eq!(
            show(Behavior::Contiguous),
            vec!["a", "-", "b", "--", "c", "-"]
        );
        assert_eq!(
            show(Behavior::MergedWithPrevious),
            vec!["a-", "b-", "-", "c-"]
        );
        assert_eq!(
            show(Behavior::MergedWithNext),
            vec!["a", "-b", "-", "-c", "-"]
        );
        assert!(split_chars("", d, Behavior::Isolated).unwrap().is_empty());
    }

    #[test]
    fn metaspace() {
        let m = |scheme, split| PreTokenizer::Metaspace {
            replacement: '▁',
            prepend_scheme: scheme,
            split,
        };
        assert_eq!(
            texts(&m(PrependScheme::Always, true), "Hey  friend"),
            vec!["▁Hey", "▁", "▁friend"]
        );
        assert_eq!(
            texts(&m(PrependScheme::Never, true), "Hey friend"),
            vec!["Hey", "▁friend"]
        );
        assert_eq!(
            texts(&m(PrependScheme::Always, false), "Hey friend"),
            vec!["▁Hey▁friend"]
        );
        assert_eq!(texts(&m(PrependScheme::Always, false), " x"), vec!["▁x"]);
        // first: only the split that starts the text gets the prefix
        let p = m(PrependScheme::First, false);
        let got = p
            .pre_tokenize(vec![Split::new("a b", true), Split::new("c", false)])
            .unwrap();
        assert_eq!(got[0].text, "▁a▁b");
        assert_eq!(got[1].text, "c");
        assert!(texts(&m(PrependScheme::Always, true), "").is_empty());
    }

    #[test]
    fn bert_whitespace_punctuation_digits() {
        assert_eq!(
            texts(&PreTokenizer::Bert, "Hey, you!  ok?"),
            vec!["Hey", ",", "you", "!", "ok", "?"]
        );
        assert_eq!(
            texts(&PreTokenizer::WhitespaceSplit, " a\tb\u{3000}c "),
            vec!["a", "b", "c"]
        );
        assert_eq!(
            texts(&PreTokenizer::whitespace(), "Hey man!! ok's"),
            vec!["Hey", "man", "!!", "ok", "'", "s"]
        );
        assert_eq!(
            texts(&PreTokenizer::Punctuation(Behavior::Isolated), "a,b¿c"),
            vec!["a", ",", "b", "¿", "c"]
        );
        assert_eq!(
            texts(
                &PreTokenizer::Digits {
                    individual_digits: true
                },
                "a123"
            ),
            vec!["a", "1", "2", "3"]
        );
        assert_eq!(
            texts(
                &PreTokenizer::Digits {
                    individual_digits: false
                },
                "a123b4"
            ),
            vec!["a", "123", "b", "4"]
        );
        let seq = PreTokenizer::Sequence(vec![
            PreTokenizer::WhitespaceSplit,
            PreTokenizer::Digits {
                individual_digits: true,
            },
        ]);
        assert_eq!(texts(&seq, "ab 12"), vec!["ab", "1", "2"]);
    }
}
