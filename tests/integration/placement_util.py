"""Placing replicas on the three-node placement cluster, for the tests of reassignments, leader
elections and log directories: topics on chosen brokers, data to move, replication throttled so
that a move stays in progress, and waiting for what the metadata shows."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TypeVar

from ferrokafka import AIOKafkaProducer
from ferrokafka.admin import (
    AIOKafkaAdminClient,
    AlterConfigOp,
    AlterConfigOpType,
    ConfigResource,
    ConfigResourceType,
    NewTopic,
)
from ferrokafka.structs import TopicPartition

T = TypeVar("T")
NODES = (1, 2, 3)
THROTTLED = {
    "leader.replication.throttled.replicas": "*",
    "follower.replication.throttled.replicas": "*",
}
"""Topic configs that put every replica of the topic under the brokers' replication throttle."""
DYNAMIC = 2
"""DescribeConfigs' config source of a value set on one broker (DYNAMIC_BROKER_CONFIG)."""


async def eventually(
    read: Callable[[], Awaitable[T]], done: Callable[[T], bool], timeout: float = 60
) -> T:
    """``read()`` until ``done`` holds of its value (returned), or fail with the last one."""
    deadline = time.monotonic() + timeout
    while True:
        value = await read()
        if done(value) or time.monotonic() > deadline:
            assert done(value), value
            return value
        await asyncio.sleep(0.2)


async def placed(admin: AIOKafkaAdminClient, tp: TopicPartition) -> tuple[list[int], int]:
    """The partition's replicas and leader in the metadata."""
    [topic] = await admin.describe_topics([tp.topic])
    [p] = [p for p in topic["partitions"] if p["partition_index"] == tp.partition]
    return list(p["replica_nodes"]), p["leader_id"]


async def create_topic(
    admin: AIOKafkaAdminClient, replicas: list[int] | dict[int, list[int]], **configs: str
) -> str:
    """A new topic of one partition on ``replicas``, or of a partition on each entry of
    ``replicas`` by partition (the first replica the preferred leader)."""
    name = f"fk-placement-{uuid.uuid4().hex[:10]}"
    assignment = replicas if isinstance(replicas, dict) else {0: replicas}
    topic = NewTopic(name, -1, -1, replica_assignments=assignment, topic_configs=configs)
    [created] = (await admin.create_topics([topic]))["topics"]
    assert created["error_code"] == 0, created
    await admin.wait_for_topic(name, partitions=len(assignment), timeout=30)
    return name


async def fill(bootstrap: str, topic: str, count: int, size: int) -> None:
    """``count`` records of ``size`` bytes into partition 0."""
    async with AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5) as producer:
        sent = [await producer.send(topic, b"x" * size, partition=0) for _ in range(count)]
        await asyncio.gather(*sent)


async def throttle(admin: AIOKafkaAdminClient, rate: str | None) -> None:
    """Cap (or, with ``None``, uncap) replication traffic on every broker, and wait until each
    broker has applied it (a broker applies a dynamic config when its metadata log carries it;
    a move started before that runs unthrottled)."""
    names = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
    await set_broker_configs(admin, dict.fromkeys(names, rate))


async def set_broker_configs(
    admin: AIOKafkaAdminClient, configs: dict[str, str | None], nodes: tuple[int, ...] = NODES
) -> None:
    """Set (or, with ``None``, delete) dynamic configs of each of ``nodes``, and wait until each
    has applied them."""
    brokers = [ConfigResource(ConfigResourceType.BROKER, str(n)) for n in nodes]
    ops = [
        AlterConfigOp(
            name, value, AlterConfigOpType.SET if value is not None else AlterConfigOpType.DELETE
        )
        for name, value in configs.items()
    ]
    await admin.incremental_alter_configs({broker: ops for broker in brokers})

    async def applied() -> list[dict[str, str | None]]:
        described = await admin.describe_configs(brokers)
        return [
            {c["name"]: c["value"] for c in result["configs"] if c["config_source"] == DYNAMIC}
            for response in described
            for result in response["results"]
        ]

    await eventually(
        applied,
        lambda found: all(b.get(name) == value for b in found for name, value in configs.items()),
    )
