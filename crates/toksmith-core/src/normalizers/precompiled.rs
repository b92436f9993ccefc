//! SentencePiece's precompiled character map, and sentencepiece's whole normalizer.
//!
//! The map (`precompiled_charsmap` of a `.model` file, base64 in a `tokenizer.json`) is a
//! little-endian u32 byte size of a darts-clone double-array trie, the trie's u32 units, then a
//! blob of NUL-terminated replacement strings; the trie maps an input byte string to the offset
//! of its replacement in the blob.
//!
//! * [`Precompiled::normalize_hf`] is Hugging Face's `Precompiled` normalizer: per extended
//!   grapheme cluster (under 6 bytes) the first (shortest) match of the whole cluster, else per
//!   character.
//! * [`SpmNormalizer`] is sentencepiece's `normalizer.cc`: longest match at each position, then
//!   whitespace handling (`remove_extra_whitespaces`, `add_dummy_prefix`, `escape_whitespaces`).

use unicode_segmentation::UnicodeSegmentation;

use crate::models::spm::NormalizerSpec;
use crate::models::trie::Trie;
use crate::{Error, Result};

#[derive(Debug, Clone, Default)]
pub struct Precompiled {
    units: Vec<u32>,
    normalized: Vec<u8>,
    /// `normalized` when the whole blob is UTF-8 (then every replacement that starts on a
    /// character boundary is too, and none needs checking on its own)
    normalized_str: Option<String>,
    /// Bit b set: no key starts with the ASCII byte b (the byte is its own normalization).
    plain_ascii: u128,
    /// Bit b set: the ASCII byte b alone is no key (a grapheme cluster of that one byte is its
    /// own normalization in the per-cluster version).
    lone_plain: u128,
}

/// darts-clone `offset()` of a unit.
#[inline]
fn offset(u: u32) -> usize {
    ((u >> 10) << ((u & (1 << 9)) >> 6)) as usize
}

impl Precompiled {
    pub fn from_blob(blob: &[u8]) -> Result<Self> {
        let bad = |m: String| Error::InvalidVocab(format!("precompiled_charsmap: {m}"));
        if blob.is_empty() {
            return Ok(Precompiled::default());
        }
        if blob.len() < 4 {
            return Err(bad(format!(
                "{} bytes, too short for its header",
                blob.len()
            )));
        }
        let size = u32::from_le_bytes([blob[0], blob[1], blob[2], blob[3]]) as usize;
        if !size.is_multiple_of(4) || size > blob.len() - 4 {
            return Err(bad(format!(
                "trie size {size} is not a multiple of 4 within the {} bytes after the header",
                blob.len() - 4
            )));
        }
        const WHAT: &str = "the normalization map of a SentencePiece model";
        let units = crate::mem::try_collect(
            blob[4..4 + size]
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            WHAT,
        )?;
        let normalized = crate::mem::try_bytes(&blob[4 + size..], WHAT)?;
        let normalized_str = match std::str::from_utf8(&normalized) {
            Ok(s) => Some(crate::mem::try_string(s, WHAT)?),
            Err(_) => None,
        };
        let mut p = Precompiled {
            units,
            normalized_str,
            normalized,
            plain_ascii: 0,
            lone_plain: 0,
        };
        p.plain_ascii = (0..128u8)
            .filter(|&b| !p.starts_any(b))
            .fold(0, |m, b| m | (1 << b));
        p.lone_plain = match p.root() {
            None => u128::MAX,
            Some(root) => (0..128u8)
                .filter(|&b| !matches!(p.child(root, b), Some((_, true))))
                .fold(0, |m, b| m | (1 << b)),
        };
        Ok(p)
    }

    /// Whether some key starts with byte `b`.
    fn starts_any(&self, b: u8) -> bool {
        self.root()
            .is_some_and(|root| self.child(root, b).is_some())
    }

    /// The root's position in the units (None: an empty map).
    fn root(&self) -> Option<usize> {
        self.units.first().map(|&u| offset(u))
    }

