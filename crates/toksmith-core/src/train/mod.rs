//! BPE training: parallel chunk counting, then the incremental merge loop.
//!
//! Counting splits text with a [`Pretokenizer`] (after cutting out pinned tokens) and counts
//! unique pieces ("chunks") with 64-bit counts; memory is proportional to the number of unique
//! chunks, not to the corpus. The merge loop then works on unique chunks only:
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

use crate::added::AddedMatcher;
use crate::error::{Error, Result};
use crate::mem::prefetch;
use crate::pretokenize::Pretokenizer;
use crate::added::AddedKind;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};

// The safe-cut rules lived here before they moved to `added`.
pub use crate::added::{clear_of_tokens, cut_lookahead, is_safe_cut, spanning_tokens};

pub type Pair = (u32, u32);

/// A matcher of pinned token texts (for [`cut_pinned`]).
pub fn pinned_matcher(pinned: &[String]) -> AddedMatcher {
    AddedMatcher::from_tokens(
        pinned
            .iter()
            .enumerate()
            .map(|(k, p)| (p.as_bytes(), k as u32, AddedKind::Pinned)),
    )
}

/// Text segments of `text` that are not pinned tokens (leftmost-longest cut: at the first
/// place where a pinned token starts, the longest one), found by one walk down the
/// matcher's trie per position, whatever the number of pinned tokens.
pub fn cut_pinned<'t>(text: &'t str, pinned: &AddedMatcher, mut f: impl FnMut(&'t str)) {
    if !pinned.has_pinned() {
        f(text);
        return;
    }
    let bytes = text.as_bytes();
    let mut pos = 0;
    while let Some((s, e, _)) = pinned.find(bytes, pos, &|_, _| true) {
        if s > pos {
            f(&text[pos..s]);
        }
        pos = e;
    }
    if pos < bytes.len() {
        f(&text[pos..]);
    }
}

/// Cut a long text into parts of about `target` bytes at safe places (see [`is_safe_cut`]),
/// so one big text is counted on every thread with exactly the counts of the whole; only where
/// no occurrence of `tokens` (pinned tokens that could span a cut: [`spanning_tokens`]) is near
/// the cut ([`clear_of_tokens`]).
pub fn split_for_parallel<'t>(text: &'t str, target: usize, tokens: &[Box<[u8]>]) -> Vec<&'t str> {
    let bytes = text.as_bytes();
    let mut parts = Vec::with_capacity(text.len() / target.max(1) + 1);
    let mut start = 0;
    while bytes.len() - start > target {
        let mut cut = None;
        let mut i = start + target;
        while i + 1 < bytes.len() {
            if is_safe_cut(bytes, i) && clear_of_tokens(bytes, i, tokens) {
                cut = Some(i);
                break;
            }
            i += 1;
        }
        match cut {
            Some(c) => {
                parts.push(&text[start..c]);
                start = c;
            }
            None => break,
        }
    }
    parts.push(&text[start..]);
    parts
}

/// Length of an incomplete UTF-8 sequence at the end of `buf` (0 if it ends on a boundary).
fn incomplete_tail_len(buf: &[u8]) -> usize {
    let n = buf.len();
    for back in 1..=3.min(n) {
        let b = buf[n - back];
        if b & 0xC0 == 0x80 {
            continue; // continuation byte
        }
        let need = if b >= 0xF0 {
            4
        } else if b >= 0xE0 {
            3
        } else if b >= 0xC0 {
            2
        } else {
            1
        };
        return if need > back { back } else { 0 };
    }
    0
}

/// Byte length of the prefix of `bytes` whose lossy decoding has `chars_len` bytes.
fn lossy_prefix_bytes(bytes: &[u8], text_len: usize) -> usize {
    let mut produced = 0;
    let mut i = 0;
    for chunk in bytes.utf8_chunks() {
        let v = chunk.valid();
        if produced + v.len() >= text_len {
            return i + (text_len - produced);
        }
        produced += v.len();
        i += v.len();
        if !chunk.invalid().is_empty() {
            produced += 3; // U+FFFD
            i += chunk.invalid().len();
            if produced >= text_len {
                return i;
            }
        }
    }
    i
}

