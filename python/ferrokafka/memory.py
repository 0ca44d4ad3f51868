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
"""

from __future__ import annotations

import os

from . import _native

DEFAULT_ARENAS = 64
"""Arenas (MiB) kept for reuse by default: about one large poll's worth of records."""

_chosen = False


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


def install_default() -> None:
    """Called by ``start()``: the default cache, unless the user or the environment chose."""
    if _chosen:
        return
    raw = os.environ.get("FERROKAFKA_ARENA_CACHE", "").strip()
    try:
        arenas = int(raw) if raw else DEFAULT_ARENAS
    except ValueError:
        raise ValueError(
            f"FERROKAFKA_ARENA_CACHE must be a number of arenas (MiB), got {raw!r}"
        ) from None
    set_arena_cache(max(arenas, 0))
