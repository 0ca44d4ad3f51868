//! Records to produce from Arrow data handed over through the Arrow PyCapsule interface
//! (`__arrow_c_array__`): the buffers are read in place, never copied into Python objects.

use std::sync::Arc;

use arrow_array::ffi::{from_ffi, FFI_ArrowArray};
use arrow_array::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::{RecordBatch, StructArray};
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::DataType;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyCapsuleMethods};

use super::errors;
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

/// A batch's columns after a full check of the buffers the exporter handed over (offsets in
/// bounds and increasing, UTF-8 where the type says string): imported buffers are taken on
/// trust otherwise, and a bad offset would be a read out of bounds.
fn checked(data: arrow_data::ArrayData) -> PyResult<RecordBatch> {
    data.validate_full().map_err(invalid)?;
    if !matches!(data.data_type(), DataType::Struct(_)) {
        return Err(PyTypeError::new_err(format!(
            "expected Arrow record batch (a struct array), got an array of {}",
            data.data_type()
        )));
    }
    Ok(RecordBatch::from(StructArray::from(data)))
}

/// Import an object exporting the Arrow PyCapsule interface: a record batch
/// (`__arrow_c_array__`, e.g. a pyarrow `RecordBatch`) or a stream of them
/// (`__arrow_c_stream__`, e.g. a pyarrow `Table` or `RecordBatchReader`, a polars DataFrame).
fn import_batches(data: &Bound<'_, PyAny>, into: &mut Vec<RecordBatch>) -> PyResult<()> {
    if data.hasattr("__arrow_c_array__")? {
        let (schema, array): (Bound<'_, PyCapsule>, Bound<'_, PyCapsule>) =
            data.call_method0("__arrow_c_array__")?.extract()?;
        let schema_ptr = schema.pointer_checked(Some(c"arrow_schema"))?;
        let array_ptr = array.pointer_checked(Some(c"arrow_array"))?;
        // SAFETY: the capsules are named as the Arrow PyCapsule interface requires, so they
        // hold an FFI_ArrowSchema and an FFI_ArrowArray. The array is moved out and an empty
        // (released) one left behind, so the capsule's destructor does not release it a second
        // time; the schema is only borrowed while `schema` is alive.
        let imported = unsafe {
            let ffi_array = std::ptr::replace(
                array_ptr.as_ptr().cast::<FFI_ArrowArray>(),
                FFI_ArrowArray::empty(),
            );
            let ffi_schema = &*schema_ptr.as_ptr().cast::<FFI_ArrowSchema>();
            from_ffi(ffi_array, ffi_schema).map_err(invalid)?
        };
        into.push(checked(imported)?);
        return Ok(());
    }
    if data.hasattr("__arrow_c_stream__")? {
        let capsule: Bound<'_, PyCapsule> = data.call_method0("__arrow_c_stream__")?.extract()?;
        let stream_ptr = capsule.pointer_checked(Some(c"arrow_array_stream"))?;
        // SAFETY: a capsule named "arrow_array_stream" holds an FFI_ArrowArrayStream; from_raw
        // moves it out and leaves a released one, which the capsule's destructor skips.
        let reader = unsafe {
            ArrowArrayStreamReader::from_raw(stream_ptr.as_ptr().cast::<FFI_ArrowArrayStream>())
                .map_err(invalid)?
        };
        for batch in reader {
            let batch = batch.map_err(invalid)?;
            into.push(checked(StructArray::from(batch).into())?);
        }
        return Ok(());
    }
    Err(PyTypeError::new_err(format!(
        "expected Arrow data (an object with __arrow_c_array__ or __arrow_c_stream__, such as a \
         pyarrow RecordBatch or Table), got {}",
        data.get_type().name()?
    )))
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
            .detach(|| inner.columns.encode(&inner.chunk.rows, now_ms, &opts))
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
