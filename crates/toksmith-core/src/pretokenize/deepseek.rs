//! A hand-written scanner for DeepSeek V3 / R1's pre-tokenizer: three `Split(Isolated)` steps
//! of Hugging Face `tokenizers`, each applied to the pieces of the one before,
//!
//! 1. `\p{N}{1,3}`: runs of digits, in threes;
//! 2. `[一-龥぀-ゟ゠-ヿ]+`: runs of CJK characters (none of them a digit);
//! 3. `[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|
//!    ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+` on each run of the other characters and
//!    each CJK run, as a text of its own (its look-ahead sees the end of the run as the end of
//!    the text); the characters no alternative takes are pieces too (`Isolated`).
//!
//! toksmith's pattern for that sequence ([`DEEPSEEK_V3_PATTERN`], built by
//! `toksmith.files.huggingface`) runs here; the regex engine is the reference it is checked
//! against.

use super::chars::{category, is_letter};
use super::unicode_tables::{MARK, NUM, PUNCT_SYMBOL, SPACE};

/// The one pattern `toksmith.files.huggingface` gives DeepSeek V3's Split sequence.
pub const DEEPSEEK_V3_PATTERN: &str = concat!(
    "\\p{N}{1,3}|(?:(?=[一-龥぀-ゟ゠-ヿ])[^\\p{L}\\p{P}\\p{S}])?(?:(?=[一-龥぀-ゟ゠-ヿ]",
    ")[\\p{L}\\p{M}])+|(?:(?=[一-龥぀-ゟ゠-ヿ])[\\p{P}\\p{S}])+|(?:(?!(?:(?=[一-龥぀",
    "-ゟ゠-ヿ])[^\\p{L}\\p{P}\\p{S}])?(?:(?=[一-龥぀-ゟ゠-ヿ])[\\p{L}\\p{M}])+|(?:(?",
    "=[一-龥぀-ゟ゠-ヿ])[\\p{P}\\p{S}])+)[一-龥぀-ゟ゠-ヿ])+|[!\"#$%&'()*+,\\-./:;<=>?@",
    "\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}\\p{N}一-龥぀-ゟ゠-ヿ]?(",
    "?:(?![一-龥぀-ゟ゠-ヿ])[\\p{L}\\p{M}])+| ?(?:(?![一-龥぀-ゟ゠-ヿ])[\\p{P}\\p{S}])+",
    "[\r\n]*|\\s*[\r\n]+|\\s+(?![^\\s\\p{N}一-龥぀-ゟ゠-ヿ])|\\s+|(?:(?![!\"#$%&'",
    "()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}\\",
    "p{N}一-龥぀-ゟ゠-ヿ]?(?:(?![一-龥぀-ゟ゠-ヿ])[\\p{L}\\p{M}])+| ?(?:(?![一-龥぀-ゟ゠-ヿ])",
    "[\\p{P}\\p{S}])+[\r\n]*|\\s*[\r\n]+|\\s+(?![^\\s\\p{N}一-龥぀-ゟ゠-ヿ])|\\s+",
    ")[^\\p{N}一-龥぀-ゟ゠-ヿ])+",
);

const L: u8 = 1;
const M: u8 = 2;
const PS: u8 = 4;
const N: u8 = 8;
const WS: u8 = 16;
const K: u8 = 32;
const CRLF: u8 = 64;

const fn ascii_classes() -> [u8; 128] {
    let mut t = [0u8; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        t[b] = if c.is_ascii_alphabetic() {
            L
        } else if c.is_ascii_digit() {
            N
        } else if c == b'\r' || c == b'\n' {
            WS | CRLF
        } else if c == b' ' || c == b'\t' || c == 0x0b || c == 0x0c {
            WS
        } else if c.is_ascii_punctuation() {
            PS
        } else {
            0
        };
        b += 1;
    }
    t
}

const ASCII: [u8; 128] = ascii_classes();