    /// darts-clone's step from the node at `pos` by byte `b`: the child's position and whether
    /// a key ends there.
    fn child(&self, pos: usize, b: u8) -> Option<(usize, bool)> {
        let pos = pos ^ b as usize;
        let u = *self.units.get(pos)?;
        // label(): the low byte and the leaf bit must match the key byte
        (u & ((1 << 31) | 0xff) == u32::from(b)).then(|| (pos ^ offset(u), (u >> 8) & 1 == 1))
    }

    /// One bit per BMP code point (0 for ASCII and surrogates): no key starts with the
    /// character's bytes and `lead_ok` accepts its lead byte.
    fn plain_bmp(&self, lead_ok: impl Fn(u8) -> bool) -> Vec<u64> {
        let mut bits = vec![0u64; 0x10000 / 64];
        let mut buf = [0u8; 4];
        for c in (0x80..0x10000u32).filter_map(char::from_u32) {
            let key = c.encode_utf8(&mut buf).as_bytes();
            if !lead_ok(key[0]) {
                continue;
            }
            let mut node = self.root();
            for &b in key {
                node = node.and_then(|n| self.child(n, b)).map(|(n, _)| n);
            }
            if node.is_none() {
                bits[c as usize / 64] |= 1 << (c as u32 % 64);
            }
        }
        bits
    }

    /// Bit b set (b ASCII): the byte b is no key by itself and no key starts with b followed
    /// by an ASCII byte, so b followed by an ASCII byte (or the end of the text) is its own
    /// normalization. The keys that start with an ASCII letter in NFKC maps are compositions
    /// with a combining mark (`e` U+0301), so letters qualify there though keys start with
    /// them.
    pub(crate) fn plain_before_ascii(&self) -> u128 {
        let Some(root) = self.root() else {
            return u128::MAX;
        };
        (0..128u8)
            .filter(|&b| match self.child(root, b) {
                None => true,
                Some((_, true)) => false,
                Some((node, false)) => (0..128u8).all(|c| self.child(node, c).is_none()),
            })
            .fold(0, |m, b| m | (1 << b))
    }

    /// The classes of the ASCII byte `b` where it is a key of its own that maps to one space:
    /// [`TO_SPACE`] with [`ALWAYS`] where no longer key starts with it, with [`BEFORE_ASCII`]
    /// where no longer key continues it with an ASCII byte (then the longest match there is
    /// the byte alone); 0 otherwise.
    fn to_space(&self, b: u8) -> u8 {
        let Some(root) = self.root() else { return 0 };
        let Some((node, true)) = self.child(root, b) else {
            return 0;
        };
        if self.longest(&[b]) != Some((" ", 1)) {
            return 0;
        }
        let continued = |c: u8| self.child(node, c).is_some();
        if (0..=255u8).all(|c| !continued(c)) {
            TO_SPACE | ALWAYS | BEFORE_ASCII
        } else if (0..128u8).all(|c| !continued(c)) {
            TO_SPACE | BEFORE_ASCII
        } else {
            0
        }
    }

    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    /// Whether every key that holds a byte of `set` (bit b for the ASCII byte b) is made of
    /// those bytes alone and replaced by one space: the keys spelled with bytes of the set are
    /// walked from the root (each must map to " "), and every unit labelled with a byte of the
    /// set must be one of those walks' (a unit no walk reaches counts against: the answer
    /// errs towards no).
    fn set_keys_are_spaces(&self, set: u128) -> bool {
        let Some(root) = self.root() else {
            return true;
        };
        let in_set = |b: u32| b < 128 && set >> b & 1 != 0;
        // (a set: a crafted map may make many units reachable)
        let mut reached = rustc_hash::FxHashSet::default();
        let mut todo = vec![(root, 0u32)];
        while let Some((pos, depth)) = todo.pop() {
            for b in (0..128u8).filter(|&b| in_set(u32::from(b))) {
                let Some((child, leaf)) = self.child(pos, b) else {
                    continue;
                };
                let unit = pos ^ b as usize;
                // (a trie this deep or a unit reached twice is not a plain set of keys)
                if depth >= 64 || !reached.insert(unit) {
                    return false;
                }
                if leaf {
                    let value = self.units.get(child).map(|&v| v & 0x7fff_ffff);
                    if value.and_then(|v| self.replacement(v)) != Some(" ") {
                        return false;
                    }
                }
                todo.push((child, depth + 1));
            }
        }
        self.units
            .iter()
            .enumerate()
            .all(|(q, &u)| !in_set(u & ((1 << 31) | 0xff)) || reached.contains(&q))
    }

