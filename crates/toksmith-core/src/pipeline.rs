//! Whole tokenizers that are not byte-level BPE: normalizer -> added tokens -> pre-tokenizer ->
//! model (character BPE with byte fallback, Unigram, WordPiece) -> decoder, built from a
//! SentencePiece `.model` file ([`Pipeline::from_spm_model`]), a Hugging Face `tokenizer.json`
//! ([`Pipeline::from_hf_json`]) or a WordPiece `vocab.txt` ([`Pipeline::from_wordpiece_vocab`]).
//!
//! Added tokens are matched in the raw text (leftmost, then longest) before normalization, as
//! `tokenizers` does for tokens with `normalized: false`; special ones only when the call asks.

use rustc_hash::FxHashMap;
use serde_json::Value;
use unicode_segmentation::UnicodeSegmentation;

use crate::added::{AddedKind, AddedMatcher};
use crate::decoders::spm::SpmDecoder;
use crate::decoders::Decoder;
use crate::mem::{
    try_collect, try_filled, try_map, try_push, try_reserve, try_reserve_map, try_string, try_vec,
};
use crate::models::char_bpe::{BpeOptions, CharBpe};
use crate::models::spm::{ModelProto, ModelType, PieceType};
use crate::models::unigram::{RawText, Unigram};
use crate::models::wordpiece::WordPiece;
use crate::normalizers::{BertNormalizer, Normalizer, Pattern, Precompiled, SpmNormalizer};
use crate::pre_tokenizers::{
    Behavior, ByteLevelPre, PreTokenizer, PrependScheme, RegexSplit, Split,
};
use crate::vocab_files::{self, refused, OwnedStr};
use crate::{Error, Result};

/// The model at the heart of a pipeline.
#[derive(Debug, Clone)]
pub enum Model {
    Bpe(CharBpe),
    Unigram(Unigram),
    WordPiece(WordPiece),
}

impl Model {
    /// Append the ids of `word` to `out`, whose room is reserved fallibly first: each model
    /// gives at most one id per byte of the word (a WordPiece word too long or unknown is one
    /// id), so `out` never grows while the model pushes.
    fn encode(&self, word: &str, out: &mut Vec<u32>) -> Result<()> {
        crate::mem::try_reserve(out, word.len().max(1), "the encoded ids")?;
        match self {
            Model::Bpe(b) => b.encode(word, out),
            Model::Unigram(u) => u.encode(word, out),
            Model::WordPiece(w) => {
                w.encode(word, out);
                Ok(())
            }
        }
    }

    /// The name of the model kind (`"bpe"`, `"unigram"`, `"wordpiece"`).
    pub fn kind(&self) -> &'static str {
        match self {
            Model::Bpe(_) => "bpe",
            Model::Unigram(_) => "unigram",
            Model::WordPiece(_) => "wordpiece",
        }
    }
}

/// sentencepiece's own stages, or those of a Hugging Face file.
#[derive(Debug, Clone)]
enum Stages {
    Spm {
        normalizer: SpmNormalizer,
        decoder: SpmDecoder,
        /// the spec again, and its charsmap, for the aligned normalization of the offsets
        spec: Box<SpmSpec>,
    },
    Hf {
        normalizer: Option<Normalizer>,
        pre: Option<PreTokenizer>,
        decoder: Option<Decoder>,
    },
}

/// The ids of a text and each one's `(start, end)` byte span in it.
pub type IdsAndSpans = (Vec<u32>, Vec<(usize, usize)>);

/// What [`Pipeline::encode_with_offsets`] needs of a SentencePiece normalizer spec.
#[derive(Debug, Clone)]
struct SpmSpec {
    map: Option<Precompiled>,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    escape_whitespaces: bool,
    treat_whitespace_as_suffix: bool,
}

/// An added token: its text, id and whether it is special.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Added {
    pub text: String,
    pub id: u32,
    pub special: bool,
}

#[derive(Debug, Clone)]
pub struct Pipeline {
    model: Model,
    stages: Stages,
    /// every id's token string (`None`: an id that no token has)
    tokens: Vec<Option<String>>,
    added: Vec<Added>,
    matcher: AddedMatcher,
    /// added tokens with `normalized: true` (content normalized), matched in the normalized text
    /// between the others, as `tokenizers` does; None when there are none
    norm_matcher: Option<AddedMatcher>,
    /// the default of `match_special`: what the reference library does
    matches_special_by_default: bool,
    /// the model's continuing-subword prefix and end-of-word suffix (`##` of WordPiece), which
    /// the offsets of a token leave out of its text
    affixes: (Option<String>, Option<String>),
}

fn kind_of(special: bool) -> AddedKind {
    if special {
        AddedKind::Special
    } else {
        AddedKind::Pinned
    }
}

fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidVocab(msg.into())
}

impl Pipeline {
    fn assemble(
        model: Model,
        stages: Stages,
        tokens: Vec<Option<String>>,
        added: Vec<Added>,
        matches_special_by_default: bool,
    ) -> Result<Self> {
        let matcher = AddedMatcher::from_tokens(added.iter().map(|a| {
            let kind = if a.special {
                AddedKind::Special
            } else {
                AddedKind::Pinned
            };
            (a.text.as_bytes(), a.id, kind)
        }))?;
        Ok(Pipeline {
            model,
            stages,
            tokens,
            added,
            matcher,
            norm_matcher: None,
            matches_special_by_default,
            affixes: (None, None),
        })
    }

    /// A SentencePiece `.model` file (BPE or Unigram). As `SentencePieceProcessor.encode`,
    /// control pieces (`<s>`, `</s>`) in the text are plain text unless `match_special` asks;
    /// user-defined pieces are always matched (by the normalizer and the model).
    pub fn from_spm_model(bytes: &[u8]) -> Result<Self> {
        const WHAT: &str = "the pieces of a SentencePiece model";
        let m = ModelProto::parse(bytes)?;
        let user: Vec<&str> = try_collect(
            m.pieces
                .iter()
                .filter(|p| p.kind == PieceType::UserDefined)
                .map(|p| p.piece.as_str()),
            WHAT,
        )?;
        let normalizer = SpmNormalizer::new(
            &m.normalizer_spec,
            &user,
            m.trainer_spec.treat_whitespace_as_suffix,
        )?;
        let model = match m.trainer_spec.model_type {
            ModelType::Bpe => Model::Bpe(CharBpe::from_spm(&m)?),
            ModelType::Unigram => Model::Unigram(Unigram::from_spm(&m)?),
            t => {
                return Err(bad(format!(
                    "SentencePiece model type {t:?} is not supported (only BPE and Unigram)"
                )))
            }
        };
        let added = try_map(
            m.pieces
                .iter()
                .enumerate()
                .filter(|(_, p)| p.kind == PieceType::Control),
            |(i, p)| {
                Ok(Added {
                    text: try_string(&p.piece, WHAT)?,
                    id: i as u32,
                    special: true,
                })
            },
            WHAT,
        )?;
        let tokens = try_map(&m.pieces, |p| Ok(Some(try_string(&p.piece, WHAT)?)), WHAT)?;
        let n = &m.normalizer_spec;
        let map = if n.precompiled_charsmap.is_empty() {
            None
        } else {
            Some(Precompiled::from_blob(&n.precompiled_charsmap)?)
        };
        let spec = Box::new(SpmSpec {
            map,
            add_dummy_prefix: n.add_dummy_prefix,
            remove_extra_whitespaces: n.remove_extra_whitespaces,
            escape_whitespaces: n.escape_whitespaces,
            treat_whitespace_as_suffix: m.trainer_spec.treat_whitespace_as_suffix,
        });
        let stages = Stages::Spm {
            normalizer,
            decoder: SpmDecoder::new(&m)?,
            spec,
        };
        Self::assemble(model, stages, tokens, added, false)
    }

    /// A WordPiece `vocab.txt` (one token a line, the id is the line number) with BERT's
    /// normalizer, pre-tokenizer and decoder; `special` names the special tokens (each must be
    /// in the vocabulary).
    pub fn from_wordpiece_vocab(
        vocab_txt: &str,
        unk_token: &str,
        special: &[String],
        lowercase: bool,
        strip_accents: Option<bool>,
        handle_chinese_chars: bool,
    ) -> Result<Self> {
        let vocab = WordPiece::vocab_from_txt(vocab_txt)?;
        let wp = WordPiece::new(&vocab, unk_token, "##", 100)?;
        let mut added = Vec::new();
        for t in special {
            let id = *vocab
                .get(t)
                .ok_or_else(|| bad(format!("special token {t:?} is not in vocab.txt")))?;
            let text = try_string(t, "the added tokens of a tokenizer")?;
            let a = Added {
                text,
                id,
                special: true,
            };
            try_push(&mut added, a, "the added tokens of a tokenizer")?;
        }
        let stages = Stages::Hf {
            normalizer: Some(Normalizer::Bert(BertNormalizer {
                clean_text: true,
                handle_chinese_chars,
                strip_accents,
                lowercase,
            })),
            pre: Some(PreTokenizer::Bert),
            decoder: Some(Decoder::WordPiece {
                prefix: "##".into(),
                cleanup: true,
            }),
        };
        let tokens = tokens_of(&vocab)?;
        let mut p = Self::assemble(Model::WordPiece(wp), stages, tokens, added, true)?;
        p.affixes = (Some("##".into()), None);
        Ok(p)
    }

