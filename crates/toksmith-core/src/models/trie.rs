//! A byte trie for prefix searches over a vocabulary (Unigram lattices, WordPiece longest match,
//! user-defined symbols).
//!
//! Keys are inserted into one hash map keyed by (node, byte). [`Trie::finish`] then lays the
//! nodes out as a double array (the layout of sentencepiece's darts): node `n`'s child on byte
//! `b` is the unit at `base[n] + b`. Every node has a base of its own, so that unit is the
//! child exactly when its label is `b`: a unit is one `u32` (the label, an in-use bit, a
//! has-value bit and the node's own base, or for a node without children its value), and a
//! step is one load of it. The values of nodes with children sit in a parallel array. At 4
//! bytes a unit T5's 32k pieces take about 340 KB, which stays in a core's L2 cache between
//! the lattice's walks (the Unigram lattice walks the trie at every character:
//! `benches/perf_notes.md`), and three quarters of its values (the leaves') come with the
//! step. Lookups before `finish`, and of a trie too large for the 21 bits of a base, use the
//! map.

use rustc_hash::FxHashMap;

use crate::mem::{try_collect, try_filled, try_reserve, try_reserve_map, try_vec};
use crate::Result;

/// What a refused allocation names.
const WHAT: &str = "the trie of a vocabulary";

#[derive(Debug, Clone, Default)]
pub struct Trie {
    next: FxHashMap<u64, u32>,
    /// The value stored at each node (u32::MAX: none).
    values: Vec<u32>,
    /// The lookup layout; `None` until [`Trie::finish`] (and again after a later insert, or
    /// where the nodes do not fit it).
    packed: Option<Packed>,
}

/// The double array. Unit 0 is the root; units 1-255 and base 0 are never used, so the base 0
/// of a node without children leads nowhere. Every unit a step can reach is in bounds (the
/// array runs 256 units past the largest base).
#[derive(Debug, Clone)]
struct Packed {
    /// per unit: `LABEL` bits, `USED`, `HAS_VALUE`, `LEAF`, the base (or with `LEAF` the
    /// value) above `BASE_SHIFT`
    units: Vec<u32>,
    /// per unit: the value of the key ending at it (read only where `HAS_VALUE` without
    /// `LEAF`)
    values: Vec<u32>,
}

const NONE: u32 = u32::MAX;

/// The byte on the edge into a unit's node.
const LABEL: u32 = 0xff;
/// The unit is a node (free units are 0, so they never match a step's `USED | byte`).
const USED: u32 = 1 << 8;
/// A key ends at the unit's node.
const HAS_VALUE: u32 = 1 << 9;
/// The unit's node has no children, and its value (below `1 << (32 - BASE_SHIFT)`) is in
/// the base's bits.
const LEAF: u32 = 1 << 10;
const BASE_SHIFT: u32 = 11;
/// The most units the array may have (a base, and so every unit index, fits its 21 bits).
const MAX_UNITS: usize = 1 << (32 - BASE_SHIFT);

/// How many free units a node's children are tried at before they go past the array's end:
/// bounds the build to linear time (a dense array would need a search over all free units per
/// node) at the cost of a few holes.
const PLACE_TRIES: usize = 256;

/// How far behind the array's end free units stay candidates.
const PLACE_WINDOW: usize = 4096;

/// The double array being laid out: its units and a list of the free ones in index order.
struct Layout {
    units: Vec<u32>,
    values: Vec<u32>,
    /// per unit: the next and previous free unit (only meaningful for free units; [`NONE`]
    /// ends the list)
    next_free: Vec<u32>,
    prev_free: Vec<u32>,
    used: Vec<bool>,
    /// per unit index: some node's base is it (each node needs its own: a step checks the
    /// label only)
    is_base: Vec<bool>,
    head: u32,
    tail: u32,
}

/// The layout would need more than [`MAX_UNITS`] units.
struct TooLarge;

impl Layout {
    fn new(nodes: usize) -> Result<Self> {
        // about one unit per node plus the holes; grown fallibly past that
        let room = nodes + nodes / 4 + 512;
        let mut l = Layout {
            units: try_vec(room, WHAT)?,
            values: try_vec(room, WHAT)?,
            next_free: try_vec(room, WHAT)?,
            prev_free: try_vec(room, WHAT)?,
            used: try_vec(room, WHAT)?,
            is_base: try_vec(room, WHAT)?,
            head: NONE,
            tail: NONE,
        };
        l.grow(256)?;
        // the root, and units 1-255, which stay 0: a step from a node without children
        // (base 0) lands on one of them and misses
        for i in 0..256 {
            l.take(i);
        }
        l.is_base[0] = true;
        Ok(l)
    }

