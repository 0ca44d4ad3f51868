"""``AIOKafkaProducer.send_arrow`` against the real broker: Arrow columns in Spark's Kafka-sink
names, produced in one call and read back exactly by ferrokafka's consumer and the Java one."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

import pyarrow as pa
import pytest
from ferrokafka import errors as Errors
from ferrokafka.consumer import AIOKafkaConsumer
from ferrokafka.partitioner import partition_for_key
from ferrokafka.producer import AIOKafkaProducer
from ferrokafka.structs import TopicPartition

from .java_util import read_java

pytestmark = [pytest.mark.integration]

HEADER_TYPE = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
N = 40
NOW_TOLERANCE_MS = 120_000

# (partition, timestamp, key, value, headers) as read back.
Read = tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]


def keys(n: int) -> list[bytes | None]:
    return [None if i % 4 == 3 else f"key-{i % 7}".encode() for i in range(n)]


def values(n: int) -> list[bytes | None]:
    return [
        None if i % 5 == 4 else (b"" if i % 6 == 5 else bytes([i % 256]) * (i * 3))
        for i in range(n)
    ]


def headers(n: int) -> list[list[dict[str, Any]] | None]:
    out: list[list[dict[str, Any]] | None] = []
    for i in range(n):
        if i % 3 == 2:
            out.append(None)
        elif i % 3 == 1:
            out.append([])
        else:
            out.append([{"key": "idx", "value": str(i).encode()}, {"key": "é", "value": None}])
    return out


def timestamps(n: int) -> list[int | None]:
    return [None if i % 8 == 7 else 1_700_000_000_000 + i * 1000 for i in range(n)]


def partitions(n: int, count: int) -> list[int | None]:
    return [None if i % 6 == 1 else i % count for i in range(n)]


def expected_headers(h: list[dict[str, Any]] | None) -> list[tuple[str, bytes | None]]:
    return [(e["key"], e["value"]) for e in h or []]


async def read_all(bootstrap_servers: str, topic: str, count: int, n: int) -> list[Read]:
    """Every record of the topic's ``count`` partitions, ``n`` expected."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest")
    await consumer.start()
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(count)])
        out: list[Read] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while len(out) < n and loop.time() < deadline:
            batches = await consumer.getmany(timeout_ms=500)
            for records in batches.values():
                out += [
                    (r.partition, r.timestamp, r.key, r.value, list(r.headers)) for r in records
                ]
        assert len(out) == n, f"read {len(out)} records, expected {n}"
        # Nothing more arrives.
        assert not any((await consumer.getmany(timeout_ms=300)).values())
        return out
    finally:
        await consumer.stop()


def by_content(rows: list[Read]) -> list[Read]:
    return sorted(rows, key=repr)


COLUMN_SETS = [
    cols
    for r in range(0, 5)
    for cols in itertools.combinations(["key", "headers", "partition", "timestamp"], r)
]


