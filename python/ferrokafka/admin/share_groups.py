"""The admin client's share group operations (KIP-932): list and describe share groups, read,
move and forget where a share group starts each partition, delete share groups. Requests go to
the group's coordinator (found again while it moves or loads), as for consumer groups; names
follow the Java ``Admin`` (``listShareGroupOffsets`` is ``list_share_group_offsets``)."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, TypedDict, TypeVar

from .. import errors as Errors
from ..protocol import Api
from ..structs import TopicPartition
from ._base import Body, raise_for
from .groups import GroupOperations

if TYPE_CHECKING:
    from .._native import (
        AlterShareGroupOffsetsRequest,
        DeleteShareGroupOffsetsRequest,
        DescribeShareGroupOffsetsRequest,
        ListGroupsRequest,
        ShareGroupDescribeRequest,
        ShareOffsetsRequestTopic,
    )

__all__ = ["ShareGroupOperations"]

# ListGroups v5 filters by group type (KIP-848, Kafka 4.0).
_LIST_GROUPS_BY_TYPE_VERSION = 5


class _Answer(TypedDict):
    """What a response, and each of its topics or partitions, says of its outcome."""

    error_code: int
    error_message: str | None


_Group = TypeVar("_Group", bound=_Answer)


def _only_group(groups: list[_Group], what: str) -> _Group:
    """The one group of a response to a request for one, once its error is raised (naming
    ``what``)."""
    group = groups[0]
    raise_for(group["error_code"], what, group["error_message"])
    return group


def _raise_for_answers(what: str, response: _Answer, parts: Iterable[tuple[str, _Answer]]) -> None:
    """Raise the response's error (naming ``what``), else the first of its parts' (naming
    ``what`` and the part's label)."""
    raise_for(response["error_code"], what, response["error_message"])
    for label, part in parts:
        raise_for(part["error_code"], f"{what}, {label}", part["error_message"])


class ShareGroupOperations(GroupOperations):
    """Share groups and their start offsets."""

    async def list_share_groups(self) -> list[tuple[str, str]]:
        """``(group_id, state)`` of every share group in the cluster (ListGroups v5 filtered
        by type, asked of every broker)."""
        metadata = await self._client.fetch_metadata(topics=set())

        async def list_on(broker: int) -> list[tuple[str, str]]:
            shares: ListGroupsRequest = {"states_filter": [], "types_filter": ["share"]}
            conn = await self._client.ready(broker)
            if conn.version_for(Api.LIST_GROUPS.key) < _LIST_GROUPS_BY_TYPE_VERSION:
                raise Errors.IncompatibleBrokerVersion(
                    f"list_share_groups: broker {broker} cannot list groups by type (Kafka 4.0+)"
                )
            response = await self._client.send(broker, Api.LIST_GROUPS, shares)
            raise_for(response["error_code"], f"list_share_groups: broker {broker}")
            return [(g["group_id"], g["group_state"]) for g in response["groups"]]

        found: dict[str, tuple[str, str]] = {}
        brokers = [b["node_id"] for b in metadata["brokers"]]
        for groups in await asyncio.gather(*(list_on(b) for b in brokers)):
            for group in groups:
                found.setdefault(group[0], group)
        return sorted(found.values())

    async def describe_share_groups(
        self, group_ids: list[str], include_authorized_operations: bool = False
    ) -> list[Body]:
        """Each group's ``group_id``, ``group_state``, ``group_epoch``, ``assignment_epoch``,
        ``assignor_name`` and ``members`` (``member_id``, ``client_id``, ``client_host``,
        ``rack_id``, ``member_epoch``, ``subscribed_topic_names``, and ``assignment``: the
        ``TopicPartition``s it fetches from), in the order given. A group that does not exist
        raises ``GroupIdNotFound`` naming it."""

        async def describe(group_id: str) -> Body:
            async def on(node: int) -> Body:
                request: ShareGroupDescribeRequest = {
                    "group_ids": [group_id],
                    "include_authorized_operations": include_authorized_operations,
                }
                response = await self._send(node, Api.SHARE_GROUP_DESCRIBE, request)
                group = _only_group(
                    response["groups"], f"describe_share_groups: group {group_id!r}"
                )
                return {
                    "group_id": group["group_id"],
                    "group_state": group["group_state"],
                    "group_epoch": group["group_epoch"],
                    "assignment_epoch": group["assignment_epoch"],
                    "assignor_name": group["assignor_name"],
                    "members": [
                        {
                            "member_id": m["member_id"],
                            "client_id": m["client_id"],
                            "client_host": m["client_host"],
                            "rack_id": m["rack_id"],
                            "member_epoch": m["member_epoch"],
                            "subscribed_topic_names": list(m["subscribed_topic_names"]),
                            "assignment": sorted(
                                TopicPartition(t["topic_name"], p)
                                for t in m["assignment"]["topic_partitions"]
                                for p in t["partitions"]
                            ),
                        }
                        for m in group["members"]
                    ],
                    "authorized_operations": group["authorized_operations"],
                }

            return await self._to_coordinator(group_id, None, on)

        return list(await asyncio.gather(*(describe(g) for g in dict.fromkeys(group_ids))))

    async def list_share_group_offsets(
        self, group_id: str, partitions: list[TopicPartition] | None = None
    ) -> dict[TopicPartition, int]:
        """Where the share group starts each partition (its share-partition start offset: the
        first offset not yet acknowledged for good), for ``partitions`` or for every partition
        the group has state for. Errors are raised naming the group or partition."""
        topics: list[ShareOffsetsRequestTopic] | None = None
        if partitions:
            by_topic: dict[str, list[int]] = defaultdict(list)
            for tp in partitions:
                by_topic[tp.topic].append(tp.partition)
            topics = [{"topic_name": t, "partitions": ps} for t, ps in by_topic.items()]

        async def on(node: int) -> dict[TopicPartition, int]:
            request: DescribeShareGroupOffsetsRequest = {
                "groups": [{"group_id": group_id, "topics": topics}]
            }
            response = await self._send(node, Api.DESCRIBE_SHARE_GROUP_OFFSETS, request)
            group = _only_group(response["groups"], f"list_share_group_offsets: group {group_id!r}")
            out: dict[TopicPartition, int] = {}
            for topic in group["topics"]:
                for part in topic["partitions"]:
                    tp = TopicPartition(topic["topic_name"], part["partition_index"])
                    raise_for(
                        part["error_code"],
                        f"list_share_group_offsets: group {group_id!r}, {tp.topic}-{tp.partition}",
                        part["error_message"],
                    )
                    out[tp] = part["start_offset"]
            return out

        return await self._to_coordinator(group_id, None, on)

    async def alter_share_group_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, int]
    ) -> None:
        """Start the share group at these offsets (the group must have no members). Errors
        are raised naming the group or partition (``NonEmptyGroup`` while it has members)."""
        by_topic: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for tp, offset in offsets.items():
            by_topic[tp.topic].append((tp.partition, int(offset)))
        request: AlterShareGroupOffsetsRequest = {
            "group_id": group_id,
            "topics": [
                {
                    "topic_name": topic,
                    "partitions": [{"partition_index": p, "start_offset": o} for p, o in parts],
                }
                for topic, parts in by_topic.items()
            ],
        }

        async def on(node: int) -> None:
            response = await self._send(node, Api.ALTER_SHARE_GROUP_OFFSETS, request)
            _raise_for_answers(
                f"alter_share_group_offsets: group {group_id!r}",
                response,
                (
                    (f"{topic['topic_name']}-{part['partition_index']}", part)
                    for topic in response["responses"]
                    for part in topic["partitions"]
                ),
            )

        await self._to_coordinator(group_id, None, on)

    async def delete_share_group_offsets(self, group_id: str, topics: list[str]) -> None:
        """Forget the share group's state for these topics (the group must have no members);
        a member that joins later starts them as ``share.auto.offset.reset`` says."""
        request: DeleteShareGroupOffsetsRequest = {
            "group_id": group_id,
            "topics": [{"topic_name": t} for t in dict.fromkeys(topics)],
        }

        async def on(node: int) -> None:
            response = await self._send(node, Api.DELETE_SHARE_GROUP_OFFSETS, request)
            _raise_for_answers(
                f"delete_share_group_offsets: group {group_id!r}",
                response,
                ((f"topic {topic['topic_name']!r}", topic) for topic in response["responses"]),
            )

        await self._to_coordinator(group_id, None, on)

    async def delete_share_groups(
        self, group_ids: list[str]
    ) -> list[tuple[str, type[Errors.BrokerResponseError]]]:
        """Delete share groups that have no members, with their state: DeleteGroups, which
        deletes a group of any type; reported per group as ``delete_consumer_groups`` does."""
        return await self.delete_consumer_groups(group_ids)
