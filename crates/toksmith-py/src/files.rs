//! Glue for the tokenizer-file readers: Python containers in, `toksmith_core::vocab_files` in
//! the middle, Python containers out.
//!
//! Every function returns `None` where the core declines, and also where the input is not of
//! the plain shape it handles (a key that is not a `str`, an id that is not an exact `int` in
//! 0..2^32, a merge that is neither a `str` nor a pair of them...). The Python readers then run
//! their reference loops, which raise the error with its message (or handle the odd case).

use crate::errors::to_py;
use crate::json_tables::JsonTables;
use crate::pools::detached_in_pool;
use crate::text::{self, StrView, Wide};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyInt, PyList, PyString, PyTuple};
use toksmith_core::bytelevel;
use toksmith_core::vocab_files::{self, Entry, Flat, Ranks};

/// An exact `int` (not a `bool`) in 0..2^32.
fn plain_id(v: &Bound<'_, PyAny>) -> Option<u32> {
    if !v.is_exact_instance_of::<PyInt>() {
        return None;
    }
    v.extract::<u32>().ok()
}

/// Call `f` on each code point of a `str` until it returns false; false if it did.
fn each_unit(s: &Bound<'_, PyString>, mut f: impl FnMut(u32) -> bool) -> PyResult<bool> {
    Ok(match text::view(s)? {
        StrView::Utf8(t) => t.chars().all(|c| f(c as u32)),
        StrView::Wide(Wide::Ucs1(units)) => units.iter().all(|&u| f(u as u32)),
        StrView::Wide(Wide::Ucs2(units)) => units.iter().all(|&u| f(u as u32)),
        StrView::Wide(Wide::Ucs4(units)) => units.iter().all(|&u| f(u)),
    })
}

/// Append the byte a code point of the byte-level alphabet stands for; false for another one.
fn push_unit(u: u32, out: &mut Vec<u8>) -> bool {
    match bytelevel::unit_to_byte(u) {
        Some(b) => {
            out.push(b);
            true
        }
        None => false,
    }
}

/// Append the bytes a byte-level spelling stands for; false if it has another character.
fn spell(s: &Bound<'_, PyString>, out: &mut Vec<u8>) -> PyResult<bool> {
    room(out, s)?;
    each_unit(s, |u| push_unit(u, out))
}

/// Room in `out` for the bytes a spelling (at most one per code point) stands for, so that
/// decoding it never allocates.
fn room(out: &mut Vec<u8>, s: &Bound<'_, PyString>) -> PyResult<()> {
    let n = s.len()?;
    toksmith_core::mem::try_reserve(out, n, "the strings of a tokenizer file").map_err(to_py)
}

/// Decode a merge line `"left right"` into `out`: the offset where `right` starts, or None
/// unless it has exactly one space, no other character outside the alphabet and no empty part.
fn spell_line(s: &Bound<'_, PyString>, out: &mut Vec<u8>) -> PyResult<Option<usize>> {
    room(out, s)?;
    let start = out.len();
    let mut mid = None;
    let ok = each_unit(s, |u| {
        if u == 0x20 {
            if mid.is_some() {
                return false;
            }
            mid = Some(out.len());
            return true;
        }
        push_unit(u, out)
    })?;
    Ok(mid.filter(|&m| ok && m > start && out.len() > m))
}

/// Decoded merge parts and each merge's two part indices.
pub type MergeParts = (Flat, Vec<(usize, usize)>);

/// A file's merge list (`"left right"` strings, or unless `lines_only` pairs of non-empty
/// strings as lists or tuples) decoded: the parts, and each merge's two part indices.
pub fn merge_parts(obj: &Bound<'_, PyAny>, lines_only: bool) -> PyResult<Option<MergeParts>> {
    let Ok(list) = obj.cast::<PyList>() else {
        return Ok(None);
    };
    const WHAT: &str = "the merges of a tokenizer file";
    let mut parts = Flat::with_capacity(2 * list.len(), 4 * list.len()).map_err(to_py)?;
    let mut merges = toksmith_core::mem::try_vec(list.len(), WHAT).map_err(to_py)?;
    for m in list.iter() {
        let start = parts.bytes.len();
        if let Ok(line) = m.cast_exact::<PyString>() {
            let Some(mid) = spell_line(line, &mut parts.bytes)? else {
                return Ok(None);
            };
            let pair = parts.end_pair(start, mid).map_err(to_py)?;
            toksmith_core::mem::try_push(&mut merges, pair, WHAT).map_err(to_py)?;
            continue;
        }
        if lines_only
            || !(m.is_exact_instance_of::<PyList>() || m.is_exact_instance_of::<PyTuple>())
            || m.len()? != 2
        {
            return Ok(None);
        }
        let (a, b) = (m.get_item(0)?, m.get_item(1)?);
        let (Ok(a), Ok(b)) = (a.cast_exact::<PyString>(), b.cast_exact::<PyString>()) else {
            return Ok(None);
        };
        if !spell(a, &mut parts.bytes)? {
            return Ok(None);
        }
        let mid = parts.bytes.len();
        if !spell(b, &mut parts.bytes)? || mid == start || parts.bytes.len() == mid {
            return Ok(None);
        }
        let pair = parts.end_pair(start, mid).map_err(to_py)?;
        toksmith_core::mem::try_push(&mut merges, pair, WHAT).map_err(to_py)?;
    }
    Ok(Some((parts, merges)))
}

