"""Consumer groups with the KIP-848 consumer protocol (``group_protocol="consumer"``): the broker
assigns, members join, rebalance and leave, commits work, and a Java member shares the group."""

from __future__ import annotations

import time
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, TopicPartition
from ferrokafka.admin import AIOKafkaAdminClient

from .produce_util import produce_values
from .test_group import poll_all, settle
from .test_group_interop import JavaMember

pytestmark = pytest.mark.integration


def member(bootstrap: str, topic: str, group: str, **config: Any) -> Any:
    c: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        group_protocol="consumer",
        auto_offset_reset="earliest",
        **config,
    )
    c.subscribe([topic])
    return c


async def test_consumer_protocol_group_joins_rebalances_and_leaves(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=6)
    group = f"g848-{topic}"
    await produce_values(bootstrap_servers, topic, 6, 20)
    a = member(bootstrap_servers, topic, group, enable_auto_commit=False)
    await a.start()
    b = member(bootstrap_servers, topic, group)
    try:
        got: list[Any] = []
        deadline = time.monotonic() + 60
        while len(a.assignment()) < 6:
            got += await poll_all([a])
            assert time.monotonic() < deadline, a.assignment()
        epoch = a._coordinator.generation
        assert epoch > 0
        await b.start()
        await settle([a, b], 6)
        assert sorted(len(c.assignment()) for c in (a, b)) == [3, 3]
        assert a._coordinator.generation > epoch
        # Commits use the member epoch.
        await a.commit({tp: 1 for tp in a.assignment()})
        assert {await a.committed(tp) for tp in a.assignment()} == {1}
        async with AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers) as admin:
            (response,) = await admin.describe_consumer_groups([group])
            (described,) = response["groups"]
            assert len(described["members"]) == 2, described
        await b.stop()  # leaves: a gets everything back
        await settle([a], 6)
    finally:
        await b.stop()
        await a.stop()


async def test_java_and_ferrokafka_share_a_consumer_protocol_group(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=8)
    group = f"g848j-{topic}"
    ours = [member(bootstrap_servers, topic, group) for _ in range(2)]
    for c in ours:
        await c.start()
    java = await JavaMember.start(bootstrap_servers, group, topic, "uniform", protocol="consumer")
    try:
        deadline = time.monotonic() + 90
        while True:
            await poll_all(ours)
            sets: list[set[TopicPartition]] = [c.assignment() for c in ours] + [java.assignment]
            sizes = sorted(len(s) for s in sets)
            if sum(sizes) == 8 and len(set().union(*sets)) == 8 and sizes[0] >= 2:
                break
            assert time.monotonic() < deadline, sets
    finally:
        await java.stop()
        for c in ours:
            await c.stop()