    /// A Hugging Face `tokenizer.json` whose model is Unigram, WordPiece or BPE (over
    /// characters: a byte-level BPE file belongs to toksmith's own `Bpe`).
    pub fn from_hf_json(json: &str) -> Result<Self> {
        // the model's vocab and merges straight into their tables where the file is plain
        // (no repeated key, well-formed tables); else the whole document as a Value
        let (doc, tables) = match fast_hf_document(json)? {
            Some((doc, tables)) => (doc, tables),
            None => (
                serde_json::from_str(json).map_err(|e| bad(format!("not valid JSON: {e}")))?,
                ModelTables::default(),
            ),
        };
        Self::from_hf_doc(doc, tables)
    }

    /// CLIP's `vocab.json` + `merges.txt` (their bytes) with `shell`: the `tokenizer.json`
    /// document of its pipeline without the model's vocab and merges, whose added tokens
    /// without an `"id"` take their content's id in the vocabulary (and are left out where it
    /// has no such token), and whose model's `unk_token` is none where the vocabulary does
    /// not have it. The same tokenizer as `from_hf_json` of the whole document, without
    /// writing the tables into JSON and reading them again. `Ok(None)` where the files are not
    /// plain ([`vocab_files::parse_clip_files`]): the caller reads them the slow way, which
    /// reports what is wrong.
    pub fn from_clip_files(
        shell: &str,
        vocab_json: &[u8],
        merges_txt: &[u8],
    ) -> Result<Option<Self>> {
        let Some((vocab, merges)) = vocab_files::parse_clip_files(vocab_json, merges_txt)? else {
            return Ok(None);
        };
        let mut doc: Value =
            serde_json::from_str(shell).map_err(|e| bad(format!("not valid JSON: {e}")))?;
        if let Some(list) = doc.get_mut("added_tokens").and_then(Value::as_array_mut) {
            list.retain_mut(|t| {
                if t.get("id").is_some() {
                    return true;
                }
                let id = t
                    .get("content")
                    .and_then(Value::as_str)
                    .and_then(|c| vocab.get(c));
                match (id.copied(), t.as_object_mut()) {
                    (Some(id), Some(obj)) => {
                        obj.insert("id".into(), Value::from(id));
                        true
                    }
                    _ => false,
                }
            });
        }
        if let Some(model) = doc.get_mut("model").and_then(Value::as_object_mut) {
            let unk = model.get("unk_token").and_then(Value::as_str);
            if unk.is_some_and(|t| !vocab.contains_key(t)) {
                model.insert("unk_token".into(), Value::Null);
            }
        }
        let tables = ModelTables {
            vocab: Some(vocab),
            unigram: None,
            merges: None,
            merge_refs: Some(merges),
        };
        Self::from_hf_doc(doc, tables).map(Some)
    }

    fn from_hf_doc(doc: Value, tables: ModelTables<'_>) -> Result<Self> {
        const ADDED: &str = "the added tokens of a tokenizer";
        let model_v = doc
            .get("model")
            .filter(|m| m.is_object())
            .ok_or_else(|| bad("no \"model\" object"))?;
        let (model, mut tokens) = hf_model(model_v, tables)?;
        let normalizer = opt(&doc, "normalizer").map(hf_normalizer).transpose()?;
        let pre = opt(&doc, "pre_tokenizer")
            .map(hf_pre_tokenizer)
            .transpose()?;
        let decoder = opt(&doc, "decoder").map(hf_decoder).transpose()?;
        let mut added = Vec::new();
        let mut norm_added: Vec<(String, u32, bool)> = Vec::new();
        if let Some(list) = opt(&doc, "added_tokens") {
            let list = list
                .as_array()
                .ok_or_else(|| bad("\"added_tokens\" is not a list"))?;
            for t in list {
                let content = str_field(t, "content", "added token")?;
                let id = u32_field(t, "id", "added token")?;
                for flag in ["lstrip", "rstrip", "single_word"] {
                    if t.get(flag).and_then(Value::as_bool) == Some(true) {
                        return Err(bad(format!(
                            "added token {content:?}: {flag}=true is not supported yet"
                        )));
                    }
                }
                let special = t.get("special").and_then(Value::as_bool).unwrap_or(false);
                // tokenizers' AddedToken default: normalized unless special
                let normalized = t
                    .get("normalized")
                    .and_then(Value::as_bool)
                    .unwrap_or(!special);
                if normalized {
                    if let Some(n) = &normalizer {
                        let t = (n.normalize(content)?, id, special);
                        try_push(&mut norm_added, t, ADDED)?;
                    }
                }
                let slot = id as usize;
                if slot >= tokens.len() {
                    if slot > tokens.len() + (1 << 24) {
                        return Err(bad(format!(
                            "added token {content:?}: id {id} is too large"
                        )));
                    }
                    let more = slot + 1 - tokens.len();
                    try_reserve(&mut tokens, more, ADDED)?;
                    tokens.resize(slot + 1, None);
                }
                tokens[slot] = Some(try_string(content, ADDED)?);
                let a = Added {
                    text: try_string(content, ADDED)?,
                    id,
                    special,
                };
                try_push(&mut added, a, ADDED)?;
            }
        }
        let stages = Stages::Hf {
            normalizer,
            pre,
            decoder,
        };
        let mut p = Self::assemble(model, stages, tokens, added, true)?;
        if !norm_added.is_empty() {
            // the normalized ones are found in the normalized text only: the raw-text matcher
            // keeps the others
            let raw: Vec<&Added> = try_collect(
                p.added
                    .iter()
                    .filter(|a| !norm_added.iter().any(|n| n.1 == a.id)),
                ADDED,
            )?;
            p.matcher = AddedMatcher::from_tokens(
                raw.iter()
                    .map(|a| (a.text.as_bytes(), a.id, kind_of(a.special))),
            )?;
            p.norm_matcher =
                Some(AddedMatcher::from_tokens(norm_added.iter().map(
                    |(t, id, special)| (t.as_bytes(), *id, kind_of(*special)),
                ))?);
        }
        p.affixes = match &p.model {
            Model::WordPiece(_) => (
                Some(opt_string(model_v, "continuing_subword_prefix").unwrap_or("##".into())),
                None,
            ),
            Model::Bpe(_) => (
                opt_string(model_v, "continuing_subword_prefix"),
                opt_string(model_v, "end_of_word_suffix"),
            ),
            Model::Unigram(_) => (None, None),
        };
        Ok(p)
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    /// One more than the largest id.
    pub fn n_vocab(&self) -> usize {
        self.tokens.len()
    }

    pub fn added(&self) -> &[Added] {
        &self.added
    }

    pub fn matches_special_by_default(&self) -> bool {
        self.matches_special_by_default
    }

    /// The token string of an id.
    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        self.tokens.get(id as usize).and_then(|t| t.as_deref())
    }

    /// Text -> ids; `match_special`: special added tokens in the text become their ids (non-
    /// special added tokens always do).
    /// A refused allocation (the ids and the normalized and pre-tokenized text grow with the
    /// text) is [`Error::OutOfMemory`].
    pub fn encode(&self, text: &str, match_special: bool) -> Result<Vec<u32>> {
        self.encode_allowing(text, if match_special { None } else { Some(&[]) })
    }

    /// Text -> ids; `allowed`: the special tokens (by id) that become their ids when the text
    /// holds them (`None`: all of them); the others are plain text. Non-special added tokens
    /// always become their ids.
    pub fn encode_allowing(&self, text: &str, allowed: Option<&[u32]>) -> Result<Vec<u32>> {
        let mut ids = crate::mem::try_vec(text.len() / 3 + 1, "the encoded ids")?;
        let bytes = text.as_bytes();
        let accept = |id: u32, kind: AddedKind| {
            kind == AddedKind::Pinned || allowed.is_none_or(|a| a.contains(&id))
        };
        let mut last = 0;
        // (where none is allowed and none pinned, no added token can match: no scan for them)
        let scan = allowed.is_none_or(|a| !a.is_empty()) || self.matcher.has_pinned();
        while let Some((start, end, id)) = scan
            .then(|| self.matcher.find(bytes, last, &accept))
            .flatten()
        {
            if last < start {
                self.encode_segment(&text[last..start], last == 0, allowed, &mut ids)?;
            }
            crate::mem::try_push(&mut ids, id, "the encoded ids")?;
            last = end;
        }
        if last < text.len() {
            self.encode_segment(&text[last..], last == 0, allowed, &mut ids)?;
        }
        Ok(ids)
    }

