//! Entering the extension from a slot that PyO3 did not make (`am_send`, vectorcall).
//!
//! PyO3 counts, per thread, how deep the thread is inside its own calls: a reference dropped
//! at depth zero is queued for later rather than released, so code that drops references
//! must run inside the count. PyO3's public way in, `Python::attach_unchecked`, finds the
//! count at zero whenever the interpreter calls a slot directly, and then registers the
//! thread with `PyGILState_Ensure`/`PyGILState_Release` on every call, though the thread
//! holds the GIL already. The slots PyO3 makes enter through its trampolines instead, which
//! only raise the count (the interpreter guarantees the GIL when it calls a slot). [`enter`]
//! goes in through the simplest of those, as PyO3's own slots do; the per-record slots (a
//! consumer's step, a producer's `send`) are entered once or twice per record, and the
//! registration cost about a tenth of a record taken through `getone()`.

use pyo3::ffi;
use pyo3::impl_::trampoline::{unaryfunc, MethodDef};
use pyo3::prelude::*;

/// What [`enter`] runs.
type Body<'a> = &'a mut dyn FnMut(Python<'_>) -> PyResult<()>;

/// Run `body` as PyO3 runs its own slots: inside its count, a panic turned into a
/// `PanicException`, an error left set as the current exception. Whether `body` succeeded.
///
/// # Safety
/// The calling thread holds the GIL (true of every slot the interpreter calls).
pub(super) unsafe fn enter(mut body: Body<'_>) -> bool {
    // The trampoline passes its argument through to `run` untouched: here it carries `body`.
    let carried = (&mut body as *mut Body<'_>).cast::<ffi::PyObject>();
    // SAFETY: the GIL is held (this function's contract); `run` is the only reader of
    // `carried`, which lives until the call returns.
    let out = unsafe { unaryfunc::<Entered>(carried) };
    !out.is_null()
}

struct Entered;

impl MethodDef<unaryfunc::Func> for Entered {
    const METH: unaryfunc::Func = run;
}

/// # Safety
/// `carried` is what [`enter`] passed: a live `Body`.
unsafe fn run(py: Python<'_>, carried: *mut ffi::PyObject) -> PyResult<*mut ffi::PyObject> {
    // SAFETY: per this function's contract.
    let body = unsafe { &mut *carried.cast::<Body<'_>>() };
    body(py)?;
    Ok(carried) // not null: success (the trampoline returns it as it is)
}
