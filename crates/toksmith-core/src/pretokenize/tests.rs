use super::*;

/// A small deterministic PRNG (xorshift) so the fuzz tests need no extra crate.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Characters that exercise every branch of the scanners: ASCII, letters of every case class,
/// marks, digits of several scripts, all kinds of whitespace, apostrophes and CR/LF.
const ALPHABET: &[char] = &[
    'a', 'b', 'e', 'l', 'd', 'm', 'r', 's', 't', 'v', 'A', 'B', 'E', 'L', 'D', 'M', 'R', 'S', 'T',
    'V', 'ſ', 'é', 'É', 'ǅ', 'ʰ', 'あ', '中', 'ß', 'Ω', 'ж', 'Ж', '\u{0301}', '\u{0308}',
    '\u{093F}', '0', '1', '9', '٣', '५', '²', 'Ⅻ', '½', ' ', ' ', ' ', '\t', '\n', '\r', '\u{0b}',
    '\u{0c}', '\u{85}', '\u{a0}', '\u{2028}', '\u{3000}', '\u{1680}', '\u{1c}', '\'', '\'', '"',
    '.', ',', '!', '/', '-', '_', '(', ')', '{', '#', '😀', '🌍', '\u{200d}', '\u{fe0f}', '€', '$',
];

fn random_text(rng: &mut Rng, max_len: usize) -> String {
    let len = rng.below(max_len + 1);
    (0..len)
        .map(|_| ALPHABET[rng.below(ALPHABET.len())])
        .collect()
}

fn check_equal(name: &str, texts: &[String]) {
    let fast = Pretokenizer::new(name).unwrap();
    assert!(fast.is_fast(), "{name} should use a scanner");
    let slow = Pretokenizer::new_regex(name).unwrap();
    for text in texts {
        let a = fast.split(text).unwrap();
        let b = slow.split(text).unwrap();
        assert_eq!(a, b, "pattern {name} differs on {text:?}");
    }
}

fn fuzz_corpus(seed: u64) -> Vec<String> {
    let mut rng = Rng(seed);
    let mut texts: Vec<String> = (0..4000).map(|_| random_text(&mut rng, 24)).collect();
    texts.extend([
        "Hello, world! It's a test.\n\nThe  end.  ".to_string(),
        "I'LL DON'T we'Re they've ſ's 'S".to_string(),
        "12345 ٣٣٣٣ 1,000,000\r\n\r\n  \t x".to_string(),
        "   \n\n   ".to_string(),
        "fn main() {\n    println!(\"hi\");\n}\n".to_string(),
        String::new(),
    ]);
    texts
}

#[test]
fn scanners_equal_regex_on_random_text() {
    for (name, _) in NAMED_PATTERNS {
        check_equal(name, &fuzz_corpus(0x9E3779B97F4A7C15));
    }
}

#[test]
fn regex_stack_overflow_is_an_error_that_names_the_place() {
    let pre = Pretokenizer::new(r"\s+(?!\S)|\s+|\S+").unwrap();
    let text = format!("ab{}x", " ".repeat(1_100_000));
    let err = pre.split(&text).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::RegexRuntime(_)));
    assert!(
        msg.contains("backtracking stack") && msg.contains("at byte 2"),
        "{msg}"
    );
    assert!(msg.contains("use a named pattern"), "{msg}");
    // the named pattern's scanner has no such limit
    let named = Pretokenizer::new("cl100k").unwrap();
    assert_eq!(named.split(&text).unwrap().len(), 3);
}

#[test]
fn rustbpe_default_pattern_uses_scanner() {
    let p = Pretokenizer::new(RUSTBPE_GPT4_PATTERN).unwrap();
    assert!(p.is_fast());
    let r = Pretokenizer::new_regex(RUSTBPE_GPT4_PATTERN).unwrap();
    for t in fuzz_corpus(7) {
        assert_eq!(p.split(&t).unwrap(), r.split(&t).unwrap(), "{t:?}");
    }
}

#[test]
fn llama3_and_qwen_spellings_use_the_cl100k_scanner() {
    for pattern in [LLAMA3_PATTERN, QWEN_PATTERN] {
        let p = Pretokenizer::new(pattern).unwrap();
        assert!(p.is_fast(), "{pattern}");
        assert_eq!(p.pattern(), pattern);
        let r = Pretokenizer::new_regex(pattern).unwrap();
        for t in fuzz_corpus(13) {
            assert_eq!(p.split(&t).unwrap(), r.split(&t).unwrap(), "{t:?}");
        }
    }
    let q = Pretokenizer::new(QWEN_PATTERN).unwrap();
    assert_eq!(
        q.split("x 2024\n\n").unwrap(),
        vec!["x", " ", "2", "0", "2", "4", "\n\n"]
    );
    // a near spelling that differs (two digits) stays on the regex engine
    let near = LLAMA3_PATTERN.replace("{1,3}", "{1,2}");
    assert!(!Pretokenizer::new(&near).unwrap().is_fast());
}

