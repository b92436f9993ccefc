//! toksmith-core: the hot paths of toksmith, with no Python in sight.
//!
//! Modules depend on each other in one direction only (no cycle):
//!
//! * [`pretokenize`]: named-pattern scanners and a regex fallback;
//! * [`added`]: special and pinned tokens, their matcher, and the safe places to cut a text;
//! * [`table`]: inline-key hash tables (the vocabulary's and the piece cache's);
//! * [`vocab`]: the token table (ids <-> bytes, specials, pinned tokens);
//! * [`bpe`]: the byte-level BPE merge (short pieces, long pieces, chunked), merge recovery;
//! * [`encode`]: tiktoken-exact encoding with a linear-ish worst case, and its per-thread
//!   [`piece_cache`] of pieces that are not one token;
//! * [`train`]: parallel chunk counting and the incremental BPE merge loop;
//! * [`models`]: other models: [`words`] (the word-level `</w>` model: character merges,
//!   greedy longest match, embeddings), [`fixed_words`] (a whole-word fixed-id vocabulary in
//!   front of BPE, for CppReason);
//! * [`pipeline`]: whole non-byte-level tokenizers (SentencePiece `.model`, `tokenizer.json` with
//!   Unigram / WordPiece / character BPE): normalizer, added tokens, pre-tokenizer, model, decoder;
//! * [`decode`]: ids -> bytes (the streaming decoder is policy, in `toksmith/decoding.py`);
//! * [`ids_format`]: ids as decimal text or little-endian integers (command-line output);
//! * [`mem`]: prefetch hints and huge-page advice for large fresh buffers;
//! * [`bytelevel`]: GPT-2's byte-level alphabet (token bytes spelled as printable text);
//! * [`vocab_files`]: the big tables of tokenizer files, parsed and checked in one pass;
//! * [`bpe_json`]: the big tables of JSON tokenizer files, decoded natively;
//! * [`utf8`]: UTF-8 to the fixed-width storage of Python strings.

pub mod added;
pub mod bpe;
pub mod bpe_json;
pub mod bytelevel;
pub mod decode;
pub mod decoders;
pub mod encode;
pub mod error;
pub mod ids_format;
pub mod mem;
pub mod models;
pub mod normalizers;
pub mod pipeline;
pub mod pre_tokenizers;
pub mod pretokenize;
pub mod table;
pub mod tag;
pub mod train;
pub mod utf8;
pub mod vocab;
pub mod vocab_files;

pub use error::{Error, Result};
// The modules' paths before they moved into folders (the bindings use these).
pub use encode::piece_cache;
pub use models::{fixed_words, words};
