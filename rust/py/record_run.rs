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

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::gc::PyVisit;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple, PyType};
use pyo3::PyTraverseError;

use super::gil_cell::GilCell;
use super::records::ConsumerRecord;
use super::shortcut_coroutine::{self, reused, Phase, Shortcut, ShortcutClass};
use crate::records::position::{bytes_of_records, RunCursor};

/// A counter the consumer's subscription state moves on every change that could alter which
/// records may be handed out (assignment, pause, resume, seek, reset, revocation): a run made
/// before a change hands out nothing after it. Read from here without a Python attribute
/// lookup, which would cost more than the rest of a record's step. Frozen, with an atomic
/// value: reading it per record is a plain load, where a PyO3 borrow would be two locked
/// instructions.
#[pyclass(module = "ferrokafka._native", frozen)]
pub struct Generation {
    value: AtomicU64,
}

impl Generation {
    fn value(&self) -> u64 {
        self.value.load(Ordering::Relaxed)
    }
}

#[pymethods]
impl Generation {
    #[new]
    fn new() -> Self {
        Generation {
            value: AtomicU64::new(0),
        }
    }

    fn bump(&self) {
        self.value.fetch_add(1, Ordering::Relaxed);
    }
}

/// When the application last took a record through the per-record path, and whether the group
/// member wants its own `raise_if_failed()` and `polled()` called instead (it sets `attention`
/// while it has a failure to raise or something to do when the application polls again, as
/// after a poll timeout). Per record, reading the monotonic clock here costs less than the
/// two Python calls it stands for. `last` is on `time.monotonic()`'s scale: the clock is
/// anchored to the value given when it was made. Frozen, with atomic fields, for the reason
/// `Generation` is.
#[pyclass(module = "ferrokafka._native", frozen)]
pub struct PollClock {
    origin: f64,
    start: std::time::Instant,
    /// `last`'s bits (`f64::to_bits`).
    last: AtomicU64,
    attention: AtomicBool,
}

impl PollClock {
    fn touch(&self) {
        let now = self.origin + self.start.elapsed().as_secs_f64();
        self.last.store(now.to_bits(), Ordering::Relaxed);
    }

    fn wants_attention(&self) -> bool {
        self.attention.load(Ordering::Relaxed)
    }
}

#[pymethods]
impl PollClock {
    /// `now`: `time.monotonic()` now.
    #[new]
    fn new(now: f64) -> Self {
        PollClock {
            origin: now,
            start: std::time::Instant::now(),
            last: AtomicU64::new(now.to_bits()),
            attention: AtomicBool::new(false),
        }
    }

    /// When the application last polled through the per-record path (`time.monotonic()`).
    #[getter]
    fn last(&self) -> f64 {
        f64::from_bits(self.last.load(Ordering::Relaxed))
    }

    #[getter]
    fn attention(&self) -> bool {
        self.wants_attention()
    }

    #[setter]
    fn set_attention(&self, value: bool) {
        self.attention.store(value, Ordering::Relaxed);
    }
}

/// A group member and its poll clock (`member.poll_clock`).
struct Member {
    member: Py<PyAny>,
    clock: Py<PollClock>,
}

impl Member {
    fn of(py: Python<'_>, member: Option<Py<PyAny>>) -> PyResult<Option<Member>> {
        let Some(member) = member else {
            return Ok(None);
        };
        let clock = member
            .bind(py)
            .getattr(intern!(py, "poll_clock"))?
            .cast_into::<PollClock>()?
            .unbind();
        Ok(Some(Member { member, clock }))
    }

    fn clone_ref(&self, py: Python<'_>) -> Member {
        Member {
            member: self.member.clone_ref(py),
            clock: self.clock.clone_ref(py),
        }
    }

    fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.member)?;
        visit.call(&self.clock)
    }
}