    /// darts-clone `commonPrefixSearch`: `f(length, value)` for each key that prefixes `key`.
    fn common_prefixes(&self, key: &[u8], mut f: impl FnMut(usize, u32)) {
        let unit = |i: usize| self.units.get(i).copied();
        let Some(root) = unit(0) else { return };
        let mut pos = offset(root);
        for (i, &b) in key.iter().enumerate() {
            pos ^= b as usize;
            let Some(u) = unit(pos) else { return };
            // label(): the low byte and the leaf bit must match the key byte
            if u & ((1 << 31) | 0xff) != u32::from(b) {
                return;
            }
            pos ^= offset(u);
            if (u >> 8) & 1 == 1 {
                let Some(leaf) = unit(pos) else { return };
                f(i + 1, leaf & 0x7fff_ffff);
            }
        }
    }

    fn replacement(&self, value: u32) -> Option<&str> {
        let start = value as usize;
        let tail = self.normalized.get(start..)?;
        let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
        match &self.normalized_str {
            Some(all) => all.get(start..start + end),
            None => std::str::from_utf8(&tail[..end]).ok(),
        }
    }

    /// HF `transform`: the first (shortest) key that prefixes `chunk`.
    fn transform_first(&self, chunk: &str) -> Option<&str> {
        let mut first = None;
        self.common_prefixes(chunk.as_bytes(), |_, v| {
            if first.is_none() {
                first = Some(v);
            }
        });
        first.and_then(|v| self.replacement(v))
    }

    /// sentencepiece: the longest key that prefixes `input` -> (replacement, length consumed).
    pub fn longest(&self, input: &[u8]) -> Option<(&str, usize)> {
        let mut best: Option<(usize, u32)> = None;
        self.common_prefixes(input, |len, v| {
            if best.is_none_or(|(l, _)| len > l) {
                best = Some((len, v));
            }
        });
        let (len, v) = best?;
        Some((self.replacement(v)?, len))
    }

    /// Hugging Face's `Precompiled` normalizer.
    pub fn normalize_hf(&self, text: &str) -> Result<String> {
        if self.is_empty() {
            return crate::mem::try_string(text, "the normalized text");
        }
        let mut out = String::new();
        grow(&mut out, text.len())?;
        let bytes = text.as_bytes();
        // An ASCII character other than CR followed by another ASCII character (or the end) is a
        // grapheme cluster of its own: one that is no key by itself is copied as it is. The
        // rest goes through the clusters, cut where two ASCII characters (no CR LF) meet, which
        // is always a cluster boundary.
        let own_cluster = |i: usize| {
            let b = bytes[i];
            b < 0x80 && b != b'\r' && bytes.get(i + 1).is_none_or(|&n| n < 0x80)
        };
        let mut i = 0;
        while i < bytes.len() {
            if own_cluster(i) && self.lone_plain & (1 << bytes[i]) != 0 {
                let start = i;
                while i < bytes.len() && own_cluster(i) && self.lone_plain & (1 << bytes[i]) != 0 {
                    i += 1;
                }
                out.push_str(&text[start..i]);
                continue;
            }
            let start = i;
            i += 1;
            while i < bytes.len()
                && !(bytes[i] < 0x80 && bytes[i - 1] < 0x80 && bytes[i - 1] != b'\r')
            {
                i += 1;
            }
            self.clusters_hf(&text[start..i], &mut out);
        }
        Ok(out)
    }

    fn clusters_hf(&self, text: &str, out: &mut String) {
        for g in text.graphemes(true) {
            if g.len() < 6 {
                if let Some(r) = self.transform_first(g) {
                    out.push_str(r);
                    continue;
                }
            }
            for (i, c) in g.char_indices() {
                match self.transform_first(&g[i..i + c.len_utf8()]) {
                    Some(r) => out.push_str(r),
                    None => out.push(c),
                }
            }
        }
    }
}

