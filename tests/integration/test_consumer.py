"""AIOKafkaConsumer without group membership, against the real broker: assign, fetch, seek,
offsets, pause/resume, resets, commits of explicit offsets, the Arrow path."""

from __future__ import annotations

import asyncio
from typing import Any

import pyarrow as pa
import pytest
from ferrokafka import AIOKafkaConsumer, ConsumerRecord, OffsetAndTimestamp, TopicPartition
from ferrokafka import errors as Errors

from .produce_util import produce, produce_values, value_of

pytestmark = [pytest.mark.integration, pytest.mark.core]

T0 = 1_700_000_000_000


async def drain(
    consumer: AIOKafkaConsumer[Any, Any], expected: int, timeout: float = 20.0
) -> list[ConsumerRecord[Any, Any]]:
    """getmany until ``expected`` records arrived (fails on timeout)."""
    out: list[ConsumerRecord[Any, Any]] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while len(out) < expected:
        assert loop.time() < deadline, f"got {len(out)} of {expected} records"
        batch = await consumer.getmany(timeout_ms=500)
        for records in batch.values():
            out.extend(records)
    return out


async def test_assign_reads_every_record_in_order(bootstrap_servers: str, make_topic: Any) -> None:
    topic = make_topic(partitions=3)
    await produce_values(bootstrap_servers, topic, 3, 1200)
    tps = [TopicPartition(topic, p) for p in range(3)]
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign(tps)
        assert consumer.assignment() == set(tps)
        records = await drain(consumer, 3600)
        assert len(records) == 3600
        for p in range(3):
            mine = [r for r in records if r.partition == p]
            assert [r.offset for r in mine] == list(range(1200))
            assert [r.value for r in mine] == [value_of(p, i) for i in range(1200)]
            assert mine[5].key == b"k5" and mine[5].timestamp == T0 + 5
            assert mine[5].headers == (("h", b"5"),) or list(mine[5].headers) == [("h", b"5")]
            assert mine[5].topic == topic and mine[5].timestamp_type == 0
            tp = TopicPartition(topic, p)
            assert await consumer.position(tp) == 1200
            assert consumer.highwater(tp) == 1200
            assert consumer.last_stable_offset(tp) == 1200
            stamp = consumer.last_poll_timestamp(tp)
            assert stamp is not None and stamp > T0
        # Nothing more: an empty result after the timeout.
        assert await consumer.getmany(timeout_ms=200) == {}


async def wait_all_buffered(
    consumer: AIOKafkaConsumer[Any, Any], tps: list[TopicPartition]
) -> None:
    """Until every partition's first response has arrived, so one poll could take them all."""

    async def all_buffered() -> None:
        while not all(consumer._fetcher._buffer.queued(tp) for tp in tps):
            await asyncio.sleep(0.05)

    await asyncio.wait_for(all_buffered(), 20)


async def poll_everything(
    consumer: AIOKafkaConsumer[Any, Any], partitions: int, per_partition: int
) -> tuple[list[dict[TopicPartition, list[ConsumerRecord[Any, Any]]]], dict[int, list[int]]]:
    """``getmany()`` without ``max_records`` until ``per_partition`` records of each partition
    are read: every poll's result, and the offsets read by partition."""
    offsets: dict[int, list[int]] = {p: [] for p in range(partitions)}
    polls = []
    while sum(map(len, offsets.values())) < partitions * per_partition:
        batch = await consumer.getmany(timeout_ms=5000)
        assert batch
        polls.append(batch)
        for tp, records in batch.items():
            offsets[tp.partition].extend(r.offset for r in records)
    return polls, offsets


