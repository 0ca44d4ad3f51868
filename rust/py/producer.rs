//! The producer's open batch and the futures `send()` returns.
//!
//! A record is encoded into its batch when it is sent (`BatchRecords`), so closing a batch only
//! adds the header. Each record gets a `RecordFuture`: an asyncio-compatible future (the
//! protocol asyncio's tasks, `gather`, `wait` and `wait_for` use: `_asyncio_future_blocking`,
//! `add_done_callback`, `result`, ...) that reads its outcome from its batch. A batch's outcome
//! is set once and its records' done-callbacks run from one event-loop callback, where
//! `asyncio.Future`s would each schedule their own: per record, this is what asyncio's API
//! costs most of.

use pyo3::exceptions::{PyRuntimeError, PyStopIteration, PyValueError};
use pyo3::ffi;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyInt, PyString, PyTuple, PyType};
use pyo3::{PyTraverseError, PyTypeInfo};
use std::cell::RefMut;

use super::free_list::{FreeList, FreeListed};
use super::gil_cell::GilCell;

use crate::records::{BatchOptions, Codec, RecordsWriter};

static CANCELLED_ERROR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static INVALID_STATE_ERROR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static RECORD_METADATA: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static COPY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn import<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyAny>>,
    module: &str,
    name: &str,
) -> PyResult<Bound<'py, PyAny>> {
    cell.import(py, module, name).cloned()
}

/// A `RecordMetadata` of these seven fields, made as `tuple.__new__` makes an instance of a
/// tuple subclass (allocate, fill the items) without the call: gather asks every future for
/// its result, and the call through `tuple.__new__` cost more than the rest of `result()`.
fn record_metadata(py: Python<'_>, items: [Bound<'_, PyAny>; 7]) -> PyResult<Py<PyAny>> {
    let cls = RECORD_METADATA.get_or_try_init(py, || {
        let cls = py
            .import("ferrokafka.structs")?
            .getattr("RecordMetadata")?
            .cast_into::<PyType>()?;
        // Only a tuple subclass with nothing of its own (no __dict__, no slots: a NamedTuple)
        // is complete once its items are set.
        let tuple = PyTuple::type_object(py);
        // SAFETY: reading two fields of live type objects.
        let same_layout = unsafe {
            let (own, base) = (cls.as_type_ptr(), tuple.as_type_ptr());
            (*own).tp_basicsize == (*base).tp_basicsize
                && (*own).tp_itemsize == (*base).tp_itemsize
                && (*own).tp_dictoffset == 0
        };
        if !cls.is_subclass(&tuple)? || !same_layout {
            return Err(PyRuntimeError::new_err(
                "ferrokafka.structs.RecordMetadata is not a plain tuple subclass",
            ));
        }
        Ok(cls.unbind())
    })?;
    let len = items.len() as ffi::Py_ssize_t;
    let acyclic = items
        .iter()
        .all(|item| is_atom(item) || is_pair_of_atoms(item));
    // SAFETY: `cls` is a tuple subclass laid out as tuple (checked above), so its tp_alloc
    // gives a zeroed tuple of `len` item slots, GC-tracked (a NULL item is skipped by tuple's
    // traverse); each slot is then given a new reference, as tuple's own constructor does.
    unsafe {
        let cls = cls.bind(py).as_type_ptr();
        let alloc = (*cls).tp_alloc.unwrap_or(ffi::PyType_GenericAlloc);
        let obj = alloc(cls, len);
        if obj.is_null() {
            return Err(PyErr::fetch(py));
        }
        for (i, item) in items.into_iter().enumerate() {
            ffi::PyTuple_SET_ITEM(obj, i as ffi::Py_ssize_t, item.into_ptr());
        }
        if acyclic {
            // As the collector does with a tuple of atoms (it never does it for a subclass):
            // a tuple that cannot be in a cycle need not be tracked, and a gather holding
            // thousands of results then costs the collector nothing.
            ffi::PyObject_GC_UnTrack(obj.cast());
        }
        Ok(Bound::from_owned_ptr(py, obj).unbind())
    }
}

