//! Records reach Python as `ConsumerRecord` objects built here, one native call per partition:
//! no per-record Python frame is entered unless the user asked for a deserializer.

use std::ffi::{c_int, CStr};

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString, PyTuple, PyType};

use super::errors;
use super::free_list::{FreeList, FreeListed};
use crate::records::acquired::AcquiredRange;
use crate::records::batch::DEFAULT_MAX_DECOMPRESSED_BATCH;
use crate::records::position::StopAt;
use crate::records::{decode_records_taking, DecodeOptions, DecodeSummary, DecodedRecords, Slot};

/// A record read from Kafka (aiokafka's `ConsumerRecord` fields, in its order).
///
/// Every field is read and written through CPython member descriptors (see
/// [`install_members`]): `record.value` is a pointer load in the interpreter, as for a class with
/// `__slots__`, not a call into Rust; `record.offset` makes its int only when it is read. A
/// deleted object field is null (`None` here) and reads raise AttributeError, as a dataclass
/// field does after `del`.
/// Freed records are recycled (see `free_list`): a consumer loop allocates and drops them at
/// speed.
#[pyclass(module = "ferrokafka._native")]
pub struct ConsumerRecord {
    topic: Option<Py<PyAny>>,
    partition: i64,
    offset: i64,
    timestamp: i64,
    timestamp_type: i64,
    key: Option<Py<PyAny>>,
    value: Option<Py<PyAny>>,
    checksum: Option<Py<PyAny>>,
    serialized_key_size: i64,
    serialized_value_size: i64,
    headers: Option<Py<PyAny>>,
    /// How many times the record has been handed to a share-group member, this time included
    /// (KIP-932); 0 for a record read outside a share group (read back as None).
    delivery_count: i64,
}

static RECORDS: FreeList = FreeList::new(4096);

impl FreeListed for ConsumerRecord {
    fn free_list() -> &'static FreeList {
        &RECORDS
    }
}

const FIELDS: [&str; 11] = [
    "topic",
    "partition",
    "offset",
    "timestamp",
    "timestamp_type",
    "key",
    "value",
    "checksum",
    "serialized_key_size",
    "serialized_value_size",
    "headers",
];

#[pymethods]
impl ConsumerRecord {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (topic, partition, offset, timestamp, timestamp_type, key, value, checksum, serialized_key_size, serialized_value_size, headers, *, delivery_count = None))]
    fn new(
        topic: Py<PyAny>,
        partition: i64,
        offset: i64,
        timestamp: i64,
        timestamp_type: i64,
        key: Py<PyAny>,
        value: Py<PyAny>,
        checksum: Py<PyAny>,
        serialized_key_size: i64,
        serialized_value_size: i64,
        headers: Py<PyAny>,
        delivery_count: Option<u16>,
    ) -> PyResult<Self> {
        let delivery_count = checked_delivery_count(delivery_count)?;
        Ok(ConsumerRecord {
            topic: Some(topic),
            partition,
            offset,
            timestamp,
            timestamp_type,
            key: Some(key),
            value: Some(value),
            checksum: Some(checksum),
            serialized_key_size,
            serialized_value_size,
            headers: Some(headers),
            delivery_count,
        })
    }

    /// The record's delivery count in a share group (KIP-932): 1 the first time a member is
    /// handed it, one more for each redelivery; None outside a share group.
    #[getter]
    fn delivery_count(&self) -> Option<i64> {
        (self.delivery_count > 0).then_some(self.delivery_count)
    }

    #[setter]
    fn set_delivery_count(&mut self, value: Option<u16>) -> PyResult<()> {
        self.delivery_count = checked_delivery_count(value)?;
        Ok(())
    }

    /// `ConsumerRecord[K, V]` works as with aiokafka's generic dataclass.
    #[classmethod]
    fn __class_getitem__<'py>(
        cls: &Bound<'py, PyType>,
        item: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = cls.py();
        py.import("types")?
            .getattr("GenericAlias")?
            .call1((cls, item))
    }

    fn _astuple<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let items: Vec<Bound<'py, PyAny>> = FIELDS
            .iter()
            .map(|f| slf.getattr(*f))
            .collect::<PyResult<_>>()?;
        PyTuple::new(slf.py(), items)
    }

    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(other) = other.cast::<ConsumerRecord>() else {
            return Ok(false);
        };
        Self::_astuple(slf)?.eq(Self::_astuple(other)?)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let mut parts = Vec::with_capacity(FIELDS.len());
        for f in FIELDS {
            parts.push(format!("{f}={}", slf.getattr(f)?.repr()?));
        }
        Ok(format!("ConsumerRecord({})", parts.join(", ")))
    }
}

