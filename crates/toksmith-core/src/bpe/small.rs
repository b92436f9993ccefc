//! tiktoken's merge for short pieces: O(n·m) over three small arrays, no heap, no hashing
//! beyond the rank lookups. [`Scratch`] holds its buffers (and those of the long merge), reused
//! from one piece to the next.

use crate::bpe::grid::PairGrid;
use crate::bpe::long::LongWork;
use crate::bpe::memo::SpanMemo;
use crate::error::Result;
use crate::mem::try_reserve;
use crate::vocab::Vocab;

/// Pieces at least this long use `bpe_long`.
pub const HEAP_THRESHOLD: usize = 128;

/// Reusable buffers for `bpe_small`, grown as needed and never cleared (clearing arrays on
/// every call cost more than the merge of a short word).
#[derive(Default)]
pub struct Scratch {
    start: Vec<u32>,
    rank: Vec<u32>,
    id: Vec<u32>,
    /// lookups of the spans of non-ASCII pieces (`memo.rs`)
    memo: SpanMemo,
    /// the piece being merged and 8 bytes after it (whatever they hold): a span of up to 8
    /// bytes is packed with one load and a mask, with no branch on its length
    padded: Vec<u8>,
    pub(crate) long: LongWork,
}

impl Scratch {
    /// The `start`, `rank` and `id` arrays for `n` tokens (`n + 1` slots each), grown first if
    /// they are shorter (never below the heap threshold, so short pieces never grow them).
    /// (`piece` is copied into the padded buffer, which comes fifth.)
    #[allow(clippy::type_complexity)] // (three arrays, the memo and the buffer, borrowed together)
    fn arrays(
        &mut self,
        piece: &[u8],
    ) -> (&mut [u32], &mut [u32], &mut [u32], &mut SpanMemo, &[u8]) {
        let n = piece.len();
        if self.start.len() <= n {
            let size = (n + 1).max(HEAP_THRESHOLD + 1);
            self.start.resize(size, 0);
            self.rank.resize(size, 0);
            self.id.resize(size, 0);
            self.padded.resize(size + 8, 0);
        }
        self.padded[..n].copy_from_slice(piece);
        (
            &mut self.start[..=n],
            &mut self.rank[..=n],
            &mut self.id[..=n],
            &mut self.memo,
            &self.padded[..n + 8],
        )
    }
}

/// tiktoken-style merge of a piece (meant for short ones: O(n·m)). Appends the ids to `out`
/// ([`crate::error::Error::OutOfMemory`] when `out` cannot grow).
///
/// Tokens are kept in three arrays, compacted after each merge (no allocation, no `memmove`
/// calls): `start[i]` (byte offset of token i), `rank[i]` (rank of token i + token i+1, `MAX` if
/// none) and `id[i]`. A merged token's id is the rank of the pair that made it, so no lookup is
/// needed at the end; the first round of pair ranks comes from the two-byte table.
pub fn bpe_small(
    vocab: &Vocab,
    piece: &[u8],
    limit: u32,
    scratch: &mut Scratch,
    out: &mut Vec<u32>,
) -> Result<()> {
    let n = piece.len();
    let byte_ids = vocab.byte_ids();
    if n < 2 {
        try_reserve(out, n, "the ids")?;
        out.extend(piece.iter().map(|&b| byte_ids[b as usize]));
        return Ok(());
    }
    let first_wide = first_non_ascii(piece);
    if let (Some(b), u32::MAX) = (first_wide, limit) {
        if bpe_atoms(vocab, piece, b, scratch, out, usize::MAX)? {
            return Ok(());
        }
    }
    let (start, rank, id, memo, padded) = scratch.arrays(piece);
    for i in 0..n {
        start[i] = i as u32;
        id[i] = byte_ids[piece[i] as usize];
    }
    start[n] = n as u32;
    for i in 0..n - 1 {
        let r = vocab.pair_table[((piece[i] as usize) << 8) | piece[i + 1] as usize];
        rank[i] = if r < limit { r } else { u32::MAX };
    }
    // The first merges mostly join a byte pair with a neighbouring byte: the lookups of the
    // 3-byte spans come next, so their table lines are requested now, all at once.
    if n <= 64 {
        if first_wide.is_none() {
            for w in piece.windows(3) {
                vocab.prefetch_short(w);
            }
            for w in piece.windows(4) {
                vocab.prefetch_short(w);
            }
        } else {
            // Most spans that cross a character boundary are not tokens (the filters answer
            // them without the table): only whole 3-byte characters and pairs of 2-byte ones,
            // which mostly are tokens, are worth asking for.
            for (i, &b) in piece.iter().enumerate() {
                let two = |j: usize| piece.get(j).is_some_and(|&c| (0xC0..0xE0).contains(&c));
                if b >= 0xE0 && i + 3 <= n {
                    vocab.prefetch_short(&piece[i..i + 3]);
                } else if two(i) && two(i + 2) && i + 4 <= n {
                    vocab.prefetch_short(&piece[i..i + 4]);
                }
            }
        }
    }
    rank[n - 1] = u32::MAX;
    let m = match first_wide {
        Some(b) if memo_pays(b) => {
            merge_loop(padded, start, rank, id, n, Pairs::memo(vocab, limit, memo))
        }
        _ => merge_loop(padded, start, rank, id, n, Pairs::plain(vocab, limit)),
    };
    try_reserve(out, m, "the ids")?;
    out.extend_from_slice(&id[..m]);
    Ok(())
}

