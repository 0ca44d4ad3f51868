"""The arena cache (ferrokafka.memory): freed small-object arenas are kept and reused."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


def _run(code: str, **env: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, **env},
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_freed_arenas_are_reused_and_released_on_request() -> None:
    # In a child: the cache is process-wide and this test must start without it.
    out = _run(
        """
        from ferrokafka import memory
        assert memory.arena_cache_info() == (0, 0, 0, 0)
        assert memory.set_arena_cache(16) == 0
        for _ in range(5):
            objs = [bytes(100) + bytes([i % 256]) for i in range(200_000)]  # ~30 MiB of arenas
            del objs
        limit, cached, hits, misses = memory.arena_cache_info()
        assert limit == 16 and 0 < cached <= 16, (limit, cached)
        assert hits > 0, "a second burst must reuse cached arenas"
        assert memory.set_arena_cache(0) == 16
        assert memory.arena_cache_info()[:2] == (0, 0)
        objs = [bytes(100) + bytes([i % 256]) for i in range(200_000)]
        print(len(objs), hits)
        """
    )
    assert out.startswith("200000 ")


_START_A_CONSUMER = """
import asyncio
import ctypes
from ferrokafka import AIOKafkaConsumer, memory

class ArenaAllocator(ctypes.Structure):
    _fields_ = [("ctx", ctypes.c_void_p), ("alloc", ctypes.c_void_p), ("free", ctypes.c_void_p)]

def arena_allocator():
    current = ArenaAllocator()
    ctypes.pythonapi.PyObject_GetArenaAllocator(ctypes.byref(current))
    return (current.ctx, current.alloc, current.free)

async def start_a_consumer():
    # start() applies what the environment asks for before it connects (and fails to, here).
    consumer = AIOKafkaConsumer(bootstrap_servers="127.0.0.1:1", request_timeout_ms=200)
    try:
        await asyncio.wait_for(consumer.start(), 0.5)
    except Exception:
        pass
    await consumer.stop()
"""


def test_a_consumer_leaves_the_arena_allocator_alone_unless_asked() -> None:
    code = (
        _START_A_CONSUMER
        + "before = arena_allocator()\n"
        + "asyncio.run(start_a_consumer())\n"
        + "print(arena_allocator() == before, memory.arena_cache_info()[0])"
    )
    assert _run(code) == "True 0", "the interpreter's own arena allocator after start and stop"
    assert _run(code, FERROKAFKA_ARENA_CACHE="3") == "False 3"
    assert _run(code, FERROKAFKA_ARENA_CACHE="0") == "True 0"
    tuned = _START_A_CONSUMER + "before = arena_allocator()\nmemory.tune()\n"
    assert _run(tuned + "print(arena_allocator() != before, memory.arena_cache_info()[0])") == (
        f"True {memory_defaults()[0]}"
    )


def memory_defaults() -> tuple[int, int]:
    from ferrokafka import memory

    return memory.DEFAULT_ARENAS, memory.DEFAULT_TRIM_THRESHOLD


_HEAP_AFTER_BURST = (
    _START_A_CONSUMER
    + """
import ctypes

class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"
    ).split()]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = MallInfo2

def heap_after_burst():
    values = [bytes(1000) + bytes([i % 256]) for i in range(20_000)]  # ~21 MB of C heap
    del values
    return libc.mallinfo2().arena >> 20

