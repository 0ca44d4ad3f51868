"""Data structures with aiokafka 0.14's names, fields and field order."""

from __future__ import annotations

from typing import NamedTuple

from . import _native
from .errors import KafkaError

__all__ = [
    "BrokerMetadata",
    "ConsumerRecord",
    "OffsetAndMetadata",
    "OffsetAndTimestamp",
    "PartitionMetadata",
    "RecordMetadata",
    "TopicPartition",
]


class TopicPartition(NamedTuple):
    """A topic and a partition of it."""

    topic: str
    partition: int


class BrokerMetadata(NamedTuple):
    """A broker as cluster metadata describes it (``nodeId`` is aiokafka's spelling)."""

    nodeId: int | str
    host: str
    port: int
    rack: str | None


class PartitionMetadata(NamedTuple):
    """A partition's leader and replicas as cluster metadata describes them."""

    topic: str
    partition: int
    leader: int
    replicas: list[int]
    isr: list[int]
    error: KafkaError | None


class OffsetAndMetadata(NamedTuple):
    """A committed offset (the next offset to read) and its metadata string."""

    offset: int
    metadata: str


class RecordMetadata(NamedTuple):
    """Where a produced record landed."""

    topic: str
    partition: int
    topic_partition: TopicPartition
    offset: int
    timestamp: int | None
    """The timestamp the broker stored (-1 / None when unknown)."""
    timestamp_type: int
    """0 for CreateTime, 1 for LogAppendTime."""
    log_start_offset: int | None


# Built by the native decoder (one call per partition), with aiokafka's fields in aiokafka's
# order; generic like aiokafka's (``ConsumerRecord[bytes, bytes]``).
ConsumerRecord = _native.ConsumerRecord


class OffsetAndTimestamp(NamedTuple):
    """An offset and the timestamp of the record at it (``offsets_for_times``)."""

    offset: int
    timestamp: int | None
