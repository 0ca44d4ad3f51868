"""AIOKafkaProducer against the real broker: what it writes is read back identically by
librdkafka (confluent-kafka) and by the Java consumer (``tools/java/InteropConsumer.java``)."""

from __future__ import annotations

import asyncio
import itertools
import json
import struct
import uuid
from typing import Any

import confluent_kafka
import pytest
from ferrokafka import _native
from ferrokafka import errors as Errors
from ferrokafka.client import AIOKafkaClient
from ferrokafka.partitioner import partition_for_key
from ferrokafka.producer import AIOKafkaProducer
from ferrokafka.producer.batch import BATCH_OVERHEAD, estimate_record_size
from ferrokafka.protocol import ApiKey
from ferrokafka.records import decode_records
from ferrokafka.structs import RecordMetadata, TopicPartition

from .java_util import Row, read_java

pytestmark = [pytest.mark.integration, pytest.mark.core]

CODECS = [None, "gzip", "snappy", "lz4", "zstd"]


def dataset(n: int) -> list[tuple[int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]]:
    """Records with keys, null keys, null values, empty values, binary data and headers
    (with null header values and non-ASCII header keys)."""
    out = []
    for i in range(n):
        key = None if i % 5 == 4 else f"key-{i % 13}".encode()
        value = None if i % 7 == 6 else (b"" if i % 11 == 10 else bytes(range(i % 256)) * 3)
        if key is None and value is None:
            value = b"v"
        headers: list[tuple[str, bytes | None]] = [("idx", str(i).encode())]
        if i % 3 == 0:
            headers.append(("nullh", None))
        if i % 4 == 0:
            headers.append(("clé", "été".encode()))
        out.append((1700000000000 + i, key, value, headers))
    return out


async def produce_dataset(
    producer: AIOKafkaProducer, topic: str, n: int
) -> dict[int, RecordMetadata]:
    futures = {}
    for i, (ts, key, value, headers) in enumerate(dataset(n)):
        futures[i] = await producer.send(
            topic, value, key=key, timestamp_ms=ts, headers=headers, partition=i % 2
        )
    return {i: await f for i, f in futures.items()}


def expected_rows(n: int, metas: dict[int, RecordMetadata]) -> list[Row]:
    rows = []
    for i, (ts, key, value, headers) in enumerate(dataset(n)):
        meta = metas[i]
        rows.append((meta.partition, meta.offset, ts, key, value, headers))
    return sorted(rows, key=lambda r: (r[0], r[1]))


def read_confluent(bootstrap: str, topic: str, partitions: int, count: int) -> list[Row]:
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"fk-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    try:
        consumer.assign([confluent_kafka.TopicPartition(topic, p, 0) for p in range(partitions)])
        rows: list[Row] = []
        for _ in range(300):
            if len(rows) >= count:
                break
            for msg in consumer.consume(num_messages=1000, timeout=0.2):
                if msg.error():
                    raise RuntimeError(str(msg.error()))
                headers = [(k, v) for k, v in (msg.headers() or [])]
                ts = msg.timestamp()[1]
                rows.append((msg.partition(), msg.offset(), ts, msg.key(), msg.value(), headers))
    finally:
        consumer.close()
    return sorted(rows, key=lambda r: (r[0], r[1]))


async def fetch_raw(bootstrap: str, topic: str, partition: int) -> bytes:
    """The partition's records bytes from offset 0, as the broker stores them."""
    async with AIOKafkaClient(bootstrap_servers=bootstrap) as client:
        client.add_topic(topic)
        await client.refresh_metadata()
        leader = client.cluster.leader_for_partition(TopicPartition(topic, partition))
        assert leader is not None
        body = {
            "max_wait_ms": 100,
            "min_bytes": 1,
            "max_bytes": 32 << 20,
            "isolation_level": 0,
            "topics": [
                {
                    "topic": topic,
                    "partitions": [
                        {"partition": partition, "fetch_offset": 0, "partition_max_bytes": 32 << 20}
                    ],
                }
            ],
        }
        for _ in range(50):  # a new topic's leadership may still be settling
            response = await client.send(leader, ApiKey.FETCH, body, version=12)
            part = response["responses"][0]["partitions"][0]
            if part["error_code"] == 0:
                return bytes(part["records"] or b"")
            await asyncio.sleep(0.1)
            await client.refresh_metadata()
            leader = client.cluster.leader_for_partition(TopicPartition(topic, partition))
            assert leader is not None
        raise AssertionError(f"fetch of {topic}/{partition} kept failing: {part}")


