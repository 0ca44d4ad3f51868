"""A share group's membership (KIP-932) against the real broker: a member joins and is
assigned every partition of its topics, several members may hold the same partitions (share
groups lock records, not partitions), an unsubscribe leaves and a subscribe joins again, and
a closed member is gone from the group."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from ferrokafka.client import AIOKafkaClient
from ferrokafka.protocol import Api
from ferrokafka.share.member import ShareMember
from ferrokafka.structs import TopicPartition

pytestmark = pytest.mark.integration


async def until_assigned(
    member: ShareMember, want: set[TopicPartition], timeout: float = 30
) -> None:
    deadline = time.monotonic() + timeout
    while set(member.assignment) != want:
        member.raise_if_failed()
        assert time.monotonic() < deadline, (member.epoch, sorted(member.assignment))
        member.assignment_changed.clear()
        try:
            await asyncio.wait_for(member.assignment_changed.wait(), 1)
        except asyncio.TimeoutError:
            pass


async def test_members_join_share_partitions_leave_and_rejoin(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=2)
    group = f"share-member-{topic}"
    both = {TopicPartition(topic, 0), TopicPartition(topic, 1)}
    async with (
        AIOKafkaClient(bootstrap_servers=bootstrap_servers) as ca,
        AIOKafkaClient(bootstrap_servers=bootstrap_servers) as cb,
    ):
        a, b = ShareMember(ca, group), ShareMember(cb, group)
        try:
            a.subscribe([topic])
            a.start()
            await until_assigned(a, both)
            first_epoch = a.epoch
            assert first_epoch >= 1
            # A second member: between them they cover every partition, and a partition may
            # be assigned to both.
            b.subscribe([topic])
            b.start()
            deadline = time.monotonic() + 30
            while not (b.assignment and set(a.assignment) | set(b.assignment) == both):
                assert time.monotonic() < deadline, (sorted(a.assignment), sorted(b.assignment))
                await asyncio.sleep(0.2)
            # Unsubscribing leaves the group (the other member gets everything), subscribing
            # joins again.
            b.subscribe([])
            await until_assigned(b, set())
            await until_assigned(a, both)
            b.subscribe([topic])
            deadline = time.monotonic() + 30
            while not b.assignment:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.2)
            assert a.epoch >= first_epoch
        finally:
            gone_id, gone_epoch = a.member_id, a.epoch
            await a.close()
            await b.close()
        # The closed member left: the coordinator no longer knows it.
        coordinator = await ShareMember(ca, group).ensure_coordinator()
        response = await ca.send(
            coordinator,
            Api.SHARE_GROUP_HEARTBEAT,
            {
                "group_id": group,
                "member_id": gone_id,
                "member_epoch": gone_epoch,
                "rack_id": None,
                "subscribed_topic_names": None,
            },
        )
        assert response["error_code"] == 25, response  # UNKNOWN_MEMBER_ID
