"""Process-wide memory tuning for consuming at speed: opt-in, off by default.

ferrokafka is a guest in the application's process: the settings here change how the whole
process allocates (every library in it, not only ferrokafka), so nothing here is done unless the
application asks, by calling :func:`tune` (or the functions it calls), or by setting the
environment variables below before a consumer starts.

CPython allocates small objects (a ``ConsumerRecord``, its key and value ``bytes``) from 1 MiB
arenas and hands an arena back to the kernel as soon as its last object is freed. A consumer that
turns over hundreds of thousands of records per poll maps, page-faults and unmaps tens of arenas
per poll. :func:`set_arena_cache` keeps up to ``arenas`` freed arenas mapped for reuse (a cache in
front of CPython's arena allocator, installed through ``PyObject_SetArenaAllocator``): the memory
stays with the process after a burst of records, up to that limit, and is reused by the next one.

Objects above 512 bytes (a 1 KiB value) come from the C allocator instead, and glibc gives the
top of its heap back to the kernel whenever 128 KiB there is free: each poll page-faults the
previous poll's memory back in. :func:`set_malloc_trim_threshold` makes glibc keep up to that
many bytes of freed heap (its ``M_TRIM_THRESHOLD`` and ``M_TOP_PAD``).

A consumer's ``start()`` applies ``FERROKAFKA_ARENA_CACHE`` (arenas) and
``FERROKAFKA_MALLOC_TRIM_THRESHOLD`` (bytes) when they are set to a number above 0, and
otherwise leaves the process as it found it.

ferrokafka's own buffers (frames, decompressed batches, Arrow columns) come from a mimalloc heap
private to the native module, which keeps freed memory for a second before returning it; that
affects no other library and needs no tuning.
"""

from __future__ import annotations

import os

from . import _native

DEFAULT_ARENAS = 64
"""Arenas (MiB) :func:`tune` keeps for reuse: about one large poll's worth of records."""

DEFAULT_TRIM_THRESHOLD = 16 << 20
"""Freed C heap (bytes) :func:`tune` keeps mapped for reuse: a few polls of 1 KiB values."""

_chosen = False
_trim_chosen = False


def set_arena_cache(arenas: int) -> int:
    """Keep up to ``arenas`` freed arenas (1 MiB each) mapped for reuse; ``0`` releases the
    cached ones and stops caching. Returns the previous limit."""
    global _chosen
    if arenas < 0:
        raise ValueError(f"arenas must be >= 0, got {arenas}")
    _chosen = True
    return _native.set_arena_cache(arenas)


def arena_cache_info() -> tuple[int, int, int, int]:
    """``(limit, cached, hits, misses)``: the limit, the arenas held now, and how many arena
    allocations were served from the cache or by CPython's allocator since it was installed."""
    return _native.arena_cache_info()


def set_malloc_trim_threshold(nbytes: int) -> bool:
    """Keep up to ``nbytes`` of freed C heap mapped (glibc's ``M_TRIM_THRESHOLD`` and
    ``M_TOP_PAD``). Returns whether the C library took it (False where it is not glibc)."""
    global _trim_chosen
    if nbytes < 0:
        raise ValueError(f"nbytes must be >= 0, got {nbytes}")
    _trim_chosen = True
    return _native.set_malloc_trim_threshold(nbytes)


def tune(arenas: int = DEFAULT_ARENAS, trim_threshold: int = DEFAULT_TRIM_THRESHOLD) -> None:
    """Tune the whole process's memory for a consumer reading at speed: keep up to ``arenas``
    freed CPython arenas (MiB) and ``trim_threshold`` bytes of freed C heap for reuse instead of
    returning them to the kernel after each poll. Process-wide: every library in the process
    allocates through them. ``tune(0, 0)`` stops the arena cache (glibc's trim threshold stays
    where it was set; ``0`` leaves it alone)."""
    if arenas < 0:
        raise ValueError(f"arenas must be >= 0, got {arenas}")
    if trim_threshold < 0:
        raise ValueError(f"trim_threshold must be >= 0, got {trim_threshold}")
    set_arena_cache(arenas)
    if trim_threshold:
        set_malloc_trim_threshold(trim_threshold)


def _env_int(name: str, unit: str) -> int:
    raw = os.environ.get(name, "").strip()
    try:
        return max(int(raw), 0) if raw else 0
    except ValueError:
        raise ValueError(f"{name} must be a number of {unit}, got {raw!r}") from None


def apply_environment() -> None:
    """Called by a consumer's ``start()``: the settings the environment asks for, if any, unless
    the application chose its own in this process."""
    arenas = _env_int("FERROKAFKA_ARENA_CACHE", "arenas (MiB)")
    trim = _env_int("FERROKAFKA_MALLOC_TRIM_THRESHOLD", "bytes")
    if arenas and not _chosen:
        set_arena_cache(arenas)
    if trim and not _trim_chosen:
        set_malloc_trim_threshold(trim)
