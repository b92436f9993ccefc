//! Word-level BPE with an end-of-word marker: the `</w>` model (seed 004, "Tokeniser").
//!
//! Unlike the byte-level model of [`crate::encode`], this one works on *words*: a split pattern
//! cuts text into words (whitespace is dropped), each word is lower-cased, and a word is spelled
//! as its characters followed by an end-of-word symbol, written `</w>`. Training learns merges
//! over that character alphabet ([`train_words`], the same merge loop as byte-level training);
//! encoding is *greedy longest match* ([`WordEncoder`]): from the start of the word, take the
//! longest vocabulary token that matches, then go on after it.
//!
//! Internally a token is the UTF-8 of its characters, with the byte [`END_OF_WORD`] (`0xFF`,
//! which never occurs in UTF-8) standing for a final `</w>`. Longest match then runs on bytes:
//! every token is whole characters, so a byte-level match ends on a character boundary and is
//! the character-level longest match.

use std::borrow::Cow;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::pretokenize::Pretokenizer;
use crate::train::{train_symbol_merges, MergeLimits, MergeProgress, Pair};
use crate::{Error, Result};

/// The byte that stands for `</w>` at the end of a token's bytes.
pub const END_OF_WORD: u8 = 0xFF;

/// `word` lower-cased (Rust's full Unicode lower-case mapping, `str::to_lowercase`), borrowed
/// when it has no upper-case letter; the copy is allocated fallibly (a word is as long as the
/// split pattern lets it be).
pub fn lowercase(word: &str) -> Result<Cow<'_, str>> {
    const WHAT: &str = "a lower-cased word";
    if word.is_ascii() {
        return Ok(if word.bytes().any(|b| b.is_ascii_uppercase()) {
            let mut s = crate::mem::try_string(word, WHAT)?;
            s.make_ascii_lowercase();
            Cow::Owned(s)
        } else {
            Cow::Borrowed(word)
        });
    }
    let lower = if word.contains('\u{3a3}') {
        // a capital sigma lower-cases by its context (final or not), which only
        // `str::to_lowercase` knows: its room (at most 3 bytes per 2) is tried first, so that
        // under a memory limit the refusal is an error rather than an abort
        drop(crate::mem::try_vec::<u8>(word.len() / 2 * 3 + 4, WHAT)?);
        word.to_lowercase()
    } else {
        // (the same as `str::to_lowercase` without a capital sigma)
        crate::mem::TextBuf::collect(word.chars().flat_map(char::to_lowercase), word.len(), WHAT)?
    };
    Ok(if lower == word {
        Cow::Borrowed(word)
    } else {
        Cow::Owned(lower)
    })
}

/// `word`, lower-cased when `lower` is set.
#[inline]
fn fold_case(word: &str, lower: bool) -> Result<Cow<'_, str>> {
    if lower {
        lowercase(word)
    } else {
        Ok(Cow::Borrowed(word))
    }
}

/// Fold counted words to lower case (`lowercase = true`) and add up the counts of words that
/// become equal. The result is sorted by word.
pub fn fold_counts(
    chunks: &[(Box<[u8]>, u64)],
    lowercase_words: bool,
) -> Result<Vec<(String, u64)>> {
    fold_counts_of(chunks.iter().map(|(c, n)| (&c[..], *n)), lowercase_words)
}

/// [`fold_counts`] of counted words given one by one. What grows with the words (the table,
/// each folded word, the result) is allocated fallibly: [`Error::OutOfMemory`] when refused.
pub fn fold_counts_of<'c>(
    chunks: impl IntoIterator<Item = (&'c [u8], u64)>,
    lowercase_words: bool,
) -> Result<Vec<(String, u64)>> {
    const WHAT: &str = "the folded word counts";
    let mut out: FxHashMap<String, u64> = FxHashMap::default();
    for (c, n) in chunks {
        let w = std::str::from_utf8(c)
            .map_err(|_| Error::InvalidArgument("a counted word is not valid UTF-8".into()))?;
        let key = fold_case(w, lowercase_words)?;
        let slot = match out.get_mut(&*key) {
            Some(slot) => slot,
            None => {
                out.try_reserve(1)
                    .map_err(|_| crate::mem::oom(WHAT, out.len() + 1, 40))?;
                let mut k = String::new();
                k.try_reserve_exact(key.len())
                    .map_err(|_| crate::mem::oom(WHAT, key.len(), 1))?;
                k.push_str(&key);
                out.entry(k).or_insert(0)
            }
        };
        *slot = slot.checked_add(n).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "the count of the word {w:?} adds up past 2**64-1; pass smaller counts (scale them down)"
            ))
        })?;
    }
    let mut v = crate::mem::try_vec(out.len(), WHAT)?;
    v.extend(out);
    v.sort_unstable();
    Ok(v)
}

