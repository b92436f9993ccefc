//! One error type for the whole core. The Python glue maps each variant to a
//! specific Python exception in exactly one place (`toksmith-py/src/errors.rs`).

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum Error {
    /// A custom split pattern that does not compile.
    #[error("invalid regex pattern{}: {message} (pattern: {pattern:?})", position.map(|p| format!(" at position {p}")).unwrap_or_default())]
    InvalidPattern {
        pattern: String,
        position: Option<usize>,
        message: String,
    },
    /// The regex engine gave up on an input (backtrack limit).
    #[error("the regex engine of the custom split pattern failed on the input: {0}; use a named pattern (gpt2, cl100k, o200k, nanochat: hand-written scanners without such limits), simplify the pattern, or split the text first")]
    RegexRuntime(String),
    /// The requested vocabulary cannot hold the fixed part (bytes + specials + pinned).
    #[error("vocab_size={vocab_size} is too small: it must be at least {minimum} (256 byte tokens + {fixed} special/pinned tokens)")]
    VocabTooSmall {
        vocab_size: u64,
        minimum: u64,
        fixed: u64,
    },
    /// Nothing to learn from.
    #[error("the training corpus is empty: pass at least one non-empty text")]
    EmptyCorpus,
    /// A token id outside the vocabulary.
    #[error("token id {id} is out of range: valid ids are below {n_vocab} (excluding unused ids)")]
    UnknownId { id: u64, n_vocab: u64 },
    /// Bytes that are not a single token.
    #[error("{0:?} is not a single token of this vocabulary")]
    NotAToken(Vec<u8>),
    /// An inconsistent vocabulary (duplicate ids, duplicate tokens, missing bytes...).
    #[error("invalid vocabulary: {0}")]
    InvalidVocab(String),
    /// Merge list cannot be recovered from a rank table.
    #[error("cannot recover merges: {0}")]
    MergesUnrecoverable(String),
    /// A corpus file that is not valid UTF-8.
    #[error("{source_name} is not valid UTF-8 at byte offset {offset}; pass errors=\"replace\" to replace bad bytes with U+FFFD")]
    InvalidUtf8 { source_name: String, offset: u64 },
    /// A file that cannot be read.
    #[error("cannot read {path}: {message}")]
    Io { path: String, message: String },
    /// Bad argument value.
    #[error("{0}")]
    InvalidArgument(String),
    /// Work given up because the caller asked it to stop (Ctrl-C).
    #[error("interrupted")]
    Interrupted,
    /// An allocation the allocator refused (a size taken from an argument).
    #[error("out of memory: {0}")]
    OutOfMemory(String),
}

pub type Result<T> = std::result::Result<T, Error>;
