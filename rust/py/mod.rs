//! The PyO3 layer. It converts values between Python and the sans-I/O core (message dicts,
//! records bytes, Arrow columns), with Produce and Fetch given entry points of their own (a
//! request framed from the batches' `bytes`, a response whose records stay in the frame). And it
//! holds what exists only for Python: the objects handed out (`ConsumerRecord`,
//! `DecodedPartition`, `ArrowColumns`, `SharedBytes` and the frame decoder's receive windows),
//! the producer's open batches with the asyncio-compatible future of each record
//! (`BatchRecords`, `RecordFuture`, `OpenBatches`), the consumer's per-record iteration
//! (`RecordRun`, `RecordStream`), and allocator settings for Python's memory (`arena.rs`,
//! `heap.rs`). Protocol and record rules (sizes, fullness, positions, codecs) are the core's
//! (`rust/protocol`, `rust/records`), tested there without Python.

mod arena;
mod arrow_input;
mod avro;
mod buffers;
mod columns;
mod entry;
mod errors;
mod free_list;
mod gil_cell;
mod heap;
mod open_batches;
mod own_methods;
mod payload;
mod produce_frame;
mod producer;
mod record_run;
mod records;
mod send_step;
mod shortcut_coroutine;

use std::sync::Arc;

use buffers::{as_bytes, SharedBytes};

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use pythonize::{depythonize, pythonize};

use crate::protocol::codec::Reader;
use crate::protocol::error::DecodeError;
use crate::protocol::error_code::ErrorCode;
use crate::protocol::frame;
use crate::protocol::header::{peek_correlation_id as peek, RequestHeader};
use crate::protocol::messages;
use crate::with_api;

/// Splits the bytes of one connection into size-prefixed frames. Frames of `direct_min` bytes
/// or more are received into their own storage: `receive_window()` offers the rest of such a
/// frame to `recv_into`, so the bytes of a Fetch response are written once, by the kernel.
/// Private (the connection's): its rules on windows are checked, not assumed.
#[pyclass(module = "ferrokafka._native", name = "_FrameDecoder")]
struct FrameDecoder {
    inner: frame::FrameDecoder,
    windows: Arc<buffers::WindowState>,
}

impl FrameDecoder {
    /// Every frame now complete, in order. A frame received through a window waits (with
    /// those after it) while a buffer of a window is still exported: the event loop may hold
    /// one until its `buffer_updated` returns (uvloop does), and the frame must not change
    /// once handed out.
    fn frames<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        if self.inner.holds_direct_frame() && self.windows.exported() {
            return Ok(out);
        }
        while let Some((buffer, range)) = self
            .inner
            .next_frame_owned()
            .map_err(|e| errors::decode_error(py, e))?
        {
            out.append(SharedBytes::view(buffer, range))?;
        }
        Ok(out)
    }
}

#[pymethods]
impl FrameDecoder {
    #[new]
    #[pyo3(signature = (max_frame_size = frame::DEFAULT_MAX_FRAME_SIZE, direct_min = frame::DEFAULT_DIRECT_MIN))]
    fn new(max_frame_size: usize, direct_min: usize) -> Self {
        FrameDecoder {
            inner: frame::FrameDecoder::with_direct_min(max_frame_size, direct_min),
            windows: Arc::default(),
        }
    }

