//! `encode_batch`: documents encoded on several threads while their result lists are built.
//!
//! The documents are cut into ranges of about [`RANGE_BYTES`] of text. `threads - 1` pool
//! threads and the calling thread take ranges (each from its own block of them first, see
//! [`Blocks`]) and encode each into one id buffer. A Python list can only be allocated with
//! the GIL, which only the calling thread holds, so it also allocates the lists of every
//! encoded range (their sizes stay 0, so no Python code can see their slots). A range whose
//! lists are allocated is a fill task: any thread writes the cached int objects into the slots
//! and counts how often each id occurs. When every range is filled, the calling thread raises
//! each int's refcount once by its count, sets the lists' sizes and returns them. Where the
//! interpreter lets the ints be pinned (see cpython.rs's `Pin`), slots take no reference:
//! nothing is counted or raised, and every batch takes this path.
//!
//! Priorities: the calling thread allocates first (nobody else can), then fills, then encodes;
//! pool threads fill first, then encode. Filling before encoding more hands each id buffer back
//! for reuse while it is still in the cache (encoding first, one thread would encode every range
//! into a fresh buffer before filling any). A pool thread stops when no range is left to encode
//! and no fill is waiting; what remains is the calling thread's. With `threads == 1` the calling
//! thread does everything in turn: encode a range, allocate its lists, fill them.
//!
//! Small batches of ints that are not pinned (where a scan over the vocabulary would cost more
//! than it saves) build each list directly with [`IntTable::ids_to_list`], on the calling
//! thread.
//!
//! The lists themselves (allocation, writes, reference counts) are cpython.rs's [`IdLists`];
//! this module decides who does what when. It also holds `encode_batch_bytes`, which writes the
//! ids of a batch straight to bytes.
//!
//! Performance notes (gpt2, 10 MB of 1-10 KB documents, first pass, 2 cores):
//! - Before this design, a batch ran in rounds of 1 MB: the pool encoded a round, the calling
//!   thread allocated its lists, the pool filled them. The lists' allocation (about 4 ms per
//!   call) left one core idle, and each of the 20 parallel sections per call ended at a barrier
//!   where a thread waited for the other's last range: 2 threads took 70-85 ms against 130-138
//!   ms for 1 (1.6-1.9x).
//! - Page faults are not what stopped it scaling: first touches of fresh memory from two threads
//!   proceed in parallel here (40 MB: 21-22 ms on one thread, 11-12 ms on two).

use crate::buffers::{keep_ids_buffers, take_ids_buffer};
use crate::cpython::{IdCounts, IdLists, IntTable, RoomLists};
use crate::errors::to_py;
use crate::pools::{in_pool, pool_in, rayon_threads, PoolMap};
use crate::text;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyString};
use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use toksmith_core::encode::{Allowed, Encoder};

/// About this many bytes of text per range: its ids (a 256 KB buffer at most) stay in the cache
/// between being encoded and written into the lists.
const RANGE_BYTES: usize = 1 << 16;

/// Why a text of a batch failed.
pub(crate) enum BatchError {
    Utf8(text::ToUtf8Error),
    Core(toksmith_core::Error),
}

/// Append the ids of one text (converted to UTF-8 in `utf8` if CPython does not hold it so).
pub(crate) fn encode_text(
    enc: &Encoder,
    view: &text::StrView,
    allowed: &Allowed,
    utf8: &mut String,
    ids: &mut Vec<u32>,
) -> Result<(), BatchError> {
    view.with_utf8_in(utf8, |t| enc.encode_into(t, allowed, ids))
        .map_err(BatchError::Utf8)?
        .map_err(BatchError::Core)
}

impl BatchError {
    /// The Python exception, `text` being the text that failed.
    pub(crate) fn into_py(self, text: &Bound<'_, PyString>) -> PyErr {
        match self {
            BatchError::Utf8(e) => text::utf8_error(text, e),
            BatchError::Core(e) => to_py(e),
        }
    }
}

/// The ids of the documents of one range, `ends[k]` being where the k-th one ends.
struct Encoded {
    range: Range<usize>,
    ids: Vec<u32>,
    ends: Vec<usize>,
}

