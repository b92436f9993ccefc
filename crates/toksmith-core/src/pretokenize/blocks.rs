//! Pieces of ASCII text, 64 bytes at a time, for the named patterns.
//!
//! The piece-at-a-time scanners (`handwritten.rs`) find one piece, then the next, and which of
//! the pattern's alternatives applies changes from piece to piece in a way branch prediction
//! cannot follow. Here the bytes of a block are first sorted into classes (one bit mask per
//! class, from SSE2 compares), then the starts of all the block's pieces are worked out
//! together with shifts, ands and carries, and the pieces are handed out from the mask of
//! starts. A block decides up to the run that reaches its end and up to the ASCII run before
//! its first non-ASCII byte (either could go on past what it sees); the piece-at-a-time scanner
//! does the rest. Byte 0 of a block is always a piece start (no pattern looks behind).
//!
//! Where o200k's pieces start in ASCII text (`P` = `[^\r\n\p{L}\p{N}]`, the optional first
//! byte of a word):
//! - letters: where a lower-case letter is followed by an upper-case one, and where a run of
//!   letters begins, unless the byte before is its prefix: whitespace other than CR/LF always
//!   is (it is the last byte of its run, and `\s+(?!\S)` leaves it to the word), and a lone
//!   `[^\s\p{L}\p{N}]` byte is when a piece starts at it (it does not follow a space, which
//!   would take it, and is not part of an earlier piece's `[\r\n/]*` tail);
//! - digits: where a run begins, then every third digit;
//! - other symbols: where a run begins, unless a space comes just before (the space starts
//!   ` ?[^\s\p{L}\p{N}]+`) or the run is part of the `[\r\n/]*` tail of a run before it (a
//!   tail is the run of CR, LF and `/` right after a run of symbols that ends in CR or LF);
//!   and right after each tail;
//! - whitespace (not in a tail): where a run begins, after its last CR/LF when more whitespace
//!   follows (`\s*[\r\n]+`), and at its last byte unless that is CR/LF (`\s+(?!\S)`);
//! - contractions (`'s`, `'t`, `'m`, `'d`, `'re`, `'ve`, `'ll` in any case, after a letter)
//!   join the word before them, and a piece starts right after them.
//!
//! Cromwell's line split (`code_lines_block_starts`) works out its line-start pieces first and
//! applies o200k's rules, without tails, to the bytes outside them.
//!
//! cl100k's family differs in three places: letters are not split by case, a tail is
//! `[\r\n]*`, and a contraction is a piece of its own wherever a piece starts at its
//! apostrophe. GPT-2's pieces are whole runs of letters, digits or symbols, each with the space
//! before it as its only possible prefix, whitespace runs but their last byte, and
//! case-sensitive contractions as pieces of their own.
//!
//! Equality with the piece-at-a-time scanners (and so with the regex) is checked on every piece
//! of random texts in the tests, and each block's starts against the pieces' starts.

use super::chars::Text;

/// Class masks of 64 bytes (bit `k` = byte `k` of the block).
struct Masks {
    upper: u64,
    lower: u64,
    digit: u64,
    /// `\s`: `\t\n\v\f\r` and space
    space: u64,
    /// `\r`, `\n`
    crlf: u64,
    /// `[^\s\p{L}\p{N}]` (ASCII)
    punct: u64,
    /// bytes >= 0x80
    high: u64,
    /// the space character
    blank: u64,
    apostrophe: u64,
    slash: u64,
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify(b: &[u8]) -> Masks {
    use core::arch::x86_64::*;
    assert!(b.len() >= 64);
    let mut m = [0u64; 9];
    for k in 0..4 {
        // SAFETY: SSE2 is part of the x86_64 baseline; the load reads `b[16k..16k + 16]`,
        // inside the 64 bytes checked above.
        let c = unsafe {
            let v = _mm_loadu_si128(b.as_ptr().add(16 * k) as *const __m128i);
            // `x - lo` (unsigned) < `n` iff `x` is in `lo..lo + n`; adding 0x80 turns the
            // unsigned comparison into the signed one SSE2 has.
            let range = |lo: u8, n: u8| {
                let x = _mm_add_epi8(v, _mm_set1_epi8(0x80u8.wrapping_sub(lo) as i8));
                _mm_movemask_epi8(_mm_cmplt_epi8(x, _mm_set1_epi8((0x80u8 + n) as i8))) as u16
            };
            let eq = |c: u8| _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8))) as u16;
            let blank = eq(b' ');
            [
                range(b'A', 26),
                range(b'a', 26),
                range(b'0', 10),
                range(b'\t', 5) | blank,
                eq(b'\r') | eq(b'\n'),
                _mm_movemask_epi8(v) as u16,
                blank,
                eq(b'\''),
                eq(b'/'),
            ]
        };
        for (acc, x) in m.iter_mut().zip(c) {
            *acc |= (x as u64) << (16 * k);
        }
    }
    Masks::from(m)
}