    fn encode_segment(
        &self,
        seg: &str,
        at_start: bool,
        allowed: Option<&[u32]>,
        ids: &mut Vec<u32>,
    ) -> Result<()> {
        match &self.stages {
            Stages::Spm { normalizer, .. } => match &self.model {
                // (word by word from the raw text where the normalizer allows it: a word seen
                // before is neither normalized nor split again)
                Model::Unigram(u) if normalizer.raw_separators() != 0 => {
                    let raw = RawText {
                        separators: normalizer.raw_separators(),
                        word: &|w, out| normalizer.normalize_word(w, out),
                        whole: &|t| normalizer.normalize(t),
                    };
                    u.encode_raw(seg, &raw, ids).map(|_| ())
                }
                _ => self.model.encode(&normalizer.normalize(seg)?, ids),
            },
            Stages::Hf { normalizer, .. } => {
                let n = match normalizer {
                    Some(n) => n.normalize(seg)?,
                    None => crate::mem::try_string(seg, "the normalized text")?,
                };
                let Some(m) = &self.norm_matcher else {
                    return self.encode_normalized(n, at_start, ids);
                };
                let accept = |id: u32, kind: AddedKind| {
                    kind == AddedKind::Pinned || allowed.is_none_or(|a| a.contains(&id))
                };
                let mut last = 0;
                while let Some((start, end, id)) = m.find(n.as_bytes(), last, &accept) {
                    if last < start {
                        self.encode_normalized(
                            crate::mem::try_string(&n[last..start], "the normalized text")?,
                            at_start && last == 0,
                            ids,
                        )?;
                    }
                    crate::mem::try_push(ids, id, "the encoded ids")?;
                    last = end;
                }
                if last < n.len() {
                    let rest = crate::mem::try_string(&n[last..], "the normalized text")?;
                    self.encode_normalized(rest, at_start && last == 0, ids)?;
                }
                Ok(())
            }
        }
    }

    /// The pre-tokenizer and the model on normalized text (a Hugging Face pipeline).
    fn encode_normalized(&self, n: String, at_start: bool, ids: &mut Vec<u32>) -> Result<()> {
        match &self.stages {
            Stages::Spm { .. } => self.model.encode(&n, ids),
            Stages::Hf { pre, .. } => match pre {
                Some(p) => {
                    for s in p.pre_tokenize(vec![Split::new(n, at_start)])? {
                        self.model.encode(&s.text, ids)?;
                    }
                    Ok(())
                }
                None => self.model.encode(&n, ids),
            },
        }
    }

    /// [`Pipeline::encode`] of each text, in parallel (on the current rayon pool).
    pub fn encode_batch<S: AsRef<str> + Sync>(
        &self,
        texts: &[S],
        match_special: bool,
    ) -> Result<Vec<Vec<u32>>> {
        crate::mem::try_par_map(
            texts,
            |t| self.encode(t.as_ref(), match_special),
            "the ids of a batch",
        )
    }

    /// [`Pipeline::encode_allowing`] of each text, in parallel (on the current rayon pool).
    pub fn encode_batch_allowing(
        &self,
        texts: &[String],
        allowed: Option<&[u32]>,
    ) -> Result<Vec<Vec<u32>>> {
        crate::mem::try_par_map(
            texts,
            |t| self.encode_allowing(t, allowed),
            "the ids of a batch",
        )
    }

    /// Ids -> text, as the reference library decodes (special tokens kept).
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        match &self.stages {
            Stages::Spm { decoder, .. } => decoder.decode(ids),
            Stages::Hf { decoder, .. } => {
                const WHAT: &str = "the decoded text";
                let mut tokens = crate::mem::try_vec(ids.len(), WHAT)?;
                for &id in ids {
                    let t = self.id_to_token(id).ok_or(Error::UnknownId {
                        id: u64::from(id),
                        n_vocab: self.tokens.len() as u64,
                    })?;
                    tokens.push(crate::mem::try_string(t, WHAT)?);
                }
                match decoder {
                    Some(d) => d.decode(tokens),
                    // tokenizers joins the tokens with spaces when there is no decoder
                    None => {
                        let n = tokens.iter().map(|t| t.len() + 1).sum::<usize>();
                        let mut out = crate::mem::TextBuf::with_capacity(n, WHAT)?;
                        for (k, t) in tokens.iter().enumerate() {
                            if k > 0 {
                                out.push(' ');
                            }
                            out.push_str(t);
                        }
                        out.finish()
                    }
                }
            }
        }
    }

    pub fn decode_batch(&self, batch: &[Vec<u32>]) -> Result<Vec<String>> {
        crate::mem::try_par_map(batch, |ids| self.decode(ids), "the decoded texts")
    }

    /// [`Pipeline::encode_allowing`] with each token's `(start, end)` byte span in `text`, as
    /// `tokenizers`' `Encoding.offsets` gives them: the normalized text is aligned to the
    /// original one (each normalizer applied to one character, or one word, at a time, and
    /// checked against the whole normalization; a text that does not normalize piecewise is
    /// aligned as a whole: its tokens then span the whole run between added tokens). The ids
    /// are those of `encode_allowing`. A token made of part of a character (a byte-fallback
    /// token) spans the whole character.
    pub fn encode_with_offsets(&self, text: &str, allowed: Option<&[u32]>) -> Result<IdsAndSpans> {
        let mut ids = Vec::new();
        let mut spans = Vec::new();
        let bytes = text.as_bytes();
        let accept = |id: u32, kind: AddedKind| {
            kind == AddedKind::Pinned || allowed.is_none_or(|a| a.contains(&id))
        };
        let mut last = 0;
        while let Some((start, end, id)) = self.matcher.find(bytes, last, &accept) {
            if last < start {
                self.segment_offsets(&text[last..start], last, allowed, &mut ids, &mut spans)?;
            }
            ids.push(id);
            spans.push((start, end));
            last = end;
        }
        if last < text.len() {
            self.segment_offsets(&text[last..], last, allowed, &mut ids, &mut spans)?;
        }
        Ok((ids, spans))
    }

    fn segment_offsets(
        &self,
        seg: &str,
        base: usize,
        allowed: Option<&[u32]>,
        ids: &mut Vec<u32>,
        spans: &mut Vec<(usize, usize)>,
    ) -> Result<()> {
        let at_start = base == 0;
        let words = match &self.stages {
            Stages::Spm {
                normalizer, spec, ..
            } => {
                let real = normalizer.normalize(seg)?;
                let a = spm_aligned(spec, seg, base)?;
                vec![if a.text == real {
                    a
                } else {
                    Aligned::coarse(real, (base, base + seg.len()))?
                }]
            }
            Stages::Hf {
                normalizer, pre, ..
            } => {
                let a = Aligned::new(seg, base)?;
                let a = match normalizer {
                    None => a,
                    Some(n) => {
                        let real = n.normalize(seg)?;
                        match normalize_aligned(n, a)? {
                            a if a.text == real => a,
                            _ => Aligned::coarse(real, (base, base + seg.len()))?,
                        }
                    }
                };
                // added tokens marked `normalized` are found in the normalized text, as in
                // `encode_segment`: the runs between them are pre-tokenized on their own
                let Some(m) = &self.norm_matcher else {
                    let words = match pre {
                        None => vec![a],
                        Some(p) => pre_tokenize_aligned(p, a, at_start)?,
                    };
                    return self.words_offsets(words, ids, spans);
                };
                let accept = |id: u32, kind: AddedKind| {
                    kind == AddedKind::Pinned || allowed.is_none_or(|l| l.contains(&id))
                };
                let mut last = 0;
                let run = |from: usize, to: usize, ids: &mut Vec<u32>, spans: &mut Vec<_>| {
                    let part = a.slice(from, to)?;
                    let words = match pre {
                        None => vec![part],
                        Some(p) => pre_tokenize_aligned(p, part, at_start && from == 0)?,
                    };
                    self.words_offsets(words, ids, spans)
                };
                while let Some((start, end, id)) = m.find(a.text.as_bytes(), last, &accept) {
                    if last < start {
                        run(last, start, ids, spans)?;
                    }
                    ids.push(id);
                    spans.push(a.span(start, end));
                    last = end;
                }
                if last < a.text.len() {
                    run(last, a.text.len(), ids, spans)?;
                }
                return Ok(());
            }
        };
        self.words_offsets(words, ids, spans)
    }

    /// The model's ids of each pre-tokenized word, with their spans in the original text.
    fn words_offsets(
        &self,
        words: Vec<Aligned>,
        ids: &mut Vec<u32>,
        spans: &mut Vec<(usize, usize)>,
    ) -> Result<()> {
        for w in words {
            let from = ids.len();
            self.model.encode(&w.text, ids)?;
            for (a, b) in self.token_spans(&w.text, &ids[from..])? {
                spans.push(w.span(a, b));
            }
        }
        Ok(())
    }

    /// The byte span in `word` of each of the tokens `ids` the model made of it: each token's
    /// text in turn (without the model's prefix and suffix; one byte for a byte-fallback
    /// token), an unknown token what lies before the next token's text.
    fn token_spans(&self, word: &str, ids: &[u32]) -> Result<Vec<(usize, usize)>> {
        let n = ids.len();
        let piece = |k: usize| self.piece_of(ids, k);
        let fits = |p: &Piece<'_>, at: usize| -> Option<usize> {
            match p {
                Piece::Byte(b) => (word.as_bytes().get(at) == Some(b)).then_some(1),
                Piece::Text(t) => word[at..].starts_with(t).then_some(t.len()),
            }
        };
        // A `.model` file's unknown piece never matches text (as sentencepiece, `<unk>` in the
        // text is its characters), so its spelling must not be looked for.
        let never_text = match (&self.stages, &self.model) {
            (Stages::Spm { .. }, Model::Unigram(u)) => u.unk_id(),
            (Stages::Spm { .. }, Model::Bpe(b)) => b.unk_id(),
            _ => None,
        };
        // (every push below is within this room)
        let mut out = try_vec(n, "the offsets of the encoded ids")?;
        let mut pos = 0;
        for k in 0..n {
            let start = pos;
            let here = if never_text.is_some() && never_text == ids.get(k).copied() {
                None
            } else if word.is_char_boundary(pos) || matches!(piece(k), Piece::Byte(_)) {
                fits(&piece(k), pos)
            } else {
                None
            };
            pos = match here {
                Some(len) if len > 0 || k + 1 < n => pos + len,
                // an unknown token: up to where the next token's text is, or the rest
                _ if k + 1 == n => word.len(),
                _ => {
                    let next = piece(k + 1);
                    let mut q = next_boundary(word, pos);
                    while q < word.len() && fits(&next, q).is_none() {
                        q = next_boundary(word, q);
                    }
                    q
                }
            };
            out.push((start, pos.min(word.len())));
        }
        Ok(out)
    }
}

