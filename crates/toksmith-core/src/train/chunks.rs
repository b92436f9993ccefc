//! [`ChunkTable`]: unique chunks with 64-bit counts, stored compactly.
//!
//! A `HashMap<Box<[u8]>, u64>` costs about 160 bytes per unique chunk at its peak (a 24-byte
//! slot in a table at most 7/8 full and twice that while it grows, a heap block per chunk,
//! per-thread tables of `&str` keys). Here the bytes of all chunks lie end to end in one
//! arena, chunk `i` is named by a `u32`, its end offset and count lie in two flat arrays, and
//! the hash index holds only the `u32` ids (5 bytes a slot with its control byte): about
//! 8 + 4 + 5-10 bytes per chunk beside the chunk's own bytes (figures in BENCHMARKS.md).
//! Every allocation is fallible: a corpus too big for the memory limit is an
//! [`Error::OutOfMemory`], never an abort.

use crate::error::{Error, Result};
use crate::mem::{oom, try_reserve};
use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;
use std::hash::BuildHasher;

#[derive(Default)]
pub struct ChunkTable {
    /// the bytes of every chunk, in insertion order
    bytes: Vec<u8>,
    /// the low 32 bits of the end of chunk `i` in `bytes`
    ends: Vec<u32>,
    /// the ids from which ends carry one more 2**32 (each 4 GiB of `bytes` adds one: rare, so
    /// the common case pays 4 bytes per chunk for its offset, not 8)
    wraps: Vec<u32>,
    counts: Vec<u64>,
    /// chunk ids, hashed by their bytes
    index: HashTable<u32>,
}

#[inline]
fn hash(b: &[u8]) -> u64 {
    FxBuildHasher.hash_one(b)
}

impl ChunkTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of unique chunks.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// The total length of the chunks, in bytes.
    pub fn total_bytes(&self) -> usize {
        self.bytes.len()
    }

    #[inline]
    fn end(&self, i: usize) -> usize {
        let hi = if self.wraps.is_empty() {
            0
        } else {
            self.wraps.partition_point(|&w| w as usize <= i)
        };
        (hi << 32) | self.ends[i] as usize
    }

    /// The bytes of chunk `i`.
    #[inline]
    pub fn chunk(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.end(i - 1) };
        &self.bytes[start..self.end(i)]
    }

    /// The count of chunk `i`.
    #[inline]
    pub fn count(&self, i: usize) -> u64 {
        self.counts[i]
    }

    /// The id of `chunk`, if it is in the table.
    pub fn find(&self, chunk: &[u8]) -> Option<usize> {
        self.find_hashed(chunk, hash(chunk))
    }

    #[inline]
    fn find_hashed(&self, chunk: &[u8], h: u64) -> Option<usize> {
        self.index
            .find(h, |&i| self.chunk(i as usize) == chunk)
            .map(|&i| i as usize)
    }

    /// Add `n` occurrences of `chunk` (wrapping at 2**64: callers that take counts from a user
    /// check first, see [`ChunkTable::find`]).
    pub fn add(&mut self, chunk: &[u8], n: u64) -> Result<()> {
        let h = hash(chunk);
        if let Some(i) = self.find_hashed(chunk, h) {
            self.counts[i] = self.counts[i].wrapping_add(n);
            return Ok(());
        }
        self.insert_new(chunk, h, n)
    }

    #[cold]
    fn insert_new(&mut self, chunk: &[u8], h: u64, n: u64) -> Result<()> {
        let id = u32::try_from(self.counts.len())
            .ok()
            .filter(|&id| id < u32::MAX)
            .ok_or_else(|| {
                Error::InvalidArgument(
                    "more than 2**32-1 unique chunks: count the corpus in parts".into(),
                )
            })?;
        try_reserve(&mut self.bytes, chunk.len(), "the bytes of unique chunks")?;
        try_reserve(&mut self.ends, 1, "the offsets of unique chunks")?;
        try_reserve(&mut self.counts, 1, "the counts of unique chunks")?;
        // (every chunk's bytes are read again to rehash when the index grows: no hash is
        // stored, which would cost 8 more bytes per chunk)
        let (bytes, ends, wraps) = (&self.bytes, &self.ends, &self.wraps);
        let end = |i: usize| {
            let hi = if wraps.is_empty() {
                0
            } else {
                wraps.partition_point(|&w| w as usize <= i)
            };
            (hi << 32) | ends[i] as usize
        };
        self.index
            .try_reserve(1, |&i| {
                let i = i as usize;
                let start = if i == 0 { 0 } else { end(i - 1) };
                hash(&bytes[start..end(i)])
            })
            .map_err(|_| oom("the index of unique chunks", self.counts.len() + 1, 5))?;
        self.bytes.extend_from_slice(chunk);
        let new_end = self.bytes.len();
        while (new_end >> 32) > self.wraps.len() {
            try_reserve(&mut self.wraps, 1, "the offsets of unique chunks")?;
            self.wraps.push(id);
        }
        self.ends.push(new_end as u32);
        self.counts.push(n);
        // (room was reserved above: the hasher is never called)
        self.index
            .insert_unique(h, id, |_| unreachable!("room was reserved"));
        Ok(())
    }

    /// Add every chunk of `other` with its count.
    pub fn absorb(&mut self, other: &ChunkTable) -> Result<()> {
        for i in 0..other.len() {
            self.add(other.chunk(i), other.count(i))?;
        }
        Ok(())
    }

    /// The bytes the table holds on the heap: its arrays' and its index's allocations (room
    /// not used yet included), the chunks' own bytes among them.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity()
            + 4 * (self.ends.capacity() + self.wraps.capacity())
            + 8 * self.counts.capacity()
            + self.index.allocation_size()
    }

    /// Every chunk with its count, in insertion order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&[u8], u64)> + '_ {
        (0..self.len()).map(|i| (self.chunk(i), self.counts[i]))
    }

    /// Drop the hash index (the chunks and counts stay readable, [`ChunkTable::add`] must not
    /// be called again): frees its memory before training.
    pub fn drop_index(&mut self) {
        self.index = HashTable::new();
    }
}

