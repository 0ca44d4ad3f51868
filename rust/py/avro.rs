//! Avro payloads for Python: a binary column of Avro datums into a struct column and back.
//! Schema ids are looked up (and fetched from a registry) in Python; this side only reads
//! bytes with the schemas it was given.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use super::arrow_input::import_batches;
use super::columns::ArrowColumns;
use crate::payload::avro::{self, AvroError, AvroSchema, Framing, Mode};

/// Rows that did not decode, each with why.
type BadRows = Vec<(usize, String)>;

fn schema_error(e: AvroError) -> PyErr {
    match e {
        AvroError::Schema(_) | AvroError::Unsupported { .. } | AvroError::Encode { .. } => {
            PyValueError::new_err(e.to_string())
        }
        AvroError::Mismatch { row, id, .. } => PyValueError::new_err((e.to_string(), row, id)),
        AvroError::Arrow(e) => PyValueError::new_err(e.to_string()),
    }
}

/// The one column of a one-batch Arrow input.
fn first_column(data: &Bound<'_, PyAny>) -> PyResult<ArrayRef> {
    let mut batches = Vec::new();
    import_batches(data, &mut batches)?;
    let [batch] = batches.as_slice() else {
        return Err(PyTypeError::new_err("expected one record batch"));
    };
    if batch.num_columns() == 0 {
        return Err(PyTypeError::new_err("the batch has no column"));
    }
    Ok(batch.column(0).clone())
}

/// The payloads of a binary or large binary column.
fn payloads_of(column: &ArrayRef) -> PyResult<Vec<Option<&[u8]>>> {
    match column.data_type() {
        DataType::Binary => Ok(column.as_binary::<i32>().iter().collect()),
        DataType::LargeBinary => Ok(column.as_binary::<i64>().iter().collect()),
        other => Err(PyTypeError::new_err(format!(
            "Avro payloads are a binary column, got {other}"
        ))),
    }
}

fn one_column(py: Python<'_>, values: ArrayRef) -> PyResult<Bound<'_, ArrowColumns>> {
    let schema = Schema::new(vec![Field::new("value", values.data_type().clone(), true)]);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![values])
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Bound::new(py, ArrowColumns::new(batch))
}

/// Reads Avro payloads with the writer schemas it is given (one for plain datums, one per id
/// for Confluent's framing), resolved to an optional reader schema.
#[pyclass(module = "ferrokafka._native")]
pub struct AvroReader {
    reader: Option<AvroSchema>,
    plain: Option<AvroSchema>,
    writers: HashMap<u32, AvroSchema>,
}

#[pymethods]
impl AvroReader {
    /// ValueError for a reader schema that is not Avro, or has no column type.
    #[new]
    #[pyo3(signature = (reader_schema=None))]
    fn new(reader_schema: Option<&str>) -> PyResult<Self> {
        let reader = reader_schema
            .map(AvroSchema::parse)
            .transpose()
            .map_err(schema_error)?;
        if let Some(r) = &reader {
            r.fields().map_err(schema_error)?;
        }
        Ok(AvroReader {
            reader,
            plain: None,
            writers: HashMap::new(),
        })
    }

    /// Add the writer schema of `schema_id` (None: of plain datums). ValueError for a schema
    /// that is not Avro or (without a reader schema) has no column type.
    #[pyo3(signature = (schema_id, schema))]
    fn add_writer(&mut self, schema_id: Option<u32>, schema: &str) -> PyResult<()> {
        let parsed = AvroSchema::parse(schema).map_err(schema_error)?;
        if self.reader.is_none() {
            parsed.fields().map_err(schema_error)?;
        }
        match schema_id {
            None => self.plain = Some(parsed),
            Some(id) => {
                self.writers.insert(id, parsed);
            }
        }
        Ok(())
    }

    /// Whether the writer schema of `schema_id` was added.
    fn has_writer(&self, schema_id: u32) -> bool {
        self.writers.contains_key(&schema_id)
    }

    /// Decode the payloads (the first column of an Arrow record batch, binary) into a struct
    /// column; returns it (a one-column ``ArrowColumns``) and the rows that did not decode,
    /// each with why. With `fail_fast` decoding stops at the first of them. ValueError
    /// ``(message, row, schema_id)`` when, with no reader schema, two schema ids of the batch
    /// give different columns (the row is the first of the second id).
    #[pyo3(signature = (payloads, *, confluent, fail_fast = false))]
    fn decode<'py>(
        &self,
        py: Python<'py>,
        payloads: &Bound<'py, PyAny>,
        confluent: bool,
        fail_fast: bool,
    ) -> PyResult<(Bound<'py, ArrowColumns>, BadRows)> {
        let column = first_column(payloads)?;
        let framing = if confluent {
            Framing::Confluent(&self.writers)
        } else {
            match &self.plain {
                Some(w) => Framing::Plain(w),
                None => return Err(PyValueError::new_err("no writer schema for plain datums")),
            }
        };
        let mode = if fail_fast {
            Mode::FailFast
        } else {
            Mode::Permissive
        };
        let reader = self.reader.as_ref();
        let payloads = payloads_of(&column)?;
        let decoded = py
            .detach(|| avro::decode(&payloads, &framing, reader, mode))
            .map_err(schema_error)?;
        Ok((one_column(py, Arc::new(decoded.values))?, decoded.bad_rows))
    }
}

/// The distinct schema ids of the Confluent-framed payloads (the first column of an Arrow
/// record batch, binary), each with the first row that has it, in row order.
#[pyfunction]
pub fn avro_schema_ids(payloads: &Bound<'_, PyAny>) -> PyResult<Vec<(u32, usize)>> {
    let column = first_column(payloads)?;
    let mut out: Vec<(u32, usize)> = Vec::new();
    for (row, p) in payloads_of(&column)?.into_iter().enumerate() {
        if let Some(id) = p.and_then(avro::confluent_id) {
            if !out.iter().any(|(seen, _)| *seen == id) {
                out.push((id, row));
            }
        }
    }
    Ok(out)
}

/// Each row of the struct column that is the first column of `values` (an Arrow record batch)
/// as an Avro datum of `schema` (JSON text), with Confluent's header of `schema_id` when
/// given; a null row a null payload. Returns a one-column ``ArrowColumns`` (``value``,
/// binary). ValueError naming the field and row that does not fit the schema.
#[pyfunction]
#[pyo3(signature = (values, schema, schema_id=None))]
pub fn encode_avro<'py>(
    py: Python<'py>,
    values: &Bound<'py, PyAny>,
    schema: &str,
    schema_id: Option<u32>,
) -> PyResult<Bound<'py, ArrowColumns>> {
    let schema = AvroSchema::parse(schema).map_err(schema_error)?;
    let column = first_column(values)?;
    let Some(column) = column.as_struct_opt().cloned() else {
        return Err(PyTypeError::new_err(format!(
            "expected a struct column to write as Avro, got {}",
            column.data_type()
        )));
    };
    let encoded = py
        .detach(|| crate::payload::to_avro::encode(&column, &schema, schema_id))
        .map_err(schema_error)?;
    one_column(py, Arc::new(encoded))
}