/// sentencepiece's normalizer (`normalizer.cc` `Normalizer::Normalize`).
#[derive(Debug, Clone)]
pub struct SpmNormalizer {
    map: Precompiled,
    /// User-defined pieces pass through unnormalized (sentencepiece's prefix matcher).
    user_defined: Option<Trie>,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    escape_whitespaces: bool,
    treat_whitespace_as_suffix: bool,
    /// Per ASCII byte: [`ALWAYS`] where neither a rule nor a user-defined piece starts with
    /// it, so it normalizes to itself (a space to the space symbol, with the whitespace
    /// rules); [`BEFORE_ASCII`] where no user-defined piece starts with it and it is plain
    /// before an ASCII byte ([`Precompiled::plain_before_ascii`]).
    ascii_class: Box<[u8; 128]>,
    /// Bit c set (c a non-ASCII BMP code point): no rule and no user-defined piece starts with
    /// the character c, so it is its own normalization wherever it stands (empty: none).
    plain_bmp: Vec<u64>,
    /// Bit b set (b ASCII): the byte b separates words of the raw text (see
    /// [`SpmNormalizer::raw_separators`]); 0 where the text cannot be normalized by words.
    raw_separators: u128,
}

const SPACE_SYMBOL: &str = "\u{2581}";

/// [`SpmNormalizer`]'s ASCII classes: the byte is its own normalization before any byte, or
/// before an ASCII byte (or the end of the text); with [`TO_SPACE`], its normalization there
/// is a space instead.
const ALWAYS: u8 = 1;
const BEFORE_ASCII: u8 = 2;
/// The byte is a rule of its own whose replacement is one space (`\n`, `\t` in NFKC maps).
const TO_SPACE: u8 = 4;

impl SpmNormalizer {
    pub fn new(
        spec: &NormalizerSpec,
        user_defined: &[&str],
        treat_whitespace_as_suffix: bool,
    ) -> Result<Self> {
        let mut trie = Trie::new();
        for (i, s) in user_defined.iter().enumerate() {
            trie.insert(s.as_bytes(), i as u32)?;
        }
        trie.finish()?;
        let map = Precompiled::from_blob(&spec.precompiled_charsmap)?;
        let own = (0..128u8)
            .filter(|&b| !trie.starts_with_byte(b))
            .fold(0, |m, b| m | (1u128 << b));
        let plain_ascii = own
            & (0..128u8)
                .filter(|&b| !map.starts_any(b))
                .fold(0, |m, b| m | (1u128 << b));
        let plain_before_ascii = own & map.plain_before_ascii();
        let plain_bmp = map.plain_bmp(|lead| !trie.starts_with_byte(lead));
        let mut ascii_class = Box::new([0u8; 128]);
        for (b, class) in ascii_class.iter_mut().enumerate() {
            if plain_ascii & (1 << b) != 0 {
                *class |= ALWAYS | BEFORE_ASCII;
            }
            if plain_before_ascii & (1 << b) != 0 {
                *class |= BEFORE_ASCII;
            }
            if *class == 0 && own & (1 << b) != 0 {
                *class = map.to_space(b as u8);
            }
        }
        // separators: bytes that normalize to one space on their own, where the keys that
        // hold them are made of them alone and replaced by one space (`\r\n` in NFKC maps)
        // and no user-defined piece holds one
        let separators = (0..128u8)
            .filter(|&b| {
                own & (1 << b) != 0
                    && match map.longest(&[b]) {
                        Some((r, _)) => r == " ",
                        None => b == b' ',
                    }
            })
            .fold(0u128, |m, b| m | (1 << b));
        let by_words = spec.add_dummy_prefix
            && spec.remove_extra_whitespaces
            && spec.escape_whitespaces
            && !treat_whitespace_as_suffix
            && separators & (1 << b' ') != 0
            && !user_defined
                .iter()
                .any(|p| p.bytes().any(|b| b < 128 && separators >> b & 1 != 0))
            && map.set_keys_are_spaces(separators);
        Ok(SpmNormalizer {
            ascii_class,
            plain_bmp,
            map,
            user_defined: (!user_defined.is_empty()).then_some(trie),
            add_dummy_prefix: spec.add_dummy_prefix,
            remove_extra_whitespaces: spec.remove_extra_whitespaces,
            escape_whitespaces: spec.escape_whitespaces,
            treat_whitespace_as_suffix,
            raw_separators: if by_words { separators } else { 0 },
        })
    }

