//! `WordEncoder`: the greedy longest-match encoder of the word-level `</w>` model
//! (`toksmith_core::words`), and its token statistics.

use crate::convert::{self, Bytes, Seq};
use crate::cpython::{self, IntTable};
use crate::errors::to_py;
use crate::pools::in_pool;
use pyo3::prelude::*;
use pyo3::types::PyList;
use toksmith_core::words;

/// The most ids a [`WordEncoder`] takes (an int object is made for each up front): the word
/// model's own limit on merges (2**31 - 1), plus room for its special tokens.
const MAX_WORD_VOCAB: usize = 1 << 32;

#[pyclass(module = "toksmith._core", frozen)]
pub struct WordEncoder {
    inner: words::WordEncoder,
    /// one int object per id (every id the encoder can give is below their number), so
    /// results are lists of shared ints
    ints: IntTable,
}

#[pymethods]
impl WordEncoder {
    /// `n_vocab`: how many ids the vocabulary has (the ids of `tokens` and `unk` are below it;
    /// special tokens may hold the others); by default the ids must be dense (0..n-1 with `unk`).
    #[new]
    #[pyo3(signature = (pattern, lowercase, tokens, unk, n_vocab=None))]
    fn new(
        py: Python<'_>,
        pattern: &str,
        lowercase: bool,
        tokens: Seq<(Bytes, u32)>,
        unk: u32,
        n_vocab: Option<usize>,
    ) -> PyResult<Self> {
        let top = tokens
            .iter()
            .map(|&(_, id)| id)
            .chain([unk])
            .max()
            .unwrap_or(0) as usize;
        // one int object per id below `n` is made up front
        let n = match n_vocab {
            None if top > tokens.len() => {
                return Err(to_py(toksmith_core::Error::InvalidVocab(format!(
                    "ids must be dense: the largest id is {top} but there are only {} tokens (and the \
                     unknown id); number the tokens 0..n-1 or pass n_vocab",
                    tokens.len()
                ))))
            }
            None => top + 1,
            Some(n) if n <= top || n > MAX_WORD_VOCAB => {
                return Err(to_py(toksmith_core::Error::InvalidVocab(format!(
                    "n_vocab={n} must be above every id (the largest is {top}) and at most {MAX_WORD_VOCAB}"
                ))))
            }
            Some(n) => n,
        };
        let inner = words::WordEncoder::new(pattern, lowercase, &tokens, unk).map_err(to_py)?;
        Ok(WordEncoder {
            inner,
            ints: IntTable::new(py, n)?,
        })
    }

    fn encode<'py>(&self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyList>> {
        let ids = py.detach(|| self.inner.encode(text)).map_err(to_py)?;
        self.ints.ids_to_list(py, &ids)
    }

    #[pyo3(signature = (texts, threads=0))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Seq<String>,
        threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let all = in_pool(py, threads, || self.inner.encode_batch(&texts))?.map_err(to_py)?;
        cpython::list_of(
            py,
            all.iter()
                .map(|ids| self.ints.ids_to_list(py, ids).map(Bound::into_any)),
        )
    }

    /// The ids of one word (not split; lower-cased if the encoder lower-cases).
    fn encode_word<'py>(&self, py: Python<'py>, word: &str) -> PyResult<Bound<'py, PyList>> {
        // (room for an id per byte and the end marker: more only where lower-casing lengthens
        // the word)
        let mut out =
            toksmith_core::mem::try_vec(word.len() + 1, "the ids of a word").map_err(to_py)?;
        self.inner.encode_word(word, &mut out).map_err(to_py)?;
        self.ints.ids_to_list(py, &out)
    }

    fn words<'py>(&self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyList>> {
        let words = py.detach(|| self.inner.words(text)).map_err(to_py)?;
        convert::list(py, &words)
    }

    #[pyo3(signature = (words, n_vocab, threads=0))]
    fn token_counts<'py>(
        &self,
        py: Python<'py>,
        words: Seq<(String, u64)>,
        n_vocab: usize,
        threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        if n_vocab > self.ints.len() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "n_vocab={n_vocab} is more than the {} ids this encoder gives",
                self.ints.len()
            )));
        }
        let counts =
            in_pool(py, threads, || self.inner.token_counts(&words, n_vocab))?.map_err(to_py)?;
        convert::list(py, &counts)
    }
}
