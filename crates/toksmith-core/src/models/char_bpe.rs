//! BPE over characters (Hugging Face `tokenizers` `models::bpe` and SentencePiece BPE).
//!
//! A word starts as one symbol per character (looked up in the vocabulary, with the
//! `continuing_subword_prefix` on every character but the first and the `end_of_word_suffix` on
//! the last); characters missing from the vocabulary become `<0xAB>` byte pieces
//! (`byte_fallback`) or the unknown token (consecutive ones fused with `fuse_unk`). Merges are
//! then applied best rank first, leftmost first among equal ranks, through a binary heap over a
//! linked list of symbols: O(n log n) on any word, never quadratic.
//!
//! SentencePiece BPE ([`CharBpe::from_spm`]) is the same loop: a merge is any pair of pieces
//! whose concatenation is a piece, ranked by that piece's score (equal scores share a rank, so
//! the leftmost pair wins, as in `bpe_model.cc`). Characters that are not pieces stay unknown
//! (fused, or bytes with byte fallback) after merging; user-defined pieces are matched first and
//! never merged; merges into UNUSED pieces are undone at the end (sentencepiece's resegment).
//!
//! sentencepiece merges over the whole normalized text. When no piece has a `▁` right after
//! another character (true of Llama 2 and Mistral), no merge can join the text before a `▁`
//! that follows another character with the text from there on, so the text is cut into words
//! there and each word is merged alone, once per distinct word ([`word_cache`]): the same ids.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use super::spm::{byte_piece, ModelProto, PieceType};
use super::trie::Trie;
use super::word_cache;
use crate::mem::{try_map, try_reserve, try_reserve_map, try_string, try_vec};
use crate::{Error, Result};

const SPACE: char = '\u{2581}';

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flavor {
    HuggingFace,
    SentencePiece,
}

#[derive(Debug, Clone)]
pub struct CharBpe {
    vocab: FxHashMap<String, u32>,
    /// (left id, right id) -> (rank, merged id); lower ranks merge first.
    merges: FxHashMap<(u32, u32), (u32, u32)>,
    unk_id: Option<u32>,
    fuse_unk: bool,
    byte_fallback: bool,
    continuing_subword_prefix: Option<String>,
    end_of_word_suffix: Option<String>,
    ignore_merges: bool,
    flavor: Flavor,
    /// SentencePiece: ids at or above this are characters that are no piece (output as unknown).
    n_real: u32,
    /// SentencePiece: user-defined pieces, matched before characters and never merged.
    user_defined: Option<Trie>,
    /// SentencePiece: UNUSED pieces (undone into their two halves at the end).
    unused: Vec<bool>,
    byte_ids: Option<Box<[u32; 256]>>,
    /// SentencePiece: the id of each ASCII character (u32::MAX: none), as `vocab` has it.
    ascii_ids: Box<[u32; 128]>,
    /// SentencePiece: the id of each other character that `vocab` has (looked up by the char,
    /// not hashed and compared as a string).
    char_ids: FxHashMap<char, u32>,
    /// SentencePiece: cut the text into words before each `▁` that follows another character.
    split_at_space: bool,
    /// The tag of this model's entries in the word cache.
    owner: u64,
    /// SentencePiece: some piece is UNUSED (merges into one are tracked to be undone).
    any_unused: bool,
}

/// Options of a Hugging Face BPE model (the `model` object of `tokenizer.json`).
#[derive(Debug, Clone, Default)]
pub struct BpeOptions {
    pub unk_token: Option<String>,
    pub fuse_unk: bool,
    pub byte_fallback: bool,
    pub continuing_subword_prefix: Option<String>,
    pub end_of_word_suffix: Option<String>,
    pub ignore_merges: bool,
}

#[derive(Clone, Copy)]
struct Symbol {
    id: u32,
    prev: i32,
    next: i32,
    /// Bytes of text covered; 0 once merged into its left neighbour.
    len: u32,
    frozen: bool,
}

#[derive(PartialEq, Eq)]
struct Merge {
    pos: u32,
    rank: u32,
    new_id: u32,
}

