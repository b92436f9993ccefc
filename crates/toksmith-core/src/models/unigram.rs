//! Unigram model: the Viterbi segmentation over piece scores of SentencePiece and of Hugging Face
//! `tokenizers` (`models::unigram`).
//!
//! The lattice is never stored: a best-path array indexed by byte end position is updated while a
//! trie lists the pieces starting at each character (sentencepiece's `EncodeOptimized`). A
//! character that no piece covers gets an unknown node scored `min_score - 10`. Consecutive
//! unknown nodes become one unknown id; with `byte_fallback` they become the `<0xAB>` pieces of
//! their bytes instead.
//!
//! The two reference libraries differ only in arithmetic and in which pieces take part:
//! * [`ScoreMode::SentencePiece`]: scores and path sums are f32 (checked against sentencepiece on
//!   near-ties such as `+` `++` vs `++` `+`, where a double sum picks the other path). Ties keep
//!   the first candidate, exactly as sentencepiece's `>`. The arithmetic is that of
//!   sentencepiece 0.2.3's `Model::EncodeOptimized`: user-defined pieces score
//!   `0.1 * (bytes - 1)` (its `GetUserDefinedScore`; older versions used
//!   `length * max_score - 0.1`), and where the running path score at a character start is
//!   beyond ±100000 (`kScoreResetThreshold`) the scores of the positions ahead are moved by it
//!   and the lattice goes on from 0, which changes how later sums round (and so exact ties such
//!   as `▁----`: `- ---` or `--- -`). Control, unknown, byte and unused pieces never match text.
//! * [`ScoreMode::HuggingFace`]: every piece of the vocabulary matches text, scores and sums are
//!   f64, `min_score` is taken over the whole vocabulary.

use super::spm::{byte_piece, ModelProto, PieceType};
use super::trie::Trie;
use super::word_cache::{self, word_hash, WordTable, WORD_MAX, WORD_MIN};
use crate::encode::piece_cache::{PieceCache, MAX_PIECE};
use crate::mem::{try_reserve, try_vec};
use crate::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScoreMode {
    SentencePiece,
    HuggingFace,
}

#[derive(Debug, Clone)]
pub struct Unigram {
    pieces: Vec<String>,
    scores: Vec<f64>,
    trie: Trie,
    unk_id: Option<u32>,
    unk_score: f64,
    /// `<0xAB>` ids when byte fallback is on and all 256 byte pieces exist.
    byte_ids: Option<Box<[u32; 256]>>,
    mode: ScoreMode,
    /// Per id: the score a lattice node of the piece gets (user-defined bonus included; in
    /// SentencePiece mode an f32 value).
    node_scores: Vec<f64>,
    /// `node_scores` as f32 (SentencePiece mode adds them as f32).
    node_scores32: Vec<f32>,
    /// The largest |score| of a lattice node (any piece or the unknown node), as f32: a path
    /// of k nodes moves the running score by at most k times it.
    max_step: f32,
    /// SentencePiece mode: no piece has `▁` other than as its first character and `▁` is a
    /// piece, so every lattice path has a node boundary before each `▁` and the text can be
    /// segmented word by word (see [`Unigram::encode_words`]).
    word_split: bool,
    /// The tag of this model's entries in the word cache. In Hugging Face mode each word's
    /// lattice starts from 0, so the ids of a word are its entry. sentencepiece sums f32 scores
    /// over the whole text, so a word's best path may depend on the score it starts from: there
    /// an entry also holds the largest start score for which its ids are exact.
    owner: u64,
}

/// The best path's last node at one position of a lattice; `S` is the arithmetic of the path
/// sums (f32 for sentencepiece, f64 for `tokenizers`).
#[derive(Clone, Copy)]
struct Best<S = f64> {
    score: S,
    starts_at: u32,
    id: u32,
}

/// The arithmetic of a lattice's path sums.
trait Score: Copy + PartialOrd + std::ops::Add<Output = Self> + std::ops::Sub<Output = Self> {
    const ZERO: Self;
    /// sentencepiece's score reset applies (its f32 lattice)
    const RESETS: bool;
    fn beyond_reset(self) -> bool;
}

impl Score for f32 {
    const ZERO: Self = 0.0;
    const RESETS: bool = true;
    #[inline(always)]
    fn beyond_reset(self) -> bool {
        !(-SCORE_RESET..=SCORE_RESET).contains(&self)
    }
}

impl Score for f64 {
    const ZERO: Self = 0.0;
    const RESETS: bool = false;
    #[inline(always)]
    fn beyond_reset(self) -> bool {
        false
    }
}

const NO_START: u32 = u32::MAX;

/// sentencepiece 0.2.3's `kScoreResetThreshold`: where the running path score at a character
/// is beyond it, the lattice goes on from 0 (see [`Unigram::lattice_into`]).
const SCORE_RESET: f32 = 100_000.0;

const SPACE: &str = "\u{2581}";

/// Cached paths write a run of k unknown characters as `u32::MAX - k` (k <= MAX_PIECE), so
/// the word cache is used only by vocabularies with fewer pieces than this.
const UNK_RUN: u32 = u32::MAX - MAX_PIECE as u32;

/// Buffers reused across the words of one text.
#[derive(Default)]
struct Scratch {
    best32: Vec<Best<f32>>,
    second32: Vec<f32>,
    ids: Vec<u32>,
    /// a word cache entry being built
    entry: Vec<u32>,
}

/// The ids of a cached path (pairs of an id or [`UNK_RUN`] marker and its node's f32 score)
/// into `out`, whose room the caller reserved; returns the f32 score at its end, summed node
/// by node as the lattice sums it.
#[inline]
fn replay(start: f32, path: &[u32], unk_id: u32, out: &mut Vec<u32>) -> f32 {
    let mut s = start;
    for node in path.chunks_exact(2) {
        let (e, score) = (node[0], f32::from_bits(node[1]));
        if e < UNK_RUN {
            out.push(e);
            s += score;
        } else {
            // only cached where there is an unknown id and no byte fallback
            out.push(unk_id);
            for _ in 0..u32::MAX - e {
                s += score;
            }
        }
    }
    s
}

/// The position of the first byte of `separators` (see [`is_separator`]) at or after
/// `from` in `bytes`, or their length. Where every separator is below 0x21 (spaces and control
/// bytes, as in SentencePiece's normalizers) the candidates are found 8 bytes at a time.
#[inline]
fn next_separator(bytes: &[u8], from: usize, separators: u128) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut i = from.min(bytes.len());
    if separators >> 0x21 == 0 {
        while let Some(chunk) = bytes.get(i..i + 8) {
            let x = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
            // a flag on each byte below 0x21 (the lowest flag is always a true one)
            let low = x.wrapping_sub(0x21 * LO) & !x & HI;
            if low == 0 {
                i += 8;
                continue;
            }
            let at = i + (low.trailing_zeros() / 8) as usize;
            if is_separator(separators, bytes[at]) {
                return at;
            }
            i = at + 1;
        }
    }
    while i < bytes.len() && !is_separator(separators, bytes[i]) {
        i += 1;
    }
    i
}

/// Whether `b` is in `separators` (bit b for the ASCII byte b).
#[inline(always)]
fn is_separator(separators: u128, b: u8) -> bool {
    b < 128 && separators >> b & 1 != 0
}