impl Pipeline {
    /// The text of the token `ids[k]` in the word it comes from, for [`Pipeline::token_spans`].
    fn piece_of(&self, ids: &[u32], k: usize) -> Piece<'_> {
        let (prefix, suffix) = &self.affixes;
        let Some(mut t) = self.id_to_token(ids[k]) else {
            return Piece::Text("\u{0}\u{0}");
        };
        if let Some(b) = crate::models::spm::byte_piece_value(t) {
            return Piece::Byte(b);
        }
        if let Some(p) = prefix.as_deref().filter(|p| !p.is_empty()) {
            if k > 0 {
                t = t.strip_prefix(p).unwrap_or(t);
            }
        }
        if let Some(sfx) = suffix.as_deref().filter(|x| !x.is_empty()) {
            if k + 1 == ids.len() {
                t = t.strip_suffix(sfx).unwrap_or(t);
            }
        }
        Piece::Text(t)
    }
}

/// The first character boundary of `s` after `i`.
fn next_boundary(s: &str, i: usize) -> usize {
    let mut j = i + 1;
    while j < s.len() && !s.is_char_boundary(j) {
        j += 1;
    }
    j.min(s.len())
}

/// A token's text for [`Pipeline::token_spans`].
enum Piece<'a> {
    Text(&'a str),
    Byte(u8),
}

/// A normalized text and, for each of its bytes, the byte range of the original text it comes
/// from (what `tokenizers`' `NormalizedString` keeps).
#[derive(Debug, Clone)]
struct Aligned {
    text: String,
    align: Vec<(usize, usize)>,
}

/// What the offsets' aligned texts are called in an out-of-memory error (they take 16 bytes of
/// alignment per byte of text: every one is allocated fallibly).
const ALIGNED: &str = "the aligned text of the offsets";

/// Room for `n` more bytes in `s` ([`Error::OutOfMemory`] if refused).
fn text_room(s: &mut String, n: usize) -> Result<()> {
    s.try_reserve(n)
        .map_err(|_| crate::mem::oom(ALIGNED, s.len().saturating_add(n), 1))
}

impl Aligned {
    fn with_capacity(n: usize) -> Result<Self> {
        let mut text = String::new();
        text_room(&mut text, n)?;
        Ok(Aligned {
            text,
            align: try_vec(n, ALIGNED)?,
        })
    }

    /// `s` with the alignment `r` for each of its bytes, appended.
    fn push(&mut self, s: &str, r: (usize, usize)) -> Result<()> {
        text_room(&mut self.text, s.len())?;
        try_reserve(&mut self.align, s.len(), ALIGNED)?;
        self.text.push_str(s);
        self.align.extend(std::iter::repeat_n(r, s.len()));
        Ok(())
    }

    /// The bytes `a..b` of `other`, with their alignments, appended.
    fn push_from(&mut self, other: &Aligned, a: usize, b: usize) -> Result<()> {
        text_room(&mut self.text, b - a)?;
        try_reserve(&mut self.align, b - a, ALIGNED)?;
        self.text.push_str(&other.text[a..b]);
        self.align.extend_from_slice(&other.align[a..b]);
        Ok(())
    }

    fn new(text: &str, base: usize) -> Result<Self> {
        let mut out = Aligned::with_capacity(text.len())?;
        for (i, c) in text.char_indices() {
            let n = c.len_utf8();
            out.push(&text[i..i + n], (base + i, base + i + n))?;
        }
        Ok(out)
    }

    /// `text` with every byte aligned to the whole `range`.
    fn coarse(text: String, range: (usize, usize)) -> Result<Self> {
        let align = try_filled(text.len(), range, ALIGNED)?;
        Ok(Aligned { text, align })
    }

    /// The original range of the normalized bytes `a..b`; an empty one sits where the byte
    /// `a` comes from (or at the end).
    fn span(&self, a: usize, b: usize) -> (usize, usize) {
        if a >= b {
            let at = self
                .align
                .get(a)
                .map(|r| r.0)
                .or(self.align.last().map(|r| r.1))
                .unwrap_or(0);
            return (at, at);
        }
        let lo = self.align[a..b].iter().map(|r| r.0).min().unwrap_or(0);
        let hi = self.align[a..b].iter().map(|r| r.1).max().unwrap_or(0);
        (lo, hi)
    }

    fn slice(&self, a: usize, b: usize) -> Result<Aligned> {
        let mut out = Aligned::with_capacity(b - a)?;
        out.push_from(self, a, b)?;
        Ok(out)
    }

    /// Each unit (a byte range of the text) replaced by what `f` makes of it, aligned to the
    /// unit's origin (`first`: to the origin of its first character, as `tokenizers` aligns
    /// what a grapheme becomes).
    fn map_units(
        &self,
        units: &[(usize, usize)],
        f: &dyn Fn(&str) -> Result<String>,
        first: bool,
    ) -> Result<Aligned> {
        let mut all = Aligned::with_capacity(self.text.len())?;
        for &(a, b) in units {
            let out = f(&self.text[a..b])?;
            let r = if first {
                self.align[a]
            } else {
                self.span(a, b)
            };
            all.push(&out, r)?;
        }
        Ok(all)
    }

    /// `f` (a normalizer that maps characters, mostly on their own) applied a character at a
    /// time, else a grapheme, else a word at a time, else to the whole text: the first whose
    /// result is `f` of the whole text.
    fn local(&self, f: &dyn Fn(&str) -> Result<String>) -> Result<Aligned> {
        let want = f(&self.text)?;
        let chars: Vec<(usize, usize)> = try_collect(
            self.text.char_indices().map(|(i, c)| (i, i + c.len_utf8())),
            ALIGNED,
        )?;
        let a = self.map_units(&chars, f, false)?;
        if a.text == want {
            return Ok(a);
        }
        let graphemes: Vec<(usize, usize)> = try_collect(
            self.text
                .grapheme_indices(true)
                .map(|(i, g)| (i, i + g.len())),
            ALIGNED,
        )?;
        let a = self.map_units(&graphemes, f, true)?;
        if a.text == want {
            return Ok(a);
        }
        let mut words = Vec::new();
        let mut start = 0;
        for (i, c) in self.text.char_indices() {
            if c == ' ' {
                if start < i {
                    try_push(&mut words, (start, i), ALIGNED)?;
                }
                try_push(&mut words, (i, i + 1), ALIGNED)?;
                start = i + 1;
            }
        }
        if start < self.text.len() {
            try_push(&mut words, (start, self.text.len()), ALIGNED)?;
        }
        let a = self.map_units(&words, f, false)?;
        if a.text == want {
            return Ok(a);
        }
        self.map_units(&[(0, self.text.len())], f, false)
    }

    /// The byte ranges `spans` (in order, not overlapping) replaced by `content`, aligned to
    /// the origin of the last character they replace (as `tokenizers` aligns a replacement:
    /// the matched characters are removed, the new ones added after the last of them).
    fn replace_spans(&self, spans: &[(usize, usize)], content: &str) -> Result<Aligned> {
        let mut out = Aligned::with_capacity(self.text.len())?;
        let mut last = 0;
        for &(a, b) in spans {
            out.push_from(self, last, a)?;
            out.push(content, self.align[b - 1])?;
            last = b;
        }
        out.push_from(self, last, self.text.len())?;
        Ok(out)
    }

