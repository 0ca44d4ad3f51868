//! A client's own `getone` and `send` attributes: what `consumer.getone()` and
//! `producer.send(topic, value, key=key)` are made of, per record.
//!
//! The classes define both as Python methods (their signatures, their documentation, what
//! subclasses and patches replace). A Python call costs a frame, and `send`'s a coroutine as
//! well, which is a sixth of a record's whole cost when the record takes a shortcut; so each
//! client also has one of these objects as its own attribute of the same name, found before
//! the class's method, which makes the shortcut's awaitable with no Python frame. It steps
//! aside (calling `other` with the call's arguments) whenever it could differ from the class's
//! method: for arguments the shortcut does not take, and when the class's attribute is no
//! longer the method it was made for (a subclass overrides it, or a test patches the class).
//!
//! Both are called through the vectorcall protocol (PyO3 has no method for it; [`Own::make`]
//! gives the class its slot): a call's arguments reach the object as the caller's array, with
//! no tuple, and keyword arguments with no dict (`send(topic, value, key=key)` is the common
//! form). A call made with a tuple and a dict (`f(*args, **kwargs)`) takes `__call__`, which
//! does the same.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

use pyo3::ffi;
use pyo3::gc::PyVisit;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::pyclass::boolean_struct::True;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};
use pyo3::{PyClass, PyTraverseError, PyTypeInfo};

use super::entry;
use super::open_batches::OpenBatches;
use super::record_run::RecordStream;
use super::send_step::SendStep;

/// A method of a client's class, as it was when the client's own attribute was made.
struct ClassMethod {
    class: Py<PyType>,
    name: Py<PyString>,
    function: Py<PyAny>,
    /// The class's version tag when its attribute was last found to be `function` (0: not
    /// found so): the interpreter gives a class a new tag whenever one of its attributes (or
    /// a base class's) changes.
    checked: AtomicU32,
}

impl ClassMethod {
    fn new(class: Py<PyType>, name: Py<PyString>, function: Py<PyAny>) -> Self {
        ClassMethod {
            class,
            name,
            function,
            checked: AtomicU32::new(0),
        }
    }

    /// Whether the class's attribute is still `function`.
    fn unchanged(&self, py: Python<'_>) -> PyResult<bool> {
        let class = self.class.bind(py);
        let tag = version_tag(class);
        if tag != 0 && tag == self.checked.load(Ordering::Relaxed) {
            return Ok(true);
        }
        let same = class.getattr(self.name.bind(py))?.is(&self.function);
        // Looking the attribute up gives the class a valid tag again, if it had none.
        self.checked
            .store(if same { version_tag(class) } else { 0 }, Ordering::Relaxed);
        Ok(same)
    }

    fn describe(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<{} of a {} object>",
            self.name.bind(py),
            self.class.bind(py).qualname()?
        ))
    }

    fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.class)?;
        visit.call(&self.name)?;
        visit.call(&self.function)
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

/// A consumer's `getone`, as an attribute of the consumer. It has a `__dict__`, where the
/// consumer puts what introspection looks for (`__signature__`, the coroutine-function
/// markers of `inspect` and `asyncio`).
#[pyclass(module = "ferrokafka._native", frozen, dict)]
pub struct GetOne {
    vectorcall: ffi::vectorcallfunc,
    stream: Py<RecordStream>,
    method: ClassMethod,
    /// What makes the call whenever this one steps aside, with the call's arguments.
    other: Py<PyAny>,
}

#[pymethods]
impl GetOne {
    /// `stream`: the consumer's step maker; `owner_class` and `function`: the consumer's
    /// class and the `getone` it defines now; `other`: called with the arguments of a call
    /// this object does not make itself.
    #[staticmethod]
    #[pyo3(signature = (stream, owner_class, function, other, /))]
    fn make(
        py: Python<'_>,
        stream: Py<RecordStream>,
        owner_class: Py<PyType>,
        function: Py<PyAny>,
        other: Py<PyAny>,
    ) -> PyResult<Py<GetOne>> {
        let name = intern!(py, "getone").clone().unbind();
        let object = Py::new(
            py,
            GetOne {
                vectorcall: vectorcall::<GetOne>,
                stream,
                method: ClassMethod::new(owner_class, name, function),
                other,
            },
        )?;
        Ok(Self::with_vectorcall(py, object))
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        if kwargs.is_none_or(|k| k.is_empty()) && args.is_empty() {
            // SAFETY: no pointers are passed.
            if let Some(step) = unsafe { self.fast(py, &[], None)? } {
                return Ok(step);
            }
        }
        Ok(self.other.bind(py).call(args, kwargs)?.unbind())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.method.describe(py)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.stream)?;
        self.method.traverse(&visit)?;
        visit.call(&self.other)
    }
}

/// A producer's `send`, as an attribute of the producer (with a `__dict__`, as `GetOne`).
/// `send(topic, value)` and `send(topic, value, key)` (positional or by keyword) make a
/// `SendStep`; any other call is `other(*args, **kwargs)`.
#[pyclass(module = "ferrokafka._native", frozen, dict)]
pub struct SendMethod {
    vectorcall: ffi::vectorcallfunc,
    batches: Py<OpenBatches>,
    method: ClassMethod,
    /// `slow(topic, value, key)`: the whole `send`'s coroutine, for a step whose shortcut
    /// finds no open batch to join.
    slow: Py<PyAny>,
    other: Py<PyAny>,
}

