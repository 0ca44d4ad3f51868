"""``ferrokafka produce`` reads its input on a thread: when the lines stop being wanted (the
producer failed, Ctrl-C), the thread ends instead of waiting forever to hand over a chunk."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from typing import BinaryIO

from ferrokafka.cli import produce


def _write(fd: int, data: bytes) -> None:
    try:
        os.write(fd, data)
    except BrokenPipeError:  # the reader stopped early, as it should
        pass
    finally:
        os.close(fd)


def _piped(data: bytes) -> tuple[BinaryIO, threading.Thread]:
    """A pipe's read end, with a thread writing ``data`` into it."""
    read_end, write_end = os.pipe()
    writer = threading.Thread(target=_write, args=(write_end, data))
    writer.start()
    return open(read_end, "rb", buffering=0), writer


def _input_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "ferrokafka-produce-input"]


async def test_the_input_thread_ends_when_the_reader_stops_early() -> None:
    assert not _input_threads()
    # More than the hand-over queue holds, so the thread is waiting to hand over a chunk.
    source, writer = _piped(b"x" * (produce._CHUNK * 40))
    with source:
        chunks = produce._chunks(source)
        assert await anext(chunks)
        await asyncio.sleep(0.2)  # the queue fills up
        await chunks.aclose()
        deadline = time.monotonic() + 5
        while _input_threads() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert not _input_threads(), "the input thread still waits to hand over a chunk"
    writer.join(timeout=5)


async def test_every_byte_arrives_in_order_when_read_to_the_end() -> None:
    data = bytes(range(256)) * 2000
    source, writer = _piped(data)
    with source:
        got = b"".join([c async for c in produce._chunks(source)])
    writer.join(timeout=5)
    assert got == data
    deadline = time.monotonic() + 5
    while _input_threads() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not _input_threads()
