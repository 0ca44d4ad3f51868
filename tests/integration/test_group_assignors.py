"""How a classic group chooses and runs its assignor, against the real broker: a user-defined
assignor (the documented interface, ``ferrokafka.consumer.group.assignors.abstract``) decides the
assignment; the group settles on the assignor every member supports; a member sharing none with
the group gets ``InconsistentGroupProtocolError``."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping
from typing import Any

import pytest
from ferrokafka import TopicPartition
from ferrokafka import errors as Errors
from ferrokafka.consumer.group.assignors.abstract import (
    AbstractPartitionAssignor,
    ClusterView,
    partitions_per_topic,
)
from ferrokafka.consumer.group.assignors.range import RangePartitionAssignor
from ferrokafka.consumer.group.assignors.roundrobin import RoundRobinPartitionAssignor
from ferrokafka.consumer.group.subscription import (
    ConsumerProtocolMemberAssignment,
    ConsumerProtocolMemberMetadata,
)

from .group_util import members, poll_all, settle, until
from .produce_util import produce_values

pytestmark = [pytest.mark.integration, pytest.mark.core]


class AllToTheVolunteer(AbstractPartitionAssignor):
    """Every partition to the member that volunteers in its Subscription's user data; the
    others get nothing. Configured per consumer: pass an instance."""

    name = "all-to-the-volunteer"

    def __init__(self, volunteer: bool = False) -> None:
        self.volunteer = volunteer
        self.assignments: list[tuple[list[TopicPartition], int | None]] = []

    def subscription_user_data(  # type: ignore[override]
        self, topics: list[str], owned: list[TopicPartition], generation: int
    ) -> bytes | None:
        return b"volunteer" if self.volunteer else b""

    @classmethod
    def assign(
        cls,
        cluster: ClusterView,
        members: Mapping[str, ConsumerProtocolMemberMetadata],
        group_instance_ids: Mapping[str, str | None] | None = None,
    ) -> dict[str, ConsumerProtocolMemberAssignment]:
        topics = {t for meta in members.values() for t in meta.subscription}
        every = [
            (topic, p)
            for topic, ps in sorted(partitions_per_topic(cluster, topics).items())
            for p in ps
        ]
        volunteers = sorted(m for m, meta in members.items() if meta.user_data == b"volunteer")
        return {
            m: ConsumerProtocolMemberAssignment.from_partitions(
                every if volunteers[:1] == [m] else []
            )
            for m in members
        }

    def on_assignment(  # type: ignore[override]
        self, assignment: ConsumerProtocolMemberAssignment, generation: int | None = None
    ) -> None:
        self.assignments.append((assignment.partitions(), generation))


class NarrowSignatures(AbstractPartitionAssignor):
    """An assignor written against aiokafka's narrower signatures (``metadata(topics)``,
    ``assign(cluster, members)``, ``on_assignment(assignment)``): the group must not pass it
    ferrokafka's extra arguments. Gives everything to the member whose id sorts last."""

    name = "narrow"
    seen: list[list[TopicPartition]] = []

    @classmethod
    def metadata(cls, topics: Iterable[str]) -> ConsumerProtocolMemberMetadata:  # type: ignore[override]
        return ConsumerProtocolMemberMetadata(0, sorted(topics), b"narrow")

    @classmethod
    def assign(  # type: ignore[override]
        cls, cluster: ClusterView, members: Mapping[str, ConsumerProtocolMemberMetadata]
    ) -> dict[str, ConsumerProtocolMemberAssignment]:
        assert all(meta.user_data == b"narrow" for meta in members.values())
        topics = {t for meta in members.values() for t in meta.subscription}
        every = [(t, p) for t, ps in partitions_per_topic(cluster, topics).items() for p in ps]
        last = max(members)
        return {
            m: ConsumerProtocolMemberAssignment(0, [], b"")
            if m != last
            else ConsumerProtocolMemberAssignment.from_partitions(every, b"", 0)
            for m in members
        }

    @classmethod
    def on_assignment(cls, assignment: ConsumerProtocolMemberAssignment) -> None:  # type: ignore[override]
        cls.seen.append(assignment.partitions())


