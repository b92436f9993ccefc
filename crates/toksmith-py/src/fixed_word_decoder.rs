//! `FixedWordDecoder`: text from the ids of a `FixedWordEncoder`
//! (`toksmith_core::fixed_words::WordDecoder`).

use crate::bpe::Bpe;
use crate::convert::Seq;
use crate::cpython;
use crate::errors::to_py;
use pyo3::prelude::*;
use toksmith_core::fixed_words::WordDecoder;

/// Text from ids: fixed ids by their text, learned ids by a `Bpe`'s bytes, words spaced by the
/// seed's rule (`toksmith_core::fixed_words::WordDecoder`).
#[pyclass(module = "toksmith._core", frozen)]
pub struct FixedWordDecoder {
    inner: WordDecoder,
}

#[pymethods]
impl FixedWordDecoder {
    /// `pattern`: the split pattern, to keep apart words that would fuse written together;
    /// `mid_line`: ids that get a space in front where they would start a line.
    #[new]
    #[pyo3(signature = (fixed, mark, space_after, space_before, pattern = None, mid_line = Seq::default()))]
    fn new(
        fixed: Seq<Option<String>>,
        mark: &str,
        space_after: Seq<String>,
        space_before: Seq<String>,
        pattern: Option<&str>,
        mid_line: Seq<u32>,
    ) -> PyResult<Self> {
        let inner =
            WordDecoder::new(fixed.0, mark, space_after.0, space_before.0).with_mid_line(&mid_line);
        Ok(FixedWordDecoder {
            inner: match pattern {
                Some(p) => inner.with_split(p).map_err(to_py)?,
                None => inner,
            },
        })
    }

    fn decode<'py>(
        &self,
        py: Python<'py>,
        bpe: &Bpe,
        ids: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut v = Vec::new();
        cpython::ids_into(ids, &mut v)?;
        let text = py
            .detach(|| self.inner.decode(&v, |id| bpe.enc.vocab.token_bytes(id)))
            .map_err(to_py)?;
        cpython::new_str(py, &text)
    }
}