/// A delivery count as stored: None is 0; a given count must be at least 1.
fn checked_delivery_count(value: Option<u16>) -> PyResult<i64> {
    match value {
        None => Ok(0),
        Some(0) => Err(pyo3::exceptions::PyValueError::new_err(
            "delivery_count must be at least 1 (or None)",
        )),
        Some(n) => Ok(i64::from(n)),
    }
}

impl ConsumerRecord {
    /// `record.offset`, read as its member descriptor reads it: a load at the field's place in
    /// the object, without the borrow flag's two locked instructions (the consumer's
    /// per-record path reads it for every record it hands out).
    pub(crate) fn offset_of(record: &Bound<'_, ConsumerRecord>) -> i64 {
        match OFFSET_AT.get() {
            // SAFETY: `record` is a live `ConsumerRecord` (its type is checked by the cast that
            // made the `Bound`), `at` is where its `offset` field sits in every such object
            // (measured on a live one by `install_members`), and the GIL is held: the field's
            // only writers are its member descriptor and Rust code holding a mutable borrow,
            // neither of which runs now.
            Some(&at) => unsafe {
                std::ptr::read((record.as_ptr() as *const u8).add(at).cast::<i64>())
            },
            None => record.borrow().offset,
        }
    }
}

/// Where the `offset` field sits in a `ConsumerRecord` object, in bytes from its start.
static OFFSET_AT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

/// Give `ConsumerRecord` one read-write member descriptor per field. The byte offsets are taken
/// from a live instance, so they are whatever PyO3's object layout makes them; each field is an
/// `Option<Py<PyAny>>`, which has the layout of a nullable `PyObject*` (what a member of type
/// `Py_T_OBJECT_EX` is).
pub(crate) fn install_members(py: Python<'_>) -> PyResult<()> {
    let none = || Some(py.None());
    let probe = Bound::new(
        py,
        ConsumerRecord {
            topic: none(),
            partition: 0,
            offset: 0,
            timestamp: 0,
            timestamp_type: 0,
            key: none(),
            value: none(),
            checksum: none(),
            serialized_key_size: 0,
            serialized_value_size: 0,
            headers: none(),
            delivery_count: 0,
        },
    )?;
    let base = probe.as_ptr() as usize;
    let r = probe.borrow();
    let value_offset = (&*r as *const ConsumerRecord as usize) - base;
    let obj = |field: &Option<Py<PyAny>>| {
        let at = field as *const Option<Py<PyAny>> as usize;
        (at - base, ffi::Py_T_OBJECT_EX)
    };
    let long = |field: &i64| ((field as *const i64 as usize) - base, ffi::Py_T_LONGLONG);
    let members: [(&'static CStr, (usize, c_int)); 11] = [
        (c"topic", obj(&r.topic)),
        (c"partition", long(&r.partition)),
        (c"offset", long(&r.offset)),
        (c"timestamp", long(&r.timestamp)),
        (c"timestamp_type", long(&r.timestamp_type)),
        (c"key", obj(&r.key)),
        (c"value", obj(&r.value)),
        (c"checksum", obj(&r.checksum)),
        (c"serialized_key_size", long(&r.serialized_key_size)),
        (c"serialized_value_size", long(&r.serialized_value_size)),
        (c"headers", obj(&r.headers)),
    ];
    let offset_at = long(&r.offset).0;
    drop(r);
    let ty = py.get_type::<ConsumerRecord>();
    for (name, (offset, type_code)) in members {
        // The definition must outlive the type: it is leaked once per field, at import.
        let def: &'static mut ffi::PyMemberDef = Box::leak(Box::new(ffi::PyMemberDef {
            name: name.as_ptr(),
            type_code,
            offset: offset as ffi::Py_ssize_t,
            flags: 0,
            doc: std::ptr::null(),
        }));
        // SAFETY: a valid type object and member definition; the result is a new reference
        // (or null with an exception set, which `from_owned_ptr_or_err` turns into an error).
        let descr = unsafe {
            Bound::from_owned_ptr_or_err(
                py,
                ffi::PyDescr_NewMember(ty.as_ptr().cast::<ffi::PyTypeObject>(), def),
            )?
        };
        ty.setattr(name.to_str().expect("ASCII field name"), descr)?;
    }
    let _ = OFFSET_AT.set(offset_at);
    enable_direct_alloc(py, value_offset)
}

