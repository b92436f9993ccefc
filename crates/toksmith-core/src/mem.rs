//! Memory helpers: cache prefetch hints and huge-page advice for large fresh buffers, and the
//! fallible allocation helpers (`try_*`, [`TextBuf`]) with which every buffer and table that
//! grows with an input, a file or an argument is allocated, so that a refusal is
//! [`Error::OutOfMemory`] (`MemoryError` in Python) instead of an abort (issue 36).
//!
//! Building a tokenizer from a file is fallible too: the readers of rank files, vocab/merges
//! files and tokenizer.json tables (`vocab_files`, `bpe_json`, the pipeline's fast reader with
//! its serde visitors), the SentencePiece reader's pieces (`models::spm`), the models built from
//! them (`CharBpe`, `Unigram`, `WordPiece`, the byte trie) and the pipeline's id -> token list
//! and added tokens. A refusal inside a serde visitor is remembered beside it
//! (`vocab_files::refused`) and returned instead of the parse error. The error's own message is
//! reserved fallibly as well ([`oom`]): at the allocator's limit a `format!` would abort.
//!
//! Allocations left infallible, each bounded otherwise:
//! - by a constant: the 256-entry byte tables, the 2-byte pair table of a vocabulary (256 KiB),
//!   the base64 and byte-level alphabets, scratch buffers of a fixed batch (`DECODE_BATCH`),
//!   the BMP bitmap of a charsmap (8 KiB), an empty trie's root, one-element lists;
//! - by the thread count: the per-worker partial tables' list in training, rayon's job lists;
//! - by the split pattern or a named preset: compiled patterns, pre-tokenizer tables;
//! - by Unicode: the character alphabet of word-level training (at most 1.1M characters);
//! - by one small token or key, on an error path: the messages of errors (`format!`) other
//!   than out-of-memory;
//! - by what a third-party decoder allocates as it parses a file of at most
//!   `MAX_TOKENIZER_FILE_BYTES` (1 GiB), with no fallible API: serde_json's `Value` trees (the
//!   parts of a tokenizer.json besides its model's tables; the whole document on the slow path
//!   that a file the fast reader declines takes, to report what is wrong), its scratch buffer
//!   for an escaped string (and the owned copy of an escaped key in `bpe_json`), and the keys
//!   of the document's and the model's members (a few short names);
//! - by the size of a `Value` string already allocated (at most the file): the copies of the
//!   strings of a pipeline's normalizer, pre-tokenizer and decoder settings (a `Replace`
//!   content, a split pattern, a prefix), and the SentencePiece trainer's surface strings;
//! - by the vocabulary size, checked fallibly when the encoder was built: the per-call id
//!   counts of the bindings' interned ids (`cpython.rs`);
//! - by the vocabulary (already allocated fallibly, a few entries per token): the whole-character
//!   table of the merges (`bpe/atoms.rs`), built on a thread of its own when a large vocabulary
//!   is built, else on the first non-ASCII merge;
//! - shrinking reallocations (`shrink_to`), which never ask for more memory.
//!
//! [`Error::OutOfMemory`]: crate::error::Error::OutOfMemory

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

/// How many encoders' (or vocabularies') caches a thread keeps (the encoder's piece caches,
/// the merges' span memos). A program that alternates between a few tokenizers on one thread
/// (a chat model's and an embedding model's, or a benchmark of several) keeps each one's
/// merged pieces; with one cache per thread, every switch emptied it (a `memset` of all its
/// slots) and the next text merged its pieces again.
pub const KEPT: usize = 3;

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

/// The error of a refused allocation of `n` items of `size` bytes for `what`. Its message is
/// allocated fallibly too: the allocator may be at its limit (the refused request a small one,
/// the tables built so far still held), and an infallible `format!` would then abort; the
/// message is left empty where its room is refused.
pub fn oom(what: &str, n: usize, size: usize) -> crate::error::Error {
    use std::fmt::Write;
    let mut msg = String::new();
    if msg.try_reserve(what.len() + 64).is_ok() {
        // (within the room just reserved: 64 bytes hold the rest of the message)
        let _ = write!(
            msg,
            "cannot allocate {} bytes for {what}",
            (n as u128) * (size as u128)
        );
    }
    crate::error::Error::OutOfMemory(msg)
}

