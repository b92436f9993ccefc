//! Chunk counting: text split by a [`Pretokenizer`] (after cutting out pinned tokens) into
//! pieces ("chunks"), each unique chunk counted with a 64-bit count; memory is proportional to
//! the number of unique chunks, not to the corpus. Long texts and streams are cut at safe places
//! ([`crate::added::is_safe_cut`]) so every thread counts, with exactly the counts of the whole.

use super::chunks::ChunkTable;
use crate::added::{
    clear_of_tokens, cut_lookahead, is_safe_cut, spanning_tokens, AddedKind, AddedMatcher,
};
use crate::error::{Error, Result};
use crate::pretokenize::Pretokenizer;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};

/// A matcher of pinned token texts (for [`cut_pinned`]).
pub fn pinned_matcher(pinned: &[String]) -> Result<AddedMatcher> {
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
    counts: ChunkTable,
    pub bytes_seen: u64,
    pub pieces_seen: u64,
    pub texts_seen: u64,
}

/// The counts of one thread's share of a batch: compact and fallible as the counter's own
/// (a block of unique words held in a `HashMap<&str, u64>` cost as much again as the counter).
type LocalCounts = ChunkTable;

/// Two local tables added up: the smaller one into the larger.
fn add_tables(a: LocalCounts, b: LocalCounts) -> Result<LocalCounts> {
    let (mut big, small) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    big.absorb(&small)?;
    Ok(big)
}

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
    /// ([`Error::OutOfMemory`] when the pinned tokens' trie does not fit in memory.)
    pub fn new(pretok: Pretokenizer, pinned: Vec<String>) -> Result<Self> {
        let spanning = spanning_tokens(pinned.iter().map(|p| p.as_str()));
        let matcher = pinned_matcher(&pinned)?;
        Ok(ChunkCounter {
            pretok,
            matcher,
            spanning,
            counts: ChunkTable::new(),
            bytes_seen: 0,
            pieces_seen: 0,
            texts_seen: 0,
        })
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

    fn count_one(&self, text: &str, local: &mut LocalCounts) -> Result<()> {
        let mut result = Ok(());
        cut_pinned(text, &self.matcher, |seg| {
            if result.is_ok() {
                let mut added = Ok(());
                result = self.pretok.for_each_piece(seg, |p| {
                    if added.is_ok() {
                        added = local.add(p.as_bytes(), 1);
                    }
                });
                if result.is_ok() {
                    result = added;
                }
            }
        });
        result
    }

    /// Add a batch's counts to the counter's (on failure, what was added stays added and
    /// `pieces_seen` counts it).
    fn absorb(&mut self, local: LocalCounts) -> Result<()> {
        if self.counts.is_empty() {
            self.pieces_seen += local.iter().map(|(_, n)| n).sum::<u64>();
            self.counts = local;
            return Ok(());
        }
        for (k, v) in local.iter() {
            self.counts.add(k, v)?;
            self.pieces_seen += v;
        }
        Ok(())
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
            .try_reduce(LocalCounts::default, add_tables)?;
        self.absorb(merged)
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
            crate::mem::try_reserve(&mut buf, block, "a block of the corpus")?;
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
                whole.try_reserve(text.len()).map_err(|_| {
                    crate::mem::oom("the corpus read whole", whole.len() + text.len(), 1)
                })?;
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
        let old = self.counts.find(chunk).map_or(0, |i| self.counts.count(i));
        old.checked_add(count).ok_or_else(too_many)?;
        self.counts.add(chunk, count)?;
        self.pieces_seen = pieces;
        Ok(())
    }

    pub fn num_unique(&self) -> usize {
        self.counts.len()
    }

    /// The unique chunks and their counts, sorted by chunk bytes (a deterministic order).
    pub fn into_counts(self) -> Vec<(Box<[u8]>, u64)> {
        self.counts_snapshot()
    }

    /// The unique chunks and their counts, compactly stored (what the merge loop trains on:
    /// [`crate::train::train_merges_table`]).
    pub fn into_table(self) -> ChunkTable {
        self.counts
    }

    /// The unique chunks and their counts, as stored (read them by id in the order of
    /// [`ChunkCounter::sorted_ids`]).
    pub fn table(&self) -> &ChunkTable {
        &self.counts
    }

    /// The ids of the unique chunks of [`ChunkCounter::table`] sorted by their bytes (the
    /// order of [`ChunkCounter::counts_snapshot`]), in a vector allocated fallibly: 4 bytes a
    /// chunk, where a snapshot copies every chunk into a heap block of its own.
    pub fn sorted_ids(&self) -> Result<Vec<u32>> {
        let n = self.counts.len();
        let mut ids = crate::mem::try_vec(n, "the order of unique chunks")?;
        ids.extend(0..n as u32);
        let t = &self.counts;
        ids.par_sort_unstable_by(|&a, &b| t.chunk(a as usize).cmp(t.chunk(b as usize)));
        Ok(ids)
    }

    pub fn counts_snapshot(&self) -> Vec<(Box<[u8]>, u64)> {
        let mut v: Vec<(Box<[u8]>, u64)> = self.counts.iter().map(|(k, c)| (k.into(), c)).collect();
        v.par_sort_unstable_by(|a, b| a.0.cmp(&b.0));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_stops_before_its_next_block_once_told() {
        let text = "hello world ".repeat(1000);
        let mut c = ChunkCounter::new(Pretokenizer::new("gpt2").unwrap(), vec![]).unwrap();
        let stop = AtomicBool::new(true);
        let got = c.add_reader_until(text.as_bytes(), "t", false, 100, &stop);
        assert_eq!(got, Err(Error::Interrupted));
        assert_eq!(c.num_unique(), 0);
        stop.store(false, Ordering::Relaxed);
        c.add_reader_until(text.as_bytes(), "t", false, 100, &stop)
            .unwrap();
        let mut whole = ChunkCounter::new(Pretokenizer::new("gpt2").unwrap(), vec![]).unwrap();
        whole.add_reader(text.as_bytes(), "t", false, 100).unwrap();
        assert_eq!(c.counts, whole.counts);
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
    fn whole_counts(text: &str, pat: &str, pinned: &[&str]) -> ChunkTable {
        let mut c = ChunkCounter::new(
            Pretokenizer::new(pat).unwrap(),
            pinned.iter().map(|p| p.to_string()).collect(),
        )
        .unwrap();
        let mut local = LocalCounts::default();
        c.count_one(text, &mut local).unwrap();
        c.absorb(local).unwrap();
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
            )
            .unwrap();
            c.add_texts(&[text.as_str()]).unwrap();
            assert_eq!(c.counts, expected, "{pat}: add_texts");
            let mut c = ChunkCounter::new(
                Pretokenizer::new(pat).unwrap(),
                pinned.iter().map(|p| p.to_string()).collect(),
            )
            .unwrap();
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
                )
                .unwrap();
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
            let mut a = ChunkCounter::new(Pretokenizer::new(pat).unwrap(), vec![]).unwrap();
            a.add_texts(&[text.as_str()]).unwrap();
            let mut b = ChunkCounter::new(Pretokenizer::new(pat).unwrap(), vec![]).unwrap();
            b.add_reader(text.as_bytes(), "mem", false, 1000).unwrap();
            assert_eq!(a.counts_snapshot(), b.counts_snapshot(), "{pat}");
        }
    }

    #[test]
    fn reader_reports_bad_utf8_offset() {
        let mut data = b"hello world\n".repeat(100);
        data.push(0xff);
        let mut c = ChunkCounter::new(Pretokenizer::new("gpt2").unwrap(), vec![]).unwrap();
        let err = c.add_reader(&data[..], "f.txt", false, 64).unwrap_err();
        assert_eq!(
            err,
            Error::InvalidUtf8 {
                source_name: "f.txt".into(),
                offset: 1200
            }
        );
        let mut c = ChunkCounter::new(Pretokenizer::new("gpt2").unwrap(), vec![]).unwrap();
        c.add_reader(&data[..], "f.txt", true, 64).unwrap();
        assert!(c.num_unique() > 2);
    }

    #[test]
    fn pinned_tokens_are_cut_out() {
        let mut segs = vec![];
        cut_pinned(
            "a<x>bb<xy>c",
            &pinned_matcher(&["<xy>".into(), "<x>".into()]).unwrap(),
            |s| segs.push(s),
        );
        assert_eq!(segs, vec!["a", "bb", "c"]);
    }
}
