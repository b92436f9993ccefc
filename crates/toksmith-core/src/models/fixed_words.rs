//! A whole-word fixed-id vocabulary in front of BPE (the CppReason preset, seed 001).
//!
//! A split pattern cuts text into words; a word in the fixed table becomes its fixed id(s),
//! any other word is handed, with a mark in front of it, to a learned encoder (byte-level BPE
//! in practice). Fixed ids are only ever whole words: `int` is fixed, the `int` in `print` is
//! not. Three rules make the table fit source code and diffs:
//! * a word in the `line_start` table gets that id when it starts a line (at the start of
//!   the text or right after a `\n`: `+` and `-`, the diff markers), its ordinary id
//!   elsewhere;
//! * a line-break word (starting with `\r` or `\n`, possibly holding the indentation after
//!   it) is `newline[0]` or, with two line breaks, `newline[1]`;
//! * `#` followed by spaces or tabs and a name is looked up without them (`#  include`);
//! * any other word with whitespace in it (a string literal) is cut at the whitespace, as the
//!   seed's `WhitespaceSplit` does after its literal rule: whitespace is never encoded, and
//!   each part is a word of its own (fixed if the table has it).

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::pretokenize::chars::{category, is_letter, is_number};
use crate::pretokenize::Pretokenizer;
use crate::train::add_counts;
use crate::Result;

/// What encoding makes of one word ([`FixedWords::for_each_word`]).
pub enum Word<'s> {
    /// fixed ids (one, or two for a diff header with its path prefix)
    Fixed(&'s [u32]),
    /// handed, marked, to the learned encoder
    Learned,
}

pub struct FixedWords {
    pretok: Pretokenizer,
    table: FxHashMap<Box<str>, Box<[u32]>>,
    line_start: FxHashMap<Box<str>, u32>,
    newline: [u32; 2],
    mark: Box<str>,
}

impl FixedWords {
    pub fn new(
        pattern: &str,
        table: Vec<(String, Vec<u32>)>,
        line_start: Vec<(String, u32)>,
        newline: [u32; 2],
        mark: &str,
    ) -> Result<Self> {
        Ok(FixedWords {
            pretok: Pretokenizer::new(pattern)?,
            table: table
                .into_iter()
                .map(|(w, ids)| (w.into_boxed_str(), ids.into_boxed_slice()))
                .collect(),
            line_start: line_start
                .into_iter()
                .map(|(w, id)| (w.into_boxed_str(), id))
                .collect(),
            newline,
            mark: mark.into(),
        })
    }

    /// Call `f(word, kind)` with each word of `text` as encoding sees it: its text (a slice of
    /// `text`) and whether it is fixed (its ids) or learned. `line_start`: whether the start
    /// of `text` is the start of a line (false for a piece that goes on a line, as FIM's
    /// suffix may). The first error from `f` stops the walk.
    pub fn for_each_word<'t, 's>(
        &'s self,
        text: &'t str,
        line_start: bool,
        mut f: impl FnMut(&'t str, Word<'s>) -> Result<()>,
    ) -> Result<()> {
        let bytes = text.as_bytes();
        let base = bytes.as_ptr() as usize;
        let mut buf = String::with_capacity(64);
        let mut result = Ok(());
        self.pretok.for_each_piece(text, |w| {
            if result.is_ok() {
                result = self.word(w, bytes, base, line_start, &mut buf, &mut f);
            }
        })?;
        result
    }

