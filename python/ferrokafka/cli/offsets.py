"""Where ``groups reset-offsets`` moves each partition: the plan computed from the committed
offsets, the log's earliest and latest offsets and the target, with no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..structs import TopicPartition

__all__ = ["LogOffsets", "Plan", "plan_reset"]


@dataclass(frozen=True)
class LogOffsets:
    """Per partition: the first offset, the offset after the last record, and (for
    ``--to-datetime``) the first offset at or after the time."""

    earliest: dict[TopicPartition, int]
    latest: dict[TopicPartition, int]
    at_time: dict[TopicPartition, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Plan:
    partition: TopicPartition
    current: int | None
    new: int


def plan_reset(
    partitions: list[TopicPartition],
    committed: dict[TopicPartition, int],
    log: LogOffsets,
    target: tuple[str, int],
) -> list[Plan]:
    """The new offset of each partition for ``target`` (``earliest``, ``latest``,
    ``datetime``, ``offset`` N or ``shift`` N), kept within ``[earliest, latest]``."""
    kind, value = target
    plan = []
    for tp in partitions:
        low, high = log.earliest[tp], log.latest[tp]
        current = committed.get(tp)
        if kind == "earliest":
            new = low
        elif kind == "latest":
            new = high
        elif kind == "datetime":
            new = log.at_time.get(tp, high)
        elif kind == "offset":
            new = value
        elif kind == "shift":
            new = (low if current is None else current) + value
        else:
            raise ValueError(f"unknown reset target {kind!r}")
        plan.append(Plan(tp, current, min(max(new, low), high)))
    return plan
