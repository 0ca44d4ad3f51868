//! A cache in front of CPython's small-object arena allocator.
//!
//! CPython allocates small objects (a record, its key and value `bytes`) from 1 MiB arenas and
//! returns an arena to the kernel as soon as its last object is freed. A consumer that turns
//! over hundreds of thousands of records per poll therefore unmaps and maps tens of arenas per
//! poll, and page-faults every page of them back in: on a 2-core machine that was the largest
//! single cost of `getmany`. The cache keeps up to `limit` freed arenas mapped and hands them
//! back on the next arena allocation.
//!
//! It is safe to install at any time: every arena, cached or not, comes from the allocator that
//! was in place before, and goes back to it when it leaves the cache, so arenas allocated before
//! installation are freed exactly as they would have been.

use std::ffi::c_void;
use std::sync::Mutex;

use pyo3::ffi;
use pyo3::prelude::*;

struct Cache {
    /// The allocator that was in place when the cache was installed.
    inner: ffi::PyObjectArenaAllocator,
    /// Freed arenas kept mapped: (address, size).
    free: Vec<(usize, usize)>,
    limit: usize,
    hits: u64,
    misses: u64,
}

// SAFETY: the raw pointers in `inner` are CPython's own allocator functions and context, which
// CPython calls from whichever thread holds the GIL; the Mutex serialises our own access.
unsafe impl Send for Cache {}

static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

fn with_cache<T>(f: impl FnOnce(&mut Cache) -> T) -> Option<T> {
    let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    guard.as_mut().map(f)
}

extern "C" fn cached_alloc(_ctx: *mut c_void, size: usize) -> *mut c_void {
    let reuse = with_cache(|c| match c.free.iter().rposition(|&(_, s)| s == size) {
        Some(i) => {
            c.hits += 1;
            Ok(c.free.swap_remove(i).0 as *mut c_void)
        }
        None => {
            c.misses += 1;
            Err(c.inner)
        }
    });
    match reuse {
        Some(Ok(ptr)) => ptr,
        Some(Err(inner)) => match inner.alloc {
            // SAFETY: CPython's own arena allocator, called as CPython would call it.
            Some(alloc) => alloc(inner.ctx, size),
            None => std::ptr::null_mut(),
        },
        None => std::ptr::null_mut(),
    }
}

extern "C" fn cached_free(_ctx: *mut c_void, ptr: *mut c_void, size: usize) {
    let release = with_cache(|c| {
        if c.free.len() < c.limit {
            c.free.push((ptr as usize, size));
            None
        } else {
            Some(c.inner)
        }
    });
    if let Some(Some(inner)) = release {
        if let Some(free) = inner.free {
            free(inner.ctx, ptr, size);
        }
    }
}

/// Keep up to `limit` freed small-object arenas (1 MiB each in CPython 3.10+) mapped for
/// reuse instead of returning them to the kernel. The first call installs the cache; later
/// calls change the limit (0 releases every cached arena). Returns the previous limit.
#[pyfunction]
pub fn set_arena_cache(_py: Python<'_>, limit: usize) -> usize {
    let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if guard.is_none() {
        if limit == 0 {
            return 0;
        }
        let mut inner = ffi::PyObjectArenaAllocator {
            ctx: std::ptr::null_mut(),
            alloc: None,
            free: None,
        };
        let mut ours = ffi::PyObjectArenaAllocator {
            ctx: std::ptr::null_mut(),
            alloc: Some(cached_alloc),
            free: Some(cached_free),
        };
        // SAFETY: we hold the GIL (the `Python` token), as these functions require.
        unsafe {
            ffi::PyObject_GetArenaAllocator(&mut inner);
            ffi::PyObject_SetArenaAllocator(&mut ours);
        }
        *guard = Some(Cache {
            inner,
            free: Vec::new(),
            limit,
            hits: 0,
            misses: 0,
        });
        return 0;
    }
    let cache = guard.as_mut().expect("installed above");
    let previous = cache.limit;
    cache.limit = limit;
    let excess: Vec<(usize, usize)> = if cache.free.len() > limit {
        cache.free.split_off(limit)
    } else {
        Vec::new()
    };
    let inner = cache.inner;
    drop(guard);
    if let Some(free) = inner.free {
        for (ptr, size) in excess {
            free(inner.ctx, ptr as *mut c_void, size);
        }
    }
    previous
}

/// `(limit, cached, hits, misses)` of the arena cache; all zero when it is not installed.
#[pyfunction]
pub fn arena_cache_info() -> (usize, usize, u64, u64) {
    with_cache(|c| (c.limit, c.free.len(), c.hits, c.misses)).unwrap_or((0, 0, 0, 0))
}
