"""ferrokafka.arrow.read / read_async against the real broker: offset and time bounds, empty
ranges, deleted ranges by the data-loss rule, transactional topics, every codec, headers, and
a cancelled call that costs only itself."""

from __future__ import annotations

import asyncio
import datetime
import gc
import threading
import time
from typing import TYPE_CHECKING, Any

import pyarrow.compute as pc
import pytest
from ferrokafka import AIOKafkaProducer
from ferrokafka import errors as Errors
from ferrokafka.arrow import KafkaDataLossError, arrow_schema, read, read_async
from ferrokafka.structs import TopicPartition

from .produce_util import produce, produce_values, value_of
from .spark_data import delete_records

if TYPE_CHECKING:
    from ..conftest import TopicFactory

pytestmark = pytest.mark.integration

NOW = int(time.time() * 1000) - 3_600_000


def _rows(table: Any) -> dict[int, list[int]]:
    """Offsets read per partition, in the order read."""
    out: dict[int, list[int]] = {}
    for p, o in zip(
        table.column("partition").to_pylist(), table.column("offset").to_pylist(), strict=True
    ):
        out.setdefault(p, []).append(o)
    return out


def _topic(make_topic: TopicFactory, bootstrap: str, partitions: int, n: int, **kw: Any) -> str:
    topic = make_topic(partitions=partitions)
    asyncio.run(produce_values(bootstrap, topic, partitions, n, timestamp=NOW, **kw))
    return topic