#[test]
fn original_gpt2_pattern_same_pieces() {
    let p = Pretokenizer::new(GPT2_ORIGINAL_PATTERN).unwrap();
    let r = Pretokenizer::new_regex(GPT2_ORIGINAL_PATTERN).unwrap();
    for t in fuzz_corpus(11) {
        assert_eq!(p.split(&t).unwrap(), r.split(&t).unwrap(), "{t:?}");
    }
}

#[test]
fn pieces_concatenate_to_input() {
    let p = Pretokenizer::new("o200k").unwrap();
    for t in fuzz_corpus(3) {
        assert_eq!(p.split(&t).unwrap().concat(), t);
    }
}

#[test]
fn known_splits() {
    let p = Pretokenizer::new("cl100k").unwrap();
    assert_eq!(
        p.split("Hello, world! I'm 12345 ok  \n\n").unwrap(),
        vec!["Hello", ",", " world", "!", " I", "'m", " ", "123", "45", " ok", "  \n\n"]
    );
    let n = Pretokenizer::new("nanochat").unwrap();
    assert_eq!(n.split("12345").unwrap(), vec!["12", "34", "5"]);
}

#[test]
fn bad_regex_reports_position() {
    let err = Pretokenizer::new("abc(def").unwrap_err();
    match err {
        Error::InvalidPattern { .. } => {}
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn custom_regex_works() {
    let p = Pretokenizer::new(r"\w+|\s+|[^\w\s]+").unwrap();
    assert!(!p.is_fast());
    assert_eq!(p.split("ab, cd").unwrap(), vec!["ab", ",", " ", "cd"]);
}

/// Mostly-ASCII text (words, numbers, code punctuation, CR/LF and space runs) with occasional
/// non-ASCII letters, marks, digits, spaces and symbols next to or inside the ASCII runs, so the
/// scanners' ASCII fast paths and their hand-overs to the general code are both exercised.
fn ascii_heavy_text(rng: &mut Rng, max_len: usize) -> String {
    const ASCII_PIECES: &[&str] = &[
        "the",
        "The",
        "THE",
        "it",
        "'s",
        "'S",
        "'ll",
        "'LL",
        "'re",
        "'ve",
        "'d",
        "'m",
        "'t",
        "'x",
        "'",
        "don",
        "HTTPServer",
        "camelCase",
        "x",
        "I",
        "a",
        "0",
        "7",
        "12",
        "123",
        "4567",
        " ",
        " ",
        " ",
        " ",
        "  ",
        "   ",
        "\t",
        "\n",
        "\n",
        "\r\n",
        "\n\n",
        "\r",
        " \n",
        "\n  ",
        ".",
        ",",
        "!",
        "?",
        "...",
        "/",
        "//",
        "-",
        "_",
        "(",
        ")",
        "{",
        "}",
        ";",
        ":",
        "\"",
        "#",
        "$",
        "@",
        "*",
        "=",
        "==",
        "\u{b}",
        "\u{c}",
        "\u{1c}",
        "\u{1f}",
    ];
    const OTHER: &[char] = &[
        'é', 'É', 'ſ', 'ß', 'Ω', 'ω', 'ж', 'Ж', 'ǅ', 'ʰ', '中', 'あ', '\u{0301}', '\u{0308}',
        '\u{093F}', '٣', '५', '²', 'Ⅻ', '½', '\u{a0}', '\u{85}', '\u{2028}', '\u{3000}',
        '\u{1680}', '\u{2009}', '€', '—', '’', '😀', '\u{200d}', '\u{fe0f}',
    ];
    let len = rng.below(max_len + 1);
    let mut s = String::new();
    for _ in 0..len {
        if rng.below(8) == 0 {
            s.push(OTHER[rng.below(OTHER.len())]);
        } else {
            s.push_str(ASCII_PIECES[rng.below(ASCII_PIECES.len())]);
        }
    }
    s
}

#[test]
fn scanners_equal_regex_on_ascii_heavy_text() {
    let mut rng = Rng(0x2545F4914F6CDD1D);
    let texts: Vec<String> = (0..6000).map(|_| ascii_heavy_text(&mut rng, 20)).collect();
    for (name, _) in NAMED_PATTERNS {
        check_equal(name, &texts);
    }
    for pattern in [
        RUSTBPE_GPT4_PATTERN,
        GPT2_ORIGINAL_PATTERN,
        LLAMA3_PATTERN,
        QWEN_PATTERN,
    ] {
        let fast = Pretokenizer::new(pattern).unwrap();
        let slow = Pretokenizer::new_regex(pattern).unwrap();
        for t in &texts {
            assert_eq!(fast.split(t).unwrap(), slow.split(t).unwrap(), "{t:?}");
        }
    }
}

#[test]
fn byte_classes_match_categories() {
    use super::chars::*;
    for b in 0..=255u8 {
        let k = bclass(b);
        if b >= 0x80 {
            assert_eq!(k, B_HIGH);
            continue;
        }
        let cat = char_at(&[b], 0).cat;
        assert_eq!(k & B_LETTER != 0, is_letter(cat), "{b:#x}");
        assert_eq!(k & B_UPPER != 0, is_o200k_upper(cat), "{b:#x}");
        assert_eq!(k & B_LOWER != 0, is_o200k_lower(cat), "{b:#x}");
        assert_eq!(k & B_DIGIT != 0, is_number(cat), "{b:#x}");
        assert_eq!(k & B_SPACE != 0, is_space(cat), "{b:#x}");
        assert_eq!(k & B_PUNCT != 0, is_punct(cat), "{b:#x}");
        assert_eq!(k & B_CRLF != 0, b == b'\r' || b == b'\n', "{b:#x}");
    }
}

#[test]
fn char_at_equals_two_stage_tables_on_every_code_point() {
    use super::chars::*;
    let mut buf = [0u8; 4];
    for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
        let s = c.encode_utf8(&mut buf);
        let ch = char_at(s.as_bytes(), 0);
        assert_eq!(ch.cp, c as u32);
        assert_eq!(ch.len as usize, s.len());
        assert_eq!(ch.cat, category(c as u32), "U+{:04X}", c as u32);
    }
}

/// Letters of every case class, marks and digits of one script each: runs of one script are
/// what the non-ASCII paths of the scanners read in their loops.
const SCRIPTS: &[&str] = &[
    "абвгдежзийклмнопрстуАБВГДЖЗЯЁё\u{483}",
    "αβγδεζηθικλμνξοπρστυΑΒΓΔΩάέήᾼᾳ\u{345}\u{342}",
    "中文字的是不了人我在有他这为之大来以个国们到说时要㐀",
    "あいうえおかきくけこアイウエオカキクケコンーゝゞ々ｱｲ\u{3099}",
    "가나다라마바사아자차카타파하한국어ㄱㄴㅏ\u{1100}\u{1161}\u{11a8}",
    "ابتثجحخدذرزسشصضطظعغ\u{64b}\u{64e}ـאבגדהוזחט\u{5b4}",
    "कखगघचछजझटडतथदधनप\u{93e}\u{93f}\u{940}\u{94d}\u{902}অআক\u{9be}",
    "กขคงจฉชซญดตถทนบปผ\u{e31}\u{e34}\u{e47}\u{e48}ะาำเแๆ",
    "AZÀΩЖaæжωǅᾈʰˀ々ー中あ\u{301}\u{903}\u{93f}ﬁ",
    "0123456789٠١٢٣۴۵०१२३৪๓໔༥²½Ⅻ〇",
];
const SEPARATORS: &[&str] = &[
    " ", "  ", "\n", "\r\n", " \n ", "\u{3000}", "\u{a0}", ".", "、", "'s", "'LL", "/\n", "-", "",
    "", "", "the", "It", "42",
];

fn script_text(rng: &mut Rng, words: usize) -> String {
    let mut s = String::new();
    for _ in 0..rng.below(words + 1) {
        let alphabet: Vec<char> = SCRIPTS[rng.below(SCRIPTS.len())].chars().collect();
        for _ in 0..1 + rng.below(12) {
            s.push(alphabet[rng.below(alphabet.len())]);
        }
        s.push_str(SEPARATORS[rng.below(SEPARATORS.len())]);
    }
    s
}

#[test]
fn scanners_equal_regex_on_script_runs() {
    let mut rng = Rng(0x5c21_97ab_0037_0001);
    let mut texts: Vec<String> = (0..1500).map(|_| script_text(&mut rng, 8)).collect();
    texts.extend((0..20).map(|_| script_text(&mut rng, 200)));
    for name in ["gpt2", "cl100k", "o200k", "nanochat"] {
        check_equal(name, &texts);
    }
}

/// Mostly-ASCII text for the block scanner: the ASCII pieces of `ascii_heavy_text` with a
/// non-ASCII character only now and then (`one_in`), so that many 64-byte blocks are all ASCII.
fn mostly_ascii_text(rng: &mut Rng, pieces: usize, one_in: usize) -> String {
    let mut s = String::new();
    while s.len() < pieces * 3 {
        let t = ascii_heavy_text(rng, 4);
        for c in t.chars() {
            if c.is_ascii() || rng.below(one_in) == 0 {
                s.push(c);
            }
        }
    }
    s
}

/// A block scanner and the piece-at-a-time scanner of the same pattern.
type BlockFn = fn(&[u8]) -> super::blocks::Block;
type PieceFn = fn(&super::chars::Text, usize) -> usize;
type StandinBlockFn = fn(&[u8], u32) -> super::blocks::Block;

fn block_scanners() -> Vec<(&'static str, BlockFn, PieceFn)> {
    use super::blocks::*;
    use super::handwritten::*;
    vec![
        ("o200k", o200k_block_starts, o200k_piece),
        (
            "cl100k",
            |b| cl100k_block_starts(b, 3),
            |t, i| cl100k_piece(t, i, 3, true),
        ),
        (
            "nanochat",
            |b| cl100k_block_starts(b, 2),
            |t, i| cl100k_piece(t, i, 2, false),
        ),
        (
            QWEN_PATTERN,
            |b| cl100k_block_starts(b, 1),
            |t, i| cl100k_piece(t, i, 1, false),
        ),
        ("gpt2", gpt2_block_starts, gpt2_piece),
        (
            super::CODE_LINES_PATTERN,
            code_lines_block_starts,
            super::code_lines_scanner::code_lines_piece,
        ),
    ]
}

/// Pieces by the piece-at-a-time scanner, and by blocks; they must be equal.
fn both_ways(text: &str, block: BlockFn, piece: PieceFn) -> (Vec<&str>, Vec<&str>) {
    let t = super::chars::Text::new(text);
    let mut want = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let e = piece(&t, i);
        want.push(&text[i..e]);
        i = e;
    }
    let mut got = Vec::new();
    super::blocks::for_each_piece(text, block, piece, |p| got.push(p));
    (got, want)
}

