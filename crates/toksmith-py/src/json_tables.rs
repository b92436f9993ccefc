//! `JsonTables`: the big tables of a JSON tokenizer file, decoded natively (see files.rs).

use crate::errors::to_py;
use crate::files::{added_by_id, token_ranks};
use crate::pools::detached_in_pool;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use toksmith_core::vocab_files;

/// A JSON tokenizer file whose big tables were decoded natively (`toksmith_core::bpe_json`).
#[pyclass(module = "toksmith._core", frozen)]
pub struct JsonTables {
    pub(crate) inner: toksmith_core::bpe_json::BpeJson,
}

#[pymethods]
impl JsonTables {
    /// Whether the file has a merge list (a tokenizer.json's `model.merges`, a toksmith
    /// file's non-null `merges`).
    #[getter]
    fn has_merges(&self) -> bool {
        self.inner.has_merges
    }

    /// [`toksmith_tables`] on the decoded tables of a toksmith file.
    #[allow(clippy::type_complexity)]
    fn toksmith_tables<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Option<(Bound<'py, PyDict>, Option<Vec<(u32, u32)>>)>> {
        let t = &self.inner;
        let checked = detached_in_pool(py, || -> vocab_files::Read<_> {
            let empty = rustc_hash::FxHashMap::<u32, &str>::default();
            let Some(entries) = t.vocab_entries(&empty)? else {
                return Ok(None);
            };
            let merges = t.has_merges.then_some((&t.parts, &t.merges[..]));
            let ids = vocab_files::toksmith_tables(&t.tokens, &entries, merges)?;
            Ok(ids.map(|ids| (entries, ids)))
        })?
        .map_err(to_py)?;
        let Some((entries, merge_ids)) = checked else {
            return Ok(None);
        };
        let ranks = token_ranks(py, &t.tokens, entries.iter().copied())?;
        Ok(Some((ranks, merge_ids)))
    }

    /// `formats/_common.py::ranks_from_vocab_and_merges` on the decoded tables: `(ranks,
    /// leftovers)`, or None where the reference must run (on the document parsed by Python).
    #[allow(clippy::type_complexity)]
    fn ranks_from_vocab_and_merges<'py>(
        &self,
        py: Python<'py>,
        added: &Bound<'py, PyAny>,
    ) -> PyResult<Option<(Bound<'py, PyDict>, Bound<'py, PyDict>)>> {
        self.ranks_with(py, added, vocab_files::ranks_from_vocab_and_merges)
    }

    /// `files/huggingface.py::_ranks_ignore_merges` on the decoded tables of a model with
    /// `"ignore_merges": true` whose merges are out of order (Llama 3): `(ranks, leftovers)`,
    /// or None where the reference must run (see `vocab_files::ranks_ignore_merges`).
    #[allow(clippy::type_complexity)]
    fn ranks_ignore_merges<'py>(
        &self,
        py: Python<'py>,
        added: &Bound<'py, PyAny>,
    ) -> PyResult<Option<(Bound<'py, PyDict>, Bound<'py, PyDict>)>> {
        self.ranks_with(py, added, vocab_files::ranks_ignore_merges)
    }
}

/// What a `vocab_files` reading of vocab + merges gives: kept entries and leftovers.
type Reading = vocab_files::Read<(Vec<usize>, Vec<usize>)>;

impl JsonTables {
    /// `(ranks, leftovers)` of the decoded tables by `read` (one of `vocab_files`' readings),
    /// with the GIL released; None where it declines.
    #[allow(clippy::type_complexity)]
    fn ranks_with<'py>(
        &self,
        py: Python<'py>,
        added: &Bound<'py, PyAny>,
        read: fn(
            &vocab_files::Flat,
            &[(vocab_files::Entry, u32)],
            &vocab_files::Flat,
            &[(usize, usize)],
        ) -> Reading,
    ) -> PyResult<Option<(Bound<'py, PyDict>, Bound<'py, PyDict>)>> {
        let Ok(added) = added.cast::<PyDict>() else {
            return Ok(None);
        };
        let Some(added) = added_by_id(added) else {
            return Ok(None);
        };
        // their texts as Rust strings, to be read with the GIL released
        let texts = added
            .iter()
            .map(|(i, t)| Ok((*i, t.to_str()?.to_owned())))
            .collect::<PyResult<rustc_hash::FxHashMap<u32, String>>>()?;
        let t = &self.inner;
        let done = detached_in_pool(py, || -> vocab_files::Read<_> {
            let Some(entries) = t.vocab_entries(&texts)? else {
                return Ok(None);
            };
            let kept = read(&t.tokens, &entries, &t.parts, &t.merges)?;
            Ok(kept.map(|kept| (entries, kept)))
        })?
        .map_err(to_py)?;
        let Some((entries, (kept, leftovers))) = done else {
            return Ok(None);
        };
        let ranks = token_ranks(py, &t.tokens, kept.iter().map(|&k| entries[k]))?;
        let left = PyDict::new(py);
        for k in leftovers {
            // the keys were read from the file as `str`
            let key = std::str::from_utf8(t.keys.get(k)).expect("keys are UTF-8");
            left.set_item(key, entries[k].1)?;
        }
        Ok(Some((ranks, left)))
    }
}
