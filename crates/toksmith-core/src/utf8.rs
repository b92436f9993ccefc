//! UTF-8 to fixed-width code units (one, two or four bytes per character).
//!
//! CPython stores a `str` with one code-unit width for the whole string, the narrowest that
//! holds its largest character. Decoding a long id list to `str` with CPython's UTF-8 decoder
//! took about 40% of `decode` on mixed text (it decodes character by character and widens the
//! string as it meets wider characters). Here the width is found first, in one pass that also
//! counts characters, then the characters are written straight into their final width, 16 ASCII
//! bytes at a time.

/// What a `str` holding some valid UTF-8 needs: its length in characters and the largest
/// character's width class (`127`, `255`, `0xFFFF` or `0x10FFFF`, as CPython's `PyUnicode_New`
/// expects: the class of the largest character actually present, so the result is canonical).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub chars: usize,
    pub max_char: u32,
}

/// The [`Layout`] of `bytes`, or `None` if they are not valid UTF-8.
pub fn layout(bytes: &[u8]) -> Option<Layout> {
    std::str::from_utf8(bytes).ok()?;
    let (chars, max_byte) = count_and_max(bytes);
    // The largest byte is the largest lead byte (continuation bytes are below every lead of a
    // multi-byte character), and the lead byte gives the character's range.
    let max_char = match max_byte {
        0..=0x7F => 0x7F,
        0x80..=0xC3 => 0xFF,
        0xC4..=0xEF => 0xFFFF,
        _ => 0x10FFFF,
    };
    Some(Layout { chars, max_char })
}

/// The number of characters of valid UTF-8 `bytes` (every character has exactly one byte that
/// is not a continuation byte, `0b10xxxxxx`) and its largest byte, in one pass.
///
/// Blocks of 16 bytes are added up in 16 byte-wide counters (one per lane, which the compiler
/// keeps in one vector register), emptied every 255 blocks before they can overflow: counting
/// straight into a `usize` made the compiler widen every byte to 64 bits, and a separate pass
/// for the maximum read the bytes twice (16% of a 10 MB decode, now about 2%).
fn count_and_max(bytes: &[u8]) -> (usize, u8) {
    let mut chars = 0usize;
    let mut max = [0u8; 16];
    let mut blocks = bytes.chunks_exact(16);
    loop {
        let mut count = [0u8; 16];
        let mut n = 0;
        for block in blocks.by_ref().take(255) {
            let block: &[u8; 16] = block.try_into().expect("16 bytes");
            for k in 0..16 {
                count[k] += ((block[k] as i8) >= -0x40) as u8;
                max[k] = max[k].max(block[k]);
            }
            n += 1;
        }
        chars += count.iter().map(|&c| c as usize).sum::<usize>();
        if n < 255 {
            break;
        }
    }
    let rest = blocks.remainder();
    chars += rest.iter().filter(|&&b| (b as i8) >= -0x40).count();
    let max = max
        .into_iter()
        .chain(rest.iter().copied())
        .max()
        .unwrap_or(0);
    (chars, max)
}

/// A fixed-width code unit: `u8` (Latin-1), `u16` (UCS-2) or `u32` (UCS-4).
pub trait Unit: Copy {
    fn from_char(c: u32) -> Self;
}

impl Unit for u8 {
    #[inline(always)]
    fn from_char(c: u32) -> Self {
        c as u8
    }
}

impl Unit for u16 {
    #[inline(always)]
    fn from_char(c: u32) -> Self {
        c as u16
    }
}

impl Unit for u32 {
    #[inline(always)]
    fn from_char(c: u32) -> Self {
        c
    }
}

