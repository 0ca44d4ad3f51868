//! Records to produce from Arrow data handed over through the Arrow PyCapsule interface
//! (`__arrow_c_array__`): the buffers are read in place, never copied into Python objects.

use std::sync::Arc;

use arrow_array::ffi::{from_ffi_and_data_type, FFI_ArrowArray};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, StructArray};
use arrow_data::ArrayData;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{DataType, Schema};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyCapsuleMethods};

use super::errors;
use crate::records::arrow_ffi::{check_array, check_schema, ShapeError};
use crate::records::arrow_input::{ArrowInputError, PlannedBatch, ProduceRows};

fn input_error(py: Python<'_>, err: ArrowInputError) -> PyErr {
    match err {
        ArrowInputError::Column { .. } => PyTypeError::new_err(err.to_string()),
        ArrowInputError::Row { .. } => PyValueError::new_err(err.to_string()),
        ArrowInputError::TooLarge { .. } => {
            errors::ferrokafka_error(py, "MessageSizeTooLargeError", err.to_string())
        }
        ArrowInputError::Encode(e) => errors::records_error(py, "", -1, e),
    }
}

fn invalid(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("the Arrow data is not valid: {e}"))
}

fn shape_error(e: ShapeError) -> PyErr {
    match e {
        ShapeError::Unsupported { .. } => PyTypeError::new_err(e.to_string()),
        ShapeError::Malformed { .. } => PyValueError::new_err(e.to_string()),
    }
}

/// Run an import with arrow-rs, turning a panic (an assertion on a structure the checks
/// before it let through) into a ValueError: a panic must not cross into Python.
fn guarded<T>(import: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(import)).unwrap_or_else(|panic| {
        let why = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(invalid(format!("arrow-rs refused it ({why})")))
    })
}

/// The batch's type from an exported schema, after a check of the schema's tree.
///
/// # Safety
/// `schema` must point to a live `ArrowSchema`.
pub(super) unsafe fn schema_type(schema: *const FFI_ArrowSchema) -> PyResult<DataType> {
    // SAFETY: the caller's promise.
    unsafe { check_schema(schema) }.map_err(shape_error)?;
    // SAFETY: as above; the tree's pointers were checked.
    let dt = DataType::try_from(unsafe { &*schema }).map_err(invalid)?;
    if !matches!(dt, DataType::Struct(_)) {
        return Err(PyTypeError::new_err(format!(
            "expected Arrow record batch (a struct array), got an array of {dt}"
        )));
    }
    Ok(dt)
}

/// Import one exported struct array of type `dt` as a record batch, checking everything the
/// exporter handed over: the structure's shape before arrow-rs reads it, then the buffers
/// (offsets in bounds and increasing, UTF-8 where the type says string), then that no row of
/// the batch itself is null. `first_row` numbers the batch's rows in errors.
///
/// # Safety
/// `array` must point to a live `ArrowArray` of type `dt`; it is moved out (the imported
/// batch now owns it) and a released one left in its place.
unsafe fn import_array(
    array: *mut FFI_ArrowArray,
    dt: &DataType,
    first_row: usize,
) -> PyResult<RecordBatch> {
    // SAFETY: the caller's promise.
    unsafe { check_array(array, dt, "") }.map_err(shape_error)?;
    // No rows: nothing to read (arrow-rs would size an empty array's values buffer as 0 and
    // then refuse the offset of a valid empty slice). The columns are still checked, by type.
    // SAFETY: checked live above.
    if unsafe { (*array).is_empty() } {
        let DataType::Struct(fields) = dt else {
            return Err(PyTypeError::new_err(format!(
                "expected Arrow record batch (a struct array), got an array of {dt}"
            )));
        };
        return Ok(RecordBatch::new_empty(Arc::new(Schema::new(
            fields.clone(),
        ))));
    }
    // SAFETY: checked above; the array moves into the import, a released one stays behind so
    // the exporter's owner does not release it a second time.
    let ffi_array = unsafe { std::ptr::replace(array, FFI_ArrowArray::empty()) };
    guarded(|| {
        // SAFETY: the structure's shape matches `dt` (checked).
        let data = unsafe { from_ffi_and_data_type(ffi_array, dt.clone()) }.map_err(invalid)?;
        data.validate_full().map_err(invalid)?;
        children_cover(&data, "").map_err(invalid)?;
        if let Some(nulls) = data.nulls().filter(|n| n.null_count() > 0) {
            let row = (0..nulls.len()).find(|&i| nulls.is_null(i)).unwrap_or(0);
            return Err(PyValueError::new_err(format!(
                "row {}: the record is null (a null row of the batch's struct; a record's key \
                 or value may be null, the record may not)",
                first_row + row
            )));
        }
        Ok(RecordBatch::from(StructArray::from(data)))
    })
}