/// [`classify`] byte by byte (the version for other architectures; on x86_64 the tests check
/// the SSE2 one against it).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn classify_bytes(b: &[u8]) -> Masks {
    let mut m = [0u64; 9];
    for (k, &x) in b[..64].iter().enumerate() {
        let bits = [
            x.is_ascii_uppercase(),
            x.is_ascii_lowercase(),
            x.is_ascii_digit(),
            matches!(x, b'\t'..=b'\r' | b' '),
            matches!(x, b'\r' | b'\n'),
            x >= 0x80,
            x == b' ',
            x == b'\'',
            x == b'/',
        ];
        for (acc, bit) in m.iter_mut().zip(bits) {
            *acc |= (bit as u64) << k;
        }
    }
    Masks::from(m)
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn classify(b: &[u8]) -> Masks {
    classify_bytes(b)
}

impl Masks {
    /// The masks with the bytes of `cover` in no class.
    #[inline(always)]
    fn without(&self, cover: u64) -> Masks {
        let keep = !cover;
        Masks {
            upper: self.upper & keep,
            lower: self.lower & keep,
            digit: self.digit & keep,
            space: self.space & keep,
            crlf: self.crlf & keep,
            punct: self.punct & keep,
            high: self.high & keep,
            blank: self.blank & keep,
            apostrophe: self.apostrophe & keep,
            slash: self.slash & keep,
        }
    }
}

impl From<[u64; 9]> for Masks {
    /// From the masks of upper, lower, digit, whitespace, CR/LF, non-ASCII, space, apostrophe
    /// and slash bytes (the symbols are what is left).
    fn from(m: [u64; 9]) -> Masks {
        let [upper, lower, digit, space, crlf, high, blank, apostrophe, slash] = m;
        Masks {
            upper,
            lower,
            digit,
            space,
            crlf,
            punct: !(upper | lower | digit | space | high),
            high,
            blank,
            apostrophe,
            slash,
        }
    }
}

/// The bits of the runs of `x` that contain a bit of `seeds`, from the seed to the run's end
/// (at most one seed per run; `seeds` within `x`).
#[inline(always)]
fn fill(x: u64, seeds: u64) -> u64 {
    x & (x ^ x.wrapping_add(seeds))
}

/// Bits `from..to` (`from <= to <= 64`).
#[inline(always)]
fn span(from: u32, to: u32) -> u64 {
    let below = |k: u32| if k >= 64 { !0u64 } else { (1u64 << k) - 1 };
    below(to) & !below(from)
}

/// The end of the run of `x`'s set bits from bit `from` (`from` itself when it is clear; 64
/// when the run reaches the block's end).
#[inline(always)]
fn run_end(x: u64, from: u32) -> u32 {
    if from >= 64 {
        64
    } else {
        from + (!(x >> from)).trailing_zeros()
    }
}

/// Start of the run of `m`'s set bits that contains bit `k` (bit `k` set).
#[inline(always)]
fn run_start(m: u64, k: u32) -> u32 {
    // the highest clear bit below k, plus one
    let below = !m & (1u64 << k).wrapping_sub(1);
    64 - below.leading_zeros()
}

/// The mask of the run class of bit `k` (letters, digits, whitespace, other ASCII, non-ASCII).
#[inline(always)]
fn class_of(m: &Masks, k: u32) -> u64 {
    let bit = 1u64 << k;
    let letters = m.upper | m.lower;
    if letters & bit != 0 {
        letters
    } else if m.digit & bit != 0 {
        m.digit
    } else if m.space & bit != 0 {
        m.space
    } else if m.high & bit != 0 {
        m.high
    } else {
        m.punct
    }
}

