//! What the extension's shortcut coroutines share: an awaitable that, when first run, tries a
//! native shortcut and completes with its result at once, or else runs a Python coroutine (the
//! whole path) and completes as that does.
//!
//! Such an awaitable is awaited once per record (a consumer's step, a producer's `send()`), so
//! it completes through `am_send`, which returns a result without making a `StopIteration`
//! (PyO3 has no method for that slot: [`install`] gives it to a class), and its `am_await` is
//! the object itself with no call through PyO3.

use pyo3::exceptions::{PyBaseException, PyRuntimeError, PyStopIteration, PyTypeError};
use pyo3::ffi;
use pyo3::gc::PyVisit;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use pyo3::{PyClass, PyTraverseError, PyTypeInfo};
use std::cell::RefMut;

use super::entry;
use super::gil_cell::GilCell;

/// Where a shortcut coroutine is.
pub(super) enum Phase {
    /// Not started: nothing done yet.
    Fresh,
    /// Running the whole path: the Python coroutine it made.
    Slow(Py<PyAny>),
    Done,
}

/// What one resumption gave.
pub(super) enum Resumed {
    Yielded(Py<PyAny>),
    Returned(Py<PyAny>),
}

/// A shortcut coroutine's state (kept in its class's [`GilCell`]).
pub(super) trait Shortcut {
    fn phase(&mut self) -> &mut Phase;