/// A str, int or None: holds no references to other objects.
fn is_atom(item: &Bound<'_, PyAny>) -> bool {
    item.is_exact_instance_of::<PyString>()
        || item.is_exact_instance_of::<PyInt>()
        || item.is_none()
}

/// A tuple (or a plain tuple subclass, as `TopicPartition`) of atoms only.
fn is_pair_of_atoms(item: &Bound<'_, PyAny>) -> bool {
    let Ok(tuple) = item.cast::<PyTuple>() else {
        return false;
    };
    let base = PyTuple::type_object(item.py());
    // SAFETY: reading two fields each of live type objects.
    let plain = unsafe {
        let (own, base) = (item.get_type().as_type_ptr(), base.as_type_ptr());
        (*own).tp_basicsize == (*base).tp_basicsize && (*own).tp_dictoffset == 0
    };
    plain && tuple.iter().all(|part| is_atom(&part))
}

fn no_loop() -> PyErr {
    PyRuntimeError::new_err("BatchRecords: no event loop set (set_loop) for record futures")
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// A producer batch's header options; a ValueError names an unknown codec.
pub(super) fn batch_options(
    compression: &str,
    transactional: bool,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
) -> PyResult<BatchOptions> {
    let codec = Codec::parse(compression).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(BatchOptions {
        codec,
        transactional,
        producer_id,
        producer_epoch,
        base_sequence,
        ..Default::default()
    })
}

enum Outcome {
    Pending,
    /// Where the batch landed: its partition (a `TopicPartition`), base offset (-1 unknown),
    /// log-append time (-1: the records keep their create time) and log start offset.
    Done {
        tp: Py<PyAny>,
        base_offset: i64,
        log_append_time: i64,
        log_start_offset: Option<i64>,
    },
    /// acks=0: nothing is known.
    NoAck,
    Failed(Py<PyAny>),
}

/// One producer batch's records, encoded as they are appended, and its outcome. The first
/// record is always taken, however large; later ones only while the batch stays within
/// `batch_size` bytes (uncompressed, header included). Frozen, its state in a `GilCell`: every
/// `send()` appends to one, and every call on a record's future reads its outcome.
#[pyclass(module = "ferrokafka._native", frozen)]
pub struct BatchRecords {
    batch: GilCell<Batch>,
}

/// A `BatchRecords`' state.
struct Batch {
    writer: RecordsWriter,
    batch_size: usize,
    closed: bool,
    outcome: Outcome,
    event_loop: Option<Py<PyAny>>,
    /// Futures of this batch with done-callbacks, in the order they were added.
    waiters: Vec<Py<RecordFuture>>,
    /// A loop callback to run `waiters`' callbacks is scheduled and has not run yet.
    scheduled: bool,
    /// Called with no arguments when the first waiter registers while the batch is pending:
    /// someone now waits for this batch, which the sender may take into account.
    on_awaited: Option<Py<PyAny>>,
}

impl Batch {
    /// Whether a record of `size` bytes goes in now (the rule: `RecordsWriter::has_room`); a
    /// record that does not closes the batch (it goes into the next one, and no later, smaller
    /// record may overtake it).
    fn has_room(&mut self, size: usize) -> bool {
        if self.closed {
            return false;
        }
        if !self.writer.has_room(size, self.batch_size) {
            self.closed = true;
            return false;
        }
        true
    }
}

impl BatchRecords {
    fn state<'a>(&'a self, py: Python<'_>) -> PyResult<RefMut<'a, Batch>> {
        self.batch.borrow_mut(py)
    }

    /// The future of record `index` (the batch has an event loop).
    fn future_of(slf: &Bound<'_, Self>, index: i32, timestamp: i64) -> PyResult<Py<RecordFuture>> {
        Py::new(
            slf.py(),
            RecordFuture {
                batch: slf.clone().unbind(),
                index,
                timestamp,
                state: GilCell::new(FutureState {
                    cancelled: None,
                    callbacks: Vec::new(),
                    registered: false,
                    exception: None,
                    blocking: false,
                }),
            },
        )
    }

    /// Set the outcome; run the waiting futures' callbacks on the next loop turn.
    fn settle(slf: &Bound<'_, Self>, outcome: Outcome) -> PyResult<()> {
        let py = slf.py();
        let mut me = slf.get().state(py)?;
        if !matches!(me.outcome, Outcome::Pending) {
            return Ok(());
        }
        me.outcome = outcome;
        me.closed = true;
        me.writer.clear();
        me.on_awaited = None;
        let schedule = !me.waiters.is_empty();
        drop(me);
        if schedule {
            Self::schedule_callbacks(slf)?;
        }
        Ok(())
    }

    /// Run the waiters' callbacks from one loop callback (once per batch until it has run).
    fn schedule_callbacks(slf: &Bound<'_, Self>) -> PyResult<()> {
        let py = slf.py();
        let mut me = slf.get().state(py)?;
        if me.scheduled {
            return Ok(());
        }
        let Some(event_loop) = me.event_loop.as_ref().map(|l| l.clone_ref(py)) else {
            return Ok(());
        };
        me.scheduled = true;
        drop(me);
        let scheduled = event_loop
            .bind(py)
            .call_method1("call_soon", (slf.getattr("_run_callbacks")?,));
        if scheduled.is_err() {
            slf.get().state(py)?.scheduled = false;
        }
        scheduled.map(|_| ())
    }

    /// A record without headers, stamped now, appended with its future made; None when the
    /// batch is closed or full (`send()`'s shortcuts, keyed or not).
    pub(super) fn append_now(
        slf: &Bound<'_, Self>,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) -> PyResult<Option<Py<RecordFuture>>> {
        let ts = now_ms();
        let mut me = slf.get().state(slf.py())?;
        // Checked before the record goes in: a send that raises must not leave it in the batch.
        if me.event_loop.is_none() {
            return Err(no_loop());
        }
        let size = me.writer.record_size(ts, key, value, &[]);
        if !me.has_room(size) {
            return Ok(None);
        }
        me.writer
            .append(ts, key, value, &[])
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let index = me.writer.count() - 1;
        drop(me);
        Self::future_of(slf, index, ts).map(Some)
    }
}

#[pymethods]
impl BatchRecords {
    #[new]
    fn new(batch_size: usize) -> Self {
        BatchRecords {
            batch: GilCell::new(Batch {
                writer: RecordsWriter::new(),
                batch_size,
                closed: false,
                outcome: Outcome::Pending,
                event_loop: None,
                waiters: Vec::new(),
                scheduled: false,
                on_awaited: None,
            }),
        }
    }

    /// The event loop the records' futures belong to, and what to call (no arguments) when
    /// the first of them gets a done-callback while the batch is pending.
    #[pyo3(signature = (event_loop, on_awaited = None))]
    fn set_loop(
        &self,
        py: Python<'_>,
        event_loop: Py<PyAny>,
        on_awaited: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let mut me = self.state(py)?;
        me.event_loop = Some(event_loop);
        me.on_awaited = on_awaited;
        Ok(())
    }

    /// Whether some record's future has a done-callback (someone awaits the batch).
    #[getter]
    fn awaited(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(!self.state(py)?.waiters.is_empty())
    }

    /// Append a record (`timestamp` in epoch ms, None for now); its timestamp, or None when
    /// the batch is closed or has no room for it (then it is closed).
    #[pyo3(signature = (timestamp, key, value, headers))]
    fn add(
        &self,
        py: Python<'_>,
        timestamp: Option<i64>,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: Vec<(String, Option<Vec<u8>>)>,
    ) -> PyResult<Option<i64>> {
        let ts = timestamp.unwrap_or_else(now_ms);
        let headers: Vec<(&[u8], Option<&[u8]>)> = headers
            .iter()
            .map(|(k, v)| (k.as_bytes(), v.as_deref()))
            .collect();
        let mut me = self.state(py)?;
        let size = me.writer.record_size(ts, key, value, &headers);
        if !me.has_room(size) {
            return Ok(None);
        }
        me.writer
            .append(ts, key, value, &headers)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Some(ts))
    }

    /// `send()`'s common case in one call: an unkeyed record without headers, stamped now;
    /// its future, or None when the batch is closed or full.
    fn append_value(slf: &Bound<'_, Self>, value: &[u8]) -> PyResult<Option<Py<RecordFuture>>> {
        Self::append_now(slf, None, Some(value))
    }

    /// The future of the record just added (with `timestamp`, what `add` returned).
    fn last_future(slf: &Bound<'_, Self>, timestamp: i64) -> PyResult<Py<RecordFuture>> {
        let me = slf.get().state(slf.py())?;
        if me.writer.count() == 0 {
            return Err(PyRuntimeError::new_err("BatchRecords: no record added"));
        }
        if me.event_loop.is_none() {
            return Err(no_loop());
        }
        let index = me.writer.count() - 1;
        drop(me);
        Self::future_of(slf, index, timestamp)
    }

    /// No more records.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.state(py)?.closed = true;
        Ok(())
    }

    #[getter]
    fn closed(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.state(py)?.closed)
    }

    /// Bytes of the batch if encoded now without compression, header included.
    #[getter]
    fn size(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.state(py)?.writer.size())
    }

    #[getter]
    fn record_count(&self, py: Python<'_>) -> PyResult<i32> {
        Ok(self.state(py)?.writer.count())
    }

    /// The batch's bytes (the records stay, for a retry with other producer fields).
    #[pyo3(signature = (*, compression, transactional, producer_id, producer_epoch, base_sequence))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        compression: &str,
        transactional: bool,
        producer_id: i64,
        producer_epoch: i16,
        base_sequence: i32,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let opts = batch_options(
            compression,
            transactional,
            producer_id,
            producer_epoch,
            base_sequence,
        )?;
        let batch = self
            .state(py)?
            .writer
            .finish(&opts)
            .map_err(|e| super::errors::records_error(py, "", -1, e))?;
        Ok(PyBytes::new(py, &batch))
    }

    /// The broker has the batch: every record's future gets its `RecordMetadata`.
    #[pyo3(signature = (tp, base_offset, log_append_time, log_start_offset))]
    fn resolve(
        slf: &Bound<'_, Self>,
        tp: Py<PyAny>,
        base_offset: i64,
        log_append_time: i64,
        log_start_offset: Option<i64>,
    ) -> PyResult<()> {
        Self::settle(
            slf,
            Outcome::Done {
                tp,
                base_offset,
                log_append_time,
                log_start_offset,
            },
        )
    }

    /// acks=0: every record's future gets None.
    fn resolve_noack(slf: &Bound<'_, Self>) -> PyResult<()> {
        Self::settle(slf, Outcome::NoAck)
    }

    /// The batch failed: every record's future raises (a copy of) `exc`.
    fn fail(slf: &Bound<'_, Self>, exc: Py<PyAny>) -> PyResult<()> {
        Self::settle(slf, Outcome::Failed(exc))
    }

    fn _run_callbacks(&self, py: Python<'_>) -> PyResult<()> {
        let (waiters, event_loop) = {
            let mut me = self.state(py)?;
            me.scheduled = false;
            (
                std::mem::take(&mut me.waiters),
                me.event_loop.as_ref().map(|l| l.clone_ref(py)),
            )
        };
        for fut in waiters {
            let fut = fut.into_bound(py);
            RecordFuture::run_callbacks(&fut, event_loop.as_ref())?;
        }
        Ok(())
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        let Some(me) = self.batch.try_borrow_in_gc() else {
            return Ok(()); // borrowed: in the middle of a call, which holds what it uses
        };
        visit.call(&me.event_loop)?;
        visit.call(&me.on_awaited)?;
        for w in &me.waiters {
            visit.call(w)?;
        }
        match &me.outcome {
            Outcome::Done { tp, .. } => visit.call(tp)?,
            Outcome::Failed(exc) => visit.call(exc)?,
            _ => {}
        }
        Ok(())
    }

    fn __clear__(&self, py: Python<'_>) {
        if let Ok(mut me) = self.state(py) {
            me.event_loop = None;
            me.on_awaited = None;
            me.waiters.clear();
            if !matches!(me.outcome, Outcome::Pending) {
                me.outcome = Outcome::NoAck;
            }
        }
    }
}

