"""Consumer groups with the classic protocol against the real broker: assignment with every
assignor, rebalances on join, leave, poll timeout, partition and pattern changes, static
membership, commits across rebalances. The failure tests (the coordinator's broker killed, a
member killed while records arrive) run under both protocols, classic and KIP-848."""

from __future__ import annotations

import asyncio
import re
import signal
import sys
import time
from collections import Counter
from collections.abc import Awaitable
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
from ferrokafka import errors as Errors
from ferrokafka.admin import AIOKafkaAdminClient, NewPartitions
from ferrokafka.consumer.group.assignors.range import RangePartitionAssignor
from ferrokafka.consumer.group.assignors.roundrobin import RoundRobinPartitionAssignor
from ferrokafka.consumer.group.assignors.sticky.sticky_assignor import (
    CooperativeStickyPartitionAssignor,
    StickyPartitionAssignor,
)

from .group_util import FAST, Writer, complete_split, members, poll_all, settle, until
from .kafka_versions import CONSUMER_PROTOCOL
from .produce_util import produce_values

pytestmark = [pytest.mark.integration, pytest.mark.core]


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


@pytest.mark.parametrize("protocol", ["classic", CONSUMER_PROTOCOL])
async def test_at_least_once_across_rebalances(
    bootstrap_servers: str, make_topic: Any, protocol: str
) -> None:
    """Members join and leave while records arrive; with commits after processing nothing is
    lost, and duplicates come only from uncommitted work."""
    topic = make_topic(partitions=6)
    group = f"g-{topic}"
    rounds, per_partition = 6, 80
    total = rounds * 6 * per_partition
    seen: dict[tuple[int, int], int] = {}

    async def member(stop_after: float) -> None:
        c: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
            bootstrap_servers=bootstrap_servers,
            group_id=group,
            enable_auto_commit=False,
            group_protocol=protocol,
            **FAST,
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
@pytest.mark.parametrize("protocol", ["classic", CONSUMER_PROTOCOL])
async def test_group_recovers_when_the_coordinator_broker_dies(
    kafka_cluster: Any, protocol: str
) -> None:
    bootstrap = kafka_cluster.bootstrap_servers
    topic = f"fk-coord-{time.monotonic_ns()}"
    await kafka_cluster.acreate_topic(topic, partitions=4, replication_factor=3)
    group = f"g-{topic}"
    consumers = members(
        2, bootstrap, topic, group, enable_auto_commit=False, group_protocol=protocol
    )
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
        await settle(consumers, 4)  # and the members own every partition, each once
    finally:
        for c in consumers:
            await c.stop()
        if victim is not None:
            await asyncio.to_thread(kafka_cluster.restart_node, victim)
        await kafka_cluster.adelete_topic(topic)


DYING_MEMBER_SCRIPT = """
import asyncio, signal, sys
from ferrokafka import AIOKafkaConsumer
from ferrokafka.consumer.group.assignors.sticky.sticky_assignor import (
    CooperativeStickyPartitionAssignor,
)

async def main() -> None:
    bootstrap, group, topic, protocol = sys.argv[1:]
    c = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, group_id=group, group_protocol=protocol,
        enable_auto_commit=False, auto_offset_reset="earliest", session_timeout_ms=3000,
        heartbeat_interval_ms=300, metadata_max_age_ms=1000,
        partition_assignment_strategy=(CooperativeStickyPartitionAssignor,),
    )
    c.subscribe([topic])
    # SIGUSR1: from now on, process but do not commit (work in progress when it dies).
    hold = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, hold.set)
    held = False
    await c.start()
    last = None
    while True:
        if hold.is_set() and not held:
            held = True
            print("H", flush=True)
        for tp, records in (await c.getmany(timeout_ms=100, max_records=30)).items():
            # Processing is telling the parent; the commit follows it.
            print("R", tp.partition, *(r.offset for r in records), flush=True)
            if not held:
                await c.commit({tp: records[-1].offset + 1})
        mine = sorted(tp.partition for tp in c.assignment())
        if mine != last:
            print("A", *mine, flush=True)
            last = mine

asyncio.run(main())
"""