    /// `s` put before a non-empty text, aligned to its first character (as `tokenizers`
    /// aligns a prepended string).
    fn prepend(self, s: &str) -> Result<Aligned> {
        if self.text.is_empty() {
            return Ok(self);
        }
        let mut out = Aligned::with_capacity(s.len() + self.text.len())?;
        out.push(s, self.align[0])?;
        out.push_from(&self, 0, self.text.len())?;
        Ok(out)
    }

    fn append(mut self, s: &str) -> Result<Aligned> {
        if self.text.is_empty() {
            return Ok(self);
        }
        let last = *self.align.last().unwrap_or(&(0, 0));
        self.push(s, last)?;
        Ok(self)
    }
}

/// The byte ranges `pattern` matches in `text`, as [`Pattern::replace_all`] replaces them.
fn pattern_spans(pattern: &Pattern, text: &str) -> Result<Vec<(usize, usize)>> {
    Ok(match pattern {
        Pattern::Literal(p) if p.is_empty() => Vec::new(),
        Pattern::Literal(p) => try_collect(
            text.match_indices(p.as_str())
                .map(|(i, m)| (i, i + m.len())),
            ALIGNED,
        )?,
        Pattern::Regex(r) => {
            let mut out = Vec::new();
            for m in r.find_iter(text) {
                let m = m.map_err(|e| Error::RegexRuntime(e.to_string()))?;
                if m.start() < m.end() {
                    try_push(&mut out, (m.start(), m.end()), ALIGNED)?;
                }
            }
            out
        }
    })
}

/// [`Normalizer::normalize`] of an aligned text.
fn normalize_aligned(n: &Normalizer, a: Aligned) -> Result<Aligned> {
    Ok(match n {
        Normalizer::Sequence(list) => {
            let mut a = a;
            for n in list {
                a = normalize_aligned(n, a)?;
            }
            a
        }
        Normalizer::Prepend(s) => a.prepend(s)?,
        Normalizer::Replace { pattern, content } => {
            a.replace_spans(&pattern_spans(pattern, &a.text)?, content)?
        }
        Normalizer::Strip { left, right } => {
            let start = if *left {
                a.text.len() - a.text.trim_start().len()
            } else {
                0
            };
            let end = if *right {
                a.text.trim_end().len()
            } else {
                a.text.len()
            };
            a.slice(start, end.max(start))?
        }
        other => a.local(&|t: &str| other.normalize(t))?,
    })
}

/// sentencepiece's normalization (`SpmNormalizer::normalize`, without user-defined pieces)
/// of an aligned text.
fn spm_aligned(spec: &SpmSpec, seg: &str, base: usize) -> Result<Aligned> {
    let src = Aligned::new(seg, base)?;
    // the charsmap: its longest rule at each place, or one character
    let mut units: Vec<(&str, (usize, usize))> = Vec::new();
    let mut i = 0;
    while i < seg.len() {
        let rest = &seg[i..];
        let (r, len) = match spec.map.as_ref().and_then(|m| m.longest(rest.as_bytes())) {
            Some((r, len)) if len > 0 => (r, len),
            _ => {
                let len = rest.chars().next().map_or(1, char::len_utf8);
                (&rest[..len], len)
            }
        };
        try_push(&mut units, (r, src.span(i, i + len)), ALIGNED)?;
        i += len;
    }
    let space = if spec.escape_whitespaces {
        "\u{2581}"
    } else {
        " "
    };
    let mut out = Aligned::with_capacity(seg.len())?;
    let mut k = 0;
    if spec.remove_extra_whitespaces {
        while k < units.len() && units[k].0 == " " {
            k += 1;
        }
    }
    let mut is_prev_space = spec.remove_extra_whitespaces;
    for &(r, range) in &units[k..] {
        let mut sp = r;
        if is_prev_space {
            sp = sp.trim_start_matches(' ');
        }
        if !sp.is_empty() {
            if spec.escape_whitespaces && sp.contains(' ') {
                out.push(&crate::mem::try_replace(sp, " ", space, ALIGNED)?, range)?;
            } else {
                out.push(sp, range)?;
            }
            is_prev_space = sp.ends_with(' ');
        }
        if !spec.remove_extra_whitespaces {
            is_prev_space = false;
        }
    }
    if spec.remove_extra_whitespaces {
        while out.text.ends_with(space) {
            let n = out.text.len() - space.len();
            out.text.truncate(n);
            out.align.truncate(n);
        }
    }
    if spec.add_dummy_prefix {
        out = if spec.treat_whitespace_as_suffix {
            out.append(space)?
        } else {
            out.prepend(space)?
        };
    }
    Ok(out)
}

/// [`PreTokenizer::pre_tokenize`] of an aligned text: the splits, each found in the text
/// (a leading `Metaspace` replaces and prepends on the aligned text first). Splits that cannot
/// be found are aligned to the whole text.
fn pre_tokenize_aligned(p: &PreTokenizer, a: Aligned, at_start: bool) -> Result<Vec<Aligned>> {
    let copy = crate::mem::try_string(&a.text, ALIGNED)?;
    let real = p.pre_tokenize(vec![Split::new(copy, at_start)])?;
    let meta = match p {
        PreTokenizer::Sequence(list) => list.first(),
        other => Some(other),
    };
    let a = match meta {
        Some(PreTokenizer::Metaspace {
            replacement,
            prepend_scheme,
            ..
        }) => {
            let mut rep = [0u8; 4];
            let rep: &str = replacement.encode_utf8(&mut rep);
            let spaces = pattern_spans(&Pattern::Literal(" ".into()), &a.text)?;
            let t = a.replace_spans(&spaces, rep)?;
            let prepend = match prepend_scheme {
                PrependScheme::Always => true,
                PrependScheme::First => at_start,
                PrependScheme::Never => false,
            };
            if prepend && !t.text.starts_with(*replacement) {
                t.prepend(rep)?
            } else {
                t
            }
        }
        _ => a,
    };
    let mut out = try_vec(real.len(), ALIGNED)?;
    let mut pos = 0;
    for s in &real {
        match a.text[pos..].find(s.text.as_str()) {
            Some(i) => {
                let start = pos + i;
                pos = start + s.text.len();
                out.push(a.slice(start, pos)?);
            }
            None => {
                let whole = a.span(0, a.text.len());
                return try_map(real, |s| Aligned::coarse(s.text, whole), ALIGNED);
            }
        }
    }
    Ok(out)
}

/// id -> token of a token -> id map, checked: ids dense enough and each once.
fn tokens_of(vocab: &FxHashMap<String, u32>) -> Result<Vec<Option<String>>> {
    let n = vocab.values().copied().max().map_or(0, |m| m as usize + 1);
    if n > 2 * vocab.len() + (1 << 16) {
        return Err(bad(format!(
            "the vocabulary's ids are sparse: {} tokens, the largest id is {}",
            vocab.len(),
            n - 1
        )));
    }
    const WHAT: &str = "the tokens of a tokenizer";
    let mut tokens = try_filled(n, None, WHAT)?;
    for (t, &id) in vocab {
        let slot = &mut tokens[id as usize];
        if slot.is_some() {
            return Err(bad(format!("id {id} is given to two tokens")));
        }
        *slot = Some(try_string(t, WHAT)?);
    }
    Ok(tokens)
}

fn opt<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

fn str_field<'a>(v: &'a Value, key: &str, what: &str) -> Result<&'a str> {
    v.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| bad(format!("{what}: \"{key}\" is missing or not a string")))
}

fn u32_field(v: &Value, key: &str, what: &str) -> Result<u32> {
    v.get(key)
        .and_then(Value::as_u64)
        .and_then(|x| u32::try_from(x).ok())
        .ok_or_else(|| bad(format!("{what}: \"{key}\" is missing or not an id")))
}

fn bool_or(v: &Value, key: &str, default: bool) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(default)
}

fn opt_string(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

fn type_of<'a>(v: &'a Value, what: &str) -> Result<&'a str> {
    str_field(v, "type", what)
}

fn list<'a>(v: &'a Value, key: &str, what: &str) -> Result<&'a Vec<Value>> {
    v.get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| bad(format!("{what}: \"{key}\" is missing or not a list")))
}

fn vocab_map(v: &Value, what: &str) -> Result<FxHashMap<String, u32>> {
    let obj = v
        .get("vocab")
        .and_then(Value::as_object)
        .ok_or_else(|| bad(format!("{what}: \"vocab\" is missing or not an object")))?;
    const WHAT: &str = "the vocabulary of a tokenizer file";
    let mut out = FxHashMap::default();
    try_reserve_map(&mut out, obj.len(), WHAT)?;
    for (t, id) in obj {
        let id = id
            .as_u64()
            .and_then(|x| u32::try_from(x).ok())
            .ok_or_else(|| bad(format!("{what}: token {t:?} has no valid id")))?;
        out.insert(try_string(t, WHAT)?, id);
    }
    Ok(out)
}

