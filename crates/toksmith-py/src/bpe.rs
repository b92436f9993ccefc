//! `Bpe`, the native BPE encoder/decoder: encoding into lists of shared ints, batches (see
//! batch.rs), decoding to bytes or str.

use crate::batch;
use crate::buffers::{with_decode_buffers, with_id_buffer};
use crate::convert::{self, Bytes, Seq};
use crate::cpython::{self, ids_into, spans_to_list, IntTable};
use crate::errors::to_py;
use crate::files;
use crate::json_tables::JsonTables;
use crate::normalizer::Normalizer;
use crate::pools::{detached_in_pool, in_pool};
use crate::text::{self, with_utf8};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyString};
use toksmith_core::encode::{Allowed, Encoder};
use toksmith_core::pretokenize::Pretokenizer;
use toksmith_core::vocab::{AddedKind, AddedToken, Vocab};

fn allowed_from(allowed: Option<Seq<u32>>, allow_all: bool) -> Allowed {
    if allow_all {
        Allowed::All
    } else {
        match allowed {
            Some(v) if !v.is_empty() => Allowed::Some(v.0),
            _ => Allowed::None,
        }
    }
}

/// Native BPE encoder/decoder over one vocabulary and split pattern.
#[pyclass(module = "toksmith._core", frozen)]
pub(crate) struct Bpe {
    pub(crate) enc: Encoder,
    /// One Python int per id, shared by every returned list.
    pub(crate) ints: IntTable,
}

/// Why encoding into a list failed.
enum Failure {
    Core(toksmith_core::Error),
    Utf8(text::ToUtf8Error),
    Py(PyErr),
}

impl From<PyErr> for Failure {
    fn from(e: PyErr) -> Self {
        Failure::Py(e)
    }
}

impl Failure {
    fn into_py(self, text: &Bound<'_, PyString>) -> PyErr {
        match self {
            Failure::Core(e) => to_py(e),
            Failure::Utf8(s) => text::utf8_error(text, s),
            Failure::Py(e) => e,
        }
    }
}

/// Texts at least this long (UTF-8 bytes) are encoded straight into their result list.
const DIRECT_LIST_MIN: usize = 1 << 16;

impl Bpe {
    /// Decode `ids` into this thread's byte buffer (GIL released while decoding) and hand the
    /// bytes to `finish`, which builds the Python result.
    fn with_decoded<'py, T>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        finish: impl FnOnce(&[u8]) -> PyResult<T>,
    ) -> PyResult<T> {
        with_decode_buffers(|buf| {
            ids_into(ids, &mut buf.ids)?;
            buf.bytes.clear();
            let (id_buf, bytes) = (&buf.ids, &mut buf.bytes);
            py.detach(|| toksmith_core::decode::decode_into(&self.enc.vocab, id_buf, bytes))
                .map_err(to_py)?;
            finish(bytes)
        })
    }

    /// Encode `text` to a list: straight into the list for long texts, else through a vector.
    fn encode_to_list<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        allowed: &Allowed,
    ) -> PyResult<Bound<'py, PyList>> {
        let v = text::view(text)?;
        match v {
            text::StrView::Utf8(s) if s.len() >= DIRECT_LIST_MIN => self
                .ints
                .encode_list(py, s.len(), |sink| {
                    self.enc
                        .encode_blocks(s, allowed, sink)
                        .map_err(Failure::Core)
                })
                .map_err(|f| f.into_py(text)),
            text::StrView::Wide(w) if w.len() >= DIRECT_LIST_MIN / 4 => {
                let len = w.len();
                // at most one id per UTF-8 byte
                let cap = v.max_utf8_len();
                if self.enc.can_encode_parts() {
                    // Convert and encode 64K characters at a time: the UTF-8 copy of the whole
                    // text (fresh memory, so page faults on every 4 KB) is never made.
                    const PART: usize = 1 << 16;
                    self.ints
                        .encode_list(py, cap, |sink| {
                            let mut at = 0;
                            let mut bad = None;
                            let mut fill = |buf: &mut String| {
                                let end = (at + PART).min(len);
                                if let Err(e) = v.append_utf8(at, end, buf) {
                                    bad = Some(e);
                                    return false;
                                }
                                at = end;
                                at < len
                            };
                            let r = self.enc.encode_parts(allowed, cap, &mut fill, sink);
                            match bad {
                                Some(e) => Err(Failure::Utf8(e)),
                                None => r.map_err(Failure::Core),
                            }
                        })
                        .map_err(|f| f.into_py(text))
                } else {
                    let owned = py
                        .detach(|| v.utf8().map(|c| c.into_owned()))
                        .map_err(|e| text::utf8_error(text, e))?;
                    self.ints
                        .encode_list(py, owned.len(), |sink| {
                            self.enc
                                .encode_blocks(&owned, allowed, sink)
                                .map_err(Failure::Core)
                        })
                        .map_err(|f| f.into_py(text))
                }
            }
            _ => {
                // short texts: the ids go through this thread's buffer (no vector per call),
                // the shortest encoded with the GIL held
                with_id_buffer(|buf| {
                    buf.clear();
                    text::with_utf8_short(py, text, |t| self.enc.encode_into(t, allowed, buf))?
                        .map_err(to_py)?;
                    self.ints.ids_to_list(py, buf)
                })
            }
        }
    }
}