impl Ord for Merge {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: the lowest rank, then the leftmost position, comes first.
        other
            .rank
            .cmp(&self.rank)
            .then_with(|| other.pos.cmp(&self.pos))
    }
}

impl PartialOrd for Merge {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// What a refused allocation of a model's tables names.
const TABLES: &str = "the vocabulary and merges of a BPE model";

/// `<0xAB>` ids, u32::MAX where a byte has no piece.
fn byte_ids_of(vocab: &FxHashMap<String, u32>) -> Option<Box<[u32; 256]>> {
    let mut ids = Box::new([u32::MAX; 256]);
    for b in 0..=255u8 {
        if let Some(&id) = vocab.get(&byte_piece(b)) {
            ids[b as usize] = id;
        }
    }
    Some(ids)
}

impl CharBpe {
    /// Hugging Face BPE: `vocab` (token -> id) and `merges` in priority order.
    pub fn new<S: AsRef<str>>(
        vocab: FxHashMap<String, u32>,
        merges: &[(S, S)],
        options: BpeOptions,
    ) -> Result<Self> {
        let prefix_len = options
            .continuing_subword_prefix
            .as_ref()
            .map_or(0, |p| p.len());
        let mut table = FxHashMap::default();
        // (every insert below is within this room)
        try_reserve_map(&mut table, merges.len(), TABLES)?;
        let mut merged = String::new();
        for (rank, (a, b)) in merges.iter().enumerate() {
            let (a, b) = (a.as_ref(), b.as_ref());
            let get = |t: &str| {
                vocab.get(t).copied().ok_or_else(|| {
                    Error::InvalidVocab(format!(
                        "merge {a:?} {b:?}: {t:?} is not in the vocabulary"
                    ))
                })
            };
            let ia = get(a)?;
            let ib = get(b)?;
            // HF forms the merged token by cutting the prefix length off the right part.
            let rest = b.get(prefix_len..).ok_or_else(|| {
                Error::InvalidVocab(format!(
                    "merge {a:?} {b:?}: the right part is shorter than the continuing_subword_prefix"
                ))
            })?;
            merged.clear();
            merged
                .try_reserve(a.len() + rest.len())
                .map_err(|_| crate::mem::oom(TABLES, a.len() + rest.len(), 1))?;
            merged.push_str(a);
            merged.push_str(rest);
            let im = get(&merged)?;
            table.entry((ia, ib)).or_insert((rank as u32, im));
        }
        let unk_id = match &options.unk_token {
            Some(t) => Some(*vocab.get(t).ok_or_else(|| {
                Error::InvalidVocab(format!("unk_token {t:?} is not in the vocabulary"))
            })?),
            None => None,
        };
        let byte_ids = if options.byte_fallback {
            byte_ids_of(&vocab)
        } else {
            None
        };
        let n_real = vocab.values().copied().max().map_or(0, |m| m + 1);
        Ok(CharBpe {
            vocab,
            merges: table,
            unk_id,
            fuse_unk: options.fuse_unk,
            byte_fallback: options.byte_fallback,
            continuing_subword_prefix: options.continuing_subword_prefix,
            end_of_word_suffix: options.end_of_word_suffix,
            ignore_merges: options.ignore_merges,
            flavor: Flavor::HuggingFace,
            n_real,
            user_defined: None,
            unused: Vec::new(),
            byte_ids,
            ascii_ids: Box::new([u32::MAX; 128]),
            char_ids: FxHashMap::default(),
            split_at_space: false,
            owner: word_cache::new_owner(),
            any_unused: false,
        })
    }

    /// The model of a SentencePiece `.model` file whose model_type is BPE.
    /// The id of the unknown token, if the model has one.
    pub fn unk_id(&self) -> Option<u32> {
        self.unk_id
    }

