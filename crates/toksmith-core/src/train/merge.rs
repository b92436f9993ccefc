//! The incremental BPE merge loop over unique chunks (or words of symbols) with counts:
//!
//! * pair counts (`pair -> count`, weighted by chunk counts) and, per pair, the list of chunks
//!   where it occurs;
//! * a max-heap of `(count, pair)` with lazy refresh: a popped entry whose count is stale is
//!   pushed back with the current count;
//! * tie-break: highest count, then the smallest `(left id, right id)` pair. This is the rule
//!   of nanochat's rustbpe, so the merge list equals rustbpe's for the same text, pattern and
//!   vocabulary size, whatever the thread count.
//!
//! Every occurrence of a pair comes into existence in one step (when its newer token is
//! created) and afterwards counts only decrease, which is why lazy refresh finds the true
//! maximum and why one position list per pair is complete.

use super::chunks::ChunkTable;
use crate::error::{Error, Result};
use crate::mem::{prefetch, try_vec};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

pub type Pair = (u32, u32);

/// Progress of the merge loop, reported to a callback: once the pairs are counted (no merge
/// done yet), then about every 1/200 of the merges (of those asked for, or of as many as the
/// corpus could give if that is fewer), at least every 64, and after the last. The callback returns whether to go on: `false` stops the loop, which
/// returns the merges learned so far (the Python glue does so on Ctrl-C or when a progress
/// callback raises, and reports that instead of the merges).
#[derive(Clone, Copy, Debug)]
pub struct MergeProgress {
    pub merges_done: usize,
    pub merges_total: usize,
    pub last_count: u64,
}

/// Words (unique chunks) stored flat: the ids of word `w` are
/// `ids[at[w].start .. at[w].start + at[w].len]`; merging shrinks `len` in place.
struct Words {
    ids: Vec<u32>,
    at: Vec<Word>,
}

/// Where a word's ids are, and how often the word occurs: one record, so a word met at random
/// in the merge loop costs one cache miss for all three, not one each.
#[derive(Clone, Copy)]
struct Word {
    start: usize,
    count: i64,
    len: u32,
}

impl Words {
    fn with_capacity(ids: usize, words: usize) -> Self {
        Words {
            ids: Vec::with_capacity(ids),
            at: Vec::with_capacity(words),
        }
    }

    /// [`Words::with_capacity`], or [`Error::OutOfMemory`] when the allocator refuses.
    fn try_with_capacity(ids: usize, words: usize) -> Result<Self> {
        Ok(Words {
            ids: try_vec(ids, "the symbols of the training words")?,
            at: try_vec(words, "the training words")?,
        })
    }

    /// Add a word of `count` occurrences spelled by `ids`.
    fn push(&mut self, ids: impl ExactSizeIterator<Item = u32>, count: u64) {
        self.at.push(Word {
            start: self.ids.len(),
            count: i64::try_from(count).unwrap_or(i64::MAX),
            len: ids.len() as u32,
        });
        self.ids.extend(ids);
    }

    /// An error unless every pair count of the merge loop fits its `i64` counters: the sum over
    /// words of count x (length - 1) must stay within 2**63 - 1 (word counts from text never
    /// come near; counts given by a caller can).
    fn check_pair_total(&self) -> Result<()> {
        let total: u128 = self
            .at
            .iter()
            .map(|w| w.count as u128 * w.len.saturating_sub(1) as u128)
            .sum();
        if total > i64::MAX as u128 {
            return Err(Error::InvalidArgument(format!(
                "the counts are too large: their words hold {total} pairs (count x pairs per word), more \
                 than 2**63-1; pass smaller counts (scale them down)"
            )));
        }
        Ok(())
    }

    #[inline]
    fn get(&self, w: usize) -> &[u32] {
        let Word { start, len, .. } = self.at[w];
        &self.ids[start..start + len as usize]
    }
}

/// The words a pair occurs in, in index order. Most pairs occur in a handful of words: up to
/// four are held inline, so those pairs need no allocation of their own (and freeing a million
/// of them at the end of training is not a million `free` calls).
type Positions = SmallVec<[u32; 4]>;

/// How many words ahead the merge loop prefetches a word's ids (twice that for its record).
const WORDS_AHEAD: usize = 4;

