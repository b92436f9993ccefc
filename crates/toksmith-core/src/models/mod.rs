//! Tokenization models beside byte-level BPE (one module each).

pub mod char_bpe;
pub mod spm;
pub mod trie;
pub mod unigram;
pub mod wordpiece;