    /// Append `data`; return every frame body (without size prefix) now complete.
    fn feed<'py>(&mut self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyList>> {
        self.windows.close();
        self.inner.feed(data);
        self.frames(py)
    }

    /// The rest of the large frame being received, as a writable buffer (a `memoryview`), or
    /// None when bytes should be received elsewhere and fed. It is closed (exports no new
    /// buffer) once the decoder is told of received bytes; the frame it fills is handed out
    /// once it is released (`memoryview.release()`), by `received`, `feed` or `take`.
    fn receive_window<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some((storage, range)) = self.inner.receive_window() else {
            return Ok(None);
        };
        let window = Bound::new(py, self.windows.open(storage, range))?;
        // SAFETY: `window` is a live object that exports a buffer.
        let view = unsafe {
            Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyMemoryView_FromObject(window.as_ptr()))?
        };
        Ok(Some(view))
    }

    /// `nbytes` were received: into the last `receive_window()` if `window` is true, else at
    /// the start of `scratch` (fed from there). Returns every frame now complete.
    fn received<'py>(
        &mut self,
        py: Python<'py>,
        nbytes: usize,
        window: bool,
        scratch: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.windows.close();
        if window {
            if self
                .inner
                .receive_window()
                .is_none_or(|(_, r)| nbytes > r.len())
            {
                return Err(PyValueError::new_err(format!(
                    "received {nbytes} bytes into a receive window that does not hold them"
                )));
            }
            self.inner.window_filled(nbytes);
        } else {
            let buffer = PyBuffer::<u8>::get(scratch)?;
            if !buffer.is_c_contiguous() {
                return Err(PyValueError::new_err(
                    "FrameDecoder.received: the scratch buffer must be contiguous",
                ));
            }
            // SAFETY: `buffer` keeps the C-contiguous export of `len_bytes` bytes alive for this
            // call; the GIL is held and no Python code runs while the slice is alive.
            let bytes = unsafe {
                std::slice::from_raw_parts(buffer.buf_ptr().cast::<u8>(), buffer.len_bytes())
            };
            let data = bytes.get(..nbytes).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "received {nbytes} bytes into a {}-byte buffer",
                    bytes.len()
                ))
            })?;
            // Fed from a buffer over the frame being received, the bytes would be copied onto
            // themselves.
            if let Some((storage, _)) = self.inner.receive_window() {
                let frame = storage.address_range();
                let scratch = bytes.as_ptr() as usize..bytes.as_ptr() as usize + bytes.len();
                if scratch.start < frame.end && frame.start < scratch.end {
                    return Err(PyValueError::new_err(
                        "FrameDecoder.received: the scratch buffer overlaps the frame being \
                         received",
                    ));
                }
            }
            self.inner.feed(data);
        }
        self.frames(py)
    }

    /// Every frame now complete (see `held`).
    fn take<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.frames(py)
    }

    /// Whether a complete frame waits for a receive window's buffer to be released.
    #[getter]
    fn held(&self) -> bool {
        self.inner.holds_direct_frame() && self.windows.exported()
    }

    #[getter]
    fn buffered(&self) -> usize {
        self.inner.buffered()
    }

    #[getter]
    fn max_frame_size(&self) -> usize {
        self.inner.max_frame_size()
    }
}

fn unknown_api(api_key: i16) -> DecodeError {
    DecodeError::UnknownApiKey { api_key }
}

/// Kafka's murmur2 hash of a record key (the Java client's `Utils.murmur2`), as a signed int.
#[pyfunction]
fn murmur2(data: &[u8]) -> i32 {
    crate::hash::murmur2(data)
}

/// Encode a request frame (size prefix included) from a dict of the request's fields.
#[pyfunction]
#[pyo3(signature = (api_key, api_version, correlation_id, client_id, body))]
fn encode_request<'py>(
    py: Python<'py>,
    api_key: i16,
    api_version: i16,
    correlation_id: i32,
    client_id: Option<&str>,
    body: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    with_api!(api_key, A => {
        encode_request_as::<A>(py, api_version, correlation_id, client_id, body)
    }, else Err(errors::decode_error(py, unknown_api(api_key))))
}

/// `A`'s request frame from a dict of its fields.
fn encode_request_as<'py, A: messages::Api>(
    py: Python<'py>,
    api_version: i16,
    correlation_id: i32,
    client_id: Option<&str>,
    body: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let request: A::Request = depythonize(body).map_err(|e| errors::shape_error(A::NAME, e))?;
    let frame = messages::encode_request::<A>(api_version, correlation_id, client_id, &request)
        .map_err(|e| errors::decode_error(py, e))?;
    Ok(PyBytes::new(py, &frame))
}

