//! `Pipeline`: a whole tokenizer that is not byte-level BPE (SentencePiece `.model`,
//! `tokenizer.json` with Unigram / WordPiece / character BPE, a WordPiece `vocab.txt`), from
//! `toksmith_core::pipeline`. The GIL is released around every encode and decode.

//!
//! Results are built with the fallible constructors of cpython.rs and inputs read through
//! fallible buffers, so a text or id list too long for memory is a `MemoryError`.

use crate::convert::{self, Bytes, Seq};
use crate::cpython::{self, ids_into, IntTable};
use crate::errors::to_py;
use crate::pools::in_pool;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use std::sync::OnceLock;
use toksmith_core::models::spm::{ModelProto, ModelType, PieceType};
use toksmith_core::pipeline;

/// What `Pipeline.spm_model_info` gives: the pieces as (piece, score, type), the model type,
/// byte_fallback, treat_whitespace_as_suffix and the normalizer spec (precompiled charsmap,
/// add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces) and whether a denormalizer
/// with a charsmap is present.
type SpmInfo = (
    Vec<(String, f32, &'static str)>,
    &'static str,
    bool,
    bool,
    (Vec<u8>, bool, bool, bool),
    bool,
);

#[pyclass(module = "toksmith._core", frozen)]
pub struct Pipeline {
    inner: pipeline::Pipeline,
    /// One int per id, made on the first encode: a result list then costs an incref per id
    /// instead of an int allocation per id above 256.
    ints: OnceLock<IntTable>,
}

impl Pipeline {
    fn of(inner: pipeline::Pipeline) -> Self {
        Pipeline {
            inner,
            ints: OnceLock::new(),
        }
    }

    /// The list of `ids` (through the table of ints where every id has one).
    fn id_list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        let table = match self.ints.get() {
            Some(t) => t,
            None => {
                let t = IntTable::new(py, self.inner.n_vocab())?;
                // (another thread may have set it meanwhile: either table will do)
                let _ = self.ints.set(t);
                self.ints.get().expect("the int table was just set")
            }
        };
        if ids.iter().all(|&id| (id as usize) < table.len()) {
            table.ids_to_list(py, ids)
        } else {
            cpython::int_list(py, ids)
        }
    }
}

#[pymethods]
impl Pipeline {
    /// A SentencePiece `.model` file's bytes.
    #[staticmethod]
    fn from_spm_model(py: Python<'_>, data: Bytes) -> PyResult<Self> {
        let inner = py
            .detach(|| pipeline::Pipeline::from_spm_model(&data))
            .map_err(to_py)?;
        Ok(Pipeline::of(inner))
    }

    /// A Hugging Face `tokenizer.json` (its text).
    #[staticmethod]
    fn from_hf_json(py: Python<'_>, json: &str) -> PyResult<Self> {
        let inner = py
            .detach(|| pipeline::Pipeline::from_hf_json(json))
            .map_err(to_py)?;
        Ok(Pipeline::of(inner))
    }

    /// CLIP's `vocab.json` + `merges.txt` (their bytes) with the rest of its `tokenizer.json`
    /// document (`shell`); None where the files are not plain (the caller reads them in
    /// Python, which reports what is wrong).
    #[staticmethod]
    fn from_clip_files(
        py: Python<'_>,
        shell: &str,
        vocab_json: Bytes,
        merges_txt: Bytes,
    ) -> PyResult<Option<Self>> {
        let inner = py
            .detach(|| pipeline::Pipeline::from_clip_files(shell, &vocab_json, &merges_txt))
            .map_err(to_py)?;
        Ok(inner.map(Pipeline::of))
    }

    /// A WordPiece `vocab.txt` with BERT's normalizer, pre-tokenizer and decoder.
    #[staticmethod]
    #[pyo3(signature = (vocab_txt, unk_token, special, lowercase, strip_accents, handle_chinese_chars))]
    fn from_wordpiece_vocab(
        py: Python<'_>,
        vocab_txt: &str,
        unk_token: &str,
        special: Seq<String>,
        lowercase: bool,
        strip_accents: Option<bool>,
        handle_chinese_chars: bool,
    ) -> PyResult<Self> {
        let inner = py
            .detach(|| {
                pipeline::Pipeline::from_wordpiece_vocab(
                    vocab_txt,
                    unk_token,
                    &special,
                    lowercase,
                    strip_accents,
                    handle_chinese_chars,
                )
            })
            .map_err(to_py)?;
        Ok(Pipeline::of(inner))
    }

