//! Hand-written scanner for [`super::CPP_WORDS_PATTERN`] and [`super::CPP_RUNS_PATTERN`], the
//! word splits of the CppReason preset (seed 001). Like the word scanner it drops text (spaces
//! and tabs match nothing).
//!
//! At each place the regex tries its alternatives in order; the scanner does the same:
//! 1. at the start of a line, `+++` or `---`, with ` a/` or ` b/` after it;
//! 2. `@@`;
//! 3. `#`, optional spaces and tabs, then ASCII letters or `_` (a preprocessor directive);
//! 4. a hex literal `0x...`;
//! 5. a string literal `"..."` and 6. a character literal `'.'` (backslash escapes, no line
//!    break inside);
//! 7. the operators, in the pattern's order (longest first where one is a prefix of another);
//! 8. an identifier `[\p{L}_][\p{L}\p{N}_]*`; 9. a number `\p{N}[\p{L}\p{N}_]*` (a digit
//!    and its suffix or exponent letters: `42u`, `1e5`, `10ULL`; `3.14` is still three words);
//! 10. one or two line breaks, each with the whitespace after it (no further `\n`);
//! 11. with punctuation runs ([`super::CPP_RUNS_PATTERN`]) only: a `+` or `-` at the start of
//!     a line (alone: the diff marker), and 12. a run of ASCII punctuation but quotes and `_`,
//!     up to where an operator, `@@` or a directive starts (`();`, `){`; `)->` is `)` `->`);
//! 13. any other character that is not whitespace.
//!
//! Checked against the regex by fuzzing (Rust here, Python's `regex` module in the tests).

use super::chars::{char_at, is_letter, is_number, is_space};

/// The operators of alternative 7, in the pattern's order.
const OPERATORS: [&[u8]; 30] = [
    b"<=>", b"<<=", b">>=", b"->*", b"...", b"::", b"->", b".*", b"==", b"!=", b"<=", b">=", b"&&",
    b"||", b"<<", b">>", b"++", b"--", b"+=", b"-=", b"*=", b"/=", b"%=", b"&=", b"|=", b"^=",
    b"##", b"//", b"/*", b"*/",
];

/// Call `f` with each word of `text`, in order.
pub fn for_each_cpp_word<'t, const RUNS: bool>(text: &'t str, mut f: impl FnMut(&'t str)) {
    let b = text.as_bytes();
    let n = b.len();
    let mut i = 0;
    // no string literal closes from a `"` before this place (see `word_end`)
    let mut open_until = 0;
    while i < n {
        match word_end::<RUNS>(b, i, &mut open_until) {
            Some(e) => {
                // SAFETY: every alternative ends on a character boundary
                f(unsafe { text.get_unchecked(i..e) });
                i = e;
            }
            None => i += char_at(b, i).len as usize,
        }
    }
}