/// Where the Rust value sits in a `ConsumerRecord` object, once [`enable_direct_alloc`] has
/// checked that writing it there makes a working record.
static VALUE_OFFSET: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

/// PyO3 makes each object by calling `object.__new__` with an empty argument tuple, which then
/// calls the type's allocator; a consumer makes millions of records a second, and skipping that
/// detour makes the record decode measurably faster (benches/README.md, *W2 (1 KiB values)*).
/// [`new_record`] calls the allocator itself (the class's freelist, else `PyType_GenericAlloc`,
/// which zero-fills) and moves the value into place; what else PyO3 keeps in the object (the
/// borrow flag) is zero in a fresh object and back at zero in a recycled one. The path is
/// switched on only after a record made by it has read back correctly through PyO3 (borrowed,
/// mutably too) and through the member descriptors; otherwise records are made the ordinary
/// way.
fn enable_direct_alloc(py: Python<'_>, value_offset: usize) -> PyResult<()> {
    let ty = py.get_type::<ConsumerRecord>();
    let marker = PyBytes::new(py, b"ferrokafka-layout-check")
        .into_any()
        .unbind();
    let record = ConsumerRecord {
        topic: Some(py.None()),
        partition: 7,
        offset: 0x0123_4567_89ab,
        timestamp: -5,
        timestamp_type: 1,
        key: Some(py.None()),
        value: Some(marker.clone_ref(py)),
        checksum: Some(py.None()),
        serialized_key_size: -1,
        serialized_value_size: 23,
        headers: Some(py.None()),
        delivery_count: 0,
    };
    // SAFETY: the offset was read off a live instance just now.
    let made = unsafe { alloc_record(py, &ty, value_offset, record)? };
    let ok = match made.cast::<ConsumerRecord>() {
        Ok(rec) => {
            let fields_ok = {
                let r = rec.borrow();
                r.offset == 0x0123_4567_89ab
                    && r.partition == 7
                    && r.serialized_value_size == 23
                    && r.value.as_ref().is_some_and(|v| v.is(&marker))
            };
            fields_ok
                && rec.try_borrow_mut().is_ok()
                && made.getattr("offset")?.extract::<i64>()? == 0x0123_4567_89ab
                && made.getattr("value")?.is(&marker)
                && made.getattr("timestamp")?.extract::<i64>()? == -5
        }
        Err(_) => false,
    };
    if ok {
        let _ = VALUE_OFFSET.set(value_offset);
    }
    Ok(())
}

/// Allocate a `ConsumerRecord` object of type `ty` and move `record` into it.
///
/// # Safety
/// `value_offset` must be where PyO3 keeps the Rust value in a `ConsumerRecord` object.
unsafe fn alloc_record<'py>(
    py: Python<'py>,
    ty: &Bound<'py, PyType>,
    value_offset: usize,
    record: ConsumerRecord,
) -> PyResult<Bound<'py, PyAny>> {
    let tp = ty.as_ptr().cast::<ffi::PyTypeObject>();
    // SAFETY: `tp` is the class's live type object; its allocator returns a new reference to
    // an object of the class's basic size (or null with an exception set).
    let obj = unsafe { ((*tp).tp_alloc.unwrap_or(ffi::PyType_GenericAlloc))(tp, 0) };
    if obj.is_null() {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: the object is the class's size and the value's slot is inside it, suitably
    // aligned (it is where PyO3 puts it); the slot holds no live value (fresh or recycled).
    unsafe {
        std::ptr::write(
            obj.cast::<u8>().add(value_offset).cast::<ConsumerRecord>(),
            record,
        );
        Ok(Bound::from_owned_ptr(py, obj))
    }
}

/// A new `ConsumerRecord` object holding `record` (`ty` is the class).
#[inline]
fn new_record<'py>(
    py: Python<'py>,
    ty: &Bound<'py, PyType>,
    record: ConsumerRecord,
) -> PyResult<Bound<'py, PyAny>> {
    match VALUE_OFFSET.get() {
        // SAFETY: checked by `enable_direct_alloc`.
        Some(&offset) => unsafe { alloc_record(py, ty, offset, record) },
        None => Ok(Bound::new(py, record)?.into_any()),
    }
}

/// Whether records are made by [`new_record`]'s direct path (for the tests).
#[pyfunction]
pub fn _records_direct_alloc() -> bool {
    VALUE_OFFSET.get().is_some()
}

