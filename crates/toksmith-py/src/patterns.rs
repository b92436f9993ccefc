//! Module functions about split patterns: splitting text, named patterns, checking a pattern.

use crate::errors::to_py;
use pyo3::prelude::*;
use pyo3::types::PyList;
use toksmith_core::pretokenize::{self, Pretokenizer};

/// Split text into pieces; engine "auto" (scanners for named patterns) or "regex".
#[pyfunction]
#[pyo3(signature = (text, pattern, engine="auto"))]
pub(crate) fn split<'py>(
    py: Python<'py>,
    text: &str,
    pattern: &str,
    engine: &str,
) -> PyResult<Bound<'py, PyList>> {
    let pre = match engine {
        "auto" => Pretokenizer::new(pattern),
        "regex" => Pretokenizer::new_regex(pattern),
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "engine must be 'auto' or 'regex', not {other:?}"
            )))
        }
    }
    .map_err(to_py)?;
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
