//! PyO3 glue: the only crate that knows about Python. It converts arguments, releases the GIL
//! around every piece of native work, and maps core errors to Python exceptions (errors.rs).
//! The public API and all policy live in the Python package `toksmith`.

mod batch;
use batch::BatchError;
mod errors;
mod files;
mod reader;
mod text;
mod words;

use errors::to_py;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use toksmith_core::encode::{Allowed, Encoder};
use toksmith_core::pretokenize::{self, Pretokenizer};
use toksmith_core::train;
use toksmith_core::vocab::{AddedKind, AddedToken, Vocab};

/// `threads` capped at the machine's cores (at least 8): more threads than cores only contend
/// (4096 threads on 2 cores made a batch of 100,000 short texts take 5 minutes instead of 0.1 s,
/// and each thread count asked for keeps a pool of its own).
fn capped(threads: usize) -> usize {
    static CAP: OnceLock<usize> = OnceLock::new();
    let cap = *CAP.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .max(8)
    });
    threads.min(cap)
}

/// Thread pools by key, kept with the id of the process that built them.
pub(crate) type PoolMap = OnceLock<Mutex<(u32, HashMap<usize, Arc<rayon::ThreadPool>>)>>;

/// The pool of `pools` under `key`, built with `builder` the first time in this process.
///
/// Nothing here uses rayon's global pool: pool threads do not survive `fork()`, and a process
/// forked from one that had used the global pool (multiprocessing's default start method on
/// Linux) would wait forever for them. A forked child builds pools of its own (the parent's are
/// forgotten, not dropped: their threads are not there to stop). So every call that may go
/// parallel runs inside [`in_pool`], also with `threads == 0`.
pub(crate) fn pool_in(
    pools: &PoolMap,
    key: usize,
    builder: impl FnOnce() -> rayon::ThreadPoolBuilder,
) -> PyResult<Arc<rayon::ThreadPool>> {
    let mut guard = pools
        .get_or_init(|| Mutex::new((std::process::id(), HashMap::new())))
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let (pid, by_key) = &mut *guard;
    let now = std::process::id();
    if *pid != now {
        std::mem::forget(std::mem::take(by_key));
        *pid = now;
    }
    if let Some(p) = by_key.get(&key) {
        return Ok(p.clone());
    }
    let p = Arc::new(
        builder()
            .build()
            .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?,
    );
    by_key.insert(key, p.clone());
    Ok(p)
}

/// Rayon pools by thread count (0 = the default pool: `RAYON_NUM_THREADS` or every core);
/// counts above [`capped`]'s share a pool. See [`pool_in`].
fn pool(threads: usize) -> PyResult<Arc<rayon::ThreadPool>> {
    static POOLS: PoolMap = OnceLock::new();
    let threads = if threads == 0 { 0 } else { capped(threads) };
    pool_in(&POOLS, threads, || {
        let builder = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("toksmith-{i}"));
        if threads > 0 {
            builder.num_threads(threads)
        } else {
            builder
        }
    })
}

/// How many threads `in_pool(py, threads, ..)` runs on.
fn rayon_threads(threads: usize) -> PyResult<usize> {
    Ok(if threads == 0 {
        pool(0)?.current_num_threads()
    } else {
        capped(threads)
    })
}

/// Run `f` with the GIL released in the pool of `threads` threads (0: the default pool); see
/// [`pool`]. The pool is looked up while the GIL is still held: `os.fork()` holds the GIL too,
/// so no other thread can be inside the pool map's lock when a process forks (a child that
/// inherited it locked would wait forever on its first parallel call).
fn in_pool<T: Send>(py: Python<'_>, threads: usize, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    let pool = pool(threads)?;
    Ok(py.detach(|| pool.install(f)))
}

/// `f` with the GIL released, in the default pool: for the calls that may go parallel.
fn detached_in_pool<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    in_pool(py, 0, f)
}

fn allowed_from(allowed: Option<Vec<u32>>, allow_all: bool) -> Allowed {
    if allow_all {
        Allowed::All
    } else {
        match allowed {
            Some(v) if !v.is_empty() => Allowed::Some(v),
            _ => Allowed::None,
        }
    }
}

/// Run `f` on the UTF-8 of `text` with the GIL released (converting it there if CPython does
/// not hold it as UTF-8 already; see text.rs).
fn with_utf8<T: Send>(
    py: Python<'_>,
    text: &Bound<'_, PyString>,
    f: impl FnOnce(&str) -> T + Send,
) -> PyResult<T> {
    let v = text::view(text)?;
    py.detach(|| v.utf8().map(|s| f(&s)))
        .map_err(|e| text::surrogate_error(text, e))
}

/// Run `f` with this thread's id buffer: short texts are encoded into it, then copied into
/// their list. A buffer that grew past 1M ids is dropped afterwards.
pub(crate) fn with_id_buffer<T>(f: impl FnOnce(&mut Vec<u32>) -> T) -> T {
    thread_local! {
        static IDS: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    IDS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => {
            let r = f(&mut buf);
            if buf.capacity() > 1 << 20 {
                *buf = Vec::new();
            }
            r
        }
        // re-entered (cannot happen today: no Python code runs while it is borrowed)
        Err(_) => f(&mut Vec::new()),
    })
}

/// Id buffers kept from one `encode_batch` call for the next: fresh memory costs a page fault
/// per 4 KB on first touch, and the id vectors of a 10 MB batch (one per document, grown by
/// doubling) took about 5k faults per call, a third of the call's system time, while glibc hands
/// freed blocks that large back to the kernel.
static SPARE_IDS: Mutex<Vec<Vec<u32>>> = Mutex::new(Vec::new());

/// At most this many ids of capacity are kept in [`SPARE_IDS`] (64 MB of address space; only
/// the pages a batch wrote are resident).
const SPARE_IDS_MAX: usize = 16 << 20;

/// An empty id buffer with room for `n` ids, reused from an earlier batch when one is spare.
fn take_ids_buffer(n: usize) -> Vec<u32> {
    let spare = SPARE_IDS.lock().map(|mut s| s.pop()).unwrap_or(None);
    let mut v = spare.unwrap_or_default();
    v.clear();
    v.reserve(n);
    v
}

