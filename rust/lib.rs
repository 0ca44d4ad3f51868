//! ferrokafka's native core: a sans-I/O Kafka protocol codec. Bytes in, values out; no sockets,
//! no threads, no event loop. The `python` feature adds the PyO3 layer (`py`), which only
//! re-exports what the core does.

pub mod hash;
pub mod protocol;
pub mod records;

#[cfg(feature = "python")]
mod py;

#[cfg(feature = "python")]
use pyo3::prelude::*;

/// In the extension, Rust's buffers (fetched records, decompressed batches, Arrow columns) come
/// from mimalloc, which keeps freed memory for reuse: glibc returns each large block to the
/// kernel on free, and a consumer then spends as much time in page faults as in decoding.
#[cfg(feature = "python")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(feature = "python")]
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    py::register(m)
}
