//! Glue for the word-level `</w>` model (`toksmith_core::words`): training on counted words,
//! the greedy longest-match encoder, token statistics and embeddings; and for the whole-word
//! fixed-id vocabulary in front of BPE (`toksmith_core::fixed_words`, CppReason).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use rayon::prelude::*;
use toksmith_core::encode::Allowed;
use toksmith_core::fixed_words::{FixedWords, WordDecoder};
use toksmith_core::pretokenize::Pretokenizer;
use toksmith_core::words;

use crate::errors::to_py;
use crate::{ids_to_list, in_pool, int_table, merge_loop_in_pool, with_id_buffer, Bpe};

/// Learn merges over the characters of counted words (each spelled with `</w>`); returns
/// (alphabet as a str, merges as [(left, right, made)]): symbol i < len(alphabet) is
/// alphabet[i], symbol len(alphabet) is `</w>`; `made` is the next new symbol id, or an earlier
/// symbol's id when the merge spells the same string.
/// The alphabet (as a str) and the merges as (left, right, made).
type LearnedWords = (String, Vec<(u32, u32, u32)>);

#[pyfunction]
#[pyo3(signature = (words, num_merges, min_frequency=0, progress=None, threads=0))]
pub fn train_words(
    py: Python<'_>,
    words: Vec<(String, u64)>,
    num_merges: usize,
    min_frequency: u64,
    progress: Option<Py<PyAny>>,
    threads: usize,
) -> PyResult<LearnedWords> {
    let result = merge_loop_in_pool(py, threads, progress, |report| {
        words::train_words(&words, num_merges, min_frequency, report)
    })?;
    let m = result.map_err(to_py)?;
    Ok((
        m.alphabet.into_iter().collect(),
        m.merges.into_iter().map(|((a, b), c)| (a, b, c)).collect(),
    ))
}

/// Fold counted words ([(bytes, count)], e.g. `ChunkCounter.counts()`) to lower case if asked,
/// adding up the counts of words that become equal; sorted by word.
#[pyfunction]
pub fn fold_word_counts(
    py: Python<'_>,
    counts: Vec<(Vec<u8>, u64)>,
    lowercase: bool,
) -> PyResult<Vec<(String, u64)>> {
    let chunks: Vec<(Box<[u8]>, u64)> = counts
        .into_iter()
        .map(|(c, n)| (c.into_boxed_slice(), n))
        .collect();
    py.detach(|| words::fold_counts(&chunks, lowercase))
        .map_err(to_py)
}

/// Embeddings of token texts (UTF-8 bytes): `dim` little-endian f32 per token, row after row.
#[pyfunction]
#[pyo3(signature = (tokens, dim, seed=0, threads=0))]
pub fn word_embeddings<'py>(
    py: Python<'py>,
    tokens: Vec<Vec<u8>>,
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

/// The most ids a [`WordEncoder`] takes (an int object is made for each up front): the word
/// model's own limit on merges (2**31 - 1), plus room for its special tokens.
const MAX_WORD_VOCAB: usize = 1 << 32;

