//! Large byte strings (received frames, a partition's fetched records) kept in Rust memory and
//! handed to Python as `SharedBytes`, so they are neither copied into a `bytes` object nor
//! allocated by the C allocator on every fetch (which returns large blocks to the kernel on
//! free and makes the next fetch page-fault them back in).

use pyo3::exceptions::{PyIndexError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PySlice};

/// Immutable bytes owned by the native module. ferrokafka's decoders read them in place;
/// `bytes(x)` copies them out, `len(x)` and `x[i:j]` work as for `bytes`.
#[pyclass(module = "ferrokafka._native", frozen)]
pub struct SharedBytes {
    data: Vec<u8>,
}

impl SharedBytes {
    pub fn new(data: Vec<u8>) -> Self {
        SharedBytes { data }
    }
}

#[pymethods]
impl SharedBytes {
    fn __len__(&self) -> usize {
        self.data.len()
    }

    fn __bytes__<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.data)
    }

    fn __getitem__<'py>(&self, py: Python<'py>, index: &Bound<'py, PyAny>) -> PyResult<Py<PyAny>> {
        if let Ok(slice) = index.cast::<PySlice>() {
            let ind = slice.indices(self.data.len() as isize)?;
            let (start, stop, step) = (ind.start, ind.stop, ind.step);
            let picked: Vec<u8> = if step == 1 {
                self.data[start as usize..stop.max(start) as usize].to_vec()
            } else {
                let mut out = Vec::with_capacity(ind.slicelength);
                let mut i = start;
                for _ in 0..ind.slicelength {
                    out.push(self.data[i as usize]);
                    i += step;
                }
                out
            };
            return Ok(PyBytes::new(py, &picked).into_any().unbind());
        }
        let i: isize = index.extract()?;
        let n = self.data.len() as isize;
        let at = if i < 0 { i + n } else { i };
        if at < 0 || at >= n {
            return Err(PyIndexError::new_err("SharedBytes index out of range"));
        }
        Ok(self.data[at as usize]
            .into_pyobject(py)?
            .into_any()
            .unbind())
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        as_bytes(other).is_ok_and(|b| b == self.data.as_slice())
    }

    fn __repr__(&self) -> String {
        format!("<SharedBytes of {} bytes>", self.data.len())
    }
}

/// The bytes of a `bytes` or `SharedBytes` object, without copying.
pub fn as_bytes<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<&'a [u8]> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(b.as_bytes());
    }
    if let Ok(s) = obj.cast::<SharedBytes>() {
        return Ok(&s.get().data);
    }
    Err(PyTypeError::new_err(format!(
        "expected bytes or SharedBytes, got {}",
        obj.get_type().name()?
    )))
}
