//! Hand-written scanner for [`super::CODE_LINES_PATTERN`], Cromwell's one-stage split (seed
//! 000): o200k's pattern with three changes.
//!
//! 1. A first alternative for line starts: `[\r\n]+[^\S\r\n]*(?:X?Y+ ?|X+)?` with
//!    `X = [^\s\p{L}\p{N}]` and `Y = [\p{L}\p{N}_]`: the line breaks, the next line's
//!    indentation, then its first word (one leading punctuation character allowed, `_` and
//!    digits inside, one space after it) or its first punctuation run.
//! 2. Number prefixes before `\p{N}{1,3}`: `0[xX][0-9A-Fa-f]+|0[bB][01]+`.
//! 3. The punctuation alternative without line breaks in its tail: ` ?[^\s\p{L}\p{N}]+/*`
//!    (o200k's takes `[\r\n/]*`, which would leave the next line's indentation alone).
//!
//! Everywhere else a piece is o200k's, so the scanner is o200k's piece function with those
//! three cases taken first or cut after. Why each case is exact:
//! - No o200k alternative starts at CR/LF except the whitespace ones, which come after the new
//!   first alternative: every piece that starts at CR/LF is the new alternative's.
//! - At `0` no word alternative can match (a digit is neither a word's prefix nor a letter), so
//!   the number prefixes are tried before anything else there.
//! - An o200k piece that holds a CR/LF is either a whitespace piece (`\s*[\r\n]+`, kept: the
//!   same alternative comes first here too) or a punctuation piece whose tail reached a line
//!   break; the tail here is `/*`, which stops at that line break. A punctuation piece never
//!   has whitespace in its first two characters together (` ?` then punctuation), a whitespace
//!   piece has only whitespace.
//!
//! ASCII text goes 64 bytes at a time through `blocks.rs` (`code_lines_block_starts`: the line
//! starts first, then o200k's block rules on the other bytes); this piece function does the
//! rest. The equality of both with the regex is checked by fuzzing in the tests.

use super::chars::*;
use super::handwritten::o200k_piece;

/// `[\p{L}\p{N}_]`
#[inline(always)]
fn is_word(c: Ch) -> bool {
    c.cp == b'_' as u32 || is_letter(c.cat) || is_number(c.cat)
}

/// End of the run of `[\p{L}\p{N}_]` at `i`.
#[inline(always)]
fn word_run(t: &Text, mut i: usize) -> usize {
    let b = t.bytes;
    while i < b.len() {
        let x = b[i];
        if x < 0x80 {
            if !(x.is_ascii_alphanumeric() || x == b'_') {
                break;
            }
            i += 1;
        } else {
            let c = char_at(b, i);
            if !is_word(c) {
                break;
            }
            i += c.len as usize;
        }
    }
    i
}

/// The line-start alternative at a CR or LF at `i`.
#[inline(always)]
fn line_start(t: &Text, i: usize) -> usize {
    let b = t.bytes;
    let n = b.len();
    let mut k = i;
    while k < n && (b[k] == b'\r' || b[k] == b'\n') {
        k += 1;
    }
    // `[^\S\r\n]*`: whitespace other than CR/LF
    while k < n {
        let x = b[k];
        if x < 0x80 {
            if x == b'\r' || x == b'\n' || bclass(x) & B_SPACE == 0 {
                break;
            }
            k += 1;
        } else {
            let c = char_at(b, k);
            if !is_space(c.cat) {
                break;
            }
            k += c.len as usize;
        }
    }
    let Some(c) = t.at(k) else { return k };
    // `X?Y+ ?`: a word, or one punctuation character and a word (`_` is in both classes: the
    // word run from it ends where the run after it would)
    let word_from = if is_word(c) {
        Some(k)
    } else if is_punct(c.cat) {
        let next = k + c.len as usize;
        match t.at(next) {
            Some(d) if is_word(d) => Some(next),
            _ => None,
        }
    } else {
        None // (a CR/LF: an empty line's indentation ends here)
    };
    match word_from {
        Some(w) => {
            let e = word_run(t, w);
            if e < n && b[e] == b' ' {
                e + 1
            } else {
                e
            }
        }
        // `X+`
        None if is_punct(c.cat) => t.run(k, is_punct),
        None => k,
    }
}

/// `0[xX][0-9A-Fa-f]+|0[bB][01]+` at `i` (where `b[i] == b'0'`), if it matches.
#[inline(always)]
fn number_prefix(b: &[u8], i: usize) -> Option<usize> {
    let digit: fn(&u8) -> bool = match b.get(i + 1) {
        Some(b'x' | b'X') => |d| d.is_ascii_hexdigit(),
        Some(b'b' | b'B') => |d| *d == b'0' || *d == b'1',
        _ => return None,
    };
    let run = b[i + 2..].iter().take_while(|d| digit(d)).count();
    (run > 0).then_some(i + 2 + run)
}

/// The end of the piece at `i`.
#[inline(always)]
pub fn code_lines_piece(t: &Text, i: usize) -> usize {
    let b = t.bytes;
    match b[i] {
        b'\r' | b'\n' => return line_start(t, i),
        b'0' => {
            if let Some(e) = number_prefix(b, i) {
                return e;
            }
        }
        _ => {}
    }
    let e = o200k_piece(t, i);
    // a punctuation piece whose `[\r\n/]*` tail reached a line break ends at the line break
    if matches!(b[e - 1], b'\r' | b'\n' | b'/') {
        let first = char_at(b, i);
        let second = i + first.len as usize;
        let whitespace_piece =
            is_space(first.cat) && (second >= e || is_space(char_at(b, second).cat));
        if !whitespace_piece {
            if let Some(k) = b[i..e].iter().position(|&x| x == b'\r' || x == b'\n') {
                return i + k;
            }
        }
    }
    e
}

/// Call `f` with each piece of `text`, in order: 64 bytes at a time where the text is ASCII
/// ([`super::blocks::code_lines_block_starts`]), piece by piece elsewhere.
///
/// (Piece by piece only, 10 MB of Python split at 370 MB/s, C++ at 400 and English at 385,
/// against 860-890 for o200k's blocks. Blocks that only cut o200k's at each line break and
/// number prefix gained nothing: lines are shorter than a block.)
#[inline]
pub fn for_each_code_lines_piece<'t>(text: &'t str, f: impl FnMut(&'t str)) {
    super::blocks::for_each_piece(
        text,
        super::blocks::code_lines_block_starts,
        code_lines_piece,
        f,
    )
}