/// One Python int per run of equal values (a batch's CRC): records share the object instead of
/// each allocating its own.
struct IntCache(Option<(i64, Py<PyAny>)>);

impl IntCache {
    fn get(&mut self, py: Python<'_>, v: i64) -> PyResult<Py<PyAny>> {
        if let Some((last, obj)) = &self.0 {
            if *last == v {
                return Ok(obj.clone_ref(py));
            }
        }
        let obj = v.into_pyobject(py)?.into_any().unbind();
        self.0 = Some((v, obj.clone_ref(py)));
        Ok(obj)
    }
}

/// The outcome of decoding one partition's records: `records` is a list of `ConsumerRecord`
/// (`decode_records`) or an `ArrowColumns` (`decode_columns`).
#[pyclass(module = "ferrokafka._native", get_all, frozen)]
pub struct DecodedPartition {
    records: Py<PyAny>,
    next_offset: Option<i64>,
    last_leader_epoch: Option<i32>,
    truncated: bool,
    batches: u64,
    skipped_below_start: u64,
    skipped_control: u64,
    skipped_aborted: u64,
}

impl DecodedPartition {
    pub(crate) fn new(records: Py<PyAny>, d: &DecodedRecords) -> Self {
        DecodedPartition::from_summary(records, &d.summary)
    }

    pub(crate) fn from_summary(records: Py<PyAny>, s: &DecodeSummary) -> Self {
        DecodedPartition {
            records,
            next_offset: s.next_offset,
            last_leader_epoch: s.last_leader_epoch,
            truncated: s.truncated,
            batches: s.batches,
            skipped_below_start: s.skipped_below_start,
            skipped_control: s.skipped_control,
            skipped_aborted: s.skipped_aborted,
        }
    }
}

/// The Python objects of decompressed batches' keys, values and headers, made by
/// [`decode_taking`] while each batch was in cache: by row (keys, values) and by header index;
/// None where the row or header came from an uncompressed batch (or is null).
#[derive(Default)]
struct Made {
    keys: Vec<Option<Py<PyAny>>>,
    values: Vec<Option<Py<PyAny>>>,
    headers: Vec<Option<MadeHeader>>,
}

/// A header's key (`str`) and value (`bytes`, or None for a null value).
type MadeHeader = (Py<PyAny>, Option<Py<PyAny>>);

/// Decode, making the `bytes` of every decompressed batch's keys, values and headers as soon
/// as the batch is parsed (copied from the decompressed bytes while they are still in cache,
/// and that buffer reused for the next batch). The GIL stays held: the objects are made during
/// the decode.
fn decode_taking(
    py: Python<'_>,
    input: &[u8],
    topic: &str,
    partition: i32,
    opts: &DecodeOptions,
) -> PyResult<(DecodedRecords, Made)> {
    let mut made = Made::default();
    let mut take = |d: &DecodedRecords, rows: std::ops::Range<usize>, data: &[u8]| {
        let obj = |s: Slot| PyBytes::new(py, &data[s.range()]).into_any().unbind();
        made.keys.resize_with(rows.start, || None);
        made.values.resize_with(rows.start, || None);
        for i in rows.clone() {
            made.keys.push(d.keys[i].map(obj));
            made.values.push(d.values[i].map(obj));
        }
        let headers = d.header_starts[rows.start] as usize..d.header_starts[rows.end] as usize;
        made.headers.resize_with(headers.start, || None);
        for h in &d.headers[headers] {
            let key = &data[h.key.range()];
            let key = PyString::new(py, std::str::from_utf8(key).unwrap_or_default());
            made.headers
                .push(Some((key.into_any().unbind(), h.value.map(obj))));
        }
    };
    let d = decode_records_taking(input, opts, &mut take)
        .map_err(|e| errors::records_error(py, topic, partition, e))?;
    Ok((d, made))
}

/// A key or value: made during the decode if its batch was compressed, else copied now.
fn field<'py>(
    py: Python<'py>,
    d: &DecodedRecords,
    input: &[u8],
    slot: Option<Slot>,
    made: &mut [Option<Py<PyAny>>],
    i: usize,
) -> Bound<'py, PyAny> {
    match slot {
        Some(s) if s.buffer == Slot::TAKEN => match made[i].take() {
            Some(obj) => obj.into_bound(py),
            None => unreachable!("a taken slot's object is made with it"),
        },
        _ => slot_bytes(py, d, input, slot),
    }
}

