//! `encode_batch`: documents encoded on several threads while their result lists are built.
//!
//! The documents are cut into ranges of about [`RANGE_BYTES`] of text. `threads - 1` pool
//! threads and the calling thread take ranges in order from a shared counter and encode each
//! into one id buffer. A Python list can only be allocated with the GIL, which only the calling
//! thread holds, so it also allocates the lists of every encoded range (their sizes stay 0, so
//! no Python code can see their slots). A range whose lists are allocated is a fill task: any
//! thread writes the cached int objects into the slots and counts how often each id occurs.
//! When every range is filled, the calling thread raises each int's refcount once by its count,
//! sets the lists' sizes and returns them.
//!
//! Priorities: the calling thread allocates first (nobody else can), then fills, then encodes;
//! pool threads fill first, then encode. Filling before encoding more hands each id buffer back
//! for reuse while it is still in the cache (encoding first, one thread would encode every range
//! into a fresh buffer before filling any). A pool thread stops when no range is left to encode
//! and no fill is waiting; what remains is the calling thread's. With `threads == 1` the calling
//! thread does everything in turn: encode a range, allocate its lists, fill them.
//!
//! Small batches (where a scan over the vocabulary would cost more than it saves) build each
//! list directly with [`crate::ids_to_list`], on the calling thread.
//!
//! Performance notes (gpt2, 10 MB of 1-10 KB documents, first pass, 2 cores):
//! - Before this design, a batch ran in rounds of 1 MB: the pool encoded a round, the calling
//!   thread allocated its lists, the pool filled them. The lists' allocation (about 4 ms per
//!   call) left one core idle, and each of the 20 parallel sections per call ended at a barrier
//!   where a thread waited for the other's last range: 2 threads took 70-85 ms against 130-138
//!   ms for 1 (1.6-1.9x).
//! - Page faults are not what stopped it scaling: first touches of fresh memory from two threads
//!   proceed in parallel here (40 MB: 21-22 ms on one thread, 11-12 ms on two).

use crate::{
    balanced_ranges, count_ids, ids_to_list, incref_by, keep_ids_buffers, list_items,
    list_with_room, rayon_threads, set_list_len, take_ids_buffer, text, to_py,
};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use toksmith_core::encode::{Allowed, Encoder};

/// About this many bytes of text per range: its ids (a 256 KB buffer at most) stay in the cache
/// between being encoded and written into the lists.
const RANGE_BYTES: usize = 1 << 16;

/// Why a text of a batch failed.
pub(crate) enum BatchError {
    Surrogate(text::Surrogate),
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
        .map_err(BatchError::Surrogate)?
        .map_err(BatchError::Core)
}

impl BatchError {
    /// The Python exception, `text` being the text that failed.
    pub(crate) fn into_py(self, text: &Bound<'_, PyString>) -> PyErr {
        match self {
            BatchError::Surrogate(e) => text::surrogate_error(text, e),
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

/// An encoded range whose lists are allocated (addresses of lists of size 0, one per document).
struct Fill {
    enc: Encoded,
    lists: Vec<usize>,
}

/// What the threads hand each other, under one lock.
#[derive(Default)]
struct State {
    /// ranges encoded by pool threads, waiting for their lists
    encoded: Vec<Encoded>,
    /// ranges waiting to be filled
    fills: Vec<Fill>,
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
    counts: Vec<Vec<u32>>,
}

/// One `encode_batch` call: everything the threads share.
struct Job<'a> {
    enc: &'a Encoder,
    allowed: &'a Allowed,
    views: &'a [text::StrView<'a>],
    sizes: &'a [usize],
    int_addrs: &'a [usize],
    ranges: Vec<Range<usize>>,
    /// the next range to encode
    next: AtomicUsize,
    /// fill tasks count ids (else the calling thread builds whole lists)
    counted: bool,
    /// pool threads taking part
    helpers: usize,
    n_vocab: usize,
    state: Mutex<State>,
    changed: Condvar,
}

impl Job<'_> {
    fn lock(&self) -> MutexGuard<'_, State> {
        // a panicking thread cannot leave the state half-changed: every change is one push,
        // take or increment
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next range to encode, unless all are taken or a document failed.
    fn claim(&self, s: &State) -> Option<Range<usize>> {
        if s.failed.is_some() || s.panicked {
            return None;
        }
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        self.ranges.get(i).cloned()
    }