@pytest.mark.parametrize("columns", COLUMN_SETS, ids=lambda c: "+".join(("value", *c)))
async def test_every_column_combination_reads_back_exactly(
    bootstrap_servers: str, make_topic: Any, columns: tuple[str, ...]
) -> None:
    count = 3
    topic = make_topic(partitions=count)
    data: dict[str, pa.Array] = {"value": pa.array(values(N), pa.binary())}
    if "key" in columns:
        data["key"] = pa.array(keys(N), pa.binary())
    if "headers" in columns:
        data["headers"] = pa.array(headers(N), HEADER_TYPE)
    if "partition" in columns:
        data["partition"] = pa.array(partitions(N, count), pa.int32())
    if "timestamp" in columns:
        data["timestamp"] = pa.array(timestamps(N), pa.timestamp("ms"))
    batch = pa.record_batch(data)
    async with AIOKafkaProducer(bootstrap_servers=bootstrap_servers) as producer:
        future = await producer.send_arrow(topic, batch)
        results = await future
    assert sum(r.record_count for r in results) == N
    assert all(r.topic == topic and r.base_offset >= 0 for r in results)
    got = await read_all(bootstrap_servers, topic, count, N)
    now = int(time.time() * 1000)
    expected_ts = timestamps(N) if "timestamp" in columns else [None] * N
    ks = keys(N) if "key" in columns else [None] * N
    hs = [expected_headers(h) for h in headers(N)] if "headers" in columns else [[]] * N
    ps = partitions(N, count) if "partition" in columns else [None] * N
    # Records carry no row number: match each expected row to a read record with its
    # content and partition (rows with null values and no key or headers are alike).
    # Rows whose partition is known are matched first.
    remaining = list(got)
    for i in sorted(range(N), key=lambda i: ps[i] is None and ks[i] is None):
        if ps[i] is not None:
            partition: int | None = ps[i]
        elif ks[i] is not None:
            partition = partition_for_key(ks[i] or b"", count)
        else:
            partition = None  # unkeyed: the sticky partition, any of them
        match = [
            r
            for r in remaining
            if r[2] == ks[i]
            and r[3] == values(N)[i]
            and r[4] == hs[i]
            and (
                abs(r[1] - now) < NOW_TOLERANCE_MS
                if expected_ts[i] is None
                else r[1] == expected_ts[i]
            )
            and (partition is None or r[0] == partition)
        ]
        assert match, f"row {i} not read back"
        remaining.remove(match[0])
    assert not remaining
    # Offsets per partition in the results cover what was read.
    per_partition: dict[int, int] = {}
    for r in results:
        per_partition[r.partition] = per_partition.get(r.partition, 0) + r.record_count
    assert per_partition == {p: sum(1 for g in got if g[0] == p) for p in per_partition}


async def test_rows_keep_their_order_within_a_partition(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=2)
    n = 5000
    batch = pa.record_batch(
        {
            "key": pa.array([b"k%d" % (i % 10) for i in range(n)]),
            "value": pa.array([b"%08d" % i for i in range(n)]),
        }
    )
    # Small batches: the rows span many record batches per partition.
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, compression_type="lz4"
    ) as producer:
        results = await (await producer.send_arrow(topic, batch, batch_size=4096))
    assert len(results) > 4
    got = await read_all(bootstrap_servers, topic, 2, n)
    for p in range(2):
        in_partition = [r for r in got if r[0] == p]
        seq = [int(r[3] or b"") for r in in_partition]
        assert seq == sorted(seq)
        assert all(partition_for_key(r[2] or b"", 2) == p for r in in_partition)


@pytest.mark.parametrize("compression", [None, "gzip", "snappy", "lz4", "zstd"])
async def test_a_table_of_string_columns_with_every_codec(
    bootstrap_servers: str, make_topic: Any, compression: str | None
) -> None:
    topic = make_topic(partitions=1)
    table = pa.Table.from_batches(
        [
            pa.record_batch(
                {
                    "key": pa.array([f"k{j}-{i}" for i in range(50)], pa.large_string()),
                    "value": pa.array([f"v{j}-{i}" * 10 for i in range(50)], pa.string()),
                    "timestamp": pa.array(
                        [1_700_000_000 + i for i in range(50)], pa.timestamp("s")
                    ),
                    "partition": pa.array([0] * 50, pa.int64()),
                }
            )
            for j in range(3)
        ]
    )
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, compression_type=compression
    ) as producer:
        results = await (await producer.send_arrow(topic, table))
    assert sum(r.record_count for r in results) == 150
    got = await read_all(bootstrap_servers, topic, 1, 150)
    assert [(r[2], r[3], r[1]) for r in got] == [
        (f"k{j}-{i}".encode(), (f"v{j}-{i}" * 10).encode(), (1_700_000_000 + i) * 1000)
        for j in range(3)
        for i in range(50)
    ]


