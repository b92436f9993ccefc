//! The big tables of tokenizer files (rank lines, byte-level vocabularies, merge lists), read
//! and checked in one native pass.
//!
//! The Python readers (`toksmith/formats/`, `toksmith/serialization.py`) loop over every entry
//! of a 100k-token vocabulary several times: 0.2-0.6 s per load. Each function here mirrors one
//! of those loops (named in its doc) and *declines* (`None`) on anything that loop would reject
//! or treat in a special way; the caller then runs the Python reference, which raises the
//! error with its message. So this code only ever accepts well-formed input, where it must
//! give exactly the reference's result (the tests compare the two on valid and corrupted
//! files).

use crate::bytelevel;
use crate::error::{Error, Result};
use crate::mem::{
    try_collect, try_filled, try_push, try_reserve, try_reserve_map, try_reserve_set, try_vec,
};
use crate::vocab::Vocab;
use rustc_hash::{FxHashMap, FxHashSet};

/// What the readers return: `Ok(None)` where they decline (the caller runs the Python
/// reference), an error only for memory the allocator refused (every table here grows with the
/// file, up to `MAX_TOKENIZER_FILE_BYTES`).
pub type Read<T> = Result<Option<T>>;

/// Mergeable tokens `(bytes, id)` in file order.
pub type Ranks = Vec<(Vec<u8>, u32)>;

const fn b64_table() -> [u8; 256] {
    let mut t = [0xFFu8; 256];
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut i = 0;
    while i < 64 {
        t[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    t
}

const B64: [u8; 256] = b64_table();

/// Canonical standard base64 (length a multiple of 4, at most two `=` at the end, unused bits
/// zero) appended to `out`; false for anything else.
fn decode_base64(s: &[u8], out: &mut Vec<u8>) -> bool {
    if s.is_empty() || !s.len().is_multiple_of(4) {
        return false;
    }
    let pad = s.iter().rev().take(2).take_while(|&&c| c == b'=').count();
    let body = &s[..s.len() - pad];
    // (the caller reserved the room: pushes below never allocate)
    let mut acc = 0u32;
    let mut bits = 0u32;
    for &c in body {
        let v = B64[c as usize];
        if v == 0xFF {
            return false;
        }
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    acc == 0
}

/// A non-empty run of ASCII digits below 2^32.
fn parse_id(s: &[u8]) -> Option<u32> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    let mut v = 0u64;
    for &c in s {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as u64;
    }
    u32::try_from(v).ok()
}

/// `formats/tiktoken.py::_parse_ranks`: lines of `base64-token rank`; blank lines skipped.
pub fn parse_tiktoken(raw: &[u8]) -> Read<Ranks> {
    const WHAT: &str = "the ranks of a tiktoken file";
    let mut out: Ranks = try_vec(raw.len() / 12, WHAT)?;
    for line in raw.split(|&c| c == b'\n') {
        let mut end = line.len();
        while end > 0 && line[end - 1] == b'\r' {
            end -= 1;
        }
        let line = &line[..end];
        if line
            .iter()
            .all(|&c| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c))
        {
            continue;
        }
        let Some(sp) = line.iter().position(|&c| c == b' ') else {
            return Ok(None);
        };
        let (tok, rank) = (&line[..sp], &line[sp + 1..]);
        if rank.contains(&b' ') {
            return Ok(None);
        }
        let mut bytes = try_vec(tok.len() / 4 * 3, WHAT)?;
        if !decode_base64(tok, &mut bytes) || bytes.is_empty() {
            return Ok(None);
        }
        let Some(id) = parse_id(rank) else {
            return Ok(None);
        };
        try_push(&mut out, (bytes, id), WHAT)?;
    }
    let mut tokens: FxHashSet<&[u8]> = FxHashSet::default();
    try_reserve_set(&mut tokens, out.len(), WHAT)?;
    let unique = out.iter().all(|(b, _)| tokens.insert(b))
        && distinct(out.iter().map(|&(_, id)| id), out.len())?;
    Ok((unique && !out.is_empty()).then_some(out))
}

/// `formats/gpt2.py::read_merges_file` on decoded text: an optional `#version` first line,
/// then one `left right` pair a line; empty lines skipped.
pub fn parse_merges_text(text: &str) -> Read<Vec<(&str, &str)>> {
    const WHAT: &str = "the merges of a merges file";
    let mut out = try_vec(text.len() / 8, WHAT)?;
    for (n, line) in text.split('\n').enumerate() {
        let line = line.trim_end_matches('\r');
        if line.is_empty() || (n == 0 && line.starts_with("#version")) {
            continue;
        }
        let Some((a, b)) = line.split_once(' ') else {
            return Ok(None);
        };
        if a.is_empty() || b.is_empty() || b.contains(' ') {
            return Ok(None);
        }
        try_push(&mut out, (a, b), WHAT)?;
    }
    Ok(Some(out))
}

/// Whitespace as Python's `str.strip` and `str.isspace` see it: Unicode White_Space and the
/// four separators U+001C..U+001F.
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// A merge as its two halves, borrowed from the file's text.
pub type Pair<'a> = (&'a str, &'a str);

/// `files/clip.py::read_clip_files` (as `transformers`' CLIPTokenizer reads the files): the
/// token -> id object of `vocab.json` and the merges of `merges.txt` (the text stripped, a
/// `#version` first line dropped, then one `left right` pair a line). `Ok(None)` where that
/// reader raises or cleans the text first (invalid UTF-8 or JSON, anything but an object of ids
/// in 0..2^32, a CR, a blank line, a line that is no pair) and where Python's strip could see
/// other whitespace than this one: the caller then runs the Python reader. A repeated token
/// takes its last id, as `json.loads` does.
pub fn parse_clip_files<'m>(
    vocab_json: &[u8],
    merges_txt: &'m [u8],
) -> Read<(FxHashMap<String, u32>, Vec<Pair<'m>>)> {
    const WHAT: &str = "the merges of a tokenizer file";
    let Ok(text) = std::str::from_utf8(merges_txt) else {
        return Ok(None);
    };
    if text.contains('\r') {
        return Ok(None);
    }
    let body = text.trim_matches(py_space);
    let mut merges = try_vec(body.len() / 10, WHAT)?;
    if !body.is_empty() {
        for (n, line) in body.split('\n').enumerate() {
            if n == 0 && line.starts_with("#version") {
                continue;
            }
            let Some((a, b)) = line.split_once(' ') else {
                return Ok(None);
            };
            if a.is_empty() || b.is_empty() || b.contains(' ') {
                return Ok(None);
            }
            try_push(&mut merges, (a, b), WHAT)?;
        }
    }
    let Ok(json) = std::str::from_utf8(vocab_json) else {
        return Ok(None);
    };
    Ok(parse_vocab_object(json)?.map(|vocab| (vocab, merges)))
}

