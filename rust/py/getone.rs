//! `consumer.getone`: what a consumer's `getone()` call is made of, per record, when a
//! service awaits one record at a time.
//!
//! The consumer's class defines `getone` as a Python method (its signature, its documentation,
//! what subclasses and patches replace). A Python method costs a frame per call, which is a
//! tenth of a record's whole cost when the record is already buffered; so each consumer also
//! has a `GetOne` as its own `getone` attribute, which makes the step with no Python frame:
//! `consumer.getone()` finds it before the class's method. It steps aside (calling `other`
//! with the arguments) whenever it could differ from the class's method: when partitions are
//! named, and when the class's `getone` is no longer the method it was made for (a subclass
//! overrides it, or a test patches the class).

use std::sync::atomic::{AtomicU32, Ordering};

use pyo3::ffi;
use pyo3::gc::PyVisit;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyTuple, PyType};
use pyo3::PyTraverseError;

use super::record_run::RecordStream;

/// A consumer's `getone`, as an attribute of the consumer. It has a `__dict__`, where the
/// consumer puts what introspection looks for (`__signature__`, the coroutine-function
/// markers of `inspect` and `asyncio`).
#[pyclass(module = "ferrokafka._native", frozen, dict)]
pub struct GetOne {
    stream: Py<RecordStream>,
    /// The consumer's class, and the function its `getone` attribute is when unchanged.
    class: Py<PyType>,
    function: Py<PyAny>,
    /// What makes the call whenever this one steps aside, with the call's arguments.
    other: Py<PyAny>,
    /// The class's version tag when its `getone` was last found to be `function` (0: not
    /// found so): the interpreter gives a class a new tag whenever one of its attributes (or
    /// a base class's) changes.
    checked: AtomicU32,
}

impl GetOne {
    /// Whether the class's `getone` is still `function`.
    fn unchanged(&self, py: Python<'_>) -> PyResult<bool> {
        let class = self.class.bind(py);
        let tag = version_tag(class);
        if tag != 0 && tag == self.checked.load(Ordering::Relaxed) {
            return Ok(true);
        }
        let same = class.getattr(intern!(py, "getone"))?.is(&self.function);
        // Looking the attribute up gives the class a valid tag again, if it had none.
        self.checked
            .store(if same { version_tag(class) } else { 0 }, Ordering::Relaxed);
        Ok(same)
    }
}

/// The class's version tag while it is valid, else 0.
fn version_tag(class: &Bound<'_, PyType>) -> u32 {
    let tp = class.as_type_ptr();
    // SAFETY: reading two fields of a live type object, with the GIL held.
    unsafe {
        if (*tp).tp_flags & ffi::Py_TPFLAGS_VALID_VERSION_TAG == 0 {
            0
        } else {
            (*tp).tp_version_tag
        }
    }
}

#[pymethods]
impl GetOne {
    /// `stream`: the consumer's step maker; `owner_class` and `function`: the consumer's
    /// class and the `getone` it defines now; `other`: called with the arguments of a call
    /// this object does not make itself.
    #[new]
    #[pyo3(signature = (stream, owner_class, function, other, /))]
    fn new(
        stream: Py<RecordStream>,
        owner_class: Py<PyType>,
        function: Py<PyAny>,
        other: Py<PyAny>,
    ) -> Self {
        GetOne {
            stream,
            class: owner_class,
            function,
            other,
            checked: AtomicU32::new(0),
        }
    }

    #[pyo3(signature = (*partitions))]
    fn __call__(&self, py: Python<'_>, partitions: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        if partitions.is_empty() && self.unchanged(py)? {
            let step = self.stream.bind(py).try_borrow_mut()?.next_step(py)?;
            return Ok(step.into_any());
        }
        Ok(self.other.bind(py).call1(partitions)?.unbind())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<getone of a {} consumer>",
            self.class.bind(py).qualname()?
        ))
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.stream)?;
        visit.call(&self.class)?;
        visit.call(&self.function)?;
        visit.call(&self.other)
    }
}
