"""Where a bounded read starts and ends in each partition: checked when the read is made,
resolved against the broker when it starts."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .. import errors as Errors
from ..consumer import AIOKafkaConsumer
from ..structs import TopicPartition

__all__ = ["Bounds", "Edge", "resolve"]

#: An edge of the read in every partition: "earliest", "latest" or an offset; or per partition.
Edge = str | int | Mapping[int, str | int]
#: A time edge: milliseconds since the epoch or an aware datetime; or per partition.
TimeEdge = int | datetime.datetime | Mapping[int, int | datetime.datetime]

_NAMES = ("earliest", "latest")


@dataclass(frozen=True)
class Bounds:
    """A read's bounds as given, checked: per partition, or one value for every partition."""

    topic: str
    partitions: tuple[int, ...] | None
    start: Edge | None
    end: Edge | None
    start_timestamp: TimeEdge | None
    end_timestamp: TimeEdge | None

    @classmethod
    def of(
        cls,
        topic: str,
        partitions: Iterable[int] | None,
        start: Edge | None,
        end: Edge | None,
        start_timestamp: TimeEdge | None,
        end_timestamp: TimeEdge | None,
    ) -> Bounds:
        if not isinstance(topic, str) or not topic:
            raise ValueError(f"topic must be a non-empty string, got {topic!r}")
        parts: tuple[int, ...] | None = None
        if partitions is not None:
            if isinstance(partitions, (str, bytes)):
                raise TypeError(f"partitions must be partition numbers, got {partitions!r}")
            parts = tuple(partitions)
            for p in parts:
                _check_partition(p, "partitions")
            if not parts:
                raise ValueError("partitions is empty: name at least one, or None for all")
            if len(set(parts)) != len(parts):
                raise ValueError(f"partitions names a partition twice: {list(parts)}")
        if start is not None and start_timestamp is not None:
            raise ValueError("give start or start_timestamp, not both")
        if end is not None and end_timestamp is not None:
            raise ValueError("give end or end_timestamp, not both")
        for name, edge in (("start", start), ("end", end)):
            if edge is not None:
                _check_each(name, edge, _check_offset, "offsets")
        for name, stamp in (("start_timestamp", start_timestamp), ("end_timestamp", end_timestamp)):
            if stamp is not None:
                _check_each(name, stamp, _millis, "timestamps")
        return cls(topic, parts, start, end, start_timestamp, end_timestamp)


def _check_partition(p: Any, where: str) -> None:
    if isinstance(p, bool) or not isinstance(p, int) or p < 0:
        raise ValueError(f"{where}: a partition is a non-negative int, got {p!r}")


def _check_offset(name: str, value: Any) -> None:
    if isinstance(value, str):
        if value not in _NAMES:
            raise ValueError(f"{name} must be 'earliest', 'latest' or an offset, got {value!r}")
    elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be 'earliest', 'latest' or an offset >= 0, got {value!r}")


def _check_each(name: str, value: Any, check: Callable[[str, Any], object], what: str) -> None:
    """``check`` the one value of ``name``, or each of a mapping of partition to value."""
    if isinstance(value, Mapping):
        if not value:
            raise ValueError(f"{name} is an empty mapping: name the partitions' {what}")
        for p, one in value.items():
            _check_partition(p, name)
            check(f"{name}[{p}]", one)
    else:
        check(name, value)


def _millis(name: str, value: Any) -> int:
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            raise ValueError(f"{name} is a naive datetime: give it a time zone")
        return int(value.timestamp() * 1000)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(
            f"{name} must be milliseconds since the epoch (>= 0) or an aware datetime, "
            f"got {value!r}"
        )
    return value


def _per_partition(name: str, value: Any, partitions: list[int]) -> dict[int, Any]:
    if not isinstance(value, Mapping):
        return dict.fromkeys(partitions, value)
    if set(value) != set(partitions):
        raise ValueError(
            f"{name} names partitions {sorted(value)} but the read covers {partitions}: "
            "name every partition read, or give one value for all"
        )
    return dict(value)


async def _partitions_of(consumer: AIOKafkaConsumer[bytes, bytes], topic: str) -> list[int]:
    # Installed, so that the offset lookups that follow know every partition's leader.
    response = await consumer._client.fetch_all_metadata(install=True)
    for found in response["topics"]:
        if found["name"] == topic:
            if found["error_code"]:
                raise Errors.for_code(found["error_code"])(f"topic {topic!r}")
            return [p["partition_index"] for p in found["partitions"]]
    raise Errors.UnknownTopicOrPartitionError(f"topic {topic!r} does not exist")


async def resolve(
    consumer: AIOKafkaConsumer[bytes, bytes], bounds: Bounds
) -> dict[TopicPartition, tuple[int, int]]:
    """``[from, until)`` of every partition the read covers, by offset."""
    topic = bounds.topic
    existing = await _partitions_of(consumer, topic)
    if bounds.partitions is None:
        numbers = sorted(existing)
    else:
        missing = sorted(set(bounds.partitions) - set(existing))
        if missing:
            raise Errors.UnknownTopicOrPartitionError(
                f"topic {topic!r} has no partition {', '.join(map(str, missing))} "
                f"(it has {len(existing)})"
            )
        numbers = list(bounds.partitions)
    tps = [TopicPartition(topic, p) for p in numbers]
    earliest = await consumer.beginning_offsets(tps)
    latest = await consumer.end_offsets(tps)

    async def edge(
        name: str, given: Any, stamp: Any, default: str, time_name: str
    ) -> dict[TopicPartition, int]:
        if stamp is not None:
            millis = {
                TopicPartition(topic, p): _millis(time_name, v)
                for p, v in _per_partition(time_name, stamp, numbers).items()
            }
            found = await consumer.offsets_for_times(millis)
            # No record that new: the edge is the end of the partition.
            return {tp: hit.offset if hit is not None else latest[tp] for tp, hit in found.items()}
        values = _per_partition(name, default if given is None else given, numbers)
        out = {}
        for p, value in values.items():
            tp = TopicPartition(topic, p)
            if value == "earliest":
                out[tp] = earliest[tp]
            elif value == "latest":
                out[tp] = latest[tp]
            else:
                out[tp] = value
        return out

    start = await edge("start", bounds.start, bounds.start_timestamp, "earliest", "start_timestamp")
    end = await edge("end", bounds.end, bounds.end_timestamp, "latest", "end_timestamp")
    ranges = {}
    for tp in tps:
        if end[tp] > latest[tp]:
            raise ValueError(
                f"end offset {end[tp]} of {tp.topic}-{tp.partition} is past the end of its "
                f"log ({latest[tp]}): a bounded read covers records that exist"
            )
        if start[tp] > end[tp]:
            raise ValueError(
                f"start offset {start[tp]} of {tp.topic}-{tp.partition} is after its end "
                f"offset {end[tp]}"
            )
        ranges[tp] = (start[tp], end[tp])
    return ranges