/// A JSON object of token -> id (`vocab.json`) straight into a hash map; `Ok(None)` for
/// anything else.
fn parse_vocab_object(json: &str) -> Read<FxHashMap<String, u32>> {
    use serde::de::{Deserializer, MapAccess, Visitor};
    use std::fmt;

    struct Object<'f>(&'f mut Option<Error>);
    impl<'de> Visitor<'de> for Object<'_> {
        type Value = FxHashMap<String, u32>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object of token -> id")
        }
        fn visit_map<A: MapAccess<'de>>(
            self,
            map: A,
        ) -> std::result::Result<Self::Value, A::Error> {
            vocab_map_entries(map, self.0)
        }
    }
    let mut failed = None;
    let mut de = serde_json::Deserializer::from_str(json);
    let vocab = (&mut de).deserialize_map(Object(&mut failed));
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(vocab.ok().filter(|_| de.end().is_ok()))
}

/// The serde error of a refused allocation `e`, remembered in `failed` (where the caller finds
/// it: serde's own error type cannot carry it).
pub(crate) fn refused<E: serde::de::Error>(failed: &mut Option<Error>, e: Error) -> E {
    *failed = Some(e);
    E::custom("out of memory")
}

/// A JSON string copied into a `String` allocated fallibly (a refusal: see [`refused`]).
pub(crate) struct OwnedStr<'f>(pub &'f mut Option<Error>);

impl<'de> serde::de::DeserializeSeed<'de> for OwnedStr<'_> {
    type Value = String;
    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<String, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> serde::de::Visitor<'de> for OwnedStr<'_> {
    type Value = String;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: serde::de::Error>(self, s: &str) -> std::result::Result<String, E> {
        crate::mem::try_string(s, "the strings of a tokenizer file").map_err(|e| refused(self.0, e))
    }
}

/// The entries of a JSON object of token -> id read by a serde visitor into a hash map (a
/// repeated key: the last, as a `serde_json::Value` map keeps); an id that is no `u32` is an
/// error, and so is a refused allocation (remembered in `failed`, see [`refused`]).
pub(crate) fn vocab_map_entries<'de, A: serde::de::MapAccess<'de>>(
    mut map: A,
    failed: &mut Option<Error>,
) -> std::result::Result<FxHashMap<String, u32>, A::Error> {
    const WHAT: &str = "the vocabulary of a tokenizer file";
    let mut out = FxHashMap::default();
    try_reserve_map(&mut out, map.size_hint().unwrap_or(0), WHAT)
        .map_err(|e| refused(failed, e))?;
    while let Some(key) = map.next_key_seed(OwnedStr(&mut *failed))? {
        let id: u64 = map.next_value()?;
        let id = u32::try_from(id).map_err(serde::de::Error::custom)?;
        // (amortized: the table doubles when full, as `insert` grows it)
        try_reserve_map(&mut out, 1, WHAT).map_err(|e| refused(failed, e))?;
        out.insert(key, id);
    }
    Ok(out)
}

/// Byte strings stored end to end (no allocation per string).
#[derive(Default, Debug)]
pub struct Flat {
    pub bytes: Vec<u8>,
    spans: Vec<(u32, u32)>,
}

const FLAT: &str = "the strings of a tokenizer file";