    /// The shortcut, tried when the coroutine first runs: its result, or None.
    fn shortcut(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>>;

    /// The whole path's coroutine, made when the shortcut gave nothing.
    fn slow(&mut self, py: Python<'_>) -> PyResult<Py<PyAny>>;

    /// Run the coroutine on with `value` (what `send(value)` gives it).
    fn resume(&mut self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Resumed> {
        match std::mem::replace(self.phase(), Phase::Done) {
            Phase::Fresh => {
                if let Some(result) = self.shortcut(py)? {
                    return Ok(Resumed::Returned(result));
                }
                let coroutine = self.slow(py)?;
                delegate(py, self.phase(), coroutine, value)
            }
            Phase::Slow(coroutine) => delegate(py, self.phase(), coroutine, value),
            Phase::Done => Err(reused()),
        }
    }

    /// `resume` as Python's iterator protocol gives it: a yielded value, or `StopIteration`
    /// carrying the result.
    fn resume_py(&mut self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        match self.resume(py, value)? {
            Resumed::Yielded(v) => Ok(v),
            Resumed::Returned(v) => Err(PyStopIteration::new_err((v,))),
        }
    }
}

/// A class whose objects are shortcut coroutines: frozen, its state in a [`GilCell`] (one
/// such object is resumed once per record, where a PyO3 borrow would cost a locked
/// instruction).
pub(super) trait ShortcutClass:
    PyClass<Frozen = pyo3::pyclass::boolean_struct::True> + Sync
{
    type State: Shortcut;

    fn cell(&self) -> &GilCell<Self::State>;

    /// The state to resume; an error while it is resumed already (Python code run by the
    /// coroutine resuming it again).
    fn running(&self, py: Python<'_>) -> PyResult<RefMut<'_, Self::State>> {
        self.cell()
            .borrow_mut(py)
            .map_err(|_| PyRuntimeError::new_err("coroutine already running"))
    }
}

pub(super) fn reused() -> PyErr {
    PyRuntimeError::new_err("cannot reuse already awaited coroutine")
}

/// Send `value` into `coroutine`; `phase` is left `Slow(coroutine)` while it runs on.
fn delegate(
    py: Python<'_>,
    phase: &mut Phase,
    coroutine: Py<PyAny>,
    value: &Bound<'_, PyAny>,
) -> PyResult<Resumed> {
    let mut result: *mut ffi::PyObject = std::ptr::null_mut();
    // SAFETY: both objects are alive (held here), the GIL is held, and `result` is written by
    // PyIter_Send with a new reference whenever it does not fail.
    let status = unsafe { ffi::PyIter_Send(coroutine.as_ptr(), value.as_ptr(), &mut result) };
    match status {
        ffi::PySendResult::PYGEN_NEXT => {
            *phase = Phase::Slow(coroutine);
            // SAFETY: a new reference, per PyIter_Send.
            Ok(Resumed::Yielded(unsafe {
                Bound::from_owned_ptr(py, result).unbind()
            }))
        }
        // SAFETY: a new reference, per PyIter_Send.
        ffi::PySendResult::PYGEN_RETURN => Ok(Resumed::Returned(unsafe {
            Bound::from_owned_ptr(py, result).unbind()
        })),
        ffi::PySendResult::PYGEN_ERROR => Err(PyErr::fetch(py)),
    }
}

/// `throw(exc)`, or the older `throw(type, value, traceback)`: into the whole path's coroutine
/// when it runs one (a cancellation ends its wait), passed on in the form it came in (Python
/// 3.12 deprecates the three-argument one); else raised here, where it ends the coroutine
/// before anything was done.
pub(super) fn throw(
    py: Python<'_>,
    phase: &mut Phase,
    args: &Bound<'_, PyTuple>,
) -> PyResult<Py<PyAny>> {
    if args.is_empty() || args.len() > 3 {
        return Err(PyTypeError::new_err(format!(
            "throw expected 1 to 3 arguments, got {}",
            args.len()
        )));
    }
    match std::mem::replace(phase, Phase::Done) {
        Phase::Slow(coroutine) => {
            let yielded = coroutine
                .bind(py)
                .call_method1(intern!(py, "throw"), args)?;
            *phase = Phase::Slow(coroutine);
            Ok(yielded.unbind())
        }
        _ => {
            let typ = args.get_item(0)?;
            let val = args.get_item(1).ok().filter(|v| !v.is_none());
            let exc = if typ.is_instance_of::<PyBaseException>() {
                typ
            } else {
                match val {
                    Some(v) if v.is_instance_of::<PyBaseException>() => v,
                    Some(v) => typ.call1((v,))?,
                    None => typ.call0()?,
                }
            };
            Err(PyErr::from_value(exc))
        }
    }
}

/// End the coroutine (the whole path's coroutine, if it runs one, is closed).
pub(super) fn close(py: Python<'_>, phase: &mut Phase) -> PyResult<()> {
    if let Phase::Slow(coroutine) = std::mem::replace(phase, Phase::Done) {
        coroutine.bind(py).call_method0(intern!(py, "close"))?;
    }
    Ok(())
}

pub(super) fn traverse(phase: &Phase, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
    if let Phase::Slow(coroutine) = phase {
        visit.call(coroutine)?;
    }
    Ok(())
}

/// `am_send`: a result is returned as PYGEN_RETURN, with no exception made.
unsafe extern "C" fn send_slot<T: ShortcutClass>(
    slf: *mut ffi::PyObject,
    arg: *mut ffi::PyObject,
    result: *mut *mut ffi::PyObject,
) -> ffi::PySendResult {
    let mut status = ffi::PySendResult::PYGEN_ERROR;
    let mut value: *mut ffi::PyObject = std::ptr::null_mut();
    let mut body = |py: Python<'_>| -> PyResult<()> {
        // SAFETY: `slf` is a live `T` (the slot is installed on that class only, which is
        // final) and `arg` a live object, both borrowed for this call.
        let (me, arg) = unsafe {
            (
                Bound::from_borrowed_ptr(py, slf).cast_into_unchecked::<T>(),
                Bound::from_borrowed_ptr(py, arg),
            )
        };
        let resumed = me.get().running(py)?.resume(py, &arg)?;
        (status, value) = match resumed {
            Resumed::Yielded(v) => (ffi::PySendResult::PYGEN_NEXT, v.into_ptr()),
            Resumed::Returned(v) => (ffi::PySendResult::PYGEN_RETURN, v.into_ptr()),
        };
        Ok(())
    };
    // SAFETY: the interpreter calls am_send with the GIL held.
    let ok = unsafe { entry::enter(&mut body) };
    // SAFETY: `result` is writable (am_send's contract).
    unsafe { *result = value };
    if ok {
        status
    } else {
        ffi::PySendResult::PYGEN_ERROR // the exception is set
    }
}

/// `am_await`: the object itself, with no call through PyO3.
unsafe extern "C" fn await_slot(slf: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: `slf` is a live object, borrowed for this call: the new reference is returned.
    unsafe { ffi::Py_IncRef(slf) };
    slf
}

/// Give `T` its `am_send` slot and a direct `am_await`.
pub(super) fn install<T: ShortcutClass + PyTypeInfo>(py: Python<'_>) -> PyResult<()> {
    let ty = T::type_object(py);
    // SAFETY: `T` is a heap type made by PyO3 with an `__await__`, so `tp_as_async` points at
    // the type's own (writable) async-methods table; the type cache is told.
    unsafe {
        let tp = ty.as_type_ptr();
        let methods = (*tp).tp_as_async;
        if methods.is_null() {
            return Err(PyRuntimeError::new_err(format!(
                "{} has no async methods table",
                <T as PyClass>::NAME
            )));
        }
        (*methods).am_send = Some(send_slot::<T>);
        (*methods).am_await = Some(await_slot);
        ffi::PyType_Modified(tp);
    }
    Ok(())
}
