"""Writing test data without the producer under test: record batches built by the Rust
builder, sent with a plain Produce request (acks=all), so consumer tests do not depend on the
producer."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ferrokafka import errors as Errors
from ferrokafka.client import AIOKafkaClient
from ferrokafka.protocol import ApiKey
from ferrokafka.records import encode_batch
from ferrokafka.structs import TopicPartition

Record = tuple[int, bytes | None, bytes | None, Sequence[tuple[str, bytes | None]]]


def value_of(partition: int, i: int, size: int = 20) -> bytes:
    return (b"p%d-v%06d-" % (partition, i)).ljust(size, b"x")


async def produce(
    bootstrap_servers: str,
    topic: str,
    partition: int,
    records: Sequence[Record],
    *,
    compression: str = "none",
    batch_size: int = 500,
) -> list[int]:
    """Append ``records`` to one partition in batches of ``batch_size``; returns each batch's
    base offset."""
    bases: list[int] = []
    async with AIOKafkaClient(bootstrap_servers=bootstrap_servers) as client:
        client.add_topic(topic)
        for start in range(0, len(records), batch_size):
            batch = encode_batch(records[start : start + batch_size], compression=compression)
            bases.append(await _send(client, topic, partition, batch))
    return bases


async def _send(client: AIOKafkaClient, topic: str, partition: int, batch: bytes) -> int:
    """One Produce (acks=all), retried while a new topic's leadership settles."""
    tp = TopicPartition(topic, partition)
    for attempt in range(100):
        if attempt or client.cluster.leader_for_partition(tp) is None:
            try:
                await client.refresh_metadata()
            except Errors.KafkaConnectionError:
                await asyncio.sleep(0.2)  # asked a dead broker: another one next time
                continue
        leader = client.cluster.leader_for_partition(tp)
        if leader is None or leader < 0:
            await asyncio.sleep(0.1)
            continue
        try:
            conn = await client.ready(leader)
        except Errors.KafkaConnectionError:
            await asyncio.sleep(0.2)  # a dead leader: wait for the metadata to move on
            continue
        response = await conn.send(
            ApiKey.PRODUCE,
            {
                "transactional_id": None,
                "acks": -1,
                "timeout_ms": 30000,
                "topic_data": [
                    {"name": topic, "partition_data": [{"index": partition, "records": batch}]}
                ],
            },
            version=min(conn.version_for(ApiKey.PRODUCE), 12),
        )
        result = response["responses"][0]["partition_responses"][0]
        code = result["error_code"]
        if not code:
            base: int = result["base_offset"]
            return base
        if not Errors.for_code(code).retriable:
            raise Errors.for_code(code)(f"produce to {topic}/{partition}")
        await asyncio.sleep(0.1)
    raise Errors.KafkaTimeoutError(f"produce to {topic}/{partition} kept failing")


async def produce_values(
    bootstrap_servers: str,
    topic: str,
    partitions: int,
    per_partition: int,
    *,
    compression: str = "none",
    timestamp: int = 1_700_000_000_000,
) -> None:
    """``per_partition`` records into each partition: key ``k<i>``, value ``value_of(p, i)``,
    timestamps ``timestamp + i``."""
    for p in range(partitions):
        records: list[Record] = [
            (timestamp + i, b"k%d" % i, value_of(p, i), [("h", b"%d" % i)])
            for i in range(per_partition)
        ]
        await produce(bootstrap_servers, topic, p, records, compression=compression)
