//! A byte trie for prefix searches over a vocabulary (Unigram lattices, WordPiece longest match,
//! user-defined symbols).
//!
//! Keys are inserted into one hash map keyed by (node, byte). [`Trie::finish`] then lays the
//! nodes out as a double array (the layout of sentencepiece's darts): node `n`'s child on byte
//! `b` is the unit at `base[n] + b`, which is that child exactly when its `check` is `n`. A
//! step is one load of a 12-byte unit that also holds the child's own base and value, so
//! walking a key reads one place per byte instead of searching a run of edges (the Unigram
//! lattice walks the trie at every character: `benches/perf_notes.md`). Lookups before
//! `finish` use the map.

use rustc_hash::FxHashMap;

use crate::mem::{try_collect, try_filled, try_reserve, try_reserve_map, try_vec};
use crate::{Error, Result};

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

/// The double array: unit 0 is the root; every unit a node with children reaches is in
/// bounds (the array runs 256 units past the largest base), so a step needs no length test
/// beyond the slice's own.
#[derive(Debug, Clone)]
struct Packed {
    units: Vec<Unit>,
}

#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct Unit {
    /// the index of this node's parent ([`NONE`]: a free unit, or the root)
    check: u32,
    /// where this node's children are: the child on byte `b` is at `base + b` (0 for a node
    /// without children: no unit names it as parent, so every step from it misses)
    base: u32,
    /// the value of the key ending here ([`NONE`]: none)
    value: u32,
}

const NONE: u32 = u32::MAX;

const FREE_UNIT: Unit = Unit {
    check: NONE,
    base: 0,
    value: NONE,
};

/// How many free units a node's children are tried at before they go past the array's end:
/// bounds the build to linear time (a dense array would need a search over all free units per
/// node) at the cost of a few holes.
const PLACE_TRIES: usize = 256;

/// How far behind the array's end free units stay candidates.
const PLACE_WINDOW: usize = 4096;

/// The double array being laid out: its units and a list of the free ones in index order.
struct Layout {
    units: Vec<Unit>,
    /// per unit: the next and previous free unit (only meaningful for free units; [`NONE`]
    /// ends the list)
    next_free: Vec<u32>,
    prev_free: Vec<u32>,
    used: Vec<bool>,
    head: u32,
    tail: u32,
}

impl Layout {
    fn new(nodes: usize) -> Result<Self> {
        // about one unit per node plus the holes; grown fallibly past that
        let room = nodes + nodes / 4 + 512;
        let mut l = Layout {
            units: try_vec(room, WHAT)?,
            next_free: try_vec(room, WHAT)?,
            prev_free: try_vec(room, WHAT)?,
            used: try_vec(room, WHAT)?,
            head: NONE,
            tail: NONE,
        };
        l.grow(256)?;
        l.take(0);
        Ok(l)
    }

    /// Append free units up to `len` (in blocks of 256).
    fn grow(&mut self, len: usize) -> Result<()> {
        if len <= self.units.len() {
            return Ok(());
        }
        let len = len.next_multiple_of(256);
        if len >= NONE as usize {
            return Err(Error::InvalidVocab(
                "the vocabulary's trie is too large".into(),
            ));
        }
        let add = len - self.units.len();
        try_reserve(&mut self.units, add, WHAT)?;
        try_reserve(&mut self.next_free, add, WHAT)?;
        try_reserve(&mut self.prev_free, add, WHAT)?;
        try_reserve(&mut self.used, add, WHAT)?;
        for i in self.units.len()..len {
            let i = i as u32;
            self.units.push(FREE_UNIT);
            self.used.push(false);
            self.next_free.push(NONE);
            self.prev_free.push(self.tail);
            match self.tail {
                NONE => self.head = i,
                t => self.next_free[t as usize] = i,
            }
            self.tail = i;
        }
        Ok(())
    }

    fn is_free(&self, i: usize) -> bool {
        self.used.get(i).is_none_or(|&u| !u)
    }

    /// Mark unit `i` (within the array) used: off the free list.
    fn take(&mut self, i: usize) {
        debug_assert!(!self.used[i]);
        self.used[i] = true;
        let (p, n) = (self.prev_free[i], self.next_free[i]);
        match p {
            NONE => self.head = n,
            p => self.next_free[p as usize] = n,
        }
        match n {
            NONE => self.tail = p,
            n => self.prev_free[n as usize] = p,
        }
    }

