//! Small vocabularies for the merge tests (bytes plus a few a/b tokens).

use crate::vocab::Vocab;

pub(crate) fn toy_vocab() -> Vocab {
    let mut m: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
    for (i, t) in ["aa", "ab", "aaa", "aaaa", "ba", "bab", "abab"]
        .iter()
        .enumerate()
    {
        m.push((t.as_bytes().to_vec(), 256 + i as u32));
    }
    Vocab::new(m, vec![]).unwrap()
}

/// Bytes plus a/b tokens whose ranks do not follow their lengths (merges can create pairs
/// of a lower rank than the one being merged), plus `extra`.
pub(crate) fn lower_rank_vocab(extra: &[(&str, u32)]) -> Vocab {
    let mut m: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
    let base = [
        ("abab", 300),
        ("ab", 310),
        ("ba", 305),
        ("bb", 256),
        ("abb", 320),
        ("aab", 290),
        ("aa", 315),
    ];
    for (t, r) in base.iter().chain(extra) {
        m.push((t.as_bytes().to_vec(), *r));
    }
    Vocab::new(m, vec![]).unwrap()
}
