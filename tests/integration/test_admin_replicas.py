"""Replica placement through the admin client on a three-node cluster with two log
directories per node: partition reassignments (throttled so that one stays in progress, then
cancelled; then one run to its end), preferred leader elections, log directories described and
replicas moved between them. Each outcome is read back from the cluster's metadata or from
``describe_log_dirs``."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from ferrokafka import errors as Errors
from ferrokafka.admin import (
    AIOKafkaAdminClient,
    ElectionType,
    PartitionReassignment,
    TopicPartitionReplica,
)
from ferrokafka.structs import TopicPartition

from .conftest import PlacementCluster
from .placement_util import NODES, THROTTLED, create_topic, eventually, fill, placed, throttle

pytestmark = [pytest.mark.integration, pytest.mark.cluster, pytest.mark.core]


@pytest.fixture
async def admin(placement_cluster: PlacementCluster) -> AsyncIterator[AIOKafkaAdminClient]:
    async with AIOKafkaAdminClient(bootstrap_servers=placement_cluster.bootstrap_servers) as client:
        yield client


async def test_reassignment_in_progress_is_listed_and_cancelled_then_one_completes(
    admin: AIOKafkaAdminClient, placement_cluster: PlacementCluster
) -> None:
    topic = await create_topic(admin, [1, 2], **THROTTLED)
    tp = TopicPartition(topic, 0)
    await fill(placement_cluster.bootstrap_servers, topic, 300, 1000)
    await throttle(admin, "1000")
    try:
        # Adding broker 3 copies ~300 kB at 1 kB/s: it stays in progress.
        await admin.alter_partition_reassignments({tp: [3, 1]})
        moving = await eventually(
            lambda: admin.list_partition_reassignments([tp]), lambda found: tp in found
        )
        assert moving[tp] == PartitionReassignment((3, 1, 2), (3,), (2,))
        assert await admin.list_partition_reassignments() == {tp: moving[tp]}
        # The metadata names the adding replica once every broker has the change.
        await eventually(lambda: placed(admin, tp), lambda placed: placed[0] == [3, 1, 2])

        await admin.alter_partition_reassignments({tp: None})
        await eventually(lambda: admin.list_partition_reassignments([tp]), lambda f: not f)
        await eventually(lambda: placed(admin, tp), lambda placed: placed[0] == [1, 2])
    finally:
        await throttle(admin, None)

    # Unthrottled, a move runs to its end: the metadata shows the new replicas.
    await admin.alter_partition_reassignments({tp: [3, 1]})
    await eventually(lambda: admin.list_partition_reassignments([tp]), lambda f: not f)
    replicas, _ = await eventually(lambda: placed(admin, tp), lambda p: p[0] == [3, 1])
    assert replicas == [3, 1]


async def test_reassignment_errors_name_the_partition(admin: AIOKafkaAdminClient) -> None:
    topic = await create_topic(admin, [1, 2])
    tp = TopicPartition(topic, 0)
    with pytest.raises(Errors.NoReassignmentInProgressError, match=f"{topic}.*partition 0"):
        await admin.alter_partition_reassignments({tp: None})
    with pytest.raises(Errors.InvalidReplicationAssignmentError, match=topic):
        await admin.alter_partition_reassignments({tp: [1, 99]})
    missing = TopicPartition(f"fk-missing-{uuid.uuid4().hex[:10]}", 0)
    with pytest.raises(Errors.UnknownTopicOrPartitionError, match=missing.topic):
        await admin.alter_partition_reassignments({missing: [1, 2]})
    assert await admin.list_partition_reassignments([tp]) == {}


async def test_elect_preferred_leaders(admin: AIOKafkaAdminClient) -> None:
    topic = await create_topic(admin, [1, 2, 3])
    tp = TopicPartition(topic, 0)
    await eventually(lambda: placed(admin, tp), lambda p: p[1] == 1)

    # The preferred replica leads already: nothing to elect, reported per partition.
    [(elected, outcome)] = (await admin.elect_leaders(ElectionType.PREFERRED, [tp])).items()
    assert elected == tp
    assert isinstance(outcome, Errors.ElectionNotNeededError)
    assert topic in str(outcome)

    # Reordering the replicas makes 2 the preferred leader; the leader stays until elected.
    await admin.alter_partition_reassignments({tp: [2, 1, 3]})
    await eventually(lambda: placed(admin, tp), lambda p: p[0] == [2, 1, 3])
    assert (await placed(admin, tp))[1] == 1
    assert await admin.elect_leaders(ElectionType.PREFERRED, [tp]) == {tp: None}
    await eventually(lambda: placed(admin, tp), lambda p: p[1] == 2)

    missing = TopicPartition(topic, 5)
    [outcome] = (await admin.elect_leaders(ElectionType.PREFERRED, [missing])).values()
    assert isinstance(outcome, Errors.UnknownTopicOrPartitionError)
    assert f"{topic!r} partition 5" in str(outcome)


async def test_describe_log_dirs_and_move_a_replica_between_them(
    admin: AIOKafkaAdminClient, placement_cluster: PlacementCluster
) -> None:
    topic = await create_topic(admin, [1, 2, 3])
    tp = TopicPartition(topic, 0)
    await fill(placement_cluster.bootstrap_servers, topic, 50, 1000)

    def holder(described: Any, node: int) -> str | None:
        """The directory of ``node``'s replica in use (a move copies it into a future one), or
        None while the node reports no single one (the waits below poll through that)."""
        paths = [
            p
            for p, d in described[node].items()
            if tp in d.replicas and not d.replicas[tp].is_future
        ]
        return str(paths[0]) if len(paths) == 1 else None

    def held_size(described: Any, node: int) -> int:
        path = holder(described, node)
        return -1 if path is None else int(described[node][path].replicas[tp].size)

    described = await eventually(
        admin.describe_log_dirs,
        lambda d: all(any(tp in x.replicas for x in d[n].values()) for n in NODES),
    )
    assert sorted(described) == list(NODES)
    for n in NODES:
        assert sorted(described[n]) == sorted(placement_cluster.log_dirs[n])
        for d in described[n].values():
            assert d.error is None
            assert d.total_bytes is not None and d.usable_bytes is not None
            assert 0 < d.usable_bytes <= d.total_bytes
    sizes = await eventually(
        admin.describe_log_dirs,
        lambda d: all(held_size(d, n) > 50_000 for n in NODES),
    )

    # Move broker 2's replica to its other directory; the copy takes over.
    source = holder(sizes, 2)
    assert source is not None
    [target] = [p for p in placement_cluster.log_dirs[2] if p != source]
    await admin.alter_replica_log_dirs({TopicPartitionReplica(topic, 0, 2): target})
    moved = await eventually(
        lambda: admin.describe_log_dirs([2]),
        lambda d: (
            holder(d, 2) == target and held_size(d, 2) > 50_000 and tp not in d[2][source].replicas
        ),
    )
    assert tp not in moved[2][source].replicas
    assert moved[2][target].replicas[tp].size > 50_000

    with pytest.raises(Errors.KafkaError, match=f"{topic}.*broker 2.*/nowhere") as refused:
        await admin.alter_replica_log_dirs({TopicPartitionReplica(topic, 0, 2): "/nowhere"})
    assert isinstance(refused.value, (Errors.LogDirNotFound, Errors.KafkaStorageError))