    /// One word of the split pattern, handed to `f` as fixed ids or learned parts.
    #[inline]
    fn word<'t, 's>(
        &'s self,
        w: &'t str,
        bytes: &[u8],
        base: usize,
        line_start: bool,
        buf: &mut String,
        f: &mut impl FnMut(&'t str, Word<'s>) -> Result<()>,
    ) -> Result<()> {
        let first = w.as_bytes()[0];
        if first == b'\n' || first == b'\r' {
            let two = (w.bytes().filter(|&b| b == b'\n').count() >= 2) as usize;
            return f(w, Word::Fixed(&self.newline[two..=two]));
        }
        // the word starts a line when it starts the text or follows a `\n` directly
        let at = w.as_ptr() as usize - base;
        if if at == 0 {
            line_start
        } else {
            bytes[at - 1] == b'\n'
        } {
            if let Some(id) = self.line_start.get(w) {
                return f(w, Word::Fixed(std::slice::from_ref(id)));
            }
        }
        if let Some(ids) = self.table.get(w) {
            return f(w, Word::Fixed(ids));
        }
        if first == b'#' && matches!(w.as_bytes().get(1), Some(b' ' | b'\t')) {
            buf.clear();
            buf.push('#');
            buf.push_str(w[1..].trim_start_matches([' ', '\t']));
            if let Some(ids) = self.table.get(buf.as_str()) {
                return f(w, Word::Fixed(ids));
            }
        }
        if w.contains(char::is_whitespace) {
            for part in w.split(char::is_whitespace).filter(|p| !p.is_empty()) {
                match self.table.get(part) {
                    Some(ids) => f(part, Word::Fixed(ids))?,
                    None => self.learned_parts(part, f)?,
                }
            }
            return Ok(());
        }
        self.learned_parts(w, f)
    }

    /// A learned word to `f`. When the table has the mark itself as a word, a mark inside
    /// `word` (text that holds the mark character) is that fixed id and cuts `word` around
    /// it: the learned part never holds a mark that is not a word start, so decoding can
    /// tell them apart.
    #[inline]
    fn learned_parts<'t, 's>(
        &'s self,
        word: &'t str,
        f: &mut impl FnMut(&'t str, Word<'s>) -> Result<()>,
    ) -> Result<()> {
        let mark_ids = match self.table.get(&self.mark) {
            Some(ids) if !self.mark.is_empty() && word.contains(&*self.mark) => ids,
            _ => return f(word, Word::Learned),
        };
        let mut last = 0;
        for (at, m) in word.match_indices(&*self.mark) {
            if at > last {
                f(&word[last..at], Word::Learned)?;
            }
            f(m, Word::Fixed(mark_ids))?;
            last = at + m.len();
        }
        if last < word.len() {
            f(&word[last..], Word::Learned)?;
        }
        Ok(())
    }

    /// Append the ids of `text` to `out`: fixed words from the table, the others through
    /// `learned(mark + word, out)` ([`Self::for_each_word`]).
    pub fn encode_with(
        &self,
        text: &str,
        line_start: bool,
        out: &mut Vec<u32>,
        mut learned: impl FnMut(&str, &mut Vec<u32>) -> Result<()>,
    ) -> Result<()> {
        let mut buf = String::with_capacity(64);
        self.for_each_word(text, line_start, |w, kind| match kind {
            Word::Fixed(ids) => {
                out.extend_from_slice(ids);
                Ok(())
            }
            Word::Learned => {
                buf.clear();
                buf.push_str(&self.mark);
                buf.push_str(w);
                learned(&buf, out)
            }
        })
    }

