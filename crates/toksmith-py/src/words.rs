//! Module functions of the word-level `</w>` model (`toksmith_core::words`): training on
//! counted words, folding counts, embeddings. Its encoder is `WordEncoder`
//! (word_encoder.rs); the whole-word fixed-id vocabulary in front of BPE
//! (`toksmith_core::fixed_words`, CppReason) is `FixedWordEncoder` and `FixedWordDecoder`.

use crate::convert::{self, Bytes, Seq};
use crate::cpython;
use crate::errors::to_py;
use crate::pools::{in_pool, merge_loop_in_pool};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use toksmith_core::words;

/// Learn merges over the characters of counted words (each spelled with `</w>`); returns
/// (alphabet as a str, merges as [(left, right, made)]): symbol i < len(alphabet) is
/// alphabet[i], symbol len(alphabet) is `</w>`; `made` is the next new symbol id, or an earlier
/// symbol's id when the merge spells the same string.
/// The alphabet (as a str) and the merges as (left, right, made).
type LearnedWords<'py> = (Bound<'py, PyAny>, Bound<'py, PyList>);

#[pyfunction]
#[pyo3(signature = (words, num_merges, min_frequency=0, progress=None, threads=0))]
pub fn train_words<'py>(
    py: Python<'py>,
    words: Seq<(String, u64)>,
    num_merges: usize,
    min_frequency: u64,
    progress: Option<Py<PyAny>>,
    threads: usize,
) -> PyResult<LearnedWords<'py>> {
    let result = merge_loop_in_pool(py, threads, progress, |report| {
        words::train_words(&words, num_merges, min_frequency, report)
    })?;
    let m = result.map_err(to_py)?;
    let alphabet: String = m.alphabet.into_iter().collect();
    let merges = cpython::list_of(
        py,
        m.merges
            .iter()
            .map(|&((a, b), c)| convert::Out::out(&(a, b, c), py)),
    )?;
    Ok((cpython::new_str(py, &alphabet)?, merges))
}

/// Fold counted words ([(bytes, count)], e.g. `ChunkCounter.counts()`) to lower case if asked,
/// adding up the counts of words that become equal; sorted by word.
#[pyfunction]
pub fn fold_word_counts<'py>(
    py: Python<'py>,
    counts: Seq<(Bytes, u64)>,
    lowercase: bool,
) -> PyResult<Bound<'py, PyList>> {
    let folded = py
        .detach(|| words::fold_counts_of(counts.iter().map(|(c, n)| (&c[..], *n)), lowercase))
        .map_err(to_py)?;
    convert::list(py, &folded)
}

/// Embeddings of token texts (UTF-8 bytes): `dim` little-endian f32 per token, row after row.
#[pyfunction]
#[pyo3(signature = (tokens, dim, seed=0, threads=0))]
pub fn word_embeddings<'py>(
    py: Python<'py>,
    tokens: Seq<Bytes>,
    dim: usize,
    seed: u64,
    threads: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let v = in_pool(py, threads, || words::embeddings(&tokens, dim, seed))?.map_err(to_py)?;
    // (allocated by Python: a size it cannot give is a MemoryError)
    PyBytes::new_with(py, v.len() * 4, |out| {
        for (b, x) in out.chunks_exact_mut(4).zip(v) {
            b.copy_from_slice(&x.to_le_bytes());
        }
        Ok(())
    })
}

/// The seed `word_embeddings` derives a token's vector from.
#[pyfunction]
#[pyo3(signature = (text, seed=0))]
pub fn word_token_seed(text: &[u8], seed: u64) -> u64 {
    words::token_seed(text, seed)
}
