"""Process-wide memory tuning for consuming at speed.

CPython allocates small objects (a ``ConsumerRecord``, its key and value ``bytes``) from 1 MiB
arenas and hands an arena back to the kernel as soon as its last object is freed. A consumer that
turns over hundreds of thousands of records per poll would map, page-fault and unmap tens of
arenas per poll. ferrokafka keeps up to ``arenas`` freed arenas mapped for reuse (a cache in front
of CPython's arena allocator, installed through ``PyObject_SetArenaAllocator``): the memory stays
with the process after a burst of records, up to that limit, and is reused by the next burst.

A consumer's ``start()`` installs the cache with :data:`DEFAULT_ARENAS` unless
:func:`set_arena_cache` was called first or the environment variable
``FERROKAFKA_ARENA_CACHE`` gives another number of arenas (``0`` turns it off).

Objects above 512 bytes (a 1 KiB value) come from the C allocator instead, and glibc gives the
top of its heap back to the kernel whenever 128 KiB there is free: each poll would page-fault the
previous poll's memory back in. ``start()`` also makes glibc keep up to
:data:`DEFAULT_TRIM_THRESHOLD` of freed heap (:func:`set_malloc_trim_threshold`, or the
environment variable ``FERROKAFKA_MALLOC_TRIM_THRESHOLD`` in bytes; ``0`` leaves glibc's own
setting). Other C libraries are left alone.
"""

from __future__ import annotations

import os

from . import _native

DEFAULT_ARENAS = 64
"""Arenas (MiB) kept for reuse by default: about one large poll's worth of records."""

DEFAULT_TRIM_THRESHOLD = 16 << 20
"""Freed C heap (bytes) kept mapped for reuse by default: a few polls of 1 KiB values."""

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


def _env_int(name: str, default: int, unit: str) -> int:
    raw = os.environ.get(name, "").strip()
    try:
        return max(int(raw), 0) if raw else default
    except ValueError:
        raise ValueError(f"{name} must be a number of {unit}, got {raw!r}") from None


def install_default() -> None:
    """Called by ``start()``: the defaults, unless the user or the environment chose."""
    if not _chosen:
        set_arena_cache(_env_int("FERROKAFKA_ARENA_CACHE", DEFAULT_ARENAS, "arenas (MiB)"))
    if not _trim_chosen:
        trim = _env_int("FERROKAFKA_MALLOC_TRIM_THRESHOLD", DEFAULT_TRIM_THRESHOLD, "bytes")
        if trim:
            set_malloc_trim_threshold(trim)
