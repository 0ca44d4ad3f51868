"""The admin client's cluster description: DescribeCluster (KIP-700), answered by any broker,
read into a ``ClusterDescription`` as Java's ``Admin.describeCluster`` reads it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..protocol import Api
from ..structs import BrokerMetadata
from ._base import AdminBase, raise_for
from .acl_resource import ACLOperation

if TYPE_CHECKING:
    from .._native import DescribeClusterRequest

__all__ = ["ClusterDescription", "ClusterOperations", "authorized_operations"]

_NOT_REQUESTED = -(2**31)
"""The authorized-operations bitfield of an answer that was not asked for them."""


@dataclass(frozen=True)
class ClusterDescription:
    """The cluster as a broker describes it (Java's ``DescribeClusterResult``)."""

    cluster_id: str
    controller: BrokerMetadata | None
    """The broker given as controller, or ``None`` when none is known. Under KRaft clients
    cannot reach the controller quorum: the answering broker names a live broker it picks at
    random, as Java's client reports it."""
    brokers: tuple[BrokerMetadata, ...]
    """Every live broker with its rack, by id."""
    authorized_operations: frozenset[ACLOperation] | None
    """What the caller may do on the cluster, when asked for; else ``None``."""


def authorized_operations(bits: int) -> frozenset[ACLOperation] | None:
    """The operations of a Kafka authorized-operations bitfield (bit n is operation n), or
    ``None`` for the value meaning they were not requested."""
    if bits == _NOT_REQUESTED:
        return None
    return frozenset(op for op in ACLOperation if bits & (1 << op.value))


class ClusterOperations(AdminBase):
    """Describing the cluster."""

    async def describe_cluster_result(
        self, include_authorized_operations: bool = False
    ) -> ClusterDescription:
        """The cluster id, the controller and every broker with its rack (DescribeCluster
        to the least-loaded broker); with ``include_authorized_operations``, what the caller
        may do on the cluster. ``describe_cluster`` gives the Metadata answer as a dict,
        as aiokafka does."""
        request: DescribeClusterRequest = {
            "include_cluster_authorized_operations": include_authorized_operations,
        }
        response = await self._client.send_to_any(Api.DESCRIBE_CLUSTER, request)
        raise_for(response["error_code"], "describe_cluster", response["error_message"])
        brokers = tuple(
            BrokerMetadata(b["broker_id"], b["host"], b["port"], b["rack"])
            for b in sorted(response["brokers"], key=lambda b: b["broker_id"])
        )
        controller = next((b for b in brokers if b.nodeId == response["controller_id"]), None)
        return ClusterDescription(
            cluster_id=response["cluster_id"],
            controller=controller,
            brokers=brokers,
            authorized_operations=authorized_operations(response["cluster_authorized_operations"]),
        )