/// An encoded range whose lists are allocated (lists of size 0, one per document).
struct Fill<'l> {
    enc: Encoded,
    lists: RoomLists<'l>,
}

/// What the threads hand each other, under one lock.
#[derive(Default)]
struct State<'l> {
    /// ranges encoded by pool threads, waiting for their lists
    encoded: Vec<Encoded>,
    /// ranges waiting to be filled
    fills: Vec<Fill<'l>>,
    /// the first failing document found so far (lowest index) and why
    failed: Option<(usize, BatchError)>,
    /// a pool thread panicked (its range is lost): everyone stops, and the scope re-raises it
    panicked: bool,
    /// ranges whose lists are complete
    done: usize,
    /// pool threads inside their loop
    running: usize,
    /// pool threads that have left it
    stopped: usize,
    /// id counts of the pool threads that have stopped
    counts: Vec<IdCounts>,
}

/// One `encode_batch` call: everything the threads share.
struct Job<'a> {
    enc: &'a Encoder,
    allowed: &'a Allowed,
    views: &'a [text::StrView<'a>],
    sizes: &'a [usize],
    ranges: Vec<Range<usize>>,
    /// the ranges not taken yet, one contiguous block per thread (see [`Blocks`])
    blocks: Blocks,
    /// the lists are filled by fill tasks (else the calling thread builds whole lists)
    filled: bool,
    /// pool threads taking part
    helpers: usize,
    state: Mutex<State<'a>>,
    changed: Condvar,
}

impl<'a> Job<'a> {
    fn lock(&self) -> MutexGuard<'_, State<'a>> {
        // a panicking thread cannot leave the state half-changed: every change is one push,
        // take or increment
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next range for thread `me` to encode, unless all are taken. After a document failed,
    /// only ranges that start before it are still encoded: the threads do not take the ranges
    /// in order, and one of those may hold an earlier failure (the one to report).
    fn claim(&self, s: &State, me: usize) -> Option<Range<usize>> {
        if s.panicked {
            return None;
        }
        loop {
            let r = self.ranges[self.blocks.claim(me)?].clone();
            match &s.failed {
                Some((k, _)) if r.start > *k => continue,
                _ => return Some(r),
            }
        }
    }

    fn encode(&self, range: Range<usize>) -> Result<Encoded, (usize, BatchError)> {
        let mut ids = take_ids_buffer(self.sizes[range.clone()].iter().sum())
            .map_err(|e| (range.start, BatchError::Core(e)))?;
        let mut ends = toksmith_core::mem::try_vec(range.len(), "the ends of a batch's ids")
            .map_err(|e| (range.start, BatchError::Core(e)))?;
        let mut utf8 = String::new();
        for k in range.clone() {
            encode_text(self.enc, &self.views[k], self.allowed, &mut utf8, &mut ids)
                .map_err(|e| (k, e))?;
            ends.push(ids.len());
        }
        Ok(Encoded { range, ids, ends })
    }

    /// Record the result of encoding a range: queued for its lists, or the failure kept if it
    /// is the earliest so far.
    fn record(s: &mut State<'a>, r: Result<Encoded, (usize, BatchError)>) {
        match r {
            Ok(e) => s.encoded.push(e),
            Err((k, e)) => {
                if s.failed.as_ref().is_none_or(|(first, _)| k < *first) {
                    s.failed = Some((k, e));
                }
            }
        }
    }

    /// Write the ints of a range's ids into its lists and count them.
    fn fill(&self, f: Fill<'a>, counts: &mut IdCounts) {
        f.lists.fill(&f.enc.ids, &f.enc.ends, counts);
        keep_ids_buffers([f.enc.ids]);
    }

    /// A pool thread: fill, else encode, until neither is left.
    fn work(&self) {
        struct Leave<'j, 'a>(&'j Job<'a>, IdCounts);
        impl Drop for Leave<'_, '_> {
            // also on a panic, so the calling thread never waits for a thread that is gone
            fn drop(&mut self) {
                let mut s = self.0.lock();
                s.running -= 1;
                s.stopped += 1;
                s.panicked |= std::thread::panicking();
                s.counts.push(std::mem::take(&mut self.1));
                self.0.changed.notify_all();
            }
        }
        self.lock().running += 1;
        // (the pool's thread k owns block k + 1; the calling thread owns block 0)
        let ix = rayon::current_thread_index().map_or(0, |i| i + 1);
        let mut me = Leave(self, IdCounts::default());
        loop {
            let mut s = self.lock();
            if let Some(f) = s.fills.pop() {
                drop(s);
                self.fill(f, &mut me.1);
                let mut s = self.lock();
                s.done += 1;
                self.changed.notify_all();
                continue;
            }
            let Some(r) = self.claim(&s, ix) else { break };
            drop(s);
            let res = self.encode(r);
            Self::record(&mut self.lock(), res);
            self.changed.notify_all();
        }
    }
}

/// Make the lists of an encoded range: complete lists when not counting, else lists with room
/// (returned as a fill task).
fn make_lists<'a>(job: &Job<'a>, lists: &'a IdLists, e: Encoded) -> PyResult<Option<Fill<'a>>> {
    if job.filled {
        let lists = lists.make_room(e.range.start, &e.ends)?;
        return Ok(Some(Fill { enc: e, lists }));
    }
    let mut at = 0;
    for (k, &end) in e.range.clone().zip(&e.ends) {
        lists.make_complete(k, &e.ids[at..end])?;
        at = end;
    }
    keep_ids_buffers([e.ids]);
    Ok(None)
}

/// The pool of `n` threads that helps calling threads with batches. Batches have pools of
/// their own: the calling thread waits for its pool threads to start (they borrow the call's
/// data), and a pool thread busy with a long task of another kind (training, say) would hold
/// the batch up after all its work was done; another batch's helpers stop as soon as their
/// batch's ranges are all taken.
fn helper_pool(n: usize) -> PyResult<std::sync::Arc<rayon::ThreadPool>> {
    static POOLS: PoolMap = std::sync::OnceLock::new();
    pool_in(&POOLS, n, || {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("toksmith-batch-{i}"))
    })
}

