"""Micro-batch planning for a streaming read: offsets as Spark keeps them in its checkpoint
(``{"topic": {"0": 23}}``), rate limits, new partitions, and what counts as data loss between two
micro-batches."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..consumer import AIOKafkaConsumer
from ..structs import TopicPartition
from .options import OffsetSpec, SourceOptions
from .planning import OffsetRange, discover_partitions, resolve_offsets, split_ranges
from .reader import report_data_loss

__all__ = [
    "Offsets",
    "backlog",
    "fill_new",
    "from_json",
    "initial_offsets",
    "latest_offsets",
    "micro_batch_ranges",
    "rate_limit",
    "to_json",
]


Offsets = dict[TopicPartition, int]

_EARLIEST = OffsetSpec("earliest")


def to_json(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """Spark's checkpoint form: ``{"topic": {"partition": offset}}``."""
    out: dict[str, dict[str, int]] = {}
    for tp in sorted(offsets):
        out.setdefault(tp.topic, {})[str(tp.partition)] = offsets[tp]
    return out


def from_json(value: Mapping[str, Any]) -> Offsets:
    return {
        TopicPartition(topic, int(p)): int(off)
        for topic, parts in value.items()
        for p, off in parts.items()
    }


async def initial_offsets(
    consumer: AIOKafkaConsumer[bytes, bytes], options: SourceOptions
) -> Offsets:
    """Where a new query starts (``startingOffsets``, default latest, or timestamps)."""
    partitions = await discover_partitions(consumer, options)
    return await resolve_offsets(
        consumer,
        partitions,
        options.starting,
        which="starting",
        timestamp_strategy=options.timestamp_strategy,
    )


async def latest_offsets(
    consumer: AIOKafkaConsumer[bytes, bytes], options: SourceOptions
) -> tuple[Offsets, Offsets]:
    """(the latest offset of every partition now, the earliest of those among them)."""
    partitions = await discover_partitions(consumer, options)
    if not partitions:
        return {}, {}
    latest = await consumer.end_offsets(partitions)
    earliest = await consumer.beginning_offsets(partitions)
    return latest, earliest


def rate_limit(
    start: Mapping[TopicPartition, int],
    latest: Mapping[TopicPartition, int],
    limit: int,
) -> Offsets:
    """Spark's ``maxOffsetsPerTrigger``: ``limit`` offsets shared across partitions in
    proportion to each one's backlog (a partition with a backlog below one share still gets
    one offset when its share is above zero)."""
    sizes = {tp: max(end - start.get(tp, end), 0) for tp, end in latest.items()}
    total = sum(sizes.values())
    if total <= limit:
        return dict(latest)
    out: Offsets = {}
    for tp, end in latest.items():
        begin = start.get(tp, end)
        share = limit * (sizes[tp] / total)
        step = math.ceil(share) if share < 1 else math.floor(share)
        out[tp] = min(end, begin + step)
    return out


def backlog(start: Mapping[TopicPartition, int], latest: Mapping[TopicPartition, int]) -> int:
    return sum(max(end - start.get(tp, end), 0) for tp, end in latest.items())


async def micro_batch_ranges(
    consumer: AIOKafkaConsumer[bytes, bytes],
    options: SourceOptions,
    start: Mapping[TopicPartition, int],
    end: Mapping[TopicPartition, int],
) -> list[OffsetRange]:
    """The ranges of one micro-batch ``(start, end]``. A partition new since ``start`` is read
    from its earliest offset; one that disappeared, or whose offsets went backwards, is data
    loss (``failOnDataLoss``)."""
    new = [tp for tp in end if tp not in start]
    begin = dict(start)
    if new:
        earliest = await resolve_offsets(consumer, new, _EARLIEST, which="starting")
        for tp, off in sorted(earliest.items()):
            if off != 0:
                report_data_loss(
                    options.fail_on_data_loss,
                    f"Added partition {_tp(tp)} starts from {off} instead of 0.",
                )
        begin.update(earliest)
    gone = sorted(tp for tp in start if tp not in end)
    if gone:
        report_data_loss(
            options.fail_on_data_loss,
            f"Partitions Set({', '.join(map(_tp, gone))}) have been deleted.",
        )
    ranges = []
    for tp, until in sorted(end.items()):
        frm = begin[tp]
        if until < frm:
            report_data_loss(
                options.fail_on_data_loss,
                f"Partition {_tp(tp)} offset was changed from {frm} to {until}. This could be "
                "either 1) a user error that the start offset is set beyond available offset "
                "when starting query, or 2) the kafka topic-partition is deleted and re-created.",
            )
            continue
        ranges.append(OffsetRange(tp.topic, tp.partition, frm, until))
    return split_ranges(ranges, options.min_partitions, None)


def _tp(tp: TopicPartition) -> str:
    return f"{tp.topic}-{tp.partition}"


def fill_new(
    start: Mapping[TopicPartition, int], earliest: Mapping[TopicPartition, int]
) -> Offsets:
    """``start`` with every partition it lacks starting at its earliest offset."""
    out = dict(start)
    for tp, off in earliest.items():
        out.setdefault(tp, off)
    return out
