"""Planning on the driver: which partitions a read covers, the offsets it starts and ends at,
and how the offset ranges are split into Spark tasks, by Spark's rules."""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import errors as Errors
from ..consumer import AIOKafkaConsumer
from ..structs import TopicPartition
from .options import EARLIEST, LATEST, OffsetSpec, SourceOptions

__all__ = [
    "OffsetRange",
    "discover_partitions",
    "plan_batch",
    "resolve_offsets",
    "split_ranges",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True, order=True)
class OffsetRange:
    """Records ``[from_offset, until_offset)`` of one partition: one Spark task."""

    topic: str
    partition: int
    from_offset: int
    until_offset: int

    @property
    def tp(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)

    @property
    def size(self) -> int:
        return max(self.until_offset - self.from_offset, 0)


async def discover_partitions(
    consumer: AIOKafkaConsumer[bytes, bytes], options: SourceOptions
) -> list[TopicPartition]:
    """The partitions the read's ``subscribe``, ``subscribePattern`` or ``assign`` names that
    exist now (sorted)."""
    # Installed, so that the offset lookups that follow know every partition's leader (new
    # partitions included) without waiting for a refresh.
    response = await consumer._client.fetch_all_metadata(install=True)
    existing: dict[str, list[int]] = {}
    internal: set[str] = set()
    for topic in response["topics"]:
        if topic["error_code"] or not topic["name"]:
            continue
        existing[topic["name"]] = [p["partition_index"] for p in topic["partitions"]]
        if topic.get("is_internal"):
            internal.add(topic["name"])
    if options.assign is not None:
        # As Spark: partitions named by ``assign`` that do not exist are left out.
        found = sorted({tp for tp in options.assign if tp.partition in existing.get(tp.topic, ())})
        if len(found) < len(set(options.assign)):
            missing = sorted(set(options.assign) - set(found))
            log.warning(
                "Partitions named by option 'assign' do not exist and are left out: %s",
                ", ".join(f"{tp.topic}-{tp.partition}" for tp in missing),
            )
        return found
    if options.subscribe is not None:
        missing_topics = [t for t in options.subscribe if t not in existing]
        if missing_topics:
            raise Errors.UnknownTopicOrPartitionError(
                f"Topics named by option 'subscribe' do not exist: {', '.join(missing_topics)}"
            )
        topics: Iterable[str] = options.subscribe
    else:
        # Spark's pattern finds a match anywhere in the name (Java's Matcher.find).
        assert options.subscribe_pattern is not None
        pattern = re.compile(options.subscribe_pattern)
        topics = [t for t in existing if t not in internal and pattern.search(t)]
    return sorted({TopicPartition(t, p) for t in topics for p in existing[t]})


async def resolve_offsets(
    consumer: AIOKafkaConsumer[bytes, bytes],
    partitions: Sequence[TopicPartition],
    spec: OffsetSpec,
    *,
    which: str,
    timestamp_strategy: str = "error",
) -> dict[TopicPartition, int]:
    """The offset of each partition that ``spec`` names. ``which`` is "starting" or "ending"
    (for messages and for what a timestamp with no record after it means). Per-partition JSON
    must name exactly ``partitions``, as in Spark."""
    if not partitions:
        return {}
    if spec.kind in ("earliest", "latest"):
        return await _list(consumer, partitions, EARLIEST if spec.kind == "earliest" else LATEST)
    if spec.kind in ("offsets", "timestamps"):
        named = dict(spec.offsets)
        if set(named) != set(partitions):
            edge = "start" if which == "starting" else "end"
            if spec.kind == "offsets":
                raise ValueError(
                    f"Partitions specified for Kafka {edge} offsets don't match what are "
                    "assigned. Maybe topic partitions are created \nor deleted while the query "
                    "is running. Use -1 for latest, -2 for earliest.\n"
                    f"Specified: {_tp_set(named)} Assigned: {_tp_set(partitions)}"
                )
            raise ValueError(
                f"Partitions specified for Kafka timestamp based {edge} offsets don't match "
                "what are assigned. Maybe topic partitions are created \nor deleted while the "
                "query is running, or you didn't specify all the partitions.\n"
                f"Specified: {_tp_set(named)} Assigned: {_tp_set(partitions)}"
            )
        if spec.kind == "offsets":
            return await _placeholders(consumer, named)
        return await _by_time(consumer, named, which, timestamp_strategy)
    assert spec.kind == "timestamp" and spec.timestamp is not None
    return await _by_time(
        consumer, dict.fromkeys(partitions, spec.timestamp), which, timestamp_strategy
    )


def _tp_set(tps: Iterable[TopicPartition]) -> str:
    return "Set(" + ", ".join(sorted(f"{tp.topic}-{tp.partition}" for tp in tps)) + ")"


async def _list(
    consumer: AIOKafkaConsumer[bytes, bytes], partitions: Iterable[TopicPartition], which: int
) -> dict[TopicPartition, int]:
    parts = list(partitions)
    if not parts:
        return {}
    if which == EARLIEST:
        return await consumer.beginning_offsets(parts)
    return await consumer.end_offsets(parts)