def batch_headers(raw: bytes) -> list[tuple[int, int, int, int, int]]:
    """(base_offset, records, producer_id, producer_epoch, base_sequence) of each batch."""
    out = []
    pos = 0
    while pos + 61 <= len(raw):
        base_offset, length = struct.unpack_from(">qi", raw, pos)
        pid, epoch, seq, count = struct.unpack_from(">qhii", raw, pos + 43)
        out.append((base_offset, count, pid, epoch, seq))
        pos += 12 + length
    return out


# ---- basics -----------------------------------------------------------------------------------


async def test_send_and_wait_returns_where_the_record_landed(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=3)
    async with AIOKafkaProducer(bootstrap_servers=bootstrap_servers) as producer:
        assert await producer.partitions_for(topic) == {0, 1, 2}
        meta = await producer.send_and_wait(topic, b"v0", partition=2, timestamp_ms=1234)
        assert (meta.topic, meta.partition, meta.offset) == (topic, 2, 0)
        assert meta.topic_partition == TopicPartition(topic, 2)
        assert (meta.timestamp, meta.timestamp_type) == (1234, 0)
        fut = await producer.send(topic, b"v1", partition=2)
        await producer.flush()
        assert fut.done() and fut.result().offset == 1
    with pytest.raises(Errors.ProducerClosed):
        await producer.send(topic, b"late")
    await producer.stop()  # idempotent


@pytest.mark.parametrize("codec", CODECS)
async def test_every_codec_reads_back_identically_in_librdkafka_and_java(
    bootstrap_servers: str, make_topic: Any, codec: str | None
) -> None:
    topic = make_topic(partitions=2)
    n = 300
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, compression_type=codec, linger_ms=10
    ) as producer:
        metas = await produce_dataset(producer, topic, n)
    expected = expected_rows(n, metas)
    assert [r[1] for r in expected if r[0] == 0] == list(range(n // 2))
    confluent_rows = await asyncio.to_thread(read_confluent, bootstrap_servers, topic, 2, n)
    assert confluent_rows == expected
    java_rows = await asyncio.to_thread(read_java, bootstrap_servers, topic, n)
    assert java_rows == expected
    # The broker kept our codec (the batch attribute bits) and our own decoder agrees too.
    raw = await fetch_raw(bootstrap_servers, topic, 0)
    codec_bits = struct.unpack_from(">h", raw, 21)[0] & 7
    assert codec_bits == CODECS.index(codec)
    ours = decode_records(raw, topic, 0).records
    assert [(r.key, r.value, list(r.headers)) for r in ours] == [
        (r[3], r[4], r[5]) for r in expected if r[0] == 0
    ]


async def test_keyed_records_land_where_librdkafka_murmur2_puts_them(
    bootstrap_servers: str, make_topic: Any
) -> None:
    partitions = 7
    ours_topic = make_topic(partitions=partitions)
    theirs_topic = make_topic(partitions=partitions)
    keys = [f"user-{i}".encode() for i in range(200)] + [b"", b"\xff\x00\x80", "été".encode()]
    async with AIOKafkaProducer(bootstrap_servers=bootstrap_servers) as producer:
        futures = [await producer.send(ours_topic, b"x", key=k) for k in keys]
        ours = [(await f).partition for f in futures]

    def produce_librdkafka() -> list[int]:
        landed: dict[bytes, int] = {}

        def report(err: Any, msg: Any) -> None:
            assert err is None, err
            landed[msg.key()] = msg.partition()

        p = confluent_kafka.Producer(
            {"bootstrap.servers": bootstrap_servers, "partitioner": "murmur2_random"}
        )
        for k in keys:
            p.produce(theirs_topic, b"x", k, on_delivery=report)
        assert p.flush(30) == 0
        return [landed[k] for k in keys]

    theirs = await asyncio.to_thread(produce_librdkafka)
    assert ours == theirs
    assert ours == [partition_for_key(k, partitions) for k in keys]
    assert len(set(ours)) == partitions


async def test_unkeyed_records_stick_to_one_partition_per_batch(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=4)
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, linger_ms=1000, max_batch_size=1 << 20
    ) as producer:
        futures = [await producer.send(topic, b"unkeyed-%d" % i) for i in range(50)]
        await producer.flush()
        first = {(await f).partition for f in futures}
        assert len(first) == 1, "records sent together fill one partition's batch"
        # Small batches fill up quickly: the sticky partition moves on as each one completes.
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, max_batch_size=400, linger_ms=1000
    ) as producer:
        futures = [await producer.send(topic, b"x" * 50) for _ in range(40)]
        await producer.flush()
        metas = [await f for f in futures]
    assert len({m.partition for m in metas}) > 1
    # Consecutive records share a partition until their batch is complete.
    runs = sum(1 for a, b in itertools.pairwise(metas) if a.partition != b.partition)
    assert runs < len(metas) // 2


