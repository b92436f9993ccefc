//! Pre-tokenization: splitting text into pieces before BPE.
//!
//! A [`Pretokenizer`] is built from a pattern string. The four named patterns (`gpt2`, `cl100k`,
//! `o200k`, `nanochat`) are recognised by name or by their exact regex text and run on
//! hand-written scanners (see `handwritten.rs`; ASCII text goes 64 bytes at a time through
//! `blocks.rs`); any other pattern runs on `fancy-regex`, whose
//! syntax follows Python's `regex` module for the constructs tokenizer patterns use
//! (look-around, possessive quantifiers, atomic groups, `\p{..}` classes).

mod blocks;
pub(crate) mod chars;
mod code_lines_scanner;
mod code_scanner;
mod cpp_scanner;
mod deepseek;
mod handwritten;
mod standin;
mod word_scanner;
#[rustfmt::skip]
pub mod unicode_tables;

use crate::error::{Error, Result};
pub use deepseek::DEEPSEEK_V3_PATTERN;

/// GPT-2 / r50k_base, in tiktoken's current form.
pub const GPT2_PATTERN: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
/// The pattern of the original GPT-2 release (the same pieces as `GPT2_PATTERN`).
pub const GPT2_ORIGINAL_PATTERN: &str =
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
/// cl100k_base, in tiktoken's current form.
pub const CL100K_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
/// o200k's two word alternatives (upper-case run then lower-case run, or upper-case run), each
/// with an optional prefix and contraction; shared by [`O200K_PATTERN`] and
/// [`CODE_LINES_PATTERN`].
macro_rules! o200k_words {
    () => {
        concat!(
            r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
            "|",
            r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        )
    };
}

/// o200k's three whitespace alternatives, the last ones of [`O200K_PATTERN`] and
/// [`CODE_LINES_PATTERN`].
macro_rules! o200k_spaces {
    () => {
        r"\s*[\r\n]+|\s+(?!\S)|\s+"
    };
}

/// o200k_base.
pub const O200K_PATTERN: &str = concat!(
    o200k_words!(),
    "|",
    r"\p{N}{1,3}",
    "|",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    "|",
    o200k_spaces!(),
);
/// nanochat's split pattern (cl100k's 0.6 form with `\p{N}{1,2}`).
pub const NANOCHAT_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,2}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+";
/// rustbpe's default (`GPT4_PATTERN`): cl100k without `\s++$`.
pub const RUSTBPE_GPT4_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+";

/// cl100k's pattern as tiktoken first spelled it (before `\s++$` and the possessive
/// quantifiers), which Llama 3 (Meta's `llama3/tokenizer.py` and Hugging Face's
/// `tokenizer.json`), OLMo 2 and `transformers`' tiktoken converter use: it splits every text
/// exactly as [`RUSTBPE_GPT4_PATTERN`] (`'(?i:[sdmt]|ll|ve|re)` is the same seven
/// alternatives; a possessive quantifier at the end of an alternative, or before a class that
/// excludes what it took, gives back nothing that could match; `\s*[\r\n]+` and `\s*[\r\n]`
/// both end at the last CR/LF of a whitespace run), so it runs on that scanner.
pub const LLAMA3_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// Qwen's pattern (Qwen 1's `tokenization_qwen.py`, Qwen 2 / 2.5 / 3's `tokenizer.json`):
/// [`LLAMA3_PATTERN`] with one digit per piece (`\p{N}`); the cl100k scanner with
/// `max_digits: 1`.
pub const QWEN_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// The named patterns, `(name, regex)`.
/// The word split of the `</w>` model (`crate::words`): an acronym before a capitalised word,
/// a (capitalised) lower-case run, an upper-case run, a digit run, or one character that is not
/// a letter, mark, digit or whitespace. Whitespace is dropped. It has a hand-written scanner.
pub const WORDS_PATTERN: &str = concat!(
    r"[\p{Lu}\p{Lt}]+(?=[\p{Lu}\p{Lt}][\p{Ll}\p{Lm}\p{Lo}\p{M}])",
    r"|[\p{Lu}\p{Lt}]?[\p{Ll}\p{Lm}\p{Lo}\p{M}]+",
    r"|[\p{Lu}\p{Lt}\p{M}]+",
    r"|\p{N}+",
    r"|[^\s\p{L}\p{M}\p{N}]"
);

