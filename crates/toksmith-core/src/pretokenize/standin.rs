//! Non-ASCII text through the block scanners, by ASCII stand-ins.
//!
//! The block scanners (`blocks.rs`) decide ASCII text 64 bytes at a time; at a non-ASCII byte
//! they hand over to the piece-at-a-time scanner, which decodes every character and branches
//! per piece. Here a text with non-ASCII characters is first *transcoded*: each character is
//! replaced by one ASCII byte that is in exactly the classes the pattern asks about (a letter
//! by `a`, a number by `0`, whitespace by a tab, anything else by `!`; ASCII stays as it is),
//! with the byte offset of each character kept beside it. The pattern splits the stand-in text
//! into pieces of the same characters as the original (it sees the same classes at the same
//! character positions), so the stand-in text goes through the block scanners and each of its
//! pieces is handed on as the original bytes of its characters.
//!
//! Which characters a pattern can tell apart beyond their classes: the contractions' letters
//! (`'(?i:[sdmt]|ll|ve|re)`, case-insensitive: `ſ` (U+017F) folds to `s`, so its stand-in is
//! `s`; no other non-ASCII character folds to one of these letters), CR, LF, the space before a
//! symbol run (all ASCII).
//!
//! o200k's letters are in an upper class (`\p{Lu}\p{Lt}`), a lower class (`\p{Ll}`) or both
//! (`\p{Lm}\p{Lo}\p{M}`, which no ASCII byte is, and which most non-Latin scripts are), and
//! its marks are also `[^\s\p{L}\p{N}]`; so its stand-ins of "both" letters and of marks are
//! two non-ASCII bytes ([`blocks::O200K_BOTH`], [`blocks::O200K_MARK`]) that its own block
//! rules know (`blocks::o200k_standin_block_starts`), and where a block decides nothing (a
//! run longer than a block, the last bytes of a window) one piece is found by the
//! piece-at-a-time scanner in the original text, not in the stand-ins.
//!
//! Long texts go in windows of at most `window` bytes, so that the stand-ins need a small
//! buffer per thread. A window ends right after a LF that is followed by a character that is
//! neither whitespace nor `/`: the piece holding that LF ends there whatever comes after it
//! (a whitespace run's `\s*[\r\n]`, or the `[\r\n]*` / `[\r\n/]*` tail of a symbol run; no
//! letter or word prefix is CR or LF), and no piece before it looks further, so the window
//! splits as the whole text does. (GPT-2's pattern has no `\s*[\r\n]`: `a \n` splits as
//! `a`, ` \n` at the end of a text and as `a`, ` `, `\n` before a letter; it keeps the
//! piece-at-a-time path.) Where no such LF is found, the rest of the text goes the old way.

use super::blocks::{self, Block};
use super::chars::{bclass, category, char_at, Text, BMP_CAT, B_SPACE};
use super::unicode_tables::{LL, LM, LO, LT, LU, MARK, NUM, SPACE};
use std::cell::RefCell;

/// cl100k's family's stand-in of a non-ASCII character of category `cat`.
const fn cl100k_standin(cat: u8) -> u8 {
    match cat {
        LU | LL | LT | LM | LO => b'a',
        NUM => b'0',
        SPACE => b'\t',
        _ => b'!', // marks and everything else: `[^\s\p{L}\p{N}]`
    }
}

/// Stand-ins of every code point of the BMP (ASCII: itself), built at compile time.
macro_rules! bmp_table {
    ($standin:ident) => {{
        let mut t = [0u8; 0x10000];
        let mut cp = 0;
        while cp < 0x10000 {
            t[cp] = if cp < 0x80 {
                cp as u8
            } else {
                $standin(BMP_CAT[cp])
            };
            cp += 1;
        }
        t[0x17F] = b's'; // ſ folds to s (and is `\p{Ll}`, as `s` is)
        t
    }};
}

/// o200k's stand-in of a non-ASCII character of category `cat`: its letters by their case
/// classes (`A` upper only, `a` lower only, [`blocks::O200K_BOTH`] both), marks by
/// [`blocks::O200K_MARK`], as cl100k's otherwise.
const fn o200k_standin(cat: u8) -> u8 {
    match cat {
        LU | LT => b'A',
        LL => b'a',
        LM | LO => blocks::O200K_BOTH,
        MARK => blocks::O200K_MARK,
        _ => cl100k_standin(cat),
    }
}