fn slot_bytes<'py>(
    py: Python<'py>,
    d: &DecodedRecords,
    input: &[u8],
    slot: Option<Slot>,
) -> Bound<'py, PyAny> {
    match slot {
        None => py.None().into_bound(py),
        Some(s) => PyBytes::new(py, d.bytes(input, s)).into_any(),
    }
}

/// Record `i`'s `part` deserializer raised `err`: hand out `out`, the records before it, or
/// raise, as `DecodedRecords::stop_at` says (the position stops at the failed record). A
/// `BaseException` that is not an `Exception` is raised at once.
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn stop_at<'py>(
    py: Python<'py>,
    out: Vec<Bound<'py, PyAny>>,
    d: &DecodedRecords,
    i: usize,
    part: &str,
    err: PyErr,
    topic: &str,
    partition: i32,
) -> PyResult<DecodedPartition> {
    // Only an Exception is the record's: KeyboardInterrupt, SystemExit and the like are the
    // program's, raised at once whatever records came before.
    if !err.is_instance_of::<pyo3::exceptions::PyException>(py) {
        return Err(err);
    }
    match d.stop_at(i) {
        StopAt::Raise { offset } => {
            Err(deserializer_error(py, err, part, topic, partition, offset))
        }
        StopAt::HandOut { records, summary } => {
            debug_assert_eq!(records, out.len());
            let records = pyo3::types::PyList::new(py, out)?.into_any().unbind();
            Ok(DecodedPartition::from_summary(records, &summary))
        }
    }
}

/// A deserializer's own exception (its type kept: code written for aiokafka catches that),
/// told where it happened: `topic`, `partition` and `offset` attributes, and a note (Python
/// 3.11+) that says them, both best effort.
fn deserializer_error(
    py: Python<'_>,
    err: PyErr,
    part: &str,
    topic: &str,
    partition: i32,
    offset: i64,
) -> PyErr {
    let err = deserializer_refused(py, err, topic, partition, offset);
    let value = err.value(py);
    if value.hasattr("add_note").unwrap_or(false) {
        let note = format!(
            "ferrokafka: the {part} deserializer failed on topic {topic:?} partition {partition} \
             offset {offset}; the records before it were handed out, and the position stays \
             on it (seek past it to skip it)"
        );
        let _ = value.call_method1("add_note", (note,));
    }
    err
}

/// A deserializer's own exception given `topic`, `partition` and `offset` attributes (best
/// effort).
fn deserializer_refused(
    py: Python<'_>,
    err: PyErr,
    topic: &str,
    partition: i32,
    offset: i64,
) -> PyErr {
    let value = err.value(py);
    let _ = value.setattr("topic", topic);
    let _ = value.setattr("partition", partition);
    let _ = value.setattr("offset", offset);
    err
}

fn deserialize<'py>(
    value: Bound<'py, PyAny>,
    with: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    match with {
        Some(f) => f.call1((value,)),
        None => Ok(value),
    }
}

/// What the records of one decode are made with: the decode, and the objects its records
/// share (the topic, an empty headers tuple, each batch's checksum).
struct RecordMaker<'a, 'py> {
    py: Python<'py>,
    d: &'a DecodedRecords,
    input: &'a [u8],
    made: Made,
    topic: Py<PyAny>,
    partition: i64,
    empty: Bound<'py, PyTuple>,
    checksum: IntCache,
    record_type: Bound<'py, PyType>,
    key_deserializer: Option<&'a Bound<'py, PyAny>>,
    value_deserializer: Option<&'a Bound<'py, PyAny>>,
}

