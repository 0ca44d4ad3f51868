"""Consumer groups with the KIP-848 consumer protocol (``group_protocol="consumer"``): the broker
assigns, members join, rebalance and leave, commits work, static members keep their place across
a restart, and the rebalance listener sees the incremental changes. (Java members in the group:
test_group_interop.py; the coordinator's broker and a member killed: test_group.py.)"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
from ferrokafka.admin import AIOKafkaAdminClient
from ferrokafka.consumer.group.assignors.range import RangePartitionAssignor
from ferrokafka.protocol import ApiKey

from .group_util import poll_all, settle, until
from .produce_util import produce_values

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


async def _members_of(bootstrap: str, group: str) -> list[dict[str, Any]]:
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        (response,) = await admin.describe_consumer_groups([group])
    (described,) = response["groups"]
    assert described["protocol_type"] == "consumer", described
    members: list[dict[str, Any]] = described["members"]
    return members


async def test_static_member_restart_keeps_its_partitions(
    bootstrap_servers: str, make_topic: Any
) -> None:
    """A static member's close is a temporary leave (member epoch -2): the broker keeps its
    place and assignment for the session timeout, and the same instance restarted gets the same
    partitions back while the other member's assignment and epoch stay as they were."""
    topic = make_topic(partitions=4)
    group = f"g848s-{topic}"
    calls: list[tuple[str, set[TopicPartition]]] = []

    class Recorder(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
            calls.append(("revoked", revoked))

        def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
            calls.append(("assigned", assigned))

    a = member(bootstrap_servers, topic, group, group_instance_id="static-a")
    a.subscribe([topic], listener=Recorder())
    b = member(bootstrap_servers, topic, group, group_instance_id="static-b")
    await a.start()
    await b.start()
    b2 = None
    try:
        await settle([a, b], 4)
        before_a, before_b = a.assignment(), b.assignment()
        epoch_a = a._coordinator.generation
        old_id = b._coordinator.member_id
        calls.clear()
        await b.stop()
        # Still a member, with its partitions, after the close: it did not leave for good.
        described = {m["group_instance_id"]: m for m in await _members_of(bootstrap_servers, group)}
        assert set(described) == {"static-a", "static-b"}, described
        assert described["static-b"]["member_id"] == old_id
        assert set(described["static-b"]["assignment"]) == before_b

        b2 = member(bootstrap_servers, topic, group, group_instance_id="static-b")
        await b2.start()
        await until(
            lambda: b2 is not None and b2.assignment() == before_b,
            30,
            "the restarted static member to get its partitions back",
        )
        await poll_all([a, b2])
        assert a.assignment() == before_a
        assert a._coordinator.generation == epoch_a, "the restart moved the other member on"
        assert calls == [], "the other member's partitions changed"
        described = {m["group_instance_id"]: m for m in await _members_of(bootstrap_servers, group)}
        assert set(described) == {"static-a", "static-b"}, described
        assert described["static-b"]["member_id"] == b2._coordinator.member_id != old_id
        assert set(described["static-b"]["assignment"]) == before_b
    finally:
        await a.stop()
        await b.stop()
        if b2 is not None:
            await b2.stop()


async def test_rebalance_listener_sees_incremental_changes(
    bootstrap_servers: str, make_topic: Any
) -> None:
    """Plain and async callbacks get only what changed: a member that gives partitions up is
    told exactly those (while it still holds them), the one that gets them is told exactly
    those (once it holds them); no callback names the partitions a member keeps."""
    topic = make_topic(partitions=6)
    group = f"g848l-{topic}"
    everything = {TopicPartition(topic, p) for p in range(6)}
    seen: dict[str, list[tuple[str, set[TopicPartition], set[TopicPartition]]]] = {
        "a": [],
        "b": [],
    }
    a = member(bootstrap_servers, topic, group)
    b = member(bootstrap_servers, topic, group)

    class Plain(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
            seen["a"].append(("revoked", revoked, a.assignment()))

        def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
            seen["a"].append(("assigned", assigned, a.assignment()))

    class Async(ConsumerRebalanceListener):
        async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
            seen["b"].append(("revoked", revoked, b.assignment()))

        async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
            seen["b"].append(("assigned", assigned, b.assignment()))

    a.subscribe([topic], listener=Plain())
    b.subscribe([topic], listener=Async())
    await a.start()
    try:
        await settle([a], 6)
        assert seen["a"] == [("assigned", everything, everything)]
        await b.start()
        await settle([a, b], 6)
        kept, moved = a.assignment(), b.assignment()
        assert len(kept) == len(moved) == 3
        assert seen["a"][1:] == [("revoked", moved, everything)]
        assert seen["b"] == [("assigned", moved, moved)]
        await b.stop()  # leaves: its partitions come back to a, which keeps its own
        assert seen["b"][1:] == [("revoked", moved, moved)]
        await settle([a], 6)
        assert seen["a"][2:] == [("assigned", moved, everything)]
    finally:
        await b.stop()
        await a.stop()


async def test_commit_racing_a_new_member_epoch_is_sent_again(
    bootstrap_servers: str, make_topic: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The broker moves a member to a new epoch while handling its heartbeat; a commit sent
    before that heartbeat's response arrives carries the old epoch and is refused
    (STALE_MEMBER_EPOCH). The commit must go again with the new epoch, not fail. The race is
    made certain by holding back the heartbeat response that carries the new epoch."""
    topic = make_topic(partitions=4)
    group = f"g848e-{topic}"
    a = member(bootstrap_servers, topic, group, enable_auto_commit=False)
    await a.start()
    b = member(bootstrap_servers, topic, group)
    held, release = asyncio.Event(), asyncio.Event()
    commit_errors: list[int] = []
    connect = a._client.coordinator_connection

    class SlowResponses:
        def __init__(self, conn: Any) -> None:
            self._conn = conn

        def __getattr__(self, name: str) -> Any:
            return getattr(self._conn, name)

        async def send(self, api_key: int, body: Any, **kwargs: Any) -> Any:
            response = await self._conn.send(api_key, body, **kwargs)
            if api_key == ApiKey.OFFSET_COMMIT:
                commit_errors.extend(
                    p["error_code"] for t in response["topics"] for p in t["partitions"]
                )
            elif (
                api_key == ApiKey.CONSUMER_GROUP_HEARTBEAT
                and 0 < body["member_epoch"] < response["member_epoch"]
                and not release.is_set()
            ):
                held.set()
                await release.wait()
            return response

    async def slow_coordinator_connection(broker_id: int) -> Any:
        return SlowResponses(await connect(broker_id))

    try:
        await settle([a], 4)
        monkeypatch.setattr(a._client, "coordinator_connection", slow_coordinator_connection)
        old_epoch = a._coordinator.generation
        await b.start()  # the group moves on: a gives up two partitions, then a new epoch
        await until(held.is_set, 30, "a heartbeat response with a new epoch")
        mine = a.assignment()
        assert len(mine) == 2 and a._coordinator.generation == old_epoch
        commit = asyncio.ensure_future(a.commit({tp: 2 for tp in mine}))
        await until(lambda: bool(commit_errors) or commit.done(), 30, "the commit's response")
        assert set(commit_errors) == {113}, commit_errors  # STALE_MEMBER_EPOCH: the race
        release.set()
        await asyncio.wait_for(commit, 30)
        assert a._coordinator.generation > old_epoch
        assert commit_errors[len(mine) :] == [0] * len(mine), commit_errors
        async with AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers) as admin:
            committed = await admin.list_consumer_group_offsets(group, partitions=sorted(mine))
        assert {tp: om.offset for tp, om in committed.items()} == dict.fromkeys(mine, 2)
        await settle([a, b], 4)
    finally:
        release.set()
        await b.stop()
        await a.stop()


def test_group_remote_assignor_is_a_consumer_protocol_option() -> None:
    AIOKafkaConsumer(group_id="g", group_protocol="consumer", group_remote_assignor="range")
    with pytest.raises(ValueError, match="group_remote_assignor"):
        AIOKafkaConsumer(group_id="g", group_remote_assignor="range")  # classic
    with pytest.raises(ValueError, match="group_remote_assignor"):
        AIOKafkaConsumer(group_id="g", group_protocol="consumer", group_remote_assignor="")
    with pytest.raises(ValueError, match="group_remote_assignor"):
        AIOKafkaConsumer(
            group_id="g",
            group_protocol="consumer",
            group_remote_assignor=RangePartitionAssignor,  # type: ignore[arg-type]  # a class
        )
