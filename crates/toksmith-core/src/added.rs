//! Added tokens: special tokens (produced only where a call allows them) and pinned tokens
//! (always produced where their text occurs), the matcher that finds them in text, and the
//! rules for cutting a long text into parts that are split, counted or encoded separately with
//! the results of the whole (a cut must stay clear of the added tokens that could span it).

use crate::error::Result;
use crate::mem::{try_collect, try_push, try_reserve};

/// Whether an added token is a special token (only produced when allowed) or a pinned token
/// (always produced where its text occurs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddedKind {
    Special,
    Pinned,
}

#[derive(Clone, Debug)]
pub struct AddedToken {
    pub text: String,
    pub id: u32,
    pub kind: AddedKind,
}

/// Finds added tokens (special and pinned) in text: leftmost, then longest.
///
/// A compressed byte trie of the tokens' texts: at each place where a token may start, one walk
/// down the trie finds every token that starts there, so a search costs the text's length times
/// (at most) the longest token, however many tokens there are (trying each token whose first
/// byte matches cost the number of tokens at every `<` of the text: 20,000 special tokens made
/// an encode of HTML 40x slower than tiktoken's). Runs of bytes without a branch or a token
/// end are compared as slices, so a long token costs a `memcmp` per place, as before.
#[derive(Clone, Debug)]
pub struct AddedMatcher {
    /// the node reached from the root by each first byte (`NO_NODE`: no token starts so)
    root: [u32; 256],
    nodes: Vec<TrieNode>,
    /// the bytes of every node's run, back to back
    runs: Vec<u8>,
    any_pinned: bool,
}

#[derive(Clone, Debug, Default)]
struct TrieNode {
    /// the bytes that follow the byte leading to this node before its token end or branch:
    /// `runs[run.0..run.1]`
    run: (u32, u32),
    /// the children: (next byte, node), sorted by byte
    children: Vec<(u8, u32)>,
    /// the token whose text ends here
    token: Option<(u32, AddedKind)>,
}

const NO_NODE: u32 = u32::MAX;

/// Where a node being built goes: under a first byte, or in a parent's child list.
enum Slot {
    Root(u8),
    Child(u32, usize),
}

impl AddedMatcher {
    /// A matcher of `tokens` (text, id, kind); a text given twice keeps its last id. The trie
    /// grows with the tokens' bytes (a user's list, or a file's): every allocation is fallible.
    pub fn from_tokens<'a>(
        tokens: impl IntoIterator<Item = (&'a [u8], u32, AddedKind)>,
    ) -> Result<Self> {
        const WHAT: &str = "the added tokens' trie";
        // a plain trie first (one node per byte; node 0 is the root)...
        let mut kids: Vec<Vec<(u8, u32)>> = vec![Vec::new()];
        let mut ends: Vec<Option<(u32, AddedKind)>> = vec![None];
        let mut any_pinned = false;
        for (text, id, kind) in tokens {
            if text.is_empty() {
                continue; // matches nothing (an empty token would match everywhere)
            }
            let mut node = 0usize;
            for &c in text {
                node = match kids[node].binary_search_by_key(&c, |&(k, _)| k) {
                    Ok(i) => kids[node][i].1 as usize,
                    Err(i) => {
                        try_push(&mut kids, Vec::new(), WHAT)?;
                        try_push(&mut ends, None, WHAT)?;
                        let child = kids.len() - 1;
                        try_reserve(&mut kids[node], 1, WHAT)?;
                        kids[node].insert(i, (c, child as u32));
                        child
                    }
                };
            }
            ends[node] = Some((id, kind));
            any_pinned |= kind == AddedKind::Pinned;
        }
        // ...then each chain of nodes with one child and no token end becomes one node
        let mut m = AddedMatcher {
            root: [NO_NODE; 256],
            nodes: Vec::new(),
            runs: Vec::new(),
            any_pinned,
        };
        // (plain node reached by an edge, where its compressed node goes)
        let mut todo: Vec<(usize, Slot)> = kids[0]
            .iter()
            .map(|&(c, n)| (n as usize, Slot::Root(c)))
            .collect();
        while let Some((mut plain, slot)) = todo.pop() {
            let run_start = m.runs.len() as u32;
            while ends[plain].is_none() && kids[plain].len() == 1 {
                let (c, next) = kids[plain][0];
                try_push(&mut m.runs, c, WHAT)?;
                plain = next as usize;
            }
            let id = m.nodes.len() as u32;
            let children = try_collect(kids[plain].iter().map(|&(c, _)| (c, NO_NODE)), WHAT)?;
            try_push(
                &mut m.nodes,
                TrieNode {
                    run: (run_start, m.runs.len() as u32),
                    children,
                    token: ends[plain],
                },
                WHAT,
            )?;
            match slot {
                Slot::Root(c) => m.root[c as usize] = id,
                Slot::Child(parent, k) => m.nodes[parent as usize].children[k].1 = id,
            }
            try_reserve(&mut todo, kids[plain].len(), WHAT)?;
            for (k, &(_, child)) in kids[plain].iter().enumerate() {
                todo.push((child as usize, Slot::Child(id, k)));
            }
        }
        Ok(m)
    }