BAD_BATCHES = [
    ({"value": pa.array([1, 2])}, TypeError, 'column "value": must be binary or string'),
    ({"key": pa.array([b"a"])}, TypeError, 'column "value": is required'),
    ({"value": pa.array([b"a"]), "vaule": pa.array([b"a"])}, TypeError, 'column "vaule"'),
    (
        {"value": pa.array([b"a"]), "partition": pa.array(["0"])},
        TypeError,
        'column "partition": must be int32 or int64',
    ),
    (
        {"value": pa.array([b"a"]), "timestamp": pa.array([1.5])},
        TypeError,
        'column "timestamp"',
    ),
    (
        {"value": pa.array([b"a"]), "headers": pa.array([[b"x"]])},
        TypeError,
        'column "headers"',
    ),
    (
        {"value": pa.array([b"a", b"b", b"c"]), "partition": pa.array([0, None, 7], pa.int32())},
        ValueError,
        "row 2: partition 7 is not one of the topic's 0..2",
    ),
    (
        {
            "value": pa.array([b"a", b"b"]),
            "headers": pa.array([[], [{"key": None, "value": b"x"}]], HEADER_TYPE),
        },
        ValueError,
        "row 1: a header's key is null",
    ),
]


@pytest.mark.parametrize(("columns", "error", "message"), BAD_BATCHES)
async def test_a_bad_column_or_row_is_named_and_nothing_is_sent(
    bootstrap_servers: str,
    make_topic: Any,
    columns: dict[str, pa.Array],
    error: type[Exception],
    message: str,
) -> None:
    topic = make_topic(partitions=2)
    good = pa.record_batch({"value": pa.array([b"fine"] * 3)})
    async with AIOKafkaProducer(bootstrap_servers=bootstrap_servers) as producer:
        with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
            await producer.send_arrow(topic, pa.record_batch(columns))
        # The producer still works after the error.
        await (await producer.send_arrow(topic, good))
    await read_all(bootstrap_servers, topic, 2, 3)


async def test_a_record_too_large_is_named_and_nothing_of_the_table_is_sent(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=1)
    small = pa.record_batch({"value": pa.array([b"x" * 10] * 100)})
    big = pa.record_batch({"value": pa.array([b"y" * 10, b"y" * 5000, b"y"])})
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, max_request_size=4096
    ) as producer:
        with pytest.raises(
            Errors.MessageSizeTooLargeError, match=r"row 101: the record is \d+ bytes"
        ):
            await producer.send_arrow(topic, pa.Table.from_batches([small, big]))
        await (await producer.send_arrow(topic, pa.record_batch({"value": pa.array([b"after"])})))
    got = await read_all(bootstrap_servers, topic, 1, 1)
    assert got[0][3] == b"after"


@pytest.mark.parametrize("idempotent", [False, True])
async def test_rows_changed_before_their_batch_is_sent_fail_that_batch_only(
    bootstrap_servers: str, make_topic: Any, idempotent: bool
) -> None:
    """The rows are encoded when the sender takes their batch: offsets changed before then
    fail that batch with a ValueError naming the row, nothing outside the buffers is read, and
    the producer (its idempotent sequence included) goes on."""
    import numpy as np

    topic = make_topic(partitions=1)
    offsets = np.array([0, 5, 10], dtype=np.int32)
    data = np.frombuffer(b"abcdefghij", dtype=np.uint8).copy()
    changing = pa.Array.from_buffers(
        pa.binary(), 2, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, enable_idempotence=idempotent, linger_ms=50
    ) as producer:
        await (await producer.send_arrow(topic, pa.record_batch({"value": [b"before"]})))
        pending = await producer.send_arrow(
            topic, pa.RecordBatch.from_arrays([changing], names=["value"])
        )
        offsets[2] = 4_000  # before the sender takes the batch (linger_ms)
        with pytest.raises(ValueError, match=r"row 1: column \"value\" changed"):
            await pending
        await (await producer.send_arrow(topic, pa.record_batch({"value": [b"after"]})))
    got = await read_all(bootstrap_servers, topic, 1, 2)
    assert [r[3] for r in got] == [b"before", b"after"]


