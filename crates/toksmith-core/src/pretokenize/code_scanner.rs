//! Hand-written scanner for [`super::CODE_PATTERN`], Cromwell's split (seed 000):
//! `[\r\n]+[^\S\r\n]*\S*|[^\S\r\n]*\S+|[^\S\r\n]+`.
//!
//! Every character is one of three classes: CR/LF (`N`), other whitespace (`H`, `\s` is
//! Unicode `White_Space`, as `char::is_whitespace`) and the rest (`S`). The alternatives come
//! down to: at `N`, the `N` run, the `H` run after it and the `S` run after that; at `H` or
//! `S`, the `H` run and the `S` run after it, or the `H` run alone when an `N` or the end
//! follows it (no alternative backtracks into something shorter). So a piece starts exactly
//! at an `N` after a character that is not `N`, and at an `H` after an `S`: a local rule, one
//! pass, no look-ahead.
//!
//! In UTF-8 only five lead bytes can start a non-ASCII whitespace character (U+0085, U+00A0,
//! U+1680, U+2000-U+205F, U+3000): every other byte of 0x80 and above is decided without
//! decoding. The equality with the regex is checked by fuzzing in the tests.

/// The class of each byte: 0 = `S` (continuation bytes and lead bytes of non-whitespace
/// characters included), 1 = `H`, 2 = `N`, 3 = a lead byte that must be decoded.
const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'\t' as usize] = 1;
    t[0x0b] = 1;
    t[0x0c] = 1;
    t[b' ' as usize] = 1;
    t[b'\r' as usize] = 2;
    t[b'\n' as usize] = 2;
    t[0xc2] = 3;
    t[0xe1] = 3;
    t[0xe2] = 3;
    t[0xe3] = 3;
    t
};

const S: u8 = 0;
const H: u8 = 1;
const N: u8 = 2;

/// Class and length in bytes of the character at `i`, for a lead byte of class 3.
#[cold]
#[inline(never)]
fn decode_class(text: &str, i: usize) -> (u8, usize) {
    // (`i` is a character boundary: continuation bytes are below 0xc0, never class 3)
    let c = text[i..].chars().next().unwrap_or('\0');
    (if c.is_whitespace() { H } else { S }, c.len_utf8())
}

/// Class of the character at `i` and the offset after it (continuation bytes count as `S`
/// bytes of their own: a run of `S` is the same run whichever way it is cut).
#[inline(always)]
fn class_at(text: &str, b: &[u8], i: usize) -> (u8, usize) {
    let c = CLASS[b[i] as usize];
    if c == 3 {
        let (c, len) = decode_class(text, i);
        (c, i + len)
    } else {
        (c, i + 1)
    }
}

/// Flags (bit 7 of a byte) for the bytes of `x` (8 bytes, little-endian) that may not be `S`:
/// those below 0x21 and the lead bytes (0xc0 and above; only four of them can be whitespace).
/// The lowest flag is exact (the subtraction borrows only from a byte below 0x21 upwards), so
/// the bytes below it are all `S`.
#[inline(always)]
fn maybe_not_s(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = x.wrapping_sub(ONES * 0x21) & !x & HIGH;
    let lead = x & (x << 1) & HIGH;
    below | lead
}

/// Call `f` with each piece of `text`, in order.
#[inline]
pub fn for_each_code_piece<'t>(text: &'t str, mut f: impl FnMut(&'t str)) {
    let b = text.as_bytes();
    let n = b.len();
    if n == 0 {
        return;
    }
    let mut start = 0;
    let (mut prev, mut i) = class_at(text, b, 0);
    while i < n {
        // `S` bytes never start a piece: they are stepped over 8 at a time (a run of them
        // may start or end inside a character, as above)
        if i + 8 <= n {
            let m = maybe_not_s(u64::from_le_bytes(b[i..i + 8].try_into().unwrap()));
            if m == 0 {
                prev = S;
                i += 8;
                continue;
            }
            let k = (m.trailing_zeros() / 8) as usize;
            if k > 0 {
                prev = S;
                i += k;
            }
        }
        let (c, next) = class_at(text, b, i);
        if (c == N && prev != N) || (c == H && prev == S) {
            // SAFETY: `start` and `i` are character boundaries (class_at steps over whole
            // characters, or over single bytes inside a run of `S` that ends on one)
            f(unsafe { text.get_unchecked(start..i) });
            start = i;
        }
        prev = c;
        i = next;
    }
    // SAFETY: as above; `n` is the end of the text
    f(unsafe { text.get_unchecked(start..n) });
}