async def test_a_custom_assignor_decides_the_assignment(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=4)
    group = f"g-{topic}"
    tps = {TopicPartition(topic, p) for p in range(4)}
    await produce_values(bootstrap_servers, topic, 4, 5)
    assignors = [AllToTheVolunteer(), AllToTheVolunteer(volunteer=True), AllToTheVolunteer()]
    consumers = [
        members(1, bootstrap_servers, topic, group, partition_assignment_strategy=(a,))[0]
        for a in assignors
    ]
    for c in consumers:
        await c.start()
    try:
        got: list[Any] = []
        deadline = time.monotonic() + 20
        coordinators = [c._coordinator for c in consumers]

        def settled() -> bool:
            same_round = len({(co.generation, co.leader_id) for co in coordinators}) == 1
            return same_round and [c.assignment() for c in consumers] == [set(), tps, set()]

        while not settled() or len(got) < 20:
            assert time.monotonic() < deadline, [c.assignment() for c in consumers]
            got += await poll_all(consumers)
        assert {c._coordinator.protocol for c in consumers} == {"all-to-the-volunteer"}
        assert len(got) == 20  # all read by the volunteer, once
        # Each member's instance heard of its own assignment, with the generation.
        generation = consumers[1]._coordinator.generation
        assert assignors[1].assignments[-1] == (sorted(tps), generation)
        assert assignors[0].assignments[-1] == ([], generation)
    finally:
        for c in consumers:
            await c.stop()


async def test_an_assignor_with_aiokafkas_signatures_works(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=3)
    group = f"g-{topic}"
    tps = {TopicPartition(topic, p) for p in range(3)}
    NarrowSignatures.seen.clear()
    consumers = members(
        2, bootstrap_servers, topic, group, partition_assignment_strategy=(NarrowSignatures,)
    )
    for c in consumers:
        await c.start()
    try:
        coordinators = [c._coordinator for c in consumers]

        def split() -> bool:
            if len({(co.generation, co.leader_id) for co in coordinators}) != 1:
                return False  # not both in the same generation yet
            last = max(consumers, key=lambda c: c._coordinator.member_id)
            # An empty assignment looks the same before and after the member's sync, so the
            # split is settled only once both members' on_assignment calls were heard.
            heard = [] in NarrowSignatures.seen and sorted(tps) in NarrowSignatures.seen
            return (
                heard
                and [c.assignment() for c in consumers if c is not last] == [set()]
                and (last.assignment() == tps)
            )

        await until(split, 20, "the assignor's split, heard by both members' on_assignment")
    finally:
        for c in consumers:
            await c.stop()


async def test_the_group_uses_the_assignor_every_member_supports(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=4)
    group = f"g-{topic}"
    both = members(
        1,
        bootstrap_servers,
        topic,
        group,
        partition_assignment_strategy=(RangePartitionAssignor, RoundRobinPartitionAssignor),
    )[0]
    roundrobin_only = members(
        1,
        bootstrap_servers,
        topic,
        group,
        partition_assignment_strategy=(RoundRobinPartitionAssignor,),
    )[0]
    range_only = members(
        1, bootstrap_servers, topic, group, partition_assignment_strategy=(RangePartitionAssignor,)
    )[0]
    await both.start()
    await roundrobin_only.start()
    try:
        await settle([both, roundrobin_only], 4)
        # Round robin deals the partitions alternately; range would give contiguous halves.
        assert sorted(
            sorted(tp.partition for tp in c.assignment()) for c in (both, roundrobin_only)
        ) == [
            [0, 2],
            [1, 3],
        ]
        assert both._coordinator.protocol == roundrobin_only._coordinator.protocol == "roundrobin"

        # A member offering only range shares no assignor with the group: start() raises a
        # typed error that names what it offered (and stops it), and the group carries on.
        with pytest.raises(Errors.InconsistentGroupProtocolError, match="range"):
            await asyncio.wait_for(range_only.start(), 20)
        assert range_only.assignment() == set()
        with pytest.raises(Errors.ConsumerStoppedError):
            await range_only.getmany()
        await settle([both, roundrobin_only], 4)
    finally:
        for c in (both, roundrobin_only, range_only):
            await c.stop()