    /// The ASCII bytes (bit b for byte b) that separate the words of raw text, where this
    /// normalizer's output can be had word by word; 0 where it cannot.
    ///
    /// With `add_dummy_prefix`, `remove_extra_whitespaces` and `escape_whitespaces` (and the
    /// space not a suffix), the normalization of a text is `▁` before each of its words'
    /// normalizations, where the words are the runs between separators and each word's
    /// normalization is [`SpmNormalizer::normalize_word`] whenever that is one word (not
    /// empty, no space, no `▁`): a separator's normalization is one space wherever it stands
    /// (a run of them collapses to one `▁`, and leading and trailing ones are dropped: the
    /// rules that hold a separator are runs of separators replaced by one space), and no rule
    /// or user-defined piece reaches from a word into a separator, so each word normalizes as
    /// it does alone. (A word that is not one word after normalization changes
    /// how the spaces around it collapse: the caller normalizes the text from there on as a
    /// whole, which gives the same result as the whole text's normalization from there,
    /// the dummy prefix standing for the separator before it.)
    pub fn raw_separators(&self) -> u128 {
        self.raw_separators
    }

    /// The normalization of one raw word (no separator in it) into `out`, as the whole
    /// text's normalization writes it where the word stands after a separator (or at the
    /// start): spaces as `▁`, those that follow a space (or the word's start) dropped.
    /// Returns whether it is one word of the normalized text (not empty, no `▁` in it), and
    /// whether it ends with a space it kept (or is empty), which the separators after it
    /// collapse into.
    pub fn normalize_word(&self, word: &str, out: &mut String) -> Result<(bool, bool)> {
        let start = out.len();
        let spaced = self.normalize_into(word, true, SPACE_SYMBOL, out)?;
        let done = &out[start..];
        Ok((!done.is_empty() && !done.contains(SPACE_SYMBOL), spaced))
    }

