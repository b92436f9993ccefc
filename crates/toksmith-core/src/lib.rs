//! toksmith-core: the hot paths of toksmith, with no Python in sight.
//!
//! * [`pretokenize`]: named-pattern scanners and a regex fallback;
//! * [`train`]: parallel chunk counting and the incremental BPE merge loop;
//! * [`vocab`]: the token table (ids <-> bytes, specials, pinned tokens);
//! * [`encode`]: tiktoken-exact BPE encoding with a linear-ish worst case;
//! * [`piece_cache`]: per-thread cache of BPE results for pieces that are not one token;
//! * [`decode`]: ids -> bytes (the streaming decoder is policy, in `toksmith/decoding.py`);
//! * [`ids_format`]: ids as decimal text or little-endian integers (command-line output);
//! * [`mem`]: prefetch hints and huge-page advice for large fresh buffers;
//! * [`bytelevel`]: GPT-2's byte-level alphabet (token bytes spelled as printable text);
//! * [`vocab_files`]: the big tables of tokenizer files, parsed and checked in one pass;
//! * [`utf8`]: UTF-8 to the fixed-width storage of Python strings;
//! * [`words`]: the word-level `</w>` model (character merges, greedy longest match, embeddings);
//! * [`fixed_words`]: a whole-word fixed-id vocabulary in front of BPE (CppReason).

pub mod bpe_json;
pub mod bytelevel;
pub mod decode;
pub mod decoders;
pub mod encode;
pub mod error;
pub mod fixed_words;
pub mod ids_format;
pub mod mem;
pub mod models;
pub mod normalizers;
pub mod piece_cache;
pub mod pre_tokenizers;
pub mod pretokenize;
pub mod train;
pub mod utf8;
pub mod vocab;
pub mod vocab_files;
pub mod words;

pub use error::{Error, Result};
