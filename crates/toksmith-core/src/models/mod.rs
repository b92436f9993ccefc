//! Tokenizer models other than the byte-level BPE of [`crate::encode`], one file per model:
//!
//! * [`words`]: the word-level `</w>` model (character merges, greedy longest match,
//!   embeddings);
//! * [`fixed_words`]: a whole-word fixed-id vocabulary in front of BPE (CppReason).

pub mod fixed_words;
pub mod words;