/// A BPE model's `merges` (`"left right"` strings or pairs of strings) as a Value.
fn merge_list(v: &Value, what: &str) -> Result<Vec<(String, String)>> {
    const WHAT: &str = "the merges of a tokenizer file";
    let list = list(v, "merges", what)?;
    let mut merges = try_vec(list.len(), WHAT)?;
    for m in list {
        let pair = match m {
            Value::String(s) => s.split_once(' '),
            Value::Array(p) if p.len() == 2 => p[0].as_str().zip(p[1].as_str()),
            _ => None,
        };
        let (a, b) = pair.ok_or_else(|| bad(format!("{what}: a bad merge {m}")))?;
        merges.push((try_string(a, WHAT)?, try_string(b, WHAT)?));
    }
    Ok(merges)
}

/// A tokenizer.json model's vocab (an object, or a Unigram model's list of rows) and merge
/// list, read without building their Values (a Value of a 50k-entry vocab is a B-tree of owned
/// strings, copied again into the model's hash map: most of a CLIP load) and allocated
/// fallibly.
#[derive(Default)]
struct ModelTables<'a> {
    vocab: Option<FxHashMap<String, u32>>,
    /// a Unigram model's `[piece, score]` rows
    unigram: Option<Vec<(String, f64)>>,
    merges: Option<Vec<(String, String)>>,
    /// merges borrowed from the file's text (CLIP's merges.txt)
    merge_refs: Option<Vec<(&'a str, &'a str)>>,
}

/// The document with its model's vocab (an object, or a list of `[piece, score]` rows) and
/// merges left out, and those tables; `Ok(None)` where the file is not plain (invalid JSON, a
/// repeated key in the document or the model, a vocab id that is not an integer in 0..2^32, a
/// vocab row that is no `[string, number]`, a merge that `merge_list` refuses): the caller then
/// reads the whole document as a Value, and reports what is wrong. An error only for memory the
/// allocator refused to the tables.
fn fast_hf_document(json: &str) -> Result<Option<(Value, ModelTables<'static>)>> {
    use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
    use std::fmt;

    struct Members<'a> {
        tables: &'a mut ModelTables<'static>,
        failed: &'a mut Option<Error>,
        in_model: bool,
    }
    impl<'de> DeserializeSeed<'de> for Members<'_> {
        type Value = serde_json::Map<String, Value>;
        fn deserialize<D: Deserializer<'de>>(
            self,
            d: D,
        ) -> std::result::Result<Self::Value, D::Error> {
            d.deserialize_map(self)
        }
    }
    impl<'de> Visitor<'de> for Members<'_> {
        type Value = serde_json::Map<String, Value>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(
            self,
            mut map: A,
        ) -> std::result::Result<Self::Value, A::Error> {
            let mut out = serde_json::Map::new();
            while let Some(key) = map.next_key::<String>()? {
                let t = &*self.tables;
                if out.contains_key(&key)
                    || (self.in_model
                        && key == "vocab"
                        && (t.vocab.is_some() || t.unigram.is_some()))
                    || (self.in_model && key == "merges" && t.merges.is_some())
                {
                    return Err(serde::de::Error::custom("repeated key"));
                }
                let value = match (&*key, self.in_model) {
                    ("model", false) => Value::Object(map.next_value_seed(Members {
                        tables: &mut *self.tables,
                        failed: &mut *self.failed,
                        in_model: true,
                    })?),
                    ("vocab", true) => {
                        match map.next_value_seed(VocabSeed(&mut *self.failed))? {
                            VocabTable::Map(vocab) => self.tables.vocab = Some(vocab),
                            VocabTable::Rows(rows) => self.tables.unigram = Some(rows),
                        }
                        continue;
                    }
                    ("merges", true) => {
                        let merges = map.next_value_seed(MergesSeed(&mut *self.failed))?;
                        self.tables.merges = Some(merges);
                        continue;
                    }
                    _ => map.next_value()?,
                };
                out.insert(key, value);
            }
            Ok(out)
        }
    }

    enum VocabTable {
        Map(FxHashMap<String, u32>),
        Rows(Vec<(String, f64)>),
    }

    /// An object of token -> id, or a list of `[piece, score]` rows.
    struct VocabSeed<'f>(&'f mut Option<Error>);
    impl<'de> DeserializeSeed<'de> for VocabSeed<'_> {
        type Value = VocabTable;
        fn deserialize<D: Deserializer<'de>>(
            self,
            d: D,
        ) -> std::result::Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for VocabSeed<'_> {
        type Value = VocabTable;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a vocab")
        }
        fn visit_map<A: MapAccess<'de>>(
            self,
            map: A,
        ) -> std::result::Result<Self::Value, A::Error> {
            vocab_files::vocab_map_entries(map, self.0).map(VocabTable::Map)
        }
        fn visit_seq<A: SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> std::result::Result<Self::Value, A::Error> {
            const WHAT: &str = "the vocabulary of a tokenizer file";
            let mut rows = Vec::new();
            while let Some(row) = seq.next_element_seed(RowSeed(&mut *self.0))? {
                try_push(&mut rows, row, WHAT).map_err(|e| refused(self.0, e))?;
            }
            Ok(VocabTable::Rows(rows))
        }
    }

    /// A Unigram vocab row `[piece, score]` (a score is any JSON number, as `Value::as_f64`).
    struct RowSeed<'f>(&'f mut Option<Error>);
    impl<'de> DeserializeSeed<'de> for RowSeed<'_> {
        type Value = (String, f64);
        fn deserialize<D: Deserializer<'de>>(
            self,
            d: D,
        ) -> std::result::Result<Self::Value, D::Error> {
            d.deserialize_seq(self)
        }
    }
    impl<'de> Visitor<'de> for RowSeed<'_> {
        type Value = (String, f64);
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a [piece, score] row")
        }
        fn visit_seq<A: SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> std::result::Result<Self::Value, A::Error> {
            let short = || serde::de::Error::custom("short");
            let piece = seq.next_element_seed(OwnedStr(self.0))?.ok_or_else(short)?;
            let score: f64 = seq.next_element()?.ok_or_else(short)?;
            if seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                return Err(serde::de::Error::custom("long"));
            }
            Ok((piece, score))
        }
    }

    /// A merge list as `merge_list` reads it.
    struct MergesSeed<'f>(&'f mut Option<Error>);
    impl<'de> DeserializeSeed<'de> for MergesSeed<'_> {
        type Value = Vec<(String, String)>;
        fn deserialize<D: Deserializer<'de>>(
            self,
            d: D,
        ) -> std::result::Result<Self::Value, D::Error> {
            d.deserialize_seq(self)
        }
    }
    impl<'de> Visitor<'de> for MergesSeed<'_> {
        type Value = Vec<(String, String)>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a merge list")
        }
        fn visit_seq<A: SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> std::result::Result<Self::Value, A::Error> {
            const WHAT: &str = "the merges of a tokenizer file";
            let mut out =
                try_vec(seq.size_hint().unwrap_or(0), WHAT).map_err(|e| refused(self.0, e))?;
            while let Some(m) = seq.next_element_seed(MergeSeed(&mut *self.0))? {
                try_push(&mut out, m, WHAT).map_err(|e| refused(self.0, e))?;
            }
            Ok(out)
        }
    }

    /// One merge: `"left right"` or `["left", "right"]`.
    struct MergeSeed<'f>(&'f mut Option<Error>);
    impl<'de> DeserializeSeed<'de> for MergeSeed<'_> {
        type Value = (String, String);
        fn deserialize<D: Deserializer<'de>>(
            self,
            d: D,
        ) -> std::result::Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for MergeSeed<'_> {
        type Value = (String, String);
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a merge")
        }
        fn visit_str<E: serde::de::Error>(self, s: &str) -> std::result::Result<Self::Value, E> {
            const WHAT: &str = "the merges of a tokenizer file";
            let (a, b) = s.split_once(' ').ok_or_else(|| E::custom("no space"))?;
            let a = try_string(a, WHAT).map_err(|e| refused(&mut *self.0, e))?;
            let b = try_string(b, WHAT).map_err(|e| refused(self.0, e))?;
            Ok((a, b))
        }
        fn visit_seq<A: SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> std::result::Result<Self::Value, A::Error> {
            let short = || serde::de::Error::custom("short");
            let a = seq
                .next_element_seed(OwnedStr(&mut *self.0))?
                .ok_or_else(short)?;
            let b = seq
                .next_element_seed(OwnedStr(&mut *self.0))?
                .ok_or_else(short)?;
            if seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                return Err(serde::de::Error::custom("long"));
            }
            Ok((a, b))
        }
    }

    let mut tables = ModelTables::default();
    let mut failed = None;
    let mut de = serde_json::Deserializer::from_str(json);
    let doc = Members {
        tables: &mut tables,
        failed: &mut failed,
        in_model: false,
    }
    .deserialize(&mut de);
    if let Some(e) = failed {
        return Err(e);
    }
    let Ok(doc) = doc else {
        return Ok(None);
    };
    if de.end().is_err() {
        return Ok(None);
    }
    Ok(Some((Value::Object(doc), tables)))
}

