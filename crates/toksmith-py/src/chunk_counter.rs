//! `ChunkCounter`: counts the chunks of a corpus and runs the BPE merge loop on them.

use crate::convert::{self, Bytes, Out, Seq};
use crate::cpython;
use crate::errors::to_py;
use crate::pools::{in_pool, interruptible_in_pool, merge_loop_in_pool};
use crate::reader;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use std::collections::HashMap;
use toksmith_core::mem::{try_push, try_vec};
use toksmith_core::pretokenize::Pretokenizer;
use toksmith_core::train;

#[pyclass(module = "toksmith._core")]
pub(crate) struct ChunkCounter {
    inner: Option<train::ChunkCounter>,
    /// the pinned tokens, to cut counted chunks given by `add_arena` as texts are cut
    pinned: toksmith_core::added::AddedMatcher,
    /// the pairs the counts added by `add_arena` stand for (a bound on any pair's count)
    arena_pairs: u128,
}

/// The largest count of a pair the merge loop holds (signed 64-bit).
const MAX_PAIR_COUNT: u128 = i64::MAX as u128;

/// `data` read as little-endian u64s, or an error naming `what` when its size is no multiple
/// of 8.
fn u64s(data: &[u8], what: &str) -> PyResult<Vec<u64>> {
    if !data.len().is_multiple_of(8) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "{what} holds {} bytes, not a whole number of 8-byte integers",
            data.len()
        )));
    }
    convert::try_map(data.chunks_exact(8), what, |b| {
        u64::from_le_bytes(b.try_into().expect("8 bytes"))
    })
    .map_err(to_py)
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
    #[pyo3(signature = (pattern, pinned=Seq::default()))]
    fn new(pattern: &str, pinned: Seq<String>) -> PyResult<Self> {
        let pre = Pretokenizer::new(pattern).map_err(to_py)?;
        let matcher = train::pinned_matcher(&pinned).map_err(to_py)?;
        Ok(ChunkCounter {
            inner: Some(train::ChunkCounter::new(pre, pinned.0).map_err(to_py)?),
            pinned: matcher,
            arena_pairs: 0,
        })
    }

    #[pyo3(signature = (texts, threads=0))]
    fn add_texts(&mut self, py: Python<'_>, texts: Seq<String>, threads: usize) -> PyResult<()> {
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

    fn add_counts(&mut self, counts: Seq<(Bytes, u64)>) -> PyResult<()> {
        let inner = self.get()?;
        for (c, n) in counts.0 {
            inner.add_count(&c, n).map_err(to_py)?;
        }
        Ok(())
    }

    /// Add counted chunks given as an arena: chunk `k` is `arena[offsets[k]..offsets[k + 1]]`
    /// (`offsets`: n + 1 little-endian u64, `counts`: n little-endian u64). With `cut`, each chunk
    /// is first cut around the pinned tokens, as texts are. Checked here, before anything is
    /// added: the offsets rise from 0 to the arena's end, and the pairs the counts stand for
    /// (`count * max(len - 1, 1)` summed, with what was added before) stay at most 2**63 - 1, the
    /// merge loop's counts. Empty chunks and zero counts are skipped.
    #[pyo3(signature = (arena, offsets, counts, cut=true))]
    fn add_arena(
        &mut self,
        py: Python<'_>,
        arena: &[u8],
        offsets: &[u8],
        counts: &[u8],
        cut: bool,
    ) -> PyResult<()> {
        let offsets = u64s(offsets, "offsets")?;
        let counts = u64s(counts, "counts")?;
        let bad = |m: String| Err(pyo3::exceptions::PyValueError::new_err(m));
        if offsets.len() != counts.len() + 1 {
            return bad(format!(
                "{} offsets for {} counts: there must be one offset more than counts",
                offsets.len(),
                counts.len()
            ));
        }
        if offsets[0] != 0 || *offsets.last().expect("one offset") != arena.len() as u64 {
            return bad(format!(
                "the offsets must run from 0 to the arena's size ({}), not from {} to {}",
                arena.len(),
                offsets[0],
                offsets.last().expect("one offset")
            ));
        }
        if let Some(k) = offsets.windows(2).position(|w| w[0] > w[1]) {
            return bad(format!(
                "offset {} ({}) is past offset {} ({}): offsets must not decrease",
                k,
                offsets[k],
                k + 1,
                offsets[k + 1]
            ));
        }
        let matcher = &self.pinned;
        const WHAT: &str = "the chunks of an arena";
        let parts = py
            .detach(|| -> toksmith_core::Result<Vec<(&[u8], u64)>> {
                let mut parts = try_vec(counts.len(), WHAT)?;
                for (k, &n) in counts.iter().enumerate() {
                    let chunk = &arena[offsets[k] as usize..offsets[k + 1] as usize];
                    if n == 0 || chunk.is_empty() {
                        continue;
                    }
                    if !cut || !matcher.has_pinned() {
                        try_push(&mut parts, (chunk, n), WHAT)?;
                        continue;
                    }
                    let mut pos = 0;
                    while let Some((s, e, _)) = matcher.find(chunk, pos, &|_, _| true) {
                        if s > pos {
                            try_push(&mut parts, (&chunk[pos..s], n), WHAT)?;
                        }
                        pos = e;
                    }
                    if pos < chunk.len() {
                        try_push(&mut parts, (&chunk[pos..], n), WHAT)?;
                    }
                }
                Ok(parts)
            })
            .map_err(to_py)?;
        let mut pairs: u128 = self.arena_pairs;
        for (c, n) in &parts {
            pairs += *n as u128 * (c.len().saturating_sub(1)).max(1) as u128;
        }
        if pairs > MAX_PAIR_COUNT {
            return bad(format!(
                "the counts are too large: their pairs add up to {pairs}, more than {} (2**63-1, \
                 the merge loop's 64-bit counts); pass smaller counts (scale them down)",
                MAX_PAIR_COUNT
            ));
        }
        let inner = self.get()?;
        for (c, n) in parts {
            inner.add_count(c, n).map_err(to_py)?;
        }
        self.arena_pairs = pairs;
        Ok(())
    }

    /// The counts as `(arena, offsets, counts)` bytes (the layout `add_arena` takes), sorted by
    /// chunk.
    fn export_arena<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<(
        Bound<'py, PyBytes>,
        Bound<'py, PyBytes>,
        Bound<'py, PyBytes>,
    )> {
        let inner = self.get()?;
        // (in a pool of ours: the sort of the ids is parallel, and rayon's global pool is
        // never used, see pools.rs)
        let (arena, offsets, counts) = in_pool(py, 0, || -> toksmith_core::Result<_> {
            let ids = inner.sorted_ids()?;
            let t = inner.table();
            let mut arena = try_vec(t.total_bytes(), "an exported arena")?;
            let mut offsets = try_vec(8 * (ids.len() + 1), "an exported arena's offsets")?;
            let mut counts = try_vec(8 * ids.len(), "an exported arena's counts")?;
            offsets.extend_from_slice(&0u64.to_le_bytes());
            for &i in &ids {
                arena.extend_from_slice(t.chunk(i as usize));
                offsets.extend_from_slice(&(arena.len() as u64).to_le_bytes());
                counts.extend_from_slice(&t.count(i as usize).to_le_bytes());
            }
            Ok((arena, offsets, counts))
        })?
        .map_err(to_py)?;
        Ok((
            cpython::bytes_from(py, &arena)?,
            cpython::bytes_from(py, &offsets)?,
            cpython::bytes_from(py, &counts)?,
        ))
    }

    /// {"bytes": .., "pieces": .., "texts": .., "unique": .., "table_bytes": ..}: `table_bytes`
    /// is what the unique chunks and their counts take on the heap.
    fn stats(&mut self) -> PyResult<HashMap<&'static str, u64>> {
        let inner = self.get()?;
        Ok(HashMap::from([
            ("bytes", inner.bytes_seen),
            ("pieces", inner.pieces_seen),
            ("texts", inner.texts_seen),
            ("unique", inner.num_unique() as u64),
            ("table_bytes", inner.table().heap_bytes() as u64),
        ]))
    }

    /// [(word, count)] sorted by word, lower-cased (counts of words that become equal added up)
    /// if asked: the counts of the word-level preset, without a round trip through bytes.
    fn word_counts<'py>(
        &mut self,
        py: Python<'py>,
        lowercase: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let inner = self.get()?;
        let v = py
            .detach(|| toksmith_core::words::fold_counts_of(inner.table().iter(), lowercase))
            .map_err(to_py)?;
        convert::list(py, &v)
    }

    /// [(chunk bytes, count)] sorted by chunk.
    fn counts<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let inner = self.get()?;
        let ids = in_pool(py, 0, || inner.sorted_ids())?.map_err(to_py)?;
        let t = inner.table();
        cpython::list_of(
            py,
            ids.iter()
                .map(|&i| (t.chunk(i as usize), t.count(i as usize)).out(py)),
        )
    }

    /// Run the merge loop; returns [(left, right)] in internal ids (bytes 0..255, merge k = 256+k).
    /// `progress(done, total)` is called now and then with the GIL held; what it raises stops the
    /// loop and is raised here, as is a Ctrl-C (see `merge_loop_in_pool`). `min_frequency` and
    /// `max_token_length` limit the merges (see `train::MergeLimits`).
    #[pyo3(signature = (num_merges, progress=None, threads=0, min_frequency=0, max_token_length=None))]
    fn train<'py>(
        &mut self,
        py: Python<'py>,
        num_merges: usize,
        progress: Option<Py<PyAny>>,
        threads: usize,
        min_frequency: u64,
        max_token_length: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
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
        convert::list(py, &result.map_err(to_py)?)
    }
}
