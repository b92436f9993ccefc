//! Hand-written pre-tokenizers for the named patterns.
//!
//! Each function returns the end (byte offset) of the piece that starts at `i`, i.e. what the
//! first matching alternative of the pattern matches there, with the regex's greedy/backtracking
//! semantics worked out by hand (comments give the alternative each branch implements). Every
//! named pattern covers every character, so a piece is never empty and no text is skipped.
//! Equality with `regex.findall` is checked by fuzzing (Rust tests against fancy-regex, Python
//! property tests against the `regex` module).

use super::chars::*;
use super::unicode_tables::{FOLD_D, FOLD_E, FOLD_L, FOLD_M, FOLD_R, FOLD_S, FOLD_T, FOLD_V};
use super::unicode_tables::{LL, LM, LO, LT, LU, MARK};

#[inline(always)]
fn is_crlf(cp: u32) -> bool {
    cp == b'\r' as u32 || cp == b'\n' as u32
}

/// `[^\r\n\p{L}\p{N}]`
#[inline(always)]
fn is_prefix(c: Ch) -> bool {
    !(is_crlf(c.cp) || is_letter(c.cat) || is_number(c.cat))
}

/// End of the whitespace piece at `i` for the `\s`-alternatives shared by all patterns:
/// `[\s++$]` (when `end_anchor`), then `\s*[\r\n]` (or `\s*[\r\n]+`, same ends), when `newline_alt`,
/// then `\s+(?!\S)`, then `\s` / `\s+`.
#[inline(always)]
fn whitespace_piece(t: &Text, i: usize, end_anchor: bool, newline_alt: bool) -> usize {
    let j = t.run(i, is_space);
    if end_anchor && j == t.len() {
        return j; // \s++$
    }
    if newline_alt {
        // \s*[\r\n]: the longest prefix of the run that ends in \r or \n.
        let mut k = j;
        while k > i {
            let b = t.bytes[k - 1];
            if b == b'\r' || b == b'\n' {
                return k;
            }
            k = t.prev_start(k);
        }
    }
    if j == t.len() {
        return j; // \s+(?!\S) at the end of the text
    }
    let last = t.prev_start(j);
    if last > i {
        return last; // \s+(?!\S): all but the last space, which stays with what follows
    }
    j // \s / \s+ : a single whitespace character
}

/// End of the run of bytes with a class in `mask` starting at `i`; when the run stops at a
/// non-ASCII character it is continued by the general `t.run` with `pred`, which must be the same
/// class on Unicode (so the result is the run's end either way).
#[inline(always)]
fn ascii_run(t: &Text, mut i: usize, mask: u8, pred: impl Fn(u8) -> bool) -> usize {
    let b = t.bytes;
    if mask == B_LETTER {
        i = ascii_letters_end(b, i);
        if i < b.len() && b[i] >= 0x80 {
            return t.run(i, pred);
        }
        return i;
    }
    while i < b.len() {
        let k = bclass(b[i]);
        if k & mask == 0 {
            if k & B_HIGH != 0 {
                return t.run(i, pred);
            }
            break;
        }
        i += 1;
    }
    i
}

/// `ascii_run` for the class of the byte at `i` (a letter, digit or `[^\s\p{L}\p{N}]` byte):
/// ` ?\p{L}++`, ` ?\p{N}++` or ` ?[^\s\p{L}\p{N}]++` from `i`.
#[inline(always)]
fn ascii_class_run(t: &Text, i: usize, k: u8) -> usize {
    if k & B_LETTER != 0 {
        ascii_run(t, i + 1, B_LETTER, is_letter)
    } else if k & B_DIGIT != 0 {
        ascii_run(t, i + 1, B_DIGIT, is_number)
    } else {
        ascii_run(t, i + 1, B_PUNCT, is_punct)
    }
}