/// Keyword arguments as vectorcall passes them: the names, and the values in that order.
type Keywords<'a, 'py> = (&'a Bound<'py, PyTuple>, &'a [*mut ffi::PyObject]);

/// How many parameters `send` has: topic, value, key, partition, timestamp_ms, headers. The
/// shortcut takes a call whose arguments past the first three are None (what
/// `send_and_wait` passes on).
const SEND_PARAMETERS: usize = 6;

/// The position of the parameter of `send` named `name` (1 for value, and on), if any.
fn send_parameter(py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
    let names = [
        intern!(py, "value"),
        intern!(py, "key"),
        intern!(py, "partition"),
        intern!(py, "timestamp_ms"),
        intern!(py, "headers"),
    ];
    // Keyword names are interned by the compiler: the same object, as a rule.
    if let Some(i) = names.iter().position(|n| name.is(*n)) {
        return Ok(Some(i + 1));
    }
    for (i, n) in names.iter().enumerate() {
        if name.eq(*n)? {
            return Ok(Some(i + 1));
        }
    }
    Ok(None)
}

/// `(topic, value, key)` out of a call's arguments (value and key None when not given), if
/// the call gives no partition, timestamp or headers (or gives them as None).
///
/// # Safety
/// Every pointer in `positional` and the keyword values is a live object for the call.
unsafe fn plain(
    py: Python<'_>,
    positional: &[*mut ffi::PyObject],
    keywords: Option<Keywords<'_, '_>>,
) -> PyResult<Option<[*mut ffi::PyObject; 3]>> {
    if !(1..=SEND_PARAMETERS).contains(&positional.len()) {
        return Ok(None);
    }
    let none = py.None().as_ptr();
    let mut slots = [std::ptr::null_mut(); SEND_PARAMETERS];
    slots[..positional.len()].copy_from_slice(positional);
    if let Some((names, values)) = keywords {
        for (name, value) in names.iter().zip(values) {
            let Some(index) = send_parameter(py, &name)? else {
                return Ok(None); // not a parameter of send: the full call raises
            };
            if !slots[index].is_null() {
                return Ok(None); // given twice: the full call raises
            }
            slots[index] = *value;
        }
    }
    if slots[3..].iter().any(|p| !p.is_null() && *p != none) {
        return Ok(None);
    }
    let or_none = |p: *mut ffi::PyObject| if p.is_null() { none } else { p };
    Ok(Some([slots[0], or_none(slots[1]), or_none(slots[2])]))
}

/// A client's own method object: a frozen class called through vectorcall.
trait Own: PyClass<Frozen = True> + PyTypeInfo + Sync {
    /// Where the object's `vectorcall` field is, within the class's value.
    const FIELD: usize;

    /// The object for a call, or None (then `other` makes it).
    ///
    /// # Safety
    /// As for [`plain`].
    unsafe fn fast(
        &self,
        py: Python<'_>,
        positional: &[*mut ffi::PyObject],
        keywords: Option<Keywords<'_, '_>>,
    ) -> PyResult<Option<Py<PyAny>>>;

    fn other(&self) -> &Py<PyAny>;

    /// Set once the class's vectorcall slot is: the offset of the value within its objects.
    fn slot_set() -> &'static OnceLock<usize>;

    /// `object`, with the class's vectorcall slot set up (once, from the first object).
    fn with_vectorcall(py: Python<'_>, object: Py<Self>) -> Py<Self> {
        Self::slot_set().get_or_init(|| {
            let at = object.get() as *const Self as usize - object.as_ptr() as usize;
            let tp = Self::type_object(py).as_type_ptr();
            // SAFETY: a heap type made by PyO3, not yet called through vectorcall (only
            // this object exists, and it has not been returned); every object of the class
            // has its `vectorcall` field at this offset (the class's layout is fixed). The
            // type cache is told.
            unsafe {
                (*tp).tp_vectorcall_offset = (at + Self::FIELD) as ffi::Py_ssize_t;
                (*tp).tp_flags |= ffi::Py_TPFLAGS_HAVE_VECTORCALL;
                ffi::PyType_Modified(tp);
            }
            at
        });
        object
    }
}

impl Own for GetOne {
    const FIELD: usize = std::mem::offset_of!(GetOne, vectorcall);

    fn slot_set() -> &'static OnceLock<usize> {
        static SET: OnceLock<usize> = OnceLock::new();
        &SET
    }

    /// The next step, for a call with no arguments while the class's method is unchanged.
    unsafe fn fast(
        &self,
        py: Python<'_>,
        positional: &[*mut ffi::PyObject],
        keywords: Option<Keywords<'_, '_>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        if !positional.is_empty() || keywords.is_some_and(|(names, _)| !names.is_empty()) {
            return Ok(None);
        }
        if !self.method.unchanged(py)? {
            return Ok(None);
        }
        let step = self.stream.get().next_step(py)?;
        Ok(Some(step.into_any()))
    }

    fn other(&self) -> &Py<PyAny> {
        &self.other
    }
}