impl Flat {
    /// Room for `items` strings of `bytes` bytes in all (refused: out of memory); the bytes are
    /// pushed by the caller, after reserving them with [`Flat::reserve`].
    pub fn with_capacity(items: usize, bytes: usize) -> Result<Self> {
        Ok(Flat {
            bytes: try_vec(bytes, FLAT)?,
            spans: try_vec(items, FLAT)?,
        })
    }

    /// Room for `n` more bytes.
    pub fn reserve(&mut self, n: usize) -> Result<()> {
        try_reserve(&mut self.bytes, n, FLAT)
    }

    /// Close the string made of the bytes pushed since the last call; returns its index.
    pub fn end_item(&mut self, start: usize) -> Result<usize> {
        try_push(
            &mut self.spans,
            (start as u32, (self.bytes.len() - start) as u32),
            FLAT,
        )?;
        Ok(self.spans.len() - 1)
    }

    /// Close two strings: the bytes since `start`, split at `mid`.
    pub fn end_pair(&mut self, start: usize, mid: usize) -> Result<(usize, usize)> {
        try_push(&mut self.spans, (start as u32, (mid - start) as u32), FLAT)?;
        self.end_item(mid)?;
        Ok((self.spans.len() - 2, self.spans.len() - 1))
    }

    pub fn get(&self, i: usize) -> &[u8] {
        let (s, n) = self.spans[i];
        &self.bytes[s as usize..(s + n) as usize]
    }
}

/// A vocab entry of a byte-level file, decoded by the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A token whose spelling decodes to item `i` of the caller's [`Flat`].
    Token(usize),
    /// The entry of an added token (same id, same text): not a mergeable token.
    Added,
    /// A key with a character outside the byte-level alphabet.
    Unspelled,
}

/// bytes -> (id, entry index) of the decoded tokens.
struct Index<'a> {
    map: FxHashMap<&'a [u8], (u32, u32)>,
}

impl<'a> Index<'a> {
    /// None if two entries have the same bytes.
    fn new(tokens: impl Iterator<Item = (&'a [u8], u32, usize)>, n: usize) -> Read<Self> {
        let mut map = FxHashMap::default();
        try_reserve_map(&mut map, n, "the index of a vocabulary")?;
        for (b, id, at) in tokens {
            if map.insert(b, (id, at as u32)).is_some() {
                return Ok(None);
            }
        }
        Ok(Some(Index { map }))
    }

    /// Ids of both parts and (id, entry) of their concatenation, each a token.
    fn merge(&self, a: &[u8], b: &[u8], buf: &mut Vec<u8>) -> Option<MergeIds> {
        let ia = self.map.get(a)?.0;
        let ib = self.map.get(b)?.0;
        buf.clear();
        buf.extend_from_slice(a);
        buf.extend_from_slice(b);
        Some((ia, ib, *self.map.get(&buf[..])?))
    }
}

/// `(left id, right id, (merged id, merged entry))`.
type MergeIds = (u32, u32, (u32, u32));

/// The ids of every merge, looked up in parallel;
/// None if a part or a result is not a token.
fn merge_ids(index: &Index<'_>, parts: &Flat, merges: &[(usize, usize)]) -> Read<Vec<MergeIds>> {
    use rayon::prelude::*;
    // filled in place: rayon's collect would allocate infallibly
    let mut out = try_filled(
        merges.len(),
        (0, 0, (0, 0)),
        "the merges of a tokenizer file",
    )?;
    let found = out
        .par_iter_mut()
        .zip(merges)
        .with_min_len(4096)
        .try_for_each_init(Vec::new, |buf, (slot, &(a, b))| {
            *slot = index.merge(parts.get(a), parts.get(b), buf)?;
            Some(())
        });
    Ok(found.map(|()| out))
}

/// No id twice.
fn distinct(ids: impl Iterator<Item = u32>, n: usize) -> Result<bool> {
    let mut seen = FxHashSet::default();
    try_reserve_set(&mut seen, n, "the ids of a vocabulary")?;
    Ok(ids.into_iter().all(|i| seen.insert(i)))
}

/// `serialization.py::from_dict`, its vocab and merge checks, on decoded input: `vocab` holds
/// `(token, id)` (declined if an entry is not spelled in the alphabet); each merge names its two parts (items of `parts`), split at the one
/// space of its line. No id twice; each merge's parts are tokens whose concatenation is a
/// token with a larger id than both parts and than the previous merge's; one merge per
/// multi-byte token. Returns the merges as id pairs (None without a merge list); None if
/// anything is off.
pub fn toksmith_tables(
    tokens: &Flat,
    vocab: &[(Entry, u32)],
    merges: Option<(&Flat, &[(usize, usize)])>,
) -> Read<Option<Vec<(u32, u32)>>> {
    if vocab.iter().any(|&(e, _)| !matches!(e, Entry::Token(_))) {
        return Ok(None);
    }
    let Some(index) = index_tokens(tokens, vocab)? else {
        return Ok(None);
    };
    let Some((parts, merges)) = merges else {
        return Ok(Some(None));
    };
    let Some(ids) = merge_ids(&index, parts, merges)? else {
        return Ok(None);
    };
    let mut out = try_vec(merges.len(), "the merges of a tokenizer file")?;
    let mut last = None;
    for (ia, ib, (mid, _)) in ids {
        if last.is_some_and(|l| mid <= l) || mid <= ia || mid <= ib {
            return Ok(None);
        }
        last = Some(mid);
        out.push((ia, ib));
    }
    let multi = index.map.keys().filter(|b| b.len() > 1).count();
    Ok((out.len() == multi).then_some(Some(out)))
}

/// The index of a vocab's tokens; None if an id, or a token's bytes, occurs twice.
fn index_tokens<'a>(tokens: &'a Flat, vocab: &[(Entry, u32)]) -> Read<Index<'a>> {
    if !distinct(vocab.iter().map(|&(_, id)| id), vocab.len())? {
        return Ok(None);
    }
    Index::new(
        vocab
            .iter()
            .enumerate()
            .filter_map(|(k, &(e, id))| match e {
                Entry::Token(t) => Some((tokens.get(t), id, k)),
                _ => None,
            }),
        vocab.len(),
    )
}

