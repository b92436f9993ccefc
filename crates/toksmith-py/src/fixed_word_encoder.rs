//! `FixedWordEncoder`: fixed ids for whole words in front of a `Bpe`
//! (`toksmith_core::fixed_words`, CppReason).

use crate::bpe::Bpe;
use crate::buffers::with_id_buffer;
use crate::convert::{self, Seq};
use crate::cpython;
use crate::errors::to_py;
use crate::pools::in_pool;
use pyo3::prelude::*;
use pyo3::types::PyList;
use toksmith_core::encode::Allowed;
use toksmith_core::fixed_words::FixedWords;
use toksmith_core::pretokenize::Pretokenizer;

/// Fixed ids for whole words, a `Bpe` (given to each call) for the other words.
#[pyclass(module = "toksmith._core", frozen)]
pub struct FixedWordEncoder {
    inner: FixedWords,
    /// the largest fixed id (checked against each `Bpe`'s vocabulary before use)
    max_id: u32,
}

impl FixedWordEncoder {
    /// The fixed ids must be ids of `bpe`'s vocabulary: the result lists are built from its
    /// int objects by index.
    fn check(&self, bpe: &Bpe) -> PyResult<()> {
        if self.max_id as usize >= bpe.ints.len() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "fixed id {} is not an id of this tokenizer (it has {} ids); pass the tokenizer the table was made for",
                self.max_id,
                bpe.ints.len()
            )));
        }
        Ok(())
    }
}

#[pymethods]
impl FixedWordEncoder {
    #[new]
    fn new(
        pattern: &str,
        table: Seq<(String, Vec<u32>)>,
        line_start: Seq<(String, u32)>,
        newline: [u32; 2],
        mark: &str,
    ) -> PyResult<Self> {
        let max_id = table
            .iter()
            .flat_map(|(_, ids)| ids.iter().copied())
            .chain(line_start.iter().map(|&(_, id)| id))
            .chain(newline)
            .max()
            .unwrap_or(0);
        Ok(FixedWordEncoder {
            inner: FixedWords::new(pattern, table.0, line_start.0, newline, mark).map_err(to_py)?,
            max_id,
        })
    }

    /// The ids of `text`, the learned words encoded by `bpe` (ordinary text); `line_start`:
    /// whether `text` starts a line.
    #[pyo3(signature = (bpe, text, line_start=true))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        bpe: &Bpe,
        text: &str,
        line_start: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        self.check(bpe)?;
        with_id_buffer(|buf| {
            buf.clear();
            py.detach(|| {
                self.inner.encode_with(text, line_start, buf, |w, out| {
                    bpe.enc.encode_into(w, &Allowed::None, out)
                })
            })
            .map_err(to_py)?;
            bpe.ints.ids_to_list(py, buf)
        })
    }

    /// The words of `text` as encoding sees them (`FixedWords::for_each_word`).
    #[pyo3(signature = (text, line_start=true))]
    fn words<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        line_start: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let words = py
            .detach(|| {
                let mut out: Vec<&str> = Vec::new();
                self.inner
                    .for_each_word(text, line_start, |w, _| {
                        toksmith_core::mem::try_push(&mut out, w, "the words")
                    })
                    .map(|_| out)
            })
            .map_err(to_py)?;
        convert::list(py, &words)
    }

    /// The learned part's training counts from `texts`: [(chunk bytes, count)] of the words
    /// that are not fixed, each with the mark in front, split by `inner_pattern`.
    #[pyo3(signature = (texts, inner_pattern, threads=0))]
    fn count_learned<'py>(
        &self,
        py: Python<'py>,
        texts: Seq<String>,
        inner_pattern: &str,
        threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let inner = Pretokenizer::new(inner_pattern).map_err(to_py)?;
        let chunks =
            in_pool(py, threads, || self.inner.count_learned(&texts, &inner))?.map_err(to_py)?;
        convert::list(py, &chunks)
    }

    /// `encode` of each text, in parallel.
    #[pyo3(signature = (bpe, texts, threads=0))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        bpe: &Bpe,
        texts: Seq<String>,
        threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        self.check(bpe)?;
        let all: Vec<Vec<u32>> = in_pool(py, threads, || {
            convert::try_par_map(&texts, "the ids of a batch", |t| {
                let mut out = toksmith_core::mem::try_vec(t.len() / 3 + 1, "the ids")?;
                self.inner
                    .encode_with(t, true, &mut out, |w, o| {
                        bpe.enc.encode_into(w, &Allowed::None, o)
                    })
                    .map(|_| out)
            })
        })?
        .map_err(to_py)?;
        cpython::list_of(
            py,
            all.iter()
                .map(|ids| bpe.ints.ids_to_list(py, ids).map(Bound::into_any)),
        )
    }
}
