//! Every `unsafe` block of the crate: reads and writes of CPython's objects below PyO3's API
//! (the storage of `str`, list item buffers, the digits of small `int`s, reference counts) and
//! the raw FFI calls PyO3 does not wrap. Each public item here is safe to call: the invariants
//! the unsafe code needs are kept by this module's private fields and checks, so the other
//! modules hold no `unsafe` at all.

use crate::text::{StrView, Wide};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyString};
use std::cell::RefCell;
use std::ffi::CStr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

// ---------------------------------------------------------------------------------------------
// `str` storage (PEP 393) and conversions to and from UTF-8

/// Where the UTF-8 of `s` comes from: borrowed when CPython already holds it as UTF-8 (ASCII,
/// or a cached UTF-8 copy), else its fixed-width storage.
pub(crate) fn str_view<'a>(s: &'a Bound<'_, PyString>) -> PyResult<StrView<'a>> {
    let p = s.as_ptr();
    // SAFETY: `p` is a live `str` (checked by the type of `s`); the macros below only read its
    // header, and the data they point to lives (unchanged: a `str` is immutable) as long as the
    // object, which `s` keeps alive for 'a. CPython guarantees `len` characters of `kind`
    // bytes at `data`, aligned for their width.
    unsafe {
        if ffi::PyUnicode_IS_COMPACT(p) != 0 {
            let len = ffi::PyUnicode_GET_LENGTH(p) as usize;
            let data = ffi::PyUnicode_DATA(p);
            if ffi::PyUnicode_IS_ASCII(p) != 0 {
                let bytes = std::slice::from_raw_parts(data as *const u8, len);
                return Ok(StrView::Utf8(std::str::from_utf8_unchecked(bytes)));
            }
            let compact = p as *mut ffi::PyCompactUnicodeObject;
            if !(*compact).utf8.is_null() {
                let bytes = std::slice::from_raw_parts(
                    (*compact).utf8 as *const u8,
                    (*compact).utf8_length as usize,
                );
                return Ok(StrView::Utf8(std::str::from_utf8_unchecked(bytes)));
            }
            return Ok(StrView::Wide(match ffi::PyUnicode_KIND(p) {
                1 => Wide::Ucs1(std::slice::from_raw_parts(data as *const u8, len)),
                2 => Wide::Ucs2(std::slice::from_raw_parts(data as *const u16, len)),
                _ => Wide::Ucs4(std::slice::from_raw_parts(data as *const u32, len)),
            }));
        }
    }
    Ok(StrView::Utf8(s.to_str()?))
}

/// Append the UTF-8 of characters `from..to` of `w` to `out`; a lone surrogate is an error
/// (at its character index in the whole string).
pub(crate) fn append_wide_utf8(
    w: Wide<'_>,
    from: usize,
    to: usize,
    out: &mut String,
) -> Result<(), usize> {
    // SAFETY: the converters below append well-formed UTF-8 only (surrogates are rejected
    // before anything of theirs is written).
    let out = unsafe { out.as_mut_vec() };
    match w {
        Wide::Ucs1(s) => latin1_to_utf8(&s[from..to], out),
        Wide::Ucs2(s) => wide_to_utf8(&s[from..to], from, out)?,
        Wide::Ucs4(s) => wide_to_utf8(&s[from..to], from, out)?,
    }
    Ok(())
}

/// Append the UTF-8 of Latin-1 `src` to `out` (room for `2 * src.len() + 8` more bytes made).
///
/// Sixteen characters at a time: all ASCII (most of Latin text) is one 16-byte copy; else each
/// character is written as two bytes without a branch (an ASCII one's second byte is
/// overwritten by the next character) and the end advanced by one or two.
fn latin1_to_utf8(src: &[u8], out: &mut Vec<u8>) {
    out.reserve(src.len() * 2 + 8);
    let n = src.len();
    let base = out.len();
    // SAFETY: `out` has room for `2 * n + 8` bytes after `base`; the output for the first `i`
    // characters is at most `2 * i` bytes, and each write below ends at most 2 bytes past the
    // output of the characters before it (16 for the copy of 16 ASCII ones, which are 16
    // bytes of output). Only bytes below `base + j` are made visible, all written.
    unsafe {
        let s = src.as_ptr();
        let d = out.as_mut_ptr().add(base);
        let mut i = 0;
        let mut j = 0;
        while i + 16 <= n {
            let a = (s.add(i) as *const u64).read_unaligned();
            let b = (s.add(i + 8) as *const u64).read_unaligned();
            if (a | b) & 0x8080_8080_8080_8080 == 0 {
                std::ptr::copy_nonoverlapping(s.add(i), d.add(j), 16);
                j += 16;
            } else {
                for k in 0..16 {
                    j += put_latin1(d.add(j), *s.add(i + k));
                }
            }
            i += 16;
        }
        while i < n {
            j += put_latin1(d.add(j), *s.add(i));
            i += 1;
        }
        out.set_len(base + j);
    }
}

/// Write the UTF-8 of Latin-1 `b` at `d` as two bytes (the second is garbage for ASCII) and
/// return its length. (Caller: room for two bytes at `d`.)
#[inline(always)]
unsafe fn put_latin1(d: *mut u8, b: u8) -> usize {
    let hi = (b >> 7) as usize;
    let lead = if hi != 0 { 0xC0 | (b >> 6) } else { b };
    let v = u16::from_le_bytes([lead, 0x80 | (b & 0x3F)]);
    (d as *mut u16).write_unaligned(v);
    1 + hi
}

/// The UTF-8 of `cp` (not a surrogate) in the low bytes of a `u32`, first byte lowest, and
/// its length; no branch for the length (the common scripts mix ASCII with 2- or 3-byte
/// characters, so a branch per character would be mispredicted at every switch).
#[inline(always)]
fn utf8_word(cp: u32) -> (u32, usize) {
    let len = 1 + (cp >= 0x80) as usize + (cp >= 0x800) as usize + (cp >= 0x10000) as usize;
    let c0 = cp & 0x3F;
    let c1 = (cp >> 6) & 0x3F;
    let c2 = (cp >> 12) & 0x3F;
    let two = (0xC0 | (cp >> 6)) | ((0x80 | c0) << 8);
    let three = (0xE0 | (cp >> 12)) | ((0x80 | c1) << 8) | ((0x80 | c0) << 16);
    let four = (0xF0 | (cp >> 18)) | ((0x80 | c2) << 8) | ((0x80 | c1) << 16) | ((0x80 | c0) << 24);
    let v = match len {
        1 => cp,
        2 => two,
        3 => three,
        _ => four,
    };
    (v, len)
}