/// Keep `bufs` for later batches, within [`SPARE_IDS_MAX`] (the rest is freed).
fn keep_ids_buffers(bufs: impl IntoIterator<Item = Vec<u32>>) {
    let Ok(mut spare) = SPARE_IDS.lock() else {
        return;
    };
    let mut kept: usize = spare.iter().map(Vec::capacity).sum();
    for b in bufs {
        if kept + b.capacity() <= SPARE_IDS_MAX {
            kept += b.capacity();
            spare.push(b);
        }
    }
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

/// Add 1 to `counts[id]` for each id; runs of one id (a long run of spaces is one id per byte
/// in GPT-2) are added four at a time, so they are not one long chain of dependent increments.
fn count_ids(counts: &mut [u32], ids: &[u32]) {
    let mut quads = ids.chunks_exact(4);
    for q in &mut quads {
        if q[0] == q[1] && q[0] == q[2] && q[0] == q[3] {
            counts[q[0] as usize] += 4;
        } else {
            for &id in q {
                counts[id as usize] += 1;
            }
        }
    }
    for &id in quads.remainder() {
        counts[id as usize] += 1;
    }
}

/// Take `n` new references to `obj`.
///
/// # Safety
/// The GIL must be held and `obj` must be alive.
#[inline]
unsafe fn incref_by(obj: *mut pyo3::ffi::PyObject, n: usize) {
    // Py_INCREF is inlined; a run of increments of one address costs about a cycle each here,
    // and it keeps each Python version's refcount rules (immortal objects in 3.12+ are left
    // alone), which writing the field directly would have to copy.
    for _ in 0..n {
        pyo3::ffi::Py_INCREF(obj);
    }
}

/// Results of at least this many bytes of text take their references through per-id counts.
const COUNTED_REFS_MIN: usize = 1 << 20;

/// How many list items ahead [`ids_into`] and [`ids_to_list`] prefetch the int objects.
const IDS_AHEAD: usize = 16;

/// Ids from a Python object into a buffer the caller reuses (cleared first): a list of ints on a
/// fast path (no intermediate objects), any other sequence through PyO3. Negative or too large
/// values raise OverflowError, non-ints TypeError (the Python layer turns both into a message
/// naming the bad id).
fn ids_into(obj: &Bound<'_, PyAny>, v: &mut Vec<u32>) -> PyResult<()> {
    v.clear();
    if let Ok(list) = obj.cast::<PyList>() {
        let n = list.len();
        v.reserve(n);
        let compact = compact_int_layout(obj.py());
        for i in 0..n {
            // SAFETY: see below; the compact-int read only happens for exact ints on a CPython
            // whose PyLongObject layout was recognised at start-up.
            if let Some(layout) = compact {
                // The int objects are read in id order (at random): ask for the header of the
                // one IDS_AHEAD places on so that the cache misses overlap.
                if i + IDS_AHEAD < n {
                    // SAFETY: i + IDS_AHEAD < len; a prefetch never faults.
                    let ahead = unsafe {
                        pyo3::ffi::PyList_GET_ITEM(
                            list.as_ptr(),
                            (i + IDS_AHEAD) as pyo3::ffi::Py_ssize_t,
                        )
                    } as *const u8;
                    toksmith_core::mem::prefetch(ahead);
                    toksmith_core::mem::prefetch(ahead.wrapping_add(24));
                }
                let item = unsafe {
                    pyo3::ffi::PyList_GET_ITEM(list.as_ptr(), i as pyo3::ffi::Py_ssize_t)
                };
                if let Some(x) = unsafe { read_compact_int(item, layout) } {
                    v.push(x);
                    continue;
                }
            }
            // SAFETY: i < len; PyList_GetItem returns a borrowed reference valid while the
            // list is alive and unmodified (we hold the GIL and do not call back into Python
            // code that could modify it: PyLong conversion of an exact int runs no Python code).
            let x = unsafe {
                let item = pyo3::ffi::PyList_GET_ITEM(list.as_ptr(), i as pyo3::ffi::Py_ssize_t);
                if pyo3::ffi::PyLong_Check(item) == 0 {
                    return Err(pyo3::exceptions::PyTypeError::new_err("ids must be ints"));
                }
                pyo3::ffi::PyLong_AsLong(item)
            };
            if x == -1 {
                if let Some(e) = PyErr::take(obj.py()) {
                    return Err(e);
                }
            }
            if x < 0 || x > u32::MAX as std::os::raw::c_long {
                return Err(pyo3::exceptions::PyOverflowError::new_err(format!(
                    "token id {x} (item {i}) is out of range: ids are between 0 and {}",
                    u32::MAX
                )));
            }
            v.push(x as u32);
        }
        Ok(())
    } else {
        *v = obj.extract::<Vec<u32>>()?;
        Ok(())
    }
}

/// Per-thread buffers for `decode` (the ids read from the list, the bytes the str is built
/// from), kept between calls: a long decode into fresh memory pays page faults of about the
/// cost of the decoding itself (0.6-0.8 ms per MB here). Buffers over `KEEP` bytes are freed.
struct DecodeBuffers {
    ids: Vec<u32>,
    bytes: Vec<u8>,
}

thread_local! {
    static DECODE_BUFFERS: std::cell::RefCell<DecodeBuffers> =
        const { std::cell::RefCell::new(DecodeBuffers { ids: Vec::new(), bytes: Vec::new() }) };
}

fn with_decode_buffers<T>(f: impl FnOnce(&mut DecodeBuffers) -> T) -> T {
    const KEEP: usize = 64 << 20;
    DECODE_BUFFERS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut b) => {
            let r = f(&mut b);
            if b.ids.capacity() * 4 > KEEP {
                b.ids = Vec::new();
            }
            if b.bytes.capacity() > KEEP {
                b.bytes = Vec::new();
            }
            r
        }
        // re-entered (an `errors` handler that decodes): fresh buffers
        Err(_) => f(&mut DecodeBuffers {
            ids: Vec::new(),
            bytes: Vec::new(),
        }),
    })
}

/// How to read a small non-negative `int` straight from CPython's object, when the running
/// interpreter's layout is known: 3.11 keeps the digit count in `ob_size`, 3.12+ in `lv_tag`
/// (`ndigits << 3 | sign`); in both the first 30-bit digit follows at offset 24 (64-bit builds).
/// Other interpreters use `PyLong_AsLong`.
#[derive(Clone, Copy)]
enum IntLayout {
    ObSize,
    LvTag,
}

fn compact_int_layout(py: Python<'_>) -> Option<IntLayout> {
    static LAYOUT: OnceLock<Option<IntLayout>> = OnceLock::new();
    *LAYOUT.get_or_init(|| {
        let cpython = py
            .import("sys")
            .and_then(|sys| {
                sys.getattr("implementation")?
                    .getattr("name")?
                    .extract::<String>()
            })
            .map(|name| name == "cpython")
            .unwrap_or(false);
        if std::mem::size_of::<usize>() != 8 || !cpython {
            return None;
        }
        let v = py.version_info();
        match (v.major, v.minor) {
            (3, 9..=11) => Some(IntLayout::ObSize),
            (3, 12..=14) => Some(IntLayout::LvTag),
            _ => None,
        }
    })
}

/// The value of an exact `int` in 0..2^30 (None for anything else: other types, negatives,
/// larger values, which then take the checked path).
///
/// SAFETY: `item` must be a valid object pointer and `layout` the running CPython's.
#[inline(always)]
unsafe fn read_compact_int(item: *mut pyo3::ffi::PyObject, layout: IntLayout) -> Option<u32> {
    if pyo3::ffi::Py_TYPE(item) != std::ptr::addr_of_mut!(pyo3::ffi::PyLong_Type) {
        return None;
    }
    let base = item as *const u8;
    let tag = *(base.add(16) as *const isize);
    let digit = *(base.add(24) as *const u32);
    match layout {
        IntLayout::ObSize => match tag {
            0 => Some(0),
            1 => Some(digit),
            _ => None,
        },
        IntLayout::LvTag => {
            // tag >> 3 = number of digits; tag & 3 = sign (0 positive, 1 zero, 2 negative)
            match (tag >> 3, tag & 3) {
                (0, 1) => Some(0),
                (1, 0) => Some(digit),
                _ => None,
            }
        }
    }
}

/// Native BPE encoder/decoder over one vocabulary and split pattern.
#[pyclass(module = "toksmith._core", frozen)]
pub(crate) struct Bpe {
    pub(crate) enc: Encoder,
    /// One Python int per id, shared by every returned list: building a list of ids then costs
    /// an incref per element instead of allocating an int (3x faster for big results).
    ints: Vec<Py<PyAny>>,
    /// The addresses of `ints`, for worker threads that write result lists (see `encode_list`).
    pub(crate) int_addrs: Vec<usize>,
}