/// A Produce request frame (size prefix included) from a dict of the request's fields, each
/// record batch copied once, from its `bytes` into the frame (`produce_frame`). A dict of
/// another shape than the producer's is encoded (or refused) as `encode_request` does.
#[pyfunction]
#[pyo3(signature = (api_version, correlation_id, client_id, body))]
fn encode_produce_request<'py>(
    py: Python<'py>,
    api_version: i16,
    correlation_id: i32,
    client_id: Option<&str>,
    body: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    if let Some(frame) = produce_frame::encode(py, api_version, correlation_id, client_id, body)? {
        return Ok(frame);
    }
    encode_request_as::<messages::produce::Produce>(
        py,
        api_version,
        correlation_id,
        client_id,
        body,
    )
}

/// Decode a response frame (without size prefix) into (correlation_id, dict of fields).
#[pyfunction]
fn decode_response<'py>(
    py: Python<'py>,
    api_key: i16,
    api_version: i16,
    frame: &Bound<'py, PyAny>,
) -> PyResult<(i32, Bound<'py, PyAny>)> {
    let frame = as_bytes(frame)?;
    with_api!(api_key, A => {
        let (corr, response) = messages::decode_response::<A>(api_version, frame)
            .map_err(|e| errors::decode_error(py, e))?;
        let value = pythonize(py, &response).map_err(|e| errors::shape_error(A::NAME, e))?;
        Ok((corr, value))
    }, else Err(errors::decode_error(py, unknown_api(api_key))))
}

/// Decode a Fetch response frame (without size prefix) into (correlation_id, dict of fields)
/// whose partitions' `records` are `SharedBytes` ranges of the received frame (no copy), or of
/// one copy of it when the frame is plain `bytes`.
#[pyfunction]
fn decode_fetch_response<'py>(
    py: Python<'py>,
    api_version: i16,
    frame: &Bound<'py, PyAny>,
) -> PyResult<(i32, Bound<'py, PyAny>)> {
    decode_records_in_frame::<messages::fetch::Fetch>(py, api_version, frame)
}

/// `decode_fetch_response` for a ShareFetch response.
#[pyfunction]
fn decode_share_fetch_response<'py>(
    py: Python<'py>,
    api_version: i16,
    frame: &Bound<'py, PyAny>,
) -> PyResult<(i32, Bound<'py, PyAny>)> {
    decode_records_in_frame::<messages::share_fetch::ShareFetch>(py, api_version, frame)
}

fn decode_records_in_frame<'py, A: messages::fetch::RecordsInFrame>(
    py: Python<'py>,
    api_version: i16,
    frame: &Bound<'py, PyAny>,
) -> PyResult<(i32, Bound<'py, PyAny>)> {
    use messages::fetch::{decode_in_frame, take_records, FetchRecords};
    let (buffer, base) = match frame.cast::<SharedBytes>() {
        Ok(shared) => {
            let (buffer, base) = shared.get().shared();
            (Arc::clone(buffer), base)
        }
        Err(_) => (
            Arc::new(frame::FrameStorage::from_vec(as_bytes(frame)?.to_vec())),
            0,
        ),
    };
    let body = &buffer[base..base + as_bytes(frame)?.len()];
    let (corr, mut response) =
        decode_in_frame::<A>(api_version, body).map_err(|e| errors::decode_error(py, e))?;
    // The records go in as views once the rest is converted, partition by partition in the
    // order `take_records` lists them.
    let mut records = take_records::<A>(&mut response).into_iter();
    let value = pythonize(py, &response).map_err(|e| errors::shape_error(A::NAME, e))?;
    for topic in value.get_item("responses")?.try_iter()? {
        for part in topic?.get_item("partitions")?.try_iter()? {
            let part = part?;
            match records.next().flatten() {
                None => {}
                Some(FetchRecords::InFrame(span)) => part.set_item(
                    "records",
                    SharedBytes::view(Arc::clone(&buffer), base + span.start..base + span.end),
                )?,
                Some(FetchRecords::Bytes(bytes)) => {
                    part.set_item("records", PyBytes::new(py, &bytes))?
                }
            }
        }
    }
    Ok((corr, value))
}