/// The UTF-8 of `cp` (below 0x800) in the low bytes of a `u16`, first byte lowest, and its
/// length (the second byte is garbage for ASCII); no branch.
#[inline(always)]
fn utf8_short(cp: u32) -> (u16, usize) {
    let wide = (cp >= 0x80) as usize;
    let two = (0xC0 | (cp >> 6)) | ((0x80 | (cp & 0x3F)) << 8);
    let v = if wide != 0 { two } else { cp };
    (v as u16, 1 + wide)
}

/// The UTF-8 of `cp` (below 0x10000, not a surrogate) in the low bytes of a `u32`, first byte
/// lowest, and its length: [`utf8_short`]'s, or three bytes, picked by a mask (no branch:
/// Indic and Thai text mix ASCII spaces and punctuation with 3-byte letters).
#[inline(always)]
fn utf8_bmp(cp: u32) -> (u32, usize) {
    let (short, len) = utf8_short(cp);
    let big = (cp >= 0x800) as u32;
    let three =
        (0xE0 | (cp >> 12)) | ((0x80 | ((cp >> 6) & 0x3F)) << 8) | ((0x80 | (cp & 0x3F)) << 16);
    let m3 = big.wrapping_neg();
    ((short as u32 & !m3) | (three & m3), len + big as usize)
}

/// Write the UTF-8 of each unit of `c` at `d + *j` with `enc` (its bytes as a `W` and its
/// length), advancing `*j` by each length.
///
/// SAFETY: the caller makes room for a whole `W` at each character's offset.
#[inline(always)]
unsafe fn put_each<U: Unit, W>(
    c: &[U],
    d: *mut u8,
    j: &mut usize,
    enc: impl Fn(u32) -> (W, usize),
) {
    for u in c {
        let (v, len) = enc(u.cp());
        (d.add(*j) as *mut W).write_unaligned(v);
        *j += len;
    }
}

/// Two- or four-byte code units.
trait Unit: Copy {
    /// Most UTF-8 bytes of one unit.
    const MAX_UTF8: usize;
    fn cp(self) -> u32;
}
impl Unit for u16 {
    const MAX_UTF8: usize = 3;
    #[inline(always)]
    fn cp(self) -> u32 {
        self as u32
    }
}
impl Unit for u32 {
    const MAX_UTF8: usize = 4;
    #[inline(always)]
    fn cp(self) -> u32 {
        self
    }
}

/// Append the UTF-8 of two- or four-byte units to `out` (room for `MAX_UTF8 * src.len() + 8`
/// more bytes made), or the index of the first surrogate (`first`: the index of `src[0]` in the
/// whole string). Eight units at a time: eight ASCII ones are one 8-byte write; eight below
/// U+0800 one unaligned 2-byte write each ([`utf8_short`]); else each character is one
/// unaligned 4-byte write of its UTF-8 ([`utf8_bmp`] when all eight are in the BMP, else
/// [`utf8_word`]), the end advanced by its length. (The one-path form spent 3-5 ns a
/// character on Cyrillic, Indic and mixed text; the narrower paths 1.2-2.9.)
fn wide_to_utf8<U: Unit>(src: &[U], first: usize, out: &mut Vec<u8>) -> Result<(), usize> {
    out.reserve(src.len() * U::MAX_UTF8 + 8);
    let n = src.len();
    let base = out.len();
    let mut i = 0;
    let mut j = 0;
    // SAFETY: `out` has room for `MAX_UTF8 * n + 8` bytes after `base`; the output of the
    // first `i` units is at most `MAX_UTF8 * i` bytes, each unit's 2- or 4-byte write starts at
    // the end of the output before it (so ends at most 3 bytes past the room its own bytes need,
    // within the 8 of slack), and the 8-byte write of 8 ASCII units is their own output.
    // Surrogates are found before a chunk is written, and only bytes below `base + j` (whole
    // characters) are made visible.
    let bad = unsafe {
        let d = out.as_mut_ptr().add(base);
        let mut bad = None;
        'chunks: while i + 8 <= n {
            let c = &src[i..i + 8];
            let mut or = 0u32;
            let mut w = 0u64;
            for (k, u) in c.iter().enumerate() {
                or |= u.cp();
                w |= (u.cp() as u64 & 0xFF) << (8 * k);
            }
            if or < 0x80 {
                (d.add(j) as *mut u64).write_unaligned(w);
                j += 8;
                i += 8;
                continue;
            }
            if or < 0x800 {
                // (no surrogate; one or two bytes each: Latin, Cyrillic, Greek, Arabic,
                // Hebrew text)
                put_each(c, d, &mut j, utf8_short);
                i += 8;
                continue;
            }
            for (k, u) in c.iter().enumerate() {
                if u.cp() & 0xFFFF_F800 == 0xD800 {
                    bad = Some(i + k);
                    break 'chunks;
                }
            }
            if or < 0x10000 {
                put_each(c, d, &mut j, utf8_bmp);
            } else {
                put_each(c, d, &mut j, utf8_word);
            }
            i += 8;
        }
        if bad.is_none() {
            while i < n {
                let cp = src[i].cp();
                if cp & 0xFFFF_F800 == 0xD800 {
                    bad = Some(i);
                    break;
                }
                let (v, len) = utf8_word(cp);
                (d.add(j) as *mut u32).write_unaligned(v);
                j += len;
                i += 1;
            }
        }
        out.set_len(base + j);
        bad
    };
    match bad {
        Some(k) => Err(first + k),
        None => Ok(()),
    }
}