/// The first byte of `piece` over 0x7F, found 8 bytes at a time: the short merge's one scan
/// of its piece (it tells the ASCII path from the others too).
#[inline(always)]
fn first_non_ascii(piece: &[u8]) -> Option<u8> {
    let mut words = piece.chunks_exact(8);
    for (k, w) in words.by_ref().enumerate() {
        let high = u64::from_le_bytes(w.try_into().unwrap()) & 0x8080_8080_8080_8080;
        if high != 0 {
            return Some(piece[8 * k + (high.trailing_zeros() / 8) as usize]);
        }
    }
    words.remainder().iter().find(|&&b| b >= 0x80).copied()
}

/// The merge of a non-ASCII piece (`first_wide`: its first byte over 0x7F) with the whole
/// vocabulary, started from the characters that may start whole (`atoms.rs`), when there are
/// any and they leave fewer than `max` tokens to merge; `false` (nothing written) otherwise.
pub(crate) fn bpe_atoms(
    vocab: &Vocab,
    piece: &[u8],
    first_wide: u8,
    scratch: &mut Scratch,
    out: &mut Vec<u32>,
    max: usize,
) -> Result<bool> {
    let Some(atoms) = vocab.atoms() else {
        return Ok(false);
    };
    let n = piece.len();
    let (start, rank, id, memo, padded) = scratch.arrays(piece);
    let m = atoms.initial(piece, vocab.byte_ids(), start, id);
    if m == n || m >= max {
        return Ok(false);
    }
    let limit = u32::MAX;
    let m = if memo_pays(first_wide) {
        from_atoms(padded, start, rank, id, m, Pairs::memo(vocab, limit, memo))
    } else {
        from_atoms(padded, start, rank, id, m, Pairs::plain(vocab, limit))
    };
    try_reserve(out, m, "the ids")?;
    out.extend_from_slice(&id[..m]);
    Ok(true)
}

/// Whether the spans of a non-ASCII piece (`first_wide`: its first byte over 0x7F) go through
/// the per-thread memo: not in CJK ideographs (that byte is a lead byte of U+4E00..U+9FFF),
/// which have too many characters for it to help.
#[inline(always)]
fn memo_pays(first_wide: u8) -> bool {
    !(0xE4..=0xE9).contains(&first_wide)
}

/// How the merge loop looks a span's rank up (`u32::MAX` when it is not a token below the
/// limit): straight in the vocabulary, or through this thread's [`SpanMemo`].
trait Lookup {
    /// (`key`: `s` packed, when it is at most 8 bytes long)
    fn rank_below(&mut self, s: &[u8], key: u64) -> u32;
}

struct Plain<'a> {
    vocab: &'a Vocab,
    limit: u32,
}

impl Lookup for Plain<'_> {
    #[inline(always)]
    fn rank_below(&mut self, s: &[u8], key: u64) -> u32 {
        let r = if s.len() <= 8 {
            self.vocab.rank_packed(key, s.len())
        } else {
            self.vocab.rank(s)
        };
        match r {
            Some(r) if r < self.limit => r,
            _ => u32::MAX,
        }
    }
}

struct Memo<'a> {
    vocab: &'a Vocab,
    limit: u32,
    memo: &'a mut SpanMemo,
}

impl Lookup for Memo<'_> {
    #[inline(always)]
    fn rank_below(&mut self, s: &[u8], key: u64) -> u32 {
        let r = self.memo.rank_packed(self.vocab, s, key);
        if r < self.limit {
            r
        } else {
            u32::MAX
        }
    }
}

/// The merge loop's pair lookups: two tokens of low rank from the vocabulary's [`PairGrid`]
/// when it has one, any other pair by its bytes through `L`.
struct Pairs<'a, L> {
    by_bytes: L,
    grid: Option<&'a PairGrid>,
    limit: u32,
}

impl<'a> Pairs<'a, Plain<'a>> {
    #[inline(always)]
    fn plain(vocab: &'a Vocab, limit: u32) -> Self {
        let by_bytes = Plain { vocab, limit };
        Pairs {
            by_bytes,
            grid: vocab.pair_grid(),
            limit,
        }
    }
}