/// Decode a request frame (without size prefix):
/// (api_key, api_version, correlation_id, client_id, dict of fields). For fake brokers in tests.
#[pyfunction]
fn decode_request<'py>(py: Python<'py>, frame: &[u8]) -> PyResult<Bound<'py, PyTuple>> {
    let mut r = Reader::new(frame);
    let header = RequestHeader::read_fixed(&mut r).map_err(|e| errors::decode_error(py, e))?;
    let body = with_api!(header.api_key, A => {
        let request = messages::decode_request_body::<A>(&mut r, header.api_version)
            .map_err(|e| errors::decode_error(py, e))?;
        pythonize(py, &request).map_err(|e| errors::shape_error(A::NAME, e))?
    }, else return Err(errors::decode_error(py, unknown_api(header.api_key))));
    (
        header.api_key,
        header.api_version,
        header.correlation_id,
        header.client_id,
        body,
    )
        .into_pyobject(py)
}

/// Encode a response frame (size prefix included). For fake brokers in tests.
#[pyfunction]
fn encode_response<'py>(
    py: Python<'py>,
    api_key: i16,
    api_version: i16,
    correlation_id: i32,
    body: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let frame = with_api!(api_key, A => {
        let response: <A as messages::Api>::Response =
            depythonize(body).map_err(|e| errors::shape_error(A::NAME, e))?;
        messages::encode_response::<A>(api_version, correlation_id, &response)
    }, else Err(unknown_api(api_key)))
    .map_err(|e| errors::decode_error(py, e))?;
    Ok(PyBytes::new(py, &frame))
}

/// The correlation id at the start of a response frame.
#[pyfunction]
fn peek_correlation_id(py: Python<'_>, frame: &Bound<'_, PyAny>) -> PyResult<i32> {
    peek(as_bytes(frame)?).map_err(|e| errors::decode_error(py, e))
}

/// True when an ApiVersions response frame is the broker's v0-layout UNSUPPORTED_VERSION reply.
#[pyfunction]
fn is_unsupported_version_reply(frame: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(messages::api_versions::is_unsupported_version_reply(
        as_bytes(frame)?,
    ))
}

/// api_key -> (name, min_version, max_version, first_flexible_version) for every API spoken.
#[pyfunction]
fn supported_apis(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for a in messages::supported_apis() {
        out.set_item(
            a.key,
            (a.name, a.min_version, a.max_version, a.first_flexible),
        )?;
    }
    Ok(out)
}

