//! Hand-written scanner for [`super::WORDS_PATTERN`], the word split of the `</w>` model
//! (`crate::words`). Unlike the named patterns it drops text (whitespace matches no
//! alternative), so it is a loop of its own rather than a piece function for `blocks.rs`.
//!
//! At a character `c`, the regex's alternatives come down to:
//! * `c` upper (`Lu`, `Lt`), starting a run of `k` upper characters: with `k >= 2` and a lower
//!   character (`Ll Lm Lo M`) after the run, the run less its last character (the acronym
//!   before a capitalised word: `XMLHttp` gives `XML`); with `k == 1` and a lower character
//!   next, `c` and the lower run after it; otherwise the upper run;
//! * `c` lower: the lower run;
//! * `c` a digit (`\p{N}`): the digit run;
//! * `c` whitespace: nothing (skipped);
//! * anything else: `c` alone.
//!
//! The equality with the regex is checked by fuzzing, here against the Rust regex engine and
//! in the Python tests against the `regex` module.

use super::chars::{char_at, is_o200k_lower as is_lower, Text};
use super::unicode_tables::{LT, LU, NUM, SPACE};

#[inline(always)]
fn is_upper(cat: u8) -> bool {
    cat == LU || cat == LT
}

/// Call `f` with each word of `text`, in order.
#[inline]
pub fn for_each_word<'t>(text: &'t str, mut f: impl FnMut(&'t str)) {
    let t = Text::new(text);
    let b = text.as_bytes();
    let n = b.len();
    let mut i = 0;
    while i < n {
        let c = char_at(b, i);
        let next = i + c.len as usize;
        let end = if is_upper(c.cat) {
            let run_end = t.run(next, is_upper);
            let lower_after = |at: usize| matches!(t.at(at), Some(d) if is_lower(d.cat));
            if run_end > next {
                if lower_after(run_end) {
                    t.prev_start(run_end)
                } else {
                    run_end
                }
            } else if lower_after(next) {
                t.run(next, is_lower)
            } else {
                next
            }
        } else if is_lower(c.cat) {
            t.run(next, is_lower)
        } else if c.cat == NUM {
            t.run(next, |k| k == NUM)
        } else if c.cat == SPACE {
            i = next;
            continue;
        } else {
            next
        };
        // SAFETY: `i` and `end` are character boundaries of `text` (runs end on one)
        f(unsafe { text.get_unchecked(i..end) });
        i = end;
    }
}
