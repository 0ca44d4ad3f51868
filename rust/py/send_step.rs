//! `producer.send(topic, value, key=key)` as a coroutine made by the extension.
//!
//! When it first runs, the record joins the open batch the full `send` would append it to
//! (the topic's sticky partition, or the key's partition under the default partitioner), and
//! the coroutine completes with the record's future at once. When there is no such batch to
//! join (the first record of a batch, a value that is not `bytes`, a record too large, a
//! closed producer), it runs the whole `send`'s coroutine and completes as that does. As with
//! an `async def`, nothing is sent before it runs: sends awaited out of the order they were
//! called in append in the order awaited, and one never awaited sends nothing.

use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use pyo3::PyTraverseError;

use super::gil_cell::GilCell;
use super::open_batches::OpenBatches;
use super::shortcut_coroutine::{self, reused, Phase, Shortcut, ShortcutClass};

/// What a step needs until it has run: the batches, the record, and the whole path.
struct Pending {
    batches: Py<OpenBatches>,
    topic: Py<PyAny>,
    value: Py<PyAny>,
    key: Py<PyAny>,
    slow: Py<PyAny>,
}

#[pyclass(module = "ferrokafka._native", frozen, freelist = 64)]
pub struct SendStep {
    state: GilCell<SendState>,
}

pub(super) struct SendState {
    /// Taken when the step first runs.
    pending: Option<Pending>,
    phase: Phase,
}

impl SendStep {
    pub(super) fn new(
        batches: Py<OpenBatches>,
        topic: Py<PyAny>,
        value: Py<PyAny>,
        key: Py<PyAny>,
        slow: Py<PyAny>,
    ) -> Self {
        SendStep {
            state: GilCell::new(SendState {
                pending: Some(Pending {
                    batches,
                    topic,
                    value,
                    key,
                    slow,
                }),
                phase: Phase::Fresh,
            }),
        }
    }
}

impl ShortcutClass for SendStep {
    type State = SendState;

    fn cell(&self) -> &GilCell<SendState> {
        &self.state
    }
}

impl Shortcut for SendState {
    fn phase(&mut self) -> &mut Phase {
        &mut self.phase
    }

    fn shortcut(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let Some(p) = &self.pending else {
            return Err(reused());
        };
        let batches = p.batches.bind(py).try_borrow()?;
        let (topic, value, key) = (p.topic.bind(py), p.value.bind(py), p.key.bind(py));
        let future = if key.is_none() {
            batches.send(py, topic, value)?
        } else {
            batches.send_keyed(py, topic, key, value)?
        };
        drop(batches);
        if future.is_some() {
            self.pending = None;
        }
        Ok(future.map(Py::into_any))
    }

    fn slow(&mut self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let p = self.pending.take().ok_or_else(reused)?;
        p.slow.call1(py, (p.topic, p.value, p.key))
    }
}

#[pymethods]
impl SendStep {
    fn __await__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.running(py)?.resume_py(py, &py.None().into_bound(py))
    }

    #[pyo3(signature = (value, /))]
    fn send(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.running(py)?.resume_py(py, value)
    }

    /// Raise an exception inside the step: into the whole `send`'s coroutine when it runs
    /// one, else here, where it ends the step before anything was sent.
    #[pyo3(signature = (*args))]
    fn throw(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        let mut state = self.running(py)?;
        state.pending = None;
        shortcut_coroutine::throw(py, &mut state.phase, args)
    }

    /// End the step (the whole `send`'s coroutine, if it runs one, is closed).
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let mut state = self.running(py)?;
        state.pending = None;
        shortcut_coroutine::close(py, &mut state.phase)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        let Some(state) = self.state.try_borrow_in_gc() else {
            return Ok(()); // borrowed: in the middle of a call, which holds what it uses
        };
        if let Some(p) = &state.pending {
            visit.call(&p.batches)?;
            visit.call(&p.topic)?;
            visit.call(&p.value)?;
            visit.call(&p.key)?;
            visit.call(&p.slow)?;
        }
        shortcut_coroutine::traverse(&state.phase, &visit)
    }

    fn __clear__(&self, py: Python<'_>) {
        if let Ok(mut state) = self.state.borrow_mut(py) {
            state.pending = None;
            state.phase = Phase::Done;
        }
    }
}