impl Own for SendMethod {
    const FIELD: usize = std::mem::offset_of!(SendMethod, vectorcall);

    fn slot_set() -> &'static OnceLock<usize> {
        static SET: OnceLock<usize> = OnceLock::new();
        &SET
    }

    /// A step for a call the shortcut takes.
    unsafe fn fast(
        &self,
        py: Python<'_>,
        positional: &[*mut ffi::PyObject],
        keywords: Option<Keywords<'_, '_>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        // SAFETY: per this function's contract.
        let Some([topic, value, key]) = (unsafe { plain(py, positional, keywords)? }) else {
            return Ok(None);
        };
        if !self.method.unchanged(py)? {
            return Ok(None);
        }
        // SAFETY: live objects, borrowed for the call: each is given its own reference.
        let [topic, value, key] =
            [topic, value, key].map(|p| unsafe { Bound::from_borrowed_ptr(py, p) }.unbind());
        let step = SendStep::new(
            self.batches.clone_ref(py),
            topic,
            value,
            key,
            self.slow.clone_ref(py),
        );
        Ok(Some(Py::new(py, step)?.into_any()))
    }

    fn other(&self) -> &Py<PyAny> {
        &self.other
    }
}

/// The vectorcall slot of an `Own` class.
unsafe extern "C" fn vectorcall<T: Own>(
    callable: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargsf: usize,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    let mut out: *mut ffi::PyObject = std::ptr::null_mut();
    // SAFETY: the interpreter calls the slot with the GIL held. The slot is set on `T` only (a
    // final class), so `callable` is a live `T`; `args` holds the positional arguments, then
    // one value per name in `kwnames` (a tuple, or null for none), all borrowed for this call.
    // On an error `out` stays null, the exception set.
    unsafe {
        entry::enter(&mut |py| {
            out = call::<T>(py, callable, args, nargsf, kwnames)?;
            Ok(())
        });
    }
    out
}

/// # Safety
/// As described in [`vectorcall`].
unsafe fn call<T: Own>(
    py: Python<'_>,
    callable: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargsf: usize,
    kwnames: *mut ffi::PyObject,
) -> PyResult<*mut ffi::PyObject> {
    // SAFETY: per this function's contract.
    unsafe {
        let me = Bound::from_borrowed_ptr(py, callable).cast_into_unchecked::<T>();
        let nargs = ffi::PyVectorcall_NARGS(nargsf) as usize;
        let names = (!kwnames.is_null())
            .then(|| Bound::from_borrowed_ptr(py, kwnames).cast_into_unchecked::<PyTuple>());
        let count = nargs + names.as_ref().map_or(0, |n| n.len());
        let all: &[*mut ffi::PyObject] = if count == 0 {
            &[]
        } else {
            std::slice::from_raw_parts(args, count)
        };
        let keywords = names.as_ref().map(|n| (n, &all[nargs..]));
        if let Some(object) = me.get().fast(py, &all[..nargs], keywords)? {
            return Ok(object.into_ptr());
        }
        let result = ffi::PyObject_Vectorcall(me.get().other().as_ptr(), args, nargsf, kwnames);
        if result.is_null() {
            Err(PyErr::fetch(py))
        } else {
            Ok(result)
        }
    }
}

#[pymethods]
impl SendMethod {
    /// `batches`: the producer's open batches; `owner_class` and `function`: the producer's
    /// class and the `send` it defines now; `slow` and `other` as described on the class.
    #[staticmethod]
    #[pyo3(signature = (batches, owner_class, function, slow, other, /))]
    fn make(
        py: Python<'_>,
        batches: Py<OpenBatches>,
        owner_class: Py<PyType>,
        function: Py<PyAny>,
        slow: Py<PyAny>,
        other: Py<PyAny>,
    ) -> PyResult<Py<SendMethod>> {
        let name = intern!(py, "send").clone().unbind();
        let object = Py::new(
            py,
            SendMethod {
                vectorcall: vectorcall::<SendMethod>,
                batches,
                method: ClassMethod::new(owner_class, name, function),
                slow,
                other,
            },
        )?;
        Ok(Self::with_vectorcall(py, object))
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let positional: Vec<*mut ffi::PyObject> = args.iter().map(|a| a.as_ptr()).collect();
        let (names, values): (Vec<_>, Vec<_>) = kwargs.into_iter().flatten().unzip();
        let names = PyTuple::new(py, names)?;
        let values: Vec<*mut ffi::PyObject> = values.iter().map(|v| v.as_ptr()).collect();
        // SAFETY: the pointers are borrowed from `args`, `kwargs` and `values`, alive here.
        let fast = unsafe { self.fast(py, &positional, Some((&names, &values)))? };
        match fast {
            Some(step) => Ok(step),
            None => Ok(self.other.bind(py).call(args, kwargs)?.unbind()),
        }
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.method.describe(py)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.batches)?;
        self.method.traverse(&visit)?;
        visit.call(&self.slow)?;
        visit.call(&self.other)
    }
}