/// A new list for `n` ids, not tracked by the cyclic garbage collector.
///
/// A list that holds only ints cannot be part of a reference cycle, so the collector has
/// nothing to find in it; leaving it tracked makes every collection walk all the ids of every
/// live result (17% of the time of a loop that keeps the ids of 1,769 documents). The one
/// thing given up: a cycle made later through the list itself (`ids.append(ids)`) is not
/// collected.
///
/// # Safety
/// The GIL must be held; the caller fills every slot before the list is seen by Python.
unsafe fn new_ids_list(n: usize) -> *mut pyo3::ffi::PyObject {
    let list = pyo3::ffi::PyList_New(n as pyo3::ffi::Py_ssize_t);
    if !list.is_null() {
        pyo3::ffi::PyObject_GC_UnTrack(list.cast());
    }
    list
}

/// An untracked list with an item buffer for `n` items that are not written yet: its size stays
/// 0 (so it can be freed at any time) until the caller sets it. `PyList_New(n)` would zero the
/// buffer, touching every page of it on the calling thread; this leaves the first touch (and
/// its page faults) to the threads that fill the lists.
///
/// # Safety
/// The GIL must be held. Before setting the size to k, slots 0..k must hold owned references.
unsafe fn list_with_room(n: usize) -> *mut pyo3::ffi::PyObject {
    use pyo3::ffi;
    let list = new_ids_list(0);
    if list.is_null() || n == 0 {
        return list;
    }
    let bytes = n * std::mem::size_of::<*mut ffi::PyObject>();
    let buf = ffi::PyMem_Malloc(bytes);
    if buf.is_null() {
        ffi::Py_DECREF(list);
        ffi::PyErr_NoMemory();
        return std::ptr::null_mut();
    }
    // A long result is written into fresh memory: fault it in 2 MiB pages, not 4 KiB ones.
    toksmith_core::mem::advise_huge_pages(buf as *const u8, bytes);
    let l = list as *mut ffi::PyListObject;
    (*l).ob_item = buf as *mut *mut ffi::PyObject;
    (*l).allocated = n as ffi::Py_ssize_t;
    list
}

/// The item buffer of a list made by [`list_with_room`].
///
/// # Safety
/// `list` must be a live list.
unsafe fn list_items(list: *mut pyo3::ffi::PyObject) -> *mut *mut pyo3::ffi::PyObject {
    (*(list as *mut pyo3::ffi::PyListObject)).ob_item
}

/// Publish the first `n` slots of a list made by [`list_with_room`].
///
/// # Safety
/// Slots 0..n must hold owned references and `n` must not exceed the room.
unsafe fn set_list_len(list: *mut pyo3::ffi::PyObject, n: usize) {
    (*(list as *mut pyo3::ffi::PyListObject)).ob_base.ob_size = n as pyo3::ffi::Py_ssize_t;
}

/// One Python int per id `0..n` (kept alive by the owner), and their addresses for
/// [`ids_to_list`].
pub(crate) fn int_table(py: Python<'_>, n: usize) -> (Vec<Py<PyAny>>, Vec<usize>) {
    let ints: Vec<Py<PyAny>> = (0..n as u64)
        .map(|i| {
            i.into_pyobject(py)
                .expect("int conversion cannot fail")
                .into_any()
                .unbind()
        })
        .collect();
    let addrs = ints.iter().map(|o| o.as_ptr() as usize).collect();
    (ints, addrs)
}

/// Build a Python list from ids, reusing the cached int objects (`int_addrs[id]` is the
/// address of the int for `id`).
///
/// The cost is the refcount write to each int: the ints of a large vocabulary span megabytes,
/// so most writes miss the L2 cache, and each store waits for its line. The int of the id
/// [`IDS_AHEAD`] places on is prefetched for writing, so the misses overlap. The buffer comes
/// unzeroed from [`list_with_room`] (`PyList_New` would clear it first).
pub(crate) fn ids_to_list<'py>(
    py: Python<'py>,
    int_addrs: &[usize],
    ids: &[u32],
) -> PyResult<Bound<'py, PyList>> {
    // SAFETY: every id comes from the vocabulary, so it indexes `int_addrs`, whose ints the
    // encoder keeps alive; each slot gets an owned reference (the incref) before the size is
    // set, and the list is not visible to Python before it is returned.
    unsafe {
        let list = list_with_room(ids.len());
        if list.is_null() {
            return Err(PyErr::fetch(py));
        }
        let items = list_items(list) as *mut usize;
        let n = ids.len();
        for i in 0..n {
            if i + IDS_AHEAD < n {
                toksmith_core::mem::prefetch_write(
                    int_addrs[*ids.get_unchecked(i + IDS_AHEAD) as usize] as *const u8,
                );
            }
            let obj = int_addrs[*ids.get_unchecked(i) as usize];
            pyo3::ffi::Py_INCREF(obj as *mut pyo3::ffi::PyObject);
            *items.add(i) = obj;
        }
        set_list_len(list, n);
        Ok(Bound::from_owned_ptr(py, list).cast_into_unchecked())
    }
}

/// A list of `(start, end)` tuples. The tuples hold only ints, so they are left untracked by
/// the cyclic garbage collector (it would walk them all, collection after collection, while a
/// long list is built), and a start equal to the previous end shares that end's int object:
/// 261k spans (1 MB of English, cl100k): 31-55 ms with `PyList::new`, 23-34 ms so.
fn spans_to_list<'py>(py: Python<'py>, spans: &[(usize, usize)]) -> PyResult<Bound<'py, PyList>> {
    use pyo3::ffi;
    // SAFETY: the GIL is held; every object is checked for NULL before use, and the list owns
    // each tuple (and each tuple its ints) from the moment it is set, so dropping the list on an
    // error frees everything made so far (unset slots are NULL, which `list_dealloc` skips).
    unsafe {
        let list = Bound::<PyAny>::from_owned_ptr_or_err(py, new_ids_list(spans.len()))?;
        let mut prev: Option<(usize, *mut ffi::PyObject)> = None;
        for (k, &(s, e)) in spans.iter().enumerate() {
            let t = ffi::PyTuple_New(2);
            if t.is_null() {
                return Err(PyErr::fetch(py));
            }
            ffi::PyList_SET_ITEM(list.as_ptr(), k as ffi::Py_ssize_t, t);
            let start = match prev {
                Some((v, obj)) if v == s => {
                    ffi::Py_INCREF(obj);
                    obj
                }
                _ => ffi::PyLong_FromSize_t(s),
            };
            if start.is_null() {
                return Err(PyErr::fetch(py));
            }
            ffi::PyTuple_SET_ITEM(t, 0, start);
            let end = ffi::PyLong_FromSize_t(e);
            if end.is_null() {
                return Err(PyErr::fetch(py));
            }
            ffi::PyTuple_SET_ITEM(t, 1, end);
            ffi::PyObject_GC_UnTrack(t.cast());
            prev = Some((e, end));
        }
        Ok(list.cast_into_unchecked())
    }
}

/// Why encoding into a list failed.
enum Failure {
    Core(toksmith_core::Error),
    Surrogate(text::Surrogate),
    Py(PyErr),
}

impl Failure {
    fn into_py(self, text: &Bound<'_, PyString>) -> PyErr {
        match self {
            Failure::Core(e) => to_py(e),
            Failure::Surrogate(s) => text::surrogate_error(text, s),
            Failure::Py(e) => e,
        }
    }
}

/// Texts at least this long (UTF-8 bytes) are encoded straight into their result list.
const DIRECT_LIST_MIN: usize = 1 << 16;

