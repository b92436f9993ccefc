//! Ids as output bytes: decimal text with a separator, or little-endian integers (the body of a
//! `.npy` array). `toksmith encode` writes every id it produces through these.

use crate::error::{Error, Result};

/// Two ASCII digits for each of 0..100.
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Append `x` in decimal to `out`.
#[inline]
fn push_decimal(mut x: u32, out: &mut Vec<u8>) {
    let mut buf = [0u8; 10];
    let mut at = buf.len();
    while x >= 100 {
        let r = (x % 100) as usize * 2;
        x /= 100;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[r..r + 2]);
    }
    if x >= 10 {
        let r = x as usize * 2;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[r..r + 2]);
    } else {
        at -= 1;
        buf[at] = b'0' + x as u8;
    }
    out.extend_from_slice(&buf[at..]);
}

/// Append the ids in decimal, `sep` between two ids (`"1 2 3"` for `sep = b" "`).
pub fn ids_to_text(ids: &[u32], sep: &[u8], out: &mut Vec<u8>) {
    out.reserve(ids.len() * (6 + sep.len()));
    for (k, &id) in ids.iter().enumerate() {
        if k > 0 {
            out.extend_from_slice(sep);
        }
        push_decimal(id, out);
    }
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
}