    pub fn from_spm(m: &ModelProto) -> Result<Self> {
        let n = m.pieces.len();
        if n >= (u32::MAX / 2) as usize {
            return Err(Error::InvalidVocab("too many pieces".into()));
        }
        let mut vocab: FxHashMap<String, u32> = FxHashMap::default();
        // (the inserts into the tables sized by the pieces are within the room reserved first)
        try_reserve_map(&mut vocab, n, TABLES)?;
        let mut unused = crate::mem::try_filled(n, false, TABLES)?;
        let mut user_defined = Trie::new();
        let mut any_user_defined = false;
        let mut mergeable = try_vec(n, TABLES)?;
        for (i, p) in m.pieces.iter().enumerate() {
            match p.kind {
                PieceType::Normal | PieceType::UserDefined | PieceType::Unused => {
                    vocab.insert(try_string(&p.piece, TABLES)?, i as u32);
                    mergeable.push(i);
                    if p.kind == PieceType::Unused {
                        unused[i] = true;
                    }
                    if p.kind == PieceType::UserDefined {
                        user_defined.insert(p.piece.as_bytes(), i as u32)?;
                        any_user_defined = true;
                    }
                }
                _ => {}
            }
        }
        // Reserved pieces (control, unknown, byte) are found by PieceToId too, but never merge.
        let mut all_ids: FxHashMap<String, u32> = FxHashMap::default();
        try_reserve_map(&mut all_ids, n, TABLES)?;
        for (t, &id) in &vocab {
            all_ids.insert(try_string(t, TABLES)?, id);
        }
        for (i, p) in m.pieces.iter().enumerate() {
            if !all_ids.contains_key(&p.piece) {
                all_ids.insert(try_string(&p.piece, TABLES)?, i as u32);
            }
        }
        // Characters of pieces that are no piece themselves still merge in sentencepiece (it
        // merges strings): give them ids past the vocabulary, reported as unknown.
        let mut next_id = n as u32;
        let mut extra: FxHashMap<String, u32> = FxHashMap::default();
        for &i in &mergeable {
            for c in m.pieces[i].piece.chars() {
                let mut buf = [0; 4];
                let s: &str = c.encode_utf8(&mut buf);
                if !all_ids.contains_key(s) && !extra.contains_key(s) {
                    // (amortized: the table doubles when full)
                    try_reserve_map(&mut extra, 1, TABLES)?;
                    extra.insert(try_string(s, TABLES)?, next_id);
                    next_id += 1;
                }
            }
        }
        // Ranks: equal scores share a rank so that the leftmost pair wins among them.
        let mut scores: Vec<f32> = try_map(&mergeable, |&i| Ok(m.pieces[i].score), TABLES)?;
        scores.sort_by(|a, b| b.total_cmp(a));
        scores.dedup();
        let rank_of =
            |s: f32| scores.partition_point(|&x| x.total_cmp(&s) == Ordering::Greater) as u32;
        let mut merges = FxHashMap::default();
        let lookup = |t: &str| vocab.get(t).or_else(|| extra.get(t)).copied();
        for &i in &mergeable {
            let piece = &m.pieces[i].piece;
            let rank = rank_of(m.pieces[i].score);
            for (k, _) in piece.char_indices().skip(1) {
                if let (Some(a), Some(b)) = (lookup(&piece[..k]), lookup(&piece[k..])) {
                    // (amortized: the table doubles when full)
                    try_reserve_map(&mut merges, 1, TABLES)?;
                    merges.insert((a, b), (rank, i as u32));
                }
            }
        }
        let mut lookup_vocab = all_ids;
        try_reserve_map(&mut lookup_vocab, extra.len(), TABLES)?;
        lookup_vocab.extend(extra);
        let byte_ids = if m.trainer_spec.byte_fallback {
            byte_ids_of(&vocab_with_bytes(m)?)
        } else {
            None
        };
        // Cutting before `▁` is exact when no merge can join a character and a following `▁`:
        // no mergeable piece has one, and `▁` is a piece itself (so a word never starts with an
        // unknown character that the previous word's unknowns would fuse with).
        let joins_space = |p: &str| {
            p.chars()
                .zip(p.chars().skip(1))
                .any(|(a, b)| b == SPACE && a != SPACE)
        };
        let split_at_space = !m.trainer_spec.treat_whitespace_as_suffix
            && vocab
                .get(SPACE.encode_utf8(&mut [0; 4]) as &str)
                .is_some_and(|&i| !unused[i as usize])
            && !mergeable.iter().any(|&i| joins_space(&m.pieces[i].piece));
        let any_unused = unused.iter().any(|&u| u);
        let mut ascii_ids = Box::new([u32::MAX; 128]);
        for (c, slot) in ascii_ids.iter_mut().enumerate() {
            if let Some(&id) = lookup_vocab.get((c as u8 as char).encode_utf8(&mut [0; 4]) as &str)
            {
                *slot = id;
            }
        }
        let mut char_ids = FxHashMap::default();
        for (t, &id) in &lookup_vocab {
            let mut chars = t.chars();
            if let (Some(c), None) = (chars.next(), chars.next()) {
                if !c.is_ascii() {
                    try_reserve_map(&mut char_ids, 1, TABLES)?;
                    char_ids.insert(c, id);
                }
            }
        }
        Ok(CharBpe {
            vocab: lookup_vocab,
            merges,
            unk_id: Some(m.unk_id()),
            fuse_unk: true,
            byte_fallback: m.trainer_spec.byte_fallback,
            continuing_subword_prefix: None,
            end_of_word_suffix: None,
            ignore_merges: false,
            flavor: Flavor::SentencePiece,
            n_real: n as u32,
            user_defined: any_user_defined.then_some(user_defined),
            unused,
            byte_ids,
            ascii_ids,
            char_ids,
            split_at_space,
            owner: word_cache::new_owner(),
            any_unused,
        })
    }

    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.vocab.get(token).copied().filter(|&i| i < self.n_real)
    }