/// The next records of one fetched response (all but its last, which is left to the full
/// poll: the position after a whole response is its own rule; see `RunCursor`), each moving the partition's
/// position past it, while nothing changed since the run was made: the subscription state's
/// `Generation` is where it was, and the partition's position is the one this run left.
///
/// When it ends (exhausted, invalidated or closed) it writes how far it got to the response
/// (`taken`) and reports what it handed out (`on_consumed(records, bytes)`), once.
#[pyclass(module = "ferrokafka._native", frozen)]
pub struct RecordRun {
    run: GilCell<Run>,
}

/// A `RecordRun`'s state.
struct Run {
    buf: Py<PyAny>,
    items: Py<PyList>,
    state: Py<PyAny>,
    generation: Py<Generation>,
    on_consumed: Option<Py<PyAny>>,
    /// The position object this run last saw or left (compared by identity: the same object
    /// is the same position), None once the run has ended.
    position: Option<Py<PyAny>>,
    since: u64,
    /// Which records the run hands out (all but the response's last), and how many it has.
    cursor: RunCursor,
    raw_len: usize,
    /// How `state.position` is read and written per record.
    slot: PositionSlot,
}

/// The partition state's `position` attribute, as the run reads and writes it per record.
/// When it is a slot of the state's class (a `__slots__` member, on a class with Python's
/// own attribute lookup), its descriptor is called directly: what `getattr` and `setattr`
/// end up doing, without looking the name up each time. Otherwise, `getattr` and `setattr`.
enum PositionSlot {
    Member {
        descr: Py<PyAny>,
        /// The class it was found on: used only while the state's class is this one.
        ty: Py<PyType>,
    },
    Attribute,
}

impl PositionSlot {
    fn of(state: &Bound<'_, PyAny>) -> PositionSlot {
        let ty = state.get_type();
        let tp = ty.as_type_ptr();
        // SAFETY: reading two slots of a live type object.
        let generic = unsafe {
            (*tp).tp_getattro.map(|f| f as *const () as usize)
                == Some(ffi::PyObject_GenericGetAttr as *const () as usize)
                && (*tp).tp_setattro.map(|f| f as *const () as usize)
                    == Some(ffi::PyObject_GenericSetAttr as *const () as usize)
        };
        let Ok(descr) = ty.getattr(intern!(state.py(), "position")) else {
            return PositionSlot::Attribute;
        };
        // SAFETY: comparing a live object's type with the member descriptors' type.
        let member = unsafe { ffi::Py_TYPE(descr.as_ptr()) == &raw mut ffi::PyMemberDescr_Type };
        if generic && member {
            PositionSlot::Member {
                descr: descr.unbind(),
                ty: ty.unbind(),
            }
        } else {
            PositionSlot::Attribute
        }
    }

    /// The member descriptor, when it applies to `state` now.
    fn member<'a>(&'a self, state: &Bound<'_, PyAny>) -> Option<&'a Py<PyAny>> {
        match self {
            PositionSlot::Member { descr, ty } if state.get_type().is(ty) => Some(descr),
            _ => None,
        }
    }

    fn get<'py>(&self, state: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = state.py();
        let Some(descr) = self.member(state) else {
            return state.getattr(intern!(py, "position"));
        };
        // SAFETY: a member descriptor's type has `tp_descr_get`; it is called with live
        // objects (the descriptor, an instance of the class it belongs to, that class) and
        // returns a new reference or null with an exception set.
        unsafe {
            let get = (*ffi::Py_TYPE(descr.as_ptr()))
                .tp_descr_get
                .ok_or_else(|| PyRuntimeError::new_err("member descriptor without __get__"))?;
            Bound::from_owned_ptr_or_err(
                py,
                get(
                    descr.as_ptr(),
                    state.as_ptr(),
                    ffi::Py_TYPE(state.as_ptr()).cast(),
                ),
            )
        }
    }

    fn set(&self, state: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = state.py();
        let Some(descr) = self.member(state) else {
            return state.setattr(intern!(py, "position"), value);
        };
        // SAFETY: as in `get`, with `tp_descr_set`, which returns 0, or -1 with an exception
        // set; `value` is borrowed (the slot takes its own reference).
        let status = unsafe {
            let set = (*ffi::Py_TYPE(descr.as_ptr()))
                .tp_descr_set
                .ok_or_else(|| PyRuntimeError::new_err("member descriptor without __set__"))?;
            set(descr.as_ptr(), state.as_ptr(), value.as_ptr())
        };
        if status == 0 {
            Ok(())
        } else {
            Err(PyErr::fetch(py))
        }
    }

    fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let PositionSlot::Member { descr, ty } = self {
            visit.call(descr)?;
            visit.call(ty)?;
        }
        Ok(())
    }
}

