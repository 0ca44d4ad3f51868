"""A group member's offsets against the real broker, each checked from another client
(OffsetFetch through the admin client): auto-commit on its timer, before partitions are revoked
(eager, cooperative and KIP-848 rebalances) and on close; committed offsets used for newly
assigned partitions, and ``auto_offset_reset`` applied where nothing is committed."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
from ferrokafka import errors as Errors
from ferrokafka.consumer.group.assignors.roundrobin import RoundRobinPartitionAssignor
from ferrokafka.consumer.group.assignors.sticky.sticky_assignor import (
    CooperativeStickyPartitionAssignor,
)

from .group_util import committed_offsets, members, poll_all, settle, until
from .kafka_versions import CONSUMER_PROTOCOL, KIP848
from .produce_util import produce_values

pytestmark = [pytest.mark.integration, pytest.mark.core]

NEVER = 600_000
"""An ``auto_commit_interval_ms`` that never fires during a test: any commit seen then was made
before a revocation or on close."""


async def consume(
    consumer: AIOKafkaConsumer[Any, Any], count: int, *partitions: TopicPartition
) -> list[Any]:
    """Exactly ``count`` records (of ``partitions``, default all assigned)."""
    got: list[Any] = []
    deadline = time.monotonic() + 20
    while len(got) < count:
        assert time.monotonic() < deadline, f"only {len(got)} of {count} records"
        for records in (await consumer.getmany(*partitions, timeout_ms=500)).values():
            got.extend(records)
    assert len(got) == count
    return got


@pytest.mark.parametrize("protocol", ["classic", CONSUMER_PROTOCOL])
async def test_auto_commit_every_interval(
    bootstrap_servers: str, make_topic: Any, protocol: str
) -> None:
    topic = make_topic(partitions=2)
    group = f"g-{topic}"
    tps = [TopicPartition(topic, p) for p in range(2)]
    await produce_values(bootstrap_servers, topic, 2, 10)
    (c,) = members(
        1, bootstrap_servers, topic, group, auto_commit_interval_ms=300, group_protocol=protocol
    )
    await c.start()
    try:
        await consume(c, 20)
        polled: list[Any] = []  # keeps the member polling while the timer commits

        async def committed_are(offset: int) -> bool:
            polled.extend(await poll_all([c]))
            return set((await committed_offsets(bootstrap_servers, group, tps)).values()) == {
                offset
            }

        await until_async(lambda: committed_are(10), "the timer's first commit")
        # Again on the next ticks, for what was consumed since.
        await produce_values(bootstrap_servers, topic, 2, 15)  # offsets 10-24
        await consume(c, 30)
        await until_async(lambda: committed_are(25), "the timer's later commit")
        assert polled == []
    finally:
        await c.stop()


async def until_async(
    check: Callable[[], Awaitable[bool]], what: str, timeout: float = 20.0
) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"


@pytest.mark.parametrize(
    ("protocol", "assignor"),
    [
        ("classic", RoundRobinPartitionAssignor),
        ("classic", CooperativeStickyPartitionAssignor),
        pytest.param("consumer", None, marks=KIP848),
    ],
    ids=["eager", "cooperative", "kip848"],
)
async def test_auto_commit_before_revocation(
    bootstrap_servers: str, make_topic: Any, protocol: str, assignor: Any
) -> None:
    topic = make_topic(partitions=4)
    group = f"g-{topic}"
    tps = [TopicPartition(topic, p) for p in range(4)]
    await produce_values(bootstrap_servers, topic, 4, 10)
    seen_at_revocation: list[dict[TopicPartition, int]] = []

    class Listener(ConsumerRebalanceListener):
        async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
            if revoked:
                seen_at_revocation.append(
                    await committed_offsets(bootstrap_servers, group, sorted(revoked))
                )

        def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
            pass

    config: dict[str, Any] = {"auto_commit_interval_ms": NEVER, "group_protocol": protocol}
    if assignor is not None:
        config["partition_assignment_strategy"] = (assignor,)
    a, b = members(2, bootstrap_servers, topic, group, **config)
    a.subscribe([topic], listener=Listener())
    await a.start()
    try:
        await until(lambda: len(a.assignment()) == 4, what="a's assignment")  # (no polling)
        await consume(a, 40)
        assert set((await committed_offsets(bootstrap_servers, group, tps)).values()) == {-1}
        await b.start()
        await settle([a, b], 4)
        # The revoked partitions were committed at a's positions before the listener ran.
        assert seen_at_revocation, "nothing was revoked"
        for seen in seen_at_revocation:
            assert set(seen.values()) == {10}, seen
        # The new owner starts where a stopped: nothing is read twice.
        for tp in b.assignment():
            assert await b.position(tp) == 10
        assert await poll_all([a, b]) == []
    finally:
        await b.stop()
        await a.stop()


@pytest.mark.parametrize("protocol", ["classic", CONSUMER_PROTOCOL])
async def test_auto_commit_on_close(bootstrap_servers: str, make_topic: Any, protocol: str) -> None:
    topic = make_topic(partitions=2)
    group = f"g-{topic}"
    tps = [TopicPartition(topic, p) for p in range(2)]
    await produce_values(bootstrap_servers, topic, 2, 10)
    (c,) = members(
        1, bootstrap_servers, topic, group, auto_commit_interval_ms=NEVER, group_protocol=protocol
    )
    await c.start()
    try:
        got = await consume(c, 20)
        assert set((await committed_offsets(bootstrap_servers, group, tps)).values()) == {-1}
    finally:
        await c.stop()
    assert {r.offset for r in got} == set(range(10))
    assert await committed_offsets(bootstrap_servers, group, tps) == dict.fromkeys(tps, 10)


@pytest.mark.parametrize("reset", ["earliest", "latest", "none"])
async def test_new_assignment_starts_at_committed_offsets_or_the_reset_policy(
    bootstrap_servers: str, make_topic: Any, reset: str
) -> None:
    topic = make_topic(partitions=3)
    group = f"g-{topic}"
    p0, p1, p2 = (TopicPartition(topic, p) for p in range(3))
    await produce_values(bootstrap_servers, topic, 3, 10)
    # Offsets committed by another client (no membership); p2 has none.
    async with AIOKafkaConsumer(bootstrap_servers=bootstrap_servers, group_id=group) as other:
        other.assign([p0, p1])
        await other.commit({p0: 4, p1: 7})
    (c,) = members(
        1, bootstrap_servers, topic, group, auto_offset_reset=reset, enable_auto_commit=False
    )
    await c.start()
    try:
        await until(lambda: len(c.assignment()) == 3, what="the assignment")
        assert await c.position(p0) == 4
        assert await c.position(p1) == 7
        if reset == "none":
            with pytest.raises(Errors.NoOffsetForPartitionError):
                await c.position(p2)
            with pytest.raises(Errors.NoOffsetForPartitionError):
                await c.getmany(p2, timeout_ms=1000)
            got = await consume(c, 6 + 3, p0, p1)
        else:
            assert await c.position(p2) == (0 if reset == "earliest" else 10)
            got = await consume(c, 6 + 3 + (10 if reset == "earliest" else 0))
        assert sorted((r.partition, r.offset) for r in got if r.partition < 2) == [
            (0, o) for o in range(4, 10)
        ] + [(1, o) for o in range(7, 10)]
    finally:
        await c.stop()