/// Encode `texts` on `threads` threads (0: as many as the global pool has) into one list of id
/// lists.
pub(crate) fn encode_batch<'py>(
    py: Python<'py>,
    enc: &Encoder,
    ints: &IntTable,
    texts: &[Bound<'py, PyString>],
    allowed: &Allowed,
    threads: usize,
) -> PyResult<Bound<'py, PyList>> {
    // Views of each str (which `texts` keeps alive; Python strings are immutable): UTF-8 is
    // borrowed where CPython has it, otherwise converted by the thread that encodes it.
    let (views, sizes) = views_and_sizes(texts)?;
    let n_threads = rayon_threads(threads)?.max(1);
    let total: usize = sizes.iter().sum();
    // Pinned ints: any thread fills lists, nothing to count. Else about one id per 4 bytes:
    // count references when the ids outnumber the vocabulary 4:1 (below that, zeroing and
    // summing per-thread counts of every id costs more than the parallel writes save).
    let filled = ints.pinned() || total / 4 >= 4 * ints.len();
    let parts = total.div_ceil(RANGE_BYTES).max(4 * n_threads);
    let ranges = balanced_ranges(&sizes, parts);
    let helpers = if ranges.len() < 2 { 0 } else { n_threads - 1 };
    let blocks = Blocks::new(ranges.len(), helpers + 1);
    let lists = IdLists::new(py, ints, texts.len())?;
    let job = Job {
        enc,
        allowed,
        views: &views,
        sizes: &sizes,
        ranges,
        blocks,
        filled,
        helpers,
        state: Mutex::new(State::default()),
        changed: Condvar::new(),
    };
    let mut counts = IdCounts::default();
    let run = |counts: &mut IdCounts| -> PyResult<()> {
        let out = caller_loop(py, &job, &lists, counts);
        if out.is_err() {
            // stop the pool threads from taking more ranges
            job.blocks.close();
        }
        out
    };
    let out = if helpers == 0 {
        run(&mut counts)
    } else {
        let job = &job;
        helper_pool(helpers)?.in_place_scope(|s| {
            for _ in 0..helpers {
                s.spawn(move |_| job.work());
            }
            run(&mut counts)
        })
    };
    let state = job.state.into_inner().unwrap_or_else(|e| e.into_inner());
    let State {
        failed,
        counts: mut all,
        fills,
        ..
    } = state;
    // (fill tasks left by an error borrow the lists, which are freed below)
    drop(fills);
    if let Some((k, e)) = failed {
        return Err(e.into_py(&texts[k]));
    }
    out?;
    all.push(counts);
    lists.finish(&all)
}

