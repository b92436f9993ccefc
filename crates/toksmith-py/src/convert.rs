//! Arguments in and results out without an allocation that aborts the process.
//!
//! PyO3's own conversions allocate with the global allocator, which aborts the process
//! ("memory allocation of N bytes failed") when memory runs out: `Vec<T>` arguments reserve
//! room for the whole sequence, `String` arguments copy the text, and `Vec<T>` / `String`
//! results become lists and strings through constructors that panic when CPython returns NULL.
//! Every argument whose size follows the input is read here instead ([`Seq`], [`Bytes`] and the
//! [`Item`]s inside them), every result whose size follows the input is built through [`Out`],
//! and parallel maps over input-sized batches collect through [`try_par_map`]; all of them
//! raise `MemoryError` when the room is refused.

use crate::cpython;
use crate::errors::to_py;
use crate::text::{self, StrView};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyString, PyTuple};
use pyo3::Borrowed;
use rayon::prelude::*;
use toksmith_core::mem;

// ---------------------------------------------------------------------------------------------
// Arguments in

/// A sequence argument read into a vector whose room is allocated fallibly: what PyO3's
/// `Vec<T>` extraction accepts (any object passing `PySequence_Check` but a `str`), with the
/// items read by [`Item`].
#[derive(Default)]
pub(crate) struct Seq<T>(pub Vec<T>);

impl<T> std::ops::Deref for Seq<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<'py, T: Item<'py>> FromPyObject<'_, 'py> for Seq<T> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        read_seq(&obj).map(Seq)
    }
}

/// A `bytes` or `bytearray` argument (or a sequence of ints in 0..256, as PyO3's `Vec<u8>`
/// takes) copied into a vector allocated fallibly.
#[derive(Default)]
pub(crate) struct Bytes(pub Vec<u8>);

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl<'py> FromPyObject<'_, 'py> for Bytes {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        Bytes::read(&obj)
    }
}

/// How an item of a [`Seq`] is read from its Python object; what grows with the object is
/// allocated fallibly.
pub(crate) trait Item<'py>: Sized {
    fn read(obj: &Bound<'py, PyAny>) -> PyResult<Self>;
}

macro_rules! plain_items {
    ($($t:ty),*) => {$(
        impl<'py> Item<'py> for $t {
            fn read(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
                obj.extract()
            }
        }
    )*};
}
plain_items!(u8, u32, u64, usize, bool, f32);

impl<'py> Item<'py> for String {
    fn read(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        read_string(obj.cast::<PyString>()?)
    }
}

impl<'py> Item<'py> for Bytes {
    fn read(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(b) = obj.cast::<PyBytes>() {
            return copy_bytes(b.as_bytes()).map(Bytes);
        }
        if let Ok(b) = obj.cast::<PyByteArray>() {
            let mut v = mem::try_vec(b.len(), "a bytes argument").map_err(to_py)?;
            v.resize(b.len(), 0);
            let n = cpython::copy_from_bytearray(b, &mut v);
            v.truncate(n);
            return Ok(Bytes(v));
        }
        read_seq::<u8>(obj).map(Bytes)
    }
}

impl<'py, T: Item<'py>> Item<'py> for Vec<T> {
    fn read(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        read_seq(obj)
    }
}

impl<'py, T: Item<'py>> Item<'py> for Option<T> {
    fn read(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        if obj.is_none() {
            Ok(None)
        } else {
            T::read(obj).map(Some)
        }
    }
}

impl<'py> Item<'py> for Bound<'py, PyAny> {
    fn read(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        Ok(obj.clone())
    }
}

impl<'py> Item<'py> for Bound<'py, PyString> {
    fn read(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        Ok(obj.cast::<PyString>()?.clone())
    }
}

/// The items of a tuple of exactly `n` items (PyO3's message otherwise).
fn tuple_items<'a, 'py>(obj: &'a Bound<'py, PyAny>, n: usize) -> PyResult<&'a Bound<'py, PyTuple>> {
    let t = obj.cast::<PyTuple>()?;
    if t.len() != n {
        return Err(PyValueError::new_err(format!(
            "expected tuple of length {n}, but got tuple of length {}",
            t.len()
        )));
    }
    Ok(t)
}

impl<'py, A: Item<'py>, B: Item<'py>> Item<'py> for (A, B) {
    fn read(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        let t = tuple_items(obj, 2)?;
        Ok((A::read(&t.get_item(0)?)?, B::read(&t.get_item(1)?)?))
    }
}

impl<'py, A: Item<'py>, B: Item<'py>, C: Item<'py>> Item<'py> for (A, B, C) {
    fn read(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        let t = tuple_items(obj, 3)?;
        Ok((
            A::read(&t.get_item(0)?)?,
            B::read(&t.get_item(1)?)?,
            C::read(&t.get_item(2)?)?,
        ))
    }
}

