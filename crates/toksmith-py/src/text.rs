//! UTF-8 views of Python strings.
//!
//! CPython stores a `str` as one byte, two bytes or four bytes per character. Pure-ASCII strings
//! are already UTF-8 and are borrowed as they are, as is a UTF-8 copy the string may already
//! cache. Otherwise PyO3's `&str` extraction would call CPython's encoder (about 0.75 GB/s here,
//! with the GIL held, and the copy then stays attached to the string for its lifetime); the
//! converters below have an eight-characters-at-a-time ASCII path, run with the GIL released
//! (in parallel for batches) and leave the string as it was.

use pyo3::exceptions::PyUnicodeEncodeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::borrow::Cow;

/// Where the UTF-8 of one `str` comes from.
pub enum StrView<'a> {
    Utf8(&'a str),
    /// CPython's fixed-width storage: `kind` bytes per character, `len` characters.
    Wide {
        kind: u32,
        data: *const u8,
        len: usize,
    },
}

// SAFETY: a `StrView` points into an immutable `str` object that the caller keeps alive (it
// holds a reference for as long as the view is used); reading it from another thread is safe.
unsafe impl Send for StrView<'_> {}
unsafe impl Sync for StrView<'_> {}

/// A lone surrogate (not encodable as UTF-8) was found at this character index.
pub struct Surrogate(pub usize);

/// The `UnicodeEncodeError` CPython's encoder would raise for a lone surrogate in `text`; the
/// Python layer catches it and retries with surrogates replaced, like tiktoken.
pub fn surrogate_error(text: &Bound<'_, PyString>, Surrogate(at): Surrogate) -> PyErr {
    PyUnicodeEncodeError::new_err((
        "utf-8",
        text.clone().unbind(),
        at,
        at + 1,
        "surrogates not allowed",
    ))
}

pub fn view<'a>(s: &'a Bound<'_, PyString>) -> PyResult<StrView<'a>> {
    let p = s.as_ptr();
    // SAFETY: `p` is a live `str` (checked by the type of `s`); the macros below only read its
    // header, and the data they point to lives as long as the object.
    unsafe {
        if ffi::PyUnicode_IS_COMPACT(p) != 0 {
            let len = ffi::PyUnicode_GET_LENGTH(p) as usize;
            if ffi::PyUnicode_IS_ASCII(p) != 0 {
                let bytes = std::slice::from_raw_parts(ffi::PyUnicode_DATA(p) as *const u8, len);
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
            return Ok(StrView::Wide {
                kind: ffi::PyUnicode_KIND(p),
                data: ffi::PyUnicode_DATA(p) as *const u8,
                len,
            });
        }
    }
    Ok(StrView::Utf8(s.to_str()?))
}

impl<'a> StrView<'a> {
    /// The text as UTF-8 (borrowed when it already is).
    pub fn utf8(&self) -> Result<Cow<'a, str>, Surrogate> {
        match *self {
            StrView::Utf8(s) => Ok(Cow::Borrowed(s)),
            StrView::Wide { kind, len, .. } => {
                let mut out = String::with_capacity(len * kind as usize + 8);
                self.append_utf8(0, len, &mut out)?;
                Ok(Cow::Owned(out))
            }
        }
    }

    /// Most UTF-8 bytes the text can have (exact for a `Utf8` view).
    pub fn max_utf8_len(&self) -> usize {
        match *self {
            StrView::Utf8(s) => s.len(),
            // one-byte storage: up to 2 UTF-8 bytes per character; two-byte: 3; four-byte: 4
            StrView::Wide { kind, len, .. } => len * (kind as usize + 1).min(4),
        }
    }

    /// Run `f` on the text as UTF-8, converting a `Wide` view into `buf` (cleared first), so a
    /// caller that converts many texts reuses one buffer.
    pub fn with_utf8_in<T>(
        &self,
        buf: &mut String,
        f: impl FnOnce(&str) -> T,
    ) -> Result<T, Surrogate> {
        match *self {
            StrView::Utf8(s) => Ok(f(s)),
            StrView::Wide { len, .. } => {
                buf.clear();
                self.append_utf8(0, len, buf)?;
                Ok(f(buf))
            }
        }
    }

    /// Append the UTF-8 of characters `from..to` of a `Wide` view to `out`.
    pub fn append_utf8(&self, from: usize, to: usize, out: &mut String) -> Result<(), Surrogate> {
        let StrView::Wide { kind, data, len } = *self else {
            return Ok(());
        };
        assert!(from <= to && to <= len);
        // SAFETY: the converters append well-formed UTF-8 only (surrogates are rejected).
        let out = unsafe { out.as_mut_vec() };
        // SAFETY: CPython guarantees `len` characters of `kind` bytes at `data`, aligned.
        unsafe {
            match kind {
                1 => latin1_to_utf8(&std::slice::from_raw_parts(data, len)[from..to], out),
                2 => wide_to_utf8(
                    &std::slice::from_raw_parts(data as *const u16, len)[from..to],
                    from,
                    out,
                )?,
                _ => wide_to_utf8(
                    &std::slice::from_raw_parts(data as *const u32, len)[from..to],
                    from,
                    out,
                )?,
            }
        }
        Ok(())
    }
}