/// `whitespace_piece` for an ASCII whitespace byte at `i`, by bytes; defers to `whitespace_piece`
/// when the whitespace run is followed by a non-ASCII character (which might be whitespace).
#[inline(always)]
fn ascii_whitespace_piece(t: &Text, i: usize, end_anchor: bool, newline_alt: bool) -> usize {
    let b = t.bytes;
    let n = b.len();
    let mut j = i + 1;
    let mut last_nl = if bclass(b[i]) & B_CRLF != 0 { i + 1 } else { 0 };
    while j < n {
        let k = bclass(b[j]);
        if k & B_SPACE == 0 {
            if k & B_HIGH != 0 {
                return whitespace_piece(t, i, end_anchor, newline_alt);
            }
            break;
        }
        j += 1;
        if k & B_CRLF != 0 {
            last_nl = j;
        }
    }
    if end_anchor && j == n {
        return j; // \s++$
    }
    if newline_alt && last_nl != 0 {
        return last_nl; // \s*[\r\n]
    }
    if j == n || j - 1 == i {
        return j; // \s+(?!\S) at the end, or a single \s
    }
    j - 1 // \s+(?!\S)
}

/// Up to `max` ASCII digits from `i` (a digit); `None` if a non-ASCII character follows within
/// reach (it might be a digit).
#[inline(always)]
fn ascii_digits(b: &[u8], i: usize, max: usize) -> Option<usize> {
    let lim = (i + max).min(b.len());
    let mut e = i + 1;
    while e < lim {
        let k = bclass(b[e]);
        if k & B_DIGIT == 0 {
            if k & B_HIGH != 0 {
                return None;
            }
            break;
        }
        e += 1;
    }
    Some(e)
}

/// `'(?i:[sdmt]|ll|ve|re)` (case-insensitive) or `'(?:[sdmt]|ll|ve|re)` (case-sensitive), at `i`
/// where `t.bytes[i] == b'\''`. Returns the end if it matches.
#[inline(always)]
fn contraction_gpt4(t: &Text, i: usize, ignore_case: bool) -> Option<usize> {
    let a = t.at(i + 1)?;
    let eq = |c: Ch, lower: u8, fold: &[char]| {
        if ignore_case {
            folds_to(c.cp, fold)
        } else {
            c.cp == lower as u32
        }
    };
    if eq(a, b's', FOLD_S) || eq(a, b'd', FOLD_D) || eq(a, b'm', FOLD_M) || eq(a, b't', FOLD_T) {
        return Some(i + 1 + a.len as usize);
    }
    let b = t.at(i + 1 + a.len as usize)?;
    let end = i + 1 + a.len as usize + b.len as usize;
    if (eq(a, b'l', FOLD_L) && eq(b, b'l', FOLD_L))
        || (eq(a, b'v', FOLD_V) && eq(b, b'e', FOLD_E))
        || (eq(a, b'r', FOLD_R) && eq(b, b'e', FOLD_E))
    {
        return Some(end);
    }
    None
}

/// ASCII fast path of `cl100k_piece`: `None` when the byte at `i` or the one after it is
/// non-ASCII in a way that could change the piece (the general code then decides).
#[inline(always)]
fn cl100k_ascii(t: &Text, i: usize, max_digits: usize, end_anchor: bool) -> Option<usize> {
    let b = t.bytes;
    let c = b[i];
    let k = bclass(c);
    if k & B_LETTER != 0 {
        return Some(ascii_run(t, i + 1, B_LETTER, is_letter)); // \p{L}++
    }
    if k & B_DIGIT != 0 {
        return ascii_digits(b, i, max_digits); // \p{N}{1,k}
    }
    if k & B_HIGH != 0 {
        return None;
    }
    if c == b'\'' {
        if let Some(e) = contraction_gpt4(t, i, true) {
            return Some(e);
        }
    }
    // `[^\r\n\p{L}\p{N}]?+\p{L}++` with an ASCII prefix
    let k1 = if i + 1 < b.len() { bclass(b[i + 1]) } else { 0 };
    if k & B_CRLF == 0 {
        if k1 & B_LETTER != 0 {
            return Some(ascii_run(t, i + 2, B_LETTER, is_letter));
        }
        if k1 & B_HIGH != 0 {
            return None; // might be a letter
        }
    }
    // ` ?[^\s\p{L}\p{N}]++[\r\n]*+`, else whitespace
    Some(ascii_punct_or_space(t, i, k1, end_anchor, |x| {
        bclass(x) & B_CRLF != 0
    }))
}