impl Bpe {
    /// Encode a long text straight into the item buffer of its result list.
    ///
    /// A text of n bytes has at most n ids, so a buffer of n pointers is allocated up front
    /// (untouched pages cost nothing) and the encoder's blocks of ids are written into it as int
    /// pointers by the thread that encodes, with the GIL released; the refcounts are raised
    /// afterwards with the GIL held, the buffer is shrunk to size and becomes the list's. This
    /// skips the id vector and its copy: on a 10 MB text that vector alone is 16-40 MB of fresh
    /// memory, and new pages cost about 0.8 ms per MB here.
    fn encode_list<'py>(
        &self,
        py: Python<'py>,
        cap: usize,
        encode: impl FnOnce(&mut dyn FnMut(&[u32])) -> Result<(), Failure> + Send,
    ) -> Result<Bound<'py, PyList>, Failure> {
        use pyo3::ffi;
        // SAFETY: the list (size 0 until published) owns the buffer, so dropping it on an error
        // frees the buffer; only `count` slots are written, each with a live int whose
        // refcount is raised (GIL held) before the size is set.
        unsafe {
            let list = list_with_room(cap.max(1));
            if list.is_null() {
                return Err(Failure::Py(PyErr::fetch(py)));
            }
            let list = Bound::<PyAny>::from_owned_ptr(py, list);
            let addr = list_items(list.as_ptr()) as usize;
            // A long result counts how often each id occurs while it is written, then raises
            // each int's refcount once: reading the whole list back to incref item by item
            // cost about a tenth of a 10 MB encode whose list no longer fits in the caches.
            let counted = cap >= COUNTED_REFS_MIN && cap <= u32::MAX as usize;
            let (count, counts) = py.detach(|| {
                let slots = addr as *mut usize;
                let mut count = 0usize;
                let mut counts = if counted {
                    vec![0u32; self.ints.len()]
                } else {
                    Vec::new()
                };
                encode(&mut |ids: &[u32]| {
                    assert!(count + ids.len() <= cap, "more ids than bytes");
                    for &id in ids {
                        *slots.add(count) = self.int_addrs[id as usize];
                        count += 1;
                    }
                    if counted {
                        count_ids(&mut counts, ids);
                    }
                })
                .map(|_| (count, counts))
            })?;
            let items = list_items(list.as_ptr());
            if counted {
                for (obj, &c) in self.ints.iter().zip(&counts) {
                    incref_by(obj.as_ptr(), c as usize);
                }
            } else {
                for i in 0..count {
                    ffi::Py_INCREF(*items.add(i));
                }
            }
            // give back the room beyond the result (a shrink: never fails in practice, and the
            // larger buffer stays valid if it does)
            let shrunk =
                ffi::PyMem_Realloc(items.cast(), count.max(1) * std::mem::size_of::<usize>());
            let l = list.as_ptr() as *mut ffi::PyListObject;
            if !shrunk.is_null() {
                (*l).ob_item = shrunk as *mut *mut ffi::PyObject;
                (*l).allocated = count.max(1) as ffi::Py_ssize_t;
            }
            set_list_len(list.as_ptr(), count);
            Ok(list.cast_into_unchecked())
        }
    }

    /// Decode `ids` into this thread's byte buffer (GIL released while decoding) and hand the
    /// bytes to `finish`, which builds the Python result.
    fn with_decoded<'py, T>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        finish: impl FnOnce(&[u8]) -> PyResult<T>,
    ) -> PyResult<T> {
        with_decode_buffers(|buf| {
            ids_into(ids, &mut buf.ids)?;
            buf.bytes.clear();
            let (id_buf, bytes) = (&buf.ids, &mut buf.bytes);
            py.detach(|| toksmith_core::decode::decode_into(&self.enc.vocab, id_buf, bytes))
                .map_err(to_py)?;
            finish(bytes)
        })
    }

    /// Encode `text` to a list: straight into the list for long texts, else through a vector.
    fn encode_to_list<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        allowed: &Allowed,
    ) -> PyResult<Bound<'py, PyList>> {
        let v = text::view(text)?;
        match v {
            text::StrView::Utf8(s) if s.len() >= DIRECT_LIST_MIN => self
                .encode_list(py, s.len(), |sink| {
                    self.enc
                        .encode_blocks(s, allowed, sink)
                        .map_err(Failure::Core)
                })
                .map_err(|f| f.into_py(text)),
            text::StrView::Wide { len, .. } if len >= DIRECT_LIST_MIN / 4 => {
                // at most one id per UTF-8 byte
                let cap = v.max_utf8_len();
                if self.enc.can_encode_parts() {
                    // Convert and encode 64K characters at a time: the UTF-8 copy of the whole
                    // text (fresh memory, so page faults on every 4 KB) is never made.
                    const PART: usize = 1 << 16;
                    self.encode_list(py, cap, |sink| {
                        let mut at = 0;
                        let mut bad = None;
                        let mut fill = |buf: &mut String| {
                            let end = (at + PART).min(len);
                            if let Err(e) = v.append_utf8(at, end, buf) {
                                bad = Some(e);
                                return false;
                            }
                            at = end;
                            at < len
                        };
                        let r = self.enc.encode_parts(allowed, cap, &mut fill, sink);
                        match bad {
                            Some(e) => Err(Failure::Surrogate(e)),
                            None => r.map_err(Failure::Core),
                        }
                    })
                    .map_err(|f| f.into_py(text))
                } else {
                    let owned = py
                        .detach(|| v.utf8().map(|c| c.into_owned()))
                        .map_err(|e| text::surrogate_error(text, e))?;
                    self.encode_list(py, owned.len(), |sink| {
                        self.enc
                            .encode_blocks(&owned, allowed, sink)
                            .map_err(Failure::Core)
                    })
                    .map_err(|f| f.into_py(text))
                }
            }
            _ => {
                // short texts: the ids go through this thread's buffer (no vector per call)
                with_id_buffer(|buf| {
                    buf.clear();
                    with_utf8(py, text, |t| self.enc.encode_into(t, allowed, buf))?
                        .map_err(to_py)?;
                    ids_to_list(py, &self.int_addrs, buf)
                })
            }
        }
    }
}

/// The most unused ids below the largest id a vocabulary may have (more when it has more
/// tokens: up to as many unused ids as tokens).
const MAX_UNUSED_IDS: usize = 1 << 20;

impl Bpe {
    fn build(
        py: Python<'_>,
        mergeable: Vec<(Vec<u8>, u32)>,
        added: Vec<(String, u32, bool)>,
        pattern: &str,
    ) -> PyResult<Self> {
        let added: Vec<AddedToken> = added
            .into_iter()
            .map(|(text, id, pinned)| AddedToken {
                text,
                id,
                kind: if pinned {
                    AddedKind::Pinned
                } else {
                    AddedKind::Special
                },
            })
            .collect();
        // Every id below the largest gets a slot in the tables (about 60 bytes with its Python
        // int): a few far-off ids (a special token at 2**32-1) would ask for hundreds of GB
        // and abort the process. Refuse vocabularies that are mostly holes.
        let count = mergeable.len() + added.len();
        let max_id = mergeable
            .iter()
            .map(|(_, id)| *id)
            .chain(added.iter().map(|a| a.id))
            .max();
        if let Some(max_id) = max_id {
            let unused = (max_id as usize + 1).saturating_sub(count);
            if unused > MAX_UNUSED_IDS.max(count) {
                return Err(to_py(toksmith_core::Error::InvalidVocab(format!(
                    "the largest token id is {max_id} but there are only {count} tokens: ids must \
                     be dense (at most max({MAX_UNUSED_IDS}, number of tokens) unused ids below the \
                     largest), since every id up to the largest takes room in the tables; number \
                     the tokens, special ones included, from 0 without large gaps"
                ))));
            }
        }
        let pattern = pattern.to_string();
        let enc = detached_in_pool(py, move || -> toksmith_core::Result<Encoder> {
            let vocab = Vocab::new(mergeable, added)?;
            let pre = Pretokenizer::new(&pattern)?;
            Ok(Encoder::new(vocab, pre))
        })?;
        let enc = enc.map_err(to_py)?;
        let (ints, int_addrs) = int_table(py, enc.vocab.n_vocab());
        Ok(Bpe {
            enc,
            ints,
            int_addrs,
        })
    }
}