    /// The training counts of the learned part: every word of `texts` that is not fixed, with
    /// the mark in front, split by `inner`, counted (in parallel over the texts). The words are
    /// told apart exactly as [`Self::encode_with`] tells them apart, so training sees what
    /// encoding will hand to the learned encoder.
    pub fn count_learned<S: AsRef<str> + Sync>(
        &self,
        texts: &[S],
        inner: &Pretokenizer,
    ) -> Result<Vec<(Box<[u8]>, u64)>> {
        // (the tables and words grow with the corpus: allocated fallibly, an error when
        // refused; the merge of two tables grows the larger by at most the smaller)
        const WHAT: &str = "the counts of learned words";
        let marked: FxHashMap<String, u64> = texts
            .par_iter()
            .try_fold(
                || (FxHashMap::<String, u64>::default(), Vec::new()),
                |(mut local, mut scratch), t| {
                    self.encode_with(t.as_ref(), true, &mut scratch, |w, _| {
                        match local.get_mut(w) {
                            Some(c) => *c += 1,
                            None => {
                                local
                                    .try_reserve(1)
                                    .map_err(|_| crate::mem::oom(WHAT, local.len() + 1, 32))?;
                                local.insert(fallible_string(w, WHAT)?, 1);
                            }
                        }
                        Ok(())
                    })?;
                    scratch.clear();
                    Ok::<_, crate::Error>((local, scratch))
                },
            )
            .map(|r| r.map(|(local, _)| local))
            .try_reduce(FxHashMap::default, |a, b| {
                let mut b = b;
                b.try_reserve(a.len())
                    .map_err(|_| crate::mem::oom(WHAT, a.len() + b.len(), 40))?;
                Ok(add_counts(a, b))
            })?;
        let mut chunks: FxHashMap<Box<[u8]>, u64> = FxHashMap::default();
        let mut failed = Ok(());
        for (w, n) in &marked {
            inner.for_each_piece(w, |p| {
                if failed.is_err() {
                    return;
                }
                if let Some(c) = chunks.get_mut(p.as_bytes()) {
                    *c += n;
                } else if chunks.try_reserve(1).is_err() {
                    failed = Err(crate::mem::oom(WHAT, chunks.len() + 1, 24));
                } else {
                    match fallible_string(p, WHAT) {
                        Ok(s) => {
                            chunks.insert(s.into_bytes().into_boxed_slice(), *n);
                        }
                        Err(e) => failed = Err(e),
                    }
                }
            })?;
            failed.clone()?;
        }
        let mut out = crate::mem::try_vec(chunks.len(), WHAT)?;
        out.extend(chunks);
        Ok(out)
    }
}

/// A copy of `w` in a `String` of exactly its length, allocated fallibly.
fn fallible_string(w: &str, what: &str) -> Result<String> {
    let mut s = String::new();
    s.try_reserve_exact(w.len())
        .map_err(|_| crate::mem::oom(what, w.len(), 1))?;
    s.push_str(w);
    Ok(s)
}

/// The way back: ids to words, and words to text by a spacing rule (the seed's: a space
/// between two words when the first ends and the second starts with a letter, digit or `_`, or
/// after a word of `space_after` or before one of `space_before`; never next to a line break).
///
/// A fixed id shows as its text (or nothing: control and reserved ids); the learned ids' bytes
/// run together and each mark starts a new word (the mark may be split over tokens).
///
/// With a split pattern ([`WordDecoder::with_split`]) three more rules make the text encode
/// back to the same ids:
/// * where two words get no space by the rule, the pattern is run over them and the (at most
///   three) unspaced words before them, and a space goes in unless a word it reads ends where
///   each of them ends: `/` then `*` is `/ *` (not a comment opener), `-` `-` is `- -`, `.`
///   `.` `.` is `.. .`; `>` `*` stays `>*`;
/// * the parts of a string literal that encoding cut at its whitespace (from a word that
///   opens a `"` to the word that closes it) get one space between them, and so do `'` `'`;
/// * neither rule applies next to the mark character, which cuts the word it is in.
///
/// [`WordDecoder::with_mid_line`] adds one more: a space before an id that would start a line
/// where encoding reads its text as another id there.
pub struct WordDecoder {
    fixed: Vec<Option<Box<[u8]>>>,
    mark: Box<[u8]>,
    // (a few short words each: a scan beats hashing)
    space_after: Vec<Box<[u8]>>,
    space_before: Vec<Box<[u8]>>,
    split: Option<Pretokenizer>,
    // the split is a CppReason pattern (whose joining characters are known): with or without
    // punctuation runs
    cpp_split: Option<bool>,
    mid_line: Vec<u32>,
}

fn word_char(c: char) -> bool {
    c == '_' || {
        let cat = category(c as u32);
        is_letter(cat) || is_number(cat)
    }
}

