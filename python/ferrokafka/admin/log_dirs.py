"""The admin client's log directory operations: DescribeLogDirs and AlterReplicaLogDirs, each
sent to the broker concerned (Java's ``describeLogDirs`` and ``alterReplicaLogDirs``)."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from .. import errors as Errors
from ..protocol import Api
from ..structs import TopicPartition
from ._base import AdminBase, raise_for

if TYPE_CHECKING:
    from .._native import AlterReplicaLogDirsRequest, DescribeLogDirsRequest

__all__ = ["LogDirDescription", "LogDirOperations", "ReplicaInfo", "TopicPartitionReplica"]


class TopicPartitionReplica(NamedTuple):
    """A partition's replica on one broker."""

    topic: str
    partition: int
    broker_id: int


class ReplicaInfo(NamedTuple):
    """A replica in a log directory."""

    size: int
    """Its bytes on disk."""
    offset_lag: int
    """How far it is behind the leader's log end (0 for the leader), or behind the current
    replica for a future one."""
    is_future: bool
    """Whether it is the copy being made by a move to this directory, not the replica in
    use."""


@dataclass(frozen=True)
class LogDirDescription:
    """One log directory of a broker (Java's ``LogDirDescription``)."""

    error: Errors.KafkaError | None
    """Why the directory is unusable (``KafkaStorageError`` when offline), else ``None``."""
    replicas: dict[TopicPartition, ReplicaInfo]
    total_bytes: int | None
    """The volume's size, from brokers that report it (DescribeLogDirs v4), else ``None``."""
    usable_bytes: int | None


class LogDirOperations(AdminBase):
    """Brokers' log directories and which of them hold which replicas."""

    async def describe_log_dirs(
        self, brokers: Iterable[int] | None = None
    ) -> dict[int, dict[str, LogDirDescription]]:
        """Each broker's log directories (every broker of the cluster by default), by path,
        with the replicas in them. A broker's refusal is raised naming the broker."""
        if brokers is None:
            metadata = await self._client.fetch_metadata(topics=set())
            brokers = [b["node_id"] for b in metadata["brokers"]]
        wanted = list(dict.fromkeys(brokers))

        async def describe(broker: int) -> dict[str, LogDirDescription]:
            request: DescribeLogDirsRequest = {"topics": None}
            response = await self._client.send(broker, Api.DESCRIBE_LOG_DIRS, request)
            what = f"describe_log_dirs: broker {broker}"
            raise_for(response["error_code"], what)
            if not response["results"]:
                # A broker answers nothing, with no error before v3, to a caller not allowed
                # to describe the cluster.
                raise Errors.ClusterAuthorizationFailedError(f"{what} described no log dir")
            dirs: dict[str, LogDirDescription] = {}
            for d in response["results"]:
                code = d["error_code"]
                dirs[d["log_dir"]] = LogDirDescription(
                    error=Errors.for_code(code)(f"{what} log dir {d['log_dir']!r}")
                    if code
                    else None,
                    replicas={
                        TopicPartition(t["name"], p["partition_index"]): ReplicaInfo(
                            p["partition_size"], p["offset_lag"], p["is_future_key"]
                        )
                        for t in d["topics"]
                        for p in t["partitions"]
                    },
                    total_bytes=None if d["total_bytes"] < 0 else d["total_bytes"],
                    usable_bytes=None if d["usable_bytes"] < 0 else d["usable_bytes"],
                )
            return dirs

        described = await asyncio.gather(*(describe(b) for b in wanted))
        return dict(zip(wanted, described, strict=True))

    async def alter_replica_log_dirs(
        self, replica_assignment: Mapping[TopicPartitionReplica, str]
    ) -> None:
        """Move each replica to the log directory given (an absolute path of its broker),
        sent to each broker concerned. The broker copies the replica in the background
        (``describe_log_dirs`` shows the copy as a future replica until it takes over). An
        error (``LogDirNotFound``, ``KafkaStorageError``, ``ReplicaNotAvailableError`` for a
        replica the broker does not hold) is raised naming the replica and directory."""
        by_broker: dict[int, dict[str, dict[str, list[int]]]] = defaultdict(
            lambda: defaultdict(lambda: defaultdict(list))
        )
        for replica, path in replica_assignment.items():
            by_broker[replica.broker_id][path][replica.topic].append(replica.partition)

        async def alter(broker: int, dirs: dict[str, dict[str, list[int]]]) -> None:
            request: AlterReplicaLogDirsRequest = {
                "dirs": [
                    {
                        "path": path,
                        "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
                    }
                    for path, topics in dirs.items()
                ]
            }
            response = await self._client.send(broker, Api.ALTER_REPLICA_LOG_DIRS, request)
            for t in response["results"]:
                for p in t["partitions"]:
                    replica = TopicPartitionReplica(t["topic_name"], p["partition_index"], broker)
                    raise_for(
                        p["error_code"],
                        f"alter_replica_log_dirs: topic {replica.topic!r} partition "
                        f"{replica.partition} on broker {broker} to "
                        f"{replica_assignment.get(replica)!r}",
                    )

        await asyncio.gather(*(alter(b, dirs) for b, dirs in by_broker.items()))
