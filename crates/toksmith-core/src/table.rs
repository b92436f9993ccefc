//! Open-addressing hash tables whose keys (up to 16 bytes) are stored inline in the slots:
//! the [`InlineKey`] packing of short byte strings, the linear `probe` shared by every such
//! table (the vocabulary's token lookup and the encoder's piece cache), and `InlineTable`,
//! the bytes -> id table of the vocabulary's short tokens.

/// Open-addressing tables for short tokens, keys stored inline: one probe sequence, no pointer
/// chase, no `memcmp` (a generic `HashMap<Box<[u8]>, _>` spends most of encoding time there).
/// Tokens of up to 8 bytes (most of them) live in 16-byte slots, so the table of a 100k vocab is
/// about 2 MB; 9-16 byte tokens in 32-byte slots; longer ones in a hash map.
#[derive(Clone, Debug)]
pub(crate) struct InlineTable<K: Copy + Default + Eq> {
    slots: Vec<Slot<K>>,
    shift: u32,
}

#[derive(Clone, Copy, Debug, Default)]
struct Slot<K> {
    key: K,
    id: u32,
    len: u16, // 0 = empty
    /// How far past this slot the keys whose home it is lie (the largest such distance;
    /// `u16::MAX`: as far as the next empty slot): a lookup that fails stops there instead of
    /// probing on to an empty slot.
    reach: u16,
}

impl<K: Copy> Slot<K> {
    #[inline(always)]
    fn read(&self) -> (K, usize) {
        (self.key, self.len as usize)
    }
}

pub trait InlineKey: Copy + Default + Eq {
    const MAX: usize;
    fn pack(bytes: &[u8]) -> Self;
    fn fold(self) -> u64;

    /// Home slot of a key of `len` bytes in a table of `2^(64 - shift)` slots.
    #[inline(always)]
    fn slot(self, len: usize, shift: u32) -> usize {
        (self
            .fold()
            .wrapping_add(len as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            >> shift) as usize
    }
}

/// Linear probing shared by the inline-key tables (the vocabulary's and the piece cache's):
/// from the home slot of `key` (`len` bytes), the index of the first slot that is empty or holds
/// that key. `read` gives a slot's key and length (length 0 = empty); `slots.len()` is a power
/// of two of `2^(64 - shift)`.
#[inline(always)]
pub(crate) fn probe<S, K: InlineKey>(
    slots: &[S],
    shift: u32,
    key: K,
    len: usize,
    read: impl Fn(&S) -> (K, usize),
) -> usize {
    let mask = slots.len() - 1;
    let mut i = key.slot(len, shift);
    loop {
        let (k, l) = read(&slots[i]);
        if l == 0 || (k == key && l == len) {
            return i;
        }
        i = (i + 1) & mask;
    }
}

/// Little-endian value of 1..=8 bytes, zero-extended, built from two overlapping loads (no
/// variable-length copy through the stack, which stalls store forwarding).
#[inline(always)]
fn load_le(b: &[u8]) -> u64 {
    let n = b.len();
    if n >= 4 {
        let lo = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64;
        let hi = u32::from_le_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]) as u64;
        lo | (hi << (8 * (n - 4)))
    } else if n >= 2 {
        let lo = u16::from_le_bytes([b[0], b[1]]) as u64;
        let hi = u16::from_le_bytes([b[n - 2], b[n - 1]]) as u64;
        lo | (hi << (8 * (n - 2)))
    } else if n == 1 {
        b[0] as u64
    } else {
        0
    }
}

/// The little-endian value of `text[s..s + len]` (1 to 8 bytes), zero-extended like
/// [`InlineKey::pack`]: one 8-byte load and a mask where 8 bytes from `s` lie inside `text`
/// (no branch on the length, which varies from piece to piece unpredictably).
#[inline(always)]
pub(crate) fn pack_at(text: &[u8], s: usize, len: usize) -> u64 {
    debug_assert!((1..=8).contains(&len));
    match text.get(s..s + 8) {
        Some(w) => u64::from_le_bytes(w.try_into().unwrap()) & (u64::MAX >> (64 - 8 * len)),
        None => load_le(&text[s..s + len]),
    }
}

impl InlineKey for u64 {
    const MAX: usize = 8;
    #[inline(always)]
    fn pack(bytes: &[u8]) -> Self {
        load_le(bytes)
    }
    #[inline(always)]
    fn fold(self) -> u64 {
        self
    }
}

