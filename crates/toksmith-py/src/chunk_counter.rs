//! `ChunkCounter`: counts the chunks of a corpus and runs the BPE merge loop on them.

use crate::errors::to_py;
use crate::pools::{in_pool, interruptible_in_pool, merge_loop_in_pool};
use crate::reader;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use std::collections::HashMap;
use toksmith_core::pretokenize::Pretokenizer;
use toksmith_core::train;

#[pyclass(module = "toksmith._core")]
pub(crate) struct ChunkCounter {
    inner: Option<train::ChunkCounter>,
}

impl ChunkCounter {
    fn get(&mut self) -> PyResult<&mut train::ChunkCounter> {
        self.inner.as_mut().ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err(
                "this ChunkCounter was already consumed by train()",
            )
        })
    }
}

/// The largest block a counter reads at once (each block is held whole in memory).
const MAX_BLOCK_SIZE: usize = 1 << 30;

impl ChunkCounter {
    /// Count what `open` gives (a file, a Python stream) in blocks of `block_size` bytes on
    /// `threads` threads, with the GIL released; the outer error is the glue's (bad arguments,
    /// a consumed counter), the inner one the reader's.
    fn count_reader<R: std::io::Read>(
        &mut self,
        py: Python<'_>,
        open: impl FnOnce() -> toksmith_core::Result<R> + Send,
        name: &str,
        replace: bool,
        threads: usize,
        block_size: usize,
    ) -> PyResult<toksmith_core::Result<()>> {
        if block_size == 0 || block_size > MAX_BLOCK_SIZE {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "block_size must be between 1 byte and {MAX_BLOCK_SIZE} (1 GiB), not {block_size}: \
                 each block is read whole into memory"
            )));
        }
        let inner = self.get()?;
        // (a big file takes a while: Ctrl-C stops it before the next block)
        interruptible_in_pool(py, threads, |stop| {
            let r = std::io::BufReader::with_capacity(1 << 20, open()?);
            inner.add_reader_until(r, name, replace, block_size, stop)
        })
    }
}

#[pymethods]
impl ChunkCounter {
    #[new]
    #[pyo3(signature = (pattern, pinned=Vec::new()))]
    fn new(pattern: &str, pinned: Vec<String>) -> PyResult<Self> {
        let pre = Pretokenizer::new(pattern).map_err(to_py)?;
        Ok(ChunkCounter {
            inner: Some(train::ChunkCounter::new(pre, pinned)),
        })
    }

    #[pyo3(signature = (texts, threads=0))]
    fn add_texts(&mut self, py: Python<'_>, texts: Vec<String>, threads: usize) -> PyResult<()> {
        let inner = self.get()?;
        in_pool(py, threads, || inner.add_texts(&texts))?.map_err(to_py)
    }

    #[pyo3(signature = (path, replace=false, threads=0, block_size=16 << 20))]
    fn add_file(
        &mut self,
        py: Python<'_>,
        path: std::path::PathBuf,
        replace: bool,
        threads: usize,
        block_size: usize,
    ) -> PyResult<()> {
        let name = path.display().to_string();
        let open = || {
            std::fs::File::open(&path).map_err(|e| toksmith_core::Error::Io {
                path: name.clone(),
                message: e.to_string(),
            })
        };
        self.count_reader(py, open, &name, replace, threads, block_size)?
            .map_err(to_py)
    }

    /// Count a binary Python file object (read through its `readinto`, e.g. a decompressing
    /// `lzma.open(path)`) exactly as `add_file` counts a file: in blocks cut at safe places.
    /// A Python exception raised by the file object is re-raised as it was.
    #[pyo3(signature = (file, name, replace=false, threads=0, block_size=16 << 20))]
    fn add_stream(
        &mut self,
        py: Python<'_>,
        file: Py<PyAny>,
        name: String,
        replace: bool,
        threads: usize,
        block_size: usize,
    ) -> PyResult<()> {
        let mut reader = reader::PyReader::new(file);
        let res = self.count_reader(py, || Ok(&mut reader), &name, replace, threads, block_size)?;
        match (res, reader.take_failure()) {
            (Err(_), Some(e)) => Err(e),
            (r, _) => r.map_err(to_py),
        }
    }

    fn add_counts(&mut self, counts: Vec<(Vec<u8>, u64)>) -> PyResult<()> {
        let inner = self.get()?;
        for (c, n) in counts {
            inner.add_count(&c, n).map_err(to_py)?;
        }
        Ok(())
    }

    /// {"bytes": .., "pieces": .., "texts": .., "unique": ..}
    fn stats(&mut self) -> PyResult<HashMap<&'static str, u64>> {
        let inner = self.get()?;
        Ok(HashMap::from([
            ("bytes", inner.bytes_seen),
            ("pieces", inner.pieces_seen),
            ("texts", inner.texts_seen),
            ("unique", inner.num_unique() as u64),
        ]))
    }

    /// [(word, count)] sorted by word, lower-cased (counts of words that become equal added up)
    /// if asked: the counts of the word-level preset, without a round trip through bytes.
    fn word_counts(&mut self, py: Python<'_>, lowercase: bool) -> PyResult<Vec<(String, u64)>> {
        let v = self.get()?.counts_snapshot();
        py.detach(|| toksmith_core::words::fold_counts(&v, lowercase))
            .map_err(to_py)
    }

    /// [(chunk bytes, count)] sorted by chunk.
    fn counts<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let v = self.get()?.counts_snapshot();
        PyList::new(py, v.iter().map(|(b, c)| (PyBytes::new(py, b), *c)))
    }

    /// Run the merge loop; returns [(left, right)] in internal ids (bytes 0..255, merge k = 256+k).
    /// `progress(done, total)` is called now and then with the GIL held; what it raises stops the
    /// loop and is raised here, as is a Ctrl-C (see `merge_loop_in_pool`). `min_frequency` and
    /// `max_token_length` limit the merges (see `train::MergeLimits`).
    #[pyo3(signature = (num_merges, progress=None, threads=0, min_frequency=0, max_token_length=None))]
    fn train(
        &mut self,
        py: Python<'_>,
        num_merges: usize,
        progress: Option<Py<PyAny>>,
        threads: usize,
        min_frequency: u64,
        max_token_length: Option<usize>,
    ) -> PyResult<Vec<(u32, u32)>> {
        let limits = train::MergeLimits {
            min_frequency,
            max_token_length,
        };
        let counter = self.inner.take().ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err(
                "this ChunkCounter was already consumed by train()",
            )
        })?;
        let result = merge_loop_in_pool(py, threads, progress, |report| {
            train::train_merges_table(counter.into_table(), num_merges, limits, report)
        })?;
        result.map_err(to_py)
    }
}
