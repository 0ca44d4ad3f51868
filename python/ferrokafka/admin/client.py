"""``AIOKafkaAdminClient``: topics, partitions, configs, records and consumer groups.

The method names, parameters and results follow aiokafka 0.14's admin client. Where aiokafka
returns a raw response object, this client returns the decoded response as a dict (the Kafka
schema's field names in snake_case).

Routing: requests that KRaft forwards to the controller (CreateTopics, DeleteTopics,
CreatePartitions) and cluster-wide reads go to the least-loaded broker (KIP-590);
DeleteRecords goes to each partition's leader; group requests go to the group coordinator
found with FindCoordinator, retried while the coordinator moves or loads.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping
from ssl import SSLContext
from typing import TYPE_CHECKING, Any, TypeVar, cast

from .. import __version__
from .. import errors as Errors
from ..abc import AbstractTokenProvider
from ..client import AIOKafkaClient
from ..config import AdminConfig
from ..config.connection import keyword_options
from ..protocol import Api
from ..retry import retrying
from ..structs import OffsetAndMetadata, TopicPartition
from .config_resource import ConfigResource, ConfigResourceType
from .new_partitions import NewPartitions
from .new_topic import NewTopic
from .records_to_delete import RecordsToDelete

if TYPE_CHECKING:
    from .._native import (
        AlterConfigsRequest,
        AlterConfigsResourceResponse,
        ConsumerGroupDescribeRequest,
        CreatePartitionsRequest,
        CreateTopicsRequest,
        DeleteRecordsPartition,
        DeleteRecordsRequest,
        DeleteTopicsRequest,
        DescribeConfigsRequest,
        DescribeConfigsResult,
        DescribeGroupsRequest,
        ListGroupsRequest,
        MetadataRequest,
        OffsetFetchRequest,
        OffsetFetchResponseTopic,
        OffsetFetchResponseTopics,
    )

__all__ = ["AIOKafkaAdminClient"]

Body = dict[str, Any]
T = TypeVar("T")
_Req = TypeVar("_Req", bound=Mapping[str, Any])
_Resp = TypeVar("_Resp")

_ZERO_UUID = bytes(16)
"""A topic id not given (DeleteTopics names topics)."""

# OffsetFetch v10 names topics by id only; the admin API speaks topic names.
_OFFSET_FETCH_MAX_BY_NAME = 9


def _raise_for(code: int, what: str, message: str | None = None) -> None:
    """Raise the ferrokafka error class of a non-zero Kafka error ``code``."""
    if code:
        detail = f": {message}" if message else ""
        raise Errors.for_code(code)(f"{what}{detail}")


_NO_OPS = {
    "api_version": "AIOKafkaAdminClient: api_version is a no-op (versions are negotiated per "
    "connection)",
    "loop": "AIOKafkaAdminClient: loop is a no-op (the running loop is used)",
}


class AIOKafkaAdminClient:
    """An admin client. ``start()`` connects; ``close()`` disconnects (or use ``async with``).

    Parameters are aiokafka's, documented and checked by ``ferrokafka.config.AdminConfig``
    (the connection options of ``ConnectionConfig``). ``security_protocol`` may be
    ``PLAINTEXT`` or ``SSL``; the ``sasl_*`` parameters are accepted for compatibility and have
    no effect until ferrokafka speaks SASL. ``loop`` and ``api_version`` are deprecated no-ops,
    as in aiokafka.
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
        self._client = AIOKafkaClient(config)
        self._started = False
        self._closed = False

    @property
    def client(self) -> AIOKafkaClient:
        return self._client

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

    # -- plumbing --------------------------------------------------------------------------

    def _timeout_ms(self, timeout_ms: int | None) -> int:
        return self._request_timeout_ms if timeout_ms is None else timeout_ms

    async def _send(
        self, node_id: int, api: Api[_Req, _Resp], body: _Req, *, max_version: int | None = None
    ) -> _Resp:
        """Send to ``node_id`` at the negotiated version, capped at ``max_version``."""
        version = None
        if max_version is not None:
            conn = await self._client.ready(node_id)
            version = min(conn.version_for(api.key), max_version)
        return await self._client.send(node_id, api, body, version=version)

    async def _retrying(self, attempt: Callable[[], Awaitable[T]]) -> T:
        """Run ``attempt`` until it succeeds, retrying retriable Kafka errors with backoff for
        up to ``request_timeout_ms``."""
        return await retrying(
            attempt, timeout=self._request_timeout_ms / 1000, backoff=self._retry_backoff
        )

    # -- topics ----------------------------------------------------------------------------

    async def create_topics(
        self,
        new_topics: list[NewTopic],
        timeout_ms: int | None = None,
        validate_only: bool = False,
    ) -> Body:
        """Send CreateTopics; returns the decoded response. Per-topic ``error_code``s are
        reported there, as aiokafka does, not raised."""
        body: CreateTopicsRequest = {
            "topics": [t.to_request() for t in new_topics],
            "timeout_ms": self._timeout_ms(timeout_ms),
            "validate_only": validate_only,
        }
        return _plain(await self._client.send_to_any(Api.CREATE_TOPICS, body))

    async def delete_topics(self, topics: list[str], timeout_ms: int | None = None) -> Body:
        """Send DeleteTopics; returns the decoded response with per-topic ``error_code``s."""
        body: DeleteTopicsRequest = {
            "topic_names": list(topics),
            "topics": [{"name": t, "topic_id": _ZERO_UUID} for t in topics],
            "timeout_ms": self._timeout_ms(timeout_ms),
        }
        return _plain(await self._client.send_to_any(Api.DELETE_TOPICS, body))

    async def list_topics(self) -> list[str]:
        """Every topic name in the cluster (internal topics included), sorted."""
        response = await self._client.fetch_metadata(topics=None)
        return sorted(t["name"] for t in response["topics"] if t["name"])

    async def describe_topics(self, topics: list[str] | None = None) -> list[Body]:
        """The Metadata response's topic entries (partitions, leaders, replicas, ISR) for
        ``topics``, or for every topic. A named topic the broker does not know raises its
        error (``UnknownTopicOrPartitionError``)."""
        response = await self._client.fetch_metadata(topics=None if topics is None else set(topics))
        result = response["topics"]
        if topics is not None:
            for t in result:
                _raise_for(t["error_code"], f"describe_topics: topic {t['name']!r}")
        return cast(list[Body], result)

    async def describe_cluster(self) -> Body:
        """Cluster id, controller id and brokers (the Metadata response without topics)."""
        response = await self._client.fetch_metadata(topics=set())
        return {k: v for k, v in response.items() if k != "topics"}

    async def create_partitions(
        self,
        topic_partitions: dict[str, NewPartitions],
        timeout_ms: int | None = None,
        validate_only: bool = False,
    ) -> Body:
        """Grow topics to ``NewPartitions.total_count`` partitions; returns the decoded
        response. The first per-topic error is raised (``InvalidPartitionsError`` for a count
        that does not grow the topic, ``UnknownTopicOrPartitionError`` for an unknown one)."""
        body: CreatePartitionsRequest = {
            "topics": [
                {
                    "name": name,
                    "count": new.total_count,
                    "assignments": None
                    if new.new_assignments is None
                    else [{"broker_ids": list(a)} for a in new.new_assignments],
                }
                for name, new in topic_partitions.items()
            ],
            "timeout_ms": self._timeout_ms(timeout_ms),
            "validate_only": validate_only,
        }
        response = await self._client.send_to_any(Api.CREATE_PARTITIONS, body)
        for result in response["results"]:
            _raise_for(
                result["error_code"],
                f"could not create partitions for topic {result['name']!r}",
                result["error_message"],
            )
        return _plain(response)

    async def describe_configs(
        self, config_resources: list[ConfigResource], include_synonyms: bool = False
    ) -> list[Body]:
        """Read the configuration of topics and brokers: one decoded DescribeConfigs response
        per request (broker resources go to that broker, topic resources to any broker). A
        resource's error (e.g. an unknown topic) is raised naming the resource."""

        def request(resources: list[ConfigResource]) -> DescribeConfigsRequest:
            return {
                "resources": [
                    {
                        "resource_type": int(res.resource_type),
                        "resource_name": res.name,
                        "configuration_keys": list(res.configs) if res.configs else None,
                    }
                    for res in resources
                ],
                "include_synonyms": include_synonyms,
            }

        responses = await self._per_config_resource(Api.DESCRIBE_CONFIGS, config_resources, request)
        for response in responses:
            _raise_for_resources(response["results"], "describe_configs")
        return [_plain(r) for r in responses]

    async def alter_configs(
        self, config_resources: list[ConfigResource], validate_only: bool = False
    ) -> list[Body]:
        """Set the dynamic configuration of topics and brokers, ``configs`` of each
        ``ConfigResource`` (name -> value; keys not named return to their defaults, as
        AlterConfigs does): one decoded AlterConfigs response per request, routed as
        ``describe_configs`` routes. A resource's error (an unknown topic, an invalid value)
        is raised naming the resource."""

        def request(resources: list[ConfigResource]) -> AlterConfigsRequest:
            return {
                "resources": [
                    {
                        "resource_type": int(res.resource_type),
                        "resource_name": res.name,
                        "configs": [
                            {"name": name, "value": None if value is None else str(value)}
                            for name, value in (res.configs or {}).items()
                        ],
                    }
                    for res in resources
                ],
                "validate_only": validate_only,
            }

        responses = await self._per_config_resource(Api.ALTER_CONFIGS, config_resources, request)
        for response in responses:
            _raise_for_resources(response["responses"], "alter_configs")
        return [_plain(r) for r in responses]

    async def _per_config_resource(
        self,
        api: Api[_Req, _Resp],
        config_resources: list[ConfigResource],
        request: Callable[[list[ConfigResource]], _Req],
    ) -> list[_Resp]:
        """Send ``api`` with the ``request`` of the resources: broker resources to that
        broker, the rest to any broker. The responses in that order."""
        by_broker: dict[int, list[ConfigResource]] = defaultdict(list)
        anywhere: list[ConfigResource] = []
        for res in config_resources:
            if res.resource_type == ConfigResourceType.BROKER:
                by_broker[int(res.name)].append(res)
            else:
                anywhere.append(res)
        sends = [
            self._client.send(broker, api, request(resources))
            for broker, resources in by_broker.items()
        ]
        if anywhere:
            sends.append(self._client.send_to_any(api, request(anywhere)))
        return list(await asyncio.gather(*sends))

    async def delete_records(
        self,
        records_to_delete: dict[TopicPartition, RecordsToDelete],
        timeout_ms: int | None = None,
    ) -> dict[TopicPartition, int]:
        """Delete the records below ``before_offset`` in each partition (sent to each
        partition's leader); returns every partition's new low watermark (log start
        offset)."""
        metadata = await self._client.fetch_metadata(topics={tp.topic for tp in records_to_delete})
        leaders: dict[TopicPartition, int] = {}
        for t in metadata["topics"]:
            _raise_for(t["error_code"], f"delete_records: topic {t['name']!r}")
            name = t["name"]
            if name is None:  # only topics asked for by id come back nameless
                continue
            for p in t["partitions"]:
                leaders[TopicPartition(name, p["partition_index"])] = p["leader_id"]
        by_leader: dict[int, dict[str, list[DeleteRecordsPartition]]] = defaultdict(
            lambda: defaultdict(list)
        )
        for tp, records in records_to_delete.items():
            leader = leaders.get(tp)
            if leader is None:
                raise Errors.UnknownTopicOrPartitionError(
                    f"delete_records: topic {tp.topic!r} has no partition {tp.partition}"
                )
            if leader < 0:
                raise Errors.LeaderNotAvailableError(
                    f"delete_records: topic {tp.topic!r} partition {tp.partition} has no leader"
                )
            by_leader[leader][tp.topic].append(
                {"partition_index": tp.partition, "offset": records.before_offset}
            )
        timeout = self._timeout_ms(timeout_ms)
        requests: dict[int, DeleteRecordsRequest] = {
            leader: {
                "topics": [{"name": n, "partitions": ps} for n, ps in topics.items()],
                "timeout_ms": timeout,
            }
            for leader, topics in by_leader.items()
        }
        responses = await asyncio.gather(
            *(
                self._client.send(leader, Api.DELETE_RECORDS, request)
                for leader, request in requests.items()
            )
        )
        low_watermarks: dict[TopicPartition, int] = {}
        for response in responses:
            for result in response["topics"]:
                for part in result["partitions"]:
                    index = part["partition_index"]
                    _raise_for(
                        part["error_code"],
                        f"delete_records: topic {result['name']!r} partition {index}",
                    )
                    low_watermarks[TopicPartition(result["name"], index)] = part["low_watermark"]
        return low_watermarks

    # -- consumer groups -------------------------------------------------------------------

    async def find_coordinator(self, group_id: str, coordinator_type: int = 0) -> int:
        """The broker id coordinating ``group_id`` (``coordinator_type`` 0, a consumer group)
        or a transactional id (1). Retries while the coordinator is not available yet."""

        return await self._retrying(
            lambda: self._client.find_coordinator(group_id, coordinator_type)
        )

    async def _to_coordinator(
        self,
        group_id: str,
        coordinator_id: int | None,
        call: Callable[[int], Awaitable[T]],
    ) -> T:
        """Run ``call(coordinator)``; when the group's coordinator moved or is loading (all
        retriable errors), look it up again (unless the caller pinned ``coordinator_id``) and
        retry."""

        async def attempt() -> T:
            node = coordinator_id
            if node is None:
                node = await self.find_coordinator(group_id)
            return await call(node)

        return await self._retrying(attempt)

    async def list_consumer_groups(
        self, broker_ids: list[int] | None = None
    ) -> list[tuple[str, str]]:
        """``(group_id, protocol_type)`` of every group the brokers (all by default)
        coordinate. Errors are raised."""
        if broker_ids is None:
            metadata = await self._client.fetch_metadata(topics=set())
            broker_ids = [b["node_id"] for b in metadata["brokers"]]

        async def list_on(broker: int) -> list[tuple[str, str]]:
            everything: ListGroupsRequest = {}
            response = await self._client.send(broker, Api.LIST_GROUPS, everything)
            _raise_for(response["error_code"], f"list_consumer_groups: broker {broker}")
            return [(g["group_id"], g["protocol_type"]) for g in response["groups"]]

        found: dict[str, tuple[str, str]] = {}
        for groups in await asyncio.gather(*(list_on(b) for b in broker_ids)):
            for group in groups:
                found.setdefault(group[0], group)
        return list(found.values())

    async def describe_consumer_groups(
        self,
        group_ids: list[str],
        group_coordinator_id: int | None = None,
        include_authorized_operations: bool = False,
    ) -> list[Body]:
        """Describe groups: one decoded DescribeGroups response per coordinator, each with
        ``groups`` (state, protocol type and data, members).

        Groups of the KIP-848 consumer protocol, which DescribeGroups does not describe, are
        described with ConsumerGroupDescribe and reported in the same shape (``protocol_data``
        is the server assignor; members carry no metadata/assignment bytes). A group the
        coordinator does not know raises ``GroupIdNotFound`` naming it.
        """
        by_node: dict[int, list[str]] = defaultdict(list)
        for group_id in dict.fromkeys(group_ids):
            node = group_coordinator_id
            if node is None:
                node = await self.find_coordinator(group_id)
            by_node[node].append(group_id)

        async def describe_on(node: int, groups: list[str]) -> Body:
            request: DescribeGroupsRequest = {
                "groups": groups,
                "include_authorized_operations": include_authorized_operations,
            }
            response = await self._send(node, Api.DESCRIBE_GROUPS, request)
            described: list[Body] = []
            for found in response["groups"]:
                group = _plain(found)
                if group["error_code"] == Errors.GroupIdNotFound.errno:
                    group = await self._describe_consumer_protocol_group(
                        node, group["group_id"], include_authorized_operations
                    )
                _raise_for(
                    group["error_code"],
                    f"describe_consumer_groups: group {group['group_id']!r}",
                    group.get("error_message"),
                )
                described.append(group)
            result = _plain(response)
            result["groups"] = described
            return result

        return list(await asyncio.gather(*(describe_on(node, gs) for node, gs in by_node.items())))

    async def _describe_consumer_protocol_group(
        self, node: int, group_id: str, include_authorized_operations: bool
    ) -> Body:
        """A KIP-848 group, described with ConsumerGroupDescribe in DescribeGroups' shape."""
        request: ConsumerGroupDescribeRequest = {
            "group_ids": [group_id],
            "include_authorized_operations": include_authorized_operations,
        }
        response = await self._client.send(node, Api.CONSUMER_GROUP_DESCRIBE, request)
        group = response["groups"][0]
        if group["error_code"]:
            return _plain(group)
        return {
            "error_code": 0,
            "error_message": None,
            "group_id": group["group_id"],
            "group_state": group["group_state"],
            "protocol_type": "consumer",
            "protocol_data": group["assignor_name"],
            "members": [
                {
                    "member_id": m["member_id"],
                    "group_instance_id": m["instance_id"],
                    "client_id": m["client_id"],
                    "client_host": m["client_host"],
                    "member_metadata": b"",
                    "member_assignment": b"",
                    "assignment": [
                        TopicPartition(tp["topic_name"], p)
                        for tp in m["assignment"]["topic_partitions"]
                        for p in tp["partitions"]
                    ],
                }
                for m in group["members"]
            ],
            "authorized_operations": group["authorized_operations"],
        }

    async def list_consumer_group_offsets(
        self,
        group_id: str,
        group_coordinator_id: int | None = None,
        partitions: list[TopicPartition] | None = None,
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """The committed offsets of ``group_id`` (OffsetFetch to its coordinator), for
        ``partitions`` or for every partition it committed. A requested partition without a
        commit maps to offset -1. Errors are raised naming the group or partition."""
        by_topic: dict[str, list[int]] | None = None
        if partitions:
            by_topic = defaultdict(list)
            for tp in partitions:
                by_topic[tp.topic].append(tp.partition)

        async def fetch(node: int) -> dict[TopicPartition, OffsetAndMetadata]:
            conn = await self._client.ready(node)
            version = min(conn.version_for(Api.OFFSET_FETCH.key), _OFFSET_FETCH_MAX_BY_NAME)
            body: OffsetFetchRequest
            if version >= 8:
                body = {
                    "groups": [
                        {
                            "group_id": group_id,
                            "topics": None
                            if by_topic is None
                            else [
                                {"name": t, "partition_indexes": ps} for t, ps in by_topic.items()
                            ],
                        }
                    ]
                }
            else:
                body = {
                    "group_id": group_id,
                    "topics": None
                    if by_topic is None
                    else [{"name": t, "partition_indexes": ps} for t, ps in by_topic.items()],
                }
            response = await self._client.send(node, Api.OFFSET_FETCH, body, version=version)
            result_topics: list[OffsetFetchResponseTopic] | list[OffsetFetchResponseTopics]
            if version >= 8:
                group = response["groups"][0]
                group_error, result_topics = group["error_code"], group["topics"]
            else:
                group_error, result_topics = response["error_code"], response["topics"]
            _raise_for(group_error, f"list_consumer_group_offsets: group {group_id!r}")
            return _committed(group_id, result_topics)

        return await self._to_coordinator(group_id, group_coordinator_id, fetch)

    # -- helpers ---------------------------------------------------------------------------

    async def wait_for_topic(
        self, name: str, *, partitions: int | None = None, present: bool = True, timeout: float
    ) -> None:
        """Wait until every broker's metadata shows ``name`` with a leader for each partition
        (``present=True``) or no longer knows it (``present=False``)."""
        deadline = time.monotonic() + timeout
        last: str = "no answer yet"
        while True:
            try:
                if await self._topic_state_everywhere(name, partitions, present):
                    return
                last = "not yet propagated to every broker"
            except Errors.KafkaError as exc:
                last = str(exc)
            if time.monotonic() >= deadline:
                state = "appear" if present else "disappear"
                raise Errors.KafkaTimeoutError(
                    f"topic {name!r} did not {state} within {timeout:.1f}s ({last})"
                )
            await asyncio.sleep(self._retry_backoff)

    async def _topic_state_everywhere(
        self, name: str, partitions: int | None, present: bool
    ) -> bool:
        await self._client.refresh_metadata()
        request: MetadataRequest = {"topics": [{"name": name}], "allow_auto_topic_creation": False}
        for broker in self._client.cluster.broker_ids():
            response = await self._client.send(broker, Api.METADATA, request)
            topic = next((t for t in response["topics"] if t["name"] == name), None)
            exists = topic is not None and topic["error_code"] == 0
            if not present:
                if exists:
                    return False
                continue
            if not exists or topic is None:
                return False
            parts = topic["partitions"]
            if partitions is not None and len(parts) != partitions:
                return False
            if any(p["leader_id"] < 0 or p["error_code"] for p in parts):
                return False
        return True


def _plain(response: Mapping[str, Any]) -> Body:
    """A decoded response as the plain dict the public methods return (it is one)."""
    return cast(Body, response)


def _raise_for_resources(
    results: Iterable[DescribeConfigsResult] | Iterable[AlterConfigsResourceResponse], what: str
) -> None:
    """Raise the first config resource error, naming the resource."""
    for result in results:
        kind = ConfigResourceType(result["resource_type"]).name.lower()
        _raise_for(
            result["error_code"],
            f"{what}: {kind} {result['resource_name']!r}",
            result["error_message"],
        )


def _committed(
    group_id: str, topics: Iterable[OffsetFetchResponseTopic] | Iterable[OffsetFetchResponseTopics]
) -> dict[TopicPartition, OffsetAndMetadata]:
    out: dict[TopicPartition, OffsetAndMetadata] = {}
    for t in topics:
        for p in t["partitions"]:
            _raise_for(
                p["error_code"],
                f"list_consumer_group_offsets: group {group_id!r} topic {t['name']!r} "
                f"partition {p['partition_index']}",
            )
            tp = TopicPartition(t["name"], p["partition_index"])
            out[tp] = OffsetAndMetadata(p["committed_offset"], p["metadata"] or "")
    return out