/// The position of the first `▁` (E2 96 81) at or after `from` in the UTF-8 `bytes`, or their
/// length. The E2 bytes are found 8 at a time (a byte loop's search and its exit at each
/// word's end were a quarter of the word split's samples on multilingual text).
#[inline]
fn next_space(bytes: &[u8], from: usize) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut i = from.min(bytes.len());
    loop {
        let at = loop {
            match bytes.get(i..i + 8) {
                Some(chunk) => {
                    // a zero byte of x where the byte is E2; the lowest flag is always a true
                    // one (a borrow only flags bytes above a zero byte)
                    let x = u64::from_le_bytes(chunk.try_into().expect("8 bytes")) ^ (0xE2 * LO);
                    let found = x.wrapping_sub(LO) & !x & HI;
                    if found != 0 {
                        break i + (found.trailing_zeros() / 8) as usize;
                    }
                    i += 8;
                }
                None => match bytes[i..].iter().position(|&b| b == 0xe2) {
                    Some(p) => break i + p,
                    None => return bytes.len(),
                },
            }
        };
        if bytes[at..].starts_with(SPACE.as_bytes()) {
            return at;
        }
        i = at + 1;
    }
}

fn byte_ids_of(pieces: &[String], enabled: bool) -> Result<Option<Box<[u32; 256]>>> {
    if !enabled {
        return Ok(None);
    }
    let mut index = rustc_hash::FxHashMap::default();
    crate::mem::try_reserve_map(&mut index, pieces.len(), PIECES)?;
    for (i, p) in pieces.iter().enumerate() {
        index.entry(p.as_str()).or_insert(i as u32);
    }
    // u32::MAX where a byte has no piece
    let mut ids = Box::new([u32::MAX; 256]);
    for b in 0..=255u8 {
        if let Some(&id) = index.get(byte_piece(b).as_str()) {
            ids[b as usize] = id;
        }
    }
    Ok(Some(ids))
}

/// What a refused allocation of a model's tables names.
const PIECES: &str = "the pieces of a Unigram model";

/// One raw word's normalization appended to a string: whether it is one word of the
/// normalized text, and whether it ends with a space it kept (see
/// `SpmNormalizer::normalize_word`).
pub type WordNormalizer<'a> = dyn Fn(&str, &mut String) -> Result<(bool, bool)> + 'a;

/// How [`Unigram::encode_raw`] normalizes raw text word by word (from a SentencePiece
/// normalizer: `SpmNormalizer::raw_separators`, `normalize_word` and `normalize`).
#[derive(Clone, Copy)]
pub struct RawText<'a> {
    /// bit b set: the ASCII byte b separates words (0: the text is normalized whole)
    pub separators: u128,
    pub word: &'a WordNormalizer<'a>,
    /// a text normalized whole
    pub whole: &'a dyn Fn(&str) -> Result<String>,
}

/// How many words ahead of its encoding a word's cache lines are requested (the word table's
/// slot; its record half as far ahead): the tables are larger than the CPU caches.
const AHEAD: usize = 6;

/// The words of a text found [`AHEAD`] words before they are encoded, their cache lines asked
/// for meanwhile. `find(from)` is the first word (start, end) at or after `from` (called with
/// `from` inside the text only).
struct Ahead<'a, F> {
    find: F,
    bytes: &'a [u8],
    /// the words found, each with its [`word_hash`] where the word table would hold it (else
    /// 0); past the last word, `(n, n, 0)` for a text of `n` bytes
    ring: [(usize, usize, u64); AHEAD],
    k: usize,
    /// where the next word is looked for
    from: usize,
}

impl<'a, F: Fn(usize) -> Option<(usize, usize)>> Ahead<'a, F> {
    fn new(
        find: F,
        bytes: &'a [u8],
        words: Option<&WordTable>,
        cache: Option<&PieceCache>,
    ) -> Self {
        let n = bytes.len();
        let mut a = Ahead {
            find,
            bytes,
            ring: [(n, n, 0); AHEAD],
            k: 0,
            from: 0,
        };
        for i in 0..AHEAD {
            a.ring[i] = a.fetch(words, cache);
        }
        a
    }

    /// The next word, its lines requested.
    #[inline]
    fn fetch(
        &mut self,
        words: Option<&WordTable>,
        cache: Option<&PieceCache>,
    ) -> (usize, usize, u64) {
        let n = self.bytes.len();
        let Some((start, end)) = (self.from < n).then(|| (self.find)(self.from)).flatten() else {
            self.from = n;
            return (n, n, 0);
        };
        self.from = end;
        let word = &self.bytes[start..end];
        let mut h = 0;
        match (words, cache) {
            (Some(w), _) if (WORD_MIN..=WORD_MAX).contains(&word.len()) => {
                h = word_hash(word);
                w.prefetch_slot(h);
            }
            (_, Some(c)) => c.prefetch(word),
            _ => {}
        }
        (start, end, h)
    }

    /// The word to encode now: (start, end, hash); start == end past the last word.
    #[inline]
    fn next(
        &mut self,
        words: Option<&WordTable>,
        cache: Option<&PieceCache>,
    ) -> (usize, usize, u64) {
        let now = self.ring[self.k];
        self.ring[self.k] = self.fetch(words, cache);
        self.k = (self.k + 1) % AHEAD;
        if let Some(w) = words {
            let (_, _, h) = self.ring[(self.k + AHEAD / 2 - 1) % AHEAD];
            if h != 0 {
                w.prefetch_record(h);
            }
        }
        now
    }
}

impl Unigram {
    /// The model of a SentencePiece `.model` file whose model_type is UNIGRAM.
    pub fn from_spm(m: &ModelProto) -> Result<Self> {
        let n = m.pieces.len();
        if n >= u32::MAX as usize {
            return Err(Error::InvalidVocab("too many pieces".into()));
        }
        let mut trie = Trie::new();
        let mut min_score = f32::MAX;
        let mut user_defined = crate::mem::try_filled(n, false, PIECES)?;
        for (i, p) in m.pieces.iter().enumerate() {
            match p.kind {
                PieceType::Normal => {
                    min_score = min_score.min(p.score);
                    trie.insert(p.piece.as_bytes(), i as u32)?;
                }
                PieceType::UserDefined => {
                    user_defined[i] = true;
                    trie.insert(p.piece.as_bytes(), i as u32)?;
                }
                _ => {}
            }
        }
        trie.finish()?;
        let pieces: Vec<String> = crate::mem::try_map(
            &m.pieces,
            |p| crate::mem::try_string(&p.piece, PIECES),
            PIECES,
        )?;
        let byte_ids = byte_ids_of(&pieces, m.trainer_spec.byte_fallback)?;
        let node_scores = crate::mem::try_map(
            m.pieces.iter().zip(&user_defined),
            |(p, &user)| {
                Ok(if user {
                    // sentencepiece 0.2.3's `GetUserDefinedScore(length)`: a double
                    // `0.1 * (length - 1)` (length in bytes in `EncodeOptimized`) as a float
                    f64::from((0.1 * (p.piece.len() as f64 - 1.0)) as f32)
                } else {
                    f64::from(p.score)
                })
            },
            PIECES,
        )?;
        let in_trie =
            |p: &super::spm::Piece| matches!(p.kind, PieceType::Normal | PieceType::UserDefined);
        let word_split = trie.get(SPACE.as_bytes()).is_some()
            && n < UNK_RUN as usize
            && m.pieces
                .iter()
                .filter(|p| in_trie(p))
                .all(|p| p.piece.match_indices(SPACE).all(|(at, _)| at == 0));
        let node_scores: Vec<f64> = node_scores;
        let unk_score = min_score - 10.0f32;
        let max_step = node_scores
            .iter()
            .map(|&x| (x as f32).abs())
            .fold(unk_score.abs(), f32::max);
        Ok(Unigram {
            max_step,
            scores: crate::mem::try_map(&m.pieces, |p| Ok(f64::from(p.score)), PIECES)?,
            node_scores32: crate::mem::try_map(&node_scores, |&x| Ok(x as f32), PIECES)?,
            node_scores,
            word_split,
            owner: word_cache::new_owner(),
            pieces,
            trie,
            unk_id: Some(m.unk_id()),
            unk_score: f64::from(unk_score),
            byte_ids,
            mode: ScoreMode::SentencePiece,
        })
    }