/// What [`train_words`] learned: the character alphabet (sorted; symbol `i` is `alphabet[i]`,
/// symbol `alphabet.len()` is `</w>`) and the merges, in order, each with the symbol it made:
/// the next new id, or the id of an earlier symbol with the same text (two merges can spell
/// one string, `in + g</w>` and `i + ng</w>`; as in the seed, whose tokens are strings, they
/// are one token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WordMerges {
    pub alphabet: Vec<char>,
    pub merges: Vec<(Pair, u32)>,
}

/// Learn `num_merges` merges from counted words, each spelled as its characters and `</w>`.
/// Ties between equally frequent pairs go to the pair of smaller symbol ids (characters in code
/// point order, then `</w>`, then merged symbols in the order they were first made).
pub fn train_words(
    words: &[(String, u64)],
    num_merges: usize,
    min_frequency: u64,
    progress: &mut dyn FnMut(MergeProgress) -> bool,
) -> Result<WordMerges> {
    // (the characters through a set: the alphabet is small, the words' characters are not)
    let chars: rustc_hash::FxHashSet<char> = words.iter().flat_map(|(w, _)| w.chars()).collect();
    let mut alphabet: Vec<char> = chars.into_iter().collect();
    alphabet.sort_unstable();
    let index: FxHashMap<char, u32> = alphabet
        .iter()
        .enumerate()
        .map(|(i, &c)| (c, i as u32))
        .collect();
    let end = alphabet.len() as u32;
    // (one vector per word: their room, which grows with the words, is allocated fallibly)
    const WHAT: &str = "the spelled training words";
    let mut spelled: Vec<(Vec<u32>, u64)> = crate::mem::try_vec(words.len(), WHAT)?;
    for (w, n) in words.iter().filter(|(w, n)| !w.is_empty() && *n > 0) {
        let mut s = crate::mem::try_vec(w.chars().count() + 1, WHAT)?;
        s.extend(w.chars().map(|c| index[&c]));
        s.push(end);
        spelled.push((s, *n));
    }
    let limits = MergeLimits {
        min_frequency,
        max_token_length: None,
    };
    // the text of each symbol (`</w>` as the marker byte), and the symbol of each text
    let mut text: Vec<Vec<u8>> = alphabet
        .iter()
        .map(|c| c.to_string().into_bytes())
        .collect();
    text.push(vec![END_OF_WORD]);
    let mut by_text: FxHashMap<Vec<u8>, u32> = text
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), i as u32))
        .collect();
    // (the alphabet is bounded by Unicode's characters; what grows with the merges is
    // allocated fallibly)
    let mut id_for = |a: u32, b: u32, fresh: u32| -> Result<u32> {
        let (x, y) = (&text[a as usize], &text[b as usize]);
        let mut t = crate::mem::try_vec(x.len() + y.len(), WHAT)?;
        t.extend_from_slice(x);
        t.extend_from_slice(y);
        if let Some(&id) = by_text.get(&t) {
            return Ok(id);
        }
        debug_assert_eq!(fresh as usize, text.len());
        crate::mem::try_reserve_map(&mut by_text, 1, WHAT)?;
        crate::mem::try_reserve(&mut text, 1, WHAT)?;
        by_text.insert(crate::mem::try_bytes(&t, WHAT)?, fresh);
        text.push(t);
        Ok(fresh)
    };
    let merges = train_symbol_merges(
        &spelled,
        vec![1; alphabet.len() + 1],
        num_merges,
        limits,
        &mut id_for,
        progress,
    )?;
    Ok(WordMerges { alphabet, merges })
}