/// A new `str` from valid UTF-8 whose [`Layout`](toksmith_core::utf8::Layout) is known: the
/// characters are written straight into the string's own storage, with the GIL released.
pub(crate) fn str_from_utf8<'py>(
    py: Python<'py>,
    bytes: &[u8],
    layout: toksmith_core::utf8::Layout,
) -> PyResult<Bound<'py, PyAny>> {
    use toksmith_core::utf8::transcode;
    // SAFETY: `bytes` is valid UTF-8 (checked by `layout`). The new string is not shared with
    // anything until it is returned, so filling its storage without the GIL is safe; its
    // storage holds `chars` code units of the kind that `max_char` selects, which is exactly
    // what `transcode` writes.
    unsafe {
        let obj = ffi::PyUnicode_New(
            layout.chars as ffi::Py_ssize_t,
            layout.max_char as ffi::Py_UCS4,
        );
        let obj = Bound::from_owned_ptr_or_err(py, obj)?;
        let data = ffi::PyUnicode_DATA(obj.as_ptr()) as usize;
        let n = layout.chars;
        let width = match layout.max_char {
            0x7F | 0xFF => 1,
            0xFFFF => 2,
            _ => 4,
        };
        // The storage is fresh and first written here: a long one in 2 MiB pages.
        toksmith_core::mem::advise_huge_pages(data as *const u8, n * width);
        let s = std::str::from_utf8_unchecked(bytes);
        py.detach(|| match layout.max_char {
            0x7F => std::ptr::copy_nonoverlapping(bytes.as_ptr(), data as *mut u8, n),
            0xFF => transcode(s, std::slice::from_raw_parts_mut(data as *mut u8, n)),
            0xFFFF => transcode(s, std::slice::from_raw_parts_mut(data as *mut u16, n)),
            _ => transcode(s, std::slice::from_raw_parts_mut(data as *mut u32, n)),
        });
        Ok(obj)
    }
}

/// A new `bytes` holding `data`; a long one is copied into storage advised as huge pages
/// (fresh memory, first written here).
pub(crate) fn bytes_from<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    // SAFETY: a bytes object made from NULL has `len` writable, uninitialised bytes that we fill
    // completely before anyone else can see the object.
    unsafe {
        let obj = ffi::PyBytes_FromStringAndSize(std::ptr::null(), data.len() as ffi::Py_ssize_t);
        let obj = Bound::from_owned_ptr_or_err(py, obj)?;
        let dst = ffi::PyBytes_AS_STRING(obj.as_ptr()) as *mut u8;
        toksmith_core::mem::advise_huge_pages(dst, data.len());
        std::ptr::copy_nonoverlapping(data.as_ptr(), dst, data.len());
        Ok(obj.cast_into_unchecked())
    }
}

/// A list of `str` made from `pieces`; `MemoryError` (not a panic) when CPython cannot
/// allocate one of them.
pub(crate) fn str_list<'py>(py: Python<'py>, pieces: &[&str]) -> PyResult<Bound<'py, PyList>> {
    // SAFETY: `PyList_New(n)` gives n NULL slots, each set below exactly once to an owned
    // reference (`PyList_SET_ITEM` steals it) before the list is returned; a list freed with
    // slots still NULL (on an error) is valid, as `list_dealloc` skips them.
    unsafe {
        let list = ffi::PyList_New(pieces.len() as ffi::Py_ssize_t);
        let list = Bound::from_owned_ptr_or_err(py, list)?;
        for (k, p) in pieces.iter().enumerate() {
            let item =
                ffi::PyUnicode_FromStringAndSize(p.as_ptr().cast(), p.len() as ffi::Py_ssize_t);
            if item.is_null() {
                return Err(PyErr::fetch(py));
            }
            ffi::PyList_SET_ITEM(list.as_ptr(), k as ffi::Py_ssize_t, item);
        }
        Ok(list.cast_into_unchecked())
    }
}

/// A list of the objects `items` makes, in order: `MemoryError` where `PyList::new` would
/// panic (a list too long for memory), and the first error of an item as it is.
pub(crate) fn list_of<'py>(
    py: Python<'py>,
    items: impl ExactSizeIterator<Item = PyResult<Bound<'py, PyAny>>>,
) -> PyResult<Bound<'py, PyList>> {
    let n = items.len();
    // SAFETY: `PyList_New(n)` gives n NULL slots; each slot is set at most once to an owned
    // reference (`PyList_SET_ITEM` steals it), and the list is returned only when all n are set
    // (an iterator shorter than it said is an error). A list dropped with slots still NULL (on
    // an error) is valid, as `list_dealloc` skips them.
    unsafe {
        let list =
            Bound::<PyAny>::from_owned_ptr_or_err(py, ffi::PyList_New(n as ffi::Py_ssize_t))?;
        let mut set = 0;
        for (k, item) in items.take(n).enumerate() {
            ffi::PyList_SET_ITEM(list.as_ptr(), k as ffi::Py_ssize_t, item?.into_ptr());
            set += 1;
        }
        if set != n {
            return Err(pyo3::exceptions::PySystemError::new_err(
                "an item iterator was shorter than its length",
            ));
        }
        Ok(list.cast_into_unchecked())
    }
}

/// A tuple of `items`: `MemoryError` where `PyTuple::new` would panic.
pub(crate) fn tuple_of<'py, const N: usize>(
    py: Python<'py>,
    items: [Bound<'py, PyAny>; N],
) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: `PyTuple_New(N)` gives N NULL slots, each set below exactly once to an owned
    // reference (`PyTuple_SET_ITEM` steals it) before the tuple is returned.
    unsafe {
        let t = Bound::<PyAny>::from_owned_ptr_or_err(py, ffi::PyTuple_New(N as ffi::Py_ssize_t))?;
        for (k, item) in items.into_iter().enumerate() {
            ffi::PyTuple_SET_ITEM(t.as_ptr(), k as ffi::Py_ssize_t, item.into_ptr());
        }
        Ok(t)
    }
}

/// Whether `obj` passes `PySequence_Check` (what PyO3's `Vec<T>` extraction asks of it).
pub(crate) fn is_sequence(obj: &Bound<'_, PyAny>) -> bool {
    // SAFETY: a live object (bound, GIL held); the check only reads its type.
    unsafe { ffi::PySequence_Check(obj.as_ptr()) != 0 }
}

/// A Python `int`: `MemoryError` where PyO3's conversion would panic.
pub(crate) fn int(py: Python<'_>, v: u64) -> PyResult<Bound<'_, PyAny>> {
    // SAFETY: a new reference or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyLong_FromUnsignedLongLong(v)) }
}

/// A list of Python `int`s (see [`list_of`]).
pub(crate) fn int_list<'py, T: Copy + Into<u64>>(
    py: Python<'py>,
    values: &[T],
) -> PyResult<Bound<'py, PyList>> {
    list_of(py, values.iter().map(|&v| int(py, v.into())))
}