    /// Encode one word (HF: a pre-tokenized piece; SentencePiece: the whole normalized text).
    pub fn encode(&self, text: &str, out: &mut Vec<u32>) -> Result<()> {
        if !self.split_at_space {
            return word_cache::cached(self.owner, text, out, |out| self.encode_word(text, out));
        }
        let bytes = text.as_bytes();
        let space = [0xe2, 0x96, 0x81];
        let mut start = 0;
        let mut i = 1;
        while i + 3 <= bytes.len() {
            if bytes[i] == 0xe2 && bytes[i..i + 3] == space && (i < 3 || bytes[i - 3..i] != space) {
                let w = &text[start..i];
                word_cache::cached(self.owner, w, out, |out| self.encode_word(w, out))?;
                start = i;
                i += 3;
            } else {
                i += 1;
            }
        }
        let w = &text[start..];
        word_cache::cached(self.owner, w, out, |out| self.encode_word(w, out))
    }

    fn encode_word(&self, word: &str, out: &mut Vec<u32>) -> Result<()> {
        if word.is_empty() {
            return Ok(());
        }
        if self.ignore_merges {
            if let Some(&id) = self.vocab.get(word) {
                out.push(id);
                return Ok(());
            }
        }
        let mut symbols = match self.flavor {
            Flavor::HuggingFace => self.hf_symbols(word)?,
            Flavor::SentencePiece => self.spm_symbols(word)?,
        };
        let mut rev: FxHashMap<u32, (u32, u32)> = FxHashMap::default();
        self.merge_all(&mut symbols, &mut rev)?;
        match self.flavor {
            Flavor::HuggingFace => {
                try_reserve(out, symbols.len(), "the ids")?;
                out.extend(symbols.iter().filter(|s| s.len > 0).map(|s| s.id))
            }
            Flavor::SentencePiece => {
                // every id covers at least one byte of the word
                try_reserve(out, word.len(), "the ids")?;
                self.spm_output(word, &symbols, &rev, out)
            }
        }
        Ok(())
    }