impl WordDecoder {
    /// `fixed[id]`: the text of fixed id `id` (ids from `fixed.len()` on are learned).
    pub fn new(
        fixed: Vec<Option<String>>,
        mark: &str,
        space_after: Vec<String>,
        space_before: Vec<String>,
    ) -> Self {
        WordDecoder {
            fixed: fixed
                .into_iter()
                .map(|t| t.map(|t| t.into_bytes().into_boxed_slice()))
                .collect(),
            mark: mark.as_bytes().into(),
            space_after: space_after
                .into_iter()
                .map(|w| w.into_bytes().into())
                .collect(),
            space_before: space_before
                .into_iter()
                .map(|w| w.into_bytes().into())
                .collect(),
            split: None,
            cpp_split: None,
            mid_line: Vec::new(),
        }
    }

    /// The same decoder, keeping apart words that `pattern` would read as other words when
    /// written together (see [`WordDecoder`]).
    pub fn with_split(mut self, pattern: &str) -> Result<Self> {
        let split = Pretokenizer::new(pattern)?;
        self.cpp_split = match pattern {
            crate::pretokenize::CPP_WORDS_PATTERN => Some(false),
            crate::pretokenize::CPP_RUNS_PATTERN => Some(true),
            _ => None,
        };
        self.split = Some(split);
        Ok(self)
    }

    /// The same decoder, writing a space before each of `ids` that would start a line (after a
    /// line break; not at the start of the text, so that one id decodes as its text), where
    /// encoding would read its text as another id (the diff markers `+` and `-`: a `+` that
    /// followed indentation comes back as ` +`, not as the diff marker).
    pub fn with_mid_line(mut self, ids: &[u32]) -> Self {
        self.mid_line = ids.to_vec();
        self
    }

    /// Whether a word of a CppReason pattern can run on from a word ending in `left` into one
    /// starting with `right`: operators, diff headers and `@@` join two of the characters
    /// below (with `runs`, punctuation runs join any two ASCII punctuation characters but
    /// `_`); `#` a directive's name; quotes and `\` literals. Two letters, digits or `_` are
    /// never written together. (Checked against the scan itself in the tests.)
    fn cpp_may_join(runs: bool, left: char, right: char) -> bool {
        const JOINING: &[u8] = b"<>=-+.:!&|*/%^#@";
        let op = |c: char| {
            c.is_ascii()
                && if runs {
                    c.is_ascii_punctuation() && c != '_'
                } else {
                    JOINING.contains(&(c as u8))
                }
        };
        (op(left) && op(right))
            || matches!(left, '#' | '"' | '\'' | '\\')
            || matches!(right, '"' | '\'')
    }

    /// Whether `out[run[0]..]` followed by `word` reads back with a word ending where each of
    /// the words that start at `run`, and `word`, ends (a window of at most four words: the
    /// longest words that can be written as several are character literals, `'\\n'`; string
    /// literals are spaced by their own rule). `window`: a buffer.
    fn keeps_apart(
        &self,
        split: &Pretokenizer,
        out: &str,
        run: &[usize],
        word: &str,
        window: &mut String,
    ) -> bool {
        let Some(&start) = run.first() else {
            return true;
        };
        if let Some(runs) = self.cpp_split {
            let left = out.chars().next_back();
            let right = word.chars().next();
            if let (Some(l), Some(r)) = (left, right) {
                if !Self::cpp_may_join(runs, l, r) && !word.contains(['"', '\'']) {
                    return true;
                }
            }
        }
        // a space in front keeps a word that is not at the start of a line from reading as
        // one (the diff headers)
        let at_line_start = start == 0 || out.as_bytes()[start - 1] == b'\n';
        let lead = usize::from(!at_line_start);
        window.clear();
        if lead == 1 {
            window.push(' ');
        }
        window.push_str(&out[start..]);
        window.push_str(word);
        let base = window.as_ptr() as usize;
        // the words' ends the window should read as
        let mut ends = run[1..]
            .iter()
            .map(|&r| r - start + lead)
            .chain([out.len() - start + lead, window.len()]);
        // each must also end a word the pattern reads (a word that is no word of the pattern,
        // such as a literal's part, may read as several)
        let mut want = ends.next();
        let scanned = split.for_each_piece(window, |piece| {
            let end = piece.as_ptr() as usize - base + piece.len();
            if want == Some(end) {
                want = ends.next();
            }
        });
        scanned.is_ok() && want.is_none()
    }