/// Kafka error code -> (Kafka's constant name, retriable) for every code the core knows.
#[pyfunction]
fn error_codes(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for code in ErrorCode::ALL {
        out.set_item(code.code(), (code.name(), code.is_retriable()))?;
    }
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    gil_cell::require_gil(m.py())?;
    // The package's one version: Cargo.toml's (maturin gives it to the wheel too).
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<FrameDecoder>()?;
    m.add_function(wrap_pyfunction!(arena::set_arena_cache, m)?)?;
    m.add_function(wrap_pyfunction!(arena::arena_cache_info, m)?)?;
    m.add_function(wrap_pyfunction!(heap::set_malloc_trim_threshold, m)?)?;
    m.add_class::<SharedBytes>()?;
    m.add_class::<buffers::ReceiveWindow>()?;
    m.add_class::<records::ConsumerRecord>()?;
    free_list::install::<records::ConsumerRecord>(m.py())?;
    records::install_members(m.py())?;
    m.add_class::<records::DecodedPartition>()?;
    m.add_class::<record_run::Generation>()?;
    m.add_class::<record_run::PollClock>()?;
    m.add_class::<record_run::RecordRun>()?;
    m.add_class::<record_run::RecordStream>()?;
    m.add_class::<record_run::Step>()?;
    m.add_class::<own_methods::GetOne>()?;
    m.add_class::<own_methods::SendMethod>()?;
    m.add_class::<send_step::SendStep>()?;
    shortcut_coroutine::install::<record_run::Step>(m.py())?;
    shortcut_coroutine::install::<send_step::SendStep>(m.py())?;
    m.add_function(wrap_pyfunction!(records::decode_records, m)?)?;
    m.add_function(wrap_pyfunction!(records::_records_direct_alloc, m)?)?;
    m.add_function(wrap_pyfunction!(records::split_acquired, m)?)?;
    m.add_function(wrap_pyfunction!(records::decode_held_records, m)?)?;
    m.add_function(wrap_pyfunction!(records::split_acquired_offsets, m)?)?;
    m.add_function(wrap_pyfunction!(records::encode_batch, m)?)?;
    m.add_class::<producer::BatchRecords>()?;
    m.add_class::<producer::RecordFuture>()?;
    free_list::install::<producer::RecordFuture>(m.py())?;
    m.add_function(wrap_pyfunction!(free_list::_free_lists, m)?)?;
    m.add_class::<producer::RecordFutureIter>()?;
    m.add_class::<open_batches::OpenBatches>()?;
    m.add_class::<open_batches::TopicBatches>()?;
    m.add_function(wrap_pyfunction!(records::records_end, m)?)?;
    m.add_function(wrap_pyfunction!(records::batch_position, m)?)?;
    m.add_function(wrap_pyfunction!(records::batch_last_offsets, m)?)?;
    m.add_class::<columns::ArrowColumns>()?;
    m.add_class::<arrow_input::ArrowRecordChunk>()?;
    m.add_function(wrap_pyfunction!(arrow_input::plan_arrow_records, m)?)?;
    m.add_function(wrap_pyfunction!(columns::decode_columns, m)?)?;
    m.add_function(wrap_pyfunction!(payload::decode_json, m)?)?;
    m.add_function(wrap_pyfunction!(payload::encode_json, m)?)?;
    m.add_class::<avro::AvroReader>()?;
    m.add_function(wrap_pyfunction!(avro::avro_schema_ids, m)?)?;
    m.add_function(wrap_pyfunction!(avro::encode_avro, m)?)?;
    m.add_function(wrap_pyfunction!(murmur2, m)?)?;
    m.add_function(wrap_pyfunction!(producer::record_size_bound, m)?)?;
    m.add_function(wrap_pyfunction!(encode_request, m)?)?;
    m.add_function(wrap_pyfunction!(encode_produce_request, m)?)?;
    m.add_function(wrap_pyfunction!(decode_response, m)?)?;
    m.add_function(wrap_pyfunction!(decode_fetch_response, m)?)?;
    m.add_function(wrap_pyfunction!(decode_share_fetch_response, m)?)?;
    m.add_function(wrap_pyfunction!(decode_request, m)?)?;
    m.add_function(wrap_pyfunction!(encode_response, m)?)?;
    m.add_function(wrap_pyfunction!(peek_correlation_id, m)?)?;
    m.add_function(wrap_pyfunction!(is_unsupported_version_reply, m)?)?;
    m.add_function(wrap_pyfunction!(supported_apis, m)?)?;
    m.add_function(wrap_pyfunction!(error_codes, m)?)?;
    m.add("DEFAULT_MAX_FRAME_SIZE", frame::DEFAULT_MAX_FRAME_SIZE)?;
    m.add("BATCH_HEADER_LEN", crate::records::batch::BATCH_HEADER_LEN)?;
    m.add(
        "DEFAULT_MAX_DECOMPRESSED_BATCH",
        crate::records::batch::DEFAULT_MAX_DECOMPRESSED_BATCH,
    )?;
    Ok(())
}
