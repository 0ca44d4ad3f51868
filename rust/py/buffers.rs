//! Large byte strings (received frames, a partition's fetched records) kept in Rust memory and
//! handed to Python as `SharedBytes`, so they are neither copied into a `bytes` object nor
//! allocated by the C allocator on every fetch (which returns large blocks to the kernel on
//! free and makes the next fetch page-fault them back in).

use std::ops::Range;
use std::sync::Arc;

use pyo3::exceptions::{PyIndexError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PySlice};

/// Immutable bytes owned by the native module. ferrokafka's decoders read them in place;
/// `bytes(x)` copies them out, `len(x)` and `x[i:j]` work as for `bytes`.
/// A received frame and the `records` of its partitions share one buffer: each is a range of it.
#[pyclass(module = "ferrokafka._native", frozen)]
pub struct SharedBytes {
    buffer: Arc<Vec<u8>>,
    range: Range<usize>,
}

impl SharedBytes {
    pub fn new(data: Vec<u8>) -> Self {
        let range = 0..data.len();
        SharedBytes {
            buffer: Arc::new(data),
            range,
        }
    }

    /// `range` of `buffer` (which must lie inside it).
    pub fn view(buffer: Arc<Vec<u8>>, range: Range<usize>) -> Self {
        assert!(range.start <= range.end && range.end <= buffer.len());
        SharedBytes { buffer, range }
    }

    pub fn bytes(&self) -> &[u8] {
        &self.buffer[self.range.clone()]
    }

    /// The whole buffer this is a range of, and where the range starts in it.
    pub fn shared(&self) -> (&Arc<Vec<u8>>, usize) {
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