    /// Whether there are pinned tokens (produced whatever the call allows).
    #[inline]
    pub fn has_pinned(&self) -> bool {
        self.any_pinned
    }

    /// Next match at or after `from` accepted by `accept(id, kind)`: (start, end, id).
    #[inline]
    pub fn find(
        &self,
        text: &[u8],
        from: usize,
        accept: &dyn Fn(u32, AddedKind) -> bool,
    ) -> Option<(usize, usize, u32)> {
        if self.nodes.is_empty() {
            return None;
        }
        for i in from..text.len() {
            let mut node = self.root[text[i] as usize];
            if node == NO_NODE {
                continue;
            }
            let mut best = None;
            let mut j = i + 1;
            loop {
                let n = &self.nodes[node as usize];
                let run = &self.runs[n.run.0 as usize..n.run.1 as usize];
                if !text[j..].starts_with(run) {
                    break;
                }
                j += run.len();
                if let Some((id, kind)) = n.token {
                    if accept(id, kind) {
                        best = Some((j, id)); // the longest accepted so far
                    }
                }
                let Some(&c) = text.get(j) else { break };
                match n.children.binary_search_by_key(&c, |&(k, _)| k) {
                    Ok(k) => node = n.children[k].1,
                    Err(_) => break,
                }
                j += 1;
            }
            if let Some((end, id)) = best {
                return Some((i, end, id));
            }
        }
        None
    }
}

/// Whether an occurrence of an added token's `text` could span a
/// [`is_safe_cut`] place, which is just after a `\n` or at a space: when it has a
/// `\n`, or a space after its first byte (a pinned "New York" was cut in two at the space,
/// so a long text encoded in parts lost the token).
pub fn may_span_a_safe_cut(text: &str) -> bool {
    let b = text.as_bytes();
    b.contains(&b'\n') || b.iter().skip(1).any(|&c| c == b' ')
}

/// Whether `i` is a safe place to cut `b` for the named patterns: just after a lone `\n` (one
/// preceded by a visible ASCII character) that is followed by an ASCII letter, or between an
/// ASCII letter and a space followed by an ASCII letter. No piece of the four named patterns
/// spans such a place (a letter run never takes a space, a space before a letter always starts
/// the next piece, and no alternative looks behind), so the parts split separately give exactly
/// the pieces of the whole. The `\n` must be alone: GPT-2's `\s+(?!\S)` gives the last of
/// several whitespace characters to the next piece when a letter follows, but keeps them all
/// together at the end of a part ("]\n\nB" is "]", "\n", "\n", "B" whole, "]", "\n\n" cut).
#[inline]
pub fn is_safe_cut(b: &[u8], i: usize) -> bool {
    if i < 2 || i + 1 >= b.len() {
        return false;
    }
    (b[i - 1] == b'\n' && (0x21..=0x7E).contains(&b[i - 2]) && b[i].is_ascii_alphabetic())
        || (b[i] == b' ' && b[i - 1].is_ascii_alphabetic() && b[i + 1].is_ascii_alphabetic())
}

/// Whether no occurrence of any of `tokens` overlaps the bytes `i - 2 .. i + 2` around the cut
/// `i` (the context [`is_safe_cut`] reads), looking only at `b` (the caller makes sure `b`
/// reaches far enough past `i`: see [`cut_lookahead`]). Where it holds, an added or pinned
/// token matcher run on the two parts finds exactly the matches of the whole (none crosses
/// `i`, so its scan arrives at `i` as a fresh scan starts there), and the part of the text
/// between matches that holds `i` also holds its whole context, so the pattern's pieces do not
/// span `i` either.
#[inline]
pub fn clear_of_tokens(b: &[u8], i: usize, tokens: &[Box<[u8]>]) -> bool {
    let hi = (i + 2).min(b.len());
    tokens.iter().all(|t| {
        // occurrences starting at s overlap i-2..i+2 when s + len > i - 2 and s < i + 2
        let first = (i + 1).saturating_sub(t.len() + 2).min(hi);
        (first..hi).all(|s| !b[s..].starts_with(t))
    })
}

/// How many bytes past a cut [`clear_of_tokens`] needs to see (a text that may still grow is
/// cut only this far before its current end).
pub fn cut_lookahead(tokens: &[Box<[u8]>]) -> usize {
    tokens.iter().map(|t| t.len() + 2).max().unwrap_or(0)
}