#[pymethods]
impl Bpe {
    /// mergeable: [(bytes, id)]; added: [(text, id, is_pinned)]; pattern: name or regex.
    #[new]
    fn new(
        py: Python<'_>,
        mergeable: Vec<(Vec<u8>, u32)>,
        added: Vec<(String, u32, bool)>,
        pattern: &str,
    ) -> PyResult<Self> {
        Bpe::build(py, mergeable, added, pattern)
    }

    /// `Bpe(list(ranks.items()), added, pattern)` straight from a rank dict, or None unless
    /// every key is `bytes` and every value an exact int in 0..2^32 (the caller then checks
    /// the entries one by one, for the error message).
    #[staticmethod]
    fn from_ranks(
        py: Python<'_>,
        ranks: &Bound<'_, PyAny>,
        added: Vec<(String, u32, bool)>,
        pattern: &str,
    ) -> PyResult<Option<Self>> {
        match files::plain_ranks(ranks) {
            Some(mergeable) => Bpe::build(py, mergeable, added, pattern).map(Some),
            None => Ok(None),
        }
    }

    /// Whether every merge recovered from the ranks is one of `merges` (`"left right"`
    /// strings or pairs, spelled byte-level); None if the merges cannot be recovered or a file
    /// merge is malformed (the caller's reference check then says why).
    fn merges_listed(&self, py: Python<'_>, merges: &Bound<'_, PyAny>) -> PyResult<Option<bool>> {
        let Some((parts, merges)) = files::merge_parts(merges, false)? else {
            return Ok(None);
        };
        detached_in_pool(py, || {
            toksmith_core::vocab_files::merges_listed(&self.enc.vocab, &parts, &merges)
        })
    }

    /// [`Bpe::merges_listed`] on the merges of a JSON tokenizer file decoded natively.
    fn merges_listed_in(
        &self,
        py: Python<'_>,
        tables: &Bound<'_, files::JsonTables>,
    ) -> PyResult<Option<bool>> {
        let t = &tables.get().inner;
        detached_in_pool(py, || {
            toksmith_core::vocab_files::merges_listed(&self.enc.vocab, &t.parts, &t.merges)
        })
    }

    #[getter]
    fn n_vocab(&self) -> usize {
        self.enc.vocab.n_vocab()
    }

    #[getter]
    fn n_mergeable(&self) -> usize {
        self.enc.vocab.n_mergeable()
    }

    #[getter]
    fn pattern(&self) -> String {
        self.enc.pretok.pattern().to_string()
    }

    #[getter]
    fn fast_pretokenizer(&self) -> bool {
        self.enc.pretok.is_fast()
    }

    fn encode_ordinary<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.encode_to_list(py, text, &Allowed::None)
    }

    #[pyo3(signature = (text, allowed=None, allow_all=false))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        allowed: Option<Vec<u32>>,
        allow_all: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let a = allowed_from(allowed, allow_all);
        self.encode_to_list(py, text, &a)
    }

    /// Encode to a little-endian buffer of u16 (`narrow`) or u32 values (for numpy).
    #[pyo3(signature = (text, allowed=None, allow_all=false, narrow=false))]
    fn encode_to_buffer<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        allowed: Option<Vec<u32>>,
        allow_all: bool,
        narrow: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let a = allowed_from(allowed, allow_all);
        let bytes = with_utf8(py, text, |text| -> toksmith_core::Result<Vec<u8>> {
            let ids = self.enc.encode(text, &a)?;
            Ok(if narrow {
                ids.iter().flat_map(|&i| (i as u16).to_le_bytes()).collect()
            } else {
                ids.iter().flat_map(|&i| i.to_le_bytes()).collect()
            })
        })?
        .map_err(to_py)?;
        Ok(PyBytes::new(py, &bytes))
    }

    #[pyo3(signature = (texts, allowed=None, allow_all=false, threads=0))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, pyo3::types::PyString>>,
        allowed: Option<Vec<u32>>,
        allow_all: bool,
        threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let a = allowed_from(allowed, allow_all);
        batch::encode_batch(
            py,
            &self.enc,
            &self.ints,
            &self.int_addrs,
            &texts,
            &a,
            threads,
        )
    }

    /// Encode `texts` on `threads` threads and write their ids straight to bytes, with no Python
    /// int or list made (`toksmith encode`'s path): `width` 0 gives decimal text, `sep`
    /// between ids; with `lines` each text's ids become one line (`open`, ids, `close`, `\n`),
    /// otherwise the ids of all texts form one run. `width` 2 or 4 gives little-endian
    /// integers. Returns the bytes and the number of ids.
    #[pyo3(signature = (texts, allowed=None, allow_all=false, threads=0, width=0, sep=b" ".as_slice(), lines=false, open=b"".as_slice(), close=b"".as_slice()))]
    #[allow(clippy::too_many_arguments)]
    fn encode_batch_bytes<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        allowed: Option<Vec<u32>>,
        allow_all: bool,
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
        let a = allowed_from(allowed, allow_all);
        let views: Vec<text::StrView> = texts.iter().map(text::view).collect::<PyResult<_>>()?;
        let sizes: Vec<usize> = views.iter().map(text::StrView::max_utf8_len).collect();
        let parts = (sizes.iter().sum::<usize>() >> 16).max(4 * rayon_threads(threads)?);
        // The output of a range of texts, and its number of ids; a failure names the text.
        let range = |r: std::ops::Range<usize>| -> Result<(Vec<u8>, usize), (usize, BatchError)> {
            let bytes: usize = sizes[r.clone()].iter().sum();
            // decimal text: at most 11 bytes per id, about 4 bytes of text per id
            let mut out = Vec::with_capacity(if width == 0 { bytes + bytes / 2 } else { bytes });
            let (mut ids, mut utf8, mut n) = (take_ids_buffer(bytes), String::new(), 0);
            for k in r {
                ids.clear();
                batch::encode_text(&self.enc, &views[k], &a, &mut utf8, &mut ids)
                    .map_err(|e| (k, e))?;
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
        let outs = in_pool(py, threads, || {
            balanced_ranges(&sizes, parts)
                .into_par_iter()
                .map(range)
                .collect::<Vec<_>>()
        })?;
        // The parts are copied once, into the bytes object; `sep` goes between two non-empty
        // runs of text.
        let mut done = Vec::with_capacity(outs.len());
        for part in outs {
            match part {
                Ok(part) => done.push(part),
                // the ranges are in order, so this is the first text that failed
                Err((k, e)) => return Err(e.into_py(&texts[k])),
            }
        }
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

    /// First special token found in `text` among `disallowed` ids (all when None):
    /// (token, byte offset) or None.
    #[pyo3(signature = (text, disallowed=None))]
    fn find_special(
        &self,
        py: Python<'_>,
        text: &str,
        disallowed: Option<Vec<u32>>,
    ) -> Option<(String, usize)> {
        py.detach(|| self.enc.find_special(text, disallowed.as_deref()))
    }

    fn decode_bytes<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.with_decoded(py, ids, |bytes| text::bytes_from(py, bytes))
    }

    #[pyo3(signature = (batch, threads=0))]
    fn decode_bytes_batch<'py>(
        &self,
        py: Python<'py>,
        batch: Vec<Vec<u32>>,
        threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let outs = in_pool(py, threads, || {
            batch
                .par_iter()
                .map(|ids| toksmith_core::decode::decode_bytes(&self.enc.vocab, ids))
                .collect::<toksmith_core::Result<Vec<_>>>()
        })?
        .map_err(to_py)?;
        PyList::new(py, outs.iter().map(|b| PyBytes::new(py, b)))
    }

    /// The character span of each id in the decoded text (`toksmith_core::decode::char_spans`):
    /// a list of `(start, end)` tuples, or of the starts only.
    #[pyo3(signature = (ids, starts_only=false))]
    fn char_spans<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        starts_only: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut spans = Vec::new();
        with_decode_buffers(|buf| {
            ids_into(ids, &mut buf.ids)?;
            let id_buf = &buf.ids;
            py.detach(|| toksmith_core::decode::char_spans(&self.enc.vocab, id_buf, &mut spans))
                .map_err(to_py)
        })?;
        if starts_only {
            PyList::new(py, spans.iter().map(|s| s.0))
        } else {
            spans_to_list(py, &spans)
        }
    }

    /// Decode to str: long valid UTF-8 is written straight into the str's storage
    /// (`text::str_from_utf8`); short or invalid UTF-8 goes to CPython's decoder with the
    /// `errors` handler (e.g. "replace" or "strict"). No intermediate bytes object either way.
    #[pyo3(signature = (ids, errors="replace"))]
    fn decode_str<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        errors: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let errors = std::ffi::CString::new(errors)
            .map_err(|_| pyo3::exceptions::PyValueError::new_err("errors must not contain NUL"))?;
        self.with_decoded(py, ids, |bytes| {
            if bytes.len() >= text::FAST_STR_MIN {
                if let Some(layout) = py.detach(|| toksmith_core::utf8::layout(bytes)) {
                    return text::str_from_utf8(py, bytes, layout);
                }
            }
            // SAFETY: valid pointer/length pair; the result is a new reference or NULL with an
            // exception set.
            unsafe {
                let obj = pyo3::ffi::PyUnicode_DecodeUTF8(
                    bytes.as_ptr() as *const std::os::raw::c_char,
                    bytes.len() as pyo3::ffi::Py_ssize_t,
                    errors.as_ptr(),
                );
                Bound::from_owned_ptr_or_err(py, obj)
            }
        })
    }

    fn token_bytes<'py>(&self, py: Python<'py>, id: u32) -> PyResult<Bound<'py, PyBytes>> {
        let b = self.enc.vocab.token_bytes(id).map_err(to_py)?;
        Ok(PyBytes::new(py, b))
    }

    fn token_id(&self, bytes: &[u8]) -> Option<u32> {
        self.enc.vocab.token_id(bytes)
    }

    fn encode_single_token(&self, bytes: &[u8]) -> PyResult<u32> {
        self.enc.encode_single_token(bytes).map_err(to_py)
    }

    /// A new dict of `bytes -> id` over the mergeable tokens, in id order.
    fn mergeable_ranks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (b, id) in self.enc.vocab.mergeable_sorted() {
            d.set_item(PyBytes::new(py, b), self.ints[id as usize].bind(py))?;
        }
        Ok(d)
    }

    /// [(left_id, right_id, merged_id)] recovered from the ranks.
    fn recover_merges(&self, py: Python<'_>) -> PyResult<Vec<(u32, u32, u32)>> {
        detached_in_pool(py, || self.enc.vocab.recover_merges())?.map_err(to_py)
    }
}