/// How far a block decides, and where its non-ASCII bytes end: `(limit, high_end)`. Pieces
/// are decided up to the start of the run that reaches the block's end, and of the ASCII run
/// before the first non-ASCII byte (either could go on past what the block sees); `high_end` is
/// the offset after the last non-ASCII byte (0 if none).
#[inline(always)]
fn reach(m: &Masks) -> (u32, u32) {
    let mut limit = run_start(class_of(m, 63), 63);
    if m.high != 0 {
        let h = m.high.trailing_zeros();
        limit = if h == 0 {
            0
        } else {
            limit.min(run_start(class_of(m, h - 1), h - 1))
        };
    }
    (limit, 64 - m.high.leading_zeros())
}

/// Starts of the pieces of whitespace runs (`ws`, the whitespace outside symbol tails) for the
/// patterns with `\s*[\r\n]`: a run's start, the byte after its last CR/LF when more
/// whitespace follows, and its last byte unless that is CR/LF (`\s+(?!\S)` leaves it to what
/// follows).
#[inline(always)]
fn ws_starts_newline(ws: u64, crlf: u64) -> u64 {
    let ws_start = ws & !(ws << 1);
    let ws_last = ws & !(ws >> 1);
    let mut starts = ws_start | (ws_last & !crlf);
    let mut nl = ws & crlf;
    while nl != 0 {
        let k = nl.trailing_zeros();
        let end = run_end(ws, k);
        let in_run = span(0, end);
        let last = 63 - (nl & in_run).leading_zeros();
        if last + 1 < end {
            starts |= 1u64 << (last + 1);
        }
        nl &= !in_run;
    }
    starts
}

/// The start of each run of digits, then every `group`-th digit of it (`\p{N}{1,group}`), by
/// doubling: `w` holds the digits that end a run of `step` digits, and each round adds the
/// starts `step` further on, then doubles `step` (five rounds cover a block of digits, where a
/// loop of one step per group took 21 rounds).
#[inline(always)]
fn digit_starts(digit: u64, group: u32) -> u64 {
    let mut w = digit;
    for k in 1..group {
        w &= digit << k;
    }
    let mut g = digit & !(digit << 1);
    let mut step = group;
    while step < 64 {
        g |= (g << step) & w;
        w &= w << step;
        step *= 2;
    }
    g
}

/// The end of the contraction `'s`, `'t`, `'m`, `'d`, `'re`, `'ve` or `'ll` at byte `j` of `b`
/// (an apostrophe; `b[j + 1]` and `b[j + 2]` ASCII), any case when `fold`.
#[inline(always)]
fn contraction_end(b: &[u8], j: u32, fold: bool) -> Option<u32> {
    let f = if fold { 0x20 } else { 0 }; // `| 0x20` folds only A-Z onto a-z among ASCII
    let (c1, c2) = (b[j as usize + 1] | f, b[j as usize + 2] | f);
    if matches!(c1, b's' | b't' | b'm' | b'd') {
        Some(j + 2)
    } else if matches!((c1, c2), (b'r', b'e') | (b'v', b'e') | (b'l', b'l')) {
        Some(j + 3)
    } else {
        None
    }
}

/// When the run that stops the block at `limit` is digits, its groups are still known: they
/// are counted from the run's start, wherever it ends. Returns the limit moved to the run's
/// last group start.
#[inline(always)]
fn past_digits(starts: u64, digit: u64, limit: u32) -> u32 {
    if limit < 64 && (digit >> limit) & 1 != 0 {
        let groups = starts & fill(digit, 1u64 << limit);
        63 - groups.leading_zeros()
    } else {
        limit
    }
}

/// No piece starts in `from..end`, one starts at `end` (the end of a contraction).
#[inline(always)]
fn contraction_piece(starts: u64, from: u32, end: u32) -> u64 {
    (starts & !(((1u64 << end) - 1) & !((1u64 << from) - 1))) | (1u64 << end)
}

/// Contractions that are pieces of their own (cl100k's family, GPT-2): each apostrophe of
/// `cand` (where pieces start) that a contraction follows gets no piece start inside the
/// contraction and one right after it (an apostrophe there is in `cand` already: it starts a
/// symbol run after a letter). Returns the starts and the limit, cut at an apostrophe whose
/// letters lie beyond it.
#[inline(always)]
fn own_contractions(
    b: &[u8],
    mut starts: u64,
    mut cand: u64,
    mut limit: u32,
    fold: bool,
) -> (u64, u32) {
    while cand != 0 {
        let j = cand.trailing_zeros();
        cand &= cand - 1;
        if j + 2 >= limit {
            limit = limit.min(j);
            break;
        }
        if let Some(end) = contraction_end(b, j, fold) {
            starts = contraction_piece(starts, j + 1, end);
        }
    }
    (starts, limit)
}