/// Push `x` onto `v`, its room allocated fallibly (see [`try_reserve`]; growth stays
/// amortized, doubling as `Vec::push` does).
#[inline]
pub fn try_push<T>(v: &mut Vec<T>, x: T, what: &str) -> crate::error::Result<()> {
    try_reserve(v, 1, what)?;
    v.push(x);
    Ok(())
}

/// A `String` built by appending, its growth allocated fallibly: an append the allocator
/// refuses is remembered (the text is then left as it was, later appends are dropped), and
/// [`TextBuf::finish`] reports it as [`Error::OutOfMemory`], so loops that append text (the
/// normalizers, the decoders) need no `?` at every step.
///
/// [`Error::OutOfMemory`]: crate::error::Error::OutOfMemory
pub struct TextBuf {
    s: String,
    what: &'static str,
    /// the size of the first refused request
    failed: Option<usize>,
}

impl TextBuf {
    /// An empty text with room for `n` bytes (refused: an error at once).
    pub fn with_capacity(n: usize, what: &'static str) -> crate::error::Result<Self> {
        let mut s = String::new();
        s.try_reserve(n).map_err(|_| oom(what, n, 1))?;
        Ok(TextBuf {
            s,
            what,
            failed: None,
        })
    }

    /// Room for `n` more bytes; false once an allocation was refused.
    #[inline]
    fn room(&mut self, n: usize) -> bool {
        if self.failed.is_some() {
            return false;
        }
        if self.s.capacity() - self.s.len() < n && self.s.try_reserve(n).is_err() {
            self.failed = Some(self.s.len().saturating_add(n));
            // the text is useless now: give its memory back at once
            self.s = String::new();
            return false;
        }
        true
    }

    #[inline]
    pub fn push(&mut self, c: char) {
        if self.room(c.len_utf8()) {
            self.s.push(c);
        }
    }

    #[inline]
    pub fn push_str(&mut self, t: &str) {
        if self.room(t.len()) {
            self.s.push_str(t);
        }
    }

    /// Shorten to `n` bytes (a character boundary).
    pub fn truncate(&mut self, n: usize) {
        self.s.truncate(n);
    }

    /// The text, or [`Error::OutOfMemory`] if an append was refused.
    ///
    /// [`Error::OutOfMemory`]: crate::error::Error::OutOfMemory
    pub fn finish(self) -> crate::error::Result<String> {
        match self.failed {
            None => Ok(self.s),
            Some(n) => Err(oom(self.what, n, 1)),
        }
    }

    /// The characters of `chars` collected (room for `hint` bytes first).
    pub fn collect(
        chars: impl IntoIterator<Item = char>,
        hint: usize,
        what: &'static str,
    ) -> crate::error::Result<String> {
        let mut out = TextBuf::with_capacity(hint, what)?;
        out.extend(chars);
        out.finish()
    }
}

impl std::ops::Deref for TextBuf {
    type Target = str;
    fn deref(&self) -> &str {
        &self.s
    }
}

impl Extend<char> for TextBuf {
    fn extend<I: IntoIterator<Item = char>>(&mut self, chars: I) {
        for c in chars {
            self.push(c);
        }
    }
}

/// JSON (or any UTF-8) written into the text; a refused append is reported by
/// [`TextBuf::finish`], never here.
impl std::io::Write for TextBuf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let s = std::str::from_utf8(b)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        self.push_str(s);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> Extend<&'a str> for TextBuf {
    fn extend<I: IntoIterator<Item = &'a str>>(&mut self, parts: I) {
        for t in parts {
            self.push_str(t);
        }
    }
}

/// A copy of `s`, allocated fallibly.
#[inline]
pub fn try_string(s: &str, what: &'static str) -> crate::error::Result<String> {
    let mut out = String::new();
    out.try_reserve_exact(s.len())
        .map_err(|_| oom(what, s.len(), 1))?;
    out.push_str(s);
    Ok(out)
}