/// The cl100k family:
/// `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`
/// with `max_digits` (3 for cl100k, 2 for nanochat) and `end_anchor` (`\s++$`, cl100k only).
#[inline(always)]
pub fn cl100k_piece(t: &Text, i: usize, max_digits: usize, end_anchor: bool) -> usize {
    match cl100k_ascii(t, i, max_digits, end_anchor) {
        Some(e) => e,
        None => cl100k_general(t, i, max_digits, end_anchor),
    }
}

/// `cl100k_piece` for any text (the ASCII fast path left it undecided).
#[inline(always)]
fn cl100k_general(t: &Text, i: usize, max_digits: usize, end_anchor: bool) -> usize {
    let c = char_at(t.bytes, i);
    let n = i + c.len as usize;
    if c.cp == b'\'' as u32 {
        if let Some(e) = contraction_gpt4(t, i, true) {
            return e;
        }
    }
    if is_letter(c.cat) {
        return t.run(n, is_letter); // \p{L}++ (the optional prefix matched nothing)
    }
    if is_prefix(c) {
        if let Some(d) = t.at(n) {
            if is_letter(d.cat) {
                return t.run(n + d.len as usize, is_letter); // [^\r\n\p{L}\p{N}]?+\p{L}++
            }
        }
    }
    if is_number(c.cat) {
        let mut e = n;
        for _ in 1..max_digits {
            match t.at(e) {
                Some(d) if is_number(d.cat) => e += d.len as usize,
                _ => break,
            }
        }
        return e; // \p{N}{1,k}
    }
    // ` ?[^\s\p{L}\p{N}]++[\r\n]*+`
    let punct_start = if c.cp == b' ' as u32 {
        match t.at(n) {
            Some(d) if is_punct(d.cat) => Some(n),
            _ => None,
        }
    } else if is_punct(c.cat) {
        Some(i)
    } else {
        None
    };
    if let Some(p) = punct_start {
        let e = t.run(p, is_punct);
        let mut k = e;
        while k < t.len() && (t.bytes[k] == b'\r' || t.bytes[k] == b'\n') {
            k += 1;
        }
        return k;
    }
    whitespace_piece(t, i, end_anchor, true)
}

/// ASCII fast path of `gpt2_piece` (`None`: leave it to the general code).
#[inline(always)]
fn gpt2_ascii(t: &Text, i: usize) -> Option<usize> {
    let b = t.bytes;
    let c = b[i];
    let k = bclass(c);
    if k & (B_LETTER | B_DIGIT | B_PUNCT) != 0 {
        if c == b'\'' {
            if let Some(e) = contraction_gpt4(t, i, false) {
                return Some(e);
            }
        }
        return Some(ascii_class_run(t, i, k));
    }
    if k & B_HIGH != 0 {
        return None;
    }
    let k1 = if i + 1 < b.len() { bclass(b[i + 1]) } else { 0 };
    if c == b' ' && k1 & (B_LETTER | B_DIGIT | B_PUNCT) != 0 {
        return Some(ascii_class_run(t, i + 1, k1)); // ` ?\p{L}++` etc.
    }
    if c == b' ' && k1 & B_HIGH != 0 {
        return None;
    }
    Some(ascii_whitespace_piece(t, i, false, false))
}

/// GPT-2 / r50k: `'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s`
/// (the same pieces as the original `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`).
#[inline(always)]
pub fn gpt2_piece(t: &Text, i: usize) -> usize {
    match gpt2_ascii(t, i) {
        Some(e) => e,
        None => gpt2_general(t, i),
    }
}

