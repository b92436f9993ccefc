//! The rank buckets of the long merge: position lists keyed by rank, popped lowest rank
//! first.

use crate::error::Result;
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Position lists keyed by rank, with the smallest queued rank found through a min-heap. The
/// last two ranks pushed are memoised: pushes during a sweep mostly go to one or two ranks.
pub(crate) struct Buckets {
    index: FxHashMap<u32, usize>,
    lists: Vec<Vec<u32>>,
    queued: Vec<bool>,
    ranks: Vec<u32>,
    heap: BinaryHeap<Reverse<u32>>,
    /// The two ranks pushed last and their slots (pushes alternate between two ranks).
    memo: [(u32, usize); 2],
    spare: Vec<Vec<u32>>,
    /// For long pieces: slot + 1 of each rank (0 = none), used instead of `index`.
    dense: Vec<u32>,
}

impl Default for Buckets {
    fn default() -> Self {
        Buckets {
            index: FxHashMap::default(),
            lists: Vec::new(),
            queued: Vec::new(),
            ranks: Vec::new(),
            heap: BinaryHeap::new(),
            memo: [(u32::MAX, 0); 2],
            spare: Vec::new(),
            dense: Vec::new(),
        }
    }
}

/// Double a full position list. A large one is copied into a fresh buffer advised as huge
/// pages before it is touched (a 10 MB piece queues tens of MB of positions; growing them in
/// place cost a 4 KiB page fault per 1024 positions, copied by `realloc`).
/// ([`Error::OutOfMemory`] when the allocator refuses: the lists grow with the piece.)
///
/// [`Error::OutOfMemory`]: crate::error::Error::OutOfMemory
#[cold]
fn grow(list: &mut Vec<u32>) -> Result<()> {
    const WHAT: &str = "the pair positions of a long piece";
    let cap = (list.len() * 2).max(16);
    if cap * std::mem::size_of::<u32>() >= crate::mem::HUGE_MIN {
        let mut bigger = crate::mem::try_big_vec(cap, WHAT)?;
        bigger.extend_from_slice(list);
        *list = bigger;
    } else {
        list.try_reserve_exact(cap - list.len())
            .map_err(|_| crate::mem::oom(WHAT, cap, std::mem::size_of::<u32>()))?;
    }
    Ok(())
}

impl Buckets {
    /// Whether ranks are indexed through an array of `slots` entries (the vocabulary's).
    #[inline]
    pub(crate) fn is_dense(&self, slots: usize) -> bool {
        self.dense.len() == slots
    }

    #[inline]
    pub(crate) fn push(&mut self, rank: u32, pos: u32) -> Result<()> {
        let slot = if self.memo[0].0 == rank {
            self.memo[0].1
        } else if self.memo[1].0 == rank {
            self.memo.swap(0, 1);
            self.memo[0].1
        } else {
            let known = if self.dense.is_empty() {
                self.index.get(&rank).copied()
            } else {
                self.dense[rank as usize].checked_sub(1).map(|s| s as usize)
            };
            let s = match known {
                Some(s) => s,
                None => {
                    let s = self.lists.len();
                    if self.dense.is_empty() {
                        self.index.insert(rank, s);
                    } else {
                        self.dense[rank as usize] = s as u32 + 1;
                    }
                    self.lists.push(self.spare.pop().unwrap_or_default());
                    self.queued.push(false);
                    self.ranks.push(rank);
                    s
                }
            };
            self.memo[1] = self.memo[0];
            self.memo[0] = (rank, s);
            s
        };
        if !self.queued[slot] {
            self.queued[slot] = true;
            self.heap.push(Reverse(rank));
        }
        let list = &mut self.lists[slot];
        if list.len() == list.capacity() {
            grow(list)?;
        }
        list.push(pos);
        Ok(())
    }

    pub(crate) fn pop_min(&mut self) -> Option<(u32, Vec<u32>)> {
        let Reverse(rank) = self.heap.pop()?;
        let slot = if self.dense.is_empty() {
            self.index[&rank]
        } else {
            self.dense[rank as usize] as usize - 1
        };
        self.queued[slot] = false;
        let fresh = self.spare.pop().unwrap_or_default();
        Some((rank, std::mem::replace(&mut self.lists[slot], fresh)))
    }

    /// Empty, keeping the lists' storage; `dense` gives the size of the rank -> slot array to
    /// use (rank -> slot through an array: no hashing per push, a fifth of the time on digits).
    pub(crate) fn reset(&mut self, dense: Option<usize>) {
        for &rank in &self.ranks {
            if let Some(d) = self.dense.get_mut(rank as usize) {
                *d = 0;
            }
        }
        self.spare.extend(self.lists.drain(..).map(|mut v| {
            v.clear();
            v
        }));
        self.index.clear();
        self.queued.clear();
        self.ranks.clear();
        self.heap.clear();
        self.memo = [(u32::MAX, 0); 2];
        match dense {
            Some(len) if self.dense.len() != len => self.dense = vec![0; len],
            Some(_) => {}
            None => self.dense = Vec::new(),
        }
    }

    pub(crate) fn recycle(&mut self, mut v: Vec<u32>) {
        v.clear();
        self.spare.push(v);
    }
}
