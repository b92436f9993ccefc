//! Criterion micro-benchmarks of toksmith-core's hot paths, separate from the Python-level
//! comparison in `benches/` (repo root).
//!
//! ```sh
//! cargo bench -p toksmith-core                     # all groups
//! cargo bench -p toksmith-core -- encode/cl100k    # a filter
//! cargo bench -p toksmith-core -- --measurement-time 1 --warm-up-time 0.5
//! ```
//!
//! Inputs: the corpus slices and rank files under `tests/data` (in the repository), or
//! `$TOKSMITH_BENCH_TEXT` (a UTF-8 file) for the text. Throughput is reported in bytes of
//! input text (pre-tokenization, encoding, counting), of output text (decoding) or of file
//! (loading); merges per second for `train_merges`.
//!
//! The encoder keeps a per-thread piece cache, so after criterion's first iteration the
//! `encode` group measures warm-cache throughput on text it has seen; the Python-level harness
//! (`python -m benches.run`) measures one pass over unseen text after a warm-up on other text.
//! Criterion's estimates land in `target/criterion/<group>/<function>/<input>/new/`.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::path::{Path, PathBuf};
use std::time::Duration;
use toksmith_core::decode::decode_bytes;
use toksmith_core::encode::Encoder;
use toksmith_core::pretokenize::Pretokenizer;
use toksmith_core::train::{train_merges, ChunkCounter};
use toksmith_core::vocab::Vocab;

const PATTERNS: &[&str] = &["gpt2", "cl100k", "o200k", "nanochat"];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The benchmark text: `$TOKSMITH_BENCH_TEXT`, else every `tests/data/corpora/*.txt`
/// concatenated (about 750 KB of English, Python, C++, JavaScript and shell).
fn bench_text() -> String {
    if let Ok(p) = std::env::var("TOKSMITH_BENCH_TEXT") {
        return std::fs::read_to_string(&p)
            .unwrap_or_else(|e| panic!("TOKSMITH_BENCH_TEXT={p}: {e}"));
    }
    let dir = repo_root().join("tests/data/corpora");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|x| x == "txt"));
    files.sort();
    let mut text = String::new();
    for f in files {
        text.push_str(&std::fs::read_to_string(&f).unwrap_or_default());
    }
    if text.is_empty() {
        // no data at all: synthetic text so the suite still runs
        let words = [
            "the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "fn", "main()", "{",
            "}", "42", "éclair",
        ];
        let mut state = 12345u64;
        while text.len() < 500_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            text.push_str(words[(state >> 33) as usize % words.len()]);
            text.push(if (state >> 20).is_multiple_of(11) {
                '\n'
            } else {
                ' '
            });
        }
    }
    text
}

fn b64_value(c: u8) -> Option<u32> {
    Some(match c {
        b'A'..=b'Z' => (c - b'A') as u32,
        b'a'..=b'z' => (c - b'a' + 26) as u32,
        b'0'..=b'9' => (c - b'0' + 52) as u32,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    })
}