#[inline]
fn bump(pair_counts: &mut FxHashMap<Pair, i64>, pair: Pair, delta: i64) {
    *pair_counts.entry(pair).or_insert(0) += delta;
}

/// What the merge loop may learn (the options of Hugging Face's `BpeTrainer` of the same
/// names). The default limits nothing: that is rustbpe's loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MergeLimits {
    /// Stop as soon as the most frequent pair left occurs fewer times than this.
    pub min_frequency: u64,
    /// Never merge a pair whose token would be longer than this many bytes (the pair is passed
    /// over and the next most frequent one merged).
    pub max_token_length: Option<usize>,
}

/// Learn `num_merges` merges from unique chunks with counts. Ids: bytes are 0..=255 (the byte
/// value), merge `k` creates id `256 + k`. Returns the merged pairs in order (fewer than
/// `num_merges` if the corpus runs out of pairs, or if `progress` returns `false`).
pub fn train_merges(
    chunks: &[(Box<[u8]>, u64)],
    num_merges: usize,
    progress: &mut dyn FnMut(MergeProgress) -> bool,
) -> Result<Vec<Pair>> {
    train_merges_limited(chunks, num_merges, MergeLimits::default(), progress)
}

/// [`train_merges`] within `limits`: fewer merges come back when no pair left is frequent
/// enough or short enough.
pub fn train_merges_limited(
    chunks: &[(Box<[u8]>, u64)],
    num_merges: usize,
    limits: MergeLimits,
    progress: &mut dyn FnMut(MergeProgress) -> bool,
) -> Result<Vec<Pair>> {
    let total = chunks.iter().map(|(c, _)| c.len()).sum();
    let words = chunks.iter().map(|(c, n)| (&**c, *n));
    byte_merges(total, words, num_merges, limits, progress)
}

/// [`train_merges_limited`] on chunks it owns: each is freed as soon as it is copied into the
/// merge loop's words, so the chunks and the loop's tables are never all in memory at once
/// (the peak memory of training).
pub fn train_merges_owned(
    chunks: Vec<(Box<[u8]>, u64)>,
    num_merges: usize,
    limits: MergeLimits,
    progress: &mut dyn FnMut(MergeProgress) -> bool,
) -> Result<Vec<Pair>> {
    let total = chunks.iter().map(|(c, _)| c.len()).sum();
    byte_merges(total, chunks.into_iter(), num_merges, limits, progress)
}

/// [`train_merges_limited`] on the chunks of a [`ChunkTable`] (what [`ChunkCounter`] counts),
/// without a copy of each chunk in a heap block of its own: the words of the merge loop are
/// made straight from the table, which is then freed. The table's order does not matter: the
/// words are sorted by their bytes, as [`ChunkCounter::into_counts`] sorts them.
///
/// [`ChunkCounter`]: crate::train::ChunkCounter
/// [`ChunkCounter::into_counts`]: crate::train::ChunkCounter::into_counts
pub fn train_merges_table(
    mut table: ChunkTable,
    num_merges: usize,
    limits: MergeLimits,
    progress: &mut dyn FnMut(MergeProgress) -> bool,
) -> Result<Vec<Pair>> {
    if table.is_empty() {
        return Err(Error::EmptyCorpus);
    }
    table.drop_index();
    // the words in byte order, laid out in that order (the pair counting reads them in turn)
    let mut order: Vec<u32> = try_vec(table.len(), "the order of the training words")?;
    order.extend(0..table.len() as u32);
    order.par_sort_unstable_by(|&x, &y| table.chunk(x as usize).cmp(table.chunk(y as usize)));
    let mut words = Words::try_with_capacity(table.total_bytes(), table.len())?;
    for &i in &order {
        let i = i as usize;
        words.push(table.chunk(i).iter().map(|&b| b as u32), table.count(i));
    }
    drop(order);
    drop(table);
    words.check_pair_total()?;
    Ok(merge_loop(
        words,
        vec![1; 256],
        num_merges,
        limits,
        &mut |_, _, fresh| fresh,
        progress,
    ))
}