    fn hf_symbols(&self, w: &str) -> Result<Vec<Symbol>> {
        // at most one symbol per byte of the lookup strings, prefix and suffix included
        let affixes = self
            .continuing_subword_prefix
            .as_ref()
            .map_or(0, |p| p.len())
            + self.end_of_word_suffix.as_ref().map_or(0, |s| s.len());
        let mut symbols: Vec<Symbol> =
            try_vec(w.len().saturating_mul(affixes + 1), "the BPE symbols")?;
        let push = |symbols: &mut Vec<Symbol>, id: u32, len: usize| {
            symbols.push(Symbol {
                id,
                prev: symbols.len() as i32 - 1,
                next: -1,
                len: len as u32,
                frozen: false,
            });
        };
        let mut unk: Option<(u32, usize)> = None;
        let mut buf = String::new();
        let mut it = w.char_indices().peekable();
        while let Some((i, c)) = it.next() {
            let is_last = it.peek().is_none();
            let byte_len = c.len_utf8();
            buf.clear();
            if i > 0 {
                if let Some(p) = &self.continuing_subword_prefix {
                    buf.push_str(p);
                }
            }
            buf.push(c);
            if is_last {
                if let Some(s) = &self.end_of_word_suffix {
                    buf.push_str(s);
                }
            }
            if let Some(&id) = self.vocab.get(buf.as_str()) {
                if let Some((uid, ulen)) = unk.take() {
                    push(&mut symbols, uid, ulen);
                }
                push(&mut symbols, id, byte_len);
                continue;
            }
            if self.byte_fallback {
                if let Some(bytes) = &self.byte_ids {
                    // HF spells the bytes of the whole lookup string (prefix and suffix included),
                    // each covering one byte of text, and leaves a pending unknown pending; a
                    // byte without a piece sends the character to the unknown token instead.
                    if buf.bytes().all(|b| bytes[b as usize] != u32::MAX) {
                        for b in buf.bytes() {
                            push(&mut symbols, bytes[b as usize], 1);
                        }
                        continue;
                    }
                }
            }
            if let Some(uid) = self.unk_id {
                unk = match unk {
                    Some((u, l)) if self.fuse_unk => Some((u, l + byte_len)),
                    Some((u, l)) => {
                        push(&mut symbols, u, l);
                        Some((uid, byte_len))
                    }
                    None => Some((uid, byte_len)),
                };
            }
        }
        if let Some((uid, ulen)) = unk {
            push(&mut symbols, uid, ulen);
        }
        link(&mut symbols);
        Ok(symbols)
    }

    fn spm_symbols(&self, w: &str) -> Result<Vec<Symbol>> {
        let bytes = w.as_bytes();
        let mut symbols = try_vec(w.len(), "the BPE symbols")?;
        let mut pos = 0;
        while pos < bytes.len() {
            let matched = self
                .user_defined
                .as_ref()
                .and_then(|t| t.longest_prefix(&bytes[pos..]));
            let (len, id, frozen) = match matched {
                Some((len, id)) => (len, id, true),
                None if bytes[pos] < 0x80 => (1, self.ascii_ids[bytes[pos] as usize], false),
                None => {
                    // pos is on a char boundary of w
                    let c = w[pos..].chars().next().unwrap_or('\u{fffd}');
                    let id = self.char_ids.get(&c).copied().unwrap_or(u32::MAX);
                    (c.len_utf8(), id, false)
                }
            };
            symbols.push(Symbol {
                id,
                prev: symbols.len() as i32 - 1,
                next: -1,
                len: len as u32,
                frozen,
            });
            pos += len;
        }
        link(&mut symbols);
        Ok(symbols)
    }