/// The last safe cut (see [`is_safe_cut`]) in `text` after `lo`, or 0, that is clear of
/// `tokens` ([`clear_of_tokens`]) with the text after it reaching [`cut_lookahead`] bytes on
/// (`text` may go on in the next block). A caller that found no cut passes the returned
/// `searched` next time, with more text: places already decided are not looked at again, so
/// a long stretch without a cut costs linear time, not a new scan per block.
fn last_safe_cut(text: &str, tokens: &[Box<[u8]>], lo: usize, searched: &mut usize) -> usize {
    let b = text.as_bytes();
    let top = b.len().saturating_sub(1 + cut_lookahead(tokens));
    // `top` itself may have been judged without the byte after it: looked at again next time
    *searched = top.saturating_sub(1);
    let mut i = top;
    while i > lo {
        if is_safe_cut(b, i) && clear_of_tokens(b, i, tokens) {
            return i;
        }
        i -= 1;
    }
    0
}

/// Counts unique chunks of a corpus.
pub struct ChunkCounter {
    pretok: Pretokenizer,
    /// the pinned tokens, cut out of the text before it is split
    matcher: AddedMatcher,
    /// the pinned tokens that could span a safe cut: cuts are kept clear of them
    spanning: Vec<Box<[u8]>>,
    counts: FxHashMap<Box<[u8]>, u64>,
    pub bytes_seen: u64,
    pub pieces_seen: u64,
    pub texts_seen: u64,
}

type LocalCounts<'t> = FxHashMap<&'t str, u64>;

/// Two count tables added up: the smaller one into the larger (parallel counters reduce their
/// per-thread tables with it).
pub(crate) fn add_counts<K: std::hash::Hash + Eq>(
    a: FxHashMap<K, u64>,
    b: FxHashMap<K, u64>,
) -> FxHashMap<K, u64> {
    let (mut big, small) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    for (k, v) in small {
        *big.entry(k).or_insert(0) += v;
    }
    big
}

impl ChunkCounter {
    pub fn new(pretok: Pretokenizer, pinned: Vec<String>) -> Self {
        let spanning = spanning_tokens(pinned.iter().map(|p| p.as_str()));
        let matcher = pinned_matcher(&pinned);
        ChunkCounter {
            pretok,
            matcher,
            spanning,
            counts: FxHashMap::default(),
            bytes_seen: 0,
            pieces_seen: 0,
            texts_seen: 0,
        }
    }

    pub fn pretokenizer(&self) -> &Pretokenizer {
        &self.pretok
    }

    /// Whether a long text may be counted in parts cut at [`is_safe_cut`] places: with a named
    /// pattern. Cuts are kept clear of pinned tokens that could span them (a pinned "New York"
    /// was counted as "New" and " York" where a cut fell at its space).
    fn cuts_are_safe(&self) -> bool {
        self.pretok.is_fast()
    }