/// Why a record was not made.
enum Unmade {
    /// The key's or value's deserializer raised.
    Refused(&'static str, PyErr),
    Failed(PyErr),
}

impl From<PyErr> for Unmade {
    fn from(err: PyErr) -> Self {
        Unmade::Failed(err)
    }
}

impl<'a, 'py> RecordMaker<'a, 'py> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'py>,
        d: &'a DecodedRecords,
        input: &'a [u8],
        made: Made,
        topic: &Bound<'py, PyString>,
        partition: i32,
        key_deserializer: Option<&'a Bound<'py, PyAny>>,
        value_deserializer: Option<&'a Bound<'py, PyAny>>,
    ) -> Self {
        RecordMaker {
            py,
            d,
            input,
            made,
            topic: topic.clone().into_any().unbind(),
            partition: i64::from(partition),
            empty: PyTuple::empty(py),
            // Every record of a batch shares the batch's CRC: one int object per batch.
            checksum: IntCache(None),
            record_type: py.get_type::<ConsumerRecord>(),
            key_deserializer,
            value_deserializer,
        }
    }

    /// Record `i` of the decode (each record is made at most once: a compressed batch's
    /// objects are moved into it).
    fn make(&mut self, i: usize, delivery_count: i64) -> Result<Bound<'py, PyAny>, Unmade> {
        let (py, d, input) = (self.py, self.d, self.input);
        let headers = if d.header_starts[i] == d.header_starts[i + 1] {
            self.empty.clone()
        } else {
            let items: Vec<Bound<'py, PyTuple>> = d
                .header_range(i)
                .map(|j| {
                    let h = d.headers[j];
                    let (key, value) = if h.key.buffer == Slot::TAKEN {
                        match self.made.headers[j].take() {
                            Some((k, v)) => (
                                k.into_bound(py),
                                v.map_or_else(|| py.None().into_bound(py), |v| v.into_bound(py)),
                            ),
                            None => unreachable!("a taken header's objects are made with it"),
                        }
                    } else {
                        let key = std::str::from_utf8(d.bytes(input, h.key)).unwrap_or_default();
                        (
                            PyString::new(py, key).into_any(),
                            slot_bytes(py, d, input, h.value),
                        )
                    };
                    PyTuple::new(py, [key, value])
                })
                .collect::<PyResult<_>>()?;
            PyTuple::new(py, items)?
        };
        let key = d.keys[i];
        let value = d.values[i];
        let key_obj = deserialize(
            field(py, d, input, key, &mut self.made.keys, i),
            self.key_deserializer,
        )
        .map_err(|e| Unmade::Refused("key", e))?;
        let value_obj = deserialize(
            field(py, d, input, value, &mut self.made.values, i),
            self.value_deserializer,
        )
        .map_err(|e| Unmade::Refused("value", e))?;
        let record = ConsumerRecord {
            topic: Some(self.topic.clone_ref(py)),
            partition: self.partition,
            offset: d.offsets[i],
            timestamp: d.timestamps[i],
            timestamp_type: i64::from(d.timestamp_types[i]),
            key: Some(key_obj.unbind()),
            value: Some(value_obj.unbind()),
            checksum: Some(self.checksum.get(py, i64::from(d.checksums[i]))?),
            serialized_key_size: key.map_or(-1, |s| i64::from(s.len)),
            serialized_value_size: value.map_or(-1, |s| i64::from(s.len)),
            headers: Some(headers.into_any().unbind()),
            delivery_count,
        };
        Ok(new_record(py, &self.record_type, record)?)
    }
}

/// Decode one partition's raw `records` bytes (from a Fetch response) into `ConsumerRecord`s.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (records, topic, partition, *, check_crcs = true, read_committed = false, aborted_transactions = None, start_offset = 0, max_decompressed_batch = DEFAULT_MAX_DECOMPRESSED_BATCH, key_deserializer = None, value_deserializer = None))]
pub fn decode_records<'py>(
    py: Python<'py>,
    records: &Bound<'py, PyAny>,
    topic: &Bound<'py, PyString>,
    partition: i32,
    check_crcs: bool,
    read_committed: bool,
    aborted_transactions: Option<Vec<(i64, i64)>>,
    start_offset: i64,
    max_decompressed_batch: usize,
    key_deserializer: Option<Bound<'py, PyAny>>,
    value_deserializer: Option<Bound<'py, PyAny>>,
) -> PyResult<DecodedPartition> {
    let input = super::buffers::as_bytes(records)?;
    let topic_name = topic.to_str()?;
    let opts = DecodeOptions {
        check_crcs,
        read_committed,
        aborted_transactions: aborted_transactions.unwrap_or_default(),
        start_offset,
        max_decompressed_batch,
    };
    let (d, made) = decode_taking(py, input, topic_name, partition, &opts)?;
    let mut maker = RecordMaker::new(
        py,
        &d,
        input,
        made,
        topic,
        partition,
        key_deserializer.as_ref(),
        value_deserializer.as_ref(),
    );
    let mut out: Vec<Bound<'py, PyAny>> = Vec::with_capacity(d.len());
    for i in 0..d.len() {
        match maker.make(i, 0) {
            Ok(record) => out.push(record),
            Err(Unmade::Refused(part, e)) => {
                return stop_at(py, out, &d, i, part, e, topic_name, partition)
            }
            Err(Unmade::Failed(e)) => return Err(e),
        }
    }
    Ok(DecodedPartition::new(
        pyo3::types::PyList::new(py, out)?.into_any().unbind(),
        &d,
    ))
}

