//! A Python binary file object (anything with `readinto`, e.g. `lzma.open(path)`) as a Rust
//! `Read`, so the trainer's block reader can count a decompressed stream without the whole text
//! ever being a Python `str`.

use crate::cpython;
use pyo3::prelude::*;
use pyo3::types::PyByteArray;
use std::io::{Error, Read};

/// Reads through the object's `readinto`, taking the GIL for each call (the caller has released
/// it). A Python exception is kept in `failure` and reported to the reader as an I/O error; the
/// glue re-raises the original exception afterwards.
pub struct PyReader {
    file: Py<PyAny>,
    failure: Option<PyErr>,
}

impl PyReader {
    pub fn new(file: Py<PyAny>) -> Self {
        PyReader {
            file,
            failure: None,
        }
    }

    /// The Python exception that ended the read, if one did.
    pub fn take_failure(&mut self) -> Option<PyErr> {
        self.failure.take()
    }
}

impl Read for PyReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let res = Python::attach(|py| -> PyResult<usize> {
            // A fresh bytearray per call: `readinto` may keep no reference to it, and copying
            // out of it is cheap next to decompression.
            let chunk = PyByteArray::new_with(py, buf.len(), |_| Ok(()))?;
            let got = self.file.bind(py).call_method1("readinto", (&chunk,))?;
            let n: usize = if got.is_none() { 0 } else { got.extract()? };
            if n > buf.len() {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "readinto() returned {n}, more than the {} bytes asked for",
                    buf.len()
                )));
            }
            Ok(cpython::copy_from_bytearray(&chunk, &mut buf[..n]))
        });
        res.map_err(|e| {
            let msg = e.to_string();
            self.failure = Some(e);
            Error::other(msg)
        })
    }
}
