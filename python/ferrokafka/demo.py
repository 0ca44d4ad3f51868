"""The main job on the embedded default: start a local broker, create a topic, show what
ferrokafka sees of the cluster, write a sample dataset with the producer and read it back with
the consumer, as ``ConsumerRecord``s and as Arrow record batches, with a consumer group, and with
Spark, saying how long each took.

Those times are a smoke run's: a small sample, with connections, start-up and the JVM's warm-up
in them. The output says so, and names the benchmark that measures (``BENCHMARK``), so that
nobody reads them as ferrokafka's speed."""

from __future__ import annotations

import asyncio
import time
from typing import TextIO

from . import errors as Errors
from .client import AIOKafkaClient
from .consumer import AIOKafkaConsumer
from .consumer.group.assignors.sticky.sticky_assignor import CooperativeStickyPartitionAssignor
from .producer import AIOKafkaProducer
from .protocol import ApiKey
from .structs import TopicPartition
from .testing import KafkaBroker

__all__ = ["run_demo"]

DEMO_TOPIC = "ferrokafka-demo"
DEMO_PARTITIONS = 4
DEMO_RECORDS = 200_000
EVENTS = ("click", "view", "purchase", "login", "scroll")
BENCHMARK = ".venv/bin/python benches/harness.py"
"""The command that measures throughput (README.md's and docs/performance.md's tables)."""


def sample_value(i: int) -> bytes:
    """A small JSON event, ~100 bytes."""
    return (
        b'{"user": %d, "event": "%s", "amount": %d.%02d, "session": "%08x"}'
        % (i % 9973, EVENTS[i % len(EVENTS)].encode(), i % 500, i % 100, (i * 2654435761) % 2**32)
    ).ljust(100, b" ")


async def _produce(bootstrap: str, out: TextIO) -> None:
    started = time.perf_counter()
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap, linger_ms=5, compression_type="lz4", max_batch_size=65536
    ) as producer:
        for i in range(DEMO_RECORDS):
            await producer.send(DEMO_TOPIC, sample_value(i), key=b"user-%d" % (i % 9973))
        await producer.flush()
    took = time.perf_counter() - started
    out.write(f"produced        {DEMO_RECORDS:,} records (lz4, keyed by user) in {took:.2f}s\n")


async def _consume(bootstrap: str, out: TextIO) -> None:
    partitions = [TopicPartition(DEMO_TOPIC, p) for p in range(DEMO_PARTITIONS)]
    for form in ("records", "arrow"):
        async with AIOKafkaConsumer(
            bootstrap_servers=bootstrap, auto_offset_reset="earliest"
        ) as consumer:
            consumer.assign(partitions)
            started = time.perf_counter()
            count, nbytes, per_partition = 0, 0, dict.fromkeys(range(DEMO_PARTITIONS), 0)
            first = None
            while count < DEMO_RECORDS:
                if form == "records":
                    batch = await consumer.getmany(timeout_ms=2000)
                    for tp, records in batch.items():
                        first = first or records[0]
                        count += len(records)
                        per_partition[tp.partition] += len(records)
                        nbytes += sum(len(r.value or b"") for r in records)
                    got = bool(batch)
                else:
                    arrow = await consumer.getmany_arrow(timeout_ms=2000)
                    for tp, rb in arrow.items():
                        count += rb.num_rows
                        per_partition[tp.partition] += rb.num_rows
                        nbytes += rb.column(1).nbytes
                    got = bool(arrow)
                if not got:
                    raise RuntimeError(f"the consumer stalled after {count} records")
            took = time.perf_counter() - started
            out.write(
                f"consumed        {count:,} records as {form} in {took:.2f}s; "
                f"per partition {per_partition}\n"
            )
            if first is not None:
                out.write(
                    f"  first record  partition={first.partition} offset={first.offset} "
                    f"key={first.key!r} value={(first.value or b'').strip()!r}\n"
                )


async def _describe(bootstrap: str, out: TextIO) -> None:
    async with AIOKafkaClient(bootstrap_servers=bootstrap) as client:
        client.add_topic(DEMO_TOPIC)
        await client.refresh_metadata()
        cluster = client.cluster
        out.write(f"cluster id      {cluster.cluster_id}\n")
        out.write(f"controller      {cluster.controller}\n")
        for b in sorted(cluster.brokers()):
            out.write(f"broker          id={b.nodeId} {b.host}:{b.port} rack={b.rack}\n")
        info = cluster.topic_info(DEMO_TOPIC)
        assert info is not None, "the demo topic vanished"
        out.write(f"topic           {info.name} id={info.topic_id}\n")
        for p in sorted(info.partitions):
            part = info.partitions[p]
            out.write(
                f"  partition {p}   leader={part.leader} epoch={part.leader_epoch} "
                f"replicas={list(part.replicas)} isr={list(part.isr)}\n"
            )
        leader = cluster.leader_for_partition(TopicPartition(DEMO_TOPIC, 0))
        assert leader is not None
        conn = await client.ready(leader)
        versions = []
        for key in ApiKey:
            try:
                versions.append(f"{key.name} v{conn.version_for(key)}")
            except Errors.IncompatibleBrokerVersion:
                continue  # an API ferrokafka does not speak yet
        out.write("negotiated      " + ", ".join(versions) + "\n")
        out.write(f"connections     {sorted(client.connections)} (bootstrap node is -1)\n")