async def test_not_arrow_data_is_a_type_error(bootstrap_servers: str, topic: str) -> None:
    async with AIOKafkaProducer(bootstrap_servers=bootstrap_servers) as producer:
        with pytest.raises(TypeError, match="expected Arrow data"):
            await producer.send_arrow(topic, [{"value": b"x"}])


async def test_transactional_arrow_send_is_read_committed(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=2)
    batch = pa.record_batch(
        {"key": pa.array([b"a", b"b", b"c", b"d"]), "value": pa.array([b"1", b"2", b"3", b"4"])}
    )
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, transactional_id=f"arrow-{topic}"
    ) as producer:
        async with producer.transaction():
            await (await producer.send_arrow(topic, batch))
    got = await read_all(bootstrap_servers, topic, 2, 4)
    assert sorted(r[3] or b"" for r in got) == [b"1", b"2", b"3", b"4"]


async def test_batch_size_sets_the_batches_of_one_call(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=1)
    batch = pa.record_batch({"value": pa.array([b"%0100d" % i for i in range(3000)])})
    async with AIOKafkaProducer(bootstrap_servers=bootstrap_servers) as producer:
        for bad in (0, 2_000_000, 1.5, True):
            with pytest.raises(ValueError, match="send_arrow: batch_size must be an int"):
                await producer.send_arrow(topic, batch, batch_size=bad)  # type: ignore[arg-type]
        small = await (await producer.send_arrow(topic, batch, batch_size=16384))
        large = await (await producer.send_arrow(topic, batch))
    # 3000 records of ~110 bytes: 16 KiB batches, or by default one batch under 1 MB.
    assert len(small) > 15 and len(large) == 1
    assert large[0].base_offset == 3000 and large[0].record_count == 3000
    got = await read_all(bootstrap_servers, topic, 1, 6000)
    assert [r[3] for r in got] == [b"%0100d" % i for i in range(3000)] * 2


async def test_the_java_consumer_reads_what_send_arrow_wrote(
    bootstrap_servers: str, make_topic: Any
) -> None:
    count = 3
    topic = make_topic(partitions=count)
    batch = pa.record_batch(
        {
            "key": pa.array(keys(N), pa.binary()),
            "value": pa.array(values(N), pa.binary()),
            "headers": pa.array(headers(N), HEADER_TYPE),
            "partition": pa.array(partitions(N, count), pa.int64()),
            "timestamp": pa.array(timestamps(N), pa.int64()),
        }
    )
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, compression_type="zstd"
    ) as producer:
        await (await producer.send_arrow(topic, batch))
    ours = await read_all(bootstrap_servers, topic, count, N)
    java = await asyncio.to_thread(read_java, bootstrap_servers, topic, N)
    assert by_content([(p, ts, k, v, h) for p, _, ts, k, v, h in java]) == by_content(ours)


async def test_send_and_send_arrow_keep_their_order_on_a_partition(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=1)
    arrow_rows = pa.record_batch({"value": pa.array([b"arrow-%d" % i for i in range(500)])})
    async with AIOKafkaProducer(bootstrap_servers=bootstrap_servers, linger_ms=50) as producer:
        before = [await producer.send(topic, b"before-%d" % i) for i in range(3)]
        arrow_future = await producer.send_arrow(topic, arrow_rows, batch_size=2000)
        after = [await producer.send(topic, b"after-%d" % i) for i in range(3)]
        await asyncio.gather(*before, arrow_future, *after)
    got = await read_all(bootstrap_servers, topic, 1, 506)
    assert [r[3] for r in got] == (
        [b"before-%d" % i for i in range(3)]
        + [b"arrow-%d" % i for i in range(500)]
        + [b"after-%d" % i for i in range(3)]
    )
