//! A byte trie for prefix searches over a vocabulary (Unigram lattices, WordPiece longest match,
//! user-defined symbols). Transitions live in one hash map keyed by (node, byte), so a step is a
//! single lookup and the structure is as compact as the vocabulary.

use rustc_hash::FxHashMap;

#[derive(Debug, Clone, Default)]
pub struct Trie {
    next: FxHashMap<u64, u32>,
    /// The value stored at each node (u32::MAX: none).
    values: Vec<u32>,
}

const NONE: u32 = u32::MAX;

impl Trie {
    pub fn new() -> Self {
        Trie {
            next: FxHashMap::default(),
            values: vec![NONE],
        }
    }

    /// Insert `key` with `value` (a later insert of the same key replaces the value).
    pub fn insert(&mut self, key: &[u8], value: u32) {
        let mut node = 0u32;
        for &b in key {
            let k = (u64::from(node) << 8) | u64::from(b);
            node = match self.next.get(&k) {
                Some(&n) => n,
                None => {
                    let n = self.values.len() as u32;
                    self.values.push(NONE);
                    self.next.insert(k, n);
                    n
                }
            };
        }
        self.values[node as usize] = value;
    }

    #[inline]
    fn step(&self, node: u32, b: u8) -> Option<u32> {
        self.next
            .get(&((u64::from(node) << 8) | u64::from(b)))
            .copied()
    }

    /// Calls `f(length, value)` for every key that is a prefix of `text`, shortest first.
    #[inline]
    pub fn common_prefixes(&self, text: &[u8], mut f: impl FnMut(usize, u32)) {
        let mut node = 0u32;
        for (i, &b) in text.iter().enumerate() {
            match self.step(node, b) {
                Some(n) => node = n,
                None => return,
            }
            let v = self.values[node as usize];
            if v != NONE {
                f(i + 1, v);
            }
        }
    }

    /// The longest key that is a prefix of `text`: (length, value).
    pub fn longest_prefix(&self, text: &[u8]) -> Option<(usize, u32)> {
        let mut best = None;
        self.common_prefixes(text, |len, v| best = Some((len, v)));
        best
    }

    /// The value of exactly `key`.
    pub fn get(&self, key: &[u8]) -> Option<u32> {
        let mut node = 0u32;
        for &b in key {
            node = self.step(node, b)?;
        }
        let v = self.values[node as usize];
        (v != NONE).then_some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        let mut t = Trie::new();
        t.insert(b"a", 1);
        t.insert(b"abc", 2);
        t.insert(b"abd", 3);
        t.insert(b"", 9);
        let mut got = vec![];
        t.common_prefixes(b"abcd", |l, v| got.push((l, v)));
        assert_eq!(got, vec![(1, 1), (3, 2)]);
        assert_eq!(t.longest_prefix(b"abdx"), Some((3, 3)));
        assert_eq!(t.longest_prefix(b"x"), None);
        assert_eq!(t.get(b"ab"), None);
        assert_eq!(t.get(b"abd"), Some(3));
        assert_eq!(t.get(b""), Some(9));
    }
}
