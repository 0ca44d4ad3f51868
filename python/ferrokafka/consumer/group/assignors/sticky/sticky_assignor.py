"""The sticky assignors: Java's ``StickyAssignor`` ("sticky", eager) and
``CooperativeStickyAssignor`` ("cooperative-sticky", incremental cooperative, KIP-429), both
built on the algorithm of Java's ``AbstractStickyAssignor``.

The goals, in order: the assignment is as balanced as possible (with identical subscriptions no
member has more than one partition more than another), and as many partitions as possible stay
with the member that owned them before.

Which partitions a member owned comes from its Subscription:

* "sticky" (eager) members give up everything before rejoining, so, as in Java, each member sends
  its previous assignment and generation in the user data (StickyAssignorUserData v1: an array of
  (topic, [partition]) and an int32 generation; v0 lacks the generation). The assignor remembers
  its last assignment in ``on_assignment`` for that.
* "cooperative-sticky" members keep their partitions and send them in the Subscription's
  ``owned_partitions`` with ``generation_id`` (v2+); the user data holds only the generation
  (an int32) for leaders that read older versions.

Two members claiming the same partition: the higher generation wins; with equal generations
neither keeps it. Then, exactly as in Java:

* when every member has the same subscription, the "constrained" builder keeps each member's
  owned partitions up to its quota (``floor`` or ``ceil`` of partitions/members, owned partitions
  taken in (partition, topic) order) and deals the rest round robin to the members below quota,
  in member id order;
* otherwise the "general" builder keeps every still-subscribed owned partition, gives each
  unowned one to the least-loaded subscribed member, then moves partitions from members with at
  least two more than another member that could take them, undoing the moves if they did not
  improve the balance score.

Java's tie-breaking depends on ``java.util.HashMap`` iteration order in two places (which member
keeps a full ``ceil`` quota in the constrained builder; which of several moved partitions moves
back in the general builder). Both are reproduced here (:mod:`.java_order`), so for the same
members in the same JoinGroup order the result equals the Java client's. Not reproduced: the
rack-aware variant (ferrokafka members send no rack id, and then Java does not use it), Java's
``maxGeneration`` carried over between calls on one assignor instance, and Java's behaviour on
owned partitions that do not exist in the metadata (they are ignored here; Java may assign a
partition twice or fail).

Cooperative-sticky then removes from this round's assignment every partition that moves to a new
owner while another member still owns it: the owner revokes it, rejoins, and the next rebalance
hands it over. No member is ever assigned a partition another member still owns.
"""

from __future__ import annotations

import struct
from typing import Any, ClassVar

from .....structs import TopicPartition
from ...subscription import ConsumerProtocolMemberAssignment
from ..abstract import Members, OrderedMembersAssignor, hybridmethod
from .builders import sticky_assign
from .java_order import java_hashmap_order
from .user_data import DEFAULT_GENERATION, StickyAssignorUserData

__all__ = [
    "CooperativeStickyPartitionAssignor",
    "StickyAssignorUserData",
    "StickyPartitionAssignor",
    "java_hashmap_order",
]

_I32 = struct.Struct(">i")


class _StickyFamily(OrderedMembersAssignor):
    """What the sticky and the cooperative-sticky assignors share: the assignment itself."""

    _cooperative: ClassVar[bool]

    @classmethod
    def _partitions_by_member(
        cls, partitions: dict[str, list[int]], members: Members, order: list[str]
    ) -> dict[str, list[TopicPartition]]:
        # Not ``order``: Java's sticky builders take members in HashMap order instead.
        return sticky_assign(partitions, members, cls._cooperative)


class StickyPartitionAssignor(_StickyFamily):
    """Java's ``StickyAssignor`` ("sticky"): eager, balanced, and sticky through the previous
    assignment each member sends in its user data.

    State: the last assignment and generation given to ``on_assignment``. Used as a class (as
    aiokafka does) the state is the class's, shared by every consumer in the process that uses the
    class; give each consumer its own instance to keep it per consumer.
    """

    name = "sticky"
    _cooperative = False
    _previous_partitions: ClassVar[list[TopicPartition] | None] = None
    _previous_generation: ClassVar[int] = DEFAULT_GENERATION

    @hybridmethod
    def on_assignment(
        self_or_cls: Any,
        assignment: ConsumerProtocolMemberAssignment,
        generation: int | None = None,
    ) -> None:
        """Remember this member's assignment (and its generation) for the next join."""
        self_or_cls._previous_partitions = assignment.partitions()
        if generation is not None:
            self_or_cls._previous_generation = generation

    @hybridmethod
    def subscription_user_data(
        self_or_cls: Any, topics: list[str], owned: list[TopicPartition], generation: int
    ) -> bytes | None:
        """StickyAssignorUserData v1 with the last assignment; none before the first one."""
        partitions: list[TopicPartition] | None = self_or_cls._previous_partitions
        if partitions is None:
            if not owned:
                return None
            partitions = owned
        remembered: int = self_or_cls._previous_generation
        generation = remembered if remembered != DEFAULT_GENERATION else generation
        return StickyAssignorUserData(partitions, generation).encode()


class CooperativeStickyPartitionAssignor(_StickyFamily):
    """Java's ``CooperativeStickyAssignor`` ("cooperative-sticky"): the sticky assignment, minus
    the partitions that change owner this round (they are revoked first, then handed over in the
    follow-up rebalance). Stateless: ownership and generation come from the Subscription."""

    name = "cooperative-sticky"
    _cooperative = True
    rebalance_protocol = "COOPERATIVE"
    supported_protocols = ("COOPERATIVE", "EAGER")

    @hybridmethod
    def subscription_user_data(
        self_or_cls: Any, topics: list[str], owned: list[TopicPartition], generation: int
    ) -> bytes | None:
        """The generation as an int32 (CooperativeStickyAssignorUserData v0)."""
        return _I32.pack(generation)