/// The tokens among `added` that could span an [`is_safe_cut`] place (see
/// [`may_span_a_safe_cut`]): the only ones a cut must be checked against.
pub fn spanning_tokens<'a>(added: impl IntoIterator<Item = &'a str>) -> Vec<Box<[u8]>> {
    added
        .into_iter()
        .filter(|t| may_span_a_safe_cut(t))
        .map(|t| t.as_bytes().into())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// At every safe cut of random texts made of the characters that decide piece boundaries,
    /// each named pattern splits the two parts into exactly the pieces of the whole.
    #[test]
    fn safe_cuts_split_like_the_whole() {
        use crate::pretokenize::{Pretokenizer, NAMED_PATTERNS, RUSTBPE_GPT4_PATTERN};
        let atoms = [
            "a", "B", "xy", " ", "  ", "\n", "\n\n", "\r\n", "\t", "]", ".", "1", "234", "'s",
            "'T", "\u{e9}", "\u{a0}", "\u{3000}", "\u{1c}", "/", " \n", "\n ", "A\u{301}", "]\nB",
            "a\nb", "z b", ".\n\nC", "q \nr",
        ];
        let mut patterns: Vec<&str> = NAMED_PATTERNS.iter().map(|(_, p)| *p).collect();
        patterns.push(RUSTBPE_GPT4_PATTERN);
        patterns.push(crate::pretokenize::WORDS_PATTERN);
        let pres: Vec<Pretokenizer> = patterns
            .iter()
            .map(|p| Pretokenizer::new(p).unwrap())
            .collect();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut cuts = 0;
        for _ in 0..6000 {
            let mut text = String::new();
            for _ in 0..12 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.push_str(atoms[(seed % atoms.len() as u64) as usize]);
            }
            let b = text.as_bytes();
            for i in 0..b.len() {
                if !is_safe_cut(b, i) {
                    continue;
                }
                cuts += 1;
                for (pre, pat) in pres.iter().zip(&patterns) {
                    let whole = pre.split(&text).unwrap();
                    let mut parts = pre.split(&text[..i]).unwrap();
                    parts.extend(pre.split(&text[i..]).unwrap());
                    assert_eq!(parts, whole, "{text:?} cut at {i}, pattern {pat}");
                }
            }
        }
        assert!(cuts > 1000, "only {cuts} cuts tried");
    }

    #[test]
    fn clear_of_tokens_sees_occurrences_touching_the_context() {
        let t: Vec<Box<[u8]>> = vec![b"New York".as_slice().into()];
        let b = b"in New York ok";
        // the space inside the token, and the spaces right around it
        assert!(!clear_of_tokens(b, 6, &t));
        assert!(!clear_of_tokens(b, 2, &t)); // "in| New": the token starts at 3, inside i+2
        assert!(!clear_of_tokens(b, 12, &t)); // "York| ok": it ends at 11, inside i-2
        assert!(clear_of_tokens(b, 13, &t)); // "ok": it ends at 11, before i-2
        let b2 = b"xx New York yy zz";
        assert!(clear_of_tokens(b2, 14, &t));
        assert!(clear_of_tokens(b2, 1, &t)); // it starts at 3 = i+2: outside
        assert_eq!(cut_lookahead(&t), 10);
        assert_eq!(
            spanning_tokens(["New York", " York", "a\nb", "ab"]).len(),
            2
        );
    }

    /// Leftmost, then longest accepted: against trying every token at every place.
    #[test]
    fn added_matcher_equals_trying_every_token() {
        let texts = [
            "<|a|>",
            "<|ab|>",
            "<|",
            "a",
            "aaaa",
            "aaab",
            "ab",
            "b<|",
            "é",
            "éé",
            "<|a|><|b|>",
        ];
        let added: Vec<AddedToken> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| AddedToken {
                text: t.to_string(),
                id: 300 + i as u32,
                kind: if i % 3 == 0 {
                    AddedKind::Pinned
                } else {
                    AddedKind::Special
                },
            })
            .collect();
        let matcher =
            AddedMatcher::from_tokens(added.iter().map(|a| (a.text.as_bytes(), a.id, a.kind)))
                .unwrap();
        let pieces = [
            "<|a|>",
            "<|ab",
            "a",
            "aa",
            "b",
            "<",
            "|",
            "é",
            "x",
            "<|a|><|b|>",
        ];
        let mut seed = 7u64;
        for round in 0..3000 {
            let mut text = Vec::new();
            for _ in 0..(round % 9) {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                text.extend_from_slice(pieces[(seed >> 33) as usize % pieces.len()].as_bytes());
            }
            let allowed_mask = seed >> 40;
            let accept = |id: u32, kind: AddedKind| {
                kind == AddedKind::Pinned || (allowed_mask >> (id - 300)) & 1 == 1
            };
            for from in 0..=text.len() {
                let want = (from..text.len()).find_map(|i| {
                    added
                        .iter()
                        .filter(|a| {
                            text[i..].starts_with(a.text.as_bytes()) && accept(a.id, a.kind)
                        })
                        .max_by_key(|a| a.text.len())
                        .map(|a| (i, i + a.text.len(), a.id))
                });
                assert_eq!(
                    matcher.find(&text, from, &accept),
                    want,
                    "{text:?} from {from}"
                );
            }
        }
    }
}