static CL100K_BMP: [u8; 0x10000] = bmp_table!(cl100k_standin);
static O200K_BMP: [u8; 0x10000] = bmp_table!(o200k_standin);

/// The stand-ins of one pattern family.
pub struct StandIns {
    bmp: &'static [u8; 0x10000],
    astral: fn(u8) -> u8,
    /// Whether stand-ins may be non-ASCII (o200k's "both" letters and marks): then the
    /// stand-in text is not UTF-8, and a piece the blocks leave undecided is found by the
    /// piece-at-a-time scanner in the original text (else in the stand-in text).
    high: bool,
}

/// cl100k's family (cl100k, nanochat, rustbpe's default, Llama 3, Qwen).
pub static CL100K: StandIns = StandIns {
    bmp: &CL100K_BMP,
    astral: cl100k_standin,
    high: false,
};

/// o200k.
pub static O200K: StandIns = StandIns {
    bmp: &O200K_BMP,
    astral: o200k_standin,
    high: true,
};

impl StandIns {
    /// The stand-in of a character outside the BMP.
    #[inline(never)]
    fn astral(&self, cp: u32) -> u8 {
        (self.astral)(category(cp))
    }
}

/// Texts shorter than this (bytes) are split without stand-ins (with the chunked transcoder,
/// texts of 128-256 bytes split 1.3-2.3x as fast through stand-ins, and texts of 64-128 bytes
/// mostly faster but not always: see the performance notes).
pub const SHORT: usize = 128;

/// A window with fewer than one non-ASCII byte in this many goes to the block scanner as it is.
const SPARSE: usize = 64;

/// The longest window (bytes of the original text) transcoded at once.
pub const WINDOW: usize = 1 << 15;
const _: () = assert!(WINDOW <= u16::MAX as usize);

/// Transcode `text` into `sub` (one byte per character) and `pos` (the offset in `text` of
/// each character, then `text.len()`); both are at least `text.len() + 1` long. Returns the
/// number of characters.
#[inline(always)]
pub(super) fn transcode(text: &str, t: &StandIns, sub: &mut [u8], pos: &mut [u16]) -> usize {
    let b = text.as_bytes();
    let n = b.len();
    assert!(sub.len() > n && pos.len() > n && n <= u16::MAX as usize);
    let (i, k) = transcode_chunks(text, t, sub, pos);
    transcode_tail(b, t, sub, pos, i, k)
}

/// The bytes of a chunk of [`transcode_chunks`].
const CHUNK: usize = 16;

/// The BMP code point of the `W`-byte character (`W` 2 or 3) whose lead byte is at `p`.
///
/// # Safety
/// `p` is the start of a `W`-byte character of valid UTF-8 (its continuation bytes follow).
#[inline(always)]
unsafe fn bmp_cp<const W: usize>(p: *const u8) -> usize {
    let c = *p as usize;
    if W == 2 {
        ((c & 0x1F) << 6) | (*p.add(1) as usize & 0x3F)
    } else {
        (((c & 0x0F) << 12) | ((*p.add(1) as usize & 0x3F) << 6) | (*p.add(2) as usize & 0x3F))
            & 0xFFFF
    }
}

/// The stand-ins and offsets of the run of `W`-byte characters (`W` 2 or 3) that starts at
/// byte `i` of the `n` bytes at `bp`, written at stand-in `k` on: one loop per run, no branch
/// on the width per character. Returns where the run ends, `(i, k)`.
///
/// # Safety
/// `bp[..n]` is valid UTF-8 with a `W`-byte character at `i`; `sp` and `pp` have room for a
/// stand-in at every `k' <= i' < n` (as in [`transcode_chunks`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn width_run<const W: usize>(
    bp: *const u8,
    n: usize,
    bmp: &[u8; 0x10000],
    sp: *mut u8,
    pp: *mut u16,
    mut i: usize,
    mut k: usize,
) -> (usize, usize) {
    // the lead bytes of this width: 110xxxxx, 1110xxxx
    let (mask, lead) = if W == 2 { (0xE0, 0xC0) } else { (0xF0, 0xE0) };
    loop {
        *sp.add(k) = bmp[bmp_cp::<W>(bp.add(i))];
        *pp.add(k) = i as u16;
        i += W;
        k += 1;
        if i >= n || *bp.add(i) & mask != lead {
            return (i, k);
        }
    }
}