    /// Append free units up to `len` (in blocks of 256).
    fn grow(&mut self, len: usize) -> Result<()> {
        if len <= self.units.len() {
            return Ok(());
        }
        let len = len.next_multiple_of(256);
        let add = len - self.units.len();
        try_reserve(&mut self.units, add, WHAT)?;
        try_reserve(&mut self.values, add, WHAT)?;
        try_reserve(&mut self.next_free, add, WHAT)?;
        try_reserve(&mut self.prev_free, add, WHAT)?;
        try_reserve(&mut self.used, add, WHAT)?;
        try_reserve(&mut self.is_base, add, WHAT)?;
        for i in self.units.len()..len {
            let i = i as u32;
            self.units.push(0);
            self.values.push(NONE);
            self.used.push(false);
            self.is_base.push(false);
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

    /// A base no other node has at which every unit `base + label` is free (`labels`
    /// sorted, not empty), with the array grown to `base + 256`; `TooLarge` past
    /// `max_units` (at most [`MAX_UNITS`]).
    fn place(
        &mut self,
        labels: &[u8],
        max_units: usize,
    ) -> Result<std::result::Result<usize, TooLarge>> {
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
                // past every unit in use: all free, and past every base so far (each has its
                // 256 units within the array)
                break self.units.len().max(first) - first;
            }
            let p = at as usize;
            at = self.next_free[p];
            tries += 1;
            if p < first || self.is_base[p - first] {
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
        if base + 256 > max_units {
            return Ok(Err(TooLarge));
        }
        self.grow(base + 256)?;
        self.is_base[base] = true;
        Ok(Ok(base))
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
    /// base (among the first [`PLACE_TRIES`] free units) that no other node has and where all
    /// of them fit. A trie whose array would pass [`MAX_UNITS`] keeps the map.
    pub fn finish(&mut self) -> Result<()> {
        self.finish_within(MAX_UNITS)
    }

    /// [`Trie::finish`] with at most `max_units` units (tests try small limits).
    fn finish_within(&mut self, max_units: usize) -> Result<()> {
        self.packed = None;
        if self.values.len() >= max_units {
            return Ok(());
        }
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
        if self.values[0] != NONE {
            layout.units[0] |= HAS_VALUE;
            layout.values[0] = self.values[0];
        }
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
            let Ok(base) = layout.place(&labels[..edges.len()], max_units)? else {
                // too many units for a base's bits: lookups stay on the map
                return Ok(());
            };
            // (base < MAX_UNITS: it fits the bits above BASE_SHIFT)
            layout.units[unit as usize] |= (base as u32) << BASE_SHIFT;
            for &(_, b, child) in edges {
                let at = base + usize::from(b);
                layout.take(at);
                let child = child as usize;
                let value = self.values[child];
                let leaf = first[child] == first[child + 1];
                layout.units[at] = USED
                    | u32::from(b)
                    | match value {
                        NONE => 0,
                        v if leaf && v < (1 << (32 - BASE_SHIFT)) => {
                            HAS_VALUE | LEAF | v << BASE_SHIFT
                        }
                        v => {
                            layout.values[at] = v;
                            HAS_VALUE
                        }
                    };
                queue.push((child as u32, at as u32));
            }
        }
        let (mut units, mut values) = (layout.units, layout.values);
        // (at least 256 past the largest base: `place` grew it so)
        units.shrink_to_fit();
        values.shrink_to_fit();
        self.packed = Some(Packed { units, values });
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
        let unit = p.units[node as usize];
        if unit & LEAF != 0 {
            return None;
        }
        let at = (unit >> BASE_SHIFT) as usize + usize::from(b);
        match p.units.get(at) {
            Some(&u) if u & (USED | LABEL) == USED | u32::from(b) => Some(at as u32),
            _ => None,
        }
    }

    fn value(&self, node: u32) -> u32 {
        match &self.packed {
            Some(p) => match p.units[node as usize] {
                u if u & LEAF != 0 => u >> BASE_SHIFT,
                u if u & HAS_VALUE != 0 => p.values[node as usize],
                _ => NONE,
            },
            None => self.values[node as usize],
        }
    }

    /// Calls `f(length, value)` for every key that is a prefix of `text`, shortest first.
    #[inline]
    pub fn common_prefixes(&self, text: &[u8], mut f: impl FnMut(usize, u32)) {
        if let Some(p) = &self.packed {
            let (units, values) = (&p.units[..], &p.values[..]);
            let mut base = (units[0] >> BASE_SHIFT) as usize;
            for (i, &b) in text.iter().enumerate() {
                let at = base + usize::from(b);
                let Some(&u) = units.get(at) else { return };
                if u & (USED | LABEL) != USED | u32::from(b) {
                    return;
                }
                if u & LEAF != 0 {
                    // no key goes on from here
                    f(i + 1, u >> BASE_SHIFT);
                    return;
                }
                base = (u >> BASE_SHIFT) as usize;
                if u & HAS_VALUE != 0 {
                    if let Some(&v) = values.get(at) {
                        f(i + 1, v);
                    }
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
        // values too large for a leaf's unit, on leaves and on nodes with children
        let mut t = Trie::new();
        let large = [(&b"p"[..], 1 << 21), (b"pq", u32::MAX - 1), (b"pqr", (1 << 21) - 1)];
        for (k, v) in large {
            t.insert(k, v).unwrap();
        }
        t.insert(b"z", (1 << 21) + 5).unwrap();
        t.finish().unwrap();
        for (k, v) in large {
            assert_eq!(t.get(k), Some(v));
        }
        assert_eq!(t.get(b"z"), Some((1 << 21) + 5));
        let mut got = vec![];
        t.common_prefixes(b"pqrs", |l, v| got.push((l, v)));
        assert_eq!(got, vec![(1, 1 << 21), (2, u32::MAX - 1), (3, (1 << 21) - 1)]);
        assert_eq!(t.longest_prefix(b"zz"), Some((1, (1 << 21) + 5)));
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
        // a limit on the units that small key sets fit and larger ones do not (the map stays)
        let mut limited = t.clone();
        limited.finish_within(2048).unwrap();
        t.finish().unwrap();
        assert!(t.packed.is_some());
        for text in probes.iter().chain(keys.iter().map(|(k, _)| k)) {
            let want: Vec<(usize, u32)> = (1..=text.len())
                .filter_map(|l| map.get(&text[..l]).map(|&v| (l, v)))
                .collect();
            for trie in [&t, &mut unfinished, &limited] {
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
