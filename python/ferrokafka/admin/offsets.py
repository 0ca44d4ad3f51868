"""The admin client's offset lookups: ListOffsets for many partitions at once, grouped per
partition leader (Java's ``Admin.listOffsets`` with its ``OffsetSpec``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from ..protocol import Api
from ..structs import TopicPartition
from ._base import AdminBase, by_topic, partition_answers

if TYPE_CHECKING:
    from .._native import ListOffsetsRequest

__all__ = ["ListOffsetsResultInfo", "OffsetOperations", "OffsetSpec"]

_ISOLATION = {"read_uncommitted": 0, "read_committed": 1}


@dataclass(frozen=True)
class OffsetSpec:
    """Which offset ``list_offsets`` looks up in a partition: ``earliest()``, ``latest()``,
    ``max_timestamp()`` (the record with the largest timestamp) or ``for_timestamp(ms)`` (the
    first record whose timestamp is at or after ``ms``). ``timestamp`` is the ListOffsets
    timestamp: the time itself, or Kafka's negative code of the other specs."""

    timestamp: int

    @classmethod
    def earliest(cls) -> OffsetSpec:
        return cls(-2)

    @classmethod
    def latest(cls) -> OffsetSpec:
        return cls(-1)

    @classmethod
    def max_timestamp(cls) -> OffsetSpec:
        return cls(-3)

    @classmethod
    def for_timestamp(cls, timestamp_ms: int) -> OffsetSpec:
        if isinstance(timestamp_ms, bool) or not isinstance(timestamp_ms, int) or timestamp_ms < 0:
            raise ValueError(f"timestamp_ms must be an int >= 0, got {timestamp_ms!r}")
        return cls(timestamp_ms)


class ListOffsetsResultInfo(NamedTuple):
    """A partition's answer (Java's ``ListOffsetsResultInfo``). ``offset`` is -1 when no
    record matches (a time after the last record, a max timestamp of an empty partition)."""

    offset: int
    timestamp: int
    """The matching record's timestamp; -1 for ``earliest`` and ``latest``."""
    leader_epoch: int | None


class OffsetOperations(AdminBase):
    """Looking up partition offsets."""

    async def list_offsets(
        self,
        topic_partition_offsets: Mapping[TopicPartition, OffsetSpec],
        isolation_level: str = "read_uncommitted",
        timeout_ms: int | None = None,
    ) -> dict[TopicPartition, ListOffsetsResultInfo]:
        """The offset each ``OffsetSpec`` names in its partition, asked of each partition's
        leader (one request per leader). ``isolation_level="read_committed"`` makes
        ``latest`` the last stable offset. Retried while leaders move or a topic is not known
        yet, for up to ``timeout_ms`` in all (default ``request_timeout_ms``); a partition's
        error is raised naming it."""
        if isolation_level not in _ISOLATION:
            raise ValueError(
                f"isolation_level must be one of {sorted(_ISOLATION)}, got {isolation_level!r}"
            )
        for tp, spec in topic_partition_offsets.items():
            if not isinstance(spec, OffsetSpec):
                raise TypeError(f"the spec for {tp} must be an OffsetSpec, got {spec!r}")
        timeout = self._timeout_ms(timeout_ms)

        async def ask(
            leader: int, partitions: list[TopicPartition]
        ) -> dict[TopicPartition, ListOffsetsResultInfo]:
            request: ListOffsetsRequest = {
                "isolation_level": _ISOLATION[isolation_level],
                "topics": [
                    {
                        "name": topic,
                        "partitions": [
                            {
                                "partition_index": p,
                                "timestamp": topic_partition_offsets[
                                    TopicPartition(topic, p)
                                ].timestamp,
                            }
                            for p in ps
                        ],
                    }
                    for topic, ps in by_topic(partitions).items()
                ],
                "timeout_ms": timeout,
            }
            response = await self._client.send(leader, Api.LIST_OFFSETS, request)
            return {
                tp: ListOffsetsResultInfo(
                    p["offset"],
                    p["timestamp"],
                    None if p["leader_epoch"] < 0 else p["leader_epoch"],
                )
                for tp, p in partition_answers(response["topics"], "list_offsets", leader)
            }

        return await self._per_leader(topic_partition_offsets, "list_offsets", ask, timeout)