#[cfg(test)]
#[test]
fn load_le_matches_padding() {
    let data: Vec<u8> = (1..=16).collect();
    for n in 0..=8 {
        let mut buf = [0u8; 8];
        buf[..n].copy_from_slice(&data[..n]);
        assert_eq!(load_le(&data[..n]), u64::from_le_bytes(buf), "n={n}");
    }
}

impl InlineKey for u128 {
    const MAX: usize = 16;
    #[inline(always)]
    fn pack(bytes: &[u8]) -> Self {
        // 9..=16 bytes: the first 8, then the rest (1..=8 bytes)
        let lo = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as u128;
        lo | ((load_le(&bytes[8..]) as u128) << 64)
    }
    #[inline(always)]
    fn fold(self) -> u64 {
        (self as u64) ^ ((self >> 64) as u64).rotate_left(29)
    }
}

impl<K: InlineKey> InlineTable<K> {
    pub(crate) fn new<'a>(
        entries: impl Iterator<Item = (&'a [u8], u32)> + Clone,
        min_len: usize,
    ) -> crate::error::Result<Self> {
        const WHAT: &str = "a vocabulary's lookup table";
        let fits = |b: &[u8]| b.len() >= min_len && b.len() <= K::MAX;
        let n = entries.clone().filter(|(b, _)| fits(b)).count();
        let cap = ((n * 3) / 2 + 1).next_power_of_two().max(16);
        let mut t = InlineTable {
            slots: crate::mem::try_filled(cap, Slot::default(), WHAT)?,
            shift: 64 - cap.trailing_zeros(),
        };
        // Inserted by rank: the low ranks are the frequent tokens, and those then sit in their
        // home slots (in hash-map order, a lookup of English text with o200k_base probed 0.84
        // slots past home on average, by rank 0.25: a branch on the probe count less often
        // mispredicted).
        let mut by_rank: Vec<(u32, &[u8])> = crate::mem::try_vec(n, WHAT)?;
        by_rank.extend(entries.filter(|(b, _)| fits(b)).map(|(b, id)| (id, b)));
        by_rank.sort_unstable_by_key(|&(id, _)| id);
        let mask = cap - 1;
        for (id, b) in by_rank {
            let key = K::pack(b);
            let i = probe(&t.slots, t.shift, key, b.len(), Slot::read);
            t.slots[i] = Slot {
                key,
                id,
                len: b.len() as u16,
                reach: 0,
            };
            let home = key.slot(b.len(), t.shift);
            let far = (i.wrapping_sub(home) & mask).min(u16::MAX as usize) as u16;
            let r = &mut t.slots[home].reach;
            *r = (*r).max(far);
        }
        Ok(t)
    }

    #[inline(always)]
    pub(crate) fn get(&self, bytes: &[u8]) -> Option<u32> {
        let key = K::pack(bytes);
        self.get_from(key, bytes.len(), self.home_of(key, bytes.len()))
    }

    /// The home slot of a packed key of `len` bytes.
    #[inline(always)]
    pub(crate) fn home_of(&self, key: K, len: usize) -> usize {
        key.slot(len, self.shift)
    }

    /// `get` of a key of `len` bytes from the home slot that [`InlineTable::home_of`] gave:
    /// the home slot, then the slots within its reach.
    #[inline(always)]
    pub(crate) fn get_from(&self, key: K, len: usize, home: usize) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let h = &self.slots[home & mask];
        if h.key == key && h.len as usize == len {
            return Some(h.id);
        }
        let far = match h.reach {
            u16::MAX => mask,
            r => r as usize,
        };
        for d in 1..=far {
            let s = &self.slots[(home + d) & mask];
            if s.len == 0 {
                return None;
            }
            if s.key == key && s.len as usize == len {
                return Some(s.id);
            }
        }
        None
    }

    /// Ask for the line of a home slot that [`InlineTable::home`] gave.
    #[inline(always)]
    pub(crate) fn prefetch_home(&self, home: usize) {
        crate::mem::prefetch(self.slots.as_ptr().wrapping_add(home));
    }

    /// Ask for the cache line where a lookup of `bytes` (at most `K::MAX` of them) starts,
    /// ahead of it.
    #[inline(always)]
    pub(crate) fn prefetch(&self, bytes: &[u8]) {
        let i = K::slot(K::pack(bytes), bytes.len(), self.shift);
        crate::mem::prefetch(self.slots.as_ptr().wrapping_add(i));
    }
}

