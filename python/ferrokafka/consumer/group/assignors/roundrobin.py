"""The round-robin assignor (Java's ``RoundRobinAssignor``).

Every partition of every subscribed topic, in (topic, partition) order, is dealt to the members
in Java's member order (static members by group.instance.id, then dynamic members by member id),
cycling; a member not subscribed to the partition's topic is skipped (and the deal moves past it).
With identical subscriptions every member gets within one partition of every other; with
different subscriptions the result can be unbalanced, exactly as in Java.
"""

from __future__ import annotations

from ....structs import TopicPartition
from .abstract import Members, OrderedMembersAssignor

__all__ = ["RoundRobinPartitionAssignor"]


def _round_robin(
    partitions: dict[str, list[int]], members: Members, order: list[str]
) -> dict[str, list[TopicPartition]]:
    subscribed = {m: set(members[m].subscription) for m in order}
    result: dict[str, list[TopicPartition]] = {m: [] for m in members}
    turn = 0  # index into ``order`` of the member whose turn it is
    for topic, ids in partitions.items():
        for partition in ids:
            # Some member is subscribed to every topic here, so this ends within a cycle.
            while topic not in subscribed[order[turn]]:
                turn = (turn + 1) % len(order)
            result[order[turn]].append(TopicPartition(topic, partition))
            turn = (turn + 1) % len(order)
    return result


class RoundRobinPartitionAssignor(OrderedMembersAssignor):
    name = "roundrobin"
    _partitions_by_member = staticmethod(_round_robin)
