//! UTF-8 views of Python strings.
//!
//! CPython stores a `str` as one byte, two bytes or four bytes per character. Pure-ASCII strings
//! are already UTF-8 and are borrowed as they are, as is a UTF-8 copy the string may already
//! cache. Otherwise PyO3's `&str` extraction would call CPython's encoder (about 0.75 GB/s here,
//! with the GIL held, and the copy then stays attached to the string for its lifetime); the
//! converters (in cpython.rs, with the reads of the storage) have an eight-characters-at-a-time
//! ASCII path, run with the GIL released (in parallel for batches) and leave the string as it
//! was.

use crate::cpython;
use pyo3::exceptions::PyUnicodeEncodeError;
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::borrow::Cow;

pub(crate) use crate::cpython::{bytes_from, str_from_utf8};

/// Where the UTF-8 of one `str` comes from.
pub enum StrView<'a> {
    Utf8(&'a str),
    /// CPython's fixed-width storage.
    Wide(Wide<'a>),
}

/// The characters of a `str` in CPython's fixed-width storage: one, two or four bytes each.
#[derive(Clone, Copy)]
pub enum Wide<'a> {
    Ucs1(&'a [u8]),
    Ucs2(&'a [u16]),
    Ucs4(&'a [u32]),
}

impl Wide<'_> {
    /// The number of characters.
    pub fn len(&self) -> usize {
        match self {
            Wide::Ucs1(s) => s.len(),
            Wide::Ucs2(s) => s.len(),
            Wide::Ucs4(s) => s.len(),
        }
    }

    /// Bytes per character.
    pub fn kind(&self) -> usize {
        match self {
            Wide::Ucs1(_) => 1,
            Wide::Ucs2(_) => 2,
            Wide::Ucs4(_) => 4,
        }
    }
}

/// Why a `str` could not be converted to UTF-8.
pub enum ToUtf8Error {
    /// A lone surrogate (not encodable as UTF-8) at this character index.
    Surrogate(usize),
    /// The room for the UTF-8 copy was refused ([`toksmith_core::Error::OutOfMemory`]).
    Memory(toksmith_core::Error),
}

/// The Python exception for a failed conversion of `text`: for a lone surrogate, the
/// `UnicodeEncodeError` CPython's encoder would raise (the Python layer catches it and retries
/// with surrogates replaced, like tiktoken); else `MemoryError`.
pub fn utf8_error(text: &Bound<'_, PyString>, e: ToUtf8Error) -> PyErr {
    match e {
        ToUtf8Error::Surrogate(at) => PyUnicodeEncodeError::new_err((
            "utf-8",
            text.clone().unbind(),
            at,
            at + 1,
            "surrogates not allowed",
        )),
        ToUtf8Error::Memory(e) => crate::errors::to_py(e),
    }
}

pub fn view<'a>(s: &'a Bound<'_, PyString>) -> PyResult<StrView<'a>> {
    cpython::str_view(s)
}

/// Run `f` on the UTF-8 of `text` with the GIL released (converting it there if CPython does
/// not hold it as UTF-8 already). The copy is allocated fallibly, for as many bytes as the text
/// can need: a text too long for memory is a `MemoryError`, not an abort.
pub fn with_utf8<T: Send>(
    py: Python<'_>,
    text: &Bound<'_, PyString>,
    f: impl FnOnce(&str) -> T + Send,
) -> PyResult<T> {
    released_utf8(py, text, view(text)?, f)
}

/// [`with_utf8`] on the view `v` of `text`.
fn released_utf8<T: Send>(
    py: Python<'_>,
    text: &Bound<'_, PyString>,
    v: StrView<'_>,
    f: impl FnOnce(&str) -> T + Send,
) -> PyResult<T> {
    match v {
        StrView::Utf8(s) => Ok(py.detach(|| f(s))),
        StrView::Wide(w) => {
            let mut buf = String::new();
            v.reserve_utf8(0, w.len(), &mut buf)
                .map_err(|e| utf8_error(text, e))?;
            py.detach(|| {
                v.append_utf8(0, w.len(), &mut buf)?;
                Ok(f(&buf))
            })
            .map_err(|e| utf8_error(text, e))
        }
    }
}

/// Texts of at most this many UTF-8 bytes (at most: a `Wide` view counts its most) are
/// encoded with the GIL held by [`with_utf8_short`]: releasing and taking back the GIL is two
/// lock round trips on CPython's GIL mutex and its condition variable, a fixed cost per call
/// that is a few percent of a short text's encode and nothing next to a long one's, while
/// a text this short holds other Python threads up for microseconds only.
pub const HOLD_GIL_MAX: usize = 1024;

/// [`with_utf8`] for texts of any length: one of at most [`HOLD_GIL_MAX`] bytes runs `f` with
/// the GIL held, converted (if it is not UTF-8 already) into this thread's buffer, so a short
/// call allocates nothing; longer ones go to [`with_utf8`].
pub fn with_utf8_short<T: Send>(
    py: Python<'_>,
    text: &Bound<'_, PyString>,
    f: impl FnOnce(&str) -> T + Send,
) -> PyResult<T> {
    let v = view(text)?;
    if v.max_utf8_len() > HOLD_GIL_MAX {
        return released_utf8(py, text, v, f);
    }
    thread_local! {
        static BUF: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    }
    BUF.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => v.with_utf8_in(&mut buf, f),
        // (re-entered: cannot happen, `f` runs no Python code)
        Err(_) => v.with_utf8_in(&mut String::new(), f),
    })
    .map_err(|e| utf8_error(text, e))
}

