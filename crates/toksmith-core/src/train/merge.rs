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

/// A symbol of the merge loop's words. A run whose ids all stay below 65535 (an alphabet plus
/// merges of at most 65535: the byte-level trainer up to that vocabulary size) stores them as
/// `u16`, half the memory of `u32` for the largest table of training; `MAX` of either type
/// ends a word that merges have shortened.
trait Sym: Copy + Eq + Send + Sync + 'static {
    const END: Self;
    fn from_id(id: u32) -> Self;
    fn id(self) -> u32;
}

impl Sym for u16 {
    const END: u16 = u16::MAX;
    #[inline(always)]
    fn from_id(id: u32) -> u16 {
        id as u16
    }
    #[inline(always)]
    fn id(self) -> u32 {
        self as u32
    }
}

impl Sym for u32 {
    const END: u32 = u32::MAX;
    #[inline(always)]
    fn from_id(id: u32) -> u32 {
        id
    }
    #[inline(always)]
    fn id(self) -> u32 {
        self
    }
}

/// Where a word starts (the low 32 bits of its offset in [`Words::syms`]) and how often it
/// occurs: one 8-byte record, so a word met at random in the merge loop costs one cache miss
/// for both (and for the next record, its end).
#[derive(Clone, Copy)]
struct Rec {
    start: u32,
    /// the count, or `u32::MAX` for a count found in [`Words::big`]
    count: u32,
}

/// Words (unique chunks) stored end to end in one arena: word `w` is `syms[start(w) ..
/// start(w + 1)]` up to the first [`Sym::END`] (merging shrinks a word in place and marks its
/// new end). About `size_of::<S>()` bytes per symbol and 8 per word, where a `Vec` per word
/// and 64-bit offsets and counts cost 24 or more beside its symbols.
struct Words<S> {
    syms: Vec<S>,
    /// one per word, then one more for the end of the last word
    recs: Vec<Rec>,
    /// the word indices from which starts carry one more 2**32 (each 4 Gi symbols adds one:
    /// rare, so the common case pays 4 bytes per word for its offset, not 8)
    wraps: Vec<u32>,
    /// the counts of `u32::MAX` or more, by word index (clamped to `i64::MAX`)
    big: FxHashMap<u32, i64>,
}

impl<S: Sym> Words<S> {
    /// Room for `words` words of `syms` symbols in all, or [`Error::OutOfMemory`].
    fn try_with_capacity(syms: usize, words: usize) -> Result<Self> {
        if words >= u32::MAX as usize {
            return Err(Error::InvalidArgument(format!(
                "{words} unique chunks are more than the 2**32-1 the trainer takes: train on part \
                 of the corpus"
            )));
        }
        Ok(Words {
            syms: try_vec(syms, "the symbols of the training words")?,
            recs: try_vec(words + 1, "the training words")?,
            wraps: Vec::new(),
            big: FxHashMap::default(),
        })
    }

    fn n_words(&self) -> usize {
        self.recs.len() - 1
    }

    /// Record that the next word (or the end, for [`Words::finish`]) starts here.
    fn push_start(&mut self, count: u64) {
        let at = self.syms.len();
        while self.wraps.len() < at >> 32 {
            self.wraps.push(self.recs.len() as u32);
        }
        let count = if count >= u32::MAX as u64 {
            self.big.insert(
                self.recs.len() as u32,
                i64::try_from(count).unwrap_or(i64::MAX),
            );
            u32::MAX
        } else {
            count as u32
        };
        self.recs.push(Rec {
            start: at as u32,
            count,
        });
    }

    /// Add a word of `count` occurrences spelled by `ids` (each below [`Sym::END`]).
    fn push(&mut self, ids: impl Iterator<Item = u32>, count: u64) {
        self.push_start(count);
        self.syms.extend(ids.map(S::from_id));
    }

    /// Close the last word.
    fn finish(&mut self) {
        self.push_start(0);
    }

    #[inline]
    fn start(&self, w: usize) -> usize {
        let hi = if self.wraps.is_empty() {
            0
        } else {
            self.wraps.partition_point(|&x| x as usize <= w)
        };
        (hi << 32) | self.recs[w].start as usize
    }

    /// The count of word `w`.
    #[inline]
    fn count(&self, w: usize) -> i64 {
        match self.recs[w].count {
            u32::MAX => self.big[&(w as u32)],
            c => c as i64,
        }
    }