fn ranks_dict<'py, 'a>(
    py: Python<'py>,
    ranks: impl Iterator<Item = (&'a [u8], u32)>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (b, i) in ranks {
        d.set_item(PyBytes::new(py, b), i)?;
    }
    Ok(d)
}

/// `formats/tiktoken.py::_parse_ranks`: the ranks of a `.tiktoken` file as a dict.
#[pyfunction]
pub fn parse_tiktoken_ranks<'py>(
    py: Python<'py>,
    raw: &[u8],
) -> PyResult<Option<Bound<'py, PyDict>>> {
    match py
        .detach(|| vocab_files::parse_tiktoken(raw))
        .map_err(to_py)?
    {
        Some(r) => Ok(Some(ranks_dict(py, r.iter().map(|(b, i)| (&b[..], *i)))?)),
        None => Ok(None),
    }
}

/// `formats/gpt2.py::read_merges_file` on the decoded text: `[(left, right)]`.
#[pyfunction]
pub fn parse_merges_text(text: &str) -> PyResult<Option<Vec<(&str, &str)>>> {
    vocab_files::parse_merges_text(text).map_err(to_py)
}

/// A vocab dict's entries decoded: the spelled tokens, `(entry, id)` per key and the keys.
/// A key whose id is an added token's must be that token's text (else None) and is
/// [`Entry::Added`]; None if a key is not a `str` or a value not a plain id.
#[allow(clippy::type_complexity)]
fn vocab_entries<'py>(
    vocab: &Bound<'py, PyDict>,
    added: &rustc_hash::FxHashMap<u32, Bound<'py, PyString>>,
) -> PyResult<Option<(Flat, Vec<(Entry, u32)>, Vec<Bound<'py, PyString>>)>> {
    const WHAT: &str = "the vocabulary of a tokenizer file";
    let mut tokens = Flat::with_capacity(vocab.len(), 8 * vocab.len()).map_err(to_py)?;
    let mut entries = toksmith_core::mem::try_vec(vocab.len(), WHAT).map_err(to_py)?;
    let mut keys = toksmith_core::mem::try_vec(vocab.len(), WHAT).map_err(to_py)?;
    for (k, v) in vocab.iter() {
        let (Ok(k), Some(id)) = (k.cast_into_exact::<PyString>(), plain_id(&v)) else {
            return Ok(None);
        };
        let entry = if let Some(t) = added.get(&id) {
            if !k.as_any().eq(t.as_any())? {
                return Ok(None);
            }
            Entry::Added
        } else {
            let start = tokens.bytes.len();
            if spell(&k, &mut tokens.bytes)? {
                Entry::Token(tokens.end_item(start).map_err(to_py)?)
            } else {
                tokens.bytes.truncate(start);
                Entry::Unspelled
            }
        };
        entries.push((entry, id));
        keys.push(k);
    }
    Ok(Some((tokens, entries, keys)))
}

/// The ranks of decoded vocab entries that are tokens, as a dict.
pub(crate) fn token_ranks<'py>(
    py: Python<'py>,
    tokens: &Flat,
    entries: impl Iterator<Item = (Entry, u32)>,
) -> PyResult<Bound<'py, PyDict>> {
    ranks_dict(
        py,
        entries.filter_map(|(e, id)| match e {
            Entry::Token(t) => Some((tokens.get(t), id)),
            _ => None,
        }),
    )
}

/// `serialization.py::from_dict`'s table checks: `(ranks, merge id pairs or None)`.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn toksmith_tables<'py>(
    py: Python<'py>,
    vocab: &Bound<'py, PyAny>,
    merges: &Bound<'py, PyAny>,
) -> PyResult<Option<(Bound<'py, PyDict>, Option<Vec<(u32, u32)>>)>> {
    let Ok(vocab) = vocab.cast::<PyDict>() else {
        return Ok(None);
    };
    let Some((tokens, entries, _)) = vocab_entries(vocab, &Default::default())? else {
        return Ok(None);
    };
    let merges = if merges.is_none() {
        None
    } else {
        match merge_parts(merges, true)? {
            Some(m) => Some(m),
            None => return Ok(None),
        }
    };
    let checked = detached_in_pool(py, || {
        let m = merges.as_ref().map(|(p, m)| (p, &m[..]));
        vocab_files::toksmith_tables(&tokens, &entries, m)
    })?
    .map_err(to_py)?;
    let Some(merge_ids) = checked else {
        return Ok(None);
    };
    let ranks = token_ranks(py, &tokens, entries.iter().copied())?;
    Ok(Some((ranks, merge_ids)))
}