/// A byte trie of the vocabulary's tokens: child `(node, byte)` in one hash map, the token id
/// ending at each node (or `NONE`).
struct Trie {
    children: FxHashMap<u64, u32>,
    token: Vec<u32>,
}

const NONE: u32 = u32::MAX;

impl Trie {
    fn new() -> Self {
        Trie {
            children: FxHashMap::default(),
            token: vec![NONE],
        }
    }

    fn insert(&mut self, bytes: &[u8], id: u32) -> bool {
        let mut node = 0u32;
        for &b in bytes {
            let key = ((node as u64) << 8) | b as u64;
            node = match self.children.get(&key) {
                Some(&n) => n,
                None => {
                    let n = self.token.len() as u32;
                    self.token.push(NONE);
                    self.children.insert(key, n);
                    n
                }
            };
        }
        if self.token[node as usize] != NONE {
            return false;
        }
        self.token[node as usize] = id;
        true
    }

    /// The longest token that `bytes` starts with: (its length, its id).
    #[inline]
    fn longest_prefix(&self, bytes: &[u8]) -> Option<(usize, u32)> {
        let mut node = 0u32;
        let mut best = None;
        for (j, &b) in bytes.iter().enumerate() {
            match self.children.get(&(((node as u64) << 8) | b as u64)) {
                Some(&n) => node = n,
                None => break,
            }
            let t = self.token[node as usize];
            if t != NONE {
                best = Some((j + 1, t));
            }
        }
        best
    }
}

/// Greedy longest-match encoder of the `</w>` model: words from a split pattern, lower-cased if
/// asked, each matched against the vocabulary from its start. A character that no token starts
/// with becomes the `unk` id.
pub struct WordEncoder {
    splitter: Pretokenizer,
    lowercase: bool,
    trie: Trie,
    unk: u32,
}

impl WordEncoder {
    /// `tokens`: (bytes, id) with [`END_OF_WORD`] for a final `</w>`; every token must be
    /// whole UTF-8 characters, optionally followed by that one marker byte.
    pub fn new<B: AsRef<[u8]>>(
        pattern: &str,
        lowercase: bool,
        tokens: &[(B, u32)],
        unk: u32,
    ) -> Result<Self> {
        let splitter = Pretokenizer::new(pattern)?;
        let mut trie = Trie::new();
        for (bytes, id) in tokens {
            let bytes = bytes.as_ref();
            let body = match bytes.split_last() {
                Some((&END_OF_WORD, body)) => body,
                _ => bytes,
            };
            if bytes.is_empty() || std::str::from_utf8(body).is_err() {
                return Err(Error::InvalidVocab(format!(
                    "token {id} ({bytes:?}) is not whole UTF-8 characters with an optional end-of-word marker"
                )));
            }
            if !trie.insert(bytes, *id) {
                return Err(Error::InvalidVocab(format!(
                    "token {bytes:?} is in the vocabulary twice"
                )));
            }
        }
        Ok(WordEncoder {
            splitter,
            lowercase,
            trie,
            unk,
        })
    }

    /// Append the ids of one word (already split, not yet lower-cased) to `out`.
    pub fn encode_word(&self, word: &str, out: &mut Vec<u32>) -> Result<()> {
        self.match_word(word, &mut Vec::new(), out)
    }

    /// Lower-case `word` if asked, spell it with its end marker in `spelled`, and match it.
    #[inline]
    fn match_word(&self, word: &str, spelled: &mut Vec<u8>, out: &mut Vec<u32>) -> Result<()> {
        let word = fold_case(word, self.lowercase)?;
        spelled.clear();
        crate::mem::try_reserve(spelled, word.len() + 1, WHAT)?;
        spelled.extend_from_slice(word.as_bytes());
        spelled.push(END_OF_WORD);
        // (each id takes at least one byte: room for that many ids, so no push allocates)
        crate::mem::try_reserve(out, spelled.len(), WHAT)?;
        self.match_spelled(spelled, out);
        Ok(())
    }