    /// The symbols of word `w` as it now is.
    #[inline]
    fn get(&self, w: usize) -> &[S] {
        let s = &self.syms[self.start(w)..self.start(w + 1)];
        &s[..s.iter().position(|&x| x == S::END).unwrap_or(s.len())]
    }

    /// An error unless every pair count of the merge loop fits its `i64` counters: the sum over
    /// words of count x (length - 1) must stay within 2**63 - 1 (word counts from text never
    /// come near; counts given by a caller can).
    fn check_pair_total(&self) -> Result<()> {
        let total: u128 = (0..self.n_words())
            .map(|w| {
                let len = self.start(w + 1) - self.start(w);
                self.count(w) as u128 * len.saturating_sub(1) as u128
            })
            .sum();
        if total > i64::MAX as u128 {
            return Err(Error::InvalidArgument(format!(
                "the counts are too large: their words hold {total} pairs (count x pairs per word), more \
                 than 2**63-1; pass smaller counts (scale them down)"
            )));
        }
        Ok(())
    }
}

/// The words a pair occurs in, as the distance of each from the one before (from 0 for the
/// first), zigzag-encoded (a word index may come after a larger one where the word-level model
/// reuses an id) in LEB128 varints. The lists are in word order and the words are sorted by
/// their bytes, so neighbours in a list are close: one or two bytes an entry instead of four
/// (the largest table of training after the words themselves). Most pairs made late in a run
/// occur in a few words: up to 16 bytes are held inline, so those pairs need no heap block of
/// their own (at least 32 bytes each with the system allocator).
#[derive(Default)]
struct Positions {
    bytes: SmallVec<[u8; 16]>,
    /// the last word pushed (0 while empty)
    last: u32,
}

#[inline]
fn put_varint(out: &mut SmallVec<[u8; 16]>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The varint at `bytes[*at..]` (advancing `at`).
#[inline]
fn get_varint(bytes: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = bytes[*at];
        *at += 1;
        v |= ((b & 0x7f) as u64) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

#[inline]
fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

#[inline]
fn unzigzag(z: u64) -> i64 {
    (z >> 1) as i64 ^ -((z & 1) as i64)
}

/// What the merge loop's tables are called in an out-of-memory error.
const TABLES: &str = "the pair tables of training";

/// The error of a refused growth of the training tables.
fn refused(n: usize, size: usize) -> Error {
    crate::mem::oom(TABLES, n, size)
}

/// Room for `n` more entries in `m` (a no-op while it has room: a check of a counter).
#[inline]
fn room<K: Eq + std::hash::Hash, V>(m: &mut FxHashMap<K, V>, n: usize) -> Result<()> {
    m.try_reserve(n)
        .map_err(|_| refused(m.len() + n, std::mem::size_of::<(K, V)>()))
}

impl Positions {
    /// Add word `w`, unless it is the last one added.
    #[inline]
    fn push(&mut self, w: u32) -> Result<()> {
        if self.last == w && !self.bytes.is_empty() {
            return Ok(());
        }
        // (a varint of a 64-bit value: at most 10 bytes)
        self.bytes
            .try_reserve(10)
            .map_err(|_| refused(self.bytes.len() + 10, 1))?;
        put_varint(&mut self.bytes, zigzag(w as i64 - self.last as i64));
        self.last = w;
        Ok(())
    }

    /// Add the words of `other` after these (`other`'s first distance is from 0, and is
    /// re-encoded from this list's last word: never longer).
    fn append(&mut self, other: &Positions) -> Result<()> {
        if other.bytes.is_empty() {
            return Ok(());
        }
        self.bytes
            .try_reserve(other.bytes.len())
            .map_err(|_| refused(self.bytes.len() + other.bytes.len(), 1))?;
        let mut at = 0;
        let first = unzigzag(get_varint(&other.bytes, &mut at));
        put_varint(&mut self.bytes, zigzag(first - self.last as i64));
        self.bytes.extend_from_slice(&other.bytes[at..]);
        self.last = other.last;
        Ok(())
    }

    /// Reads the words back in order, `max` at a time into `buf` (a bounded buffer, so that a
    /// pair found in every word does not need 4 more bytes per word to be merged).
    fn decoder(&self) -> Decoder<'_> {
        Decoder {
            bytes: &self.bytes,
            at: 0,
            last: 0,
        }
    }
}

struct Decoder<'a> {
    bytes: &'a [u8],
    at: usize,
    last: i64,
}