// Not tracked by the cycle collector (no __traverse__): a producer keeps thousands of these
// alive at a time, and collections of them cost more than the rest of send(). A future can
// only be in a cycle through its callbacks (which may refer back to it) or its batch's list
// of futures with callbacks, and both are dropped when the batch settles; what is left
// uncollected is the futures of a batch that never settles, a producer dropped without
// stop(). `result()` raises a fresh copy of the error, so no traceback (and the frames in it)
// hangs off the future.
/// What `send()` returns: the record's future, done when its batch is (with its
/// `RecordMetadata`, None with acks=0, or the batch's error). It behaves as an
/// `asyncio.Future` for awaiting, callbacks, cancellation and asyncio's functions
/// (`gather`, `wait`, `wait_for`, `shield`); cancelling it does not unsend the record.
/// Frozen, its own state in a `GilCell`: `gather` calls eight of its methods per future.
/// Freed futures are recycled (see `free_list`).
#[pyclass(module = "ferrokafka._native", frozen)]
pub struct RecordFuture {
    batch: Py<BatchRecords>,
    index: i32,
    timestamp: i64,
    state: GilCell<FutureState>,
}

static FUTURES: FreeList = FreeList::new(1024);

impl FreeListed for RecordFuture {
    fn free_list() -> &'static FreeList {
        &FUTURES
    }
}