fn hf_model(v: &Value, tables: ModelTables<'_>) -> Result<(Model, Vec<Option<String>>)> {
    let kind = match v.get("type").and_then(Value::as_str) {
        Some(t) => t,
        // older files have no type: tell them apart by their fields
        None if v.get("merges").is_some() || tables.merges.is_some() => "BPE",
        None if v.get("continuing_subword_prefix").is_some() => "WordPiece",
        None => "Unigram",
    };
    match kind {
        "Unigram" => {
            let what = "Unigram model";
            const WHAT: &str = "the vocabulary of a tokenizer file";
            let vocab = match tables.unigram {
                Some(rows) => rows,
                None => try_map(
                    list(v, "vocab", what)?,
                    |row| {
                        let pair = row.as_array().filter(|p| p.len() == 2);
                        let (p, s) = pair
                            .and_then(|p| Some((p[0].as_str()?, p[1].as_f64()?)))
                            .ok_or_else(|| {
                                bad(format!("{what}: a vocab row is not [piece, score]"))
                            })?;
                        Ok((try_string(p, WHAT)?, s))
                    },
                    WHAT,
                )?,
            };
            let unk = match v.get("unk_id") {
                None | Some(Value::Null) => None,
                Some(x) => Some(
                    x.as_u64()
                        .and_then(|x| u32::try_from(x).ok())
                        .ok_or_else(|| bad(format!("{what}: \"unk_id\" is not an id")))?,
                ),
            };
            let tokens = try_map(&vocab, |(p, _)| Ok(Some(try_string(p, WHAT)?)), WHAT)?;
            let u = Unigram::from_vocab(vocab, unk, bool_or(v, "byte_fallback", false))?;
            Ok((Model::Unigram(u), tokens))
        }
        "WordPiece" => {
            let what = "WordPiece model";
            let vocab = match tables.vocab {
                Some(vocab) => vocab,
                None => vocab_map(v, what)?,
            };
            let unk = str_field(v, "unk_token", what)?;
            let prefix = v
                .get("continuing_subword_prefix")
                .and_then(Value::as_str)
                .unwrap_or("##");
            let max = v
                .get("max_input_chars_per_word")
                .and_then(Value::as_u64)
                .unwrap_or(100) as usize;
            let wp = WordPiece::new(&vocab, unk, prefix, max)?;
            Ok((Model::WordPiece(wp), tokens_of(&vocab)?))
        }
        "BPE" => {
            let what = "BPE model";
            if v.get("dropout").is_some_and(|d| !d.is_null()) {
                return Err(bad(
                    "BPE dropout is random: toksmith encodes deterministically",
                ));
            }
            let vocab = match tables.vocab {
                Some(vocab) => vocab,
                None => vocab_map(v, what)?,
            };
            let options = BpeOptions {
                unk_token: opt_string(v, "unk_token"),
                fuse_unk: bool_or(v, "fuse_unk", false),
                byte_fallback: bool_or(v, "byte_fallback", false),
                continuing_subword_prefix: opt_string(v, "continuing_subword_prefix"),
                end_of_word_suffix: opt_string(v, "end_of_word_suffix"),
                ignore_merges: bool_or(v, "ignore_merges", false),
            };
            let tokens = tokens_of(&vocab)?;
            let b = match (tables.merge_refs, tables.merges) {
                (Some(merges), _) => CharBpe::new(vocab, &merges, options)?,
                (None, Some(merges)) => CharBpe::new(vocab, &merges, options)?,
                (None, None) => CharBpe::new(vocab, &merge_list(v, what)?, options)?,
            };
            Ok((Model::Bpe(b), tokens))
        }
        t => Err(bad(format!("model type {t:?} is not supported"))),
    }
}

