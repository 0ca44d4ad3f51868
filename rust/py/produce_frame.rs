//! Produce requests framed with each record batch copied once, from its Python `bytes` straight
//! into the frame's `bytes`. A producer's request is mostly its batches (up to
//! `max_request_size`), and the generic path copies each three times: into the request struct,
//! into the frame, and the frame into `bytes`.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

use super::buffers::as_bytes;
use super::errors;
use crate::protocol::codec::Uuid;
use crate::protocol::messages::produce::{encode_spliced, ProduceRequestRef, TopicProduceDataRef};

/// A request dict's fields, or None when it is not a dict or has a key outside `known`.
fn fields<'py>(obj: &Bound<'py, PyAny>, known: &[&str]) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Ok(dict) = obj.cast::<PyDict>() else {
        return Ok(None);
    };
    for key in dict.keys() {
        let Ok(key) = key.cast::<PyString>() else {
            return Ok(None);
        };
        if !known.contains(&&*key.to_cow()?) {
            return Ok(None);
        }
    }
    Ok(Some(dict.clone()))
}

/// `dict[key]` extracted as `T`: `Some(default)` when missing, None when of another type.
fn field<'py, T: for<'a> FromPyObject<'a, 'py>>(
    dict: &Bound<'py, PyDict>,
    key: &str,
    default: T,
) -> PyResult<Option<T>> {
    Ok(match dict.get_item(key)? {
        None => Some(default),
        Some(value) => value.extract().ok(),
    })
}

struct Topic<'py> {
    name: String,
    topic_id: Uuid,
    partitions: Vec<(i32, Option<Bound<'py, PyAny>>)>,
}

/// The request's fields, each batch still the caller's object; None for any shape the generic
/// path should judge (and explain in its error).
fn topics<'py>(list: &Bound<'py, PyAny>) -> PyResult<Option<Vec<Topic<'py>>>> {
    let mut out = Vec::new();
    for topic in list.try_iter()? {
        let Some(topic) = fields(&topic?, &["name", "topic_id", "partition_data"])? else {
            return Ok(None);
        };
        let Some(name) = field(&topic, "name", String::new())? else {
            return Ok(None);
        };
        let topic_id = match topic.get_item("topic_id")? {
            None => Uuid::default(),
            Some(id) => match id
                .cast::<PyBytes>()
                .ok()
                .and_then(|b| b.as_bytes().try_into().ok())
            {
                Some(id) => Uuid(id),
                None => return Ok(None),
            },
        };
        let mut partitions = Vec::new();
        if let Some(data) = topic.get_item("partition_data")? {
            for part in data.try_iter()? {
                let Some(part) = fields(&part?, &["index", "records"])? else {
                    return Ok(None);
                };
                let Some(index) = field(&part, "index", 0i32)? else {
                    return Ok(None);
                };
                let records = part.get_item("records")?.filter(|r| !r.is_none());
                if records.as_ref().is_some_and(|r| as_bytes(r).is_err()) {
                    return Ok(None);
                }
                partitions.push((index, records));
            }
        }
        out.push(Topic {
            name,
            topic_id,
            partitions,
        });
    }
    Ok(Some(out))
}

/// The frame of a Produce request given as the dict the generic `encode_request` takes, or
/// None when the dict is not of the plain shape (lists of dicts, batches as `bytes` or
/// `SharedBytes`) and the generic path should encode (or refuse) it.
pub fn encode<'py>(
    py: Python<'py>,
    version: i16,
    correlation_id: i32,
    client_id: Option<&str>,
    body: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    const KNOWN: [&str; 4] = ["transactional_id", "acks", "timeout_ms", "topic_data"];
    let Some(body) = fields(body, &KNOWN)? else {
        return Ok(None);
    };
    let (Some(transactional_id), Some(acks), Some(timeout_ms)) = (
        field::<Option<String>>(&body, "transactional_id", None)?,
        field(&body, "acks", 0i16)?,
        field(&body, "timeout_ms", 0i32)?,
    ) else {
        return Ok(None);
    };
    let topics = match body.get_item("topic_data")? {
        None => Vec::new(),
        Some(list) => match topics(&list)? {
            Some(topics) => topics,
            None => return Ok(None),
        },
    };
    let mut request = ProduceRequestRef {
        transactional_id,
        acks,
        timeout_ms,
        topic_data: Vec::with_capacity(topics.len()),
    };
    for topic in &topics {
        let mut partition_data = Vec::with_capacity(topic.partitions.len());
        for (index, records) in &topic.partitions {
            partition_data.push((*index, records.as_ref().map(as_bytes).transpose()?));
        }
        request.topic_data.push(TopicProduceDataRef {
            name: topic.name.clone(),
            topic_id: topic.topic_id,
            partition_data,
        });
    }
    let frame = encode_spliced(version, correlation_id, client_id, &request)
        .map_err(|e| errors::decode_error(py, e))?;
    let out = PyBytes::new_with(py, frame.len(), |buf| {
        frame.write_to(buf);
        Ok(())
    })?;
    Ok(Some(out))
}
