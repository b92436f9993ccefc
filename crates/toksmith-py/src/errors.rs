//! The one place where core errors become Python exceptions.
//!
//! Every bad-input error is a subclass of `toksmith.ToksmithError`, itself a `ValueError`;
//! file-system problems are `OSError`.

use pyo3::create_exception;
use pyo3::exceptions::{PyKeyError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
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
/// `toksmith.UnknownTokenError`: a `ToksmithError` and also a `KeyError`, as tiktoken raises
/// for an unknown token, so `except KeyError` in ported code still catches it. Two bases need
/// a class made by `type(...)` at import ([`register`]), not `create_exception!`.
static UNKNOWN_TOKEN_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn unknown_token_error(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    let cls = UNKNOWN_TOKEN_ERROR.get_or_try_init(py, || -> PyResult<Py<PyType>> {
        let ns = PyDict::new(py);
        ns.set_item("__module__", "toksmith")?;
        ns.set_item(
            "__doc__",
            "A token id or token that is not in the vocabulary (also a KeyError, as tiktoken raises).",
        )?;
        // the message as given: KeyError's __str__ would quote it
        ns.set_item("__str__", py.get_type::<PyValueError>().getattr("__str__")?)?;
        let bases = PyTuple::new(
            py,
            [
                py.get_type::<ToksmithError>().into_any(),
                py.get_type::<PyKeyError>().into_any(),
            ],
        )?;
        let cls = py
            .get_type::<PyType>()
            .call1(("UnknownTokenError", bases, ns))?;
        Ok(cls.cast_into::<PyType>()?.unbind())
    })?;
    Ok(cls.bind(py).clone())
}
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
    // an out-of-memory message is moved into the exception as it is: formatting a new one could
    // abort the process, the allocator having just refused memory
    let e = match e {
        Error::OutOfMemory(msg) => return pyo3::exceptions::PyMemoryError::new_err(msg),
        e => e,
    };
    let msg = e.to_string();
    match e {
        Error::InvalidPattern { .. } | Error::RegexRuntime(_) => PatternError::new_err(msg),
        Error::VocabTooSmall { .. } | Error::InvalidVocab(_) => VocabError::new_err(msg),
        Error::MergesUnrecoverable(_) => MergesError::new_err(msg),
        Error::EmptyCorpus => EmptyCorpusError::new_err(msg),
        Error::UnknownId { .. } | Error::NotAToken(_) => {
            Python::attach(|py| match unknown_token_error(py) {
                Ok(cls) => PyErr::from_type(cls, msg),
                Err(e) => e,
            })
        }
        Error::InvalidUtf8 { .. } => CorpusDecodeError::new_err(msg),
        Error::Io { .. } => PyOSError::new_err(msg),
        Error::InvalidArgument(_) => PyValueError::new_err(msg),
        Error::OutOfMemory(_) => pyo3::exceptions::PyMemoryError::new_err(msg),
        Error::Interrupted => pyo3::exceptions::PyKeyboardInterrupt::new_err(msg),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ToksmithError", py.get_type::<ToksmithError>())?;
    m.add("PatternError", py.get_type::<PatternError>())?;
    m.add("VocabError", py.get_type::<VocabError>())?;
    m.add("EmptyCorpusError", py.get_type::<EmptyCorpusError>())?;
    m.add("UnknownTokenError", unknown_token_error(py)?)?;
    m.add("CorpusDecodeError", py.get_type::<CorpusDecodeError>())?;
    m.add("MergesError", py.get_type::<MergesError>())?;
    Ok(())
}