impl Run {
    fn ended(&self) -> bool {
        self.position.is_none()
    }

    /// The next record, or None (and the run ends) when there is none to hand out now.
    fn next_record(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let Some(position) = &self.position else {
            return Ok(None);
        };
        let state = self.state.bind(py);
        let index = match self.cursor.next() {
            Some(i)
                if self.generation.get().value() == self.since
                    && self.slot.get(state)?.is(position) =>
            {
                i
            }
            _ => {
                self.end(py)?;
                return Ok(None);
            }
        };
        let record = self.items.bind(py).get_item(index)?;
        let offset = match record.cast::<ConsumerRecord>() {
            Ok(r) => ConsumerRecord::offset_of(r),
            Err(_) => record.getattr(intern!(py, "offset"))?.extract()?,
        };
        // As the full poll moves it (a Python int: no overflow to report; an i64 makes it
        // directly, where an i128 goes through a byte array).
        let next = match offset.checked_add(1) {
            Some(next) => next.into_pyobject(py)?.into_any(),
            None => (i128::from(offset) + 1).into_pyobject(py)?.into_any(),
        };
        self.slot.set(state, &next)?;
        self.cursor.advance();
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
            .setattr(intern!(py, "taken"), self.cursor.taken())?;
        let handed = self.cursor.handed();
        if handed > 0 {
            if let Some(report) = &self.on_consumed {
                let records = self.items.bind(py).len();
                let bytes = bytes_of_records(self.raw_len, handed, records);
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
        let since = generation.get().value();
        let cursor = RunCursor::new(items.len(), taken);
        let slot = PositionSlot::of(&state);
        Ok(RecordRun {
            run: GilCell::new(Run {
                buf: buf.unbind(),
                items: items.unbind(),
                state: state.unbind(),
                generation,
                on_consumed,
                // No position: nothing to hand out.
                position: (!position.is_none()).then(|| position.unbind()),
                since,
                cursor,
                raw_len,
                slot,
            }),
        })
    }

    /// The next record, None when the run has none to hand out (it has then ended).
    fn take(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.run.borrow_mut(py)?.next_record(py)
    }

    /// End the run now (nothing more is handed out by it).
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.run.borrow_mut(py)?.end(py)
    }

    /// Whether the run has ended.
    #[getter]
    fn ended(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.run.borrow_mut(py)?.ended())
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        let Some(run) = self.run.try_borrow_in_gc() else {
            return Ok(()); // borrowed: in the middle of a call, which holds what it uses
        };
        visit.call(&run.buf)?;
        visit.call(&run.items)?;
        visit.call(&run.state)?;
        visit.call(&run.generation)?;
        visit.call(&run.on_consumed)?;
        visit.call(&run.position)?;
        run.slot.traverse(&visit)
    }
}

/// What `async for record in consumer` iterates: each `__anext__` is a [`Step`] over the
/// consumer's fetch buffer (`owner._buffer`, looked up until the consumer has one).
#[pyclass(module = "ferrokafka._native", frozen)]
pub struct RecordStream {
    stream: GilCell<Stream>,
}

/// A `RecordStream`'s state.
struct Stream {
    owner: Py<PyAny>,
    buffer: Option<Py<PyAny>>,
    member: Option<Member>,
    slow: Py<PyAny>,
    /// The last step handed out: made ready again for the next `__anext__` when nothing else
    /// holds it (the loop dropped it once awaited), saving a step's allocation per record.
    spare: Option<Py<Step>>,
}