async def test_assigning_a_topic_created_after_start_reads_it(
    bootstrap_servers: str, make_topic: Any
) -> None:
    # The partition is missing from the consumer's metadata when it is assigned: the fetcher
    # looks it up and comes back to it (it used to wait for a wake-up that never came).
    first = make_topic(partitions=1)
    await produce_values(bootstrap_servers, first, 1, 5)
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign([TopicPartition(first, 0)])
        assert len(await drain(consumer, 5)) == 5
        later = make_topic(partitions=1, name=f"{first}-later")
        await produce_values(bootstrap_servers, later, 1, 7)
        consumer.assign([TopicPartition(later, 0)])
        consumer.seek(TopicPartition(later, 0), 0)  # a position at once: no reset to wait for
        got = await drain(consumer, 7, timeout=10.0)
        assert [r.offset for r in got] == list(range(7))


async def test_getmany_without_max_records_returns_bounded_fair_bursts(
    bootstrap_servers: str, make_topic: Any
) -> None:
    from ferrokafka.consumer.fetch_buffer import DRAIN_SOFT_RECORDS

    partitions, per_partition = 40, 1000
    topic = make_topic(partitions=partitions)
    await produce_values(bootstrap_servers, topic, partitions, per_partition)
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign(tps)
        await wait_all_buffered(consumer, tps)
        polls, offsets = await poll_everything(consumer, partitions, per_partition)
        sizes = [sum(map(len, batch.values())) for batch in polls]
        # Whole responses of at most 1000 records each until the soft limit is passed.
        assert max(sizes) < DRAIN_SOFT_RECORDS + per_partition
        assert len(sizes) >= partitions * per_partition // (DRAIN_SOFT_RECORDS + per_partition)
        assert offsets == {p: list(range(per_partition)) for p in range(partitions)}
        # An explicit max_records is honoured beyond the soft limit.
        await consumer.seek_to_beginning(*tps)
        await wait_all_buffered(consumer, tps)
        batch = await consumer.getmany(timeout_ms=5000, max_records=30_000)
        assert sum(map(len, batch.values())) == 30_000


async def test_getmany_without_max_records_stops_at_the_soft_byte_limit(
    bootstrap_servers: str, make_topic: Any
) -> None:
    from ferrokafka.consumer.fetch_buffer import DRAIN_SOFT_BYTES, DRAIN_SOFT_RECORDS

    # Each partition's response (~600 KB) is well under the record limit: bytes bind first.
    partitions, per_partition, size = 6, 300, 2000
    assert partitions * per_partition < DRAIN_SOFT_RECORDS
    response_bytes = per_partition * size
    topic = make_topic(partitions=partitions)
    for p in range(partitions):
        records = [(T0 + i, None, bytes([p]) * size, []) for i in range(per_partition)]
        await produce(bootstrap_servers, topic, p, records, batch_size=100)
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign(tps)
        await wait_all_buffered(consumer, tps)
        batches, seen = await poll_everything(consumer, partitions, per_partition)
        polls = [sum(len(r.value or b"") for rs in b.values() for r in rs) for b in batches]
        # Whole responses until the byte limit is reached: never one more than it takes.
        assert max(polls) < DRAIN_SOFT_BYTES + response_bytes
        assert max(polls) <= 2 * response_bytes  # 1 MiB: two of these responses, not all six
        assert len(polls) >= partitions * response_bytes // (DRAIN_SOFT_BYTES + response_bytes)
        assert seen == {p: list(range(per_partition)) for p in range(partitions)}


async def test_latest_reset_sees_only_new_records(bootstrap_servers: str, topic: str) -> None:
    await produce_values(bootstrap_servers, topic, 1, 10)
    tp = TopicPartition(topic, 0)
    async with AIOKafkaConsumer(bootstrap_servers=bootstrap_servers) as consumer:
        consumer.assign([tp])
        assert await consumer.position(tp) == 10
        await produce(bootstrap_servers, topic, 0, [(T0, None, b"new", [])])
        record = await asyncio.wait_for(consumer.getone(), 20)
        assert (record.offset, record.key, record.value) == (10, None, b"new")