    fn merge_all(
        &self,
        symbols: &mut [Symbol],
        rev: &mut FxHashMap<u32, (u32, u32)>,
    ) -> Result<()> {
        let track_unused = self.any_unused;
        let pair = |symbols: &[Symbol], left: usize, right: usize| -> Option<(u32, u32)> {
            let (l, r) = (symbols[left], symbols[right]);
            if l.frozen || r.frozen {
                return None;
            }
            self.merges.get(&(l.id, r.id)).copied()
        };
        // every merge pushes at most two candidates and removes one symbol
        let mut heap = BinaryHeap::new();
        heap.try_reserve(symbols.len().saturating_mul(3))
            .map_err(|_| crate::mem::oom("the BPE merges", symbols.len() * 3, 12))?;
        let mut note =
            |heap: &mut BinaryHeap<Merge>, symbols: &[Symbol], left: usize, right: usize| {
                if let Some((rank, new_id)) = pair(symbols, left, right) {
                    heap.push(Merge {
                        pos: left as u32,
                        rank,
                        new_id,
                    });
                    if track_unused && self.unused.get(new_id as usize) == Some(&true) {
                        rev.insert(new_id, (symbols[left].id, symbols[right].id));
                    }
                }
            };
        for i in 1..symbols.len() {
            note(&mut heap, symbols, i - 1, i);
        }
        while let Some(top) = heap.pop() {
            let pos = top.pos as usize;
            if symbols[pos].len == 0 || symbols[pos].next < 0 {
                continue;
            }
            let next = symbols[pos].next as usize;
            match pair(symbols, pos, next) {
                Some((_, id)) if id == top.new_id => {}
                _ => continue,
            }
            let right = symbols[next];
            symbols[pos].id = top.new_id;
            symbols[pos].len += right.len;
            symbols[pos].next = right.next;
            symbols[next].len = 0;
            if right.next >= 0 {
                symbols[right.next as usize].prev = pos as i32;
            }
            if symbols[pos].prev >= 0 {
                note(&mut heap, symbols, symbols[pos].prev as usize, pos);
            }
            if symbols[pos].next >= 0 {
                note(&mut heap, symbols, pos, symbols[pos].next as usize);
            }
        }
        Ok(())
    }

    fn spm_output(
        &self,
        w: &str,
        symbols: &[Symbol],
        rev: &FxHashMap<u32, (u32, u32)>,
        out: &mut Vec<u32>,
    ) {
        let unk = self.unk_id.unwrap_or(0);
        let mut prev_unk = false;
        let mut start = 0usize;
        let mut i = 0i32;
        let mut stack = Vec::new();
        while i >= 0 && (i as usize) < symbols.len() {
            let s = symbols[i as usize];
            let end = start + s.len as usize;
            if s.id >= self.n_real {
                if let (true, Some(bytes)) = (self.byte_fallback, &self.byte_ids) {
                    // PieceToId of a missing byte piece is the unknown id
                    out.extend(
                        w.as_bytes()[start..end]
                            .iter()
                            .map(|&b| match bytes[b as usize] {
                                u32::MAX => unk,
                                id => id,
                            }),
                    );
                } else if !prev_unk {
                    out.push(unk);
                }
                prev_unk = true;
            } else if rev.is_empty() {
                out.push(s.id); // no merge into an UNUSED piece to undo
                prev_unk = false;
            } else {
                stack.push(s.id);
                while let Some(id) = stack.pop() {
                    match rev.get(&id) {
                        Some(&(a, b)) => {
                            stack.push(b);
                            stack.push(a);
                        }
                        None => out.push(id),
                    }
                }
                prev_unk = false;
            }
            start = end;
            i = s.next;
        }
    }
}

fn vocab_with_bytes(m: &ModelProto) -> Result<FxHashMap<String, u32>> {
    let mut out = FxHashMap::default();
    for (i, p) in m.pieces.iter().enumerate() {
        if p.kind == PieceType::Byte {
            // (a checked model has at most 256 byte pieces, each `<0xAB>`)
            try_reserve_map(&mut out, 1, TABLES)?;
            out.insert(try_string(&p.piece, TABLES)?, i as u32);
        }
    }
    Ok(out)
}

