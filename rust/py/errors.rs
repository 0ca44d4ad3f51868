//! The one place where native errors become Python exceptions: the classes of
//! `ferrokafka.errors`, so users catch the same types whether Rust or Python raised them.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::protocol::error::DecodeError;
use crate::records::RecordsError;

pub fn ferrokafka_error(py: Python<'_>, class: &str, message: String) -> PyErr {
    let cls = py
        .import("ferrokafka.errors")
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.cast_into::<PyType>().map_err(PyErr::from));
    match cls {
        Ok(cls) => PyErr::from_type(cls, message),
        // ferrokafka.errors is part of the package; failing to import it is itself an error
        // worth surfacing, with the original message kept.
        Err(import_err) => PyTypeError::new_err(format!(
            "{message} (and ferrokafka.errors.{class} could not be loaded: {import_err})"
        )),
    }
}

/// Map a core error to the matching `ferrokafka.errors` class.
pub fn decode_error(py: Python<'_>, err: DecodeError) -> PyErr {
    let message = err.to_string();
    match err.root() {
        DecodeError::FrameTooLarge { .. } | DecodeError::NegativeFrameSize { .. } => {
            ferrokafka_error(py, "FrameTooLargeError", message)
        }
        DecodeError::UnsupportedVersion { .. } | DecodeError::UnknownApiKey { .. } => {
            ferrokafka_error(py, "IncompatibleBrokerVersion", message)
        }
        DecodeError::Unencodable { .. } => PyValueError::new_err(message),
        _ => ferrokafka_error(py, "ProtocolDecodeError", message),
    }
}

/// A request/response value from Python that does not fit the message's shape.
pub fn shape_error(what: &str, err: pythonize::PythonizeError) -> PyErr {
    PyTypeError::new_err(format!("{what}: {err}"))
}

/// Map a record-batch error, naming the topic and partition it came from.
/// The exception carries `topic`, `partition` and `offset` (the failing batch's base offset)
/// as attributes, so a consumer can hand out the records before that batch.
pub fn records_error(py: Python<'_>, topic: &str, partition: i32, err: RecordsError) -> PyErr {
    let offset = err.base_offset();
    match err {
        RecordsError::Unencodable(reason) => PyValueError::new_err(reason),
        other => {
            let exc = ferrokafka_error(
                py,
                "CorruptRecordException",
                format!("topic {topic:?} partition {partition}: {other}"),
            );
            let value = exc.value(py);
            // Best effort: the message already says all of it.
            let _ = value.setattr("topic", topic);
            let _ = value.setattr("partition", partition);
            let _ = value.setattr("offset", offset);
            exc
        }
    }
}
