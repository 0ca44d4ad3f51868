"""The classic group protocol against a scripted coordinator (group_broker.py), for what a real
broker will not do on cue: the requests a member sends (MEMBER_ID_REQUIRED, one protocol entry
per assignor, static membership fields, LeaveGroup), never two JoinGroups in flight, each error
code of JoinGroup, SyncGroup, Heartbeat and OffsetCommit handled as it means, fatal ones
(authorization, a fenced static member) raised to the application as their typed errors, a
commit retried after a newer one never landing last, and the metadata changing during a
rebalance."""

from __future__ import annotations

import asyncio
import textwrap
import time
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
from ferrokafka import errors as Errors
from ferrokafka.consumer.group.assignors.abstract import AbstractPartitionAssignor, ClusterView
from ferrokafka.consumer.group.assignors.range import RangePartitionAssignor
from ferrokafka.consumer.group.assignors.roundrobin import RoundRobinPartitionAssignor
from ferrokafka.consumer.group.subscription import (
    ConsumerProtocolMemberAssignment,
    ConsumerProtocolMemberMetadata,
)
from ferrokafka.protocol import ApiKey

from .group_broker import GroupBroker

FIND, JOIN, SYNC, HEARTBEAT, LEAVE, COMMIT, FETCH_OFFSETS = (
    ApiKey.FIND_COORDINATOR,
    ApiKey.JOIN_GROUP,
    ApiKey.SYNC_GROUP,
    ApiKey.HEARTBEAT,
    ApiKey.LEAVE_GROUP,
    ApiKey.OFFSET_COMMIT,
    ApiKey.OFFSET_FETCH,
)

FAST: dict[str, Any] = {
    "session_timeout_ms": 2000,
    "heartbeat_interval_ms": 50,
    "retry_backoff_ms": 20,
    "request_timeout_ms": 5000,
    "enable_auto_commit": False,
    "auto_offset_reset": "earliest",
}

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


class Recorder(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.events: list[tuple[str, set[TopicPartition]]] = []

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self.events.append(("revoked", set(revoked)))

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self.events.append(("assigned", set(assigned)))


async def start_member(
    broker: GroupBroker,
    topics: tuple[str, ...] = ("t",),
    listener: ConsumerRebalanceListener | None = None,
    **config: Any,
) -> AIOKafkaConsumer[Any, Any]:
    c: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
        bootstrap_servers=broker.bootstrap, group_id="g", **{**FAST, **config}
    )
    # Subscribed after start(), which then returns at once (subscribed before, it would wait
    # for the first assignment, and some tests hold the JoinGroup).
    await c.start()
    c.subscribe(list(topics), listener=listener)
    return c


