"""The fault proxy of the test tooling against a local echo server: it forwards both ways, and
each fault does what it says (only lower bounds on time are asserted: a slow machine may take
longer, never shorter)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
from ferrokafka.testing.faults import FaultProxy


@pytest.fixture
async def proxy() -> AsyncIterator[FaultProxy]:
    handlers: set[asyncio.Task[None]] = set()

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        handlers.add(task)
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    fault_proxy = FaultProxy(("127.0.0.1", port)).start()
    try:
        yield fault_proxy
    finally:
        fault_proxy.stop()  # resets every connection: each handler sees its end
        server.close()
        await asyncio.wait_for(asyncio.gather(*handlers, return_exceptions=True), 10)


async def _open(proxy: FaultProxy) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", proxy.port)


async def _round_trip(proxy: FaultProxy, payload: bytes, timeout: float = 10) -> bytes:
    reader, writer = await _open(proxy)
    try:
        writer.write(payload)
        return await asyncio.wait_for(reader.readexactly(len(payload)), timeout)
    finally:
        writer.close()


async def test_forwards_both_ways(proxy: FaultProxy) -> None:
    payload = bytes(range(256)) * 1000
    assert await _round_trip(proxy, payload) == payload
    assert proxy.accepted == 1
    assert proxy.forwarded_bytes == len(payload)


async def test_latency_holds_every_chunk_each_way(proxy: FaultProxy) -> None:
    proxy.delay(100, jitter_ms=20)
    began = time.monotonic()
    assert await _round_trip(proxy, b"ping") == b"ping"
    assert time.monotonic() - began >= 0.2
    proxy.heal()
    assert proxy.faults.latency_s == 0


async def test_bandwidth_limit(proxy: FaultProxy) -> None:
    proxy.limit(200_000)
    payload = b"x" * 400_000
    began = time.monotonic()
    assert await _round_trip(proxy, payload, timeout=30) == payload
    # 400 kB each way at 200 kB/s, the two ways overlapping: at least ~2 s (first chunk free).
    assert time.monotonic() - began >= 1.5


async def test_black_hole_holds_until_healed(proxy: FaultProxy) -> None:
    reader, writer = await _open(proxy)
    writer.write(b"first")
    assert await asyncio.wait_for(reader.readexactly(5), 5) == b"first"
    proxy.black_hole()
    writer.write(b"held")
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(reader.readexactly(4), 0.5)
    assert proxy.connections == 1  # open, answering nothing
    proxy.heal()
    assert await asyncio.wait_for(reader.readexactly(4), 5) == b"held"
    writer.close()


async def test_refuse_resets_new_connections_until_healed(proxy: FaultProxy) -> None:
    proxy.refuse()
    with pytest.raises((ConnectionError, asyncio.IncompleteReadError)):
        # The reset may come before or after the connect call returns.
        reader, writer = await _open(proxy)
        try:
            writer.write(b"hello")
            await asyncio.wait_for(reader.readexactly(5), 5)
        finally:
            writer.close()
    assert proxy.refused == 1
    proxy.heal()
    assert await _round_trip(proxy, b"hello") == b"hello"


async def test_cut_now_resets_open_connections(proxy: FaultProxy) -> None:
    reader, writer = await _open(proxy)
    writer.write(b"a")
    await asyncio.wait_for(reader.readexactly(1), 5)
    proxy.cut()
    with pytest.raises((ConnectionError, asyncio.IncompleteReadError)):
        writer.write(b"b")
        await asyncio.wait_for(reader.readexactly(1), 5)
    writer.close()
    assert proxy.connections == 0
    assert await _round_trip(proxy, b"again") == b"again"  # new connections work


async def test_cut_mid_answer_forwards_exactly_the_bytes_asked(proxy: FaultProxy) -> None:
    reader, writer = await _open(proxy)
    proxy.cut(after_bytes=3)
    writer.write(b"0123456789")
    got = b""
    with pytest.raises((ConnectionError, asyncio.IncompleteReadError)) as info:
        got = await asyncio.wait_for(reader.readexactly(10), 5)
    if isinstance(info.value, asyncio.IncompleteReadError):
        got = info.value.partial
    assert got in (b"", b"012")  # an RST may discard what the kernel had not delivered yet
    writer.close()
    assert proxy.forwarded_bytes == 3
    assert proxy.faults.cut_after is None


def test_bad_values_are_refused() -> None:
    proxy = FaultProxy(("127.0.0.1", 9))
    with pytest.raises(ValueError, match="negative"):
        proxy.delay(-1)
    with pytest.raises(ValueError, match="positive"):
        proxy.limit(0)
