"""``AIOKafkaConsumer.poll`` (kafka-python's batch poll) against a scripted peer: its dict,
``max_records``, ``timeout_ms=0``, ``update_offsets=False``, its argument errors, a poll loop
that never waits, and a poll cancelled in the tick its records arrive."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition
from ferrokafka.records import encode_batch

from .test_fetcher_edge_cases import TOPIC, Log, start

TP = TopicPartition(TOPIC, 0)


async def buffered(consumer: AIOKafkaConsumer[Any, Any]) -> None:
    """Until a fetched response waits in the consumer, so a poll has something to take."""
    fetcher = consumer._fetcher
    assert fetcher is not None
    for _ in range(500):
        if fetcher._buffer.queued(TP):
            return
        await asyncio.sleep(0.01)
    raise AssertionError("nothing was fetched")


async def test_poll_returns_records_by_partition_up_to_max_records() -> None:
    broker, consumer = await start(Log(records=30), max_poll_records=12)
    try:
        got = await consumer.poll(5000, max_records=7)  # timeout_ms positionally, as Java's
        assert list(got) == [TP]
        assert all(isinstance(r, ConsumerRecord) for r in got[TP])
        assert [r.offset for r in got[TP]] == list(range(7))
        # max_records defaults to max_poll_records.
        got = await consumer.poll(timeout_ms=5000)
        assert [r.offset for r in got[TP]] == list(range(7, 19))
        got = await consumer.poll(timeout_ms=5000)
        assert [r.offset for r in got[TP]] == list(range(19, 30))  # the rest of the response
        assert await consumer.position(TP) == 30
    finally:
        await consumer.stop()
        await broker.stop()


async def test_poll_with_timeout_0_returns_at_once_with_what_is_buffered() -> None:
    log = Log(records=0)
    broker, consumer = await start(log)
    try:
        # Nothing buffered: {} at once (the bound only detects a wait).
        assert await asyncio.wait_for(consumer.poll(), 1) == {}
        log.batches[0].append((0, encode_batch([(1, None, b"x", [])] * 3, base_offset=0)))
        await buffered(consumer)
        got = await asyncio.wait_for(consumer.poll(), 1)
        assert [r.offset for r in got[TP]] == [0, 1, 2]
        assert await asyncio.wait_for(consumer.poll(timeout_ms=0), 1) == {}
    finally:
        await consumer.stop()
        await broker.stop()


async def test_a_poll_loop_that_never_waits_still_lets_the_consumer_fetch() -> None:
    # `while True: await consumer.poll()` with the default timeout_ms=0: a poll that finds
    # nothing lets the event loop run once, or the fetcher would never run at all.
    broker, consumer = await start(Log(records=30))
    try:
        offsets: list[int] = []
        polls = 0
        deadline = time.monotonic() + 20
        while len(offsets) < 30:
            assert time.monotonic() < deadline, f"{len(offsets)} records in {polls} polls"
            for records in (await consumer.poll()).values():
                offsets.extend(r.offset for r in records)
            polls += 1
        assert offsets == list(range(30))
    finally:
        await consumer.stop()
        await broker.stop()


async def test_poll_without_updating_offsets_returns_the_same_records_again() -> None:
    broker, consumer = await start(Log(records=30))
    try:
        await buffered(consumer)
        first = await consumer.poll(timeout_ms=5000, max_records=4, update_offsets=False)
        assert [r.offset for r in first[TP]] == [0, 1, 2, 3]
        assert await consumer.position(TP) == 0
        first[TP].clear()  # the list is the application's
        again = await consumer.poll(timeout_ms=5000, max_records=4, update_offsets=False)
        assert [r.offset for r in again[TP]] == [0, 1, 2, 3]
        # A poll that updates the offsets takes the same records, then moves on.
        taken = await consumer.poll(timeout_ms=5000, max_records=4)
        assert [(r.offset, r.value) for r in taken[TP]] == [(r.offset, r.value) for r in again[TP]]
        assert await consumer.position(TP) == 4
        rest = await consumer.poll(timeout_ms=5000, update_offsets=False)
        assert [r.offset for r in rest[TP]] == list(range(4, 30))
        consumer.seek(TP, 20)  # a seek moves on too
        after = await consumer.poll(timeout_ms=5000, update_offsets=False)
        assert [r.offset for r in after[TP]] == list(range(20, 30))
        assert await consumer.position(TP) == 20
    finally:
        await consumer.stop()
        await broker.stop()


async def test_a_poll_cancelled_as_its_records_arrive_leaves_them_to_the_next() -> None:
    log = Log(records=0)
    broker, consumer = await start(log)
    fetcher = consumer._fetcher
    assert fetcher is not None
    try:
        waiting = asyncio.ensure_future(consumer.poll(timeout_ms=10_000))
        await asyncio.sleep(0.1)
        assert not waiting.done()
        add = fetcher._buffer.add

        def arrive_and_cancel(buf: Any) -> None:
            # The response is buffered and the poll cancelled in one tick: the wake-up and
            # the cancellation meet, and the cancellation wins.
            add(buf)
            waiting.cancel()

        fetcher._buffer.add = arrive_and_cancel  # type: ignore[method-assign]
        log.batches[0].append((0, encode_batch([(1, None, b"x", [])] * 5, base_offset=0)))
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(waiting, 10)
        fetcher._buffer.add = add  # type: ignore[method-assign]
        got = await consumer.poll(timeout_ms=5000)
        assert [r.offset for r in got[TP]] == [0, 1, 2, 3, 4]
    finally:
        await consumer.stop()
        await broker.stop()


async def test_poll_refuses_what_kafka_python_refuses() -> None:
    broker, consumer = await start(Log(records=0))
    try:
        with pytest.raises(ValueError, match="timeout_ms"):
            await consumer.poll(timeout_ms=-1)
        with pytest.raises(ValueError, match="max_records"):
            await consumer.poll(max_records=0)
        with pytest.raises(TypeError, match="max_records"):
            await consumer.poll(max_records="5")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="update_offsets"):
            await consumer.poll(update_offsets="false")  # type: ignore[arg-type]
    finally:
        await consumer.stop()
        await broker.stop()
