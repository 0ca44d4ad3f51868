"""Consumer groups with the classic protocol against the real broker: assignment with every
assignor, rebalances on join, leave, poll timeout, partition and pattern changes, static
membership, commits across rebalances."""

from __future__ import annotations

import asyncio
import re
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
from ferrokafka import errors as Errors
from ferrokafka.admin import AIOKafkaAdminClient, NewPartitions
from ferrokafka.coordinator.assignors.range import RangePartitionAssignor
from ferrokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from ferrokafka.coordinator.assignors.sticky.sticky_assignor import (
    CooperativeStickyPartitionAssignor,
    StickyPartitionAssignor,
)

from .produce_util import produce_values

pytestmark = pytest.mark.integration

FAST = {
    "session_timeout_ms": 6000,
    "heartbeat_interval_ms": 500,
    "metadata_max_age_ms": 1000,
    "auto_offset_reset": "earliest",
}


async def until(check: Callable[[], bool], timeout: float = 40.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what or check}"
        await asyncio.sleep(0.1)


async def poll_all(consumers: list[AIOKafkaConsumer[Any, Any]]) -> list[Any]:
    """One short poll of every member (keeps them alive under max_poll_interval_ms)."""
    out: list[Any] = []
    for c in consumers:
        for records in (await c.getmany(timeout_ms=50)).values():
            out.extend(records)
    return out


async def settle(
    consumers: list[AIOKafkaConsumer[Any, Any]], partitions: int, timeout: float = 60.0
) -> None:
    """Poll every member until their assignments are complete, disjoint and balanced."""
    deadline = time.monotonic() + timeout
    while True:
        await poll_all(consumers)
        sets = [c.assignment() for c in consumers]
        union = set().union(*sets)
        sizes = [len(s) for s in sets]
        balanced = max(sizes) - min(sizes) <= 1
        if len(union) == partitions and sum(sizes) == partitions and balanced:
            return
        assert time.monotonic() < deadline, f"assignment did not settle: {sets}"


def members(n: int, bootstrap: str, topic: str, group: str, **config: Any) -> list[Any]:
    out = []
    for _ in range(n):
        c: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
            bootstrap_servers=bootstrap, group_id=group, **{**FAST, **config}
        )
        c.subscribe([topic])
        out.append(c)
    return out


@pytest.mark.parametrize(
    "assignor",
    [
        RangePartitionAssignor,
        RoundRobinPartitionAssignor,
        StickyPartitionAssignor,
        CooperativeStickyPartitionAssignor,
    ],
)
async def test_four_members_split_twelve_partitions(
    bootstrap_servers: str, make_topic: Any, assignor: Any
) -> None:
    topic = make_topic(partitions=12)
    group = f"g-{topic}"
    consumers = members(
        4, bootstrap_servers, topic, group, partition_assignment_strategy=(assignor,)
    )
    for c in consumers:
        await c.start()
    try:
        await settle(consumers, 12)
        assert sorted(len(c.assignment()) for c in consumers) == [3, 3, 3, 3]
        # A member leaves: the other three take over everything.
        await consumers.pop().stop()
        await settle(consumers, 12)
        assert sorted(len(c.assignment()) for c in consumers) == [4, 4, 4]
    finally:
        for c in consumers:
            await c.stop()


async def test_listener_commits_and_restart_resumes(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=3)
    group = f"g-{topic}"
    await produce_values(bootstrap_servers, topic, 3, 100)
    events: list[tuple[str, set[TopicPartition]]] = []

    class Listener(ConsumerRebalanceListener):
        async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
            events.append(("revoked", revoked))

        def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
            events.append(("assigned", assigned))

    consumer: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, group_id=group, enable_auto_commit=False, **FAST
    )
    consumer.subscribe([topic], listener=Listener())
    await consumer.start()
    seen = 0
    try:
        while seen < 150:
            for tp, records in (await consumer.getmany(timeout_ms=1000, max_records=50)).items():
                seen += len(records)
                await consumer.commit({tp: records[-1].offset + 1})
    finally:
        await consumer.stop()
    assert events[0] == ("assigned", {TopicPartition(topic, p) for p in range(3)})
    assert events[-1][0] == "revoked"

    # A new member of the group continues exactly after the committed offsets.
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap_servers, group_id=group, **FAST)
    consumer.subscribe([topic])
    await consumer.start()
    try:
        rest = 0
        while rest < 300 - seen:
            for records in (await consumer.getmany(timeout_ms=1000)).values():
                rest += len(records)
        assert rest == 300 - seen, "records were lost or repeated across the restart"
        assert await consumer.getmany(timeout_ms=500) == {}
    finally:
        await consumer.stop()


