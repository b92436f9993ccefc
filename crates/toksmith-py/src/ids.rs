//! Module functions that turn ids into text or bytes and back (`toksmith encode`/`decode`'s
//! formats), without a Python int per id where they can.

use crate::cpython::{self, ids_into};
use crate::errors::to_py;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use toksmith_core::mem::try_reserve;

/// Room in `out` for `n` more bytes, reserved fallibly so that the formatters' own `reserve`
/// (for at most as much) finds it there.
fn room(out: &mut Vec<u8>, n: usize) -> PyResult<()> {
    try_reserve(out, n, "the formatted ids").map_err(to_py)
}

/// The regex text of a named pattern, or None.
/// The ids in decimal with `sep` between them, as bytes (what `" ".join(map(str, ids))`
/// encodes to, for `sep=b" "`).
#[pyfunction]
pub(crate) fn format_ids<'py>(
    py: Python<'py>,
    ids: &Bound<'py, PyAny>,
    sep: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    let mut v = Vec::new();
    ids_into(ids, &mut v)?;
    let mut out = Vec::new();
    room(&mut out, v.len().saturating_mul(10 + sep.len()))?;
    py.detach(|| toksmith_core::ids_format::ids_to_text(&v, sep, &mut out));
    cpython::bytes_from(py, &out)
}

/// One line per id list: `open`, the ids in decimal with `sep` between them, `close`, `\n`
/// (`toksmith encode --lines` writes a batch of lines with one call).
#[pyfunction]
pub(crate) fn format_id_lines<'py>(
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
        let line = v.len().saturating_mul(10 + sep.len());
        room(&mut out, line.saturating_add(open.len() + close.len() + 1))?;
        out.extend_from_slice(open);
        toksmith_core::ids_format::ids_to_text(&v, sep, &mut out);
        out.extend_from_slice(close);
        out.push(b'\n');
    }
    cpython::bytes_from(py, &out)
}

/// Ids from whitespace-separated decimal text, or None if a word is not plain digits or is
/// over 32 bits (the caller then parses it with `int`, for the exact error).
#[pyfunction]
pub(crate) fn parse_ids<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Option<Bound<'py, PyList>>> {
    // (at most one id per two bytes but the last: the parser never grows this room)
    let mut out = Vec::new();
    try_reserve(&mut out, data.len() / 2 + 1, "the parsed ids").map_err(to_py)?;
    if !py.detach(|| toksmith_core::ids_format::parse_text_ids(data, &mut out)) {
        return Ok(None);
    }
    cpython::int_list(py, &out).map(Some)
}

/// The ids as little-endian integers of `width` bytes (2 or 4).
#[pyfunction]
pub(crate) fn pack_ids<'py>(
    py: Python<'py>,
    ids: &Bound<'py, PyAny>,
    width: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let mut v = Vec::new();
    ids_into(ids, &mut v)?;
    let mut out = Vec::new();
    room(&mut out, v.len().saturating_mul(width.min(4)))?;
    toksmith_core::ids_format::ids_to_le(&v, width, &mut out).map_err(to_py)?;
    cpython::bytes_from(py, &out)
}