async def until(check: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


async def joined(c: AIOKafkaConsumer[Any, Any], broker: GroupBroker, generation: int) -> None:
    """Until the member installed the assignment of ``generation``."""
    coordinator: Any = c._coordinator

    def done() -> bool:
        return (
            broker.generation == generation
            and coordinator.generation == generation
            and coordinator.assignment_ready.is_set()
            and not coordinator.rejoin_needed
        )

    await until(done, f"generation {generation}")


async def falls_quiet(broker: GroupBroker, quiet: float = 0.5, within: float = 10.0) -> None:
    """Until the member has sent no group request for ``quiet`` seconds; fails if it keeps
    sending for ``within`` seconds. (A heartbeat written before the failure reached the member
    may still be read by the scripted broker after the application saw the error: the broker
    runs on the same loop.) With 50 ms heartbeats and 20 ms retries, a member that kept going
    is never quiet that long."""
    deadline = time.monotonic() + within
    mark, since = len(after(broker, 0)), time.monotonic()
    while time.monotonic() - since < quiet:
        assert time.monotonic() < deadline, (
            "kept going after a fatal error",
            after(broker, 0)[-5:],
        )
        await asyncio.sleep(0.05)
        if len(after(broker, 0)) != mark:
            mark, since = len(after(broker, 0)), time.monotonic()


def after(broker: GroupBroker, mark: int) -> list[tuple[int, dict[str, Any]]]:
    """The group requests received since ``mark`` (an index into ``broker.requests``)."""
    group_apis = {FIND, JOIN, SYNC, HEARTBEAT, LEAVE, COMMIT}
    return [(k, b) for k, b in broker.requests[mark:] if k in group_apis]


async def raises_on_poll(c: AIOKafkaConsumer[Any, Any], error: type[BaseException]) -> str:
    """Poll until the member's group failure reaches the application; its message."""
    deadline = time.monotonic() + 10
    with pytest.raises(error) as info:
        while True:
            assert time.monotonic() < deadline, f"no {error.__name__} raised"
            await c.getmany(timeout_ms=20)
    return str(info.value)


# -- the requests a member sends ---------------------------------------------------------------


async def test_join_sync_heartbeat_and_leave() -> None:
    async with GroupBroker() as broker:
        c = await start_member(
            broker,
            partition_assignment_strategy=(RangePartitionAssignor, RoundRobinPartitionAssignor),
        )
        try:
            await joined(c, broker, 1)
            await until(lambda: len(broker.sent(HEARTBEAT)) >= 3, "heartbeats")
            assert c.assignment() == {T0, T1}
        finally:
            await c.stop()
        first, second = broker.sent(JOIN)
        # The first join has no member id; MEMBER_ID_REQUIRED gives one to retry with.
        assert (first["member_id"], second["member_id"]) == ("", "member-1")
        # One protocol entry per assignor, in preference order, each with the subscription.
        assert [p["name"] for p in second["protocols"]] == ["range", "roundrobin"]
        for p in second["protocols"]:
            assert ConsumerProtocolMemberMetadata.decode(p["metadata"]).subscription == ["t"]
        assert second["protocol_type"] == "consumer"
        (sync,) = broker.sent(SYNC)
        assert (sync["generation_id"], sync["member_id"], sync["protocol_name"]) == (
            1,
            "member-1",
            "range",
        )
        assert [a["member_id"] for a in sync["assignments"]] == ["member-1"]
        for hb in broker.sent(HEARTBEAT):
            assert (hb["generation_id"], hb["member_id"]) == (1, "member-1")
        (leave,) = broker.sent(LEAVE)
        assert [m["member_id"] for m in leave["members"]] == ["member-1"]
        assert broker.max_in_flight[JOIN] == 1
        # The group's requests share one connection of their own (the coordinator's), apart
        # from the ones that fetch and refresh metadata.
        (coordinator_connection,) = set().union(
            *(broker.connections[k] for k in (JOIN, SYNC, HEARTBEAT, LEAVE))
        )
        assert coordinator_connection not in broker.connections[ApiKey.FETCH]
        assert coordinator_connection not in broker.connections[ApiKey.METADATA]
        assert coordinator_connection not in broker.connections[FIND]


async def test_static_member_sends_its_instance_id_and_does_not_leave() -> None:
    async with GroupBroker() as broker:
        c = await start_member(broker, group_instance_id="instance-1")
        try:
            await joined(c, broker, 1)
            await until(lambda: len(broker.sent(HEARTBEAT)) >= 2, "heartbeats")
            await c.commit({T0: 5})
        finally:
            await c.stop()
        for key in (JOIN, SYNC, HEARTBEAT, COMMIT):
            assert broker.sent(key), key
            assert {body["group_instance_id"] for body in broker.sent(key)} == {"instance-1"}
        assert broker.sent(LEAVE) == []  # its place is kept for the session timeout


async def test_never_two_joins_in_flight_and_a_change_during_the_join_is_not_lost() -> None:
    async with GroupBroker({"t": 2, "u": 2}) as broker:
        broker.hold(JOIN)
        c = await start_member(broker)
        try:
            await broker.held[JOIN].wait()
            # Everything that asks for a rejoin while the JoinGroup is in flight...
            coordinator: Any = c._coordinator
            for i, topics in enumerate([["u"], ["t", "u"], ["u"], ["t"], ["t", "u"]]):
                coordinator.request_rejoin(f"test {i}")
                c.subscribe(topics)
                await asyncio.sleep(0.05)
            assert broker.in_flight[JOIN] == 1
            assert len(broker.sent(JOIN)) == 1
            broker.release(JOIN)
            # ... and the last subscription (t and u) is what the member ends up with.
            await until(lambda: len(c.assignment()) == 4, "t and u assigned")
        finally:
            await c.stop()
        assert broker.max_in_flight[JOIN] == 1
        last = broker.sent(JOIN)[-1]
        meta = ConsumerProtocolMemberMetadata.decode(last["protocols"][0]["metadata"])
        assert meta.subscription == ["t", "u"]


@pytest.mark.parametrize("during_a_join", [False, True])
async def test_unsubscribe_revokes_and_leaves(during_a_join: bool) -> None:
    async with GroupBroker() as broker:
        recorder = Recorder()
        c = await start_member(broker, listener=recorder, enable_auto_commit=True)
        try:
            await joined(c, broker, 1)
            await until(lambda: len(c._subscription.all_consumed_offsets()) == 2, "positions")
            if during_a_join:
                broker.hold(JOIN)
                broker.fail(HEARTBEAT, 27)
                await broker.held[JOIN].wait()
            c.unsubscribe()
            if during_a_join:
                broker.release(JOIN)
            await until(lambda: bool(broker.sent(LEAVE)), "LeaveGroup")
            heartbeats = len(broker.sent(HEARTBEAT))
            await asyncio.sleep(0.2)
            assert len(broker.sent(HEARTBEAT)) == heartbeats, "still heartbeating"
            assert c.assignment() == set()
            # Subscribing again joins again.
            c.subscribe(["t"], listener=recorder)
            await until(lambda: c.assignment() == {T0, T1}, "the assignment")
        finally:
            await c.stop()
        assert [m["member_id"] for m in broker.sent(LEAVE)[0]["members"]] == ["member-1"]
        assert broker.committed == {T0: 0, T1: 0}  # committed before the revocation
        assert recorder.events[:3] == [
            ("assigned", {T0, T1}),
            ("revoked", {T0, T1}),
            ("assigned", {T0, T1}),
        ]


# -- error codes -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "then"),
    [
        (15, "find the coordinator"),  # COORDINATOR_NOT_AVAILABLE
        (16, "find the coordinator"),  # NOT_COORDINATOR
        (14, "join again"),  # COORDINATOR_LOAD_IN_PROGRESS
        (27, "join again"),  # REBALANCE_IN_PROGRESS
        (25, "join afresh"),  # UNKNOWN_MEMBER_ID: a new member id
    ],
)
async def test_join_group_errors(code: int, then: str) -> None:
    async with GroupBroker() as broker:
        c = await start_member(broker)
        try:
            await joined(c, broker, 1)
            mark = len(broker.requests)
            broker.fail(JOIN, code)
            broker.fail(HEARTBEAT, 27)  # the group rebalances: the member rejoins
            expected = 3 if code == 25 else 2
            await joined(c, broker, 2)
            assert c.assignment() == {T0, T1}
        finally:
            await c.stop()
        keys = [k for k, _ in after(broker, mark) if k != HEARTBEAT]
        joins = broker.sent(JOIN)[-expected:]
        assert joins[0]["member_id"] == "member-1"  # the one that failed
        if then == "find the coordinator":
            assert keys[:4] == [JOIN, FIND, JOIN, SYNC]
            assert joins[1]["member_id"] == "member-1"
        elif then == "join again":
            assert keys[:3] == [JOIN, JOIN, SYNC]
            assert joins[1]["member_id"] == "member-1"
        else:
            assert keys[:4] == [JOIN, JOIN, JOIN, SYNC]
            assert [j["member_id"] for j in joins[1:]] == ["", "member-2"]