async def test_getone_async_for_and_max_records(bootstrap_servers: str, topic: str) -> None:
    await produce_values(bootstrap_servers, topic, 1, 50)
    tp = TopicPartition(topic, 0)
    consumer: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest", max_poll_records=7
    )
    await consumer.start()
    try:
        consumer.assign([tp])
        first = await consumer.getone()
        assert first.offset == 0
        batch = await consumer.getmany(tp, timeout_ms=5000)
        assert [r.offset for r in batch[tp]] == list(range(1, 8))
        batch = await consumer.getmany(timeout_ms=5000, max_records=3)
        assert [r.offset for r in batch[tp]] == [8, 9, 10]
        seen = []
        async for record in consumer:
            seen.append(record.offset)
            if record.offset == 49:
                break
        assert seen == list(range(11, 50))
        assert await consumer.position(tp) == 50
    finally:
        await consumer.stop()
    with pytest.raises(Errors.ConsumerStoppedError):
        await consumer.getone()


async def test_stop_wakes_a_waiting_getone(bootstrap_servers: str, topic: str) -> None:
    consumer: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(bootstrap_servers=bootstrap_servers)
    await consumer.start()
    consumer.assign([TopicPartition(topic, 0)])
    waiter = asyncio.ensure_future(consumer.getone())
    await asyncio.sleep(0.5)
    await consumer.stop()
    with pytest.raises(Errors.ConsumerStoppedError):
        await asyncio.wait_for(waiter, 5)
    # A new async for on a stopped consumer raises, as aiokafka's does.
    with pytest.raises(Errors.ConsumerStoppedError):
        assert [r async for r in consumer] == []


async def test_seek_and_offsets(bootstrap_servers: str, topic: str) -> None:
    records = [(T0 + 1000 * i, None, b"%d" % i, []) for i in range(100)]
    await produce(bootstrap_servers, topic, 0, records, batch_size=10)
    tp = TopicPartition(topic, 0)
    async with AIOKafkaConsumer(bootstrap_servers=bootstrap_servers) as consumer:
        consumer.assign([tp])
        assert await consumer.beginning_offsets([tp]) == {tp: 0}
        assert await consumer.end_offsets([tp]) == {tp: 100}
        found = await consumer.offsets_for_times({tp: T0 + 41_500})
        assert found == {tp: OffsetAndTimestamp(42, T0 + 42_000)}
        assert await consumer.offsets_for_times({tp: T0 + 10**9}) == {tp: None}

        consumer.seek(tp, 37)  # in the middle of a batch: records before it are skipped
        assert await consumer.position(tp) == 37
        got = await drain(consumer, 63)
        assert [r.offset for r in got] == list(range(37, 100))

        await consumer.seek_to_beginning(tp)
        assert await consumer.position(tp) == 0
        assert (await consumer.getone()).offset == 0
        await consumer.seek_to_end()
        assert await consumer.position(tp) == 100

        with pytest.raises(ValueError, match="non-negative"):
            consumer.seek(tp, -1)
        with pytest.raises(Errors.IllegalStateError, match="not assigned"):
            consumer.seek(TopicPartition(topic, 9), 0)
        with pytest.raises(TypeError):
            await consumer.seek_to_beginning((topic, 0))  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            await consumer.offsets_for_times({tp: -5})


async def test_seek_while_records_are_buffered(bootstrap_servers: str, topic: str) -> None:
    await produce_values(bootstrap_servers, topic, 1, 2000)
    tp = TopicPartition(topic, 0)
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign([tp])
        first = await consumer.getmany(timeout_ms=5000, max_records=10)
        assert [r.offset for r in first[tp]] == list(range(10))
        consumer.seek(tp, 1500)
        rest = await drain(consumer, 500)
        assert [r.offset for r in rest] == list(range(1500, 2000))
        consumer.seek(tp, 3)
        again = await consumer.getmany(timeout_ms=5000, max_records=2)
        assert [r.offset for r in again[tp]] == [3, 4]


