//! Records as Arrow columns, handed to Python through the Arrow PyCapsule interface
//! (`__arrow_c_schema__` / `__arrow_c_array__`): pyarrow, polars, duckdb and Spark read the
//! buffers in place.

use arrow_array::ffi::to_ffi;
use arrow_array::{Array, RecordBatch, StructArray};
use arrow_schema::ffi::FFI_ArrowSchema;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyString};

use super::errors;
use super::records::DecodedPartition;
use crate::records::batch::DEFAULT_MAX_DECOMPRESSED_BATCH;
use crate::records::{ColumnsError, DecodeOptions};

/// Records bytes of this size or more are decoded into columns with the GIL released, so that
/// other Python threads run meanwhile; smaller inputs are decoded with it held, as they take too
/// little time to be worth handing the GIL over and back. Its own decision, though of the same
/// value as `frame::DEFAULT_DIRECT_MIN` (the size from which a frame is received into storage
/// of its own). `ConsumerRecord`s are always decoded with the GIL held: they are Python objects,
/// made during the decode.
const RELEASE_GIL_MIN: usize = 64 * 1024;

fn arrow_error(e: arrow_schema::ArrowError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Arrow columns made in Rust: one partition's records in Spark's Kafka schema (`key`,
/// `value`, `topic`, `partition`, `offset`, `timestamp`, `timestampType`, `headers`), or a
/// decoded payload column. Export with `pyarrow.record_batch(cols)` or any reader of the Arrow
/// PyCapsule interface; `to_pyarrow()` does it for you.
#[pyclass(module = "ferrokafka._native", frozen)]
pub struct ArrowColumns {
    batch: RecordBatch,
}

impl ArrowColumns {
    pub(super) fn new(batch: RecordBatch) -> Self {
        ArrowColumns { batch }
    }
}

#[pymethods]
impl ArrowColumns {
    #[getter]
    fn num_rows(&self) -> usize {
        self.batch.num_rows()
    }

    fn __len__(&self) -> usize {
        self.batch.num_rows()
    }

    /// The schema as an `arrow_schema` capsule.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let schema =
            FFI_ArrowSchema::try_from(self.batch.schema().as_ref()).map_err(arrow_error)?;
        PyCapsule::new_with_value(py, schema, c"arrow_schema")
    }

    /// The batch as a struct array: `(arrow_schema, arrow_array)` capsules. The buffers are
    /// shared, not copied. A `requested_schema` is accepted and ignored (the interface allows
    /// that): the columns always have Spark's types.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema;
        let data = StructArray::from(self.batch.clone()).into_data();
        let (array, schema) = to_ffi(&data).map_err(arrow_error)?;
        Ok((
            PyCapsule::new_with_value(py, schema, c"arrow_schema")?,
            PyCapsule::new_with_value(py, array, c"arrow_array")?,
        ))
    }

    /// A `pyarrow.RecordBatch` over the same buffers (needs pyarrow installed).
    fn to_pyarrow<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        slf.py()
            .import("pyarrow")?
            .getattr("record_batch")?
            .call1((slf,))
    }

    fn __repr__(&self) -> String {
        format!(
            "ArrowColumns(num_rows={}, bytes={})",
            self.batch.num_rows(),
            self.batch.get_array_memory_size()
        )
    }
}

/// Decode one partition's raw `records` bytes straight into Arrow columns in Spark's schema.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (records, topic, partition, *, check_crcs = true, read_committed = false, aborted_transactions = None, start_offset = 0, max_decompressed_batch = DEFAULT_MAX_DECOMPRESSED_BATCH))]
pub fn decode_columns<'py>(
    py: Python<'py>,
    records: &Bound<'py, PyAny>,
    topic: &Bound<'py, PyString>,
    partition: i32,
    check_crcs: bool,
    read_committed: bool,
    aborted_transactions: Option<Vec<(i64, i64)>>,
    start_offset: i64,
    max_decompressed_batch: usize,
) -> PyResult<DecodedPartition> {
    let input = super::buffers::as_bytes(records)?;
    let topic = topic.to_str()?;
    let opts = DecodeOptions {
        check_crcs,
        read_committed,
        aborted_transactions: aborted_transactions.unwrap_or_default(),
        start_offset,
        max_decompressed_batch,
    };
    // One pass from the records bytes to the Arrow buffers; it touches no Python object, so
    // large inputs run with the GIL released (see RELEASE_GIL_MIN).
    let decode = || crate::records::decode_columns(input, &opts, topic, partition);
    let result = if input.len() >= RELEASE_GIL_MIN {
        py.detach(decode)
    } else {
        decode()
    };
    let (batch, summary) = result.map_err(|e| match e {
        ColumnsError::Records(e) => errors::records_error(py, topic, partition, e),
        ColumnsError::Arrow(e) => arrow_error(e),
    })?;
    let columns = Bound::new(py, ArrowColumns { batch })?;
    Ok(DecodedPartition::from_summary(
        columns.into_any().unbind(),
        &summary,
    ))
}
