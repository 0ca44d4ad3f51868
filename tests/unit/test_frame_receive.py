"""Receiving frames as asyncio's ``BufferedProtocol`` does: the rest of a large frame is received
straight into its own storage (``FrameDecoder.receive_window``), everything else through a scratch
buffer; any chunking gives exactly the frames that were sent, under asyncio and uvloop."""

from __future__ import annotations

import asyncio
import ctypes
import mmap
import random
import struct
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import pytest
import uvloop
from ferrokafka import _native
from ferrokafka import errors as Errors
from ferrokafka.conn import _FrameReceiver

T = TypeVar("T")

SIZES = [5, 100_000, 0, 70_000, 65_535, 65_536, 1, 300_000, 12]


def bodies(sizes: list[int] = SIZES) -> list[bytes]:
    return [bytes((i * 7 + j) % 251 for j in range(n)) for i, n in enumerate(sizes)]


def stream_of(frames: list[bytes]) -> bytes:
    return b"".join(struct.pack(">i", len(b)) + b for b in frames)


def receive(decoder: _native._FrameDecoder, stream: bytes, chunk: Callable[[], int]) -> list[bytes]:
    """What a buffered protocol does: ask for a buffer, write up to its length, report it."""
    scratch = bytearray(256 * 1024)
    got: list[bytes] = []
    windows = 0
    pos = 0
    while pos < len(stream):
        window = decoder.receive_window()
        buf = memoryview(scratch) if window is None else window
        n = min(len(buf), chunk(), len(stream) - pos)
        buf[:n] = stream[pos : pos + n]
        pos += n
        windows += window is not None
        got.extend(bytes(f) for f in decoder.received(n, window is not None, scratch))
        if window is not None:
            window.release()
            got.extend(bytes(f) for f in decoder.take())
    assert decoder.buffered == 0
    assert windows > 0, "no frame was received into its own storage"
    return got


@pytest.mark.parametrize("chunk", [1_000, 4_096, 65_536, 1 << 20])
def test_any_chunking_gives_the_frames_sent(chunk: int) -> None:
    frames = bodies()
    assert receive(_native._FrameDecoder(), stream_of(frames), lambda: chunk) == frames


def test_random_chunks_and_a_small_threshold() -> None:
    rng = random.Random(7)
    frames = bodies([rng.randrange(0, 5000) for _ in range(200)])
    decoder = _native._FrameDecoder(direct_min=1000)
    assert receive(decoder, stream_of(frames), lambda: rng.randrange(1, 9000)) == frames


def test_the_window_covers_only_the_rest_of_the_frame() -> None:
    decoder = _native._FrameDecoder()
    first = struct.pack(">i", 100_000) + b"x" * 10
    scratch = bytearray(256 * 1024)
    scratch[: len(first)] = first
    assert decoder.received(len(first), False, scratch) == []
    window = decoder.receive_window()
    assert window is not None and len(window) == 100_000 - 10
    assert not window.readonly
    size = len(window)
    window.release()
    with pytest.raises(ValueError, match="receive window"):
        decoder.received(size + 1, True, scratch)
    with pytest.raises(ValueError, match="262144-byte buffer"):
        _native._FrameDecoder().received(300_000, False, scratch)


def test_the_scratch_is_any_contiguous_byte_buffer() -> None:
    frame = struct.pack(">i", 3) + b"abc"
    scratch = mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE)
    scratch[: len(frame)] = frame
    assert [bytes(f) for f in _native._FrameDecoder().received(len(frame), False, scratch)] == [
        b"abc"
    ]
    strided = memoryview(bytearray(frame * 2))[::2]
    with pytest.raises(ValueError, match="received: the scratch buffer must be contiguous"):
        _native._FrameDecoder().received(4, False, strided)
    with pytest.raises(TypeError):
        _native._FrameDecoder().received(4, False, "not a buffer")  # type: ignore[arg-type]