/// The most unused ids below the largest id a vocabulary may have (more when it has more
/// tokens: up to as many unused ids as tokens).
const MAX_UNUSED_IDS: usize = 1 << 20;

impl Bpe {
    fn build(
        py: Python<'_>,
        mergeable: Vec<(Vec<u8>, u32)>,
        added: Vec<(String, u32, bool)>,
        pattern: &str,
    ) -> PyResult<Self> {
        let added: Vec<AddedToken> = added
            .into_iter()
            .map(|(text, id, pinned)| AddedToken {
                text,
                id,
                kind: if pinned {
                    AddedKind::Pinned
                } else {
                    AddedKind::Special
                },
            })
            .collect();
        // Every id below the largest gets a slot in the tables (about 60 bytes with its Python
        // int): a few far-off ids (a special token at 2**32-1) would ask for hundreds of GB
        // and abort the process. Refuse vocabularies that are mostly holes.
        let count = mergeable.len() + added.len();
        let max_id = mergeable
            .iter()
            .map(|(_, id)| *id)
            .chain(added.iter().map(|a| a.id))
            .max();
        if let Some(max_id) = max_id {
            let unused = (max_id as usize + 1).saturating_sub(count);
            if unused > MAX_UNUSED_IDS.max(count) {
                return Err(to_py(toksmith_core::Error::InvalidVocab(format!(
                    "the largest token id is {max_id} but there are only {count} tokens: ids must \
                     be dense (at most max({MAX_UNUSED_IDS}, number of tokens) unused ids below the \
                     largest), since every id up to the largest takes room in the tables; number \
                     the tokens, special ones included, from 0 without large gaps"
                ))));
            }
        }
        let pattern = pattern.to_string();
        let enc = detached_in_pool(py, move || -> toksmith_core::Result<Encoder> {
            let vocab = Vocab::new(mergeable, added)?;
            let pre = Pretokenizer::new(&pattern)?;
            Encoder::new(vocab, pre)
        })?;
        let enc = enc.map_err(to_py)?;
        let ints = IntTable::new(py, enc.vocab.n_vocab())?;
        Ok(Bpe { enc, ints })
    }
}

#[pymethods]
impl Bpe {
    /// mergeable: [(bytes, id)]; added: [(text, id, is_pinned)]; pattern: name or regex.
    #[new]
    fn new(
        py: Python<'_>,
        mergeable: Seq<(Bytes, u32)>,
        added: Seq<(String, u32, bool)>,
        pattern: &str,
    ) -> PyResult<Self> {
        let mergeable =
            convert::try_map(mergeable.0.into_iter(), "the tokens", |(b, id)| (b.0, id))
                .map_err(to_py)?;
        Bpe::build(py, mergeable, added.0, pattern)
    }

    /// `Bpe(list(ranks.items()), added, pattern)` straight from a rank dict, or None unless
    /// every key is `bytes` and every value an exact int in 0..2^32 (the caller then checks
    /// the entries one by one, for the error message).
    #[staticmethod]
    fn from_ranks(
        py: Python<'_>,
        ranks: &Bound<'_, PyAny>,
        added: Seq<(String, u32, bool)>,
        pattern: &str,
    ) -> PyResult<Option<Self>> {
        match files::plain_ranks(ranks)? {
            Some(mergeable) => Bpe::build(py, mergeable, added.0, pattern).map(Some),
            None => Ok(None),
        }
    }