async def test_slow_member_leaves_and_its_commit_fails_clearly(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=2)
    group = f"g-{topic}"
    await produce_values(bootstrap_servers, topic, 2, 10)
    slow, fast = members(
        2, bootstrap_servers, topic, group, max_poll_interval_ms=3000, enable_auto_commit=False
    )
    await slow.start()
    await fast.start()
    try:
        await settle([slow, fast], 2)
        mine = slow.assignment()
        records = await slow.getmany(timeout_ms=2000)
        # "Processing" longer than max_poll_interval_ms while the other member keeps polling.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            await poll_all([fast])
        await until(lambda: len(fast.assignment()) == 2, what="the fast member to take over")
        offsets = {tp: rs[-1].offset + 1 for tp, rs in records.items()} or dict.fromkeys(mine, 1)
        with pytest.raises(Errors.CommitFailedError, match="max_poll_interval_ms"):
            await slow.commit(offsets)
        # Polling again brings it back into the group.
        await settle([slow, fast], 2)
        assert len(slow.assignment()) == 1
    finally:
        await slow.stop()
        await fast.stop()


async def test_static_member_restart_causes_no_rebalance(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=4)
    group = f"g-{topic}"
    a, b = (
        members(1, bootstrap_servers, topic, group, group_instance_id="static-a")[0],
        members(1, bootstrap_servers, topic, group, group_instance_id="static-b")[0],
    )
    await a.start()
    await b.start()
    b2 = None
    try:
        await settle([a, b], 4)
        generation = a._coordinator.generation
        before = (a.assignment(), b.assignment())
        await b.stop()  # a static member does not leave the group on close
        b2 = members(1, bootstrap_servers, topic, group, group_instance_id="static-b")[0]
        await b2.start()
        await settle([a, b2], 4)
        assert (a.assignment(), b2.assignment()) == before
        await poll_all([a, b2])
        assert a._coordinator.generation == generation, "the restart caused a rebalance"
    finally:
        await a.stop()
        if b2 is not None:
            await b2.stop()


async def test_added_partitions_trigger_a_rebalance(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=2)
    consumers = members(2, bootstrap_servers, topic, f"g-{topic}")
    for c in consumers:
        await c.start()
    try:
        await settle(consumers, 2)
        async with AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers) as admin:
            await admin.create_partitions({topic: NewPartitions(total_count=6)})
        await settle(consumers, 6)
        assert sorted(len(c.assignment()) for c in consumers) == [3, 3]
    finally:
        for c in consumers:
            await c.stop()


async def test_pattern_subscription_picks_up_new_topics(
    bootstrap_servers: str, make_topic: Any
) -> None:
    prefix = f"fk-pattern-{time.monotonic_ns()}"
    make_topic(partitions=2, name=f"{prefix}-a")
    consumer: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, group_id=f"g-{prefix}", **FAST
    )
    consumer.subscribe(pattern=re.escape(prefix) + r"-.*")
    await consumer.start()
    try:
        await settle([consumer], 2)
        make_topic(partitions=3, name=f"{prefix}-b")
        await settle([consumer], 5)
        assert {tp.topic for tp in consumer.assignment()} == {f"{prefix}-a", f"{prefix}-b"}
    finally:
        await consumer.stop()


async def test_at_least_once_across_rebalances(bootstrap_servers: str, make_topic: Any) -> None:
    """Members join and leave while records arrive; with commits after processing nothing is
    lost, and duplicates come only from uncommitted work."""
    topic = make_topic(partitions=6)
    group = f"g-{topic}"
    rounds, per_partition = 6, 80
    total = rounds * 6 * per_partition
    seen: dict[tuple[int, int], int] = {}

    async def member(stop_after: float) -> None:
        c: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
            bootstrap_servers=bootstrap_servers, group_id=group, enable_auto_commit=False, **FAST
        )
        c.subscribe([topic])
        await c.start()
        deadline = time.monotonic() + stop_after
        try:
            while time.monotonic() < deadline and len(seen) < total:
                batch = await c.getmany(timeout_ms=200, max_records=100)
                for tp, records in batch.items():
                    for r in records:
                        key = (r.partition, r.offset)
                        seen[key] = seen.get(key, 0) + 1
                    try:
                        await c.commit({tp: records[-1].offset + 1})
                    except Errors.CommitFailedError:
                        pass  # rebalanced away: another member redoes that work
        finally:
            await c.stop()

    async def writer() -> None:
        for _ in range(rounds):
            await produce_values(bootstrap_servers, topic, 6, per_partition)
            await asyncio.sleep(0.5)

    steps: list[Awaitable[None]] = [writer(), member(60), member(3), member(6)]
    await asyncio.gather(*steps)
    assert len(seen) == total, f"lost {total - len(seen)} records"
    duplicates = sum(n - 1 for n in seen.values())
    assert duplicates < total // 2