#[pyclass(module = "toksmith._core", frozen)]
pub struct WordEncoder {
    inner: words::WordEncoder,
    /// one int object per id (every id the encoder can give is below their number), so
    /// results are lists of shared ints
    _ints: Vec<Py<PyAny>>,
    int_addrs: Vec<usize>,
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
        tokens: Vec<(Vec<u8>, u32)>,
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
        let (ints, int_addrs) = int_table(py, n);
        Ok(WordEncoder {
            inner,
            _ints: ints,
            int_addrs,
        })
    }

    fn encode<'py>(&self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyList>> {
        let ids = py.detach(|| self.inner.encode(text)).map_err(to_py)?;
        ids_to_list(py, &self.int_addrs, &ids)
    }

    #[pyo3(signature = (texts, threads=0))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<String>,
        threads: usize,
    ) -> PyResult<Vec<Bound<'py, PyList>>> {
        let all = in_pool(py, threads, || self.inner.encode_batch(&texts))?.map_err(to_py)?;
        all.iter()
            .map(|ids| ids_to_list(py, &self.int_addrs, ids))
            .collect()
    }

    /// The ids of one word (not split; lower-cased if the encoder lower-cases).
    fn encode_word(&self, word: &str) -> Vec<u32> {
        let mut out = Vec::new();
        self.inner.encode_word(word, &mut out);
        out
    }

    fn words(&self, py: Python<'_>, text: &str) -> PyResult<Vec<String>> {
        py.detach(|| {
            self.inner
                .words(text)
                .map(|v| v.into_iter().map(|w| w.into_owned()).collect())
        })
        .map_err(to_py)
    }

    #[pyo3(signature = (words, n_vocab, threads=0))]
    fn token_counts(
        &self,
        py: Python<'_>,
        words: Vec<(String, u64)>,
        n_vocab: usize,
        threads: usize,
    ) -> PyResult<Vec<u64>> {
        if n_vocab > self.int_addrs.len() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "n_vocab={n_vocab} is more than the {} ids this encoder gives",
                self.int_addrs.len()
            )));
        }
        in_pool(py, threads, || self.inner.token_counts(&words, n_vocab))?.map_err(to_py)
    }
}

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
        if self.max_id as usize >= bpe.int_addrs.len() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "fixed id {} is not an id of this tokenizer (it has {} ids); pass the tokenizer the table was made for",
                self.max_id,
                bpe.int_addrs.len()
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
        table: Vec<(String, Vec<u32>)>,
        line_start: Vec<(String, u32)>,
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
            inner: FixedWords::new(pattern, table, line_start, newline, mark).map_err(to_py)?,
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
            ids_to_list(py, &bpe.int_addrs, buf)
        })
    }

    /// The words of `text` as encoding sees them (`FixedWords::for_each_word`).
    #[pyo3(signature = (text, line_start=true))]
    fn words(&self, py: Python<'_>, text: &str, line_start: bool) -> PyResult<Vec<String>> {
        py.detach(|| {
            let mut out = Vec::new();
            self.inner
                .for_each_word(text, line_start, |w, _| {
                    out.push(w.to_string());
                    Ok(())
                })
                .map(|_| out)
        })
        .map_err(to_py)
    }

    /// The learned part's training counts from `texts`: [(chunk bytes, count)] of the words
    /// that are not fixed, each with the mark in front, split by `inner_pattern`.
    #[pyo3(signature = (texts, inner_pattern, threads=0))]
    fn count_learned<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<String>,
        inner_pattern: &str,
        threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let inner = Pretokenizer::new(inner_pattern).map_err(to_py)?;
        let chunks =
            in_pool(py, threads, || self.inner.count_learned(&texts, &inner))?.map_err(to_py)?;
        PyList::new(py, chunks.iter().map(|(b, c)| (PyBytes::new(py, b), *c)))
    }

    /// `encode` of each text, in parallel.
    #[pyo3(signature = (bpe, texts, threads=0))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        bpe: &Bpe,
        texts: Vec<String>,
        threads: usize,
    ) -> PyResult<Vec<Bound<'py, PyList>>> {
        self.check(bpe)?;
        let all: Vec<Vec<u32>> = in_pool(py, threads, || {
            texts
                .par_iter()
                .map(|t| {
                    let mut out = Vec::with_capacity(t.len() / 3 + 1);
                    self.inner
                        .encode_with(t, true, &mut out, |w, o| {
                            bpe.enc.encode_into(w, &Allowed::None, o)
                        })
                        .map(|_| out)
                })
                .collect::<toksmith_core::Result<Vec<_>>>()
        })?
        .map_err(to_py)?;
        all.iter()
            .map(|ids| ids_to_list(py, &bpe.int_addrs, ids))
            .collect()
    }
}

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
