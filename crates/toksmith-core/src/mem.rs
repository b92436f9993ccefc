//! Memory helpers for the hot paths: cache prefetch hints and huge-page advice for large
//! fresh buffers.

/// A hint to start loading the cache line at `p` (a no-op on other architectures).
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    hint::<{ std::arch::x86_64::_MM_HINT_T0 }, T>(p);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// A hint to load the cache line at `p` that is about to be written (`prefetchw` where the
/// build targets CPUs that have it, else an ordinary prefetch; a no-op on other architectures).
#[inline(always)]
pub fn prefetch_write<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    hint::<{ std::arch::x86_64::_MM_HINT_ET0 }, T>(p);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn hint<const STRATEGY: i32, T>(p: *const T) {
    // SAFETY: prefetching never faults, whatever the address.
    unsafe { std::arch::x86_64::_mm_prefetch::<STRATEGY>(p as *const i8) }
}

/// Buffers at least this large are backed by transparent huge pages where the system allows it.
pub const HUGE_MIN: usize = 4 << 20;

/// Ask the kernel to back the whole 2 MiB pages inside `[ptr, ptr + bytes)` with transparent
/// huge pages (Linux `madvise(MADV_HUGEPAGE)`; a no-op elsewhere or for small buffers).
///
/// Fresh memory is zeroed and mapped by the kernel on first touch, one 4 KiB page fault at a
/// time: for the 80 MB id list of a 10 MB text that is about 20,000 faults, 50 ms on the
/// benchmark machine, against 14 ms with huge pages (`benches/perf_notes.md`). Only memory not
/// yet touched benefits, so call this right after allocating. Failure is harmless (the advice
/// is ignored), so the result is not reported.
pub fn advise_huge_pages(ptr: *const u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    if bytes >= HUGE_MIN && huge_pages_allowed() {
        const HUGE: usize = 2 << 20;
        let start = (ptr as usize + HUGE - 1) & !(HUGE - 1);
        let end = (ptr as usize + bytes) & !(HUGE - 1);
        if end > start {
            // SAFETY: madvise only changes how the kernel backs pages of this process's own
            // mapping (every whole page of the range lies inside the caller's allocation); it
            // never changes the memory's contents.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, bytes);
}

/// An empty vector with room for `n` items, its fresh memory advised as huge pages when large.
pub fn big_vec<T>(n: usize) -> Vec<T> {
    let v = Vec::with_capacity(n);
    advise_huge_pages(v.as_ptr() as *const u8, n * std::mem::size_of::<T>());
    v
}

/// Whether huge-page advice is on: `TOKSMITH_NO_HUGEPAGES` unset (read once per process).
#[cfg(target_os = "linux")]
fn huge_pages_allowed() -> bool {
    static ALLOWED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ALLOWED.get_or_init(|| std::env::var_os("TOKSMITH_NO_HUGEPAGES").is_none())
}

/// Room for `additional` more items in `v`, or [`Error::OutOfMemory`] naming `what` when the
/// allocator refuses: buffers that grow with the input use it so that a big input under a
/// memory limit raises `MemoryError` in Python instead of aborting the process.
///
/// [`Error::OutOfMemory`]: crate::error::Error::OutOfMemory
#[inline]
pub fn try_reserve<T>(v: &mut Vec<T>, additional: usize, what: &str) -> crate::error::Result<()> {
    if v.capacity() - v.len() >= additional {
        return Ok(());
    }
    v.try_reserve(additional).map_err(|_| {
        oom(
            what,
            v.len().saturating_add(additional),
            std::mem::size_of::<T>(),
        )
    })
}

/// An empty vector with room for `n` items, or [`Error::OutOfMemory`] (see [`try_reserve`]).
///
/// [`Error::OutOfMemory`]: crate::error::Error::OutOfMemory
pub fn try_vec<T>(n: usize, what: &str) -> crate::error::Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| oom(what, n, std::mem::size_of::<T>()))?;
    Ok(v)
}

/// [`try_vec`] with huge-page advice (see [`big_vec`]).
pub fn try_big_vec<T>(n: usize, what: &str) -> crate::error::Result<Vec<T>> {
    let v = try_vec(n, what)?;
    advise_huge_pages(v.as_ptr() as *const u8, n * std::mem::size_of::<T>());
    Ok(v)
}

/// The error of a refused allocation of `n` items of `size` bytes for `what`.
pub fn oom(what: &str, n: usize, size: usize) -> crate::error::Error {
    crate::error::Error::OutOfMemory(format!(
        "cannot allocate {} bytes for {what}",
        (n as u128) * (size as u128)
    ))
}