@pytest.mark.parametrize(
    ("code", "member_after"),
    [
        (27, "member-1"),  # REBALANCE_IN_PROGRESS: rejoin as the same member
        (22, ""),  # ILLEGAL_GENERATION: the generation is gone; join afresh
        (25, ""),  # UNKNOWN_MEMBER_ID
    ],
)
async def test_sync_group_errors_rejoin(code: int, member_after: str) -> None:
    async with GroupBroker() as broker:
        broker.fail(SYNC, code)
        c = await start_member(broker)
        try:
            await until(lambda: c.assignment() == {T0, T1}, "the assignment")
        finally:
            await c.stop()
        member_ids = [j["member_id"] for j in broker.sent(JOIN)]
        assert member_ids[:3] == ["", "member-1", member_after]
        assert len(broker.sent(SYNC)) == 2


async def test_heartbeat_rebalance_in_progress_rejoins_revoking_first() -> None:
    async with GroupBroker() as broker:
        recorder = Recorder()
        c = await start_member(broker, listener=recorder, enable_auto_commit=True)
        try:
            await joined(c, broker, 1)
            await until(lambda: len(c._subscription.all_consumed_offsets()) == 2, "positions")
            mark = len(broker.requests)
            broker.fail(HEARTBEAT, 27)
            await joined(c, broker, 2)
        finally:
            await c.stop()
        # Eager: commit, revoke, join as the same member, assign.
        keys = [k for k, _ in after(broker, mark) if k != HEARTBEAT]
        assert keys[:3] == [COMMIT, JOIN, SYNC]
        assert broker.sent(JOIN)[-1]["member_id"] == "member-1"
        assert recorder.events[:3] == [
            ("assigned", {T0, T1}),
            ("revoked", {T0, T1}),
            ("assigned", {T0, T1}),
        ]