/// `gpt2_piece` for any text (the ASCII fast path left it undecided).
#[inline(always)]
fn gpt2_general(t: &Text, i: usize) -> usize {
    let c = char_at(t.bytes, i);
    let n = i + c.len as usize;
    if c.cp == b'\'' as u32 {
        if let Some(e) = contraction_gpt4(t, i, false) {
            return e;
        }
    }
    let (cls, start) = if c.cp == b' ' as u32 {
        match t.at(n) {
            Some(d) if !is_space(d.cat) => (d.cat, n),
            _ => (c.cat, i),
        }
    } else {
        (c.cat, i)
    };
    if is_letter(cls) {
        return t.run(start, is_letter);
    }
    if is_number(cls) {
        return t.run(start, is_number);
    }
    if is_punct(cls) {
        return t.run(start, is_punct);
    }
    whitespace_piece(t, i, false, false)
}

/// o200k's optional contraction suffix `(?i:'s|'t|'re|'ve|'m|'ll|'d)?` at `i`.
#[inline(always)]
fn o200k_contraction(t: &Text, i: usize) -> usize {
    if i >= t.len() || t.bytes[i] != b'\'' {
        return i;
    }
    let Some(a) = t.at(i + 1) else { return i };
    let one = i + 1 + a.len as usize;
    if folds_to(a.cp, FOLD_S)
        || folds_to(a.cp, FOLD_T)
        || folds_to(a.cp, FOLD_M)
        || folds_to(a.cp, FOLD_D)
    {
        return one;
    }
    let Some(b) = t.at(one) else { return i };
    let two = one + b.len as usize;
    if (folds_to(a.cp, FOLD_R) && folds_to(b.cp, FOLD_E))
        || (folds_to(a.cp, FOLD_V) && folds_to(b.cp, FOLD_E))
        || (folds_to(a.cp, FOLD_L) && folds_to(b.cp, FOLD_L))
    {
        return two;
    }
    i
}

/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+` at `s`, with backtracking:
/// the upper run is given back one character at a time until a lower-class character follows.
#[inline(always)]
fn o200k_upper_star_lower_plus(t: &Text, s: usize) -> Option<usize> {
    let k_max = t.run(s, is_o200k_upper);
    let mut k = k_max;
    loop {
        if let Some(c) = t.at(k) {
            if is_o200k_lower(c.cat) {
                return Some(t.run(k + c.len as usize, is_o200k_lower));
            }
        }
        if k == s {
            return None;
        }
        k = t.prev_start(k);
    }
}

/// What [`o200k_ascii_word`] found at a piece start.
enum AsciiWord {
    /// The word's end (before the contraction suffix).
    End(usize),
    /// An ASCII word (its letters from `s`, upper-case ones up to `u`) that a non-ASCII
    /// character at `l` may continue: the general code goes on from there.
    Resume { s: usize, u: usize, l: usize },
    /// No word of ASCII letters starts here.
    No,
}

/// Fast path of o200k's first two alternatives for ASCII words: `P? [A-Z]* [a-z]+` or
/// `P? [A-Z]+` (before the contraction suffix). A word whose ASCII letters end at a non-ASCII
/// character (which may extend a run) is handed on with where its runs end, so that the
/// general code continues it without reading its ASCII letters again (Latin text with
/// diacritics: most words).
#[inline(always)]
fn o200k_ascii_word(b: &[u8], i: usize) -> AsciiWord {
    let n = b.len();
    let c = b[i];
    let mut j = i;
    if !c.is_ascii_alphabetic() {
        // P = [^\r\n\p{L}\p{N}] (ASCII here), consumed when a letter follows
        if c >= 0x80 || c == b'\r' || c == b'\n' || c.is_ascii_digit() {
            return AsciiWord::No;
        }
        if j + 1 < n && b[j + 1].is_ascii_alphabetic() {
            j += 1;
        } else {
            return AsciiWord::No;
        }
    }
    let (u, l) = ascii_upper_lower_end(b, j);
    if l < n && b[l] >= 0x80 {
        return AsciiWord::Resume { s: j, u, l };
    }
    // l > u: U* then L+ (first alternative); l == u: U+ with empty L* (second alternative).
    AsciiWord::End(l)
}

/// The end of the word that [`o200k_ascii_word`] handed on (`Resume`): with a lower-case
/// letter read, `U*` has ended (an ASCII lower-case letter is not in `U`) and `L+` goes on
/// from `l`; with upper-case letters only, the `U` run goes on from `l` as in `o200k_word`
/// (none of them is in `L`, so where `U*` may give back to is not among them).
#[inline(always)]
fn o200k_word_resumed(t: &Text, s: usize, u: usize, l: usize) -> usize {
    if l > u {
        t.run(l, is_o200k_lower)
    } else {
        // (always a word: `l > s`)
        o200k_word_at(t, s, l).unwrap_or(l)
    }
}

/// ASCII fast path of o200k's alternatives 3-7 at `i`, where `o200k_ascii_word` found no word
/// (`None`: leave it to the general code).
#[inline(always)]
fn o200k_ascii_other(t: &Text, i: usize) -> Option<usize> {
    let b = t.bytes;
    let c = b[i];
    let k = bclass(c);
    if k & B_DIGIT != 0 {
        return ascii_digits(b, i, 3); // \p{N}{1,3}
    }
    if k & (B_HIGH | B_LETTER) != 0 {
        return None;
    }
    let k1 = if i + 1 < b.len() { bclass(b[i + 1]) } else { 0 };
    if k & B_CRLF == 0 && k1 & (B_HIGH | B_LETTER) != 0 {
        // a prefixed word that `o200k_ascii_word` left to the general code, or a non-ASCII
        // character that might be a letter or mark
        return None;
    }
    // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`, else whitespace
    Some(ascii_punct_or_space(t, i, k1, false, |x| {
        matches!(x, b'\r' | b'\n' | b'/')
    }))
}

