//! The consumer's per-record path: `async for record in consumer` and `getone()`.
//!
//! A fetched response is decoded into a list of `ConsumerRecord`s; after the first record of
//! a response has gone through the whole poll (`drain`), its next records are handed out one at
//! a time by a `RecordRun`, each moving the partition's position past it, for as long as
//! nothing changed since the run was made. `RecordStream` is what `async for` iterates: a
//! record the run has is handed out with no coroutine, no task step and no exception (the
//! awaitable completes through `am_send`); otherwise the consumer's own coroutine takes the
//! whole poll path. Per record, this is what `async for` costs beyond the loop's body, so it is
//! done here rather than by two Python generators (an async one over a plain one).

use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::gc::PyVisit;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyList;
use pyo3::{PyTraverseError, PyTypeInfo};

use super::records::ConsumerRecord;

/// A counter the consumer's subscription state moves on every change that could alter which
/// records may be handed out (assignment, pause, resume, seek, reset, revocation): a run made
/// before a change hands out nothing after it. Read from here without a Python attribute
/// lookup, which would cost more than the rest of a record's step.
#[pyclass(module = "ferrokafka._native")]
pub struct Generation {
    value: u64,
}

#[pymethods]
impl Generation {
    #[new]
    fn new() -> Self {
        Generation { value: 0 }
    }

    fn bump(&mut self) {
        self.value += 1;
    }

    #[getter]
    fn value(&self) -> u64 {
        self.value
    }
}

/// The next records of one fetched response (all but its last, which is left to the full
/// poll: the position after a whole response is its own rule), each moving the partition's
/// position past it, while nothing changed since the run was made: the subscription state's
/// `Generation` is where it was, and the partition's position is the one this run left.
///
/// When it ends (exhausted, invalidated or closed) it writes how far it got to the response
/// (`taken`) and reports what it handed out (`on_consumed(records, bytes)`), once.
#[pyclass(module = "ferrokafka._native")]
pub struct RecordRun {
    buf: Py<PyAny>,
    items: Py<PyList>,
    state: Py<PyAny>,
    generation: Py<Generation>,
    on_consumed: Option<Py<PyAny>>,
    /// The position object this run last saw or left (compared by identity: the same object
    /// is the same position), None once the run has ended.
    position: Option<Py<PyAny>>,
    since: u64,
    first: usize,
    taken: usize,
    last: usize,
    raw_len: usize,
}

impl RecordRun {
    /// The next record, or None (and the run ends) when there is none to hand out now.
    fn next_record(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let Some(position) = &self.position else {
            return Ok(None);
        };
        let state = self.state.bind(py);
        let unchanged = self.taken < self.last
            && self.generation.borrow(py).value == self.since
            && state.getattr(intern!(py, "position"))?.is(position);
        if !unchanged {
            self.end(py)?;
            return Ok(None);
        }
        let record = self.items.bind(py).get_item(self.taken)?;
        let offset = match record.cast::<ConsumerRecord>() {
            Ok(r) => r.borrow().offset(),
            Err(_) => record.getattr(intern!(py, "offset"))?.extract()?,
        };
        let next = offset
            .checked_add(1)
            .ok_or_else(|| {
                PyRuntimeError::new_err(format!("record offset {offset} has no next position"))
            })?
            .into_pyobject(py)?
            .into_any();
        state.setattr(intern!(py, "position"), &next)?;
        self.taken += 1;
        self.position = Some(next.unbind());
        Ok(Some(record.unbind()))
    }

    /// Write back how far the run got and count what it handed out (once).
    fn end(&mut self, py: Python<'_>) -> PyResult<()> {
        if self.position.take().is_none() {
            return Ok(());
        }
        self.buf
            .bind(py)
            .setattr(intern!(py, "taken"), self.taken)?;
        let handed = self.taken - self.first;
        if handed > 0 {
            if let Some(report) = &self.on_consumed {
                let total = self.items.bind(py).len().max(1);
                let bytes = (self.raw_len as u128 * handed as u128 / total as u128) as u64;
                report.bind(py).call1((handed, bytes))?;
            }
        }
        Ok(())
    }
}

#[pymethods]
impl RecordRun {
    /// A run over `buf.items` from `buf.taken`, for the partition state `buf.state` at its
    /// position now and `generation` at its value now; `raw_len` is the response's size in
    /// bytes (its share per record is what `on_consumed` is told).
    #[new]
    #[pyo3(signature = (buf, generation, raw_len, on_consumed = None))]
    fn new(
        py: Python<'_>,
        buf: Bound<'_, PyAny>,
        generation: Py<Generation>,
        raw_len: usize,
        on_consumed: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let items = buf.getattr(intern!(py, "items"))?.cast_into::<PyList>()?;
        let taken: usize = buf.getattr(intern!(py, "taken"))?.extract()?;
        let state = buf.getattr(intern!(py, "state"))?;
        let position = state.getattr(intern!(py, "position"))?;
        let since = generation.borrow(py).value;
        let last = items.len().saturating_sub(1);
        Ok(RecordRun {
            buf: buf.unbind(),
            items: items.unbind(),
            state: state.unbind(),
            generation,
            on_consumed,
            // No position: nothing to hand out.
            position: (!position.is_none()).then(|| position.unbind()),
            since,
            first: taken,
            taken,
            last,
            raw_len,
        })
    }

    /// The next record, None when the run has none to hand out (it has then ended).
    fn take(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.next_record(py)
    }