async def test_a_lost_generation_drops_the_partitions_at_once() -> None:
    # The partitions may be another member's already: they leave the assignment (and their
    # fetched data with them) when the heartbeat says so, before the listener runs and long
    # before the member has rejoined, so that no poll meanwhile hands out their records.
    seen: list[set[TopicPartition]] = []
    consumer: list[AIOKafkaConsumer[Any, Any]] = []

    class AssignmentWhenRevoked(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
            seen.append(consumer[0].assignment())

        def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
            pass

    async with GroupBroker() as broker:
        c = await start_member(broker, listener=AssignmentWhenRevoked())
        consumer.append(c)
        try:
            await joined(c, broker, 1)
            assert c.assignment() == {T0, T1}
            broker.fail(HEARTBEAT, 25)  # UNKNOWN_MEMBER_ID
            await joined(c, broker, 2)
        finally:
            await c.stop()
    assert seen[0] == set()


@pytest.mark.parametrize("code", [22, 25])  # ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID
async def test_heartbeat_lost_generation_revokes_without_committing(code: int) -> None:
    async with GroupBroker() as broker:
        recorder = Recorder()
        c = await start_member(broker, listener=recorder, enable_auto_commit=True)
        try:
            await joined(c, broker, 1)
            await until(lambda: len(c._subscription.all_consumed_offsets()) == 2, "positions")
            mark = len(broker.requests)
            broker.fail(HEARTBEAT, code)
            await joined(c, broker, 2)
        finally:
            await c.stop()
        # The partitions are lost (the group went on without the member): no commit with the
        # dead generation, the listener hears of it, and the member joins afresh.
        keys = [k for k, _ in after(broker, mark) if k != HEARTBEAT]
        assert keys[:3] == [JOIN, JOIN, SYNC]
        assert [j["member_id"] for j in broker.sent(JOIN)[-2:]] == ["", "member-2"]
        assert recorder.events[:3] == [
            ("assigned", {T0, T1}),
            ("revoked", {T0, T1}),
            ("assigned", {T0, T1}),
        ]


@pytest.mark.parametrize("code", [15, 16])  # COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR
async def test_heartbeat_coordinator_moved_finds_it_without_a_rebalance(code: int) -> None:
    async with GroupBroker() as broker:
        recorder = Recorder()
        c = await start_member(broker, listener=recorder)
        try:
            await joined(c, broker, 1)
            mark = len(broker.requests)
            broker.fail(HEARTBEAT, code)
            await until(
                lambda: [k for k, _ in after(broker, mark)].count(HEARTBEAT) >= 4, "heartbeats"
            )
        finally:
            await c.stop()
        keys = [k for k, _ in after(broker, mark)]
        assert keys[:3] == [HEARTBEAT, FIND, HEARTBEAT]
        assert JOIN not in keys
        assert {hb["generation_id"] for hb in broker.sent(HEARTBEAT)} == {1}
        assert recorder.events == [("assigned", {T0, T1}), ("revoked", {T0, T1})]  # (close)


# -- fatal errors reach the application -----------------------------------------------------------


@pytest.mark.parametrize(
    ("api", "when"),
    [
        (FIND, "joining"),
        (JOIN, "joining"),
        (SYNC, "joining"),
        (HEARTBEAT, "a member"),
        (FIND, "a member"),  # the coordinator moved, and finding it again is refused
    ],
)
async def test_group_authorization_failure_is_raised_to_the_application(
    api: int, when: str
) -> None:
    async with GroupBroker() as broker:
        if when == "joining":
            broker.fail(api, 30)  # GROUP_AUTHORIZATION_FAILED
        c = await start_member(broker)
        try:
            if when == "a member":
                await joined(c, broker, 1)
                broker.fail(api, 30)
                if api == FIND:
                    broker.fail(HEARTBEAT, 16)  # NOT_COORDINATOR
            await raises_on_poll(c, Errors.GroupAuthorizationFailedError)
            await falls_quiet(broker)
        finally:
            await c.stop()


async def test_a_fatal_error_wakes_a_waiting_getone() -> None:
    """``getone()`` (and ``async for``) waits with no timeout: a fatal group error arriving
    meanwhile must end the wait, not leave the application blocked forever."""
    async with GroupBroker() as broker:
        c = await start_member(broker)
        try:
            await joined(c, broker, 1)
            waiting = asyncio.ensure_future(c.getone())
            await asyncio.sleep(0.1)
            assert not waiting.done()
            broker.fail(HEARTBEAT, 30)
            with pytest.raises(Errors.GroupAuthorizationFailedError):
                await asyncio.wait_for(waiting, 5)
        finally:
            await c.stop()


async def test_fenced_static_member_gets_the_typed_error() -> None:
    async with GroupBroker() as broker:
        c = await start_member(broker, group_instance_id="instance-1")
        try:
            await joined(c, broker, 1)
            broker.fail(HEARTBEAT, 82)  # FENCED_INSTANCE_ID: another process took the id
            await raises_on_poll(c, Errors.FencedInstanceIdError)
        finally:
            await c.stop()


async def test_inconsistent_group_protocol_names_the_assignors() -> None:
    async with GroupBroker() as broker:
        broker.fail(JOIN, 23)  # INCONSISTENT_GROUP_PROTOCOL
        c = await start_member(broker, partition_assignment_strategy=(RangePartitionAssignor,))
        try:
            message = await raises_on_poll(c, Errors.InconsistentGroupProtocolError)
        finally:
            await c.stop()
        assert "range" in message and "partition_assignment_strategy" in message


@pytest.mark.parametrize(
    ("code", "error"),
    [
        (30, Errors.GroupAuthorizationFailedError),
        (22, Errors.CommitFailedError),  # ILLEGAL_GENERATION
        (25, Errors.CommitFailedError),  # UNKNOWN_MEMBER_ID
        (27, Errors.CommitFailedError),  # REBALANCE_IN_PROGRESS
    ],
)
async def test_commit_errors(code: int, error: type[Exception]) -> None:
    async with GroupBroker() as broker:
        c = await start_member(broker)
        try:
            await joined(c, broker, 1)
            broker.fail(COMMIT, code)
            with pytest.raises(error):
                await c.commit({T0: 3})
            assert broker.committed == {}
        finally:
            await c.stop()


async def test_offset_fetch_authorization_failure_is_raised() -> None:
    async with GroupBroker() as broker:
        c: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
            bootstrap_servers=broker.bootstrap, group_id="g", **FAST
        )
        await c.start()
        try:
            c.assign([T0])
            broker.fail(FETCH_OFFSETS, 30)
            with pytest.raises(Errors.GroupAuthorizationFailedError):
                await c.committed(T0)
        finally:
            await c.stop()