    fn match_spelled(&self, b: &[u8], out: &mut Vec<u32>) {
        let mut i = 0;
        while i < b.len() {
            match self.trie.longest_prefix(&b[i..]) {
                Some((n, id)) => {
                    out.push(id);
                    i += n;
                }
                None => {
                    out.push(self.unk);
                    // skip one character (or the marker byte)
                    i += utf8_len(b[i]);
                }
            }
        }
    }

    /// The ids of a text: its words, each matched on its own. Repeated words in one call are
    /// matched once (their ids copied from the first time). The table borrows the words and
    /// points into `out`: on one text that is 10-20% faster than the owned table of
    /// [`Self::encode_batch`] (measured on 2 and 25 MB of English), which must outlive a text.
    ///
    /// The ids and the table grow fallibly: a refused allocation is [`Error::OutOfMemory`].
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        let mut out = crate::mem::try_vec(text.len() / 3 + 1, WHAT)?;
        let mut seen: FxHashMap<&str, (u32, u32)> = FxHashMap::default();
        let mut spelled = Vec::new();
        let mut failed = Ok(());
        self.splitter.for_each_piece(text, |w| {
            if failed.is_err() {
                return;
            }
            if let Err(e) = room_for_word(&mut out, w) {
                failed = Err(e);
                return;
            }
            if let Some(&(s, n)) = seen.get(w) {
                out.extend_from_within(s as usize..(s + n) as usize);
                return;
            }
            let start = out.len();
            if let Err(e) = self.match_word(w, &mut spelled, &mut out) {
                failed = Err(e);
                return;
            }
            if w.len() <= 64 {
                if seen.try_reserve(1).is_err() {
                    failed = Err(crate::mem::oom(WHAT, seen.len() + 1, 32));
                    return;
                }
                seen.insert(w, (start as u32, (out.len() - start) as u32));
            }
        })?;
        failed.map(|_| out)
    }

    /// [`Self::encode`] of each text, in parallel on the current rayon pool. Each worker keeps
    /// the ids of the words it has matched (up to [`BATCH_CACHE_WORDS`] of them) from text to
    /// text, so short documents do not match their common words again and again.
    /// The result's room (one vector per text) is allocated fallibly, as are the ids.
    pub fn encode_batch<S: AsRef<str> + Sync>(&self, texts: &[S]) -> Result<Vec<Vec<u32>>> {
        let mut all = crate::mem::try_vec(texts.len(), "the ids of a batch")?;
        // (within the room just reserved: no allocation)
        all.resize_with(texts.len(), Vec::new);
        all.par_iter_mut()
            .zip(texts.par_iter())
            .map_init(WordCache::default, |cache, (ids, t)| {
                *ids = self.encode_cached(t.as_ref(), cache)?;
                Ok(())
            })
            .collect::<Result<()>>()?;
        Ok(all)
    }

    fn encode_cached(&self, text: &str, cache: &mut WordCache) -> Result<Vec<u32>> {
        let mut out = crate::mem::try_vec(text.len() / 3 + 1, WHAT)?;
        let mut spelled = Vec::new();
        let mut failed = Ok(());
        self.splitter.for_each_piece(text, |w| {
            if failed.is_err() {
                return;
            }
            if let Err(e) = room_for_word(&mut out, w) {
                failed = Err(e);
                return;
            }
            if let Some(ids) = cache.map.get(w) {
                out.extend_from_slice(ids);
                return;
            }
            let start = out.len();
            if let Err(e) = self.match_word(w, &mut spelled, &mut out) {
                failed = Err(e);
                return;
            }
            if w.len() <= 64 && cache.map.len() < BATCH_CACHE_WORDS {
                cache.map.insert(w.into(), out[start..].into());
            }
        })?;
        failed.map(|_| out)
    }

    /// The words of a text as the split pattern (and lower-casing) gives them.
    pub fn words<'t>(&self, text: &'t str) -> Result<Vec<Cow<'t, str>>> {
        let mut v = Vec::new();
        let mut failed = Ok(());
        self.splitter.for_each_piece(text, |w| {
            if failed.is_ok() {
                failed = fold_case(w, self.lowercase)
                    .and_then(|w| crate::mem::try_push(&mut v, w, "the words"));
            }
        })?;
        failed.map(|_| v)
    }

    /// How often each id occurs when every counted word is encoded (`n_vocab` slots):
    /// the final token statistics of a corpus, from its word counts. An error if a count would
    /// pass 2**64 - 1.
    pub fn token_counts(&self, words: &[(String, u64)], n_vocab: usize) -> Result<Vec<u64>> {
        const WHAT: &str = "the token counts";
        // (counts, ids buffer, overflowed?); the counts of each worker (`n_vocab` slots, an
        // argument) are allocated fallibly
        type Acc = (Result<Vec<u64>>, Vec<u32>, bool);
        let (counts, overflowed) = words
            .par_iter()
            .fold(
                || -> Acc {
                    (
                        crate::mem::try_filled(n_vocab, 0u64, WHAT),
                        Vec::new(),
                        false,
                    )
                },
                |(acc, mut ids, mut over), (w, n)| {
                    let Ok(mut acc) = acc else {
                        return (acc, ids, over);
                    };
                    ids.clear();
                    if let Err(e) = self.encode_word(w, &mut ids) {
                        return (Err(e), ids, over);
                    }
                    for &id in &ids {
                        if let Some(slot) = acc.get_mut(id as usize) {
                            let (sum, o) = slot.overflowing_add(*n);
                            *slot = sum;
                            over |= o;
                        }
                    }
                    (Ok(acc), ids, over)
                },
            )
            .map(|(acc, _, over)| (acc, over))
            .reduce(
                || (crate::mem::try_filled(n_vocab, 0u64, WHAT), false),
                |(a, over), (b, over_b)| {
                    let (mut a, b) = match (a, b) {
                        (Ok(a), Ok(b)) => (a, b),
                        (Err(e), _) | (_, Err(e)) => return (Err(e), false),
                    };
                    let mut over = over || over_b;
                    for (x, y) in a.iter_mut().zip(b) {
                        let (sum, o) = x.overflowing_add(y);
                        *x = sum;
                        over |= o;
                    }
                    (Ok(a), over)
                },
            );
        let counts = counts?;
        if overflowed {
            return Err(Error::InvalidArgument(
                "a token's count adds up past 2**64-1; pass smaller word counts (scale them down)"
                    .into(),
            ));
        }
        Ok(counts)
    }
}