/// [`transcode`] of the text by chunks, while 16 bytes are left: returns how far it got,
/// `(i, k)` (bytes of `b`, characters written). Each chunk starts at a character: its 16
/// bytes' leading ASCII ones are their own stand-ins (copied with their offsets by vector
/// stores), then the run of non-ASCII characters of one width after them goes character by
/// character in a loop of that width (it may run past the chunk), and the next chunk starts
/// after that run. So text in one script (words of 2- or 3-byte characters between spaces
/// and punctuation) takes one loop per word with no branch on the width per character, and
/// ASCII words between diacritics go 16 bytes at a time.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn transcode_chunks(text: &str, t: &StandIns, sub: &mut [u8], pos: &mut [u16]) -> (usize, usize) {
    use core::arch::x86_64::*;
    let b = text.as_bytes();
    let n = b.len();
    // (once per window: the unchecked stores below rely on it)
    assert!(sub.len() > n && pos.len() > n && n <= u16::MAX as usize);
    let (bp, sp, pp) = (b.as_ptr(), sub.as_mut_ptr(), pos.as_mut_ptr());
    let bmp = t.bmp;
    let mut i = 0;
    let mut k = 0;
    // SAFETY: SSE2 is part of the x86_64 baseline. Reads: the chunk's load (16 bytes at `i`)
    // is inside `b` (`i + CHUNK <= n`); `b` is UTF-8 and `i` is at a character's first byte,
    // so a lead byte >= 0xC0 (>= 0xE0) has one (two) continuation bytes after it, below `n`.
    // Writes: `k <= i` (one stand-in per character, each at least a byte), so the 16
    // stand-ins and the 16 offsets stored at `k` end at `i + 16 <= n < sub.len()` (and
    // `pos.len()`), and each character of a run is written at `k <= i < n`.
    unsafe {
        let iota_lo = _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7);
        let iota_hi = _mm_setr_epi16(8, 9, 10, 11, 12, 13, 14, 15);
        while i + CHUNK <= n {
            let v = _mm_loadu_si128(bp.add(i) as *const __m128i);
            let high = _mm_movemask_epi8(v) as u32;
            // the leading ASCII bytes: stand-ins and offsets of all 16 stored, the
            // non-ASCII part overwritten below
            _mm_storeu_si128(sp.add(k) as *mut __m128i, v);
            let base = _mm_set1_epi16(i as i16);
            _mm_storeu_si128(pp.add(k) as *mut __m128i, _mm_add_epi16(base, iota_lo));
            _mm_storeu_si128(pp.add(k + 8) as *mut __m128i, _mm_add_epi16(base, iota_hi));
            if high == 0 {
                i += CHUNK;
                k += CHUNK;
                continue;
            }
            // the non-ASCII run after them, character by character while the characters
            // have the width of its first (one branch per run, not per character)
            let a = high.trailing_zeros() as usize;
            i += a;
            k += a;
            let c = *bp.add(i);
            if c < 0xE0 {
                (i, k) = width_run::<2>(bp, n, bmp, sp, pp, i, k);
            } else if c < 0xF0 {
                (i, k) = width_run::<3>(bp, n, bmp, sp, pp, i, k);
            } else {
                *sp.add(k) = t.astral(char_at(b, i).cp);
                *pp.add(k) = i as u16;
                i += 4;
                k += 1;
            }
        }
    }
    (i, k)
}

/// (other architectures: all of the text goes character by character)
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn transcode_chunks(_: &str, _: &StandIns, _: &mut [u8], _: &mut [u16]) -> (usize, usize) {
    (0, 0)
}

/// [`transcode`] from byte `i` of `b` (a character's start) and stand-in `k` on, character by
/// character; then the end offset. Returns the number of characters.
#[inline(always)]
fn transcode_tail(
    b: &[u8],
    t: &StandIns,
    sub: &mut [u8],
    pos: &mut [u16],
    mut i: usize,
    mut k: usize,
) -> usize {
    let n = b.len();
    assert!(sub.len() > n && pos.len() > n && k <= i);
    // (the stores and the continuation bytes' loads are unchecked: the checks were a third of
    // the loop's instructions)
    while i < n {
        // SAFETY: `k <= i < n` (each character is at least one byte), and `sub` and `pos` are
        // longer than `n`; a lead byte >= 0xC0 (>= 0xE0) of valid UTF-8 has one (two)
        // continuation bytes after it, so `i + 1` (`i + 2`) is below `n` where it is read.
        unsafe {
            let c = *b.get_unchecked(i);
            *pos.get_unchecked_mut(k) = i as u16;
            let s = if c < 0x80 {
                i += 1;
                c
            } else if c < 0xE0 {
                let s = t.bmp[bmp_cp::<2>(b.as_ptr().add(i))];
                i += 2;
                s
            } else if c < 0xF0 {
                let s = t.bmp[bmp_cp::<3>(b.as_ptr().add(i))];
                i += 3;
                s
            } else {
                let ch = char_at(b, i);
                i += 4;
                t.astral(ch.cp)
            };
            *sub.get_unchecked_mut(k) = s;
        }
        k += 1;
    }
    pos[k] = n as u16;
    k
}