/// Counts unique chunks of a corpus (see `toksmith_core::train`).
/// A streaming decoder's state: the bytes of a character that is not complete yet (at most 3).
///
/// `push` decodes the pending bytes plus the token's with CPython's stateful UTF-8 decoder, the
/// one `codecs`' incremental decoder calls, so the text and the `errors` handling are exactly
/// those of `codecs.getincrementaldecoder("utf-8")(errors)`, in one native call per token
/// instead of three Python-level ones.
#[pyclass(module = "toksmith._core")]
struct StreamState {
    bpe: Py<Bpe>,
    pending: Vec<u8>,
    errors: std::ffi::CString,
    /// `bad_id(ids)` returns the exception to raise for an id that is not a token
    bad_id: Py<PyAny>,
}

impl StreamState {
    /// Decode the pending bytes followed by `more`; `last`: no character continues after them.
    /// On an error (`errors="strict"`) the state is left as it was.
    fn decode<'py>(
        &mut self,
        py: Python<'py>,
        more: &[u8],
        last: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let joined;
        let data: &[u8] = if self.pending.is_empty() {
            more
        } else {
            joined = [self.pending.as_slice(), more].concat();
            &joined
        };
        let mut consumed: pyo3::ffi::Py_ssize_t = 0;
        // SAFETY: `data` is a live byte slice and `errors` a NUL-terminated string; the result is
        // a new reference or NULL with an exception set.
        let s = unsafe {
            pyo3::ffi::PyUnicode_DecodeUTF8Stateful(
                data.as_ptr().cast(),
                data.len() as pyo3::ffi::Py_ssize_t,
                self.errors.as_ptr(),
                if last {
                    std::ptr::null_mut()
                } else {
                    &mut consumed
                },
            )
        };
        if s.is_null() {
            return Err(PyErr::fetch(py));
        }
        let rest = if last {
            &[][..]
        } else {
            &data[consumed as usize..]
        };
        self.pending = rest.to_vec();
        // SAFETY: `s` is a new reference (checked above).
        Ok(unsafe { Bound::from_owned_ptr(py, s) })
    }
}

#[pymethods]
impl StreamState {
    #[new]
    fn new(bpe: Py<Bpe>, errors: &str, bad_id: Py<PyAny>) -> PyResult<Self> {
        let errors = std::ffi::CString::new(errors).map_err(|_| {
            pyo3::exceptions::PyValueError::new_err(
                "errors must not contain NUL characters: pass an error handler name such as 'replace'",
            )
        })?;
        Ok(StreamState {
            bpe,
            pending: Vec::new(),
            errors,
            bad_id,
        })
    }

    /// The text completed by `token`, an id ("" while a character is still split). The
    /// argument is named `token`, as in `StreamDecoder.push(token)`.
    fn push<'py>(
        &mut self,
        py: Python<'py>,
        token: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let bpe = self.bpe.clone_ref(py);
        let bytes = token
            .extract::<u32>()
            .ok()
            .and_then(|i| bpe.get().enc.vocab.token_bytes(i).ok());
        match bytes {
            Some(b) => self.decode(py, b, false),
            None => Err(PyErr::from_value(
                self.bad_id.bind(py).call1((vec![token.clone()],))?,
            )),
        }
    }

    /// What is left (bytes that never completed a character go through `errors`); the state
    /// is then empty.
    fn flush<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.decode(py, &[], true)
    }

    /// An independent state holding the same pending bytes (`copy.copy` of a decoder).
    fn copy(&self, py: Python<'_>) -> Self {
        StreamState {
            bpe: self.bpe.clone_ref(py),
            pending: self.pending.clone(),
            errors: self.errors.clone(),
            bad_id: self.bad_id.clone_ref(py),
        }
    }

    /// The bytes of a character not yet complete.
    #[getter]
    fn pending<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        pyo3::types::PyBytes::new(py, &self.pending)
    }
}

#[pyclass(module = "toksmith._core")]
struct ChunkCounter {
    inner: Option<train::ChunkCounter>,
}

impl ChunkCounter {
    fn get(&mut self) -> PyResult<&mut train::ChunkCounter> {
        self.inner.as_mut().ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err(
                "this ChunkCounter was already consumed by train()",
            )
        })
    }
}

