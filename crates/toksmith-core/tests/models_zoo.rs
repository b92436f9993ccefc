//! The whole path (parser -> normalizer -> pre-tokenizer -> model -> decoder) for real model
//! files, against ids and texts produced by sentencepiece and Hugging Face `tokenizers`
//! (tools/gen_model_goldens.py; files and licences in tests/data/README.md).

use std::collections::BTreeMap;
use std::io::Read;

use rustc_hash::FxHashMap;
use toksmith_core::decoders::spm::SpmDecoder;
use toksmith_core::decoders::Decoder;
use toksmith_core::models::char_bpe::CharBpe;
use toksmith_core::models::spm::{ModelProto, ModelType, PieceType};
use toksmith_core::models::unigram::Unigram;
use toksmith_core::models::wordpiece::WordPiece;
use toksmith_core::normalizers::{BertNormalizer, Normalizer, Pattern, Precompiled, SpmNormalizer};
use toksmith_core::pipeline::Pipeline;
use toksmith_core::pre_tokenizers::{PreTokenizer, PrependScheme, Split};

fn data(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    let raw = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    if name.ends_with(".xz") {
        let mut out = Vec::new();
        lzma_rs::xz_decompress(&mut &raw[..], &mut out).expect("xz");
        out
    } else {
        raw
    }
}

struct Golden {
    /// None: a decode-only golden (random ids).
    text: Option<String>,
    ids: Vec<u32>,
    decoded: String,
}

fn goldens() -> BTreeMap<String, Vec<Golden>> {
    let raw = data("model_goldens.jsonl.xz");
    let mut s = String::new();
    (&raw[..]).read_to_string(&mut s).unwrap();
    let mut out: BTreeMap<String, Vec<Golden>> = BTreeMap::new();
    for line in s.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        out.entry(v["model"].as_str().unwrap().to_string())
            .or_default()
            .push(Golden {
                text: v["text"].as_str().map(str::to_string),
                ids: v["ids"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_u64().unwrap() as u32)
                    .collect(),
                decoded: v["decoded"].as_str().unwrap().to_string(),
            });
    }
    out
}

/// Compare every golden; report the first few differences, then fail if there was any.
fn check(
    name: &str,
    rows: &[Golden],
    encode: impl Fn(&str) -> Vec<u32>,
    decode: impl Fn(&[u32]) -> String,
) {
    assert!(rows.len() > 200, "{name}: too few goldens ({})", rows.len());
    let mut bad = 0;
    for g in rows {
        let ids = g.text.as_deref().map(&encode);
        let text = decode(&g.ids);
        if ids.as_ref().is_some_and(|ids| *ids != g.ids) || text != g.decoded {
            bad += 1;
            if bad <= 5 {
                eprintln!(
                    "{name}: text {:?}\n  ids      {:?}\n  expected {:?}\n  decoded  {:?}\n  expected {:?}",
                    g.text, ids, g.ids, text, g.decoded
                );
            }
        }
    }
    assert_eq!(bad, 0, "{name}: {bad} of {} goldens differ", rows.len());
}

struct SpmPipeline {
    normalizer: SpmNormalizer,
    model: Model,
    decoder: SpmDecoder,
}

enum Model {
    Bpe(CharBpe),
    Unigram(Unigram),
}

fn spm_pipeline(file: &str) -> SpmPipeline {
    let m = ModelProto::parse(&data(file)).expect("parse");
    let user: Vec<&str> = m
        .pieces
        .iter()
        .filter(|p| p.kind == PieceType::UserDefined)
        .map(|p| p.piece.as_str())
        .collect();
    let normalizer = SpmNormalizer::new(
        &m.normalizer_spec,
        &user,
        m.trainer_spec.treat_whitespace_as_suffix,
    )
    .unwrap();
    let model = match m.trainer_spec.model_type {
        ModelType::Bpe => Model::Bpe(CharBpe::from_spm(&m).unwrap()),
        ModelType::Unigram => Model::Unigram(Unigram::from_spm(&m).unwrap()),
        t => panic!("unexpected model type {t:?}"),
    };
    SpmPipeline {
        normalizer,
        model,
        decoder: SpmDecoder::new(&m).unwrap(),
    }
}