/// A new `str` from UTF-8: `MemoryError` where `PyString::new` would panic.
pub(crate) fn new_str<'py>(py: Python<'py>, s: &str) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: a valid pointer/length pair of UTF-8; a new reference or NULL with an exception.
    unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            ffi::PyUnicode_FromStringAndSize(s.as_ptr().cast(), s.len() as ffi::Py_ssize_t),
        )
    }
}

/// `bytes.decode("utf-8", errors)` without the bytes object: CPython's decoder with the
/// `errors` handler (which may run Python code).
pub(crate) fn decode_utf8<'py>(
    py: Python<'py>,
    bytes: &[u8],
    errors: &CStr,
) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: valid pointer/length pair and a NUL-terminated handler name; the result is a new
    // reference or NULL with an exception set.
    unsafe {
        let obj = ffi::PyUnicode_DecodeUTF8(
            bytes.as_ptr() as *const std::os::raw::c_char,
            bytes.len() as ffi::Py_ssize_t,
            errors.as_ptr(),
        );
        Bound::from_owned_ptr_or_err(py, obj)
    }
}

/// CPython's stateful UTF-8 decoder (the one `codecs`' incremental decoder calls) on `data`:
/// the text and how many bytes it consumed; with `last`, every byte (an incomplete character at
/// the end goes through `errors`), else an incomplete character at the end is left over.
pub(crate) fn decode_utf8_stateful<'py>(
    py: Python<'py>,
    data: &[u8],
    errors: &CStr,
    last: bool,
) -> PyResult<(Bound<'py, PyAny>, usize)> {
    let mut consumed: ffi::Py_ssize_t = 0;
    // SAFETY: `data` is a live byte slice and `errors` a NUL-terminated string; the result is
    // a new reference or NULL with an exception set.
    let s = unsafe {
        let s = ffi::PyUnicode_DecodeUTF8Stateful(
            data.as_ptr().cast(),
            data.len() as ffi::Py_ssize_t,
            errors.as_ptr(),
            if last {
                std::ptr::null_mut()
            } else {
                &mut consumed
            },
        );
        Bound::from_owned_ptr_or_err(py, s)?
    };
    let consumed = if last { data.len() } else { consumed as usize };
    Ok((s, consumed.min(data.len())))
}

/// Copy the first `out.len()` bytes of `chunk` into `out` (fewer if it is shorter); the number
/// copied.
pub(crate) fn copy_from_bytearray(chunk: &Bound<'_, PyByteArray>, out: &mut [u8]) -> usize {
    // SAFETY: the GIL is held (`chunk` is bound) and no Python code runs while the bytearray's
    // buffer is borrowed, so it can be neither resized nor freed meanwhile.
    let data = unsafe { chunk.as_bytes() };
    let n = data.len().min(out.len());
    out[..n].copy_from_slice(&data[..n]);
    n
}

// ---------------------------------------------------------------------------------------------
// Ids in: lists of Python ints

/// How many list items ahead [`ids_into`] and [`IntTable::ids_to_list`] prefetch the int
/// objects.
const IDS_AHEAD: usize = 16;