@pytest.mark.parametrize("protocol", ["classic", CONSUMER_PROTOCOL])
async def test_at_least_once_when_a_member_dies(
    bootstrap_servers: str, make_topic: Any, protocol: str
) -> None:
    """While records are written, a member in another process is SIGKILLed (no leave) with
    processed but uncommitted records. Once its session expires the two survivors take over its
    partitions from its last commit: no record is lost, and the only records read twice are the
    dead member's uncommitted ones, and a survivor's where a partition moved between them."""
    topic = make_topic(partitions=6)
    group = f"g-{topic}"
    tps = {TopicPartition(topic, p) for p in range(6)}
    # Sticky assignment under both protocols (classic: cooperative-sticky; KIP-848: the
    # broker's default "uniform"), so only the dead member's partitions move.
    survivors = members(
        2,
        bootstrap_servers,
        topic,
        group,
        group_protocol=protocol,
        enable_auto_commit=False,
        session_timeout_ms=3000,
        heartbeat_interval_ms=300,
        partition_assignment_strategy=(CooperativeStickyPartitionAssignor,),
    )
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        DYING_MEMBER_SCRIPT,
        bootstrap_servers,
        group,
        topic,
        protocol,
        stdout=asyncio.subprocess.PIPE,
    )
    theirs: set[TopicPartition] = set()
    by_child: Counter[tuple[int, int]] = Counter()
    by_survivors: Counter[tuple[int, int]] = Counter()
    by_each: list[Counter[tuple[int, int]]] = [Counter(), Counter()]  # by_survivors, per member
    uncommitted: set[tuple[int, int]] = set()  # processed by the child after it stopped committing
    holding = asyncio.Event()

    async def read_child() -> None:
        assert child.stdout is not None
        async for line in child.stdout:
            kind, *numbers = line.split()
            if kind == b"R":
                read = [(int(numbers[0]), int(o)) for o in numbers[1:]]
                by_child.update(read)
                if holding.is_set():
                    uncommitted.update(read)
            elif kind == b"H":
                holding.set()
            else:
                theirs.clear()
                theirs.update(TopicPartition(topic, int(p)) for p in numbers)

    done = asyncio.Event()

    async def consume(c: AIOKafkaConsumer[Any, Any], mine: Counter[tuple[int, int]]) -> None:
        while not done.is_set():
            for tp, records in (await c.getmany(timeout_ms=100, max_records=30)).items():
                read = [(r.partition, r.offset) for r in records]
                by_survivors.update(read)
                mine.update(read)
                try:
                    await c.commit({tp: records[-1].offset + 1})
                except Errors.CommitFailedError:
                    pass  # (classic) mid-rebalance; the partition stays, a later commit covers it

    reader = asyncio.ensure_future(read_child())
    for c in survivors:
        await c.start()
    loops = [asyncio.ensure_future(consume(c, n)) for c, n in zip(survivors, by_each, strict=True)]
    writer = None
    try:
        await until(
            lambda: complete_split([c.assignment() for c in survivors] + [theirs], 6),
            60,
            "the three members to split the partitions",
        )
        dead = set(theirs)
        writer = Writer(bootstrap_servers, topic, 6)
        async with AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers) as admin:

            async def child_committed() -> dict[TopicPartition, int]:
                got = await admin.list_consumer_group_offsets(group, partitions=sorted(dead))
                return {tp: om.offset for tp, om in got.items()}

            deadline = time.monotonic() + 30
            while min((await child_committed()).values()) <= 0 or writer.rounds < 3:
                assert child.returncode is None, "the member died on its own"
                assert time.monotonic() < deadline, "the member did not commit its partitions"
                await asyncio.sleep(0.1)
            child.send_signal(signal.SIGUSR1)
            await until(lambda: bool(uncommitted), 30, "uncommitted work in the member")
            child.kill()  # no leave: the group notices only when its session expires
            await child.wait()
            killed = time.monotonic()
            last_commits = await child_committed()
        await until(
            lambda: set().union(*(c.assignment() for c in survivors)) == tps,
            60,
            "the survivors to take over",
        )
        # Its session (3 s classic, the broker's 10 s under KIP-848) had to expire first.
        assert time.monotonic() - killed > 2, "taken over before the session could expire"
        rounds = writer.rounds
        await until(lambda: writer is not None and writer.rounds >= rounds + 2, 30)
        per_partition = await writer.stop()
        expected = {(p, o) for p in range(6) for o in range(per_partition)}
        await until(
            lambda: expected <= set(by_child) | set(by_survivors),
            60,
            "every record to be consumed",
        )
    finally:
        done.set()
        if child.returncode is None:
            child.kill()
            await child.wait()
        if writer is not None and not writer.task.done():
            await writer.stop()
        await asyncio.gather(*loops)
        await reader
        for c in survivors:
            await c.stop()
    assert set(by_child) | set(by_survivors) == expected
    # The survivors read the dead member's partitions from its last commit, once each, and
    # their own partitions once each; before the commit nothing is read twice.
    for p in range(6):
        tp = TopicPartition(topic, p)
        start = last_commits[tp] if tp in dead else 0
        assert sorted(o for q, o in by_survivors if q == p) == list(range(start, per_partition))
    # No member reads a record twice. Between the survivors, a record is read twice only where
    # a partition moved from one to the other (under the classic protocol a rebalance can move
    # one while its records' commit is in flight or fails: the next owner starts from the last
    # commit, as at-least-once allows): each partition they both read, they both read only
    # in one stretch each.
    for mine in by_each:
        assert all(n == 1 for n in mine.values()), sorted(k for k, n in mine.items() if n > 1)
    twice = {k for k in by_each[0] if k in by_each[1]}
    for p in {p for p, _ in twice}:
        a, b = (sorted(o for q, o in mine if q == p) for mine in by_each)
        assert a == list(range(a[0], a[-1] + 1)) and b == list(range(b[0], b[-1] + 1)), (p, a, b)
    assert all(n == 1 for n in by_child.values())
    repeated = {k for k in by_child if k in by_survivors}
    assert all(
        TopicPartition(topic, p) in dead and o >= last_commits[TopicPartition(topic, p)]
        for p, o in repeated
    ), sorted(repeated)
    assert uncommitted <= repeated, "uncommitted work of the dead member was not redone"
