"""Batch reads through ``read_kafka`` (mapInArrow and mapInPandas) and the ``ferrokafka`` data
source, on Spark in local mode against the real broker: every row as produced, every starting
and ending option, splitting, transactions, and data loss."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest
from ferrokafka import AIOKafkaProducer
from ferrokafka.spark import (
    KAFKA_SCHEMA,
    fetch_arrow,
    plan_dataframe,
    plan_ranges,
    read_kafka,
    register,
)
from ferrokafka.structs import TopicPartition

from .spark_data import (
    BASE_TS,
    CHECKSUM_SQL,
    checksum,
    delete_records,
    expected,
    options,
    produce_rows,
    spark_rows,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from ..conftest import TopicFactory

pytestmark = pytest.mark.integration

READERS = ["arrow", "pandas", "datasource"]


def load(spark: SparkSession, reader: str, opts: dict[str, Any]) -> DataFrame:
    """The same read through one of the three ways in."""
    if reader == "datasource":
        register(spark)
        frame = spark.read.format("ferrokafka")
        for key, value in opts.items():
            frame = frame.option(key, value)
        return frame.load()
    return read_kafka(spark, opts, fetcher=reader)


@pytest.mark.parametrize(
    ("codec", "reader"),
    [
        ("none", "arrow"),
        ("gzip", "arrow"),
        ("snappy", "arrow"),
        ("lz4", "pandas"),
        ("zstd", "datasource"),
    ],
)
def test_rows_equal_what_was_produced(
    spark: SparkSession,
    bootstrap_servers: str,
    make_topic: TopicFactory,
    codec: str,
    reader: str,
) -> None:
    topic = make_topic(partitions=3)
    rows = produce_rows(
        bootstrap_servers, topic, 3, 400, compression=None if codec == "none" else codec
    )
    df = load(spark, reader, options(bootstrap_servers, subscribe=topic, includeHeaders="true"))
    assert spark_rows(df) == expected(rows)
    # Without includeHeaders there is no headers column.
    plain = load(spark, reader, options(bootstrap_servers, subscribe=topic))
    assert plain.columns == [
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        "timestamp",
        "timestampType",
    ]
    assert tuple(plain.selectExpr(*CHECKSUM_SQL).first()) == checksum(rows)


def test_a_larger_topic_by_checksum_and_samples(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=4)
    rows = produce_rows(bootstrap_servers, topic, 4, 12_500, compression="lz4")
    for reader in READERS:
        df = load(spark, reader, options(bootstrap_servers, subscribe=topic, includeHeaders=True))
        assert tuple(df.selectExpr(*CHECKSUM_SQL).first()) == checksum(rows), reader
        sample = [r for r in rows if r.offset % 997 == 3]
        picked = df.where("offset % 997 = 3")
        assert spark_rows(picked) == expected(sample), reader


def _transactions(bootstrap: str, topic: str) -> tuple[list[int], list[int]]:
    """Three transactions on one partition (commit 100, abort 50, commit 100): the committed
    offsets and the aborted ones."""

    async def go() -> tuple[list[int], list[int]]:
        committed: list[int] = []
        aborted: list[int] = []
        producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap, transactional_id=f"spark-{uuid.uuid4().hex}"
        )
        await producer.start()
        try:
            for count, commit in ((100, True), (50, False), (100, True)):
                await producer.begin_transaction()
                futures = [
                    await producer.send(topic, b"v%d" % i, partition=0) for i in range(count)
                ]
                await producer.flush()
                offsets = [(await f).offset for f in futures]
                if commit:
                    await producer.commit_transaction()
                    committed += offsets
                else:
                    await producer.abort_transaction()
                    aborted += offsets
        finally:
            await producer.stop()
        return committed, aborted

    return asyncio.run(go())


@pytest.mark.parametrize("reader", ["arrow", "datasource"])
def test_transactional_topic_in_both_isolation_levels(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory, reader: str
) -> None:
    topic = make_topic(partitions=1)
    committed, aborted = _transactions(bootstrap_servers, topic)
    # Markers and aborted records are gaps, not data loss (failOnDataLoss is on by default).
    read = load(
        spark,
        reader,
        options(bootstrap_servers, subscribe=topic, **{"kafka.isolation.level": "read_committed"}),
    )
    assert sorted(r.offset for r in read.select("offset").collect()) == committed
    everything = load(spark, reader, options(bootstrap_servers, subscribe=topic))
    assert sorted(r.offset for r in everything.select("offset").collect()) == sorted(
        committed + aborted
    )
    # A range that ends inside the gap of a marker still ends exactly there.
    last = committed[99]
    cut = load(
        spark,
        reader,
        options(
            bootstrap_servers,
            subscribe=topic,
            endingOffsets=f'{{"{topic}":{{"0":{last + 2}}}}}',
            **{"kafka.isolation.level": "read_committed"},
        ),
    )
    assert sorted(r.offset for r in cut.select("offset").collect()) == committed[:100]


def test_min_partitions_and_max_records_split_into_tasks(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=2)
    rows = produce_rows(bootstrap_servers, topic, 2, 1000)
    opts = options(bootstrap_servers, subscribe=topic)
    whole = load(spark, "arrow", opts)
    assert whole.rdd.getNumPartitions() == 2
    # Spark's rounding: each half of minPartitions=5 is 2.5 tasks, rounded up to 3.
    for extra, tasks in (({"minPartitions": "5"}, 6), ({"maxRecordsPerPartition": "300"}, 8)):
        ranges = plan_ranges({**opts, **extra})
        assert len(ranges) == tasks
        assert sum(r.size for r in ranges) == 2000
        for reader in READERS:
            df = load(spark, reader, {**opts, **extra})
            assert df.rdd.getNumPartitions() == tasks, (reader, extra)
            assert tuple(df.selectExpr(*CHECKSUM_SQL).first()) == checksum(rows), (reader, extra)


def _offsets(df: DataFrame) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for r in df.select("partition", "offset").collect():
        out.setdefault(r.partition, []).append(r.offset)
    return {p: sorted(v) for p, v in sorted(out.items())}


def test_starting_and_ending_options(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=3)
    produce_rows(bootstrap_servers, topic, 3, 100)  # record i: offset i, timestamp BASE_TS + i
    base = options(bootstrap_servers, subscribe=topic)

    def read(reader: str = "arrow", **opts: Any) -> dict[int, list[int]]:
        return _offsets(load(spark, reader, {**base, **opts}))

    span = list(range(100))
    assert read() == {0: span, 1: span, 2: span}
    for reader in READERS:
        assert read(
            reader,
            startingOffsets=f'{{"{topic}":{{"0":10,"1":-2,"2":50}}}}',
            endingOffsets=f'{{"{topic}":{{"0":20,"1":-1,"2":60}}}}',
        ) == {0: span[10:20], 1: span, 2: span[50:60]}, reader
    assert read(startingTimestamp=str(BASE_TS + 30)) == {p: span[30:] for p in range(3)}
    assert read(endingTimestamp=str(BASE_TS + 70)) == {p: span[:70] for p in range(3)}
    assert read(
        startingOffsetsByTimestamp=f'{{"{topic}":{{"0":{BASE_TS + 5},"1":{BASE_TS},'
        f'"2":{BASE_TS + 99}}}}}',
        endingOffsetsByTimestamp=f'{{"{topic}":{{"0":{BASE_TS + 6},"1":{BASE_TS + 1},'
        f'"2":{BASE_TS + 10_000}}}}}',
    ) == {0: [5], 1: [0], 2: [99]}
    # The timestamp options win over startingOffsets.
    assert read(startingTimestamp=str(BASE_TS + 98), startingOffsets="earliest") == {
        p: [98, 99] for p in range(3)
    }
    # No record at or after the start timestamp: an error, or the end with strategy "latest".
    with pytest.raises(ValueError, match="No offset matched from request of topic-partition"):
        read(startingTimestamp=str(BASE_TS + 1000))
    for reader in READERS:  # nothing to read: no task, or Spark's placeholder partition
        assert (
            read(
                reader,
                startingTimestamp=str(BASE_TS + 1000),
                startingOffsetsByTimestampStrategy="latest",
            )
            == {}
        ), reader
    assign = options(bootstrap_servers, assign=f'{{"{topic}":[2,0]}}', startingOffsets="earliest")
    assert _offsets(load(spark, "arrow", assign)) == {0: span, 2: span}
    pattern = options(bootstrap_servers, subscribePattern=topic[3:9])  # found anywhere
    assert _offsets(load(spark, "datasource", pattern)) == {0: span, 1: span, 2: span}
    with pytest.raises(ValueError, match="don't match what are assigned"):
        read(startingOffsets=f'{{"{topic}":{{"0":1}}}}')
    with pytest.raises(ValueError, match="The resolved start offset 100 is greater than"):
        read(
            startingOffsets=f'{{"{topic}":{{"0":100,"1":0,"2":0}}}}',
            endingOffsets=f'{{"{topic}":{{"0":-1,"1":-1,"2":-1}}}}',
            endingTimestamp=str(BASE_TS + 50),
        )


def test_a_missing_subscribed_topic_is_an_error(
    spark: SparkSession, bootstrap_servers: str
) -> None:
    with pytest.raises(Exception, match="do not exist: no-such-topic-"):
        read_kafka(spark, options(bootstrap_servers, subscribe=f"no-such-topic-{uuid.uuid4()}"))


def _spark_error(action: Callable[[], Any]) -> str:
    with pytest.raises(Exception) as info:
        action()
    return str(info.value)


@pytest.mark.parametrize("reader", ["arrow", "datasource"])
def test_fail_on_data_loss_after_retention_deleted_the_start(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory, reader: str
) -> None:
    topic = make_topic(partitions=1)
    produce_rows(bootstrap_servers, topic, 1, 100)
    start = options(bootstrap_servers, subscribe=topic, startingOffsets=f'{{"{topic}":{{"0":0}}}}')
    planned = load(spark, reader, start)
    lenient = load(spark, reader, {**start, "failOnDataLoss": "false"})
    # read_kafka planned [0, 100) already; the data source plans at the action, from offset 0
    # as asked: either way the executor finds the start gone.
    delete_records(bootstrap_servers, {TopicPartition(topic, 0): 40})
    message = _spark_error(planned.count)
    assert "KafkaDataLossError" in message and f"TopicPartition: {topic}-0" in message
    assert "Cannot fetch offset 0" in message and "[0, 40)" in message
    assert _offsets(lenient) == {0: list(range(40, 100))}


def test_fail_on_data_loss_when_the_topic_vanished(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory, kafka_broker: Any
) -> None:
    topic = make_topic(partitions=1)
    produce_rows(bootstrap_servers, topic, 1, 50)
    opts = options(bootstrap_servers, subscribe=topic, **{"kafkaConsumer.pollTimeoutMs": 30000})
    strict = read_kafka(spark, opts)
    lenient = read_kafka(spark, {**opts, "failOnDataLoss": "false"})
    kafka_broker.delete_topic(topic)
    message = _spark_error(strict.count)
    assert "KafkaDataLossError" in message and f"{topic}-0 no longer exists" in message
    assert lenient.count() == 0


def test_each_worker_process_keeps_one_consumer_across_tasks(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=2)
    rows = produce_rows(bootstrap_servers, topic, 2, 500)
    opts = options(bootstrap_servers, subscribe=topic, minPartitions="8")
    fetch = fetch_arrow(opts)

    def report(plans: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        from ferrokafka.spark.runtime import runtime

        count = sum(batch.num_rows for batch in fetch(plans))
        yield pa.RecordBatch.from_pylist(
            [{"pid": os.getpid(), "made": runtime().consumers_made, "rows": count}]
        )

    plan = plan_dataframe(spark, plan_ranges(opts))
    assert plan.rdd.getNumPartitions() == 8
    seen = plan.mapInArrow(report, "pid long, made long, rows long").collect()
    assert len(seen) == 8 and sum(r.rows for r in seen) == len(rows)
    by_pid: dict[int, int] = {}
    for r in seen:
        assert r.made == 1, seen  # the worker's one consumer, made by its first task
        by_pid[r.pid] = by_pid.get(r.pid, 0) + 1
    assert os.getpid() not in by_pid
    assert max(by_pid.values()) >= 2, by_pid  # a reused worker served several tasks


def test_invalid_options_raise_when_planning(spark: SparkSession, bootstrap_servers: str) -> None:
    with pytest.raises(ValueError, match="Only one of the following options"):
        read_kafka(spark, options(bootstrap_servers, subscribe="a", assign='{"a":[0]}'))
    with pytest.raises(ValueError, match="fetcher must be one of arrow, pandas"):
        read_kafka(spark, options(bootstrap_servers, subscribe="a"), fetcher="rows")
    register(spark)
    frame = spark.read.format("ferrokafka").option("kafka.bootstrap.servers", bootstrap_servers)
    message = _spark_error(
        lambda: frame.option("startingOffsets", "latest").option("subscribe", "a").load().count()
    )
    assert "starting offset can't be latest for batch queries on Kafka" in message


def _read_all(bootstrap: str, topic: str) -> list[tuple[int, bytes | None, bytes | None]]:
    async def go() -> list[tuple[int, bytes | None, bytes | None]]:
        from ferrokafka import AIOKafkaConsumer

        tp = TopicPartition(topic, 0)
        async with AIOKafkaConsumer(
            bootstrap_servers=bootstrap, auto_offset_reset="earliest"
        ) as consumer:
            consumer.assign([tp])
            end = (await consumer.end_offsets([tp]))[tp]
            out = []
            while await consumer.position(tp) < end:
                for records in (await consumer.getmany(timeout_ms=1000)).values():
                    out += [(r.offset, r.key, r.value) for r in records]
            return out

    return asyncio.run(go())


@pytest.mark.parametrize("reader", ["arrow", "datasource"])
def test_compaction_gaps_are_not_data_loss(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory, reader: str
) -> None:
    topic = make_topic(
        partitions=1,
        configs={
            "cleanup.policy": "compact",
            "segment.ms": "100",
            "min.cleanable.dirty.ratio": "0.001",
            "min.compaction.lag.ms": "0",
            "delete.retention.ms": "0",
        },
    )

    produced: dict[int, tuple[bytes, bytes]] = {}

    async def write(first: int, count: int) -> None:
        async with AIOKafkaProducer(bootstrap_servers=bootstrap_servers) as producer:
            sent = []
            for i in range(first, first + count):
                key, value = b"k%d" % (i % 10), b"v%d" % i
                sent.append((await producer.send(topic, value, key=key, partition=0), key, value))
            for future, key, value in sent:
                produced[(await future).offset] = (key, value)

    asyncio.run(write(0, 200))
    deadline = time.monotonic() + 60
    while True:  # the log cleaner runs every 15 s; a newer segment lets it clean the old one
        time.sleep(0.3)
        asyncio.run(write(200, 1))
        if len(_read_all(bootstrap_servers, topic)) < 150 or time.monotonic() > deadline:
            break
    df = load(spark, reader, options(bootstrap_servers, subscribe=topic))  # failOnDataLoss on
    got = {r.offset: (bytes(r.key), bytes(r.value)) for r in df.collect()}
    assert len(got) < 150, "the broker did not compact the topic within 60 s"
    # Gaps, no error: every row read is a record produced at that offset, and each key's
    # latest record (which compaction keeps) is there.
    assert all(produced[offset] == kv for offset, kv in got.items())
    latest = {key: offset for offset, (key, _) in sorted(produced.items())}
    assert set(latest.values()) <= set(got)


def test_a_range_that_cannot_complete_fails_after_the_poll_timeout(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=1)
    produce_rows(bootstrap_servers, topic, 1, 20)

    async def open_transaction() -> AIOKafkaProducer:
        producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap_servers, transactional_id=f"open-{uuid.uuid4().hex}"
        )
        await producer.start()
        await producer.begin_transaction()
        for i in range(10):
            await producer.send(topic, b"open-%d" % i, partition=0)
        await producer.flush()
        return producer

    loop = asyncio.new_event_loop()
    producer = loop.run_until_complete(open_transaction())
    try:
        # Planned without read_committed (to the high watermark, 30), read with it: the
        # records from 20 on stay invisible while the transaction is open.
        opts = options(bootstrap_servers, subscribe=topic)
        plan = plan_dataframe(spark, plan_ranges(opts))
        fetch = fetch_arrow(
            {
                **opts,
                "kafka.isolation.level": "read_committed",
                "kafkaConsumer.pollTimeoutMs": "3000",
            }
        )
        message = _spark_error(lambda: plan.mapInArrow(fetch, KAFKA_SCHEMA).count())
        assert "KafkaTimeoutError" in message
        assert "Cannot fetch record for offset 20 in 3000 milliseconds" in message
    finally:
        loop.run_until_complete(producer.stop())
        loop.close()
