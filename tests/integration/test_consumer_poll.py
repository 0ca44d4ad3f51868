"""``await consumer.poll()``, kafka-python's and the Java client's batch poll, against the real
broker: getmany's dict under that name, ``max_records``, ``timeout_ms=0`` returning at once
with what is buffered, ``update_offsets=False`` returning the same records again, and a poll
loop under a group as a service ported from kafka-python writes it. (Cancelled polls are in
test_cancellation.py, with every other consumer call.)"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition

from .group_util import FAST
from .produce_util import produce_values, value_of
from .test_consumer import wait_all_buffered

pytestmark = [pytest.mark.integration, pytest.mark.core]


async def test_poll_returns_records_by_partition_up_to_max_records(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=2)
    await produce_values(bootstrap_servers, topic, 2, 100)
    tps = [TopicPartition(topic, p) for p in range(2)]
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest", max_poll_records=30
    ) as consumer:
        consumer.assign(tps)
        await wait_all_buffered(consumer, tps)
        got = await consumer.poll(timeout_ms=5000, max_records=150)
        assert set(got) == set(tps)
        assert all(isinstance(r, ConsumerRecord) for records in got.values() for r in records)
        assert sum(map(len, got.values())) == 150
        for tp, records in got.items():
            assert [r.offset for r in records] == list(range(len(records)))
            assert [r.value for r in records] == [value_of(tp.partition, r.offset) for r in records]
        # max_records defaults to max_poll_records.
        got = await consumer.poll(timeout_ms=5000)
        assert sum(map(len, got.values())) == 30


async def test_poll_with_timeout_0_returns_at_once_with_what_is_buffered(
    bootstrap_servers: str, topic: str
) -> None:
    tp = TopicPartition(topic, 0)
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign([tp])
        assert await consumer.position(tp) == 0
        # Nothing there: {} at once (the bound detects a wait, it measures nothing).
        assert await asyncio.wait_for(consumer.poll(), 1) == {}
        await produce_values(bootstrap_servers, topic, 1, 20)
        await wait_all_buffered(consumer, [tp])
        got = await asyncio.wait_for(consumer.poll(), 1)
        assert [r.offset for r in got[tp]] == list(range(20))
        assert await asyncio.wait_for(consumer.poll(timeout_ms=0), 1) == {}


async def test_poll_without_updating_offsets_returns_the_same_records_again(
    bootstrap_servers: str, topic: str
) -> None:
    await produce_values(bootstrap_servers, topic, 1, 50)
    tp = TopicPartition(topic, 0)
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers,
        group_id=f"g-{topic}",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    ) as consumer:
        consumer.assign([tp])
        first = await consumer.poll(timeout_ms=5000, max_records=10, update_offsets=False)
        assert [r.offset for r in first[tp]] == list(range(10))
        assert await consumer.position(tp) == 0
        again = await consumer.poll(timeout_ms=5000, max_records=10, update_offsets=False)
        assert [(r.offset, r.value) for r in again[tp]] == [(r.offset, r.value) for r in first[tp]]
        # commit() commits the position: records only looked at are not covered.
        await consumer.commit()
        assert await consumer.committed(tp) == 0
        taken = await consumer.poll(timeout_ms=5000, max_records=10)
        assert [r.offset for r in taken[tp]] == list(range(10))
        assert await consumer.position(tp) == 10
        rest = await consumer.poll(timeout_ms=5000, update_offsets=False)
        assert rest[tp][0].offset == 10 and await consumer.position(tp) == 10


async def test_a_poll_loop_under_a_group_reads_everything_once(
    bootstrap_servers: str, make_topic: Any
) -> None:
    # A service ported from kafka-python: subscribe, then `await consumer.poll()` with its
    # defaults (timeout_ms=0: it never waits) in a loop, committing as it goes.
    topic = make_topic(partitions=3)
    await produce_values(bootstrap_servers, topic, 3, 400)
    group = f"g-{topic}"
    consumer: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap_servers, group_id=group, **FAST
    )
    await consumer.start()
    try:
        seen: dict[int, list[int]] = {p: [] for p in range(3)}
        deadline = time.monotonic() + 30
        while sum(map(len, seen.values())) < 1200:
            assert time.monotonic() < deadline, {p: len(o) for p, o in seen.items()}
            batch = await consumer.poll()
            for tp, records in batch.items():
                seen[tp.partition].extend(r.offset for r in records)
            if batch:
                await consumer.commit()
        assert seen == {p: list(range(400)) for p in range(3)}
        assert await consumer.poll(timeout_ms=300) == {}
    finally:
        await consumer.stop()
    # The group's commits hold: a new member of the group has nothing left to read.
    async with AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap_servers, group_id=group, **FAST
    ) as later:
        for p in range(3):
            assert await later.committed(TopicPartition(topic, p)) == 400
        assert await later.poll(timeout_ms=500) == {}


async def two_responses_buffered(
    bootstrap_servers: str, topic: str
) -> tuple[AIOKafkaConsumer[Any, Any], TopicPartition]:
    """A started consumer of ``topic``'s partition 0 (six batches of 10 records, a response
    each) once it holds two responses and fetches nothing: as many as it buffers."""
    tp = TopicPartition(topic, 0)
    for _ in range(6):
        await produce_values(bootstrap_servers, topic, 1, 10)
    consumer: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers,
        auto_offset_reset="earliest",
        max_partition_fetch_bytes=1,  # a batch a response
    )
    await consumer.start()
    try:
        consumer.assign([tp])
        fetcher = consumer._fetcher
        assert fetcher is not None

        async def full() -> None:
            while not (fetcher.buffer.queued(tp) == 2 and not fetcher._in_flight):
                await asyncio.sleep(0.01)

        await asyncio.wait_for(full(), 20)
    except BaseException:
        await consumer.stop()
        raise
    return consumer, tp


async def read_on(
    consumer: AIOKafkaConsumer[Any, Any], tp: TopicPartition, got: list[int]
) -> list[int]:
    """``got`` and the offsets polled after it, through offset 59."""
    while len(got) < 50:
        got += [r.offset for r in (await consumer.getmany(tp, timeout_ms=5000)).get(tp, [])]
    return got


async def test_a_poll_sends_the_next_fetch_while_records_are_buffered(
    bootstrap_servers: str, topic: str
) -> None:
    """A poll that finds records buffered returns them without waiting, so the event loop
    does not run meanwhile: the fetch for the room the last poll made goes out from the poll
    itself, and comes in while the application works, not once the buffer is empty."""
    consumer, tp = await two_responses_buffered(bootstrap_servers, topic)
    fetcher = consumer._fetcher
    assert fetcher is not None
    try:
        first = await consumer.getmany(tp)
        assert [r.offset for r in first[tp]] == list(range(10))
        assert not fetcher._in_flight  # the loop has not run since: nothing sent yet
        second = await consumer.getmany(tp)
        assert [r.offset for r in second[tp]] == list(range(10, 20))
        assert tp in fetcher._in_flight  # sent by the poll that returned the second
        assert await read_on(consumer, tp, [r.offset for r in second[tp]]) == list(range(10, 60))
    finally:
        await consumer.stop()


async def test_a_poll_cancelled_while_it_sends_the_next_fetch_has_taken_nothing(
    bootstrap_servers: str, topic: str
) -> None:
    consumer, tp = await two_responses_buffered(bootstrap_servers, topic)
    fetcher = consumer._fetcher
    assert fetcher is not None
    try:
        await consumer.getmany(tp)  # room for a fetch: the fetcher is woken, not run yet
        me = asyncio.current_task()
        assert me is not None
        asyncio.get_running_loop().call_soon(me.cancel)  # on the loop's next turn
        with pytest.raises(asyncio.CancelledError):
            await consumer.getmany(tp)  # starts the fetch, gives the loop that turn
        if hasattr(me, "uncancel"):  # Python 3.11+
            me.uncancel()
        assert tp in fetcher._in_flight
        assert await consumer.position(tp) == 10  # nothing taken
        got = [r.offset for r in (await consumer.getmany(tp))[tp]]
        assert got == list(range(10, 20))
        # The fetch it started went on.
        assert await read_on(consumer, tp, got) == list(range(10, 60))
    finally:
        await consumer.stop()
