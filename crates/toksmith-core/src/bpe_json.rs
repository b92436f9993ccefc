//! A JSON tokenizer file split for loading: its two big tables (a Hugging Face
//! `tokenizer.json`'s `model.vocab`, a 100k-entry object, and `model.merges`, a 100k-entry
//! list; a toksmith file's top-level `vocab` and `merges`) decoded natively, and the rest of the
//! document (a few kilobytes: pre-tokenizer, normalizer, added tokens...) handed back as JSON
//! text for the Python reader.
//!
//! Parsing the whole file with Python's `json` module builds 300k Python strings that the
//! reader then decodes again (about half of a cl100k load). Here the tables go straight from the
//! file's bytes to [`Flat`] buffers in the byte-level alphabet, ready for
//! [`crate::vocab_files`]'s checks.
//!
//! Like the rest of `vocab_files`, [`split`] *declines* (`None`) on anything unusual: invalid
//! JSON, a key twice in the document, the model or the vocab, a vocab value that is not an
//! integer in 0..2^32, a merge that is neither a `"left right"` string nor (in a
//! tokenizer.json) a pair of strings, or a file without a vocab where its layout keeps one. The
//! Python reader then parses the whole file itself and raises its usual message.

use crate::bytelevel;
use crate::error::Error;
use crate::mem::{try_push, try_reserve_set, try_vec};
use crate::vocab_files::{self, Entry, Flat, Read};
use rustc_hash::FxHashSet;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// The decoded tables of a JSON tokenizer file and the rest of its document.
#[derive(Debug, Default)]
pub struct BpeJson {
    /// The document as JSON text, with the vocab and merges left out.
    pub rest: String,
    /// Every vocab key as UTF-8, in file order.
    pub keys: Flat,
    /// Per vocab entry (file order): its id, and its spelling decoded from the byte-level
    /// alphabet (an item of `tokens`), or None if a character is outside the alphabet.
    pub entries: Vec<(u32, Option<usize>)>,
    /// The decoded spellings.
    pub tokens: Flat,
    /// The merges' decoded parts, and each merge's two part indices (empty without a list).
    pub parts: Flat,
    pub merges: Vec<(usize, usize)>,
    /// Whether the file has a merge list (a tokenizer.json's `model.merges`, a toksmith file's
    /// non-null `merges`).
    pub has_merges: bool,
    /// The allocation refused while decoding (the parse then stops; [`split`] returns it).
    failed: Option<Error>,
}

/// The serde error of a refused allocation, remembered in `failed`.
fn refused<E: de::Error>(failed: &mut Option<Error>, e: Error) -> E {
    *failed = Some(e);
    E::custom("out of memory")
}

/// The result of a parse that failed (`Ok(None)`: declined) or gave `out`.
fn finish(mut out: BpeJson, ok: bool) -> Read<BpeJson> {
    match out.failed.take() {
        Some(e) => Err(e),
        None => Ok(ok.then_some(out)),
    }
}

impl BpeJson {
    /// The vocab as `(entry, id)` for [`crate::vocab_files::ranks_from_vocab_and_merges`]: an
    /// entry whose id is in `added` must have that added token's text as its key and is
    /// [`Entry::Added`] (None otherwise). None as well if a key occurs twice (Python's `json`
    /// would keep only the last; the reference reader sees that document).
    pub fn vocab_entries<S: AsRef<str>>(
        &self,
        added: &rustc_hash::FxHashMap<u32, S>,
    ) -> Read<Vec<(Entry, u32)>> {
        const WHAT: &str = "the vocabulary of a tokenizer file";
        let mut out = try_vec(self.entries.len(), WHAT)?;
        // keys that are not spelled tokens, to find repeats among them; repeats among spelled
        // tokens have equal bytes, which the token index rejects
        let mut others: FxHashSet<&[u8]> = FxHashSet::default();
        let mut spelled_added = Vec::new();
        for (k, &(id, spelled)) in self.entries.iter().enumerate() {
            let key = self.keys.get(k);
            let entry = if let Some(text) = added.get(&id) {
                if key != text.as_ref().as_bytes() {
                    return Ok(None);
                }
                if let Some(t) = spelled {
                    try_push(&mut spelled_added, t, WHAT)?;
                }
                Entry::Added
            } else {
                match spelled {
                    Some(t) => Entry::Token(t),
                    None => Entry::Unspelled,
                }
            };
            if !matches!(entry, Entry::Token(_)) {
                try_reserve_set(&mut others, 1, WHAT)?;
                if !others.insert(key) {
                    return Ok(None);
                }
            }
            out.push((entry, id));
        }
        // an added token's key that is also a token's spelling is the same key twice
        if !spelled_added.is_empty() {
            let mut spelled: FxHashSet<&[u8]> = FxHashSet::default();
            try_reserve_set(&mut spelled, out.len(), WHAT)?;
            spelled.extend(out.iter().filter_map(|&(e, _)| match e {
                Entry::Token(t) => Some(self.tokens.get(t)),
                _ => None,
            }));
            if spelled_added
                .iter()
                .any(|&t| spelled.contains(self.tokens.get(t)))
            {
                return Ok(None);
            }
        }
        Ok(Some(out))
    }
}