before = heap_after_burst()
asyncio.run(start_a_consumer())
print(before, heap_after_burst())
"""
)


@pytest.mark.skipif(
    __import__("platform").libc_ver()[0] != "glibc", reason="glibc's trim threshold only"
)
def test_a_consumer_leaves_glibcs_trim_threshold_alone_unless_asked() -> None:
    # glibc trims its heap after a burst by default, and still does after a consumer's start and
    # stop; asked to (the environment, or memory.tune()), it keeps the freed memory.
    before, after = map(int, _run(_HEAP_AFTER_BURST).split())
    assert before < 8 and after < 8, (before, after)
    asked = str(memory_defaults()[1])
    before, after = map(
        int, _run(_HEAP_AFTER_BURST, FERROKAFKA_MALLOC_TRIM_THRESHOLD=asked).split()
    )
    assert before < 8 and after >= 16, (before, after)
    tuned = _HEAP_AFTER_BURST.replace("asyncio.run(start_a_consumer())", "memory.tune()")
    before, after = map(int, _run(tuned).split())
    assert before < 8 and after >= 16, (before, after)


def test_bad_settings_are_refused() -> None:
    from ferrokafka import memory

    with pytest.raises(ValueError, match="arenas must be >= 0"):
        memory.set_arena_cache(-1)
    out = subprocess.run(
        [sys.executable, "-c", "from ferrokafka import memory; memory.apply_environment()"],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "FERROKAFKA_ARENA_CACHE": "lots"},
    )
    assert out.returncode != 0 and "FERROKAFKA_ARENA_CACHE must be a number" in out.stderr
    out = subprocess.run(
        [sys.executable, "-c", "from ferrokafka import memory; memory.apply_environment()"],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "FERROKAFKA_MALLOC_TRIM_THRESHOLD": "16M"},
    )
    assert out.returncode != 0
    assert "FERROKAFKA_MALLOC_TRIM_THRESHOLD must be a number of bytes, got '16M'" in out.stderr
    with pytest.raises(ValueError, match="nbytes must be >= 0"):
        memory.set_malloc_trim_threshold(-1)
    with pytest.raises(ValueError, match="trim_threshold must be >= 0"):
        memory.tune(trim_threshold=-1)


def test_native_memory_is_not_advised_into_huge_pages() -> None:
    # mimalloc madvises what it reserves into transparent huge pages unless built without
    # (the `no_thp` feature): its first small allocations then hold whole 2 MiB pages, 4 MB
    # of RSS from import on. smaps marks every range advised so with the "hg" VmFlag.
    out = _run(
        """
        import re
        from ferrokafka import _native
        from ferrokafka.records import encode_batch
        for codec in ("none", "lz4", "zstd"):
            raw = encode_batch([(1, b"k", b"v" * 5000, [])] * 500, compression=codec)
            assert _native.decode_columns(raw, "t", 0).records.num_rows == 500
        advised, mapping = [], None
        for line in open("/proc/self/smaps"):
            if re.match(r"[0-9a-f]+-[0-9a-f]+ ", line):
                mapping = line.split()[0]
            elif line.startswith("VmFlags:") and " hg" in f" {line.split(':', 1)[1]}":
                advised.append(mapping)
        print(advised)
        """
    )
    assert out == "[]", f"ranges advised into huge pages: {out}"


def test_the_native_modules_mimalloc_is_its_own() -> None:
    # The purge delay set at import is mimalloc's option of the copy linked into the extension:
    # no other library can reach it, because the module exports its init function only.
    import ctypes

    from ferrokafka import _native

    library = ctypes.CDLL(_native.__file__)
    assert hasattr(library, "PyInit__native"), "the lookup below would prove nothing"
    exported = [
        name for name in ("mi_option_set", "mi_malloc", "mi_free") if hasattr(library, name)
    ]
    assert exported == []


def test_importing_the_client_leaves_what_it_seldom_needs_unloaded() -> None:
    # urllib.request (http.client, the email package) is over 3 MB resident, OpenSSL's hash
    # bindings about 1 MB: only a Schema Registry lookup and a SCRAM login need them, so
    # importing ferrokafka must not load them.
    loaded = _run(
        """
        import sys
        import ferrokafka
        from ferrokafka import formats, sasl, schema_registry
        heavy = ("urllib.request", "http.client", "email", "hmac", "_hashlib")
        print(sorted(m for m in heavy if m in sys.modules))
        """
    )
    assert loaded == "[]"