/// Contractions that join the word before them (o200k): each apostrophe of `cand` (after a
/// letter) that a contraction follows gets no piece start inside the contraction and one
/// right after it; an apostrophe right at the end of the last one starts a new piece. A
/// contraction followed by a byte of `cut` stops the block before it (the piece after it
/// starts anew there, which the block's rules do not see). Returns the starts and the limit.
#[inline(always)]
fn joined_contractions(
    b: &[u8],
    mut starts: u64,
    mut cand: u64,
    mut limit: u32,
    cut: u64,
) -> (u64, u32) {
    let mut after = 0; // end of the last contraction
    while cand != 0 {
        let j = cand.trailing_zeros();
        cand &= cand - 1;
        if j == after {
            continue;
        }
        if j + 2 >= limit {
            limit = limit.min(j.saturating_sub(1));
            break;
        }
        if let Some(end) = contraction_end(b, j, true) {
            if end < 64 && (cut >> end) & 1 != 0 {
                limit = limit.min(j.saturating_sub(1));
                break;
            }
            starts = contraction_piece(starts, j, end);
            after = end;
        }
    }
    (starts, limit)
}

/// o200k's `[\r\n/]*` tails after the runs of `punct` (the symbols of `?[^\s\p{L}\p{N}]+`):
/// a tail is the run of CR, LF and `/` right after a symbol run that ends in CR or LF.
#[inline(always)]
fn o200k_tails(punct: u64, crlf: u64, slash: u64) -> u64 {
    let p_end = punct & !(punct >> 1);
    let tail_bytes = crlf | slash;
    let seeds = (p_end << 1) & crlf;
    let mut tail = fill(tail_bytes, seeds);
    if seeds & !tail != 0 {
        // two tails in one run of CR/LF and `/` (a symbol run inside a tail): one at a time
        tail = 0;
        let mut s = seeds;
        while s != 0 {
            let bit = s & s.wrapping_neg();
            if tail & bit == 0 {
                tail |= fill(tail_bytes, bit);
            }
            s ^= bit;
        }
    }
    tail
}

/// Block result: `(starts, limit, high_end)` for 64 bytes where a piece starts at byte 0: bit
/// `k` of `starts` is set where a piece starts; the pieces between consecutive starts up to
/// `limit` (inclusive) are exact (`limit` is 0 when the block decides nothing); `high_end` is the
/// offset after the block's last non-ASCII byte (0 if none).
pub type Block = (u64, u32, u32);

/// o200k's piece starts in `b[..64]` (see the module notes).
#[inline(always)]
pub fn o200k_block_starts(b: &[u8]) -> Block {
    let m = classify(b);
    let (limit, high_end) = reach(&m);
    if limit == 0 && m.digit & 1 == 0 {
        return (1, 0, high_end); // (a block of digits still has its groups)
    }
    let tail = o200k_tails(m.punct, m.crlf, m.slash);
    let (starts, limit) = o200k_rules(b, &m, tail, limit);
    (starts, limit, high_end)
}

/// o200k's piece starts in `b[..64]` from its class masks `m` and the `[\r\n/]*` tails of its
/// symbol runs (`tail`; none in Cromwell's line split), with the limit moved past a digit run
/// and before a contraction it cannot decide.
#[inline(always)]
fn o200k_rules(b: &[u8], m: &Masks, tail: u64, limit: u32) -> (u64, u32) {
    let letters = m.upper | m.lower;
    // -- symbols: runs that start a piece are not after a space, not in a tail
    let p_start = m.punct & !(m.punct << 1);
    let after_tail = (tail << 1) & !tail;
    let p_piece = p_start & !(m.blank << 1) & !tail;
    let mut starts = ws_starts_newline(m.space & !tail, m.crlf);
    // -- letters: a symbol where a piece starts (also right after a tail) is the prefix of a
    //    word after it, and so is whitespace other than CR/LF
    let l_start = letters & !(letters << 1);
    let p_prefix = (p_piece | after_tail) & m.punct;
    let prefixed = (((m.space & !m.crlf) | p_prefix) << 1) & l_start;
    starts |= (l_start & !prefixed) | (m.upper & (m.lower << 1));
    starts |= digit_starts(m.digit, 3) | p_piece | after_tail | 1;
    let limit = past_digits(starts, m.digit, limit);
    // -- contractions after a letter join the word
    joined_contractions(b, starts, m.apostrophe & (letters << 1), limit, 0)
}