    /// `NormalizePrefix`: the replacement of the longest rule at the start of `input` and the
    /// number of input bytes it consumes.
    fn prefix<'a>(&'a self, input: &'a str) -> (&'a str, usize) {
        let bytes = input.as_bytes();
        if let Some((len, _)) = self
            .user_defined
            .as_ref()
            .and_then(|t| t.longest_prefix(bytes))
        {
            return (&input[..len], len);
        }
        if let Some((r, len)) = self.map.longest(bytes) {
            return (r, len);
        }
        let len = input.chars().next().map_or(1, |c| c.len_utf8());
        (&input[..len], len)
    }

    /// The fast path of [`SpmNormalizer::normalize`]: the longest start of `input` whose ASCII
    /// characters are each their own normalization (see the plain tables), written to `out`
    /// with its spaces as `normalize` writes them. Returns the bytes consumed (0: the first
    /// character needs the charsmap) and the new `is_prev_space`.
    #[inline]
    fn plain_run(
        &self,
        input: &str,
        mut is_prev_space: bool,
        space: &str,
        out: &mut String,
    ) -> Result<(usize, bool)> {
        let bytes = input.as_bytes();
        let (mut i, mut from) = (0, 0);
        while let Some(&b) = bytes.get(i) {
            if b >= 0x80 {
                // a 2- or 3-byte character (BMP) that no rule starts with
                let (c, n) = match b {
                    0xc0..=0xdf if i + 1 < bytes.len() => {
                        (u32::from(b & 0x1f) << 6 | u32::from(bytes[i + 1] & 0x3f), 2)
                    }
                    0xe0..=0xef if i + 2 < bytes.len() => (
                        u32::from(b & 0x0f) << 12
                            | u32::from(bytes[i + 1] & 0x3f) << 6
                            | u32::from(bytes[i + 2] & 0x3f),
                        3,
                    ),
                    _ => break,
                };
                match self.plain_bmp.get(c as usize / 64) {
                    Some(&w) if w & (1 << (c % 64)) != 0 => {}
                    _ => break,
                }
                is_prev_space = false;
                i += n;
                continue;
            }
            let before_ascii = bytes.get(i + 1).is_none_or(|&c| c < 0x80);
            let need = if before_ascii { BEFORE_ASCII } else { ALWAYS };
            let class = self.ascii_class[b as usize];
            if class & need == 0 {
                break;
            }
            if b == b' ' || class & TO_SPACE != 0 {
                // as the charsmap path does with a space that maps to itself
                grow(out, i - from + space.len())?;
                out.push_str(&input[from..i]);
                if !is_prev_space {
                    out.push_str(space);
                }
                is_prev_space = self.remove_extra_whitespaces;
                from = i + 1;
            } else {
                is_prev_space = false;
            }
            i += 1;
        }
        grow(out, i - from)?;
        out.push_str(&input[from..i]);
        Ok((i, is_prev_space))
    }

    /// [`SpmNormalizer::normalize`] without the fast path (every character through the
    /// charsmap), the reference the fast path is tested against.
    #[doc(hidden)]
    pub fn without_fast_path(&self) -> Self {
        SpmNormalizer {
            plain_bmp: Vec::new(),
            ascii_class: Box::new([0; 128]),
            raw_separators: 0,
            ..self.clone()
        }
    }

    /// The main loop of [`SpmNormalizer::normalize`]: `input`'s rules applied and written to
    /// `out` (spaces as `space`), from the state `is_prev_space` (whether the output so far
    /// ends with a space the next ones collapse into); returns that state at its end.
    fn normalize_into(
        &self,
        mut input: &str,
        mut is_prev_space: bool,
        space: &str,
        out: &mut String,
    ) -> Result<bool> {
        while !input.is_empty() {
            let (run, prev) = self.plain_run(input, is_prev_space, space, out)?;
            if run > 0 {
                is_prev_space = prev;
                input = &input[run..];
                continue;
            }
            let (r, len) = self.prefix(input);
            let mut sp = r;
            if is_prev_space {
                sp = sp.trim_start_matches(' ');
            }
            if !sp.is_empty() {
                // at most 3 bytes (`▁`) for each byte (a space)
                grow(out, sp.len() * 3)?;
                if self.escape_whitespaces && sp.as_bytes().contains(&b' ') {
                    for (i, part) in sp.split(' ').enumerate() {
                        if i > 0 {
                            out.push_str(SPACE_SYMBOL);
                        }
                        out.push_str(part);
                    }
                } else {
                    out.push_str(sp);
                }
                is_prev_space = sp.ends_with(' ');
            }
            input = &input[len..];
            if !self.remove_extra_whitespaces {
                is_prev_space = false;
            }
        }
        Ok(is_prev_space)
    }

    /// The normalized text; [`Error::OutOfMemory`] when the output cannot grow.
    pub fn normalize(&self, text: &str) -> Result<String> {
        let mut input = text;
        let mut out = String::new();
        grow(&mut out, text.len() + 3)?;
        let space = if self.escape_whitespaces {
            SPACE_SYMBOL
        } else {
            " "
        };
        if self.remove_extra_whitespaces {
            while !input.is_empty() {
                let (r, len) = self.prefix(input);
                if r != " " {
                    break;
                }
                input = &input[len..];
            }
        }
        if input.is_empty() {
            return Ok(out);
        }
        if !self.treat_whitespace_as_suffix && self.add_dummy_prefix {
            out.push_str(space);
        }
        self.normalize_into(input, self.remove_extra_whitespaces, space, &mut out)?;
        if self.remove_extra_whitespaces {
            while out.ends_with(space) {
                out.truncate(out.len() - space.len());
            }
        }
        if self.treat_whitespace_as_suffix && self.add_dummy_prefix {
            grow(&mut out, space.len())?;
            out.push_str(space);
        }
        Ok(out)
    }
}

