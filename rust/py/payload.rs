//! Payload formats for Python: a binary column of JSON payloads into a struct column.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{DataType, Field, Schema};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods};

use super::arrow_input::{import_batches, schema_type};
use super::columns::ArrowColumns;
use crate::payload::json::{self, JsonError, Mode};

/// Rows that did not fit, each with why.
type BadRows = Vec<(usize, String)>;

/// The struct fields of an object exporting `__arrow_c_schema__` (a pyarrow schema or struct
/// type).
fn fields_of(schema: &Bound<'_, PyAny>) -> PyResult<arrow_schema::Fields> {
    if !schema.hasattr("__arrow_c_schema__")? {
        return Err(PyTypeError::new_err(format!(
            "expected an Arrow schema or struct type (an object with __arrow_c_schema__, such \
             as a pyarrow.Schema), got {}",
            schema.get_type().name()?
        )));
    }
    let capsule: Bound<'_, PyCapsule> = schema.call_method0("__arrow_c_schema__")?.extract()?;
    let ptr = capsule.pointer_checked(Some(c"arrow_schema"))?;
    // SAFETY: a capsule named "arrow_schema" holds an FFI_ArrowSchema, alive while it is.
    match unsafe { schema_type(ptr.as_ptr().cast::<FFI_ArrowSchema>()) }? {
        DataType::Struct(fields) => Ok(fields),
        _ => unreachable!("schema_type returns struct types only"),
    }
}

/// Decode `payloads` (an Arrow record batch whose first column holds the payloads: binary,
/// large binary or string) as JSON into a struct column of `schema`'s fields, by Spark's
/// `from_json` rules. Returns the column (as one-column `ArrowColumns` named `value`) and the
/// rows that did not fit, each with why; with `fail_fast`, decoding stops at the first of
/// them and the column holds the rows before it.
#[pyfunction]
#[pyo3(signature = (payloads, schema, *, fail_fast = false))]
pub fn decode_json<'py>(
    py: Python<'py>,
    payloads: &Bound<'py, PyAny>,
    schema: &Bound<'py, PyAny>,
    fail_fast: bool,
) -> PyResult<(Bound<'py, ArrowColumns>, BadRows)> {
    let fields = fields_of(schema)?;
    let mut batches = Vec::new();
    import_batches(payloads, &mut batches)?;
    let [batch] = batches.as_slice() else {
        return Err(PyTypeError::new_err(
            "expected one record batch of payloads",
        ));
    };
    if batch.num_columns() == 0 {
        return Err(PyTypeError::new_err("the batch of payloads has no column"));
    }
    let column = batch.column(0).clone();
    let mode = if fail_fast {
        Mode::FailFast
    } else {
        Mode::Permissive
    };
    let decoded = py.detach(|| match column.data_type() {
        DataType::Binary => json::decode(column.as_binary::<i32>().iter(), &fields, mode),
        DataType::LargeBinary => json::decode(column.as_binary::<i64>().iter(), &fields, mode),
        DataType::Utf8 => json::decode(
            column
                .as_string::<i32>()
                .iter()
                .map(|s| s.map(str::as_bytes)),
            &fields,
            mode,
        ),
        DataType::LargeUtf8 => json::decode(
            column
                .as_string::<i64>()
                .iter()
                .map(|s| s.map(str::as_bytes)),
            &fields,
            mode,
        ),
        other => Err(JsonError::Unsupported {
            field: "payloads".into(),
            data_type: other.clone(),
        }),
    });
    let decoded = decoded.map_err(|e| match e {
        JsonError::Unsupported { .. } => PyTypeError::new_err(e.to_string()),
        JsonError::Arrow(e) => PyValueError::new_err(e.to_string()),
    })?;
    let values: Arc<dyn Array> = Arc::new(decoded.values);
    let schema = Schema::new(vec![Field::new("value", values.data_type().clone(), true)]);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![values])
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((Bound::new(py, ArrowColumns::new(batch))?, decoded.bad_rows))
}

/// Each row of the struct column that is the first column of `values` (an Arrow record batch)
/// as a JSON object, as Spark's `to_json` writes it; a null row a null payload. Returns a
/// one-column `ArrowColumns` (`value`, binary). TypeError for a type not written.
#[pyfunction]
pub fn encode_json<'py>(
    py: Python<'py>,
    values: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, ArrowColumns>> {
    let mut batches = Vec::new();
    import_batches(values, &mut batches)?;
    let [batch] = batches.as_slice() else {
        return Err(PyTypeError::new_err("expected one record batch"));
    };
    if batch.num_columns() == 0 {
        return Err(PyTypeError::new_err("the batch has no column"));
    }
    let Some(column) = batch.column(0).as_struct_opt().cloned() else {
        return Err(PyTypeError::new_err(format!(
            "expected a struct column to write as JSON, got {}",
            batch.column(0).data_type()
        )));
    };
    let encoded = py
        .detach(|| crate::payload::to_json::encode(&column))
        .map_err(|e| PyTypeError::new_err(e.to_string()))?;
    let schema = Schema::new(vec![Field::new("value", DataType::Binary, true)]);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(encoded)])
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Bound::new(py, ArrowColumns::new(batch))
}