/// The calling thread's part: allocate lists, else fill, else encode, until every range is
/// filled or a document failed, then wait for the pool threads to stop. The GIL is released
/// while encoding, filling and waiting.
fn caller_loop<'a>(
    py: Python<'_>,
    job: &Job<'a>,
    lists: &'a IdLists,
    counts: &mut IdCounts,
) -> PyResult<()> {
    let n = job.ranges.len();
    let mut mine: Option<Result<Encoded, (usize, BatchError)>> = None;
    loop {
        let (encoded, fill, range) = {
            let mut s = job.lock();
            if let Some(r) = mine.take() {
                Job::record(&mut s, r);
            }
            if s.done == n || s.panicked {
                break;
            }
            if s.failed.is_some() {
                // no list will be returned: only look for an earlier failure
                drop(std::mem::take(&mut s.encoded));
                drop(std::mem::take(&mut s.fills));
                let range = job.claim(&s, 0);
                if range.is_none() && s.running == 0 {
                    break;
                }
                (Vec::new(), None, range)
            } else {
                let encoded = std::mem::take(&mut s.encoded);
                let fill = if encoded.is_empty() {
                    s.fills.pop()
                } else {
                    None
                };
                let range = if encoded.is_empty() && fill.is_none() {
                    job.claim(&s, 0)
                } else {
                    None
                };
                (encoded, fill, range)
            }
        };
        if !encoded.is_empty() {
            let mut made = 0;
            let mut new_fills = Vec::new();
            for e in encoded {
                match make_lists(job, lists, e)? {
                    Some(f) => new_fills.push(f),
                    None => made += 1,
                }
            }
            let mut s = job.lock();
            s.done += made;
            s.fills.extend(new_fills);
            job.changed.notify_all();
        } else if let Some(f) = fill {
            py.detach(|| job.fill(f, counts));
            job.lock().done += 1;
        } else if let Some(r) = range {
            mine = Some(py.detach(|| job.encode(r)));
        } else {
            // nothing to do until a pool thread hands something over or stops
            py.detach(|| {
                let mut s = job.lock();
                while s.encoded.is_empty()
                    && s.fills.is_empty()
                    && s.done < n
                    && s.running > 0
                    && !s.panicked
                {
                    s = job.changed.wait(s).unwrap_or_else(|e| e.into_inner());
                }
            });
        }
    }
    // Pool threads that have not started yet will find nothing to do; wait for them here with
    // the GIL released (not at the end of the scope, where it is held).
    py.detach(|| {
        let mut s = job.lock();
        while s.stopped < job.helpers {
            s = job.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    });
    Ok(())
}

/// The ranges of a batch not taken yet: `0..n` cut into one contiguous block per thread, each
/// a `(front, back)` pair packed in one atomic. A thread takes the front of its own block and,
/// once that is empty, the back of another's. So a batch encoded again sends nearly every range
/// to the thread that encoded it before (only the ranges near where two threads met may
/// change hands), and that thread's piece cache already holds the range's pieces: with one
/// counter shared by all, a range went to whichever thread asked first, and a repeated batch
/// on 2 threads missed the cache where one thread hit.
struct Blocks(Vec<AtomicU64>);

impl Blocks {
    fn new(n: usize, threads: usize) -> Blocks {
        // (a range holds 64 KB of text or one text: never 2^32 of them)
        let n = n.min(u32::MAX as usize);
        let t = threads.max(1);
        Blocks(
            (0..t)
                .map(|k| AtomicU64::new(pack(k * n / t, (k + 1) * n / t)))
                .collect(),
        )
    }

    /// A range for thread `me` (its block's front, else the back of the next block that has
    /// one left), or None when every block is empty.
    fn claim(&self, me: usize) -> Option<usize> {
        let t = self.0.len();
        let me = me % t;
        (0..t).find_map(|j| self.take(&self.0[(me + j) % t], j == 0))
    }

    fn take(&self, block: &AtomicU64, front: bool) -> Option<usize> {
        let mut v = block.load(Ordering::Relaxed);
        loop {
            let (f, b) = unpack(v);
            if f >= b {
                return None;
            }
            let (next, got) = if front {
                (pack(f + 1, b), f)
            } else {
                (pack(f, b - 1), b - 1)
            };
            match block.compare_exchange_weak(v, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Some(got),
                Err(now) => v = now,
            }
        }
    }

    /// Take every range left (after an error: no thread starts another).
    fn close(&self) {
        for b in &self.0 {
            b.store(0, Ordering::Relaxed);
        }
    }
}

fn pack(front: usize, back: usize) -> u64 {
    ((front as u64) << 32) | back as u64
}

fn unpack(v: u64) -> (usize, usize) {
    ((v >> 32) as usize, (v & 0xFFFF_FFFF) as usize)
}

/// Split `0..sizes.len()` into at most `parts` contiguous ranges of about equal total size.
fn balanced_ranges(sizes: &[usize], parts: usize) -> Vec<std::ops::Range<usize>> {
    let total: usize = sizes.iter().sum();
    let parts = parts.clamp(1, sizes.len().max(1));
    let mut bounds = vec![0usize];
    let mut acc = 0usize;
    for (k, &n) in sizes.iter().enumerate() {
        acc += n;
        if acc * parts >= total * bounds.len() && bounds.len() < parts {
            bounds.push(k + 1);
        }
    }
    bounds.push(sizes.len());
    bounds.dedup();
    bounds.windows(2).map(|w| w[0]..w[1]).collect()
}

/// `range` run on each of `parts` balanced ranges of `texts` (by `sizes`) in the thread pool,
/// the results in order; the first failure (the ranges are in order: the first text that
/// failed) becomes the Python error, named by its text.
fn map_ranges<'py, T: Send>(
    py: Python<'py>,
    threads: usize,
    texts: &[Bound<'py, PyString>],
    sizes: &[usize],
    parts: usize,
    range: impl Fn(std::ops::Range<usize>) -> Result<T, (usize, BatchError)> + Sync + Send,
) -> PyResult<Vec<T>> {
    let outs = in_pool(py, threads, || {
        balanced_ranges(sizes, parts)
            .into_par_iter()
            .map(range)
            .collect::<Vec<_>>()
    })?;
    outs.into_iter()
        .map(|part| part.map_err(|(k, e)| e.into_py(&texts[k])))
        .collect()
}

/// `Bpe.first_special`: the index of the first of `texts` that holds a special token among
/// `disallowed` (all when None), searched on `threads` threads; None when no text holds one.
/// `encode_batch`'s check for disallowed special tokens: done one text after the other on the
/// calling thread (each non-ASCII str converted to UTF-8 there too), it was the one serial part
/// of a batch of mixed documents.
pub(crate) fn first_special<'py>(
    py: Python<'py>,
    enc: &Encoder,
    texts: &[Bound<'py, PyString>],
    disallowed: Option<&[u32]>,
    threads: usize,
) -> PyResult<Option<usize>> {
    let views: Vec<text::StrView> = texts.iter().map(text::view).collect::<PyResult<_>>()?;
    let sizes: Vec<usize> = views.iter().map(text::StrView::max_utf8_len).collect();
    let parts = (sizes.iter().sum::<usize>() >> 16).max(4 * rayon_threads(threads)?);
    let range = |r: std::ops::Range<usize>| -> Result<Option<usize>, (usize, BatchError)> {
        let mut utf8 = String::new();
        for k in r {
            let hit = views[k]
                .with_utf8_in(&mut utf8, |t| enc.find_special(t, disallowed).is_some())
                .map_err(|e| (k, BatchError::Utf8(e)))?;
            if hit {
                return Ok(Some(k));
            }
        }
        Ok(None)
    };
    let found = map_ranges(py, threads, texts, &sizes, parts, range)?;
    Ok(found.into_iter().flatten().next())
}

/// `Bpe.encode_batch_bytes`: encode `texts` on `threads` threads and write their ids straight
/// to bytes (see its doc string); returns the bytes and the number of ids.
#[allow(clippy::too_many_arguments)]
pub(crate) fn encode_batch_bytes<'py>(
    py: Python<'py>,
    enc: &Encoder,
    texts: &[Bound<'py, PyString>],
    allowed: &Allowed,
    threads: usize,
    width: usize,
    sep: &[u8],
    lines: bool,
    open: &[u8],
    close: &[u8],
) -> PyResult<(Bound<'py, PyBytes>, usize)> {
    use toksmith_core::ids_format::{ids_to_le, ids_to_text};
    if !matches!(width, 0 | 2 | 4) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "width must be 0 (text), 2 or 4, not {width}"
        )));
    }
    let (views, sizes) = views_and_sizes(texts)?;
    let parts = (sizes.iter().sum::<usize>() >> 16).max(4 * rayon_threads(threads)?);
    // The output of a range of texts, and its number of ids; a failure names the text.
    let range = |r: std::ops::Range<usize>| -> Result<(Vec<u8>, usize), (usize, BatchError)> {
        let bytes: usize = sizes[r.clone()].iter().sum();
        // decimal text: at most 11 bytes per id, about 4 bytes of text per id
        let first = r.start;
        let oom = |e| (first, BatchError::Core(e));
        let mut out = toksmith_core::mem::try_vec(
            if width == 0 { bytes + bytes / 2 } else { bytes },
            "the encoded ids",
        )
        .map_err(oom)?;
        let mut ids = take_ids_buffer(bytes).map_err(oom)?;
        let (mut utf8, mut n) = (String::new(), 0);
        for k in r {
            ids.clear();
            encode_text(enc, &views[k], allowed, &mut utf8, &mut ids).map_err(|e| (k, e))?;
            // room for the most this text's ids can take (the writers below reserve no more)
            let most = if width == 0 {
                ids.len() * (10 + sep.len()) + open.len() + close.len() + sep.len() + 1
            } else {
                ids.len() * width
            };
            toksmith_core::mem::try_reserve(&mut out, most, "the encoded ids")
                .map_err(|e| (k, BatchError::Core(e)))?;
            if width != 0 {
                ids_to_le(&ids, width, &mut out).map_err(|e| (k, BatchError::Core(e)))?;
            } else if lines {
                out.extend_from_slice(open);
                ids_to_text(&ids, sep, &mut out);
                out.extend_from_slice(close);
                out.push(b'\n');
            } else if !ids.is_empty() {
                if n > 0 {
                    out.extend_from_slice(sep);
                }
                ids_to_text(&ids, sep, &mut out);
            }
            n += ids.len();
        }
        keep_ids_buffers([ids]);
        Ok((out, n))
    };
    let done = map_ranges(py, threads, texts, &sizes, parts, range)?;
    // The parts are copied once, into the bytes object; `sep` goes between two non-empty
    // runs of text.
    let mut chunks: Vec<&[u8]> = Vec::with_capacity(2 * done.len());
    let mut n = 0;
    for (bytes, count) in &done {
        if width == 0 && !lines && *count > 0 && n > 0 {
            chunks.push(sep);
        }
        chunks.push(bytes);
        n += count;
    }
    let total = chunks.iter().map(|c| c.len()).sum();
    let out = PyBytes::new_with(py, total, |buf| {
        let mut at = 0;
        for c in &chunks {
            buf[at..at + c.len()].copy_from_slice(c);
            at += c.len();
        }
        Ok(())
    })?;
    Ok((out, n))
}