impl Decoder<'_> {
    /// Replace `buf`'s content with the next (up to) `max` words; false when none are left.
    fn fill(&mut self, buf: &mut Vec<u32>, max: usize) -> bool {
        buf.clear();
        while buf.len() < max && self.at < self.bytes.len() {
            self.last += unzigzag(get_varint(self.bytes, &mut self.at));
            buf.push(self.last as u32);
        }
        !buf.is_empty()
    }
}

/// A pair's count (weighted by word counts) and the words it occurs in (some of them no
/// longer: an entry goes stale when a merge takes the pair out of a word, which is cheaper
/// than finding it in the list; the merge reads each word as it now is).
#[derive(Default)]
struct PairInfo {
    count: i64,
    pos: Positions,
}

/// How many words ahead the merge loop prefetches a word's symbols (twice that for its record).
const WORDS_AHEAD: usize = 4;
/// How many positions of a pair are decoded at a time.
const DECODE_BATCH: usize = 4096;

/// Add `delta` to the count of `pair`, and free the position list of a pair whose count falls
/// to zero: no word with a count holds it any more, so it is never merged (only a merge that
/// makes one of its tokens raises a count; if an id made again by the word-level model raises
/// it, the words that hold it are those of that merge). The counts stay in a map of their own
/// with 16-byte slots: the hot table of the loop, read at every occurrence and heap pop.
#[inline]
fn bump(
    counts: &mut FxHashMap<Pair, i64>,
    where_: &mut FxHashMap<Pair, Positions>,
    pair: Pair,
    delta: i64,
) -> Result<()> {
    room(counts, 1)?;
    let c = counts.entry(pair).or_insert(0);
    *c += delta;
    if delta < 0 && *c <= 0 {
        where_.remove(&pair);
    }
    Ok(())
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

/// Where the words of a run come from: how many and how long, and a way to copy them into
/// the merge loop's [`Words`] (consuming the source, so that what it owned is freed before
/// the loop starts).
trait WordSource {
    fn n_words(&self) -> usize;
    fn total_symbols(&self) -> usize;
    fn fill<S: Sym>(self, words: &mut Words<S>) -> Result<()>;
}

struct ByteSlices<'a>(&'a [(Box<[u8]>, u64)]);

impl WordSource for ByteSlices<'_> {
    fn n_words(&self) -> usize {
        self.0.len()
    }
    fn total_symbols(&self) -> usize {
        self.0.iter().map(|(c, _)| c.len()).sum()
    }
    fn fill<S: Sym>(self, words: &mut Words<S>) -> Result<()> {
        for (c, n) in self.0 {
            words.push(c.iter().map(|&b| b as u32), *n);
        }
        Ok(())
    }
}

struct OwnedBytes(Vec<(Box<[u8]>, u64)>);

impl WordSource for OwnedBytes {
    fn n_words(&self) -> usize {
        self.0.len()
    }
    fn total_symbols(&self) -> usize {
        self.0.iter().map(|(c, _)| c.len()).sum()
    }
    fn fill<S: Sym>(self, words: &mut Words<S>) -> Result<()> {
        // each chunk is freed as soon as it is copied
        for (c, n) in self.0 {
            words.push(c.iter().map(|&b| b as u32), n);
        }
        Ok(())
    }
}

impl WordSource for ChunkTable {
    fn n_words(&self) -> usize {
        self.len()
    }
    fn total_symbols(&self) -> usize {
        self.total_bytes()
    }
    fn fill<S: Sym>(mut self, words: &mut Words<S>) -> Result<()> {
        self.drop_index();
        // the words in byte order, laid out in that order (the pair counting reads them in
        // turn, and neighbours in a pair's position list are then close)
        let mut order: Vec<u32> = try_vec(self.len(), "the order of the training words")?;
        order.extend(0..self.len() as u32);
        order.par_sort_unstable_by(|&x, &y| self.chunk(x as usize).cmp(self.chunk(y as usize)));
        for &i in &order {
            let i = i as usize;
            words.push(self.chunk(i).iter().map(|&b| b as u32), self.count(i));
        }
        Ok(())
    }
}

struct SymbolWords<'a> {
    words: &'a [(Vec<u32>, u64)],
    n_symbols: usize,
}

