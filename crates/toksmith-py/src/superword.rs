//! `train_token_merges`: the superword stage of training (`toksmith_core::train::superword`),
//! used by the Cromwell preset's second stage.

use crate::convert::{self, Bytes, Seq};
use crate::errors::to_py;
use crate::pools::merge_loop_in_pool;
use pyo3::prelude::*;
use toksmith_core::train::{self, MergeLimits};

/// Learn up to `num_new` new tokens from `words` ([(token ids, count)]) over the vocabulary
/// `tokens` (the bytes of ids 0..len(tokens)); returns the merges as [(left, right, made)],
/// `made` a fresh id from len(tokens) on, or an existing token's id when the merge spells it.
#[pyfunction]
#[pyo3(signature = (words, tokens, num_new, min_frequency=0, max_token_length=None, progress=None, threads=0))]
#[allow(clippy::too_many_arguments)]
pub fn train_token_merges<'py>(
    py: Python<'py>,
    words: Seq<(Vec<u32>, u64)>,
    tokens: Seq<Bytes>,
    num_new: usize,
    min_frequency: u64,
    max_token_length: Option<usize>,
    progress: Option<Py<PyAny>>,
    threads: usize,
) -> PyResult<Bound<'py, pyo3::types::PyList>> {
    let limits = MergeLimits {
        min_frequency,
        max_token_length,
    };
    let result = merge_loop_in_pool(py, threads, progress, |report| {
        train::train_token_merges(&words, &tokens, num_new, limits, report)
    })?;
    let merges = result.map_err(to_py)?;
    crate::cpython::list_of(
        py,
        merges
            .iter()
            .map(|&((a, b), c)| convert::Out::out(&(a, b, c), py)),
    )
}