impl PartialEq for ChunkTable {
    /// Equal chunks with equal counts, in whatever order.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .all(|(c, n)| other.find(c).map(|j| other.count(j)) == Some(n))
    }
}

impl std::fmt::Debug for ChunkTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.iter().map(|(c, n)| (String::from_utf8_lossy(c), n)))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn counts_like_a_hash_map() {
        let mut t = ChunkTable::new();
        let mut m: HashMap<Vec<u8>, u64> = HashMap::new();
        let mut x: u64 = 1;
        for k in 0..200_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // lengths 0..40, many repeats, the empty chunk included
            let len = (x >> 60) as usize * 3 % 41;
            let w: Vec<u8> = (0..len)
                .map(|j| b"ab\xff c"[(j + (x >> 40) as usize % 7) % 5])
                .collect();
            let n = k % 5 + 1;
            t.add(&w, n).unwrap();
            *m.entry(w).or_default() += n;
        }
        assert_eq!(t.len(), m.len());
        for (w, n) in &m {
            assert_eq!(t.find(w).map(|i| t.count(i)), Some(*n));
            assert_eq!(t.chunk(t.find(w).unwrap()), &w[..]);
        }
        assert_eq!(t.total_bytes(), m.keys().map(|w| w.len()).sum::<usize>());
        assert!(t.find(b"not there").is_none());
        let mut u = ChunkTable::new();
        u.absorb(&t).unwrap();
        u.absorb(&t).unwrap();
        assert_eq!(u.len(), t.len());
        for (c, n) in t.iter() {
            assert_eq!(u.count(u.find(c).unwrap()), 2 * n);
        }
    }

    #[test]
    fn offsets_past_4_gib_carry() {
        // the wrap bookkeeping, without 4 GiB: ends are looked up through `wraps`
        let mut t = ChunkTable::new();
        for w in ["a", "bb", "ccc", "dddd"] {
            t.add(w.as_bytes(), 1).unwrap();
        }
        // pretend chunks 2.. start past 2**32 (as if `bytes` had wrapped at chunk 2)
        t.wraps.push(2);
        assert_eq!(t.end(1), 3);
        assert_eq!(t.end(2), (1 << 32) | 6);
    }
}
