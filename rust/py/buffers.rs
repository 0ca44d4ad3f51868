//! Large byte strings (received frames, a partition's fetched records) kept in Rust memory and
//! handed to Python as `SharedBytes`, so they are neither copied into a `bytes` object nor
//! allocated by the C allocator on every fetch (which returns large blocks to the kernel on
//! free and makes the next fetch page-fault them back in).

use std::ffi::c_int;
use std::ops::Range;
use std::sync::Arc;

use pyo3::exceptions::{PyIndexError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PySlice};
use pyo3::{ffi, PyErr};

use crate::protocol::frame::FrameStorage;

/// Immutable bytes owned by the native module. ferrokafka's decoders read them in place;
/// `bytes(x)` copies them out, `len(x)` and `x[i:j]` work as for `bytes`.
/// A received frame and the `records` of its partitions share one buffer: each is a range of it.
#[pyclass(module = "ferrokafka._native", frozen)]
pub struct SharedBytes {
    buffer: Arc<FrameStorage>,
    range: Range<usize>,
}

impl SharedBytes {
    /// `range` of `buffer` (which must lie inside it).
    pub fn view(buffer: Arc<FrameStorage>, range: Range<usize>) -> Self {
        assert!(range.start <= range.end && range.end <= buffer.len());
        SharedBytes { buffer, range }
    }

    pub fn bytes(&self) -> &[u8] {
        &self.buffer[self.range.clone()]
    }

    /// The whole buffer this is a range of, and where the range starts in it.
    pub fn shared(&self) -> (&Arc<FrameStorage>, usize) {
        (&self.buffer, self.range.start)
    }
}

#[pymethods]
impl SharedBytes {
    fn __len__(&self) -> usize {
        self.bytes().len()
    }

    fn __bytes__<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.bytes())
    }

    fn __getitem__<'py>(&self, py: Python<'py>, index: &Bound<'py, PyAny>) -> PyResult<Py<PyAny>> {
        if let Ok(slice) = index.cast::<PySlice>() {
            let ind = slice.indices(self.bytes().len() as isize)?;
            let (start, stop, step) = (ind.start, ind.stop, ind.step);
            let picked: Vec<u8> = if step == 1 {
                self.bytes()[start as usize..stop.max(start) as usize].to_vec()
            } else {
                let mut out = Vec::with_capacity(ind.slicelength);
                let mut i = start;
                for _ in 0..ind.slicelength {
                    out.push(self.bytes()[i as usize]);
                    i += step;
                }
                out
            };
            return Ok(PyBytes::new(py, &picked).into_any().unbind());
        }
        let i: isize = index.extract()?;
        let n = self.bytes().len() as isize;
        let at = if i < 0 { i + n } else { i };
        if at < 0 || at >= n {
            return Err(PyIndexError::new_err("SharedBytes index out of range"));
        }
        Ok(self.bytes()[at as usize]
            .into_pyobject(py)?
            .into_any()
            .unbind())
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        as_bytes(other).is_ok_and(|b| b == self.bytes())
    }

    fn __repr__(&self) -> String {
        format!("<SharedBytes of {} bytes>", self.bytes().len())
    }
}

/// The bytes of a `bytes` or `SharedBytes` object, without copying.
pub fn as_bytes<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<&'a [u8]> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(b.as_bytes());
    }
    if let Ok(s) = obj.cast::<SharedBytes>() {
        return Ok(s.get().bytes());
    }
    Err(PyTypeError::new_err(format!(
        "expected bytes or SharedBytes, got {}",
        obj.get_type().name()?
    )))
}

/// The part of a frame still to be received, as a writable buffer: `socket.recv_into` (through
/// asyncio's `BufferedProtocol.get_buffer`) writes the bytes of a large response straight into
/// the storage its records will be read from. It keeps the storage alive while a view exists.
#[pyclass(module = "ferrokafka._native", frozen)]
pub struct ReceiveWindow {
    storage: Arc<FrameStorage>,
    range: Range<usize>,
}

impl ReceiveWindow {
    pub fn new(storage: Arc<FrameStorage>, range: Range<usize>) -> Self {
        assert!(range.start <= range.end && range.end <= storage.len());
        ReceiveWindow { storage, range }
    }
}

#[pymethods]
impl ReceiveWindow {
    fn __len__(&self) -> usize {
        self.range.len()
    }

    /// A writable, one-dimensional buffer of unsigned bytes over the window.
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        let me = slf.get();
        let ptr = me.storage.window_ptr(me.range.start);
        let len = me.range.len() as ffi::Py_ssize_t;
        // SAFETY: `view` is the caller's; the pointer and length describe memory that `slf`
        // (referenced by the view until it is released) keeps alive.
        let rc = unsafe { ffi::PyBuffer_FillInfo(view, slf.as_ptr(), ptr.cast(), len, 0, flags) };
        if rc == -1 {
            return Err(PyErr::fetch(slf.py()));
        }
        Ok(())
    }

    fn __repr__(&self) -> String {
        format!(
            "<ReceiveWindow of {} bytes at {} of a {}-byte frame>",
            self.range.len(),
            self.range.start,
            self.storage.len()
        )
    }
}