/// Where a window that starts at `s` may end: right after a LF in `b[lo - 1..hi - 1]` that is
/// followed by a character that is neither whitespace nor `/` (see the module notes), the
/// last such; `None` if there is none (`hi < b.len()`).
fn window_end(b: &[u8], lo: usize, hi: usize) -> Option<usize> {
    let mut j = hi;
    while j > lo {
        if b[j - 1] == b'\n' {
            let c = b[j];
            let ok = if c < 0x80 {
                bclass(c) & B_SPACE == 0 && c != b'/'
            } else {
                char_at(b, j).cat != SPACE
            };
            if ok {
                return Some(j);
            }
        }
        j -= 1;
    }
    None
}

/// The number of bytes >= 0x80 in `b`: their top bits added up in the byte lanes of a word
/// (255 words at most per sum, so that no lane overflows), then the lanes.
#[inline(always)]
fn high_bytes(b: &[u8]) -> usize {
    const LOW: u64 = 0x0101_0101_0101_0101;
    let mut n = 0;
    for block in b.chunks(8 * 255) {
        let mut words = block.chunks_exact(8);
        let mut acc = 0u64;
        for w in &mut words {
            acc += (u64::from_le_bytes(w.try_into().unwrap()) >> 7) & LOW;
        }
        let pairs = (acc & 0x00FF_00FF_00FF_00FF) + ((acc >> 8) & 0x00FF_00FF_00FF_00FF);
        n += (pairs.wrapping_mul(0x0001_0001_0001_0001) >> 48) as usize;
        n += words.remainder().iter().filter(|&&c| c >= 0x80).count();
    }
    n
}

