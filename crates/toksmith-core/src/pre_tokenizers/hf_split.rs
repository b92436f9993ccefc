//! The regex `Split` and `ByteLevel` pre-tokenizers of Hugging Face `tokenizers`, for pipelines
//! that run them before a BPE over characters (CLIP's `tokenizer.json`: a `Split` with
//! `invert: true`, then `ByteLevel`, then a BPE with an end-of-word suffix).

use fancy_regex::Regex;

use super::{spans_of_events, Behavior, Split};
use crate::bytelevel::BYTE_TO_CHAR;
use crate::{Error, Result};

/// GPT-2's pattern, which `ByteLevel` splits with when `use_regex` is set.
const GPT2_PATTERN: &str =
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

fn compile(pattern: &str) -> Result<Regex> {
    Regex::new(pattern).map_err(|e| Error::InvalidPattern {
        pattern: pattern.to_string(),
        position: None,
        message: e.to_string(),
    })
}

/// The events of a regex over `text`: each match, and the text between matches (HF's
/// `Pattern::find_matches` for a regex), flipped when `invert`.
fn regex_events(re: &Regex, text: &str, invert: bool) -> Result<Vec<(usize, usize, bool)>> {
    let mut events = Vec::new();
    let mut prev = 0;
    for m in re.find_iter(text) {
        let m = m.map_err(|e| Error::RegexRuntime(e.to_string()))?;
        if prev != m.start() {
            events.push((prev, m.start(), invert));
        }
        events.push((m.start(), m.end(), !invert));
        prev = m.end();
    }
    if prev != text.len() {
        events.push((prev, text.len(), invert));
    }
    Ok(events)
}

/// HF `pre_tokenizers::Split`: a regex (or a literal string) and what happens to its matches.
#[derive(Debug, Clone)]
pub struct RegexSplit {
    re: Regex,
    behavior: Behavior,
    invert: bool,
}

impl RegexSplit {
    pub fn regex(pattern: &str, behavior: Behavior, invert: bool) -> Result<Self> {
        Ok(RegexSplit {
            re: compile(pattern)?,
            behavior,
            invert,
        })
    }

    pub fn literal(s: &str, behavior: Behavior, invert: bool) -> Result<Self> {
        Self::regex(&fancy_regex::escape(s), behavior, invert)
    }

    pub fn split(&self, sp: &Split, out: &mut Vec<Split>) -> Result<()> {
        let events = regex_events(&self.re, &sp.text, self.invert)?;
        for (s, e) in spans_of_events(&events, self.behavior)? {
            out.push(Split::new(&sp.text[s..e], sp.at_start && s == 0));
        }
        Ok(())
    }
}

/// HF `pre_tokenizers::ByteLevel`: a space prepended (`add_prefix_space`), GPT-2's split
/// (`use_regex`), then each byte spelled by its character of GPT-2's byte alphabet.
#[derive(Debug, Clone)]
pub struct ByteLevelPre {
    add_prefix_space: bool,
    re: Option<Regex>,
}

impl ByteLevelPre {
    pub fn new(add_prefix_space: bool, use_regex: bool) -> Result<Self> {
        Ok(ByteLevelPre {
            add_prefix_space,
            re: if use_regex {
                Some(compile(GPT2_PATTERN)?)
            } else {
                None
            },
        })
    }

    pub fn split(&self, sp: &Split, out: &mut Vec<Split>) -> Result<()> {
        // text-sized (a whole text without the regex): allocated fallibly
        const WHAT: &str = "the byte-level pre-tokenized text";
        let spelled = |s: &str| -> Result<String> {
            crate::mem::TextBuf::collect(
                s.bytes().map(|b| {
                    char::from_u32(u32::from(BYTE_TO_CHAR[b as usize])).unwrap_or('\u{fffd}')
                }),
                s.len(),
                WHAT,
            )
        };
        let mut text = crate::mem::TextBuf::with_capacity(sp.text.len() + 1, WHAT)?;
        if self.add_prefix_space && !sp.text.starts_with(' ') {
            text.push(' ');
        }
        text.push_str(&sp.text);
        let text = text.finish()?;
        match &self.re {
            Some(re) => {
                let events = regex_events(re, &text, false)?;
                for (s, e) in spans_of_events(&events, Behavior::Isolated)? {
                    let split = Split::new(spelled(&text[s..e])?, sp.at_start && s == 0);
                    crate::mem::try_push(out, split, WHAT)?;
                }
            }
            None if !text.is_empty() => {
                crate::mem::try_push(out, Split::new(spelled(&text)?, sp.at_start), WHAT)?
            }
            None => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(out: Vec<Split>) -> Vec<String> {
        out.into_iter().map(|s| s.text).collect()
    }

    #[test]
    fn clip_split_keeps_the_matches() {
        let p = RegexSplit::regex(
            r"'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+",
            Behavior::Removed,
            true,
        )
        .unwrap();
        let mut out = Vec::new();
        p.split(&Split::new("it's 42 cats!!", true), &mut out)
            .unwrap();
        assert_eq!(texts(out), vec!["it", "'s", "4", "2", "cats", "!!"]);
    }

    #[test]
    fn byte_level_spells_bytes() {
        let p = ByteLevelPre::new(true, true).unwrap();
        let mut out = Vec::new();
        p.split(&Split::new("héllo world", true), &mut out).unwrap();
        assert_eq!(texts(out), vec!["ĠhÃ©llo", "Ġworld"]);
        let p = ByteLevelPre::new(false, false).unwrap();
        let mut out = Vec::new();
        p.split(&Split::new("a b", true), &mut out).unwrap();
        assert_eq!(texts(out), vec!["aĠb"]);
    }

    #[test]
    fn behaviors_on_regex_events() {
        let re = compile("-").unwrap();
        let ev = regex_events(&re, "a-b--c-", false).unwrap();
        let show = |b| -> Vec<(usize, usize)> { spans_of_events(&ev, b).unwrap() };
        assert_eq!(show(Behavior::Removed), vec![(0, 1), (2, 3), (5, 6)]);
        assert_eq!(show(Behavior::Contiguous).len(), 6);
    }
}