/// The items collected into a vector grown fallibly (see [`try_reserve`]).
pub fn try_collect<T>(
    items: impl IntoIterator<Item = T>,
    what: &str,
) -> crate::error::Result<Vec<T>> {
    let items = items.into_iter();
    let mut v = try_vec(items.size_hint().0, what)?;
    for x in items {
        try_push(&mut v, x, what)?;
    }
    Ok(v)
}

/// A vector of `n` copies of `x` (`vec![x; n]`), allocated fallibly (see [`try_reserve`]).
pub fn try_filled<T: Clone>(n: usize, x: T, what: &str) -> crate::error::Result<Vec<T>> {
    let mut v = try_vec(n, what)?;
    v.resize(n, x);
    Ok(v)
}

/// Room for `additional` more entries in `m`, or [`Error::OutOfMemory`] naming `what`: the
/// tables built from a file's entries reserve them all first, so no insert allocates.
///
/// [`Error::OutOfMemory`]: crate::error::Error::OutOfMemory
pub fn try_reserve_map<K, V, S>(
    m: &mut std::collections::HashMap<K, V, S>,
    additional: usize,
    what: &str,
) -> crate::error::Result<()>
where
    K: Eq + std::hash::Hash,
    S: std::hash::BuildHasher,
{
    m.try_reserve(additional)
        .map_err(|_| oom(what, additional, std::mem::size_of::<(K, V)>() + 1))
}

/// [`try_reserve_map`] for a set.
pub fn try_reserve_set<T, S>(
    m: &mut std::collections::HashSet<T, S>,
    additional: usize,
    what: &str,
) -> crate::error::Result<()>
where
    T: Eq + std::hash::Hash,
    S: std::hash::BuildHasher,
{
    m.try_reserve(additional)
        .map_err(|_| oom(what, additional, std::mem::size_of::<T>() + 1))
}

/// A copy of `b`, allocated fallibly.
pub fn try_bytes(b: &[u8], what: &str) -> crate::error::Result<Vec<u8>> {
    let mut v = try_vec(b.len(), what)?;
    v.extend_from_slice(b);
    Ok(v)
}

/// `s` with every `from` replaced by `to` (`str::replace`), allocated fallibly.
pub fn try_replace(
    s: &str,
    from: &str,
    to: &str,
    what: &'static str,
) -> crate::error::Result<String> {
    let mut out = TextBuf::with_capacity(s.len(), what)?;
    let mut last = 0;
    for (at, m) in s.match_indices(from) {
        out.push_str(&s[last..at]);
        out.push_str(to);
        last = at + m.len();
    }
    out.push_str(&s[last..]);
    out.finish()
}

/// `f` of each item, collected into a vector grown fallibly; the first error stops it.
pub fn try_map<T, U>(
    items: impl IntoIterator<Item = T>,
    mut f: impl FnMut(T) -> crate::error::Result<U>,
    what: &str,
) -> crate::error::Result<Vec<U>> {
    let items = items.into_iter();
    let mut v = try_vec(items.size_hint().0, what)?;
    for x in items {
        try_push(&mut v, f(x)?, what)?;
    }
    Ok(v)
}

/// `f` of each item, in parallel (the current rayon pool), into a vector allocated fallibly
/// (rayon's `collect` allocates its result infallibly); the first error is returned.
pub fn try_par_map<T: Sync, U: Send + Default>(
    items: &[T],
    f: impl Fn(&T) -> crate::error::Result<U> + Sync + Send,
    what: &str,
) -> crate::error::Result<Vec<U>> {
    use rayon::prelude::*;
    let mut out = try_vec(items.len(), what)?;
    // (within the room just reserved: no allocation)
    out.resize_with(items.len(), U::default);
    out.par_iter_mut().zip(items.par_iter()).try_for_each(
        |(o, x)| -> crate::error::Result<()> {
            *o = f(x)?;
            Ok(())
        },
    )?;
    Ok(out)
}