/// Added tokens `{text: id}` by id (the last one given an id, like the reference's dict); None
/// unless every key is a `str` and every value a plain id.
pub(crate) fn added_by_id<'py>(
    added: &Bound<'py, PyDict>,
) -> Option<rustc_hash::FxHashMap<u32, Bound<'py, PyString>>> {
    let mut out = rustc_hash::FxHashMap::default();
    for (t, i) in added.iter() {
        out.insert(plain_id(&i)?, t.cast_into_exact::<PyString>().ok()?);
    }
    Some(out)
}

/// `formats/_common.py::ranks_from_vocab_and_merges`: `(ranks, leftovers)`.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn ranks_from_vocab_and_merges<'py>(
    py: Python<'py>,
    vocab: &Bound<'py, PyAny>,
    merges: &Bound<'py, PyAny>,
    added: &Bound<'py, PyAny>,
) -> PyResult<Option<(Bound<'py, PyDict>, Bound<'py, PyDict>)>> {
    let (Ok(vocab), Ok(added)) = (vocab.cast::<PyDict>(), added.cast::<PyDict>()) else {
        return Ok(None);
    };
    let Some(added_ids) = added_by_id(added) else {
        return Ok(None);
    };
    let Some((tokens, entries, keys)) = vocab_entries(vocab, &added_ids)? else {
        return Ok(None);
    };
    let Some((parts, merges)) = merge_parts(merges, false)? else {
        return Ok(None);
    };
    let done = detached_in_pool(py, || {
        vocab_files::ranks_from_vocab_and_merges(&tokens, &entries, &parts, &merges)
    })?
    .map_err(to_py)?;
    let Some((kept, leftovers)) = done else {
        return Ok(None);
    };
    let ranks = token_ranks(py, &tokens, kept.iter().map(|&k| entries[k]))?;
    // a leftover's key is its own spelling (the alphabet is a bijection)
    let left = PyDict::new(py);
    for k in leftovers {
        left.set_item(&keys[k], entries[k].1)?;
    }
    Ok(Some((ranks, left)))
}

/// Split a JSON tokenizer file's raw bytes (`layout`: "huggingface" for a `tokenizer.json`,
/// "toksmith" for toksmith's own file): `(the document without its vocab and merges, as JSON
/// text, the decoded tables)`, or None to let the caller parse the whole file.
#[pyfunction]
pub fn split_json_tables(
    py: Python<'_>,
    raw: &Bound<'_, PyBytes>,
    layout: &str,
) -> PyResult<Option<(String, JsonTables)>> {
    use toksmith_core::bpe_json::Layout;
    let layout = match layout {
        "huggingface" => Layout::HuggingFace,
        "toksmith" => Layout::Toksmith,
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "layout must be 'huggingface' or 'toksmith', not {other:?}"
            )))
        }
    };
    let raw = raw.as_bytes();
    Ok(py
        .detach(|| toksmith_core::bpe_json::split(raw, layout))
        .map_err(to_py)?
        .map(|mut inner| {
            let rest = std::mem::take(&mut inner.rest);
            (rest, JsonTables { inner })
        }))
}

/// GPT-2's `encoder.json` (raw bytes) and `vocab.bpe` (text) decoded natively, as
/// [`JsonTables`]; None to let the caller read them itself.
#[pyfunction]
pub fn split_gpt2_files(
    py: Python<'_>,
    vocab_json: &Bound<'_, PyBytes>,
    merges_text: &str,
) -> PyResult<Option<JsonTables>> {
    let raw = vocab_json.as_bytes();
    Ok(py
        .detach(|| toksmith_core::bpe_json::split_gpt2(raw, merges_text))
        .map_err(to_py)?
        .map(|inner| JsonTables { inner }))
}

/// `files/huggingface.py::tiktoken_merges` on a rank dict `{bytes: int}` (None if it is not
/// one, ids in 0..2^32): the byte-level spelled merge pairs.
#[pyfunction]
pub fn tiktoken_merges(
    py: Python<'_>,
    ranks: &Bound<'_, PyAny>,
) -> PyResult<Option<Vec<(String, String)>>> {
    let Some(ranks) = plain_ranks(ranks)? else {
        return Ok(None);
    };
    py.detach(|| vocab_files::tiktoken_merges(&ranks))
        .map(Some)
        .map_err(to_py)
}

/// A rank dict `{bytes: int}` as `(bytes, id)` pairs, if every key is `bytes` and every value
/// an exact `int` in 0..2^32.
pub fn plain_ranks(d: &Bound<'_, PyAny>) -> PyResult<Option<Ranks>> {
    const WHAT: &str = "a rank table";
    let Ok(d) = d.cast_exact::<PyDict>() else {
        return Ok(None);
    };
    let mut out = toksmith_core::mem::try_vec(d.len(), WHAT).map_err(to_py)?;
    for (k, v) in d.iter() {
        let (Ok(k), Some(id)) = (k.cast_exact::<PyBytes>(), plain_id(&v)) else {
            return Ok(None);
        };
        let k = toksmith_core::mem::try_bytes(k.as_bytes(), WHAT).map_err(to_py)?;
        toksmith_core::mem::try_push(&mut out, (k, id), WHAT).map_err(to_py)?;
    }
    Ok(Some(out))
}