/// The end of the piece at ASCII `i` (class checks for letters and digits already done; `k1`
/// is the class of the next byte, 0 at the end): ` ?` punctuation run then bytes that
/// `suffix` accepts (cl100k: `[\r\n]*`, o200k: `[\r\n/]*`), else the whitespace alternatives.
#[inline(always)]
fn ascii_punct_or_space(
    t: &Text,
    i: usize,
    k1: u8,
    end_anchor: bool,
    suffix: impl Fn(u8) -> bool,
) -> usize {
    let b = t.bytes;
    let p = if bclass(b[i]) & B_PUNCT != 0 {
        i
    } else if b[i] == b' ' && k1 & B_PUNCT != 0 {
        i + 1
    } else {
        return ascii_whitespace_piece(t, i, end_anchor, true);
    };
    let mut e = ascii_run(t, p + 1, B_PUNCT, is_punct);
    while e < b.len() && suffix(b[e]) {
        e += 1;
    }
    e
}

/// o200k: see `tiktoken_ext.openai_public.o200k_base` for the seven alternatives.
#[inline(always)]
pub fn o200k_piece(t: &Text, i: usize) -> usize {
    if t.bytes[i] >= 0x80 {
        return o200k_general(t, i);
    }
    match o200k_ascii_word(t.bytes, i) {
        AsciiWord::End(e) => return o200k_contraction(t, e),
        AsciiWord::Resume { s, u, l } => {
            return o200k_contraction(t, o200k_word_resumed(t, s, u, l))
        }
        AsciiWord::No => {}
    }
    match o200k_ascii_other(t, i) {
        Some(e) => e,
        None => o200k_general(t, i),
    }
}