def test_whole_topic_by_default_with_values_in_sparks_schema(
    bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = _topic(make_topic, bootstrap_servers, 3, 400)
    with read(bootstrap_servers, topic) as reader:
        assert reader.schema == arrow_schema(False)
        table = reader.read_all()
    assert _rows(table) == {p: list(range(400)) for p in range(3)}
    first = table.filter(pc.equal(table.column("offset"), 7)).sort_by("partition")
    assert first.column("value").to_pylist() == [value_of(p, 7) for p in range(3)]
    assert first.column("key").to_pylist() == [b"k7"] * 3
    assert first.column("topic").to_pylist() == [topic] * 3
    stamps = first.column("timestamp").to_pylist()
    assert stamps == [datetime.datetime.fromtimestamp((NOW + 7) / 1000, datetime.UTC)] * 3
    assert set(table.column("timestampType").to_pylist()) == {0}


def test_offset_bounds_per_partition_and_for_all(
    bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = _topic(make_topic, bootstrap_servers, 3, 100)
    table = read(
        bootstrap_servers,
        topic,
        start={0: 10, 1: "earliest", 2: "latest"},
        end={0: 25, 1: 3, 2: "latest"},
    ).read_all()
    assert _rows(table) == {0: list(range(10, 25)), 1: [0, 1, 2]}
    table = read(bootstrap_servers, topic, partitions=[2, 0], start=95).read_all()
    assert _rows(table) == {0: list(range(95, 100)), 2: list(range(95, 100))}


def test_time_bounds(bootstrap_servers: str, make_topic: TopicFactory) -> None:
    topic = _topic(make_topic, bootstrap_servers, 2, 100)
    # Record i of each partition has timestamp NOW + i: [NOW + 20, NOW + 30) is offsets 20-29.
    table = read(
        bootstrap_servers, topic, start_timestamp=NOW + 20, end_timestamp=NOW + 30
    ).read_all()
    assert _rows(table) == {0: list(range(20, 30)), 1: list(range(20, 30))}
    aware = datetime.datetime.fromtimestamp((NOW + 90) / 1000, datetime.UTC)
    table = read(bootstrap_servers, topic, partitions=[1], start_timestamp=aware).read_all()
    assert _rows(table) == {1: list(range(90, 100))}
    # Per partition; a time after every record is the end of the partition (empty).
    table = read(
        bootstrap_servers, topic, start_timestamp={0: NOW + 98, 1: NOW + 10_000}
    ).read_all()
    assert _rows(table) == {0: [98, 99]}


def test_empty_ranges_and_an_empty_topic(bootstrap_servers: str, make_topic: TopicFactory) -> None:
    topic = _topic(make_topic, bootstrap_servers, 2, 10)
    table = read(bootstrap_servers, topic, start=5, end=5).read_all()
    assert table.num_rows == 0 and table.schema == arrow_schema(False)
    empty = make_topic(partitions=2)
    assert read(bootstrap_servers, empty).read_all().num_rows == 0


def test_headers_column(bootstrap_servers: str, make_topic: TopicFactory) -> None:
    topic = _topic(make_topic, bootstrap_servers, 1, 5)
    table = read(bootstrap_servers, topic, include_headers=True).read_all()
    assert table.schema == arrow_schema(True)
    assert table.column("headers").to_pylist()[3] == [{"key": "h", "value": b"3"}]


@pytest.mark.parametrize("compression", ["gzip", "snappy", "lz4", "zstd"])
def test_every_codec(bootstrap_servers: str, make_topic: TopicFactory, compression: str) -> None:
    topic = _topic(make_topic, bootstrap_servers, 1, 700, compression=compression)
    table = read(bootstrap_servers, topic, start=50, end=650).read_all()
    assert _rows(table) == {0: list(range(50, 650))}
    assert table.column("value").to_pylist() == [value_of(0, i) for i in range(50, 650)]


def test_deleted_start_by_the_data_loss_rule(
    bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = _topic(make_topic, bootstrap_servers, 2, 100)
    strict = read(bootstrap_servers, topic, start=0)
    lenient = read(bootstrap_servers, topic, start=0, fail_on_data_loss=False)
    # The readers resolve their offsets at the first batch asked for; this one resolves now,
    # before the deletion, as a read that was already under way would have.
    started = read_async(bootstrap_servers, topic, start=0)

    async def resolve_then_read() -> list[Any]:
        async with started:
            await started.ranges()
            await asyncio.to_thread(
                delete_records, bootstrap_servers, {TopicPartition(topic, 1): 40}
            )
            return [batch async for batch in started]

    with pytest.raises(KafkaDataLossError) as lost:
        asyncio.run(resolve_then_read())
    assert f"TopicPartition: {topic}-1" in str(lost.value) and "[0, 40)" in str(lost.value)
    assert "fail_on_data_loss" in str(lost.value)
    # Resolved after the deletion, "start=0" is before the earliest offset of partition 1.
    with pytest.raises(KafkaDataLossError):
        strict.read_all()
    assert _rows(lenient.read_all()) == {0: list(range(100)), 1: list(range(40, 100))}


def test_a_deleted_topic_by_the_data_loss_rule(
    bootstrap_servers: str, make_topic: TopicFactory, kafka_broker: Any
) -> None:
    topic = _topic(make_topic, bootstrap_servers, 1, 30)

    async def go(fail: bool) -> list[Any]:
        async with read_async(
            bootstrap_servers, topic, fail_on_data_loss=fail, poll_timeout_ms=20_000
        ) as reader:
            await reader.ranges()
            if fail:
                await asyncio.to_thread(kafka_broker.delete_topic, topic)
            return [b async for b in reader]

    with pytest.raises(Errors.UnknownTopicOrPartitionError):
        read(bootstrap_servers, f"{topic}-nope").read_all()
    with pytest.raises(KafkaDataLossError) as lost:
        asyncio.run(go(True))
    assert f"{topic}-0 no longer exists" in str(lost.value)


def test_transactional_topic_in_both_isolation_levels(
    bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=1)

    async def write() -> None:
        async with AIOKafkaProducer(
            bootstrap_servers=bootstrap_servers, transactional_id=f"tx-{topic}"
        ) as producer:
            for n, commit in enumerate([True, False, True]):
                await producer.begin_transaction()
                for i in range(5):
                    await producer.send_and_wait(topic, b"t%d-%d" % (n, i), partition=0)
                await (producer.commit_transaction() if commit else producer.abort_transaction())

    asyncio.run(write())
    committed = read(bootstrap_servers, topic, isolation_level="read_committed").read_all()
    values = committed.column("value").to_pylist()
    assert values == [b"t0-%d" % i for i in range(5)] + [b"t2-%d" % i for i in range(5)]
    everything = read(bootstrap_servers, topic).read_all()
    # Markers are not rows: 15 records of 18 offsets.
    assert everything.num_rows == 15


def test_read_committed_ends_at_the_last_stable_offset(
    bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = _topic(make_topic, bootstrap_servers, 1, 20)

    async def go() -> None:
        producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap_servers, transactional_id=f"open-{topic}"
        )
        async with producer:
            await producer.begin_transaction()
            for i in range(10):
                await producer.send(topic, b"open-%d" % i, partition=0)
            await producer.flush()
            # 20-29 are written but not committed: read_committed stops at 20.
            async with read_async(
                bootstrap_servers, topic, isolation_level="read_committed"
            ) as reader:
                assert await reader.ranges() == {TopicPartition(topic, 0): (0, 20)}
                assert (await reader.read_all()).num_rows == 20
            with pytest.raises(ValueError, match="past the end of its log"):
                await read_async(
                    bootstrap_servers, topic, end=30, isolation_level="read_committed"
                ).ranges()
            assert (await read_async(bootstrap_servers, topic).read_all()).num_rows == 30
            await producer.abort_transaction()

    asyncio.run(go())


async def test_read_async_in_batches_and_read_all(
    bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=2)
    await produce_values(bootstrap_servers, topic, 2, 300, timestamp=NOW)
    async with read_async(bootstrap_servers, topic, start=100) as reader:
        # Two callers at once: one starts the consumer and resolves, the other waits for it.
        first, second = await asyncio.gather(reader.ranges(), reader.ranges())
        assert first == second
        assert await reader.ranges() == {
            TopicPartition(topic, 0): (100, 300),
            TopicPartition(topic, 1): (100, 300),
        }
        table = await reader.read_all()
    assert _rows(table) == {0: list(range(100, 300)), 1: list(range(100, 300))}
    # A read whose records arrive in several fetches hands out several batches.
    async with read_async(
        bootstrap_servers, topic, partitions=[0], max_partition_fetch_bytes=2048
    ) as reader:
        batches = [batch async for batch in reader]
    # Each batch is one partition's, in offset order.
    assert [o for b in batches for o in b.column("offset").to_pylist()] == list(range(300))


async def test_a_cancelled_call_costs_only_itself(
    bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=2)
    await produce_values(bootstrap_servers, topic, 2, 2000, timestamp=NOW)
    async with read_async(bootstrap_servers, topic, max_partition_fetch_bytes=4096) as reader:
        offsets: dict[int, list[int]] = {0: [], 1: []}
        cancels = 0
        it = reader.__aiter__()
        while True:
            task = asyncio.ensure_future(it.__anext__())
            # Cancel every other call at once, or after a few loop turns (mid-fetch).
            if cancels < 30 and len(offsets[0]) % 2 == 0:
                for _ in range(cancels % 4):
                    await asyncio.sleep(0)
                task.cancel()
            try:
                batch = await task
            except asyncio.CancelledError:
                cancels += 1
                continue
            except StopAsyncIteration:
                break
            for p, o in zip(
                batch.column("partition").to_pylist(),
                batch.column("offset").to_pylist(),
                strict=True,
            ):
                offsets[p].append(o)
    assert cancels >= 10
    assert offsets == {0: list(range(2000)), 1: list(range(2000))}


def test_dropping_the_reader_early_ends_its_thread(
    bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = _topic(make_topic, bootstrap_servers, 1, 2000)
    reader = read(bootstrap_servers, topic, max_partition_fetch_bytes=2048)
    first = reader.read_next_batch()
    assert first.num_rows > 0
    assert any(t.name == "ferrokafka-arrow-read" for t in threading.enumerate())
    # pyarrow's close() keeps the iterator; dropping the reader ends the read.
    del reader
    gc.collect()
    deadline = time.monotonic() + 15
    while any(t.name == "ferrokafka-arrow-read" for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the read's thread outlived the closed reader"
        time.sleep(0.05)


def test_bad_bounds_against_the_topic_are_typed_errors(
    bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = _topic(make_topic, bootstrap_servers, 2, 10)
    with pytest.raises(Errors.UnknownTopicOrPartitionError, match="no partition 5"):
        read(bootstrap_servers, topic, partitions=[0, 5]).read_all()
    with pytest.raises(ValueError, match=f"end offset 11 of {topic}-0 is past the end"):
        read(bootstrap_servers, topic, end=11).read_all()
    with pytest.raises(ValueError, match=f"start offset 8 of {topic}-1 is after its end"):
        read(bootstrap_servers, topic, start=8, end={0: 9, 1: 7}).read_all()
    with pytest.raises(ValueError, match=r"start names partitions \[0\] but the read covers"):
        read(bootstrap_servers, topic, start={0: 1}).read_all()


def test_records_written_by_produce_keep_their_keys_and_nulls(
    bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=1)
    asyncio.run(
        produce(
            bootstrap_servers,
            topic,
            0,
            [(NOW, None, b"v0", []), (NOW, b"k1", None, []), (NOW, b"", b"", [])],
        )
    )
    table = read(bootstrap_servers, topic).read_all()
    assert table.column("key").to_pylist() == [None, b"k1", b""]
    assert table.column("value").to_pylist() == [b"v0", None, b""]