MEMBER_SCRIPT = """
import asyncio, sys
from ferrokafka import AIOKafkaConsumer

async def main() -> None:
    c = AIOKafkaConsumer(
        bootstrap_servers=sys.argv[1], group_id=sys.argv[2], session_timeout_ms=6000,
        heartbeat_interval_ms=500, metadata_max_age_ms=1000,
    )
    c.subscribe([sys.argv[3]])
    await c.start()
    while True:
        await c.getmany(timeout_ms=100)
        if c.assignment():
            print(len(c.assignment()), flush=True)

asyncio.run(main())
"""


async def test_a_killed_member_is_replaced_after_the_session_timeout(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=4)
    group = f"g-{topic}"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        MEMBER_SCRIPT,
        bootstrap_servers,
        group,
        topic,
        stdout=asyncio.subprocess.PIPE,
    )
    (survivor,) = members(1, bootstrap_servers, topic, group)
    await survivor.start()
    try:
        assert proc.stdout is not None
        await settle_with_process(survivor, proc)
        proc.kill()  # no LeaveGroup: the coordinator notices only when the session times out
        await proc.wait()
        killed = time.monotonic()
        await settle([survivor], 4)
        assert time.monotonic() - killed > 3, "reassigned before the session could expire"
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await survivor.stop()


async def settle_with_process(
    survivor: AIOKafkaConsumer[Any, Any], proc: asyncio.subprocess.Process
) -> None:
    """Until the survivor and the child process hold two partitions each."""
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    theirs = 0
    while not (len(survivor.assignment()) == 2 and theirs == 2):
        assert time.monotonic() < deadline, (survivor.assignment(), theirs)
        await poll_all([survivor])
        try:
            line = await asyncio.wait_for(proc.stdout.readline(), 0.05)
            if line:
                theirs = int(line)
        except asyncio.TimeoutError:
            pass


async def test_cooperative_sticky_revokes_only_what_moves(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=6)
    group = f"g-{topic}"
    revoked: list[set[TopicPartition]] = []

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, parts: set[TopicPartition]) -> None:
            revoked.append(set(parts))

        def on_partitions_assigned(self, parts: set[TopicPartition]) -> None:
            pass

    a: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers,
        group_id=group,
        partition_assignment_strategy=(CooperativeStickyPartitionAssignor,),
        **FAST,
    )
    a.subscribe([topic], listener=Listener())
    await a.start()
    (b,) = members(
        1,
        bootstrap_servers,
        topic,
        group,
        partition_assignment_strategy=(CooperativeStickyPartitionAssignor,),
    )
    try:
        await settle([a], 6)
        before = a.assignment()
        await b.start()
        await settle([a, b], 6)
        kept = a.assignment()
        assert kept < before and len(kept) == 3
        moved = before - kept
        assert revoked == [moved], "cooperative-sticky revoked more than what moved"
        assert b.assignment() == moved
    finally:
        await b.stop()
        await a.stop()


@pytest.mark.cluster
async def test_group_recovers_when_the_coordinator_broker_dies(kafka_cluster: Any) -> None:
    bootstrap = kafka_cluster.bootstrap_servers
    topic = f"fk-coord-{time.monotonic_ns()}"
    await kafka_cluster.acreate_topic(topic, partitions=4, replication_factor=3)
    group = f"g-{topic}"
    consumers = members(2, bootstrap, topic, group, enable_auto_commit=False)
    for c in consumers:
        await c.start()
    victim = None
    try:
        await settle(consumers, 4)  # (before any data: settling polls and drops records)
        await produce_values(bootstrap, topic, 4, 50)
        got: list[Any] = []
        while len(got) < 200:
            got += await poll_all(consumers)
        for c in consumers:
            await c.commit()  # everything before the kill is committed
        victim = consumers[0]._coordinator.coordinator_id
        assert victim is not None
        await asyncio.to_thread(kafka_cluster.kill, victim)  # no clean shutdown
        await produce_values(bootstrap, topic, 4, 50, timestamp=1_750_000_000_000)
        deadline = time.monotonic() + 90
        expected = {(p, o) for p in range(4) for o in range(100)}
        while {(r.partition, r.offset) for r in got} != expected:
            assert time.monotonic() < deadline, f"only {len(got)} of 400 records after the kill"
            got += await poll_all(consumers)
        # At least once: the coordinator's death may move partitions between the members, and
        # the new owner then re-reads what was not committed yet (offsets 50-99), never less.
        seen = [(r.partition, r.offset) for r in got]
        repeated = {k for k in seen if seen.count(k) > 1}
        assert all(offset >= 50 for _, offset in repeated), sorted(repeated)
        # The group finds the new coordinator and still commits there.
        for c in consumers:
            await asyncio.wait_for(c.commit(), 60)
        assert consumers[0]._coordinator.coordinator_id != victim
    finally:
        for c in consumers:
            await c.stop()
        if victim is not None:
            await asyncio.to_thread(kafka_cluster.restart_node, victim)
        await kafka_cluster.adelete_topic(topic)
