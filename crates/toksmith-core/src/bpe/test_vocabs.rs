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

/// xorshift64: the tests' random numbers.
pub(crate) fn xorshift(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// Random text of `chars` (CJK, kana, Thai and a few Latin letters and spaces).
pub(crate) fn multilingual_text(seed: &mut u64, n_chars: usize) -> Vec<u8> {
    const CHARS: [&str; 16] = [
        "中", "文", "字", "的", "一", "是", "あ", "い", "う", "ไ", "ก", "่", "า", "a", "n", " ",
    ];
    (0..n_chars)
        .flat_map(|_| CHARS[(xorshift(seed) % 16) as usize].bytes())
        .collect()
}

/// Bytes plus 3000 tokens cut from random [`multilingual_text`] (whole characters, partial
/// ones, runs across character boundaries), ranked in random order as a byte-level trainer
/// could leave them (a token need not be a merge of two lower-ranked tokens: tiktoken's rule
/// still gives one result).
pub(crate) fn multilingual_vocab(seed: &mut u64) -> Vocab {
    let mut m: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
    let mut seen: std::collections::HashSet<Vec<u8>> = m.iter().map(|(t, _)| t.clone()).collect();
    let text = multilingual_text(seed, 4000);
    while m.len() < 256 + 3000 {
        let len = 2 + (xorshift(seed) % 11) as usize;
        let at = (xorshift(seed) as usize) % (text.len() - len);
        let t = text[at..at + len].to_vec();
        if seen.insert(t.clone()) {
            let id = m.len() as u32;
            m.push((t, id));
        }
    }
    Vocab::new(m, vec![]).unwrap()
}

/// tiktoken's merge written plainly: merge the lowest-ranked adjacent pair (leftmost on ties)
/// until no adjacent pair is a token.
pub(crate) fn reference_merge(vocab: &Vocab, piece: &[u8]) -> Vec<u32> {
    let mut parts: Vec<&[u8]> = piece.chunks(1).collect();
    loop {
        let mut best: Option<(u32, usize)> = None;
        for i in 0..parts.len().saturating_sub(1) {
            let joined = [parts[i], parts[i + 1]].concat();
            if let Some(r) = vocab.rank(&joined) {
                if best.is_none_or(|(b, _)| r < b) {
                    best = Some((r, i));
                }
            }
        }
        let Some((_, i)) = best else { break };
        let start = parts[i].as_ptr() as usize - piece.as_ptr() as usize;
        parts[i] = &piece[start..start + parts[i].len() + parts[i + 1].len()];
        parts.remove(i + 1);
    }
    parts.iter().map(|p| vocab.rank(p).unwrap()).collect()
}