/// The alternatives both CppReason word patterns begin with.
macro_rules! cpp_words_common {
    () => {
        concat!(
            r"(?m)^(?:\+\+\+|---)(?: [ab]/)?",
            r"|@@",
            r"|\#[ \t]*[A-Za-z_]+",
            r"|0[xX][0-9a-fA-F]+",
            r#"|"(?:[^"\\\n]|\\.)*""#,
            r"|'(?:[^'\\\n]|\\.)'",
            r"|<=>|<<=|>>=|->\*|\.\.\.|::|->|\.\*|==|!=|<=|>=|&&|\|\||<<|>>|\+\+|--",
            r"|\+=|-=|\*=|/=|%=|&=|\|=|\^=|\#\#|//|/\*|\*/",
            r"|[\p{L}_][\p{L}\p{N}_]*",
            r"|\p{N}[\p{L}\p{N}_]*",
            r"|(?:\r?\n[^\S\n]*){1,2}",
        )
    };
}

/// The word split of the CppReason preset (seed 001): diff headers, preprocessor directives,
/// literals, operators, identifiers, numbers (a digit and the letters, digits and `_` after
/// it, so a suffix or exponent stays with its number: `42u`, `1e5`, `10ULL`), line breaks and
/// any other character; spaces and tabs are dropped. It has a hand-written scanner.
/// (CppReason tokenizers trained before punctuation runs; [`CPP_RUNS_PATTERN`] since.)
pub const CPP_WORDS_PATTERN: &str = concat!(cpp_words_common!(), r"|\S");

/// [`CPP_WORDS_PATTERN`] with punctuation runs: a `+` or `-` that starts a line is a word of
/// its own (the diff marker), and a run of ASCII punctuation but quotes and `_` is one word up
/// to where an operator, `@@` or a directive starts (`();`, `){`; `)->` is `)` and `->`). It
/// has a hand-written scanner.
pub const CPP_RUNS_PATTERN: &str = concat!(
    cpp_words_common!(),
    r"|^[+\-]",
    r"|(?:(?!<=>|<<=|>>=|->\*|\.\.\.|::|->|\.\*|==|!=|<=|>=|&&|\|\||<<|>>|\+\+|--",
    r"|\+=|-=|\*=|/=|%=|&=|\|=|\^=|\#\#|//|/\*|\*/|@@|\#[ \t]*[A-Za-z_])",
    r"[!\#$%&()*+,\-./:;<=>?@\[\\\]^`{|}~])+",
    r"|\S"
);

/// A split that keeps the whole text as one piece: the learned part of CppReason encodes each
/// word whole (its merges may cross `_`, case changes and digits). It has a scanner.
pub const WHOLE_PATTERN: &str = r"(?s).+";

/// The split of the Cromwell preset (seed 000, `toksmith.presets.cromwell.CODE_PATTERN`): a
/// run of non-whitespace with the spaces or tabs before it, or line breaks with the next line's
/// indentation and first run; a run of spaces or tabs before a line break or the end is a piece
/// of its own. It has a hand-written scanner (`code_scanner.rs`).
pub const CODE_PATTERN: &str = r"[\r\n]+[^\S\r\n]*\S*|[^\S\r\n]*\S+|[^\S\r\n]+";