/// Ids from a Python object into a buffer the caller reuses (cleared first): a list of ints on a
/// fast path (no intermediate objects), any other sequence through `convert::read_seq`. Negative or too large
/// values raise OverflowError, non-ints TypeError (the Python layer turns both into a message
/// naming the bad id).
pub(crate) fn ids_into(obj: &Bound<'_, PyAny>, v: &mut Vec<u32>) -> PyResult<()> {
    v.clear();
    if let Ok(list) = obj.cast::<PyList>() {
        let n = list.len();
        toksmith_core::mem::try_reserve(v, n, "the ids").map_err(crate::errors::to_py)?;
        let compact = compact_int_layout(obj.py());
        for i in 0..n {
            if let Some(layout) = compact {
                // The int objects are read in id order (at random): ask for the header of the
                // one IDS_AHEAD places on so that the cache misses overlap.
                if i + IDS_AHEAD < n {
                    // SAFETY: i + IDS_AHEAD < len; a prefetch never faults.
                    let ahead = unsafe {
                        ffi::PyList_GET_ITEM(list.as_ptr(), (i + IDS_AHEAD) as ffi::Py_ssize_t)
                    } as *const u8;
                    toksmith_core::mem::prefetch(ahead);
                    toksmith_core::mem::prefetch(ahead.wrapping_add(24));
                }
                // SAFETY: i < len, and the list is not changed meanwhile (no Python code runs
                // in this loop), so the item is a live object; `layout` is the running
                // CPython's (recognised at start-up), and only exact ints are read through it.
                let read = unsafe {
                    let item = ffi::PyList_GET_ITEM(list.as_ptr(), i as ffi::Py_ssize_t);
                    read_compact_int(item, layout)
                };
                if let Some(x) = read {
                    v.push(x);
                    continue;
                }
            }
            // SAFETY: i < len; PyList_GetItem returns a borrowed reference valid while the
            // list is alive and unmodified (we hold the GIL and do not call back into Python
            // code that could modify it: PyLong conversion of an exact int runs no Python code).
            let x = unsafe {
                let item = ffi::PyList_GET_ITEM(list.as_ptr(), i as ffi::Py_ssize_t);
                if ffi::PyLong_Check(item) == 0 {
                    return Err(pyo3::exceptions::PyTypeError::new_err("ids must be ints"));
                }
                ffi::PyLong_AsLong(item)
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
        // (PyO3's `Vec<u32>` would allocate its room infallibly)
        *v = crate::convert::read_seq::<u32>(obj)?;
        Ok(())
    }
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
/// # Safety
/// `item` must be a valid object pointer and `layout` the running CPython's.
#[inline(always)]
unsafe fn read_compact_int(item: *mut ffi::PyObject, layout: IntLayout) -> Option<u32> {
    if ffi::Py_TYPE(item) != std::ptr::addr_of_mut!(ffi::PyLong_Type) {
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

// ---------------------------------------------------------------------------------------------
// Ids out: lists of shared int objects

/// Take `n` new references to `obj`.
///
/// # Safety
/// The GIL must be held and `obj` must be alive.
#[inline]
unsafe fn incref_by(obj: *mut ffi::PyObject, n: usize) {
    // Py_INCREF is inlined; a run of increments of one address costs about a cycle each here,
    // and it keeps each Python version's refcount rules (immortal objects in 3.12+ are left
    // alone), which writing the field directly would have to copy.
    for _ in 0..n {
        ffi::Py_INCREF(obj);
    }
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
unsafe fn new_ids_list(n: usize) -> *mut ffi::PyObject {
    let list = ffi::PyList_New(n as ffi::Py_ssize_t);
    if !list.is_null() {
        ffi::PyObject_GC_UnTrack(list.cast());
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
unsafe fn list_with_room(n: usize) -> *mut ffi::PyObject {
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
unsafe fn list_items(list: *mut ffi::PyObject) -> *mut *mut ffi::PyObject {
    (*(list as *mut ffi::PyListObject)).ob_item
}

/// Publish the first `n` slots of a list made by [`list_with_room`].
///
/// # Safety
/// Slots 0..n must hold owned references and `n` must not exceed the room.
unsafe fn set_list_len(list: *mut ffi::PyObject, n: usize) {
    (*(list as *mut ffi::PyListObject)).ob_base.ob_size = n as ffi::Py_ssize_t;
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

/// How the ints of an [`IntTable`] are kept alive, as the running CPython allows.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Pin {
    /// Each list slot holds a counted reference (every interpreter; the fallback).
    Counted,
    /// CPython 3.9-3.11: the int's refcount is raised by [`HUGE_PIN`] once, and list slots take
    /// no reference of their own. Freeing a list still lowers the count by one per slot, so the
    /// count drifts down by the number of slots ever written; from 2^60 it cannot reach 0 (a
    /// billion slots freed per second would take 36 years).
    Huge,
    /// CPython 3.12-3.14 (64-bit, with the GIL): the int is made immortal, as the interpreter
    /// does with its own small ints: `Py_INCREF`/`Py_DECREF` leave its count alone, so list
    /// slots need no reference and freeing a list does not write to the int. The value is the
    /// low 32 bits of the refcount that the running version's headers give an immortal object
    /// (`_Py_IMMORTAL_REFCNT` in 3.12-3.13, `_Py_IMMORTAL_INITIAL_REFCNT` in 3.14); its sign
    /// bit is what their `_Py_IsImmortal` tests.
    Immortal(u32),
}

/// What [`Pin::Huge`] adds to a refcount.
const HUGE_PIN: isize = 1 << 60;

/// Vocabularies of more ids than this keep counted ints of their own: the pinned ints are never
/// freed, and this bounds what they can keep (16 MB; the largest common vocabularies have
/// 256k-262k ids).
const PIN_MAX_IDS: usize = 1 << 19;

/// Setting `TOKSMITH_EXACT_INT_REFS=1` makes the tables built from then on count every
/// reference (the fallback path, tested on interpreters that would pin).
const EXACT_REFS_VAR: &str = "TOKSMITH_EXACT_INT_REFS";

/// How the running interpreter lets the ints of a table be pinned: only CPython, 64-bit,
/// little-endian (the low 32 bits of the refcount come first), release builds (a debug build
/// keeps a total of all references that uncounted slots would throw off), with the GIL (a
/// free-threaded build splits the refcount between threads), and versions whose refcount
/// rules are known. Anything else counts every reference.
fn pin_kind(py: Python<'_>) -> Pin {
    static KIND: OnceLock<Pin> = OnceLock::new();
    let kind = *KIND.get_or_init(|| {
        let probe = || -> PyResult<Pin> {
            let sys = py.import("sys")?;
            let name: String = sys.getattr("implementation")?.getattr("name")?.extract()?;
            if name != "cpython"
                || std::mem::size_of::<usize>() != 8
                || cfg!(target_endian = "big")
                || sys.hasattr("gettotalrefcount")?
            {
                return Ok(Pin::Counted);
            }
            let v = py.version_info();
            if (v.major, v.minor) >= (3, 13) {
                let gil_disabled = py
                    .import("sysconfig")?
                    .call_method1("get_config_var", ("Py_GIL_DISABLED",))?
                    .is_truthy()?;
                if gil_disabled {
                    return Ok(Pin::Counted);
                }
            }
            Ok(match (v.major, v.minor) {
                (3, 9..=11) => Pin::Huge,
                (3, 12..=13) => Pin::Immortal(u32::MAX),
                (3, 14) => Pin::Immortal(3 << 30),
                _ => Pin::Counted,
            })
        };
        probe().unwrap_or(Pin::Counted)
    });
    if std::env::var_os(EXACT_REFS_VAR).is_some_and(|v| v == "1") {
        Pin::Counted
    } else {
        kind
    }
}

/// Pin `obj` for good (see [`Pin`]); an object that is immortal already is left alone.
///
/// # Safety
/// The GIL must be held, `obj` must be a live int that this process never frees after this
/// (the pinned table keeps a reference forever), and `kind` must be [`pin_kind`]'s.
unsafe fn pin(obj: *mut ffi::PyObject, kind: Pin) {
    match kind {
        Pin::Counted => {}
        Pin::Huge => *(obj as *mut isize) += HUGE_PIN,
        Pin::Immortal(low) => {
            let refcnt = obj as *mut u32;
            if (*refcnt as i32) >= 0 {
                *refcnt = low;
            }
        }
    }
}

/// The pinned ints of ids `0..len` (their addresses), shared by every pinned table of the
/// process and never freed: tables of the same or smaller vocabularies reuse them, so the
/// memory kept is that of the largest vocabulary's ints (6.4 MB for 200k ids), once.
static PINNED: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());

/// The addresses of the pinned ints of ids `0..n`, made and pinned where missing.
fn pinned_ints(py: Python<'_>, n: usize, kind: Pin) -> PyResult<Vec<usize>> {
    const WHAT: &str = "the ints of a vocabulary's ids";
    // (the GIL is held throughout and no Python code runs under the lock: making an int
    // calls no Python code)
    let mut all = PINNED.lock().unwrap_or_else(|e| e.into_inner());
    if all.len() < n {
        let have = all.len();
        toksmith_core::mem::try_reserve(&mut all, n - have, WHAT).map_err(crate::errors::to_py)?;
        for i in have as u64..n as u64 {
            let obj = i.into_pyobject(py)?.into_any().into_ptr();
            // SAFETY: the GIL is held; `obj` is a live int whose reference `PINNED` keeps
            // forever, and `kind` is `pin_kind`'s.
            unsafe { pin(obj, kind) };
            all.push(obj as usize);
        }
    }
    let mut addrs = toksmith_core::mem::try_vec(n, WHAT).map_err(crate::errors::to_py)?;
    addrs.extend_from_slice(&all[..n]);
    Ok(addrs)
}

/// One Python int per id `0..n`, kept alive by the table, and their addresses for threads that
/// write result lists without the GIL: building a list of ids then costs an incref per element
/// instead of allocating an int (3x faster for big results).
///
/// Where the interpreter allows it ([`Pin`]), the ints are pinned, shared by all tables and
/// never freed: a list slot then takes no reference, so any thread can fill result lists
/// without the GIL and without counting ids, and none of the ints' refcounts is written while
/// a list is built (those writes miss the cache: the ints of a large vocabulary span
/// megabytes).
pub(crate) struct IntTable {
    ints: Vec<Py<PyAny>>,
    /// `addrs[id]` is the address of `ints[id]`
    addrs: Vec<usize>,
    /// the ints are pinned: list slots take no reference
    pinned: bool,
}

impl IntTable {
    /// The ints of ids `0..n` (its tables allocated fallibly: `n` is a vocabulary's size).
    pub(crate) fn new(py: Python<'_>, n: usize) -> PyResult<Self> {
        const WHAT: &str = "the ints of a vocabulary's ids";
        let kind = pin_kind(py);
        let mut ints: Vec<Py<PyAny>> =
            toksmith_core::mem::try_vec(n, WHAT).map_err(crate::errors::to_py)?;
        if kind != Pin::Counted && n <= PIN_MAX_IDS {
            let addrs = pinned_ints(py, n, kind)?;
            // SAFETY: each address is a live int that `PINNED` keeps forever; the table takes a
            // reference of its own to each (so it can hand them out as any other object).
            ints.extend(
                addrs
                    .iter()
                    .map(|&a| unsafe { Py::from_borrowed_ptr(py, a as *mut ffi::PyObject) }),
            );
            return Ok(IntTable {
                ints,
                addrs,
                pinned: true,
            });
        }
        for i in 0..n as u64 {
            // (an int Python cannot allocate is its MemoryError)
            ints.push(i.into_pyobject(py)?.into_any().unbind());
        }
        let mut addrs = toksmith_core::mem::try_vec(n, WHAT).map_err(crate::errors::to_py)?;
        addrs.extend(ints.iter().map(|o| o.as_ptr() as usize));
        Ok(IntTable {
            ints,
            addrs,
            pinned: false,
        })
    }

    /// The ints are pinned: lists of them can be filled on any thread, with no counts.
    pub(crate) fn pinned(&self) -> bool {
        self.pinned
    }

    /// How many ids have an int (every id below it).
    pub(crate) fn len(&self) -> usize {
        self.ints.len()
    }

    /// The int of `id` (panics if `id` is not below [`IntTable::len`]).
    pub(crate) fn get<'py>(&self, py: Python<'py>, id: u32) -> &Bound<'py, PyAny> {
        self.ints[id as usize].bind(py)
    }

    /// Build a Python list from ids, reusing the cached int objects (an id without an int
    /// panics).
    ///
    /// The cost is the refcount write to each int: the ints of a large vocabulary span
    /// megabytes, so most writes miss the L2 cache, and each store waits for its line. The int
    /// of the id [`IDS_AHEAD`] places on is prefetched for writing, so the misses overlap. The
    /// buffer comes unzeroed from [`list_with_room`] (`PyList_New` would clear it first).
    pub(crate) fn ids_to_list<'py>(
        &self,
        py: Python<'py>,
        ids: &[u32],
    ) -> PyResult<Bound<'py, PyList>> {
        let int_addrs = &self.addrs[..];
        // SAFETY: each id indexes `int_addrs` (checked: a bad id panics before the size is
        // set, and the list is then freed with size 0), whose ints the table keeps alive; each
        // slot gets an owned reference (the incref, or the pin) before the size is set, and the
        // list is not visible to Python before it is returned.
        unsafe {
            let list = list_with_room(ids.len());
            if list.is_null() {
                return Err(PyErr::fetch(py));
            }
            let list = Bound::<PyAny>::from_owned_ptr(py, list);
            let items = list_items(list.as_ptr()) as *mut usize;
            let n = ids.len();
            if self.pinned {
                // no refcount to write: only the slots, from the (cached) address table
                for (i, &id) in ids.iter().enumerate() {
                    *items.add(i) = int_addrs[id as usize];
                }
                set_list_len(list.as_ptr(), n);
                return Ok(list.cast_into_unchecked());
            }
            // Two stages: the address of an int is itself a load from a 1.6 MB table (o200k)
            // that misses, and a prefetch of the int waited for it. So the table's slot is
            // requested 2 * IDS_AHEAD ids ahead and the int IDS_AHEAD ahead; the first ones
            // before the loop (short results are most calls).
            let ahead = |k: usize| {
                int_addrs
                    .as_ptr()
                    .wrapping_add(*ids.get_unchecked(k) as usize)
            };
            for k in 0..n.min(2 * IDS_AHEAD) {
                toksmith_core::mem::prefetch(ahead(k));
            }
            for k in 0..n.min(IDS_AHEAD) {
                toksmith_core::mem::prefetch_write(int_addrs[ids[k] as usize] as *const u8);
            }
            for i in 0..n {
                if i + 2 * IDS_AHEAD < n {
                    toksmith_core::mem::prefetch(ahead(i + 2 * IDS_AHEAD));
                }
                if i + IDS_AHEAD < n {
                    toksmith_core::mem::prefetch_write(
                        int_addrs[*ids.get_unchecked(i + IDS_AHEAD) as usize] as *const u8,
                    );
                }
                let obj = int_addrs[*ids.get_unchecked(i) as usize];
                ffi::Py_INCREF(obj as *mut ffi::PyObject);
                *items.add(i) = obj;
            }
            set_list_len(list.as_ptr(), n);
            Ok(list.cast_into_unchecked())
        }
    }

    /// Results of at least this many bytes of text take their references through per-id
    /// counts.
    const COUNTED_REFS_MIN: usize = 1 << 20;

    /// A new list holding the ids that `encode` hands to its sink, at most `cap` of them (more
    /// panics), written straight into the list's item buffer.
    ///
    /// The buffer for `cap` pointers is allocated up front (untouched pages cost nothing) and
    /// the ids are written into it as int pointers by the thread that encodes, with the GIL
    /// released; the refcounts are raised afterwards with the GIL held, the buffer is shrunk to
    /// size and becomes the list's. This skips an id vector and its copy: on a 10 MB text that
    /// vector alone is 16-40 MB of fresh memory, and new pages cost about 0.8 ms per MB here.
    pub(crate) fn encode_list<'py, E: From<PyErr> + Send>(
        &self,
        py: Python<'py>,
        cap: usize,
        encode: impl FnOnce(&mut dyn FnMut(&[u32])) -> Result<(), E> + Send,
    ) -> Result<Bound<'py, PyList>, E> {
        // SAFETY: the list (size 0 until published) owns the buffer, so dropping it on an error
        // or a panic frees the buffer; only `count` slots (at most `cap`, asserted) are
        // written, each with the address of a live int of the table (the index is checked),
        // whose refcount is raised (GIL held) before the size is set, unless it is pinned.
        unsafe {
            let list = list_with_room(cap.max(1));
            if list.is_null() {
                return Err(PyErr::fetch(py).into());
            }
            let list = Bound::<PyAny>::from_owned_ptr(py, list);
            let addr = list_items(list.as_ptr()) as usize;
            // A long result counts how often each id occurs while it is written, then raises
            // each int's refcount once: reading the whole list back to incref item by item
            // cost about a tenth of a 10 MB encode whose list no longer fits in the caches.
            let counted = !self.pinned && cap >= Self::COUNTED_REFS_MIN && cap <= u32::MAX as usize;
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
                        *slots.add(count) = self.addrs[id as usize];
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
            } else if !self.pinned {
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
}

/// A list of `(start, end)` tuples. The tuples hold only ints, so they are left untracked by
/// the cyclic garbage collector (it would walk them all, collection after collection, while a
/// long list is built), and a start equal to the previous end shares that end's int object:
/// 261k spans (1 MB of English, cl100k): 31-55 ms with `PyList::new`, 23-34 ms so.
pub(crate) fn spans_to_list<'py>(
    py: Python<'py>,
    spans: &[(usize, usize)],
) -> PyResult<Bound<'py, PyList>> {
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

// ---------------------------------------------------------------------------------------------
// The result lists of a batch, filled by several threads (see batch.rs)

/// Tells apart the [`IdLists`] of concurrent batches, so counts of one never publish another's.
static NEXT_BATCH: AtomicU64 = AtomicU64::new(1);

/// Per-id counts of the slots one thread wrote into the lists of one [`IdLists`]; the lists'
/// references are taken from them when they are published. Only [`RoomLists::fill`] adds to
/// them (the first fill sizes them), and only for a table whose ints are not pinned.
#[derive(Default)]
pub(crate) struct IdCounts {
    batch: u64,
    counts: Vec<u32>,
}

impl IdCounts {
    pub(crate) fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }
}

/// The result lists of one batch (one per document) while they are made, with the GIL held on
/// the calling thread: complete lists, or lists with room that any thread fills
/// ([`RoomLists`]) and that are published by [`IdLists::finish`]. Dropped before that (an
/// error), it frees every list made so far.
pub(crate) struct IdLists<'py, 't> {
    py: Python<'py>,
    table: &'t IntTable,
    batch: u64,
    /// list addresses, owned references (0: not made yet), and each one's number of ids
    made: RefCell<(Vec<usize>, Vec<usize>)>,
    /// ids the lists with room have room for (to be filled and counted before publishing)
    room: std::cell::Cell<u64>,
    /// lists with room not filled yet
    unfilled: AtomicUsize,
    /// ids written into lists with room (the check of a pinned table's lists, which have no
    /// counts)
    written: AtomicU64,
}

/// Lists with room for the ids of a range of documents (made by [`IdLists::make_room`]), to be
/// filled by any one thread: only this value writes them, and `fill` consumes it. It borrows
/// the `IdLists`, so the lists can be neither freed nor published while it exists.
pub(crate) struct RoomLists<'l> {
    table: &'l IntTable,
    batch: u64,
    /// (address, room) of each list, in document order
    lists: Vec<(usize, usize)>,
    unfilled: &'l AtomicUsize,
    written: &'l AtomicU64,
}

impl<'py, 't> IdLists<'py, 't> {
    /// Room for the lists of `n` documents, built from the ints of `table` (`MemoryError` when
    /// refused).
    pub(crate) fn new(py: Python<'py>, table: &'t IntTable, n: usize) -> PyResult<Self> {
        let zeros = || -> PyResult<Vec<usize>> {
            let mut v = toksmith_core::mem::try_vec(n, "the lists of a batch")
                .map_err(crate::errors::to_py)?;
            v.resize(n, 0);
            Ok(v)
        };
        Ok(IdLists {
            py,
            table,
            batch: NEXT_BATCH.fetch_add(1, Ordering::Relaxed),
            made: RefCell::new((zeros()?, zeros()?)),
            room: std::cell::Cell::new(0),
            unfilled: AtomicUsize::new(0),
            written: AtomicU64::new(0),
        })
    }

    /// Keep `list` (an owned reference) as document `k`'s, of `n` ids. A document's list is
    /// made once: a list with room may be being filled, so it is never replaced (the new one is
    /// freed and this fails).
    fn set(&self, k: usize, list: usize, n: usize) -> PyResult<()> {
        let mut made = self.made.borrow_mut();
        if made.0[k] != 0 {
            // SAFETY: the GIL is held (`self.py`); `list` is an owned reference no one else has
            unsafe { ffi::Py_DECREF(list as *mut ffi::PyObject) };
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "internal error: a batch document's list was made twice",
            ));
        }
        made.0[k] = list;
        made.1[k] = n;
        Ok(())
    }

    /// Document `k`'s complete list, from its ids.
    pub(crate) fn make_complete(&self, k: usize, ids: &[u32]) -> PyResult<()> {
        let list = self.table.ids_to_list(self.py, ids)?;
        self.set(k, list.into_ptr() as usize, ids.len())
    }

    /// Lists with room for documents `first..`, `ends[i]` being where the ids of document
    /// `first + i` end in the range's id buffer.
    pub(crate) fn make_room(&self, first: usize, ends: &[usize]) -> PyResult<RoomLists<'_>> {
        // (counted first: if making them fails half-way, `finish` refuses)
        self.unfilled.fetch_add(1, Ordering::Relaxed);
        let mut lists = toksmith_core::mem::try_vec(ends.len(), "the lists of a batch")
            .map_err(crate::errors::to_py)?;
        let mut at = 0;
        for (k, &end) in (first..).zip(ends) {
            let n = end - at;
            // SAFETY: the GIL is held (`self.py`); the list stays at size 0 until `finish`,
            // which publishes it only once it is filled
            let l = unsafe { list_with_room(n) };
            if l.is_null() {
                return Err(PyErr::fetch(self.py));
            }
            self.set(k, l as usize, n)?;
            self.room.set(self.room.get() + n as u64);
            lists.push((l as usize, n));
            at = end;
        }
        Ok(RoomLists {
            table: self.table,
            batch: self.batch,
            lists,
            unfilled: &self.unfilled,
            written: &self.written,
        })
    }

    /// Raise the refcounts by `counts` (those of every thread that filled lists; none for a
    /// pinned table) and publish the lists in one list. Fails (freeing them) unless every list
    /// was made and filled and the counts (pinned: the ids written) add up to their room.
    pub(crate) fn finish(self, counts: &[IdCounts]) -> PyResult<Bound<'py, PyList>> {
        let counts: Vec<&[u32]> = counts
            .iter()
            .filter(|c| !c.is_empty())
            .map(|c| {
                assert!(c.batch == self.batch, "counts of another batch");
                &c.counts[..]
            })
            .collect();
        let complete = {
            let made = self.made.borrow();
            made.0.iter().all(|&l| l != 0)
        };
        let not_written = || {
            pyo3::exceptions::PyRuntimeError::new_err(
                "internal error: a batch's lists were not all written",
            )
        };
        if !complete || self.unfilled.load(Ordering::Acquire) != 0 {
            return Err(not_written());
        }
        // SAFETY: the GIL is held (`self.py`). The references taken are those the counts say the
        // lists' slots hold (none for pinned ints, which slots hold without one); only when
        // they add up to the ids written (every list with room was filled, and only
        // `RoomLists::fill` counts) are the lists published, each fully written, so setting its
        // size publishes owned references. Otherwise the lists are freed at size 0 (the
        // references taken are leaked, never too few). The outer list takes over the lists'
        // references.
        unsafe {
            let outer = Bound::<PyAny>::from_owned_ptr_or_err(
                self.py,
                ffi::PyList_New(self.made.borrow().0.len() as ffi::Py_ssize_t),
            )?;
            let mut counted = 0u64;
            if self.table.pinned {
                assert!(counts.is_empty(), "counts of a pinned table's ids");
                counted = self.written.load(Ordering::Acquire);
            } else if !counts.is_empty() {
                for (id, obj) in self.table.ints.iter().enumerate() {
                    let c: u64 = counts.iter().map(|v| v[id] as u64).sum();
                    incref_by(obj.as_ptr(), c as usize);
                    counted += c;
                }
            }
            if counted != self.room.get() {
                return Err(not_written());
            }
            let (lists, lens) = std::mem::take(&mut *self.made.borrow_mut());
            for (k, l) in lists.into_iter().enumerate() {
                let l = l as *mut ffi::PyObject;
                set_list_len(l, lens[k]);
                ffi::PyList_SET_ITEM(outer.as_ptr(), k as ffi::Py_ssize_t, l);
            }
            Ok(outer.cast_into_unchecked())
        }
    }
}