/// How many words a worker of [`WordEncoder::encode_batch`] remembers.
pub const BATCH_CACHE_WORDS: usize = 1 << 16;

/// Word -> ids, kept by one worker of a batch.
#[derive(Default)]
struct WordCache {
    map: FxHashMap<Box<str>, Box<[u32]>>,
}

#[inline]
fn utf8_len(first: u8) -> usize {
    match first {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}

// ---------------------------------------------------------------------------------------------
// Embeddings: one fixed vector per token, from its text alone.

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// One step of SplitMix64: the output for state `x` (the state is advanced by `GOLDEN` first).
#[inline]
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(GOLDEN);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A token's seed: SplitMix64 of the FNV-1a hash of its text (UTF-8) xor `seed`.
pub fn token_seed(text: &[u8], seed: u64) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for &b in text {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    splitmix64(h ^ seed)
}

/// Write a token's embedding to `out` (its length is the dimension): component `i` is
/// `2 u - 1` for `u = (splitmix64(s + i * GOLDEN) >> 11) / 2^53` (exact in `f64`), and the
/// vector is scaled to unit length (computed in `f64`, stored as `f32`).
pub fn embed_into(s: u64, out: &mut [f32]) {
    let mut v: Vec<f64> = Vec::with_capacity(out.len());
    let mut sum = 0.0f64;
    for i in 0..out.len() as u64 {
        let x = splitmix64(s.wrapping_add(i.wrapping_mul(GOLDEN)));
        let u = (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        let c = 2.0 * u - 1.0;
        sum += c * c;
        v.push(c);
    }
    let norm = sum.sqrt();
    for (o, c) in out.iter_mut().zip(v) {
        *o = if norm > 0.0 { (c / norm) as f32 } else { 0.0 };
    }
}

/// The embeddings of `tokens` (their texts), `dim` numbers each, row after row; in parallel.
pub fn embeddings<T: AsRef<[u8]> + Sync>(tokens: &[T], dim: usize, seed: u64) -> Result<Vec<f32>> {
    let n = tokens
        .len()
        .checked_mul(dim)
        .ok_or_else(|| Error::OutOfMemory(format!("{} tokens x dim {dim} floats", tokens.len())))?;
    let mut out = Vec::new();
    out.try_reserve_exact(n)
        .map_err(|_| Error::OutOfMemory(format!("{} tokens x dim {dim} floats", tokens.len())))?;
    out.resize(n, 0f32);
    if dim == 0 {
        return Ok(out);
    }
    out.par_chunks_mut(dim)
        .zip(tokens.par_iter())
        .for_each(|(row, t)| embed_into(token_seed(t.as_ref(), seed), row));
    Ok(out)
}

/// What a refused allocation of the word encoder names.
const WHAT: &str = "the encoded ids";

/// Room in `out` for the ids of `word`: at most one per byte of the word and its end marker
/// (a repeated word copies as many ids as its first match gave), so matching never grows it.
fn room_for_word(out: &mut Vec<u32>, word: &str) -> Result<()> {
    crate::mem::try_reserve(out, word.len() + 1, WHAT)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::pretokenize::WORDS_PATTERN as WORDS;

    /// Recount every pair of every spelled word before each merge.
    fn naive(words: &[(String, u64)], num_merges: usize) -> Vec<(String, String)> {
        let mut spelled: Vec<(Vec<String>, u64)> = words
            .iter()
            .map(|(w, n)| {
                let mut s: Vec<String> = w.chars().map(|c| c.to_string()).collect();
                s.push("</w>".into());
                (s, *n)
            })
            .collect();
        // symbol order for ties: characters by code point, then </w>, then merges in order
        let mut order: Vec<String> = {
            let mut a: Vec<char> = words.iter().flat_map(|(w, _)| w.chars()).collect();
            a.sort_unstable();
            a.dedup();
            a.into_iter().map(|c| c.to_string()).collect()
        };
        order.push("</w>".into());
        let mut out = Vec::new();
        for _ in 0..num_merges {
            let mut counts: std::collections::HashMap<(usize, usize), u64> = Default::default();
            for (s, n) in &spelled {
                for p in s.windows(2) {
                    let a = order.iter().position(|t| *t == p[0]).unwrap();
                    let b = order.iter().position(|t| *t == p[1]).unwrap();
                    *counts.entry((a, b)).or_insert(0) += n;
                }
            }
            let Some((&(a, b), _)) = counts
                .iter()
                .max_by(|x, y| x.1.cmp(y.1).then_with(|| y.0.cmp(x.0)))
            else {
                break;
            };
            let (ta, tb) = (order[a].clone(), order[b].clone());
            let merged = format!("{ta}{tb}");
            for (s, _) in spelled.iter_mut() {
                let mut i = 0;
                let mut r = Vec::new();
                while i < s.len() {
                    if i + 1 < s.len() && s[i] == ta && s[i + 1] == tb {
                        r.push(merged.clone());
                        i += 2;
                    } else {
                        r.push(s[i].clone());
                        i += 1;
                    }
                }
                *s = r;
            }
            order.push(merged);
            out.push((ta, tb));
        }
        out
    }

    fn names(m: &WordMerges) -> Vec<(String, String)> {
        let mut names: Vec<String> = m.alphabet.iter().map(|c| c.to_string()).collect();
        names.push("</w>".into());
        let mut out = Vec::new();
        for &((a, b), made) in &m.merges {
            let (x, y) = (names[a as usize].clone(), names[b as usize].clone());
            if made as usize == names.len() {
                names.push(format!("{x}{y}"));
            } else {
                assert_eq!(names[made as usize], format!("{x}{y}"));
            }
            out.push((x, y));
        }
        out
    }

    #[test]
    fn merges_equal_the_naive_trainer() {
        let mut seed = 0x9e37_79b9u64;
        let letters = ['a', 'b', 'a', 'é', 'ж'];
        for round in 0..40 {
            let mut words: FxHashMap<String, u64> = FxHashMap::default();
            for _ in 0..30 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let len = 2 + (seed % 6) as usize;
                let w: String = (0..len)
                    .map(|k| letters[((seed >> (8 + 3 * k)) % 5) as usize])
                    .collect();
                *words.entry(w).or_insert(0) += 1 + (seed >> 40) % 7;
            }
            let mut words: Vec<(String, u64)> = words.into_iter().collect();
            words.sort();
            let got = train_words(&words, 60, 0, &mut |_| true).unwrap();
            assert_eq!(names(&got), naive(&words, 60), "round {round}");
        }
    }

    #[test]
    fn longest_match_and_unknown_characters() {
        // (text, ends a word, id)
        let toks: Vec<(Vec<u8>, u32)> = [
            ("", true, 0),
            ("t", false, 1),
            ("e", false, 2),
            ("s", false, 3),
            ("test", false, 4),
            ("es", false, 5),
            ("ing", true, 6),
            ("i", false, 7),
            ("n", false, 8),
            ("g", false, 9),
        ]
        .iter()
        .map(|&(s, end, id)| {
            let mut b = s.as_bytes().to_vec();
            if end {
                b.push(END_OF_WORD);
            }
            (b, id)
        })
        .collect();
        let unk = 99;
        let enc = WordEncoder::new(WORDS, true, &toks, unk).unwrap();
        assert_eq!(enc.encode("Testing tests").unwrap(), vec![4, 6, 4, 3, 0]);
        // 'x' is in no token: one unk for it, then the rest
        assert_eq!(enc.encode("text").unwrap(), vec![1, 2, unk, 1, 0]);
        // repeated words come from the per-call table
        assert_eq!(enc.encode("test test").unwrap(), vec![4, 0, 4, 0]);
        let counts = enc
            .token_counts(&[("test".into(), 3), ("testing".into(), 2)], 10)
            .unwrap();
        assert_eq!(counts[4], 5);
        assert_eq!(counts[6], 2);
        assert_eq!(counts[0], 3);
        // counts past 2**64 - 1 are an error, not a wrapped number
        assert!(enc
            .token_counts(&[("test".into(), u64::MAX), ("test".into(), 1)], 10)
            .is_err());
        assert!(WordEncoder::new(WORDS, true, &[(vec![b'a'], 1), (vec![b'a'], 2)], 0).is_err());
        assert!(WordEncoder::new(WORDS, true, &[(vec![0xC3], 1)], 0).is_err());
    }

    #[test]
    fn a_megabyte_word() {
        let toks: Vec<(Vec<u8>, u32)> = vec![
            (b"a".to_vec(), 1),
            (b"aa".to_vec(), 2),
            (vec![END_OF_WORD], 0),
        ];
        let enc = WordEncoder::new(WORDS, true, &toks, 9).unwrap();
        let text = "a".repeat(1 << 20);
        let ids = enc.encode(&text).unwrap();
        assert_eq!(ids.len(), (1 << 19) + 1);
    }

    #[test]
    fn embeddings_are_unit_length_and_distinct() {
        let toks = vec![b"hello</w>".to_vec(), b"hel".to_vec()];
        let e = embeddings(&toks, 16, 0).unwrap();
        for row in e.chunks(16) {
            let n: f32 = row.iter().map(|x| x * x).sum();
            assert!((n - 1.0).abs() < 1e-5);
        }
        assert_ne!(e[..16], e[16..]);
        assert_eq!(embeddings(&toks, 16, 0).unwrap(), e);
        assert_ne!(embeddings(&toks, 16, 1).unwrap(), e);
        // the first outputs of SplitMix64 from state 0 (the published reference values)
        assert_eq!(splitmix64(0), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix64(GOLDEN), 0x6E78_9E6A_A1B9_65F4);
    }
}
