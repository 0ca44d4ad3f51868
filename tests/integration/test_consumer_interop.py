"""The consumer reads what other clients wrote: the Java producer (kafka-clients from Maven) and
librdkafka (confluent-kafka from PyPI) with every codec, and transactions (committed, aborted,
still open) under both isolation levels."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest
from ferrokafka import AIOKafkaConsumer, TopicPartition
from ferrokafka.testing import resolve_kafka

from .test_consumer import drain

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fixtures" / "interop"))
from dataset import COUNT, dataset_record

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
JAVA_PRODUCER = ROOT / "tools" / "java" / "InteropProducer.java"
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def produce_java(bootstrap: str, topic: str, codec: str) -> None:
    cmd = ["java", "-cp", resolve_kafka().classpath, str(JAVA_PRODUCER)]
    subprocess.run([*cmd, bootstrap, topic, codec, str(COUNT)], check=True, timeout=120)


def produce_librdkafka(bootstrap: str, topic: str, codec: str) -> None:
    producer = confluent_kafka.Producer(
        {"bootstrap.servers": bootstrap, "compression.codec": codec, "linger.ms": 20}
    )
    for i in range(COUNT):
        ts, key, value, headers = dataset_record(i)
        producer.produce(topic, value, key, partition=0, timestamp=ts, headers=headers)
    assert producer.flush(30) == 0


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("writer", ["java", "librdkafka"])
async def test_reads_other_producers_for_every_codec(
    bootstrap_servers: str, topic: str, writer: str, codec: str
) -> None:
    (produce_java if writer == "java" else produce_librdkafka)(bootstrap_servers, topic, codec)
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        records = await drain(consumer, COUNT)
    assert len(records) == COUNT
    for i, r in enumerate(records):
        ts, key, value, headers = dataset_record(i)
        assert (r.offset, r.timestamp, r.key, r.value) == (i, ts, key, value)
        assert list(r.headers) == headers


def transactional_producer(bootstrap: str, tx_id: str) -> confluent_kafka.Producer:
    producer = confluent_kafka.Producer(
        {"bootstrap.servers": bootstrap, "transactional.id": tx_id, "linger.ms": 5}
    )
    producer.init_transactions(30)
    return producer


def write_tx(producer: confluent_kafka.Producer, topic: str, values: list[bytes]) -> None:
    producer.begin_transaction()
    for v in values:
        producer.produce(topic, v, partition=0)
    producer.flush(30)


async def read_all(bootstrap: str, topic: str, isolation: str, expected: int) -> list[Any]:
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap, auto_offset_reset="earliest", isolation_level=isolation
    ) as consumer:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        records = await drain(consumer, expected)
        assert await consumer.getmany(timeout_ms=300) == {}, "more records than expected"
        end = (await consumer.end_offsets([tp]))[tp]
        assert await consumer.position(tp) == end
        return records


async def test_transactions_under_both_isolation_levels(bootstrap_servers: str, topic: str) -> None:
    producer = transactional_producer(bootstrap_servers, f"tx-{topic}")
    write_tx(producer, topic, [b"c1-%d" % i for i in range(10)])
    producer.commit_transaction(30)
    write_tx(producer, topic, [b"a-%d" % i for i in range(5)])
    producer.abort_transaction(30)
    write_tx(producer, topic, [b"c2-%d" % i for i in range(10)])
    producer.commit_transaction(30)

    committed = await read_all(bootstrap_servers, topic, "read_committed", 20)
    assert [r.value for r in committed] == [b"c1-%d" % i for i in range(10)] + [
        b"c2-%d" % i for i in range(10)
    ]
    # Offsets skip the aborted records and the three transaction markers.
    assert [r.offset for r in committed] == list(range(10)) + list(range(17, 27))
    everything = await read_all(bootstrap_servers, topic, "read_uncommitted", 25)
    assert [r.value for r in everything][10:15] == [b"a-%d" % i for i in range(5)]


async def test_read_committed_stops_at_an_open_transaction(
    bootstrap_servers: str, topic: str
) -> None:
    producer = transactional_producer(bootstrap_servers, f"tx-{topic}")
    write_tx(producer, topic, [b"first"])
    producer.commit_transaction(30)
    write_tx(producer, topic, [b"open-1", b"open-2"])  # not committed yet
    tp = TopicPartition(topic, 0)
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
    ) as committed_reader:
        committed_reader.assign([tp])
        got = await drain(committed_reader, 1)
        assert [r.value for r in got] == [b"first"]
        assert await committed_reader.getmany(timeout_ms=700) == {}
        assert committed_reader.last_stable_offset(tp) == 2  # first + its marker
        assert (committed_reader.highwater(tp) or 0) >= 4
        assert await committed_reader.end_offsets([tp]) == {tp: 2}

        async with AIOKafkaConsumer(
            bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest"
        ) as uncommitted_reader:
            uncommitted_reader.assign([tp])
            got = await drain(uncommitted_reader, 3)
            assert [r.value for r in got] == [b"first", b"open-1", b"open-2"]

        producer.commit_transaction(30)
        got = await drain(committed_reader, 2)
        assert [r.value for r in got] == [b"open-1", b"open-2"]
