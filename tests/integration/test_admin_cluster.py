"""``describe_cluster_result`` (DescribeCluster) against a single broker and a racked
three-node cluster, and ``describe_topics_result`` (DescribeTopicPartitions, paged), each
compared with the Metadata answer; ``ferrokafka cluster describe`` on the three nodes."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from ferrokafka import errors as Errors
from ferrokafka.admin import AIOKafkaAdminClient, ClusterDescription, TopicDescription
from ferrokafka.admin.acl_resource import ACLOperation

from ..conftest import TopicFactory
from .cli_util import cli
from .conftest import PlacementCluster
from .placement_util import eventually

pytestmark = [pytest.mark.integration, pytest.mark.core]


async def test_describe_cluster_result_matches_the_metadata(admin: AIOKafkaAdminClient) -> None:
    described = await admin.describe_cluster_result()
    metadata = await admin.describe_cluster()
    assert isinstance(described, ClusterDescription)
    assert described.cluster_id == metadata["cluster_id"]
    assert [(b.nodeId, b.host, b.port) for b in described.brokers] == sorted(
        (b["node_id"], b["host"], b["port"]) for b in metadata["brokers"]
    )
    assert described.controller is not None  # the one broker
    assert described.controller.nodeId == metadata["controller_id"]
    assert described.authorized_operations is None

    # Without an authorizer, every cluster operation is allowed.
    allowed = await admin.describe_cluster_result(include_authorized_operations=True)
    assert allowed.authorized_operations is not None
    assert {ACLOperation.DESCRIBE, ACLOperation.ALTER, ACLOperation.CREATE} <= (
        allowed.authorized_operations
    )


@pytest.mark.cluster
async def test_describe_cluster_result_names_every_broker_and_rack(
    placement_cluster: PlacementCluster,
) -> None:
    bootstrap = placement_cluster.bootstrap_servers
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        # A node that missed its heartbeats on a loaded machine is out until it is back.
        described = await eventually(
            admin.describe_cluster_result, lambda found: len(found.brokers) == 3
        )
        metadata = await admin.describe_cluster()
    assert [(b.nodeId, b.rack) for b in described.brokers] == [(1, "r1"), (2, "r2"), (3, "r3")]
    ports = {int(a.rsplit(":", 1)[1]) for a in bootstrap.split(",")}
    assert {b.port for b in described.brokers} == ports
    assert described.cluster_id == metadata["cluster_id"]
    # KRaft brokers name a live broker, picked at random, as the controller.
    assert described.controller in described.brokers


@pytest.mark.cluster
def test_cluster_describe_command_names_every_broker_and_rack(
    placement_cluster: PlacementCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    def described() -> list[list[str]]:
        code, out, err = cli(
            capsys, "cluster", "describe", "-b", placement_cluster.bootstrap_servers
        )
        assert code == 0, err
        return [line.split("\t") for line in out.splitlines()]

    async def three() -> list[list[str]]:
        return await eventually(lambda: asyncio.to_thread(described), lambda t: len(t) == 4)

    header, *rows = asyncio.run(three())
    assert header == ["CLUSTER-ID", "BROKER", "HOST", "PORT", "RACK", "CONTROLLER"]
    assert [(r[1], r[4]) for r in rows] == [("1", "r1"), ("2", "r2"), ("3", "r3")]
    assert len({r[0] for r in rows}) == 1
    assert sorted(r[5] for r in rows) == ["False", "False", "True"]


async def test_describe_topics_result_pages_and_matches_the_metadata(
    admin: AIOKafkaAdminClient, make_topic: TopicFactory
) -> None:
    wide, narrow = make_topic(partitions=5), make_topic(partitions=1)
    # Pages of two partitions: the wide topic spans three of them.
    described = await admin.describe_topics_result([wide, narrow], page_partitions=2)
    metadata = {t["name"]: t for t in await admin.describe_topics([wide, narrow])}
    assert sorted(described) == sorted([wide, narrow])
    for name, topic in described.items():
        assert isinstance(topic, TopicDescription)
        assert topic.topic_id == uuid.UUID(bytes=bytes(metadata[name]["topic_id"]))
        assert not topic.is_internal
        assert [
            (p.partition, p.leader, p.leader_epoch, list(p.replicas), list(p.isr))
            for p in topic.partitions
        ] == [
            (
                p["partition_index"],
                p["leader_id"],
                p["leader_epoch"],
                p["replica_nodes"],
                p["isr_nodes"],
            )
            for p in sorted(metadata[name]["partitions"], key=lambda p: p["partition_index"])
        ]
    assert [p.partition for p in described[wide].partitions] == [0, 1, 2, 3, 4]
    # Every topic, internal ones included, when none is named.
    every = await admin.describe_topics_result(page_partitions=3)
    assert {wide, narrow} <= set(every)
    internal = {name for name, t in every.items() if t.is_internal}
    assert internal == {name for name in every if name.startswith("__")}

    missing = f"fk-missing-{uuid.uuid4().hex[:10]}"
    with pytest.raises(Errors.UnknownTopicOrPartitionError, match=missing):
        await admin.describe_topics_result([narrow, missing])