/// o200k's first two alternatives without their prefix and suffix, `U* L+` else `U+ L*` (`U`
/// = `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`, `L` = `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`), at `s`, in one
/// pass: the greedy `U*` stops at `k`; an `Ll` there continues it as `L+`; else `U*` gives back
/// up to its last character that is also in `L` (`Lm`, `Lo`, `M`), which `L+` then takes
/// alone (what follows it in the run is `Lu`/`Lt`); with no such character `U+ L*` takes the
/// run (`L*` is empty: the character at `k` is not in `L`). Nothing is given back and read
/// again, as `o200k_upper_star_lower_plus` does (which the rare mark-first case still uses).
#[inline(always)]
fn o200k_word(t: &Text, s: usize) -> Option<usize> {
    o200k_word_at(t, s, s)
}

/// [`o200k_word`] at `s` with its `U` run read up to `k` already, none of it in `L`.
#[inline(always)]
fn o200k_word_at(t: &Text, s: usize, mut k: usize) -> Option<usize> {
    const UPPER: u16 = (1 << LU) | (1 << LT) | (1 << LM) | (1 << LO) | (1 << MARK);
    const BOTH: u16 = (1 << LM) | (1 << LO) | (1 << MARK);
    let b = t.bytes;
    let mut last_both = s;
    while k < b.len() {
        let c = char_at(b, k);
        let bit = 1u16 << c.cat;
        if bit & UPPER == 0 {
            if c.cat == LL {
                return Some(t.run(k + c.len as usize, is_o200k_lower));
            }
            break;
        }
        k += c.len as usize;
        if bit & BOTH != 0 {
            last_both = k;
        }
    }
    if last_both > s {
        Some(last_both)
    } else if k > s {
        Some(k)
    } else {
        None
    }
}

/// `o200k_piece` for any text (the ASCII fast paths left it undecided).
#[inline(always)]
fn o200k_general(t: &Text, i: usize) -> usize {
    let c = char_at(t.bytes, i);
    let n = i + c.len as usize;
    let prefix = is_prefix(c);
    if c.cat != MARK {
        // Alternatives 1 and 2 with the prefix if `c` is one (then without it they cannot match:
        // `c` is in neither `U` nor `L`), else without (a letter is in `U` or is `Ll`).
        if let Some(e) = o200k_word(t, if prefix { n } else { i }) {
            return o200k_contraction(t, e);
        }
        return o200k_rest(t, i, c, n);
    }
    // Alternative 1: P? U* L+ C?   (P tried first, then without it)
    if prefix {
        if let Some(e) = o200k_upper_star_lower_plus(t, n) {
            return o200k_contraction(t, e);
        }
    }
    if let Some(e) = o200k_upper_star_lower_plus(t, i) {
        return o200k_contraction(t, e);
    }
    // Alternative 2: P? U+ L* C?
    if prefix {
        let e = t.run(n, is_o200k_upper);
        if e > n {
            return o200k_contraction(t, t.run(e, is_o200k_lower));
        }
    }
    let e = t.run(i, is_o200k_upper);
    if e > i {
        return o200k_contraction(t, t.run(e, is_o200k_lower));
    }
    o200k_rest(t, i, c, n)
}

/// o200k's alternatives 3-7 at `i` (character `c`, ending at `n`), where no word matches.
#[inline(always)]
fn o200k_rest(t: &Text, i: usize, c: Ch, n: usize) -> usize {
    // Alternative 3: \p{N}{1,3}
    if is_number(c.cat) {
        let mut e = n;
        for _ in 1..3 {
            match t.at(e) {
                Some(d) if is_number(d.cat) => e += d.len as usize,
                _ => break,
            }
        }
        return e;
    }
    // Alternative 4: ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
    let punct_start = if c.cp == b' ' as u32 {
        match t.at(n) {
            Some(d) if is_punct(d.cat) => Some(n),
            _ => None,
        }
    } else if is_punct(c.cat) {
        Some(i)
    } else {
        None
    };
    if let Some(p) = punct_start {
        let mut k = t.run(p, is_punct);
        while k < t.len() && matches!(t.bytes[k], b'\r' | b'\n' | b'/') {
            k += 1;
        }
        return k;
    }
    // Alternatives 5-7: `\s*[\r\n]+`, `\s+(?!\S)`, `\s+`
    whitespace_piece(t, i, false, true)
}
