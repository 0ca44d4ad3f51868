"""Changing a group member's subscription against the real broker: ``subscribe()`` with other
topics rebalances the group onto them (the leader assigns topics it does not read itself), and
``unsubscribe()`` gives the partitions up and leaves the group at once. Both revoke through the
listener and, with auto-commit, commit before the revocation."""

from __future__ import annotations

import time
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition

from .group_util import committed_offsets, members, poll_all, settle, until
from .kafka_versions import CONSUMER_PROTOCOL
from .produce_util import produce_values

pytestmark = [pytest.mark.integration, pytest.mark.core]

NEVER = 600_000  # an auto-commit interval that does not fire during the test


class Recorder(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.events: list[tuple[str, set[TopicPartition]]] = []

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self.events.append(("revoked", set(revoked)))

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self.events.append(("assigned", set(assigned)))


def leader_first(consumers: list[AIOKafkaConsumer[Any, Any]]) -> list[AIOKafkaConsumer[Any, Any]]:
    """The classic group's leader first (KIP-848 groups have none: as they are)."""
    leader = getattr(consumers[0]._coordinator, "leader_id", None)
    return sorted(consumers, key=lambda c: c._coordinator.member_id != leader)


@pytest.mark.parametrize("protocol", ["classic", CONSUMER_PROTOCOL])
async def test_subscription_change_rebalances_onto_the_new_topics(
    bootstrap_servers: str, make_topic: Any, protocol: str
) -> None:
    old, new = make_topic(partitions=2), make_topic(partitions=3)
    group = f"g-{old}"
    old_tps = {TopicPartition(old, p) for p in range(2)}
    new_tps = {TopicPartition(new, p) for p in range(3)}
    recorders = [Recorder(), Recorder()]
    consumers = members(
        2, bootstrap_servers, old, group, auto_commit_interval_ms=NEVER, group_protocol=protocol
    )
    for c, r in zip(consumers, recorders, strict=True):
        c.subscribe([old], listener=r)
        await c.start()
    try:
        await settle(consumers, 2)
        await produce_values(bootstrap_servers, old, 2, 5)
        await produce_values(bootstrap_servers, new, 3, 5)
        read = 0
        while read < 10:
            read += len(await poll_all(consumers))
        # The follower switches topics; the classic group's leader keeps its own, so it must
        # assign a topic it does not subscribe to (it fetches metadata for every member's
        # topics).
        leader, follower = leader_first(consumers)
        recorder = recorders[consumers.index(follower)]
        generation = follower._coordinator.generation
        given_up = follower.assignment()
        recorder.events.clear()
        follower.subscribe([new], listener=recorder)
        assert follower.subscription() == frozenset({new})
        got: list[Any] = []

        def switched() -> bool:
            return follower.assignment() == new_tps and leader.assignment() == old_tps

        # Liveness only: a loaded machine may take a while to rebalance twice.
        deadline = time.monotonic() + 60
        while not switched() or len(got) < 15:
            assert time.monotonic() < deadline, (follower.assignment(), len(got))
            got += await poll_all([follower, leader])
        assert follower._coordinator.generation > generation, "no rebalance"
        assert leader.subscription() == frozenset({old})
        # Only the new topic's records reach the switched member, each once.
        assert sorted((r.topic, r.partition, r.offset) for r in got) == [
            (new, p, o) for p in range(3) for o in range(5)
        ]
        # Its old partitions were revoked (and their positions committed) before the new
        # assignment arrived.
        assert recorder.events == [("revoked", given_up), ("assigned", new_tps)]
        committed = await committed_offsets(bootstrap_servers, group, sorted(given_up))
        assert set(committed.values()) == {5}
    finally:
        for c in consumers:
            await c.stop()


@pytest.mark.parametrize("protocol", ["classic", CONSUMER_PROTOCOL])
async def test_unsubscribe_gives_up_the_partitions_and_leaves_the_group(
    bootstrap_servers: str, make_topic: Any, protocol: str
) -> None:
    topic = make_topic(partitions=4)
    group = f"g-{topic}"
    recorder = Recorder()
    # The session outlasts the test (classic: 60 s; KIP-848: the broker's 10 s, and the test
    # checks the takeover comes sooner): only leaving lets the other member take over.
    a, b = members(
        2,
        bootstrap_servers,
        topic,
        group,
        session_timeout_ms=60_000,
        auto_commit_interval_ms=NEVER,
        group_protocol=protocol,
    )
    a.subscribe([topic], listener=recorder)
    await a.start()
    await b.start()
    try:
        await settle([a, b], 4)
        await produce_values(bootstrap_servers, topic, 4, 5)
        read = 0
        while read < 20:
            read += len(await poll_all([a, b]))
        given_up = a.assignment()
        unsubscribed = time.monotonic()
        a.unsubscribe()
        assert a.assignment() == set()
        assert a.subscription() == frozenset()
        await until(lambda: recorder.events[-1:] == [("revoked", given_up)], 10, "the revocation")
        await settle([b], 4, timeout=8)  # b takes everything long before a's session ends
        assert time.monotonic() - unsubscribed < 8
        committed = await committed_offsets(bootstrap_servers, group, sorted(given_up))
        assert set(committed.values()) == {5}
        assert await poll_all([b]) == []  # b starts where a stopped
        # Subscribing again joins again.
        a.subscribe([topic], listener=recorder)
        await settle([a, b], 4)
    finally:
        await a.stop()
        await b.stop()