async def test_unkeyed_records_each_awaited_stay_until_a_batchs_worth_went_out(
    bootstrap_servers: str, make_topic: Any
) -> None:
    """With no linger each awaited record goes in a batch of its own; the sticky partition
    still moves only after ``max_batch_size`` bytes went to it (KIP-794), not with every
    batch."""
    topic = make_topic(partitions=4)
    async with AIOKafkaProducer(bootstrap_servers=bootstrap_servers, max_batch_size=2000) as p:
        partitions = [(await p.send_and_wait(topic, b"x" * 100)).partition for _ in range(60)]
    runs = [len(list(group)) for _, group in itertools.groupby(partitions)]
    # Each record is a batch of its own, about 170 bytes with the batch header: 12 of them
    # make 2000 bytes, then the partition changes (each one on its own before KIP-794).
    assert len(runs) >= 3, runs
    assert all(10 <= n <= 14 for n in runs[:-1]), runs


async def test_unkeyed_sends_mixed_with_others_keep_order_sizes_and_serializer_calls(
    bootstrap_servers: str, make_topic: Any
) -> None:
    """Unkeyed records without headers join the sticky batch on send()'s shortest path; mixed
    with records that take the full path they keep their order, their exact size and one
    serializer call each."""
    topic = make_topic(partitions=1)
    calls: list[object] = []

    def serialize(value: object) -> object:
        calls.append(value)
        return value

    lengths = [0, 1, 44, 45, 46, 47, 62, 63, 64, 65, 100, 1000, 7999, 8000, 8191, 8192, 9000]
    sent: list[tuple[bytes | None, bytes]] = []
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers,
        linger_ms=60_000,
        max_batch_size=1 << 20,
        value_serializer=serialize,
    ) as producer:
        futures = []
        for i, n in enumerate(lengths * 3):
            value = bytes([65 + i % 26]) * n
            if i % 4 == 3:
                key: bytes | None = b"k%d" % i
                futures.append(await producer.send(topic, value, key=key))
            elif i % 4 == 2:
                key = None
                futures.append(await producer.send(topic, value, headers=[("h", b"1")]))
            else:
                key = None
                futures.append(
                    await producer.send(topic, bytearray(value) if i % 5 == 0 else value)
                )
            sent.append((key, value))
        (batch,) = producer._message_accumulator._batches[TopicPartition(topic, 0)]
        headers = [[("h", b"1")] if i % 4 == 2 else [] for i in range(len(sent))]
        estimate = BATCH_OVERHEAD + sum(
            estimate_record_size(k, v, h) for (k, v), h in zip(sent, headers, strict=True)
        )
        # The records are encoded as they are appended: the size is the exact one.
        encoded = batch.builder._records.encode(
            compression="none",
            transactional=False,
            producer_id=-1,
            producer_epoch=-1,
            base_sequence=-1,
        )
        assert batch.builder.size() == len(encoded) <= estimate
        assert batch.builder.record_count() == len(sent)
        await producer.flush()
        metas = await asyncio.gather(*futures)
    assert len(calls) == len(sent), "the serializer runs once per record"
    assert [m.offset for m in metas] == list(range(len(sent)))
    rows = read_confluent(bootstrap_servers, topic, 1, len(sent))
    assert [(r[3], r[4]) for r in sorted(rows, key=lambda r: r[1])] == sent


async def test_a_cancelled_record_future_leaves_the_others_and_stop_closes_the_short_path(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=2)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap_servers, linger_ms=200)
    await producer.start()
    try:
        futures = [await producer.send(topic, b"r%d" % i) for i in range(10)]
        futures[3].cancel()
        metas = await asyncio.gather(*futures[4:])
        assert [m.offset for m in metas] == [metas[0].offset + i for i in range(6)]
        assert len({m.partition for m in metas}) == 1
    finally:
        await producer.stop()
    with pytest.raises(Errors.ProducerClosed):
        await producer.send(topic, b"after stop")