#[inline(always)]
fn is_k(cp: u32) -> bool {
    matches!(cp, 0x4e00..=0x9fa5 | 0x3040..=0x309f | 0x30a0..=0x30ff)
}

/// `[\p{P}\p{S}]`, with the `regex` module's (and tiktoken's) Unicode version, as the other
/// classes: the `unicode_categories` crate's tables are years older (U+20BF, the bitcoin sign,
/// is no symbol there).
fn is_punct_symbol(cp: u32) -> bool {
    let i = PUNCT_SYMBOL.partition_point(|&(_, hi)| hi < cp);
    i < PUNCT_SYMBOL.len() && PUNCT_SYMBOL[i].0 <= cp
}

/// The classes of the character at byte `i` of `s`, and its UTF-8 length.
#[inline(always)]
fn class_at(s: &str, i: usize) -> (u8, usize) {
    let b = s.as_bytes()[i];
    if b < 0x80 {
        return (ASCII[b as usize], 1);
    }
    let c = s[i..].chars().next().expect("a character starts here");
    let cp = c as u32;
    let cat = category(cp);
    let mut k = if is_letter(cat) {
        L
    } else if cat == MARK {
        M
    } else if cat == NUM {
        N
    } else if cat == SPACE {
        WS
    } else if is_punct_symbol(cp) {
        PS
    } else {
        0
    };
    if is_k(cp) {
        k |= K;
    }
    (k, c.len_utf8())
}

/// The end of the run of characters from `i` (before `end`) whose classes meet `want`.
#[inline(always)]
fn run(s: &str, mut i: usize, end: usize, want: u8) -> usize {
    while i < end {
        let (k, n) = class_at(s, i);
        if k & want == 0 {
            break;
        }
        i += n;
    }
    i
}

/// Where the last regex's match at `i` ends, in the run `s[..end]`, or None.
#[inline(always)]
fn match_at(s: &str, i: usize, end: usize) -> Option<usize> {
    let b = s.as_bytes();
    let (c, n) = class_at(s, i);
    let next = if i + n < end { class_at(s, i + n).0 } else { 0 };
    // [ASCII punctuation][A-Za-z]+
    if b[i] < 0x80 && c & PS != 0 && i + n < end && b[i + n].is_ascii_alphabetic() {
        let mut e = i + n;
        while e < end && b[e].is_ascii_alphabetic() {
            e += 1;
        }
        return Some(e);
    }
    // [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
    if c & (CRLF | L | PS) == 0 && next & (L | M) != 0 {
        return Some(run(s, i + n, end, L | M));
    }
    if c & (L | M) != 0 {
        return Some(run(s, i, end, L | M));
    }
    // ' '?[\p{P}\p{S}]+[\r\n]*
    if b[i] == b' ' && next & PS != 0 {
        let e = run(s, i + 1, end, PS);
        return Some(run(s, e, end, CRLF));
    }
    if c & PS != 0 {
        let e = run(s, i, end, PS);
        return Some(run(s, e, end, CRLF));
    }
    if c & WS == 0 {
        return None;
    }
    // \s*[\r\n]+: to the last CR/LF of the whitespace run
    let mut last_crlf = None;
    let mut e = i;
    let mut last_start = i;
    while e < end {
        let (k, m) = class_at(s, e);
        if k & WS == 0 {
            break;
        }
        if k & CRLF != 0 {
            last_crlf = Some(e + m);
        }
        last_start = e;
        e += m;
    }
    if let Some(x) = last_crlf {
        return Some(x);
    }
    // \s+(?!\S): the whole run at the end of the text, else all but its last character
    if e == end || last_start > i {
        return Some(if e == end { e } else { last_start });
    }
    // \s+
    Some(e)
}

