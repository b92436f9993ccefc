//! o200k pieces of ASCII text, 64 bytes at a time.
//!
//! The general scanner ([`super::handwritten::o200k_piece`]) finds one piece at a time, and
//! which of the pattern's alternatives applies changes from piece to piece in a way branch
//! prediction cannot follow. Here the bytes of a block are first sorted into classes (one bit
//! mask per class, from SSE2 compares), then the starts of all the block's pieces are worked
//! out together with shifts, ands and carries, and the pieces are handed out from the mask of
//! starts. Blocks with non-ASCII bytes are cut short before them; anything the block cannot
//! decide is left to the general scanner.
//!
//! Where pieces start in ASCII text (`P` = `[^\r\n\p{L}\p{N}]`, the optional first byte of a
//! word):
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
//! Equality with the general scanner is checked at every piece of random texts in the tests.

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

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn classify(b: &[u8]) -> Masks {
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

/// The bits of the runs of `x` that contain a bit of `seeds`, from the seed to the run's end
/// (at most one seed per run; `seeds` within `x`).
#[inline(always)]
fn fill(x: u64, seeds: u64) -> u64 {
    x & (x ^ x.wrapping_add(seeds))
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

/// `(starts, limit, high_end)` for the 64 bytes at `b[..64]`, where a piece starts at byte 0:
/// bit `k` of `starts` is set where a piece starts; the pieces between consecutive starts up to
/// `limit` (inclusive) are exact (`limit` is 0 when the block decides nothing); `high_end` is
/// the offset after the block's last non-ASCII byte (0 if none).
#[inline(always)]
pub fn o200k_block_starts(b: &[u8]) -> (u64, u32, u32) {
    let m = classify(b);
    let letters = m.upper | m.lower;
    // -- how far the block decides: not into the run that reaches its end, nor into the ASCII
    //    run before its first non-ASCII byte (which could continue it)
    let mut limit = run_start(class_of(&m, 63), 63);
    if m.high != 0 {
        let h = m.high.trailing_zeros();
        if h == 0 {
            return (1, 0, 64 - m.high.leading_zeros());
        }
        limit = limit.min(run_start(class_of(&m, h - 1), h - 1));
    }
    // -- symbols and their `[\r\n/]*` tails
    let p_start = m.punct & !(m.punct << 1);
    let p_end = m.punct & !(m.punct >> 1);
    let tail_bytes = m.crlf | m.slash;
    let seeds = (p_end << 1) & m.crlf;
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
    let after_tail = (tail << 1) & !tail;
    // symbol runs that start a piece: not after a space, not in a tail
    let p_piece = p_start & !(m.blank << 1) & !tail;
    // -- whitespace outside tails
    let ws = m.space & !tail;
    let ws_start = ws & !(ws << 1);
    let ws_last = ws & !(ws >> 1);
    let mut starts = ws_start | (ws_last & !m.crlf);
    // after the last CR/LF of a run, when more whitespace follows
    let mut nl = ws & m.crlf;
    while nl != 0 {
        let k = nl.trailing_zeros();
        let end = k + (!(ws >> k)).trailing_zeros(); // end of the run
        let in_run = if end >= 64 { !0u64 } else { (1u64 << end) - 1 };
        let last = 63 - (nl & in_run).leading_zeros();
        if last + 1 < end {
            starts |= 1u64 << (last + 1);
        }
        nl &= !in_run;
    }
    // -- letters
    let l_start = letters & !(letters << 1);
    // a symbol where a piece starts (also right after a tail) is the prefix of a word after it
    let p_prefix = (p_piece | after_tail) & m.punct;
    let prefixed = (((m.space & !m.crlf) | p_prefix) << 1) & l_start;
    starts |= (l_start & !prefixed) | (m.upper & (m.lower << 1));
    // -- digits: each run's start, then every third digit
    let d_start = m.digit & !(m.digit << 1);
    let d3 = m.digit & (m.digit << 1) & (m.digit << 2);
    let mut g = d_start;
    starts |= d_start;
    while g != 0 {
        g = (g << 3) & d3;
        starts |= g;
    }
    starts |= p_piece | after_tail | 1;
    // -- contractions after a letter
    let mut cand = m.apostrophe & (letters << 1);
    let mut after = 0; // end of the last contraction: an apostrophe there starts a new piece
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
        let (c1, c2) = (b[j as usize + 1] | 0x20, b[j as usize + 2] | 0x20);
        let end = if matches!(c1, b's' | b't' | b'm' | b'd') {
            j + 2
        } else if matches!((c1, c2), (b'r', b'e') | (b'v', b'e') | (b'l', b'l')) {
            j + 3
        } else {
            continue;
        };
        // `| 0x20` maps no other ASCII byte onto these letters; the bytes are below `limit`,
        // so ASCII
        starts &= !(((1u64 << end) - 1) & !((1u64 << j) - 1));
        starts |= 1u64 << end;
        after = end;
    }
    (starts, limit, 64 - m.high.leading_zeros())
}

/// Hand the o200k pieces of `text` to `f`, by blocks where the text is ASCII and by the general
/// scanner elsewhere.
#[inline(always)]
pub fn o200k_for_each_piece<'t>(text: &'t str, mut f: impl FnMut(&'t str)) {
    let t = Text::new(text);
    let b = text.as_bytes();
    let n = b.len();
    let mut i = 0;
    // no block is tried before this offset (the last one found nothing to decide)
    let mut next_block = 0;
    while i < n {
        if i >= next_block && i + 64 <= n {
            let (starts, limit, high_end) = o200k_block_starts(&b[i..i + 64]);
            // starts after byte 0, up to `limit`
            let mut s = starts & !1 & (2u64 << limit).wrapping_sub(1);
            if s != 0 {
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
            // nothing decided here: a long piece, or non-ASCII text, which the general scanner
            // goes past before the next try
            next_block = i + high_end.max(1) as usize;
        }
        let e = super::handwritten::o200k_piece(&t, i);
        debug_assert!(e > i && text.is_char_boundary(e));
        // SAFETY: the scanner advances by whole characters and never past the end.
        f(unsafe { text.get_unchecked(i..e) });
        i = e;
    }
}