/// `formats/_common.py::ranks_from_vocab_and_merges`, on decoded input: which vocab entries
/// are rank-table tokens, and which are leftovers (entries not spelled in the alphabet, then
/// multi-byte tokens made by no merge), both as entry indices in vocab order. Declines on a
/// duplicate id, a merge naming a non-token or making one, and merge results out of id order.
/// (The caller checks that an entry with an added token's id has that token's text.)
pub fn ranks_from_vocab_and_merges(
    tokens: &Flat,
    vocab: &[(Entry, u32)],
    parts: &Flat,
    merges: &[(usize, usize)],
) -> Read<(Vec<usize>, Vec<usize>)> {
    const WHAT: &str = "the tokens of a vocabulary";
    let Some(index) = index_tokens(tokens, vocab)? else {
        return Ok(None);
    };
    let mut produced = try_filled(vocab.len(), false, WHAT)?;
    let mut last = None;
    let Some(ids) = merge_ids(&index, parts, merges)? else {
        return Ok(None);
    };
    for (ia, ib, (mid, at)) in ids {
        if last.is_some_and(|l| mid < l) || mid <= ia || mid <= ib {
            return Ok(None);
        }
        last = Some(mid);
        produced[at as usize] = true;
    }
    let mut kept = try_vec(vocab.len(), WHAT)?;
    let mut leftovers: Vec<usize> = try_collect(
        (0..vocab.len()).filter(|&k| vocab[k].0 == Entry::Unspelled),
        WHAT,
    )?;
    for (k, &(e, _)) in vocab.iter().enumerate() {
        if let Entry::Token(t) = e {
            if tokens.get(t).len() > 1 && !produced[k] {
                try_push(&mut leftovers, k, WHAT)?;
            } else {
                kept.push(k);
            }
        }
    }
    Ok(Some((kept, leftovers)))
}

/// `files/huggingface.py::_ranks_ignore_merges`, on decoded input, for a model with
/// `"ignore_merges": true` whose merge list the strict reading
/// ([`ranks_from_vocab_and_merges`]) refuses for its order: `(kept, leftovers)` as there, with
/// every spelled token kept and only the unspelled entries left over. Declines where the
/// reference raises (a duplicate, a merge naming or making a non-token, merged ids decreasing
/// along the list, a split of a token into two tokens that the list lacks), and also where the
/// strict reading would accept the list (every merge in order): the reader then takes that
/// path, as the reference does.
///
/// The splits come from [`token_splits`] (no hashing of every prefix and suffix, which would
/// be quadratic in a token's length); each listed merge is one of them, so every split is
/// listed exactly when there are as many splits as distinct listed merges.
pub fn ranks_ignore_merges(
    tokens: &Flat,
    vocab: &[(Entry, u32)],
    parts: &Flat,
    merges: &[(usize, usize)],
) -> Read<(Vec<usize>, Vec<usize>)> {
    const WHAT: &str = "the tokens of a vocabulary";
    let Some(index) = index_tokens(tokens, vocab)? else {
        return Ok(None);
    };
    let mut last = None;
    let mut in_order = true; // what the strict reading checks
    let mut listed: FxHashSet<(u32, u32)> = FxHashSet::default();
    try_reserve_set(&mut listed, merges.len(), WHAT)?;
    let Some(ids) = merge_ids(&index, parts, merges)? else {
        return Ok(None);
    };
    for (ia, ib, (mid, _)) in ids {
        if last.is_some_and(|l| mid < l) {
            return Ok(None);
        }
        in_order &= mid > ia && mid > ib;
        last = Some(mid);
        listed.insert((ia, ib));
    }
    if in_order {
        return Ok(None);
    }
    let spelled: Vec<&[u8]> = try_collect(
        vocab.iter().filter_map(|&(e, _)| match e {
            Entry::Token(t) => Some(tokens.get(t)),
            _ => None,
        }),
        WHAT,
    )?;
    if token_splits(&spelled)?.len() != listed.len() {
        return Ok(None);
    }
    let mut kept = try_vec(vocab.len(), WHAT)?;
    let mut leftovers = Vec::new();
    for (k, &(e, _)) in vocab.iter().enumerate() {
        match e {
            Entry::Token(_) => kept.push(k),
            Entry::Unspelled => try_push(&mut leftovers, k, WHAT)?,
            Entry::Added => {}
        }
    }
    Ok(Some((kept, leftovers)))
}

