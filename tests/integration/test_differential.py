"""One script written against aiokafka's API, run once with aiokafka and once with ferrokafka
(only the import changes) on the same topics: the transcripts must be identical.

The one documented difference: ``ConsumerRecord.checksum`` is None in aiokafka for v2 batches,
while ferrokafka gives the batch's CRC-32C; the transcript records whether it is set.
"""

from __future__ import annotations

import importlib
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