fn check_spm(file: &str, golden_name: &str) {
    let g = goldens();
    let p = spm_pipeline(file);
    check(
        golden_name,
        &g[golden_name],
        |t| {
            let n = p.normalizer.normalize(t).unwrap();
            let mut ids = vec![];
            match &p.model {
                Model::Bpe(b) => b.encode(&n, &mut ids).unwrap(),
                Model::Unigram(u) => u.encode(&n, &mut ids).unwrap(),
            }
            ids
        },
        |ids| p.decoder.decode(ids).unwrap(),
    );
}

/// The same goldens through [`Pipeline::from_spm_model`], sentencepiece's own behaviour (control
/// tokens in the text are text).
fn check_spm_pipeline(file: &str, golden_name: &str) {
    let g = goldens();
    let p = Pipeline::from_spm_model(&data(file)).unwrap();
    check(
        golden_name,
        &g[golden_name],
        |t| p.encode(t, p.matches_special_by_default()).unwrap(),
        |ids| p.decode(ids).unwrap(),
    );
    let texts: Vec<String> = g[golden_name]
        .iter()
        .filter_map(|r| r.text.clone())
        .collect();
    let batch = p.encode_batch(&texts, false).unwrap();
    for (t, ids) in texts.iter().zip(&batch) {
        assert_eq!(*ids, p.encode(t, false).unwrap());
    }
}

#[test]
fn spm_pipelines_match_sentencepiece() {
    check_spm_pipeline("llama2.model.xz", "llama2");
    check_spm_pipeline("mistral_v1.model.xz", "mistral_v1");
    check_spm_pipeline("t5_spm.model.xz", "t5_spm");
}

#[test]
fn wordpiece_pipeline_matches_tokenizers() {
    let txt = String::from_utf8(data("bert_base_uncased_vocab.txt.xz")).unwrap();
    let special: Vec<String> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let p = Pipeline::from_wordpiece_vocab(&txt, "[UNK]", &special, true, None, true).unwrap();
    let g = goldens();
    check(
        "bert_hf",
        &g["bert_hf"],
        |t| p.encode(t, true).unwrap(),
        |ids| p.decode(ids).unwrap(),
    );
}

#[test]
fn llama2_model_matches_sentencepiece() {
    check_spm("llama2.model.xz", "llama2");
}

#[test]
fn mistral_v1_model_matches_sentencepiece() {
    check_spm("mistral_v1.model.xz", "mistral_v1");
}

#[test]
fn t5_model_matches_sentencepiece() {
    check_spm("t5_spm.model.xz", "t5_spm");
}

/// Added tokens (matched in the raw text, longest first at the leftmost position), and the text
/// between them as (segment, starts the text).
fn split_added<'a>(
    text: &'a str,
    added: &FxHashMap<String, u32>,
) -> Vec<Result<u32, (&'a str, bool)>> {
    let mut out = Vec::new();
    let mut last = 0;
    let mut i = 0;
    while i < text.len() {
        let best = added
            .iter()
            .filter(|(t, _)| text[i..].starts_with(t.as_str()))
            .max_by_key(|(t, _)| t.len());
        match best {
            Some((t, &id)) => {
                if last < i {
                    out.push(Err((&text[last..i], last == 0)));
                }
                out.push(Ok(id));
                i += t.len();
                last = i;
            }
            None => i += text[i..].chars().next().unwrap().len_utf8(),
        }
    }
    if last < text.len() {
        out.push(Err((&text[last..], last == 0)));
    }
    out
}

type WordEncoder<'a> = Box<dyn Fn(&str, &mut Vec<u32>) + 'a>;

struct HfPipeline<'a> {
    added: FxHashMap<String, u32>,
    normalizer: Normalizer,
    pre: PreTokenizer,
    encode_word: WordEncoder<'a>,
}