    /// A base at which every unit `base + label` is free (`labels` sorted, not empty), with
    /// the array grown to `base + 256`.
    fn place(&mut self, labels: &[u8]) -> Result<usize> {
        let first = usize::from(labels[0]);
        // free units far behind the end are closed (left as holes): the search stays within
        // the last few blocks, where most units are still free
        while self.head != NONE && (self.head as usize) + PLACE_WINDOW < self.units.len() {
            self.take(self.head as usize);
        }
        let mut at = self.head;
        let mut tries = 0;
        let base = loop {
            if at == NONE || tries == PLACE_TRIES {
                // past every unit in use: all free
                break self.units.len().max(first) - first;
            }
            let p = at as usize;
            at = self.next_free[p];
            tries += 1;
            if p < first {
                continue;
            }
            let base = p - first;
            if labels[1..]
                .iter()
                .all(|&l| self.is_free(base + usize::from(l)))
            {
                break base;
            }
        };
        self.grow(base + 256)?;
        Ok(base)
    }
}

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

    /// Lay the nodes out as a double array for fast lookups (call once all keys are in),
    /// allocated fallibly. Nodes are placed breadth first, each node's children at the first
    /// base (among the first [`PLACE_TRIES`] free units) where all of them fit.
    pub fn finish(&mut self) -> Result<()> {
        let mut all: Vec<(u32, u8, u32)> = try_collect(
            self.next
                .iter()
                .map(|(&k, &child)| ((k >> 8) as u32, k as u8, child)),
            WHAT,
        )?;
        all.sort_unstable();
        let n = self.values.len();
        // the edges of node i are all[first[i]..first[i + 1]]
        let mut first: Vec<u32> = try_filled(n + 1, 0, WHAT)?;
        for &(parent, _, _) in &all {
            first[parent as usize + 1] += 1;
        }
        for i in 0..n {
            first[i + 1] += first[i];
        }
        let mut layout = Layout::new(n)?;
        layout.units[0].value = self.values[0];
        // (node, its unit), breadth first: every node is queued once
        let mut queue: Vec<(u32, u32)> = try_vec(n, WHAT)?;
        queue.push((0, 0));
        let mut labels = [0u8; 256];
        let mut done = 0;
        while done < queue.len() {
            let (node, unit) = queue[done];
            done += 1;
            let edges = &all[first[node as usize] as usize..first[node as usize + 1] as usize];
            if edges.is_empty() {
                continue;
            }
            for (l, &(_, b, _)) in labels.iter_mut().zip(edges) {
                *l = b;
            }
            let base = layout.place(&labels[..edges.len()])?;
            layout.units[unit as usize].base = base as u32;
            for &(_, b, child) in edges {
                let at = base + usize::from(b);
                layout.take(at);
                layout.units[at] = Unit {
                    check: unit,
                    base: 0,
                    value: self.values[child as usize],
                };
                queue.push((child, at as u32));
            }
        }
        let mut units = layout.units;
        // (at least 256 past the largest base: `place` grew it so)
        units.shrink_to_fit();
        self.packed = Some(Packed { units });
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
        let at = p.units[node as usize].base as usize + usize::from(b);
        match p.units.get(at) {
            Some(u) if u.check == node => Some(at as u32),
            _ => None,
        }
    }

    fn value(&self, node: u32) -> u32 {
        match &self.packed {
            Some(p) => p.units[node as usize].value,
            None => self.values[node as usize],
        }
    }

    /// Calls `f(length, value)` for every key that is a prefix of `text`, shortest first.
    #[inline]
    pub fn common_prefixes(&self, text: &[u8], mut f: impl FnMut(usize, u32)) {
        if let Some(p) = &self.packed {
            let units = &p.units[..];
            let mut node = 0u32;
            let mut base = units[0].base as usize;
            for (i, &b) in text.iter().enumerate() {
                let at = base + usize::from(b);
                let Some(&u) = units.get(at) else { return };
                if u.check != node {
                    return;
                }
                node = at as u32;
                base = u.base as usize;
                if u.value != NONE {
                    f(i + 1, u.value);
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
        let v = self.value(node);
        (v != NONE).then_some(v)
    }

    /// Whether some key starts with byte `b`.
    pub fn starts_with_byte(&self, b: u8) -> bool {
        self.step(0, b).is_some()
    }

    /// The number of units of the double array (0 before [`Trie::finish`]).
    #[cfg(test)]
    fn units(&self) -> usize {
        self.packed.as_ref().map_or(0, |p| p.units.len())
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

    /// xorshift: reproducible random numbers without a dependency
    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed | 1;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// Random keys with shared prefixes (each key extends an earlier one half of the time), all
    /// 256 byte values, keys that are prefixes of others, repeated keys (the later value wins).
    fn random_keys(seed: u64, n: usize) -> Vec<(Vec<u8>, u32)> {
        let mut next = rng(seed);
        let mut keys: Vec<(Vec<u8>, u32)> = vec![];
        for i in 0..n {
            let mut k = match next() % 4 {
                0 | 1 if !keys.is_empty() => {
                    let (from, _) = &keys[(next() % keys.len() as u64) as usize];
                    from[..(next() as usize % (from.len() + 1))].to_vec()
                }
                _ => vec![],
            };
            let extra = 1 + next() % 6;
            // a few alphabets: dense (all bytes), narrow (shared prefixes), UTF-8-like
            let alphabet = next() % 3;
            for _ in 0..extra {
                k.push(match alphabet {
                    0 => next() as u8,
                    1 => b"ab\x00\xff"[(next() % 4) as usize],
                    _ => 0xe0 + (next() % 3) as u8,
                });
            }
            keys.push((k, i as u32));
        }
        keys
    }

    /// Every lookup of the finished trie and of the unfinished one against a `HashMap`.
    fn check_against_map(keys: &[(Vec<u8>, u32)], probes: &[Vec<u8>]) {
        let mut t = Trie::new();
        let mut map = std::collections::HashMap::new();
        for (k, v) in keys {
            t.insert(k, *v).unwrap();
            map.insert(k.clone(), *v);
        }
        let mut unfinished = t.clone();
        t.finish().unwrap();
        for text in probes.iter().chain(keys.iter().map(|(k, _)| k)) {
            let want: Vec<(usize, u32)> = (1..=text.len())
                .filter_map(|l| map.get(&text[..l]).map(|&v| (l, v)))
                .collect();
            for trie in [&t, &mut unfinished] {
                let mut got = vec![];
                trie.common_prefixes(text, |l, v| got.push((l, v)));
                assert_eq!(got, want, "{text:?}");
                assert_eq!(trie.longest_prefix(text), want.last().copied());
                assert_eq!(trie.get(text), map.get(text).copied(), "{text:?}");
                if let Some(&b) = text.first() {
                    let starts = map.keys().any(|k| k.first() == Some(&b));
                    assert_eq!(trie.starts_with_byte(b), starts);
                }
            }
        }
    }

    #[test]
    fn double_array_matches_a_map_on_random_keys() {
        for seed in 1..30u64 {
            let keys = random_keys(seed, [1, 5, 50, 400, 3000][seed as usize % 5]);
            let mut next = rng(seed + 1000);
            let mut probes = vec![vec![]];
            for (k, _) in keys.iter().take(200) {
                // a key with a random tail, a key cut short, a key with a changed byte
                let mut p = k.clone();
                p.extend((0..next() % 4).map(|_| next() as u8));
                probes.push(p);
                probes.push(k[..k.len() / 2].to_vec());
                let mut q = k.clone();
                let at = (next() % q.len() as u64) as usize;
                q[at] = next() as u8;
                probes.push(q);
            }
            probes.extend((0..=255u8).map(|b| vec![b, b]));
            check_against_map(&keys, &probes);
        }
        // every node with all 256 children, two levels deep, and the empty key
        let mut keys = vec![(vec![], 7)];
        for a in 0..=255u8 {
            for b in [0u8, 1, a, 255] {
                keys.push((vec![a, b], u32::from(a) << 8 | u32::from(b)));
            }
        }
        check_against_map(&keys, &[vec![3, 3, 3], vec![255, 0]]);
    }

    #[test]
    fn double_array_stays_small() {
        // few holes: the array is within a small factor of the node count, on random keys
        // (nodes with children spread over all byte values) and on T5's pieces
        let t5 = crate::models::unigram::tests::t5_model();
        let t5_keys: Vec<(Vec<u8>, u32)> = t5
            .pieces
            .iter()
            .enumerate()
            .map(|(i, p)| (p.piece.as_bytes().to_vec(), i as u32))
            .collect();
        for (keys, most) in [(random_keys(7, 20_000), 1.3), (t5_keys, 1.05)] {
            let mut t = Trie::new();
            for (k, v) in &keys {
                t.insert(k, *v).unwrap();
            }
            t.finish().unwrap();
            let nodes = t.values.len();
            let units = t.units();
            assert!(
                units as f64 <= nodes as f64 * most + 512.0,
                "{units} units, {nodes} nodes"
            );
            // (a repeated key keeps its last value)
            let last: std::collections::HashMap<_, _> = keys.iter().cloned().collect();
            for (k, _) in keys.iter().step_by(7) {
                assert_eq!(t.get(k), last.get(k).copied());
            }
        }
    }
}
