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
from ferrokafka import AIOKafkaConsumer, memory

async def start_a_consumer():
    # start() installs the memory settings before it connects (and fails to, here).
    consumer = AIOKafkaConsumer(bootstrap_servers="127.0.0.1:1", request_timeout_ms=200)
    try:
        await asyncio.wait_for(consumer.start(), 0.5)
    except Exception:
        pass
    await consumer.stop()
"""


def test_consumer_start_installs_the_default_unless_told_otherwise() -> None:
    code = (
        _START_A_CONSUMER + "asyncio.run(start_a_consumer())\nprint(memory.arena_cache_info()[0])"
    )
    assert _run(code) == "64"
    assert _run(code, FERROKAFKA_ARENA_CACHE="3") == "3"
    assert _run(code, FERROKAFKA_ARENA_CACHE="0") == "0"


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
def test_start_keeps_freed_c_heap_for_the_next_poll() -> None:
    # glibc trims its heap after the burst by default; after start() it keeps the freed memory.
    before, after = map(int, _run(_HEAP_AFTER_BURST).split())
    assert before < 8 and after >= 16, (before, after)
    before, after = map(int, _run(_HEAP_AFTER_BURST, FERROKAFKA_MALLOC_TRIM_THRESHOLD="0").split())
    assert before < 8 and after < 8, (before, after)


def test_bad_settings_are_refused() -> None:
    from ferrokafka import memory

    with pytest.raises(ValueError, match="arenas must be >= 0"):
        memory.set_arena_cache(-1)
    out = subprocess.run(
        [sys.executable, "-c", "from ferrokafka import memory; memory.install_default()"],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "FERROKAFKA_ARENA_CACHE": "lots"},
    )
    assert out.returncode != 0 and "FERROKAFKA_ARENA_CACHE must be a number" in out.stderr
    out = subprocess.run(
        [sys.executable, "-c", "from ferrokafka import memory; memory.install_default()"],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "FERROKAFKA_MALLOC_TRIM_THRESHOLD": "16M"},
    )
    assert out.returncode != 0
    assert "FERROKAFKA_MALLOC_TRIM_THRESHOLD must be a number of bytes, got '16M'" in out.stderr
    with pytest.raises(ValueError, match="nbytes must be >= 0"):
        memory.set_malloc_trim_threshold(-1)


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
