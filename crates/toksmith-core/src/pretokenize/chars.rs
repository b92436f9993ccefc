//! Character classification for the hand-written pre-tokenizers.
//!
//! The tables are generated from Python's `regex` module (see `tools/gen_unicode_tables.py`), so
//! `\p{L}`, `\p{N}`, `\p{M}` and `\s` mean exactly what they mean to `regex.findall`.

use super::unicode_tables::{LL, LM, LO, LT, LU, MARK, NUM, SPACE, STAGE1, STAGE2};

#[allow(dead_code)]
pub const OTHER: u8 = 0;

/// Category code of a code point (one of the constants in `unicode_tables`, or `OTHER`).
#[inline(always)]
pub fn category(c: u32) -> u8 {
    let block = STAGE1[(c >> 8) as usize] as usize;
    STAGE2[(block << 8) | (c & 0xff) as usize]
}

#[inline(always)]
pub fn is_letter(cat: u8) -> bool {
    cat.wrapping_sub(LU) <= LO - LU
}
#[inline(always)]
pub fn is_number(cat: u8) -> bool {
    cat == NUM
}
#[inline(always)]
pub fn is_space(cat: u8) -> bool {
    cat == SPACE
}
/// `[^\s\p{L}\p{N}]`
#[inline(always)]
pub fn is_punct(cat: u8) -> bool {
    const M: u16 =
        (1 << LU) | (1 << LL) | (1 << LT) | (1 << LM) | (1 << LO) | (1 << NUM) | (1 << SPACE);
    (1u16 << cat) & M == 0
}
/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]` (o200k's "upper" class)
#[inline(always)]
pub fn is_o200k_upper(cat: u8) -> bool {
    const M: u16 = (1 << LU) | (1 << LT) | (1 << LM) | (1 << LO) | (1 << MARK);
    (1u16 << cat) & M != 0
}
/// `[\p{Ll}\p{Lm}\p{Lo}\p{M}]` (o200k's "lower" class)
#[inline(always)]
pub fn is_o200k_lower(cat: u8) -> bool {
    const M: u16 = (1 << LL) | (1 << LM) | (1 << LO) | (1 << MARK);
    (1u16 << cat) & M != 0
}

/// A decoded character: code point, its category and its UTF-8 length.
#[derive(Clone, Copy, Debug)]
pub struct Ch {
    pub cp: u32,
    pub cat: u8,
    pub len: u8,
}

/// Decode the character starting at byte `i` of valid UTF-8 `s`.
#[inline(always)]
pub fn char_at(s: &[u8], i: usize) -> Ch {
    let b0 = s[i] as u32;
    if b0 < 0x80 {
        return Ch {
            cp: b0,
            cat: ASCII_CAT[b0 as usize],
            len: 1,
        };
    }
    let (cp, len) = if b0 < 0xE0 {
        (((b0 & 0x1F) << 6) | (s[i + 1] as u32 & 0x3F), 2)
    } else if b0 < 0xF0 {
        (
            ((b0 & 0x0F) << 12) | ((s[i + 1] as u32 & 0x3F) << 6) | (s[i + 2] as u32 & 0x3F),
            3,
        )
    } else {
        (
            ((b0 & 0x07) << 18)
                | ((s[i + 1] as u32 & 0x3F) << 12)
                | ((s[i + 2] as u32 & 0x3F) << 6)
                | (s[i + 3] as u32 & 0x3F),
            4,
        )
    };
    // Every code point of a 2- or 3-byte sequence is in the BMP: one load from the flat table
    // instead of the two dependent loads of the two-stage one.
    let cat = if len < 4 {
        BMP_CAT[cp as usize & 0xFFFF]
    } else {
        category(cp)
    };
    Ch { cp, cat, len }
}

/// Category of every code point of the Basic Multilingual Plane, flattened from the two-stage
/// tables at compile time (64 KiB; text in one script touches a few of its cache lines).
pub static BMP_CAT: [u8; 0x10000] = {
    let mut t = [0u8; 0x10000];
    let mut hi = 0;
    while hi < 0x100 {
        let block = STAGE1[hi] as usize;
        let mut lo = 0;
        while lo < 0x100 {
            t[(hi << 8) | lo] = STAGE2[(block << 8) | lo];
            lo += 1;
        }
        hi += 1;
    }
    t
};

/// A cursor over valid UTF-8 that yields `Ch` values.
pub struct Text<'a> {
    pub bytes: &'a [u8],
}

impl<'a> Text<'a> {
    #[inline(always)]
    pub fn new(s: &'a str) -> Self {
        Text {
            bytes: s.as_bytes(),
        }
    }
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.bytes.len()
    }
    /// The character at byte `i`, or `None` at the end.
    #[inline(always)]
    pub fn at(&self, i: usize) -> Option<Ch> {
        if i < self.bytes.len() {
            Some(char_at(self.bytes, i))
        } else {
            None
        }
    }
    /// End of the run of characters satisfying `pred`, starting at `i`.
    #[inline(always)]
    pub fn run(&self, mut i: usize, pred: impl Fn(u8) -> bool) -> usize {
        while i < self.bytes.len() {
            let b = self.bytes[i];
            if b < 0x80 {
                if !pred(ASCII_CAT[b as usize]) {
                    break;
                }
                i += 1;
            } else {
                let c = char_at(self.bytes, i);
                if !pred(c.cat) {
                    break;
                }
                i += c.len as usize;
            }
        }
        i
    }
    /// Start of the character that ends at byte `i` (i > 0).
    #[inline(always)]
    pub fn prev_start(&self, mut i: usize) -> usize {
        i -= 1;
        while self.bytes[i] & 0xC0 == 0x80 {
            i -= 1;
        }
        i
    }
}

/// Categories of the ASCII range (fast path).
pub static ASCII_CAT: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut i = 0;
    while i < 128 {
        t[i] = STAGE2[i];
        i += 1;
    }
    t
};

/// Flags of a byte in [`BYTE_CLASS`]: ASCII classes, and `HIGH` for any byte >= 0x80 (a
/// character the ASCII fast paths leave to the general code).
pub const B_LOWER: u8 = 1;
pub const B_UPPER: u8 = 2;
pub const B_LETTER: u8 = B_LOWER | B_UPPER;
/// `\p{N}` (ASCII digits)
pub const B_DIGIT: u8 = 4;
/// `\s`
pub const B_SPACE: u8 = 8;
/// `[^\s\p{L}\p{N}]`
pub const B_PUNCT: u8 = 16;
/// `[\r\n]` (also `B_SPACE`)
pub const B_CRLF: u8 = 32;
/// A byte >= 0x80 (lead or continuation byte of a non-ASCII character).
pub const B_HIGH: u8 = 64;

/// Class flags of every byte value, derived from the generated category tables.
pub static BYTE_CLASS: [u8; 256] = {
    let mut t = [B_HIGH; 256];
    let mut i = 0;
    while i < 128 {
        let cat = STAGE2[i];
        t[i] = if cat == LU {
            B_UPPER
        } else if cat == LL {
            B_LOWER
        } else if cat == NUM {
            B_DIGIT
        } else if cat == SPACE {
            B_SPACE
        } else {
            // no other letter category occurs in ASCII (checked in the tests)
            B_PUNCT
        };
        if i == b'\r' as usize || i == b'\n' as usize {
            t[i] |= B_CRLF;
        }
        i += 1;
    }
    t
};

/// Class flags of byte `b`.
#[inline(always)]
pub fn bclass(b: u8) -> u8 {
    BYTE_CLASS[b as usize]
}

/// Masks of the bytes of `b[i..i + 16]` that are ASCII upper-case and lower-case letters (bit `k`
/// for byte `i + k`); `i + 16 <= b.len()`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn letter_masks16(b: &[u8], i: usize) -> (u32, u32) {
    use core::arch::x86_64::*;
    debug_assert!(i + 16 <= b.len());
    // SAFETY: SSE2 is part of the x86_64 baseline; the load reads `b[i..i + 16]`, in bounds.
    unsafe {
        let v = _mm_loadu_si128(b.as_ptr().add(i) as *const __m128i);
        // `x - 'A'` (resp. `'a'`) as an unsigned byte is < 26 iff `x` is in the range: shift by
        // 0x80 so that a signed comparison does the unsigned one.
        let up = _mm_add_epi8(v, _mm_set1_epi8((0x80u8.wrapping_sub(b'A')) as i8));
        let lo = _mm_add_epi8(v, _mm_set1_epi8((0x80u8.wrapping_sub(b'a')) as i8));
        let lim = _mm_set1_epi8((0x80u8 + 26) as i8);
        let up = _mm_movemask_epi8(_mm_cmplt_epi8(up, lim)) as u32;
        let lo = _mm_movemask_epi8(_mm_cmplt_epi8(lo, lim)) as u32;
        (up, lo)
    }
}

/// End of the run of ASCII letters (`[A-Za-z]*`) starting at `i`.
#[inline(always)]
pub fn ascii_letters_end(b: &[u8], mut i: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    while i + 16 <= b.len() {
        let (up, lo) = letter_masks16(b, i);
        let other = !(up | lo) & 0xFFFF;
        if other != 0 {
            return i + other.trailing_zeros() as usize;
        }
        i += 16;
    }
    while i < b.len() && bclass(b[i]) & B_LETTER != 0 {
        i += 1;
    }
    i
}

/// `(u, l)`: the end `u` of the run of ASCII upper-case letters starting at `i`, and the end `l`
/// of the run of ASCII lower-case letters starting at `u`.
#[inline(always)]
pub fn ascii_upper_lower_end(b: &[u8], i: usize) -> (usize, usize) {
    #[cfg(target_arch = "x86_64")]
    if i + 16 <= b.len() {
        let (up, lo) = letter_masks16(b, i);
        let u = (!up).trailing_zeros() as usize;
        if u < 16 {
            let l = u + (!(lo >> u)).trailing_zeros() as usize;
            if l < 16 {
                return (i + u, i + l);
            }
        }
    }
    let mut u = i;
    while u < b.len() && b[u].is_ascii_uppercase() {
        u += 1;
    }
    let mut l = u;
    while l < b.len() && b[l].is_ascii_lowercase() {
        l += 1;
    }
    (u, l)
}

/// Case-insensitive comparison of one character against a fold set.
#[inline(always)]
pub fn folds_to(cp: u32, set: &[char]) -> bool {
    set.iter().any(|&c| c as u32 == cp)
}