/// Every split of a token into two tokens: `(token, left, right)` as indices into `tokens`
/// (distinct byte strings), in no particular order.
///
/// Time O(B log N) for N tokens of B bytes in all, whatever their lengths: the tokens that are
/// proper prefixes of each token come from one scan of the tokens in sorted order
/// ([`prefix_lists`]), those that are proper suffixes from a scan of the reversed tokens, and a
/// token of length n splits at k where a prefix of length k meets a suffix of length n - k
/// (two sorted lists merged). Hashing every prefix and suffix instead costs O(n^2) for a token
/// of length n; a hashed trie costs a random memory access per byte (three times slower on
/// Llama 3's vocabulary).
pub fn token_splits(tokens: &[&[u8]]) -> Result<Vec<(u32, u32, u32)>> {
    const WHAT: &str = "the splits of a vocabulary's tokens";
    // the reversed tokens end to end, then sliced
    let total = tokens.iter().map(|t| t.len()).sum();
    let mut flat = try_vec(total, WHAT)?;
    for t in tokens {
        flat.extend(t.iter().rev());
    }
    let mut reversed: Vec<&[u8]> = try_vec(tokens.len(), WHAT)?;
    let mut rest = &flat[..];
    for t in tokens {
        let (r, tail) = rest.split_at(t.len());
        reversed.push(r);
        rest = tail;
    }
    let (prefixes, suffixes) = rayon::join(|| prefix_lists(tokens), || prefix_lists(&reversed));
    let ((pspans, pitems), (sspans, sitems)) = (prefixes?, suffixes?);
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let n = t.len();
        let (ps, pl) = pspans[i];
        let prefixes = &pitems[ps as usize..(ps + pl) as usize];
        let (ss, sl) = sspans[i];
        let mut suffixes = sitems[ss as usize..(ss + sl) as usize]
            .iter()
            .rev()
            .peekable();
        // prefixes by increasing length k, suffixes by decreasing length: meet at k + m = n
        for &(k, left) in prefixes {
            if k == 0 {
                continue; // an empty token: no split has an empty part
            }
            let want = n - k as usize;
            while suffixes.next_if(|&&(m, _)| m as usize > want).is_some() {}
            if let Some(&&(m, right)) = suffixes.peek() {
                if m as usize == want {
                    try_push(&mut out, (i as u32, left, right), WHAT)?;
                }
            }
        }
    }
    Ok(out)
}

/// `files/huggingface.py::tiktoken_merges`: the merge list `transformers`' `TikTokenConverter`
/// writes for a rank table (every split of a token into two tokens), spelled in the byte-level
/// alphabet and ordered by (merged id, left id, right id, cut, merged token's bytes).
pub fn tiktoken_merges(ranks: &[(Vec<u8>, u32)]) -> Result<Vec<(String, String)>> {
    const WHAT: &str = "the merges of a rank table";
    let tokens: Vec<&[u8]> = try_collect(ranks.iter().map(|(t, _)| &t[..]), WHAT)?;
    let mut splits: Vec<(u32, u32, u32, usize, u32)> = try_collect(
        token_splits(&tokens)?.into_iter().map(|(t, l, r)| {
            let id = |k: u32| ranks[k as usize].1;
            (id(t), id(l), id(r), tokens[l as usize].len(), t)
        }),
        WHAT,
    )?;
    splits.sort_unstable_by(|a, b| {
        (a.0, a.1, a.2, a.3)
            .cmp(&(b.0, b.1, b.2, b.3))
            .then_with(|| tokens[a.4 as usize].cmp(tokens[b.4 as usize]))
    });
    let spell = |b: &[u8]| -> Result<String> {
        crate::mem::TextBuf::collect(
            b.iter().map(|&x| {
                char::from_u32(u32::from(bytelevel::BYTE_TO_CHAR[x as usize]))
                    .expect("in the alphabet")
            }),
            2 * b.len(),
            "the merges of a rank table",
        )
    };
    let mut out = try_vec(splits.len(), WHAT)?;
    for &(_, _, _, k, t) in &splits {
        let t = tokens[t as usize];
        out.push((spell(&t[..k])?, spell(&t[k..])?));
    }
    Ok(out)
}