fn link(symbols: &mut [Symbol]) {
    let n = symbols.len();
    for (i, s) in symbols.iter_mut().enumerate() {
        s.prev = i as i32 - 1;
        s.next = if i + 1 < n { i as i32 + 1 } else { -1 };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab(tokens: &[&str]) -> FxHashMap<String, u32> {
        tokens
            .iter()
            .enumerate()
            .map(|(i, t)| (t.to_string(), i as u32))
            .collect()
    }

    fn merges(m: &[(&str, &str)]) -> Vec<(String, String)> {
        m.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    fn enc(m: &CharBpe, w: &str) -> Vec<u32> {
        let mut out = vec![];
        m.encode(w, &mut out).unwrap();
        out
    }

    #[test]
    fn merges_by_rank_then_leftmost() {
        let v = vocab(&["<unk>", "a", "b", "c", "ab", "bc", "abc"]);
        // bc outranks ab: a + bc, then no (a, bc) merge
        let m = CharBpe::new(
            v.clone(),
            &merges(&[("b", "c"), ("a", "b")]),
            BpeOptions::default(),
        )
        .unwrap();
        assert_eq!(enc(&m, "abc"), vec![1, 5]);
        let m = CharBpe::new(
            v.clone(),
            &merges(&[("a", "b"), ("b", "c"), ("ab", "c")]),
            BpeOptions::default(),
        )
        .unwrap();
        assert_eq!(enc(&m, "abc"), vec![6]);
        // leftmost among equal pairs: "aaa" with a+a -> aa + a
        let v2 = vocab(&["a", "aa"]);
        let m = CharBpe::new(v2, &merges(&[("a", "a")]), BpeOptions::default()).unwrap();
        assert_eq!(enc(&m, "aaa"), vec![1, 0]);
        assert_eq!(enc(&m, "aaaa"), vec![1, 1]);
        assert_eq!(enc(&m, ""), Vec::<u32>::new());
    }

    #[test]
    fn unknowns_fuse_bytes_and_affixes() {
        let v = vocab(&["<unk>", "a", "##b", "b</w>", "##b</w>", "##a"]);
        let opts = BpeOptions {
            unk_token: Some("<unk>".into()),
            fuse_unk: true,
            continuing_subword_prefix: Some("##".into()),
            end_of_word_suffix: Some("</w>".into()),
            ..Default::default()
        };
        let m = CharBpe::new(v.clone(), &[] as &[(String, String)], opts.clone()).unwrap();
        assert_eq!(enc(&m, "abb"), vec![1, 2, 4]);
        assert_eq!(enc(&m, "xyab"), vec![0, 5, 4]);
        assert_eq!(enc(&m, "b"), vec![3]);
        let m = CharBpe::new(
            v,
            &[] as &[(String, String)],
            BpeOptions {
                fuse_unk: false,
                ..opts
            },
        )
        .unwrap();
        assert_eq!(enc(&m, "xyab"), vec![0, 0, 5, 4]);
        // byte fallback
        let mut toks: Vec<String> = vec!["<unk>".into(), "a".into()];
        toks.extend((0..=255u8).map(byte_piece));
        let v: FxHashMap<String, u32> = toks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i as u32))
            .collect();
        let m = CharBpe::new(
            v,
            &[] as &[(String, String)],
            BpeOptions {
                unk_token: Some("<unk>".into()),
                byte_fallback: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(enc(&m, "aé"), vec![1, 2 + 0xc3, 2 + 0xa9]);
        // a character with a byte that has no piece is unknown
        let v = vocab(&["<unk>", "a", "<0xC3>"]);
        let m = CharBpe::new(
            v,
            &[] as &[(String, String)],
            BpeOptions {
                unk_token: Some("<unk>".into()),
                byte_fallback: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(enc(&m, "aé"), vec![1, 0]);
        // an unknown unk token is a configuration error
        assert!(CharBpe::new(
            vocab(&["a"]),
            &[] as &[(String, String)],
            BpeOptions {
                unk_token: Some("?".into()),
                ..Default::default()
            }
        )
        .is_err());
        assert!(
            CharBpe::new(vocab(&["a"]), &merges(&[("a", "b")]), BpeOptions::default()).is_err()
        );
    }

    #[test]
    fn long_word_is_not_quadratic() {
        let v = vocab(&["a", "aa", "aaaa"]);
        let m = CharBpe::new(
            v,
            &merges(&[("a", "a"), ("aa", "aa")]),
            BpeOptions::default(),
        )
        .unwrap();
        let out = enc(&m, &"a".repeat(400_001));
        assert_eq!(out.len(), 100_001);
        assert_eq!(out[100_000], 0);
    }
}