/// Every struct's children hold the rows its offset and length reach (`validate_full` checks
/// only the length, and a struct array is read by slicing its children at its offset).
fn children_cover(data: &ArrayData, column: &str) -> Result<(), String> {
    let fields = match data.data_type() {
        DataType::Struct(fields) => Some(fields),
        _ => None,
    };
    for (i, child) in data.child_data().iter().enumerate() {
        let name = match fields {
            Some(fields) if column.is_empty() => fields[i].name().as_str(),
            _ => column,
        };
        let need = data.offset() + data.len();
        if fields.is_some() && child.len() < need {
            return Err(format!(
                "column {name:?} has {} values, its struct reaches row {need} (offset {} + \
                 length {})",
                child.len(),
                data.offset(),
                data.len()
            ));
        }
        children_cover(child, name)?;
    }
    Ok(())
}

fn rows_in(batches: &[RecordBatch]) -> usize {
    batches.iter().map(RecordBatch::num_rows).sum()
}

/// Import an object exporting the Arrow PyCapsule interface: a record batch
/// (`__arrow_c_array__`, e.g. a pyarrow `RecordBatch`) or a stream of them
/// (`__arrow_c_stream__`, e.g. a pyarrow `Table` or `RecordBatchReader`, a polars DataFrame).
pub(super) fn import_batches(data: &Bound<'_, PyAny>, into: &mut Vec<RecordBatch>) -> PyResult<()> {
    if data.hasattr("__arrow_c_array__")? {
        let (schema, array): (Bound<'_, PyCapsule>, Bound<'_, PyCapsule>) =
            data.call_method0("__arrow_c_array__")?.extract()?;
        let schema_ptr = schema.pointer_checked(Some(c"arrow_schema"))?;
        let array_ptr = array.pointer_checked(Some(c"arrow_array"))?;
        // SAFETY: the capsules are named as the Arrow PyCapsule interface requires, so they
        // hold an FFI_ArrowSchema and an FFI_ArrowArray, alive while the capsules are.
        let batch = unsafe {
            let dt = schema_type(schema_ptr.as_ptr().cast::<FFI_ArrowSchema>())?;
            import_array(
                array_ptr.as_ptr().cast::<FFI_ArrowArray>(),
                &dt,
                rows_in(into),
            )?
        };
        into.push(batch);
        return Ok(());
    }
    if data.hasattr("__arrow_c_stream__")? {
        let capsule: Bound<'_, PyCapsule> = data.call_method0("__arrow_c_stream__")?.extract()?;
        let stream_ptr = capsule.pointer_checked(Some(c"arrow_array_stream"))?;
        // SAFETY: a capsule named "arrow_array_stream" holds an FFI_ArrowArrayStream; from_raw
        // moves it out and leaves a released one, which the capsule's destructor skips.
        let mut stream = unsafe {
            FFI_ArrowArrayStream::from_raw(stream_ptr.as_ptr().cast::<FFI_ArrowArrayStream>())
        };
        return import_stream(&mut stream, into);
    }
    Err(PyTypeError::new_err(format!(
        "expected Arrow data (an object with __arrow_c_array__ or __arrow_c_stream__, such as a \
         pyarrow RecordBatch or Table), got {}",
        data.get_type().name()?
    )))
}

/// The stream's last error message, or a description of `code`.
fn stream_error(stream: &mut FFI_ArrowArrayStream, code: i32) -> PyErr {
    let message = stream
        .get_last_error
        .map(|last_error| {
            // SAFETY: the stream is live; the callback returns null or a C string that stays
            // valid until the next call on the stream.
            let text = unsafe { last_error(stream) };
            if text.is_null() {
                String::new()
            } else {
                // SAFETY: a non-null C string from the stream (above).
                unsafe { std::ffi::CStr::from_ptr(text) }
                    .to_string_lossy()
                    .into_owned()
            }
        })
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| format!("error code {code}"));
    invalid(format!("the Arrow stream failed: {message}"))
}