/// A `RecordFuture`'s own state.
struct FutureState {
    /// Some(message) once cancelled.
    cancelled: Option<Option<Py<PyAny>>>,
    callbacks: Vec<(Py<PyAny>, Option<Py<PyAny>>)>,
    /// In its batch's waiters already.
    registered: bool,
    /// This future's copy of its batch's error (each future raises its own).
    exception: Option<Py<PyAny>>,
    /// `_asyncio_future_blocking`.
    blocking: bool,
}

/// What a future's batch says of it now.
enum Settled {
    Pending,
    Failed(Py<PyAny>),
    Other,
}

impl RecordFuture {
    fn state<'a>(&'a self, py: Python<'_>) -> PyResult<RefMut<'a, FutureState>> {
        self.state.borrow_mut(py)
    }

    fn batch_state<'a>(&'a self, py: Python<'_>) -> PyResult<RefMut<'a, Batch>> {
        self.batch.get().state(py)
    }

    fn settled(&self, py: Python<'_>) -> PyResult<Settled> {
        Ok(match &self.batch_state(py)?.outcome {
            Outcome::Pending => Settled::Pending,
            Outcome::Failed(exc) => Settled::Failed(exc.clone_ref(py)),
            _ => Settled::Other,
        })
    }

    fn batch_pending(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(matches!(self.batch_state(py)?.outcome, Outcome::Pending))
    }