/// The block scanners give the pieces of the piece-at-a-time scanners on mostly-ASCII text.
#[test]
fn block_scanners_equal_piece_scanners() {
    let mut rng = Rng(0x9E3779B97F4A7C15);
    for round in 0..3000 {
        let text = mostly_ascii_text(&mut rng, 20 + round % 150, [1000, 40, 8][round % 3]);
        for (name, block, piece) in block_scanners() {
            let (got, want) = both_ways(&text, block, piece);
            assert_eq!(got, want, "{name}: {text:?}");
        }
    }
}

/// Texts of 64-264 bytes from pieces chosen to hit every rule of the block scanners (contraction
/// letters in both cases, apostrophes, CR/LF/slash tails, long runs that cross a block's end,
/// non-ASCII letters, digits, spaces and marks in a third of them): the block scanners' pieces
/// equal the piece-at-a-time scanners' (and the regex's, every 50th text), and the first
/// block's starts up to its limit are exactly the pieces' starts. `STRESS_N` / `STRESS_SEED`
/// run more.
#[test]
fn block_scanners_equal_on_long_texts() {
    const BITS: &[&str] = &[
        "a",
        "s",
        "t",
        "m",
        "d",
        "r",
        "e",
        "v",
        "l",
        "x",
        "A",
        "S",
        "T",
        "M",
        "D",
        "R",
        "E",
        "V",
        "L",
        "X",
        "'",
        "'",
        "'",
        "0",
        "1",
        "9",
        " ",
        " ",
        " ",
        "\t",
        "\n",
        "\r",
        "/",
        "/",
        "!",
        ".",
        "=",
        "\u{b}",
        "\u{c}",
        "\u{1c}",
        "é",
        "ſ",
        "\u{a0}",
        "\u{3000}",
        "中",
        "٣",
        "\u{301}",
        "K",
        "                                        ",
        "\n\n\n\n",
        "\r\n",
        "llllllllllllllllllllllllllllll",
        "VVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVV",
        "12345678901234567",
        "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!",
        "'s",
        "'LL",
        "'ve",
        "//",
        "\n/",
        "!\n",
        " '",
        "'s'",
        "\n ",
        "_",
        "0x",
        "0B1",
        "(",
        "\n    ",
        "\n\t",
        "def ",
    ];
    let n: usize = std::env::var("STRESS_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40_000);
    let seed: u64 = std::env::var("STRESS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let scanners = block_scanners();
    let slow: Vec<Pretokenizer> = scanners
        .iter()
        .map(|(name, _, _)| Pretokenizer::new_regex(name).unwrap())
        .collect();
    let mut rng = Rng(0xD1B54A32D192ED03 ^ seed.wrapping_mul(0x9E3779B97F4A7C15));
    let mut decided = vec![0usize; scanners.len()];
    for round in 0..n {
        let len = 64 + rng.below(200);
        let ascii_only = rng.below(3) != 0;
        let mut text = String::new();
        while text.len() < len {
            let b = BITS[rng.below(BITS.len())];
            if ascii_only && !b.is_ascii() {
                continue;
            }
            text.push_str(b);
        }
        for (k, (name, block, piece)) in scanners.iter().enumerate() {
            let (got, want) = both_ways(&text, *block, *piece);
            assert_eq!(got, want, "{name}: {text:?}");
            if round % 50 == 0 {
                assert_eq!(
                    slow[k].split(&text).unwrap(),
                    want,
                    "{name} regex: {text:?}"
                );
            }
            // the first block alone: its starts up to its limit are the pieces' starts
            let (starts, limit, _) = block(&text.as_bytes()[..64]);
            let mut at = 0;
            for p in &want {
                if at > limit as usize {
                    break;
                }
                assert!(
                    starts & (1 << at) != 0,
                    "{name}: start {at} missed in {text:?}"
                );
                let e = at + p.len();
                for j in at + 1..e.min(limit as usize + 1) {
                    assert!(
                        starts & (1 << j) == 0,
                        "{name}: start {j} invented in {text:?}"
                    );
                }
                at = e;
            }
            decided[k] += limit as usize;
        }
    }
    for (k, (name, _, _)) in scanners.iter().enumerate() {
        // the first blocks decide about 35-40 of their 64 bytes on these texts
        assert!(
            decided[k] > 30 * n,
            "{name}: blocks decided {} bytes in {n} texts (seed {seed})",
            decided[k]
        );
    }
}

/// Pieces that meet o200k's rules for marks and "both" letters in every order: marks after
/// symbols, spaces, letters, digits, tails and contractions; "both" letters before upper-case
/// runs; contractions before them.
const MARK_BITS: &[&str] = &[
    "!",
    "!",
    ".",
    "\"",
    "😀",
    "❤",
    "\u{200d}",
    " ",
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "/",
    "!\n/",
    "!\n",
    "\n/",
    "//",
    "'",
    "'s",
    "'S",
    "'re",
    "'LL",
    "a",
    "b",
    "s",
    "t",
    "l",
    "A",
    "B",
    "S",
    "É",
    "é",
    "ǅ",
    "ſ",
    "ʰ",
    "中",
    "あ",
    "ー",
    "क",
    "ก",
    "\u{301}",
    "\u{fe0f}",
    "\u{93f}",
    "\u{e34}",
    "\u{20e3}",
    "\u{301}\u{301}",
    "0",
    "7",
    "٣",
    "\u{a0}",
    "\u{3000}",
    "ABC",
    "中A",
    "中AB ",
    "\u{301}AB",
    "aB",
    "ab中",
    "!\u{301}!",
    "!!\u{301}",
    " !\u{301}",
    "x'中",
];

fn mark_text(rng: &mut Rng, len: usize) -> String {
    let mut s = String::new();
    while s.len() < len {
        s.push_str(MARK_BITS[rng.below(MARK_BITS.len())]);
    }
    s
}

/// o200k's stand-in blocks: on the stand-ins of texts of every script and of marks in every
/// context, the first block's starts up to its limit are exactly the piece-at-a-time
/// scanner's piece starts (in characters), and the blocks decide most bytes.
#[test]
fn o200k_standin_blocks_equal_piece_starts() {
    use super::blocks::{o200k_standin_block_starts, o200k_standin_block_upto};
    use super::handwritten::o200k_piece;
    use super::standin;
    let mut rng = Rng(0x0200_5eed_0037_0032);
    let n = 30_000;
    let mut decided = 0usize;
    let mut blocks = 0usize;
    for round in 0..n {
        let text = match round % 3 {
            0 => {
                let len = 64 + rng.below(300);
                mark_text(&mut rng, len)
            }
            1 => script_text(&mut rng, 60),
            _ => random_text(&mut rng, 300),
        };
        let b = text.as_bytes();
        let mut sub = vec![0u8; b.len() + 1];
        let mut pos = vec![0u16; b.len() + 1];
        let k = standin::transcode(&text, &standin::O200K, &mut sub, &mut pos);
        if k < 64 {
            continue;
        }
        // piece starts in characters
        let t = super::chars::Text::new(&text);
        let mut want = vec![false; k + 1];
        let mut i = 0;
        let mut c = 0;
        while i < b.len() {
            while pos[c] as usize != i {
                c += 1;
            }
            want[c] = true;
            i = o200k_piece(&t, i);
        }
        // every block position that is a piece start, and the padded blocks at the end
        for at in (0..k).filter(|&a| want[a]) {
            let (starts, limit, _) = if at + 64 <= k {
                o200k_standin_block_starts(&sub[at..at + 64])
            } else {
                let mut pad = [b"!0 a\t\x80\x81A"[round % 8]; 64];
                pad[..k - at].copy_from_slice(&sub[at..k]);
                o200k_standin_block_upto(&pad, (k - at - 1) as u32)
            };
            for j in 0..=limit as usize {
                assert_eq!(
                    starts & (1 << j) != 0,
                    want[at + j],
                    "start {j} of the block at {at} (limit {limit}) in {text:?}"
                );
            }
            decided += limit as usize;
            blocks += 1;
        }
    }
    assert!(
        decided > 20 * blocks,
        "{decided} bytes decided in {blocks} blocks"
    );
}

/// The stand-in path (`standin.rs`) of cl100k's family and of o200k gives the piece-at-a-time scanners'
/// pieces: random texts over the fuzz alphabet, runs of every script, mostly-ASCII text and
/// long lines, each split with windows of 16 bytes to the full window (so that windows end
/// at many kinds of line breaks, or find none and hand the rest on), and the regex's pieces
/// on every 20th text.
#[test]
fn standin_scanner_equals_piece_scanner() {
    use super::standin;
    let mut rng = Rng(0x37_5eed_0057_a4d1);
    let mut texts: Vec<String> = Vec::new();
    for k in 0..600 {
        let mut t = match k % 4 {
            0 => random_text(&mut rng, 200),
            1 => script_text(&mut rng, 40),
            2 => mostly_ascii_text(&mut rng, 60, 6),
            _ => (0..1 + rng.below(6))
                .map(|_| {
                    script_text(&mut rng, 6)
                        + ["\n", "\n\n", " \n", "\n ", "\n/", "!\n"][rng.below(6)]
                })
                .collect(),
        };
        if k % 7 == 0 {
            t.push_str(&"\u{a0}\u{3000} \n".repeat(1 + rng.below(3)));
        }
        texts.push(t);
    }
    texts.extend(fuzz_corpus(11).into_iter().take(300));
    texts.push("ſ's 'ſ x'ſ \n'ſ\n".repeat(5));
    for _ in 0..300 {
        let len = 40 + rng.below(400);
        texts.push(mark_text(&mut rng, len));
    }
    let scanners: Vec<(&str, BlockFn, StandinBlockFn, PieceFn, &standin::StandIns)> =
        block_scanners()
            .into_iter()
            .filter(|(name, _, _)| *name != "gpt2" && *name != super::CODE_LINES_PATTERN)
            .map(|(name, block, piece)| {
                if name == "o200k" {
                    let sblock: StandinBlockFn = super::blocks::o200k_standin_block_upto;
                    (name, block, sblock, piece, &standin::O200K)
                } else {
                    let sblock: StandinBlockFn = match name {
                        "cl100k" => |b, _| super::blocks::cl100k_block_starts(b, 3),
                        "nanochat" => |b, _| super::blocks::cl100k_block_starts(b, 2),
                        _ => |b, _| super::blocks::cl100k_block_starts(b, 1),
                    };
                    (name, block, sblock, piece, &standin::CL100K)
                }
            })
            .collect();
    assert_eq!(scanners.len(), 4);
    for (name, block, sblock, piece, table) in scanners {
        let slow = Pretokenizer::new_regex(name).unwrap();
        for (k, text) in texts.iter().enumerate() {
            let (_, want) = both_ways(text, block, piece);
            for window in [16, 40, 97, standin::WINDOW] {
                let mut got = Vec::new();
                standin::for_each_window(text, table, window, block, sblock, piece, |p| {
                    got.push(p)
                });
                assert_eq!(got, want, "{name}, window {window}: {text:?}");
            }
            if k % 20 == 0 {
                assert_eq!(slow.split(text).unwrap(), want, "{name} regex: {text:?}");
            }
        }
    }
}

/// The word scanner of the `</w>` model against the regex: random texts over the fuzz alphabet,
/// and texts of letter runs in mixed case (camelCase, acronyms, title-case letters, marks).
#[test]
fn word_scanner_equals_regex() {
    let fast = Pretokenizer::new(WORDS_PATTERN).unwrap();
    assert!(fast.is_fast());
    let slow = Pretokenizer::new_regex(WORDS_PATTERN).unwrap();
    let mut texts = fuzz_corpus(0x5eed_0004);
    let mut rng = Rng(99);
    let cased = [
        'a', 'b', 'A', 'B', 'X', 'ǅ', 'é', 'É', 'ж', 'Ж', 'ʰ', '中', '\u{0301}', '1', '٣', ' ',
        '_', '.', '\n', '\u{1c}', '\u{a0}',
    ];
    for _ in 0..4000 {
        let len = rng.below(20);
        texts.push((0..len).map(|_| cased[rng.below(cased.len())]).collect());
    }
    texts.push("XMLHttpRequest iPhone camelCase HTTPServer ABCdef ABC 12ab".to_string());
    for t in &texts {
        assert_eq!(fast.split(t).unwrap(), slow.split(t).unwrap(), "{t:?}");
    }
    assert_eq!(
        fast.split("XMLHttpRequest, iPhone2024").unwrap(),
        vec!["XML", "Http", "Request", ",", "i", "Phone", "2024"]
    );
}

/// The CppReason word scanner against the regex: random texts over the fuzz alphabet, and
/// texts of C++ atoms (operators, literals with escapes, diff headers, directives, CR/LF).
#[test]
fn cpp_scanner_equals_regex() {
    cpp_scanner_equals_regex_for(CPP_WORDS_PATTERN);
    cpp_scanner_equals_regex_for(CPP_RUNS_PATTERN);
}

fn cpp_scanner_equals_regex_for(pattern: &str) {
    let fast = Pretokenizer::new(pattern).unwrap();
    assert!(fast.is_fast());
    let slow = Pretokenizer::new_regex(pattern).unwrap();
    let mut texts = fuzz_corpus(0x5eed_0001);
    let atoms = [
        "+", "-", "---", "+++", " a/", " b/", "@@", "@", "#", "# ", "#\t", "include", "x", "_",
        "é", "0", "0x", "0X1f", "9", "٣", "\"", "'", "\\", "\\\"", "\\'", "\\n", " ", "\t", "\n",
        "\r", "\r\n", "\u{a0}", "<", ">", "=", "<=", ">>", "->", ".", ":", "*", "/", "%", "&", "|",
        "^", "!", "~", "?", ";", "{", "}", "(", ")", "[", "]", ",", "$", "`", "();", "\u{301}",
        "中", "😀",
    ];
    let mut rng = Rng(0xc0ffee);
    for _ in 0..6000 {
        let len = rng.below(16);
        texts.push((0..len).map(|_| atoms[rng.below(atoms.len())]).collect());
    }
    texts.push("--- a/x.cpp\n+++ b/x.cpp\n@@ -1,2 +1,3 @@\n+#include <a.h>\n std::vector<int> v = {0x1F, 'a', '\\n'}; // \"s p\"\n".to_string());
    for t in &texts {
        assert_eq!(fast.split(t).unwrap(), slow.split(t).unwrap(), "{t:?}");
    }
}

/// The whole-text split (CppReason's learned words): one piece, none for empty text.
#[test]
fn whole_pattern_is_one_piece() {
    let fast = Pretokenizer::new(WHOLE_PATTERN).unwrap();
    assert!(fast.is_fast());
    let slow = Pretokenizer::new_regex(WHOLE_PATTERN).unwrap();
    for t in ["", "x", "\u{2581}__first", "a\nb\r\n c ", "😀é\n\n"] {
        assert_eq!(fast.split(t).unwrap(), slow.split(t).unwrap(), "{t:?}");
    }
    assert_eq!(fast.split("a b\n").unwrap(), vec!["a b\n"]);
}

/// Cromwell's split scanner against the regex: random texts over the fuzz alphabet (every kind
/// of whitespace, `\u{1c}` which `\s` does not match), texts of code atoms, and each character
/// of the Basic Multilingual Plane and beyond between a letter and a space.
#[test]
fn code_scanner_equals_regex() {
    let fast = Pretokenizer::new(CODE_PATTERN).unwrap();
    assert!(fast.is_fast());
    let slow = Pretokenizer::new_regex(CODE_PATTERN).unwrap();
    let mut texts = fuzz_corpus(0x5eed_0005);
    let atoms = [
        " ", "  ", "\t", "\n", "\r", "\r\n", "\n    ", "\u{a0}", "\u{85}", "\u{2028}", "\u{3000}",
        "\u{1680}", "\u{200a}", "\u{202f}", "\u{205f}", "\u{200b}", "\u{0b}", "\u{0c}", "\u{1c}",
        "x", "def", "return", "!==", "0x", "(", ")", "é", "中", "😀", "¢", "\u{2010}", "ᚠ",
    ];
    let mut rng = Rng(0xc0de);
    for _ in 0..6000 {
        let len = rng.below(16);
        texts.push((0..len).map(|_| atoms[rng.below(atoms.len())]).collect());
    }
    // long runs without whitespace (the scanner steps over 8 bytes at a time), cut rarely
    for _ in 0..2000 {
        let len = rng.below(60);
        let pick = |rng: &mut Rng| match rng.below(12) {
            0 => atoms[rng.below(atoms.len())],
            _ => atoms[18 + rng.below(atoms.len() - 18)],
        };
        texts.push((0..len).map(|_| pick(&mut rng)).collect());
    }
    for t in &texts {
        assert_eq!(fast.split(t).unwrap(), slow.split(t).unwrap(), "{t:?}");
    }
    let mut all = String::new();
    for c in (0u32..0x11_0000)
        .step_by(7)
        .chain(0x80..0x3100)
        .filter_map(char::from_u32)
    {
        all.push('a');
        all.push(c);
        all.push(' ');
    }
    assert_eq!(fast.split(&all).unwrap(), slow.split(&all).unwrap());
    assert_eq!(
        fast.split("def f(x):\n    return x  \n\n\t y").unwrap(),
        vec!["def", " f(x):", "\n    return", " x", "  ", "\n\n\t y"]
    );
}

/// Cromwell's one-stage split against the regex: random texts over the fuzz alphabet, texts
/// of code atoms (line starts, number prefixes, punctuation tails at line breaks), and each
/// character of the Basic Multilingual Plane and beyond after a line break and before one.
#[test]
fn code_lines_scanner_equals_regex() {
    let fast = Pretokenizer::new(CODE_LINES_PATTERN).unwrap();
    assert!(fast.is_fast() && fast.is_code_lines());
    let slow = Pretokenizer::new_regex(CODE_LINES_PATTERN).unwrap();
    let mut texts = fuzz_corpus(0x5eed_0006);
    let atoms = [
        " ", "  ", "\t", "\n", "\r", "\r\n", "\n    ", "\u{a0}", "\u{85}", "\u{2028}", "\u{3000}",
        "\u{0b}", "\u{1c}", "x", "X", "def", "_", "__", "0", "1", "0x", "0X", "0b", "0B", "f", "F",
        "g", "2", "!==", "(", ")", ":", "/", "//", "#", "@", "'", "'s", "é", "\u{0301}", "中", "٣",
        "😀", "¢", "\u{2010}",
    ];
    let mut rng = Rng(0xc0de_0011);
    for _ in 0..12000 {
        let len = rng.below(20);
        texts.push((0..len).map(|_| atoms[rng.below(atoms.len())]).collect());
    }
    // long texts of ASCII code atoms: blocks of 64 bytes, cut at line breaks and number
    // prefixes (some non-ASCII atoms, so that blocks also stop at them)
    let ascii = [
        " ", "  ", "    ", "\t", "\n", "\r\n", "\n    ", "\n\n", "x", "Xy", "def", "return", "_",
        "0", "12", "345", "0x", "0b", "x1F", "b1", "f", "!==", "(", ");", ")", ":", "/", "//", "#",
        "@", "'s", "'", "=", ".", "{", "}", "\u{0b}", "\u{0c}",
    ];
    for _ in 0..6000 {
        let len = 20 + rng.below(100);
        texts.push(
            (0..len)
                .map(|_| match rng.below(50) {
                    0 => atoms[rng.below(atoms.len())],
                    _ => ascii[rng.below(ascii.len())],
                })
                .collect(),
        );
    }
    for t in &texts {
        assert_eq!(fast.split(t).unwrap(), slow.split(t).unwrap(), "{t:?}");
    }
    for sep in ["\n", "\n\t_", "\n (", "\n0"] {
        let mut all = String::new();
        for c in (0u32..0x11_0000)
            .step_by(7)
            .chain(0x80..0x3100)
            .filter_map(char::from_u32)
        {
            all.push_str(sep);
            all.push(c);
            all.push('\n');
            all.push(c);
            all.push('a');
            all.push(' ');
        }
        assert_eq!(
            fast.split(&all).unwrap(),
            slow.split(&all).unwrap(),
            "{sep:?}"
        );
    }
    assert_eq!(
        fast.split("def f(x):\n    return 0x1F  \n\n\t# y\n}\n")
            .unwrap(),
        vec![
            "def",
            " f",
            "(x",
            "):",
            "\n    return ",
            "0x1F",
            "  \n\n",
            "\t",
            "#",
            " y",
            "\n}",
            "\n"
        ]
    );
}