#[pymethods]
impl RecordStream {
    /// `owner`: the consumer (its `_buffer`); `slow`: makes the coroutine of a step through
    /// the whole poll; `member`: the group member to tell of each poll (None without a group).
    #[new]
    #[pyo3(signature = (owner, slow, member = None))]
    fn new(
        py: Python<'_>,
        owner: Py<PyAny>,
        slow: Py<PyAny>,
        member: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        Ok(RecordStream {
            stream: GilCell::new(Stream {
                owner,
                buffer: None,
                member: Member::of(py, member)?,
                slow,
                spare: None,
            }),
        })
    }

    fn __aiter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __anext__(&self, py: Python<'_>) -> PyResult<Py<Step>> {
        self.next_step(py)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        let Some(stream) = self.stream.try_borrow_in_gc() else {
            return Ok(()); // borrowed: in the middle of a call, which holds what it uses
        };
        visit.call(&stream.owner)?;
        visit.call(&stream.buffer)?;
        if let Some(member) = &stream.member {
            member.traverse(&visit)?;
        }
        visit.call(&stream.slow)?;
        visit.call(&stream.spare)
    }
}

impl RecordStream {
    /// The next step: the last one made ready again when nothing else holds it.
    pub(super) fn next_step(&self, py: Python<'_>) -> PyResult<Py<Step>> {
        let mut stream = self.stream.borrow_mut(py)?;
        if stream.buffer.is_none() {
            let buffer = stream.owner.bind(py).getattr(intern!(py, "_buffer"))?;
            if !buffer.is_none() {
                stream.buffer = Some(buffer.unbind()); // a consumer's buffer is made once
            }
        }
        if let Some(spare) = &stream.spare {
            // SAFETY: reading the reference count of a live object.
            let alone = unsafe { ffi::Py_REFCNT(spare.as_ptr()) } == 1;
            // Only this stream holds it: nobody can see it change. A step left running the
            // whole poll (dropped mid-way) is not reused: its coroutine goes with it.
            if alone {
                if let Ok(mut step) = spare.get().state.borrow_mut(py) {
                    if !matches!(step.phase, Phase::Slow(_)) {
                        if step.buffer.is_none() {
                            step.buffer = stream.buffer.as_ref().map(|b| b.clone_ref(py));
                        }
                        if step.slow.is_none() {
                            step.slow = Some(stream.slow.clone_ref(py));
                        }
                        step.phase = Phase::Fresh;
                        return Ok(spare.clone_ref(py));
                    }
                }
            }
        }
        let step = Py::new(
            py,
            Step::fresh(
                stream.buffer.as_ref().map(|b| b.clone_ref(py)),
                stream.slow.clone_ref(py),
                stream.member.as_ref().map(|m| m.clone_ref(py)),
            ),
        )?;
        stream.spare = Some(step.clone_ref(py));
        Ok(step)
    }
}

/// One record, as a coroutine: when it is first run it takes the next record of the fetch
/// buffer's current run (`buffer.run`) if there is one, and completes with it at once (a group
/// member's failure is raised first, and the member is told its application polled, as
/// `getone()` does); otherwise it runs the coroutine `slow()` (the whole poll path) and
/// completes as that does. Nothing is taken before it runs: a step cancelled or dropped
/// before then costs no record. A record taken at once reaches the awaiting code without a
/// `StopIteration` (see `shortcut_coroutine`).
#[pyclass(module = "ferrokafka._native", frozen, freelist = 64)]
pub struct Step {
    state: GilCell<StepState>,
}

/// A `Step`'s state.
pub(super) struct StepState {
    buffer: Option<Py<PyAny>>,
    /// The buffer's run as last seen. The buffer ends a run before it replaces it, so while
    /// this one has not ended it is the buffer's: the buffer is asked again only then.
    run: Option<Py<RecordRun>>,
    slow: Option<Py<PyAny>>,
    member: Option<Member>,
    phase: Phase,
}

impl Step {
    fn fresh(buffer: Option<Py<PyAny>>, slow: Py<PyAny>, member: Option<Member>) -> Self {
        Step {
            state: GilCell::new(StepState {
                buffer,
                run: None,
                slow: Some(slow),
                member,
                phase: Phase::Fresh,
            }),
        }
    }
}