/// Where a JSON tokenizer file keeps its tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Hugging Face `tokenizer.json`: `model.vocab` and `model.merges` (lines or pairs).
    HuggingFace,
    /// toksmith's own file: top-level `vocab` and `merges` (lines, or `null` for none).
    Toksmith,
}

/// Split a JSON tokenizer file (its raw bytes) into the rest of the document and its decoded
/// tables; None to let the Python reader handle the file (see the module docs).
pub fn split(raw: &[u8], layout: Layout) -> Read<BpeJson> {
    let mut out = BpeJson::default();
    let Some(mut de) = deserializer(raw) else {
        return Ok(None);
    };
    let rest = Members {
        out: &mut out,
        layout,
        in_model: false,
    }
    .deserialize(&mut de);
    let ok = match rest {
        Ok(rest) => {
            out.rest = rest;
            de.end().is_ok()
        }
        Err(_) => false,
    };
    finish(out, ok)
}

/// GPT-2's files, `encoder.json` (or `vocab.json`: one object, token -> id) and `vocab.bpe` (or
/// `merges.txt`: `"left right"` lines, read as [`vocab_files::parse_merges_text`] does), decoded;
/// None to let the Python reader handle them. The rest of the document is `{}`.
pub fn split_gpt2(vocab_json: &[u8], merges_text: &str) -> Read<BpeJson> {
    let mut out = BpeJson::default();
    let Some(mut de) = deserializer(vocab_json) else {
        return Ok(None);
    };
    let table = VocabTable { out: &mut out }.deserialize(&mut de);
    if table.is_err() || de.end().is_err() {
        return finish(out, false);
    }
    let Some(lines) = vocab_files::parse_merges_text(merges_text)? else {
        return Ok(None);
    };
    for (a, b) in lines {
        let merge = OneMerge {
            parts: &mut out.parts,
            merges: &mut out.merges,
            failed: &mut out.failed,
            lines_only: true,
        };
        if merge.pair::<serde_json::Error>(a, b).is_err() {
            return finish(out, false);
        }
    }
    out.has_merges = true;
    out.rest = "{}".to_string();
    finish(out, true)
}

/// A JSON reader over a file's bytes, once they are known to be UTF-8 (checked here in one pass:
/// the slice reader checks every string on its own, 15% of a split).
fn deserializer(raw: &[u8]) -> Option<serde_json::Deserializer<serde_json::de::StrRead<'_>>> {
    let text = std::str::from_utf8(raw).ok()?;
    Some(serde_json::Deserializer::from_str(text))
}

/// A map key, borrowed from the file where it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

/// Append `key: value` to a JSON object's text (`text` holds `{` and the members so far).
fn member(text: &mut crate::mem::TextBuf, key: &str, value: &str) {
    if text.len() > 1 {
        text.push(',');
    }
    // written straight into the text: no copy sized by the key
    serde_json::to_writer(&mut *text, key).expect("a str serializes");
    text.push(':');
    text.push_str(value);
}

/// A map's keys must be distinct: Python's `json` keeps the last of a repeated key.
fn first_time<E: de::Error>(
    seen: &mut FxHashSet<String>,
    key: &str,
    failed: &mut Option<Error>,
) -> Result<(), E> {
    const WHAT: &str = "the keys of a tokenizer file";
    if seen.contains(key) {
        return Err(E::custom("repeated key"));
    }
    let owned = crate::mem::try_string(key, WHAT).map_err(|e| refused(failed, e))?;
    try_reserve_set(seen, 1, WHAT).map_err(|e| refused(failed, e))?;
    seen.insert(owned);
    Ok(())
}

/// An object of the document (the top level, or a tokenizer.json's model): its tables decoded
/// into the output, the rest of its members returned as JSON text. Fails unless the tables'
/// object is found and has a vocab object.
struct Members<'a> {
    out: &'a mut BpeJson,
    layout: Layout,
    in_model: bool,
}