/// The pieces of one run (of CJK characters, or of the other characters) under the last regex:
/// its matches and the text between them.
#[inline(always)]
fn split_run<'t>(s: &'t str, start: usize, end: usize, f: &mut impl FnMut(&'t str)) {
    let mut i = start;
    let mut gap = start;
    while i < end {
        match match_at(s, i, end) {
            Some(e) => {
                if gap < i {
                    f(&s[gap..i]);
                }
                f(&s[i..e]);
                i = e;
                gap = e;
            }
            None => i += class_at(s, i).1,
        }
    }
    if gap < end {
        f(&s[gap..end]);
    }
}

/// Call `f` with each piece of `text`, in order.
pub fn for_each_deepseek_piece<'t>(text: &'t str, mut f: impl FnMut(&'t str)) {
    let mut i = 0;
    let len = text.len();
    while i < len {
        let (k, n) = class_at(text, i);
        if k & N != 0 {
            // up to three digits
            let mut e = i + n;
            for _ in 0..2 {
                if e >= len {
                    break;
                }
                let (k2, n2) = class_at(text, e);
                if k2 & N == 0 {
                    break;
                }
                e += n2;
            }
            f(&text[i..e]);
            i = e;
            continue;
        }
        let in_k = k & K != 0;
        // the run of characters of the same kind (CJK or other; digits end both)
        let mut e = i + n;
        while e < len {
            let (k2, n2) = class_at(text, e);
            if k2 & N != 0 || (k2 & K != 0) != in_k {
                break;
            }
            e += n2;
        }
        split_run(text, i, e, &mut f);
        i = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretokenize::Pretokenizer;

    fn pieces(t: &str) -> Vec<&str> {
        let mut out = Vec::new();
        for_each_deepseek_piece(t, |p| out.push(p));
        out
    }

    #[test]
    fn dispatches_to_the_scanner() {
        assert!(Pretokenizer::new(DEEPSEEK_V3_PATTERN).unwrap().is_fast());
    }

    #[test]
    fn equals_the_regex() {
        let re = Pretokenizer::new_regex(DEEPSEEK_V3_PATTERN).unwrap();
        let mut texts: Vec<String> = [
            "Hello, world! It's 2024; we'll see 12345 items.",
            "日本語のテキストです。東京は大きい都市です。カタカナ・ー゛゠ぁ\u{3040}",
            "中文文本：我爱北京天安门，１２３４５ 一二三",
            "def f(x):\n    return x ** 2  # sq\r\n\r\n\n  \t\n",
            "   leading\n\n\n  trailing   \t\n  ",
            " .com 'S x\u{301}y \u{301}\u{302}a \u{200d}a \u{0}a \u{0} !!\n\n",
            "Emoji: 👍🏽 👨\u{200d}👩 🇫🇷 ❤️ a\u{a0}b\u{3000}c \u{85}",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // a cheap deterministic fuzz over the classes the scanner tells apart
        let pool: Vec<char> =
            " \t\r\n\u{b}\u{a0}\u{3000}aZé\u{301}日ぁカ゛・ー1２٣.,'!$#(\u{200d}\u{0}😀"
                .chars()
                .collect();
        let mut x: u64 = 0x9e3779b97f4a7c15;
        for _ in 0..3000 {
            let mut s = String::new();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            for _ in 0..(x % 24) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                s.push(pool[(x % pool.len() as u64) as usize]);
            }
            texts.push(s);
        }
        for t in &texts {
            assert_eq!(pieces(t), re.split(t).unwrap(), "{t:?}");
        }
    }

    #[test]
    fn every_code_point_is_classed_as_the_regex_classes_it() {
        // punctuation and symbols after a colon and before a letter tell the three classes the
        // last split's alternatives use apart (a symbol joins the colon, a letter or mark the
        // `a`, anything else neither)
        let re = Pretokenizer::new_regex(DEEPSEEK_V3_PATTERN).unwrap();
        let mut t = String::new();
        for c in (0x80..0x11_0000u32).filter_map(char::from_u32) {
            t.clear();
            t.push(':');
            t.push(c);
            t.push('a');
            assert_eq!(pieces(&t), re.split(&t).unwrap(), "U+{:04X}", c as u32);
        }
    }
}