/// The byte-level merge loop over `chunks` (`total`: their bytes in all).
fn byte_merges<C: AsRef<[u8]>>(
    total: usize,
    chunks: impl ExactSizeIterator<Item = (C, u64)>,
    num_merges: usize,
    limits: MergeLimits,
    progress: &mut dyn FnMut(MergeProgress) -> bool,
) -> Result<Vec<Pair>> {
    if chunks.len() == 0 {
        return Err(Error::EmptyCorpus);
    }
    // ---- words ----
    let mut words = Words::with_capacity(total, chunks.len());
    for (c, n) in chunks {
        words.push(c.as_ref().iter().map(|&b| b as u32), n);
    }
    words.check_pair_total()?;
    Ok(merge_loop(
        words,
        vec![1; 256],
        num_merges,
        limits,
        &mut |_, _, fresh| fresh,
        progress,
    ))
}

/// [`train_merges_limited`] over an alphabet of `symbol_lens.len()` symbols instead of the 256
/// bytes: each word is a sequence of symbol ids. `symbol_lens[s]` is the length symbol `s`
/// counts for in `max_token_length`. `id_for(a, b, fresh)` names the symbol that merging
/// `(a, b)` makes: `fresh` (the next unused id, `symbol_lens.len()` for the first merge) or an
/// existing symbol that stands for the same thing (the word-level `</w>` model, `crate::models::words`,
/// gives the same id to merges that spell the same string). Returns the merges with the id each
/// made.
pub fn train_symbol_merges(
    words_in: &[(Vec<u32>, u64)],
    symbol_lens: Vec<usize>,
    num_merges: usize,
    limits: MergeLimits,
    id_for: &mut dyn FnMut(u32, u32, u32) -> u32,
    progress: &mut dyn FnMut(MergeProgress) -> bool,
) -> Result<Vec<(Pair, u32)>> {
    if words_in.is_empty() {
        return Err(Error::EmptyCorpus);
    }
    let n_symbols = symbol_lens.len();
    let total: usize = words_in.iter().map(|(w, _)| w.len()).sum();
    let mut words = Words::with_capacity(total, words_in.len());
    for (w, n) in words_in {
        if let Some(&bad) = w.iter().find(|&&s| s as usize >= n_symbols) {
            return Err(Error::InvalidArgument(format!(
                "symbol id {bad} is out of range: the alphabet has {n_symbols} symbols"
            )));
        }
        words.push(w.iter().copied(), *n);
    }
    words.check_pair_total()?;
    let mut made = Vec::new();
    let merges = merge_loop(
        words,
        symbol_lens,
        num_merges,
        limits,
        &mut |a, b, fresh| {
            let id = id_for(a, b, fresh);
            made.push(id);
            id
        },
        progress,
    );
    Ok(merges.into_iter().zip(made).collect())
}

