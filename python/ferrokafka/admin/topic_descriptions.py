"""The admin client's paged topic description: DescribeTopicPartitions (KIP-966), as Java's
``Admin.describeTopics`` reads it: topic ids, and per partition the leader epoch and the
eligible leader replicas beside leader, replicas and ISR. ``describe_topics`` keeps aiokafka's
Metadata dicts."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from .. import errors as Errors
from ..protocol import Api
from ._base import AdminBase, raise_for
from .acl_resource import ACLOperation
from .cluster import authorized_operations

if TYPE_CHECKING:
    from .._native import (
        DescribeTopicPartitionsRequest,
        DescribeTopicPartitionsTopic,
        TopicPartitionsCursor,
    )

__all__ = ["TopicDescription", "TopicDescriptionOperations", "TopicPartitionInfo"]

_PAGE_PARTITIONS = 2000


class TopicPartitionInfo(NamedTuple):
    """A partition as the controller's metadata holds it (Java's ``TopicPartitionInfo``)."""

    partition: int
    leader: int | None
    """``None`` while the partition has no leader."""
    leader_epoch: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    eligible_leader_replicas: tuple[int, ...] | None
    """KIP-966's replicas that may lead without data loss; ``None`` when not tracked."""
    last_known_elr: tuple[int, ...] | None
    offline_replicas: tuple[int, ...]


@dataclass(frozen=True)
class TopicDescription:
    """A topic (Java's ``TopicDescription``)."""

    name: str
    topic_id: uuid.UUID
    is_internal: bool
    partitions: tuple[TopicPartitionInfo, ...]
    authorized_operations: frozenset[ACLOperation] | None


def _ids(ids: list[int] | None) -> tuple[int, ...] | None:
    return None if ids is None else tuple(ids)


class TopicDescriptionOperations(AdminBase):
    """Describing topics page by page."""

    async def describe_topics_result(
        self, topics: Iterable[str] | None = None, *, page_partitions: int = _PAGE_PARTITIONS
    ) -> dict[str, TopicDescription]:
        """``topics`` (every topic by default) with their ids and partitions, asked of any
        broker in pages of at most ``page_partitions`` partitions. An unknown topic raises
        ``UnknownTopicOrPartitionError`` naming it."""
        if page_partitions < 1:
            raise ValueError(f"page_partitions must be >= 1, got {page_partitions!r}")
        names = [] if topics is None else list(dict.fromkeys(topics))
        wanted: list[DescribeTopicPartitionsTopic] = [{"name": t} for t in names]
        found: dict[str, tuple[bytes, bool, int, list[TopicPartitionInfo]]] = {}
        cursor: TopicPartitionsCursor | None = None
        while True:
            request: DescribeTopicPartitionsRequest = {
                "topics": wanted,
                "response_partition_limit": page_partitions,
                "cursor": cursor,
            }
            response = await self._client.send_to_any(Api.DESCRIBE_TOPIC_PARTITIONS, request)
            for t in response["topics"]:
                raise_for(t["error_code"], f"describe_topics_result: topic {t['name']!r}")
                name = t["name"]
                if name is None:  # only topics asked for by id come back nameless
                    continue
                _, _, _, partitions = found.setdefault(
                    name, (t["topic_id"], t["is_internal"], t["topic_authorized_operations"], [])
                )
                for p in t["partitions"]:
                    raise_for(
                        p["error_code"],
                        f"describe_topics_result: topic {name!r} partition {p['partition_index']}",
                    )
                    partitions.append(
                        TopicPartitionInfo(
                            partition=p["partition_index"],
                            leader=None if p["leader_id"] < 0 else p["leader_id"],
                            leader_epoch=None if p["leader_epoch"] < 0 else p["leader_epoch"],
                            replicas=tuple(p["replica_nodes"]),
                            isr=tuple(p["isr_nodes"]),
                            eligible_leader_replicas=_ids(p["eligible_leader_replicas"]),
                            last_known_elr=_ids(p["last_known_elr"]),
                            offline_replicas=tuple(p["offline_replicas"]),
                        )
                    )
            cursor = response["next_cursor"]
            if cursor is None:
                break
        if topics is not None:
            missing = [t for t in names if t not in found]
            if missing:
                raise Errors.UnknownTopicOrPartitionError(
                    f"describe_topics_result: topic {missing[0]!r}"
                )
        return {
            name: TopicDescription(
                name=name,
                topic_id=uuid.UUID(bytes=bytes(topic_id)),
                is_internal=internal,
                partitions=tuple(sorted(partitions)),
                authorized_operations=authorized_operations(ops),
            )
            for name, (topic_id, internal, ops, partitions) in sorted(found.items())
        }
