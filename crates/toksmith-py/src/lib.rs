//! PyO3 glue: the only crate that knows about Python. It converts arguments, releases the GIL
//! around every piece of native work, and maps core errors to Python exceptions (errors.rs).
//! The public API and all policy live in the Python package `toksmith`.
//!
//! This file only registers the module's contents. Classes: `Bpe` (bpe.rs), `StreamState`
//! (stream_state.rs), `ChunkCounter` (chunk_counter.rs), `JsonTables` (json_tables.rs),
//! `WordEncoder` (word_encoder.rs), `FixedWordEncoder` (fixed_word_encoder.rs) and
//! `FixedWordDecoder` (fixed_word_decoder.rs), `Pipeline` (pipeline.rs), `Normalizer` (normalizer.rs). Functions by concern: patterns.rs, ids.rs
//! (id formats), files.rs (tokenizer-file readers), words.rs (the word-level model). Shared
//! machinery: convert.rs (sequence arguments and results without an aborting allocation: every
//! input-sized `Vec`/`String` argument is a `convert::Seq`/`Bytes`, every input-sized result is
//! built through `convert::Out`), pools.rs (thread pools), buffers.rs (buffers reused between calls), text.rs
//! (UTF-8 views of `str`), batch.rs (batch encoding), reader.rs (Python file objects as
//! `Read`), and cpython.rs, the one module with raw CPython and FFI code.

mod batch;
mod bpe;
mod buffers;
mod chunk_counter;
mod convert;
mod cpython;
mod errors;
mod files;
mod fixed_word_decoder;
mod fixed_word_encoder;
mod ids;
mod json_tables;
mod normalizer;
mod patterns;
mod pipeline;
mod pools;
mod reader;
mod stream_state;
mod superword;
mod text;
mod word_encoder;
mod words;

use pyo3::prelude::*;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<bpe::Bpe>()?;
    m.add_class::<chunk_counter::ChunkCounter>()?;
    m.add_class::<stream_state::StreamState>()?;
    m.add_function(wrap_pyfunction!(patterns::split, m)?)?;
    m.add_function(wrap_pyfunction!(patterns::named_pattern, m)?)?;
    m.add_function(wrap_pyfunction!(ids::format_ids, m)?)?;
    m.add_function(wrap_pyfunction!(ids::format_id_lines, m)?)?;
    m.add_function(wrap_pyfunction!(ids::pack_ids, m)?)?;
    m.add_function(wrap_pyfunction!(ids::parse_ids, m)?)?;
    m.add_function(wrap_pyfunction!(patterns::compile_pattern, m)?)?;
    m.add_function(wrap_pyfunction!(files::parse_tiktoken_ranks, m)?)?;
    m.add_function(wrap_pyfunction!(files::parse_merges_text, m)?)?;
    m.add_function(wrap_pyfunction!(files::toksmith_tables, m)?)?;
    m.add_function(wrap_pyfunction!(files::ranks_from_vocab_and_merges, m)?)?;
    m.add_function(wrap_pyfunction!(files::split_json_tables, m)?)?;
    m.add_function(wrap_pyfunction!(files::split_gpt2_files, m)?)?;
    m.add_function(wrap_pyfunction!(files::tiktoken_merges, m)?)?;
    m.add_class::<json_tables::JsonTables>()?;
    m.add_class::<word_encoder::WordEncoder>()?;
    m.add_class::<fixed_word_encoder::FixedWordEncoder>()?;
    m.add_class::<fixed_word_decoder::FixedWordDecoder>()?;
    m.add_class::<pipeline::Pipeline>()?;
    m.add_class::<normalizer::Normalizer>()?;
    m.add_function(wrap_pyfunction!(words::train_words, m)?)?;
    m.add_function(wrap_pyfunction!(words::fold_word_counts, m)?)?;
    m.add_function(wrap_pyfunction!(words::word_embeddings, m)?)?;
    m.add_function(wrap_pyfunction!(words::word_token_seed, m)?)?;
    m.add_function(wrap_pyfunction!(superword::train_token_merges, m)?)?;
    patterns::add_constants(m)?;
    Ok(())
}
