//! Mutable state for a frozen class, borrowed under the GIL.
//!
//! PyO3 0.29 guards a mutable class's value with an atomic borrow flag: a borrow costs one
//! or two locked instructions, paid on every call. The per-record classes (the consumer's
//! step, run and stream; the producer's send step, open-batch table, batches and record
//! futures) are called millions of times a second, always with the GIL held, so they are
//! frozen and keep their mutable state in a [`GilCell`]: a `RefCell` whose flag is a plain
//! integer, which is enough while one thread at a time can reach it. The module keeps the GIL on (it declares `Py_mod_gil = Py_MOD_GIL_USED`) and
//! refuses to load into an interpreter running without it (see `require_gil`).

use std::cell::{Ref, RefCell, RefMut};

use pyo3::exceptions::{PyImportError, PyRuntimeError};
use pyo3::prelude::*;

pub(super) struct GilCell<T>(RefCell<T>);

// SAFETY: the flag and the value are reached only through `borrow_mut`, which takes a
// `Python` token, and `try_borrow_in_gc`, which the collector calls: with the GIL on (the
// module does not load otherwise) either means this thread holds the GIL, so every access
// happens under it, and its hand-over from one thread to another orders them as it does the
// fields of every Python object: no data race. A borrow that meets one already made (Python
// code run during a borrow calling back in, or another thread that took the GIL meanwhile)
// is refused by the flag. Nothing here releases the GIL itself (`Python::detach`) during a
// borrow. `T: Send` because another thread may take the value over later (or drop it).
unsafe impl<T: Send> Sync for GilCell<T> {}

impl<T> GilCell<T> {
    pub(super) const fn new(value: T) -> Self {
        GilCell(RefCell::new(value))
    }

    /// The value, mutably; an error (as PyO3's own borrows give) when it is borrowed already,
    /// which is Python code re-entering the object from inside one of its own calls.
    pub(super) fn borrow_mut<'a>(&'a self, _py: Python<'_>) -> PyResult<RefMut<'a, T>> {
        self.0
            .try_borrow_mut()
            .map_err(|_| PyRuntimeError::new_err("Already borrowed"))
    }

    /// The value, shared, or None while it is borrowed mutably: for `__traverse__`, which is
    /// given no token (the collector holds the GIL whenever it runs) and may run in the middle
    /// of one of the object's calls, when it skips the object, as PyO3 does.
    pub(super) fn try_borrow_in_gc(&self) -> Option<Ref<'_, T>> {
        self.0.try_borrow().ok()
    }
}

/// Refuse to load into an interpreter running without the GIL (a free-threaded build started
/// with `PYTHON_GIL=0` or `-X gil=0`, which overrides the module's declaration): the
/// [`GilCell`]s would then be reached from two threads at once.
pub(super) fn require_gil(py: Python<'_>) -> PyResult<()> {
    let sys = py.import("sys")?;
    let Ok(is_enabled) = sys.getattr("_is_gil_enabled") else {
        return Ok(()); // before 3.13: there is always a GIL
    };
    if is_enabled.call0()?.is_truthy()? {
        return Ok(());
    }
    Err(PyImportError::new_err(
        "ferrokafka._native needs the GIL, which this interpreter runs without (PYTHON_GIL=0 \
         or -X gil=0): start it without that setting",
    ))
}