    /// End the run now (nothing more is handed out by it).
    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        self.end(py)
    }

    /// Whether the run has ended.
    #[getter]
    fn ended(&self) -> bool {
        self.position.is_none()
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.next_record(py)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.buf)?;
        visit.call(&self.items)?;
        visit.call(&self.state)?;
        visit.call(&self.generation)?;
        visit.call(&self.on_consumed)?;
        visit.call(&self.position)
    }
}

/// What `async for record in consumer` iterates. Each step reads the fetch buffer's current
/// run (`owner._buffer.run`; no buffer before the consumer started): a record it has is handed
/// out at once (a group member's application counts as having polled, and the member's failure
/// is raised first, as `getone()` does); otherwise the step is the coroutine `slow()`, the
/// consumer's whole poll path (which raises `StopAsyncIteration` once the consumer is stopped).
#[pyclass(module = "ferrokafka._native")]
pub struct RecordStream {
    owner: Py<PyAny>,
    buffer: Option<Py<PyAny>>,
    member: Option<Py<PyAny>>,
    slow: Py<PyAny>,
}

impl RecordStream {
    fn run<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, RecordRun>>> {
        if self.buffer.is_none() {
            let buffer = self.owner.bind(py).getattr(intern!(py, "_buffer"))?;
            if buffer.is_none() {
                return Ok(None);
            }
            self.buffer = Some(buffer.unbind()); // a consumer's buffer is made once
        }
        let Some(buffer) = &self.buffer else {
            return Ok(None);
        };
        let run = buffer.bind(py).getattr(intern!(py, "run"))?;
        Ok(run.cast_into::<RecordRun>().ok())
    }
}

#[pymethods]
impl RecordStream {
    /// `owner`: the consumer (its `_buffer`); `member`: the group member to tell of each poll
    /// (None without a group); `slow`: makes the coroutine of a step through the whole poll.
    #[new]
    #[pyo3(signature = (owner, slow, member = None))]
    fn new(owner: Py<PyAny>, slow: Py<PyAny>, member: Option<Py<PyAny>>) -> Self {
        RecordStream {
            owner,
            buffer: None,
            member,
            slow,
        }
    }

    fn __aiter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __anext__(&mut self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        if let Some(run) = self.run(py)? {
            if !run.borrow().ended() {
                if let Some(member) = &self.member {
                    member
                        .bind(py)
                        .call_method0(intern!(py, "raise_if_failed"))?;
                }
                let record = run.borrow_mut().next_record(py)?;
                if let Some(record) = record {
                    if let Some(member) = &self.member {
                        member.bind(py).call_method0(intern!(py, "polled"))?;
                    }
                    let ready = Ready {
                        value: Some(record),
                    };
                    return Ok(Py::new(py, ready)?.into_any());
                }
            }
        }
        self.slow.call0(py)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.owner)?;
        visit.call(&self.buffer)?;
        visit.call(&self.member)?;
        visit.call(&self.slow)
    }
}

/// An awaitable that is complete already: awaiting it gives its value at once. Through
/// `am_send` (installed by [`install_send`]) the interpreter takes the value without the
/// `StopIteration` that `__next__` has to raise.
#[pyclass(module = "ferrokafka._native", freelist = 64)]
pub struct Ready {
    value: Option<Py<PyAny>>,
}

#[pymethods]
impl Ready {
    fn __await__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self) -> PyResult<Py<PyAny>> {
        match self.value.take() {
            Some(value) => Err(pyo3::exceptions::PyStopIteration::new_err((value,))),
            None => Err(awaited_twice()),
        }
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.value)
    }

    fn __clear__(&mut self) {
        self.value = None;
    }
}

fn awaited_twice() -> PyErr {
    PyRuntimeError::new_err("cannot reuse an already awaited record")
}

/// `am_send` of `Ready`: the value is the result (PYGEN_RETURN), no exception made.
unsafe extern "C" fn ready_send(
    slf: *mut ffi::PyObject,
    _arg: *mut ffi::PyObject,
    result: *mut *mut ffi::PyObject,
) -> ffi::PySendResult {
    // SAFETY: the interpreter calls am_send with the GIL held, `slf` a live `Ready` (the
    // slot is installed on that type only) and `result` writable.
    unsafe {
        let py = Python::assume_attached();
        let me = Bound::from_borrowed_ptr(py, slf).cast_into_unchecked::<Ready>();
        let value = match me.try_borrow_mut() {
            Ok(mut me) => me.value.take(),
            Err(_) => None,
        };
        match value {
            Some(value) => {
                *result = value.into_ptr();
                ffi::PySendResult::PYGEN_RETURN
            }
            None => {
                awaited_twice().restore(py);
                *result = std::ptr::null_mut();
                ffi::PySendResult::PYGEN_ERROR
            }
        }
    }
}

/// Give `Ready` its `am_send` slot (PyO3 has no method for it).
pub fn install_send(py: Python<'_>) -> PyResult<()> {
    let ty = Ready::type_object(py);
    // SAFETY: `Ready` is a heap type made by PyO3 with an `__await__`, so `tp_as_async`
    // points at the type's own (writable) async-methods table; the type cache is told.
    unsafe {
        let tp = ty.as_type_ptr();
        let methods = (*tp).tp_as_async;
        if methods.is_null() {
            return Err(PyRuntimeError::new_err("Ready has no async methods table"));
        }
        (*methods).am_send = Some(ready_send);
        ffi::PyType_Modified(tp);
    }
    Ok(())
}