    /// Hugging Face `Unigram { vocab, unk_id, byte_fallback }`.
    pub fn from_vocab(
        vocab: Vec<(String, f64)>,
        unk_id: Option<u32>,
        byte_fallback: bool,
    ) -> Result<Self> {
        let n = vocab.len();
        if n >= u32::MAX as usize {
            return Err(Error::InvalidVocab("too many pieces".into()));
        }
        if let Some(u) = unk_id {
            if u as usize >= n {
                return Err(Error::InvalidVocab(format!(
                    "unk_id {u} is out of range for a vocabulary of {n} pieces"
                )));
            }
        }
        let mut trie = Trie::new();
        let mut min_score = f64::INFINITY;
        let mut seen = rustc_hash::FxHashSet::default();
        crate::mem::try_reserve_set(&mut seen, n, PIECES)?;
        for (i, (p, s)) in vocab.iter().enumerate() {
            if !seen.insert(p.as_str()) {
                return Err(Error::InvalidVocab(format!("piece {p:?} appears twice")));
            }
            if s.is_nan() {
                return Err(Error::InvalidVocab(format!("piece {p:?} has a NaN score")));
            }
            min_score = min_score.min(*s);
            trie.insert(p.as_bytes(), i as u32)?;
        }
        drop(seen);
        trie.finish()?;
        let scores: Vec<f64> = crate::mem::try_map(&vocab, |&(_, s)| Ok(s), PIECES)?;
        // (moved out: no copy of the pieces)
        let pieces: Vec<String> = crate::mem::try_map(vocab, |(p, _)| Ok(p), PIECES)?;
        let byte_ids = byte_ids_of(&pieces, byte_fallback)?;
        Ok(Unigram {
            node_scores32: crate::mem::try_map(&scores, |&x| Ok(x as f32), PIECES)?,
            node_scores: crate::mem::try_map(&scores, |&x| Ok(x), PIECES)?,
            // (no word split nor score reset in this mode)
            max_step: 0.0,
            word_split: false,
            owner: word_cache::new_owner(),
            pieces,
            scores,
            trie,
            unk_id,
            unk_score: min_score - 10.0,
            byte_ids,
            mode: ScoreMode::HuggingFace,
        })
    }