thread_local! {
    /// The stand-in bytes and offsets of the current window (kept for the thread's next text).
    static BUFFERS: RefCell<(Vec<u8>, Vec<u16>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// [`blocks::for_each_piece`] with non-ASCII text of at least [`SHORT`] bytes transcoded to
/// stand-ins first (shorter texts lose more to the transcoding and the buffers than the
/// stand-ins gain: lines of 14-32 characters split 0.6-0.75x as fast; see the performance
/// notes); the arguments as for [`for_each_window`].
#[inline(always)]
pub fn for_each_piece<'t>(
    text: &'t str,
    t: &StandIns,
    window: usize,
    block: impl Fn(&[u8]) -> Block,
    standin_block: impl Fn(&[u8], u32) -> Block,
    piece: impl Fn(&Text, usize) -> usize,
    f: impl FnMut(&'t str),
) {
    if text.len() < SHORT {
        return blocks::for_each_piece(text, block, piece, f);
    }
    for_each_window(text, t, window, block, standin_block, piece, f)
}

/// [`blocks::for_each_piece`] with non-ASCII text transcoded to stand-ins first, in windows of
/// at most `window` bytes (see the module notes; `window` is a parameter for the tests):
/// `block` splits the original text, `standin_block` the stand-in text (the same function
/// where the stand-ins are ASCII; with non-ASCII stand-ins it is also given blocks whose text
/// ends after byte `last` < 63, padded, and must limit what it decides to that: see
/// `blocks::o200k_standin_block_upto`).
#[inline(always)]
pub fn for_each_window<'t>(
    text: &'t str,
    t: &StandIns,
    window: usize,
    block: impl Fn(&[u8]) -> Block,
    standin_block: impl Fn(&[u8], u32) -> Block,
    piece: impl Fn(&Text, usize) -> usize,
    mut f: impl FnMut(&'t str),
) {
    let b = text.as_bytes();
    if b.is_ascii() {
        return blocks::for_each_piece(text, block, piece, f);
    }
    BUFFERS.with(|cell| {
        let mut own = (Vec::new(), Vec::new());
        let mut guard = cell.try_borrow_mut();
        // (re-entered from `f`: a buffer of its own)
        let (sub, pos) = match &mut guard {
            Ok(g) => &mut **g,
            Err(_) => &mut own,
        };
        assert!(window <= WINDOW);
        let need = b.len().min(window) + 1;
        if sub.len() < need {
            sub.resize(need, 0);
            pos.resize(need, 0);
        }
        let mut s = 0;
        while s < b.len() {
            let end = if b.len() - s <= window {
                b.len()
            } else {
                match window_end(b, s + window / 2, s + window) {
                    Some(e) => e,
                    None => {
                        // SAFETY: `s` is 0 or a window's end, after a LF: a character boundary.
                        let rest = unsafe { text.get_unchecked(s..) };
                        return blocks::for_each_piece(rest, &block, &piece, &mut f);
                    }
                }
            };
            // SAFETY: `s` and `end` are 0, the end, or right after a LF: character boundaries.
            let part = unsafe { text.get_unchecked(s..end) };
            // Text with a few non-ASCII characters (English with quotes, code with a name)
            // splits faster by blocks with a few pieces between them than transcoded whole.
            let high = high_bytes(part.as_bytes());
            if high * SPARSE < part.len() {
                blocks::for_each_piece(part, &block, &piece, &mut f);
                s = end;
                continue;
            }
            let k = transcode(part, t, sub, pos);
            if t.high {
                mapped_pieces(part, &sub[..k], &pos[..=k], &standin_block, &piece, &mut f);
                s = end;
                continue;
            }
            // SAFETY: every stand-in byte is ASCII.
            let ascii = unsafe { std::str::from_utf8_unchecked(&sub[..k]) };
            let base = ascii.as_ptr() as usize;
            let pos = &*pos;
            blocks::for_each_piece(
                ascii,
                |b| standin_block(b, 63),
                &piece,
                |p| {
                    let a = p.as_ptr() as usize - base;
                    let (from, to) = (pos[a] as usize, pos[a + p.len()] as usize);
                    // SAFETY: stand-in pieces are whole characters, and `pos` has their offsets
                    // in `part`.
                    f(unsafe { part.get_unchecked(from..to) })
                },
            );
            s = end;
        }
    })
}

/// Fewer characters than this at the end of a window go piece by piece without a padded block.
const TAIL: usize = 8;

/// The pieces of `part` from its stand-ins `sub` (one byte per character, maybe non-ASCII)
/// and the characters' offsets `pos` (then `part.len()`): by blocks of stand-ins where a
/// block decides, else one piece by the piece-at-a-time scanner in `part`.
#[inline(always)]
fn mapped_pieces<'t>(
    part: &'t str,
    sub: &[u8],
    pos: &[u16],
    block: impl Fn(&[u8], u32) -> Block,
    piece: impl Fn(&Text, usize) -> usize,
    mut f: impl FnMut(&'t str),
) {
    let k = sub.len();
    assert!(pos.len() == k + 1 && pos[k] as usize == part.len());
    let t = Text::new(part);
    let mut i = 0;
    while i < k {
        let decided = if i + 64 <= k {
            Some(block(&sub[i..i + 64], 63))
        } else if k - i >= TAIL {
            // the window's last characters, padded: decided up to the run at the last one
            let mut pad = [b'!'; 64];
            pad[..k - i].copy_from_slice(&sub[i..k]);
            Some(block(&pad, (k - i - 1) as u32))
        } else {
            None
        };
        if let Some((starts, limit, _)) = decided {
            let mut s = starts & !1 & (2u64 << limit).wrapping_sub(1);
            if s != 0 {
                let mut a = pos[i] as usize;
                let mut last = i;
                while s != 0 {
                    last = i + s.trailing_zeros() as usize;
                    let e = pos[last] as usize;
                    // SAFETY: `pos` holds offsets of characters of `part`.
                    f(unsafe { part.get_unchecked(a..e) });
                    a = e;
                    s &= s - 1;
                }
                i = last;
                continue;
            }
        }
        let a = pos[i] as usize;
        let e = piece(&t, a);
        debug_assert!(e > a && part.is_char_boundary(e));
        // SAFETY: the scanners advance by whole characters and never past the end.
        f(unsafe { part.get_unchecked(a..e) });
        i += 1;
        while (pos[i] as usize) < e {
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn high_bytes_counts_every_byte_over_0x7f() {
        // lengths across the 255-word sums and the remainders, every byte value
        let bytes: Vec<u8> = (0..5000u32).map(|k| (k * 37 % 256) as u8).collect();
        for len in [0, 1, 7, 8, 9, 2039, 2040, 2041, 4100, 5000] {
            let b = &bytes[..len];
            let want = b.iter().filter(|&&c| c >= 0x80).count();
            assert_eq!(high_bytes(b), want, "{len}");
        }
        assert_eq!(high_bytes(&[0xFF; 4096]), 4096);
    }

    /// The stand-ins and offsets of `text`, character by character from Rust's decoding.
    fn transcode_reference(text: &str, t: &StandIns) -> (Vec<u8>, Vec<u16>) {
        let mut sub = Vec::new();
        let mut pos = Vec::new();
        for (i, ch) in text.char_indices() {
            let cp = ch as u32;
            sub.push(if cp < 0x10000 {
                t.bmp[cp as usize]
            } else {
                t.astral(cp)
            });
            pos.push(i as u16);
        }
        pos.push(text.len() as u16);
        (sub, pos)
    }

    #[test]
    fn transcode_equals_character_by_character() {
        // characters of every width, the edges of each width's range, ASCII of every class;
        // texts of one width, two widths and all, at every length around the chunks
        let alphabets: [&[char]; 6] = [
            &['a', ' ', 'Z', '0', '\n', '!', '\''],
            &[
                'é', 'ж', 'Ω', '\u{80}', '\u{7ff}', 'ſ', '\u{301}', '\u{a0}', ' ', '.',
            ],
            &[
                '中', 'ก', '\u{800}', '\u{ffff}', '\u{3000}', '\u{fe0f}', 'ー', 'a',
            ],
            &['😀', '\u{10000}', '\u{10ffff}', '𝟘', 'x', 'é'],
            &[
                'é', 'ж', '中', '😀', 'a', ' ', '\u{7ff}', '\u{800}', '\u{fffd}',
            ],
            &['a', 'b', 'c', 'd', ' ', 'é'],
        ];
        let mut seed = 0x5eed_0037_u64;
        let mut next = |m: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) as usize) % m
        };
        for round in 0..4000 {
            let abc = alphabets[round % alphabets.len()];
            let len = if round % 5 == 0 { next(300) } else { next(60) };
            let mut text = String::new();
            while text.len() < len {
                text.push(abc[next(abc.len())]);
            }
            for table in [&CL100K, &O200K] {
                let (want_sub, want_pos) = transcode_reference(&text, table);
                let mut sub = vec![0u8; text.len() + 1];
                let mut pos = vec![0u16; text.len() + 1];
                let k = transcode(&text, table, &mut sub, &mut pos);
                assert_eq!(k, want_sub.len(), "{text:?}");
                assert_eq!(&sub[..k], &want_sub[..], "{text:?}");
                assert_eq!(&pos[..=k], &want_pos[..], "{text:?}");
            }
        }
        for text in ["", "a", "é", "中", "😀", &"é".repeat(40), &"😀".repeat(20)] {
            let (want_sub, want_pos) = transcode_reference(text, &O200K);
            let mut sub = vec![0u8; text.len() + 1];
            let mut pos = vec![0u16; text.len() + 1];
            let k = transcode(text, &O200K, &mut sub, &mut pos);
            assert_eq!((&sub[..k], &pos[..=k]), (&want_sub[..], &want_pos[..]));
        }
    }

    #[test]
    fn standins_have_the_classes_of_their_characters() {
        use super::super::chars::{is_letter, is_number, is_space, ASCII_CAT};
        for cp in (0x80..0x11_0000u32).filter(|c| !(0xD800..0xE000).contains(c)) {
            let cat = category(cp);
            let s = if cp < 0x10000 {
                CL100K.bmp[cp as usize]
            } else {
                CL100K.astral(cp)
            };
            assert!(s.is_ascii(), "{cp:x}");
            let sc = ASCII_CAT[s as usize];
            assert_eq!(is_letter(sc), is_letter(cat), "{cp:x}");
            assert_eq!(is_number(sc), is_number(cat), "{cp:x}");
            assert_eq!(is_space(sc), is_space(cat), "{cp:x}");
            assert!(!matches!(s, b'\r' | b'\n' | b' ' | b'\'' | b'/'), "{cp:x}");
            let folds_to_s = cp == 0x17F;
            assert_eq!(s == b's', folds_to_s, "{cp:x}");
            assert!(folds_to_s || !b"sdmtlverSDMTLVER".contains(&s), "{cp:x}");
        }
    }
}
