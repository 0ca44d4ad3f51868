"""Cluster metadata: brokers, topics, partitions, leaders and leader epochs. No I/O here.

The client feeds it Metadata responses (``update_metadata``); everything else reads it.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import errors as Errors
from .structs import BrokerMetadata, PartitionMetadata, TopicPartition

if TYPE_CHECKING:
    from ._native import MetadataResponse

log = logging.getLogger(__name__)

_TOPIC_ERROR_LEVELS = {
    Errors.InvalidTopicError.errno: logging.ERROR,
    Errors.TopicAuthorizationFailedError.errno: logging.ERROR,
    Errors.UnknownTopicOrPartitionError.errno: logging.WARNING,
}
"""How loudly a topic's metadata error is logged (others: INFO); each once, when it appears."""

__all__ = ["ClusterMetadata", "PartitionInfo", "TopicInfo"]

_ZERO_UUID = bytes(16)


@dataclass(frozen=True)
class PartitionInfo:
    """One partition as the last metadata response described it."""

    topic: str
    partition: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...]
    error_code: int

    def to_struct(self) -> PartitionMetadata:
        """The aiokafka-compatible ``PartitionMetadata`` tuple."""
        error = Errors.for_code(self.error_code) if self.error_code else None
        return PartitionMetadata(
            self.topic,
            self.partition,
            self.leader,
            list(self.replicas),
            list(self.isr),
            error() if error is not None else None,
        )


@dataclass(frozen=True)
class TopicInfo:
    name: str
    topic_id: uuid.UUID | None
    is_internal: bool
    partitions: dict[int, PartitionInfo]


