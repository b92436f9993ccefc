//! Module functions that turn ids into text or bytes and back (`toksmith encode`/`decode`'s
//! formats), without a Python int per id where they can.

use crate::cpython::ids_into;
use crate::errors::to_py;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

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
    py.detach(|| toksmith_core::ids_format::ids_to_text(&v, sep, &mut out));
    Ok(PyBytes::new(py, &out))
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
pub(crate) fn parse_ids(py: Python<'_>, data: &[u8]) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    py.detach(|| toksmith_core::ids_format::parse_text_ids(data, &mut out))
        .then_some(out)
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
    toksmith_core::ids_format::ids_to_le(&v, width, &mut out).map_err(to_py)?;
    Ok(PyBytes::new(py, &out))
}