/// The largest block a counter reads at once (each block is held whole in memory).
const MAX_BLOCK_SIZE: usize = 1 << 30;

impl ChunkCounter {
    /// Count what `open` gives (a file, a Python stream) in blocks of `block_size` bytes on
    /// `threads` threads, with the GIL released; the outer error is the glue's (bad arguments,
    /// a consumed counter), the inner one the reader's.
    fn count_reader<R: std::io::Read>(
        &mut self,
        py: Python<'_>,
        open: impl FnOnce() -> toksmith_core::Result<R> + Send,
        name: &str,
        replace: bool,
        threads: usize,
        block_size: usize,
    ) -> PyResult<toksmith_core::Result<()>> {
        if block_size == 0 || block_size > MAX_BLOCK_SIZE {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "block_size must be between 1 byte and {MAX_BLOCK_SIZE} (1 GiB), not {block_size}: \
                 each block is read whole into memory"
            )));
        }
        let inner = self.get()?;
        // (a big file takes a while: Ctrl-C stops it before the next block)
        interruptible_in_pool(py, threads, |stop| {
            let r = std::io::BufReader::with_capacity(1 << 20, open()?);
            inner.add_reader_until(r, name, replace, block_size, stop)
        })
    }
}

#[pymethods]
impl ChunkCounter {
    #[new]
    #[pyo3(signature = (pattern, pinned=Vec::new()))]
    fn new(pattern: &str, pinned: Vec<String>) -> PyResult<Self> {
        let pre = Pretokenizer::new(pattern).map_err(to_py)?;
        Ok(ChunkCounter {
            inner: Some(train::ChunkCounter::new(pre, pinned)),
        })
    }

    #[pyo3(signature = (texts, threads=0))]
    fn add_texts(&mut self, py: Python<'_>, texts: Vec<String>, threads: usize) -> PyResult<()> {
        let inner = self.get()?;
        in_pool(py, threads, || inner.add_texts(&texts))?.map_err(to_py)
    }

    #[pyo3(signature = (path, replace=false, threads=0, block_size=16 << 20))]
    fn add_file(
        &mut self,
        py: Python<'_>,
        path: std::path::PathBuf,
        replace: bool,
        threads: usize,
        block_size: usize,
    ) -> PyResult<()> {
        let name = path.display().to_string();
        let open = || {
            std::fs::File::open(&path).map_err(|e| toksmith_core::Error::Io {
                path: name.clone(),
                message: e.to_string(),
            })
        };
        self.count_reader(py, open, &name, replace, threads, block_size)?
            .map_err(to_py)
    }

    /// Count a binary Python file object (read through its `readinto`, e.g. a decompressing
    /// `lzma.open(path)`) exactly as `add_file` counts a file: in blocks cut at safe places.
    /// A Python exception raised by the file object is re-raised as it was.
    #[pyo3(signature = (file, name, replace=false, threads=0, block_size=16 << 20))]
    fn add_stream(
        &mut self,
        py: Python<'_>,
        file: Py<PyAny>,
        name: String,
        replace: bool,
        threads: usize,
        block_size: usize,
    ) -> PyResult<()> {
        let mut reader = reader::PyReader::new(file);
        let res = self.count_reader(py, || Ok(&mut reader), &name, replace, threads, block_size)?;
        match (res, reader.take_failure()) {
            (Err(_), Some(e)) => Err(e),
            (r, _) => r.map_err(to_py),
        }
    }

    fn add_counts(&mut self, counts: Vec<(Vec<u8>, u64)>) -> PyResult<()> {
        let inner = self.get()?;
        for (c, n) in counts {
            inner.add_count(&c, n).map_err(to_py)?;
        }
        Ok(())
    }

    /// {"bytes": .., "pieces": .., "texts": .., "unique": ..}
    fn stats(&mut self) -> PyResult<HashMap<&'static str, u64>> {
        let inner = self.get()?;
        Ok(HashMap::from([
            ("bytes", inner.bytes_seen),
            ("pieces", inner.pieces_seen),
            ("texts", inner.texts_seen),
            ("unique", inner.num_unique() as u64),
        ]))
    }

    /// [(word, count)] sorted by word, lower-cased (counts of words that become equal added up)
    /// if asked: the counts of the word-level preset, without a round trip through bytes.
    fn word_counts(&mut self, py: Python<'_>, lowercase: bool) -> PyResult<Vec<(String, u64)>> {
        let v = self.get()?.counts_snapshot();
        py.detach(|| toksmith_core::words::fold_counts(&v, lowercase))
            .map_err(to_py)
    }

    /// [(chunk bytes, count)] sorted by chunk.
    fn counts<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let v = self.get()?.counts_snapshot();
        PyList::new(py, v.iter().map(|(b, c)| (PyBytes::new(py, b), *c)))
    }

    /// Run the merge loop; returns [(left, right)] in internal ids (bytes 0..255, merge k = 256+k).
    /// `progress(done, total)` is called now and then with the GIL held; what it raises stops the
    /// loop and is raised here, as is a Ctrl-C (see `merge_loop_in_pool`). `min_frequency` and
    /// `max_token_length` limit the merges (see `train::MergeLimits`).
    #[pyo3(signature = (num_merges, progress=None, threads=0, min_frequency=0, max_token_length=None))]
    fn train(
        &mut self,
        py: Python<'_>,
        num_merges: usize,
        progress: Option<Py<PyAny>>,
        threads: usize,
        min_frequency: u64,
        max_token_length: Option<usize>,
    ) -> PyResult<Vec<(u32, u32)>> {
        let limits = train::MergeLimits {
            min_frequency,
            max_token_length,
        };
        let counter = self.inner.take().ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err(
                "this ChunkCounter was already consumed by train()",
            )
        })?;
        let result = merge_loop_in_pool(py, threads, progress, |report| {
            train::train_merges_owned(counter.into_counts(), num_merges, limits, report)
        })?;
        result.map_err(to_py)
    }
}

/// Run `f` in the pool of `threads` threads with the GIL released, while the calling thread
/// waits and looks for Ctrl-C every 50 ms: Python runs signal handlers on the main thread only,
/// and a call that holds it in native code for minutes (training on a big corpus) would
/// otherwise leave Ctrl-C pending until the end. When a handler raises (KeyboardInterrupt), the
/// flag `f` gets turns true; `f` should then stop soon (the merge loop checks it at each progress
/// report), and the handler's exception is returned instead of its result.
fn interruptible_in_pool<T: Send>(
    py: Python<'_>,
    threads: usize,
    f: impl FnOnce(&AtomicBool) -> T + Send,
) -> PyResult<T> {
    let pool = pool(threads)?;
    let stop = AtomicBool::new(false);
    if rayon::current_thread_index().is_some() {
        // Called from a pool thread (a progress callback that trains, say): a thread of our
        // own would queue `f` behind this very thread on a one-thread pool and wait forever.
        // Run it here, as `in_pool` does; no signals are handled off the main thread anyway.
        return Ok(py.detach(|| pool.install(|| f(&stop))));
    }
    let done = AtomicBool::new(false);
    let result: Mutex<Option<T>> = Mutex::new(None);
    // `f` goes to the pool as a job of a scope this thread stays in (no thread is started);
    // this thread waits with the GIL released and looks for signals now and then
    let interrupted = pool.in_place_scope(|s| {
        let waiting = std::thread::current();
        s.spawn(|_| {
            // (on a panic too, so that the wait below ends; the scope then passes the panic on)
            struct Done<'a>(&'a AtomicBool, std::thread::Thread);
            impl Drop for Done<'_> {
                fn drop(&mut self) {
                    self.0.store(true, Ordering::Release);
                    self.1.unpark();
                }
            }
            let _done = Done(&done, waiting);
            let r = f(&stop);
            *result.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
        });
        let mut interrupted: Option<PyErr> = None;
        loop {
            py.detach(|| {
                if !done.load(Ordering::Acquire) {
                    std::thread::park_timeout(std::time::Duration::from_millis(50));
                }
            });
            if done.load(Ordering::Acquire) {
                break;
            }
            if interrupted.is_none() {
                if let Err(e) = py.check_signals() {
                    stop.store(true, Ordering::Relaxed);
                    interrupted = Some(e);
                }
            }
        }
        interrupted
    });
    match interrupted {
        Some(e) => Err(e),
        None => Ok(result
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .expect("the scope ran the job")),
    }
}

