"""``async for`` and ``getone()`` hand records out one at a time straight from the fetch
buffer's run (no poll per record): what a service sees must be what a poll per record would
give. Against the real broker: positions after every record (what a commit would store),
seek, pause and resume, a second iterator, ``getmany`` in between, stop, and the metrics."""

from __future__ import annotations

from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, TopicPartition

from .produce_util import produce_values, value_of

pytestmark = [pytest.mark.integration, pytest.mark.core]


async def test_each_record_moves_the_position_just_past_it(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=3)
    await produce_values(bootstrap_servers, topic, 3, 2000)
    tps = [TopicPartition(topic, p) for p in range(3)]
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign(tps)
        seen: dict[int, list[int]] = {p: [] for p in range(3)}
        async for record in consumer:
            tp = TopicPartition(topic, record.partition)
            # After each record, the position is the record's offset + 1: a commit here
            # stores exactly what was handed out, never past it.
            assert await consumer.position(tp) == record.offset + 1
            assert record.value == value_of(record.partition, record.offset)
            seen[record.partition].append(record.offset)
            if sum(map(len, seen.values())) == 6000:
                break
        assert all(offsets == list(range(2000)) for offsets in seen.values())
        total = [
            v
            for n, v in consumer.metrics().items()
            if n.name == "records-consumed-total" and len(n.tags) == 1
        ]
        # Counted per response: the one still being handed out is counted when it ends.
        assert len(total) == 1 and 0 < total[0] <= 6000
    assert [
        v
        for n, v in consumer.metrics().items()
        if n.name == "records-consumed-total" and len(n.tags) == 1
    ] == [6000]  # stop() ended the last run


async def test_seek_pause_resume_and_getmany_between_records(
    bootstrap_servers: str, topic: str
) -> None:
    await produce_values(bootstrap_servers, topic, 1, 3000)
    tp = TopicPartition(topic, 0)
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign([tp])
        it = aiter(consumer)
        assert (await anext(it)).offset == 0
        assert (await anext(it)).offset == 1
        consumer.seek(tp, 1500)  # honoured by the very next record
        assert (await anext(it)).offset == 1500
        batch = await consumer.getmany(tp, timeout_ms=5000, max_records=5)
        assert [r.offset for r in batch[tp]] == [1501, 1502, 1503, 1504, 1505]
        assert (await anext(it)).offset == 1506  # after what getmany took
        other = aiter(consumer)  # a second iterator shares the position
        assert (await anext(other)).offset == 1507
        assert (await anext(it)).offset == 1508
        assert (await consumer.getone()).offset == 1509
        consumer.pause(tp)
        assert await consumer.getmany(timeout_ms=300) == {}
        consumer.resume(tp)
        assert (await anext(it)).offset == 1510
        assert await consumer.position(tp) == 1511


async def test_stop_ends_an_iteration_after_the_record_in_hand(
    bootstrap_servers: str, topic: str
) -> None:
    await produce_values(bootstrap_servers, topic, 1, 500)
    tp = TopicPartition(topic, 0)
    consumer: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest"
    )
    await consumer.start()
    consumer.assign([tp])
    seen = []
    async for record in consumer:
        seen.append(record.offset)
        if record.offset == 10:
            await consumer.stop()  # buffered records stay unhanded: the loop ends
    assert seen == list(range(11))
