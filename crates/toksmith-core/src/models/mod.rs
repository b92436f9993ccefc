//! Tokenizer models other than the byte-level BPE of [`crate::encode`], one file per model:
//!
//! * [`words`]: the word-level `</w>` model (character merges, greedy longest match,
//!   embeddings);
//! * [`fixed_words`]: a whole-word fixed-id vocabulary in front of BPE (CppReason);
//! * [`char_bpe`]: BPE over characters with byte fallback (Hugging Face BPE, SentencePiece BPE);
//! * [`unigram`]: Unigram (Viterbi over piece scores; SentencePiece and Hugging Face);
//! * [`wordpiece`]: WordPiece (greedy longest match with a continuing-subword prefix);
//! * [`spm`]: the SentencePiece `.model` protobuf reader;
//! * [`trie`]: the byte trie the models above share;
//! * [`word_cache`]: the per-thread cache of whole words' ids.

pub mod char_bpe;
pub mod fixed_words;
pub mod spm;
pub mod trie;
pub mod unigram;
pub mod word_cache;
pub mod wordpiece;
pub mod words;