async def test_linger_and_max_batch_size_shape_batches(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=1)
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, linger_ms=500, max_batch_size=1 << 20
    ) as producer:
        futures = [await producer.send(topic, b"a%d" % i) for i in range(20)]
        await asyncio.gather(*futures)
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, max_batch_size=300, linger_ms=500
    ) as producer:
        futures = [await producer.send(topic, b"b" * 100) for _ in range(20)]
        await asyncio.gather(*futures)
    batches = batch_headers(await fetch_raw(bootstrap_servers, topic, 0))
    assert batches[0][:2] == (0, 20), "lingered records share one batch"
    later = [count for _, count, *_ in batches[1:]]
    assert sum(later) == 20 and max(later) <= 3, later


# ---- acks, options ----------------------------------------------------------------------------


@pytest.mark.parametrize("acks", [0, 1, "all", -1])
async def test_acks(bootstrap_servers: str, make_topic: Any, acks: Any) -> None:
    topic = make_topic(partitions=1)
    async with AIOKafkaProducer(bootstrap_servers=bootstrap_servers, acks=acks) as producer:
        futures = [await producer.send(topic, b"m%d" % i, partition=0) for i in range(30)]
        results = await asyncio.gather(*futures)
    if acks == 0:
        assert results == [None] * 30, "acks=0 is fire-and-forget: nothing to report"
    else:
        assert [r.offset for r in results] == list(range(30))
    rows = await asyncio.to_thread(read_confluent, bootstrap_servers, topic, 1, 30)
    assert [r[4] for r in rows] == [b"m%d" % i for i in range(30)]


async def test_options_serializers_partitioner_and_client_settings(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=3)
    seen: list[tuple[bytes | None, list[int], list[int]]] = []

    def last_partition(key: bytes | None, all_partitions: list[int], available: list[int]) -> int:
        seen.append((key, all_partitions, available))
        return all_partitions[-1]

    async with AIOKafkaProducer(
        bootstrap_servers=[bootstrap_servers],
        client_id="fk-producer-test",
        metadata_max_age_ms=60000,
        request_timeout_ms=20000,
        retry_backoff_ms=50,
        connections_max_idle_ms=60000,
        max_request_size=100000,
        key_serializer=lambda k: k.encode(),
        value_serializer=lambda v: json.dumps(v).encode(),
        partitioner=last_partition,
    ) as producer:
        assert producer.client.config.client_id == "fk-producer-test"
        meta = await producer.send_and_wait(topic, {"a": 1}, key="k1")
        assert meta.partition == 2
        assert seen == [(b"k1", [0, 1, 2], [0, 1, 2])]
        with pytest.raises(Errors.MessageSizeTooLargeError, match=r"\(100000\)"):
            await producer.send(topic, "x" * 200000, key="big")
    rows = await asyncio.to_thread(read_confluent, bootstrap_servers, topic, 3, 1)
    assert rows[0][3:5] == (b"k1", b'{"a": 1}')


async def test_a_partitioner_answer_outside_the_topic_raises(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=2)
    answers: list[Any] = [2, -1, "0", 1.0, None]

    def partitioner(key: bytes | None, all_partitions: list[int], available: list[int]) -> Any:
        return answers.pop(0) if answers else 1

    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, partitioner=partitioner
    ) as producer:
        for bad in list(answers):
            with pytest.raises(ValueError, match=rf"chose {bad!r} for topic '{topic}'.*\[0, 1\]"):
                await producer.send(topic, b"v", key=b"k")
        meta = await producer.send_and_wait(topic, b"v", key=b"k")
        assert (meta.partition, meta.offset) == (1, 0)


async def test_create_batch_and_send_batch(bootstrap_servers: str, make_topic: Any) -> None:
    topic = make_topic(partitions=2)
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, max_batch_size=1000, compression_type="lz4"
    ) as producer:
        batch = producer.create_batch()
        appended = 0
        while batch.append(key=b"k", value=b"v" * 50, timestamp=1700000000000 + appended):
            appended += 1
        assert batch.record_count() == appended > 5
        assert 0 < batch.size() <= 1000
        fut = await producer.send_batch(batch, topic, partition=1)
        meta = await fut
        assert (meta.partition, meta.offset) == (1, 0)
    rows = await asyncio.to_thread(read_confluent, bootstrap_servers, topic, 2, appended)
    assert [(r[0], r[2]) for r in rows] == [(1, 1700000000000 + i) for i in range(appended)]