class Broken(AbstractPartitionAssignor):
    name = "broken"

    @classmethod
    def assign(
        cls,
        cluster: ClusterView,
        members: Mapping[str, ConsumerProtocolMemberMetadata],
        group_instance_ids: Mapping[str, str | None] | None = None,
    ) -> dict[str, ConsumerProtocolMemberAssignment]:
        raise ValueError("the assignor broke")


async def test_a_failing_custom_assignor_is_raised_to_the_application() -> None:
    async with GroupBroker() as broker:
        c = await start_member(broker, partition_assignment_strategy=(Broken,))
        try:
            await raises_on_poll(c, ValueError)
        finally:
            await c.stop()


# -- commits -----------------------------------------------------------------------------------


async def test_a_retried_commit_never_overwrites_a_newer_one() -> None:
    """An older commit fails with a retriable error after a newer one was sent: its retry
    carries only the partitions the newer one did not, so the newer offset stays."""
    async with GroupBroker() as broker:
        c: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
            bootstrap_servers=broker.bootstrap, group_id="g", **FAST
        )
        await c.start()
        try:
            c.assign([T0, T1])
            broker.hold(COMMIT)
            broker.fail(COMMIT, 14)  # COORDINATOR_LOAD_IN_PROGRESS, for the first one
            older = asyncio.ensure_future(c.commit({T0: 10, T1: 10}))  # not awaited: async
            await broker.held[COMMIT].wait()
            newer = asyncio.ensure_future(c.commit({T0: 20}))
            await until(lambda: broker.in_flight[COMMIT] == 2, "both commits in flight")
            broker.release(COMMIT)
            await asyncio.wait_for(asyncio.gather(older, newer), 10)
            assert broker.committed == {T0: 20, T1: 10}
            assert broker.commits == [{T0: 20}, {T1: 10}]
            assert await c.committed(T0) == 20
            # A retry with nothing left to send sends nothing.
            broker.fail(COMMIT, 14)
            broker.hold(COMMIT)
            older = asyncio.ensure_future(c.commit({T0: 30}))
            await broker.held[COMMIT].wait()
            newer = asyncio.ensure_future(c.commit({T0: 40}))
            await until(lambda: broker.in_flight[COMMIT] == 2, "both commits in flight")
            broker.release(COMMIT)
            await asyncio.wait_for(asyncio.gather(older, newer), 10)
            await asyncio.sleep(0.2)  # (longer than the retry backoff)
            assert broker.commits[2:] == [{T0: 40}]
            assert len(broker.sent(COMMIT)) == 5
        finally:
            await c.stop()