/// A blocked Bloom filter over byte strings: two bits in one 64-byte block per key, 16 bits
/// per key, so about 1% of absent strings pass. Most pieces of non-Latin text longer than 8
/// bytes are not tokens, nor are most spans that a merge of such a piece looks up (they cross
/// character boundaries), and each such lookup in the vocabulary's big tables (13 MB for
/// o200k_base) is a cache miss; the filters (0.2 MB for o200k_base) answer most of them from
/// the cache. Used for strings of 9 bytes and more, and for up to 8 bytes with a non-ASCII byte
/// (short ASCII strings are mostly tokens: the filter would only add a load).
#[derive(Clone, Debug)]
pub(crate) struct Filter {
    blocks: Vec<[u64; 8]>,
    shift: u32,
}

/// Whether a string of up to 8 bytes packed by [`InlineKey::pack`] has a non-ASCII byte.
#[inline(always)]
pub(crate) fn packed_non_ascii(packed: u64) -> bool {
    packed & 0x8080_8080_8080_8080 != 0
}

impl Filter {
    /// A filter of the `keys` that `keep` selects.
    pub(crate) fn new<'a>(
        keys: impl Iterator<Item = &'a [u8]> + Clone,
        keep: impl Fn(&[u8]) -> bool,
    ) -> crate::error::Result<Self> {
        let n = keys.clone().filter(|k| keep(k)).count();
        let blocks = (n * 16 / 512 + 1).next_power_of_two();
        let mut f = Filter {
            blocks: crate::mem::try_filled(blocks, [0u64; 8], "a vocabulary's filter")?,
            shift: 64 - blocks.trailing_zeros(),
        };
        for k in keys.filter(|k| keep(k)) {
            let (b, bits) = f.locate(Self::hash(k));
            for bit in bits {
                f.blocks[b][bit >> 6] |= 1 << (bit & 63);
            }
        }
        Ok(f)
    }

    /// A hash of a string's length and of its first and last 8 bytes (the exact lookup after
    /// the filter sees the middle of longer ones).
    #[inline(always)]
    pub(crate) fn hash(key: &[u8]) -> u64 {
        let n = key.len();
        let x = if n <= 8 {
            load_le(key)
        } else {
            let a = u64::from_le_bytes(key[..8].try_into().unwrap());
            let b = u64::from_le_bytes(key[n - 8..].try_into().unwrap());
            a ^ b.rotate_left(29)
        };
        Filter::mix(x, n)
    }

    /// [`Filter::hash`] of a key of up to 8 bytes given packed (see [`InlineKey::pack`]).
    #[inline(always)]
    pub(crate) fn hash_packed(packed: u64, n: usize) -> u64 {
        Filter::mix(packed, n)
    }

    #[inline(always)]
    fn mix(x: u64, n: usize) -> u64 {
        let h = x.wrapping_add(n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h ^ (h >> 31)).wrapping_mul(0xBF58_476D_1CE4_E5B9)
    }

    /// The block and the two bits of a key's hash.
    #[inline(always)]
    fn locate(&self, h: u64) -> (usize, [usize; 2]) {
        // (`shift` is 64 for a single block: `checked_shr` gives block 0)
        let block = h.checked_shr(self.shift).unwrap_or(0) as usize;
        (block, [(h & 511) as usize, ((h >> 9) & 511) as usize])
    }

    /// Ask for the block that `may_contain(h)` reads, ahead of it.
    #[inline(always)]
    pub(crate) fn prefetch(&self, h: u64) {
        let (b, _) = self.locate(h);
        crate::mem::prefetch(self.blocks.as_ptr().wrapping_add(b));
    }

    /// False when the string whose [`Filter::hash`] is `h` is surely not in the set.
    #[inline(always)]
    pub(crate) fn may_contain(&self, h: u64) -> bool {
        let (b, [x, y]) = self.locate(h);
        let block = &self.blocks[b];
        (block[x >> 6] >> (x & 63)) & (block[y >> 6] >> (y & 63)) & 1 == 1
    }
}

