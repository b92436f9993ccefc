//! Module functions about split patterns: splitting text, named patterns, checking a pattern.

use crate::errors::to_py;
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::sync::{Arc, Mutex};
use toksmith_core::pretokenize::{self, Pretokenizer};

/// The patterns `split` compiled last, newest at the end: callers split many texts with one
/// pattern, and compiling a custom regex costs far more than splitting a short text.
static RECENT: Mutex<Vec<(String, bool, Arc<Pretokenizer>)>> = Mutex::new(Vec::new());
const RECENT_MAX: usize = 4;

fn recent_pretokenizer(
    pattern: &str,
    regex_only: bool,
) -> toksmith_core::Result<Arc<Pretokenizer>> {
    // a poisoned lock only loses the cache, never the split
    if let Ok(recent) = RECENT.lock() {
        if let Some((_, _, pre)) = recent
            .iter()
            .find(|(p, r, _)| p == pattern && *r == regex_only)
        {
            return Ok(Arc::clone(pre));
        }
    }
    let pre = Arc::new(if regex_only {
        Pretokenizer::new_regex(pattern)?
    } else {
        Pretokenizer::new(pattern)?
    });
    if let Ok(mut recent) = RECENT.lock() {
        if recent.len() >= RECENT_MAX {
            recent.remove(0);
        }
        recent.push((pattern.to_string(), regex_only, Arc::clone(&pre)));
    }
    Ok(pre)
}

/// Split text into pieces; engine "auto" (scanners for named patterns) or "regex".
#[pyfunction]
#[pyo3(signature = (text, pattern, engine="auto"))]
pub(crate) fn split<'py>(
    py: Python<'py>,
    text: &str,
    pattern: &str,
    engine: &str,
) -> PyResult<Bound<'py, PyList>> {
    let regex_only = match engine {
        "auto" => false,
        "regex" => true,
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "engine must be 'auto' or 'regex', not {other:?}"
            )))
        }
    };
    let pre = recent_pretokenizer(pattern, regex_only).map_err(to_py)?;
    let pieces = py.detach(|| pre.split(text)).map_err(to_py)?;
    crate::cpython::str_list(py, &pieces)
}

#[pyfunction]
pub(crate) fn named_pattern(name: &str) -> Option<&'static str> {
    pretokenize::named_pattern(name)
}

/// Check a pattern compiles; returns (regex text, uses hand-written scanner).
#[pyfunction]
pub(crate) fn compile_pattern(pattern: &str) -> PyResult<(String, bool)> {
    let p = Pretokenizer::new(pattern).map_err(to_py)?;
    Ok((p.pattern().to_string(), p.is_fast()))
}

/// The pattern constants of the module (`NAMED_PATTERNS` and the preset patterns).
pub(crate) fn add_constants(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add(
        "NAMED_PATTERNS",
        pretokenize::NAMED_PATTERNS
            .iter()
            .map(|(n, p)| (*n, *p))
            .collect::<Vec<_>>(),
    )?;
    m.add("RUSTBPE_GPT4_PATTERN", pretokenize::RUSTBPE_GPT4_PATTERN)?;
    m.add("WORDS_PATTERN", pretokenize::WORDS_PATTERN)?;
    m.add("CPP_WORDS_PATTERN", pretokenize::CPP_WORDS_PATTERN)?;
    m.add("CPP_RUNS_PATTERN", pretokenize::CPP_RUNS_PATTERN)?;
    m.add("WHOLE_PATTERN", pretokenize::WHOLE_PATTERN)?;
    Ok(())
}
