"""The admin client's consumer group operations: find a group's coordinator, list, describe
(classic and KIP-848) and delete groups, read a group's committed offsets. Group requests go to
the coordinator, found again while it moves or loads."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from .. import errors as Errors
from ..protocol import Api
from ..structs import OffsetAndMetadata, TopicPartition
from ._base import AdminBase, Body, plain, raise_for

if TYPE_CHECKING:
    from .._native import (
        ConsumerGroupDescribeRequest,
        DeleteGroupsRequest,
        DescribeGroupsRequest,
        ListGroupsRequest,
        OffsetCommitRequest,
        OffsetCommitRequestPartition,
        OffsetFetchRequest,
        OffsetFetchResponseTopic,
        OffsetFetchResponseTopics,
    )

__all__ = ["GroupOperations"]

T = TypeVar("T")

# OffsetFetch and OffsetCommit v10 name topics by id only; the admin API speaks topic names.
_OFFSET_FETCH_MAX_BY_NAME = 9
_OFFSET_COMMIT_MAX_BY_NAME = 9
# OffsetFetch v8 takes a list of groups (KIP-709); earlier versions one group, at the top level.
_OFFSET_FETCH_GROUPS_VERSION = 8


class GroupOperations(AdminBase):
    """Consumer groups and their offsets."""

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
            raise_for(response["error_code"], f"list_consumer_groups: broker {broker}")
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

        async def describe_on(node: int, groups: list[str]) -> Body:
            request: DescribeGroupsRequest = {
                "groups": groups,
                "include_authorized_operations": include_authorized_operations,
            }
            response = await self._send(node, Api.DESCRIBE_GROUPS, request)
            described: list[Body] = []
            for found in response["groups"]:
                group = plain(found)
                if _unknown(group):
                    group["error_code"] = Errors.GroupIdNotFound.errno
                if group["error_code"] == Errors.GroupIdNotFound.errno:
                    group = await self._describe_consumer_protocol_group(
                        node, group["group_id"], include_authorized_operations
                    )
                raise_for(
                    group["error_code"],
                    f"describe_consumer_groups: group {group['group_id']!r}",
                    group.get("error_message"),
                )
                described.append(group)
            result = plain(response)
            result["groups"] = described
            return result

        async def attempt() -> list[Body]:
            # Coordinators are looked up again on each attempt: a NOT_COORDINATOR answer
            # (the group moved, or its offsets partition is still being loaded) is retried.
            by_node: dict[int, list[str]] = defaultdict(list)
            for group_id in dict.fromkeys(group_ids):
                node = group_coordinator_id
                if node is None:
                    node = await self.find_coordinator(group_id)
                by_node[node].append(group_id)
            described = (describe_on(node, gs) for node, gs in by_node.items())
            return list(await asyncio.gather(*described))

        return await self._retrying(attempt)

    async def _describe_consumer_protocol_group(
        self, node: int, group_id: str, include_authorized_operations: bool
    ) -> Body:
        """A KIP-848 group, described with ConsumerGroupDescribe in DescribeGroups' shape;
        on a broker without ConsumerGroupDescribe, the group is not found."""
        conn = await self._client.ready(node)
        try:
            conn.version_for(Api.CONSUMER_GROUP_DESCRIBE.key)
        except Errors.IncompatibleBrokerVersion:
            return {
                "error_code": Errors.GroupIdNotFound.errno,
                "error_message": None,
                "group_id": group_id,
            }
        request: ConsumerGroupDescribeRequest = {
            "group_ids": [group_id],
            "include_authorized_operations": include_authorized_operations,
        }
        response = await self._client.send(node, Api.CONSUMER_GROUP_DESCRIBE, request)
        group = response["groups"][0]
        if group["error_code"] == Errors.UnsupportedVersionError.errno:
            # A broker that lists the API but runs no KIP-848 coordinator (3.9 by default).
            return {**plain(group), "error_code": Errors.GroupIdNotFound.errno}
        if group["error_code"]:
            return plain(group)
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

    async def delete_consumer_groups(
        self, group_ids: list[str], group_coordinator_id: int | None = None
    ) -> list[tuple[str, type[Errors.BrokerResponseError]]]:
        """Delete groups that have no members, and their committed offsets with them
        (DeleteGroups, one request per coordinator). As kafka-python's
        ``KafkaAdminClient.delete_consumer_groups``; aiokafka has no such method.

        Returns ``(group_id, error class)`` per group, in the order given (a repeated id once):
        ``NoError`` when the group was deleted, else the class of the broker's answer for it,
        e.g. ``NonEmptyGroup`` while it has members, ``GroupIdNotFound`` when its coordinator
        does not know it. These are reported, not raised: check the results.

        Groups whose coordinator moved or is loading (retriable errors) are sent again, to the
        coordinator looked up again, for up to ``request_timeout_ms``; one still failing then is
        reported with that error. A request that fails as a whole (a broken connection, no
        coordinator found in time) raises. ``group_coordinator_id`` sends every group to that
        broker instead of looking up each group's coordinator.
        """
        wanted = list(dict.fromkeys(group_ids))
        results: dict[str, type[Errors.BrokerResponseError]] = {}

        def unsettled() -> list[str]:
            return [g for g in wanted if g not in results or results[g].retriable]

        async def delete_on(node: int, groups: list[str]) -> None:
            request: DeleteGroupsRequest = {"groups_names": groups}
            response = await self._client.send(node, Api.DELETE_GROUPS, request)
            answered = {r["group_id"]: r["error_code"] for r in response["results"]}
            for group_id in groups:
                # A group the answer leaves out is not known to be deleted: UnknownError.
                results[group_id] = Errors.for_code(answered.get(group_id, -1))

        async def attempt() -> None:
            by_node: dict[int, list[str]] = defaultdict(list)
            for group_id in unsettled():
                node = group_coordinator_id
                if node is None:
                    try:
                        node = await self.find_coordinator(group_id)
                    except Errors.BrokerResponseError as exc:
                        if exc.retriable:
                            raise
                        results[group_id] = type(exc)  # e.g. GroupAuthorizationFailedError
                        continue
                by_node[node].append(group_id)
            # Every request runs to its end before a failure is raised: a retry must not send
            # a group again while the request that may delete it is still in flight.
            sent = await asyncio.gather(
                *(delete_on(node, gs) for node, gs in by_node.items()), return_exceptions=True
            )
            for outcome in sent:
                if isinstance(outcome, BaseException):
                    raise outcome
            again = unsettled()
            if again:
                raise results[again[0]](f"delete_consumer_groups: group {again[0]!r}")

        if not wanted:
            return []
        try:
            await self._retrying(attempt)
        except Errors.KafkaError:
            if any(g not in results for g in wanted):
                raise
        return [(g, results[g]) for g in wanted]

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
            if version >= _OFFSET_FETCH_GROUPS_VERSION:
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
            if version >= _OFFSET_FETCH_GROUPS_VERSION:
                group = response["groups"][0]
                group_error, result_topics = group["error_code"], group["topics"]
            else:
                group_error, result_topics = response["error_code"], response["topics"]
            raise_for(group_error, f"list_consumer_group_offsets: group {group_id!r}")
            return _committed(group_id, result_topics)

        return await self._to_coordinator(group_id, group_coordinator_id, fetch)

    async def alter_consumer_group_offsets(
        self,
        group_id: str,
        offsets: Mapping[TopicPartition, int | OffsetAndMetadata],
        group_coordinator_id: int | None = None,
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """Set ``group_id``'s committed offsets (Java's ``alterConsumerGroupOffsets``): an
        OffsetCommit from outside the group, which the coordinator accepts while the group
        has no members (a group with members refuses it, ``UnknownMemberIdError``). Returns
        what was committed; a partition's error is raised naming the group and partition."""
        if not isinstance(group_id, str) or not group_id:
            raise ValueError(f"group_id must be a non-empty string, got {group_id!r}")
        wanted: dict[TopicPartition, OffsetAndMetadata] = {}
        for tp, value in offsets.items():
            om = value if isinstance(value, OffsetAndMetadata) else OffsetAndMetadata(value, "")
            if isinstance(om.offset, bool) or not isinstance(om.offset, int) or om.offset < 0:
                raise ValueError(f"the offset for {tp} must be an int >= 0, got {om.offset!r}")
            wanted[tp] = om
        if not wanted:
            return {}
        by_topic: dict[str, list[OffsetCommitRequestPartition]] = defaultdict(list)
        for tp, om in sorted(wanted.items()):
            by_topic[tp.topic].append(
                {
                    "partition_index": tp.partition,
                    "committed_offset": om.offset,
                    "committed_leader_epoch": -1,
                    "committed_metadata": om.metadata,
                }
            )
        body: OffsetCommitRequest = {
            "group_id": group_id,
            "generation_id_or_member_epoch": -1,
            "member_id": "",
            "group_instance_id": None,
            "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()],
        }

        async def commit(node: int) -> dict[TopicPartition, OffsetAndMetadata]:
            conn = await self._client.ready(node)
            version = min(conn.version_for(Api.OFFSET_COMMIT.key), _OFFSET_COMMIT_MAX_BY_NAME)
            response = await self._client.send(node, Api.OFFSET_COMMIT, body, version=version)
            for t in response["topics"]:
                for p in t["partitions"]:
                    raise_for(
                        p["error_code"],
                        f"alter_consumer_group_offsets: group {group_id!r} topic {t['name']!r} "
                        f"partition {p['partition_index']}",
                    )
            return wanted

        return await self._to_coordinator(group_id, group_coordinator_id, commit)


def _committed(
    group_id: str, topics: Iterable[OffsetFetchResponseTopic] | Iterable[OffsetFetchResponseTopics]
) -> dict[TopicPartition, OffsetAndMetadata]:
    out: dict[TopicPartition, OffsetAndMetadata] = {}
    for t in topics:
        for p in t["partitions"]:
            raise_for(
                p["error_code"],
                f"list_consumer_group_offsets: group {group_id!r} topic {t['name']!r} "
                f"partition {p['partition_index']}",
            )
            tp = TopicPartition(t["name"], p["partition_index"])
            out[tp] = OffsetAndMetadata(p["committed_offset"], p["metadata"] or "")
    return out


def _unknown(group: Mapping[str, Any]) -> bool:
    """Whether DescribeGroups described a group its coordinator does not know: before v6
    (KIP-1043) the answer is a ``Dead`` group with no protocol and no members rather than
    GROUP_ID_NOT_FOUND."""
    return (
        group["error_code"] == 0
        and group.get("group_state") == "Dead"
        and not group.get("protocol_type")
        and not group.get("members")
    )
