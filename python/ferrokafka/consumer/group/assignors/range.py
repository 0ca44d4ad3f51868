"""The range assignor (Java's ``RangeAssignor``).

Per topic, the members subscribed to it in Java's member order (static members by
group.instance.id, then dynamic members by member id) each take a contiguous range of its
partitions: with ``n = partitions // members`` and ``m = partitions % members`` the first ``m``
members get ``n + 1`` and the rest ``n``. Topics are independent, so members subscribed to the
same topics get co-partitioned ranges (partition i of every topic goes to the same member).

Java's rack-aware variant (used only when members send a rack id and replica racks are known) is
not implemented: ferrokafka members send no rack, so Java would not use it either.
"""

from __future__ import annotations

from ....structs import TopicPartition
from .abstract import Members, OrderedMembersAssignor

__all__ = ["RangePartitionAssignor"]


def _ranges(
    partitions: dict[str, list[int]], members: Members, order: list[str]
) -> dict[str, list[TopicPartition]]:
    result: dict[str, list[TopicPartition]] = {m: [] for m in members}
    for topic, ids in sorted(partitions.items()):
        consumers = [m for m in order if topic in members[m].subscription]
        if not consumers:
            continue
        per_member, extra = divmod(len(ids), len(consumers))
        start = 0
        for i, member in enumerate(consumers):
            end = start + per_member + (1 if i < extra else 0)
            result[member].extend(TopicPartition(topic, p) for p in ids[start:end])
            start = end
    return result


class RangePartitionAssignor(OrderedMembersAssignor):
    name = "range"
    _partitions_by_member = staticmethod(_ranges)
