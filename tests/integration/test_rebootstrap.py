"""Rebootstrap (KIP-899, KIP-1102): when every broker a client knows is gone and its bootstrap
address now leads to other brokers, the client asks the bootstrap address again and carries on
with the new cluster; with ``metadata_recovery_strategy="none"`` it keeps to the brokers it
knew. The stable bootstrap address is a proxy re-pointed from the old cluster to the new one
(as a DNS name or a load balancer would be)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from ferrokafka import errors as Errors
from ferrokafka.admin import AIOKafkaAdminClient
from ferrokafka.client import AIOKafkaClient
from ferrokafka.testing import KafkaBroker
from ferrokafka.testing.faults import FaultProxy
from ferrokafka.testing.kraft import QUICK_START_JVM_OPTIONS

pytestmark = pytest.mark.integration


@dataclass
class Move:
    """An old one-node cluster behind a stable address, and the new one to move it to."""

    old: KafkaBroker
    new: KafkaBroker
    address: FaultProxy
    topic: str

    def replace_cluster(self) -> None:
        """Every broker of the old cluster goes; the address now leads to the new one."""
        self.old.stop()
        self.address.upstream = ("127.0.0.1", self.new.port)


@pytest.fixture
async def move(kafka_broker: KafkaBroker) -> AsyncIterator[Move]:
    old = KafkaBroker(jvm_options=QUICK_START_JVM_OPTIONS)
    old.start()
    address = FaultProxy(("127.0.0.1", old.port)).start()
    topic = f"fk-rebootstrap-{uuid.uuid4().hex[:10]}"
    try:
        for cluster in (old, kafka_broker):
            await cluster.acreate_topic(topic, partitions=1)
        yield Move(old, kafka_broker, address, topic)
    finally:
        address.stop()
        old.stop()
        await kafka_broker.adelete_topic(topic)


async def test_a_producer_and_an_admin_client_carry_on_with_the_new_cluster(move: Move) -> None:
    options = {"bootstrap_servers": move.address.address, "request_timeout_ms": 30000}
    producer = AIOKafkaProducer(**options, retry_backoff_ms=100)
    admin = AIOKafkaAdminClient(**options)
    await producer.start()
    await admin.start()
    try:
        before = await producer.send_and_wait(move.topic, b"before")
        old_id = producer.client.cluster.cluster_id
        assert old_id is not None

        move.replace_cluster()
        after = await asyncio.wait_for(producer.send_and_wait(move.topic, b"after"), 60)
        assert producer.client.cluster.cluster_id not in (None, old_id)
        assert (before.offset, after.offset) == (0, 0)  # each cluster's first record
        assert move.topic in await asyncio.wait_for(admin.list_topics(), 60)
    finally:
        await producer.stop()
        await admin.close()

    # The record is in the new cluster.
    consumer = AIOKafkaConsumer(
        bootstrap_servers=move.new.bootstrap_servers, auto_offset_reset="earliest"
    )
    async with consumer:
        tp = TopicPartition(move.topic, 0)
        consumer.assign([tp])
        record = await asyncio.wait_for(consumer.getone(), 30)
    assert record.value == b"after"


@pytest.mark.parametrize("strategy", ["rebootstrap", "none"])
async def test_metadata_recovery_strategy(move: Move, strategy: str) -> None:
    client = AIOKafkaClient(
        bootstrap_servers=move.address.address,
        request_timeout_ms=5000,
        reconnect_backoff_ms=50,
        metadata_recovery_strategy=strategy,
    )
    await client.bootstrap()
    try:
        old_id = client.cluster.cluster_id
        move.replace_cluster()
        outcomes: list[str] = []
        for _ in range(6):  # enough for each known broker to have failed once
            try:
                await client.refresh_metadata()
            except Errors.KafkaConnectionError as exc:
                outcomes.append(str(exc))
                await asyncio.sleep(0.2)
            else:
                outcomes.append("ok")
                break
        if strategy == "rebootstrap":
            assert outcomes[-1] == "ok", outcomes
            assert client.cluster.cluster_id not in (None, old_id)
        else:
            assert "ok" not in outcomes
            assert client.cluster.cluster_id == old_id
    finally:
        await client.close()
