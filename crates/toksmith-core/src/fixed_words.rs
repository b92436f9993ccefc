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
//! * `#` followed by spaces or tabs and a name is looked up without them (`#  include`).

use rustc_hash::FxHashMap;

use crate::pretokenize::Pretokenizer;
use crate::Result;

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

    /// Append the ids of `text` to `out`: fixed words from the table, the others through
    /// `learned(mark + word, out)`.
    pub fn encode_with(
        &self,
        text: &str,
        out: &mut Vec<u32>,
        mut learned: impl FnMut(&str, &mut Vec<u32>) -> Result<()>,
    ) -> Result<()> {
        let bytes = text.as_bytes();
        let base = bytes.as_ptr() as usize;
        let mut buf = String::with_capacity(64);
        let mut result = Ok(());
        self.pretok.for_each_piece(text, |w| {
            if result.is_err() {
                return;
            }
            let first = w.as_bytes()[0];
            if first == b'\n' || first == b'\r' {
                let breaks = w.bytes().filter(|&b| b == b'\n').count();
                out.push(self.newline[(breaks >= 2) as usize]);
                return;
            }
            // the word starts a line when it starts the text or follows a `\n` directly
            let at = w.as_ptr() as usize - base;
            if at == 0 || bytes[at - 1] == b'\n' {
                if let Some(&id) = self.line_start.get(w) {
                    out.push(id);
                    return;
                }
            }
            if let Some(ids) = self.table.get(w) {
                out.extend_from_slice(ids);
                return;
            }
            if first == b'#' && matches!(w.as_bytes().get(1), Some(b' ' | b'\t')) {
                buf.clear();
                buf.push('#');
                buf.push_str(w[1..].trim_start_matches([' ', '\t']));
                if let Some(ids) = self.table.get(buf.as_str()) {
                    out.extend_from_slice(ids);
                    return;
                }
            }
            buf.clear();
            buf.push_str(&self.mark);
            buf.push_str(w);
            result = learned(&buf, out);
        })?;
        result
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
        fw.encode_with(" +", &mut out, |_, o| {
            o.push(100);
            Ok(())
        })
        .unwrap();
        assert_eq!(out, vec![2]);
        // an error from the learned encoder stops the encoding
        let err = fw.encode_with("a b", &mut out, |_, _| Err(crate::Error::EmptyCorpus));
        assert!(err.is_err());
    }
}