/// For each of `keys` (distinct byte strings), the keys that are proper prefixes of it as
/// `(length, index)` by increasing length: `(spans, items)`, key `i`'s list being
/// `items[spans[i].0..][..spans[i].1]`.
///
/// In sorted order, the keys that are prefixes of the previous key form a chain (a stack);
/// those that are also prefixes of the next key are the ones no longer than the two keys'
/// common prefix (any prefix of the next key sorts between it and the previous key's
/// prefixes, so it is on the stack). Each common prefix is measured once: O(B) after the sort.
#[allow(clippy::type_complexity)]
fn prefix_lists(keys: &[&[u8]]) -> Result<(Vec<(u32, u32)>, Vec<(u32, u32)>)> {
    const WHAT: &str = "the prefixes of a vocabulary's tokens";
    let mut order: Vec<u32> = try_collect(0..keys.len() as u32, WHAT)?;
    order.sort_unstable_by(|&a, &b| keys[a as usize].cmp(keys[b as usize]));
    let mut spans = try_filled(keys.len(), (0u32, 0u32), WHAT)?;
    let mut items: Vec<(u32, u32)> = try_vec(keys.len(), WHAT)?;
    let mut stack: Vec<(u32, u32)> = Vec::new();
    let mut prev: &[u8] = &[];
    for &i in &order {
        let key = keys[i as usize];
        let common = prev.iter().zip(key).take_while(|(a, b)| a == b).count();
        while stack.last().is_some_and(|&(len, _)| len as usize > common) {
            stack.pop();
        }
        spans[i as usize] = (items.len() as u32, stack.len() as u32);
        try_reserve(&mut items, stack.len(), WHAT)?;
        items.extend_from_slice(&stack);
        try_push(&mut stack, (key.len() as u32, i), WHAT)?;
        prev = key;
    }
    Ok((spans, items))
}