    /// The text of `ids`; `learned(id)` gives a learned id's bytes.
    pub fn decode<'v>(
        &self,
        ids: &[u32],
        learned: impl Fn(u32) -> Result<&'v [u8]>,
    ) -> Result<String> {
        // what the spacing rule needs of the words before
        struct Prev {
            // the last character written
            last: Option<char>,
            // a space follows the last word in any case
            spaced: bool,
            // where the words written since the last space or line break start in `out` (the
            // last three of them)
            run: Vec<usize>,
            // inside a string literal that encoding cut at its whitespace (split only)
            literal: bool,
            // the last word was `'`
            quote: bool,
            // the last word was the mark character (which cut the word it is in: no space
            // goes next to it but by the word rule)
            mark: bool,
            window: String,
            // the text's room was refused (the text is then dropped: an error at the end)
            failed: bool,
        }
        const WHAT: &str = "the decoded text";
        /// Room for `n` more bytes in `out`, allocated fallibly; false (and `failed` set)
        /// once refused.
        fn room(out: &mut String, n: usize, failed: &mut bool) -> bool {
            if *failed || (out.capacity() - out.len() < n && out.try_reserve(n).is_err()) {
                *failed = true;
                return false;
            }
            true
        }
        let mut out = String::new();
        let mut prev = Prev {
            last: None,
            spaced: false,
            run: Vec::with_capacity(4),
            literal: false,
            quote: false,
            mark: false,
            window: String::new(),
            failed: false,
        };
        let mut stream: Vec<u8> = Vec::new();
        let push = |word: &[u8], out: &mut String, prev: &mut Prev| {
            if word.is_empty() || prev.failed {
                return;
            }
            let text = String::from_utf8_lossy(word);
            let first = text.chars().next();
            let split = self.split.as_ref();
            let mark = split.is_some() && word == &self.mark[..];
            let glued = mark || prev.mark;
            if let (Some(last), Some(first)) = (prev.last, first) {
                if last == '\n' || first == '\n' {
                    prev.run.clear();
                    prev.literal = false;
                } else if (word_char(last) && word_char(first))
                    || prev.spaced
                    || self.space_before.iter().any(|w| **w == *word)
                    || (!glued
                        && (prev.literal
                            || (prev.quote && text == "'")
                            || split.is_some_and(|split| {
                                !self.keeps_apart(split, out, &prev.run, &text, &mut prev.window)
                            })))
                {
                    if !room(out, 1, &mut prev.failed) {
                        return;
                    }
                    out.push(' ');
                    prev.run.clear();
                }
            }
            if split.is_some() && !mark {
                // a literal's parts: from a word that opens a `"` it does not close to the
                // word that closes it
                let closes = |t: &str| {
                    t.ends_with('"')
                        && t.as_bytes()[..t.len() - 1]
                            .iter()
                            .rev()
                            .take_while(|&&b| b == b'\\')
                            .count()
                            % 2
                            == 0
                };
                prev.literal = if prev.literal {
                    !closes(&text)
                } else {
                    text.starts_with('"') && !(text.len() >= 2 && closes(&text[1..]))
                };
                prev.quote = text == "'";
            }
            prev.mark = mark;
            if mark {
                // the pattern would read the words around the mark as one: no window across it
                prev.run.clear();
            } else {
                if prev.run.len() == 3 {
                    prev.run.remove(0);
                }
                prev.run.push(out.len());
            }
            if !room(out, text.len(), &mut prev.failed) {
                return;
            }
            out.push_str(&text);
            prev.last = text.chars().next_back();
            prev.spaced = self.space_after.iter().any(|w| **w == *word);
        };
        // a learned word (a punctuation run) that starts with `+`/`-` right after a line break
        // would read as the diff marker there: one space in front, as for `mid_line` ids
        let runs = self.cpp_split == Some(true);
        let push_learned = |word: &[u8], out: &mut String, prev: &mut Prev| {
            if runs && prev.last == Some('\n') && matches!(word.first(), Some(b'+' | b'-')) {
                if !room(out, 1, &mut prev.failed) {
                    return;
                }
                out.push(' ');
                prev.last = Some(' ');
                prev.run.clear();
            }
            push(word, out, prev);
        };
        let flush = |stream: &mut Vec<u8>, out: &mut String, prev: &mut Prev| {
            if stream.is_empty() {
                return;
            }
            let m = &self.mark[..];
            let mut start = 0;
            let mut i = 0;
            while !m.is_empty() && i + m.len() <= stream.len() {
                // to the next byte that can start a mark
                match stream[i..].iter().position(|&b| b == m[0]) {
                    Some(k) => i += k,
                    None => break,
                }
                if i + m.len() > stream.len() {
                    break;
                }
                if &stream[i..i + m.len()] == m {
                    push_learned(&stream[start..i], out, prev);
                    i += m.len();
                    start = i;
                } else {
                    i += 1;
                }
            }
            push_learned(&stream[start..], out, prev);
            stream.clear();
        };
        for &id in ids {
            if let Some(f) = self.fixed.get(id as usize) {
                flush(&mut stream, &mut out, &mut prev);
                if let Some(text) = f {
                    if self.mid_line.contains(&id)
                        && prev.last == Some('\n')
                        && room(&mut out, 1, &mut prev.failed)
                    {
                        out.push(' ');
                        prev.last = Some(' ');
                        prev.run.clear();
                    }
                    push(text, &mut out, &mut prev);
                }
            } else {
                let bytes = learned(id)?;
                crate::mem::try_reserve(&mut stream, bytes.len(), WHAT)?;
                stream.extend_from_slice(bytes);
            }
            if prev.failed {
                break;
            }
        }
        flush(&mut stream, &mut out, &mut prev);
        if prev.failed {
            return Err(crate::mem::oom(WHAT, out.len().saturating_mul(2), 1));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_line_start_newlines_directives_and_learned() {
        let fw = FixedWords::new(
            crate::pretokenize::CPP_WORDS_PATTERN,
            vec![
                ("int".into(), vec![1]),
                ("+".into(), vec![2]),
                ("#include".into(), vec![3]),
                ("--- a/".into(), vec![4, 5]),
            ],
            vec![("+".into(), 9)],
            [7, 8],
            "~",
        )
        .unwrap();
        let mut out = Vec::new();
        let mut seen = Vec::new();
        fw.encode_with(
            "+int print\n  +x +\n\n#  include\n--- a/f\n+y",
            true,
            &mut out,
            |w, o| {
                seen.push(w.to_string());
                o.push(100);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(
            out,
            vec![9, 1, 100, 7, 2, 100, 2, 8, 3, 7, 4, 5, 100, 7, 9, 100]
        );
        assert_eq!(seen, vec!["~print", "~x", "~f", "~y"]);
        // after leading spaces a word does not start a line
        out.clear();
        fw.encode_with(" +", true, &mut out, |_, o| {
            o.push(100);
            Ok(())
        })
        .unwrap();
        assert_eq!(out, vec![2]);
        // an error from the learned encoder stops the encoding
        let err = fw.encode_with("a b", true, &mut out, |_, _| Err(crate::Error::EmptyCorpus));
        assert!(err.is_err());
        // a text that goes on a line: its first word does not start one
        out.clear();
        fw.encode_with("+x\n+", false, &mut out, |_, o| {
            o.push(100);
            Ok(())
        })
        .unwrap();
        assert_eq!(out, vec![2, 100, 7, 9]);
        // a literal is cut at its whitespace; a part may be fixed
        out.clear();
        seen.clear();
        fw.encode_with("f(\"a  int\tb\u{3000}c\")", true, &mut out, |w, o| {
            seen.push(w.to_string());
            o.push(100);
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, vec!["~f", "~(", "~\"a", "~b", "~c\"", "~)"]);
        assert_eq!(out, vec![100, 100, 100, 1, 100, 100, 100]);
        // the mark in the text: its fixed id when the table has it, cutting the word around it
        let with_mark = FixedWords::new(
            crate::pretokenize::CPP_WORDS_PATTERN,
            vec![("~".into(), vec![5])],
            vec![],
            [7, 8],
            "~",
        )
        .unwrap();
        out.clear();
        seen.clear();
        with_mark
            .encode_with("x~y \"a~~b~\"", true, &mut out, |w, o| {
                seen.push(w.to_string());
                o.push(100);
                Ok(())
            })
            .unwrap();
        assert_eq!(seen, vec!["~x", "~y", "~\"a", "~b", "~\""]);
        assert_eq!(out, vec![100, 5, 100, 100, 5, 5, 100, 5, 100]);
    }

    /// A learned id's bytes from `learned`, as `WordDecoder::decode` asks for them.
    fn learned_bytes<'a>(
        learned: &'a FxHashMap<u32, &'a [u8]>,
        n_vocab: u64,
    ) -> impl Fn(u32) -> Result<&'a [u8]> + Copy + 'a {
        move |id| {
            learned.get(&id).copied().ok_or(crate::Error::UnknownId {
                id: id as u64,
                n_vocab,
            })
        }
    }

    #[test]
    fn decode_keeps_apart_words_that_would_fuse() {
        let texts = [
            "/", "*", "-", ".", "p", ">", "+", "++", "\n", "\"", "=", "'", "\\", "~",
        ];
        let fixed: Vec<Option<String>> = texts.iter().map(|t| Some(t.to_string())).collect();
        let plain = WordDecoder::new(fixed.clone(), "~", vec![], vec![]);
        let dec = WordDecoder::new(fixed, "~", vec![], vec![])
            .with_split(crate::pretokenize::CPP_WORDS_PATTERN)
            .unwrap()
            .with_mid_line(&[2]);
        let learned: FxHashMap<u32, &[u8]> = [
            (20, &b"~\"a+"[..]),
            (21, &b"~b\""[..]),
            (22, &b"~x"[..]),
            (23, &b"~\"y\\\""[..]),
        ]
        .into_iter()
        .collect();
        let get = learned_bytes(&learned, 24);
        let cases: [(&[u32], &str, &str); 16] = [
            // a / *p: no comment opener; x - -p: no decrement
            (&[22, 0, 1, 4], "x/*p", "x/ *p"),
            (&[22, 2, 2, 4], "x--p", "x- -p"),
            // >* and =- read as two words anyway
            (&[5, 1, 4, 10, 2, 4], ">*p=-p", ">*p=-p"),
            // three dots are one word, four are two
            (&[3, 3, 3, 3], "....", ".. .."),
            // + ++ at the start of a line is a diff header written together
            (&[6, 7, 8, 6, 7], "+++\n+++", "+ ++\n+ ++"),
            // mid-line, +++ reads as ++ then +
            (&[22, 6, 7], "x+++", "x+ ++"),
            (&[22, 7, 6], "x+++", "x+++"),
            // a character literal is up to four words: ' \ p '
            (&[11, 12, 4, 11], "'\\p'", "'\\p '"),
            // the parts of a string literal cut at its spaces: one space between them
            (&[20, 21], "\"a+b\"", "\"a+ b\""),
            (&[9, 22, 9], "\"x\"", "\" x \""),
            (&[9, 0, 1, 9, 4], "\"/*\"p", "\" / * \"p"),
            // an escaped quote does not close the literal
            (&[23, 22, 9, 4], "\"y\\\"x\"p", "\"y\\\" x \"p"),
            (&[11, 11], "''", "' '"),
            // the mark character: no rule but the word rule next to it
            (&[9, 13, 22, 9], "\"~x\"", "\"~x \""),
            // the id 2 (-) after a line break, but not at the start of the text
            (&[2, 22, 8, 2, 22], "-x\n-x", "-x\n -x"),
            (&[8, 8, 2], "\n\n-", "\n\n -"),
        ];
        for (ids, before, after) in cases {
            assert_eq!(plain.decode(ids, get).unwrap(), before, "{ids:?}");
            assert_eq!(dec.decode(ids, get).unwrap(), after, "{ids:?}");
        }
    }

    /// The CppReason shortcut (no scan where the two characters cannot join) changes nothing:
    /// random word sequences decode the same with and without it.
    #[test]
    fn decode_shortcut_equals_the_full_check() {
        for pattern in [
            crate::pretokenize::CPP_WORDS_PATTERN,
            crate::pretokenize::CPP_RUNS_PATTERN,
        ] {
            decode_shortcut_equals_the_full_check_for(pattern);
        }
    }

    fn decode_shortcut_equals_the_full_check_for(pattern: &str) {
        let texts = [
            "<", ">", "=", "-", "+", ".", ":", "!", "&", "|", "*", "/", "%", "^", "#", "@", "\"",
            "'", "\\", "(", ";", "\n", "~", "x", "0", "include", "++", "->", "...", "<<=", "a/",
            ")", "{", "();", "$", "[", ",",
        ];
        let fixed: Vec<Option<String>> = texts.iter().map(|t| Some(t.to_string())).collect();
        let fast = WordDecoder::new(fixed.clone(), "~", vec![], vec![])
            .with_split(pattern)
            .unwrap();
        let mut full = WordDecoder::new(fixed, "~", vec![], vec![])
            .with_split(pattern)
            .unwrap();
        assert!(fast.cpp_split.is_some());
        full.cpp_split = None;
        let nothing = FxHashMap::default();
        let none = learned_bytes(&nothing, 0);
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mut r = state;
            let ids: Vec<u32> = (0..(r % 9) as usize)
                .map(|_| {
                    r = r.rotate_left(7) ^ 0x2545_f491_4f6c_dd1d;
                    (r % texts.len() as u64) as u32
                })
                .collect();
            assert_eq!(
                fast.decode(&ids, none).unwrap(),
                full.decode(&ids, none).unwrap(),
                "{ids:?}"
            );
        }
    }

    #[test]
    fn decode_by_the_spacing_rule() {
        let mut fixed: Vec<Option<String>> = vec![None; 10];
        fixed[1] = Some("int".into());
        fixed[2] = Some(";".into());
        fixed[3] = Some("\n".into());
        fixed[4] = Some("---".into());
        fixed[5] = Some("@@".into());
        let dec = WordDecoder::new(
            fixed,
            "~",
            vec!["---".into(), "@@".into()],
            vec!["@@".into()],
        );
        let learned: FxHashMap<u32, &[u8]> = [
            (10, &b"~x"[..]),
            (11, &b"y"[..]),
            (12, &b"~"[..]),
            (13, &b"z\xc3"[..]),
            (14, &b"\xa9 q"[..]),
        ]
        .into_iter()
        .collect();
        let get = learned_bytes(&learned, 15);
        // words: int, xy, ;, \n, int, z\u{e9} q (the mark split off its word), ---, a@@
        assert_eq!(
            dec.decode(&[1, 10, 11, 2, 3, 1, 12, 13, 14, 0, 4, 10, 5, 3], get)
                .unwrap(),
            "int xy;\nint z\u{e9} q--- x @@\n"
        );
        assert!(dec.decode(&[99], get).is_err());
    }

    #[test]
    fn learned_counts_are_the_words_encoding_hands_over() {
        let fw = FixedWords::new(
            crate::pretokenize::CPP_WORDS_PATTERN,
            vec![("int".into(), vec![1]), ("+".into(), vec![2])],
            vec![("+".into(), 9)],
            [7, 8],
            "~",
        )
        .unwrap();
        let inner = Pretokenizer::new("o200k").unwrap();
        let mut got = fw
            .count_learned(&["int fooBar +x\n+int", "x fooBar"], &inner)
            .unwrap();
        got.sort();
        let want: Vec<(Box<[u8]>, u64)> = vec![
            (b"Bar".to_vec().into(), 2),
            (b"~foo".to_vec().into(), 2),
            (b"~x".to_vec().into(), 2),
        ];
        assert_eq!(got, want);
    }
}
