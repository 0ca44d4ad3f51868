"""The admin client's record operation: DeleteRecords, sent to each partition's leader."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import TYPE_CHECKING

from .. import errors as Errors
from ..protocol import Api
from ..structs import TopicPartition
from ._base import AdminBase, raise_for
from .records_to_delete import RecordsToDelete

if TYPE_CHECKING:
    from .._native import DeleteRecordsPartition, DeleteRecordsRequest

__all__ = ["RecordOperations"]


class RecordOperations(AdminBase):
    """Deleting records below an offset."""

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
            raise_for(t["error_code"], f"delete_records: topic {t['name']!r}")
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
                    raise_for(
                        part["error_code"],
                        f"delete_records: topic {result['name']!r} partition {index}",
                    )
                    low_watermarks[TopicPartition(result["name"], index)] = part["low_watermark"]
        return low_watermarks