/// Room for `n` more bytes in `out`, or [`Error::OutOfMemory`].
#[inline]
fn grow(out: &mut String, n: usize) -> Result<()> {
    if out.capacity() - out.len() >= n {
        return Ok(());
    }
    out.try_reserve(n)
        .map_err(|_| crate::mem::oom("the normalized text", out.len().saturating_add(n), 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(add: bool, remove: bool, escape: bool) -> NormalizerSpec {
        NormalizerSpec {
            name: "identity".into(),
            precompiled_charsmap: vec![],
            add_dummy_prefix: add,
            remove_extra_whitespaces: remove,
            escape_whitespaces: escape,
        }
    }

    #[test]
    fn whitespace_rules_without_a_map() {
        let n = SpmNormalizer::new(&spec(true, true, true), &[], false).unwrap();
        assert_eq!(n.normalize("  a  b  ").unwrap(), "▁a▁b");
        assert_eq!(n.normalize("   ").unwrap(), "");
        assert_eq!(n.normalize("").unwrap(), "");
        let n = SpmNormalizer::new(&spec(true, false, true), &[], false).unwrap();
        assert_eq!(n.normalize("  a  b  ").unwrap(), "▁▁▁a▁▁b▁▁");
        let n = SpmNormalizer::new(&spec(false, true, false), &[], false).unwrap();
        assert_eq!(n.normalize(" a  b ").unwrap(), "a b");
        let n = SpmNormalizer::new(&spec(true, true, true), &[], true).unwrap();
        assert_eq!(n.normalize("a b").unwrap(), "a▁b▁");
    }

    /// The normalization rebuilt from the raw words as `Unigram::encode_raw` walks them: `▁`
    /// and each word's normalization, the `▁` of a kept space at a word's end left to the next
    /// word, the rest of the text normalized whole where a `▁` would be left at the end.
    fn by_words(n: &SpmNormalizer, text: &str) -> String {
        let seps = n.raw_separators();
        let is_sep = |b: u8| b < 128 && seps >> b & 1 != 0;
        let bytes = text.as_bytes();
        let mut out = String::new();
        let mut i = 0;
        loop {
            while i < bytes.len() && is_sep(bytes[i]) {
                i += 1;
            }
            if i == bytes.len() {
                return out;
            }
            let start = i;
            while i < bytes.len() && !is_sep(bytes[i]) {
                i += 1;
            }
            let mut word = String::from(SPACE_SYMBOL);
            let (_, spaced) = n.normalize_word(&text[start..i], &mut word).unwrap();
            if spaced {
                word.truncate(word.len() - SPACE_SYMBOL.len());
            }
            if word.ends_with(SPACE_SYMBOL) {
                return out + &n.normalize(&text[start..]).unwrap();
            }
            out += &word;
        }
    }

    #[test]
    fn raw_words_rebuild_the_normalization() {
        let m = crate::models::unigram::tests::t5_model();
        let alphabet = crate::models::unigram::tests::RAW_TEXT;
        let t5 = SpmNormalizer::new(&m.normalizer_spec, &[], false).unwrap();
        let seps = t5.raw_separators();
        for b in [b' ', b'\n', b'\t', b'\r'] {
            assert!(seps >> b & 1 == 1, "{b}");
        }
        assert_eq!(seps >> b'a' & 1, 0);
        let plain = SpmNormalizer::new(&spec(true, true, true), &[], false).unwrap();
        assert_eq!(plain.raw_separators(), 1 << b' ');
        let user = SpmNormalizer::new(&m.normalizer_spec, &["<x", "é"], false).unwrap();
        assert_ne!(user.raw_separators(), 0);
        for n in [&t5, &plain, &user] {
            for seed in 1..2000u64 {
                let text = crate::models::unigram::tests::random_text(seed, 40, alphabet);
                assert_eq!(by_words(n, &text), n.normalize(&text).unwrap(), "{text:?}");
            }
        }
        // whitespace rules or user-defined pieces that do not allow it
        let mut keep = m.normalizer_spec.clone();
        keep.remove_extra_whitespaces = false;
        let mut no_prefix = m.normalizer_spec.clone();
        no_prefix.add_dummy_prefix = false;
        for spec in [&keep, &no_prefix] {
            assert_eq!(
                SpmNormalizer::new(spec, &[], false)
                    .unwrap()
                    .raw_separators(),
                0
            );
        }
        let spaced = SpmNormalizer::new(&m.normalizer_spec, &["a b"], false).unwrap();
        assert_eq!(spaced.raw_separators(), 0);
        let suffix = SpmNormalizer::new(&m.normalizer_spec, &[], true).unwrap();
        assert_eq!(suffix.raw_separators(), 0);
    }

    #[test]
    fn fast_paths_match_the_charsmap_walk() {
        let m = crate::models::unigram::tests::t5_model();
        let alphabet = [
            " ",
            " ",
            "  ",
            "a",
            "e",
            "Q",
            "z",
            "<",
            "=",
            ">",
            "\u{301}",
            "\u{338}",
            "\n",
            "\t",
            "\r\n",
            "\u{3000}",
            "\u{a0}",
            "é",
            "ﬁ",
            "Ａ",
            "①",
            "中",
            "\u{1F600}",
            "\u{200b}",
            "0",
            "-",
            ".",
            "\u{7f}",
            "\u{1}",
            "\u{bc6}",
            "\u{bbe}",
            "\u{b95}",
            "\u{928}",
            "\u{93c}",
            "\u{ff61}",
            "\u{3099}",
            "\u{304b}",
            "\u{fb01}",
        ];
        let full = SpmNormalizer::new(&m.normalizer_spec, &[], false).unwrap();
        let mut keep_spaces = m.normalizer_spec.clone();
        keep_spaces.remove_extra_whitespaces = false;
        let mut no_escape = m.normalizer_spec.clone();
        no_escape.escape_whitespaces = false;
        for spec in [&m.normalizer_spec, &keep_spaces, &no_escape] {
            for user in [&[][..], &["e<", "ab"][..], &["\n", "\t\t"][..]] {
                let fast = SpmNormalizer::new(spec, user, false).unwrap();
                let slow = fast.without_fast_path();
                for seed in 1..300u64 {
                    let text = crate::models::unigram::tests::random_text(seed, 60, &alphabet);
                    assert_eq!(
                        fast.normalize(&text).unwrap(),
                        slow.normalize(&text).unwrap(),
                        "{text:?}"
                    );
                }
            }
        }
        // and the Hugging Face per-cluster version against a charsmap walk per cluster
        let map = &full.map;
        for seed in 1..300u64 {
            let text = crate::models::unigram::tests::random_text(seed, 60, &alphabet);
            let mut walked = String::new();
            map.clusters_hf(&text, &mut walked);
            assert_eq!(map.normalize_hf(&text).unwrap(), walked, "{text:?}");
        }
        // the tables: letters are plain before ASCII in NFKC maps, never the control bytes
        assert_eq!(full.ascii_class[usize::from(b'a')], BEFORE_ASCII);
        // `\n` and `\t` map to a space (and no longer key starts with them)
        assert_eq!(
            full.ascii_class[usize::from(b'\n')],
            TO_SPACE | ALWAYS | BEFORE_ASCII
        );
        assert_eq!(
            full.ascii_class[usize::from(b'\t')],
            TO_SPACE | ALWAYS | BEFORE_ASCII
        );
        assert_eq!(full.ascii_class[usize::from(b'\x01')], 0);
        let user = SpmNormalizer::new(&m.normalizer_spec, &["\n"], false).unwrap();
        assert_eq!(user.ascii_class[usize::from(b'\n')], 0);
        assert_eq!(full.ascii_class[usize::from(b'0')], ALWAYS | BEFORE_ASCII);
    }

    #[test]
    fn bad_blobs_are_errors() {
        assert!(Precompiled::from_blob(&[1, 0]).is_err());
        assert!(Precompiled::from_blob(&[8, 0, 0, 0, 1, 2, 3, 4]).is_err());
        assert!(Precompiled::from_blob(&[3, 0, 0, 0, 1, 2, 3]).is_err());
        // a trie whose units point anywhere never panics
        let junk: Vec<u8> = [16u32, 0xffff_ffff, 0x1234_5678, 0xdead_beef, 0x0000_0161]
            .iter()
            .flat_map(|u| u.to_le_bytes())
            .chain(*b"xy\0")
            .collect();
        let p = Precompiled::from_blob(&junk).unwrap();
        let _ = p.normalize_hf("abc\u{0}xyz é");
        let _ = p.longest(b"\xff\x00abc");
    }
}
