"""The client under uvloop, against the real broker: produce, consume (records and Arrow, large
Fetch responses, ~1.5 MB a partition, received straight into their storage), a group with
commits, and admin calls."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import uvloop
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from ferrokafka.admin import AIOKafkaAdminClient

pytestmark = pytest.mark.integration

RECORDS = 3000
VALUE = 1024


def value(p: int, i: int) -> bytes:
    return (b"%d-%d-" % (p, i)).ljust(VALUE, b"v")


async def _round_trip(bootstrap: str, topic: str) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    assert isinstance(loop, uvloop.Loop)
    async with AIOKafkaProducer(bootstrap_servers=bootstrap) as producer:
        for i in range(RECORDS):
            p = i % 2
            await producer.send(topic, value(p, i // 2), key=b"k%d" % i, partition=p)
        await producer.flush()
    tps = [TopicPartition(topic, p) for p in range(2)]
    out: dict[str, Any] = {}
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
    ) as consumer:
        consumer.assign(tps)
        got: dict[int, list[bytes]] = {0: [], 1: []}
        while sum(map(len, got.values())) < RECORDS:
            batch = await consumer.getmany(timeout_ms=5000)
            assert batch, "no records within 5 s"
            for tp, records in batch.items():
                assert [r.offset for r in records] == list(
                    range(len(got[tp.partition]), len(got[tp.partition]) + len(records))
                )
                got[tp.partition].extend(r.value for r in records)
        out["records"] = got
        await consumer.seek_to_beginning(*tps)
        rows = 0
        while rows < RECORDS:
            arrow = await consumer.getmany_arrow(timeout_ms=5000)
            assert arrow, "no Arrow batches within 5 s"
            rows += sum(b.num_rows for b in arrow.values())
        out["arrow_rows"] = rows
    async with AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=f"{topic}-g",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    ) as member:
        seen = 0
        while seen < RECORDS:
            batch = await member.getmany(timeout_ms=5000)
            assert batch, "the group member got nothing within 5 s"
            seen += sum(map(len, batch.values()))
        await member.commit()
        out["committed"] = {tp.partition: await member.committed(tp) for tp in tps}
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        out["topics"] = await admin.list_topics()
    finally:
        await admin.close()
    return out


def test_produce_consume_group_and_admin_under_uvloop(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=2)
    out = uvloop.run(_round_trip(bootstrap_servers, topic))
    half = RECORDS // 2
    assert out["records"] == {p: [value(p, i) for i in range(half)] for p in range(2)}
    assert out["arrow_rows"] == RECORDS
    assert out["committed"] == {0: half, 1: half}
    assert topic in out["topics"]