    fn count_one<'t>(&self, text: &'t str, local: &mut LocalCounts<'t>) -> Result<()> {
        let mut result = Ok(());
        cut_pinned(text, &self.matcher, |seg| {
            if result.is_ok() {
                result = self.pretok.for_each_piece(seg, |p| {
                    *local.entry(p).or_insert(0) += 1;
                });
            }
        });
        result
    }

    fn absorb(&mut self, local: LocalCounts<'_>) {
        for (k, v) in local {
            self.pieces_seen += v;
            if let Some(c) = self.counts.get_mut(k.as_bytes()) {
                *c += v;
            } else {
                self.counts.insert(k.as_bytes().into(), v);
            }
        }
    }

    /// Count a batch of texts, in parallel. Each text is split on its own (no piece crosses
    /// from one text to the next); long texts with a named pattern are cut at safe places so
    /// one big text also uses every thread.
    pub fn add_texts<S: AsRef<str> + Sync>(&mut self, texts: &[S]) -> Result<()> {
        let fast = self.cuts_are_safe();
        let mut parts: Vec<&str> = Vec::new();
        for t in texts {
            let t = t.as_ref();
            self.bytes_seen += t.len() as u64;
            if fast && t.len() > (1 << 20) {
                parts.extend(split_for_parallel(t, 1 << 19, &self.spanning));
            } else {
                parts.push(t);
            }
        }
        self.texts_seen += texts.len() as u64;
        let this = &*self;
        let merged = parts
            .par_iter()
            .try_fold(LocalCounts::default, |mut local, t| {
                this.count_one(t, &mut local).map(|_| local)
            })
            .try_reduce(LocalCounts::default, |a, b| Ok(add_counts(a, b)))?;
        self.absorb(merged);
        Ok(())
    }

    /// Count a whole stream (a file), reading it in blocks of `block` bytes so memory stays
    /// bounded. With a named pattern each block is cut at a safe place (see
    /// [`split_for_parallel`]) and the rest carried over; a custom regex gives no such
    /// guarantee, so the stream is then read whole before it is split. `name` is used in errors.
    pub fn add_reader<R: Read>(
        &mut self,
        r: R,
        name: &str,
        replace: bool,
        block: usize,
    ) -> Result<()> {
        self.add_reader_until(r, name, replace, block, &AtomicBool::new(false))
    }

    /// [`ChunkCounter::add_reader`] that gives up with [`Error::Interrupted`] before reading a
    /// block once `stop` is set (what was counted so far stays counted).
    pub fn add_reader_until<R: Read>(
        &mut self,
        mut r: R,
        name: &str,
        replace: bool,
        block: usize,
        stop: &AtomicBool,
    ) -> Result<()> {
        let fast = self.cuts_are_safe();
        let mut buf: Vec<u8> = Vec::new();
        let mut offset: u64 = 0; // stream offset of buf[0]
        let mut searched = 0; // places of buf below this have no cut
        let mut whole = String::new();
        let io_err = |e: std::io::Error| Error::Io {
            path: name.to_string(),
            message: e.to_string(),
        };
        loop {
            if stop.load(Ordering::Relaxed) {
                return Err(Error::Interrupted);
            }
            let before = buf.len();
            buf.resize(before + block, 0);
            let mut filled = before;
            while filled < buf.len() {
                if filled > before && stop.load(Ordering::Relaxed) {
                    // (a slow pipe can take long to fill a block)
                    return Err(Error::Interrupted);
                }
                match r.read(&mut buf[filled..]) {
                    Ok(0) => break,
                    Ok(k) => filled += k,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(io_err(e)),
                }
            }
            let eof = filled < buf.len();
            buf.truncate(filled);
            // Keep an incomplete UTF-8 sequence at the end for the next block.
            let tail = if eof { 0 } else { incomplete_tail_len(&buf) };
            let usable = buf.len() - tail;
            let text: std::borrow::Cow<str> = match std::str::from_utf8(&buf[..usable]) {
                Ok(s) => s.into(),
                Err(e) => {
                    if replace {
                        String::from_utf8_lossy(&buf[..usable])
                    } else {
                        return Err(Error::InvalidUtf8 {
                            source_name: name.to_string(),
                            offset: offset + e.valid_up_to() as u64,
                        });
                    }
                }
            };
            let text_len_bytes = usable;
            if !fast {
                whole.push_str(&text);
                let rest = buf.split_off(usable);
                offset += usable as u64;
                buf = rest;
            } else {
                // Count up to the last safe cut; carry the rest (as original bytes).
                let cut = if eof {
                    text.len()
                } else {
                    last_safe_cut(&text, &self.spanning, searched, &mut searched)
                };
                let consumed_bytes = if text.len() == text_len_bytes {
                    cut
                } else if cut == text.len() {
                    text_len_bytes
                } else {
                    // Lossy text differs in length from the bytes; find the byte position of
                    // the cut by re-decoding (rare path: only with errors="replace").
                    lossy_prefix_bytes(&buf[..usable], cut)
                };
                if cut > 0 {
                    self.add_texts(&[&text[..cut]])?;
                    self.texts_seen -= 1;
                }
                let rest = buf.split_off(consumed_bytes);
                offset += consumed_bytes as u64;
                buf = rest;
                if cut > 0 {
                    searched = 0;
                } // else no safe cut yet: the buffer grows (read more before counting)
            }
            if eof {
                break;
            }
        }
        if !fast {
            self.add_texts(&[whole.as_str()])?;
        } else if !buf.is_empty() {
            let text = if replace {
                String::from_utf8_lossy(&buf).into_owned()
            } else {
                String::from_utf8(buf.clone()).map_err(|e| Error::InvalidUtf8 {
                    source_name: name.to_string(),
                    offset: offset + e.utf8_error().valid_up_to() as u64,
                })?
            };
            self.add_texts(&[text.as_str()])?;
        } else {
            self.texts_seen += 1;
        }
        Ok(())
    }

    /// Add `count` occurrences of `chunk`; an error (and nothing added) if a count would pass
    /// 2**64 - 1.
    pub fn add_count(&mut self, chunk: &[u8], count: u64) -> Result<()> {
        let too_many = || {
            Error::InvalidArgument(format!(
                "the count of {:?} ({count} more) adds up past 2**64-1; pass smaller counts (scale them down)",
                String::from_utf8_lossy(chunk)
            ))
        };
        let pieces = self.pieces_seen.checked_add(count).ok_or_else(too_many)?;
        let slot = self.counts.entry(chunk.into()).or_insert(0);
        *slot = slot.checked_add(count).ok_or_else(too_many)?;
        self.pieces_seen = pieces;
        Ok(())
    }

    pub fn num_unique(&self) -> usize {
        self.counts.len()
    }

    /// The unique chunks and their counts, sorted by chunk bytes (a deterministic order).
    pub fn into_counts(self) -> Vec<(Box<[u8]>, u64)> {
        let mut v: Vec<(Box<[u8]>, u64)> = self.counts.into_iter().collect();
        v.par_sort_unstable_by(|a, b| a.0.cmp(&b.0));
        v
    }

    pub fn counts_snapshot(&self) -> Vec<(Box<[u8]>, u64)> {
        let mut v: Vec<(Box<[u8]>, u64)> =
            self.counts.iter().map(|(k, &c)| (k.clone(), c)).collect();
        v.par_sort_unstable_by(|a, b| a.0.cmp(&b.0));
        v
    }
}

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
/// existing symbol that stands for the same thing (the word-level `</w>` model, `crate::words`,
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
    fn a_reader_stops_before_its_next_block_once_told() {
        let text = "hello world ".repeat(1000);
        let mut c = ChunkCounter::new(Pretokenizer::new("gpt2").unwrap(), vec![]);
        let stop = AtomicBool::new(true);
        let got = c.add_reader_until(text.as_bytes(), "t", false, 100, &stop);
        assert_eq!(got, Err(Error::Interrupted));
        assert_eq!(c.num_unique(), 0);
        stop.store(false, Ordering::Relaxed);
        c.add_reader_until(text.as_bytes(), "t", false, 100, &stop)
            .unwrap();
        let mut whole = ChunkCounter::new(Pretokenizer::new("gpt2").unwrap(), vec![]);
        whole.add_reader(text.as_bytes(), "t", false, 100).unwrap();
        assert_eq!(c.counts, whole.counts);
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

    #[test]
    fn parallel_split_gives_same_counts() {
        let mut text = String::new();
        for i in 0..20000 {
            text.push_str(&format!(
                "line {i} of text,  with 'quotes' and\n\n  spaces\nNext"
            ));
        }
        // and a long line without line breaks: cut between words
        for i in 0..20000 {
            text.push_str(&format!("it's word{i} and  don't x'S a ſ b \u{301}c é d "));
        }
        for pat in ["gpt2", "cl100k", "o200k", "nanochat"] {
            let pre = Pretokenizer::new(pat).unwrap();
            let mut whole: FxHashMap<&str, u64> = Default::default();
            pre.for_each_piece(&text, |p| *whole.entry(p).or_insert(0) += 1)
                .unwrap();
            let mut parts: FxHashMap<&str, u64> = Default::default();
            let split = split_for_parallel(&text, 4096, &[]);
            assert!(split.len() > 10);
            for part in split {
                pre.for_each_piece(part, |p| *parts.entry(p).or_insert(0) += 1)
                    .unwrap();
            }
            assert_eq!(whole, parts, "{pat}");
        }
    }

    /// Counts of `text` read whole: pinned tokens cut out, the rest split by `pat`.
    fn whole_counts(text: &str, pat: &str, pinned: &[&str]) -> FxHashMap<Box<[u8]>, u64> {
        let mut c = ChunkCounter::new(
            Pretokenizer::new(pat).unwrap(),
            pinned.iter().map(|p| p.to_string()).collect(),
        );
        let mut local = LocalCounts::default();
        c.count_one(text, &mut local).unwrap();
        c.absorb(local);
        c.counts
    }

    #[test]
    fn cuts_stay_clear_of_pinned_tokens_that_could_span_them() {
        // pinned tokens with a space or a line break inside, overlapping each other and the
        // cut contexts; the text is cut (in parts and in blocks) and counted as it is whole
        let pinned = ["New York", "York\nNew", "k N", "a a", "a\nb", "w Y"];
        let mut text = String::new();
        let units = [
            "New York",
            "New",
            " York",
            "\n",
            "a a a",
            "b\nNew York\n",
            "x.\nb",
            "a\nb ",
            "k Nx",
            " w Yz",
            ". ",
            "York\nNew York\n",
        ];
        let mut state = 12345u64;
        while text.len() < 3 << 20 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            text.push_str(units[(state >> 33) as usize % units.len()]);
        }
        for pat in ["gpt2", "cl100k"] {
            let expected = whole_counts(&text, pat, &pinned);
            let tokens = spanning_tokens(pinned.iter().copied());
            let parts = split_for_parallel(&text, 4096, &tokens);
            assert!(parts.len() > 100, "{pat}: the text was not cut");
            let mut c = ChunkCounter::new(
                Pretokenizer::new(pat).unwrap(),
                pinned.iter().map(|p| p.to_string()).collect(),
            );
            c.add_texts(&[text.as_str()]).unwrap();
            assert_eq!(c.counts, expected, "{pat}: add_texts");
            let mut c = ChunkCounter::new(
                Pretokenizer::new(pat).unwrap(),
                pinned.iter().map(|p| p.to_string()).collect(),
            );
            c.add_reader(text.as_bytes(), "t", false, 777).unwrap();
            assert_eq!(c.counts, expected, "{pat}: add_reader");
        }
    }

    #[test]
    fn reader_blocks_without_cuts_then_cuts_at_every_block_edge() {
        // stretches with no safe cut (several blocks long) between places that are one, read in
        // blocks of every small size so that a block ends at (and just after) each such place,
        // and the search of a growing buffer resumes where the last one stopped: the counts
        // stay those of the whole text
        let mut text = String::new();
        for i in 0..300 {
            text.push_str(&"日本語，".repeat(i % 7));
            text.push_str(["x.\nb", "ab cd", "New York", "q.\nNew York"][i % 4]);
        }
        for (pat, pinned) in [("gpt2", vec![]), ("cl100k", vec!["New York", "k\nN"])] {
            let expected = whole_counts(&text, pat, &pinned);
            for block in 1..24 {
                let mut c = ChunkCounter::new(
                    Pretokenizer::new(pat).unwrap(),
                    pinned.iter().map(|p| p.to_string()).collect(),
                );
                c.add_reader(text.as_bytes(), "t", false, block).unwrap();
                assert_eq!(c.counts, expected, "{pat}, blocks of {block}");
            }
        }
    }

    #[test]
    fn reader_in_blocks_equals_whole_text() {
        let mut text = String::new();
        for i in 0..3000 {
            text.push_str(&format!(
                "Zeile {i}: größer als ü — 😀 ok\n  indented\nword "
            ));
        }
        for pat in ["cl100k", r"\w+|\s+|[^\w\s]+"] {
            let mut a = ChunkCounter::new(Pretokenizer::new(pat).unwrap(), vec![]);
            a.add_texts(&[text.as_str()]).unwrap();
            let mut b = ChunkCounter::new(Pretokenizer::new(pat).unwrap(), vec![]);
            b.add_reader(text.as_bytes(), "mem", false, 1000).unwrap();
            assert_eq!(a.counts_snapshot(), b.counts_snapshot(), "{pat}");
        }
    }

    #[test]
    fn reader_reports_bad_utf8_offset() {
        let mut data = b"hello world\n".repeat(100);
        data.push(0xff);
        let mut c = ChunkCounter::new(Pretokenizer::new("gpt2").unwrap(), vec![]);
        let err = c.add_reader(&data[..], "f.txt", false, 64).unwrap_err();
        assert_eq!(
            err,
            Error::InvalidUtf8 {
                source_name: "f.txt".into(),
                offset: 1200
            }
        );
        let mut c = ChunkCounter::new(Pretokenizer::new("gpt2").unwrap(), vec![]);
        c.add_reader(&data[..], "f.txt", true, 64).unwrap();
        assert!(c.num_unique() > 2);
    }

    #[test]
    fn pinned_tokens_are_cut_out() {
        let mut segs = vec![];
        cut_pinned(
            "a<x>bb<xy>c",
            &pinned_matcher(&["<xy>".into(), "<x>".into()]),
            |s| segs.push(s),
        );
        assert_eq!(segs, vec!["a", "bb", "c"]);
    }
}