/// Write the characters of `s` to `out` as code units of type `U`; `out.len()` must be the
/// character count and every character must fit `U` (both given by [`layout`]).
pub fn transcode<U: Unit>(s: &str, out: &mut [U]) {
    const HIGH: u128 = 0x8080_8080_8080_8080_8080_8080_8080_8080;
    let b = s.as_bytes();
    let (mut i, mut j) = (0usize, 0usize);
    while i < b.len() {
        if let (Some(chunk), Some(dst)) = (b.get(i..i + 16), out.get_mut(j..j + 16)) {
            let word = u128::from_ne_bytes(chunk.try_into().expect("16 bytes"));
            if word & HIGH == 0 {
                for (d, &c) in dst.iter_mut().zip(chunk) {
                    *d = U::from_char(c as u32);
                }
                i += 16;
                j += 16;
                continue;
            }
        }
        let c = b[i] as u32;
        let (cp, width) = if c < 0x80 {
            (c, 1)
        } else if c < 0xE0 {
            (((c & 0x1F) << 6) | (b[i + 1] as u32 & 0x3F), 2)
        } else if c < 0xF0 {
            let cp =
                ((c & 0x0F) << 12) | ((b[i + 1] as u32 & 0x3F) << 6) | (b[i + 2] as u32 & 0x3F);
            (cp, 3)
        } else {
            let cp = ((c & 0x07) << 18)
                | ((b[i + 1] as u32 & 0x3F) << 12)
                | ((b[i + 2] as u32 & 0x3F) << 6)
                | (b[i + 3] as u32 & 0x3F);
            (cp, 4)
        };
        out[j] = U::from_char(cp);
        i += width;
        j += 1;
    }
    assert_eq!(j, out.len(), "output length must be the character count");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(s: &str) {
        let l = layout(s.as_bytes()).unwrap();
        let chars: Vec<u32> = s.chars().map(|c| c as u32).collect();
        assert_eq!(l.chars, chars.len());
        let max = chars.iter().copied().max().unwrap_or(0);
        let class = match max {
            0..=0x7F => 0x7F,
            0x80..=0xFF => 0xFF,
            0x100..=0xFFFF => 0xFFFF,
            _ => 0x10FFFF,
        };
        assert_eq!(l.max_char, class, "{s:?}");
        let mut w32 = vec![0u32; l.chars];
        transcode(s, &mut w32);
        assert_eq!(w32, chars);
        if class <= 0xFFFF {
            let mut w16 = vec![0u16; l.chars];
            transcode(s, &mut w16);
            assert!(w16.iter().zip(&chars).all(|(&a, &b)| a as u32 == b));
        }
        if class <= 0xFF {
            let mut w8 = vec![0u8; l.chars];
            transcode(s, &mut w8);
            assert!(w8.iter().zip(&chars).all(|(&a, &b)| a as u32 == b));
        }
    }

    #[test]
    fn layout_and_transcode_match_chars() {
        for s in [
            "",
            "a",
            "plain ASCII text that is longer than sixteen bytes, twice over......",
            "caf\u{e9} na\u{ef}ve \u{ff}",
            "\u{100} a wider one",
            "quotes \u{2019}\u{201c} and \u{ffff} end",
            "emoji \u{1f600} here, then ASCII for a while to take the fast path",
            "\u{10ffff}",
            "mixed: abcdefghijklmnop\u{e9}abcdefghijklmnop\u{4e2d}abcdefghijklmnopq\u{1f600}x",
        ] {
            check(s);
        }
        // every code point class at every offset around a 16-byte block
        for c in [
            '\u{7f}',
            '\u{80}',
            '\u{ff}',
            '\u{100}',
            '\u{7ff}',
            '\u{800}',
            '\u{ffff}',
            '\u{10000}',
        ] {
            for pre in 0..20 {
                let s: String = "x".repeat(pre) + &c.to_string() + &"y".repeat(20);
                check(&s);
            }
        }
    }

    #[test]
    fn count_and_max_match_a_plain_count() {
        // lengths around the 16-byte blocks and the 255-block rounds of the counters
        let text: String = "ab\u{e9}\u{4e2d}\u{1f600}x ".repeat(2000);
        let b = text.as_bytes();
        for len in [0, 1, 15, 16, 17, 4079, 4080, 4081, 8160, 8177, b.len()] {
            let mut end = len.min(b.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let part = &b[..end];
            let want = (
                part.iter().filter(|&&x| (x as i8) >= -0x40).count(),
                part.iter().copied().max().unwrap_or(0),
            );
            assert_eq!(count_and_max(part), want, "{end}");
            assert_eq!(want.0, text[..end].chars().count());
        }
    }

    #[test]
    fn invalid_utf8_has_no_layout() {
        for b in [
            &b"\xff"[..],
            b"abc\xc3",
            b"\xed\xa0\x80",
            b"\xc0\x80",
            b"ok\xe2\x82",
        ] {
            assert_eq!(layout(b), None);
        }
    }
}