async def _group(bootstrap: str, out: TextIO, members: int = 3) -> None:
    """A small consumer group in this process: who got which partitions, and how many records
    each read."""
    group = "ferrokafka-demo-group"
    consumers: list[AIOKafkaConsumer[bytes, bytes]] = []
    for _ in range(members):
        c: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=group,
            auto_offset_reset="earliest",
            partition_assignment_strategy=(CooperativeStickyPartitionAssignor,),
            heartbeat_interval_ms=500,
        )
        c.subscribe([DEMO_TOPIC])
        await c.start()
        consumers.append(c)
    started = time.perf_counter()
    counts = [0] * members
    try:
        # Let every member join before reading in bulk (one record per poll until then).
        while len(set().union(*(c.assignment() for c in consumers))) < DEMO_PARTITIONS or not all(
            c.assignment() for c in consumers
        ):
            for i, c in enumerate(consumers):
                for records in (await c.getmany(timeout_ms=50, max_records=1)).values():
                    counts[i] += len(records)
            if time.perf_counter() - started > 60:
                raise RuntimeError("the demo group did not settle within 60 s")
        while sum(counts) < DEMO_RECORDS:
            for i, c in enumerate(consumers):
                for records in (await c.getmany(timeout_ms=100)).values():
                    counts[i] += len(records)
            if time.perf_counter() - started > 120:
                raise RuntimeError(f"the group read only {sum(counts)} records")
        took = time.perf_counter() - started
        out.write(
            f"group           {group!r}, {members} members (cooperative-sticky), read "
            f"{sum(counts):,} records in {took:.2f}s including the joins\n"
        )
        for i, c in enumerate(consumers):
            parts = sorted(tp.partition for tp in c.assignment())
            out.write(f"  member {i}      partitions {parts}, {counts[i]:,} records\n")
    finally:
        for c in consumers:
            await c.stop()


def _spark(bootstrap: str, out: TextIO) -> None:
    """The same topic read by Spark (local[2]): planned on the driver, fetched by the executors'
    Python workers with ferrokafka's Rust decoder (no JVM Kafka client)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        out.write(
            "spark           skipped: PySpark is not installed (pip install ferrokafka[spark])\n"
        )
        return
    from .spark import read_kafka, register
    from .testing.spark import spark_session, stop_spark_session

    started = time.perf_counter()
    spark = spark_session("local[2]", app_name="ferrokafka-demo")
    out.write(f"spark           local[2] session up in {time.perf_counter() - started:.1f}s\n")
    try:
        options = {"kafka.bootstrap.servers": bootstrap, "subscribe": DEMO_TOPIC}
        df = read_kafka(spark, options)
        for label in ("first query, the JVM's warm-up included", "second query"):
            started = time.perf_counter()
            rows, nbytes = df.selectExpr("count(*)", "sum(length(value))").first()
            took = time.perf_counter() - started
            out.write(
                f"  read_kafka    {rows:,} rows, {nbytes:,} value bytes in {took:.2f}s ({label})\n"
            )
        per_partition = {
            r["partition"]: r["n"]
            for r in df.groupBy("partition").count().withColumnRenamed("count", "n").collect()
        }
        out.write(f"  per partition {dict(sorted(per_partition.items()))}\n")
        for r in df.where("offset < 2").orderBy("partition", "offset").limit(3).collect():
            out.write(
                f"  row           partition={r['partition']} offset={r['offset']} "
                f"key={bytes(r['key'])!r} value={bytes(r['value'])[:40]!r}...\n"
            )
        register(spark)
        counted = (
            spark.read.format("ferrokafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", DEMO_TOPIC)
            .load()
            .count()
        )
        out.write(f'  data source   spark.read.format("ferrokafka") counted {counted:,} rows\n')
    finally:
        stop_spark_session()


def _timings_note(out: TextIO) -> None:
    """What the times below are, and are not."""
    out.write(
        f"timings         those below are a smoke run's on a {DEMO_RECORDS:,}-record sample, "
        "start-up and\n"
        "                connecting included: not benchmark results. The measured figures are "
        "in\n"
        f"                README.md and docs/performance.md, from {BENCHMARK}\n"
    )


def run_demo(out: TextIO) -> int:
    """Start a broker, create the demo topic, print the cluster; stop the broker."""
    started = time.monotonic()
    out.write("starting a local Kafka broker (KRaft, loopback) ...\n")
    out.flush()
    with KafkaBroker() as broker:
        out.write(f"broker up at {broker.bootstrap_servers} in {time.monotonic() - started:.1f}s\n")
        broker.create_topic(DEMO_TOPIC, partitions=DEMO_PARTITIONS)
        out.write(f"created topic {DEMO_TOPIC!r} with {DEMO_PARTITIONS} partitions\n")
        asyncio.run(_describe(broker.bootstrap_servers, out))
        _timings_note(out)
        asyncio.run(_produce(broker.bootstrap_servers, out))
        asyncio.run(_consume(broker.bootstrap_servers, out))
        asyncio.run(_group(broker.bootstrap_servers, out))
        _spark(broker.bootstrap_servers, out)
    out.write(f"broker stopped; done in {time.monotonic() - started:.1f}s\n")
    return 0
