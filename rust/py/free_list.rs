//! Free lists for the classes whose objects are made and dropped once per record: a
//! consumer's `ConsumerRecord`s and a producer's `RecordFuture`s.
//!
//! PyO3's own free list (`#[pyclass(freelist = N)]`) keeps its objects behind a mutex: two
//! locked instructions to take an object and two to give one back, on every record. The
//! module runs only with the GIL on (see `require_gil`), so a list borrowed under the GIL
//! ([`GilCell`]) does the same with plain loads and stores. [`install`] gives a class its
//! allocator and its `tp_free` from here; PyO3's deallocation reads `tp_free` off the type,
//! and PyO3's and the records' own allocation call `tp_alloc`.

use std::ffi::c_void;
use std::ptr::NonNull;

use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::{PyClass, PyTypeInfo};

use super::gil_cell::GilCell;

/// An object whose value has been dropped, kept for the next one of its class.
struct Freed(NonNull<ffi::PyObject>);

// SAFETY: a freed object is reached only through its list, under the GIL.
unsafe impl Send for Freed {}

/// One class's free list.
pub(super) struct FreeList {
    objects: GilCell<Vec<Freed>>,
    capacity: usize,
}

impl FreeList {
    pub(super) const fn new(capacity: usize) -> Self {
        FreeList {
            objects: GilCell::new(Vec::new()),
            capacity,
        }
    }

    fn take(&self, py: Python<'_>) -> Option<NonNull<ffi::PyObject>> {
        self.objects.borrow_mut(py).ok()?.pop().map(|f| f.0)
    }

    /// Keep `obj` for later; false when the list is full (or busy, which nothing here makes).
    fn keep(&self, py: Python<'_>, obj: NonNull<ffi::PyObject>) -> bool {
        let Ok(mut objects) = self.objects.borrow_mut(py) else {
            return false;
        };
        if objects.len() >= self.capacity {
            return false;
        }
        objects.push(Freed(obj));
        true
    }

    /// How many objects the list holds now.
    pub(super) fn len(&self, py: Python<'_>) -> usize {
        self.objects.borrow_mut(py).map_or(0, |o| o.len())
    }
}

/// A class with a free list of its own (not a subclassable one: its objects are all one size).
pub(super) trait FreeListed: PyClass + PyTypeInfo {
    fn free_list() -> &'static FreeList;
}

/// `tp_alloc`: an object of the list when it has one, as fresh from `PyObject_Init`.
unsafe extern "C" fn alloc<T: FreeListed>(
    subtype: *mut ffi::PyTypeObject,
    nitems: ffi::Py_ssize_t,
) -> *mut ffi::PyObject {
    // SAFETY: the interpreter calls tp_alloc with the GIL held.
    let py = unsafe { Python::assume_attached() };
    if nitems == 0 && std::ptr::eq(subtype, T::type_object_raw(py)) {
        if let Some(obj) = T::free_list().take(py) {
            // SAFETY: a whole object of this class, its value dropped and its memory kept;
            // PyObject_Init gives it its type (and a reference to it) and a count of one.
            unsafe { ffi::PyObject_Init(obj.as_ptr(), subtype) };
            return obj.as_ptr();
        }
    }
    // SAFETY: as the interpreter's default allocator is called.
    unsafe { ffi::PyType_GenericAlloc(subtype, nitems) }
}

/// `tp_free`: the object goes to the list, or back to the allocator when the list is full.
unsafe extern "C" fn free<T: FreeListed>(obj: *mut c_void) {
    let Some(obj) = NonNull::new(obj.cast::<ffi::PyObject>()) else {
        return;
    };
    // SAFETY: the interpreter frees objects with the GIL held.
    let py = unsafe { Python::assume_attached() };
    if !T::free_list().keep(py, obj) {
        // SAFETY: the class is not garbage-collected (checked by `install`), so its objects
        // came from PyObject_Malloc, through PyType_GenericAlloc.
        unsafe { ffi::PyObject_Free(obj.as_ptr().cast()) };
    }
}

/// Give `T` the allocator and `tp_free` of its free list.
pub(super) fn install<T: FreeListed>(py: Python<'_>) -> PyResult<()> {
    let ty = T::type_object(py);
    // SAFETY: `T` is a heap type made by PyO3: its slots are its own to change; the type cache
    // is told.
    unsafe {
        let tp = ty.as_type_ptr();
        if ffi::PyType_IS_GC(tp) != 0 {
            return Err(PyRuntimeError::new_err(format!(
                "{} is garbage-collected: its objects are not freed with PyObject_Free",
                <T as PyClass>::NAME
            )));
        }
        (*tp).tp_alloc = Some(alloc::<T>);
        (*tp).tp_free = Some(free::<T>);
        ffi::PyType_Modified(tp);
    }
    Ok(())
}

/// How many objects each free list holds now, by class name (for the tests).
#[pyfunction]
pub fn _free_lists(py: Python<'_>) -> Vec<(&'static str, usize)> {
    vec![
        (
            <super::records::ConsumerRecord as PyClass>::NAME,
            <super::records::ConsumerRecord as FreeListed>::free_list().len(py),
        ),
        (
            <super::producer::RecordFuture as PyClass>::NAME,
            <super::producer::RecordFuture as FreeListed>::free_list().len(py),
        ),
    ]
}