async def _placeholders(
    consumer: AIOKafkaConsumer[bytes, bytes], offsets: Mapping[TopicPartition, int]
) -> dict[TopicPartition, int]:
    """Replace -2/-1 by the partition's earliest/latest offset."""
    out = dict(offsets)
    out.update(await _list(consumer, [tp for tp, o in offsets.items() if o == EARLIEST], EARLIEST))
    out.update(await _list(consumer, [tp for tp, o in offsets.items() if o == LATEST], LATEST))
    return out


async def _by_time(
    consumer: AIOKafkaConsumer[bytes, bytes],
    stamps: Mapping[TopicPartition, int],
    which: str,
    strategy: str,
) -> dict[TopicPartition, int]:
    if not stamps:
        return {}
    for tp, ts in stamps.items():
        if ts < 0:
            raise ValueError(f"The timestamp {ts} for {tp.topic}-{tp.partition} must be >= 0")
    found = await consumer.offsets_for_times(dict(stamps))
    out: dict[TopicPartition, int] = {}
    unmatched = []
    for tp, ts in stamps.items():
        hit = found.get(tp)
        if hit is not None:
            out[tp] = hit.offset
        elif which == "ending" or strategy == "latest":
            unmatched.append(tp)
        else:
            raise ValueError(
                f"No offset matched from request of topic-partition {tp.topic}-{tp.partition} "
                f"and timestamp {ts}."
            )
    # No record at or after the timestamp: the range reaches the end of the partition.
    out.update(await _list(consumer, unmatched, LATEST))
    return out


async def plan_batch(
    consumer: AIOKafkaConsumer[bytes, bytes], options: SourceOptions
) -> list[OffsetRange]:
    """The offset ranges of a batch read, split into tasks."""
    partitions = await discover_partitions(consumer, options)
    start = await resolve_offsets(
        consumer,
        partitions,
        options.starting,
        which="starting",
        timestamp_strategy=options.timestamp_strategy,
    )
    end = await resolve_offsets(consumer, partitions, options.ending, which="ending")
    ranges = []
    for tp in partitions:
        if start[tp] > end[tp]:
            raise ValueError(
                f"The resolved start offset {start[tp]} is greater than the resolved end offset "
                f"{end[tp]} for topic {tp.topic} partition {tp.partition}."
            )
        ranges.append(OffsetRange(tp.topic, tp.partition, start[tp], end[tp]))
    return split_ranges(ranges, options.min_partitions, options.max_records_per_partition)


def split_ranges(
    ranges: Sequence[OffsetRange],
    min_partitions: int | None,
    max_records_per_partition: int | None,
) -> list[OffsetRange]:
    """Spark's splitting: empty ranges are dropped; each range becomes one task unless
    ``maxRecordsPerPartition`` caps its size, or ``minPartitions`` asks for more tasks than
    there are ranges, in which case the large ranges are split in proportion to their size."""
    nonempty = [r for r in ranges if r.size > 0]
    if max_records_per_partition is None and (
        min_partitions is None or len(nonempty) >= min_partitions
    ):
        return nonempty
    divided = nonempty
    if max_records_per_partition is not None:
        divided = [
            piece
            for r in nonempty
            for piece in _divide(r, math.ceil(r.size / max_records_per_partition))
        ]
    if min_partitions is None or min_partitions <= len(divided):
        return divided
    total = sum(r.size for r in divided)
    # Ranges too small to be split keep one task each and are left out of the proportions.
    unsplit = [r for r in divided if _part_count(r.size, total, min_partitions) == 1]
    unsplit_tps = {r.tp for r in unsplit}
    split_total = total - sum(r.size for r in unsplit)
    split_min = max(min_partitions - len(unsplit), 1)
    return [
        piece
        for r in divided
        for piece in _divide(
            r, 1 if r.tp in unsplit_tps else _part_count(r.size, split_total, split_min)
        )
    ]


def _part_count(size: int, total: int, min_parts: int) -> int:
    # Java's Math.round: half rounds up.
    return max(math.floor(size / total * min_parts + 0.5), 1)


def _divide(r: OffsetRange, parts: int) -> list[OffsetRange]:
    """``r`` in ``parts`` consecutive pieces; the last ones take the remainder."""
    out = []
    remaining = r.size
    start = r.from_offset
    for part in range(parts):
        this = remaining // (parts - part)
        remaining -= this
        end = min(start + this, r.until_offset)
        if end > start:
            out.append(OffsetRange(r.topic, r.partition, start, end))
        start = end
    return out


def ranges_to_rows(ranges: Iterable[OffsetRange]) -> list[dict[str, Any]]:
    return [
        {
            "topic": r.topic,
            "partition": r.partition,
            "fromOffset": r.from_offset,
            "untilOffset": r.until_offset,
        }
        for r in ranges
    ]