/// Read every batch of an exported stream, each checked as `import_array` checks one.
fn import_stream(stream: &mut FFI_ArrowArrayStream, into: &mut Vec<RecordBatch>) -> PyResult<()> {
    let (Some(get_schema), Some(get_next)) = (stream.get_schema, stream.get_next) else {
        return Err(invalid("the Arrow stream was already released"));
    };
    let mut schema = FFI_ArrowSchema::empty();
    // SAFETY: a live stream's callback, writing a schema into `schema`.
    let code = unsafe { get_schema(stream, &mut schema) };
    if code != 0 {
        return Err(stream_error(stream, code));
    }
    // SAFETY: `schema` was just written by the stream.
    let dt = unsafe { schema_type(&schema) }?;
    loop {
        let mut array = FFI_ArrowArray::empty();
        // SAFETY: a live stream's callback, writing the next array (or a released one at the
        // end) into `array`.
        let code = unsafe { get_next(stream, &mut array) };
        if code != 0 {
            return Err(stream_error(stream, code));
        }
        if array.is_released() {
            return Ok(());
        }
        // SAFETY: the stream's arrays have its schema's type; `array` is ours to move.
        let batch = unsafe { import_array(&mut array, &dt, rows_in(into))? };
        into.push(batch);
    }
}

/// Rows of an Arrow batch bound for one partition: `partition`, `record_count`, `size` (an
/// upper bound of the encoded batch), and `encode()`.
#[pyclass(module = "ferrokafka._native", frozen)]
pub struct ArrowRecordChunk {
    inner: PlannedBatch,
}

#[pymethods]
impl ArrowRecordChunk {
    #[getter]
    fn partition(&self) -> i32 {
        self.inner.chunk.partition
    }

    #[getter]
    fn record_count(&self) -> usize {
        self.inner.chunk.rows.len()
    }

    #[getter]
    fn size(&self) -> usize {
        self.inner.chunk.size
    }

    /// The rows as one v2 record batch (rows without a timestamp get `now_ms`). The GIL is
    /// released while encoding and compressing.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (now_ms, *, compression = "none", transactional = false, producer_id = -1, producer_epoch = -1, base_sequence = -1))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        now_ms: i64,
        compression: &str,
        transactional: bool,
        producer_id: i64,
        producer_epoch: i16,
        base_sequence: i32,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let opts = super::producer::batch_options(
            compression,
            transactional,
            producer_id,
            producer_epoch,
            base_sequence,
        )?;
        let inner = &self.inner;
        let out = py
            .detach(|| inner.columns.encode(&inner.chunk, now_ms, &opts))
            .map_err(|e| input_error(py, e))?;
        Ok(PyBytes::new(py, &out))
    }
}

/// Check Arrow record batches of records to produce and split their rows into per-partition
/// chunks of at most `batch_size` bytes (see the producer's `send_arrow`); rows are numbered
/// across the batches in errors. Raises TypeError for a bad column, ValueError for a bad row,
/// MessageSizeTooLargeError for a row over `max_request_size`; then no chunk is returned.
#[pyfunction]
#[pyo3(signature = (batches, *, num_partitions, sticky, batch_size, max_request_size))]
pub fn plan_arrow_records(
    py: Python<'_>,
    batches: Vec<Bound<'_, PyAny>>,
    num_partitions: u32,
    sticky: u32,
    batch_size: usize,
    max_request_size: usize,
) -> PyResult<Vec<ArrowRecordChunk>> {
    let mut imported = Vec::new();
    for data in &batches {
        import_batches(data, &mut imported)?;
    }
    let batches = imported;
    let rows = Arc::new(ProduceRows::new(&batches).map_err(|e| input_error(py, e))?);
    let chunks = py
        .detach(|| rows.plan(num_partitions, sticky, batch_size, max_request_size))
        .map_err(|e| input_error(py, e))?;
    Ok(chunks
        .into_iter()
        .map(|chunk| ArrowRecordChunk {
            inner: PlannedBatch {
                columns: Arc::clone(&rows),
                chunk,
            },
        })
        .collect())
}