# -- metadata changing during a rebalance --------------------------------------------------------


async def test_partitions_added_during_the_rebalance_cause_another() -> None:
    async with GroupBroker() as broker:
        c = await start_member(broker)
        try:
            await joined(c, broker, 1)
            broker.hold(SYNC)
            broker.fail(HEARTBEAT, 27)
            await broker.held[SYNC].wait()
            # The leader assigned over two partitions; now there are three, and a metadata
            # refresh shows it before the round completes.
            broker.topics["t"] = 3
            await c._client.refresh_metadata()
            broker.release(SYNC)
            await until(lambda: len(c.assignment()) == 3, "the third partition assigned")
            assert broker.generation == 3
        finally:
            await c.stop()


# -- the documented custom-assignor example ------------------------------------------------------


def test_the_documented_custom_assignor_example_runs() -> None:
    from ferrokafka.consumer.group.assignors import abstract

    doc = abstract.__doc__ or ""
    start = doc.index("    class AllToOne")
    end = doc.index("    AIOKafkaConsumer(", start)
    namespace: dict[str, Any] = vars(abstract).copy()
    exec(textwrap.dedent(doc[start:end]), namespace)  # (our own docstring)
    assignor = namespace["AllToOne"]

    class Cluster:
        def partitions_for_topic(self, topic: str) -> set[int] | None:
            return {"t": {0, 1, 2}}.get(topic)

    members = {m: ConsumerProtocolMemberMetadata(3, ["t"]) for m in ("b", "a")}
    result = assignor.assign(Cluster(), members)
    assert {m: a.partitions() for m, a in result.items()} == {
        "a": [TopicPartition("t", p) for p in range(3)],
        "b": [],
    }
