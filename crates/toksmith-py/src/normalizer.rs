//! `Normalizer`: a Hugging Face `tokenizer.json` normalizer (NFC, NFKC, Lowercase, Replace,
//! Sequence...) for the byte-level `Bpe` (`Bpe.encode_normalized`), from
//! `toksmith_core::normalizers`. The GIL is released while it runs.

use crate::errors::to_py;
use pyo3::prelude::*;
use toksmith_core::normalizers;

#[pyclass(module = "toksmith._core", frozen)]
pub struct Normalizer {
    pub(crate) inner: normalizers::Normalizer,
}

#[pymethods]
impl Normalizer {
    /// The normalizer object of a `tokenizer.json`, as JSON text.
    #[staticmethod]
    fn from_hf_json(json: &str) -> PyResult<Self> {
        let inner = normalizers::Normalizer::from_hf_json(json).map_err(to_py)?;
        Ok(Normalizer { inner })
    }

    /// The normalized text.
    fn normalize<'py>(&self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
        let out = py.detach(|| self.inner.normalize(text)).map_err(to_py)?;
        crate::cpython::new_str(py, &out)
    }
}