impl WordSource for SymbolWords<'_> {
    fn n_words(&self) -> usize {
        self.words.len()
    }
    fn total_symbols(&self) -> usize {
        self.words.iter().map(|(w, _)| w.len()).sum()
    }
    fn fill<S: Sym>(self, words: &mut Words<S>) -> Result<()> {
        for (w, n) in self.words {
            if let Some(&bad) = w.iter().find(|&&s| s as usize >= self.n_symbols) {
                return Err(Error::InvalidArgument(format!(
                    "symbol id {bad} is out of range: the alphabet has {} symbols",
                    self.n_symbols
                )));
            }
            words.push(w.iter().copied(), *n);
        }
        Ok(())
    }
}

/// Whether a run over an alphabet of `alphabet` symbols needs `u32` symbols: the ids it makes
/// are below `alphabet + min(num_merges, total)` (each merge takes a symbol out of the words).
fn needs_wide(alphabet: usize, num_merges: usize, total: usize) -> bool {
    alphabet.saturating_add(num_merges.min(total)) > u16::MAX as usize
}

/// Copy the words of `src` and run the merge loop over them, with `u32` symbols if `wide`.
fn run_source(
    src: impl WordSource,
    token_len: Vec<usize>,
    num_merges: usize,
    limits: MergeLimits,
    id_for: &mut dyn FnMut(u32, u32, u32) -> Result<u32>,
    progress: &mut dyn FnMut(MergeProgress) -> bool,
    wide: bool,
) -> Result<Vec<Pair>> {
    if src.n_words() == 0 {
        return Err(Error::EmptyCorpus);
    }
    if wide {
        run_as::<u32>(src, token_len, num_merges, limits, id_for, progress)
    } else {
        run_as::<u16>(src, token_len, num_merges, limits, id_for, progress)
    }
}

fn run_as<S: Sym>(
    src: impl WordSource,
    token_len: Vec<usize>,
    num_merges: usize,
    limits: MergeLimits,
    id_for: &mut dyn FnMut(u32, u32, u32) -> Result<u32>,
    progress: &mut dyn FnMut(MergeProgress) -> bool,
) -> Result<Vec<Pair>> {
    let mut words = Words::<S>::try_with_capacity(src.total_symbols(), src.n_words())?;
    src.fill(&mut words)?;
    words.finish();
    words.check_pair_total()?;
    merge_loop(words, token_len, num_merges, limits, id_for, progress)
}

/// The byte-level merge loop over `src`.
fn byte_merges(
    src: impl WordSource,
    num_merges: usize,
    limits: MergeLimits,
    progress: &mut dyn FnMut(MergeProgress) -> bool,
) -> Result<Vec<Pair>> {
    let wide = needs_wide(256, num_merges, src.total_symbols());
    run_source(
        src,
        vec![1; 256],
        num_merges,
        limits,
        &mut |_, _, fresh| Ok(fresh),
        progress,
        wide,
    )
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
    byte_merges(ByteSlices(chunks), num_merges, limits, progress)
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
    byte_merges(OwnedBytes(chunks), num_merges, limits, progress)
}

/// [`train_merges_limited`] on the chunks of a [`ChunkTable`] (what [`ChunkCounter`] counts),
/// without a copy of each chunk in a heap block of its own: the words of the merge loop are
/// made straight from the table, which is then freed. The table's order does not matter: the
/// words are sorted by their bytes, as [`ChunkCounter::into_counts`] sorts them.
///
/// [`ChunkCounter`]: crate::train::ChunkCounter
/// [`ChunkCounter::into_counts`]: crate::train::ChunkCounter::into_counts
pub fn train_merges_table(
    table: ChunkTable,
    num_merges: usize,
    limits: MergeLimits,
    progress: &mut dyn FnMut(MergeProgress) -> bool,
) -> Result<Vec<Pair>> {
    byte_merges(table, num_merges, limits, progress)
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
    id_for: &mut dyn FnMut(u32, u32, u32) -> Result<u32>,
    progress: &mut dyn FnMut(MergeProgress) -> bool,
) -> Result<Vec<(Pair, u32)>> {
    let src = SymbolWords {
        words: words_in,
        n_symbols: symbol_lens.len(),
    };
    let wide = needs_wide(symbol_lens.len(), num_merges, src.total_symbols());
    symbol_merges(src, symbol_lens, num_merges, limits, id_for, progress, wide)
}

