//! `Pipeline`: a whole tokenizer that is not byte-level BPE (SentencePiece `.model`,
//! `tokenizer.json` with Unigram / WordPiece / character BPE, a WordPiece `vocab.txt`), from
//! `toksmith_core::pipeline`. The GIL is released around every encode and decode.

//!
//! Results are built with the fallible constructors of cpython.rs and inputs read through
//! fallible buffers, so a text or id list too long for memory is a `MemoryError`.

use crate::cpython::{self, ids_into};
use crate::errors::to_py;
use crate::pools::in_pool;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use toksmith_core::pipeline;

#[pyclass(module = "toksmith._core", frozen)]
pub struct Pipeline {
    inner: pipeline::Pipeline,
}

#[pymethods]
impl Pipeline {
    /// A SentencePiece `.model` file's bytes.
    #[staticmethod]
    fn from_spm_model(py: Python<'_>, data: Vec<u8>) -> PyResult<Self> {
        let inner = py
            .detach(|| pipeline::Pipeline::from_spm_model(&data))
            .map_err(to_py)?;
        Ok(Pipeline { inner })
    }

    /// A Hugging Face `tokenizer.json` (its text).
    #[staticmethod]
    fn from_hf_json(py: Python<'_>, json: &str) -> PyResult<Self> {
        let inner = py
            .detach(|| pipeline::Pipeline::from_hf_json(json))
            .map_err(to_py)?;
        Ok(Pipeline { inner })
    }

    /// A WordPiece `vocab.txt` with BERT's normalizer, pre-tokenizer and decoder.
    #[staticmethod]
    #[pyo3(signature = (vocab_txt, unk_token, special, lowercase, strip_accents, handle_chinese_chars))]
    fn from_wordpiece_vocab(
        py: Python<'_>,
        vocab_txt: &str,
        unk_token: &str,
        special: Vec<String>,
        lowercase: bool,
        strip_accents: Option<bool>,
        handle_chinese_chars: bool,
    ) -> PyResult<Self> {
        let inner = py
            .detach(|| {
                pipeline::Pipeline::from_wordpiece_vocab(
                    vocab_txt,
                    unk_token,
                    &special,
                    lowercase,
                    strip_accents,
                    handle_chinese_chars,
                )
            })
            .map_err(to_py)?;
        Ok(Pipeline { inner })
    }

    /// `"bpe"`, `"unigram"` or `"wordpiece"`.
    #[getter]
    fn model_kind(&self) -> &'static str {
        self.inner.model().kind()
    }

    #[getter]
    fn n_vocab(&self) -> usize {
        self.inner.n_vocab()
    }

    /// Whether the reference library matches special tokens in text by default.
    #[getter]
    fn matches_special_by_default(&self) -> bool {
        self.inner.matches_special_by_default()
    }

    /// The added tokens as (text, id, special).
    fn added_tokens(&self) -> Vec<(String, u32, bool)> {
        self.inner
            .added()
            .iter()
            .map(|a| (a.text.clone(), a.id, a.special))
            .collect()
    }

    fn id_to_token(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id).map(str::to_string)
    }

    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        match_special: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let ids = py
            .detach(|| self.inner.encode(text, match_special))
            .map_err(to_py)?;
        cpython::int_list(py, &ids)
    }

    #[pyo3(signature = (texts, match_special, threads=0))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        match_special: bool,
        threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        // (the texts' UTF-8 as CPython holds or caches it: no copies)
        let mut utf8 = toksmith_core::mem::try_vec(texts.len(), "the texts").map_err(to_py)?;
        for t in &texts {
            utf8.push(t.to_str()?);
        }
        let all = in_pool(py, threads, || {
            self.inner.encode_batch(&utf8, match_special)
        })?
        .map_err(to_py)?;
        cpython::list_of(
            py,
            all.iter()
                .map(|ids| cpython::int_list(py, ids).map(Bound::into_any)),
        )
    }

    fn decode<'py>(&self, py: Python<'py>, ids: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let mut v = Vec::new();
        ids_into(ids, &mut v)?;
        let text = py.detach(|| self.inner.decode(&v)).map_err(to_py)?;
        cpython::new_str(py, &text)
    }

    #[pyo3(signature = (batch, threads=0))]
    fn decode_batch<'py>(
        &self,
        py: Python<'py>,
        batch: Vec<Bound<'py, PyAny>>,
        threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut all = toksmith_core::mem::try_vec(batch.len(), "the ids").map_err(to_py)?;
        for ids in &batch {
            let mut v = Vec::new();
            ids_into(ids, &mut v)?;
            all.push(v);
        }
        let texts = in_pool(py, threads, || self.inner.decode_batch(&all))?.map_err(to_py)?;
        cpython::list_of(py, texts.iter().map(|t| cpython::new_str(py, t)))
    }
}