/// `formats/_common.py::check_merges_agree`: whether each merge recovered from `vocab`'s
/// ranks is one of the file's merges (decoded parts, items of `parts`); `None` if the merges
/// cannot be recovered. The recovery and the set of listed pairs are built in parallel.
pub fn merges_listed(vocab: &Vocab, parts: &Flat, merges: &[(usize, usize)]) -> Read<bool> {
    let (recovered, listed) = rayon::join(
        || vocab.recover_merges(),
        || -> Result<_> {
            let mut listed: FxHashSet<(&[u8], &[u8])> = FxHashSet::default();
            try_reserve_set(&mut listed, merges.len(), "the merges of a tokenizer file")?;
            for &(a, b) in merges {
                listed.insert((parts.get(a), parts.get(b)));
            }
            Ok(listed)
        },
    );
    let listed = listed?;
    let recovered = match recovered {
        Ok(r) => r,
        Err(e @ crate::error::Error::OutOfMemory(_)) => return Err(e),
        Err(_) => return Ok(None),
    };
    for (a, b, _) in recovered {
        let (Ok(l), Ok(r)) = (vocab.token_bytes(a), vocab.token_bytes(b)) else {
            return Ok(None);
        };
        if !listed.contains(&(l, r)) {
            return Ok(Some(false));
        }
    }
    Ok(Some(true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytelevel;

    fn b64(bytes: &[u8]) -> String {
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut s = String::new();
        for c in bytes.chunks(3) {
            let v = (c[0] as u32) << 16
                | (*c.get(1).unwrap_or(&0) as u32) << 8
                | *c.get(2).unwrap_or(&0) as u32;
            for k in 0..4 {
                s.push(if k <= c.len() {
                    A[(v >> (18 - 6 * k)) as usize & 63] as char
                } else {
                    '='
                });
            }
        }
        s
    }

    #[test]
    fn base64_round_trips_and_declines_non_canonical() {
        for n in 0..40usize {
            let bytes: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            let mut out = Vec::new();
            assert_eq!(decode_base64(b64(&bytes).as_bytes(), &mut out), n > 0);
            if n > 0 {
                assert_eq!(out, bytes);
            }
        }
        for bad in [
            "QQ=", "QQ", "Q===", "QR==", "QQ==QUFB", "QU=B", "QUF-", "QUF\n", "=QUF",
        ] {
            assert!(!decode_base64(bad.as_bytes(), &mut Vec::new()), "{bad}");
        }
    }

    #[test]
    fn tiktoken_lines() {
        let raw = format!("{} 0\r\n\n  \n{} 1\n{} 2", b64(b"a"), b64(b"b"), b64(b"ab"));
        assert_eq!(
            parse_tiktoken(raw.as_bytes()).unwrap().unwrap(),
            vec![(b"a".to_vec(), 0), (b"b".to_vec(), 1), (b"ab".to_vec(), 2)]
        );
        for bad in [
            "YQ== 0\nYQ== 1",
            "YQ== 0\nYg== 0",
            "YQ== x",
            "YQ== 1 2",
            "YQ==  1",
            "YQ== 4294967296",
            "",
            "\n\n",
            "YQ==\t1",
        ] {
            assert!(parse_tiktoken(bad.as_bytes()).unwrap().is_none(), "{bad:?}");
        }
        assert_eq!(
            parse_tiktoken(b"YQ== 4294967295").unwrap().unwrap()[0].1,
            u32::MAX
        );
    }

    #[test]
    fn merges_text() {
        assert_eq!(
            parse_merges_text("#version: 0.2\r\nĠ t\n\nh e\r\n")
                .unwrap()
                .unwrap(),
            vec![("Ġ", "t"), ("h", "e")]
        );
        for bad in ["a b c", "a", " a", "a ", "x y\n#version"] {
            assert!(parse_merges_text(bad).unwrap().is_none(), "{bad:?}");
        }
    }

    /// Decoded tokens and merges the way the glue makes them.
    fn flat(items: &[&str]) -> Flat {
        let mut f = Flat::default();
        for s in items {
            let start = f.bytes.len();
            assert!(bytelevel::decode_into(s, &mut f.bytes));
            f.end_item(start).unwrap();
        }
        f
    }

    fn merges_of(lines: &[&str]) -> (Flat, Vec<(usize, usize)>) {
        let parts: Vec<&str> = lines.iter().flat_map(|l| l.split(' ')).collect();
        let f = flat(&parts);
        (f, (0..lines.len()).map(|k| (2 * k, 2 * k + 1)).collect())
    }

    const TOY: [&str; 5] = ["a", "b", "Ġ", "ab", "Ġab"];

    fn toy_vocab() -> Vec<(Entry, u32)> {
        (0..5).map(|i| (Entry::Token(i), i as u32)).collect()
    }

    #[test]
    fn toksmith_tables_accept_only_consistent_files() {
        let tokens = flat(&TOY);
        let (p, m) = merges_of(&["a b", "Ġ ab"]);
        assert_eq!(
            toksmith_tables(&tokens, &toy_vocab(), Some((&p, &m)))
                .unwrap()
                .unwrap(),
            Some(vec![(0, 1), (2, 3)])
        );
        assert_eq!(
            toksmith_tables(&tokens, &toy_vocab(), None).unwrap(),
            Some(None)
        );
        for bad in [
            &["Ġ ab", "a b"][..],
            &["a b"],
            &["a b", "Ġ b"],
            &["a b", "Ġa b", "Ġ ab"],
        ] {
            let (p, m) = merges_of(bad);
            assert!(
                toksmith_tables(&tokens, &toy_vocab(), Some((&p, &m)))
                    .unwrap()
                    .is_none(),
                "{bad:?}"
            );
        }
        let dup_id = [(Entry::Token(0), 0), (Entry::Token(1), 0)];
        assert!(toksmith_tables(&tokens, &dup_id, None).unwrap().is_none());
        let unspelled = [(Entry::Token(0), 0), (Entry::Unspelled, 1)];
        assert!(toksmith_tables(&tokens, &unspelled, None)
            .unwrap()
            .is_none());
    }

    #[test]
    fn vocab_and_merges_with_leftovers_and_added_tokens() {
        let tokens = flat(&["a", "b", "Ġ", "ab", "Ġab", "ba"]);
        let mut v: Vec<(Entry, u32)> = (0..5).map(|i| (Entry::Token(i), i as u32)).collect();
        v.push((Entry::Unspelled, 5));
        v.push((Entry::Token(5), 6));
        v.push((Entry::Added, 7));
        let (p, m) = merges_of(&["a b", "Ġ ab"]);
        let (kept, left) = ranks_from_vocab_and_merges(&tokens, &v, &p, &m)
            .unwrap()
            .unwrap();
        assert_eq!(kept, vec![0, 1, 2, 3, 4]);
        assert_eq!(left, vec![5, 6]);
        let (p, m) = merges_of(&["Ġ ab", "a b"]);
        assert!(ranks_from_vocab_and_merges(&tokens, &v, &p, &m)
            .unwrap()
            .is_none());
        let (p, m) = merges_of(&["a ba"]);
        assert!(ranks_from_vocab_and_merges(&tokens, &v, &p, &m)
            .unwrap()
            .is_none());
        v.push((Entry::Added, 7));
        assert!(
            ranks_from_vocab_and_merges(&tokens, &v, &Flat::default(), &[])
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn ignore_merges_several_merges_per_token() {
        // Llama 3's shape: "aab" is made by two merges, one from a part of higher id ("ab")
        let tokens = flat(&["a", "b", "aa", "aab", "ab", "Ġ"]);
        let mut v: Vec<(Entry, u32)> = (0..6).map(|i| (Entry::Token(i), i as u32)).collect();
        v.push((Entry::Unspelled, 6));
        v.push((Entry::Added, 7));
        let (p, m) = merges_of(&["a a", "aa b", "a ab", "a b"]);
        assert!(ranks_from_vocab_and_merges(&tokens, &v, &p, &m)
            .unwrap()
            .is_none());
        let (kept, left) = ranks_ignore_merges(&tokens, &v, &p, &m).unwrap().unwrap();
        assert_eq!(kept, vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(left, vec![6]);
        // a split the list lacks ("a ab"), merged ids going down, a non-token part
        for bad in [
            &["a a", "aa b", "a b"][..],
            &["a a", "a b", "aa b", "a ab"][..],
            &["a a", "aa b", "a ab", "a b", "a x"][..],
        ] {
            let (p, m) = merges_of(bad);
            assert!(
                ranks_ignore_merges(&tokens, &v, &p, &m).unwrap().is_none(),
                "{bad:?}"
            );
        }
        // a list in order is the strict reading's
        let tokens = flat(&TOY);
        let (p, m) = merges_of(&["a b", "Ġ ab"]);
        assert!(ranks_ignore_merges(&tokens, &toy_vocab(), &p, &m)
            .unwrap()
            .is_none());
    }

    /// Every split by brute force: each cut of each token, both halves looked up.
    fn splits_by_brute_force(tokens: &[&[u8]]) -> Vec<(u32, u32, u32)> {
        let at: FxHashMap<&[u8], u32> = tokens
            .iter()
            .enumerate()
            .map(|(i, &t)| (t, i as u32))
            .collect();
        let mut out = Vec::new();
        for (i, t) in tokens.iter().enumerate() {
            for k in 1..t.len() {
                if let (Some(&l), Some(&r)) = (at.get(&t[..k]), at.get(&t[k..])) {
                    out.push((i as u32, l, r));
                }
            }
        }
        out.sort_unstable();
        out
    }

    #[test]
    fn token_splits_are_every_cut_into_two_tokens() {
        // small alphabets make many tokens that are prefixes and suffixes of others
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..40 {
            let mut set: FxHashSet<Vec<u8>> = FxHashSet::default();
            let alphabet = 1 + round % 4;
            for _ in 0..(20 + round * 5) {
                let len = (next() % 9) as usize;
                set.insert((0..len).map(|_| b'a' + (next() % alphabet) as u8).collect());
            }
            let owned: Vec<Vec<u8>> = set.into_iter().collect();
            let tokens: Vec<&[u8]> = owned.iter().map(|t| &t[..]).collect();
            let mut got = token_splits(&tokens).unwrap();
            got.sort_unstable();
            assert_eq!(got, splits_by_brute_force(&tokens), "{owned:?}");
        }
        // one long run: every cut of a^n into a^k + a^(n-k)
        let owned: Vec<Vec<u8>> = (1..=300).map(|n| vec![b'a'; n]).collect();
        let tokens: Vec<&[u8]> = owned.iter().map(|t| &t[..]).collect();
        let mut got = token_splits(&tokens).unwrap();
        got.sort_unstable();
        assert_eq!(got.len(), 299 * 300 / 2);
        assert_eq!(got, splits_by_brute_force(&tokens));
    }

    #[test]
    fn listed_merges() {
        let mut ranks: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        ranks.push((b"ab".to_vec(), 256));
        ranks.push((b" ab".to_vec(), 257));
        let vocab = Vocab::new(ranks, vec![]).unwrap();
        let (p, m) = merges_of(&["a b", "Ġ ab", "Ġa b"]);
        assert_eq!(merges_listed(&vocab, &p, &m).unwrap(), Some(true));
        assert_eq!(merges_listed(&vocab, &p, &m[..1]).unwrap(), Some(false));
        // " ab" from " a" + "b" would need the token " a": not recoverable as listed
        let (p, m) = merges_of(&["a b", "Ġa b"]);
        assert_eq!(merges_listed(&vocab, &p, &m).unwrap(), Some(false));
        let mut ranks: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        ranks.push((b"abc".to_vec(), 256));
        let not_bpe = Vocab::new(ranks, vec![]).unwrap();
        assert_eq!(merges_listed(&not_bpe, &p, &m).unwrap(), None);
    }

    #[test]
    fn clip_files_as_the_python_reader_or_declined() {
        let vocab = br#"{"a": 0, "b": 1, "ab</w>": 2, "a": 3}"#;
        let (v, m) = parse_clip_files(vocab, b"#version: 0.2\na b</w>\nx y\n\n")
            .unwrap()
            .unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(v["a"], 3); // the last of a repeated key, as json.loads
        assert_eq!(m, vec![("a", "b</w>"), ("x", "y")]);
        // stripped as str.strip: U+001F and U+3000 are whitespace to Python
        let (_, m) = parse_clip_files(vocab, "\u{1f} a b\u{3000}\n".as_bytes())
            .unwrap()
            .unwrap();
        assert_eq!(m, vec![("a", "b")]);
        let (_, m) = parse_clip_files(vocab, b" \n\t").unwrap().unwrap();
        assert!(m.is_empty());
        // a header only as the first line: later it is a pair like any other
        let (_, m) = parse_clip_files(vocab, b"a b\n#version: 0.2\n")
            .unwrap()
            .unwrap();
        assert_eq!(m, vec![("a", "b"), ("#version:", "0.2")]);
        for merges in [
            &b"a b\r\nc d"[..],
            b"a b\n\nc d",
            b"a b\n \nc d",
            b"a  b",
            b"a b c",
            b"ab",
            b"a \nb c",
            b"\xff b",
        ] {
            assert!(
                parse_clip_files(vocab, merges).unwrap().is_none(),
                "{merges:?}"
            );
        }
        for vocab in [
            &br#"{"a": -1}"#[..],
            br#"{"a": 1.0}"#,
            br#"{"a": 4294967296}"#,
            br#"["a"]"#,
            br#"{"a": 1} x"#,
            b"\xef\xbb\xbf{}",
            br#"{"a": "1"}"#,
        ] {
            assert!(
                parse_clip_files(vocab, b"a b").unwrap().is_none(),
                "{vocab:?}"
            );
        }
    }
}