fn latin1_to_utf8(src: &[u8], out: &mut Vec<u8>) {
    out.reserve(src.len() * 2);
    let mut chunks = src.chunks_exact(8);
    for c in &mut chunks {
        if u64::from_le_bytes(c.try_into().unwrap()) & 0x8080_8080_8080_8080 == 0 {
            out.extend_from_slice(c);
        } else {
            c.iter().for_each(|&b| push_latin1(out, b));
        }
    }
    chunks.remainder().iter().for_each(|&b| push_latin1(out, b));
}

#[inline(always)]
fn push_latin1(out: &mut Vec<u8>, b: u8) {
    if b < 0x80 {
        out.push(b);
    } else {
        out.extend_from_slice(&[0xC0 | (b >> 6), 0x80 | (b & 0x3F)]);
    }
}

/// Two- or four-byte code units.
trait Unit: Copy {
    fn cp(self) -> u32;
}
impl Unit for u16 {
    #[inline(always)]
    fn cp(self) -> u32 {
        self as u32
    }
}
impl Unit for u32 {
    #[inline(always)]
    fn cp(self) -> u32 {
        self
    }
}

/// `first`: the index of `src[0]` in the whole string (for error positions).
fn wide_to_utf8<U: Unit>(src: &[U], first: usize, out: &mut Vec<u8>) -> Result<(), Surrogate> {
    out.reserve(src.len() * 3 + 8);
    let mut chunks = src.chunks_exact(8);
    let mut at = first;
    for c in &mut chunks {
        if c.iter().fold(0u32, |a, u| a | u.cp()) < 0x80 {
            out.extend(c.iter().map(|u| u.cp() as u8));
        } else {
            for (k, u) in c.iter().enumerate() {
                push_cp(out, u.cp()).map_err(|_| Surrogate(at + k))?;
            }
        }
        at += 8;
    }
    for (k, u) in chunks.remainder().iter().enumerate() {
        push_cp(out, u.cp()).map_err(|_| Surrogate(at + k))?;
    }
    Ok(())
}

#[inline(always)]
fn push_cp(out: &mut Vec<u8>, cp: u32) -> Result<(), ()> {
    match cp {
        0..=0x7F => out.push(cp as u8),
        0x80..=0x7FF => out.extend_from_slice(&[0xC0 | (cp >> 6) as u8, 0x80 | (cp & 0x3F) as u8]),
        0xD800..=0xDFFF => return Err(()),
        0x800..=0xFFFF => out.extend_from_slice(&[
            0xE0 | (cp >> 12) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]),
        _ => out.extend_from_slice(&[
            0xF0 | (cp >> 18) as u8,
            0x80 | ((cp >> 12) & 0x3F) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]),
    }
    Ok(())
}

/// Below this many bytes `decode` leaves UTF-8 to CPython's decoder (as fast for short text).
pub const FAST_STR_MIN: usize = 256;

/// A new `str` from valid UTF-8 whose [`Layout`](toksmith_core::utf8::Layout) is known: the
/// characters are written straight into the string's own storage, with the GIL released.
pub fn str_from_utf8<'py>(
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
pub fn bytes_from<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
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