def test_a_hostile_size_fails_before_any_window() -> None:
    decoder = _native._FrameDecoder(max_frame_size=1 << 20)
    scratch = bytearray(struct.pack(">i", 1 << 30))
    with pytest.raises(Errors.KafkaError, match="1073741824"):
        decoder.received(4, False, scratch)
    assert decoder.receive_window() is None


class _Collector:
    """The parts of ``Connection`` the protocol calls."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.lost = asyncio.Event()
        self.closed_with: BaseException | None = None

    def _on_frame(self, frame: Any) -> None:
        self.frames.append(bytes(frame))

    def close(self, exc: BaseException | None = None) -> None:
        self.closed_with = exc

    def _on_connection_lost(self, exc: Exception | None) -> None:
        self.lost.set()


async def _send_and_receive(frames: list[bytes], seed: int) -> list[bytes]:
    stream = stream_of(frames)
    rng = random.Random(seed)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        pos = 0
        while pos < len(stream):
            n = rng.choice([1, 3, 1000, 65_536, 200_000])
            writer.write(stream[pos : pos + n])
            pos += n
            await writer.drain()
            if rng.random() < 0.2:
                await asyncio.sleep(0)
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    collector = _Collector()
    loop = asyncio.get_running_loop()
    transport, _ = await loop.create_connection(
        lambda: _FrameReceiver(collector, 1 << 24),  # type: ignore[arg-type]
        "127.0.0.1",
        port,
    )
    await asyncio.wait_for(collector.lost.wait(), 30)
    transport.close()
    server.close()
    await server.wait_closed()
    assert collector.closed_with is None
    return collector.frames


def _run_on(factory: Callable[[], asyncio.AbstractEventLoop], main: Coroutine[Any, Any, T]) -> T:
    """``main`` on a new loop from ``factory`` (asyncio.Runner's loop_factory is 3.11+)."""
    loop = factory()
    try:
        return loop.run_until_complete(main)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_over_a_real_socket(loop: str) -> None:
    frames = bodies() * 3
    factory = uvloop.new_event_loop if loop == "uvloop" else asyncio.new_event_loop
    got = _run_on(factory, _send_and_receive(frames, seed=11))
    assert got == frames


def _resident_kib(address: int, size: int) -> int:
    """KiB of ``[address, address + size)`` in memory (present bits of /proc/self/pagemap)."""
    page = mmap.PAGESIZE
    first, last = address // page, (address + size - 1) // page
    with open("/proc/self/pagemap", "rb") as f:
        f.seek(first * 8)
        entries = struct.unpack(f"<{last - first + 1}Q", f.read((last - first + 1) * 8))
    return sum(1 for e in entries if e >> 63) * page // 1024


async def _small_responses(count: int) -> int:
    # Small frames, one per read: only the scratch buffer receives them.
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for i in range(count):
            writer.write(stream_of([bytes([i % 256]) * 100]))
            await writer.drain()
            await asyncio.sleep(0.001)
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    collector = _Collector()
    protocol = _FrameReceiver(collector, 1 << 24)  # type: ignore[arg-type]
    transport, _ = await asyncio.get_running_loop().create_connection(
        lambda: protocol, "127.0.0.1", server.sockets[0].getsockname()[1]
    )
    await asyncio.wait_for(collector.lost.wait(), 30)
    transport.close()
    server.close()
    await server.wait_closed()
    assert collector.frames == [bytes([i % 256]) * 100 for i in range(count)]
    scratch = ctypes.c_char.from_buffer(protocol._scratch)
    return _resident_kib(ctypes.addressof(scratch), len(protocol._scratch))


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_small_responses_keep_the_scratch_buffer_mostly_unmapped(loop: str) -> None:
    # The 256 KiB scratch costs RSS only for the pages received into: a connection that only
    # ever sees small responses (a producer's acks, a consumer at a low rate) keeps a few.
    factory = uvloop.new_event_loop if loop == "uvloop" else asyncio.new_event_loop
    resident = _run_on(factory, _small_responses(50))
    assert resident <= 16, f"{resident} KiB of the scratch buffer are resident"