impl HfPipeline<'_> {
    fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = vec![];
        for part in split_added(text, &self.added) {
            match part {
                Ok(id) => ids.push(id),
                Err((seg, at_start)) => {
                    let n = self.normalizer.normalize(seg).unwrap();
                    for s in self
                        .pre
                        .pre_tokenize(vec![Split::new(n, at_start)])
                        .unwrap()
                    {
                        (self.encode_word)(&s.text, &mut ids);
                    }
                }
            }
        }
        ids
    }
}

#[test]
fn t5_tokenizer_json_pipeline_matches_tokenizers() {
    // The T5 tokenizer.json is the spiece.model's vocabulary and charsmap plus 100 extra ids.
    let m = ModelProto::parse(&data("t5_spm.model.xz")).unwrap();
    let vocab: Vec<(String, f64)> = m
        .pieces
        .iter()
        .map(|p| (p.piece.clone(), f64::from(p.score)))
        .collect();
    let n = vocab.len() as u32;
    let unigram = Unigram::from_vocab(vocab, Some(2), false).unwrap();
    let mut added: FxHashMap<String, u32> = [("<pad>", 0), ("</s>", 1), ("<unk>", 2)]
        .iter()
        .map(|(t, i)| (t.to_string(), *i))
        .collect();
    for k in 0..100u32 {
        added.insert(format!("<extra_id_{k}>"), n + 99 - k);
    }
    let p = HfPipeline {
        added: added.clone(),
        normalizer: Normalizer::Sequence(vec![
            Normalizer::Precompiled(
                Precompiled::from_blob(&m.normalizer_spec.precompiled_charsmap).unwrap(),
            ),
            Normalizer::Strip {
                left: false,
                right: true,
            },
            Normalizer::Replace {
                pattern: Pattern::regex(" {2,}").unwrap(),
                content: "\u{2581}".into(),
            },
        ]),
        pre: PreTokenizer::Metaspace {
            replacement: '\u{2581}',
            prepend_scheme: PrependScheme::Always,
            split: true,
        },
        encode_word: Box::new(|w, ids| unigram.encode(w, ids).unwrap()),
    };
    let by_id: FxHashMap<u32, String> = added.iter().map(|(t, i)| (*i, t.clone())).collect();
    let decoder = Decoder::Metaspace {
        replacement: '\u{2581}',
        prepend_scheme_never: false,
    };
    let g = goldens();
    check(
        "t5_hf",
        &g["t5_hf"],
        |t| p.encode(t),
        |ids| {
            let tokens = ids
                .iter()
                .map(|i| {
                    by_id
                        .get(i)
                        .cloned()
                        .unwrap_or_else(|| unigram.id_to_piece(*i).unwrap().to_string())
                })
                .collect();
            decoder.decode(tokens).unwrap()
        },
    );
}

#[test]
fn bert_pipeline_matches_tokenizers() {
    let txt = String::from_utf8(data("bert_base_uncased_vocab.txt.xz")).unwrap();
    let vocab = WordPiece::vocab_from_txt(&txt).unwrap();
    let wp = WordPiece::new(&vocab, "[UNK]", "##", 100).unwrap();
    let added: FxHashMap<String, u32> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        .iter()
        .map(|t| (t.to_string(), vocab[*t]))
        .collect();
    let p = HfPipeline {
        added,
        normalizer: Normalizer::Bert(BertNormalizer::default()),
        pre: PreTokenizer::Bert,
        encode_word: Box::new(|w, ids| wp.encode(w, ids)),
    };
    let by_id: FxHashMap<u32, &str> = vocab.iter().map(|(t, i)| (*i, t.as_str())).collect();
    let decoder = Decoder::WordPiece {
        prefix: "##".into(),
        cleanup: true,
    };
    let g = goldens();
    check(
        "bert_hf",
        &g["bert_hf"],
        |t| p.encode(t),
        |ids| {
            decoder
                .decode(ids.iter().map(|i| by_id[i].to_string()).collect())
                .unwrap()
        },
    );
}