    /// The fields of a SentencePiece `.model` file that a `tokenizer.json` export needs.
    #[staticmethod]
    fn spm_model_info(py: Python<'_>, data: Bytes) -> PyResult<SpmInfo> {
        let m = py
            .detach(|| ModelProto::parse(&data))
            .map_err(|e| to_py(e.into()))?;
        let kind = |k: PieceType| match k {
            PieceType::Normal => "normal",
            PieceType::Unknown => "unknown",
            PieceType::Control => "control",
            PieceType::UserDefined => "user_defined",
            PieceType::Unused => "unused",
            PieceType::Byte => "byte",
        };
        let model_type = match m.trainer_spec.model_type {
            ModelType::Unigram => "unigram",
            ModelType::Bpe => "bpe",
            ModelType::Word => "word",
            ModelType::Char => "char",
        };
        let denormalizer = m
            .denormalizer_spec
            .as_ref()
            .is_some_and(|d| !d.precompiled_charsmap.is_empty());
        // the pieces and the charsmap moved out of the parsed model (no copy sized by the
        // file; the list of rows allocated fallibly)
        let pieces = toksmith_core::mem::try_map(
            m.pieces,
            |p| Ok((p.piece, p.score, kind(p.kind))),
            "the pieces of a SentencePiece model",
        )
        .map_err(to_py)?;
        let n = m.normalizer_spec;
        Ok((
            pieces,
            model_type,
            m.trainer_spec.byte_fallback,
            m.trainer_spec.treat_whitespace_as_suffix,
            (
                n.precompiled_charsmap,
                n.add_dummy_prefix,
                n.remove_extra_whitespaces,
                n.escape_whitespaces,
            ),
            denormalizer,
        ))
    }

    /// `"bpe"`, `"unigram"` or `"wordpiece"`.
    #[getter]
    fn model_kind(&self) -> &'static str {
        self.inner.model().kind()
    }

    #[getter]
    fn n_vocab(&self) -> usize {
        self.inner.n_vocab()
    }

    /// Whether the reference library matches special tokens in text by default.
    #[getter]
    fn matches_special_by_default(&self) -> bool {
        self.inner.matches_special_by_default()
    }

    /// The added tokens as (text, id, special).
    fn added_tokens(&self) -> Vec<(String, u32, bool)> {
        self.inner
            .added()
            .iter()
            .map(|a| (a.text.clone(), a.id, a.special))
            .collect()
    }

    fn id_to_token(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id).map(str::to_string)
    }

    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        match_special: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let ids = py
            .detach(|| self.inner.encode(text, match_special))
            .map_err(to_py)?;
        self.id_list(py, &ids)
    }

    /// `allowed`: the special tokens (ids) matched in the text; None: all of them.
    fn encode_allowing<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Option<Seq<u32>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let ids = py
            .detach(|| self.inner.encode_allowing(text, allowed.as_deref()))
            .map_err(to_py)?;
        self.id_list(py, &ids)
    }

    #[pyo3(signature = (texts, allowed, threads=0))]
    fn encode_batch_allowing<'py>(
        &self,
        py: Python<'py>,
        texts: Seq<String>,
        allowed: Option<Seq<u32>>,
        threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let all = in_pool(py, threads, || {
            self.inner.encode_batch_allowing(&texts, allowed.as_deref())
        })?
        .map_err(to_py)?;
        convert::list(py, &all)
    }

    /// The ids of `encode_allowing` and each one's `(start, end)` character span in `text`.
    fn encode_with_offsets<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Option<Seq<u32>>,
    ) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>)> {
        let (ids, chars): pipeline::IdsAndSpans = py
            .detach(|| -> toksmith_core::Result<_> {
                let (ids, spans) = self.inner.encode_with_offsets(text, allowed.as_deref())?;
                // byte offset -> index of the character it is in (or starts)
                let mut at = toksmith_core::mem::try_vec(text.len() + 1, "the character offsets")?;
                at.resize(text.len() + 1, 0usize);
                let mut n = 0;
                for (i, c) in text.char_indices() {
                    at[i..i + c.len_utf8()].fill(n);
                    n += 1;
                }
                at[text.len()] = n;
                let chars = convert::try_map(spans.into_iter(), "the spans", |(a, b)| {
                    let end = at[b] + usize::from(!text.is_char_boundary(b));
                    (at[a], end)
                })?;
                Ok((ids, chars))
            })
            .map_err(to_py)?;
        Ok((self.id_list(py, &ids)?, convert::list(py, &chars)?))
    }

    #[pyo3(signature = (texts, match_special, threads=0))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Seq<Bound<'py, PyString>>,
        match_special: bool,
        threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        // (the texts' UTF-8 as CPython holds or caches it: no copies)
        let mut utf8 = toksmith_core::mem::try_vec(texts.len(), "the texts").map_err(to_py)?;
        for t in texts.iter() {
            utf8.push(t.to_str()?);
        }
        let all = in_pool(py, threads, || {
            self.inner.encode_batch(&utf8, match_special)
        })?
        .map_err(to_py)?;
        cpython::list_of(
            py,
            all.iter()
                .map(|ids| self.id_list(py, ids).map(Bound::into_any)),
        )
    }

    fn decode<'py>(&self, py: Python<'py>, ids: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let mut v = Vec::new();
        ids_into(ids, &mut v)?;
        let text = py.detach(|| self.inner.decode(&v)).map_err(to_py)?;
        cpython::new_str(py, &text)
    }

    #[pyo3(signature = (batch, threads=0))]
    fn decode_batch<'py>(
        &self,
        py: Python<'py>,
        batch: Seq<Bound<'py, PyAny>>,
        threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut all = toksmith_core::mem::try_vec(batch.len(), "the ids").map_err(to_py)?;
        for ids in batch.iter() {
            let mut v = Vec::new();
            ids_into(ids, &mut v)?;
            all.push(v);
        }
        let texts = in_pool(py, threads, || self.inner.decode_batch(&all))?.map_err(to_py)?;
        cpython::list_of(py, texts.iter().map(|t| cpython::new_str(py, t)))
    }
}