    fn is_done(&self, py: Python<'_>, me: &FutureState) -> PyResult<bool> {
        Ok(me.cancelled.is_some() || !self.batch_pending(py)?)
    }

    fn event_loop(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.batch_state(py)?
            .event_loop
            .as_ref()
            .map(|l| l.clone_ref(py))
            .ok_or_else(|| PyRuntimeError::new_err("RecordFuture: its batch has no event loop"))
    }

    fn cancelled_error(py: Python<'_>, me: &FutureState) -> PyResult<PyErr> {
        let cls = import(py, &CANCELLED_ERROR, "asyncio", "CancelledError")?;
        let exc = match &me.cancelled {
            Some(Some(msg)) => cls.call1((msg.clone_ref(py),))?,
            _ => cls.call0()?,
        };
        Ok(PyErr::from_value(exc))
    }

    fn invalid_state(py: Python<'_>, message: &str) -> PyResult<PyErr> {
        let cls = import(py, &INVALID_STATE_ERROR, "asyncio", "InvalidStateError")?;
        Ok(PyErr::from_value(cls.call1((message,))?))
    }

    fn metadata(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let batch = self.batch_state(py)?;
        let Outcome::Done {
            tp,
            base_offset,
            log_append_time,
            log_start_offset,
        } = &batch.outcome
        else {
            return Ok(py.None());
        };
        let tp = tp.bind(py).clone();
        let (base_offset, log_append_time, log_start_offset) =
            (*base_offset, *log_append_time, *log_start_offset);
        drop(batch);
        let (timestamp, timestamp_type) = if log_append_time == -1 {
            (self.timestamp, 0i64)
        } else {
            (log_append_time, 1i64)
        };
        // An offset past i64::MAX does not exist: unknown, as for a batch without offsets.
        let offset = if base_offset >= 0 {
            base_offset.checked_add(i64::from(self.index)).unwrap_or(-1)
        } else {
            -1
        };
        let parts = tp.cast::<PyTuple>()?;
        record_metadata(
            py,
            [
                parts.get_item(0)?,
                parts.get_item(1)?,
                tp.clone(),
                offset.into_pyobject(py)?.into_any(),
                timestamp.into_pyobject(py)?.into_any(),
                timestamp_type.into_pyobject(py)?.into_any(),
                log_start_offset.into_pyobject(py)?.into_any(),
            ],
        )
    }