    fn encode(&self, range: Range<usize>) -> Result<Encoded, (usize, BatchError)> {
        let mut ids = take_ids_buffer(self.sizes[range.clone()].iter().sum());
        let mut ends = Vec::with_capacity(range.len());
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
    fn record(s: &mut State, r: Result<Encoded, (usize, BatchError)>) {
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
    fn fill(&self, f: Fill, counts: &mut [u32]) {
        let mut at = 0;
        for (&list, &end) in f.lists.iter().zip(&f.enc.ends) {
            // SAFETY: `list` was made by `list_with_room` with room for exactly these ids and
            // is not visible to Python (size 0) until `finish`; each slot gets the address of
            // a live int, whose reference is taken in `finish` from the counts.
            unsafe {
                let items = list_items(list as *mut pyo3::ffi::PyObject) as *mut usize;
                for (i, &id) in f.enc.ids[at..end].iter().enumerate() {
                    *items.add(i) = self.int_addrs[id as usize];
                }
            }
            count_ids(counts, &f.enc.ids[at..end]);
            at = end;
        }
        keep_ids_buffers([f.enc.ids]);
    }

    /// A pool thread: fill, else encode, until neither is left.
    fn work(&self) {
        struct Leave<'j, 'a>(&'j Job<'a>, Vec<u32>);
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
        let counts = if self.counted {
            vec![0u32; self.n_vocab]
        } else {
            Vec::new()
        };
        let mut me = Leave(self, counts);
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
            let Some(r) = self.claim(&s) else { break };
            drop(s);
            let res = self.encode(r);
            Self::record(&mut self.lock(), res);
            self.changed.notify_all();
        }
    }
}

/// The result lists, one slot per document; owned references, freed on an error.
struct Lists<'py> {
    py: Python<'py>,
    /// list addresses (0: not made yet)
    lists: Vec<usize>,
    /// the number of ids of each list (its size once published)
    lens: Vec<usize>,
}

impl<'py> Lists<'py> {
    /// Make the lists of an encoded range: complete lists when not counting, else lists with
    /// room (returned as a fill task).
    fn make(&mut self, job: &Job, e: Encoded) -> PyResult<Option<Fill>> {
        let mut at = 0;
        let mut made = Vec::with_capacity(if job.counted { e.range.len() } else { 0 });
        for (k, &end) in e.range.clone().zip(&e.ends) {
            let n = end - at;
            let l = if job.counted {
                // SAFETY: the GIL is held (`self.py`); the list stays at size 0 until `finish`
                let l = unsafe { list_with_room(n) };
                if l.is_null() {
                    return Err(PyErr::fetch(self.py));
                }
                made.push(l as usize);
                l as usize
            } else {
                ids_to_list(self.py, job.int_addrs, &e.ids[at..end])?.into_ptr() as usize
            };
            self.lists[k] = l;
            self.lens[k] = n;
            at = end;
        }
        if job.counted {
            Ok(Some(Fill {
                enc: e,
                lists: made,
            }))
        } else {
            keep_ids_buffers([e.ids]);
            Ok(None)
        }
    }

    /// Raise the refcounts by the counts and publish the lists in one list.
    fn finish(mut self, ints: &[Py<PyAny>], counts: &[Vec<u32>]) -> PyResult<Bound<'py, PyList>> {
        use pyo3::ffi;
        // SAFETY: each int is referred to by exactly the number of slots counted for its id;
        // every list was fully written, so setting its size publishes owned references.
        unsafe {
            let outer = ffi::PyList_New(self.lists.len() as ffi::Py_ssize_t);
            if outer.is_null() {
                return Err(PyErr::fetch(self.py));
            }
            if !counts.is_empty() {
                for (id, obj) in ints.iter().enumerate() {
                    let c: u64 = counts.iter().map(|v| v[id] as u64).sum();
                    incref_by(obj.as_ptr(), c as usize);
                }
            }
            let lists = std::mem::take(&mut self.lists);
            for (k, l) in lists.into_iter().enumerate() {
                let l = l as *mut ffi::PyObject;
                set_list_len(l, self.lens[k]);
                ffi::PyList_SET_ITEM(outer, k as ffi::Py_ssize_t, l);
            }
            Ok(Bound::from_owned_ptr(self.py, outer).cast_into_unchecked())
        }
    }
}

impl Drop for Lists<'_> {
    /// On an error: complete lists are freed as usual; lists with room still have size 0, so
    /// freeing them frees their buffers and nothing else.
    fn drop(&mut self) {
        for &l in self.lists.iter().filter(|&&l| l != 0) {
            // SAFETY: `self.py` proves the GIL is held; each entry is an owned reference.
            unsafe { pyo3::ffi::Py_DECREF(l as *mut pyo3::ffi::PyObject) };
        }
    }
}