/// The merge loop over `words`, whose ids are below `token_len.len()` (the alphabet).
/// `id_for(a, b, fresh)` gives the id merging `(a, b)` makes: `fresh` (the next unused id; the
/// byte-level trainer always takes it, so merge `k` makes `256 + k`) or an existing one. The
/// bookkeeping holds either way: a word's pairs are counted from what it holds, so a word met
/// twice in a pair's position list (possible once an existing id is reused) just changes
/// nothing the second time.
fn merge_loop(
    mut words: Words,
    mut token_len: Vec<usize>,
    num_merges: usize,
    limits: MergeLimits,
    id_for: &mut dyn FnMut(u32, u32, u32) -> u32,
    progress: &mut dyn FnMut(MergeProgress) -> bool,
) -> Vec<Pair> {
    let n_words = words.at.len();

    // ---- initial pair counts and positions (parallel over word ranges) ----
    let n_threads = rayon::current_num_threads().max(1);
    let block = n_words.div_ceil(n_threads * 4).max(1);
    // per range of words: pair counts, and the words each pair occurs in
    type Partial = (FxHashMap<Pair, i64>, FxHashMap<Pair, Positions>);
    let partials: Vec<Partial> = (0..n_words)
        .step_by(block)
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|lo| {
            let hi = (lo + block).min(n_words);
            let mut pc: FxHashMap<Pair, i64> = FxHashMap::default();
            let mut wh: FxHashMap<Pair, Positions> = FxHashMap::default();
            for w in lo..hi {
                let cnt = words.at[w].count;
                let ids = words.get(w);
                for p in ids.windows(2) {
                    let pair = (p[0], p[1]);
                    *pc.entry(pair).or_insert(0) += cnt;
                    let v = wh.entry(pair).or_default();
                    if v.last() != Some(&(w as u32)) {
                        v.push(w as u32);
                    }
                }
            }
            (pc, wh)
        })
        .collect();
    let mut pair_counts: FxHashMap<Pair, i64> = FxHashMap::default();
    let mut where_: FxHashMap<Pair, Positions> = FxHashMap::default();
    // Partials are in word order, so position lists stay sorted by word index.
    for (pc, wh) in partials {
        for (k, v) in pc {
            *pair_counts.entry(k).or_insert(0) += v;
        }
        for (k, mut v) in wh {
            match where_.get_mut(&k) {
                Some(e) => e.append(&mut v),
                None => {
                    where_.insert(k, v);
                }
            }
        }
    }

    let mut heap: BinaryHeap<(i64, Reverse<Pair>)> = pair_counts
        .iter()
        .filter(|(_, &c)| c > 0)
        .map(|(&p, &c)| (c, Reverse(p)))
        .collect();

    // each merge takes at least one symbol out of the words, so there are at most as many
    // merges as symbols (`num_merges` may be far larger: "as many as the corpus gives")
    let mut merges: Vec<Pair> = Vec::with_capacity(num_merges.min(words.ids.len()));
    let mut new_pairs: Vec<Pair> = Vec::new();
    // about 200 reports over the merges the corpus can give at most (a run asked for far more
    // merges than that must still report, or a Ctrl-C would wait for its end)
    let report_every = (num_merges.min(words.ids.len()) / 200).max(64);
    // a first report once the pairs are counted (that took a while on a big corpus)
    if !progress(MergeProgress {
        merges_done: 0,
        merges_total: num_merges,
        last_count: 0,
    }) {
        return merges;
    }
    while merges.len() < num_merges {
        let Some((c, Reverse(pair))) = heap.pop() else {
            break;
        };
        let (a, b) = pair;
        if let Some(max) = limits.max_token_length {
            if token_len[a as usize] + token_len[b as usize] > max {
                // dropped for good: the pair is never pushed again, since only pairs that
                // contain a new token are (its count only falls from now on)
                continue;
            }
        }
        let current = pair_counts.get(&pair).copied().unwrap_or(0);
        if current <= 0 {
            continue;
        }
        if c != current {
            heap.push((current, Reverse(pair)));
            continue;
        }
        if (current as u64) < limits.min_frequency {
            break;
        }
        let fresh = token_len.len() as u32;
        let new_id = id_for(a, b, fresh);
        merges.push(pair);
        if new_id == fresh {
            token_len.push(token_len[a as usize] + token_len[b as usize]);
        }
        let positions = where_.remove(&pair).unwrap_or_default();
        new_pairs.clear();
        for (k, &w) in positions.iter().enumerate() {
            // The words are met in index order but far apart: ask for the record of the word
            // `2 * AHEAD` places on and for the ids of the one `AHEAD` places on, so that the
            // cache misses overlap.
            if let Some(&far) = positions.get(k + 2 * WORDS_AHEAD) {
                prefetch(words.at.as_ptr().wrapping_add(far as usize));
            }
            if let Some(&near) = positions.get(k + WORDS_AHEAD) {
                prefetch(
                    words
                        .ids
                        .as_ptr()
                        .wrapping_add(words.at[near as usize].start),
                );
            }
            let w = w as usize;
            let Word {
                start: s,
                count: cnt,
                len,
            } = words.at[w];
            let l = len as usize;
            if l < 2 {
                continue;
            }
            // Merge left to right, non-overlapping, recording count deltas exactly as a
            // rewrite of the word would change its pair multiset. In place: the output
            // position never passes the input one (`out <= i`), and each step reads its
            // input (up to `i + 2`) before writing at `out`.
            let src = &mut words.ids[s..s + l];
            let mut out = 0;
            let mut i = 0;
            let mut changed = false;
            while i < l {
                if i + 1 < l && src[i] == a && src[i + 1] == b {
                    changed = true;
                    if out > 0 {
                        let x = src[out - 1];
                        bump(&mut pair_counts, (x, a), -cnt);
                        bump(&mut pair_counts, (x, new_id), cnt);
                        new_pairs.push((x, new_id));
                        let v = where_.entry((x, new_id)).or_default();
                        if v.last() != Some(&(w as u32)) {
                            v.push(w as u32);
                        }
                    }
                    // (the count of (a, b) itself is not lowered: the pair is removed below,
                    // and no occurrence of it is left)
                    if i + 2 < l {
                        let y = src[i + 2];
                        bump(&mut pair_counts, (b, y), -cnt);
                        bump(&mut pair_counts, (new_id, y), cnt);
                        new_pairs.push((new_id, y));
                        let v = where_.entry((new_id, y)).or_default();
                        if v.last() != Some(&(w as u32)) {
                            v.push(w as u32);
                        }
                    }
                    src[out] = new_id;
                    out += 1;
                    i += 2;
                } else {
                    src[out] = src[i];
                    out += 1;
                    i += 1;
                }
            }
            if changed {
                words.at[w].len = out as u32;
            }
        }
        new_pairs.sort_unstable();
        new_pairs.dedup();
        for &p in &new_pairs {
            let c = pair_counts.get(&p).copied().unwrap_or(0);
            if c > 0 {
                heap.push((c, Reverse(p)));
            }
        }
        pair_counts.remove(&pair);
        if merges.len().is_multiple_of(report_every) || merges.len() == num_merges {
            let go_on = progress(MergeProgress {
                merges_done: merges.len(),
                merges_total: num_merges,
                last_count: current as u64,
            });
            if !go_on {
                break;
            }
        }
    }
    merges
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretokenize::Pretokenizer;
    use crate::train::ChunkCounter;

    /// The obvious trainer: recount every pair of every word at each step.
    fn naive(chunks: &[(Box<[u8]>, u64)], num_merges: usize) -> Vec<Pair> {
        naive_limited(chunks, num_merges, MergeLimits::default())
    }

    /// Recount every pair before each merge; pairs too long for the limit are not candidates.
    fn naive_limited(
        chunks: &[(Box<[u8]>, u64)],
        num_merges: usize,
        limits: MergeLimits,
    ) -> Vec<Pair> {
        let mut words: Vec<(Vec<u32>, u64)> = chunks
            .iter()
            .map(|(c, n)| (c.iter().map(|&b| b as u32).collect(), *n))
            .collect();
        let mut merges = vec![];
        let mut len: Vec<usize> = vec![1; 256];
        for k in 0..num_merges {
            let mut pc: std::collections::BTreeMap<Pair, u64> = Default::default();
            for (w, n) in &words {
                for p in w.windows(2) {
                    if limits
                        .max_token_length
                        .is_none_or(|m| len[p[0] as usize] + len[p[1] as usize] <= m)
                    {
                        *pc.entry((p[0], p[1])).or_insert(0) += n;
                    }
                }
            }
            let Some(best) = pc.iter().max_by(|x, y| x.1.cmp(y.1).then(y.0.cmp(x.0))) else {
                break;
            };
            if *best.1 < limits.min_frequency {
                break;
            }
            let pair = *best.0;
            let id = 256 + k as u32;
            merges.push(pair);
            len.push(len[pair.0 as usize] + len[pair.1 as usize]);
            for (w, _) in words.iter_mut() {
                let mut out = vec![];
                let mut i = 0;
                while i < w.len() {
                    if i + 1 < w.len() && (w[i], w[i + 1]) == pair {
                        out.push(id);
                        i += 2;
                    } else {
                        out.push(w[i]);
                        i += 1;
                    }
                }
                *w = out;
            }
        }
        merges
    }

    fn count(texts: &[&str], pattern: &str) -> Vec<(Box<[u8]>, u64)> {
        let mut c = ChunkCounter::new(Pretokenizer::new(pattern).unwrap(), vec![]);
        c.add_texts(texts).unwrap();
        c.into_counts()
    }

    #[test]
    fn limits_equal_naive() {
        let text = "hello hello hello world world aaaa aaa aaaaa abababab the then there \
                    their they're it's don't 1234 12 aaa bbb aaaa aaaaaaaaaaaaaaaa";
        let chunks = count(&[text, "zzz zz zzzz hello", "aaaa aaaa"], "cl100k");
        for min_frequency in [0, 2, 3, 5] {
            for max_token_length in [None, Some(1), Some(2), Some(3), Some(5)] {
                let limits = MergeLimits {
                    min_frequency,
                    max_token_length,
                };
                for n in [1, 20, 80] {
                    let fast = train_merges_limited(&chunks, n, limits, &mut |_| true).unwrap();
                    assert_eq!(fast, naive_limited(&chunks, n, limits), "{limits:?} n={n}");
                }
            }
        }
        // the limits bind: fewer merges than without them, none over the length
        let all = train_merges(&chunks, 80, &mut |_| true).unwrap();
        let some = MergeLimits {
            min_frequency: 3,
            max_token_length: None,
        };
        assert!(
            train_merges_limited(&chunks, 80, some, &mut |_| true)
                .unwrap()
                .len()
                < all.len()
        );
        let short = MergeLimits {
            min_frequency: 0,
            max_token_length: Some(2),
        };
        let m = train_merges_limited(&chunks, 80, short, &mut |_| true).unwrap();
        assert!(m.iter().all(|&(a, b)| a < 256 && b < 256));
    }

    #[test]
    fn incremental_equals_naive() {
        let text = "hello hello hello world world aaaa aaa aaaaa abababab the then there \
                    their they're it's don't 1234 12 aaa bbb aaaa";
        let chunks = count(&[text, "zzz zz zzzz hello"], "cl100k");
        for n in [1, 5, 20, 60] {
            let fast = train_merges(&chunks, n, &mut |_| true).unwrap();
            assert_eq!(fast, naive(&chunks, n), "num_merges={n}");
        }
    }

    #[test]
    fn seed_example() {
        // "hello hello hello world world": (e,l), (l,l) and (l,o) all occur 3 times; the
        // tie-break picks the smallest pair, (e, l); then (h, el) is the smallest of the 3-count pairs.
        let chunks = count(&["hello hello hello world world"], "gpt2");
        let m = train_merges(&chunks, 2, &mut |_| true).unwrap();
        assert_eq!(m[0], (b'e' as u32, b'l' as u32));
        assert_eq!(m[1], (b'h' as u32, 256));
    }

    #[test]
    fn a_progress_callback_that_says_stop_ends_the_loop() {
        let text: Vec<String> = (0..5000).map(|i| i.to_string()).collect();
        let chunks = count(&[text.join(" ").as_str()], "gpt2");
        let all = train_merges(&chunks, 3000, &mut |_| true).unwrap();
        assert!(all.len() > 1000);
        let mut reports = Vec::new();
        let some = train_merges(&chunks, 3000, &mut |p| {
            reports.push(p.merges_done);
            reports.len() < 2
        })
        .unwrap();
        // stopped at the second report (the first is before any merge; then every 64 merges
        // here), a prefix of the whole run
        assert_eq!(reports, vec![0, 64]);
        assert_eq!(some.len(), 64);
        assert_eq!(some[..], all[..64]);
        // asked for far more merges than the corpus gives: reports still come
        let mut n = 0;
        train_merges(&chunks, usize::MAX / 2, &mut |_| {
            n += 1;
            true
        })
        .unwrap();
        assert!(n > 10, "{n} reports");
    }

    #[test]
    fn owned_chunks_give_the_same_merges() {
        let chunks = count(
            &["the cat sat on the mat; the hat is flat and that is that"],
            "gpt2",
        );
        let limits = MergeLimits {
            min_frequency: 2,
            max_token_length: Some(4),
        };
        for l in [MergeLimits::default(), limits] {
            let by_ref = train_merges_limited(&chunks, 40, l, &mut |_| true).unwrap();
            let owned = train_merges_owned(chunks.clone(), 40, l, &mut |_| true).unwrap();
            assert_eq!(by_ref, owned);
        }
        assert_eq!(
            train_merges_owned(vec![], 5, MergeLimits::default(), &mut |_| true),
            Err(Error::EmptyCorpus)
        );
    }

    #[test]
    fn empty_corpus_is_an_error() {
        assert_eq!(
            train_merges(&[], 10, &mut |_| true),
            Err(Error::EmptyCorpus)
        );
    }
}
