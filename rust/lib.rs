//! ferrokafka's native core: a sans-I/O Kafka protocol codec. Bytes in, values out; no sockets,
//! no threads, no event loop. The `python` feature adds the PyO3 layer (`py`): the conversion
//! between Python values and the core's, and the objects that exist only for Python (see its
//! module documentation).

pub mod hash;
pub mod payload;
pub mod protocol;
pub mod records;

#[cfg(feature = "python")]
mod py;

#[cfg(feature = "python")]
use pyo3::prelude::*;

/// In the extension, Rust's buffers (fetched records, decompressed batches, Arrow columns) come
/// from mimalloc, which keeps freed memory for reuse: glibc returns each large block to the
/// kernel on free, and a consumer then page-faults its buffers back in on every poll (figures:
/// benches/README.md, *Consuming from a local broker*).
#[cfg(feature = "python")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc gives freed memory back to the kernel 10 ms after it is freed, and a consumer frees
/// and reallocates its frames and Arrow buffers every poll: each poll page-faulted them back in.
/// One second keeps them for the next poll. This mimalloc is linked into the extension and none
/// of its symbols are exported (the module exports `PyInit__native` only), so the setting governs
/// ferrokafka's own heap and no other library's. `MIMALLOC_PURGE_DELAY` in the environment still
/// decides when it is set.
#[cfg(feature = "python")]
fn keep_freed_memory_for_reuse() {
    // `mi_option_purge_delay` in mimalloc's option enum (v2 and v3); libmimalloc-sys does not
    // name it.
    const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: setting an option is allowed at any time; it only changes when purges happen.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 1000) };
    }
}

/// `gil_used = true`: on a free-threaded interpreter (3.13t and later) CPython keeps the GIL on
/// while this module is loaded. The module's objects (frame and record decoders, batch builders,
/// `RecordFuture`, the arena cache) keep per-object state that nothing has exercised from two
/// threads at once, and no free-threaded interpreter has run the tests; PyO3's default would
/// declare the module safe without the GIL. The per-record classes go further and rely on the
/// GIL for their state (`py::gil_cell`): the module does not load where it is forced off.
#[cfg(feature = "python")]
#[pymodule(gil_used = true)]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    keep_freed_memory_for_reuse();
    py::register(m)
}
