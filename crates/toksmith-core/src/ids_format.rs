//! Ids as output bytes: decimal text with a separator, or little-endian integers (the body of a
//! `.npy` array). `toksmith encode` writes every id it produces through these.

use crate::error::{Error, Result};
use std::mem::MaybeUninit;

/// Two ASCII digits for each of 0..100.
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Number of decimal digits of `x`.
#[inline]
fn digits(x: u32) -> usize {
    match x {
        0..=9 => 1,
        10..=99 => 2,
        100..=999 => 3,
        1_000..=9_999 => 4,
        10_000..=99_999 => 5,
        100_000..=999_999 => 6,
        1_000_000..=9_999_999 => 7,
        10_000_000..=99_999_999 => 8,
        100_000_000..=999_999_999 => 9,
        _ => 10,
    }
}

/// Write `x` in decimal into `buf[at..at + digits(x)]`, two digits at a time from the end.
#[inline]
fn put_decimal(mut x: u32, buf: &mut [MaybeUninit<u8>], at: usize) -> usize {
    let n = digits(x);
    let mut p = at + n;
    while x >= 100 {
        let r = (x % 100) as usize * 2;
        x /= 100;
        p -= 2;
        buf[p].write(PAIRS[r]);
        buf[p + 1].write(PAIRS[r + 1]);
    }
    if x >= 10 {
        let r = x as usize * 2;
        buf[p - 2].write(PAIRS[r]);
        buf[p - 1].write(PAIRS[r + 1]);
    } else {
        buf[p - 1].write(b'0' + x as u8);
    }
    at + n
}

/// Append the ids in decimal, `sep` between two ids (`"1 2 3"` for `sep = b" "`).
///
/// The digits are written straight into the vector's spare room, reserved for the longest
/// case up front: appending each id through a small buffer (a capacity check and a short copy
/// per id) cost 11 ns per id, a quarter of `toksmith encode`'s time.
pub fn ids_to_text(ids: &[u32], sep: &[u8], out: &mut Vec<u8>) {
    out.reserve(ids.len() * (10 + sep.len()));
    let buf = out.spare_capacity_mut();
    let mut w = 0;
    for (k, &id) in ids.iter().enumerate() {
        if k > 0 {
            if let [b] = sep {
                buf[w].write(*b);
                w += 1;
            } else {
                for &b in sep {
                    buf[w].write(b);
                    w += 1;
                }
            }
        }
        w = put_decimal(id, buf, w);
    }
    // SAFETY: the first `w` bytes of the spare room were written above.
    unsafe { out.set_len(out.len() + w) };
}

/// Append the ids as little-endian integers of `width` bytes (2 or 4); an id too large for
/// 2 bytes is an error naming it.
pub fn ids_to_le(ids: &[u32], width: usize, out: &mut Vec<u8>) -> Result<()> {
    match width {
        4 => {
            out.reserve(ids.len() * 4);
            for &id in ids {
                out.extend_from_slice(&id.to_le_bytes());
            }
        }
        2 => {
            if let Some(&big) = ids.iter().find(|&&id| id > u16::MAX as u32) {
                return Err(Error::InvalidArgument(format!(
                    "token id {big} does not fit in 2 bytes: pass width=4"
                )));
            }
            out.reserve(ids.len() * 2);
            for &id in ids {
                out.extend_from_slice(&(id as u16).to_le_bytes());
            }
        }
        _ => {
            return Err(Error::InvalidArgument(format!(
                "width must be 2 or 4 bytes, not {width}"
            )))
        }
    }
    Ok(())
}

/// Parse ids written as decimal digits separated by ASCII whitespace (the bytes Python's
/// `bytes.split()` splits on), appending them to `out`. Returns false, leaving `out` as it was,
/// if any word is not plain digits or does not fit in 32 bits (the caller then parses the text
/// its own way, for the exact error).
pub fn parse_text_ids(data: &[u8], out: &mut Vec<u32>) -> bool {
    let start = out.len();
    let mut value: u64 = 0;
    let mut in_word = false;
    for &b in data {
        match b {
            b'0'..=b'9' => {
                value = value * 10 + (b - b'0') as u64;
                if value > u32::MAX as u64 {
                    out.truncate(start);
                    return false;
                }
                in_word = true;
            }
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => {
                if in_word {
                    out.push(value as u32);
                    value = 0;
                    in_word = false;
                }
            }
            _ => {
                out.truncate(start);
                return false;
            }
        }
    }
    if in_word {
        out.push(value as u32);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_text_equals_formatting() {
        let ids: Vec<u32> = [
            0,
            1,
            9,
            10,
            99,
            100,
            101,
            999,
            1000,
            65535,
            100257,
            u32::MAX,
        ]
        .into_iter()
        .chain((0..5000).map(|k| k * 7919 % 1_000_003))
        .chain((1..10).flat_map(|e| {
            let p = 10u32.pow(e);
            [p - 1, p, p + 1]
        }))
        .chain((0..2000u64).map(|k| (k * 2_654_435_761 % (1 << 32)) as u32))
        .collect();
        for sep in [&b" "[..], b",", b", ", b""] {
            let mut out = Vec::new();
            ids_to_text(&ids, sep, &mut out);
            let want: Vec<String> = ids.iter().map(u32::to_string).collect();
            assert_eq!(
                out,
                want.join(std::str::from_utf8(sep).unwrap()).into_bytes()
            );
        }
        let mut out = b"x".to_vec();
        ids_to_text(&[], b" ", &mut out);
        assert_eq!(out, b"x");
        ids_to_text(&[12, 3456789], b"; ", &mut out);
        ids_to_text(&[7], b" ", &mut out);
        assert_eq!(out, b"x12; 34567897");
    }

    #[test]
    fn little_endian_widths() {
        let mut out = Vec::new();
        ids_to_le(&[1, 258, 65535], 2, &mut out).unwrap();
        assert_eq!(out, [1, 0, 2, 1, 255, 255]);
        out.clear();
        ids_to_le(&[1, 65536], 4, &mut out).unwrap();
        assert_eq!(out, [1, 0, 0, 0, 0, 0, 1, 0]);
        assert!(ids_to_le(&[65536], 2, &mut out).is_err());
        assert!(ids_to_le(&[1], 3, &mut out).is_err());
    }

    #[test]
    fn parses_what_it_writes() {
        let ids: Vec<u32> = (0..3000)
            .map(|k| k * 104_729 % 4_000_000_007u64 as u32)
            .collect();
        let mut text = Vec::new();
        ids_to_text(&ids, b" ", &mut text);
        text.extend_from_slice(b"\n\t 007\x0b\x0c12\r\n");
        let mut out = vec![9];
        assert!(parse_text_ids(&text, &mut out));
        assert_eq!(out[0], 9);
        assert_eq!(&out[1..ids.len() + 1], &ids[..]);
        assert_eq!(&out[ids.len() + 1..], &[7, 12]);
        for bad in [&b"1 -2"[..], b"1_000", b"+1", b"4294967296", b"1 x"] {
            let mut out = vec![5];
            assert!(!parse_text_ids(bad, &mut out), "{bad:?}");
            assert_eq!(out, [5]);
        }
        let mut out = Vec::new();
        assert!(parse_text_ids(b"  \n", &mut out) && out.is_empty());
        assert!(parse_text_ids(b"4294967295", &mut out) && out == [u32::MAX]);
    }
}
