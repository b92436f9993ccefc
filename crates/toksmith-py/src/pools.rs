//! Thread pools: every call that may go parallel runs in one of these pools, with the GIL
//! released, never in rayon's global pool (see [`pool_in`]); and the wait of a long call that
//! still answers Ctrl-C ([`interruptible_in_pool`]).

use pyo3::prelude::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use toksmith_core::train;

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
pub(crate) fn rayon_threads(threads: usize) -> PyResult<usize> {
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
pub(crate) fn in_pool<T: Send>(
    py: Python<'_>,
    threads: usize,
    f: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    let pool = pool(threads)?;
    Ok(py.detach(|| pool.install(f)))
}

/// `f` with the GIL released, in the default pool: for the calls that may go parallel.
pub(crate) fn detached_in_pool<T: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    in_pool(py, 0, f)
}

/// Run `f` in the pool of `threads` threads with the GIL released, while the calling thread
/// waits and looks for Ctrl-C every 50 ms: Python runs signal handlers on the main thread only,
/// and a call that holds it in native code for minutes (training on a big corpus) would
/// otherwise leave Ctrl-C pending until the end. When a handler raises (KeyboardInterrupt), the
/// flag `f` gets turns true; `f` should then stop soon (the merge loop checks it at each progress
/// report), and the handler's exception is returned instead of its result.
pub(crate) fn interruptible_in_pool<T: Send>(
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
