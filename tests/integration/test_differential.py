"""One script written against aiokafka's API, run once with aiokafka and once with ferrokafka
(only the import changes) on the same topics: the transcripts must be identical.

The one documented difference: ``ConsumerRecord.checksum`` is None in aiokafka for v2 batches,
while ferrokafka gives the batch's CRC-32C; the transcript records whether it is set.
"""

from __future__ import annotations

import asyncio
import importlib
import uuid
from typing import Any

import pytest

from .produce_util import produce

pytestmark = pytest.mark.integration

T0 = 1_700_000_000_000


def row(r: Any) -> tuple[Any, ...]:
    return (
        r.topic,
        r.partition,
        r.offset,
        r.timestamp,
        r.timestamp_type,
        r.key,
        r.value,
        r.serialized_key_size,
        r.serialized_value_size,
        [tuple(h) for h in r.headers],
    )


async def script(package: str, bootstrap: str, topic: str, group: str) -> list[Any]:
    """Uses only aiokafka's public API, from ``package``."""
    kafka = importlib.import_module(package)
    structs = importlib.import_module(f"{package}.structs")
    errors = importlib.import_module(f"{package}.errors")
    TopicPartition = kafka.TopicPartition
    out: list[Any] = []
    a, b = TopicPartition(topic, 0), TopicPartition(topic, 1)
    consumer = kafka.AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_poll_records=37,
        key_deserializer=lambda k: None if k is None else k.decode(),
    )
    await consumer.start()
    try:
        consumer.assign([a, b])
        out.append(("assignment", sorted(consumer.assignment())))
        out.append(("topic listed", topic in await consumer.topics()))
        out.append(("beginning", sorted((await consumer.beginning_offsets([a, b])).items())))
        out.append(("end", sorted((await consumer.end_offsets([a, b])).items())))
        times = await consumer.offsets_for_times({a: T0 + 150, b: T0 + 10**9})
        out.append(
            ("times", sorted((tp, None if v is None else tuple(v)) for tp, v in times.items()))
        )
        rows = []
        checksums = set()
        while len(rows) < 400:
            batch = await consumer.getmany(timeout_ms=5000)
            assert batch, "no data"
            for records in batch.values():
                assert len(records) <= 37
                rows.extend(row(r) for r in records)
                checksums.update(r.checksum is None for r in records)
        out.append(("rows", sorted(rows)))
        out.append(("positions", [await consumer.position(a), await consumer.position(b)]))
        # (after fetching, so both clients have the topic's metadata in hand)
        out.append(("partitions", sorted(consumer.partitions_for_topic(topic) or [])))
        out.append(("highwater", [consumer.highwater(a), consumer.highwater(b)]))
        consumer.seek(a, 150)
        one = await consumer.getone()
        out.append(("after seek", row(one)))
        consumer.pause(a)
        out.append(("paused", sorted(consumer.paused())))
        out.append(("while paused", await consumer.getmany(a, timeout_ms=300)))
        consumer.resume(a)
        await consumer.seek_to_end(a)
        out.append(("end position", await consumer.position(a)))
        await consumer.seek_to_beginning(b)
        out.append(("beginning position", await consumer.position(b)))
        await consumer.commit({a: 42, b: structs.OffsetAndMetadata(7, "meta")})
        out.append(("committed", [await consumer.committed(a), await consumer.committed(b)]))
        out.append(("seek to committed", sorted((await consumer.seek_to_committed()).items())))
        out.append(("position after", [await consumer.position(a), await consumer.position(b)]))
        try:
            consumer.seek(TopicPartition(topic, 7), 1)
        except errors.IllegalStateError as exc:
            out.append(("error", type(exc).__name__))
        out.append(("checksum is None", sorted(checksums)))
    finally:
        await consumer.stop()
    return out


async def test_aiokafka_script_gives_identical_results(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=2)
    for p in range(2):
        records = [
            (T0 + i, None if i % 9 == 0 else b"k%d" % i, b"v%d-%d" % (p, i), [("n", b"%d" % i)])
            for i in range(200)
        ]
        await produce(bootstrap_servers, topic, p, records, compression="lz4", batch_size=30)
    theirs = await script("aiokafka", bootstrap_servers, topic, f"diff-a-{topic}")
    ours = await script("ferrokafka", bootstrap_servers, topic, f"diff-f-{topic}")
    assert len(theirs) == len(ours)
    for t, o in zip(theirs, ours, strict=True):
        if t[0] == "checksum is None":
            assert (t[1], o[1]) == ([True], [False])  # the documented difference
            continue
        assert t == o, f"{t[0]}: aiokafka {t[1]!r} != ferrokafka {o[1]!r}"


async def transactional_script(package: str, bootstrap: str, topic: str, group: str) -> list[Any]:
    """aiokafka's transactional producer API, from ``package``; then what a ``read_committed``
    consumer of the group reads and finds committed."""
    kafka = importlib.import_module(package)
    errors = importlib.import_module(f"{package}.errors")
    tp = kafka.TopicPartition(topic, 0)
    out: list[Any] = []
    producer = kafka.AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=group)
    await producer.start()
    try:
        try:
            await producer.send(topic, b"outside")
        except errors.IllegalOperation as exc:
            out.append(("send outside", type(exc).__name__))
        async with producer.transaction():
            for i in range(3):
                await producer.send(topic, b"in-context-%d" % i, partition=0)
        await producer.begin_transaction()
        await producer.send(topic, b"aborted", partition=0)
        await producer.abort_transaction()
        await producer.begin_transaction()
        await producer.send(topic, b"with offsets", partition=0)
        await producer.send_offsets_to_transaction({tp: 5}, group)
        await producer.commit_transaction()
    finally:
        await producer.stop()
    consumer = kafka.AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        isolation_level="read_committed",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    await consumer.start()
    try:
        consumer.assign([tp])
        for _ in range(100):  # the commit marker lands just after EndTxn returns
            if await consumer.committed(tp) is not None:
                break
            await asyncio.sleep(0.1)
        out.append(("committed", await consumer.committed(tp)))
        consumer.seek(tp, 0)
        values = []
        while len(values) < 4:
            batch = await consumer.getmany(timeout_ms=5000)
            assert batch, "no data"
            values.extend(r.value for records in batch.values() for r in records)
        out.append(("read committed", values))
    finally:
        await consumer.stop()
    return out


async def test_aiokafka_transactional_script_gives_identical_results(
    bootstrap_servers: str, make_topic: Any
) -> None:
    theirs = await transactional_script(
        "aiokafka", bootstrap_servers, make_topic(), f"txn-a-{uuid.uuid4().hex[:8]}"
    )
    ours = await transactional_script(
        "ferrokafka", bootstrap_servers, make_topic(), f"txn-f-{uuid.uuid4().hex[:8]}"
    )
    assert theirs == ours
    assert ours[0] == ("send outside", "IllegalOperation")
