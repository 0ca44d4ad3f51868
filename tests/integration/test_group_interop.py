"""ferrokafka and Java ``KafkaConsumer`` members (kafka-clients from Maven) in one group, with
the classic protocol (client-side assignors) and with KIP-848 (server-side assignors): the
partitions are split between them, and Kafka's own ``ConsumerGroupCommand --describe`` shows
the ferrokafka members, their assignments and their lag."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, TopicPartition
from ferrokafka.admin import AIOKafkaAdminClient
from ferrokafka.consumer.group.assignors.range import RangePartitionAssignor
from ferrokafka.consumer.group.assignors.sticky.sticky_assignor import (
    CooperativeStickyPartitionAssignor,
)

from .group_util import FAST, JavaMember, describe, poll_all, settle
from .produce_util import produce_values

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("protocol", "assignor"),
    [
        ("classic", "range"),
        ("classic", "cooperative-sticky"),
        ("consumer", "range"),
        ("consumer", "uniform"),
    ],
)
async def test_java_and_ferrokafka_members_share_a_group(
    bootstrap_servers: str, make_topic: Any, protocol: str, assignor: str
) -> None:
    topic = make_topic(partitions=12)
    group = f"g-{topic}"
    bootstrap = bootstrap_servers
    await produce_values(bootstrap, topic, 12, 20)
    if protocol == "classic":
        ours_config: dict[str, Any] = {
            "partition_assignment_strategy": {
                "range": (RangePartitionAssignor,),
                "cooperative-sticky": (CooperativeStickyPartitionAssignor,),
            }[assignor]
        }
    else:
        ours_config = {"group_protocol": "consumer", "group_remote_assignor": assignor}
    ours: list[AIOKafkaConsumer[Any, Any]] = []
    java: list[JavaMember] = []
    try:
        for _ in range(2):
            c: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
                bootstrap_servers=bootstrap,
                group_id=group,
                enable_auto_commit=False,
                **FAST,
                **ours_config,
            )
            c.subscribe([topic])
            await c.start()
            ours.append(c)
        await settle(ours, 12)
        # The group runs the assignor ferrokafka asked for (under KIP-848 the broker's, named
        # by group_remote_assignor), before any Java member could have chosen it.
        async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
            (response,) = await admin.describe_consumer_groups([group])
        (described,) = response["groups"]
        assert (described["protocol_type"], described["protocol_data"]) == ("consumer", assignor)
        java = [
            await JavaMember.start(bootstrap, group, topic, assignor, protocol=protocol)
            for _ in range(2)
        ]
        deadline = time.monotonic() + 90
        while True:
            await poll_all(ours)
            sets = [c.assignment() for c in ours] + [j.assignment for j in java]
            sizes = [len(s) for s in sets]
            if sum(sizes) == 12 and len(set().union(*sets)) == 12 and sizes == [3, 3, 3, 3]:
                break
            assert time.monotonic() < deadline, f"no complete split: {sets}"
        # Each ferrokafka partition at its own committed offset, so every row's lag differs.
        committed: dict[TopicPartition, tuple[str, int]] = {}
        for c in ours:
            offsets: dict[TopicPartition, Any] = {tp: 1 + tp.partition for tp in c.assignment()}
            await asyncio.wait_for(c.commit(offsets), 60)
            assert c._coordinator is not None
            committed.update({tp: (c._coordinator.member_id, o) for tp, o in offsets.items()})
        # In a thread: the members keep heartbeating while the JVM runs.
        rows = await asyncio.wait_for(asyncio.to_thread(describe, bootstrap, group), 120)
        for tp, (member_id, offset) in committed.items():
            row = next(r for r in rows if r[:2] == [topic, str(tp.partition)])
            # CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID
            current, end, lag, consumer_id = row[2:6]
            assert (int(current), int(end), int(lag)) == (offset, 20, 20 - offset), row
            assert consumer_id == member_id, row
            assert row[-1].startswith("ferrokafka"), row
    finally:
        for c in ours:
            await c.stop()
        for j in java:
            await j.stop()
