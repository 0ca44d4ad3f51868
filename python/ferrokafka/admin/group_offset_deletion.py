"""The admin client's deletion of a consumer group's committed offsets: OffsetDelete (KIP-496)
to the group's coordinator, as Java's ``Admin.deleteConsumerGroupOffsets``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..protocol import Api
from ..structs import TopicPartition
from ._base import by_topic, raise_for
from .groups import GroupOperations

if TYPE_CHECKING:
    from .._native import OffsetDeleteRequest

__all__ = ["GroupOffsetDeletion"]


class GroupOffsetDeletion(GroupOperations):
    """Forgetting committed offsets."""

    async def delete_consumer_group_offsets(
        self,
        group_id: str,
        partitions: Iterable[TopicPartition],
        group_coordinator_id: int | None = None,
    ) -> None:
        """Delete ``group_id``'s committed offsets of ``partitions``, so that the group starts
        them again by its ``auto_offset_reset``. The coordinator refuses partitions of topics
        the group's members are subscribed to (``GroupSubscribedToTopicError``) and an
        unknown group (``GroupIdNotFound``); errors are raised naming the group and
        partition. Retried while the coordinator moves or loads."""
        if not isinstance(group_id, str) or not group_id:
            raise ValueError(f"group_id must be a non-empty string, got {group_id!r}")
        grouped = by_topic(partitions)
        if not grouped:
            return
        body: OffsetDeleteRequest = {
            "group_id": group_id,
            "topics": [
                {"name": t, "partitions": [{"partition_index": p} for p in ps]}
                for t, ps in grouped.items()
            ],
        }

        async def delete(node: int) -> None:
            response = await self._client.send(node, Api.OFFSET_DELETE, body)
            what = f"delete_consumer_group_offsets: group {group_id!r}"
            raise_for(response["error_code"], what)
            for t in response["topics"]:
                for p in t["partitions"]:
                    raise_for(
                        p["error_code"],
                        f"{what} topic {t['name']!r} partition {p['partition_index']}",
                    )

        await self._to_coordinator(group_id, group_coordinator_id, delete)