/// Run a merge loop (`run` with the loop's progress callback) as [`interruptible_in_pool`] does,
/// reporting to `progress(done, total)` (the GIL taken for each call). The loop stops at its next
/// report after a Ctrl-C or once `progress` raises, and that exception is returned.
pub(crate) fn merge_loop_in_pool<T: Send>(
    py: Python<'_>,
    threads: usize,
    progress: Option<Py<PyAny>>,
    run: impl FnOnce(&mut dyn FnMut(train::MergeProgress) -> bool) -> T + Send,
) -> PyResult<T> {
    let (result, raised) = interruptible_in_pool(py, threads, |stop| {
        let mut raised: Option<PyErr> = None;
        let mut report = |p: train::MergeProgress| -> bool {
            if stop.load(Ordering::Relaxed) {
                return false;
            }
            if let Some(f) = &progress {
                let called =
                    Python::attach(|py| f.call1(py, (p.merges_done, p.merges_total)).map(drop));
                if let Err(e) = called {
                    raised = Some(e);
                    return false;
                }
            }
            true
        };
        let result = run(&mut report);
        (result, raised)
    })?;
    match raised {
        Some(e) => Err(e),
        None => Ok(result),
    }
}

/// Split text into pieces; engine "auto" (scanners for named patterns) or "regex".
#[pyfunction]
#[pyo3(signature = (text, pattern, engine="auto"))]
fn split(py: Python<'_>, text: &str, pattern: &str, engine: &str) -> PyResult<Vec<String>> {
    let pre = match engine {
        "auto" => Pretokenizer::new(pattern),
        "regex" => Pretokenizer::new_regex(pattern),
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "engine must be 'auto' or 'regex', not {other:?}"
            )))
        }
    }
    .map_err(to_py)?;
    let pieces = py
        .detach(|| {
            pre.split(text)
                .map(|v| v.into_iter().map(str::to_string).collect::<Vec<_>>())
        })
        .map_err(to_py)?;
    Ok(pieces)
}

/// The regex text of a named pattern, or None.
/// The ids in decimal with `sep` between them, as bytes (what `" ".join(map(str, ids))`
/// encodes to, for `sep=b" "`).
#[pyfunction]
fn format_ids<'py>(
    py: Python<'py>,
    ids: &Bound<'py, PyAny>,
    sep: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    let mut v = Vec::new();
    ids_into(ids, &mut v)?;
    let mut out = Vec::new();
    py.detach(|| toksmith_core::ids_format::ids_to_text(&v, sep, &mut out));
    Ok(PyBytes::new(py, &out))
}

/// One line per id list: `open`, the ids in decimal with `sep` between them, `close`, `\n`
/// (`toksmith encode --lines` writes a batch of lines with one call).
#[pyfunction]
fn format_id_lines<'py>(
    py: Python<'py>,
    batch: &Bound<'py, PyAny>,
    sep: &[u8],
    open: &[u8],
    close: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    let mut v = Vec::new();
    let mut out = Vec::new();
    for item in batch.try_iter()? {
        ids_into(&item?, &mut v)?;
        out.extend_from_slice(open);
        toksmith_core::ids_format::ids_to_text(&v, sep, &mut out);
        out.extend_from_slice(close);
        out.push(b'\n');
    }
    Ok(PyBytes::new(py, &out))
}

/// Ids from whitespace-separated decimal text, or None if a word is not plain digits or is
/// over 32 bits (the caller then parses it with `int`, for the exact error).
#[pyfunction]
fn parse_ids(py: Python<'_>, data: &[u8]) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    py.detach(|| toksmith_core::ids_format::parse_text_ids(data, &mut out))
        .then_some(out)
}

/// The ids as little-endian integers of `width` bytes (2 or 4).
#[pyfunction]
fn pack_ids<'py>(
    py: Python<'py>,
    ids: &Bound<'py, PyAny>,
    width: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let mut v = Vec::new();
    ids_into(ids, &mut v)?;
    let mut out = Vec::new();
    toksmith_core::ids_format::ids_to_le(&v, width, &mut out).map_err(to_py)?;
    Ok(PyBytes::new(py, &out))
}

#[pyfunction]
fn named_pattern(name: &str) -> Option<&'static str> {
    pretokenize::named_pattern(name)
}

/// Check a pattern compiles; returns (regex text, uses hand-written scanner).
#[pyfunction]
fn compile_pattern(pattern: &str) -> PyResult<(String, bool)> {
    let p = Pretokenizer::new(pattern).map_err(to_py)?;
    Ok((p.pattern().to_string(), p.is_fast()))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<Bpe>()?;
    m.add_class::<ChunkCounter>()?;
    m.add_class::<StreamState>()?;
    m.add_function(wrap_pyfunction!(split, m)?)?;
    m.add_function(wrap_pyfunction!(named_pattern, m)?)?;
    m.add_function(wrap_pyfunction!(format_ids, m)?)?;
    m.add_function(wrap_pyfunction!(format_id_lines, m)?)?;
    m.add_function(wrap_pyfunction!(pack_ids, m)?)?;
    m.add_function(wrap_pyfunction!(parse_ids, m)?)?;
    m.add_function(wrap_pyfunction!(compile_pattern, m)?)?;
    m.add_function(wrap_pyfunction!(files::parse_tiktoken_ranks, m)?)?;
    m.add_function(wrap_pyfunction!(files::parse_merges_text, m)?)?;
    m.add_function(wrap_pyfunction!(files::toksmith_tables, m)?)?;
    m.add_function(wrap_pyfunction!(files::ranks_from_vocab_and_merges, m)?)?;
    m.add_function(wrap_pyfunction!(files::split_json_tables, m)?)?;
    m.add_function(wrap_pyfunction!(files::split_gpt2_files, m)?)?;
    m.add_class::<files::JsonTables>()?;
    m.add_class::<words::WordEncoder>()?;
    m.add_class::<words::FixedWordEncoder>()?;
    m.add_class::<words::FixedWordDecoder>()?;
    m.add_function(wrap_pyfunction!(words::train_words, m)?)?;
    m.add_function(wrap_pyfunction!(words::fold_word_counts, m)?)?;
    m.add_function(wrap_pyfunction!(words::word_embeddings, m)?)?;
    m.add_function(wrap_pyfunction!(words::word_token_seed, m)?)?;
    m.add(
        "NAMED_PATTERNS",
        pretokenize::NAMED_PATTERNS
            .iter()
            .map(|(n, p)| (*n, *p))
            .collect::<Vec<_>>(),
    )?;
    m.add("RUSTBPE_GPT4_PATTERN", pretokenize::RUSTBPE_GPT4_PATTERN)?;
    m.add("WORDS_PATTERN", pretokenize::WORDS_PATTERN)?;
    m.add("CPP_WORDS_PATTERN", pretokenize::CPP_WORDS_PATTERN)?;
    Ok(())
}
