//! WordPiece (BERT): greedy longest match from the left, continuation pieces spelled with a
//! prefix (`##`). A word that cannot be covered, or longer than `max_input_chars_per_word`
//! characters, is one unknown token (Hugging Face `tokenizers` `models::wordpiece`).
//!
//! Two tries (whole tokens, and continuation tokens without their prefix) give each longest match
//! in one walk, so a word costs O(length x longest token) instead of the reference's shrinking
//! substring lookups.

use rustc_hash::FxHashMap;

use super::trie::Trie;
use crate::mem::{try_reserve_map, try_string};
use crate::{Error, Result};

#[derive(Debug, Clone)]
pub struct WordPiece {
    first: Trie,
    cont: Trie,
    unk_id: u32,
    max_input_chars_per_word: usize,
}

impl WordPiece {
    pub fn new(
        vocab: &FxHashMap<String, u32>,
        unk_token: &str,
        continuing_subword_prefix: &str,
        max_input_chars_per_word: usize,
    ) -> Result<Self> {
        let unk_id = *vocab.get(unk_token).ok_or_else(|| {
            Error::InvalidVocab(format!("unk_token {unk_token:?} is not in the vocabulary"))
        })?;
        let mut first = Trie::new();
        let mut cont = Trie::new();
        for (token, &id) in vocab {
            first.insert(token.as_bytes(), id)?;
            if let Some(rest) = token.strip_prefix(continuing_subword_prefix) {
                if !rest.is_empty() {
                    cont.insert(rest.as_bytes(), id)?;
                }
            }
        }
        first.finish()?;
        cont.finish()?;
        Ok(WordPiece {
            first,
            cont,
            unk_id,
            max_input_chars_per_word,
        })
    }

    /// `vocab.txt`: one token per line, ids in line order.
    pub fn vocab_from_txt(text: &str) -> Result<FxHashMap<String, u32>> {
        const WHAT: &str = "the vocabulary of a tokenizer file";
        let mut vocab = FxHashMap::default();
        // a slot a line (the inserts below never allocate)
        try_reserve_map(&mut vocab, text.lines().count(), WHAT)?;
        for (i, line) in text.lines().enumerate() {
            let token = line.trim_end_matches('\r');
            // transformers' load_vocab: a repeated token takes its last line's id
            vocab.insert(try_string(token, WHAT)?, i as u32);
        }
        Ok(vocab)
    }

    pub fn unk_id(&self) -> u32 {
        self.unk_id
    }

    /// Encode one pre-tokenized word into `out`.
    pub fn encode(&self, word: &str, out: &mut Vec<u32>) {
        if word.is_empty() {
            return;
        }
        if word.chars().count() > self.max_input_chars_per_word {
            out.push(self.unk_id);
            return;
        }
        let bytes = word.as_bytes();
        let mark = out.len();
        let mut start = 0;
        while start < bytes.len() {
            let trie = if start == 0 { &self.first } else { &self.cont };
            match trie.longest_prefix(&bytes[start..]) {
                Some((len, id)) if len > 0 => {
                    out.push(id);
                    start += len;
                }
                _ => {
                    out.truncate(mark);
                    out.push(self.unk_id);
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> WordPiece {
        let v = WordPiece::vocab_from_txt("[UNK]\nun\n##aff\n##able\nunaff\n##a\naffable\n##\n")
            .unwrap();
        WordPiece::new(&v, "[UNK]", "##", 10).unwrap()
    }

    fn enc(m: &WordPiece, w: &str) -> Vec<u32> {
        let mut out = vec![];
        m.encode(w, &mut out);
        out
    }

    #[test]
    fn greedy_longest_match() {
        let m = model();
        // "unaff" is longer than "un": greedy takes it, then "##able"
        assert_eq!(enc(&m, "unaffable"), vec![4, 3]);
        assert_eq!(enc(&m, "affable"), vec![6]);
        // greedy does not backtrack: "una" + "##ffable" is never tried
        assert_eq!(enc(&m, "unx"), vec![0]);
        assert_eq!(enc(&m, "toolongwords"), vec![0]);
        assert_eq!(enc(&m, ""), Vec::<u32>::new());
        assert!(WordPiece::new(&FxHashMap::default(), "[UNK]", "##", 100).is_err());
        assert_eq!(WordPiece::vocab_from_txt("a\nb\na\n").unwrap()["a"], 2);
    }
}