# ---- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("topic", "request_timeout_ms", "error", "match"),
    [
        # Unknown: metadata is asked again until request_timeout_ms.
        ("fk-no-such-topic", 600, Errors.UnknownTopicOrPartitionError, "fk-no-such-topic"),
        # Invalid: raised at once, not after request_timeout_ms (30 s here).
        ("bad topic!", 30000, Errors.InvalidTopicError, "'bad topic!' is not a valid"),
    ],
)
async def test_a_topic_the_metadata_lacks_raises(
    bootstrap_servers: str, topic: str, request_timeout_ms: int, error: type[Exception], match: str
) -> None:
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, request_timeout_ms=request_timeout_ms
    ) as producer:
        with pytest.raises(error, match=match):
            await producer.send(topic, b"v")


async def test_a_bad_timestamp_raises_and_queues_nothing(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=1)
    async with AIOKafkaProducer(bootstrap_servers=bootstrap_servers) as producer:
        for bad in ("now", -1, True, float("nan"), 2**63):
            with pytest.raises(ValueError, match="timestamp_ms must be epoch milliseconds"):
                await producer.send(topic, b"v", timestamp_ms=bad)
            # No batch was opened for it (an empty one would be sent, and refused).
            queued = producer._message_accumulator._batches.get(TopicPartition(topic, 0))
            assert not queued
        with pytest.raises(ValueError, match="timestamp must be epoch milliseconds"):
            producer.create_batch().append(key=None, value=b"v", timestamp="now")
        meta = await producer.send_and_wait(topic, b"ok", timestamp_ms=1700000000000.0)
        assert (meta.offset, meta.timestamp) == (0, 1700000000000)


@pytest.mark.parametrize("idempotence", [False, True])
async def test_broker_rejection_fails_the_future_with_a_typed_error(
    bootstrap_servers: str, make_topic: Any, idempotence: bool
) -> None:
    """The next record still goes through; with idempotence, under a new producer id (the
    refused batch left a gap in the partition's sequence numbers)."""
    topic = make_topic(partitions=1, configs={"max.message.bytes": "2000"})
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers,
        enable_idempotence=idempotence,
        request_timeout_ms=10000,
    ) as producer:
        await producer.send_and_wait(topic, b"first")
        fut = await producer.send(topic, b"x" * 5000)
        with pytest.raises(Errors.MessageSizeTooLargeError, match=rf"{topic}\[0\]"):
            await fut
        ok = await producer.send_and_wait(topic, b"small")
        assert ok.offset == 1


# ---- idempotence ------------------------------------------------------------------------------


def _has_init_producer_id() -> bool:
    return ApiKey.INIT_PRODUCER_ID in _native.supported_apis()


@pytest.mark.skipif(
    not _has_init_producer_id(), reason="the native core does not speak InitProducerId yet"
)
async def test_idempotent_producer_numbers_batches_in_sequence(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=3)
    n = 3000
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers,
        enable_idempotence=True,
        max_batch_size=2000,
        compression_type="zstd",
    ) as producer:
        assert producer._acks == -1
        futures = [
            await producer.send(topic, b"r%05d" % i, key=b"k%d" % (i % 10)) for i in range(n)
        ]
        metas = [await f for f in futures]
    by_partition: dict[int, list[int]] = {}
    for i, m in enumerate(metas):
        by_partition.setdefault(m.partition, []).append(i)
    pids = set()
    for p, indexes in by_partition.items():
        raw = await fetch_raw(bootstrap_servers, topic, p)
        batches = batch_headers(raw)
        sequence = 0
        for base_offset, count, pid, epoch, seq in batches:
            assert seq == sequence == base_offset, "sequence numbers follow the offsets"
            assert epoch >= 0
            pids.add(pid)
            sequence += count
        values = [r.value for r in decode_records(raw, topic, p).records]
        assert values == [b"r%05d" % i for i in indexes], "no duplicates, no reordering"
    assert len(pids) == 1 and next(iter(pids)) >= 0