impl<'de> DeserializeSeed<'de> for Members<'_> {
    type Value = String;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Members<'_> {
    type Value = String;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let toksmith = self.layout == Layout::Toksmith;
        let tables_here = toksmith || self.in_model;
        let mut text = crate::mem::TextBuf::with_capacity(64, "the rest of a tokenizer file")
            .map_err(|e| refused(&mut self.out.failed, e))?;
        text.push('{');
        let mut seen = FxHashSet::default();
        let mut found = false;
        while let Some(Key(key)) = map.next_key::<Key>()? {
            first_time(&mut seen, &key, &mut self.out.failed)?;
            match &*key {
                "model" if !toksmith && !self.in_model => {
                    let model = map.next_value_seed(Members {
                        out: &mut *self.out,
                        layout: self.layout,
                        in_model: true,
                    })?;
                    member(&mut text, &key, &model);
                    found = true;
                }
                "vocab" if tables_here => {
                    map.next_value_seed(VocabTable {
                        out: &mut *self.out,
                    })?;
                    found = true;
                }
                "merges" if tables_here => {
                    map.next_value_seed(MergeList {
                        out: &mut *self.out,
                        toksmith,
                    })?;
                }
                _ => {
                    let raw: &RawValue = map.next_value()?;
                    member(&mut text, &key, raw.get());
                }
            }
        }
        if !found {
            return Err(de::Error::custom("no tables"));
        }
        text.push('}');
        text.finish().map_err(|e| refused(&mut self.out.failed, e))
    }
}

/// `model.vocab`: an object of token -> id.
struct VocabTable<'a> {
    out: &'a mut BpeJson,
}

impl<'de> DeserializeSeed<'de> for VocabTable<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

/// A vocab id: an integer in 0..2^32 (a float, a negative number or anything else fails).
struct Id(u32);

impl<'de> de::Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an id in 0..2^32")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Id, E> {
                u32::try_from(v)
                    .map(Id)
                    .map_err(|_| E::custom("id too large"))
            }
        }
        d.deserialize_u64(V)
    }
}

impl<'de> Visitor<'de> for VocabTable<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a vocab object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let out = self.out;
        while let Some(Key(key)) = map.next_key::<Key>()? {
            let Id(id) = map.next_value()?;
            let mut add = || -> crate::error::Result<()> {
                let start = out.keys.bytes.len();
                out.keys.reserve(key.len())?;
                out.keys.bytes.extend_from_slice(key.as_bytes());
                out.keys.end_item(start)?;
                let start = out.tokens.bytes.len();
                // (room for the spelling first: decode_into then never allocates)
                out.tokens.reserve(key.len())?;
                let spelled = if bytelevel::decode_into(&key, &mut out.tokens.bytes) {
                    Some(out.tokens.end_item(start)?)
                } else {
                    out.tokens.bytes.truncate(start);
                    None
                };
                try_push(
                    &mut out.entries,
                    (id, spelled),
                    "the vocabulary of a tokenizer file",
                )
            };
            add().map_err(|e| refused(&mut out.failed, e))?;
        }
        Ok(())
    }
}

/// The merge list: `"left right"` strings (exactly one space, both parts non-empty) or, in a
/// tokenizer.json, `[left, right]` pairs, each part spelled in the byte-level alphabet; in a
/// toksmith file, `null` for none.
struct MergeList<'a> {
    out: &'a mut BpeJson,
    toksmith: bool,
}

impl<'de> DeserializeSeed<'de> for MergeList<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for MergeList<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a merge list")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        if self.toksmith {
            Ok(()) // no merge list
        } else {
            Err(E::custom("merges: null"))
        }
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let out = self.out;
        out.has_merges = true;
        while seq
            .next_element_seed(OneMerge {
                parts: &mut out.parts,
                merges: &mut out.merges,
                failed: &mut out.failed,
                lines_only: self.toksmith,
            })?
            .is_some()
        {}
        Ok(())
    }
}

/// One merge, as a string or a pair.
struct OneMerge<'a> {
    parts: &'a mut Flat,
    merges: &'a mut Vec<(usize, usize)>,
    failed: &'a mut Option<Error>,
    lines_only: bool,
}