    /// `result()`: the record's `RecordMetadata`, or the error it raises.
    fn outcome(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        {
            let me = self.state(py)?;
            if me.cancelled.is_some() {
                return Err(Self::cancelled_error(py, &me)?);
            }
        }
        match self.settled(py)? {
            Settled::Pending => Err(Self::invalid_state(py, "Result is not set.")?),
            Settled::Failed(exc) => {
                let copy = import(py, &COPY, "copy", "copy")?.call1((exc,))?;
                Err(PyErr::from_value(copy))
            }
            Settled::Other => self.metadata(py),
        }
    }

    /// Run (and forget) this future's callbacks now, each in its context if it has one; an
    /// exception from one goes to the loop's exception handler, as asyncio's do.
    fn run_callbacks(slf: &Bound<'_, Self>, event_loop: Option<&Py<PyAny>>) -> PyResult<()> {
        let py = slf.py();
        let callbacks = {
            let mut me = slf.get().state(py)?;
            me.registered = false; // taken out of its batch's waiters
            std::mem::take(&mut me.callbacks)
        };
        for (callback, context) in callbacks {
            let outcome = match &context {
                Some(ctx) => ctx.bind(py).call_method1("run", (&callback, slf)),
                None => callback.bind(py).call1((slf,)),
            };
            if let Err(err) = outcome {
                if !err.is_instance_of::<pyo3::exceptions::PyException>(py) {
                    return Err(err); // KeyboardInterrupt, SystemExit: as asyncio's loop does
                }
                match event_loop {
                    Some(event_loop) => {
                        let context = PyDict::new(py);
                        context.set_item(
                            "message",
                            format!("Exception in callback {}", callback.bind(py).repr()?),
                        )?;
                        context.set_item("exception", err.value(py))?;
                        context.set_item("future", slf)?;
                        event_loop
                            .bind(py)
                            .call_method1("call_exception_handler", (context,))?;
                    }
                    None => err.write_unraisable(py, Some(slf.as_any())),
                }
            }
        }
        Ok(())
    }
}

#[pymethods]
impl RecordFuture {
    fn done(&self, py: Python<'_>) -> PyResult<bool> {
        let me = self.state(py)?;
        self.is_done(py, &me)
    }

