//! Ids written straight into a caller's byte buffer (a numpy array's memory): the batch
//! encoder that fills one array for many documents converts each range of ids in place, on the
//! thread that encoded it, with no intermediate vector per document.

use crate::error::{Error, Result};

/// The bytes per id of the array types a batch can be written as: u16, u32/i32, i64.
pub fn check_width(width: usize) -> Result<()> {
    match width {
        2 | 4 | 8 => Ok(()),
        _ => Err(Error::InvalidArgument(format!(
            "width must be 2, 4 or 8 bytes, not {width}"
        ))),
    }
}

/// Write `ids` into `out` as little-endian integers of `width` bytes; `out` must be exactly
/// `ids.len() * width` bytes. An id that does not fit in 2 bytes is an error (nothing is
/// truncated); 4 and 8 bytes hold every `u32`.
pub fn write_ids_le(ids: &[u32], width: usize, out: &mut [u8]) -> Result<()> {
    check_width(width)?;
    if out.len() != ids.len() * width {
        return Err(Error::InvalidArgument(format!(
            "the buffer holds {} bytes, {} ids of {width} bytes need {}",
            out.len(),
            ids.len(),
            ids.len() * width
        )));
    }
    match width {
        2 => {
            if let Some(&big) = ids.iter().find(|&&id| id > u16::MAX as u32) {
                return Err(Error::InvalidArgument(format!(
                    "token id {big} does not fit in uint16: use a 4-byte dtype"
                )));
            }
            for (o, &id) in out.chunks_exact_mut(2).zip(ids) {
                o.copy_from_slice(&(id as u16).to_le_bytes());
            }
        }
        4 => {
            for (o, &id) in out.chunks_exact_mut(4).zip(ids) {
                o.copy_from_slice(&id.to_le_bytes());
            }
        }
        _ => {
            for (o, &id) in out.chunks_exact_mut(8).zip(ids) {
                o.copy_from_slice(&u64::from(id).to_le_bytes());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_round_trip() {
        let ids = [0u32, 1, 255, 256, 65535];
        for width in [2usize, 4, 8] {
            let mut out = vec![0u8; ids.len() * width];
            write_ids_le(&ids, width, &mut out).unwrap();
            let back: Vec<u32> = out
                .chunks_exact(width)
                .map(|c| {
                    let mut b = [0u8; 8];
                    b[..width].copy_from_slice(c);
                    u64::from_le_bytes(b) as u32
                })
                .collect();
            assert_eq!(back, ids);
        }
    }

    #[test]
    fn refuses_what_does_not_fit() {
        let mut out = vec![0u8; 4];
        assert!(write_ids_le(&[1, 65536], 2, &mut out).is_err());
        let mut out = vec![0u8; 8];
        assert!(write_ids_le(&[70000, u32::MAX], 4, &mut out).is_ok());
        assert!(write_ids_le(&[1], 3, &mut [0u8; 3]).is_err());
        assert!(write_ids_le(&[1, 2], 4, &mut [0u8; 4]).is_err());
    }
}
