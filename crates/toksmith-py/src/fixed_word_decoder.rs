//! `FixedWordDecoder`: text from the ids of a `FixedWordEncoder`
//! (`toksmith_core::fixed_words::WordDecoder`).

use crate::bpe::Bpe;
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
    #[pyo3(signature = (fixed, mark, space_after, space_before, pattern = None, mid_line = Vec::new()))]
    fn new(
        fixed: Vec<Option<String>>,
        mark: &str,
        space_after: Vec<String>,
        space_before: Vec<String>,
        pattern: Option<&str>,
        mid_line: Vec<u32>,
    ) -> PyResult<Self> {
        let inner =
            WordDecoder::new(fixed, mark, space_after, space_before).with_mid_line(&mid_line);
        Ok(FixedWordDecoder {
            inner: match pattern {
                Some(p) => inner.with_split(p).map_err(to_py)?,
                None => inner,
            },
        })
    }

    fn decode(&self, py: Python<'_>, bpe: &Bpe, ids: Vec<u32>) -> PyResult<String> {
        py.detach(|| self.inner.decode(&ids, |id| bpe.enc.vocab.token_bytes(id)))
            .map_err(to_py)
    }
}