/// Cromwell's line-split piece starts (`code_lines_scanner.rs`) in `b[..64]`.
///
/// Line starts first. A piece starts at each whitespace run whose first byte is CR/LF (no
/// other alternative takes a line break after a byte that is not whitespace, and a punctuation
/// run's tail here is `/*`, not o200k's `[\r\n/]*`). Such a run is a chain of line-start
/// pieces, one per run of CR/LF with the horizontal whitespace after it; the last one goes on
/// with the next line's first word (`X?Y+ ?`) or punctuation run (`X+`). A group that reaches
/// the block's end or a non-ASCII byte is not decided here (the limit stops at its piece).
/// When a word's space was taken and a line break follows, another line start begins there.
///
/// Then o200k's rules without tails, on the classes with the bytes of the line-start pieces
/// cleared: a byte of no class before a piece start makes it a start as byte 0 of a block is
/// (no prefix, no run going on), which is what the line-start piece ending there leaves. A
/// piece at a `0` followed by `x`, `X`, `b` or `B` (a number prefix, which o200k's rules do not
/// know) stops the limit there.
#[inline(always)]
pub fn code_lines_block_starts(b: &[u8]) -> Block {
    let m = classify(b);
    let (mut limit, high_end) = reach(&m);
    if limit == 0 && m.digit & 1 == 0 {
        return (1, 0, high_end); // (a block of digits still has its groups)
    }
    let bit = |x: u64, k: u32| k < 64 && (x >> k) & 1 != 0;
    // -- line-start pieces: their bytes (`cover`), their starts and the starts after them
    let mut seeds = m.space & !(m.space << 1) & m.crlf;
    let mut cover = 0u64;
    let mut forced = 0u64;
    if seeds != 0 {
        let word = m.upper | m.lower | m.digit | eq_mask(b, b'_');
        let hspace = m.space & !m.crlf;
        // the end of the group `X?Y+ ?|X+` at `k`, if the block decides it
        let group_end = |k: u32| -> Option<u32> {
            let from = if bit(word, k) {
                k
            } else if bit(m.punct, k) && k + 1 < 64 && !bit(m.high, k + 1) {
                if bit(word, k + 1) {
                    k + 1
                } else {
                    let e = run_end(m.punct, k);
                    return (e < 64 && !bit(m.high, e)).then_some(e);
                }
            } else {
                return None; // (a non-ASCII byte, or the block's end)
            };
            let e = run_end(word, from);
            if e >= 64 || bit(m.high, e) {
                None
            } else if b[e as usize] == b' ' {
                (e + 1 < 64).then_some(e + 1)
            } else {
                Some(e)
            }
        };
        while seeds != 0 {
            let mut s = seeds.trailing_zeros();
            let k = loop {
                let h = run_end(hspace, run_end(m.crlf, s));
                if !bit(m.crlf, h) {
                    break h;
                }
                // a line start of only its line breaks and indentation
                forced |= 1 << s;
                cover |= span(s, h);
                s = h;
            };
            let Some(e) = group_end(k) else {
                limit = limit.min(s);
                break;
            };
            forced |= (1 << s) | (1 << e);
            cover |= span(s, e);
            seeds &= !span(0, e);
            if bit(m.crlf, e) {
                seeds |= 1 << e; // (after a word's space)
            }
        }
    }
    // -- o200k's rules, no tails, on the bytes outside the line-start pieces (their own
    //    starts there: bit 0 only, which is in `forced` when a line start covers it)
    let rest = m.without(cover);
    let (starts, mut limit) = o200k_rules(b, &rest, 0, limit);
    let starts = starts | forced;
    let digit = rest.digit;
    // -- number prefixes
    if digit != 0 {
        let mut zeros = starts & digit & eq_mask(b, b'0') & (2u64 << limit).wrapping_sub(1);
        while zeros != 0 {
            let j = zeros.trailing_zeros();
            zeros &= zeros - 1;
            if j + 1 >= 64 || matches!(b[j as usize + 1] | 0x20, b'x' | b'b') {
                limit = limit.min(j);
                break;
            }
        }
    }
    (starts, limit, high_end)
}

/// The stand-in of o200k's letters that are in both its upper and its lower class
/// (`\p{Lm}\p{Lo}`) in the stand-in text of `standin.rs`.
pub const O200K_BOTH: u8 = 0x80;
/// The stand-in of o200k's marks (`\p{M}`: in both letter classes, and also
/// `[^\s\p{L}\p{N}]`).
pub const O200K_MARK: u8 = 0x81;

