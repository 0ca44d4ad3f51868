"""``AIOKafkaAdminClient``: topics, partitions, the cluster, configs, records, offsets,
consumer groups and ACLs.

The method names, parameters and results follow aiokafka 0.14's admin client; what aiokafka
lacks follows Java's ``Admin``, with typed results (``describe_cluster_result``,
``list_offsets``, ``incremental_alter_configs``, ``delete_consumer_group_offsets``...).
Where aiokafka returns a raw response object, this client returns the decoded response as a
dict (the Kafka schema's field names in snake_case). aiokafka has no ACL calls;
``create_acls``, ``describe_acls`` and ``delete_acls`` take and return kafka-python's ACL
types. Nor has it ``delete_consumer_groups``, which returns what kafka-python's does.

Each kind of operation is a part of its own (``topics.py``, ``topic_descriptions.py``,
``cluster.py``, ``configs.py``, ``records.py``, ``offsets.py``, ``reassignments.py``,
``log_dirs.py``, ``groups.py``, ``group_offset_deletion.py``, ``transactions.py``,
``share_groups.py``, ``acls.py``, ``quotas.py``, ``scram.py``, ``features.py``, on the shared
``_base.py``); this module assembles them and holds the lifecycle.

Routing: requests that KRaft forwards to the controller (CreateTopics, DeleteTopics,
CreatePartitions, ElectLeaders, the partition reassignment, ACL, quota, SCRAM and feature
calls) and cluster-wide reads
go to the least-loaded broker (KIP-590); DeleteRecords and ListOffsets go to each partition's
leader; broker config resources and log directory requests to that broker; group requests go to
the group coordinator found with FindCoordinator, retried while the coordinator moves or loads;
transaction requests as ``transactions.py`` says.
"""

from __future__ import annotations

import asyncio
from ssl import SSLContext

from .. import __version__
from ..abc import AbstractTokenProvider
from ..client import AIOKafkaClient
from ..config import AdminConfig
from ..config.connection import keyword_options
from ..metrics import MetricName
from .acls import AclOperations
from .cluster import ClusterOperations
from .configs import ConfigOperations
from .features import FeatureOperations
from .group_offset_deletion import GroupOffsetDeletion
from .log_dirs import LogDirOperations
from .offsets import OffsetOperations
from .quotas import QuotaOperations
from .reassignments import ReassignmentOperations
from .records import RecordOperations
from .scram import ScramOperations
from .share_groups import ShareGroupOperations
from .topic_descriptions import TopicDescriptionOperations
from .topics import TopicOperations
from .transactions import TransactionOperations

__all__ = ["AIOKafkaAdminClient"]

_NO_OPS = {
    "api_version": "AIOKafkaAdminClient: api_version is a no-op (versions are negotiated per "
    "connection)",
    "loop": "AIOKafkaAdminClient: loop is a no-op (the running loop is used)",
}


class AIOKafkaAdminClient(
    TopicOperations,
    TopicDescriptionOperations,
    ClusterOperations,
    ConfigOperations,
    RecordOperations,
    OffsetOperations,
    ReassignmentOperations,
    LogDirOperations,
    GroupOffsetDeletion,
    TransactionOperations,
    ShareGroupOperations,
    AclOperations,
    QuotaOperations,
    ScramOperations,
    FeatureOperations,
):
    """An admin client. ``start()`` connects; ``close()`` disconnects (or use ``async with``).

    Parameters are aiokafka's, documented and checked by ``ferrokafka.config.AdminConfig``
    (the connection options of ``ConnectionConfig``: ``security_protocol`` and the ``sasl_*``
    options among them). ``loop`` and ``api_version`` are deprecated no-ops, as in aiokafka.
    """

    def __init__(
        self,
        *,
        loop: asyncio.AbstractEventLoop | None = None,
        bootstrap_servers: str | list[str] = "localhost",
        client_id: str = "ferrokafka-" + __version__,
        request_timeout_ms: int = 40000,
        connections_max_idle_ms: int = 540000,
        retry_backoff_ms: int = 100,
        metadata_max_age_ms: int = 300000,
        security_protocol: str = "PLAINTEXT",
        ssl_context: SSLContext | None = None,
        api_version: None = None,
        sasl_mechanism: str = "PLAIN",
        sasl_plain_username: str | None = None,
        sasl_plain_password: str | None = None,
        sasl_kerberos_service_name: str = "kafka",
        sasl_kerberos_domain_name: str | None = None,
        sasl_oauth_token_provider: AbstractTokenProvider | None = None,
    ) -> None:
        options = keyword_options(locals(), _NO_OPS)
        config = self._config = AdminConfig(**options)
        self._request_timeout_ms = config.request_timeout_ms
        self._retry_backoff = config.retry_backoff_ms / 1000
        self._client = AIOKafkaClient(config, metric_group_prefix="admin-client")
        self._started = False
        self._closed = False

    @property
    def client(self) -> AIOKafkaClient:
        return self._client

    def metrics(self) -> dict[MetricName, float]:
        """Request and connection metrics (``admin-client-metrics``,
        ``admin-client-node-metrics``), as the Java admin client names them."""
        return self._client.metrics.read()

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect to a bootstrap server and load the cluster metadata. Idempotent."""
        if self._started:
            return
        await self._client.bootstrap()
        self._started = True

    async def close(self) -> None:
        """Close every connection. Idempotent."""
        if self._closed:
            return
        self._closed = True
        await self._client.close()

    async def __aenter__(self) -> AIOKafkaAdminClient:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
