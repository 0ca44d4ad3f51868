//! How much freed C heap glibc keeps mapped (`mallopt(M_TRIM_THRESHOLD)` and `M_TOP_PAD`).
//!
//! CPython allocates objects above 512 bytes (the `bytes` of a 1 KiB record value) with the C
//! allocator. glibc gives the top of its heap back to the kernel whenever more than 128 KiB there
//! is free, so a consumer that frees one poll's values and allocates the next poll's page-faults
//! the same memory in again, poll after poll (figures: benches/README.md, *Decoding*). With
//! both the trim threshold and the top pad at `bytes`, glibc trims only when more than that is
//! free at the top, and then keeps that much: up to `bytes` of freed heap stay mapped for the
//! next poll.

/// Keep up to `bytes` of freed heap mapped (glibc's trim threshold and top pad); returns
/// whether the C library took it (false where the C library is not glibc).
#[pyo3::pyfunction]
pub fn set_malloc_trim_threshold(bytes: usize) -> bool {
    imp::set(bytes)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod imp {
    use std::ffi::c_int;

    const M_TRIM_THRESHOLD: c_int = -1;
    const M_TOP_PAD: c_int = -2;

    extern "C" {
        fn mallopt(param: c_int, value: c_int) -> c_int;
    }

    pub fn set(bytes: usize) -> bool {
        let value = c_int::try_from(bytes).unwrap_or(c_int::MAX);
        // SAFETY: mallopt only records the setting; any value is accepted or refused by it.
        unsafe { mallopt(M_TRIM_THRESHOLD, value) == 1 && mallopt(M_TOP_PAD, value) == 1 }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod imp {
    pub fn set(_bytes: usize) -> bool {
        false
    }
}