/// Bit `k` set where byte `k` of `b[..64]` is `c`.
#[inline(always)]
fn eq_mask(b: &[u8], c: u8) -> u64 {
    let mut m = 0u64;
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::*;
        assert!(b.len() >= 64);
        for k in 0..4 {
            // SAFETY: SSE2 is part of the x86_64 baseline; the load reads `b[16k..16k + 16]`,
            // inside the 64 bytes checked above.
            let x = unsafe {
                let v = _mm_loadu_si128(b.as_ptr().add(16 * k) as *const __m128i);
                _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8))) as u16
            };
            m |= (x as u64) << (16 * k);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    for (k, &x) in b[..64].iter().enumerate() {
        m |= ((x == c) as u64) << k;
    }
    m
}

/// [`o200k_standin_block_upto`] of a full block (the tests).
#[cfg(test)]
pub fn o200k_standin_block_starts(b: &[u8]) -> Block {
    o200k_standin_block_upto(b, 63)
}

/// o200k's piece starts in 64 bytes of stand-in text (`standin.rs`: one byte per character;
/// ASCII as it is, other letters `A` (`\p{Lu}\p{Lt}`) or `a` (`\p{Ll}`), [`O200K_BOTH`],
/// [`O200K_MARK`], numbers `0`, whitespace a tab, anything else `!`), where no byte is
/// undecided. The rules of [`o200k_block_starts`], with the "both" letters and the marks:
///
/// - Marks. A run of marks right after a symbol (not a tail's `/`) is `[^\s\p{L}\p{N}]`
///   when that symbol is inside a symbol piece (` ?[^\s\p{L}\p{N}]+` goes on through it);
///   it is a word (a letter) when the symbol is where a piece starts (the symbol is then the
///   word's prefix, `P? U* L+`: its `L+` takes the marks). Symbols where a piece starts, in a
///   run of symbols and such marks: the run's first, unless a space is before it (the space's
///   piece takes the whole run); then each symbol after a mark run that was a word; the first
///   symbol not followed by a mark takes the rest of the run as one piece (its marks are
///   symbols). Marks anywhere else (after a letter, a digit, whitespace, CR/LF, a tail) are
///   letters: a word's prefix `P` that a word follows gives the piece `P` + that word,
///   exactly as a mark taken as a letter of the word does.
/// - Letters (`Up` = `\p{Lu}\p{Lt}`, `Lw` = `\p{Ll}`, `BM` = "both" letters and marks that
///   are letters; `U` = `Up|BM`, `L` = `Lw|BM`): from a piece start in a run of letters, `U*`
///   runs to the first `Lw`, then `L+` to the next `Up`, where the next piece starts. So
///   each maximal run of `L` is `L+` from its first `Lw` on (the `BM` before that `Lw` are
///   the `U*` of the piece), and a piece starts at an `Up` right after such a part. Where
///   `U*` reaches the end of the run of letters with no `Lw` (`Up` and `BM` only), `U*`
///   gives back its last `BM` to `L+`: a piece starts after that `BM` when `Up` letters
///   follow it to the run's end.
/// - A contraction followed by a "both" letter or a mark: cut (the piece after it starts anew
///   there, which the run's rules do not see; the piece-at-a-time scanner decides it).
///
/// The text ends after byte `last` of the block (63 in a full block; else the bytes after it,
/// any stand-ins, are padding): the run at `last` limits what is decided, as the run at byte
/// 63 does in a full block (what comes after a block is unknown to it, so the padding changes
/// nothing up to the limit).
#[inline(always)]
pub fn o200k_standin_block_upto(b: &[u8], last: u32) -> Block {
    let m = classify(b);
    let mk = eq_mask(b, O200K_MARK);
    let both = m.high & !mk;
    // `[^\s\p{L}\p{N}]` but the marks
    let sym = m.punct;
    // -- marks after symbols, with the tails after symbol runs (a tail's `/` starts nothing)
    let tail0 = o200k_tails(sym, m.crlf, m.slash);
    let s_nt = sym & !tail0;
    let pe = s_nt | fill(mk, mk & (s_nt << 1));
    let head = pe & !(pe << 1);
    let breaker = s_nt & !(mk >> 1); // a symbol not followed by a mark
    let x = pe & !breaker;
    let first_breaker = breaker & (head | (fill(x, head & x) << 1));
    let absorbed = fill(pe, head & (m.blank << 1)) | fill(pe, first_breaker);
    let sym_marks = mk & absorbed;
    let letters = m.upper | m.lower | both | (mk & !sym_marks);
    let punct = sym | sym_marks;
    // -- how far the block decides
    let top = 1u64 << last;
    let mut limit = if letters & top != 0 {
        let l = run_start(letters, last);
        if pe & top != 0 {
            l.min(run_start(pe, last))
        } else {
            l
        }
    } else if m.digit & top != 0 {
        run_start(m.digit, last)
    } else if m.space & top != 0 {
        run_start(m.space, last)
    } else {
        run_start(sym | mk, last)
    };
    if limit == 0 && m.digit & 1 == 0 {
        return (1, 0, 0); // (a block of digits still has its groups)
    }
    // -- symbols and their tails (marks that are symbols end symbol runs before CR/LF too)
    let mut tail = tail0;
    if sym_marks & (m.crlf >> 1) != 0 {
        tail = o200k_tails(punct, m.crlf, m.slash);
        if (tail ^ tail0) & m.slash != 0 {
            // a new tail with a `/`, which the marks above took for a symbol: decide up to it
            limit = limit.min((tail & !tail0).trailing_zeros());
        }
    }
    let after_tail = (tail << 1) & !tail;
    let p_start = punct & !(punct << 1);
    let p_piece = p_start & !(m.blank << 1) & !tail;
    let mut starts = ws_starts_newline(m.space & !tail, m.crlf);
    // -- words: prefixes, then the `U* L+` / `U+` splits
    let l_start = letters & !(letters << 1);
    let p_prefix = (p_piece | after_tail) & sym;
    let prefixed = (((m.space & !m.crlf) | p_prefix) << 1) & l_start;
    let bm = letters & !(m.upper | m.lower);
    let l = m.lower | bm;
    let ls = l & !(l << 1);
    let first_lw = m.lower & (ls | (fill(bm, ls & bm) << 1));
    let l_part = fill(l, first_lw);
    starts |= (l_start & !prefixed) | (m.upper & (l_part << 1));
    let mut given = m.upper & !(m.upper << 1) & ((bm & !l_part) << 1);
    while given != 0 {
        let p = given.trailing_zeros();
        given &= given - 1;
        let q = run_end(m.upper, p); // the end of the `Up` run
        if q >= 64 || (letters >> q) & 1 == 0 {
            starts |= 1u64 << p;
        }
    }
    starts |= digit_starts(m.digit, 3) | p_piece | after_tail | 1;
    // (the digit run at `last` may go on into the padding, with group starts of its own)
    limit = past_digits(starts, m.digit, limit).min(last);
    // -- contractions after a word join it (one followed by a "both" letter or a mark: cut)
    let (starts, limit) =
        joined_contractions(b, starts, m.apostrophe & (letters << 1), limit, m.high);
    (starts, limit, 0)
}