impl<'de> DeserializeSeed<'de> for OneMerge<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for OneMerge<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a merge")
    }
    fn visit_str<E: de::Error>(self, line: &str) -> Result<(), E> {
        let (a, b) = line.split_once(' ').ok_or_else(|| E::custom("no space"))?;
        self.pair(a, b)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        if self.lines_only {
            return Err(de::Error::custom("a pair where a line is expected"));
        }
        let a: Key = seq
            .next_element()?
            .ok_or_else(|| de::Error::custom("short"))?;
        let b: Key = seq
            .next_element()?
            .ok_or_else(|| de::Error::custom("short"))?;
        if seq.next_element::<de::IgnoredAny>()?.is_some() {
            return Err(de::Error::custom("long"));
        }
        self.pair(&a.0, &b.0)
    }
}

impl OneMerge<'_> {
    fn pair<E: de::Error>(self, a: &str, b: &str) -> Result<(), E> {
        let bad = || E::custom("not a byte-level merge");
        // a line has exactly one space; a space is outside the alphabet anyway
        if a.is_empty() || b.is_empty() || b.contains(' ') {
            return Err(bad());
        }
        let start = self.parts.bytes.len();
        // (room for both spellings first: decode_into then never allocates)
        self.parts
            .reserve(a.len() + b.len())
            .map_err(|e| refused(self.failed, e))?;
        if !bytelevel::decode_into(a, &mut self.parts.bytes) {
            return Err(bad());
        }
        let mid = self.parts.bytes.len();
        if !bytelevel::decode_into(b, &mut self.parts.bytes) {
            return Err(bad());
        }
        let pair = self
            .parts
            .end_pair(start, mid)
            .map_err(|e| refused(self.failed, e))?;
        try_push(self.merges, pair, "the merges of a tokenizer file")
            .map_err(|e| refused(self.failed, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_hf(raw: &[u8]) -> Option<BpeJson> {
        split(raw, Layout::HuggingFace).expect("no allocation refused")
    }

    fn doc(vocab: &str, merges: &str) -> String {
        format!(
            r#"{{"version":"1.0","added_tokens":[],"model":{{"type":"BPE","vocab":{vocab},"merges":{merges},"dropout":null}},"decoder":null}}"#
        )
    }

    #[test]
    fn splits_tables_from_the_rest() {
        let raw = doc(r#"{"a":0,"b":1,"ab":2,"\u0120":3}"#, r#"["a b"]"#);
        let s = split_hf(raw.as_bytes()).expect("accepted");
        assert_eq!(
            s.rest,
            r#"{"version":"1.0","added_tokens":[],"model":{"type":"BPE","dropout":null},"decoder":null}"#
        );
        assert_eq!(s.entries.len(), 4);
        assert_eq!(s.keys.get(3), "\u{0120}".as_bytes());
        let t = s.entries[3].1.expect("spelled");
        assert_eq!(s.tokens.get(t), b" ");
        assert_eq!(s.merges.len(), 1);
        let (a, b) = s.merges[0];
        assert_eq!((s.parts.get(a), s.parts.get(b)), (&b"a"[..], &b"b"[..]));
        assert!(s.has_merges);
    }

    #[test]
    fn pairs_and_lines_decode_alike() {
        let lines = split_hf(doc(r#"{"a":0}"#, r#"["a b","\u0120 c"]"#).as_bytes()).unwrap();
        let pairs = split_hf(doc(r#"{"a":0}"#, r#"[["a","b"],["Ġ","c"]]"#).as_bytes()).unwrap();
        assert_eq!(lines.parts.bytes, pairs.parts.bytes);
        assert_eq!(lines.merges, pairs.merges);
    }

    #[test]
    fn declines_what_the_reference_must_handle() {
        for (vocab, merges) in [
            (r#"{"a":1.0}"#, "[]"),        // float id
            (r#"{"a":-1}"#, "[]"),         // negative id
            (r#"{"a":4294967296}"#, "[]"), // id too large
            (r#"[]"#, "[]"),               // vocab not an object
            (r#"{"a":0}"#, r#"["a  b"]"#), // two spaces
            (r#"{"a":0}"#, r#"["ab"]"#),   // no space
            (r#"{"a":0}"#, r#"[["a"]]"#),  // short pair
            (r#"{"a":0}"#, r#"[["a","b","c"]]"#),
            (r#"{"a":0}"#, r#"["a 中"]"#), // outside the alphabet
            (r#"{"a":0}"#, r#"[1]"#),
            (r#"{"a":0}"#, r#"{}"#),
        ] {
            let raw = doc(vocab, merges);
            assert!(split_hf(raw.as_bytes()).is_none(), "{raw}");
        }
        assert!(
            split_hf(br#"{"model":{"type":"BPE"}}"#).is_none(),
            "no vocab"
        );
        assert!(split_hf(br#"{"version":"1.0"}"#).is_none(), "no model");
        assert!(split_hf(br#"{"model":{"vocab":{}},"model":{"vocab":{}}}"#).is_none());
        assert!(split_hf(br#"{"model":{"vocab":{},"vocab":{}}}"#).is_none());
        assert!(
            split_hf(br#"{"model":{"vocab":{}}} x"#).is_none(),
            "trailing text"
        );
        assert!(
            split_hf(br#"{"model":{"vocab":{"\ud800":0}}}"#).is_none(),
            "lone surrogate"
        );
        assert!(
            split_hf(b"\xef\xbb\xbf{\"model\":{\"vocab\":{}}}").is_none(),
            "BOM"
        );
    }

    #[test]
    fn repeated_keys_outside_the_alphabet_are_declined() {
        let s = split_hf(doc(r#"{"中":0,"中":1}"#, "[]").as_bytes()).unwrap();
        assert!(s
            .vocab_entries(&rustc_hash::FxHashMap::<u32, &str>::default())
            .unwrap()
            .is_none());
        let s = split_hf(doc(r#"{"<s>":0,"x":1}"#, "[]").as_bytes()).unwrap();
        let added: rustc_hash::FxHashMap<u32, &str> = [(0, "<s>")].into_iter().collect();
        let e = s.vocab_entries(&added).unwrap().unwrap();
        assert_eq!(e[0], (Entry::Added, 0));
        let wrong: rustc_hash::FxHashMap<u32, &str> = [(0, "<t>")].into_iter().collect();
        assert!(
            s.vocab_entries(&wrong).unwrap().is_none(),
            "id of an added token with another text"
        );
        // the added token's text is also spelled by a token entry: one key twice
        let s = split_hf(doc(r#"{"<s>":0,"<s>":1}"#, "[]").as_bytes()).unwrap();
        assert!(s.vocab_entries(&added).unwrap().is_none());
    }

    #[test]
    fn toksmith_files_keep_their_tables_at_the_top() {
        let raw = r#"{"format":"toksmith","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"],"model":{"vocab":{}}}"#;
        let s = split(raw.as_bytes(), Layout::Toksmith)
            .unwrap()
            .expect("accepted");
        assert_eq!(s.rest, r#"{"format":"toksmith","model":{"vocab":{}}}"#);
        assert_eq!(
            (s.entries.len(), s.merges.len(), s.has_merges),
            (3, 1, true)
        );
        let none = r#"{"format":"toksmith","vocab":{"a":0},"merges":null}"#;
        let s = split(none.as_bytes(), Layout::Toksmith)
            .unwrap()
            .expect("accepted");
        assert!(!s.has_merges && s.merges.is_empty());
        for bad in [
            r#"{"format":"toksmith","vocab":{"a":0},"merges":[["a","b"]]}"#, // pairs: lines only
            r#"{"format":"toksmith","merges":[]}"#,                          // no vocab
        ] {
            assert!(
                split(bad.as_bytes(), Layout::Toksmith).unwrap().is_none(),
                "{bad}"
            );
        }
        // a tokenizer.json's merges may not be null
        assert!(split_hf(br#"{"model":{"vocab":{},"merges":null}}"#).is_none());
    }

    #[test]
    fn gpt2_files() {
        let s = split_gpt2(
            br#"{"a":0,"b":1,"ab":2,"<|e|>":3}"#,
            "#version: 0.2\r\na b\r\n\n",
        )
        .unwrap()
        .expect("accepted");
        assert_eq!(
            (s.entries.len(), s.merges.len(), s.rest.as_str()),
            (4, 1, "{}")
        );
        let (a, b) = s.merges[0];
        assert_eq!((s.parts.get(a), s.parts.get(b)), (&b"a"[..], &b"b"[..]));
        assert!(
            split_gpt2(br#"{"a":0}"#, "a b c\n").unwrap().is_none(),
            "malformed line"
        );
        assert!(
            split_gpt2(br#"{"a":0}"#, "a 中\n").unwrap().is_none(),
            "outside the alphabet"
        );
        assert!(
            split_gpt2(br#"[1]"#, "").unwrap().is_none(),
            "not an object"
        );
        assert!(
            split_gpt2(br#"{"a":0} {}"#, "").unwrap().is_none(),
            "trailing text"
        );
    }
}