/// Standard base64 (the `precompiled_charsmap` of a `Precompiled` normalizer).
fn base64_decode(s: &str) -> Result<Vec<u8>> {
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let body = s.trim_end_matches('=').as_bytes();
    // (6 bits a character: the pushes below are within this room)
    let mut out = try_vec(
        body.len() * 3 / 4,
        "the normalization map of a tokenizer file",
    )?;
    let (mut acc, mut bits) = (0u32, 0);
    for &c in body {
        let v = val(c).ok_or_else(|| bad("precompiled_charsmap is not valid base64"))?;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

fn pattern(v: &Value, what: &str) -> Result<Pattern> {
    let p = v
        .get("pattern")
        .ok_or_else(|| bad(format!("{what}: no \"pattern\"")))?;
    if let Some(s) = p.get("String").and_then(Value::as_str) {
        Ok(Pattern::Literal(s.to_string()))
    } else if let Some(r) = p.get("Regex").and_then(Value::as_str) {
        Pattern::regex(r)
    } else {
        Err(bad(format!(
            "{what}: a pattern that is neither String nor Regex"
        )))
    }
}

pub(crate) fn hf_normalizer(v: &Value) -> Result<Normalizer> {
    let what = "normalizer";
    Ok(match type_of(v, what)? {
        "toksmith.WholeText" => Normalizer::WholeText(Box::new(hf_normalizer(
            v.get("normalizer")
                .ok_or_else(|| bad("toksmith.WholeText normalizer: no \"normalizer\""))?,
        )?)),
        "NFC" => Normalizer::Nfc,
        "NFD" => Normalizer::Nfd,
        "NFKC" => Normalizer::Nfkc,
        "NFKD" => Normalizer::Nfkd,
        "Lowercase" => Normalizer::Lowercase,
        "StripAccents" => Normalizer::StripAccents,
        "Strip" => Normalizer::Strip {
            left: bool_or(v, "strip_left", true),
            right: bool_or(v, "strip_right", true),
        },
        "Replace" => Normalizer::Replace {
            pattern: pattern(v, "Replace normalizer")?,
            content: str_field(v, "content", "Replace normalizer")?.to_string(),
        },
        "Prepend" => Normalizer::Prepend(str_field(v, "prepend", "Prepend normalizer")?.into()),
        "Precompiled" => {
            let blob = str_field(v, "precompiled_charsmap", "Precompiled normalizer")?;
            Normalizer::Precompiled(Precompiled::from_blob(&base64_decode(blob)?)?)
        }
        "BertNormalizer" => Normalizer::Bert(BertNormalizer {
            clean_text: bool_or(v, "clean_text", true),
            handle_chinese_chars: bool_or(v, "handle_chinese_chars", true),
            strip_accents: v.get("strip_accents").and_then(Value::as_bool),
            lowercase: bool_or(v, "lowercase", true),
        }),
        "Sequence" => Normalizer::Sequence(
            list(v, "normalizers", "Sequence normalizer")?
                .iter()
                .map(hf_normalizer)
                .collect::<Result<_>>()?,
        ),
        t => return Err(bad(format!("normalizer {t:?} is not supported"))),
    })
}

fn metaspace_replacement(v: &Value, what: &str) -> Result<char> {
    let r = v
        .get("replacement")
        .and_then(Value::as_str)
        .unwrap_or("\u{2581}");
    let mut cs = r.chars();
    match (cs.next(), cs.next()) {
        (Some(c), None) => Ok(c),
        _ => Err(bad(format!(
            "{what}: the replacement must be one character"
        ))),
    }
}

fn prepend_scheme(v: &Value, what: &str) -> Result<PrependScheme> {
    match v.get("prepend_scheme").and_then(Value::as_str) {
        Some("first") => Ok(PrependScheme::First),
        Some("always") => Ok(PrependScheme::Always),
        Some("never") => Ok(PrependScheme::Never),
        Some(s) => Err(bad(format!("{what}: unknown prepend_scheme {s:?}"))),
        // older files: add_prefix_space
        None if bool_or(v, "add_prefix_space", true) => Ok(PrependScheme::Always),
        None => Ok(PrependScheme::Never),
    }
}

fn behavior(v: &Value, what: &str) -> Result<Behavior> {
    Ok(match v.get("behavior").and_then(Value::as_str) {
        None | Some("Isolated") => Behavior::Isolated,
        Some("Removed") => Behavior::Removed,
        Some("MergedWithPrevious") => Behavior::MergedWithPrevious,
        Some("MergedWithNext") => Behavior::MergedWithNext,
        Some("Contiguous") => Behavior::Contiguous,
        Some(b) => return Err(bad(format!("{what}: unknown behavior {b:?}"))),
    })
}

fn hf_pre_tokenizer(v: &Value) -> Result<PreTokenizer> {
    let what = "pre_tokenizer";
    Ok(match type_of(v, what)? {
        "Metaspace" => PreTokenizer::Metaspace {
            replacement: metaspace_replacement(v, "Metaspace pre_tokenizer")?,
            prepend_scheme: prepend_scheme(v, "Metaspace pre_tokenizer")?,
            split: bool_or(v, "split", true),
        },
        "BertPreTokenizer" => PreTokenizer::Bert,
        "WhitespaceSplit" => PreTokenizer::WhitespaceSplit,
        "Whitespace" => PreTokenizer::whitespace(),
        "Punctuation" => PreTokenizer::Punctuation(behavior(v, "Punctuation pre_tokenizer")?),
        "Digits" => PreTokenizer::Digits {
            individual_digits: bool_or(v, "individual_digits", false),
        },
        "Split" => {
            let what = "Split pre_tokenizer";
            let b = behavior(v, what)?;
            let invert = bool_or(v, "invert", false);
            let p = v
                .get("pattern")
                .ok_or_else(|| bad(format!("{what}: no \"pattern\"")))?;
            let split = if let Some(s) = p.get("String").and_then(Value::as_str) {
                RegexSplit::literal(s, b, invert)?
            } else if let Some(r) = p.get("Regex").and_then(Value::as_str) {
                RegexSplit::regex(r, b, invert)?
            } else {
                return Err(bad(format!(
                    "{what}: a pattern that is neither String nor Regex"
                )));
            };
            PreTokenizer::Split(Box::new(split))
        }
        "ByteLevel" => PreTokenizer::ByteLevel(Box::new(ByteLevelPre::new(
            bool_or(v, "add_prefix_space", true),
            bool_or(v, "use_regex", true),
        )?)),
        "Sequence" => PreTokenizer::Sequence(
            list(v, "pretokenizers", "Sequence pre_tokenizer")?
                .iter()
                .map(hf_pre_tokenizer)
                .collect::<Result<_>>()?,
        ),
        t => return Err(bad(format!("pre_tokenizer {t:?} is not supported"))),
    })
}

fn hf_decoder(v: &Value) -> Result<Decoder> {
    let what = "decoder";
    Ok(match type_of(v, what)? {
        "Metaspace" => Decoder::Metaspace {
            replacement: metaspace_replacement(v, "Metaspace decoder")?,
            prepend_scheme_never: prepend_scheme(v, "Metaspace decoder")? == PrependScheme::Never,
        },
        "ByteFallback" => Decoder::ByteFallback,
        "Fuse" => Decoder::Fuse,
        "Strip" => {
            let content = str_field(v, "content", "Strip decoder")?;
            let mut cs = content.chars();
            let c = match (cs.next(), cs.next()) {
                (Some(c), None) => c,
                _ => return Err(bad("Strip decoder: content must be one character")),
            };
            let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0) as usize;
            Decoder::Strip {
                content: c,
                start: n("start"),
                stop: n("stop"),
            }
        }
        "Replace" => {
            let p = match pattern(v, "Replace decoder")? {
                Pattern::Literal(s) => s,
                Pattern::Regex(_) => {
                    return Err(bad("Replace decoder: a Regex pattern is not supported"))
                }
            };
            Decoder::Replace {
                pattern: p,
                content: str_field(v, "content", "Replace decoder")?.to_string(),
            }
        }
        "WordPiece" => Decoder::WordPiece {
            prefix: v
                .get("prefix")
                .and_then(Value::as_str)
                .unwrap_or("##")
                .to_string(),
            cleanup: bool_or(v, "cleanup", true),
        },
        "ByteLevel" => Decoder::ByteLevel,
        // not a `tokenizers` type: what transformers' CLIP tokenizer does after decoding
        "toksmith.EndOfWordCleanup" => {
            Decoder::EndOfWordCleanup(str_field(v, "suffix", "decoder")?.to_string())
        }
        "BPEDecoder" => Decoder::BpeSuffix(
            v.get("suffix")
                .and_then(Value::as_str)
                .unwrap_or("</w>")
                .to_string(),
        ),
        "Sequence" => Decoder::Sequence(
            list(v, "decoders", "Sequence decoder")?
                .iter()
                .map(hf_decoder)
                .collect::<Result<_>>()?,
        ),
        t => return Err(bad(format!("decoder {t:?} is not supported"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trip() {
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64_decode("aGk=").unwrap(), b"hi");
        assert!(base64_decode("a$b").is_err());
    }

    #[test]
    fn wordpiece_json_pipeline() {
        let json = r###"{"added_tokens":[{"id":0,"content":"[UNK]","special":true},
            {"id":1,"content":"[CLS]","special":true}],
            "normalizer":{"type":"BertNormalizer","lowercase":true},
            "pre_tokenizer":{"type":"BertPreTokenizer"},
            "decoder":{"type":"WordPiece","prefix":"##","cleanup":true},
            "model":{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##",
            "max_input_chars_per_word":100,"vocab":{"[UNK]":0,"[CLS]":1,"hello":2,"##s":3,"!":4}}}"###;
        let p = Pipeline::from_hf_json(json).unwrap();
        assert_eq!(
            p.encode("[CLS]Hellos! x", true).unwrap(),
            vec![1, 2, 3, 4, 0]
        );
        assert_eq!(p.encode("[CLS]", false).unwrap(), vec![0, 0, 0]);
        assert_eq!(p.decode(&[1, 2, 3, 4]).unwrap(), "[CLS] hellos!");
        assert!(p.decode(&[9]).is_err());
        assert!(Pipeline::from_hf_json("{\"model\":{\"type\":\"Foo\"}}").is_err());
    }

    #[test]
    fn offsets_follow_the_normalizer() {
        let json = r###"{"added_tokens":[{"id":1,"content":"[CLS]","special":true}],
            "normalizer":{"type":"Sequence","normalizers":[{"type":"Lowercase"},
            {"type":"Replace","pattern":{"Regex":" {2,}"},"content":" "}]},
            "pre_tokenizer":{"type":"BertPreTokenizer"},
            "model":{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##",
            "vocab":{"[UNK]":0,"[CLS]":1,"hello":2,"##s":3,"!":4,"x":5}}}"###;
        let p = Pipeline::from_hf_json(json).unwrap();
        let text = "[CLS]HELLOS!   x \u{e9}t\u{e9}";
        let (ids, spans) = p.encode_with_offsets(text, None).unwrap();
        assert_eq!(ids, p.encode(text, true).unwrap());
        assert_eq!(ids, vec![1, 2, 3, 4, 5, 0]);
        // byte spans: [CLS], HELLO, S, !, x, the unknown word
        assert_eq!(
            spans,
            vec![(0, 5), (5, 10), (10, 11), (11, 12), (15, 16), (17, 22)]
        );
    }

    #[test]
    fn truncated_spm_model_is_an_error() {
        let e = Pipeline::from_spm_model(&[0x0a, 0x80]).unwrap_err();
        assert!(e.to_string().contains("offset"), "{e}");
    }

    #[test]
    fn plain_files_skip_the_value_of_their_tables() {
        let bpe = r#"{"version":"1.0","model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},
            "merges":["a b",["b","a"]],"dropout":null},"decoder":null}"#;
        let (doc, tables) = fast_hf_document(bpe).unwrap().expect("plain");
        assert_eq!(
            doc,
            serde_json::json!({"version":"1.0","decoder":null,
            "model":{"type":"BPE","dropout":null}})
        );
        assert_eq!(tables.vocab.unwrap().len(), 3);
        let pairs = [("a", "b"), ("b", "a")].map(|(a, b)| (a.to_string(), b.to_string()));
        assert_eq!(tables.merges.unwrap(), pairs.to_vec());
        // a Unigram vocab (a list of rows, a score any number) is read into its rows
        let unigram = r#"{"model":{"type":"Unigram","vocab":[["a",-1.5],["b",2]]}}"#;
        let (doc, tables) = fast_hf_document(unigram).unwrap().expect("plain");
        assert_eq!(doc, serde_json::json!({"model":{"type":"Unigram"}}));
        let rows = vec![("a".to_string(), -1.5), ("b".to_string(), 2.0)];
        assert_eq!(tables.unigram, Some(rows));
        assert!(tables.vocab.is_none() && tables.merges.is_none());
        // the rest is left to the Value reading, which reports it
        for odd in [
            r#"{"model":{"vocab":{"a":0},"vocab":{"a":0}}}"#,
            r#"{"model":{},"model":{}}"#,
            r#"{"model":{"vocab":{"a":1.0}}}"#,
            r#"{"model":{"vocab":{"a":-1}}}"#,
            r#"{"model":{"vocab":{"a":4294967296}}}"#,
            r#"{"model":{"merges":["ab"]}}"#,
            r#"{"model":{"merges":[["a"]]}}"#,
            r#"{"model":{"merges":[["a","b","c"]]}}"#,
            r#"{"model":{"merges":null}}"#,
            r#"{"model":{"vocab":{}}} x"#,
            r#"{"model":{"vocab":[["a"]]}}"#,
            r#"{"model":{"vocab":[["a",1,2]]}}"#,
            r#"{"model":{"vocab":[["a","1"]]}}"#,
            r#"{"model":{"vocab":[[1,1]]}}"#,
            r#"{"model":{"vocab":[["a",1]],"vocab":[["a",1]]}}"#,
        ] {
            assert!(fast_hf_document(odd).unwrap().is_none(), "{odd}");
        }
        let json = r#"{"model":{"type":"BPE","vocab":{"a":1.5},"merges":[]}}"#;
        let Err(e) = Pipeline::from_hf_json(json) else {
            panic!("accepted");
        };
        assert!(e.to_string().contains("no valid id"), "{e}");
    }
}