/// The piece starts of cl100k's family (cl100k, nanochat, rustbpe's default; `group` digits
/// at most per piece) in `b[..64]`: as o200k's, but letters are not split by case, the tail of
/// a symbol run is `[\r\n]*`, and a contraction is a piece of its own wherever a piece starts
/// at its apostrophe.
#[inline(always)]
pub fn cl100k_block_starts(b: &[u8], group: u32) -> Block {
    let m = classify(b);
    let (limit, high_end) = reach(&m);
    if limit == 0 && m.digit & 1 == 0 {
        return (1, 0, high_end); // (a block of digits still has its groups)
    }
    let letters = m.upper | m.lower;
    let p_start = m.punct & !(m.punct << 1);
    let p_end = m.punct & !(m.punct >> 1);
    // a run of CR/LF right after a symbol run is its tail (one tail per run: no symbol inside)
    let tail = fill(m.crlf, (p_end << 1) & m.crlf);
    let after_tail = (tail << 1) & !tail;
    let p_piece = p_start & !(m.blank << 1);
    let mut starts = ws_starts_newline(m.space & !tail, m.crlf);
    let l_start = letters & !(letters << 1);
    let prefixed = (((m.space & !m.crlf) | p_piece) << 1) & l_start;
    starts |= (l_start & !prefixed) | digit_starts(m.digit, group) | p_piece | after_tail | 1;
    let limit = past_digits(starts, m.digit, limit);
    let (starts, limit) = own_contractions(b, starts, m.apostrophe & p_piece, limit, true);
    (starts, limit, high_end)
}

