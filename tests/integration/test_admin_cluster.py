"""``describe_cluster_result`` (DescribeCluster) against a single broker and a racked
three-node cluster, compared with the Metadata answer."""

from __future__ import annotations

import pytest
from ferrokafka.admin import AIOKafkaAdminClient, ClusterDescription
from ferrokafka.admin.acl_resource import ACLOperation

from .conftest import PlacementCluster

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
        described = await admin.describe_cluster_result()
        metadata = await admin.describe_cluster()
    assert [(b.nodeId, b.rack) for b in described.brokers] == [(1, "r1"), (2, "r2"), (3, "r3")]
    ports = {int(a.rsplit(":", 1)[1]) for a in bootstrap.split(",")}
    assert {b.port for b in described.brokers} == ports
    assert described.cluster_id == metadata["cluster_id"]
    # KRaft brokers name a live broker, picked at random, as the controller.
    assert described.controller in described.brokers