async def test_pause_and_resume(bootstrap_servers: str, make_topic: Any) -> None:
    topic = make_topic(partitions=2)
    await produce_values(bootstrap_servers, topic, 2, 30)
    a, b = TopicPartition(topic, 0), TopicPartition(topic, 1)
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign([a, b])
        consumer.pause(b)
        assert consumer.paused() == {b}
        got = await drain(consumer, 30)
        assert {r.partition for r in got} == {0}
        assert await consumer.getmany(timeout_ms=500) == {}
        assert await consumer.position(b) == 0
        consumer.resume(b)
        assert consumer.paused() == set()
        got = await drain(consumer, 30)
        assert {r.partition for r in got} == {1}
        assert [r.offset for r in got] == list(range(30))


async def test_paused_partition_holds_back_buffered_records(
    bootstrap_servers: str, topic: str
) -> None:
    await produce_values(bootstrap_servers, topic, 1, 100)
    tp = TopicPartition(topic, 0)
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign([tp])
        assert (await consumer.getmany(timeout_ms=5000, max_records=1))[tp][0].offset == 0
        consumer.pause(tp)  # the rest is (or soon is) buffered; none of it may come out
        assert await consumer.getmany(timeout_ms=700) == {}
        consumer.resume(tp)
        got = await drain(consumer, 99)
        assert [r.offset for r in got] == list(range(1, 100))


async def test_auto_offset_reset_none(bootstrap_servers: str, topic: str) -> None:
    await produce_values(bootstrap_servers, topic, 1, 5)
    tp = TopicPartition(topic, 0)
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="none"
    ) as consumer:
        consumer.assign([tp])
        with pytest.raises(Errors.NoOffsetForPartitionError, match="auto_offset_reset"):
            await consumer.getmany(timeout_ms=5000)
        with pytest.raises(Errors.NoOffsetForPartitionError):  # again, until a seek
            await consumer.getmany(timeout_ms=100)
        consumer.seek(tp, 2)
        got = await drain(consumer, 3)
        assert [r.offset for r in got] == [2, 3, 4]
        consumer.seek(tp, 1000)  # past the end: out of range, and no reset allowed
        with pytest.raises(Errors.OffsetOutOfRangeError, match="1000"):
            await drain(consumer, 1)
        consumer.seek(tp, 4)
        assert [r.offset for r in await drain(consumer, 1)] == [4]


async def test_out_of_range_resets_to_earliest(bootstrap_servers: str, topic: str) -> None:
    await produce_values(bootstrap_servers, topic, 1, 5)
    tp = TopicPartition(topic, 0)
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign([tp])
        consumer.seek(tp, 500)
        got = await drain(consumer, 5)
        assert [r.offset for r in got] == list(range(5))


async def test_deserializers(bootstrap_servers: str, topic: str) -> None:
    await produce(bootstrap_servers, topic, 0, [(T0, b"7", b'{"a": 1}', []), (T0, None, None, [])])
    tp = TopicPartition(topic, 0)
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers,
        auto_offset_reset="earliest",
        key_deserializer=lambda k: None if k is None else int(k),
        value_deserializer=lambda v: None if v is None else v.decode().upper(),
    ) as consumer:
        consumer.assign([tp])
        got = await drain(consumer, 2)
        assert [(r.key, r.value) for r in got] == [(7, '{"A": 1}'), (None, None)]
        assert got[0].serialized_key_size == 1 and got[1].serialized_value_size == -1


async def test_a_failing_deserializer_stops_the_position_at_its_record(
    bootstrap_servers: str, topic: str
) -> None:
    # One batch: offsets 0-9 fine, 10 fails to deserialize, 11-14 fine.
    values = [b"%d" % i for i in range(10)] + [b"bad"] + [b"%d" % i for i in range(11, 15)]
    await produce(bootstrap_servers, topic, 0, [(T0, None, v, []) for v in values])
    tp = TopicPartition(topic, 0)
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers,
        auto_offset_reset="earliest",
        value_deserializer=int,
    ) as consumer:
        consumer.assign([tp])
        got = await drain(consumer, 10)
        assert [(r.offset, r.value) for r in got] == [(i, i) for i in range(10)]
        assert await consumer.position(tp) == 10
        for _ in range(2):  # raised again at every poll, nothing skipped
            with pytest.raises(ValueError, match="invalid literal") as raised:
                await consumer.getmany(timeout_ms=5000)
            assert (raised.value.topic, raised.value.partition) == (topic, 0)  # type: ignore[attr-defined]
            assert raised.value.offset == 10  # type: ignore[attr-defined]
            assert await consumer.position(tp) == 10
        consumer.seek(tp, 11)
        rest = await drain(consumer, 4)
        assert [(r.offset, r.value) for r in rest] == [(i, i) for i in range(11, 15)]


