//! Buffers kept from one call for the next: fresh memory costs a page fault per 4 KB on first
//! touch, which for big inputs is a good part of a call's time.

use std::sync::Mutex;

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
/// ([`toksmith_core::Error::OutOfMemory`] when the allocator refuses: `n` grows with the texts.)
pub(crate) fn take_ids_buffer(n: usize) -> toksmith_core::Result<Vec<u32>> {
    let spare = SPARE_IDS.lock().map(|mut s| s.pop()).unwrap_or(None);
    let mut v = spare.unwrap_or_default();
    v.clear();
    toksmith_core::mem::try_reserve(&mut v, n, "the ids of a batch")?;
    Ok(v)
}

/// Keep `bufs` for later batches, within [`SPARE_IDS_MAX`] (the rest is freed).
pub(crate) fn keep_ids_buffers(bufs: impl IntoIterator<Item = Vec<u32>>) {
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

/// Per-thread buffers for `decode` (the ids read from the list, the bytes the str is built
/// from), kept between calls: a long decode into fresh memory pays page faults of about the
/// cost of the decoding itself (0.6-0.8 ms per MB here). Buffers over `KEEP` bytes are freed.
pub(crate) struct DecodeBuffers {
    pub(crate) ids: Vec<u32>,
    pub(crate) bytes: Vec<u8>,
}

thread_local! {
    static DECODE_BUFFERS: std::cell::RefCell<DecodeBuffers> =
        const { std::cell::RefCell::new(DecodeBuffers { ids: Vec::new(), bytes: Vec::new() }) };
}

pub(crate) fn with_decode_buffers<T>(f: impl FnOnce(&mut DecodeBuffers) -> T) -> T {
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