/// The ids of a range of texts for [`encode_batch_arrays`], BOS/EOS included, and where each
/// text's ids end in them.
struct Part {
    ids: Vec<u32>,
    ends: Vec<usize>,
}

/// `Bpe.encode_batch_arrays`: encode `texts` on `threads` threads into one array of ids
/// (little-endian, `width` bytes each) and the int64 offsets of the texts (`len(texts) + 1`,
/// starting at 0), both as `bytearray`s numpy maps without a copy. `bos`/`eos` go before/after
/// a text's ids: every text's when `marks` is None, else the texts whose mark has bit 0 (BOS)
/// or bit 1 (EOS) set (a document read in several pieces gets BOS on its first, EOS on its
/// last). No Python int is made; the GIL is released while encoding and while the ids are
/// written into the array, each range by the thread that encoded it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn encode_batch_arrays<'py>(
    py: Python<'py>,
    enc: &Encoder,
    texts: &[Bound<'py, PyString>],
    allowed: &Allowed,
    threads: usize,
    width: usize,
    bos: Option<u32>,
    eos: Option<u32>,
    marks: Option<&[u8]>,
) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)> {
    use toksmith_core::encode::to_buffer::{check_width, write_ids_le};
    check_width(width).map_err(to_py)?;
    if let Some(m) = marks {
        if m.len() != texts.len() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "marks has {} items for {} texts",
                m.len(),
                texts.len()
            )));
        }
    }
    let (views, sizes) = views_and_sizes(texts)?;
    let parts = (sizes.iter().sum::<usize>() >> 16).max(4 * rayon_threads(threads)?);
    let mark = |k: usize| marks.map_or(3, |m| m[k]);
    let range = |r: std::ops::Range<usize>| -> Result<Part, (usize, BatchError)> {
        let bytes: usize = sizes[r.clone()].iter().sum();
        let mut ids =
            take_ids_buffer(bytes + 2 * r.len()).map_err(|e| (r.start, BatchError::Core(e)))?;
        let mut ends = toksmith_core::mem::try_vec(r.len(), "the ends of a batch's ids")
            .map_err(|e| (r.start, BatchError::Core(e)))?;
        let mut utf8 = String::new();
        for k in r {
            let m = mark(k);
            if let (Some(b), true) = (bos, m & 1 != 0) {
                ids.push(b);
            }
            encode_text(enc, &views[k], allowed, &mut utf8, &mut ids).map_err(|e| (k, e))?;
            if let (Some(e), true) = (eos, m & 2 != 0) {
                ids.push(e);
            }
            ends.push(ids.len());
        }
        Ok(Part { ids, ends })
    };
    let done = map_ranges(py, threads, texts, &sizes, parts, range)?;
    let total: usize = done.iter().map(|p| p.ids.len()).sum();
    let ids = PyByteArray::new_with(py, total * width, |buf| {
        // Each range's ids go to their place in the array, in parallel: the array is cut into
        // one disjoint slice per range first.
        let mut slices = Vec::with_capacity(done.len());
        let mut rest = buf;
        for p in &done {
            let (head, tail) = rest.split_at_mut(p.ids.len() * width);
            slices.push(head);
            rest = tail;
        }
        let parts = &done;
        in_pool(py, threads, move || {
            slices
                .into_par_iter()
                .zip(parts.par_iter())
                .map(|(out, p)| write_ids_le(&p.ids, width, out))
                .collect::<toksmith_core::Result<Vec<()>>>()
        })?
        .map_err(to_py)?;
        Ok(())
    })?;
    let offsets = PyByteArray::new_with(py, (texts.len() + 1) * 8, |buf| {
        let mut at = 0usize;
        let mut slots = buf.chunks_exact_mut(8);
        if let Some(s) = slots.next() {
            s.copy_from_slice(&0i64.to_le_bytes());
        }
        for p in &done {
            for &end in &p.ends {
                if let Some(s) = slots.next() {
                    s.copy_from_slice(&((at + end) as i64).to_le_bytes());
                }
            }
            at += p.ids.len();
        }
        Ok(())
    })?;
    keep_ids_buffers(done.into_iter().map(|p| p.ids));
    Ok((ids, offsets))
}

/// A view of each text (see [`text::view`]) and the most UTF-8 bytes it can have, in vectors
/// allocated fallibly (a batch's length follows the input).
fn views_and_sizes<'a>(
    texts: &'a [Bound<'_, PyString>],
) -> PyResult<(Vec<text::StrView<'a>>, Vec<usize>)> {
    const WHAT: &str = "the texts of a batch";
    let mut views = toksmith_core::mem::try_vec(texts.len(), WHAT).map_err(crate::errors::to_py)?;
    let mut sizes = toksmith_core::mem::try_vec(texts.len(), WHAT).map_err(crate::errors::to_py)?;
    for t in texts {
        let v = text::view(t)?;
        sizes.push(v.max_utf8_len());
        views.push(v);
    }
    Ok((views, sizes))
}
