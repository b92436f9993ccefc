//! `Pipeline`: a whole tokenizer that is not byte-level BPE (SentencePiece `.model`,
//! `tokenizer.json` with Unigram / WordPiece / character BPE, a WordPiece `vocab.txt`), from
//! `toksmith_core::pipeline`. The GIL is released around every encode and decode.

use crate::errors::to_py;
use crate::pools::in_pool;
use pyo3::prelude::*;
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
}

#[pymethods]
impl Pipeline {
    /// A SentencePiece `.model` file's bytes.
    #[staticmethod]
    fn from_spm_model(py: Python<'_>, data: Vec<u8>) -> PyResult<Self> {
        let inner = py
            .detach(|| pipeline::Pipeline::from_spm_model(&data))
            .map_err(to_py)?;
        Ok(Pipeline { inner })
    }

    /// A Hugging Face `tokenizer.json` (its text).
    #[staticmethod]
    fn from_hf_json(py: Python<'_>, json: &str) -> PyResult<Self> {
        let inner = py
            .detach(|| pipeline::Pipeline::from_hf_json(json))
            .map_err(to_py)?;
        Ok(Pipeline { inner })
    }

    /// A WordPiece `vocab.txt` with BERT's normalizer, pre-tokenizer and decoder.
    #[staticmethod]
    #[pyo3(signature = (vocab_txt, unk_token, special, lowercase, strip_accents, handle_chinese_chars))]
    fn from_wordpiece_vocab(
        py: Python<'_>,
        vocab_txt: &str,
        unk_token: &str,
        special: Vec<String>,
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
        Ok(Pipeline { inner })
    }

    /// The fields of a SentencePiece `.model` file that a `tokenizer.json` export needs.
    #[staticmethod]
    fn spm_model_info(py: Python<'_>, data: Vec<u8>) -> PyResult<SpmInfo> {
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
        let pieces = m
            .pieces
            .iter()
            .map(|p| (p.piece.clone(), p.score, kind(p.kind)))
            .collect();
        let model_type = match m.trainer_spec.model_type {
            ModelType::Unigram => "unigram",
            ModelType::Bpe => "bpe",
            ModelType::Word => "word",
            ModelType::Char => "char",
        };
        let n = &m.normalizer_spec;
        let denormalizer = m
            .denormalizer_spec
            .as_ref()
            .is_some_and(|d| !d.precompiled_charsmap.is_empty());
        Ok((
            pieces,
            model_type,
            m.trainer_spec.byte_fallback,
            m.trainer_spec.treat_whitespace_as_suffix,
            (
                n.precompiled_charsmap.clone(),
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

    fn encode(&self, py: Python<'_>, text: &str, match_special: bool) -> PyResult<Vec<u32>> {
        py.detach(|| self.inner.encode(text, match_special))
            .map_err(to_py)
    }

    /// `allowed`: the special tokens (ids) matched in the text; None: all of them.
    fn encode_allowing(
        &self,
        py: Python<'_>,
        text: &str,
        allowed: Option<Vec<u32>>,
    ) -> PyResult<Vec<u32>> {
        py.detach(|| self.inner.encode_allowing(text, allowed.as_deref()))
            .map_err(to_py)
    }

    #[pyo3(signature = (texts, allowed, threads=0))]
    fn encode_batch_allowing(
        &self,
        py: Python<'_>,
        texts: Vec<String>,
        allowed: Option<Vec<u32>>,
        threads: usize,
    ) -> PyResult<Vec<Vec<u32>>> {
        in_pool(py, threads, || {
            self.inner.encode_batch_allowing(&texts, allowed.as_deref())
        })?
        .map_err(to_py)
    }

    /// The ids of `encode_allowing` and each one's `(start, end)` character span in `text`.
    fn encode_with_offsets(
        &self,
        py: Python<'_>,
        text: &str,
        allowed: Option<Vec<u32>>,
    ) -> PyResult<pipeline::IdsAndSpans> {
        py.detach(|| {
            let (ids, spans) = self.inner.encode_with_offsets(text, allowed.as_deref())?;
            // byte offset -> index of the character it is in (or starts)
            let mut at = vec![0usize; text.len() + 1];
            let mut n = 0;
            for (i, c) in text.char_indices() {
                at[i..i + c.len_utf8()].fill(n);
                n += 1;
            }
            at[text.len()] = n;
            let chars = spans
                .into_iter()
                .map(|(a, b)| {
                    let end = at[b] + usize::from(!text.is_char_boundary(b));
                    (at[a], end)
                })
                .collect();
            Ok((ids, chars))
        })
        .map_err(to_py)
    }

    #[pyo3(signature = (texts, match_special, threads=0))]
    fn encode_batch(
        &self,
        py: Python<'_>,
        texts: Vec<String>,
        match_special: bool,
        threads: usize,
    ) -> PyResult<Vec<Vec<u32>>> {
        in_pool(py, threads, || {
            self.inner.encode_batch(&texts, match_special)
        })?
        .map_err(to_py)
    }

    fn decode(&self, py: Python<'_>, ids: Vec<u32>) -> PyResult<String> {
        py.detach(|| self.inner.decode(&ids)).map_err(to_py)
    }

    #[pyo3(signature = (batch, threads=0))]
    fn decode_batch(
        &self,
        py: Python<'_>,
        batch: Vec<Vec<u32>>,
        threads: usize,
    ) -> PyResult<Vec<String>> {
        in_pool(py, threads, || self.inner.decode_batch(&batch))?.map_err(to_py)
    }
}