async def test_arrow_path(bootstrap_servers: str, make_topic: Any) -> None:
    topic = make_topic(partitions=2)
    await produce_values(bootstrap_servers, topic, 2, 700, compression="zstd")
    tps = [TopicPartition(topic, p) for p in range(2)]
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign(tps)
        batches: dict[int, list[pa.RecordBatch]] = {0: [], 1: []}
        total = 0
        while total < 1400:
            got = await consumer.getmany_arrow(timeout_ms=5000, max_records=300)
            assert got, "no data"
            for tp, batch in got.items():
                assert isinstance(batch, pa.RecordBatch) and batch.num_rows <= 300
                batches[tp.partition].append(batch)
                total += batch.num_rows
        for p in range(2):
            table = pa.Table.from_batches(batches[p])
            assert table.column("offset").to_pylist() == list(range(700))
            assert table.column("value").to_pylist() == [value_of(p, i) for i in range(700)]
            assert set(table.column("topic").to_pylist()) == {topic}
            assert table.schema.field("timestamp").type == pa.timestamp("us", tz="UTC")
            assert await consumer.position(tps[p]) == 700
        # Mixing the two forms continues from the same position.
        await produce_values(bootstrap_servers, topic, 1, 3)
        got_records = await drain(consumer, 3)
        assert [r.offset for r in got_records] == [700, 701, 702]


async def test_topics_and_partitions(bootstrap_servers: str, make_topic: Any) -> None:
    topic = make_topic(partitions=4)
    async with AIOKafkaConsumer(bootstrap_servers=bootstrap_servers) as consumer:
        assert topic in await consumer.topics()
        assert consumer.partitions_for_topic(topic) == {0, 1, 2, 3}
        assert consumer.partitions_for_topic("no-such-topic-here") is None


async def test_subscribe_without_group_assigns_all_partitions(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=3)
    await produce_values(bootstrap_servers, topic, 3, 10)
    async with AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        assert consumer.subscription() == frozenset({topic})
        assert consumer.assignment() == {TopicPartition(topic, p) for p in range(3)}
        assert len(await drain(consumer, 30)) == 30
        with pytest.raises(Errors.IllegalStateError, match="mutually exclusive"):
            consumer.assign([TopicPartition(topic, 0)])


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("auto_offset_reset", "sometimes"),
        ("isolation_level", "dirty"),
        ("fetch_max_bytes", 0),
        ("max_partition_fetch_bytes", -1),
        ("max_poll_records", 0),
        ("fetch_max_wait_ms", "500"),
        ("request_timeout_ms", 0),
        ("key_deserializer", "not callable"),
        ("security_protocol", "SASL_SSL"),
        ("group_protocol", "modern"),
        ("partition_assignment_strategy", ()),
        ("check_crcs", "false"),
        ("enable_auto_commit", 0),
        ("exclude_internal_topics", None),
        ("session_timeout_ms", True),
    ],
)
def test_invalid_options_name_the_option(option: str, value: Any) -> None:
    with pytest.raises(ValueError, match=option.split("_ms")[0]):
        AIOKafkaConsumer(bootstrap_servers="localhost:1", **{option: value})


def test_unknown_option_is_refused() -> None:
    with pytest.raises(TypeError, match="fetch_max_wait"):
        AIOKafkaConsumer(fetch_max_wait=5)  # type: ignore[call-arg]