/// GPT-2's piece starts in `b[..64]`: a space is the prefix of the letter, digit or symbol
/// run after it (and nothing else is a prefix); runs are not cut into groups or by case;
/// whitespace pieces are a run but its last byte, then that byte (`\s+(?!\S)`, `\s`); a
/// case-sensitive contraction is a piece of its own wherever a piece starts at its apostrophe.
#[inline(always)]
pub fn gpt2_block_starts(b: &[u8]) -> Block {
    let m = classify(b);
    let (limit, high_end) = reach(&m);
    if limit == 0 {
        return (1, 0, high_end);
    }
    let letters = m.upper | m.lower;
    let runs =
        (letters & !(letters << 1)) | (m.digit & !(m.digit << 1)) | (m.punct & !(m.punct << 1));
    let prefixed = (m.blank << 1) & runs;
    let ws = m.space;
    let starts = (ws & !(ws << 1)) | (ws & !(ws >> 1)) | (runs & !prefixed) | 1;
    let (starts, limit) = own_contractions(b, starts, m.apostrophe & starts, limit, false);
    (starts, limit, high_end)
}

/// Hand the pieces of `text` to `f`: by blocks (`block`) where the text is ASCII, by the
/// general scanner (`piece`) elsewhere.
#[inline(always)]
pub fn for_each_piece<'t>(
    text: &'t str,
    block: impl Fn(&[u8]) -> Block,
    piece: impl Fn(&Text, usize) -> usize,
    mut f: impl FnMut(&'t str),
) {
    let t = Text::new(text);
    let b = text.as_bytes();
    let n = b.len();
    let mut i = 0;
    // no block is tried before this offset (the last one found nothing to decide), and how
    // much further the next failure on non-ASCII text pushes it (doubling, so that text with
    // little ASCII pays for few tries)
    let mut next_block = 0;
    let mut backoff = 0usize;
    while i < n {
        if i >= next_block && i + 64 <= n {
            let (starts, limit, high_end) = block(&b[i..i + 64]);
            // starts after byte 0, up to `limit`
            let mut s = starts & !1 & (2u64 << limit).wrapping_sub(1);
            if s != 0 {
                backoff = 0;
                let mut a = i;
                while s != 0 {
                    let e = i + s.trailing_zeros() as usize;
                    // SAFETY: block pieces start and end at ASCII bytes (non-ASCII bytes are
                    // beyond `limit`), so on character boundaries of `text`.
                    f(unsafe { text.get_unchecked(a..e) });
                    a = e;
                    s &= s - 1;
                }
                i = a;
                continue;
            }
            // nothing decided here: non-ASCII text, which the general scanner goes past before
            // the next try, or a run longer than the block (a long word, a line of digits cut
            // into groups of three): no block is tried again within these 64 bytes
            next_block = i + if high_end > 0 {
                backoff = (2 * backoff + 64).min(4096);
                high_end as usize + backoff
            } else {
                64
            };
        }
        let e = piece(&t, i);
        debug_assert!(e > i && text.is_char_boundary(e));
        // SAFETY: the scanners advance by whole characters and never past the end.
        f(unsafe { text.get_unchecked(i..e) });
        i = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(m: &Masks) -> [u64; 10] {
        [
            m.upper,
            m.lower,
            m.digit,
            m.space,
            m.crlf,
            m.punct,
            m.high,
            m.blank,
            m.apostrophe,
            m.slash,
        ]
    }

    #[test]
    fn classify_equals_byte_by_byte() {
        // every byte value at every position of a block
        let bytes: Vec<u8> = (0..256 + 64).map(|k| (k * 7 % 256) as u8).collect();
        for start in 0..256 {
            let b = &bytes[start..start + 64];
            assert_eq!(all(&classify(b)), all(&classify_bytes(b)), "{b:?}");
        }
        let m = classify(b" Ab9\t\n\r'/!\x0b\x0c\x1c\xc3\xa9 ________________________________________________________");
        assert_eq!(m.upper, 1 << 1);
        assert_eq!(m.space, (1 << 0) | (7 << 4) | (3 << 10) | (1 << 15));
        assert_eq!(m.high, 3 << 13);
        assert_eq!(m.punct & 0xffff, (1 << 7) | (1 << 8) | (1 << 9) | (1 << 12));
    }
}