    /// Whether every merge recovered from the ranks is one of `merges` (`"left right"`
    /// strings or pairs, spelled byte-level); None if the merges cannot be recovered or a file
    /// merge is malformed (the caller's reference check then says why).
    fn merges_listed(&self, py: Python<'_>, merges: &Bound<'_, PyAny>) -> PyResult<Option<bool>> {
        let Some((parts, merges)) = files::merge_parts(merges, false)? else {
            return Ok(None);
        };
        detached_in_pool(py, || {
            toksmith_core::vocab_files::merges_listed(&self.enc.vocab, &parts, &merges)
        })?
        .map_err(to_py)
    }

    /// [`Bpe::merges_listed`] on the merges of a JSON tokenizer file decoded natively.
    fn merges_listed_in(
        &self,
        py: Python<'_>,
        tables: &Bound<'_, JsonTables>,
    ) -> PyResult<Option<bool>> {
        let t = &tables.get().inner;
        detached_in_pool(py, || {
            toksmith_core::vocab_files::merges_listed(&self.enc.vocab, &t.parts, &t.merges)
        })?
        .map_err(to_py)
    }

    #[getter]
    fn n_vocab(&self) -> usize {
        self.enc.vocab.n_vocab()
    }

    #[getter]
    fn n_mergeable(&self) -> usize {
        self.enc.vocab.n_mergeable()
    }

    #[getter]
    fn pattern(&self) -> String {
        self.enc.pretok.pattern().to_string()
    }

    #[getter]
    fn fast_pretokenizer(&self) -> bool {
        self.enc.pretok.is_fast()
    }