#[cfg(test)]
#[test]
fn filter_has_no_false_negatives_and_few_false_positives() {
    let mut seed = 1u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let keys: Vec<Vec<u8>> = (0..20_000)
        .map(|_| {
            let len = 3 + (next() % 60) as usize;
            (0..len).map(|_| next() as u8).collect()
        })
        .collect();
    let f = Filter::new(keys.iter().map(|k| &k[..]), |_| true).unwrap();
    let has = |k: &[u8]| f.may_contain(Filter::hash(k));
    assert!(keys.iter().all(|k| has(k)));
    // strings that differ from a key in one byte (first, middle or last) or in length
    let mut passed = 0;
    for (i, k) in keys.iter().enumerate() {
        let mut o = k.clone();
        match i % 4 {
            0 => o[0] ^= 1,
            1 => o[k.len() - 1] ^= 0x80,
            2 => o.push(b'x'),
            _ => {
                o.pop();
                o.push(0xE4);
            }
        }
        passed += has(&o) as usize;
    }
    assert!(passed < keys.len() / 30, "{passed} false positives");
    // an empty set passes nothing
    let empty = Filter::new(std::iter::empty(), |_| true).unwrap();
    assert!(!empty.may_contain(Filter::hash(b"0123456789")));
    // a selection: only the kept keys are in
    let long = Filter::new(keys.iter().map(|k| &k[..]), |k| k.len() >= 9).unwrap();
    let short: Vec<_> = keys.iter().filter(|k| k.len() < 9).collect();
    let passed = short
        .iter()
        .filter(|k| long.may_contain(Filter::hash(k)))
        .count();
    assert!(passed < short.len() / 30 + 1, "{passed} of {}", short.len());
}

#[cfg(test)]
#[test]
fn lookups_from_home_match_get_and_low_ranks_sit_home() {
    // 1-8 byte strings; ranks given in reverse of insertion so the sort matters
    let words: Vec<Vec<u8>> = (0..5000u32)
        .map(|i| format!("{}", i * 7919 % 100_000).into_bytes())
        .chain([b"\x00".to_vec(), b"a\x00".to_vec(), b"a\x00\x00".to_vec()])
        .collect();
    let n = words.len() as u32;
    let t: InlineTable<u64> = InlineTable::new(
        words
            .iter()
            .enumerate()
            .map(|(i, w)| (&w[..], n - i as u32)),
        1,
    )
    .unwrap();
    let look = |w: &[u8]| {
        // the piece at the end of a text (short load) and inside one (8-byte load)
        let mut padded = w.to_vec();
        padded.extend_from_slice(b"tail0123");
        let (a, b) = (pack_at(w, 0, w.len()), pack_at(&padded, 0, w.len()));
        assert_eq!(a, b);
        assert_eq!(a, u64::pack(w));
        t.get_from(a, w.len(), t.home_of(a, w.len()))
    };
    for (i, w) in words.iter().enumerate() {
        assert_eq!(look(w), Some(n - i as u32));
        assert_eq!(t.get(w), Some(n - i as u32));
    }
    for absent in [
        &b"zzz"[..],
        b"a",
        b"a\x00\x00\x00",
        b"\x00\x00",
        b"99999999",
    ] {
        assert_eq!(look(absent), None);
        assert_eq!(t.get(absent), None);
    }
    // the lowest rank is inserted first, so it is found in its home slot
    let first = &words[words.len() - 1];
    let key = u64::pack(first);
    assert_eq!(t.slots[t.home_of(key, first.len())].key, key);
}

#[cfg(test)]
#[test]
fn reach_bounded_lookups_agree_with_a_map() {
    // random keys of 1-8 bytes from a small alphabet (many shared prefixes, clusters in
    // the table, probes that wrap around its end), looked up present and absent
    use crate::bpe::test_vocabs::xorshift;
    let mut seed = 0x9E37_79B9u64;
    let mut next = || xorshift(&mut seed);
    let key = |next: &mut dyn FnMut() -> u64| -> Vec<u8> {
        let n = 1 + (next() % 8) as usize;
        (0..n).map(|_| b"ab\x00c"[(next() % 4) as usize]).collect()
    };
    let mut want = std::collections::HashMap::new();
    for id in 0..3000u32 {
        let k = key(&mut next);
        want.entry(k).or_insert(id);
    }
    let t: InlineTable<u64> = InlineTable::new(want.iter().map(|(k, &v)| (&k[..], v)), 1).unwrap();
    assert!(
        t.slots.iter().any(|s| s.reach > 1),
        "the test should make clusters"
    );
    for _ in 0..20_000 {
        let k = key(&mut next);
        assert_eq!(t.get(&k), want.get(&k).copied(), "{k:?}");
    }
    for (k, &v) in &want {
        assert_eq!(t.get(k), Some(v));
    }
}