/// Decode one partition's records bytes from a ShareFetch, making records only for the offsets
/// the member acquired (KIP-932), each with its delivery count; records from `start_offset` on.
/// `acquired` is `(first, last, delivery count)` per range. Returns `(records, their offsets
/// as runs, the acquired offsets without a record as runs, refused)`; `refused` is None, or
/// `(offset, exception)` when a deserializer raised (an `Exception`) for the acquired record
/// at `offset`: the records and runs then stop before it, and the offsets after it are left for
/// a decode from `offset + 1`.
#[pyfunction]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
#[pyo3(signature = (records, topic, partition, acquired, *, check_crcs = true, start_offset = 0, max_decompressed_batch = DEFAULT_MAX_DECOMPRESSED_BATCH, key_deserializer = None, value_deserializer = None))]
pub fn decode_held_records<'py>(
    py: Python<'py>,
    records: &Bound<'py, PyAny>,
    topic: &Bound<'py, PyString>,
    partition: i32,
    acquired: Vec<(i64, i64, u16)>,
    check_crcs: bool,
    start_offset: i64,
    max_decompressed_batch: usize,
    key_deserializer: Option<Bound<'py, PyAny>>,
    value_deserializer: Option<Bound<'py, PyAny>>,
) -> PyResult<(
    Bound<'py, pyo3::types::PyList>,
    Vec<(i64, i64)>,
    Vec<(i64, i64)>,
    Option<(i64, Py<PyAny>)>,
)> {
    let input = super::buffers::as_bytes(records)?;
    let topic_name = topic.to_str()?;
    let opts = DecodeOptions {
        check_crcs,
        start_offset,
        max_decompressed_batch,
        ..Default::default()
    };
    let (d, made) = decode_taking(py, input, topic_name, partition, &opts)?;
    let ranges: Vec<AcquiredRange> = acquired_ranges(acquired)
        .into_iter()
        .filter(|r| r.last >= start_offset)
        .map(|r| AcquiredRange {
            first: r.first.max(start_offset),
            ..r
        })
        .collect();
    let mut split = crate::records::acquired::split_acquired(&d.offsets, &ranges);
    let mut maker = RecordMaker::new(
        py,
        &d,
        input,
        made,
        topic,
        partition,
        key_deserializer.as_ref(),
        value_deserializer.as_ref(),
    );
    let held_count: usize = split.spans.iter().map(|(s, e, _)| e - s).sum();
    let mut out: Vec<Bound<'py, PyAny>> = Vec::with_capacity(held_count);
    let mut refused = None;
    'spans: for &(start, end, count) in &split.spans {
        let count = checked_delivery_count(Some(count))?;
        for i in start..end {
            match maker.make(i, count) {
                Ok(record) => out.push(record),
                Err(Unmade::Refused(_, e))
                    if e.is_instance_of::<pyo3::exceptions::PyException>(py) =>
                {
                    let offset = d.offsets[i];
                    let e = deserializer_refused(py, e, topic_name, partition, offset);
                    refused = Some((offset, e.into_value(py).into_any()));
                    break 'spans;
                }
                Err(Unmade::Refused(_, e) | Unmade::Failed(e)) => return Err(e),
            }
        }
    }
    if let Some((offset, _)) = refused {
        split.held = runs_below(split.held, offset);
        split.gaps = runs_below(split.gaps, offset);
    }
    Ok((
        pyo3::types::PyList::new(py, out)?,
        split.held,
        split.gaps,
        refused,
    ))
}

/// `runs` cut off before `offset`.
fn runs_below(runs: Vec<(i64, i64)>, offset: i64) -> Vec<(i64, i64)> {
    runs.into_iter()
        .filter(|&(first, _)| first < offset)
        .map(|(first, last)| (first, last.min(offset - 1)))
        .collect()
}