impl StepState {
    /// The buffer's run, if it has one that has not ended (its object: the run is borrowed
    /// from it once per record).
    fn live_run<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, RecordRun>>> {
        if let Some(run) = &self.run {
            let run = run.bind(py);
            if !run.get().run.borrow_mut(py)?.ended() {
                return Ok(Some(run.clone()));
            }
        }
        self.run = None;
        let Some(buffer) = &self.buffer else {
            return Ok(None);
        };
        let Ok(run) = buffer
            .bind(py)
            .getattr(intern!(py, "run"))?
            .cast_into::<RecordRun>()
        else {
            return Ok(None);
        };
        self.run = Some(run.clone().unbind());
        let ended = run.get().run.borrow_mut(py)?.ended();
        Ok((!ended).then_some(run))
    }

    /// The next record of the buffer's run, if it has one now.
    fn take_ready(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let Some(mut run) = self.live_run(py)? else {
            return Ok(None);
        };
        // The member's own calls only when it asked for them; otherwise the clock alone.
        let attention = self
            .member
            .as_ref()
            .is_some_and(|m| m.clock.get().wants_attention());
        if let (true, Some(m)) = (attention, &self.member) {
            // The member's code may end the run: it is looked up again after.
            m.member
                .bind(py)
                .call_method0(intern!(py, "raise_if_failed"))?;
            match self.live_run(py)? {
                Some(again) => run = again,
                None => return Ok(None),
            }
        }
        let record = run.get().run.borrow_mut(py)?.next_record(py)?;
        if let (true, Some(m)) = (record.is_some(), &self.member) {
            m.clock.get().touch();
            if attention {
                m.member.bind(py).call_method0(intern!(py, "polled"))?;
            }
        }
        Ok(record)
    }
}

impl ShortcutClass for Step {
    type State = StepState;

    fn cell(&self) -> &GilCell<StepState> {
        &self.state
    }
}

impl Shortcut for StepState {
    fn phase(&mut self) -> &mut Phase {
        &mut self.phase
    }

    fn shortcut(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.take_ready(py)
    }

    fn slow(&mut self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let slow = self.slow.take().ok_or_else(reused)?;
        slow.call0(py)
    }
}

#[pymethods]
impl Step {
    /// A step over `buffer` (None: no run, straight to `slow()`), going through `slow()` when
    /// the buffer's run has no record for it; `member` as for `RecordStream`.
    #[new]
    #[pyo3(signature = (buffer, slow, member = None))]
    fn new(
        py: Python<'_>,
        buffer: Option<Py<PyAny>>,
        slow: Py<PyAny>,
        member: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        Ok(Step::fresh(buffer, slow, Member::of(py, member)?))
    }

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

    /// Raise an exception inside the step (`throw(exc)`, or the older `throw(type, value,
    /// traceback)`): into the whole poll's coroutine when it runs one (a cancellation ends its
    /// wait), passed on in the form it came in (Python 3.12 deprecates the three-argument
    /// one); else here, where it ends the step before anything was taken.
    #[pyo3(signature = (*args))]
    fn throw(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        shortcut_coroutine::throw(py, &mut self.running(py)?.phase, args)
    }

    /// End the step (the whole poll's coroutine, if it runs one, is closed).
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        shortcut_coroutine::close(py, &mut self.running(py)?.phase)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        let Some(state) = self.state.try_borrow_in_gc() else {
            return Ok(()); // borrowed: in the middle of a call, which holds what it uses
        };
        visit.call(&state.buffer)?;
        visit.call(&state.run)?;
        visit.call(&state.slow)?;
        if let Some(member) = &state.member {
            member.traverse(&visit)?;
        }
        shortcut_coroutine::traverse(&state.phase, &visit)
    }

    fn __clear__(&self, py: Python<'_>) {
        if let Ok(mut state) = self.state.borrow_mut(py) {
            state.buffer = None;
            state.run = None;
            state.slow = None;
            state.member = None;
            state.phase = Phase::Done;
        }
    }
}