class ClusterMetadata:
    """The client's picture of the cluster, replaced whole by every metadata response."""

    def __init__(self, bootstrap: Iterable[tuple[str, int]] = ()) -> None:
        self._bootstrap = {
            -(i + 1): BrokerMetadata(-(i + 1), host, port, None)
            for i, (host, port) in enumerate(bootstrap)
        }
        self._brokers: dict[int, BrokerMetadata] = {}
        self._topics: dict[str, TopicInfo] = {}
        self._topic_errors: dict[str, int] = {}
        self.cluster_id: str | None = None
        self.controller: int | None = None
        self.last_refresh: float | None = None
        """``time.monotonic()`` of the last successful update (None before the first)."""
        self._listeners: list[Callable[[ClusterMetadata], None]] = []

    def add_listener(self, listener: Callable[[ClusterMetadata], None]) -> None:
        """Call ``listener(cluster)`` after every metadata update (as aiokafka's does)."""
        self._listeners.append(listener)

    def remove_listener(self, listener: Callable[[ClusterMetadata], None]) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    # -- updates ---------------------------------------------------------------------------

    def update_metadata(self, response: MetadataResponse, *, all_topics: bool = True) -> None:
        """Install a decoded Metadata response.

        With ``all_topics`` (a request for every topic) topics missing from the response are
        forgotten; otherwise the response's topics are merged into what is known.
        """
        brokers = {
            b["node_id"]: BrokerMetadata(b["node_id"], b["host"], b["port"], b.get("rack"))
            for b in response["brokers"]
        }
        topics: dict[str, TopicInfo] = {} if all_topics else dict(self._topics)
        errors: dict[str, int] = {}
        for t in response["topics"]:
            name = t["name"]
            if name is None:
                continue
            if t["error_code"]:
                errors[name] = t["error_code"]
                topics.pop(name, None)
                continue
            raw_id = bytes(t.get("topic_id") or _ZERO_UUID)
            partitions = {
                p["partition_index"]: PartitionInfo(
                    topic=name,
                    partition=p["partition_index"],
                    leader=p["leader_id"],
                    leader_epoch=p.get("leader_epoch", -1),
                    replicas=tuple(p["replica_nodes"]),
                    isr=tuple(p["isr_nodes"]),
                    offline_replicas=tuple(p.get("offline_replicas") or ()),
                    error_code=p["error_code"],
                )
                for p in t["partitions"]
            }
            topics[name] = TopicInfo(
                name=name,
                topic_id=None if raw_id == _ZERO_UUID else uuid.UUID(bytes=raw_id),
                is_internal=bool(t.get("is_internal", False)),
                partitions=partitions,
            )
        for name, code in errors.items():
            if self._topic_errors.get(name) != code:
                level = _TOPIC_ERROR_LEVELS.get(code, logging.INFO)
                error = Errors.for_code(code)
                log.log(
                    level, "metadata for topic %r: %s (%s)", name, error.message, error.description
                )
        _log_leader_changes(self._topics, topics)
        self._brokers = brokers
        self._topics = topics
        self._topic_errors = errors
        self.cluster_id = response.get("cluster_id")
        controller = response.get("controller_id", -1)
        self.controller = controller if controller >= 0 else None
        self.last_refresh = time.monotonic()
        for listener in list(self._listeners):
            try:
                listener(self)
            except Exception:
                log.exception("a metadata listener failed")

    def missing_topics(self, topics: Iterable[str]) -> set[str]:
        """Those of ``topics`` the metadata in hand does not know."""
        return {t for t in topics if t not in self._topics}

    # -- brokers ---------------------------------------------------------------------------

    def brokers(self) -> set[BrokerMetadata]:
        """The brokers the last metadata named (bootstrap nodes before the first update)."""
        return set(self._brokers.values()) or set(self._bootstrap.values())

    def broker_ids(self) -> list[int]:
        return sorted(self._brokers)

    def bootstrap_ids(self) -> list[int]:
        return sorted(self._bootstrap, reverse=True)

    def broker_metadata(self, node_id: int) -> BrokerMetadata | None:
        """A broker by id; bootstrap nodes (negative ids) are known too."""
        return self._brokers.get(node_id) or self._bootstrap.get(node_id)

    def is_bootstrap(self, node_id: int) -> bool:
        return node_id in self._bootstrap

    # -- topics ----------------------------------------------------------------------------

    def topics(self, exclude_internal_topics: bool = True) -> set[str]:
        return {
            name
            for name, t in self._topics.items()
            if not (exclude_internal_topics and t.is_internal)
        }

    def topic_info(self, topic: str) -> TopicInfo | None:
        return self._topics.get(topic)

    def topic_error(self, topic: str) -> int:
        """The error code the last metadata gave for ``topic`` (0 when none)."""
        return self._topic_errors.get(topic, 0)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        t = self._topics.get(topic)
        return None if t is None else set(t.partitions)

    def available_partitions_for_topic(self, topic: str) -> set[int] | None:
        t = self._topics.get(topic)
        if t is None:
            return None
        return {p.partition for p in t.partitions.values() if p.leader >= 0}

    def partition_info(self, tp: TopicPartition) -> PartitionInfo | None:
        t = self._topics.get(tp.topic)
        return None if t is None else t.partitions.get(tp.partition)

    def leader_for_partition(self, tp: TopicPartition) -> int | None:
        """The leader's broker id; -1 while leaderless; None for an unknown partition."""
        p = self.partition_info(tp)
        return None if p is None else p.leader

    def leader_epoch_for_partition(self, tp: TopicPartition) -> int:
        p = self.partition_info(tp)
        return -1 if p is None else p.leader_epoch

    def partitions_for_broker(self, broker_id: int) -> set[TopicPartition]:
        return {
            TopicPartition(p.topic, p.partition)
            for t in self._topics.values()
            for p in t.partitions.values()
            if p.leader == broker_id
        }


def _log_leader_changes(old: dict[str, TopicInfo], new: dict[str, TopicInfo]) -> None:
    """One INFO line per partition whose leader moved (a partition first seen is not news)."""
    for name, info in new.items():
        before = old.get(name)
        if before is None or before is info:
            continue
        for index, p in info.partitions.items():
            q = before.partitions.get(index)
            if q is not None and q.leader != p.leader:
                log.info(
                    "partition %s[%s]: leader %s -> %s (leader epoch %s)",
                    name,
                    index,
                    q.leader,
                    p.leader,
                    p.leader_epoch,
                )