    fn encode_ordinary<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.encode_to_list(py, text, &Allowed::None)
    }

    #[pyo3(signature = (text, allowed=None, allow_all=false))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        allowed: Option<Seq<u32>>,
        allow_all: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let a = allowed_from(allowed, allow_all);
        self.encode_to_list(py, text, &a)
    }

    /// Encode with a normalizer applied to the text between the allowed special tokens
    /// (`Encoder::encode_normalized`), GIL released.
    #[pyo3(signature = (text, normalizer, allowed=None, allow_all=false))]
    fn encode_normalized<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        normalizer: &Normalizer,
        allowed: Option<Seq<u32>>,
        allow_all: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let a = allowed_from(allowed, allow_all);
        let ids = py
            .detach(|| self.enc.encode_normalized(text, &a, &normalizer.inner))
            .map_err(to_py)?;
        self.ints.ids_to_list(py, &ids)
    }

    /// `encode_normalized` of each text, on `threads` threads.
    #[pyo3(signature = (texts, normalizer, allowed=None, allow_all=false, threads=0))]
    fn encode_normalized_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Seq<String>,
        normalizer: &Normalizer,
        allowed: Option<Seq<u32>>,
        allow_all: bool,
        threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let a = allowed_from(allowed, allow_all);
        let all = in_pool(py, threads, || {
            convert::try_par_map(&texts, "the ids of a batch", |t| {
                self.enc.encode_normalized(t, &a, &normalizer.inner)
            })
        })?
        .map_err(to_py)?;
        cpython::list_of(
            py,
            all.iter()
                .map(|ids| self.ints.ids_to_list(py, ids).map(Bound::into_any)),
        )
    }

    /// The single bytes that are not tokens (bytes UTF-8 never uses).
    #[getter]
    fn missing_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.enc.vocab.missing_bytes())
    }

    /// Encode to a little-endian buffer of u16 (`narrow`) or u32 values (for numpy).
    #[pyo3(signature = (text, allowed=None, allow_all=false, narrow=false))]
    fn encode_to_buffer<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        allowed: Option<Seq<u32>>,
        allow_all: bool,
        narrow: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let a = allowed_from(allowed, allow_all);
        // The ids go in blocks straight into the bytes (no id vector), which grow fallibly:
        // a text too long for memory is a MemoryError, not an abort.
        let width = if narrow { 2 } else { 4 };
        let bytes = with_utf8(py, text, |text| -> toksmith_core::Result<Vec<u8>> {
            let mut out = Vec::new();
            let mut failed = Ok(());
            self.enc.encode_blocks(text, &a, &mut |ids: &[u32]| {
                if failed.is_ok() {
                    failed = toksmith_core::mem::try_reserve(
                        &mut out,
                        ids.len() * width,
                        "the encoded ids",
                    )
                    .and_then(|_| toksmith_core::ids_format::ids_to_le(ids, width, &mut out));
                }
            })?;
            failed.map(|_| out)
        })?
        .map_err(to_py)?;
        // (`bytes_from` raises MemoryError where `PyBytes::new` would panic)
        text::bytes_from(py, &bytes)
    }

    /// Encode bytes that need not be UTF-8, as tiktoken's `_encode_bytes` does
    /// (`Encoder::encode_bytes`).
    fn encode_bytes<'py>(&self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyList>> {
        let ids = py.detach(|| self.enc.encode_bytes(data)).map_err(to_py)?;
        self.ints.ids_to_list(py, &ids)
    }

    #[pyo3(signature = (texts, allowed=None, allow_all=false, threads=0))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Seq<Bound<'py, PyString>>,
        allowed: Option<Seq<u32>>,
        allow_all: bool,
        threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let a = allowed_from(allowed, allow_all);
        batch::encode_batch(py, &self.enc, &self.ints, &texts, &a, threads)
    }

    /// Encode `texts` on `threads` threads and write their ids straight to bytes, with no Python
    /// int or list made (`toksmith encode`'s path): `width` 0 gives decimal text, `sep`
    /// between ids; with `lines` each text's ids become one line (`open`, ids, `close`, `\n`),
    /// otherwise the ids of all texts form one run. `width` 2 or 4 gives little-endian
    /// integers. Returns the bytes and the number of ids.
    #[pyo3(signature = (texts, allowed=None, allow_all=false, threads=0, width=0, sep=b" ".as_slice(), lines=false, open=b"".as_slice(), close=b"".as_slice()))]
    #[allow(clippy::too_many_arguments)]
    fn encode_batch_bytes<'py>(
        &self,
        py: Python<'py>,
        texts: Seq<Bound<'py, PyString>>,
        allowed: Option<Seq<u32>>,
        allow_all: bool,
        threads: usize,
        width: usize,
        sep: &[u8],
        lines: bool,
        open: &[u8],
        close: &[u8],
    ) -> PyResult<(Bound<'py, PyBytes>, usize)> {
        let a = allowed_from(allowed, allow_all);
        batch::encode_batch_bytes(
            py, &self.enc, &texts, &a, threads, width, sep, lines, open, close,
        )
    }

    /// Encode `texts` on `threads` threads into one array of ids (`width` bytes each, little
    /// endian) and their int64 offsets, as two `bytearray`s (see `batch::encode_batch_arrays`):
    /// `encode_ordinary_batch_to_numpy`'s path, with no Python int made.
    #[pyo3(signature = (texts, allowed=None, allow_all=false, threads=0, width=4, bos=None, eos=None, marks=None))]
    #[allow(clippy::too_many_arguments)]
    fn encode_batch_arrays<'py>(
        &self,
        py: Python<'py>,
        texts: Seq<Bound<'py, PyString>>,
        allowed: Option<Seq<u32>>,
        allow_all: bool,
        threads: usize,
        width: usize,
        bos: Option<u32>,
        eos: Option<u32>,
        marks: Option<&[u8]>,
    ) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)> {
        let a = allowed_from(allowed, allow_all);
        batch::encode_batch_arrays(py, &self.enc, &texts, &a, threads, width, bos, eos, marks)
    }

    /// First special token found in `text` among `disallowed` ids (all when None):
    /// (token, byte offset) or None.
    #[pyo3(signature = (text, disallowed=None))]
    fn find_special(
        &self,
        py: Python<'_>,
        text: &str,
        disallowed: Option<Seq<u32>>,
    ) -> Option<(String, usize)> {
        py.detach(|| self.enc.find_special(text, disallowed.as_deref()))
    }

    /// Index of the first of `texts` that holds a special token among `disallowed` ids (all
    /// when None), searched on `threads` threads; None when none does.
    #[pyo3(signature = (texts, disallowed=None, threads=0))]
    fn first_special<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        disallowed: Option<Vec<u32>>,
        threads: usize,
    ) -> PyResult<Option<usize>> {
        batch::first_special(py, &self.enc, &texts, disallowed.as_deref(), threads)
    }

    fn decode_bytes<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.with_decoded(py, ids, |bytes| text::bytes_from(py, bytes))
    }

    #[pyo3(signature = (batch, threads=0))]
    fn decode_bytes_batch<'py>(
        &self,
        py: Python<'py>,
        batch: Seq<Bound<'py, PyAny>>,
        threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        // (read through `ids_into`: a list too long for memory raises MemoryError)
        let mut all = toksmith_core::mem::try_vec(batch.len(), "the ids").map_err(to_py)?;
        for ids in batch.iter() {
            let mut v = Vec::new();
            ids_into(ids, &mut v)?;
            all.push(v);
        }
        let outs = in_pool(py, threads, || {
            convert::try_par_map(&all, "the decoded texts", |ids| {
                toksmith_core::decode::decode_bytes(&self.enc.vocab, ids)
            })
        })?
        .map_err(to_py)?;
        // (`bytes_from` raises MemoryError where `PyBytes::new` would panic)
        let items = outs
            .iter()
            .map(|b| text::bytes_from(py, b).map(Bound::into_any));
        cpython::list_of(py, items)
    }

    /// The character span of each id in the decoded text (`toksmith_core::decode::char_spans`):
    /// a list of `(start, end)` tuples, or of the starts only.
    #[pyo3(signature = (ids, starts_only=false))]
    fn char_spans<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        starts_only: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut spans = Vec::new();
        with_decode_buffers(|buf| {
            ids_into(ids, &mut buf.ids)?;
            let id_buf = &buf.ids;
            py.detach(|| toksmith_core::decode::char_spans(&self.enc.vocab, id_buf, &mut spans))
                .map_err(to_py)
        })?;
        if starts_only {
            cpython::list_of(py, spans.iter().map(|s| cpython::int(py, s.0 as u64)))
        } else {
            spans_to_list(py, &spans)
        }
    }

    /// Decode to str: long valid UTF-8 is written straight into the str's storage
    /// (`text::str_from_utf8`); short or invalid UTF-8 goes to CPython's decoder with the
    /// `errors` handler (e.g. "replace" or "strict"). No intermediate bytes object either way.
    #[pyo3(signature = (ids, errors="replace"))]
    fn decode_str<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        errors: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let errors = std::ffi::CString::new(errors)
            .map_err(|_| pyo3::exceptions::PyValueError::new_err("errors must not contain NUL"))?;
        self.with_decoded(py, ids, |bytes| {
            if bytes.len() >= text::FAST_STR_MIN {
                if let Some(layout) = py.detach(|| toksmith_core::utf8::layout(bytes)) {
                    return text::str_from_utf8(py, bytes, layout);
                }
            }
            cpython::decode_utf8(py, bytes, &errors)
        })
    }

    fn token_bytes<'py>(&self, py: Python<'py>, id: u32) -> PyResult<Bound<'py, PyBytes>> {
        let b = self.enc.vocab.token_bytes(id).map_err(to_py)?;
        Ok(PyBytes::new(py, b))
    }

    fn token_id(&self, bytes: &[u8]) -> Option<u32> {
        self.enc.vocab.token_id(bytes)
    }

    fn encode_single_token(&self, bytes: &[u8]) -> PyResult<u32> {
        self.enc.encode_single_token(bytes).map_err(to_py)
    }

    /// A new dict of `bytes -> id` over the mergeable tokens, in id order.
    fn mergeable_ranks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (b, id) in self.enc.vocab.mergeable_sorted() {
            d.set_item(PyBytes::new(py, b), self.ints.get(py, id))?;
        }
        Ok(d)
    }

    /// [(left_id, right_id, merged_id)] recovered from the ranks.
    fn recover_merges<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let merges = detached_in_pool(py, || self.enc.vocab.recover_merges())?.map_err(to_py)?;
        convert::list(py, &merges)
    }
}
