"""The admin client's replica placement operations: ElectLeaders, AlterPartitionReassignments
and ListPartitionReassignments, which KRaft brokers forward to the controller (Java's
``electLeaders``, ``alterPartitionReassignments``, ``listPartitionReassignments``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from enum import IntEnum
from typing import TYPE_CHECKING, NamedTuple

from .. import errors as Errors
from ..protocol import Api
from ..structs import TopicPartition
from ._base import AdminBase, by_topic, raise_for

if TYPE_CHECKING:
    from .._native import (
        AlterPartitionReassignmentsRequest,
        ElectLeadersRequest,
        ListPartitionReassignmentsRequest,
        ReassignablePartition,
    )

__all__ = ["ElectionType", "PartitionReassignment", "ReassignmentOperations"]


class ElectionType(IntEnum):
    """Which replica ``elect_leaders`` makes the leader."""

    PREFERRED = 0
    """The first replica of the replica list, when it is in sync."""
    UNCLEAN = 1
    """For a partition without a leader: any live replica, even one out of sync (records
    may be lost)."""


class PartitionReassignment(NamedTuple):
    """A reassignment in progress (Java's ``PartitionReassignment``)."""

    replicas: tuple[int, ...]
    """The replica set while it moves: the target and the replicas still being removed."""
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]


class ReassignmentOperations(AdminBase):
    """Leaders and replica sets."""

    async def elect_leaders(
        self,
        election_type: ElectionType,
        partitions: Iterable[TopicPartition] | None = None,
        timeout_ms: int | None = None,
    ) -> dict[TopicPartition, Errors.KafkaError | None]:
        """Elect leaders of ``partitions`` (every partition by default) by ``election_type``.
        Returns each partition's outcome, as Java does: ``None`` when a leader was elected,
        else the error, e.g. ``ElectionNotNeededError`` (already led by that replica),
        ``PreferredLeaderNotAvailableError``, ``UnknownTopicOrPartitionError``, with a
        message naming the partition. An error for the whole request is raised."""
        election = ElectionType(election_type)
        request: ElectLeadersRequest = {
            "election_type": int(election),
            "topic_partitions": None
            if partitions is None
            else [{"topic": t, "partitions": ps} for t, ps in by_topic(partitions).items()],
            "timeout_ms": self._timeout_ms(timeout_ms),
        }
        response = await self._client.send_to_any(Api.ELECT_LEADERS, request)
        raise_for(response["error_code"], f"elect_leaders ({election.name.lower()})")
        outcome: dict[TopicPartition, Errors.KafkaError | None] = {}
        for t in response["replica_election_results"]:
            for p in t["partition_result"]:
                tp = TopicPartition(t["topic"], p["partition_id"])
                code, detail = p["error_code"], p["error_message"]
                outcome[tp] = (
                    Errors.for_code(code)(
                        f"elect_leaders: topic {tp.topic!r} partition {tp.partition}"
                        + (f": {detail}" if detail else "")
                    )
                    if code
                    else None
                )
        return outcome

    async def alter_partition_reassignments(
        self,
        reassignments: Mapping[TopicPartition, Sequence[int] | None],
        timeout_ms: int | None = None,
    ) -> None:
        """Move each partition's replicas to the brokers given (the first the preferred
        leader), or cancel its move in progress (``None``). The controller starts the moves
        and returns; ``list_partition_reassignments`` shows those still running. A
        partition's error (``InvalidReplicationAssignmentError``,
        ``NoReassignmentInProgressError`` for a cancel with nothing to cancel,
        ``UnknownTopicOrPartitionError``) is raised naming it."""
        topics: dict[str, list[ReassignablePartition]] = defaultdict(list)
        for tp, replicas in reassignments.items():
            topics[tp.topic].append(
                {
                    "partition_index": tp.partition,
                    "replicas": None if replicas is None else [int(r) for r in replicas],
                }
            )
        if not topics:
            return
        request: AlterPartitionReassignmentsRequest = {
            "timeout_ms": self._timeout_ms(timeout_ms),
            "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
        }
        response = await self._client.send_to_any(Api.ALTER_PARTITION_REASSIGNMENTS, request)
        what = "alter_partition_reassignments"
        raise_for(response["error_code"], what, response["error_message"])
        for t in response["responses"]:
            for p in t["partitions"]:
                raise_for(
                    p["error_code"],
                    f"{what}: topic {t['name']!r} partition {p['partition_index']}",
                    p["error_message"],
                )

    async def list_partition_reassignments(
        self, partitions: Iterable[TopicPartition] | None = None, timeout_ms: int | None = None
    ) -> dict[TopicPartition, PartitionReassignment]:
        """The reassignments in progress among ``partitions`` (all by default); a partition
        not moving is left out."""
        request: ListPartitionReassignmentsRequest = {
            "timeout_ms": self._timeout_ms(timeout_ms),
            "topics": None
            if partitions is None
            else [{"name": t, "partition_indexes": ps} for t, ps in by_topic(partitions).items()],
        }
        response = await self._client.send_to_any(Api.LIST_PARTITION_REASSIGNMENTS, request)
        raise_for(response["error_code"], "list_partition_reassignments", response["error_message"])
        return {
            TopicPartition(t["name"], p["partition_index"]): PartitionReassignment(
                tuple(p["replicas"]), tuple(p["adding_replicas"]), tuple(p["removing_replicas"])
            )
            for t in response["topics"]
            for p in t["partitions"]
        }