impl<'a> StrView<'a> {
    /// The text as UTF-8 (borrowed when it already is).
    pub fn utf8(&self) -> Result<Cow<'a, str>, ToUtf8Error> {
        match *self {
            StrView::Utf8(s) => Ok(Cow::Borrowed(s)),
            StrView::Wide(w) => {
                let mut out = String::new();
                self.append_utf8(0, w.len(), &mut out)?;
                Ok(Cow::Owned(out))
            }
        }
    }

    /// Most UTF-8 bytes the text can have (exact for a `Utf8` view).
    pub fn max_utf8_len(&self) -> usize {
        match *self {
            StrView::Utf8(s) => s.len(),
            // one-byte storage: up to 2 UTF-8 bytes per character; two-byte: 3; four-byte: 4
            StrView::Wide(w) => w.len() * (w.kind() + 1).min(4),
        }
    }

    /// Run `f` on the text as UTF-8, converting a `Wide` view into `buf` (cleared first), so a
    /// caller that converts many texts reuses one buffer.
    pub fn with_utf8_in<T>(
        &self,
        buf: &mut String,
        f: impl FnOnce(&str) -> T,
    ) -> Result<T, ToUtf8Error> {
        match *self {
            StrView::Utf8(s) => Ok(f(s)),
            StrView::Wide(w) => {
                buf.clear();
                self.append_utf8(0, w.len(), buf)?;
                Ok(f(buf))
            }
        }
    }

    /// Append the UTF-8 of characters `from..to` of a `Wide` view to `out`, its room
    /// reserved fallibly first ([`StrView::reserve_utf8`]).
    pub fn append_utf8(&self, from: usize, to: usize, out: &mut String) -> Result<(), ToUtf8Error> {
        let StrView::Wide(w) = *self else {
            return Ok(());
        };
        assert!(from <= to && to <= w.len());
        self.reserve_utf8(from, to, out)?;
        cpython::append_wide_utf8(w, from, to, out).map_err(ToUtf8Error::Surrogate)
    }

    /// Room in `out` for the UTF-8 of characters `from..to` (as many bytes as they can need,
    /// so the converters never grow `out` themselves), or a `MemoryError`-to-be.
    pub fn reserve_utf8(
        &self,
        from: usize,
        to: usize,
        out: &mut String,
    ) -> Result<(), ToUtf8Error> {
        let per_char = match *self {
            StrView::Utf8(_) => 1,
            // one-byte storage: up to 2 UTF-8 bytes per character; two-byte: 3; four-byte: 4
            StrView::Wide(w) => (w.kind() + 1).min(4),
        };
        // (+ 8: the converters ask for that much slack beyond the characters)
        let most = (to - from).saturating_mul(per_char).saturating_add(8);
        out.try_reserve(most)
            .map_err(|_| ToUtf8Error::Memory(toksmith_core::mem::oom("the text as UTF-8", most, 1)))
    }
}

/// Below this many bytes `decode` leaves UTF-8 to CPython's decoder (as fast for short text).
pub const FAST_STR_MIN: usize = 256;