#[test]
fn truncated_model_files_are_errors_with_offsets() {
    let full = data("llama2.model.xz");
    for cut in [1, 2, 3, 7, 100, 1000, full.len() / 2, full.len() - 1] {
        match ModelProto::parse(&full[..cut]) {
            Err(e) => assert!(e.offset <= cut, "cut {cut}: offset {}", e.offset),
            // a cut between two top-level fields is a shorter valid message
            Ok(m) => assert!(m.pieces.len() < 32000),
        }
    }
    let mut flipped = full.clone();
    flipped[1] = 0xff; // the first piece's length varint now runs on
    assert!(ModelProto::parse(&flipped).is_err());
}

#[test]
fn corrupted_model_files_never_panic() {
    // Random byte flips over a real file: parsing either fails with an offset inside the file or
    // yields a model that builds and encodes without panicking.
    let full = data("t5_spm.model.xz");
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..60 {
        let mut bad = full.clone();
        for _ in 0..1 + next() % 4 {
            let at = (next() % bad.len() as u64) as usize;
            bad[at] = next() as u8;
        }
        match ModelProto::parse(&bad) {
            Err(e) => assert!(e.offset <= bad.len()),
            Ok(m) => {
                if let Ok(u) = Unigram::from_spm(&m) {
                    let mut ids = vec![];
                    let _ = u.encode("\u{2581}Hello\u{2581}world", &mut ids);
                }
                if let Ok(b) = CharBpe::from_spm(&m) {
                    let mut ids = vec![];
                    let _ = b.encode("\u{2581}Hello\u{2581}world", &mut ids);
                }
                if let Ok(n) = SpmNormalizer::new(&m.normalizer_spec, &[], false) {
                    let _ = n.normalize("ＡＢ ｃ  d");
                }
                let _ = SpmDecoder::new(&m).unwrap().decode(&[0, 1, 2, 3, 40000]);
            }
        }
    }
}

/// Throughput of each pipeline on one thread (run by hand: the text file is not in the repo):
/// `TOKSMITH_BENCH_TEXT=file cargo test --release --test models_zoo -- --ignored --nocapture`.
#[test]
#[ignore]
fn throughput() {
    let path =
        std::env::var("TOKSMITH_BENCH_TEXT").expect("set TOKSMITH_BENCH_TEXT to a text file");
    let text = String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    let mb = text.len() as f64 / 1e6;
    for file in ["llama2.model.xz", "t5_spm.model.xz"] {
        let p = spm_pipeline(file);
        let t = std::time::Instant::now();
        let mut n = 0;
        for l in &lines {
            let norm = p.normalizer.normalize(l).unwrap();
            let mut ids = vec![];
            match &p.model {
                Model::Bpe(b) => b.encode(&norm, &mut ids).unwrap(),
                Model::Unigram(u) => u.encode(&norm, &mut ids).unwrap(),
            }
            n += ids.len();
        }
        let s = t.elapsed().as_secs_f64();
        eprintln!("{file}: {n} ids, {:.1} MB/s", mb / s);
    }
    let txt = String::from_utf8(data("bert_base_uncased_vocab.txt.xz")).unwrap();
    let vocab = WordPiece::vocab_from_txt(&txt).unwrap();
    let wp = WordPiece::new(&vocab, "[UNK]", "##", 100).unwrap();
    let norm = Normalizer::Bert(BertNormalizer::default());
    let t = std::time::Instant::now();
    let mut n = 0;
    for l in &lines {
        let s = norm.normalize(l).unwrap();
        let mut ids = vec![];
        for w in PreTokenizer::Bert.pre_tokenize_str(&s).unwrap() {
            wp.encode(&w.text, &mut ids);
        }
        n += ids.len();
    }
    eprintln!("bert: {n} ids, {:.1} MB/s", mb / t.elapsed().as_secs_f64());
}
