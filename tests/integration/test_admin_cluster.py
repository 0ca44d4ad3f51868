"""``describe_cluster_result`` (DescribeCluster) against a single broker and a racked
three-node cluster, compared with the Metadata answer."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from ferrokafka.admin import AIOKafkaAdminClient, ClusterDescription
from ferrokafka.admin.acl_resource import ACLOperation
from ferrokafka.testing import QUICK_START_JVM_OPTIONS, KafkaCluster

pytestmark = [pytest.mark.integration, pytest.mark.core]


@pytest.fixture
async def admin(bootstrap_servers: str) -> AsyncIterator[AIOKafkaAdminClient]:
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers) as client:
        yield client


@pytest.fixture(scope="module")
def racked_cluster() -> Iterator[KafkaCluster]:
    cluster = KafkaCluster(
        3,
        config={"log.retention.ms": "-1"},
        node_configs={n: {"broker.rack": f"r{n}"} for n in (1, 2, 3)},
        jvm_options=QUICK_START_JVM_OPTIONS,
    )
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


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
    racked_cluster: KafkaCluster,
) -> None:
    async with AIOKafkaAdminClient(bootstrap_servers=racked_cluster.bootstrap_servers) as admin:
        described = await admin.describe_cluster_result()
        metadata = await admin.describe_cluster()
    assert [(b.nodeId, b.rack) for b in described.brokers] == [(1, "r1"), (2, "r2"), (3, "r3")]
    ports = {int(a.rsplit(":", 1)[1]) for a in racked_cluster.bootstrap_servers.split(",")}
    assert {b.port for b in described.brokers} == ports
    assert described.cluster_id == metadata["cluster_id"]
    # KRaft brokers name a live broker, picked at random, as the controller.
    assert described.controller in described.brokers