/// The pool of `n` threads that helps calling threads with batches. Batches have pools of
/// their own: the calling thread waits for its pool threads to start (they borrow the call's
/// data), and a pool thread busy with a long task of another kind (training, say) would hold
/// the batch up after all its work was done; another batch's helpers stop as soon as their
/// batch's ranges are all taken.
fn helper_pool(n: usize) -> PyResult<std::sync::Arc<rayon::ThreadPool>> {
    static POOLS: crate::PoolMap = std::sync::OnceLock::new();
    crate::pool_in(&POOLS, n, || {
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
    ints: &[Py<PyAny>],
    int_addrs: &[usize],
    texts: &[Bound<'py, PyString>],
    allowed: &Allowed,
    threads: usize,
) -> PyResult<Bound<'py, PyList>> {
    // Views of each str (which `texts` keeps alive; Python strings are immutable): UTF-8 is
    // borrowed where CPython has it, otherwise converted by the thread that encodes it.
    let views: Vec<text::StrView> = texts.iter().map(text::view).collect::<PyResult<_>>()?;
    let sizes: Vec<usize> = views.iter().map(text::StrView::max_utf8_len).collect();
    let n_threads = rayon_threads(threads)?.max(1);
    let total: usize = sizes.iter().sum();
    // about one id per 4 bytes: count references when the ids outnumber the vocabulary 4:1
    let counted = total / 4 >= 4 * ints.len();
    let parts = total.div_ceil(RANGE_BYTES).max(4 * n_threads);
    let ranges = balanced_ranges(&sizes, parts);
    let helpers = if ranges.len() < 2 { 0 } else { n_threads - 1 };
    let job = Job {
        enc,
        allowed,
        views: &views,
        sizes: &sizes,
        int_addrs,
        ranges,
        next: AtomicUsize::new(0),
        counted,
        helpers,
        n_vocab: ints.len(),
        state: Mutex::new(State::default()),
        changed: Condvar::new(),
    };
    let mut lists = Lists {
        py,
        lists: vec![0; texts.len()],
        lens: vec![0; texts.len()],
    };
    let mut counts = if counted {
        vec![0u32; ints.len()]
    } else {
        Vec::new()
    };
    let run = |lists: &mut Lists<'py>, counts: &mut Vec<u32>| -> PyResult<()> {
        let out = caller_loop(py, &job, lists, counts);
        if out.is_err() {
            // stop the pool threads from taking more ranges
            job.next.store(job.ranges.len(), Ordering::Relaxed);
        }
        out
    };
    let out = if helpers == 0 {
        run(&mut lists, &mut counts)
    } else {
        let job = &job;
        helper_pool(helpers)?.in_place_scope(|s| {
            for _ in 0..helpers {
                s.spawn(move |_| job.work());
            }
            run(&mut lists, &mut counts)
        })
    };
    let state = job.state.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some((k, e)) = state.failed {
        return Err(e.into_py(&texts[k]));
    }
    out?;
    let mut all = state.counts;
    all.retain(|c| !c.is_empty());
    if counted {
        all.push(counts);
    }
    lists.finish(ints, &all)
}

/// The calling thread's part: allocate lists, else fill, else encode, until every range is
/// filled or a document failed, then wait for the pool threads to stop. The GIL is released
/// while encoding, filling and waiting.
fn caller_loop(py: Python<'_>, job: &Job, lists: &mut Lists, counts: &mut [u32]) -> PyResult<()> {
    let n = job.ranges.len();
    let mut mine: Option<Result<Encoded, (usize, BatchError)>> = None;
    loop {
        let (encoded, fill, range) = {
            let mut s = job.lock();
            if let Some(r) = mine.take() {
                Job::record(&mut s, r);
            }
            if s.done == n || s.panicked || (s.failed.is_some() && s.running == 0) {
                break;
            }
            let encoded = std::mem::take(&mut s.encoded);
            let fill = if encoded.is_empty() {
                s.fills.pop()
            } else {
                None
            };
            let range = if encoded.is_empty() && fill.is_none() {
                job.claim(&s)
            } else {
                None
            };
            (encoded, fill, range)
        };
        if !encoded.is_empty() {
            let mut made = 0;
            let mut new_fills = Vec::new();
            for e in encoded {
                match lists.make(job, e)? {
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
