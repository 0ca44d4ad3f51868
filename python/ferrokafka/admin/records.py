"""The admin client's record operation: DeleteRecords, sent to each partition's leader."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import TYPE_CHECKING

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
        leaders = await self._leaders(records_to_delete, "delete_records")
        by_leader: dict[int, dict[str, list[DeleteRecordsPartition]]] = defaultdict(
            lambda: defaultdict(list)
        )
        for tp, records in records_to_delete.items():
            leader = leaders[tp]
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