/// The items of a sequence (any object but a `str` that passes `PySequence_Check`, as PyO3's
/// `Vec<T>` extraction takes), in a vector whose room is allocated fallibly.
pub(crate) fn read_seq<'py, T: Item<'py>>(obj: &Bound<'py, PyAny>) -> PyResult<Vec<T>> {
    let mut v = Vec::new();
    let push = |v: &mut Vec<T>, item: &Bound<'py, PyAny>| -> PyResult<()> {
        let x = T::read(item)?;
        mem::try_push(v, x, "the items of an argument").map_err(to_py)
    };
    if let Ok(list) = obj.cast::<PyList>() {
        mem::try_reserve(&mut v, list.len(), "the items of an argument").map_err(to_py)?;
        // (`iter` reads the length at each step: an item's conversion may change the list)
        for item in list.iter() {
            push(&mut v, &item)?;
        }
        return Ok(v);
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        mem::try_reserve(&mut v, t.len(), "the items of an argument").map_err(to_py)?;
        for item in t.iter() {
            push(&mut v, &item)?;
        }
        return Ok(v);
    }
    if obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err("Can't extract `str` to `Vec`"));
    }
    if !cpython::is_sequence(obj) {
        return Err(PyTypeError::new_err(format!(
            "'{}' object cannot be cast as 'Sequence'",
            obj.get_type().name()?
        )));
    }
    // (a length hint only: the sequence may give fewer or more items)
    let hint = obj.len().unwrap_or(0);
    mem::try_reserve(&mut v, hint, "the items of an argument").map_err(to_py)?;
    for item in obj.try_iter()? {
        push(&mut v, &item?)?;
    }
    Ok(v)
}

/// A copy of `b`, allocated fallibly.
pub(crate) fn copy_bytes(b: &[u8]) -> PyResult<Vec<u8>> {
    let mut v = mem::try_vec(b.len(), "a bytes argument").map_err(to_py)?;
    v.extend_from_slice(b);
    Ok(v)
}

/// The UTF-8 of `s` in a new `String` allocated fallibly (a lone surrogate is the
/// `UnicodeEncodeError` PyO3's `String` extraction raises). CPython's storage is read directly,
/// so no UTF-8 copy is left attached to the `str`.
pub(crate) fn read_string(s: &Bound<'_, PyString>) -> PyResult<String> {
    let view = text::view(s)?;
    let mut out = String::new();
    match view {
        StrView::Utf8(t) => {
            out.try_reserve_exact(t.len())
                .map_err(|_| to_py(mem::oom("a str argument", t.len(), 1)))?;
            out.push_str(t);
        }
        StrView::Wide(w) => view
            .append_utf8(0, w.len(), &mut out)
            .map_err(|e| text::utf8_error(s, e))?,
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Results out

/// A value that becomes a Python object, `MemoryError` (never a panic) when CPython cannot
/// allocate it.
pub(crate) trait Out {
    fn out<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>>;
}

macro_rules! int_outs {
    ($($t:ty),*) => {$(
        impl Out for $t {
            fn out<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                cpython::int(py, *self as u64)
            }
        }
    )*};
}
int_outs!(u32, u64, usize);

impl Out for str {
    fn out<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        cpython::new_str(py, self)
    }
}

impl Out for String {
    fn out<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        cpython::new_str(py, self)
    }
}

impl Out for std::borrow::Cow<'_, str> {
    fn out<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        cpython::new_str(py, self)
    }
}

/// Bytes become a `bytes` object (a `[u8]` is never a list of ints here).
impl Out for [u8] {
    fn out<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        cpython::bytes_from(py, self).map(Bound::into_any)
    }
}

impl Out for Box<[u8]> {
    fn out<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        (**self).out(py)
    }
}

impl<T: Out> Out for Vec<T> {
    fn out<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        list(py, self).map(Bound::into_any)
    }
}

impl<T: Out + ?Sized> Out for &T {
    fn out<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        (**self).out(py)
    }
}

impl<A: Out, B: Out> Out for (A, B) {
    fn out<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        cpython::tuple_of(py, [self.0.out(py)?, self.1.out(py)?])
    }
}

impl<A: Out, B: Out, C: Out> Out for (A, B, C) {
    fn out<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        cpython::tuple_of(py, [self.0.out(py)?, self.1.out(py)?, self.2.out(py)?])
    }
}

/// A list of the objects of `items`.
pub(crate) fn list<'py, T: Out>(py: Python<'py>, items: &[T]) -> PyResult<Bound<'py, PyList>> {
    cpython::list_of(py, items.iter().map(|x| x.out(py)))
}

// ---------------------------------------------------------------------------------------------
// Input-sized vectors in Rust

/// `f` of each item, in parallel on the current pool, into a vector whose room is allocated
/// fallibly up front (rayon's `collect` would allocate it with the global allocator); the first
/// error (in item order) is returned.
pub(crate) fn try_par_map<T: Sync, U: Send + Default>(
    items: &[T],
    what: &str,
    f: impl Fn(&T) -> toksmith_core::Result<U> + Sync,
) -> toksmith_core::Result<Vec<U>> {
    let mut out = mem::try_vec(items.len(), what)?;
    // (within the room just reserved: no allocation)
    out.resize_with(items.len(), U::default);
    out.par_iter_mut()
        .zip(items.par_iter())
        .enumerate()
        .map(|(k, (o, x))| f(x).map(|v| *o = v).map_err(|e| (k, e)))
        .filter_map(Result::err)
        .min_by_key(|(k, _)| *k)
        .map_or(Ok(out), |(_, e)| Err(e))
}

/// `f` of each item into a vector allocated fallibly (see [`try_par_map`]), in order.
pub(crate) fn try_map<T, U>(
    items: impl ExactSizeIterator<Item = T>,
    what: &str,
    mut f: impl FnMut(T) -> U,
) -> toksmith_core::Result<Vec<U>> {
    let mut out = mem::try_vec(items.len(), what)?;
    for x in items {
        mem::try_push(&mut out, f(x), what)?;
    }
    Ok(out)
}