/// The end of the word at `i`, or None if no alternative matches there (whitespace).
///
/// `open_until`: a string literal that opens at `i` and does not close fails at the line
/// break (or end) `f`; a later `"` before `f` fails at `f` too, since the failed scan went
/// over it as the second half of an escape `\"` and the scan from it reads the same units
/// from there on. Remembering `f` keeps a line of unclosed quotes linear (it was quadratic).
#[inline]
fn word_end<const RUNS: bool>(b: &[u8], i: usize, open_until: &mut usize) -> Option<usize> {
    let c = b[i];
    let rest = &b[i..];
    // 1. diff headers at the start of a line
    if (c == b'+' || c == b'-')
        && (i == 0 || b[i - 1] == b'\n')
        && (rest.starts_with(b"+++") || rest.starts_with(b"---"))
    {
        let e = i + 3;
        if b.len() >= e + 3
            && b[e] == b' '
            && (b[e + 1] == b'a' || b[e + 1] == b'b')
            && b[e + 2] == b'/'
        {
            return Some(e + 3);
        }
        return Some(e);
    }
    // 2.
    if rest.starts_with(b"@@") {
        return Some(i + 2);
    }
    // 3. preprocessor directive
    if c == b'#' {
        let mut j = i + 1;
        while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
            j += 1;
        }
        let k = j;
        while j < b.len() && (b[j].is_ascii_alphabetic() || b[j] == b'_') {
            j += 1;
        }
        if j > k {
            return Some(j);
        }
    }
    // 4. hex literal
    if c == b'0' && rest.len() >= 3 && (rest[1] | 0x20) == b'x' && rest[2].is_ascii_hexdigit() {
        let mut j = i + 3;
        while j < b.len() && b[j].is_ascii_hexdigit() {
            j += 1;
        }
        return Some(j);
    }
    // 5. string literal, 6. character literal
    if c == b'"' {
        if i >= *open_until {
            match literal(b, i, b'"', usize::MAX) {
                Ok(e) => return Some(e),
                Err(f) => *open_until = f,
            }
        }
    } else if c == b'\'' {
        if let Ok(e) = literal(b, i, b'\'', 1) {
            return Some(e);
        }
    }
    // 7. operators
    if matches!(
        c,
        b'<' | b'>'
            | b'-'
            | b'.'
            | b':'
            | b'='
            | b'!'
            | b'&'
            | b'|'
            | b'+'
            | b'*'
            | b'/'
            | b'%'
            | b'^'
            | b'#'
    ) {
        for op in OPERATORS {
            if rest.starts_with(op) {
                return Some(i + op.len());
            }
        }
    }
    // 11. a diff marker
    if RUNS && (c == b'+' || c == b'-') && (i == 0 || b[i - 1] == b'\n') {
        return Some(i + 1);
    }
    let ch = char_at(b, i);
    let next = i + ch.len as usize;
    // 8. identifier, 9. number: the same tail
    if c == b'_' || is_letter(ch.cat) || is_number(ch.cat) {
        return Some(run(b, next, |k, c| {
            c == b'_' as u32 || is_letter(k) || is_number(k)
        }));
    }
    // 10. line breaks
    let newline_at = |j: usize| -> Option<usize> {
        if j < b.len() && b[j] == b'\n' {
            Some(j + 1)
        } else if j + 1 < b.len() && b[j] == b'\r' && b[j + 1] == b'\n' {
            Some(j + 2)
        } else {
            None
        }
    };
    if let Some(mut e) = newline_at(i) {
        // whitespace but `\n` after it, then perhaps one more line break and its whitespace
        let spaces = |j: usize| run(b, j, |k, c| is_space(k) && c != b'\n' as u32);
        e = spaces(e);
        if let Some(e2) = newline_at(e) {
            e = spaces(e2);
        }
        return Some(e);
    }
    // 12. a punctuation run
    if RUNS && is_run_char(c) {
        let mut j = i + 1;
        while j < b.len() && is_run_char(b[j]) && !starts_other_word(b, j) {
            j += 1;
        }
        return Some(j);
    }
    // 13. anything else but whitespace
    if is_space(ch.cat) {
        None
    } else {
        Some(next)
    }
}

/// The characters of a punctuation run (alternative 12): ASCII punctuation but `"`, `'` and
/// `_` (which belongs to identifiers).
#[inline]
fn is_run_char(c: u8) -> bool {
    c.is_ascii_punctuation() && !matches!(c, b'"' | b'\'' | b'_')
}

/// Whether an operator, `@@` or a directive starts at `j` (where a punctuation run stops).
#[inline]
fn starts_other_word(b: &[u8], j: usize) -> bool {
    let rest = &b[j..];
    if rest.starts_with(b"@@") || OPERATORS.iter().any(|op| rest.starts_with(op)) {
        return true;
    }
    if rest[0] == b'#' {
        let k = rest[1..]
            .iter()
            .position(|&c| c != b' ' && c != b'\t')
            .map_or(rest.len(), |p| p + 1);
        return k < rest.len() && (rest[k].is_ascii_alphabetic() || rest[k] == b'_');
    }
    false
}

/// End of the run of characters from `j` for which `pred(category, code point)` holds.
#[inline]
fn run(b: &[u8], mut j: usize, pred: impl Fn(u8, u32) -> bool) -> usize {
    while j < b.len() {
        let ch = char_at(b, j);
        if !pred(ch.cat, ch.cp) {
            break;
        }
        j += ch.len as usize;
    }
    j
}

/// A literal from its opening `quote` at `i`: at most `max_units` characters or escapes
/// (`\` and any character but a line break), none of them `quote`, `\` alone or a line break,
/// then the closing `quote`. `Ok(end)`, or `Err(place)` where the scan stopped if it does not
/// close.
#[inline]
fn literal(b: &[u8], i: usize, quote: u8, max_units: usize) -> Result<usize, usize> {
    let mut j = i + 1;
    let mut units = 0;
    while j < b.len() {
        let c = b[j];
        if c == quote {
            return if units >= 1 || max_units == usize::MAX {
                Ok(j + 1)
            } else {
                Err(j)
            };
        }
        if units == max_units || c == b'\n' {
            return Err(j);
        }
        if c == b'\\' {
            if j + 1 >= b.len() || b[j + 1] == b'\n' {
                return Err(j);
            }
            j += 1 + char_at(b, j + 1).len as usize;
        } else {
            j += char_at(b, j).len as usize;
        }
        units += 1;
    }
    Err(j)
}