impl Drop for IdLists<'_, '_> {
    /// On an error: complete lists are freed as usual; lists with room still have size 0, so
    /// freeing them frees their buffers and nothing else.
    fn drop(&mut self) {
        for &l in self.made.get_mut().0.iter().filter(|&&l| l != 0) {
            // SAFETY: `self.py` proves the GIL is held; each entry is an owned reference.
            unsafe { ffi::Py_DECREF(l as *mut ffi::PyObject) };
        }
    }
}

impl RoomLists<'_> {
    /// Write the ints of `ids` into the lists (`ends[i]`: where the ids of list `i` end; each
    /// list gets exactly as many as it has room for, else this panics) and count them in
    /// `counts`. Needs no GIL.
    pub(crate) fn fill(self, ids: &[u32], ends: &[usize], counts: &mut IdCounts) {
        let pinned = self.table.pinned;
        if counts.counts.is_empty() && !pinned {
            *counts = IdCounts {
                batch: self.batch,
                counts: vec![0; self.table.len()],
            };
        }
        assert!(
            pinned || counts.batch == self.batch,
            "counts of another batch"
        );
        assert_eq!(ends.len(), self.lists.len(), "one end per list");
        let mut at = 0;
        for (&(list, room), &end) in self.lists.iter().zip(ends) {
            let part = &ids[at..end];
            assert_eq!(part.len(), room, "ids for the room of a list");
            // SAFETY: `list` was made by `list_with_room` with room for exactly `room` ids and
            // is not visible to Python (size 0) until `finish`, which cannot run while `self`
            // borrows the `IdLists`; only this value writes it. Each slot gets the address of a
            // live int of the table (the index is checked); the reference is taken in `finish`
            // from the counts, or is the pin.
            unsafe {
                let items = list_items(list as *mut ffi::PyObject) as *mut usize;
                for (i, &id) in part.iter().enumerate() {
                    *items.add(i) = self.table.addrs[id as usize];
                }
            }
            if !pinned {
                count_ids(&mut counts.counts, part);
            }
            at = end;
        }
        self.written.fetch_add(at as u64, Ordering::Relaxed);
        self.unfilled.fetch_sub(1, Ordering::Release);
    }
}