impl<'a> Pairs<'a, Memo<'a>> {
    /// Through `memo`, bound to `vocab` first.
    #[inline(always)]
    fn memo(vocab: &'a Vocab, limit: u32, memo: &'a mut SpanMemo) -> Self {
        memo.bind(vocab);
        let by_bytes = Memo { vocab, limit, memo };
        Pairs {
            by_bytes,
            grid: vocab.pair_grid(),
            limit,
        }
    }
}

impl<L: Lookup> Pairs<'_, L> {
    /// The rank of token `a` followed by token `b`, whose bytes are `padded[s..e]` (`padded`:
    /// the piece and 8 bytes more).
    #[inline(always)]
    fn pair(&mut self, a: u32, b: u32, padded: &[u8], s: usize, e: usize) -> u32 {
        match self.grid.and_then(|g| g.get(a, b)) {
            Some(r) if r < self.limit => r,
            Some(_) => u32::MAX,
            None => {
                let w = u64::from_le_bytes(padded[s..s + 8].try_into().unwrap());
                let key = w & (u64::MAX >> (64 - 8 * (e - s).clamp(1, 8)));
                self.by_bytes.rank_below(&padded[s..e], key)
            }
        }
    }
}

/// Above this many tokens, the merge loop searches and shifts its arrays with vector code.
const WIDE: usize = 16;

/// The smallest rank of `ranks` and its first position (`(u32::MAX, 0)` when every pair is
/// absent): the next merge of a rank-ordered merge loop.
#[inline(always)]
pub(super) fn first_min(ranks: &[u32]) -> (u32, usize) {
    if ranks.len() >= WIDE {
        // Long pieces (runs of CJK, kana, Thai: 20-130 bytes) spent most of their merge in
        // the scalar search and shifts: the minimum, then its first position, are found by
        // loops the compiler vectorizes, and the arrays shift by `memmove`.
        let best = ranks.iter().fold(u32::MAX, |a, &r| a.min(r));
        (best, ranks.iter().position(|&r| r == best).unwrap_or(0))
    } else {
        let mut best = u32::MAX;
        let mut at = 0usize;
        for (i, &r) in ranks.iter().enumerate() {
            if r < best {
                best = r;
                at = i;
            }
        }
        (best, at)
    }
}

/// The merge of [`bpe_small`] from `m` first tokens (`start[..=m]`, `id[..m]`) that are not
/// all bytes: the ranks of their pairs, then the merge loop. Returns the number of tokens left.
#[inline(always)]
fn from_atoms(
    padded: &[u8],
    start: &mut [u32],
    rank: &mut [u32],
    id: &mut [u32],
    m: usize,
    mut look: Pairs<impl Lookup>,
) -> usize {
    for i in 0..m - 1 {
        let (s, e) = (start[i] as usize, start[i + 2] as usize);
        rank[i] = look.pair(id[i], id[i + 1], padded, s, e);
    }
    rank[m - 1] = u32::MAX;
    merge_loop(padded, start, rank, id, m, look)
}

/// The merge loop of [`bpe_small`] over `m` tokens (`start[..=m]`,
/// `rank[..m]` with `rank[m - 1] == MAX`, `id[..m]`); returns the number of tokens left.
#[inline(always)]
fn merge_loop(
    padded: &[u8],
    start: &mut [u32],
    rank: &mut [u32],
    id: &mut [u32],
    mut m: usize,
    mut look: Pairs<impl Lookup>,
) -> usize {
    loop {
        let (best, at) = first_min(&rank[..m - 1]);
        if best == u32::MAX {
            break;
        }
        // Merge token `at` with token `at + 1`: the new token's id is the pair's rank.
        id[at] = best;
        if m - at > WIDE {
            start.copy_within(at + 2..=m, at + 1);
            id.copy_within(at + 2..=m, at + 1);
            rank.copy_within(at + 2..=m, at + 1);
        } else {
            for k in at + 1..m {
                start[k] = start[k + 1];
                id[k] = id[k + 1];
                rank[k] = rank[k + 1];
            }
        }
        m -= 1;
        rank[m - 1] = u32::MAX;
        if at + 1 < m {
            let (s, e) = (start[at] as usize, start[at + 2] as usize);
            rank[at] = look.pair(id[at], id[at + 1], padded, s, e);
        }
        if at > 0 {
            let (s, e) = (start[at - 1] as usize, start[at + 1] as usize);
            rank[at - 1] = look.pair(id[at - 1], id[at], padded, s, e);
        }
    }
    m
}

#[cfg(test)]
#[test]
fn first_non_ascii_finds_the_first_high_byte() {
    let mut seed = 9u64;
    for k in 0..4000 {
        let n = k % 41;
        let piece: Vec<u8> = (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                // mostly ASCII, now and then a high byte
                if seed.is_multiple_of(23) {
                    0x80 | (seed >> 8) as u8
                } else {
                    (seed >> 8) as u8 & 0x7F
                }
            })
            .collect();
        let want = piece.iter().find(|&&b| b >= 0x80).copied();
        assert_eq!(first_non_ascii(&piece), want, "{piece:?}");
    }
}
