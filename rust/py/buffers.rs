//! Large byte strings (received frames, a partition's fetched records) kept in Rust memory and
//! handed to Python as `SharedBytes`, so they are neither copied into a `bytes` object nor
//! allocated by the C allocator on every fetch (which returns large blocks to the kernel on
//! free and makes the next fetch page-fault them back in).

use std::ffi::c_int;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use pyo3::exceptions::{PyBufferError, PyIndexError, PyTypeError};
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

/// What a decoder's receive windows share: how many buffers they have exported and not yet
/// released, and which window is the current one. Only the current window exports new
/// buffers, and a frame received through a window is handed out only once no buffer of any
/// window is exported, so nothing can write into a frame after it is handed out.
#[derive(Debug, Default)]
pub struct WindowState {
    exports: AtomicUsize,
    current: AtomicU64,
}

impl WindowState {
    /// Close every window handed out so far (their buffers already exported stay valid until
    /// released, but no new ones are made).
    pub fn close(&self) {
        self.current.fetch_add(1, Ordering::AcqRel);
    }

    /// Whether a buffer of some window is still exported.
    pub fn exported(&self) -> bool {
        self.exports.load(Ordering::Acquire) > 0
    }

    /// A new window over `range` of `storage`; earlier windows are closed.
    pub fn open(
        self: &Arc<Self>,
        storage: Arc<FrameStorage>,
        range: Range<usize>,
    ) -> ReceiveWindow {
        assert!(range.start <= range.end && range.end <= storage.len());
        let id = self.current.fetch_add(1, Ordering::AcqRel) + 1;
        ReceiveWindow {
            storage,
            range,
            state: Arc::clone(self),
            id,
        }
    }
}

/// The part of a frame still to be received, as a writable buffer: `socket.recv_into` (through
/// asyncio's `BufferedProtocol.get_buffer`) writes the bytes of a large response straight into
/// the storage its records will be read from. It keeps the storage alive while a view exists.
/// It exports a buffer only while it is its decoder's current window (see [`WindowState`]).
#[pyclass(module = "ferrokafka._native", frozen)]
pub struct ReceiveWindow {
    storage: Arc<FrameStorage>,
    range: Range<usize>,
    state: Arc<WindowState>,
    id: u64,
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
        if me.state.current.load(Ordering::Acquire) != me.id {
            return Err(PyBufferError::new_err(
                "this receive window is closed: its decoder has taken in bytes since",
            ));
        }
        let ptr = me.storage.window_ptr(me.range.start);
        let len = me.range.len() as ffi::Py_ssize_t;
        // SAFETY: `view` is the caller's; the pointer and length describe memory that `slf`
        // (referenced by the view until it is released) keeps alive.
        let rc = unsafe { ffi::PyBuffer_FillInfo(view, slf.as_ptr(), ptr.cast(), len, 0, flags) };
        if rc == -1 {
            return Err(PyErr::fetch(slf.py()));
        }
        me.state.exports.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    unsafe fn __releasebuffer__(slf: Bound<'_, Self>, _view: *mut ffi::Py_buffer) {
        slf.get().state.exports.fetch_sub(1, Ordering::AcqRel);
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
