//! A byte trie for prefix searches over a vocabulary (Unigram lattices, WordPiece longest match,
//! user-defined symbols).
//!
//! Keys are inserted into one hash map keyed by (node, byte). [`Trie::finish`] then lays the
//! edges out for lookups: the root's children in a 256-entry table, every other node's
//! children as one sorted run of (byte, child) edges, so a step reads one or two cache lines
//! instead of probing a hash table as large as the whole trie (the Unigram lattice walks the
//! trie at every character: `benches/perf_notes.md`). Lookups before `finish` use the map.

use rustc_hash::FxHashMap;

use crate::mem::{try_collect, try_map, try_reserve, try_reserve_map, try_vec};
use crate::Result;

/// What a refused allocation names.
const WHAT: &str = "the trie of a vocabulary";

#[derive(Debug, Clone, Default)]
pub struct Trie {
    next: FxHashMap<u64, u32>,
    /// The value stored at each node (u32::MAX: none).
    values: Vec<u32>,
    /// The lookup layout; `None` until [`Trie::finish`] (and again after a later insert).
    packed: Option<Packed>,
}

#[derive(Debug, Clone)]
struct Packed {
    root: Box<[u32; 256]>,
    /// per node: its edges and value side by side (one cache line per step)
    nodes: Vec<Node>,
    edges: Vec<Edge>,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    first_edge: u32,
    n_edges: u32,
    value: u32,
}

#[derive(Debug, Clone, Copy)]
struct Edge {
    byte: u8,
    child: u32,
}

const NONE: u32 = u32::MAX;

impl Trie {
    pub fn new() -> Self {
        Trie {
            next: FxHashMap::default(),
            values: vec![NONE],
            packed: None,
        }
    }

    /// Insert `key` with `value` (a later insert of the same key replaces the value). Its
    /// nodes are allocated fallibly (`Error::OutOfMemory`: the trie keeps the nodes made so far).
    pub fn insert(&mut self, key: &[u8], value: u32) -> Result<()> {
        use std::collections::hash_map::Entry;
        self.packed = None;
        // room for a node per byte first (amortized: each table doubles when full), so that
        // the loop below never allocates: one check a key, not one a byte
        try_reserve_map(&mut self.next, key.len(), WHAT)?;
        try_reserve(&mut self.values, key.len(), WHAT)?;
        let mut node = 0u32;
        for &b in key {
            let k = (u64::from(node) << 8) | u64::from(b);
            node = match self.next.entry(k) {
                Entry::Occupied(e) => *e.get(),
                Entry::Vacant(e) => {
                    let n = self.values.len() as u32;
                    self.values.push(NONE);
                    e.insert(n);
                    n
                }
            };
        }
        self.values[node as usize] = value;
        Ok(())
    }

    /// Lay the edges out for fast lookups (call once all keys are in), allocated fallibly.
    pub fn finish(&mut self) -> Result<()> {
        let mut all: Vec<(u32, u8, u32)> = try_collect(
            self.next
                .iter()
                .map(|(&k, &child)| ((k >> 8) as u32, k as u8, child)),
            WHAT,
        )?;
        all.sort_unstable();
        let mut root = Box::new([NONE; 256]);
        let mut nodes: Vec<Node> = try_map(
            &self.values,
            |&value| {
                Ok(Node {
                    first_edge: 0,
                    n_edges: 0,
                    value,
                })
            },
            WHAT,
        )?;
        // (every push below is within this room)
        let mut edges = try_vec(all.len(), WHAT)?;
        for &(node, byte, child) in &all {
            if node == 0 {
                root[byte as usize] = child;
                continue;
            }
            let r = &mut nodes[node as usize];
            if r.n_edges == 0 {
                r.first_edge = edges.len() as u32;
            }
            r.n_edges += 1;
            edges.push(Edge { byte, child });
        }
        self.packed = Some(Packed { root, nodes, edges });
        Ok(())
    }

    #[inline(always)]
    fn step(&self, node: u32, b: u8) -> Option<u32> {
        let Some(p) = &self.packed else {
            return self
                .next
                .get(&((u64::from(node) << 8) | u64::from(b)))
                .copied();
        };
        if node == 0 {
            let c = p.root[b as usize];
            return (c != NONE).then_some(c);
        }
        let Node {
            first_edge: start,
            n_edges: n,
            ..
        } = p.nodes[node as usize];
        let run = &p.edges[start as usize..(start + n) as usize];
        if run.len() <= 12 {
            run.iter().find(|e| e.byte == b).map(|e| e.child)
        } else {
            run.binary_search_by_key(&b, |e| e.byte)
                .ok()
                .map(|i| run[i].child)
        }
    }

    /// Calls `f(length, value)` for every key that is a prefix of `text`, shortest first.
    #[inline]
    pub fn common_prefixes(&self, text: &[u8], mut f: impl FnMut(usize, u32)) {
        if let Some(p) = &self.packed {
            let mut node = 0u32;
            for (i, &b) in text.iter().enumerate() {
                match self.step(node, b) {
                    Some(n) => node = n,
                    None => return,
                }
                let v = p.nodes[node as usize].value;
                if v != NONE {
                    f(i + 1, v);
                }
            }
            return;
        }
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

    /// Whether some key starts with byte `b`.
    pub fn starts_with_byte(&self, b: u8) -> bool {
        self.step(0, b).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        let mut t = Trie::new();
        t.insert(b"a", 1).unwrap();
        t.insert(b"abc", 2).unwrap();
        t.insert(b"abd", 3).unwrap();
        t.insert(b"", 9).unwrap();
        for finished in [false, true] {
            if finished {
                t.finish().unwrap();
            }
            let mut got = vec![];
            t.common_prefixes(b"abcd", |l, v| got.push((l, v)));
            assert_eq!(got, vec![(1, 1), (3, 2)]);
            assert_eq!(t.longest_prefix(b"abdx"), Some((3, 3)));
            assert_eq!(t.longest_prefix(b"x"), None);
            assert_eq!(t.get(b"ab"), None);
            assert_eq!(t.get(b"abd"), Some(3));
            assert_eq!(t.get(b""), Some(9));
            assert!(t.starts_with_byte(b'a') && !t.starts_with_byte(b'b'));
        }
        // a node with many children (binary search) and an insert after finish
        let mut t = Trie::new();
        for b in 0..=255u8 {
            t.insert(&[b'x', b], u32::from(b)).unwrap();
        }
        t.finish().unwrap();
        for b in 0..=255u8 {
            assert_eq!(t.get(&[b'x', b]), Some(u32::from(b)));
        }
        t.insert(b"y", 7).unwrap();
        assert_eq!(t.get(b"y"), Some(7));
        assert_eq!(t.get(b"x\x05"), Some(5));
    }
}