    pub fn len(&self) -> usize {
        self.pieces.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    pub fn id_to_piece(&self, id: u32) -> Option<&str> {
        self.pieces.get(id as usize).map(|s| s.as_str())
    }

    /// Each piece's score, as the file gives it.
    pub fn scores(&self) -> &[f64] {
        &self.scores
    }

    pub fn unk_id(&self) -> Option<u32> {
        self.unk_id
    }

    /// The best segmentation of `text` as (start, end, id) byte spans; unknown characters are
    /// one span each with `id == u32::MAX`. The lattice and the spans are allocated fallibly
    /// ([`crate::Error::OutOfMemory`]).
    pub fn segment(&self, text: &str) -> Result<Vec<(usize, usize, u32)>> {
        match self.mode {
            ScoreMode::SentencePiece => {
                let mut best = Vec::new();
                self.lattice_spm(text, 0.0, &mut best)?;
                spans(text, &best)
            }
            ScoreMode::HuggingFace => {
                let mut best = Vec::new();
                self.lattice_into(text, 0.0, &self.node_scores, self.unk_score, &mut best)?;
                spans(text, &best)
            }
        }
    }

    /// sentencepiece's f32 lattice of `text` into `best`, the path scores starting from
    /// `start` (its running sum where `text` is one word of a longer text).
    #[inline]
    fn lattice_spm(&self, text: &str, start: f32, best: &mut Vec<Best<f32>>) -> Result<()> {
        let unk = self.unk_score as f32;
        self.lattice_into(text, start, &self.node_scores32, unk, best)
    }

    /// The best path's last node at each byte position of `text` into `best`, the path scores
    /// starting from `start` and summed in `S` (with sentencepiece's score reset in f32).
    fn lattice_into<S: Score>(
        &self,
        text: &str,
        start: S,
        node_scores: &[S],
        unk_score: S,
        best: &mut Vec<Best<S>>,
    ) -> Result<()> {
        let bytes = text.as_bytes();
        let size = bytes.len();
        best.clear();
        try_reserve(best, size + 1, "the Unigram lattice")?;
        best.resize(
            size + 1,
            Best {
                score: S::ZERO,
                starts_at: NO_START,
                id: 0,
            },
        );
        best[0].score = start;
        // the largest end of a node so far (sentencepiece's `max_frontier`)
        let mut frontier = 0usize;
        let mut starts_at = 0usize;
        while starts_at < size {
            let mut here = best[starts_at].score;
            if S::RESETS && here.beyond_reset() {
                // sentencepiece 0.2.3 moves the scores of the positions reached so far (the
                // nodes from here on) by the running score and goes on from 0: all later sums
                // round at the small magnitude
                let offset = here;
                for (i, b) in best[starts_at..=frontier.max(starts_at)]
                    .iter_mut()
                    .enumerate()
                {
                    if i == 0 || b.starts_at != NO_START {
                        b.score = b.score - offset;
                    }
                }
                here = S::ZERO;
            }
            let mblen = utf8_len(bytes[starts_at]).min(size - starts_at);
            let mut has_single_node = false;
            self.trie
                .common_prefixes(&bytes[starts_at..], |length, id| {
                    let candidate = node_scores[id as usize] + here;
                    let target = &mut best[starts_at + length];
                    if target.starts_at == NO_START || candidate > target.score {
                        target.score = candidate;
                        target.starts_at = starts_at as u32;
                        target.id = id;
                    }
                    if S::RESETS {
                        frontier = frontier.max(starts_at + length);
                    }
                    if length == mblen {
                        has_single_node = true;
                    }
                });
            if !has_single_node {
                frontier = frontier.max(starts_at + mblen);
                let candidate = unk_score + here;
                let target = &mut best[starts_at + mblen];
                if target.starts_at == NO_START || candidate > target.score {
                    target.score = candidate;
                    target.starts_at = starts_at as u32;
                    target.id = u32::MAX;
                }
            }
            starts_at += mblen;
        }
        Ok(())
    }

    /// Encode `text` (already normalized and pre-tokenized) into `out`.
    pub fn encode(&self, text: &str, out: &mut Vec<u32>) -> Result<()> {
        match self.mode {
            ScoreMode::HuggingFace => {
                word_cache::cached(self.owner, text, out, |out| self.encode_uncached(text, out))
            }
            ScoreMode::SentencePiece if self.word_split => self.encode_words(text, out),
            ScoreMode::SentencePiece => self.encode_uncached(text, out),
        }
    }

    fn encode_uncached(&self, text: &str, out: &mut Vec<u32>) -> Result<()> {
        match self.mode {
            ScoreMode::SentencePiece => {
                let mut best = Vec::new();
                self.lattice_spm(text, 0.0, &mut best)?;
                self.emit(text, &best, out)
            }
            ScoreMode::HuggingFace => {
                let mut best = Vec::new();
                self.lattice_into(text, 0.0, &self.node_scores, self.unk_score, &mut best)?;
                self.emit(text, &best, out)
            }
        }
    }

    /// sentencepiece's whole-text Viterbi, one word at a time (only where `word_split`).
    ///
    /// No node crosses a `▁` that is not its first character, so the best path of the text
    /// ends a node before each `▁`: the text is cut there into words, each word's lattice
    /// starts from the running f32 score of the words before it, and the ids are those of the
    /// whole-text lattice. In exact arithmetic a word's best path would not depend on that
    /// start score, but sentencepiece rounds each sum to f32, which can flip a near-tie (and
    /// flips exact ties such as `+` `++` / `++` `+` by position). So a word's cache entry is
    /// its exact best path plus a bound: the path is the f32 one whenever |start score| is
    /// below it (every decision of the lattice wins by more than the rounding can move it,
    /// see [`Unigram::bounded_path`]). Otherwise, and for words with unknown characters, the
    /// word's own f32 lattice runs from the running score, exactly as the whole text would.
    fn encode_words(&self, text: &str, out: &mut Vec<u32>) -> Result<()> {
        let mut scratch = Scratch::default();
        word_cache::with(self.owner, |cache| {
            word_cache::with_words(self.owner, |words| {
                self.words_from(text, 0.0, (words, cache), &mut scratch, out)
                    .map(|_| ())
            })
        })
    }

    /// The words of `text` (normalized; cut before each `▁`) from the running f32 path score
    /// `score`, with this thread's caches; returns the score at its end.
    fn words_from(
        &self,
        text: &str,
        mut score: f32,
        (mut words, mut cache): (Option<&mut WordTable>, Option<&mut PieceCache>),
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
    ) -> Result<f32> {
        let bytes = text.as_bytes();
        let word_end = |start: usize| {
            let first = utf8_len(bytes[start]).min(bytes.len() - start);
            next_space(bytes, start + first)
        };
        let mut ring = Ahead::new(
            |from| Some((from, word_end(from))),
            bytes,
            words.as_deref(),
            cache.as_deref(),
        );
        loop {
            let (start, end, h) = ring.next(words.as_deref(), cache.as_deref());
            if start == end {
                return Ok(score);
            }
            let caches = (words.as_deref_mut(), cache.as_deref_mut());
            score = self.encode_word(&text[start..end], h, score, caches, scratch, out)?;
        }
    }

    /// [`Unigram::encode`] of raw text that a SentencePiece normalizer normalizes word by
    /// word (see `SpmNormalizer::raw_separators` and [`RawText`]). The ids are those of
    /// `encode(whole(text))`; returns the f32 path score at the text's end, that of the
    /// whole text's lattice (NaN where the text is encoded whole).
    ///
    /// The caches hold the raw words themselves (beside the normalized words they may hold
    /// from other texts: a normalized word starts with `▁` and a raw word never does here),
    /// so a word seen before is neither normalized nor split again.
    pub fn encode_raw(&self, text: &str, raw: &RawText, out: &mut Vec<u32>) -> Result<f32> {
        let RawText {
            separators,
            word,
            whole,
        } = *raw;
        if self.mode != ScoreMode::SentencePiece || !self.word_split || separators == 0 {
            return self.encode(&whole(text)?, out).map(|_| f32::NAN);
        }
        let mut scratch = Scratch::default();
        let mut normalized = String::new();
        word_cache::with(self.owner, |mut cache| {
            word_cache::with_words(self.owner, |mut words| {
                let bytes = text.as_bytes();
                let skip = |mut i: usize| {
                    while i < bytes.len() && is_separator(separators, bytes[i]) {
                        i += 1;
                    }
                    i
                };
                let raw_word = |from: usize| {
                    let start = skip(from);
                    if start == bytes.len() {
                        return None;
                    }
                    Some((start, next_separator(bytes, start + 1, separators)))
                };
                let mut ring = Ahead::new(raw_word, bytes, words.as_deref(), cache.as_deref());
                let mut score = 0f32;
                loop {
                    let (start, end, h) = ring.next(words.as_deref(), cache.as_deref());
                    if start == end {
                        return Ok(score);
                    }
                    let raw = &text[start..end];
                    let caches = (words.as_deref_mut(), cache.as_deref_mut());
                    let r = self.raw_word(
                        raw,
                        h,
                        score,
                        caches,
                        word,
                        &mut normalized,
                        &mut scratch,
                        out,
                    )?;
                    let spaced = match r {
                        Ok(s) => {
                            score = s;
                            continue;
                        }
                        Err(spaced) => spaced,
                    };
                    // Not one word after normalization: `normalized` is `▁` and the word's
                    // normalization. Where that ends with a space it kept (or is empty), the
                    // `▁` of that space is the next word's first.
                    if spaced {
                        normalized.truncate(normalized.len() - SPACE.len());
                    }
                    let caches = (words.as_deref_mut(), cache.as_deref_mut());
                    if normalized.ends_with(SPACE) {
                        // (a `▁` left at its end: at the text's end the normalization drops
                        // every `▁` there, so the rest of the text is normalized as a whole)
                        let rest = whole(&text[start..])?;
                        return self.words_from(&rest, score, caches, &mut scratch, out);
                    }
                    score = self.words_from(&normalized, score, caches, &mut scratch, out)?;
                }
            })
        })
    }

    /// One raw word of [`Unigram::encode_raw`] from the running score `score` (`h`: its
    /// [`word_hash`] where the word table would hold it, else 0): its ids into `out`, the
    /// score at its end; where it is not one word after normalization, nothing written,
    /// `normalized` holding `▁` and its normalization, and whether that ends with a space it
    /// kept (see `SpmNormalizer::normalize_word`).
    #[allow(clippy::too_many_arguments)]
    fn raw_word(
        &self,
        raw: &str,
        h: u64,
        score: f32,
        (words, cache): (Option<&mut WordTable>, Option<&mut PieceCache>),
        normalize: &WordNormalizer,
        normalized: &mut String,
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
    ) -> Result<std::result::Result<f32, bool>> {
        let score = if score.beyond_reset() { 0.0 } else { score };
        let bytes = raw.as_bytes();
        // (a raw word starting with `▁` could be spelled like a normalized word: never a key)
        let keyed = !bytes.starts_with(SPACE.as_bytes());
        let in_table = (WORD_MIN..=WORD_MAX).contains(&bytes.len());
        let mut words = words.filter(|_| keyed && in_table);
        if words.as_deref_mut().is_some_and(|w| !w.in_use()) {
            words = None;
        }
        let mut cache = cache.filter(|_| keyed && !in_table && bytes.len() <= MAX_PIECE);
        if cache.as_deref_mut().is_some_and(|c| !c.in_use()) {
            cache = None;
        }
        let found = match (&mut words, &mut cache) {
            (Some(w), _) => w.get(bytes, h),
            (_, Some(c)) => c.get(bytes),
            _ => None,
        };
        let hit = found.is_some();
        if let Some(entry) = found {
            let (&bound, path) = entry.split_first().expect("entries start with their bound");
            if self.replayable(score, f32::from_bits(bound), raw.len()) {
                try_reserve(out, path.len() / 2, "the ids")?;
                return Ok(Ok(replay(score, path, self.unk_id.unwrap_or(0), out)));
            }
        }
        normalized.clear();
        normalized.push_str(SPACE);
        let (one, spaced) = normalize(raw, normalized)?;
        if !one {
            return Ok(Err(spaced));
        }
        if hit || normalized.len() > WORD_MAX {
            // (a cached path that does not replay from this score; or a word too long for
            // an entry, whose run of unknown characters may not fit one marker)
            return self.word_from(normalized, score, scratch, out).map(Ok);
        }
        try_reserve(out, normalized.len(), "the ids")?;
        let end = self.word_missed(normalized, score, scratch, out)?;
        // A hit is checked with the raw word's length, which may be shorter than its
        // normalization (U+FDFA: 3 bytes, 33 normalized): the check that no score reset falls
        // inside the normalized word (`replayable`) is folded into the entry's bound.
        let cap = SCORE_RESET * 0.999 - normalized.len() as f32 * self.max_step - 1.0;
        if let Some(bound) = scratch.entry.first_mut() {
            *bound = f32::from_bits(*bound).min(cap).to_bits();
        }
        match (words, cache) {
            (Some(w), _) => w.insert(bytes, h, &scratch.entry),
            (_, Some(c)) if scratch.entry.len() <= MAX_PIECE => c.insert(bytes, &scratch.entry),
            _ => {}
        }
        Ok(Ok(end))
    }

    /// One word of [`Unigram::encode_words`] starting from the f32 path score `score`; returns
    /// the score at its end.
    ///
    /// Words of [`WORD_MIN`] to [`WORD_MAX`] bytes are looked up in the [`WordTable`] (`h` is
    /// their [`word_hash`]); the [`PieceCache`] keeps the shorter ones.
    fn encode_word(
        &self,
        word: &str,
        h: u64,
        score: f32,
        (words, cache): (Option<&mut WordTable>, Option<&mut PieceCache>),
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
    ) -> Result<f32> {
        try_reserve(out, word.len(), "the ids")?;
        // sentencepiece's score reset at the word's first character: no node ends past it yet
        let score = if score.beyond_reset() { 0.0 } else { score };
        if let Some(words) = words.filter(|_| (WORD_MIN..=WORD_MAX).contains(&word.len())) {
            if !words.in_use() {
                return self.word_from(word, score, scratch, out);
            }
            if let Some(entry) = words.get(word.as_bytes(), h) {
                let (&bound, path) = entry.split_first().expect("entries start with their bound");
                if self.replayable(score, f32::from_bits(bound), word.len()) {
                    return Ok(replay(score, path, self.unk_id.unwrap_or(0), out));
                }
                return self.word_from(word, score, scratch, out);
            }
            let end = self.word_missed(word, score, scratch, out)?;
            words.insert(word.as_bytes(), h, &scratch.entry);
            return Ok(end);
        }
        let Some(cache) = cache.filter(|_| word.len() <= MAX_PIECE) else {
            return self.word_from(word, score, scratch, out);
        };
        if !cache.in_use() {
            return self.word_from(word, score, scratch, out);
        }
        if let Some(entry) = cache.get(word.as_bytes()) {
            let (&bound, path) = entry.split_first().expect("entries start with their bound");
            if self.replayable(score, f32::from_bits(bound), word.len()) {
                return Ok(replay(score, path, self.unk_id.unwrap_or(0), out));
            }
            return self.word_from(word, score, scratch, out);
        }
        let end = self.word_missed(word, score, scratch, out)?;
        if scratch.entry.len() <= MAX_PIECE {
            cache.insert(word.as_bytes(), &scratch.entry);
        }
        Ok(end)
    }

    /// A word not in the caches, from the running score `score`: its cache entry into
    /// `scratch.entry` (from a lattice started at 0, where its bound is the largest: the
    /// rounding of a lattice started at `score` would eat into the margins), its ids into
    /// `out` (the entry's path where it replays from `score`, else the word's own lattice
    /// from `score`); returns the score at its end.
    fn word_missed(
        &self,
        word: &str,
        score: f32,
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
    ) -> Result<f32> {
        let bound = self.bounded_path(word, 0.0, scratch)?;
        self.fill_entry(bound, scratch);
        if self.replayable(score, bound, word.len()) {
            let path = &scratch.entry[1..];
            return Ok(replay(score, path, self.unk_id.unwrap_or(0), out));
        }
        self.word_from(word, score, scratch, out)
    }

    /// Whether a cached path whose bound is `bound` replays exactly from the running score
    /// `score` over a word of `len` bytes: `score` is within the bound, and no score reset
    /// can happen inside the word (each character start's best score is at most
    /// |score| + chars * the largest |node score|, with room for the f32 rounding of the sums).
    #[inline]
    fn replayable(&self, score: f32, bound: f32, len: usize) -> bool {
        let far = score.abs() + len as f32 * self.max_step;
        score.abs() < bound && far < SCORE_RESET * 0.999
    }

    /// A word's cache entry into `scratch.entry`: the bound, then (id, node score) per node of
    /// the path in `scratch.ids`, so that a hit reads one place.
    fn fill_entry(&self, bound: f32, scratch: &mut Scratch) {
        let entry = &mut scratch.entry;
        entry.clear();
        entry.push(bound.to_bits());
        for &e in &scratch.ids {
            let node_score = match e {
                e if e < UNK_RUN => self.node_scores32[e as usize],
                _ => self.unk_score as f32,
            };
            entry.extend([e, node_score.to_bits()]);
        }
    }

    /// The word's own f32 lattice from `score`: its ids into `out`, the score at its end.
    fn word_from(
        &self,
        word: &str,
        score: f32,
        scratch: &mut Scratch,
        out: &mut Vec<u32>,
    ) -> Result<f32> {
        self.lattice_spm(word, score, &mut scratch.best32)?;
        let end = scratch.best32[word.len()].score;
        self.emit(word, &scratch.best32, out)?;
        Ok(end)
    }

    /// sentencepiece's f32 lattice of `word` from the path score `start` into
    /// `scratch.best32` (no score reset may happen inside the word: the caller checks), its
    /// path into `scratch.ids` (a run of k unknown characters as the marker `u32::MAX - k`;
    /// cleared where the path has an unknown character and the model falls back to bytes),
    /// and the largest |start score| below which the f32 lattice finds the same path: the
    /// bound of the word's cache entry, negative where a decision is a tie or too close.
    ///
    /// Each position keeps the margin of its best candidate over the next one. The path sums
    /// of this lattice are the exact ones (real arithmetic from 0, here P) moved by `start`
    /// (S) and rounded: with at most `steps` additions per sum, every partial sum at most
    /// |S| + M in magnitude (M: the largest |P| here), each f32 candidate is off by at most
    /// E(S) = steps * 2^-24 * (|S| + M) (a little more with the error compounding, under 2^-17
    /// of it for 64 steps). So where every margin m found here exceeds 2 E(S), every decision
    /// is the exact one and the exact margins are at least m - 2 E(S); from another start S'
    /// the f32 lattice decides the same while each exact margin exceeds 2 E(S'):
    /// |S'| + M < margin * 2^23 / steps. The bound keeps a factor 2 to spare for the
    /// compounding and the rounding of the margins: |S'| < margin * 2^22 / steps - M.
    /// (M is taken from this lattice's |candidate - S|, plus E(S).)
    fn bounded_path(&self, word: &str, start: f32, scratch: &mut Scratch) -> Result<f32> {
        let bytes = word.as_bytes();
        let size = bytes.len();
        let best = &mut scratch.best32;
        let second = &mut scratch.second32;
        best.clear();
        second.clear();
        try_reserve(best, size + 1, "the Unigram lattice")?;
        try_reserve(second, size + 1, "the Unigram lattice")?;
        best.resize(
            size + 1,
            Best {
                score: 0.0,
                starts_at: NO_START,
                id: 0,
            },
        );
        second.resize(size + 1, f32::NEG_INFINITY);
        best[0].score = start;
        let node_scores = &self.node_scores32[..];
        let unk_score = self.unk_score as f32;
        // the largest |candidate| (|candidate - start| is at most it plus |start|)
        let mut largest = 0f32;
        let mut steps = 0u32;
        let mut starts_at = 0usize;
        let mut consider = |best: &mut [Best<f32>], second: &mut [f32], at, from, id, c: f32| {
            largest = largest.max(c.abs());
            let target: &mut Best<f32> = &mut best[at];
            if target.starts_at == NO_START {
                *target = Best {
                    score: c,
                    starts_at: from as u32,
                    id,
                };
            } else if c > target.score {
                second[at] = target.score;
                *target = Best {
                    score: c,
                    starts_at: from as u32,
                    id,
                };
            } else if c > second[at] {
                second[at] = c;
            }
        };
        while starts_at < size {
            steps += 1;
            let here = best[starts_at].score;
            let mblen = utf8_len(bytes[starts_at]).min(size - starts_at);
            let mut has_single_node = false;
            self.trie
                .common_prefixes(&bytes[starts_at..], |length, id| {
                    let c = node_scores[id as usize] + here;
                    consider(best, second, starts_at + length, starts_at, id, c);
                    has_single_node |= length == mblen;
                });
            if !has_single_node {
                let c = unk_score + here;
                consider(best, second, starts_at + mblen, starts_at, u32::MAX, c);
            }
            starts_at += mblen;
        }
        let margin = best
            .iter()
            .zip(second.iter())
            .map(|(b, &s)| f64::from(b.score) - f64::from(s))
            .fold(f64::INFINITY, f64::min);
        // the path, a run of k unknown characters as the marker u32::MAX - k (one unknown id;
        // with byte fallback, the bytes, which are not cached)
        scratch.ids.clear();
        let cache_unknowns = self.byte_ids.is_none() && self.unk_id.is_some();
        let mut end = size;
        while end > 0 {
            let node = best[end];
            if node.id == u32::MAX {
                match scratch.ids.last_mut() {
                    _ if !cache_unknowns => {
                        scratch.ids.clear();
                        return Ok(-1.0);
                    }
                    Some(last) if *last > UNK_RUN => *last -= 1,
                    _ => scratch.ids.push(u32::MAX - 1),
                }
            } else {
                scratch.ids.push(node.id);
            }
            end = node.starts_at as usize;
        }
        scratch.ids.reverse();
        let start = f64::from(start.abs());
        let steps = f64::from(steps.max(1));
        // E(S), with M <= largest + |S| + E(S) (so E(S) <= steps * 2^-24 * (2|S| + largest)
        // / (1 - steps * 2^-24), under 1.0001 times the numerator for 64 steps), and 1.001
        // for the compounding
        let err = steps * (2.0 * start + f64::from(largest)) / f64::from(1u32 << 24) * 1.001;
        let exact_margin = margin - 2.0 * err;
        let m = f64::from(largest) + start + err;
        let bound = exact_margin * f64::from(1u32 << 22) / steps - m;
        // never above the true bound after rounding to f32
        Ok(if bound.is_nan() || exact_margin <= 0.0 {
            -1.0
        } else {
            (bound * 0.999) as f32
        })
    }

    /// The ids of the best path in `best` (a lattice of `text`) into `out`.
    fn emit<S: Copy>(&self, text: &str, best: &[Best<S>], out: &mut Vec<u32>) -> Result<()> {
        let mut n = 0;
        let mut end = text.len();
        while end > 0 {
            end = best[end].starts_at as usize;
            n += 1;
        }
        let mut spans = try_vec(n, "the Unigram segmentation")?;
        let mut end = text.len();
        while end > 0 {
            let node = best[end];
            spans.push((node.starts_at as usize, end, node.id));
            end = node.starts_at as usize;
        }
        // every id covers at least one byte
        try_reserve(out, text.len(), "the ids")?;
        let mut prev_unk = false;
        for &(start, end, id) in spans.iter().rev() {
            if id != u32::MAX {
                out.push(id);
                prev_unk = false;
                continue;
            }
            if let Some(bytes) = &self.byte_ids {
                let span = &text.as_bytes()[start..end];
                match self.mode {
                    // sentencepiece: PieceToId of a missing byte piece is the unknown id
                    ScoreMode::SentencePiece => {
                        let unk = self.unk_id.unwrap_or(0);
                        out.extend(span.iter().map(|&b| match bytes[b as usize] {
                            u32::MAX => unk,
                            id => id,
                        }));
                        prev_unk = false;
                        continue;
                    }
                    // HF: all the bytes or the unknown token
                    ScoreMode::HuggingFace
                        if span.iter().all(|&b| bytes[b as usize] != u32::MAX) =>
                    {
                        out.extend(span.iter().map(|&b| bytes[b as usize]));
                        prev_unk = false;
                        continue;
                    }
                    ScoreMode::HuggingFace => {}
                }
            }
            let Some(unk) = self.unk_id else {
                return Err(Error::InvalidArgument(format!(
                    "the text has a character no piece covers ({:?}) and the model has no unk_id",
                    &text[start..end]
                )));
            };
            if !prev_unk {
                out.push(unk);
            }
            prev_unk = true;
        }
        Ok(())
    }
}

/// The best path in `best` (a lattice of `text`) as (start, end, id) byte spans.
fn spans<S: Copy>(text: &str, best: &[Best<S>]) -> Result<Vec<(usize, usize, u32)>> {
    const WHAT: &str = "the segmentation spans";
    let mut out = Vec::new();
    let mut end = text.len();
    while end > 0 {
        let node = best[end];
        let start = node.starts_at as usize;
        crate::mem::try_push(&mut out, (start, end, node.id), WHAT)?;
        end = start;
    }
    out.reverse();
    Ok(out)
}

/// Length of the UTF-8 sequence a lead byte starts (1 for a stray continuation byte).
#[inline]
pub(crate) fn utf8_len(b: u8) -> usize {
    match b {
        0xf0..=0xff => 4,
        0xe0..=0xef => 3,
        0xc0..=0xdf => 2,
        _ => 1,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn hf(v: &[(&str, f64)], unk: Option<u32>, bf: bool) -> Unigram {
        Unigram::from_vocab(
            v.iter().map(|(p, s)| (p.to_string(), *s)).collect(),
            unk,
            bf,
        )
        .unwrap()
    }

    fn ids(m: &Unigram, t: &str) -> Vec<u32> {
        let mut out = vec![];
        m.encode(t, &mut out).unwrap();
        out
    }

    #[test]
    fn viterbi_picks_the_best_total() {
        let m = hf(
            &[
                ("<unk>", 0.0),
                ("a", -1.0),
                ("b", -1.0),
                ("ab", -1.5),
                ("abc", -4.0),
                ("c", -1.0),
            ],
            Some(0),
            false,
        );
        assert_eq!(ids(&m, "ab"), vec![3]);
        // ab + c = -2.5 beats abc = -4
        assert_eq!(ids(&m, "abc"), vec![3, 5]);
        assert_eq!(ids(&m, ""), Vec::<u32>::new());
    }

    #[test]
    fn ties_keep_the_first_candidate() {
        // "ab" (-2) ties with a + b (-1 + -1): "ab" reaches position 2 first (from start 0),
        // and the later equal candidate does not replace it.
        let m = hf(
            &[("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -2.0)],
            Some(0),
            false,
        );
        assert_eq!(ids(&m, "ab"), vec![3]);
    }

    #[test]
    fn unknowns_fuse_or_fall_back_to_bytes() {
        let m = hf(&[("<unk>", 0.0), ("a", -1.0)], Some(0), false);
        assert_eq!(ids(&m, "xéa☃☃a"), vec![0, 1, 0, 1]);
        let mut v: Vec<(String, f64)> = vec![("<unk>".into(), 0.0), ("a".into(), -1.0)];
        for b in 0..=255u8 {
            v.push((byte_piece(b), 0.0));
        }
        let m = Unigram::from_vocab(v, Some(0), true).unwrap();
        assert_eq!(ids(&m, "aé"), vec![1, 2 + 0xc3, 2 + 0xa9]);
        // no unk id: an error, never a panic
        let m = hf(&[("a", -1.0)], None, false);
        assert!(m.encode("b", &mut vec![]).is_err());
        // bad configurations
        assert!(Unigram::from_vocab(vec![("a".into(), 0.0)], Some(3), false).is_err());
        assert!(
            Unigram::from_vocab(vec![("a".into(), 0.0), ("a".into(), 0.0)], None, false).is_err()
        );
    }

    /// The T5 v1.1 `spiece.model` of the integration tests.
    pub(crate) fn t5_model() -> ModelProto {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/t5_spm.model.xz");
        let raw = std::fs::read(path).unwrap();
        let mut buf = Vec::new();
        lzma_rs::xz_decompress(&mut &raw[..], &mut buf).unwrap();
        ModelProto::parse(&buf).unwrap()
    }

    /// Random normalized-looking text: words from a small pool (so the word cache hits)
    /// and fresh ones, `▁` runs, unknown characters, long documents (large running scores).
    pub(crate) fn random_text(seed: u64, len: usize, alphabet: &[&str]) -> String {
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut out = String::new();
        while out.len() < len {
            let n = 1 + next() % 9;
            for _ in 0..n {
                out.push_str(alphabet[(next() % alphabet.len() as u64) as usize]);
            }
        }
        out
    }

    #[test]
    fn word_by_word_matches_the_whole_text_lattice() {
        let m = Unigram::from_spm(&t5_model()).unwrap();
        assert!(m.word_split);
        let alphabet = [
            "\u{2581}",
            "\u{2581}",
            "\u{2581}the",
            "\u{2581}of",
            "a",
            "e",
            "s",
            "t",
            "-",
            "+",
            "++",
            "'",
            ".",
            "é",
            "ß",
            "中",
            "\u{1F600}",
            "\u{E000}",
            "0",
            "7",
            "x",
            "Q",
            "ing",
        ];
        for seed in 1..40u64 {
            let len = [10, 200, 3000, 20000][seed as usize % 4];
            let text = random_text(seed, len, &alphabet);
            cached_equals_uncached(&m, &text, &format!("seed {seed}"));
        }
    }

    /// Pieces of raw text for the raw-word tests: whitespace of every kind, spaces and `▁`
    /// inside words, characters NFKC expands, composes or removes, unknown characters, words
    /// over 64 bytes.
    pub(crate) const RAW_TEXT: &[&str] = &[
        " ",
        " ",
        " ",
        "  ",
        "\n",
        "\r\n",
        "\r",
        "\t",
        "\u{b}",
        "\u{c}",
        "\u{a0}",
        "\u{3000}",
        "\u{200b}",
        "\u{200c}",
        "\u{2581}",
        "\u{feff}",
        "the",
        "of",
        "a",
        "e",
        "s",
        "-",
        "--",
        "+",
        "++",
        "<",
        ">",
        "é",
        "e\u{301}",
        "\u{301}",
        "\u{a8}",
        "\u{2474}",
        "ﬁ",
        "①",
        "Ａ",
        "中",
        "\u{e47}",
        "\u{1F600}",
        "\u{E000}",
        "\u{F1690}",
        "0",
        "1",
        "7",
        "x",
        "ing",
        "\u{E000}\u{E000}\u{E000}\u{E000}\u{E000}\u{E000}\u{E000}\u{E000}",
    ];

    #[test]
    fn raw_words_match_the_normalized_text() {
        use crate::normalizers::SpmNormalizer;
        let m = t5_model();
        let u = Unigram::from_spm(&m).unwrap();
        let n = SpmNormalizer::new(&m.normalizer_spec, &[], false).unwrap();
        assert_ne!(n.raw_separators(), 0);
        // words repeat (cache hits, replayed from other running scores)
        let alphabet = RAW_TEXT;
        // a word of 21 bytes whose normalization is 59 (U+FDF2 is 4 Arabic letters in NFKC,
        // unknown pieces here), replayed from running scores close to sentencepiece's reset:
        // one started just below it may reach it inside the normalized word
        let allah = "\u{fdf2}".repeat(7) + " ";
        let long = (0..300)
            .map(|pad| "x ".repeat(pad) + &allah.repeat(170))
            .collect::<Vec<_>>();
        let texts = (1..60u64)
            .map(|seed| random_text(seed, [10, 300, 3000, 30000][seed as usize % 4], alphabet))
            .chain(long);
        for (seed, text) in texts.enumerate() {
            let normalized = n.normalize(&text).unwrap();
            let mut want = vec![];
            u.encode_uncached(&normalized, &mut want).unwrap();
            let mut best = vec![];
            u.lattice_spm(&normalized, 0.0, &mut best).unwrap();
            let lattice_end = best[normalized.len()].score;
            for _ in 0..2 {
                let mut got = vec![];
                let raw = RawText {
                    separators: n.raw_separators(),
                    word: &|w, out| n.normalize_word(w, out),
                    whole: &|t| n.normalize(t),
                };
                let end = u.encode_raw(&text, &raw, &mut got).unwrap();
                assert_eq!(got, want, "seed {seed}");
                // the running score too (what later words' rounding depends on)
                assert_eq!(end.to_bits(), lattice_end.to_bits(), "seed {seed}");
            }
        }
    }

    #[test]
    fn long_words_and_many_nodes_match_the_whole_text_lattice() {
        // words past the word table's WORD_MAX and MAX_PIECE bytes (scripts without spaces),
        // and words whose paths have more nodes than a table slot holds (kept in the piece
        // cache instead)
        let m = Unigram::from_spm(&t5_model()).unwrap();
        let alphabet = [
            "\u{2581}", "a", "-", "+", "=", "#", "中", "文", "é", "ing", "\u{E000}", "ab", "x",
            "7", ".", "(", ")", "_",
        ];
        for seed in 1..30u64 {
            let len = [50, 400, 5000][seed as usize % 3];
            let text = random_text(seed, len, &alphabet);
            cached_equals_uncached(&m, &text, &format!("seed {seed}"));
        }
        let many = format!("\u{2581}{}\u{2581}{}", "-+".repeat(15), "#=".repeat(40));
        cached_equals_uncached(&m, &many, "many nodes");
    }

    /// The encode of `text` through the word cache, twice (misses, then hits), equals the
    /// lattice over the whole text.
    fn cached_equals_uncached(m: &Unigram, text: &str, what: &str) {
        for _ in 0..2 {
            let mut fast = vec![];
            m.encode(text, &mut fast).unwrap();
            let mut plain = vec![];
            m.encode_uncached(text, &mut plain).unwrap();
            assert_eq!(fast, plain, "{what}");
        }
    }

    /// sentencepiece 0.2.3's `EncodeOptimized`, written plainly from its source: a piece map
    /// instead of a trie, f32 scores, the score reset over `starts_at..=max_frontier`; unknown
    /// runs fused (the model has no byte fallback).
    fn reference_encode(m: &ModelProto, text: &str) -> Vec<u32> {
        let mut pieces = std::collections::HashMap::new();
        let mut min_score = f32::MAX;
        for (i, p) in m.pieces.iter().enumerate() {
            let score = match p.kind {
                PieceType::Normal => {
                    min_score = min_score.min(p.score);
                    p.score
                }
                PieceType::UserDefined => (0.1 * (p.piece.len() as f64 - 1.0)) as f32,
                _ => continue,
            };
            pieces.insert(p.piece.as_bytes().to_vec(), (i as u32, score));
        }
        let longest = pieces.keys().map(Vec::len).max().unwrap_or(1);
        let unk_score = min_score - 10.0;
        let unk = m.unk_id();
        let b = text.as_bytes();
        let size = b.len();
        // (score, starts_at or -1, id)
        let mut best = vec![(0f32, -1i64, 0u32); size + 1];
        let mut max_frontier = 0usize;
        let mut starts_at = 0usize;
        while starts_at < size {
            let mut till = best[starts_at].0;
            if !(-100_000.0..=100_000.0).contains(&till) {
                let offset = till;
                // (i == starts_at first; max_frontier >= starts_at once a node ends there)
                for (i, node) in best[starts_at..=max_frontier].iter_mut().enumerate() {
                    if i == 0 || node.1 != -1 {
                        node.0 -= offset;
                    }
                }
                till = 0.0;
            }
            let mblen = utf8_len(b[starts_at]).min(size - starts_at);
            let mut single = false;
            for end in starts_at + 1..=size.min(starts_at + longest) {
                let Some(&(id, score)) = pieces.get(&b[starts_at..end]) else {
                    continue;
                };
                max_frontier = max_frontier.max(end);
                let candidate = score + till;
                if best[end].1 == -1 || candidate > best[end].0 {
                    best[end] = (candidate, starts_at as i64, id);
                }
                single |= end - starts_at == mblen;
            }
            if !single {
                let end = starts_at + mblen;
                max_frontier = max_frontier.max(end);
                let candidate = unk_score + till;
                if best[end].1 == -1 || candidate > best[end].0 {
                    best[end] = (candidate, starts_at as i64, unk);
                }
            }
            starts_at += mblen;
        }
        let mut ids = vec![];
        let mut end = size;
        while end > 0 {
            ids.push(best[end].2);
            end = best[end].1 as usize;
        }
        ids.reverse();
        ids.dedup_by(|a, b| *a == unk && *b == unk);
        ids
    }

    #[test]
    fn score_resets_match_sentencepiece_far_into_long_texts() {
        // words with exact ties (`▁----`: `- ---` or `--- -`) all along texts whose running
        // score crosses sentencepiece's reset threshold several times; the word cache, the
        // whole-text lattice and the plain reference agree, before and after the cache fills
        let proto = t5_model();
        let m = Unigram::from_spm(&proto).unwrap();
        assert!(m.word_split);
        let alphabet = [
            "\u{2581}----",
            "\u{2581}++++",
            "\u{2581}+++",
            "\u{2581}====",
            "\u{2581}....",
            "\u{2581}hahaha",
            "\u{2581}xxxx",
            "\u{2581}the",
            "\u{2581}日本語",
            "\u{2581}\u{0378}x",
            "\u{2581}",
            "-",
            "+",
            "中",
        ];
        for seed in 1..4u64 {
            let text = random_text(seed, 150_000 + 40_000 * seed as usize, &alphabet);
            let want = reference_encode(&proto, &text);
            let mut plain = vec![];
            m.encode_uncached(&text, &mut plain).unwrap();
            assert_eq!(plain, want, "whole text, seed {seed}");
            // the scores of the path: the text crosses the threshold more than twice
            let total: f64 = want
                .iter()
                .map(|&id| m.node_scores[id as usize].min(0.0))
                .sum();
            assert!(total < -250_000.0, "{total}");
            for pass in 0..2 {
                let mut fast = vec![];
                m.encode(&text, &mut fast).unwrap();
                assert_eq!(fast, want, "words, seed {seed}, pass {pass}");
            }
        }
    }

    #[test]
    fn the_reference_lattice_agrees_on_short_texts() {
        // the plain reference itself against the model on texts with no reset
        let proto = t5_model();
        let m = Unigram::from_spm(&proto).unwrap();
        for seed in 1..20u64 {
            let text = random_text(seed, 500, &["\u{2581}", "a", "-", "+", "中", "\u{E000}"]);
            assert_eq!(
                ids(&m, &text),
                reference_encode(&proto, &text),
                "seed {seed}"
            );
        }
    }

    #[test]
    fn next_separator_finds_each_separator() {
        let alphabet = [
            "a", " ", "\n", "\t", "\r", "\u{1}", "\u{1f}", "!", "é", "中", "\u{7f}",
        ];
        for seps in [
            1u128 << b' ',
            (1 << b' ') | (1 << b'\n') | (1 << b'\t'),
            1 << b'!',
        ] {
            for seed in 1..300u64 {
                let text = random_text(seed, 40, &alphabet);
                let bytes = text.as_bytes();
                for from in 0..=bytes.len() {
                    let want = (from..bytes.len())
                        .find(|&i| bytes[i] < 128 && seps >> bytes[i] & 1 == 1)
                        .unwrap_or(bytes.len());
                    assert_eq!(next_separator(bytes, from, seps), want, "{text:?} {from}");
                }
            }
        }
    }

    #[test]
    fn next_space_finds_each_space_symbol() {
        let t = "a\u{2581}b\u{2582}\u{2581}\u{2581}é";
        let b = t.as_bytes();
        assert_eq!(next_space(b, 0), 1);
        assert_eq!(next_space(b, 2), 8);
        assert_eq!(next_space(b, 9), 11);
        assert_eq!(next_space(b, 12), b.len());
        assert_eq!(next_space(b, b.len()), b.len());
        // against a plain search, at every start, on texts of E2 bytes in and out of `▁`
        let plain = |b: &[u8], from: usize| {
            (from..b.len())
                .find(|&i| b[i..].starts_with(SPACE.as_bytes()))
                .unwrap_or(b.len())
        };
        let alphabet = [
            "\u{2581}", "a", "\u{2580}", "\u{2582}", "\u{2000}", "é", "中", "x y",
        ];
        for seed in 0..200u64 {
            let text = random_text(seed, seed as usize % 40, &alphabet);
            let b = text.as_bytes();
            for from in 0..=b.len() + 1 {
                assert_eq!(next_space(b, from), plain(b, from), "{text:?} from {from}");
            }
        }
    }

    #[test]
    fn long_inputs_are_linear() {
        let m = hf(
            &[("<unk>", 0.0), ("a", -1.0), ("aa", -1.5), ("aaa", -2.2)],
            Some(0),
            false,
        );
        let text = "a".repeat(300_000);
        let out = ids(&m, &text);
        assert_eq!(out.len(), 100_000);
    }
}