    fn cancelled(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.state(py)?.cancelled.is_some())
    }

    /// The record's `RecordMetadata` (None with acks=0); raises the batch's error,
    /// `CancelledError` if cancelled, `InvalidStateError` while pending.
    fn result(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.outcome(py)
    }

    /// The batch's error, None if the record was delivered.
    fn exception(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        {
            let me = self.state(py)?;
            if me.cancelled.is_some() {
                return Err(Self::cancelled_error(py, &me)?);
            }
            if let Some(own) = &me.exception {
                return Ok(Some(own.clone_ref(py)));
            }
        }
        match self.settled(py)? {
            Settled::Pending => Err(Self::invalid_state(py, "Exception is not set.")?),
            Settled::Failed(exc) => {
                // This future's own copy, made once (copying runs Python code: no borrow
                // is held meanwhile).
                let own = import(py, &COPY, "copy", "copy")?.call1((exc,))?.unbind();
                let mut me = self.state(py)?;
                let own = me.exception.get_or_insert(own).clone_ref(py);
                Ok(Some(own))
            }
            Settled::Other => Ok(None),
        }
    }

    /// Call `fn(future)` once the future is done (on the next loop turn if it is already).
    #[pyo3(signature = (r#fn, *, context = None))]
    fn add_done_callback(
        slf: &Bound<'_, Self>,
        r#fn: Py<PyAny>,
        context: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let py = slf.py();
        let this = slf.get();
        let mut me = this.state(py)?;
        let cancelled = me.cancelled.is_some();
        let pending = this.batch_pending(py)?;
        if !cancelled && !pending {
            // Settled already (a gather or a callback after the broker answered): the batch's
            // one loop callback runs it with the others registered late, where call_soon per
            // future would cost a handle each.
            me.callbacks.push((r#fn, context));
            let first = !me.registered;
            me.registered = true;
            drop(me);
            let batch = this.batch.bind(py);
            if first {
                batch.get().state(py)?.waiters.push(slf.clone().unbind());
            }
            return BatchRecords::schedule_callbacks(batch);
        }
        if cancelled {
            drop(me);
            let event_loop = this.event_loop(py)?;
            let kwargs = PyDict::new(py);
            kwargs.set_item("context", context)?;
            event_loop
                .bind(py)
                .call_method("call_soon", (r#fn, slf), Some(&kwargs))?;
            return Ok(());
        }
        me.callbacks.push((r#fn, context));
        if !me.registered {
            me.registered = true;
            drop(me);
            let on_awaited = {
                let mut batch = this.batch_state(py)?;
                batch.waiters.push(slf.clone().unbind());
                match &batch.on_awaited {
                    Some(hook) if batch.waiters.len() == 1 => Some(hook.clone_ref(py)),
                    _ => None,
                }
            };
            if let Some(hook) = on_awaited {
                hook.call0(py)?;
            }
        }
        Ok(())
    }

    /// Remove every registration of `fn`; how many there were.
    fn remove_done_callback(&self, py: Python<'_>, r#fn: &Bound<'_, PyAny>) -> PyResult<usize> {
        // Comparing runs Python code (`__eq__`): the callbacks are taken out meanwhile, and
        // put back (those kept first, then any added meanwhile) whatever the comparisons do.
        let callbacks = std::mem::take(&mut self.state(py)?.callbacks);
        let mut kept = Vec::with_capacity(callbacks.len());
        let mut removed = 0;
        let mut failed = None;
        for (callback, context) in callbacks {
            if failed.is_none() {
                match callback.bind(py).eq(r#fn) {
                    Ok(true) => {
                        removed += 1;
                        continue;
                    }
                    Ok(false) => {}
                    Err(err) => failed = Some(err),
                }
            }
            kept.push((callback, context));
        }
        let mut me = self.state(py)?;
        kept.append(&mut me.callbacks);
        me.callbacks = kept;
        drop(me);
        match failed {
            Some(err) => Err(err),
            None => Ok(removed),
        }
    }

    /// Cancel the future (the record is still sent); False if it is done already.
    #[pyo3(signature = (msg = None))]
    fn cancel(slf: &Bound<'_, Self>, msg: Option<Py<PyAny>>) -> PyResult<bool> {
        let py = slf.py();
        let this = slf.get();
        let mut me = this.state(py)?;
        if this.is_done(py, &me)? {
            return Ok(false);
        }
        me.cancelled = Some(msg);
        let callbacks = std::mem::take(&mut me.callbacks);
        drop(me);
        let event_loop = this.event_loop(py)?;
        for (callback, context) in callbacks {
            let kwargs = PyDict::new(py);
            kwargs.set_item("context", context)?;
            event_loop
                .bind(py)
                .call_method("call_soon", (callback, slf), Some(&kwargs))?;
        }
        Ok(true)
    }

    fn get_loop(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.event_loop(py)
    }

    /// asyncio's `gather` asks a cancelled future for this (as of `asyncio.Future`).
    fn _make_cancelled_error(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let me = self.state(py)?;
        Ok(Self::cancelled_error(py, &me)?.into_value(py).into_any())
    }

    /// The message given to `cancel()` (None when none was, or when not cancelled).
    #[getter]
    fn _cancel_message(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        Ok(match &self.state(py)?.cancelled {
            Some(Some(msg)) => Some(msg.clone_ref(py)),
            _ => None,
        })
    }

    #[getter]
    fn _loop(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.event_loop(py)
    }

    #[getter(_asyncio_future_blocking)]
    fn get_blocking(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.state(py)?.blocking)
    }

    #[setter(_asyncio_future_blocking)]
    fn set_blocking(&self, py: Python<'_>, value: bool) -> PyResult<()> {
        self.state(py)?.blocking = value;
        Ok(())
    }

    fn __await__(slf: Py<Self>) -> RecordFutureIter {
        RecordFutureIter {
            future: slf,
            yielded: false,
        }
    }

    fn __iter__(slf: Py<Self>) -> RecordFutureIter {
        RecordFutureIter {
            future: slf,
            yielded: false,
        }
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let state = if self.state(py)?.cancelled.is_some() {
            "cancelled"
        } else {
            match self.settled(py)? {
                Settled::Pending => "pending",
                Settled::Failed(_) => "failed",
                Settled::Other => "finished",
            }
        };
        Ok(format!("<RecordFuture {state}>"))
    }
}

/// `await future`: yields the future to the task (which waits for it) while pending, then
/// returns its result.
#[pyclass(module = "ferrokafka._native")]
pub struct RecordFutureIter {
    future: Py<RecordFuture>,
    yielded: bool,
}

#[pymethods]
impl RecordFutureIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let future = self.future.get();
        let pending = {
            let mut me = future.state(py)?;
            let pending = !future.is_done(py, &me)?;
            if pending && !self.yielded {
                me.blocking = true;
            }
            pending
        };
        if pending {
            if self.yielded {
                return Err(PyRuntimeError::new_err("await wasn't used with future"));
            }
            self.yielded = true;
            return Ok(self.future.clone_ref(py).into_any());
        }
        let result = future.outcome(py)?;
        Err(PyStopIteration::new_err((result,)))
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.future)
    }
}

/// An upper bound of a record's size in an uncompressed v2 batch, its length prefix included
/// (what the producer checks against `max_request_size` before the record has a batch):
/// `headers` are `(str, bytes | None)` pairs.
#[pyfunction]
pub fn record_size_bound(
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: Vec<(Bound<'_, PyString>, Option<Bound<'_, PyBytes>>)>,
) -> PyResult<usize> {
    let mut lens = Vec::with_capacity(headers.len());
    for (k, v) in &headers {
        lens.push((k.to_str()?.len(), v.as_ref().map(|v| v.as_bytes().len())));
    }
    Ok(crate::records::sizes::record_bound(
        key.map(<[u8]>::len),
        value.map(<[u8]>::len),
        lens.into_iter(),
    ))
}