fn symbol_merges(
    src: SymbolWords<'_>,
    symbol_lens: Vec<usize>,
    num_merges: usize,
    limits: MergeLimits,
    id_for: &mut dyn FnMut(u32, u32, u32) -> Result<u32>,
    progress: &mut dyn FnMut(MergeProgress) -> bool,
    wide: bool,
) -> Result<Vec<(Pair, u32)>> {
    let mut made = Vec::new();
    let merges = run_source(
        src,
        symbol_lens,
        num_merges,
        limits,
        &mut |a, b, fresh| {
            let id = id_for(a, b, fresh)?;
            crate::mem::try_push(&mut made, id, TABLES)?;
            Ok(id)
        },
        progress,
        wide,
    )?;
    Ok(merges.into_iter().zip(made).collect())
}

/// The merge loop over `words`, whose ids are below `token_len.len()` (the alphabet).
/// `id_for(a, b, fresh)` gives the id merging `(a, b)` makes: `fresh` (the next unused id; the
/// byte-level trainer always takes it, so merge `k` makes `256 + k`) or an existing one. The
/// bookkeeping holds either way: a word's pairs are counted from what it holds, so a word met
/// twice in a pair's position list (possible once an existing id is reused) just changes
/// nothing the second time.
fn merge_loop<S: Sym>(
    mut words: Words<S>,
    mut token_len: Vec<usize>,
    num_merges: usize,
    limits: MergeLimits,
    id_for: &mut dyn FnMut(u32, u32, u32) -> Result<u32>,
    progress: &mut dyn FnMut(MergeProgress) -> bool,
) -> Result<Vec<Pair>> {
    let n_words = words.n_words();
    let n_syms = words.syms.len();

    // ---- initial pair counts and positions (parallel over word ranges) ----
    let n_threads = rayon::current_num_threads().max(1);
    let block = n_words.div_ceil(n_threads * 4).max(1);
    // per range of words: pair counts, and the words each pair occurs in
    // (every table that grows with the words is grown fallibly: a refusal is an error)
    let partials: Vec<FxHashMap<Pair, PairInfo>> = (0..n_words)
        .step_by(block)
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|lo| -> Result<_> {
            let hi = (lo + block).min(n_words);
            let mut part: FxHashMap<Pair, PairInfo> = FxHashMap::default();
            for w in lo..hi {
                let cnt = words.count(w);
                for p in words.get(w).windows(2) {
                    room(&mut part, 1)?;
                    let e = part.entry((p[0].id(), p[1].id())).or_default();
                    e.count += cnt;
                    e.pos.push(w as u32)?;
                }
            }
            Ok(part)
        })
        .collect::<Result<_>>()?;
    // The lists of all ranges, joined in word order into lists allocated at their final size
    // (grown by doubling, they would hold up to twice their bytes, and every range's copy
    // besides, at the peak of training).
    let mut sizes: FxHashMap<Pair, usize> = FxHashMap::default();
    for part in &partials {
        for (k, v) in part {
            room(&mut sizes, 1)?;
            *sizes.entry(*k).or_insert(0) += v.pos.bytes.len();
        }
    }
    let mut counts: FxHashMap<Pair, i64> = FxHashMap::default();
    let mut where_: FxHashMap<Pair, Positions> = FxHashMap::default();
    room(&mut counts, sizes.len())?;
    room(&mut where_, sizes.len())?;
    for part in partials {
        for (k, v) in part {
            *counts.entry(k).or_insert(0) += v.count;
            let pos = where_.entry(k).or_default();
            if pos.bytes.is_empty() {
                // (the whole list's room at once: appends then never allocate)
                let n = sizes[&k];
                pos.bytes.try_reserve_exact(n).map_err(|_| refused(n, 1))?;
            }
            pos.append(&v.pos)?;
        }
    }
    drop(sizes);

    let mut heap_items = crate::mem::try_vec(counts.len(), TABLES)?;
    heap_items.extend(
        counts
            .iter()
            .filter(|(_, &c)| c > 0)
            .map(|(&p, &c)| (c, Reverse(p))),
    );
    let mut heap: BinaryHeap<(i64, Reverse<Pair>)> = BinaryHeap::from(heap_items);

    // each merge takes at least one symbol out of the words, so there are at most as many
    // merges as symbols (`num_merges` may be far larger: "as many as the corpus gives")
    let mut merges: Vec<Pair> = crate::mem::try_vec(num_merges.min(n_syms), TABLES)?;
    // the (pair, word) of each pair a merge makes, turned into position lists after the merge
    let mut made: Vec<(Pair, u32)> = Vec::new();
    let mut buf: Vec<u32> = Vec::with_capacity(DECODE_BATCH);
    let mut scratch: Positions = Positions::default();
    // about 200 reports over the merges the corpus can give at most (a run asked for far more
    // merges than that must still report, or a Ctrl-C would wait for its end)
    let report_every = (num_merges.min(n_syms) / 200).max(64);
    // a first report once the pairs are counted (that took a while on a big corpus)
    if !progress(MergeProgress {
        merges_done: 0,
        merges_total: num_merges,
        last_count: 0,
    }) {
        return Ok(merges);
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
        let current = counts.get(&pair).copied().unwrap_or(0);
        if current <= 0 {
            continue;
        }
        if c != current {
            // (the pair just popped left room for it: no allocation)
            heap.push((current, Reverse(pair)));
            continue;
        }
        if (current as u64) < limits.min_frequency {
            break;
        }
        let fresh = token_len.len() as u32;
        if fresh >= S::END.id() {
            // no id left for the symbol type (u32: after 2**32-1 tokens)
            break;
        }
        let new_id = id_for(a, b, fresh)?;
        merges.push(pair);
        if new_id == fresh {
            token_len.push(token_len[a as usize] + token_len[b as usize]);
        }
        let positions = where_.remove(&pair).unwrap_or_default();
        let (sa, sb, snew) = (S::from_id(a), S::from_id(b), S::from_id(new_id));
        made.clear();
        let mut dec = positions.decoder();
        while dec.fill(&mut buf, DECODE_BATCH) {
            for (k, &w) in buf.iter().enumerate() {
                // The words are met in index order but far apart: ask for the record of the
                // word `2 * AHEAD` places on and for the symbols of the one `AHEAD` places on,
                // so that the cache misses overlap.
                if let Some(&far) = buf.get(k + 2 * WORDS_AHEAD) {
                    prefetch(words.recs.as_ptr().wrapping_add(far as usize));
                }
                if let Some(&near) = buf.get(k + WORDS_AHEAD) {
                    prefetch(words.syms.as_ptr().wrapping_add(words.start(near as usize)));
                }
                let w = w as usize;
                let (s, e) = (words.start(w), words.start(w + 1));
                if e - s < 2 {
                    continue;
                }
                let cnt = words.count(w);
                // Merge left to right, non-overlapping, recording count deltas exactly as a
                // rewrite of the word would change its pair multiset. In place: the output
                // position never passes the input one (`out <= i`), and each step reads its
                // input (up to `i + 2`) before writing at `out`.
                let src = &mut words.syms[s..e];
                let l = src.iter().position(|&x| x == S::END).unwrap_or(src.len());
                let mut out = 0;
                let mut i = 0;
                let mut changed = false;
                while i < l {
                    if i + 1 < l && src[i] == sa && src[i + 1] == sb {
                        changed = true;
                        if out > 0 {
                            let x = src[out - 1].id();
                            bump(&mut counts, &mut where_, (x, a), -cnt)?;
                            bump(&mut counts, &mut where_, (x, new_id), cnt)?;
                            crate::mem::try_push(&mut made, ((x, new_id), w as u32), TABLES)?;
                        }
                        // (the count of (a, b) itself is not lowered: the pair is removed
                        // below, and no occurrence of it is left)
                        if i + 2 < l {
                            let y = src[i + 2].id();
                            bump(&mut counts, &mut where_, (b, y), -cnt)?;
                            bump(&mut counts, &mut where_, (new_id, y), cnt)?;
                            crate::mem::try_push(&mut made, ((new_id, y), w as u32), TABLES)?;
                        }
                        src[out] = snew;
                        out += 1;
                        i += 2;
                    } else {
                        src[out] = src[i];
                        out += 1;
                        i += 1;
                    }
                }
                if changed {
                    src[out] = S::END;
                }
            }
        }
        drop(positions);
        // the new pairs' position lists, each allocated at its size; and back on the heap
        made.sort_unstable();
        made.dedup();
        let mut g = 0;
        while g < made.len() {
            let p = made[g].0;
            scratch.bytes.clear();
            scratch.last = 0;
            while g < made.len() && made[g].0 == p {
                scratch.push(made[g].1)?;
                g += 1;
            }
            // (a pair made and undone again in this merge, as (new, a) in "a b a b", has no
            // count left, see `bump`)
            let c = counts.get(&p).copied().unwrap_or(0);
            if c > 0 {
                room(&mut where_, 1)?;
                let pos = where_.entry(p).or_default();
                pos.bytes
                    .try_reserve_exact(scratch.bytes.len())
                    .map_err(|_| refused(pos.bytes.len() + scratch.bytes.len(), 1))?;
                pos.append(&scratch)?;
                heap.try_reserve(1)
                    .map_err(|_| refused(heap.len() + 1, std::mem::size_of::<(i64, Pair)>()))?;
                heap.push((c, Reverse(p)));
            }
        }
        if made.capacity() > 4 * made.len().max(DECODE_BATCH) {
            made.shrink_to(made.len().max(DECODE_BATCH));
        }
        counts.remove(&pair);
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
    Ok(merges)
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
        let mut c = ChunkCounter::new(Pretokenizer::new(pattern).unwrap(), vec![]).unwrap();
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
    fn positions_round_trip_in_any_order() {
        let words = [0u32, 0, 1, 2, 200, 70_000, 69_999, 5, u32::MAX - 1, 3, 3];
        let mut whole = Positions::default();
        for &w in &words {
            whole.push(w).unwrap();
        }
        // pushing the last word again adds nothing; the rest come back as pushed
        let want: Vec<u32> = vec![0, 1, 2, 200, 70_000, 69_999, 5, u32::MAX - 1, 3];
        let mut got = Vec::new();
        let mut buf = Vec::new();
        let mut dec = whole.decoder();
        while dec.fill(&mut buf, 2) {
            assert!(buf.len() <= 2);
            got.extend_from_slice(&buf);
        }
        assert_eq!(got, want);
        // joined from two lists that each start from 0
        let (mut left, mut right) = (Positions::default(), Positions::default());
        for &w in &want[..4] {
            left.push(w).unwrap();
        }
        for &w in &want[4..] {
            right.push(w).unwrap();
        }
        left.append(&right).unwrap();
        assert_eq!(left.bytes, whole.bytes);
        assert_eq!(left.last, 3);
        left.append(&Positions::default()).unwrap();
        assert_eq!(left.bytes, whole.bytes);
    }

    #[test]
    fn narrow_and_wide_symbols_give_the_same_merges() {
        // many words sharing pairs (lists longer than one decode batch), and counts past 2**32
        let mut text = String::new();
        for i in 0..12_000u32 {
            text.push_str(&format!("a{} ", i * 7919 % 100_003));
        }
        let mut chunks = count(&[text.as_str(), "hello hello world"], "gpt2");
        chunks[3].1 = 5_000_000_000;
        chunks[7].1 = u32::MAX as u64;
        chunks[8].1 = u32::MAX as u64 - 1;
        for n in [1, 50, 400] {
            let run = |wide| {
                run_source(
                    ByteSlices(&chunks),
                    vec![1; 256],
                    n,
                    MergeLimits::default(),
                    &mut |_, _, fresh| Ok(fresh),
                    &mut |_| true,
                    wide,
                )
                .unwrap()
            };
            let narrow = run(false);
            assert_eq!(narrow, run(true), "n={n}");
            if n <= 50 {
                assert_eq!(narrow, naive(&chunks, n), "n={n}");
            }
        }
        // the word-level path, reusing ids
        let words: Vec<(Vec<u32>, u64)> = chunks
            .iter()
            .map(|(c, n)| (c.iter().map(|&b| b as u32).collect(), *n))
            .collect();
        let run = |wide| {
            let mut seen: FxHashMap<Pair, u32> = FxHashMap::default();
            symbol_merges(
                SymbolWords {
                    words: &words,
                    n_symbols: 256,
                },
                vec![1; 256],
                300,
                MergeLimits::default(),
                &mut |a, b, fresh| Ok(*seen.entry((a % 7, b % 7)).or_insert(fresh)),
                &mut |_| true,
                wide,
            )
            .unwrap()
        };
        assert_eq!(run(false), run(true));
        assert!(needs_wide(256, 65_280, 1 << 20));
        assert!(!needs_wide(256, 65_279, 1 << 20));
        assert!(!needs_wide(256, usize::MAX, 1000));
    }

    #[test]
    fn empty_corpus_is_an_error() {
        assert_eq!(
            train_merges(&[], 10, &mut |_| true),
            Err(Error::EmptyCorpus)
        );
    }
}