/// Encode one record batch (producer side and tests). `records` are
/// `(timestamp, key, value, headers)` tuples.
#[pyfunction]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
#[pyo3(signature = (records, *, base_offset = 0, compression = "none", transactional = false, producer_id = -1, producer_epoch = -1, base_sequence = -1, log_append_time = false))]
pub fn encode_batch<'py>(
    py: Python<'py>,
    records: Vec<(
        i64,
        Option<Vec<u8>>,
        Option<Vec<u8>>,
        Vec<(String, Option<Vec<u8>>)>,
    )>,
    base_offset: i64,
    compression: &str,
    transactional: bool,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    log_append_time: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    use crate::records::{build_batch, BatchOptions, Codec, Record};
    let codec = Codec::parse(compression)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    let records: Vec<Record> = records
        .into_iter()
        .map(|(timestamp, key, value, headers)| Record {
            timestamp,
            key,
            value,
            headers,
        })
        .collect();
    let opts = BatchOptions {
        base_offset,
        codec,
        log_append_time,
        transactional,
        producer_id,
        producer_epoch,
        base_sequence,
        ..Default::default()
    };
    let batch = build_batch(&records, &opts).map_err(|e| errors::records_error(py, "", -1, e))?;
    Ok(PyBytes::new(py, &batch))
}

/// Where the next fetch of a partition starts after these records bytes: `(next_offset,
/// last_leader_epoch)` of the last whole batch, from the batch headers alone; None when no
/// batch is whole.
#[pyfunction]
pub fn records_end(records: &Bound<'_, PyAny>) -> PyResult<Option<(i64, i32)>> {
    Ok(crate::records::records_end(super::buffers::as_bytes(
        records,
    )?))
}

/// The byte position where the batch with base offset `base_offset` starts in a partition's
/// records bytes (from batch headers only); None when there is no such batch.
#[pyfunction]
pub fn batch_position(records: &Bound<'_, PyAny>, base_offset: i64) -> PyResult<Option<usize>> {
    Ok(crate::records::batch_position(
        super::buffers::as_bytes(records)?,
        base_offset,
    ))
}

/// The last offset of each whole batch in a partition's records bytes, from the batch headers
/// alone.
#[pyfunction]
pub fn batch_last_offsets(records: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    Ok(crate::records::batch_last_offsets(
        super::buffers::as_bytes(records)?,
    ))
}

/// Split one partition's decoded records by a ShareFetch's acquired ranges (KIP-932):
/// `(held records, each given its delivery count; their offsets as runs (first, last); the
/// acquired offsets without a record, as runs)`. `acquired` is `(first, last, delivery
/// count)` per range.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn split_acquired<'py>(
    py: Python<'py>,
    records: &Bound<'py, pyo3::types::PyList>,
    acquired: Vec<(i64, i64, u16)>,
) -> PyResult<(
    Bound<'py, pyo3::types::PyList>,
    Vec<(i64, i64)>,
    Vec<(i64, i64)>,
)> {
    let mut items = Vec::with_capacity(records.len());
    let mut offsets = Vec::with_capacity(records.len());
    for item in records.iter() {
        let record = item.cast_into::<ConsumerRecord>().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err("split_acquired takes a list of ConsumerRecord")
        })?;
        offsets.push(ConsumerRecord::offset_of(&record));
        items.push(record);
    }
    let split = crate::records::acquired::split_acquired(&offsets, &acquired_ranges(acquired));
    let held_count: usize = split.spans.iter().map(|(s, e, _)| e - s).sum();
    for &(start, end, count) in &split.spans {
        let count = checked_delivery_count(Some(count))?;
        for record in &items[start..end] {
            record.borrow_mut().delivery_count = count;
        }
    }
    // Every record held (the usual case: the broker acquires whole batches; spans are in order
    // and do not overlap): the list itself is the answer.
    if held_count == items.len() {
        return Ok((records.clone(), split.held, split.gaps));
    }
    let mut held = Vec::with_capacity(held_count);
    for &(start, end, _) in &split.spans {
        held.extend(items[start..end].iter().cloned());
    }
    Ok((pyo3::types::PyList::new(py, held)?, split.held, split.gaps))
}

/// `split_acquired` over bare offsets (an Arrow batch's `offset` column): `(spans (start,
/// end, delivery count) of row indexes, held runs, gap runs)`.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn split_acquired_offsets(
    offsets: Vec<i64>,
    acquired: Vec<(i64, i64, u16)>,
) -> (Vec<(usize, usize, u16)>, Vec<(i64, i64)>, Vec<(i64, i64)>) {
    let split = crate::records::acquired::split_acquired(&offsets, &acquired_ranges(acquired));
    (split.spans, split.held, split.gaps)
}

/// A ShareFetch's acquired ranges as Python passes them: `(first, last, delivery count)`.
fn acquired_ranges(acquired: Vec<(i64, i64, u16)>) -> Vec<AcquiredRange> {
    acquired
        .into_iter()
        .map(|(first, last, delivery_count)| AcquiredRange {
            first,
            last,
            delivery_count,
        })
        .collect()
}
