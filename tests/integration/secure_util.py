"""What the secured-listener tests share: a produce, a group consumer, a commit and an admin
call over a listener, a client start that must be refused, and OAUTHBEARER client options."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from ferrokafka import errors as Errors
from ferrokafka.admin import AIOKafkaAdminClient
from ferrokafka.conn import Connection
from ferrokafka.testing import KafkaBroker
from ferrokafka.testing.security import UnsecuredTokenProvider


def where(broker: KafkaBroker) -> str:
    """How errors name ``broker``'s bootstrap node."""
    return f"node -1 at {broker.bootstrap_servers}"


async def round_trip(broker: KafkaBroker, options: dict[str, Any], label: str) -> list[Connection]:
    """Produce ten records to a new two-partition topic with ``options``, then read, commit and
    list them (:func:`consume_commit_and_list`): the producer's connections, for the caller's
    checks of how they authenticated."""
    topic = f"fk-{label}-{uuid.uuid4().hex[:10]}"
    await broker.acreate_topic(topic, partitions=2)
    try:
        values = [f"{label}-{i}".encode() for i in range(10)]
        async with AIOKafkaProducer(**options) as producer:
            for i, value in enumerate(values):
                await producer.send(topic, value, partition=i % 2)
            await producer.flush()
            connections = list(producer.client.connections.values())
        assert connections
        await consume_commit_and_list(options, topic, values)
        return connections
    finally:
        await broker.adelete_topic(topic)


async def consume_commit_and_list(options: dict[str, Any], topic: str, values: list[bytes]) -> None:
    """Read ``values`` (written round-robin to partitions 0 and 1 of ``topic``) in a new group,
    commit, and check the committed offsets through the consumer and the admin client, all with
    the client ``options``."""
    group = f"g-{uuid.uuid4().hex[:8]}"
    consumer = AIOKafkaConsumer(topic, **options, group_id=group, auto_offset_reset="earliest")
    async with consumer:
        seen: list[bytes] = []
        deadline = time.monotonic() + 30
        while len(seen) < len(values) and time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=1000)
            seen += [r.value for records in batch.values() for r in records if r.value]
        assert sorted(seen) == sorted(values)
        await consumer.commit()
        committed = {p: await consumer.committed(TopicPartition(topic, p)) for p in (0, 1)}
    half = len(values) // 2
    assert committed == {0: half, 1: half}

    async with AIOKafkaAdminClient(**options) as admin:
        assert topic in await admin.list_topics()
        offsets = await admin.list_consumer_group_offsets(group)
    assert {tp.partition: meta.offset for tp, meta in offsets.items()} == {0: half, 1: half}


async def start_fails(client: Any) -> BaseException:
    """Start ``client`` (consumer, producer or admin), which must fail within a few seconds:
    the error."""
    began = time.monotonic()
    try:
        with pytest.raises(Errors.KafkaError) as caught:
            await client.start()
    finally:
        await (client.close() if isinstance(client, AIOKafkaAdminClient) else client.stop())
    assert time.monotonic() - began < 5, "start() took too long to fail"
    return caught.value


def oauth_options(broker: KafkaBroker, provider: UnsecuredTokenProvider) -> dict[str, Any]:
    """``broker``'s client options with OAUTHBEARER tokens from ``provider`` instead of a
    password."""
    options = broker.client_options()
    for password_option in ("sasl_plain_username", "sasl_plain_password"):
        del options[password_option]
    return {**options, "sasl_mechanism": "OAUTHBEARER", "sasl_oauth_token_provider": provider}
