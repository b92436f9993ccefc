//! `StreamState`: the state of a streaming decoder (`toksmith.StreamDecoder`).

use crate::bpe::Bpe;
use crate::cpython;
use pyo3::prelude::*;

/// Counts unique chunks of a corpus (see `toksmith_core::train`).
/// A streaming decoder's state: the bytes of a character that is not complete yet (at most 3).
///
/// `push` decodes the pending bytes plus the token's with CPython's stateful UTF-8 decoder, the
/// one `codecs`' incremental decoder calls, so the text and the `errors` handling are exactly
/// those of `codecs.getincrementaldecoder("utf-8")(errors)`, in one native call per token
/// instead of three Python-level ones.
#[pyclass(module = "toksmith._core")]
pub(crate) struct StreamState {
    bpe: Py<Bpe>,
    pending: Vec<u8>,
    errors: std::ffi::CString,
    /// `bad_id(ids)` returns the exception to raise for an id that is not a token
    bad_id: Py<PyAny>,
}

impl StreamState {
    /// Decode the pending bytes followed by `more`; `last`: no character continues after them.
    /// On an error (`errors="strict"`) the state is left as it was.
    fn decode<'py>(
        &mut self,
        py: Python<'py>,
        more: &[u8],
        last: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let joined;
        let data: &[u8] = if self.pending.is_empty() {
            more
        } else {
            joined = [self.pending.as_slice(), more].concat();
            &joined
        };
        let (s, consumed) = cpython::decode_utf8_stateful(py, data, &self.errors, last)?;
        let rest = &data[consumed..];
        self.pending = rest.to_vec();
        Ok(s)
    }
}

#[pymethods]
impl StreamState {
    #[new]
    fn new(bpe: Py<Bpe>, errors: &str, bad_id: Py<PyAny>) -> PyResult<Self> {
        let errors = std::ffi::CString::new(errors).map_err(|_| {
            pyo3::exceptions::PyValueError::new_err(
                "errors must not contain NUL characters: pass an error handler name such as 'replace'",
            )
        })?;
        Ok(StreamState {
            bpe,
            pending: Vec::new(),
            errors,
            bad_id,
        })
    }

    /// The text completed by `token`, an id ("" while a character is still split). The
    /// argument is named `token`, as in `StreamDecoder.push(token)`.
    fn push<'py>(
        &mut self,
        py: Python<'py>,
        token: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let bpe = self.bpe.clone_ref(py);
        let bytes = token
            .extract::<u32>()
            .ok()
            .and_then(|i| bpe.get().enc.vocab.token_bytes(i).ok());
        match bytes {
            Some(b) => self.decode(py, b, false),
            None => Err(PyErr::from_value(
                self.bad_id.bind(py).call1((vec![token.clone()],))?,
            )),
        }
    }

    /// What is left (bytes that never completed a character go through `errors`); the state
    /// is then empty.
    fn flush<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.decode(py, &[], true)
    }

    /// An independent state holding the same pending bytes (`copy.copy` of a decoder).
    fn copy(&self, py: Python<'_>) -> Self {
        StreamState {
            bpe: self.bpe.clone_ref(py),
            pending: self.pending.clone(),
            errors: self.errors.clone(),
            bad_id: self.bad_id.clone_ref(py),
        }
    }

    /// The bytes of a character not yet complete.
    #[getter]
    fn pending<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        pyo3::types::PyBytes::new(py, &self.pending)
    }
}