/// Cromwell's one-stage split (seed 000, `toksmith.presets.cromwell.LINE_PATTERN`): o200k's
/// pattern with line starts (line breaks, the next line's indentation and its first word with
/// one space after it, or its first punctuation run) as pieces, number prefixes (`0x1F`,
/// `0b101`) as pieces, and punctuation runs that stop at a line break. It has a hand-written
/// scanner (`code_lines_scanner.rs`, with 64-byte blocks of ASCII text in `blocks.rs`).
pub const CODE_LINES_PATTERN: &str = concat!(
    r"[\r\n]+[^\S\r\n]*(?:[^\s\p{L}\p{N}]?[\p{L}\p{N}_]+ ?|[^\s\p{L}\p{N}]+)?",
    "|",
    o200k_words!(),
    "|",
    r"0[xX][0-9A-Fa-f]+|0[bB][01]+",
    "|",
    r"\p{N}{1,3}",
    "|",
    r" ?[^\s\p{L}\p{N}]+/*",
    "|",
    o200k_spaces!(),
);

pub const NAMED_PATTERNS: &[(&str, &str)] = &[
    ("gpt2", GPT2_PATTERN),
    ("cl100k", CL100K_PATTERN),
    ("o200k", O200K_PATTERN),
    ("nanochat", NANOCHAT_PATTERN),
];

/// Look up a named pattern (`r50k`, `p50k`, `cl100k_base`... are accepted aliases).
pub fn named_pattern(name: &str) -> Option<&'static str> {
    let canonical = match name {
        "gpt2" | "r50k" | "r50k_base" | "p50k" | "p50k_base" | "p50k_edit" => "gpt2",
        "cl100k" | "cl100k_base" | "gpt4" => "cl100k",
        "o200k" | "o200k_base" | "o200k_harmony" => "o200k",
        "nanochat" => "nanochat",
        _ => return None,
    };
    NAMED_PATTERNS
        .iter()
        .find(|(n, _)| *n == canonical)
        .map(|(_, p)| *p)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scanner {
    Gpt2,
    /// cl100k family: (max digits per number piece, `\s++$` alternative present)
    Cl100k {
        max_digits: usize,
        end_anchor: bool,
    },
    O200k,
    /// [`WORDS_PATTERN`] (drops whitespace, so not a piece function)
    Words,
    /// [`CPP_WORDS_PATTERN`], or [`CPP_RUNS_PATTERN`] with `runs` (drop spaces and tabs)
    CppWords {
        runs: bool,
    },
    /// [`WHOLE_PATTERN`]
    Whole,
    /// [`CODE_PATTERN`]
    Code,
    /// [`CODE_LINES_PATTERN`]
    CodeLines,
    /// [`DEEPSEEK_V3_PATTERN`] (DeepSeek V3's sequence of three splits)
    DeepSeekV3,
}

#[derive(Clone, Debug)]
enum Engine {
    Fast(Scanner),
    Regex(Box<fancy_regex::Regex>),
}

/// A compiled split pattern.
#[derive(Clone, Debug)]
pub struct Pretokenizer {
    pattern: String,
    engine: Engine,
}

fn scanner_for(pattern: &str) -> Option<Scanner> {
    Some(match pattern {
        GPT2_PATTERN | GPT2_ORIGINAL_PATTERN => Scanner::Gpt2,
        CL100K_PATTERN => Scanner::Cl100k {
            max_digits: 3,
            end_anchor: true,
        },
        NANOCHAT_PATTERN => Scanner::Cl100k {
            max_digits: 2,
            end_anchor: false,
        },
        RUSTBPE_GPT4_PATTERN | LLAMA3_PATTERN => Scanner::Cl100k {
            max_digits: 3,
            end_anchor: false,
        },
        QWEN_PATTERN => Scanner::Cl100k {
            max_digits: 1,
            end_anchor: false,
        },
        O200K_PATTERN => Scanner::O200k,
        WORDS_PATTERN => Scanner::Words,
        CPP_WORDS_PATTERN => Scanner::CppWords { runs: false },
        CPP_RUNS_PATTERN => Scanner::CppWords { runs: true },
        WHOLE_PATTERN => Scanner::Whole,
        CODE_PATTERN => Scanner::Code,
        CODE_LINES_PATTERN => Scanner::CodeLines,
        DEEPSEEK_V3_PATTERN => Scanner::DeepSeekV3,
        _ => return None,
    })
}

