//! GPT-2's byte-level alphabet: one printable character per byte, so the tokens of a
//! byte-level vocabulary can be spelled as JSON text (`encoder.json`, Hugging Face
//! `tokenizer.json`, toksmith's own files).
//!
//! The printable bytes `!`..`~`, `¡`..`¬` and `®`..`ÿ` stand for themselves; the other 68 bytes
//! are given U+0100, U+0101, ... in byte order (the space 0x20 becomes `Ġ`, U+0120). The Python
//! reference is `toksmith/bytelevel.py`; the two are checked against each other in the tests.

/// Whether byte `b` is spelled by the character of the same code point.
const fn keeps(b: u8) -> bool {
    matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF)
}

const fn byte_to_char_table() -> [u16; 256] {
    let mut t = [0u16; 256];
    let mut shift = 0u16;
    let mut b = 0usize;
    while b < 256 {
        if keeps(b as u8) {
            t[b] = b as u16;
        } else {
            t[b] = 256 + shift;
            shift += 1;
        }
        b += 1;
    }
    t
}

/// The code point spelling each byte.
pub const BYTE_TO_CHAR: [u16; 256] = byte_to_char_table();

/// One past the largest code point of the alphabet (U+0143).
const ALPHABET_END: usize = 0x144;

const fn char_to_byte_table() -> [i16; ALPHABET_END] {
    let mut t = [-1i16; ALPHABET_END];
    let mut b = 0usize;
    while b < 256 {
        t[BYTE_TO_CHAR[b] as usize] = b as i16;
        b += 1;
    }
    t
}

const CHAR_TO_BYTE: [i16; ALPHABET_END] = char_to_byte_table();

/// The byte a code point of the alphabet stands for (for callers that read code units).
#[inline]
pub fn unit_to_byte(u: u32) -> Option<u8> {
    match CHAR_TO_BYTE.get(u as usize) {
        Some(&b) if b >= 0 => Some(b as u8),
        _ => None,
    }
}

/// Append the bytes spelled by `s` to `out`; false if `s` has a character outside the alphabet
/// (what was appended is then unspecified).
pub fn decode_into(s: &str, out: &mut Vec<u8>) -> bool {
    out.reserve(s.len());
    for c in s.chars() {
        match unit_to_byte(c as u32) {
            Some(b) => out.push(b),
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spell(bytes: &[u8]) -> String {
        bytes
            .iter()
            .map(|&b| char::from_u32(BYTE_TO_CHAR[b as usize] as u32).unwrap())
            .collect()
    }

    fn decode(s: &str) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        decode_into(s, &mut out).then_some(out)
    }

    #[test]
    fn alphabet_is_a_bijection_onto_printable_characters() {
        let mut seen = std::collections::HashSet::new();
        for b in 0..=255u8 {
            let c = char::from_u32(BYTE_TO_CHAR[b as usize] as u32).unwrap();
            assert!(
                !c.is_whitespace() && !c.is_control(),
                "byte {b:#x} -> {c:?}"
            );
            assert!(seen.insert(c));
            assert_eq!(unit_to_byte(c as u32), Some(b));
        }
        assert_eq!(spell(b" hello"), "\u{120}hello");
        assert_eq!(spell(b"\n"), "\u{10a}");
        assert_eq!(BYTE_TO_CHAR[0xAD], 0x143);
    }

    #[test]
    fn decode_rejects_characters_outside_the_alphabet() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(decode(&spell(&all)).unwrap(), all);
        for bad in [
            " ",
            "a b",
            "\u{144}",
            "\u{ad}",
            "\n",
            "é\u{1F600}",
            "\u{7f}",
        ] {
            assert_eq!(decode(bad), None, "{bad:?}");
        }
        assert_eq!(decode("").unwrap(), b"");
    }
}
