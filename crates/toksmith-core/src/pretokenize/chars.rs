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
    Ch {
        cp,
        cat: category(cp),
        len,
    }
}

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

/// Case-insensitive comparison of one character against a fold set.
#[inline(always)]
pub fn folds_to(cp: u32, set: &[char]) -> bool {
    set.iter().any(|&c| c as u32 == cp)
}