/// What went wrong when the regex engine gave up on `text` in a search that began at byte
/// `from`, in words a user can act on.
fn runtime_failure(e: &fancy_regex::Error, text: &str, from: usize) -> String {
    let next: String = text[from..].chars().take(12).collect();
    let cause = match e {
        fancy_regex::Error::RuntimeError(fancy_regex::RuntimeError::StackOverflow) => {
            "its backtracking stack (1M saved positions) ran out: one match ran over a very long \
             run that the pattern may have to give back, such as more than about a million \
             whitespace characters under `\\s+(?!\\S)`"
                .to_string()
        }
        fancy_regex::Error::RuntimeError(fancy_regex::RuntimeError::BacktrackLimitExceeded) => {
            "it took more than 10M backtracking steps for one match (nested quantifiers)"
                .to_string()
        }
        other => other.to_string(),
    };
    format!("{cause}, at byte {from} (text there: {next:?})")
}

fn compile_regex(pattern: &str) -> Result<fancy_regex::Regex> {
    fancy_regex::RegexBuilder::new(pattern)
        .backtrack_limit(10_000_000)
        .build()
        .map_err(|e| {
            let message = e.to_string();
            let position = match &e {
                fancy_regex::Error::ParseError(pos, _) => Some(*pos),
                _ => None,
            };
            Error::InvalidPattern {
                pattern: pattern.to_string(),
                position,
                message,
            }
        })
}

impl Pretokenizer {
    /// Build from a pattern name (`"cl100k"`) or regex text. Named patterns and their exact regex
    /// texts use the hand-written scanners.
    pub fn new(pattern: &str) -> Result<Self> {
        let regex_text = named_pattern(pattern).unwrap_or(pattern);
        let engine = match scanner_for(regex_text) {
            Some(s) => Engine::Fast(s),
            None => Engine::Regex(Box::new(compile_regex(regex_text)?)),
        };
        Ok(Pretokenizer {
            pattern: regex_text.to_string(),
            engine,
        })
    }

    /// Build on the regex engine even for named patterns (the reference the scanners are
    /// checked against).
    pub fn new_regex(pattern: &str) -> Result<Self> {
        let regex_text = named_pattern(pattern).unwrap_or(pattern);
        Ok(Pretokenizer {
            pattern: regex_text.to_string(),
            engine: Engine::Regex(Box::new(compile_regex(regex_text)?)),
        })
    }

    /// The regex text of this pattern.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Whether this is Cromwell's one-stage split ([`CODE_LINES_PATTERN`]), whose vocabularies
    /// are merged piece by piece like o200k's (no two-level superword merge).
    pub fn is_code_lines(&self) -> bool {
        matches!(self.engine, Engine::Fast(Scanner::CodeLines))
    }

    /// Whether a hand-written scanner is used.
    pub fn is_fast(&self) -> bool {
        matches!(self.engine, Engine::Fast(_))
    }