fn b64_decode(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for &c in s {
        if c == b'=' {
            break;
        }
        let v = b64_value(c).expect("invalid base64 in rank file");
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// A tiktoken rank file (`base64 rank` per line).
fn read_tiktoken(path: &Path) -> Option<Vec<(Vec<u8>, u32)>> {
    let data = std::fs::read(path).ok()?;
    let mut out = Vec::new();
    for line in data.split(|&b| b == b'\n') {
        let mut it = line.split(|&b| b == b' ');
        if let (Some(tok), Some(rank)) = (it.next(), it.next()) {
            let rank: u32 = std::str::from_utf8(rank).ok()?.trim().parse().ok()?;
            out.push((b64_decode(tok), rank));
        }
    }
    Some(out)
}

fn rank_file(name: &str) -> Option<PathBuf> {
    let candidates = [
        repo_root().join("tests/data/vocabs").join(name),
        repo_root().join("../shared/data/vocabs").join(name),
    ];
    candidates.into_iter().find(|p| p.exists())
}

/// Train a vocab of `256 + merges` tokens on `text` (for patterns without a real rank file).
fn trained_vocab(pattern: &str, text: &str, merges: usize) -> Vec<(Vec<u8>, u32)> {
    let mut counter = ChunkCounter::new(Pretokenizer::new(pattern).unwrap(), vec![]).unwrap();
    counter.add_texts(&[text]).unwrap();
    let counts = counter.into_counts();
    let pairs = train_merges(&counts, merges, &mut |_| true).unwrap();
    let mut toks: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    for (a, b) in pairs {
        let mut t = toks[a as usize].clone();
        t.extend_from_slice(&toks[b as usize]);
        toks.push(t);
    }
    toks.into_iter()
        .enumerate()
        .map(|(i, t)| (t, i as u32))
        .collect()
}

/// (label, encoder) for gpt2 and cl100k (real rank files when present) and o200k (trained).
fn encoders(text: &str) -> Vec<(String, Encoder)> {
    let mut out = Vec::new();
    for (pattern, file) in [
        ("gpt2", "gpt2.tiktoken"),
        ("cl100k", "cl100k_base.tiktoken"),
        ("o200k", ""),
    ] {
        let (ranks, label) = match rank_file(file).and_then(|p| read_tiktoken(&p)) {
            Some(r) if !file.is_empty() => (r, pattern.to_string()),
            _ => (
                trained_vocab(pattern, text, 8192),
                format!("{pattern}-trained8k"),
            ),
        };
        let vocab = Vocab::new(ranks, vec![]).expect("valid vocab");
        out.push((
            label,
            Encoder::new(vocab, Pretokenizer::new(pattern).unwrap()).unwrap(),
        ));
    }
    out
}

fn pretokenize(c: &mut Criterion) {
    let text = bench_text();
    let mut g = c.benchmark_group("pretokenize");
    g.throughput(Throughput::Bytes(text.len() as u64));
    for &p in PATTERNS {
        let pre = Pretokenizer::new(p).unwrap();
        g.bench_function(BenchmarkId::new("scanner", p), |b| {
            b.iter(|| {
                let mut n = 0usize;
                pre.for_each_piece(black_box(&text), |piece| n += piece.len())
                    .unwrap();
                n
            })
        });
    }
    // the regex engine on the same pattern, for scale (a slice: it is much slower)
    let slice = &text[..text
        .char_indices()
        .nth(100_000)
        .map_or(text.len(), |(i, _)| i)];
    g.throughput(Throughput::Bytes(slice.len() as u64));
    let re = Pretokenizer::new_regex("cl100k").unwrap();
    g.bench_function(BenchmarkId::new("regex", "cl100k"), |b| {
        b.iter(|| {
            let mut n = 0usize;
            re.for_each_piece(black_box(slice), |piece| n += piece.len())
                .unwrap();
            n
        })
    });
    g.finish();
}

fn encode(c: &mut Criterion) {
    let text = bench_text();
    let mut g = c.benchmark_group("encode");
    g.throughput(Throughput::Bytes(text.len() as u64));
    let encs = encoders(&text);
    for (label, enc) in &encs {
        g.bench_function(BenchmarkId::new("encode_ordinary", label), |b| {
            b.iter(|| enc.encode_ordinary(black_box(&text)).unwrap())
        });
    }
    g.finish();

    // worst cases: one long piece each
    let mut g = c.benchmark_group("encode_worst");
    let (label, enc) = &encs[1];
    for (name, input) in [
        ("letter_100k", "a".repeat(100_000)),
        ("spaces_100k", " ".repeat(100_000)),
        ("digits_100k", "1234567890".repeat(10_000)),
    ] {
        g.throughput(Throughput::Bytes(input.len() as u64));
        g.bench_function(BenchmarkId::new(name, label), |b| {
            b.iter(|| enc.encode_ordinary(black_box(&input)).unwrap())
        });
    }
    g.finish();
}

fn decode(c: &mut Criterion) {
    let text = bench_text();
    let mut g = c.benchmark_group("decode");
    g.throughput(Throughput::Bytes(text.len() as u64));
    for (label, enc) in encoders(&text) {
        let ids = enc.encode_ordinary(&text).unwrap();
        g.bench_function(BenchmarkId::new("decode_bytes", &label), |b| {
            b.iter(|| decode_bytes(&enc.vocab, black_box(&ids)).unwrap())
        });
    }
    g.finish();
}

fn train(c: &mut Criterion) {
    let text = bench_text();
    let docs: Vec<&str> = text.split_inclusive("\n\n").collect();
    let mut g = c.benchmark_group("train");
    g.throughput(Throughput::Bytes(text.len() as u64));
    for p in ["cl100k", "nanochat"] {
        g.bench_function(BenchmarkId::new("count_chunks", p), |b| {
            b.iter(|| {
                let mut counter = ChunkCounter::new(Pretokenizer::new(p).unwrap(), vec![]).unwrap();
                counter.add_texts(black_box(&docs)).unwrap();
                counter.num_unique()
            })
        });
    }
    let mut counter = ChunkCounter::new(Pretokenizer::new("cl100k").unwrap(), vec![]).unwrap();
    counter.add_texts(&docs).unwrap();
    let counts = counter.into_counts();
    for merges in [1024usize, 4096] {
        g.throughput(Throughput::Elements(merges as u64));
        g.bench_function(BenchmarkId::new("train_merges_cl100k", merges), |b| {
            b.iter(|| {
                train_merges(black_box(&counts), merges, &mut |_| true)
                    .unwrap()
                    .len()
            })
        });
    }
    g.finish();
}

/// A token's spelling in the byte-level alphabet (as in tokenizer.json and toksmith files).
fn spell(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| {
            char::from_u32(toksmith_core::bytelevel::BYTE_TO_CHAR[b as usize] as u32).unwrap()
        })
        .collect()
}

/// A Hugging Face tokenizer.json (BPE model: vocab and merges) for a rank table.
fn tokenizer_json(vocab: &Vocab, ranks: &[(Vec<u8>, u32)]) -> String {
    use std::fmt::Write;
    let mut text =
        String::from(r#"{"version":"1.0","added_tokens":[],"model":{"type":"BPE","vocab":{"#);
    for (k, (t, id)) in ranks.iter().enumerate() {
        let sep = if k == 0 { "" } else { "," };
        let key = serde_json::to_string(&spell(t)).unwrap();
        write!(text, "{sep}{key}:{id}").unwrap();
    }
    text.push_str(r#"},"merges":["#);
    for (k, (a, b, _)) in vocab.recover_merges().unwrap().into_iter().enumerate() {
        let sep = if k == 0 { "" } else { "," };
        let line = format!(
            "{} {}",
            spell(vocab.token_bytes(a).unwrap()),
            spell(vocab.token_bytes(b).unwrap())
        );
        write!(text, "{sep}{}", serde_json::to_string(&line).unwrap()).unwrap();
    }
    text.push_str("]}}");
    text
}

/// Reading tokenizer files: a `.tiktoken` rank file's lines, a `tokenizer.json`'s tables
/// (parsed and decoded), their checks, and building the encoder's tables. Bytes of file.
fn load(c: &mut Criterion) {
    use toksmith_core::bpe_json::{self, Layout};
    use toksmith_core::vocab_files;
    let mut g = c.benchmark_group("load");
    for (label, file) in [
        ("gpt2", "gpt2.tiktoken"),
        ("cl100k", "cl100k_base.tiktoken"),
    ] {
        let Some(path) = rank_file(file) else {
            continue;
        };
        let raw = std::fs::read(&path).unwrap();
        g.throughput(Throughput::Bytes(raw.len() as u64));
        g.bench_function(BenchmarkId::new("parse_tiktoken", label), |b| {
            b.iter(|| {
                vocab_files::parse_tiktoken(black_box(&raw))
                    .unwrap()
                    .unwrap()
                    .len()
            })
        });
        let ranks = vocab_files::parse_tiktoken(&raw).unwrap().unwrap();
        g.bench_function(BenchmarkId::new("vocab_new", label), |b| {
            b.iter(|| {
                Vocab::new(black_box(ranks.clone()), vec![])
                    .unwrap()
                    .n_vocab()
            })
        });
        let vocab = Vocab::new(ranks.clone(), vec![]).unwrap();
        let json = tokenizer_json(&vocab, &ranks);
        g.throughput(Throughput::Bytes(json.len() as u64));
        g.bench_function(BenchmarkId::new("split_tokenizer_json", label), |b| {
            b.iter(|| {
                bpe_json::split(black_box(json.as_bytes()), Layout::HuggingFace)
                    .unwrap()
                    .unwrap()
                    .entries
                    .len()
            })
        });
        let t = bpe_json::split(json.as_bytes(), Layout::HuggingFace)
            .unwrap()
            .unwrap();
        g.bench_function(BenchmarkId::new("check_tokenizer_json", label), |b| {
            b.iter(|| {
                let entries = t
                    .vocab_entries(&rustc_hash::FxHashMap::<u32, &str>::default())
                    .unwrap()
                    .unwrap();
                let (kept, _) = vocab_files::ranks_from_vocab_and_merges(
                    &t.tokens, &entries, &t.parts, &t.merges,
                )
                .unwrap()
                .unwrap();
                assert_eq!(
                    vocab_files::merges_listed(&vocab, &t.parts, &t.merges),
                    Ok(Some(true))
                );
                kept.len()
            })
        });
    }
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args()
}

criterion_group! {
    name = benches;
    config = config();
    targets = pretokenize, encode, decode, train, load
}
criterion_main!(benches);
