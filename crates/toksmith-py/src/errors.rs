//! The one place where core errors become Python exceptions.
//!
//! Every bad-input error is a subclass of `toksmith.ToksmithError`, itself a `ValueError`;
//! file-system problems are `OSError`.

use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use toksmith_core::Error;

create_exception!(
    toksmith,
    ToksmithError,
    PyValueError,
    "Base class of toksmith's errors (a ValueError)."
);
create_exception!(
    toksmith,
    PatternError,
    ToksmithError,
    "A split pattern is not a valid regex, or the regex engine failed on an input."
);
create_exception!(
    toksmith,
    VocabError,
    ToksmithError,
    "An inconsistent vocabulary or tokenizer file, or a vocab_size that cannot be met."
);
create_exception!(
    toksmith,
    EmptyCorpusError,
    ToksmithError,
    "The training corpus has no text."
);
create_exception!(
    toksmith,
    UnknownTokenError,
    ToksmithError,
    "A token id or token that is not in the vocabulary."
);
create_exception!(
    toksmith,
    CorpusDecodeError,
    ToksmithError,
    "A corpus file is not valid UTF-8."
);
create_exception!(
    toksmith,
    MergesError,
    VocabError,
    "A rank table whose merge list cannot be recovered."
);

pub fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::InvalidPattern { .. } | Error::RegexRuntime(_) => PatternError::new_err(msg),
        Error::VocabTooSmall { .. } | Error::InvalidVocab(_) => VocabError::new_err(msg),
        Error::MergesUnrecoverable(_) => MergesError::new_err(msg),
        Error::EmptyCorpus => EmptyCorpusError::new_err(msg),
        Error::UnknownId { .. } | Error::NotAToken(_) => UnknownTokenError::new_err(msg),
        Error::InvalidUtf8 { .. } => CorpusDecodeError::new_err(msg),
        Error::Io { .. } => PyOSError::new_err(msg),
        Error::InvalidArgument(_) => PyValueError::new_err(msg),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ToksmithError", py.get_type::<ToksmithError>())?;
    m.add("PatternError", py.get_type::<PatternError>())?;
    m.add("VocabError", py.get_type::<VocabError>())?;
    m.add("EmptyCorpusError", py.get_type::<EmptyCorpusError>())?;
    m.add("UnknownTokenError", py.get_type::<UnknownTokenError>())?;
    m.add("CorpusDecodeError", py.get_type::<CorpusDecodeError>())?;
    m.add("MergesError", py.get_type::<MergesError>())?;
    Ok(())
}