    /// Call `f` with each piece of `text`, in order.
    // The piece functions are wrapped in `#[inline(always)]` closures: passed as function items
    // they were called through an out-of-line shim, once per piece (5% on non-ASCII text).
    #[allow(clippy::redundant_closure)]
    pub fn for_each_piece<'t>(&self, text: &'t str, mut f: impl FnMut(&'t str)) -> Result<()> {
        match &self.engine {
            Engine::Fast(scanner) => {
                // One loop per scanner (and per constant cl100k variant), so that each loop body
                // is a single scanner inlined with its constants: ASCII text goes by blocks of 64
                // bytes (`blocks.rs`), the rest through the piece-at-a-time scanners.
                use blocks::{cl100k_block_starts, for_each_piece, gpt2_block_starts};
                match *scanner {
                    Scanner::Gpt2 => for_each_piece(
                        text,
                        gpt2_block_starts,
                        #[inline(always)]
                        |t, i| handwritten::gpt2_piece(t, i),
                        f,
                    ),
                    Scanner::Cl100k {
                        max_digits: 3,
                        end_anchor: true,
                    } => standin::for_each_piece(
                        text,
                        &standin::CL100K,
                        standin::WINDOW,
                        |b| cl100k_block_starts(b, 3),
                        |b, _| cl100k_block_starts(b, 3),
                        #[inline(always)]
                        |t, i| handwritten::cl100k_piece(t, i, 3, true),
                        f,
                    ),
                    Scanner::Cl100k {
                        max_digits: 2,
                        end_anchor: false,
                    } => standin::for_each_piece(
                        text,
                        &standin::CL100K,
                        standin::WINDOW,
                        |b| cl100k_block_starts(b, 2),
                        |b, _| cl100k_block_starts(b, 2),
                        #[inline(always)]
                        |t, i| handwritten::cl100k_piece(t, i, 2, false),
                        f,
                    ),
                    Scanner::Cl100k {
                        max_digits: 3,
                        end_anchor: false,
                    } => standin::for_each_piece(
                        text,
                        &standin::CL100K,
                        standin::WINDOW,
                        |b| cl100k_block_starts(b, 3),
                        |b, _| cl100k_block_starts(b, 3),
                        #[inline(always)]
                        |t, i| handwritten::cl100k_piece(t, i, 3, false),
                        f,
                    ),
                    Scanner::Cl100k {
                        max_digits,
                        end_anchor,
                    } => standin::for_each_piece(
                        text,
                        &standin::CL100K,
                        standin::WINDOW,
                        |b| cl100k_block_starts(b, max_digits as u32),
                        |b, _| cl100k_block_starts(b, max_digits as u32),
                        #[inline(always)]
                        |t, i| handwritten::cl100k_piece(t, i, max_digits, end_anchor),
                        f,
                    ),
                    Scanner::Words => word_scanner::for_each_word(text, f),
                    Scanner::CppWords { runs: false } => {
                        cpp_scanner::for_each_cpp_word::<false>(text, f)
                    }
                    Scanner::CppWords { runs: true } => {
                        cpp_scanner::for_each_cpp_word::<true>(text, f)
                    }
                    Scanner::Whole => {
                        if !text.is_empty() {
                            f(text)
                        }
                    }
                    Scanner::Code => code_scanner::for_each_code_piece(text, f),
                    Scanner::CodeLines => code_lines_scanner::for_each_code_lines_piece(text, f),
                    Scanner::DeepSeekV3 => deepseek::for_each_deepseek_piece(text, f),
                    Scanner::O200k => standin::for_each_piece(
                        text,
                        &standin::O200K,
                        standin::WINDOW,
                        blocks::o200k_block_starts,
                        blocks::o200k_standin_block_upto,
                        #[inline(always)]
                        |t, i| handwritten::o200k_piece(t, i),
                        f,
                    ),
                }
                Ok(())
            }
            Engine::Regex(re) => {
                let mut end = 0;
                for m in re.find_iter(text) {
                    let m = m.map_err(|e| Error::RegexRuntime(runtime_failure(&e, text, end)))?;
                    end = m.end();
                    if !m.as_str().is_empty() {
                        f(m.as_str());
                    }
                }
                Ok(())
            }
        }
    }

    /// The pieces of `text` as a vector.
    /// ([`Error::OutOfMemory`] when the pieces do not fit in memory.)
    pub fn split<'t>(&self, text: &'t str) -> Result<Vec<&'t str>> {
        let mut out = Vec::new();
        let mut room = Ok(());
        self.for_each_piece(text, |p| {
            if room.is_ok() {
                room = crate::mem::try_reserve(&mut out, 1, "the pieces of the text");
                if room.is_ok() {
                    out.push(p);
                }
            }
        })?;
        room.map(|_| out)
    }
}

#[cfg(test)]
mod tests;
